"""GATv2Conv: dynamic graph attention, with DGL's arguments and ``state_dict``, on graphkern's kernels."""

from __future__ import annotations

import torch
from torch import nn

from ..._validate import check_bool
from ...graph import Graph
from .._tensors import _graph
from ..autograd import edge_softmax, sddmm, spmm
from ._common import _check_zero_in_degree, _checked_pair, check_layer_args

__all__ = ["GATv2Conv"]


class GATv2Conv(nn.Module):
    r"""GATv2 (Brody et al.), with DGL's ``GATv2Conv`` arguments and ``state_dict``; output ``(N, H, out)``.

    .. math:: e_{uv} = a^\top \mathrm{LeakyReLU}(W_s h_u + W_d h_v), \quad
              \alpha_{uv} = \mathrm{softmax}_{u \to v}(e_{uv}), \quad
              h_v' = \sum_{u \to v} \alpha_{uv} W_s h_u \;(+\ \mathrm{res\_fc}(h_v))

    Parameters
    ----------
    in_feats : int or (int, int)
        Input width, or (source, destination) widths for a bipartite block.
    out_feats, num_heads : int
        Width per head and number of heads.
    feat_drop, attn_drop : float
        Dropout on the input features and on the attention weights.
    negative_slope : float
        Slope of the LeakyReLU.
    residual : bool
        Add ``res_fc(h_v)``: an ``nn.Linear`` (with a bias if ``bias``) unless the destination width
        already equals ``num_heads * out_feats``, where it is the identity.
    activation : callable or None
        Applied to the output.
    allow_zero_in_degree : bool
        Without it, a graph with a node that has no in-edges is refused (``ValueError``).
    bias : bool
        Whether ``fc_src``, ``fc_dst`` and ``res_fc`` have biases (there is no separate ``bias``
        parameter, as in DGL).
    share_weights : bool
        On a homogeneous graph, one linear map for sources and destinations (``fc_dst`` is ``fc_src``;
        the ``state_dict`` lists it under both names, as torch does for a shared module).

    Notes
    -----
    ``forward(graph, feat, get_attention=False)``; with ``get_attention`` it returns ``(out, attention)``,
    the attention ``(E, H, 1)`` by edge id.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2, 0, 1, 2], [1, 2, 0, 0, 1, 2])
    >>> gat = gkt.GATv2Conv(4, 3, num_heads=2)
    >>> gat(g, torch.ones(3, 4)).shape
    torch.Size([3, 2, 3])
    >>> sorted(gat.state_dict())
    ['attn', 'fc_dst.bias', 'fc_dst.weight', 'fc_src.bias', 'fc_src.weight']
    """

    def __init__(self, in_feats, out_feats: int, num_heads: int, feat_drop: float = 0.0, attn_drop: float = 0.0,
                 negative_slope: float = 0.2, residual: bool = False, activation=None,
                 allow_zero_in_degree: bool = False, bias: bool = True, share_weights: bool = False):
        super().__init__()
        check_layer_args(pairs={"in_feats": in_feats}, sizes={"out_feats": out_feats, "num_heads": num_heads},
                         rates={"feat_drop": feat_drop, "attn_drop": attn_drop},
                         reals={"negative_slope": negative_slope},
                         flags={"residual": residual, "allow_zero_in_degree": allow_zero_in_degree, "bias": bias,
                                "share_weights": share_weights}, functions={"activation": activation})
        self._num_heads = num_heads
        self._in_src_feats, self._in_dst_feats = in_feats if isinstance(in_feats, tuple) else (in_feats, in_feats)
        self._out_feats = out_feats
        self._allow_zero_in_degree = allow_zero_in_degree
        width = out_feats * num_heads
        self.fc_src = nn.Linear(self._in_src_feats, width, bias=bias)
        if share_weights and not isinstance(in_feats, tuple):
            self.fc_dst = self.fc_src
        else:
            self.fc_dst = nn.Linear(self._in_dst_feats, width, bias=bias)
        self.attn = nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.feat_drop = nn.Dropout(feat_drop)
        self.attn_drop = nn.Dropout(attn_drop)
        self.leaky_relu = nn.LeakyReLU(float(negative_slope))  # float: torch refuses an int past 64 bits
        if residual:
            same = self._in_dst_feats == width
            self.res_fc = nn.Identity() if same else nn.Linear(self._in_dst_feats, width, bias=bias)
        else:
            self.register_buffer("res_fc", None)
        self.activation = activation
        self.share_weights = share_weights
        self.bias = bias  # a flag, as in DGL: the biases live in the linear maps
        self.reset_parameters()

    def reset_parameters(self):
        gain = nn.init.calculate_gain("relu")
        linears = [self.fc_src] + ([] if self.fc_dst is self.fc_src else [self.fc_dst])
        if isinstance(self.res_fc, nn.Linear):
            linears.append(self.res_fc)
        for fc in linears:
            nn.init.xavier_normal_(fc.weight, gain=gain)
            if fc.bias is not None:
                nn.init.zeros_(fc.bias)
        nn.init.xavier_normal_(self.attn, gain=gain)

    def set_allow_zero_in_degree(self, set_value: bool):
        self._allow_zero_in_degree = set_value

    def forward(self, graph: Graph, feat, get_attention: bool = False):
        graph = _graph(graph)  # a DynamicGraph: its snapshot, for every kernel of the layer
        _check_zero_in_degree(graph, self._allow_zero_in_degree, "GATv2Conv")
        check_bool("get_attention", get_attention)
        heads, out = self._num_heads, self._out_feats
        if isinstance(feat, (tuple, list)):
            h_src, h_dst = _checked_pair(feat, graph, "GATv2Conv", self._in_src_feats, self._in_dst_feats)
            h_src, h_dst = self.feat_drop(h_src), self.feat_drop(h_dst)
            f_src = self.fc_src(h_src).view(-1, heads, out)
            f_dst = self.fc_dst(h_dst).view(-1, heads, out)
        else:
            _checked_pair(feat, graph, "GATv2Conv", self._in_src_feats)
            h_src = h_dst = self.feat_drop(feat)
            f_src = self.fc_src(h_src).view(-1, heads, out)
            f_dst = f_src if self.share_weights else self.fc_dst(h_dst).view(-1, heads, out)
            f_dst, h_dst = f_dst[: graph.num_dst], h_dst[: graph.num_dst]
        # The score of an edge is not separable into source and destination parts (the LeakyReLU sits
        # between them), so it is built per edge: (E, H, out), then contracted with attn.
        e = self.leaky_relu(sddmm(graph, "add", f_src.contiguous(), f_dst.contiguous(), "u", "v"))
        logits = (e * self.attn).sum(dim=-1).unsqueeze(dim=2)  # (E, H, 1)
        attention = self.attn_drop(edge_softmax(graph, logits))
        rst = spmm(graph, "mul", "sum", f_src.contiguous(), attention.contiguous())  # (N_dst, H, out)
        if self.res_fc is not None:
            rst = rst + self.res_fc(h_dst).view(h_dst.shape[0], -1, out)
        if self.activation:
            rst = self.activation(rst)
        return (rst, attention) if get_attention else rst
