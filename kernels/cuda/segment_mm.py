"""Segment and gather matrix multiplication on the GPU: the twins of graphkern.kernels.cpu.segment_mm, with
the same names and arguments (launched as ``kernel[blocks, threads](...)`` by graphkern._cuda.segment).

One thread per output element, grid-stride: consecutive threads take consecutive columns of a row, so the
loads of ``b`` (and the stores) coalesce while the row of ``a`` is broadcast to the warp. Sums run in
float64 for both float32 and float64 data: one kernel serves both dtypes, and on these memory-bound loops
the wider adds cost little. ``segment_mm`` finds a row's segment by binary search over ``offsets`` (a few
steps, in cache), so no per-row segment array is built.

``segment_mm_backward_b`` has a thread per element of ``out[r]`` walk all the rows of segment ``r``: with
few segments (a few relation types) and long ones that is too few threads for the rows to walk. Where a
segment is longer than the driver's chunk length (the knob ``cuda_segment_backward_chunk_rows`` of
graphkern.tuning) it cuts the segments into chunks instead
(:func:`chunk_segments`): :func:`segment_mm_backward_b_chunks` sums each chunk (a thread per element of
each chunk's product) and :func:`segment_mm_backward_b_finish` adds a segment's chunks in chunk order
(deterministic, like the single pass).
"""

from __future__ import annotations

import numpy as np
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


def chunk_segments(offsets, chunk_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Host side: ``(chunks, first)``: the rows of every segment cut into chunks of at most ``chunk_rows``
    rows, as a ``(2, num_chunks)`` int64 array of first and past-the-end rows (a segment's chunks
    consecutive, in row order; an empty segment has none), and ``first[r]:first[r + 1]``, segment ``r``'s
    chunks."""
    offsets = np.asarray(offsets, np.int64)
    lengths = np.diff(offsets)
    count = -(-lengths // chunk_rows)
    first = np.concatenate([[0], np.cumsum(count)]).astype(np.int64)
    seg = np.repeat(np.arange(lengths.size), count)
    begin = offsets[:-1][seg] + (np.arange(seg.size) - first[:-1][seg]) * chunk_rows
    end = np.minimum(begin + chunk_rows, offsets[1:][seg])
    return np.stack([begin, end]).astype(np.int64).reshape(2, -1), first


@cuda.jit
def segment_mm_backward_b_chunks(a, dz, chunks, partial):
    """``partial[c] = a[rows].T @ dz[rows]`` for the rows ``chunks[0, c]:chunks[1, c]`` of every chunk."""
    C = partial.shape[0]
    D1 = partial.shape[1]
    D2 = partial.shape[2]
    for item in range(cuda.grid(1), C * D1 * D2, cuda.gridsize(1)):
        c = item // (D1 * D2)
        rest = item - c * (D1 * D2)
        k = rest // D2
        j = rest - k * D2
        acc = 0.0
        for i in range(chunks[0, c], chunks[1, c]):
            acc += a[i, k] * dz[i, j]
        partial[c, k, j] = acc


@cuda.jit
def segment_mm_backward_b_finish(partial, first, out):
    """``out[r]``: the sum of segment ``r``'s chunks ``partial[first[r]:first[r + 1]]``, in chunk order."""
    R = out.shape[0]
    D1 = out.shape[1]
    D2 = out.shape[2]
    for item in range(cuda.grid(1), R * D1 * D2, cuda.gridsize(1)):
        r = item // (D1 * D2)
        rest = item - r * (D1 * D2)
        k = rest // D2
        j = rest - k * D2
        acc = 0.0
        for c in range(first[r], first[r + 1]):
            acc += partial[c, k, j]
        out[r, k, j] = acc
