"""GINConv: the graph isomorphism network layer, with DGL's arguments, on graphkern's kernels."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ... import sparse as _sparse
from ..._validate import check_choice
from ...graph import Graph
from ...kernels.cpu.scale_add import add_scaled_rows
from .._tensors import _array, _device_type, _graph, _reverse, _tensor
from ..autograd import spmm
from ._common import _check_edge_weight, _checked_pair, _edge_column, check_layer_args

__all__ = ["GINConv"]


def _rows(a: np.ndarray) -> np.ndarray:
    """A 2-D view ``(rows, features)`` of a C-contiguous array."""
    return a.reshape(a.shape[0], -1)


def _add_scaled(out: np.ndarray, x: np.ndarray, scale: torch.Tensor) -> None:
    """``out = scale * x[:len(out)] + out`` in place (kernels.cpu.scale_add); ``scale`` is cast to out's
    dtype, as torch's type promotion casts it (float32 to float64 is exact)."""
    if out.size:
        add_scaled_rows(_rows(out), _rows(x), scale.detach().numpy().astype(out.dtype).reshape(1, 1))


class _SelfPlusNeighbourSum(torch.autograd.Function):
    """``scale * x[:num_dst] + copy_u_sum(g, x)``: GIN's sum aggregation, ``x`` a CPU tensor.

    Forward: the SpMM, then one in-place pass adds ``scale * x`` to its output. Backward: the SpMM on
    the reverse graph, then the same pass adds ``scale * grad`` to its first ``num_dst`` rows. Both
    equal the composition of torch operations they replace bit for bit (``kernels/cpu/scale_add.py``),
    without a product tensor, a sum tensor, or the zero-filled gradient of a slice ``x[:num_dst]``.
    The gradient of ``scale`` (a learned ``eps``) is torch's rule for a broadcast product.
    """

    @staticmethod
    def forward(ctx, g, x, scale):
        xa = _array(x, "feat")
        out = _sparse.spmm(g, "copy_lhs", "sum", xa)
        _add_scaled(out, xa, scale)
        ctx.g = g
        ctx.save_for_backward(x if ctx.needs_input_grad[2] else None, scale)
        return _tensor(out)

    @staticmethod
    def backward(ctx, grad_out):
        x, scale = ctx.saved_tensors
        g = ctx.g
        dx = dscale = None
        if ctx.needs_input_grad[1]:
            grad = _array(grad_out, "grad")
            dxa = _sparse.spmm(_reverse(g), "copy_lhs", "sum", grad)
            _add_scaled(dxa[: g.num_dst], grad, scale)
            dx = _tensor(dxa)
        if ctx.needs_input_grad[2]:
            dscale = (grad_out * x[: g.num_dst]).sum_to_size(scale.shape)
        return None, dx, dscale


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
        check_layer_args(reals={"init_eps": init_eps}, flags={"learn_eps": learn_eps},
                         functions={"apply_func": apply_func, "activation": activation})
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
        scale = 1 + self.eps
        if (edge_weight is None and self._aggregator_type == "sum" and isinstance(feat, torch.Tensor)
                and _device_type(feat) == "cpu" and feat.dtype in (torch.float32, torch.float64)
                and torch.result_type(scale, feat) == feat.dtype):
            # the sum over in-edges and the scaled self term in one pass: the composition's values
            rst = _SelfPlusNeighbourSum.apply(graph, feat, scale)
        else:
            if edge_weight is None:
                neigh = spmm(graph, "copy_lhs", self._aggregator_type, feat_src.contiguous(), None)
            else:
                _check_edge_weight(graph, edge_weight, "GINConv")
                neigh = spmm(graph, "mul", self._aggregator_type, feat_src.contiguous(),
                             _edge_column(edge_weight, feat_src).contiguous())
            rst = scale * feat_dst + neigh
        if self.apply_func is not None:
            rst = self.apply_func(rst)
        if self.activation is not None:
            rst = self.activation(rst)
        return rst
