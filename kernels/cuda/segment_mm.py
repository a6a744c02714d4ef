"""Segment and gather matrix multiplication on the GPU: the twins of graphkern.kernels.cpu.segment_mm, with
the same names and arguments (launched as ``kernel[blocks, threads](...)`` by graphkern._segment_cuda).

One thread per output element, grid-stride: consecutive threads take consecutive columns of a row, so the
loads of ``b`` (and the stores) coalesce while the row of ``a`` is broadcast to the warp. Sums run in
float64 for both float32 and float64 data: one kernel serves both dtypes, and on these memory-bound loops
the wider adds cost little. ``segment_mm`` finds a row's segment by binary search over ``offsets`` (a few
steps, in cache), so no per-row segment array is built.
"""

from __future__ import annotations

from numba import cuda


@cuda.jit(device=True, inline=True)
def _segment_of(offsets, row):
    """The segment holding ``row``: the ``r`` with ``offsets[r] <= row < offsets[r + 1]``."""
    lo = 0
    hi = offsets.size - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if offsets[mid] <= row:
            lo = mid
        else:
            hi = mid
    return lo


@cuda.jit
def segment_mm(a, b, offsets, out):
    """``out[offsets[r]:offsets[r+1]] = a[offsets[r]:offsets[r+1]] @ b[r]`` for every segment ``r``."""
    N = out.shape[0]
    D2 = out.shape[1]
    D1 = a.shape[1]
    for item in range(cuda.grid(1), N * D2, cuda.gridsize(1)):
        i = item // D2
        j = item - i * D2
        r = _segment_of(offsets, i)
        acc = 0.0
        for k in range(D1):
            acc += a[i, k] * b[r, k, j]
        out[i, j] = acc


@cuda.jit
def gather_mm(a, b, idx_a, idx_b, use_idx_a, use_idx_b, out):
    """``out[i] = a[ia] @ b[ib]`` with ``ia = idx_a[i] if use_idx_a else i`` and likewise ``ib``."""
    N = out.shape[0]
    D2 = out.shape[1]
    D1 = a.shape[1]
    for item in range(cuda.grid(1), N * D2, cuda.gridsize(1)):
        i = item // D2
        j = item - i * D2
        ia = idx_a[i] if use_idx_a else i
        ib = idx_b[i] if use_idx_b else i
        acc = 0.0
        for k in range(D1):
            acc += a[ia, k] * b[ib, k, j]
        out[i, j] = acc


@cuda.jit
def segment_mm_backward_b(a, dz, offsets, out):
    """``out[r] = a[seg].T @ dz[seg]`` for the rows ``seg = offsets[r]:offsets[r+1]`` of every segment."""
    R = out.shape[0]
    D1 = out.shape[1]
    D2 = out.shape[2]
    for item in range(cuda.grid(1), R * D1 * D2, cuda.gridsize(1)):
        r = item // (D1 * D2)
        rest = item - r * (D1 * D2)
        k = rest // D2
        j = rest - k * D2
        acc = 0.0
        for i in range(offsets[r], offsets[r + 1]):
            acc += a[i, k] * dz[i, j]
        out[r, k, j] = acc
