"""GINConv: the graph isomorphism network layer, with DGL's arguments, on graphkern's kernels."""

from __future__ import annotations

import torch
from torch import nn

from ..._validate import check_choice
from ...graph import Graph
from .._tensors import _graph
from ..autograd import spmm
from ._common import _check_edge_weight, _checked_pair, _edge_column

__all__ = ["GINConv"]


class GINConv(nn.Module):
    r"""Graph isomorphism network layer (Xu et al.), with DGL's ``GINConv`` arguments and ``state_dict``.

    .. math:: h_v' = f\Big((1 + \epsilon)\, h_v + \mathrm{aggregate}_{u \to v}\, w_{uv} h_u\Big)

    Parameters
    ----------
    apply_func : callable or None
        ``f`` above (an ``nn.Module`` is registered, so its parameters appear as ``apply_func.*``).
    aggregator_type : {"sum", "mean", "max"}
        How the in-neighbours' messages combine. A node without in-edges aggregates to 0.
    init_eps : float
        Initial :math:`\epsilon`.
    learn_eps : bool
        If True, ``eps`` is a trainable ``Parameter``; otherwise a buffer (both are saved in the
        ``state_dict`` under ``eps``, shape ``(1,)``, as in DGL).
    activation : callable or None
        Applied after ``apply_func``.

    Notes
    -----
    ``forward(graph, feat, edge_weight=None)``: ``feat`` is one tensor ``(N, *)`` or a pair
    ``(source features, destination features)`` for a bipartite block; ``edge_weight`` holds one scalar per
    edge id, multiplying each message.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0])
    >>> gin = gkt.GINConv(torch.nn.Linear(4, 2), "sum", learn_eps=True)
    >>> gin(g, torch.ones(3, 4)).shape
    torch.Size([3, 2])
    >>> sorted(gin.state_dict())
    ['apply_func.bias', 'apply_func.weight', 'eps']
    """

    AGGREGATORS = ("sum", "max", "mean")

    def __init__(self, apply_func=None, aggregator_type: str = "sum", init_eps: float = 0, learn_eps: bool = False,
                 activation=None):
        super().__init__()
        check_choice("aggregator_type", aggregator_type, self.AGGREGATORS)
        self.apply_func = apply_func
        self._aggregator_type = aggregator_type
        self.activation = activation
        # DGL keeps eps as float32 whatever the features; module.double() converts it with the rest.
        eps = torch.tensor([float(init_eps)], dtype=torch.float32)
        if learn_eps:
            self.eps = nn.Parameter(eps)
        else:
            self.register_buffer("eps", eps)

    def forward(self, graph: Graph, feat, edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        graph = _graph(graph)  # a DynamicGraph: its snapshot, for every kernel of the layer
        feat_src, feat_dst = _checked_pair(feat, graph, "GINConv")
        if edge_weight is None:
            neigh = spmm(graph, "copy_lhs", self._aggregator_type, feat_src.contiguous(), None)
        else:
            _check_edge_weight(graph, edge_weight, "GINConv")
            neigh = spmm(graph, "mul", self._aggregator_type, feat_src.contiguous(),
                         _edge_column(edge_weight, feat_src).contiguous())
        rst = (1 + self.eps) * feat_dst + neigh
        if self.apply_func is not None:
            rst = self.apply_func(rst)
        if self.activation is not None:
            rst = self.activation(rst)
        return rst
