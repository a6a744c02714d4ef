"""Segment and gather matrix multiplication on the CPU (DGL's ``segment_mm`` and ``gather_mm``).

``segment_mm(a, b, offsets, out)``: rows ``offsets[r]:offsets[r + 1]`` of ``out`` are those rows of ``a``
times ``b[r]``. ``gather_mm(a, b, idx_a, idx_b, use_idx_a, use_idx_b, out)``: ``out[i] = a[ia] @ b[ib]``
with ``ia = idx_a[i]`` (or ``i``) and ``ib = idx_b[i]`` (or ``i``). ``segment_mm_backward_b(a, dz, offsets,
out)``: ``out[r] = a[seg r].T @ dz[seg r]``, the gradient of ``b`` in ``segment_mm``.

Why a register tile: the plain loop ``out[i, :] += a[i, k] * b[r, k, :]`` keeps its accumulator row in
memory, a load and a store per multiply-add; here ``ROWS`` output rows times one ``LANES``-wide column chunk
stay in vector registers for the whole ``k`` loop, and each loaded chunk of ``b[r]`` serves ``ROWS`` rows.
The CUDA twins (graphkern.kernels.cuda.segment_mm) have the same names and arguments. Kernels trust their
inputs: graphkern.segment validated shapes, dtypes, offsets and index ranges before any of them runs.

``cache=True``: a process's first call compiles for about 3 s per kernel and dtype, while loading from the
cache took 0.02-0.5 s (first calls of segment_mm and gather_mm in fresh processes on a 2-core machine).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._simd import vload, vmask, vsplat, vstore, vzeros

LANES = 16
# Output rows of one register tile: 4 accumulators plus the chunk of b fit the 16 vector registers of AVX2
# twice over (a 16-lane float32 vector is two AVX2 registers), and each load of b serves 4 multiply-adds.
ROWS = 4
# Rows of a parallel work item: a few tiles, so that a segment shorter than a block still spreads over the
# threads when there are few segments, and long segments split evenly.
BLOCK_ROWS = 64
# gather_mm's blocks are larger: a block's rows are sorted by type, and longer runs of one type fill more tiles
GATHER_BLOCK_ROWS = 256
# ... when a row's product has at least this many multiply-adds (D1 * D2): below it the sort (about
# log2(256) = 8 steps a row) would cost as much as the products it arranges
SORT_MIN_PRODUCT = 64


@njit(inline="always")
def _rows_times(a, ia0, ia1, ia2, ia3, bmat, out, o0, o1, o2, o3, c, mask):
    """``out[o_t, c:c+LANES] = a[ia_t] @ bmat[:, c:c+LANES]`` for four rows at once (tile in registers)."""
    acc0 = vzeros(out, LANES)
    acc1 = vzeros(out, LANES)
    acc2 = vzeros(out, LANES)
    acc3 = vzeros(out, LANES)
    for k in range(a.shape[1]):
        bv = vload(bmat, k, c, mask)
        acc0 = acc0 + vsplat(a, ia0, k, LANES) * bv
        acc1 = acc1 + vsplat(a, ia1, k, LANES) * bv
        acc2 = acc2 + vsplat(a, ia2, k, LANES) * bv
        acc3 = acc3 + vsplat(a, ia3, k, LANES) * bv
    vstore(out, o0, c, acc0, mask)
    vstore(out, o1, c, acc1, mask)
    vstore(out, o2, c, acc2, mask)
    vstore(out, o3, c, acc3, mask)


@njit(inline="always")
def _row_times(a, ia, bmat, out, o, c, mask):
    acc = vzeros(out, LANES)
    for k in range(a.shape[1]):
        acc = acc + vsplat(a, ia, k, LANES) * vload(bmat, k, c, mask)
    vstore(out, o, c, acc, mask)


@njit(inline="always")
def _segment_rows(a, bmat, out, lo, hi):
    """Rows ``lo:hi`` of ``a`` (one segment) times ``bmat``, into the same rows of ``out``."""
    D2 = out.shape[1]
    for c in range(0, D2, LANES):
        mask = vmask(min(LANES, D2 - c), LANES)
        i = lo
        while i + ROWS <= hi:
            _rows_times(a, i, i + 1, i + 2, i + 3, bmat, out, i, i + 1, i + 2, i + 3, c, mask)
            i += ROWS
        while i < hi:
            _row_times(a, i, bmat, out, i, c, mask)
            i += 1


@njit(inline="always")
def _segment_of(offsets, row):
    """The segment holding ``row``: the last ``r`` with ``offsets[r] <= row`` and a non-empty segment."""
    lo, hi = 0, offsets.size - 1  # offsets[lo] <= row < offsets[hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if offsets[mid] <= row:
            lo = mid
        else:
            hi = mid
    return lo


@njit(parallel=True, cache=True)
def segment_mm(a, b, offsets, out):
    """``out[offsets[r]:offsets[r+1]] = a[offsets[r]:offsets[r+1]] @ b[r]`` for every segment ``r``.

    ``a`` (N, D1), ``b`` (R, D1, D2), ``offsets`` (R + 1,) non-decreasing from 0 to N, ``out`` (N, D2).
    Parallel over blocks of ``BLOCK_ROWS`` rows; a block that spans segment ends walks them in order.
    """
    N = a.shape[0]
    if N == 0 or out.shape[1] == 0:
        return
    if a.shape[1] == 0:
        out[:] = 0
        return
    blocks = (N + BLOCK_ROWS - 1) // BLOCK_ROWS
    for blk in prange(blocks):
        lo = blk * BLOCK_ROWS
        hi = min(N, lo + BLOCK_ROWS)
        r = _segment_of(offsets, lo)
        while lo < hi:
            while offsets[r + 1] <= lo:  # skip empty segments
                r += 1
            end = min(hi, offsets[r + 1])
            _segment_rows(a, b[r], out, lo, end)
            lo = end


@njit(parallel=True, cache=True)
def gather_mm(a, b, idx_a, idx_b, use_idx_a, use_idx_b, out):
    """``out[i] = a[ia] @ b[ib]`` with ``ia = idx_a[i] if use_idx_a else i`` and likewise ``ib``.

    Parallel over blocks of ``GATHER_BLOCK_ROWS`` rows. With ``idx_b``, a block's rows are visited in the
    order of a stable sort by ``idx_b`` (when a row's product is big enough to pay for it), so that rows of
    one type share register tiles as in :func:`segment_mm` whatever order the types come in; each row is
    still written to its own place.
    """
    N = out.shape[0]
    D2 = out.shape[1]
    if N == 0 or D2 == 0:
        return
    if a.shape[1] == 0:
        out[:] = 0
        return
    sort = use_idx_b and a.shape[1] * D2 >= SORT_MIN_PRODUCT
    blocks = (N + GATHER_BLOCK_ROWS - 1) // GATHER_BLOCK_ROWS
    for blk in prange(blocks):
        lo = blk * GATHER_BLOCK_ROWS
        hi = min(N, lo + GATHER_BLOCK_ROWS)
        in_order = True
        if sort:  # rows already in type order (presorted edges) skip the sort
            for i in range(lo + 1, hi):
                if idx_b[i] < idx_b[i - 1]:
                    in_order = False
                    break
        order = np.arange(lo, hi) if in_order else np.argsort(idx_b[lo:hi], kind="mergesort") + lo
        count = hi - lo
        for c in range(0, D2, LANES):
            mask = vmask(min(LANES, D2 - c), LANES)
            p = 0
            while p < count:
                i0 = order[p]
                ib = idx_b[i0] if use_idx_b else i0
                if use_idx_b and p + ROWS <= count:
                    i1, i2, i3 = order[p + 1], order[p + 2], order[p + 3]
                    if idx_b[i1] == ib and idx_b[i2] == ib and idx_b[i3] == ib:
                        if use_idx_a:
                            _rows_times(a, idx_a[i0], idx_a[i1], idx_a[i2], idx_a[i3], b[ib], out, i0, i1, i2, i3,
                                        c, mask)
                        else:
                            _rows_times(a, i0, i1, i2, i3, b[ib], out, i0, i1, i2, i3, c, mask)
                        p += ROWS
                        continue
                _row_times(a, idx_a[i0] if use_idx_a else i0, b[ib], out, i0, c, mask)
                p += 1


@njit(parallel=True, cache=True)
def segment_mm_backward_b(a, dz, offsets, out):
    """``out[r] = a[seg].T @ dz[seg]`` for the rows ``seg = offsets[r]:offsets[r+1]`` of every segment.

    ``a`` (N, D1), ``dz`` (N, D2), ``out`` (R, D1, D2). Parallel over (segment, row of ``b``) pairs; each
    sums its rank-one updates in row order (deterministic), into one output row that stays in L1.
    """
    R, D1, D2 = out.shape
    for item in prange(R * D1):
        r = item // D1
        k = item - r * D1
        for j in range(D2):
            out[r, k, j] = 0
        for i in range(offsets[r], offsets[r + 1]):
            aik = a[i, k]
            for j in range(D2):
                out[r, k, j] += aik * dz[i, j]
