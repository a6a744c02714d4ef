"""The CPU runs of :func:`graphkern.segment_mm`, :func:`graphkern.gather_mm` and
:func:`graphkern.segment.segment_mm_backward_b`, on arrays graphkern.segment has validated.

Each allocates its output on recycled huge pages (graphkern._memory: a relational layer feeds it to the
next kernel) and runs one compiled kernel of :mod:`graphkern.kernels.cpu.segment_mm`. The CUDA twin is
``graphkern._cuda.segment``, with the same functions and parameters.
"""

from __future__ import annotations

import numpy as np

from .. import _memory
from ..kernels.cpu import segment_mm as _kernels

__all__ = ["segment_mm", "gather_mm", "segment_mm_backward_b"]


def segment_mm(a, b, offsets: np.ndarray):
    """``out[offsets[r]:offsets[r + 1]] = a[offsets[r]:offsets[r + 1]] @ b[r]``, shape ``(N, D2)``."""
    out = _memory.empty((a.shape[0], b.shape[2]), a.dtype)
    _kernels.segment_mm(a, b, offsets, out)
    return out


def gather_mm(a, b, idx_a, idx_b, use_idx_a: bool, use_idx_b: bool, rows: int):
    """``out[i] = a[idx_a[i]] @ b[idx_b[i]]`` for the ``rows`` output rows, an index not used (``use_idx_*``
    False, the array a placeholder) meaning ``i`` itself."""
    out = _memory.empty((rows, b.shape[2]), a.dtype)
    _kernels.gather_mm(a, b, idx_a, idx_b, use_idx_a, use_idx_b, out)
    return out


def segment_mm_backward_b(a, dz, offsets: np.ndarray):
    """``out[r] = a[seg r].T @ dz[seg r]`` for the segments ``offsets`` bounds, shape ``(R, D1, D2)``."""
    out = _memory.empty((offsets.size - 1, a.shape[1], dz.shape[1]), a.dtype)
    _kernels.segment_mm_backward_b(a, dz, offsets, out)
    return out
