"""Propagation layers built on powers of the normalised adjacency: SGConv, APPNPConv, TAGConv and ChebConv,
with DGL's arguments, behaviour and ``state_dict`` keys, on graphkern's kernels.

All four take a graph whose sources are its destinations (DGL has no bipartite form of them) and, apart
from ChebConv, an optional ``edge_weight`` (one positive scalar per edge id) that replaces the degree
normalisation by DGL's ``EdgeWeightNorm("both")`` of the weights.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from ..._validate import INT64_MAX, check_int_scalar, type_name
from ...graph import Graph
from .._tensors import _graph
from ..autograd import spmm
from ._common import (
    _batch_num_nodes,
    _check_feat,
    _check_square,
    _check_zero_in_degree,
    _degree_norm,
    _edge_column,
    _edge_weight_norm_both,
    check_layer_args,
)

__all__ = ["SGConv", "APPNPConv", "TAGConv", "ChebConv"]


def _lambda_max(values, like: torch.Tensor) -> torch.Tensor:
    """ChebConv's ``lambda_max``: real numbers (a list, an array or a tensor), as a 1-D tensor like ``like``."""
    try:
        host = values.detach().cpu().numpy() if isinstance(values, torch.Tensor) else np.asarray(values)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"ChebConv: argument 'lambda_max': expected real numbers, found {type_name(values)}") from exc
    if host.dtype.kind not in "iuf":
        raise TypeError(f"ChebConv: argument 'lambda_max': expected real numbers, found dtype {host.dtype}")
    return torch.as_tensor(host, dtype=like.dtype, device=like.device).reshape(-1)


def _check_k(k, minimum: int = 0):
    # bounded too: a hop count past the index type (2**70) would loop for ever
    check_int_scalar("k", k, minimum, INT64_MAX)


def _propagate(graph: Graph, h: torch.Tensor, weight: torch.Tensor | None) -> torch.Tensor:
    """One step ``A^T h``: the sum of the in-neighbours' rows, each times its edge's weight if given."""
    if weight is None:
        return spmm(graph, "copy_lhs", "sum", h.contiguous(), None)
    return spmm(graph, "mul", "sum", h.contiguous(), _edge_column(weight, h).contiguous())


def _prepare(graph, feat, layer: str, width: int | None):
    graph = _graph(graph)  # a DynamicGraph: its snapshot, for every kernel of the layer
    _check_square(graph, layer)
    _check_feat(graph, feat, graph.num_dst, width, layer)
    return graph


class SGConv(nn.Module):
    r"""Simplifying graph convolution (Wu et al.), with DGL's ``SGConv`` arguments and ``state_dict``.

    .. math:: h' = \mathrm{fc}\big(\mathrm{norm}((D^{-1/2} A D^{-1/2})^k\, h)\big)

    with :math:`D` the in-degrees (clamped to at least 1) on both sides, as DGL does.

    Parameters
    ----------
    in_feats, out_feats : int
        Input and output widths of ``fc`` (``nn.Linear``, keys ``fc.weight`` and ``fc.bias``).
    k : int
        Number of propagation steps.
    cached : bool
        Keep the propagated features of the first call and reuse them on every later call (transductive
        training on a fixed graph); the cached tensor is kept as it is, autograd history included, as in DGL.
    bias : bool
        Whether ``fc`` has a bias.
    norm : callable or None
        Applied to the propagated features before ``fc``.
    allow_zero_in_degree : bool
        Without it, a graph with a node that has no in-edges is refused (``ValueError``).

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0])
    >>> sg = gkt.SGConv(4, 2, k=2)
    >>> sg(g, torch.ones(3, 4)).shape
    torch.Size([3, 2])
    """

    def __init__(self, in_feats: int, out_feats: int, k: int = 1, cached: bool = False, bias: bool = True,
                 norm=None, allow_zero_in_degree: bool = False):
        super().__init__()
        _check_k(k)
        check_layer_args(sizes={"in_feats": in_feats, "out_feats": out_feats}, functions={"norm": norm},
                         flags={"cached": cached, "bias": bias, "allow_zero_in_degree": allow_zero_in_degree})
        self.fc = nn.Linear(in_feats, out_feats, bias=bias)
        self._in_feats = in_feats
        self._cached = cached
        self._cached_h = None
        self._k = k
        self.norm = norm
        self._allow_zero_in_degree = allow_zero_in_degree
        self.reset_parameters()

    def reset_parameters(self):
        nn.init.xavier_uniform_(self.fc.weight)
        if self.fc.bias is not None:
            nn.init.zeros_(self.fc.bias)

    def set_allow_zero_in_degree(self, set_value: bool):
        self._allow_zero_in_degree = set_value

    def forward(self, graph: Graph, feat: torch.Tensor, edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        graph = _prepare(graph, feat, "SGConv", self._in_feats)
        _check_zero_in_degree(graph, self._allow_zero_in_degree, "SGConv")
        if self._cached_h is not None:
            return self.fc(self._cached_h)
        given = feat
        weight = None if edge_weight is None else _edge_weight_norm_both(graph, edge_weight, "SGConv")
        norm = _degree_norm(graph, "in", feat) if weight is None else None
        for _ in range(self._k):
            feat = _propagate(graph, feat if norm is None else feat * norm, weight)
            if norm is not None:
                feat = feat * norm
        if self.norm is not None:
            feat = self.norm(feat)
        if self._cached:
            # with k = 0 and no norm, feat is still the caller's tensor: kept between calls, a change the
            # caller made to it in place would change every later output (the clone keeps its history)
            self._cached_h = feat.clone() if feat is given else feat
        return self.fc(feat)


class APPNPConv(nn.Module):
    r"""Approximate personalised propagation of neural predictions (Klicpera et al.), with DGL's
    ``APPNPConv`` arguments. It has no parameters.

    .. math:: h^{(0)} = h, \qquad h^{(t+1)} = (1 - \alpha)\, \hat A h^{(t)} + \alpha h^{(0)}

    :math:`\hat A = D_{in}^{-1/2} A D_{out}^{-1/2}` (degrees clamped to at least 1), or the edge weights
    normalised by ``EdgeWeightNorm("both")`` when given; returns :math:`h^{(k)}`.

    Parameters
    ----------
    k : int
        Number of iterations.
    alpha : float
        Teleport probability.
    edge_drop : float
        Dropout probability of each edge's weight, drawn anew in every iteration (training mode only).

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0])
    >>> gkt.APPNPConv(k=3, alpha=0.1)(g, torch.ones(3, 4)).sum().item()
    12.0
    """

    def __init__(self, k: int, alpha: float, edge_drop: float = 0.0):
        super().__init__()
        _check_k(k)
        check_layer_args(rates={"alpha": alpha, "edge_drop": edge_drop})
        self._k = k
        self._alpha = alpha
        self.edge_drop = nn.Dropout(edge_drop)

    def forward(self, graph: Graph, feat: torch.Tensor, edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        graph = _prepare(graph, feat, "APPNPConv", None)
        if edge_weight is None:
            src_norm, dst_norm = _degree_norm(graph, "out", feat), _degree_norm(graph, "in", feat)
            weight = None
        else:
            src_norm = dst_norm = None
            weight = _edge_weight_norm_both(graph, edge_weight, "APPNPConv")
        # Edge dropout needs a weight per edge to drop; without it, the unweighted sum is the same result.
        drops = self.training and self.edge_drop.p > 0
        if drops and weight is None:
            weight = feat.new_ones(graph.num_edge_ids)
        feat_0 = feat
        for _ in range(self._k):
            if src_norm is not None:
                feat = feat * src_norm
            feat = _propagate(graph, feat, self.edge_drop(weight) if drops else weight)
            if dst_norm is not None:
                feat = feat * dst_norm
            feat = (1 - self._alpha) * feat + self._alpha * feat_0
        return feat


class TAGConv(nn.Module):
    r"""Topology adaptive graph convolution (Du et al.), with DGL's ``TAGConv`` arguments and ``state_dict``.

    .. math:: h' = \mathrm{lin}\big([h, \hat A h, \ldots, \hat A^k h]\big), \qquad
              \hat A = D^{-1/2} A D^{-1/2}

    with :math:`D` the in-degrees (clamped to at least 1) on both sides as in DGL, or the edge weights
    normalised by ``EdgeWeightNorm("both")`` when given. ``lin`` is ``nn.Linear(in_feats * (k + 1),
    out_feats)``.

    Parameters
    ----------
    in_feats, out_feats : int
        Input and output widths.
    k : int
        Number of hops.
    bias : bool
        Whether ``lin`` has a bias.
    activation : callable or None
        Applied to the output.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0])
    >>> tag = gkt.TAGConv(4, 2, k=2)
    >>> tag(g, torch.ones(3, 4)).shape, tuple(tag.lin.weight.shape)
    (torch.Size([3, 2]), (2, 12))
    """

    def __init__(self, in_feats: int, out_feats: int, k: int = 2, bias: bool = True, activation=None):
        super().__init__()
        _check_k(k)
        check_layer_args(sizes={"in_feats": in_feats, "out_feats": out_feats}, flags={"bias": bias},
                         functions={"activation": activation})
        self._in_feats = in_feats
        self._out_feats = out_feats
        self._k = k
        self._activation = activation
        self.lin = nn.Linear(in_feats * (k + 1), out_feats, bias=bias)
        self.reset_parameters()

    def reset_parameters(self):
        # As DGL: only the weight is re-drawn; the bias keeps nn.Linear's own initialisation.
        nn.init.xavier_normal_(self.lin.weight, gain=nn.init.calculate_gain("relu"))

    def forward(self, graph: Graph, feat: torch.Tensor, edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        graph = _prepare(graph, feat, "TAGConv", self._in_feats)
        weight = None if edge_weight is None else _edge_weight_norm_both(graph, edge_weight, "TAGConv")
        norm = _degree_norm(graph, "in", feat) if weight is None else None
        hops = [feat]
        for _ in range(self._k):
            h = hops[-1] if norm is None else hops[-1] * norm
            h = _propagate(graph, h, weight)
            hops.append(h if norm is None else h * norm)
        rst = self.lin(torch.cat(hops, dim=-1))
        if self._activation is not None:
            rst = self._activation(rst)
        return rst


class ChebConv(nn.Module):
    r"""Chebyshev spectral graph convolution (Defferrard et al.), with DGL's ``ChebConv`` arguments and
    ``state_dict``: one ``linear`` (``nn.Linear(k * in_feats, out_feats)``) over the concatenated terms.

    .. math:: \tilde L = \frac{2}{\lambda_{max}} L - I, \quad X_0 = X, \quad X_1 = \tilde L X, \quad
              X_i = 2 \tilde L X_{i-1} - X_{i-2}, \qquad h' = \mathrm{linear}([X_0, \ldots, X_{k-1}])

    with :math:`L = I - D^{-1/2} A D^{-1/2}` (:math:`D` the in-degrees, clamped to at least 1).

    Parameters
    ----------
    in_feats, out_feats : int
        Input and output widths.
    k : int
        Number of Chebyshev terms (at least 1).
    activation : callable or None
        Applied to the output; ``F.relu`` by default, as in DGL.
    bias : bool
        Whether ``linear`` has a bias.

    Notes
    -----
    ``forward(graph, feat, lambda_max=None)``: ``lambda_max`` is the largest eigenvalue of each graph's
    Laplacian, a list or a tensor with one value per graph of the batch (``graph.batch_num_nodes()`` where
    the graph has it, else one graph). Missing, it is 2 for every graph (DGL also logs a warning then).
    ``feat`` is ``(N, in_feats)``.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0])
    >>> cheb = gkt.ChebConv(4, 2, k=3)
    >>> cheb(g, torch.ones(3, 4), lambda_max=[2.0]).shape, tuple(cheb.linear.weight.shape)
    (torch.Size([3, 2]), (2, 12))
    """

    def __init__(self, in_feats: int, out_feats: int, k: int, activation=F.relu, bias: bool = True):
        super().__init__()
        _check_k(k, minimum=1)
        check_layer_args(sizes={"in_feats": in_feats, "out_feats": out_feats}, flags={"bias": bias},
                         functions={"activation": activation})
        self._k = k
        self._in_feats = in_feats
        self._out_feats = out_feats
        self.activation = activation
        self.linear = nn.Linear(k * in_feats, out_feats, bias)

    def forward(self, graph: Graph, feat: torch.Tensor, lambda_max=None) -> torch.Tensor:
        original = graph
        graph = _prepare(graph, feat, "ChebConv", self._in_feats)
        if feat.dim() != 2:
            raise ValueError(f"ChebConv: argument 'feat': expected shape (N, {self._in_feats}), found "
                             f"{tuple(feat.shape)}")
        counts = _batch_num_nodes(original, feat.shape[0], feat)
        if lambda_max is None:
            lambda_max = [2.0] * counts.shape[0]
        # A list becomes the features' dtype directly (DGL goes through float32 first, which only rounds
        # float64 features' values differently).
        lambda_max = _lambda_max(lambda_max, feat)
        if lambda_max.shape[0] != counts.shape[0]:
            raise ValueError(f"ChebConv: argument 'lambda_max': expected one value per graph of the batch "
                             f"({counts.shape[0]}), found {lambda_max.shape[0]}")
        re_norm = (2.0 / lambda_max).repeat_interleave(counts).unsqueeze(-1)  # (N, 1)
        d_invsqrt = _degree_norm(graph, "in", feat)

        def scaled_adjacency(h):  # D^-1/2 A D^-1/2 h; the rescaled Laplacian is written around it
            return _propagate(graph, h * d_invsqrt, None) * d_invsqrt

        x_0 = feat
        terms = [x_0]
        if self._k > 1:
            # L~ X = (2 / lambda) (X - A^ X) - X
            x_1 = -re_norm * scaled_adjacency(x_0) + x_0 * (re_norm - 1)
            terms.append(x_1)
        for _ in range(2, self._k):
            x_i = -2 * re_norm * scaled_adjacency(x_1) + x_1 * 2 * (re_norm - 1) - x_0
            terms.append(x_i)
            x_1, x_0 = x_i, x_1
        h = self.linear(torch.cat(terms, dim=1))
        if self.activation:
            h = self.activation(h)
        return h
