"""GraphConv, GATConv and SAGEConv: DGL's layers with DGL's arguments, built on graphkern's kernels."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ... import _cuda
from ..._validate import check_bool, check_choice
from ...graph import Graph
from .._tensors import _graph, _node_counts
from ..autograd import edge_softmax, sddmm, spmm
from ._common import (
    _check_edge_weight,
    _check_zero_in_degree,
    _checked_pair,
    _column,
    _dropped_pair,
    check_layer_args,
)

__all__ = ["GraphConv", "GATConv", "SAGEConv"]


class GraphConv(nn.Module):
    """Graph convolution (Kipf and Welling), with DGL's ``GraphConv`` arguments and behaviour.

    ``norm`` is ``"both"`` (``D_out^-1/2 A D_in^-1/2``, degrees clamped to at least 1), ``"right"`` (divide
    by the in-degree), ``"left"`` (by the out-degree) or ``"none"``. The weight is applied before the
    aggregation when it shrinks the features, after it otherwise, as in DGL.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2, 0, 1, 2], [1, 2, 0, 0, 1, 2])
    >>> conv = gkt.GraphConv(4, 2)
    >>> conv(g, torch.ones(3, 4)).shape
    torch.Size([3, 2])
    """

    def __init__(self, in_feats: int, out_feats: int, norm: str = "both", weight: bool = True, bias: bool = True,
                 activation=None, allow_zero_in_degree: bool = False):
        super().__init__()
        check_choice("norm", norm, ("none", "both", "right", "left"))
        check_layer_args(sizes={"in_feats": in_feats, "out_feats": out_feats}, functions={"activation": activation},
                         flags={"weight": weight, "bias": bias, "allow_zero_in_degree": allow_zero_in_degree})
        self._in_feats, self._out_feats, self._norm = in_feats, out_feats, norm
        self._allow_zero_in_degree = allow_zero_in_degree
        self.weight = nn.Parameter(torch.empty(in_feats, out_feats)) if weight else None
        self.bias = nn.Parameter(torch.zeros(out_feats)) if bias else None
        self._activation = activation
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            nn.init.xavier_uniform_(self.weight)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def set_allow_zero_in_degree(self, set_value: bool):
        self._allow_zero_in_degree = set_value

    def forward(self, graph: Graph, feat, weight: torch.Tensor | None = None,
                edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        graph = _graph(graph)  # a DynamicGraph: its snapshot, for every kernel of the layer
        _check_zero_in_degree(graph, self._allow_zero_in_degree, "GraphConv")
        if edge_weight is not None:
            _check_edge_weight(graph, edge_weight, "GraphConv")
        width = self._in_feats if self.weight is not None else None  # an external weight is checked by torch
        feat_src, _ = _checked_pair(feat, graph, "GraphConv", width, width)
        if weight is not None and self.weight is not None:
            raise ValueError("GraphConv: an external weight was passed to a module that has its own (weight=True)")
        weight = self.weight if weight is None else weight
        if self._norm in ("left", "both"):
            degrees = _node_counts(graph, "out", feat_src).clamp(min=1).to(feat_src.dtype)
            scale = degrees.pow(-0.5) if self._norm == "both" else 1.0 / degrees
            feat_src = feat_src * _column(scale, feat_src.dim(), feat_src.dtype)

        def aggregate(h):
            if edge_weight is None:
                return spmm(graph, "copy_lhs", "sum", h.contiguous(), None)
            return spmm(graph, "mul", "sum", h.contiguous(), edge_weight.reshape(-1, 1))

        if weight is not None and self._in_feats > self._out_feats:
            rst = aggregate(feat_src @ weight)
        else:
            rst = aggregate(feat_src)
            if weight is not None:
                rst = rst @ weight
        if self._norm in ("right", "both"):
            degrees = _node_counts(graph, "in", rst).clamp(min=1).to(rst.dtype)
            scale = degrees.pow(-0.5) if self._norm == "both" else 1.0 / degrees
            rst = rst * _column(scale, rst.dim(), rst.dtype)
        if self.bias is not None:
            rst = rst + self.bias
        return self._activation(rst) if self._activation is not None else rst


class GATConv(nn.Module):
    """Graph attention (Velickovic et al.), with DGL's ``GATConv`` arguments; output ``(N, num_heads, out)``.

    Attention logits ``leaky_relu(a_l . W h_u + a_r . W h_v)`` are normalised by :func:`edge_softmax` over
    each destination's in-edges and weight the messages ``W h_u`` (``u_mul_e_sum``).

    ``forward(graph, feat, edge_weight=None, get_attention=False)`` as in DGL 2.1: ``edge_weight`` (one
    scalar per edge id) multiplies every head's attention after the softmax. The parameters are DGL 2.1's:
    ``fc.weight`` (``fc_src``/``fc_dst`` for a bipartite ``in_feats`` pair), ``attn_l``, ``attn_r``, and
    the bias either as ``bias`` of shape ``(num_heads * out_feats,)`` or, with a linear residual, as
    ``res_fc.bias``.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2, 0, 1, 2], [1, 2, 0, 0, 1, 2])
    >>> gat = gkt.GATConv(4, 3, num_heads=2)
    >>> gat(g, torch.ones(3, 4)).shape
    torch.Size([3, 2, 3])
    """

    def __init__(self, in_feats, out_feats: int, num_heads: int, feat_drop: float = 0.0, attn_drop: float = 0.0,
                 negative_slope: float = 0.2, residual: bool = False, activation=None,
                 allow_zero_in_degree: bool = False, bias: bool = True):
        super().__init__()
        check_layer_args(pairs={"in_feats": in_feats}, sizes={"out_feats": out_feats, "num_heads": num_heads},
                         rates={"feat_drop": feat_drop, "attn_drop": attn_drop},
                         reals={"negative_slope": negative_slope},
                         flags={"residual": residual, "allow_zero_in_degree": allow_zero_in_degree, "bias": bias},
                         functions={"activation": activation})
        self._num_heads, self._out_feats = num_heads, out_feats
        self._allow_zero_in_degree = allow_zero_in_degree
        in_src, in_dst = in_feats if isinstance(in_feats, tuple) else (in_feats, in_feats)
        self._in_src_feats, self._in_dst_feats = in_src, in_dst
        self._bipartite = isinstance(in_feats, tuple)
        if self._bipartite:
            self.fc_src = nn.Linear(in_src, out_feats * num_heads, bias=False)
            self.fc_dst = nn.Linear(in_dst, out_feats * num_heads, bias=False)
        else:
            self.fc = nn.Linear(in_src, out_feats * num_heads, bias=False)
        self.attn_l = nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.attn_r = nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.feat_drop = nn.Dropout(feat_drop)
        self.attn_drop = nn.Dropout(attn_drop)
        self.leaky_relu = nn.LeakyReLU(float(negative_slope))  # float: torch refuses an int past 64 bits
        # As in DGL 2.1: a linear residual carries the bias (res_fc.bias); otherwise it is a parameter of its
        # own, ``bias`` of shape (num_heads * out_feats,).
        linear_residual = residual and in_dst != num_heads * out_feats
        if residual:
            self.res_fc = nn.Linear(in_dst, num_heads * out_feats, bias=bias) if linear_residual else nn.Identity()
        else:
            self.register_buffer("res_fc", None)
        if bias and not linear_residual:
            self.bias = nn.Parameter(torch.zeros(num_heads * out_feats))
        else:
            self.register_buffer("bias", None)
        self.activation = activation
        self.reset_parameters()

    def reset_parameters(self):
        gain = nn.init.calculate_gain("relu")
        for fc in ([self.fc_src, self.fc_dst] if self._bipartite else [self.fc]):
            nn.init.xavier_normal_(fc.weight, gain=gain)
        nn.init.xavier_normal_(self.attn_l, gain=gain)
        nn.init.xavier_normal_(self.attn_r, gain=gain)
        if self.bias is not None:
            nn.init.zeros_(self.bias)
        if isinstance(self.res_fc, nn.Linear):
            nn.init.xavier_normal_(self.res_fc.weight, gain=gain)
            if self.res_fc.bias is not None:
                nn.init.zeros_(self.res_fc.bias)

    def set_allow_zero_in_degree(self, set_value: bool):
        self._allow_zero_in_degree = set_value

    def forward(self, graph: Graph, feat, edge_weight: torch.Tensor | None = None, get_attention: bool = False):
        graph = _graph(graph)  # a DynamicGraph: its snapshot, for every kernel of the layer
        _check_zero_in_degree(graph, self._allow_zero_in_degree, "GATConv")
        check_bool("get_attention", get_attention)
        h_src, h_dst = _checked_pair(feat, graph, "GATConv", self._in_src_feats, self._in_dst_feats)
        h_src, h_dst = _dropped_pair(feat, h_src, h_dst, graph, self.feat_drop)
        heads, out = self._num_heads, self._out_feats
        if self._bipartite:
            f_src = self.fc_src(h_src).view(-1, heads, out)
            f_dst = self.fc_dst(h_dst).view(-1, heads, out)
        else:
            f_src = self.fc(h_src).view(-1, heads, out)
            # separate destination features (a pair) go through the same fc, as in DGL
            f_dst = self.fc(h_dst).view(-1, heads, out) if isinstance(feat, (tuple, list)) else f_src[: graph.num_dst]
        el = (f_src * self.attn_l).sum(dim=-1, keepdim=True)  # (N_src, H, 1)
        er = (f_dst * self.attn_r).sum(dim=-1, keepdim=True)  # (N_dst, H, 1)
        logits = self.leaky_relu(sddmm(graph, "add", el, er, "u", "v"))  # (E, H, 1)
        attention = self.attn_drop(edge_softmax(graph, logits))
        if edge_weight is not None:  # scales every head's attention on the edge, after the softmax (DGL)
            _check_edge_weight(graph, edge_weight, "GATConv")
            attention = attention * edge_weight.reshape(-1, 1, 1)
        rst = spmm(graph, "mul", "sum", f_src.contiguous(), attention.contiguous())  # (N_dst, H, out)
        if self.res_fc is not None:
            rst = rst + self.res_fc(h_dst).view(h_dst.shape[0], -1, out)
        if self.bias is not None:
            rst = rst + self.bias.view(1, heads, out)
        if self.activation is not None:
            rst = self.activation(rst)
        return (rst, attention) if get_attention else rst


class SAGEConv(nn.Module):
    """GraphSAGE (Hamilton et al.), with DGL's ``SAGEConv`` arguments.

    ``aggregator_type``: ``"mean"`` (mean of the in-neighbours, plus a separate self transform), ``"gcn"``
    (the mean over the in-neighbours and the node itself), ``"pool"`` (max over ``relu(W_pool h_u)``) or
    ``"lstm"`` (an LSTM over the in-neighbours in CSC order, run per in-degree bucket as DGL does).
    The parameters are DGL 2.1's: the bias is ``fc_self.bias``, except for ``"gcn"`` (no ``fc_self``),
    where it is ``bias``.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0])
    >>> sage = gkt.SAGEConv(4, 2, "mean")
    >>> sage(g, torch.ones(3, 4)).shape
    torch.Size([3, 2])
    """

    AGGREGATORS = ("mean", "gcn", "pool", "lstm")

    def __init__(self, in_feats, out_feats: int, aggregator_type: str, feat_drop: float = 0.0, bias: bool = True,
                 norm=None, activation=None):
        super().__init__()
        check_choice("aggregator_type", aggregator_type, self.AGGREGATORS)
        check_layer_args(pairs={"in_feats": in_feats}, sizes={"out_feats": out_feats}, rates={"feat_drop": feat_drop},
                         flags={"bias": bias}, functions={"norm": norm, "activation": activation})
        in_src, in_dst = in_feats if isinstance(in_feats, tuple) else (in_feats, in_feats)
        self._in_src_feats, self._in_dst_feats = in_src, in_dst
        self._aggre_type = aggregator_type
        self.norm, self.activation = norm, activation
        self.feat_drop = nn.Dropout(feat_drop)
        if aggregator_type == "pool":
            self.fc_pool = nn.Linear(in_src, in_src)
        if aggregator_type == "lstm":
            self.lstm = nn.LSTM(in_src, in_src, batch_first=True)
        self.fc_neigh = nn.Linear(in_src, out_feats, bias=False)
        # As in DGL 2.1: the bias belongs to fc_self; "gcn" has no fc_self and a ``bias`` of its own.
        if aggregator_type != "gcn":
            self.fc_self = nn.Linear(in_dst, out_feats, bias=bias)
        else:
            self.register_buffer("fc_self", None)
        if aggregator_type == "gcn" and bias:
            self.bias = nn.Parameter(torch.zeros(out_feats))
        else:
            self.register_buffer("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        gain = nn.init.calculate_gain("relu")
        if self._aggre_type == "pool":
            nn.init.xavier_uniform_(self.fc_pool.weight, gain=gain)
        if self._aggre_type == "lstm":
            self.lstm.reset_parameters()
        # fc_self's bias keeps nn.Linear's own initialisation, as in DGL
        if self.fc_self is not None:
            nn.init.xavier_uniform_(self.fc_self.weight, gain=gain)
        nn.init.xavier_uniform_(self.fc_neigh.weight, gain=gain)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def _lstm_reduce(self, graph: Graph, h_src: torch.Tensor, edge_weight: torch.Tensor | None) -> torch.Tensor:
        """Each destination's last LSTM state over its in-neighbours, one batched LSTM per in-degree."""
        indptr_t, indices_t, eids_t = (torch.from_numpy(_cuda.to_host(a).astype(np.int64)).to(h_src.device)
                                       for a in graph.csc())
        degrees = indptr_t[1:] - indptr_t[:-1]
        out = h_src.new_zeros((graph.num_dst, h_src.shape[1]))
        for degree in torch.unique(degrees).tolist():
            if degree == 0:
                continue
            nodes = torch.nonzero(degrees == degree).ravel()
            slots = indptr_t[nodes].unsqueeze(1) + torch.arange(degree, device=h_src.device)
            neighbours = h_src[indices_t[slots]]  # (nodes, degree, features)
            if edge_weight is not None:
                neighbours = neighbours * edge_weight.reshape(-1)[eids_t[slots]].unsqueeze(-1)
            _, (last, _) = self.lstm(neighbours)
            out = out.index_copy(0, nodes, last[0])
        return out

    def forward(self, graph: Graph, feat, edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        graph = _graph(graph)  # a DynamicGraph: its snapshot, for every kernel of the layer
        h_src, h_dst = _checked_pair(feat, graph, "SAGEConv", self._in_src_feats, self._in_dst_feats)
        if edge_weight is not None:
            _check_edge_weight(graph, edge_weight, "SAGEConv")
        h_src, h_dst = _dropped_pair(feat, h_src, h_dst, graph, self.feat_drop)

        def aggregate(h, reduce):
            if edge_weight is None:
                return spmm(graph, "copy_lhs", reduce, h.contiguous(), None)
            return spmm(graph, "mul", reduce, h.contiguous(), edge_weight.reshape(-1, 1))

        if self._aggre_type == "mean":
            # Transform first when it shrinks the features: the aggregation then moves fewer bytes.
            if h_src.shape[1] > self.fc_neigh.out_features:
                h_neigh = aggregate(self.fc_neigh(h_src), "mean")
            else:
                h_neigh = self.fc_neigh(aggregate(h_src, "mean"))
        elif self._aggre_type == "gcn":
            total = aggregate(h_src, "sum") + h_dst
            degrees = _node_counts(graph, "in", total).to(total.dtype).unsqueeze(-1)
            h_neigh = self.fc_neigh(total / (degrees + 1))
        elif self._aggre_type == "pool":
            h_neigh = self.fc_neigh(aggregate(torch.relu(self.fc_pool(h_src)), "max"))
        else:
            h_neigh = self.fc_neigh(self._lstm_reduce(graph, h_src, edge_weight))
        rst = h_neigh if self.fc_self is None else self.fc_self(h_dst) + h_neigh
        if self.bias is not None:
            rst = rst + self.bias
        if self.activation is not None:
            rst = self.activation(rst)
        if self.norm is not None:
            rst = self.norm(rst)
        return rst
