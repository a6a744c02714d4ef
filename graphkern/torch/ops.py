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

import numpy as np
import torch

from .. import _cuda
from .._op_names import bind_all
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


def gspmm(g, op: str, reduce_op: str, lhs_data, rhs_data):
    """``dgl.ops.gspmm``: ``out[v] = reduce_op over in-edges (u, e, v) of op(lhs_data[u], rhs_data[e])``.

    :func:`graphkern.torch.spmm` under DGL's name and argument order; ops add, sub, mul, div, copy_lhs,
    copy_rhs, reducers sum, max, min, mean. A destination without in-edges gets 0 for every reducer
    (DGL gives +-inf for max and min there).

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1], [1, 1])
    >>> gkt.ops.gspmm(g, "copy_lhs", "max", torch.tensor([[1.0], [5.0]]), None).ravel().tolist()
    [0.0, 5.0]
    """
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

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2], [2, 2, 0])
    >>> gkt.ops.edge_softmax(g, torch.zeros(3)).tolist()
    [0.5, 0.5, 1.0]
    >>> gkt.ops.edge_softmax(g, torch.zeros(2), eids=torch.tensor([1, 2])).tolist()
    [1.0, 1.0]
    """
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
    if g.num_edge_ids != g.num_edges:  # a spread id space: an id below num_edge_ids may name no edge
        used = np.zeros(g.num_edge_ids, bool)
        used[slots] = True
        unused = np.flatnonzero(~used[ids])
        if unused.size:
            raise ValueError(f"argument 'eids': expected ids of edges of the graph, found {int(ids[unused[0]])} "
                             f"at position {int(unused[0])}, an id no edge has ({g.num_edges} edges in an id "
                             f"space of {g.num_edge_ids})")
    ends = np.zeros(g.num_edge_ids, np.int64)  # the node each edge id is normalised over
    ends[slots] = dst if norm_by == "dst" else src
    keys = torch.from_numpy(ends[ids]).to(logits.device)
    nodes = g.num_dst if norm_by == "dst" else g.num_src
    index = keys.reshape(-1, *([1] * (logits.dim() - 1))).expand_as(logits)
    shape = (nodes,) + tuple(logits.shape[1:])
    peak = logits.detach().new_zeros(shape).scatter_reduce(0, index, logits.detach(), "amax", include_self=False)
    z = torch.exp(logits - peak.index_select(0, keys))
    return z / z.new_zeros(shape).index_add(0, keys, z).index_select(0, keys)


__all__ += ["gspmm", "gsddmm", "segment_reduce", "segment_softmax", "gather_mm", "segment_mm"]
