"""The CUDA runs of :func:`graphkern.segment_mm`, :func:`graphkern.gather_mm` and
:func:`graphkern.segment.segment_mm_backward_b`: the kernels of :mod:`graphkern.kernels.cuda.segment_mm`
launched on arrays graphkern.segment has validated and placed on the device.

Each allocates its output on the device and returns it. The CPU twin is ``graphkern._cpu.segment``, with
the same functions and parameters.
"""

from __future__ import annotations

import numpy as np

from .. import _cuda, tuning

__all__ = ["segment_mm", "gather_mm", "segment_mm_backward_b"]


def _launch(kernel, items: int, *args) -> None:
    from ..kernels.cuda.launch import grid_1d

    if items == 0:  # nothing to write: no launch on empty arrays
        return
    blocks, threads = grid_1d(items)
    kernel[blocks, threads](*args)


def segment_mm(a, b, offsets: np.ndarray):
    """``out[offsets[r]:offsets[r + 1]] = a[offsets[r]:offsets[r + 1]] @ b[r]``, shape ``(N, D2)``."""
    from ..kernels.cuda import segment_mm as kern

    out = _cuda.empty((a.shape[0], b.shape[2]), a.dtype)
    _launch(kern.segment_mm, out.size, a, b, _cuda.to_device("offsets", offsets), out)
    return out


def gather_mm(a, b, idx_a, idx_b, use_idx_a: bool, use_idx_b: bool, rows: int):
    """``out[i] = a[idx_a[i]] @ b[idx_b[i]]`` for the ``rows`` output rows, an index not used (``use_idx_*``
    False, the array a placeholder) meaning ``i`` itself."""
    from ..kernels.cuda import segment_mm as kern

    out = _cuda.empty((rows, b.shape[2]), a.dtype)
    _launch(kern.gather_mm, out.size, a, b, idx_a, idx_b, use_idx_a, use_idx_b, out)
    return out


def segment_mm_backward_b(a, dz, offsets: np.ndarray):
    """``out[r] = a[seg r].T @ dz[seg r]`` for the segments ``offsets`` bounds, shape ``(R, D1, D2)``.
    Segments longer than the knob ``cuda_segment_backward_chunk_rows`` are cut into chunks summed by many
    threads, then added in order (kernels/cuda/segment_mm.py)."""
    from ..kernels.cuda import segment_mm as kern

    out = _cuda.empty((offsets.size - 1, a.shape[1], dz.shape[1]), a.dtype)
    knobs = tuning.current()
    offsets = np.asarray(offsets, np.int64)
    longest = int(np.diff(offsets).max(initial=0))
    if longest <= knobs.cuda_segment_backward_chunk_rows:
        _launch(kern.segment_mm_backward_b, out.size, a, dz, _cuda.to_device("offsets", offsets), out)
        return out
    per_product = max(1, out.shape[1] * out.shape[2])
    rows = int(offsets[-1])
    chunk_rows = max(knobs.cuda_segment_backward_chunk_rows,
                     -(-rows // max(1, knobs.cuda_segment_chunk_target_items // per_product)))
    chunks, first = kern.chunk_segments(offsets, chunk_rows)
    partial = _cuda.empty((chunks.shape[1], out.shape[1], out.shape[2]), np.float64)
    _launch(kern.segment_mm_backward_b_chunks, partial.size, a, dz, _cuda.to_device("offsets", chunks), partial)
    _launch(kern.segment_mm_backward_b_finish, out.size, partial, _cuda.to_device("offsets", first), out)
    return out
