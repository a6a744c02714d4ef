"""Graph readout: SumPooling, AvgPooling and MaxPooling over the graphs of a batch, as in DGL.

The batch is read from ``graph.batch_num_nodes()`` (nodes per graph, the nodes of graph ``i`` following
those of graph ``i - 1``) where the graph has it; a graph without it is one graph, a batch of size 1.
A graph of the batch with no nodes reads out 0 for every pooling: DGL gives 0 for sum and mean, and for
max its segment reduction's -inf is replaced by 0 too, so the three agree with DGL. Its gradient is 0.
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ._common import _batch_num_nodes

__all__ = ["SumPooling", "AvgPooling", "MaxPooling"]


def _segments(graph, feat, layer: str) -> tuple[torch.Tensor, torch.Tensor]:
    """``(nodes per graph, graph of each node)``, both int64 on ``feat``'s device."""
    if not isinstance(feat, torch.Tensor) or feat.dim() < 1:
        raise ValueError(f"{layer}: argument 'feat': expected a tensor with one row per node, found "
                         f"{getattr(feat, 'shape', type(feat).__name__)}")
    rows = _rows(graph, feat, layer)
    counts = _batch_num_nodes(graph, rows, feat)
    owner = torch.repeat_interleave(torch.arange(counts.shape[0], device=feat.device), counts)
    return counts, owner


def _rows(graph, feat, layer: str) -> int:
    """The graph's node count where it knows one, checked against the features' rows."""
    n = getattr(graph, "num_dst", None)
    if isinstance(n, int) and n != feat.shape[0]:
        raise ValueError(f"{layer}: argument 'feat': expected {n} rows (one per node), found {feat.shape[0]}")
    return feat.shape[0]


def _segment_sum(feat: torch.Tensor, counts: torch.Tensor, owner: torch.Tensor) -> torch.Tensor:
    out = feat.new_zeros((counts.shape[0],) + tuple(feat.shape[1:]))
    return out.index_add(0, owner, feat)


class SumPooling(nn.Module):
    r"""Sum of the node features of each graph of a batch: :math:`r_i = \sum_{v \in G_i} h_v`.

    ``forward(graph, feat)`` takes ``feat`` of shape ``(N, *)`` and returns ``(B, *)``.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1], [1, 2])
    >>> gkt.SumPooling()(g, torch.tensor([[1.0], [2.0], [4.0]])).tolist()
    [[7.0]]
    """

    def __init__(self):
        super().__init__()

    def forward(self, graph, feat: torch.Tensor) -> torch.Tensor:
        counts, owner = _segments(graph, feat, "SumPooling")
        return _segment_sum(feat, counts, owner)


class AvgPooling(nn.Module):
    r"""Mean of the node features of each graph of a batch: :math:`r_i = \frac{1}{|G_i|} \sum_{v \in G_i}
    h_v` (0 for a graph without nodes).

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1], [1, 2])
    >>> gkt.AvgPooling()(g, torch.tensor([[1.0], [2.0], [6.0]])).tolist()
    [[3.0]]
    """

    def __init__(self):
        super().__init__()

    def forward(self, graph, feat: torch.Tensor) -> torch.Tensor:
        counts, owner = _segments(graph, feat, "AvgPooling")
        total = _segment_sum(feat, counts, owner)
        sizes = counts.clamp(min=1).to(feat.dtype)
        return total / sizes.reshape(-1, *([1] * (feat.dim() - 1)))


class MaxPooling(nn.Module):
    r"""Elementwise max of the node features of each graph of a batch: :math:`r_i = \max_{v \in G_i} h_v`
    (0 for a graph without nodes, as in DGL).

    The gradient of each output element goes to the first node (lowest id) holding the maximum, as DGL's
    segment max does.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1], [1, 2])
    >>> gkt.MaxPooling()(g, torch.tensor([[1.0, 9.0], [5.0, 2.0], [3.0, 4.0]])).tolist()
    [[5.0, 9.0]]
    """

    def __init__(self):
        super().__init__()

    def forward(self, graph, feat: torch.Tensor) -> torch.Tensor:
        counts, owner = _segments(graph, feat, "MaxPooling")
        batch = counts.shape[0]
        flat = feat.reshape(feat.shape[0], int(np.prod(feat.shape[1:], dtype=np.int64)))
        index = owner.unsqueeze(1).expand_as(flat)
        with torch.no_grad():
            best = flat.new_full((batch, flat.shape[1]), float("-inf"))
            best = best.scatter_reduce(0, index, flat, "amax", include_self=True)
            # The winner of each (graph, column): the lowest row whose value equals the max.
            rows = torch.arange(flat.shape[0], device=feat.device).unsqueeze(1).expand_as(flat)
            top = best.gather(0, index)
            candidates = torch.where((flat == top) | (flat.isnan() & top.isnan()), rows, flat.shape[0])
            first = torch.full_like(best, flat.shape[0], dtype=torch.int64)
            first = first.scatter_reduce(0, index, candidates, "amin", include_self=True)
        empty = first == flat.shape[0]  # a graph without nodes
        if flat.shape[0]:
            out = flat.gather(0, first.masked_fill(empty, 0))
        else:  # no nodes at all: zeros that still belong to feat's autograd graph
            out = flat.sum(0).expand(batch, flat.shape[1])
        out = out.masked_fill(empty, 0)
        return out.reshape((batch,) + tuple(feat.shape[1:]))
