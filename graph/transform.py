"""Graph transforms with DGL's semantics: self-loops, batching, induced and in-edge subgraphs.

Every transform returns a new :class:`~graphkern.graph.Graph` and leaves its input untouched. Edge ids
follow DGL's rules (:doc:`docs/interop.md <interop>` lists them with the places graphkern differs):

- :func:`add_self_loop` keeps every edge id and appends one self-loop per node after them;
- :func:`remove_self_loop` drops self-loops and renumbers the rest ``0..E'-1`` in their old id order;
- :func:`batch` places graphs block-diagonally, node and edge ids offset by the graphs before;
- :func:`node_subgraph` and :func:`in_subgraph` number their edges in ascending parent edge id and keep
  the parent ids in ``parent_nids`` / ``parent_eids`` (DGL's ``ndata[dgl.NID]`` / ``edata[dgl.EID]``).

``g.ndata`` and ``g.edata`` arrays travel with the nodes and edges they describe, as in DGL.

New graphs are built through the class of the graph given (``type(g)``), so this module needs no import
of graph.py, whose methods call it (graph/_base.py).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import (
    INT32_MAX,
    INT64_MAX,
    as_index_array,
    check_choice,
    check_ids_in_range,
    read_only,
    to_host_array,
    type_name,
)
from ._base import GraphBase, require_host_graph

__all__ = ["BatchInfo", "edges_by_id", "add_self_loop", "remove_self_loop", "batch", "unbatch", "node_subgraph",
           "in_subgraph", "batch_num_nodes", "batch_num_edges"]


@dataclass(frozen=True)
class BatchInfo:
    """How a batched graph splits into its parts: one entry per part, in order.

    ``num_edge_ids[i]`` is part ``i``'s edge-id space (equal to ``num_edges[i]`` unless that part left ids
    unused); part ``i``'s edge ids start at the sum of the spaces before it.
    """

    num_src: np.ndarray
    num_dst: np.ndarray
    num_edges: np.ndarray
    num_edge_ids: np.ndarray
    is_block: tuple

    @staticmethod
    def single(g: GraphBase) -> "BatchInfo":
        one = lambda x: np.array([x], dtype=np.int64)  # noqa: E731
        return BatchInfo(one(g.num_src), one(g.num_dst), one(g.num_edges), one(g.num_edge_ids), (g.is_block,))

    def reversed(self) -> "BatchInfo":
        return BatchInfo(self.num_dst, self.num_src, self.num_edges, self.num_edge_ids, self.is_block)


# ---------------------------------------------------------------------------------------------- helpers


def edges_by_id(g: GraphBase):
    """``(src, dst, eids)`` in ascending edge-id order, ``eids`` int64, from whichever format exists.

    Reads the formats already created and builds none, so a transform never changes its input (not even
    its format cache) and works on a graph restricted to one format.
    """
    f = g._formats
    if "coo" in f:
        src, dst, eids = f["coo"]
    elif "csr" in f:
        indptr, dst, eids = f["csr"]
        src = np.repeat(np.arange(g.num_src, dtype=g.idtype), np.diff(indptr))
    else:
        indptr, src, eids = f["csc"]
        dst = np.repeat(np.arange(g.num_dst, dtype=g.idtype), np.diff(indptr))
    if eids is None:  # slot j holds edge j
        return src, dst, np.arange(g.num_edges, dtype=np.int64)
    if g.num_edge_ids == g.num_edges:  # a permutation: scatter each slot to its id
        by_id_src, by_id_dst = np.empty_like(src), np.empty_like(dst)
        by_id_src[eids] = src
        by_id_dst[eids] = dst
        return by_id_src, by_id_dst, np.arange(g.num_edges, dtype=np.int64)
    order = np.argsort(eids, kind="stable")
    return src[order], dst[order], eids[order].astype(np.int64)


def _fit_idtype(idtype: np.dtype, largest: int) -> np.dtype:
    """``idtype``, widened to int64 when ``largest`` (a count or id) would not fit int32."""
    return np.dtype(np.int64) if largest > INT32_MAX else np.dtype(idtype)


def _total(name: str, counts, what: str) -> int:
    """The sum of ``counts`` (Python ints: a NumPy sum of int64 counts wraps silently), refused by name when
    it passes int64, the widest index type."""
    total = sum(int(c) for c in counts)
    if total > INT64_MAX:
        raise ValueError(f"argument '{name}': expected {what} that int64 can index, at most {INT64_MAX}, "
                         f"found {total}")
    return total


def _require_square(g: GraphBase, what: str) -> None:
    """Refuse a bipartite block with ``num_src != num_dst`` for a transform that takes source id ``i`` and
    destination id ``i`` for one node (self-loops, induced subgraphs): there they name two nodes, and DGL
    refuses such a graph (its source and destination node types differ)."""
    if g.num_src != g.num_dst:
        raise ValueError(f"argument 'g': expected a graph with num_src == num_dst for {what}, found "
                         f"{g.num_src} source and {g.num_dst} destination nodes")


def _new_graph(like: GraphBase, src, dst, num_src: int, num_dst: int, *, is_block: bool, idtype=None,
               eids=None, num_edge_ids=None, allowed=None) -> GraphBase:
    """A graph over freshly built arrays (already validated by construction, so not checked again)."""
    num_edges = int(src.size)
    space = num_edges if num_edge_ids is None else int(num_edge_ids)
    dtype = _fit_idtype(like.idtype if idtype is None else idtype, max(num_src, num_dst, space))
    src = np.ascontiguousarray(src, dtype=dtype)
    dst = np.ascontiguousarray(dst, dtype=dtype)
    if eids is not None:
        eids = np.ascontiguousarray(eids, dtype=dtype)
    return type(like)(_num_src=num_src, _num_dst=num_dst, _num_edges=num_edges, _num_edge_ids=space,
                      _idtype=dtype, _allowed=like._allowed if allowed is None else allowed,
                      _formats={"coo": (src, dst, eids)}, _identity=set() if eids is not None else {"coo"},
                      _is_block=is_block)


def _take(value, index: np.ndarray):
    """Rows ``index`` of a feature array (NumPy or torch); anything else is left behind."""
    if not isinstance(value, np.ndarray) and not index.flags.writeable:
        index = index.copy()  # torch warns on (and may refuse) a read-only NumPy index
    try:
        return value[index]
    except (TypeError, IndexError):  # a value that is not an array (a list, a label) has no rows to select
        return None


def _take_all(table: dict, index: np.ndarray, rows: int) -> dict:
    out = {}
    for key, value in table.items():
        if getattr(value, "shape", ())[:1] == (rows,):
            taken = _take(value, index)
            if taken is not None:
                out[key] = taken
    return out


def _concat(values: list):
    if all(isinstance(v, np.ndarray) for v in values):
        return np.concatenate(values)
    import torch  # only reached when the data are torch tensors already

    return torch.cat([torch.as_tensor(v) for v in values])


def _node_ids(name: str, nodes, count: int, *, allow_mask: bool = True) -> np.ndarray:
    """Validated node ids (int64) from ids of any integer dtype or a bool mask of length ``count``."""
    arr = to_host_array(name, nodes)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.dtype == np.bool_:
        if not allow_mask or arr.ndim != 1 or arr.size != count:
            raise ValueError(f"argument '{name}': expected a bool mask of length {count} (one per node), found "
                             f"shape {arr.shape}")
        return np.flatnonzero(arr).astype(np.int64)
    ids = as_index_array(name, arr)
    check_ids_in_range(name, ids, count)
    ids = ids.astype(np.int64)
    if ids.size:
        seen = np.bincount(ids, minlength=count)
        if int(seen.max()) > 1:
            dup = int(np.argmax(seen > 1))
            raise ValueError(f"argument '{name}': expected distinct node ids, found {dup} {int(seen[dup])} times")
    return ids


# ---------------------------------------------------------------------------------------------- self-loops


def add_self_loop(g: GraphBase) -> GraphBase:
    """``g`` with one self-loop ``v -> v`` per node appended after the existing edges (DGL's rule).

    Existing edges keep their ids; the loop of node ``v`` gets id ``g.num_edge_ids + v``. Nodes that
    already have a self-loop get another one (as in DGL). ``edata`` arrays gain one row of ones per new
    edge (DGL's ``fill_data=1``). The result is not batched: its appended edges do not lie in the parts'
    edge-id ranges (DGL 2.1 drops the batch information too). ``g`` must have ``num_src == num_dst``.

    Examples
    --------
    >>> import graphkern as gk
    >>> g = gk.Graph.from_coo([0, 1], [1, 1], num_nodes=3).add_self_loop()
    >>> g.edges()[0].tolist(), g.edges()[1].tolist()
    ([0, 1, 0, 1, 2], [1, 1, 0, 1, 2])
    """
    g = require_host_graph("g", g, "the transform")
    _require_square(g, "self-loops")
    n, space = g.num_src, g.num_edge_ids
    _total("g", (space, n), "an edge-id space with one id per new self-loop")
    src, dst, eids = edges_by_id(g)
    loops = np.arange(n, dtype=np.int64)
    new_eids = None if space == g.num_edges else np.concatenate([eids, space + loops])
    out = _new_graph(g, np.concatenate([src.astype(np.int64), loops]), np.concatenate([dst.astype(np.int64), loops]),
                     n, n, is_block=g.is_block, eids=new_eids, num_edge_ids=space + n)
    out.ndata = dict(g.ndata)
    for key, value in g.edata.items():
        if getattr(value, "shape", ())[:1] != (space,):
            continue
        if isinstance(value, np.ndarray):
            out.edata[key] = np.concatenate([value, np.ones((n,) + value.shape[1:], value.dtype)])
        else:
            out.edata[key] = _concat([value, value.new_ones((n,) + tuple(value.shape[1:]))])
    return out


def remove_self_loop(g: GraphBase, *, return_eids: bool = False):
    """``g`` without its self-loops; the other edges are renumbered ``0..E'-1`` in their old id order.

    As in DGL, edge ids are compacted: new edge ``i`` is the ``i``-th remaining edge by old id. With
    ``return_eids=True`` also returns the old id of each new edge (int64), to carry edge features that live
    outside ``edata``. A batched graph stays batched, with its per-part edge counts updated. ``g`` must have
    ``num_src == num_dst``.

    Examples
    --------
    >>> import graphkern as gk
    >>> g = gk.Graph.from_coo([0, 1, 1, 2], [1, 1, 2, 2])
    >>> h, kept = g.remove_self_loop(return_eids=True)
    >>> h.edges()[0].tolist(), h.edges()[1].tolist(), kept.tolist()
    ([0, 1], [1, 2], [0, 2])
    """
    g = require_host_graph("g", g, "the transform")
    if not isinstance(return_eids, (bool, np.bool_)):
        raise TypeError(f"argument 'return_eids': expected a bool, found {type_name(return_eids)}")
    _require_square(g, "self-loops")
    src, dst, eids = edges_by_id(g)
    keep = src != dst
    kept = eids[keep]
    out = _new_graph(g, src[keep], dst[keep], g.num_src, g.num_dst, is_block=g.is_block)
    out.ndata = dict(g.ndata)
    out.edata = _take_all(g.edata, kept, g.num_edge_ids)
    info = g._batch
    if info is not None:
        starts = np.cumsum(info.num_edge_ids) - info.num_edge_ids
        part = np.searchsorted(starts, kept, side="right") - 1
        counts = np.bincount(part, minlength=len(info.is_block)).astype(np.int64)
        out._batch = BatchInfo(info.num_src, info.num_dst, counts, counts.copy(), info.is_block)
    return (out, read_only(kept)) if return_eids else out


# ---------------------------------------------------------------------------------------------- batching


def batch(graphs) -> GraphBase:
    """The block-diagonal union of ``graphs``: part ``i``'s node and edge ids are offset by the node and
    edge counts of the parts before it, and its edges follow theirs in id order (``dgl.batch``).

    Bipartite blocks batch too: source and destination ids are offset separately (a square part adds the
    same count to both). Batched graphs passed in are flattened into their parts, as DGL does. ``ndata``
    and ``edata`` arrays are concatenated; every graph must hold the same keys. The id dtype is the
    widest of the parts', int64 when the totals need it. The result knows :meth:`Graph.batch_num_nodes`,
    :meth:`Graph.batch_num_edges` and :attr:`Graph.batch_size`; :func:`unbatch` returns the parts.

    Examples
    --------
    >>> import graphkern as gk
    >>> a = gk.Graph.from_coo([0], [1], num_nodes=2)
    >>> b = gk.Graph.from_coo([0, 2], [1, 0], num_nodes=3)
    >>> bg = gk.batch([a, b])
    >>> bg.edges()[0].tolist(), bg.edges()[1].tolist(), bg.batch_num_nodes().tolist()
    ([0, 2, 4], [1, 3, 2], [2, 3])
    """
    if isinstance(graphs, GraphBase) or not hasattr(graphs, "__iter__"):
        raise TypeError(f"argument 'graphs': expected a list of graphkern Graphs, found {type_name(graphs)}")
    graphs = list(graphs)
    if not graphs:
        raise ValueError("argument 'graphs': expected at least one graph, found an empty list")
    for i, g in enumerate(graphs):
        require_host_graph(f"graphs[{i}]", g, "the transform")
    infos = [g._batch or BatchInfo.single(g) for g in graphs]
    cat = lambda field: np.concatenate([getattr(info, field) for info in infos])  # noqa: E731
    info = BatchInfo(cat("num_src"), cat("num_dst"), cat("num_edges"), cat("num_edge_ids"),
                     tuple(flag for info in infos for flag in info.is_block))
    num_src = _total("graphs", info.num_src, "source nodes")
    num_dst = _total("graphs", info.num_dst, "destination nodes")
    space = _total("graphs", info.num_edge_ids, "edge ids")
    is_block = any(g.is_block for g in graphs) or num_src != num_dst
    src_parts, dst_parts, eid_parts = [], [], []
    src_off = dst_off = eid_off = 0
    for g in graphs:
        src, dst, eids = edges_by_id(g)
        src_parts.append(src.astype(np.int64) + src_off)
        dst_parts.append(dst.astype(np.int64) + dst_off)
        eid_parts.append(eids + eid_off)
        src_off, dst_off, eid_off = src_off + g.num_src, dst_off + g.num_dst, eid_off + g.num_edge_ids
    dense = space == int(info.num_edges.sum())
    idtype = max((g.idtype for g in graphs), key=lambda d: d.itemsize)
    out = _new_graph(graphs[0], np.concatenate(src_parts), np.concatenate(dst_parts), num_src, num_dst,
                     is_block=is_block, idtype=idtype, eids=None if dense else np.concatenate(eid_parts),
                     num_edge_ids=space, allowed=frozenset().union(*(g._allowed for g in graphs)))
    for table in ("ndata", "edata"):
        keys = [set(getattr(g, table)) for g in graphs]
        for i, k in enumerate(keys):
            if k != keys[0]:
                raise ValueError(f"argument 'graphs': expected the same {table} keys in every graph, found "
                                 f"{sorted(keys[0])} in graphs[0] and {sorted(k)} in graphs[{i}]")
        setattr(out, table, {key: _concat([getattr(g, table)[key] for g in graphs]) for key in keys[0]})
    out._batch = info
    return out


def unbatch(g: GraphBase) -> list:
    """The graphs a :func:`batch` put together, each with its own node ids, edge ids and edge order.

    Edge ``e`` of part ``i`` is edge ``e + offset`` of the batched graph (``offset`` the edge-id spaces of
    the parts before it). A graph that is not batched comes back as a one-element list. Raises
    ``ValueError`` when an edge crosses from one part's nodes to another's (batch counts set by hand
    that do not describe the graph).

    Examples
    --------
    >>> import graphkern as gk
    >>> a = gk.Graph.from_coo([0], [1], num_nodes=2)
    >>> b = gk.Graph.from_coo([0, 2], [1, 0], num_nodes=3)
    >>> [part.edges()[1].tolist() for part in gk.unbatch(gk.batch([a, b]))]
    [[1], [1, 0]]
    """
    g = require_host_graph("g", g, "the transform")
    info = g._batch or BatchInfo.single(g)
    src, dst, eids = edges_by_id(g)
    src, dst = src.astype(np.int64), dst.astype(np.int64)
    src_starts = np.concatenate([[0], np.cumsum(info.num_src)])
    dst_starts = np.concatenate([[0], np.cumsum(info.num_dst)])
    eid_starts = np.concatenate([[0], np.cumsum(info.num_edge_ids)])
    cuts = np.searchsorted(eids, eid_starts)
    square = np.array_equal(info.num_src, info.num_dst)
    parts = []
    for i, part_is_block in enumerate(info.is_block):
        lo, hi = int(cuts[i]), int(cuts[i + 1])
        s = src[lo:hi] - src_starts[i]
        d = dst[lo:hi] - dst_starts[i]
        ns, nd = int(info.num_src[i]), int(info.num_dst[i])
        if hi - lo != int(info.num_edges[i]) or (s.size and (s.min() < 0 or s.max() >= ns or d.min() < 0
                                                              or d.max() >= nd)):
            raise ValueError(f"argument 'g': its batch counts do not describe its edges (part {i} expects "
                             f"{int(info.num_edges[i])} edges within {ns} x {nd} nodes)")
        space = int(info.num_edge_ids[i])
        part_eids = eids[lo:hi] - eid_starts[i]
        part = _new_graph(g, s, d, ns, nd, is_block=part_is_block,
                          eids=None if space == hi - lo else part_eids, num_edge_ids=space)
        if square:  # node rows are the same ranges on both sides only when every part is square
            part.ndata = _take_all(g.ndata, np.arange(src_starts[i], src_starts[i + 1]), g.num_src)
        part.edata = _take_all(g.edata, np.arange(eid_starts[i], eid_starts[i + 1]), g.num_edge_ids)
        parts.append(part)
    return parts


def batch_num_nodes(g: GraphBase, side: str | None = None) -> np.ndarray:
    """Node counts of the parts of a batched graph (int64); ``[num_nodes]`` for a graph not batched.

    A batch that holds bipartite blocks has two counts per part: ``side="src"`` or ``side="dst"``.
    """
    info = g._batch or BatchInfo.single(g)
    if side is None:
        if g.is_block and not np.array_equal(info.num_src, info.num_dst):
            raise ValueError("argument 'side': expected 'src' or 'dst' for a batch of bipartite blocks, found None")
        return info.num_src.copy()
    check_choice("side", side, ("src", "dst"))
    return (info.num_src if side == "src" else info.num_dst).copy()


def batch_num_edges(g: GraphBase) -> np.ndarray:
    """Edge counts of the parts of a batched graph (int64); ``[num_edges]`` for a graph not batched."""
    return (g._batch or BatchInfo.single(g)).num_edges.copy()


# ---------------------------------------------------------------------------------------------- subgraphs


def node_subgraph(g: GraphBase, nodes) -> GraphBase:
    """The subgraph induced by ``nodes``: node ``i`` is ``nodes[i]``, with every edge between them.

    ``nodes`` is a 1-D array of distinct node ids (any integer dtype) or a bool mask with one entry per
    node. The kept edges are numbered in ascending parent edge id (DGL numbers them in the subgraph's CSR
    order instead; map through the parent ids, not positions). ``sub.parent_nids[i]`` is the parent id of
    node ``i`` and ``sub.parent_eids[e]`` that of edge ``e`` (int64, read-only): DGL's
    ``sub.ndata[dgl.NID]`` and ``sub.edata[dgl.EID]``. ``ndata``/``edata`` arrays are sliced to match.
    The result is not batched. ``g`` must be square (``num_src == num_dst``).

    Examples
    --------
    >>> import graphkern as gk
    >>> g = gk.Graph.from_coo([0, 1, 2, 2], [1, 2, 0, 2])
    >>> sub = g.node_subgraph([2, 0])
    >>> sub.edges()[0].tolist(), sub.edges()[1].tolist(), sub.parent_eids.tolist()
    ([0, 0], [1, 0], [2, 3])
    """
    g = require_host_graph("g", g, "the transform")
    _require_square(g, "node_subgraph")
    nids = _node_ids("nodes", nodes, g.num_src)
    new_id = np.full(g.num_src, -1, dtype=np.int64)
    new_id[nids] = np.arange(nids.size)
    src, dst, eids = edges_by_id(g)
    s, d = new_id[src], new_id[dst]
    keep = (s >= 0) & (d >= 0)
    sub = _new_graph(g, s[keep], d[keep], nids.size, nids.size, is_block=g.is_block)
    sub.parent_nids = read_only(nids)
    sub.parent_eids = read_only(eids[keep])
    sub.ndata = _take_all(g.ndata, nids, g.num_src)
    sub.edata = _take_all(g.edata, sub.parent_eids, g.num_edge_ids)
    return sub


def in_subgraph(g: GraphBase, nodes) -> GraphBase:
    """Every node of ``g`` and only the in-edges of ``nodes`` (destination ids, distinct, or a bool mask).

    Nodes keep their ids (``parent_nids`` is ``None``); the kept edges are numbered in ascending parent
    edge id and ``sub.parent_eids[e]`` is the parent id of edge ``e`` (DGL's ``edata[dgl.EID]``; DGL
    orders the edges by destination in the order given instead). Bipartite blocks are accepted (DGL
    refuses them). ``edata`` arrays are sliced to match. The result is not batched.

    Examples
    --------
    >>> import graphkern as gk
    >>> g = gk.Graph.from_coo([0, 1, 2, 2], [1, 2, 0, 2])
    >>> sub = g.in_subgraph([2])
    >>> sub.num_nodes, sub.edges()[0].tolist(), sub.parent_eids.tolist()
    (3, [1, 2], [1, 3])
    """
    g = require_host_graph("g", g, "the transform")
    nids = _node_ids("nodes", nodes, g.num_dst)
    wanted = np.zeros(g.num_dst, dtype=np.bool_)
    wanted[nids] = True
    src, dst, eids = edges_by_id(g)
    keep = wanted[dst]
    sub = _new_graph(g, src[keep], dst[keep], g.num_src, g.num_dst, is_block=g.is_block)
    sub.parent_eids = read_only(eids[keep])
    sub.ndata = dict(g.ndata)
    sub.edata = _take_all(g.edata, sub.parent_eids, g.num_edge_ids)
    return sub
