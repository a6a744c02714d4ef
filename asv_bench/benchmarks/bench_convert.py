"""Format conversions through the stable parallel count sort, against SciPy on the same input."""

import time

import numpy as np
import scipy.sparse as sp
from graphkern.kernels.cpu import sort

from .common import assert_equal_arrays, kronecker_edges


class Conversions:
    params = [[16, 20]]
    param_names = ["scale"]
    timeout = 600

    def setup(self, scale):
        self.n = 1 << scale
        self.src, self.dst = kronecker_edges(scale)
        self.csr = sort.coo_to_compressed(self.src, self.dst, None, self.n)  # also warms the JIT up
        indptr, indices, eids = self.csr
        self.scipy_csr = sp.csr_array((eids, indices, indptr), shape=(self.n, self.n))
        got = sort.transpose_compressed(indptr, indices, eids, self.n)
        ref = self.scipy_csr.tocsc()
        assert_equal_arrays(got, (ref.indptr, ref.indices, ref.data), "csr -> csc")

    def time_coo_to_csr(self, scale):
        sort.coo_to_compressed(self.src, self.dst, None, self.n)

    def time_csr_to_csc(self, scale):
        indptr, indices, eids = self.csr
        sort.transpose_compressed(indptr, indices, eids, self.n)

    def time_scipy_csr_to_csc(self, scale):
        self.scipy_csr.tocsc()

    def track_speedup_over_scipy_tocsc(self, scale):
        """Median SciPy time over median graphkern time, measured alternately in this process."""
        indptr, indices, eids = self.csr
        ours, theirs = [], []
        for _ in range(5):
            t0 = time.perf_counter()
            sort.transpose_compressed(indptr, indices, eids, self.n)
            ours.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            self.scipy_csr.tocsc()
            theirs.append(time.perf_counter() - t0)
        return float(np.median(theirs) / np.median(ours))

    track_speedup_over_scipy_tocsc.unit = "x"


class CountSort:
    params = [[16, 20]]
    param_names = ["scale"]

    def setup(self, scale):
        self.n = 1 << scale
        _, self.keys = kronecker_edges(scale)
        _, perm = sort.count_sort(self.keys, self.n, np.int32)
        if not np.array_equal(perm, np.argsort(self.keys, kind="stable")):
            raise AssertionError("count_sort differs from numpy's stable argsort")

    def time_count_sort(self, scale):
        sort.count_sort(self.keys, self.n, np.int32)
