"""graphkern.graph: the Graph, its formats, generators, readers and writers, the DynamicGraph and temporal
snapshots (:mod:`graphkern.graph.temporal`), transforms (:mod:`graphkern.graph.transform`) and DGL/PyG
conversions (:mod:`graphkern.graph.interop`)."""

from . import interop, temporal, transform  # noqa: F401
from ._formats import COO, CSC, CSR, FORMATS
from .build import undirected
from .dynamic import DynamicGraph
from .generators import (
    GRAPH500_SEED,
    graph500_random_doubles,
    kronecker,
    kronecker_edges,
    uniform,
    uniform_edges,
)
from .graph import Graph
from .io import load, read_edgelist, read_mtx, save
from .transform import batch, unbatch

__all__ = [
    "Graph", "COO", "CSR", "CSC", "FORMATS", "DynamicGraph",
    "kronecker_edges", "kronecker", "uniform_edges", "uniform", "graph500_random_doubles", "GRAPH500_SEED",
    "undirected", "read_edgelist", "read_mtx", "save", "load", "temporal", "transform", "interop", "batch",
    "unbatch",
]
