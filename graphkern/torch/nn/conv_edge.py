"""EdgeConv: the dynamic graph CNN layer, with DGL's arguments and ``state_dict``, on graphkern's kernels."""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from ... import _cuda
from ...graph import Graph
from .._tensors import _graph, _node_counts
from ..autograd import sddmm, spmm
from ._common import _check_zero_in_degree, _checked_pair, _column, check_layer_args

__all__ = ["EdgeConv"]


class EdgeConv(nn.Module):
    r"""EdgeConv (Wang et al., dynamic graph CNN), with DGL's ``EdgeConv`` arguments and ``state_dict``.

    .. math:: h_v' = \max_{u \to v}\; \Theta (h_v - h_u) + \Phi h_v

    with :math:`\Theta` = ``theta`` and :math:`\Phi` = ``phi`` (``nn.Linear`` with biases); with
    ``batch_norm``, ``bn`` (``nn.BatchNorm1d``) normalises the edge values before the max. A node without
    in-edges gets 0, as in DGL.

    Parameters
    ----------
    in_feat, out_feat : int
        Input and output widths.
    batch_norm : bool
        Batch-normalise the per-edge values.
    allow_zero_in_degree : bool
        Without it, a graph with a node that has no in-edges is refused (``ValueError``).

    Notes
    -----
    ``forward(g, feat)``: ``feat`` is ``(N, in_feat)`` or a pair (source, destination features) for a
    bipartite block.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2, 2], [1, 2, 0, 1])
    >>> conv = gkt.EdgeConv(4, 2)
    >>> conv(g, torch.randn(3, 4)).shape
    torch.Size([3, 2])
    >>> sorted(conv.state_dict())
    ['phi.bias', 'phi.weight', 'theta.bias', 'theta.weight']
    """

    def __init__(self, in_feat: int, out_feat: int, batch_norm: bool = False, allow_zero_in_degree: bool = False):
        super().__init__()
        check_layer_args(sizes={"in_feat": in_feat, "out_feat": out_feat},
                         flags={"batch_norm": batch_norm, "allow_zero_in_degree": allow_zero_in_degree})
        self._in_feat = in_feat
        self.batch_norm = batch_norm
        self._allow_zero_in_degree = allow_zero_in_degree
        self.theta = nn.Linear(in_feat, out_feat)
        self.phi = nn.Linear(in_feat, out_feat)
        if batch_norm:
            self.bn = nn.BatchNorm1d(out_feat)

    def set_allow_zero_in_degree(self, set_value: bool):
        self._allow_zero_in_degree = set_value

    def _normalise_edges(self, g: Graph, edge: torch.Tensor) -> torch.Tensor:
        """``bn`` over the edges that exist: rows of edge ids left unused (a graph built with gaps in its
        edge ids) stay out of the batch statistics."""
        if g.num_edge_ids == g.num_edges:
            return self.bn(edge)
        live = torch.from_numpy(np.sort(_cuda.to_host(g.coo().eids)).astype(np.int64)).to(edge.device)
        return edge.index_copy(0, live, self.bn(edge[live]))

    def forward(self, g: Graph, feat) -> torch.Tensor:
        g = _graph(g)  # a DynamicGraph: its snapshot, for every kernel of the layer
        _check_zero_in_degree(g, self._allow_zero_in_degree, "EdgeConv")
        h_src, h_dst = _checked_pair(feat, g, "EdgeConv", self._in_feat, self._in_feat)
        if self.batch_norm:
            # The batch statistics are over edges, so the edge values have to exist: (E, out).
            diff = sddmm(g, "sub", h_dst.contiguous(), h_src.contiguous(), "v", "u")
            edge = sddmm(g, "add", self.theta(diff).contiguous(), self.phi(h_dst).contiguous(), "e", "v")
            return spmm(g, "copy_rhs", "max", None, self._normalise_edges(g, edge).contiguous())
        # Theta is linear, so  Theta(h_v - h_u) + Phi h_v  =  [Theta h_v + Phi h_v]  -  W_Theta h_u  and
        # the max over in-edges is the node term minus the min over in-neighbours of W_Theta h_u: node-sized
        # work instead of an (E, out) edge tensor.
        own = self.theta(h_dst) + self.phi(h_dst)
        neighbour = h_src @ self.theta.weight.t()
        rst = own - spmm(g, "copy_lhs", "min", neighbour.contiguous(), None)
        has_in_edges = _node_counts(g, "in", rst) > 0
        return rst * _column(has_in_edges, rst.dim(), rst.dtype)
