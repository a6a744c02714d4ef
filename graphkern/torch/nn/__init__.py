"""GNN layers with DGL's names, constructor arguments and ``state_dict`` keys, on graphkern's kernels."""

from .conv import GATConv, GraphConv, SAGEConv
from .conv_edge import EdgeConv
from .conv_gatv2 import GATv2Conv
from .conv_gin import GINConv
from .conv_rel import RelGraphConv, TypedLinear
from .conv_spectral import APPNPConv, ChebConv, SGConv, TAGConv
from .edge_norm import EdgeWeightNorm
from .glob import AvgPooling, MaxPooling, SumPooling

__all__ = ["GraphConv", "GATConv", "SAGEConv", "GINConv", "SGConv", "APPNPConv", "TAGConv", "ChebConv", "GATv2Conv",
           "EdgeConv", "RelGraphConv", "TypedLinear", "SumPooling", "AvgPooling", "MaxPooling", "EdgeWeightNorm"]
