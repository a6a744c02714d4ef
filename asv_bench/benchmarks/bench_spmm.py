"""g-SpMM, g-SDDMM and edge softmax on the symmetric Kronecker graph (scale 18, as in compare_peers)."""

import time

import numpy as np

import graphkern as gk


def _graph(scale):
    g = gk.graph.kronecker(scale, progress=False)
    g.csc()
    return g


class SpMM:
    params = [[16, 18], [16, 64]]
    param_names = ["scale", "features"]
    timeout = 900

    def setup(self, scale, features):
        self.g = _graph(scale)
        rng = np.random.default_rng(0)
        self.x = rng.random((self.g.num_src, features), dtype=np.float32)
        self.w = rng.random((self.g.num_edges, 1), dtype=np.float32)
        # compile (or load the cache) and check against SciPy before anything is timed
        A = self.g.reverse().to_scipy("csr", data=self.w[:, 0])
        got = gk.ops.u_mul_e_sum(self.g, self.x, self.w)
        if not np.allclose(got, A @ self.x, rtol=1e-4, atol=1e-2):
            raise AssertionError("u_mul_e_sum differs from scipy")
        gk.ops.copy_u_sum(self.g, self.x)
        gk.ops.copy_u_max(self.g, self.x)
        gk.spmm(self.g, "copy_lhs", "sum", self.x, format="csc")

    def time_copy_u_sum(self, scale, features):
        gk.ops.copy_u_sum(self.g, self.x)

    def time_copy_u_sum_csc(self, scale, features):
        # the CSC kernel the cost model leaves for the blocked path where x outgrows the L2 (scale 18, F = 16)
        gk.spmm(self.g, "copy_lhs", "sum", self.x, format="csc")

    def time_u_mul_e_sum(self, scale, features):
        gk.ops.u_mul_e_sum(self.g, self.x, self.w)

    def time_copy_u_max(self, scale, features):
        gk.ops.copy_u_max(self.g, self.x)

    def track_copy_u_sum_gflops(self, scale, features):
        t0 = time.perf_counter()
        gk.ops.copy_u_sum(self.g, self.x)
        return self.g.num_edges * features / (time.perf_counter() - t0) / 1e9

    track_copy_u_sum_gflops.unit = "GFLOP/s"


class SDDMM:
    params = [[16, 18], [16, 64]]
    param_names = ["scale", "features"]
    timeout = 900

    def setup(self, scale, features):
        self.g = _graph(scale)
        self.x = np.random.default_rng(0).random((self.g.num_src, features), dtype=np.float32)
        src, dst = self.g.edges()
        got = gk.ops.u_dot_v(self.g, self.x, self.x)
        if not np.allclose(got[:1000, 0], np.einsum("ij,ij->i", self.x[src[:1000]], self.x[dst[:1000]]), rtol=1e-5):
            raise AssertionError("u_dot_v differs from numpy")

    def time_u_dot_v(self, scale, features):
        gk.ops.u_dot_v(self.g, self.x, self.x)

    def track_u_dot_v_gflops(self, scale, features):
        t0 = time.perf_counter()
        gk.ops.u_dot_v(self.g, self.x, self.x)
        return 2 * self.g.num_edges * features / (time.perf_counter() - t0) / 1e9

    track_u_dot_v_gflops.unit = "GFLOP/s"


class EdgeSoftmax:
    params = [[16, 18], [1, 4]]
    param_names = ["scale", "heads"]
    timeout = 900

    def setup(self, scale, heads):
        self.g = _graph(scale)
        self.z = np.random.default_rng(0).standard_normal((self.g.num_edges, heads), dtype=np.float32)
        out = gk.edge_softmax(self.g, self.z)
        sums = np.zeros((self.g.num_dst, heads))
        np.add.at(sums, self.g.edges()[1], out)
        if not np.allclose(sums[self.g.in_degrees() > 0], 1.0, rtol=1e-4):
            raise AssertionError("edge_softmax rows do not sum to 1")
        # one logit 200 above the rest: too wide a range for one shift, so each node's max is taken
        self.z_wide = self.z.copy()
        self.z_wide[0] += 200
        gk.edge_softmax(self.g, self.z_wide)  # compile the per-node-max path before timing

    def time_edge_softmax(self, scale, heads):
        gk.edge_softmax(self.g, self.z)

    def time_edge_softmax_wide_logits(self, scale, heads):
        gk.edge_softmax(self.g, self.z_wide)


class Planner:
    """The planned path of copy_u_sum (g-SpMM) and u_dot_v (g-SDDMM) against the two paths the planner
    chooses between: the plain kernel (CSC rows, CSR edges) and the blocked one (destination blocks; for
    rows of several vectors the blocks with the hub split). ``planned`` slower than another row of the same
    parameters by more than the noise is a wrong plan on this machine (tools/planner_bench.py times the
    whole grid of sizes and dtypes)."""

    params = [["copy_u_sum", "u_dot_v"], [16, 64], ["planned", "plain", "blocked"]]
    param_names = ["op", "features", "path"]
    timeout = 900
    KNOBS = {"planned": {}, "plain": dict(blocked_min_edges=(1 << 63) - 1, use_calibration=0),
             "blocked": dict(blocked_min_edges=0, hub_min_edge_share=0.0, use_calibration=0)}

    def setup(self, op, features, path):
        self.g = _graph(18)
        self.x = np.random.default_rng(0).random((self.g.num_src, features), dtype=np.float32)
        if op == "copy_u_sum":
            self.call = lambda: gk.spmm(self.g, "copy_lhs", "sum", self.x)
        else:
            self.call = lambda: gk.sddmm(self.g, "dot", self.x, self.x, "u", "v")
        self.knobs = self.KNOBS[path]
        with gk.tuned(**self.knobs):
            got = self.call()  # compile or load, build the blocks
        with gk.tuned(**self.KNOBS["plain"]):
            want = self.call()
        if not np.allclose(got, want, rtol=1e-4, atol=1e-3):
            raise AssertionError(f"{op} on the {path} path differs from the plain kernel")

    def time_path(self, op, features, path):
        with gk.tuned(**self.knobs):
            self.call()
