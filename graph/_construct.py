"""How a :class:`~graphkern.graph.Graph` is made from user arrays: validated, converted to the id dtype,
made private (``graphkern._validate.private``: copied when the caller could still reach them), and on the
GPU checked there.

The functions take the Graph class as ``cls`` (graph.py's constructors call them), so this module needs
no import of graph.py.
"""

from __future__ import annotations

import numpy as np

from .._validate import (
    as_index_array,
    check_ids_in_range,
    check_indptr,
    check_int_scalar,
    check_permutation,
    choose_idtype,
    is_device_array,
    private,
    type_name,
)
from ._formats import CSR, FORMATS, normalise_formats

# node counts past int64 cannot index an array (ids are int32 or int64)
_MAX_COUNT = np.iinfo(np.int64).max


def id_space(num_edge_ids, num_edges: int) -> int:
    """The edge-id space of a new graph: ``num_edge_ids``, checked, or the edge count."""
    if num_edge_ids is None:
        return num_edges
    space = check_int_scalar("num_edge_ids", num_edge_ids, low=0, high=_MAX_COUNT)
    if space < num_edges:
        raise ValueError(f"argument 'num_edge_ids': expected at least the {num_edges} edges, found {space}")
    return space


def node_counts(num_nodes, src, dst):
    """``(num_src, num_dst, is_block)`` from ``num_nodes`` (an int, a pair, or None: the largest id + 1)."""
    if num_nodes is None:
        n = 0
        if src.size:
            n = max(int(src.max()), int(dst.max())) + 1
        return n, n, False
    if isinstance(num_nodes, (tuple, list)):
        if len(num_nodes) != 2:
            raise ValueError(f"argument 'num_nodes': expected an int or (num_src, num_dst), found {num_nodes!r}")
        return (check_int_scalar("num_nodes[0]", num_nodes[0], low=0, high=_MAX_COUNT),
                check_int_scalar("num_nodes[1]", num_nodes[1], low=0, high=_MAX_COUNT), True)
    n = check_int_scalar("num_nodes", num_nodes, low=0, high=_MAX_COUNT)
    return n, n, False


def from_coo(cls, src, dst, num_nodes, idtype, formats, eids, num_edge_ids):
    """See :meth:`Graph.from_coo`: ``cls`` is the Graph class."""
    if is_device_array(src) or is_device_array(dst):
        return from_device(cls, "coo", src, dst, eids, num_nodes, idtype, formats, num_edge_ids)
    given = (src, dst, eids)
    src = as_index_array("src", src)
    dst = as_index_array("dst", dst)
    if src.size != dst.size:
        raise ValueError(f"arguments 'src' and 'dst': expected equal lengths, found {src.size} and {dst.size}")
    num_src, num_dst, is_block = node_counts(num_nodes, src, dst)
    check_ids_in_range("src", src, num_src)
    check_ids_in_range("dst", dst, num_dst)
    space = id_space(num_edge_ids, src.size)
    dtype = choose_idtype("idtype", idtype, max(num_src, num_dst, src.size, space))
    src = private(as_index_array("src", src, dtype), given[0])
    dst = private(as_index_array("dst", dst, dtype), given[1])
    identity = {"coo"}
    if eids is not None:
        eids = private(as_index_array("eids", eids, dtype), given[2])
        check_permutation("eids", eids, src.size, space)
        identity = set()
    return cls(_num_src=num_src, _num_dst=num_dst, _num_edges=src.size, _idtype=dtype,
               _allowed=normalise_formats(formats), _formats={"coo": (src, dst, eids)},
               _identity=identity, _is_block=is_block, _num_edge_ids=space)


def from_compressed(cls, kind, indptr, indices, eids, num_other, idtype, formats, other_name,
                    num_edge_ids=None):
    """See :meth:`Graph.from_csr` and :meth:`Graph.from_csc` (``kind``); ``num_other`` is the node count of
    the side ``indices`` name (argument ``other_name``)."""
    if is_device_array(indptr) or is_device_array(indices):
        return from_device(cls, kind, indptr, indices, eids, num_other, idtype, formats, num_edge_ids)
    given = (indptr, indices, eids)
    indptr = as_index_array("indptr", indptr)
    indices = as_index_array("indices", indices)
    check_indptr("indptr", indptr, indices.size)
    num_rows = indptr.size - 1
    if num_other is None:
        num_other = num_rows
        is_block = False
    else:
        num_other = check_int_scalar(other_name, num_other, low=0, high=_MAX_COUNT)
        is_block = num_other != num_rows
    check_ids_in_range("indices", indices, num_other)
    space = id_space(num_edge_ids, indices.size)
    dtype = choose_idtype("idtype", idtype, max(num_rows, num_other, indices.size, space))
    indptr = private(as_index_array("indptr", indptr, dtype), given[0])
    indices = private(as_index_array("indices", indices, dtype), given[1])
    identity = set()
    if eids is None:
        identity.add(kind)
    else:
        eids = private(as_index_array("eids", eids, dtype), given[2])
        check_permutation("eids", eids, indices.size, space)
    num_src, num_dst = (num_rows, num_other) if kind == "csr" else (num_other, num_rows)
    return cls(_num_src=num_src, _num_dst=num_dst, _num_edges=indices.size, _idtype=dtype,
               _allowed=normalise_formats(formats), _formats={kind: (indptr, indices, eids)},
               _identity=identity, _is_block=is_block, _num_edge_ids=space)


def from_device(cls, kind, a, b, eids, counts, idtype, formats, num_edge_ids):
    """A graph whose arrays already live on the GPU: validated there (only scalars come back),
    kept there (``device == "cuda"``). ``counts`` is ``num_nodes`` for a COO, the other side's node
    count for a CSR/CSC."""
    from .. import _cuda

    _cuda.require_cuda()
    names = ("src", "dst") if kind == "coo" else ("indptr", "indices")
    for name, arr in zip(names, (a, b)):
        if not is_device_array(arr):
            raise TypeError(f"argument '{name}': expected a device array like the other index array, found "
                            f"{type_name(arr)}")
    a = _cuda.index_array(names[0], a)
    b = _cuda.index_array(names[1], b)
    if kind == "coo":
        if a.size != b.size:
            raise ValueError(f"arguments 'src' and 'dst': expected equal lengths, found {a.size} and {b.size}")
        if counts is None:
            hi = max(_cuda.min_max(a)[1], _cuda.min_max(b)[1]) + 1 if a.size else 0
            counts = hi
        num_src, num_dst, is_block = node_counts(counts, np.zeros(0, np.int64), np.zeros(0, np.int64))
        _cuda.check_ids_in_range("src", a, num_src)
        _cuda.check_ids_in_range("dst", b, num_dst)
        nnz = a.size
    else:
        nnz = b.size
        _cuda.check_indptr("indptr", a, nnz)
        num_rows = a.size - 1
        other_name = "num_dst" if kind == "csr" else "num_src"
        num_other = num_rows if counts is None else check_int_scalar(other_name, counts, low=0, high=_MAX_COUNT)
        is_block = num_other != num_rows
        _cuda.check_ids_in_range("indices", b, num_other)
        num_src, num_dst = (num_rows, num_other) if kind == "csr" else (num_other, num_rows)
    space = id_space(num_edge_ids, nnz)
    dtype = choose_idtype("idtype", idtype, max(num_src, num_dst, nnz, space))
    a = _cuda.index_array(names[0], a, dtype)
    b = _cuda.index_array(names[1], b, dtype)
    identity = {kind}
    if eids is not None:
        eids = _cuda.index_array("eids", _cuda.to_device("eids", eids), dtype)
        _cuda.check_permutation("eids", eids, nnz, space)
        identity = set()
    return cls(_num_src=num_src, _num_dst=num_dst, _num_edges=nnz, _idtype=dtype,
               _allowed=normalise_formats(formats), _formats={kind: (a, b, eids)}, _identity=identity,
               _is_block=is_block, _num_edge_ids=space, _device="cuda")


def symmetric_csr(cls, indptr: np.ndarray, indices: np.ndarray):
    """A graph on arrays made here (nothing to copy or validate) whose CSR rows are sorted and whose
    edge set is symmetric; edge ids are CSR positions."""
    g = cls(_num_src=indptr.size - 1, _num_dst=indptr.size - 1, _num_edges=indices.size, _idtype=indices.dtype,
            _allowed=FORMATS, _formats={"csr": (indptr, indices, None)}, _identity={"csr"}, _is_block=False,
            _symmetric=True)
    g._cache["sorted_csr"] = CSR(indptr, indices, None)
    return g
