"""The sort and scan steps that build a :class:`~graphkern.Graph`'s formats in host memory.

graph/_formats.py and :class:`~graphkern.Graph` build one format from another through the ``formats``
module of the graph's device (``graphkern._backend.driver(g.device).formats``), so they hold no branch
on the device of their own. Each step allocates its outputs next to its inputs; the work is done by
:mod:`graphkern.kernels.cpu.sort`. The CUDA twin is ``graphkern._cuda.formats``, with the same functions.
"""

from __future__ import annotations

import numpy as np

from ..kernels.cpu import sort as _sort

__all__ = ["arange", "expand_indptr", "degrees_from_indptr", "histogram", "scatter_by_eid", "coo_to_compressed",
           "transpose_compressed", "count_sort"]


def arange(n: int, dtype):
    """``0 .. n-1``: the edge ids of a format whose slots are the edges in id order.

    Examples
    --------
    >>> import numpy as np
    >>> from graphkern._cpu import formats
    >>> formats.arange(3, np.int32).tolist()
    [0, 1, 2]
    """
    return np.arange(n, dtype=dtype)


def expand_indptr(indptr, size: int, dtype):
    """The row of each of the ``size`` slots of a compressed format (the rows of its COO)."""
    return _sort.expand_indptr(indptr, np.empty(size, dtype=dtype))


def degrees_from_indptr(indptr, num_rows: int, dtype):
    """The ``num_rows`` row lengths of a compressed format."""
    return _sort.degrees_from_indptr(indptr, np.empty(num_rows, dtype=dtype))


def histogram(keys, num_keys: int, dtype):
    """How often each key in ``[0, num_keys)`` occurs (degrees from a COO column or a format's indices)."""
    return _sort.histogram(keys, num_keys, dtype)


def scatter_by_eid(values, eids):
    """``out[eids[j]] = values[j]``: slot-ordered values put back in edge-id order."""
    return _sort.scatter_by_eid(values, eids, np.empty(values.size, dtype=values.dtype))


def coo_to_compressed(rows, cols, eids, num_rows: int):
    """``(indptr, indices, eids)`` of the COO ``rows, cols`` compressed by ``rows`` (stable; ``eids`` None:
    slot ``i`` is edge ``i``)."""
    return _sort.coo_to_compressed(rows, cols, eids, num_rows)


def transpose_compressed(indptr, indices, eids, num_cols: int):
    """The transpose of a compressed format (CSR -> CSC or CSC -> CSR), carrying its edge ids."""
    return _sort.transpose_compressed(indptr, indices, eids, num_cols)


def count_sort(keys, num_keys: int, index_dtype=np.int64):
    """``(indptr, perm)`` of a stable counting sort of ``keys`` in ``[0, num_keys)``."""
    return _sort.count_sort(keys, num_keys, index_dtype)
