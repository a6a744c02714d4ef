"""GNN layers with DGL's names, constructor arguments and ``state_dict`` keys, on graphkern's kernels."""

from .conv import GATConv, GraphConv, SAGEConv

__all__ = ["GraphConv", "GATConv", "SAGEConv"]
