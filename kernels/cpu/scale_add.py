"""``out[i] = scale * x[i] + out[i]`` over the rows of ``out``, in place, on the CPU.

GIN's sum aggregation is ``(1 + eps) * h_v + sum of h_u over the in-edges of v``, and the gradient of ``h``
is ``(1 + eps) * grad_v + sum of grad over the out-edges``: in both, an SpMM output plus a scaled copy of
the features. As torch operations that is a product into a new tensor and a sum into another, two
allocations and five passes over node features; here it is one pass that reads ``x`` and ``out`` and
writes ``out``, with no allocation.

Each element is ``fl(fl(scale * x) + out)``: a product rounded to the dtype, then a sum rounded to the
dtype (no fused multiply-add; Numba compiles without fast-math), which is what torch's ``scale * x + out``
computes element by element, so results equal torch's bit for bit. Kernels trust their inputs: the caller
passes 2-D C-contiguous arrays of one dtype, ``x`` with at least as many rows as ``out``, and ``scale`` of
shape ``(1, 1)`` in that dtype.
"""

from __future__ import annotations

from numba import njit, prange

from ._simd import vload, vmask, vsplat, vstore

LANES = 16
# Rows of one parallel work item: a few pages of features, so that the threads' spans stay large and
# whole while a short array still spreads over every thread.
BLOCK_ROWS = 256


@njit(parallel=True, cache=True)
def add_scaled_rows(out, x, scale):
    """``out[i, :] = scale[0, 0] * x[i, :] + out[i, :]`` for every row ``i`` of ``out``."""
    rows, width = out.shape
    s = vsplat(scale, 0, 0, LANES)
    for blk in prange((rows + BLOCK_ROWS - 1) // BLOCK_ROWS):
        for i in range(blk * BLOCK_ROWS, min(rows, (blk + 1) * BLOCK_ROWS)):
            for c in range(0, width, LANES):
                mask = vmask(min(LANES, width - c), LANES)
                vstore(out, i, c, s * vload(x, i, c, mask) + vload(out, i, c, mask), mask)
