"""Conversions between a Graph and SciPy sparse arrays or networkx graphs (the Graph methods of the same
names call these).

The constructors take the Graph class as ``cls`` (as graph/_construct.py does) and the other functions a
graph, so this module needs no import of graph.py, whose methods call it (graph/_base.py).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .._validate import check_choice, private, to_host_array, type_name
from ._base import GraphBase
from ._formats import FORMATS

__all__ = ["from_scipy", "to_scipy", "from_networkx", "to_networkx"]


def from_scipy(cls, matrix, *, idtype=None, formats=None, edge_data: str | None = None) -> GraphBase:
    """A graph with an edge ``i -> j`` for every stored non-zero ``A[i, j]``.

    Edge ids follow the CSR order of ``A`` (row by row, in the stored column order). Explicit zeros are
    not edges; duplicate entries of an unsummed matrix are parallel edges. With ``edge_data="w"`` the
    values go to ``g.edata["w"]``. The caller's matrix is not modified. ``cls`` is the Graph class
(:meth:`Graph.from_scipy <graphkern.graph.Graph.from_scipy>` passes it).

    Examples
    --------
    >>> import scipy.sparse as sp, graphkern as gk
    >>> g = gk.Graph.from_scipy(sp.csr_array([[0, 2.0], [3.0, 0]]), edge_data="w")
    >>> g.num_edges, g.edata["w"].tolist()
    (2, [2.0, 3.0])
    """
    import scipy.sparse as sp

    if edge_data is not None and not isinstance(edge_data, str):
        raise TypeError(f"argument 'edge_data': expected None or a name (str), found {type_name(edge_data)}")
    if not (sp.issparse(matrix)):
        raise TypeError("argument 'matrix': expected a scipy.sparse matrix or array, "
                        f"found {type_name(matrix)}")
    if matrix.ndim != 2:
        raise ValueError(f"argument 'matrix': expected 2-D, found {matrix.ndim}-D")
    if matrix.format == "coo":
        # tocsr() would sum duplicate entries into one; each stored entry is an edge (row by row,
        # in stored order within a row)
        rows, cols = np.asarray(matrix.row), np.asarray(matrix.col)
        order = np.argsort(rows, kind="stable")
        indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=matrix.shape[0]))])
        csr = sp.csr_array((np.asarray(matrix.data)[order], cols[order], indptr), shape=matrix.shape)
    else:
        csr = matrix.tocsr()
    keep = csr.data != 0
    _, num_cols = csr.shape
    if not keep.all():
        counts = np.concatenate([[0], np.cumsum(keep)])
        indptr = counts[csr.indptr]
        indices = csr.indices[keep]
        data = csr.data[keep]
    else:
        indptr, indices, data = csr.indptr, csr.indices, csr.data
    g = cls._from_compressed("csr", indptr, indices, None, num_cols, idtype, formats, "num_dst")
    if edge_data is not None:
        # matrix.tocsr() of a CSR matrix is the matrix itself: its data would be the caller's buffer
        g.edata[edge_data] = private(np.ascontiguousarray(data), matrix.data)
    return g


def to_scipy(g: GraphBase, fmt: str = "csr", data=None):
    """The adjacency matrix as a ``scipy.sparse`` array of shape ``(num_src, num_dst)``.

    ``data`` is one value per edge, indexed by edge id (default: ones as float32). Parallel edges are
    separate stored entries (SciPy sums them when it canonicalises).

    Examples
    --------
    >>> import graphkern as gk
    >>> gk.Graph.from_coo([0, 1], [1, 0]).to_scipy().toarray().tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    import scipy.sparse as sp

    g._require_host("to_scipy()")
    check_choice("fmt", fmt, FORMATS)
    if data is None:
        values = None
    else:
        data = to_host_array("data", data)
        if data.shape[:1] != (g._num_edge_ids,):
            raise ValueError(f"argument 'data': expected {g._num_edge_ids} values (one per edge id), "
                             f"found shape {data.shape}")
    shape = (g._num_src, g._num_dst)
    # copies: SciPy keeps the arrays it is given, and its in-place methods (sort_indices,
    # sum_duplicates) would otherwise reorder the graph's own formats under their edge ids
    if fmt == "coo":
        src, dst, eids = (x.copy() for x in g.coo())
        values = np.ones(g._num_edges, np.float32) if data is None else data[eids]
        return sp.coo_array((values, (src, dst)), shape=shape)
    a, b, eids = (x.copy() for x in (g.csr() if fmt == "csr" else g.csc()))
    values = np.ones(g._num_edges, np.float32) if data is None else data[eids]
    if fmt == "csr":
        return sp.csr_array((values, b, a), shape=shape)
    return sp.csc_array((values, b, a), shape=shape)


def from_networkx(cls, nx_graph, *, edge_attrs: Iterable[str] = (), idtype=None, formats=None) -> GraphBase:
    """A graph from a networkx graph; node ``i`` is the ``i``-th node of ``nx_graph.nodes``.

    Directed graphs keep their edges; an undirected edge ``{u, v}`` becomes ``u -> v`` and ``v -> u``
    (a self-loop once); multigraphs keep parallel edges. Listed edge attributes go to ``g.edata``.
    The original node labels are in ``g.ndata["label"]`` when they are not ``0..n-1``. ``cls`` is the
    Graph class (:meth:`Graph.from_networkx <graphkern.graph.Graph.from_networkx>` passes it).

    Examples
    --------
    >>> import networkx as nx, graphkern as gk
    >>> gk.Graph.from_networkx(nx.path_graph(3)).num_edges
    4
    """
    if not (hasattr(nx_graph, "nodes") and hasattr(nx_graph, "edges") and hasattr(nx_graph, "is_directed")):
        kind = type(nx_graph)
        raise TypeError(f"argument 'nx_graph': expected a networkx graph, found "
                        f"{kind.__module__}.{kind.__qualname__}")
    if isinstance(edge_attrs, str) or not isinstance(edge_attrs, Iterable):
        raise TypeError(f"argument 'edge_attrs': expected an iterable of attribute names, found "
                        f"{type_name(edge_attrs)}")
    edge_attrs = list(edge_attrs)
    if not all(isinstance(name, str) for name in edge_attrs):
        raise TypeError(f"argument 'edge_attrs': expected attribute names (str), found {edge_attrs!r}")
    nodes = list(nx_graph.nodes)
    index = {node: i for i, node in enumerate(nodes)}
    edges = list(nx_graph.edges(data=True))
    src = np.fromiter((index[u] for u, _, _ in edges), dtype=np.int64, count=len(edges))
    dst = np.fromiter((index[v] for _, v, _ in edges), dtype=np.int64, count=len(edges))
    attrs = {}
    for name in edge_attrs:
        try:
            attrs[name] = np.array([d[name] for _, _, d in edges])
        except KeyError as exc:
            raise ValueError(f"argument 'edge_attrs': edge attribute {name!r} is missing on some edges") from exc
    if not nx_graph.is_directed():
        back = src != dst
        src, dst = np.concatenate([src, dst[back]]), np.concatenate([dst, src[back]])
        attrs = {k: np.concatenate([v, v[back]]) for k, v in attrs.items()}
    g = cls.from_coo(src, dst, num_nodes=len(nodes), idtype=idtype, formats=formats)
    g.edata.update(attrs)
    if nodes != list(range(len(nodes))):
        try:
            g.ndata["label"] = np.array(nodes)
        except Exception:  # pragma: no cover - labels numpy cannot hold stay in networkx
            pass
    return g


def to_networkx(g: GraphBase):
    """A ``networkx.MultiDiGraph`` with nodes ``0..n-1`` and an ``id`` attribute per edge."""
    import networkx as nx

    g._require_host("to_networkx()")
    G = nx.MultiDiGraph()
    G.add_nodes_from(range(max(g._num_src, g._num_dst)))
    src, dst = g.edges()
    G.add_edges_from((int(u), int(v), {"id": e}) for e, (u, v) in enumerate(zip(src, dst)))
    return G
