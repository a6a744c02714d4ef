"""The CUDA backend: g-SpMM, g-SDDMM, BFS and dynamic-graph batches on the GPU (skipped without one).

Each timed call ends with ``cuda.synchronize()``: kernel launches return before the GPU is done.
"""

import numpy as np
from numba.core import config as numba_config

import graphkern as gk


def _require_gpu():
    ok, why = gk._config.cuda_status()
    if not ok or numba_config.ENABLE_CUDASIM:
        raise NotImplementedError(f"no GPU: {why}")  # asv's way to skip a benchmark


class CudaSparse:
    params = [[18, 22], [64, 128]]
    param_names = ["scale", "features"]
    timeout = 900

    def setup(self, scale, features):
        _require_gpu()
        from numba import cuda

        self.cuda = cuda
        host = gk.graph.kronecker(scale, progress=False)
        self.g = host.to("cuda")
        self.g.csc()
        x = np.random.default_rng(0).random((host.num_src, features), dtype=np.float32)
        self.x = cuda.to_device(x)
        got = gk.ops.copy_u_sum(self.g, self.x).copy_to_host()
        if not np.allclose(got[:1000], gk.ops.copy_u_sum(host, x)[:1000], rtol=1e-4, atol=1e-2):
            raise AssertionError("copy_u_sum on the GPU differs from the CPU")
        gk.ops.u_dot_v(self.g, self.x, self.x)
        cuda.synchronize()

    def time_copy_u_sum(self, scale, features):
        gk.ops.copy_u_sum(self.g, self.x)
        self.cuda.synchronize()

    def time_u_dot_v(self, scale, features):
        gk.ops.u_dot_v(self.g, self.x, self.x)
        self.cuda.synchronize()


class CudaBFS:
    params = [[20, 22]]
    param_names = ["scale"]
    timeout = 900

    def setup(self, scale):
        _require_gpu()
        host = gk.graph.kronecker(scale, progress=False)
        self.g = host.to("cuda")
        self.root = int(gk.graph500.search_keys(host, 1)[0])
        res = gk.bfs(self.g, self.root)
        if not np.array_equal(res.levels.copy_to_host(), gk.bfs(host, self.root).levels):
            raise AssertionError("GPU BFS levels differ from the CPU")
        self.edges = host.num_edges // 2

    def time_direction_optimizing(self, scale):
        gk.bfs(self.g, self.root)

    def track_gteps(self, scale):
        import time

        t0 = time.perf_counter()
        gk.bfs(self.g, self.root)
        return self.edges / (time.perf_counter() - t0) / 1e9

    track_gteps.unit = "GTEPS"


class CudaDynamicInsert:
    params = [[10_000, 100_000, 1_000_000]]
    param_names = ["batch"]
    timeout = 900

    def setup(self, batch):
        _require_gpu()
        from numba import cuda

        self.cuda = cuda
        n = 1 << 22
        rng = np.random.default_rng(0)
        self.dg = gk.DynamicGraph(n, backend="cuda")
        base = rng.integers(0, n, (2, 10_000_000))
        self.dg.apply(insert=(base[0], base[1]))
        self.batches = [tuple(cuda.to_device(a) for a in rng.integers(0, n, (2, batch))) for _ in range(8)]
        self.i = 0

    def time_insert(self, batch):
        self.dg.apply(insert=self.batches[self.i % len(self.batches)])
        self.i += 1
        self.cuda.synchronize()
