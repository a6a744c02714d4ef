"""GNN layers with DGL's names, constructor arguments and ``state_dict`` keys, on graphkern's kernels."""

from .conv import GATConv, GraphConv, SAGEConv
from .conv_rel import RelGraphConv, TypedLinear

__all__ = ["GraphConv", "GATConv", "SAGEConv"]
__all__ += ["RelGraphConv", "TypedLinear"]
