"""Typed matrix products: segment_mm and gather_mm (R relation matrices), and a RelGraphConv training step."""

import numpy as np

import graphkern as gk


class TypedMatmul:
    params = [[1 << 15, 1 << 17], [16, 64], ["float32", "float64"]]
    param_names = ["rows", "features", "dtype"]
    timeout = 600
    relations = 8

    def setup(self, rows, features, dtype):
        rng = np.random.default_rng(0)
        self.a = rng.standard_normal((rows, features)).astype(dtype)
        self.b = rng.standard_normal((self.relations, features, features)).astype(dtype)
        self.types = rng.integers(0, self.relations, rows)
        self.seglen = np.bincount(np.sort(self.types), minlength=self.relations)
        # compile, and check both against NumPy's per-row and per-segment products
        tol = 1e-3 if dtype == "float32" else 1e-9
        want = np.einsum("ik,ikj->ij", self.a, self.b[self.types])
        if not np.allclose(gk.gather_mm(self.a, self.b, idx_b=self.types), want, rtol=tol, atol=tol):
            raise AssertionError("gather_mm differs from the per-row products")
        starts = np.r_[0, np.cumsum(self.seglen)]
        want = np.concatenate([self.a[starts[r]:starts[r + 1]] @ self.b[r] for r in range(self.relations)])
        if not np.allclose(gk.segment_mm(self.a, self.b, self.seglen), want, rtol=tol, atol=tol):
            raise AssertionError("segment_mm differs from the per-segment products")

    def time_segment_mm(self, rows, features, dtype):
        gk.segment_mm(self.a, self.b, self.seglen)

    def time_gather_mm(self, rows, features, dtype):
        gk.gather_mm(self.a, self.b, idx_b=self.types)

    def track_segment_mm_gflops(self, rows, features, dtype):
        import time

        start = time.perf_counter()
        gk.segment_mm(self.a, self.b, self.seglen)
        return 2.0 * rows * features * features / (time.perf_counter() - start) / 1e9

    track_segment_mm_gflops.unit = "GFLOP/s"


class RelGraphConvStep:
    params = [[14], [32], [None, "basis", "bdd"]]
    param_names = ["scale", "features", "regularizer"]
    timeout = 900

    def setup(self, scale, features, regularizer):
        try:
            import torch

            import graphkern.torch as gkt
        except ImportError as exc:  # asv skips the benchmark
            raise NotImplementedError(f"torch is not installed: {exc}") from exc
        self.g = gk.graph.kronecker(scale, progress=False)
        torch.manual_seed(0)
        self.x = torch.randn(1 << scale, features)
        self.etypes = torch.randint(0, 8, (self.g.num_edges,))
        self.conv = gkt.RelGraphConv(features, features, 8, regularizer=regularizer, num_bases=4)
        self.time_step(scale, features, regularizer)  # compile every kernel of the step

    def time_step(self, scale, features, regularizer):
        self.conv.zero_grad()
        self.conv(self.g, self.x, self.etypes).square().mean().backward()
