"""Conversions to and from DGL and PyTorch Geometric that keep edge ids.

Edge ``i`` of a graphkern :class:`~graphkern.graph.Graph` is edge ``i`` of the DGL graph or column ``i``
of the PyG ``edge_index`` it converts to or from, so edge features indexed by edge id carry over without
a permutation. ``dgl``, ``torch`` and ``torch_geometric`` are imported inside the functions that need
them, never when graphkern is imported; :func:`from_dgl` and :func:`from_pyg` are duck-typed and import
nothing.

The constructors take the Graph class as ``cls`` and the other functions a graph, so this module needs no
import of graph.py, whose methods call it (graph/_base.py).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .._validate import to_host_array, type_name
from ._base import GraphBase, require_host_graph
from .transform import BatchInfo, edges_by_id

__all__ = ["to_edge_index", "from_dgl", "to_dgl", "from_pyg", "to_pyg", "GraphTypes"]


def to_edge_index(g: GraphBase) -> np.ndarray:
    """PyG's edge index: a ``(2, E)`` int64 NumPy array whose column ``i`` is edge ``i`` (``src``, ``dst``).

    The inverse of :meth:`Graph.from_edge_index`. With unused edge ids (``num_edge_ids > num_edges``) the
    columns are the edges in ascending id order. ``torch.from_numpy(g.to_edge_index())`` gives the tensor
    PyG expects, without a copy.

    Examples
    --------
    >>> import graphkern as gk
    >>> gk.Graph.from_coo([2, 0], [1, 2]).to_edge_index().tolist()
    [[2, 0], [1, 2]]
    """
    g = require_host_graph("g", g, "the conversion")
    src, dst, _ = edges_by_id(g)
    out = np.empty((2, g.num_edges), dtype=np.int64)
    out[0] = src
    out[1] = dst
    return out


def _torch_idtype_to_numpy(idtype):
    name = str(idtype).rsplit(".", 1)[-1]  # torch.int32 -> "int32" without importing torch
    return name if name in ("int32", "int64") else None


class GraphTypes(NamedTuple):
    """The node and edge types of a graph converted from a DGL heterograph (``Graph.types``).

    Nodes and edges are numbered as ``dgl.to_homogeneous`` numbers them: node type ``i``'s nodes
    follow those of types ``0 .. i-1`` in ``ntypes`` order, and edge type ``j``'s edges follow those of
    types ``0 .. j-1`` in ``canonical_etypes`` order, each type's ids in DGL's order.

    Examples
    --------
    >>> import numpy as np
    >>> from graphkern.graph.interop import GraphTypes
    >>> t = GraphTypes(("game", "user"), (("user", "plays", "game"),), (2, 3), (4,))
    >>> t.etype_id("plays"), t.ntype_id("user"), t.node_offsets().tolist()
    (0, 1, [0, 2, 5])
    """

    ntypes: tuple
    canonical_etypes: tuple
    # counts as tuples of ints, not arrays: nothing a caller can change under the graph
    num_nodes: tuple  # one count per node type
    num_edges: tuple  # one count per edge type

    def ntype_id(self, key) -> int:
        """The position of node type ``key`` in :attr:`ntypes` (``KeyError`` naming the types if none)."""
        if key in self.ntypes:
            return self.ntypes.index(key)
        raise KeyError(f"expected a node type of {list(self.ntypes)}, found {key!r}")

    def etype_id(self, key) -> int:
        """The position of an edge type in :attr:`canonical_etypes`: ``key`` is a canonical
        ``(src type, edge type, dst type)`` or an edge type name that only one of them has, as DGL takes
        it (``KeyError`` naming the types if none or several match)."""
        if isinstance(key, tuple):
            if key in self.canonical_etypes:
                return self.canonical_etypes.index(key)
        else:
            ids = [i for i, (_, name, _) in enumerate(self.canonical_etypes) if name == key]
            if len(ids) == 1:
                return ids[0]
            if len(ids) > 1:
                raise KeyError(f"expected an edge type that names one relation, found {key!r}, the name of "
                               f"{[self.canonical_etypes[i] for i in ids]}: give the canonical (src, type, dst)")
        raise KeyError(f"expected an edge type of {list(self.canonical_etypes)}, found {key!r}")

    def node_offsets(self) -> np.ndarray:
        """Where each node type's nodes start, and the number of nodes last (int64)."""
        return np.concatenate(([0], np.cumsum(self.num_nodes, dtype=np.int64)))


def _dgl_edges(dg, etype=None):
    """DGL's ``(src, dst)`` in edge-id order, whatever formats ``dg`` is restricted to.

    ``dg.edges(order="eid")`` reads the COO; a graph restricted to CSR and/or CSC (``dg.formats(["csc"])``)
    refuses it, so the COO is then read from a view of ``dg`` that also allows it (DGL builds it from a
    format it has; ``dg`` itself keeps its restriction). Duck-typed: an object without ``formats`` (or
    without edge types) is read as it is."""
    view = dg
    if callable(getattr(dg, "formats", None)):
        formats = dg.formats()
        allowed = set(formats["created"]) | set(formats["not created"])
        view = dg if "coo" in allowed else dg.formats(sorted(allowed | {"coo"}))
    return view.edges(order="eid") if etype is None else view.edges(order="eid", etype=etype)


def _from_heterograph(cls, dg, idtype, formats) -> GraphBase:
    """A square graph from a DGL graph with several edge types, numbered as ``dgl.to_homogeneous`` does;
    the types go to ``g.types`` and, as in DGL, the type and per-type id of every node and edge to
    ``ndata``/``edata`` under ``"_TYPE"`` and ``"_ID"`` (int64)."""
    import torch  # a DGL graph's ids are torch tensors: concatenated where they live (a GPU stays a GPU)

    ntypes = tuple(dg.ntypes)
    etypes = tuple(tuple(rel) for rel in dg.canonical_etypes)
    num_nodes = tuple(int(dg.num_nodes(nt)) for nt in ntypes)
    num_edges = tuple(int(dg.num_edges(rel)) for rel in etypes)
    types = GraphTypes(ntypes, etypes, num_nodes, num_edges)
    start = types.node_offsets()
    src, dst = [], []
    for rel in etypes:
        u, v = _dgl_edges(dg, rel)
        src.append(u.long() + int(start[ntypes.index(rel[0])]))
        dst.append(v.long() + int(start[ntypes.index(rel[2])]))
    g = cls.from_coo(torch.cat(src), torch.cat(dst), num_nodes=int(start[-1]), idtype=idtype, formats=formats)
    g._types = types
    g.ndata["_TYPE"] = np.repeat(np.arange(len(ntypes), dtype=np.int64), num_nodes)
    g.ndata["_ID"] = np.concatenate([np.arange(n, dtype=np.int64) for n in num_nodes])
    g.edata["_TYPE"] = np.repeat(np.arange(len(etypes), dtype=np.int64), num_edges)
    g.edata["_ID"] = np.concatenate([np.arange(n, dtype=np.int64) for n in num_edges])
    return g


def from_dgl(cls, dg, *, idtype=None, formats=None) -> GraphBase:
    """A graph from a DGL graph, bipartite graph or block (message flow graph), edge ids kept.

    Edge ``i`` is DGL's edge ``i`` (``dg.edges(order="eid")``). A block or a one-relation bipartite
    graph becomes a bipartite block with ``num_src = dg.num_src_nodes()`` and
    ``num_dst = dg.num_dst_nodes()``; a homogeneous graph a square one. The id dtype follows
    ``dg.idtype`` unless ``idtype`` is given. A batched DGL graph stays batched (its ``batch_num_nodes``
    and ``batch_num_edges``). Node and edge features are not copied: they are indexed the same way in
    both libraries. CUDA graphs stay on the GPU. A DGL graph restricted to some formats
    (``dg.formats(["csc"])``) converts too; ``formats`` (default: all) is what the result may build. A CSC
    that ``dg`` has created (the blocks DGL's neighbour sampler hands out have one) is copied instead of
    built again when it is the one graphkern builds (edge ids ascending within every row).

    A heterograph with several edge types becomes one square graph numbered as ``dgl.to_homogeneous``
    numbers it (node types in ``dg.ntypes`` order, edge types in ``dg.canonical_etypes`` order), with
    ``g.types`` (:class:`GraphTypes`) and DGL's ``"_TYPE"``/``"_ID"`` arrays in ``ndata`` and ``edata``;
    ``graphkern.torch.ops.edge_softmax`` and ``gspmm`` take DGL's per-type forms on it. A block with
    several edge types raises ``ValueError``.
``cls`` is the Graph class (:meth:`Graph.from_dgl <graphkern.graph.Graph.from_dgl>` passes it).

    Examples
    --------
    >>> import graphkern as gk
    >>> dg = gk.Graph.from_coo([0, 1], [1, 2]).to_dgl()  # doctest: +SKIP
    >>> gk.Graph.from_dgl(dg).edges()[1].tolist()  # doctest: +SKIP
    [1, 2]
    """
    needed = ("edges", "num_src_nodes", "num_dst_nodes", "canonical_etypes", "idtype")
    if isinstance(dg, GraphBase) or not all(hasattr(dg, name) for name in needed):
        raise TypeError(f"argument 'dg': expected a dgl.DGLGraph, found {type_name(dg)}")
    etypes = list(dg.canonical_etypes)
    is_block = bool(getattr(dg, "is_block", False))
    if idtype is None:
        idtype = _torch_idtype_to_numpy(dg.idtype)
    if len(etypes) != 1:
        if is_block or not etypes:
            raise ValueError(f"argument 'dg': expected a graph, or a block with one edge type, found "
                             f"{'a block' if is_block else 'a graph'} with {len(etypes)} edge types: {etypes}")
        return _from_heterograph(cls, dg, idtype, formats)
    src_type, _, dst_type = etypes[0]
    bipartite = is_block or src_type != dst_type
    src, dst = _dgl_edges(dg)
    num_src, num_dst = int(dg.num_src_nodes()), int(dg.num_dst_nodes())
    num_nodes = (num_src, num_dst) if bipartite else num_src
    g = cls.from_coo(src, dst, num_nodes=num_nodes, idtype=idtype, formats=formats)
    _adopt_dgl_csc(g, dg)
    size = int(getattr(dg, "batch_size", 1))
    if size > 1 and not bipartite:
        # the counts live on the graph's device; .cpu() brings a CUDA graph's back (they are small)
        nodes = to_host_array("dg.batch_num_nodes()", dg.batch_num_nodes().cpu()).astype(np.int64)
        edges = to_host_array("dg.batch_num_edges()", dg.batch_num_edges().cpu()).astype(np.int64)
        g._batch = BatchInfo(nodes, nodes.copy(), edges, edges.copy(), (False,) * size)
    return g


def _adopt_dgl_csc(g: GraphBase, dg) -> None:
    """Give ``g`` the CSC that ``dg`` already holds, when it is the one graphkern would build.

    DGL's neighbour sampler hands out blocks whose CSC is created; a training loop converts a new block
    every step, and building its CSC again runs the count sort's parallel steps each time. graphkern's CSC
    of a COO read in edge-id order lists each destination's edges by ascending edge id (the sort is
    stable); DGL's CSC describes the same edges (DGL keeps its formats consistent), so where its edge ids
    also ascend within every row the three arrays are the same, and they are copied instead of rebuilt.
    Anything else (no CSC created, another order, a graph on a GPU, a graph that may not hold a CSC)
    leaves ``g`` to build its own."""
    formats = dg.formats() if callable(getattr(dg, "formats", None)) else None
    if (not isinstance(formats, dict) or "csc" not in formats.get("created", ()) or g.device != "cpu"
            or not g.allows_format("csc") or g.has_format("csc") or not hasattr(dg, "adj_tensors")):
        return
    tensors = dg.adj_tensors("csc")
    if any(getattr(t, "is_cuda", False) for t in tensors):
        return
    indptr, indices, eids = (np.array(to_host_array("dg.adj_tensors('csc')", t), dtype=g.idtype) for t in tensors)
    edges = g.num_edges
    if indptr.shape != (g.num_dst + 1,) or indices.shape != (edges,) or eids.shape != (edges,) or (
            edges and (indptr[0] != 0 or indptr[-1] != edges)):
        return
    if edges > 1:
        row_start = np.zeros(edges, dtype=bool)
        row_start[indptr[1:-1][indptr[1:-1] < edges]] = True
        if not bool(np.all((eids[1:] > eids[:-1]) | row_start[1:])):
            return
    g._formats["csc"] = (indptr, indices, eids)


def _import(module: str, purpose: str):
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        package = {"torch_geometric.data": "torch_geometric"}.get(module, module)
        raise ImportError(f"{purpose} needs the '{package}' package, which is not importable here "
                          f"({exc}); install it with: pip install {package}") from exc


def to_dgl(g: GraphBase):
    """A DGL graph with the same nodes and the same edge ids: edge ``i`` here is DGL's edge ``i``.

    A square graph becomes ``dgl.graph(..., num_nodes=n)``; a bipartite block becomes
    ``dgl.create_block(..., num_src_nodes, num_dst_nodes)``. The idtype is kept (int32 or int64). A
    batched graph keeps its ``batch_num_nodes``/``batch_num_edges`` (blocks cannot be batched in DGL, so
    a batch of blocks converts unbatched). With unused edge ids the edges are numbered in ascending id
    order. ``ndata``/``edata`` arrays are not copied. Needs ``dgl`` and ``torch``.

    Examples
    --------
    >>> import graphkern as gk
    >>> dg = gk.Graph.from_coo([0, 1], [1, 2]).to_dgl()  # doctest: +SKIP
    >>> dg.num_nodes(), dg.edges()[1].tolist()  # doctest: +SKIP
    (3, [1, 2])
    """
    g = require_host_graph("g", g, "the conversion")
    torch = _import("torch", "to_dgl()")
    dgl = _import("dgl", "to_dgl()")
    src, dst, _ = edges_by_id(g)
    tid = torch.int32 if g.idtype == np.int32 else torch.int64
    # copies: a tensor from_numpy shares the array, which may be the graph's own (DGL's graph would
    # then change this one's edges)
    u = torch.from_numpy(np.array(src)).to(tid)
    v = torch.from_numpy(np.array(dst)).to(tid)
    if g.is_block:
        return dgl.create_block((u, v), num_src_nodes=g.num_src, num_dst_nodes=g.num_dst, idtype=tid)
    dg = dgl.graph((u, v), num_nodes=g.num_src, idtype=tid)
    if g.batch_size > 1:
        dg.set_batch_num_nodes(torch.from_numpy(g.batch_num_nodes()))
        dg.set_batch_num_edges(torch.from_numpy(g.batch_num_edges()))
    return dg


def from_pyg(cls, data, *, num_nodes=None, idtype=None, formats=None) -> GraphBase:
    """A graph from a PyG ``Data`` (anything with ``edge_index`` and ``num_nodes``); edge ``i`` is column
    ``i`` of ``edge_index``.

    ``num_nodes`` overrides ``data.num_nodes`` (an int, or ``(num_src, num_dst)`` for a bipartite block);
    when both are missing it is inferred from the ids. ``torch_geometric`` is not imported. ``cls`` is the
    Graph class (:meth:`Graph.from_pyg <graphkern.graph.Graph.from_pyg>` passes it).

    Examples
    --------
    >>> import numpy as np, graphkern as gk
    >>> from types import SimpleNamespace
    >>> data = SimpleNamespace(edge_index=np.array([[0, 1], [1, 3]]), num_nodes=5)
    >>> g = gk.Graph.from_pyg(data)
    >>> g.num_nodes, g.to_edge_index().tolist()
    (5, [[0, 1], [1, 3]])
    """
    if not hasattr(data, "edge_index"):
        raise TypeError(f"argument 'data': expected a torch_geometric Data with an edge_index, found "
                        f"{type_name(data)}")
    edge_index = data.edge_index
    if edge_index is None:
        raise ValueError("argument 'data': expected an edge_index, found None")
    if num_nodes is None:
        num_nodes = getattr(data, "num_nodes", None)
    if num_nodes is not None and hasattr(num_nodes, "item") and not isinstance(num_nodes, np.ndarray):
        num_nodes = num_nodes.item()  # a 0-d tensor
    return cls.from_edge_index(edge_index, num_nodes=num_nodes, idtype=idtype, formats=formats)


def to_pyg(g: GraphBase):
    """A ``torch_geometric.data.Data`` with ``edge_index`` (int64, column ``i`` is edge ``i``) and
    ``num_nodes``. Needs ``torch_geometric``; a bipartite block has no ``Data`` form (``ValueError``:
    use :func:`to_edge_index` with ``size=(num_src, num_dst)`` in the layer).

    Examples
    --------
    >>> import graphkern as gk
    >>> data = gk.Graph.from_coo([0, 1], [1, 2]).to_pyg()  # doctest: +SKIP
    >>> data.edge_index.tolist(), data.num_nodes  # doctest: +SKIP
    ([[0, 1], [1, 2]], 3)
    """
    g = require_host_graph("g", g, "the conversion")
    if g.is_block:
        raise ValueError(f"argument 'g': expected a square graph, found a bipartite block with {g.num_src} "
                         f"source and {g.num_dst} destination nodes; use g.to_edge_index() with "
                         f"size=({g.num_src}, {g.num_dst})")
    pyg_data = _import("torch_geometric.data", "to_pyg()")
    torch = _import("torch", "to_pyg()")
    return pyg_data.Data(edge_index=torch.from_numpy(to_edge_index(g)), num_nodes=g.num_src)
