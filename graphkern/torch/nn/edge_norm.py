"""EdgeWeightNorm: DGL's normalisation of scalar edge weights by weighted degrees, on graphkern's kernels."""

from __future__ import annotations

import torch
from torch import nn

from ..._validate import check_choice
from ...graph import Graph
from .._tensors import _graph
from ._common import _normalised_edge_weight, check_layer_args

__all__ = ["EdgeWeightNorm"]


class EdgeWeightNorm(nn.Module):
    r"""Normalise scalar edge weights by the weighted degrees of their endpoints, as DGL's
    ``EdgeWeightNorm``; the result goes to a layer's ``edge_weight`` (``GraphConv(norm="none")``, say).

    .. math:: \text{both:}\ \ \frac{w_{uv}}{\sqrt{(\sum_{k} w_{uk} + \epsilon)(\sum_{k} w_{kv} + \epsilon)}},
              \qquad \text{right:}\ \ \frac{w_{uv}}{\sum_{k} w_{kv} + \epsilon}, \qquad
              \text{none:}\ \ w_{uv}

    Parameters
    ----------
    norm : {"both", "right", "none"}
        ``"both"`` needs every weight positive (``ValueError`` otherwise, as DGL refuses them).
    eps : float
        Added to the weighted degrees.

    Notes
    -----
    ``forward(graph, edge_weight)``: ``edge_weight`` holds one scalar per edge id, shape ``(E,)``; the
    result has the same shape and is differentiable with respect to it.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 0, 1], [1, 2, 2])
    >>> gkt.EdgeWeightNorm("right")(g, torch.tensor([1.0, 1.0, 3.0])).tolist()
    [1.0, 0.25, 0.75]
    """

    def __init__(self, norm: str = "both", eps: float = 0.0):
        super().__init__()
        check_choice("norm", norm, ("both", "right", "none"))
        check_layer_args(reals={"eps": eps})
        self._norm = norm
        self._eps = float(eps)  # float: torch refuses an int past 64 bits

    def forward(self, graph: Graph, edge_weight: torch.Tensor) -> torch.Tensor:
        graph = _graph(graph)  # a DynamicGraph: its snapshot
        if isinstance(edge_weight, torch.Tensor) and edge_weight.dim() != 1:
            raise ValueError(f"EdgeWeightNorm: argument 'edge_weight': expected shape ({graph.num_edge_ids},), "
                             f"one scalar per edge (as in DGL), found {tuple(edge_weight.shape)}")
        return _normalised_edge_weight(graph, edge_weight, self._norm, self._eps, "EdgeWeightNorm")
