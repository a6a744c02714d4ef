"""DGL's generated operator names (``u_mul_e_sum``, ``copy_u_max``, ``u_dot_v``, ...) over the differentiable
:func:`graphkern.torch.spmm` and :func:`graphkern.torch.sddmm`, as ``dgl.ops`` has them, and dgl.ops' other
names with DGL's signatures: ``gspmm``, ``gsddmm``, ``edge_softmax(graph, logits, eids=ALL, norm_by='dst')``,
``segment_reduce``, ``segment_softmax``, ``gather_mm`` and ``segment_mm``.

>>> import torch, graphkern as gk, graphkern.torch as gkt
>>> g = gk.Graph.from_coo([0, 1], [1, 1])
>>> gkt.ops.u_mul_e_sum(g, torch.tensor([[1.0], [2.0]]), torch.tensor([[3.0], [4.0]])).ravel().tolist()
[0.0, 11.0]
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import torch

from .. import _cuda
from .._op_names import bind_all
from .._sparse_inputs import operands_read
from .._validate import as_index_array, check_choice, check_ids_in_range, named_as, type_name
from . import autograd as _autograd
from ._tensors import _graph
from .autograd import sddmm, spmm
from .segment import gather_mm, segment_mm, segment_reduce, segment_softmax  # noqa: F401  (dgl.ops names)

__all__: list[str] = bind_all(globals(), spmm, sddmm, keywords=False,
                              doc=lambda spec: f"Differentiable ``graphkern.ops.{spec.name}``: {spec.doc}")

# ------------------------------------------------------------------------ dgl.ops' other names
# (edge_softmax stays out of __all__: graphkern.torch.edge_softmax keeps its own signature, norm_by third)

ALL = "__ALL__"  # dgl.base.ALL: every edge


def _types_of(graph, features: str, given):
    """The graph a per-type call runs on and its :class:`~graphkern.graph.interop.GraphTypes`; ``features``
    names the argument given per type (``given``), which a graph without types refuses."""
    g = _graph(graph)
    if g.types is None:
        raise ValueError(f"argument '{features}': features given per type ({type(given).__name__}) need a graph "
                         "with node and edge types (Graph.from_dgl of a DGL heterograph); the graph has none")
    return g, g.types


def _by_type(name: str, data, keys: tuple, key_id, counts, what: str) -> list:
    """``data`` (a sequence by type id, or a mapping by type key) as a list by type id, None where absent;
    each tensor given checked to have its type's row count."""
    if isinstance(data, Mapping):
        listed = [None] * len(keys)
        for key, value in data.items():
            try:
                listed[key_id(key)] = value
            except KeyError as exc:
                raise ValueError(f"argument '{name}': {exc.args[0]}") from None
    else:
        listed = list(data)
        if len(listed) != len(keys):
            raise ValueError(f"argument '{name}': expected one entry per type ({len(keys)}: {list(keys)}), "
                             f"found {len(listed)}")
    for key, value, rows in zip(keys, listed, counts):
        if value is None:
            continue
        if not isinstance(value, torch.Tensor):
            raise TypeError(f"argument '{name}[{key!r}]': expected a torch.Tensor, found {type_name(value)}")
        if value.dim() == 0 or value.shape[0] != rows:
            raise ValueError(f"argument '{name}[{key!r}]': expected {int(rows)} rows (one per {what} of that "
                             f"type), found shape {tuple(value.shape)}")
    return listed


def _concatenated(name: str, listed: list, keys: tuple, counts) -> torch.Tensor:
    """The per-type tensors one after the other in type order (the graph's numbering), after checking that
    they agree past axis 0; a type without one gets zeros (only where nothing reads them)."""
    first = next(i for i, t in enumerate(listed) if t is not None)
    like = listed[first]
    for key, t in zip(keys, listed):
        if t is not None and (t.shape[1:] != like.shape[1:] or t.dtype != like.dtype or t.device != like.device):
            raise ValueError(f"argument '{name}[{key!r}]': expected the feature shape, dtype and device of "
                             f"{name}[{keys[first]!r}] ({tuple(like.shape[1:])}, {like.dtype}, {like.device}), "
                             f"found ({tuple(t.shape[1:])}, {t.dtype}, {t.device})")
    return torch.cat([t if t is not None else like.new_zeros((int(n),) + tuple(like.shape[1:]))
                      for t, n in zip(listed, counts)])


def _gspmm_per_type(graph, op, reduce_op, lhs_data, rhs_data):
    """DGL's heterograph g-SpMM: the homogeneous one on the graph numbered by type, split by node type.

    An edge type's messages reach the destination nodes of its type, and every destination reduces the
    messages of all its edge types together (DGL's cross-type reduce is the reducer itself), exactly what
    the homogeneous SpMM computes over the concatenated features."""
    per_type = (list, tuple, Mapping)
    name, given = ("lhs_data", lhs_data) if isinstance(lhs_data, per_type) else ("rhs_data", rhs_data)
    g, types = _types_of(graph, name, given)
    keyed = isinstance(lhs_data, Mapping) or isinstance(rhs_data, Mapping)
    lhs_data, rhs_data = operands_read(op, lhs_data, rhs_data)
    ends = [(types.ntype_id(s), types.ntype_id(d)) for s, _, d in types.canonical_etypes]
    x = w = None
    if lhs_data is not None:
        xs = _by_type("lhs_data", lhs_data, types.ntypes, types.ntype_id, types.num_nodes, "node")
        for src, _ in ends:
            if xs[src] is None:
                raise ValueError(f"argument 'lhs_data': expected features for node type {types.ntypes[src]!r}, "
                                 f"the source of an edge type, found none")
        x = _concatenated("lhs_data", xs, types.ntypes, types.num_nodes)
    if rhs_data is not None:
        ws = _by_type("rhs_data", rhs_data, types.canonical_etypes, types.etype_id, types.num_edges, "edge")
        missing = [rel for rel, t in zip(types.canonical_etypes, ws) if t is None]
        if missing:
            raise ValueError(f"argument 'rhs_data': expected features for every edge type, found none for {missing}")
        w = _concatenated("rhs_data", ws, types.canonical_etypes, types.num_edges)
    out = _autograd.spmm(g, op, reduce_op, x, w)
    parts = out.split(types.num_nodes)
    destinations = {d for _, d in ends}
    if keyed:
        return {types.ntypes[i]: part for i, part in enumerate(parts) if i in destinations}
    # DGL's tuple: one tensor per node type, empty where no edge type ends
    return tuple(part if i in destinations else out.new_empty((0,)) for i, part in enumerate(parts))


def gspmm(g, op: str, reduce_op: str, lhs_data, rhs_data):
    """``dgl.ops.gspmm``: ``out[v] = reduce_op over in-edges (u, e, v) of op(lhs_data[u], rhs_data[e])``.

    :func:`graphkern.torch.spmm` under DGL's name and argument order; ops add, sub, mul, div, copy_lhs,
    copy_rhs, reducers sum, max, min, mean. A destination without in-edges gets 0 for every reducer
    (DGL gives +-inf for max and min there). The operand a copy op does not read is ignored.

    On a graph converted from a DGL heterograph (``g.types`` set), DGL's per-type form: ``lhs_data`` a
    sequence of source features by node type id (None for a type no edge starts at) and ``rhs_data`` a
    sequence of edge features by edge type id; the result is a tuple by node type id, every destination
    reducing the messages of all its edge types together, and an empty tensor for a node type no edge
    ends at. Mappings keyed by node type and edge type (name or canonical triple) work too and give a
    dict keyed by destination node type. ``mean`` divides by the in-degree over all edge types.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1], [1, 1])
    >>> gkt.ops.gspmm(g, "copy_lhs", "max", torch.tensor([[1.0], [5.0]]), None).ravel().tolist()
    [0.0, 5.0]
    """
    per_type = (list, tuple, Mapping)
    if isinstance(lhs_data, per_type) or isinstance(rhs_data, per_type):
        return _gspmm_per_type(g, op, reduce_op, lhs_data, rhs_data)
    with named_as(reduce="reduce_op", ufeat="lhs_data", efeat="rhs_data"):
        return _autograd.spmm(g, op, reduce_op, lhs_data, rhs_data)


def gsddmm(g, op: str, lhs_data, rhs_data, lhs_target: str = "u", rhs_target: str = "v"):
    """``dgl.ops.gsddmm``: ``out[e] = op(lhs_data at lhs_target, rhs_data at rhs_target)`` for every edge.

    :func:`graphkern.torch.sddmm` under DGL's name; ops add, sub, mul, div, dot, copy_lhs, copy_rhs and
    targets ``"u"``, ``"v"``, ``"e"``.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1], [1, 0])
    >>> x = torch.tensor([[1.0], [2.0]])
    >>> gkt.ops.gsddmm(g, "sub", x, x, "u", "v").ravel().tolist()
    [-1.0, 1.0]
    """
    with named_as(lhs="lhs_data", rhs="rhs_data"):
        return _autograd.sddmm(g, op, lhs_data, rhs_data, lhs_target, rhs_target)


def edge_softmax(graph, logits, eids=ALL, norm_by: str = "dst"):
    """``dgl.ops.edge_softmax``: softmax of edge logits over each destination's in-edges (``norm_by="dst"``)
    or each source's out-edges (``"src"``).

    With ``eids=ALL`` (the default) ``logits`` has one row per edge id and the compiled kernel runs
    (:func:`graphkern.torch.edge_softmax`). With an integer array of edge ids, ``logits`` has one row per
    id given and the softmax runs over those edges only (as on DGL's edge subgraph), on torch's scatter
    operations.

    On a graph converted from a DGL heterograph (``graph.types`` set), ``logits`` may be DGL's dict with
    one tensor per edge type (keyed by name or canonical triple); each node normalises over its edges of
    every type, and the result is a dict keyed by canonical edge type, as DGL returns it.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2], [2, 2, 0])
    >>> gkt.ops.edge_softmax(g, torch.zeros(3)).tolist()
    [0.5, 0.5, 1.0]
    >>> gkt.ops.edge_softmax(g, torch.zeros(2), eids=torch.tensor([1, 2])).tolist()
    [1.0, 1.0]
    """
    if isinstance(logits, Mapping):
        return _edge_softmax_per_type(graph, logits, eids, norm_by)
    if isinstance(eids, str) and eids == ALL:
        return _autograd.edge_softmax(graph, logits, norm_by)
    g = _graph(graph)
    check_choice("norm_by", norm_by, ("dst", "src"))
    if isinstance(eids, str):
        raise ValueError(f"argument 'eids': expected ALL ({ALL!r}) or an integer array of edge ids, found {eids!r}")
    ids = as_index_array("eids", eids.detach().cpu().numpy() if hasattr(eids, "detach") else eids)
    check_ids_in_range("eids", ids, g.num_edge_ids, "edge ids")
    if not isinstance(logits, torch.Tensor):
        raise TypeError(f"argument 'logits': expected a torch.Tensor, found {type_name(logits)}")
    if logits.dim() == 0 or logits.shape[0] != ids.size:
        raise ValueError(f"argument 'logits': expected one row per id of 'eids' ({ids.size}), found shape "
                         f"{tuple(getattr(logits, 'shape', ()))}")
    src, dst, slots = (_cuda.to_host(arr) for arr in g.coo())
    # each id looked up among the edges' ids, sorted: a table over the whole id space would allocate it,
    # and a spread space (edges with ids up to 2**40, say) is valid
    order = np.argsort(slots, kind="stable")
    at = np.minimum(np.searchsorted(slots[order], ids), max(slots.size - 1, 0))
    unused = np.flatnonzero(slots[order][at] != ids) if slots.size else np.arange(ids.size)
    if unused.size:  # in a spread id space an id below num_edge_ids may name no edge
        raise ValueError(f"argument 'eids': expected ids of edges of the graph, found {int(ids[unused[0]])} "
                         f"at position {int(unused[0])}, an id no edge has ({g.num_edges} edges in an id "
                         f"space of {g.num_edge_ids})")
    ends = dst if norm_by == "dst" else src  # the node each edge is normalised over
    keys = torch.from_numpy(ends[order[at]].astype(np.int64)).to(logits.device)
    nodes = g.num_dst if norm_by == "dst" else g.num_src
    index = keys.reshape(-1, *([1] * (logits.dim() - 1))).expand_as(logits)
    shape = (nodes,) + tuple(logits.shape[1:])
    peak = logits.detach().new_zeros(shape).scatter_reduce(0, index, logits.detach(), "amax", include_self=False)
    z = torch.exp(logits - peak.index_select(0, keys))
    return z / z.new_zeros(shape).index_add(0, keys, z).index_select(0, keys)


def _edge_softmax_per_type(graph, logits: Mapping, eids, norm_by: str) -> dict:
    """DGL's heterograph edge softmax: over the logits of all types, concatenated in edge-type order (the
    graph's edge numbering), then split back by type."""
    g, types = _types_of(graph, "logits", logits)
    if not (isinstance(eids, str) and eids == ALL):
        raise ValueError(f"argument 'eids': expected ALL with logits given per edge type, found {eids!r}")
    listed = _by_type("logits", logits, types.canonical_etypes, types.etype_id, types.num_edges, "edge")
    missing = [rel for rel, t in zip(types.canonical_etypes, listed) if t is None]
    if missing:
        raise ValueError(f"argument 'logits': expected one tensor per edge type, found none for {missing}")
    out = _autograd.edge_softmax(g, _concatenated("logits", listed, types.canonical_etypes, types.num_edges), norm_by)
    return dict(zip(types.canonical_etypes, out.split(types.num_edges)))


__all__ += ["gspmm", "gsddmm", "segment_reduce", "segment_softmax", "gather_mm", "segment_mm"]
