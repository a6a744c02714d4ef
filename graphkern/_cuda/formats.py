"""The sort and scan steps that build a :class:`~graphkern.Graph`'s formats in device memory.

The twin of ``graphkern._cpu.formats`` (the same functions and parameters): graph/_formats.py and
:class:`~graphkern.Graph` reach it as ``graphkern._backend.driver("cuda").formats`` for a graph on the GPU.
Each step allocates its outputs on the device; the work is done by :mod:`graphkern.kernels.cuda.sort`,
imported at the first call (:func:`_sort`: ``numba.cuda`` is loaded only by a process that uses the GPU).
"""

from __future__ import annotations

import numpy as np

from . import empty

__all__ = ["arange", "expand_indptr", "degrees_from_indptr", "histogram", "scatter_by_eid", "coo_to_compressed",
           "transpose_compressed", "count_sort"]


def _sort():
    """The device's sort and scan kernels (importing them loads ``numba.cuda``)."""
    from ..kernels.cuda import sort

    return sort


def arange(n: int, dtype):
    """``0 .. n-1``: the edge ids of a format whose slots are the edges in id order."""
    return _sort().arange(n, dtype)


def expand_indptr(indptr, size: int, dtype):
    """The row of each of the ``size`` slots of a compressed format (the rows of its COO)."""
    return _sort().expand_indptr(indptr, empty(size, dtype))


def degrees_from_indptr(indptr, num_rows: int, dtype):
    """The ``num_rows`` row lengths of a compressed format."""
    return _sort().degrees_from_indptr(indptr, empty(num_rows, dtype))


def histogram(keys, num_keys: int, dtype):
    """How often each key in ``[0, num_keys)`` occurs (degrees from a COO column or a format's indices)."""
    return _sort().histogram(keys, num_keys, dtype)


def scatter_by_eid(values, eids):
    """``out[eids[j]] = values[j]``: slot-ordered values put back in edge-id order."""
    return _sort().scatter_by_eid(values, eids, empty(values.size, values.dtype))


def coo_to_compressed(rows, cols, eids, num_rows: int):
    """``(indptr, indices, eids)`` of the COO ``rows, cols`` compressed by ``rows`` (stable; ``eids`` None:
    slot ``i`` is edge ``i``)."""
    return _sort().coo_to_compressed(rows, cols, eids, num_rows)


def transpose_compressed(indptr, indices, eids, num_cols: int):
    """The transpose of a compressed format (CSR -> CSC or CSC -> CSR), carrying its edge ids."""
    return _sort().transpose_compressed(indptr, indices, eids, num_cols)


def count_sort(keys, num_keys: int, index_dtype=np.int64):
    """``(indptr, perm)`` of a stable counting sort of ``keys`` in ``[0, num_keys)``."""
    return _sort().count_sort(keys, num_keys, index_dtype)
