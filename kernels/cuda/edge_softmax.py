"""Edge softmax on the GPU: one warp per row of the CSC (or CSR for ``norm_by="src"``), fused.

For every head the warp's lanes take the row's edges in strides of 32: a pass for the row maximum, a
warp reduction, a pass for the sum of ``exp(z - max)``, a reduction, and a pass that writes the
normalised values to their edge ids. The row is read three times, from L1/L2 after the first; nothing
is written but the output. Accumulation in float32 (float64 for float64 logits).
"""

from __future__ import annotations

import functools
import math

import numba
from numba import cuda

from .launch import BLOCK, WARP
from .warp import group_max, group_sum


@functools.cache
def edge_softmax_rows_kernel(acc: str):
    """``kernel(indptr, eids, has_eids, logits, out)`` with ``logits``/``out`` ``(num_edge_ids, H)``."""
    ACC = numba.float64 if acc == "float64" else numba.float32

    @cuda.jit
    def kernel(indptr, eids, has_eids, logits, out):
        scratch = cuda.shared.array(BLOCK, numba.float64)
        lane = cuda.threadIdx.x % WARP
        warps = cuda.gridsize(1) // WARP
        H = logits.shape[1]
        for v in range(cuda.grid(1) // WARP, indptr.size - 1, warps):
            start = indptr[v]
            end = indptr[v + 1]
            if end == start:
                continue  # the same for every lane of the warp
            for h in range(H):
                m = ACC(-math.inf)
                for j in range(start + lane, end, WARP):
                    val = ACC(logits[eids[j] if has_eids else j, h])
                    if val > m:
                        m = val
                m = ACC(group_max(m, scratch, WARP))
                s = ACC(0)
                for j in range(start + lane, end, WARP):
                    s += math.exp(ACC(logits[eids[j] if has_eids else j, h]) - m)
                s = ACC(group_sum(s, scratch, WARP))
                inv = ACC(1) / s
                for j in range(start + lane, end, WARP):
                    e = eids[j] if has_eids else j
                    out[e, h] = math.exp(ACC(logits[e, h]) - m) * inv

    return kernel
