"""The cuda backend's driver for graphkern.segment: launches the kernels of graphkern.kernels.cuda.segment_mm
on arrays graphkern.segment has validated and placed on the device."""

from __future__ import annotations

import numpy as np

from . import _cuda, tuning


def _launch(kernel, items: int, *args) -> None:
    from .kernels.cuda.launch import grid_1d

    if items == 0:  # nothing to write: no launch on empty arrays
        return
    blocks, threads = grid_1d(items)
    kernel[blocks, threads](*args)


def segment_mm(a, b, offsets: np.ndarray, out) -> None:
    from .kernels.cuda import segment_mm as kern

    _launch(kern.segment_mm, out.size, a, b, _cuda.to_device("offsets", offsets), out)


def gather_mm(a, b, idx_a, idx_b, use_idx_a: bool, use_idx_b: bool, out) -> None:
    from .kernels.cuda import segment_mm as kern

    _launch(kern.gather_mm, out.size, a, b, idx_a, idx_b, use_idx_a, use_idx_b, out)


def segment_mm_backward_b(a, dz, offsets: np.ndarray, out) -> None:
    from .kernels.cuda import segment_mm as kern

    knobs = tuning.current()
    offsets = np.asarray(offsets, np.int64)
    longest = int(np.diff(offsets).max(initial=0))
    if longest <= knobs.cuda_segment_backward_chunk_rows:
        _launch(kern.segment_mm_backward_b, out.size, a, dz, _cuda.to_device("offsets", offsets), out)
        return
    # long segments: chunks summed by many threads, then added in order (kernels/cuda/segment_mm.py)
    per_product = max(1, out.shape[1] * out.shape[2])
    rows = int(offsets[-1])
    chunk_rows = max(knobs.cuda_segment_backward_chunk_rows,
                     -(-rows // max(1, knobs.cuda_segment_chunk_target_items // per_product)))
    chunks, first = kern.chunk_segments(offsets, chunk_rows)
    partial = _cuda.empty((chunks.shape[1], out.shape[1], out.shape[2]), np.float64)
    _launch(kern.segment_mm_backward_b_chunks, partial.size, a, dz, _cuda.to_device("offsets", chunks), partial)
    _launch(kern.segment_mm_backward_b_finish, out.size, partial, _cuda.to_device("offsets", first), out)
