"""The simple undirected graph of an edge list, built in place (see kernels/cpu/build.py)."""

from __future__ import annotations

import numba
import numpy as np

from .._validate import as_index_array, check_ids_in_range, check_int_scalar, choose_idtype
from ..kernels.cpu import build as _build
from ..kernels.cpu.partition import nnz_balanced_row_bounds
from ..kernels.cpu.sort import _even_bounds, exclusive_scan

__all__ = ["undirected"]

_MAX_COUNT = np.iinfo(np.int64).max


def _counter_dtype(limit: int):
    return np.int32 if limit < np.iinfo(np.int32).max else np.int64


def undirected_csr(src, dst, num_nodes: int, idtype=None):
    """``(indptr, indices, tuples_from)`` of the simple undirected graph of the tuples ``(src[i], dst[i])``.

    Rows are sorted. ``tuples_from[x]`` counts the non-loop tuples whose first end is ``x`` (duplicates
    included): Graph500's edge count of a search is their sum over the reached vertices. ``src`` and
    ``dst`` must be validated index arrays with ids below ``num_nodes``.
    """
    n = int(num_nodes)
    parts = max(1, numba.get_num_threads())
    # a vertex meets each non-loop tuple at most once: counters of src.size bits suffice (int32 halves the
    # array the count phase updates at random, against int64)
    counts = np.empty((n, 2), dtype=_counter_dtype(src.size))
    _build.count_symmetric(src, dst, _even_bounds(n, parts), counts)
    starts = exclusive_scan(np.ascontiguousarray(counts[:, 0]), np.empty(n + 1, dtype=np.int64))
    tuples_from = counts[:, 1].astype(np.int64)
    del counts
    total = int(starts[n])
    dtype = choose_idtype("idtype", idtype, max(n, total))
    indices = np.empty(total, dtype=dtype)
    cursor_end = np.empty((n, 2), dtype=_counter_dtype(total))
    cursor_end[:, 0] = starts[:n]
    cursor_end[:, 1] = starts[1:]
    _build.fill_symmetric(src, dst, nnz_balanced_row_bounds(starts, parts), cursor_end, indices)
    cursor = cursor_end[:, 0]
    unique_count = np.empty(n, dtype=np.int64)
    _build.sort_unique_rows(starts, cursor, indices, nnz_balanced_row_bounds(starts, 8 * parts), unique_count,
                            *_build.radix_digits(n))
    del cursor, cursor_end
    indptr = np.empty(n + 1, dtype=np.int64)
    _build.compact_rows(starts, unique_count, indices, indptr)
    del starts, unique_count
    kept = int(indptr[n])
    if kept < total:
        try:  # give the duplicates' tail back without copying what stays
            indices.resize(kept, refcheck=False)
        except ValueError:
            indices = indices[:kept].copy()
    return indptr.astype(dtype, copy=False), indices, tuples_from


def undirected(src, dst, num_nodes=None, *, idtype=None):
    """The simple undirected graph of an edge list, as a symmetric :class:`~graphkern.Graph`.

    Every tuple ``(u, v)`` gives the edges ``u -> v`` and ``v -> u``; self-loops and repeated edges are
    dropped. The result has only its CSR, with each row's destinations sorted and edge ids in CSR order
    (the graph :meth:`Graph.simple` makes of the doubled edge list, in a fraction of its memory: the
    tuples are read where they are and written once into their rows). The graph knows it is symmetric, so
    breadth-first searches pull through the CSR instead of building a CSC.

    Parameters
    ----------
    src, dst : array_like of int
        The tuples' two ends, equal lengths. Read, never changed or kept.
    num_nodes : int, optional
        Default: the largest id plus one.
    idtype : {None, 'int32', 'int64'}
        Id dtype; by default int32 when every id and the edge count fit.

    Examples
    --------
    >>> import graphkern as gk
    >>> g = gk.graph.undirected([0, 1, 1, 2], [1, 0, 1, 3])
    >>> g.num_edges, g.csr().indptr.tolist(), g.csr().indices.tolist()
    (4, [0, 1, 2, 3, 4], [1, 0, 3, 2])
    """
    from .graph import Graph

    src = as_index_array("src", src)
    dst = as_index_array("dst", dst)
    if src.size != dst.size:
        raise ValueError(f"arguments 'src' and 'dst': expected equal lengths, found {src.size} and {dst.size}")
    if num_nodes is None:
        n = max(int(src.max()), int(dst.max())) + 1 if src.size else 0
    else:
        n = check_int_scalar("num_nodes", num_nodes, low=0, high=_MAX_COUNT)
    check_ids_in_range("src", src, n)
    check_ids_in_range("dst", dst, n)
    indptr, indices, _ = undirected_csr(src, dst, n, idtype)
    return Graph._symmetric_csr(indptr, indices)
