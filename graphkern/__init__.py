"""graphkern: graph kernels in pure Python, compiled by Numba for CPUs and NVIDIA GPUs.

>>> import graphkern as gk
>>> g = gk.graph.kronecker(8)
>>> g.num_nodes
256
"""

from importlib.metadata import PackageNotFoundError, version

# _numba_cache first: importing it installs the cache locator before any @njit(cache=True) runs, and
# _numba_inline Numba's inliner with one copy memo, before anything compiles (the modules say why)
from . import _numba_cache, _numba_inline, graph, graph500, ops, tuning  # noqa: F401
from ._config import BACKENDS, get_backend, resolve_backend, set_backend, use_backend
from ._info import show_config
from .dispatch import Plan, explain
from .errors import BackendUnavailableError, DistributedError, Graph500ValidationError, GraphkernError
from .graph import DynamicGraph, Graph, batch, unbatch
from .incremental import IncrementalBFS
from .segment import gather_mm, segment_mm
from .sparse import edge_softmax, sddmm, spmm
from .traversal import BFSResult, bfs
from .tuning import Tuning, tuned

try:
    __version__ = version("graphkern")
except PackageNotFoundError:  # pragma: no cover - running from a source tree that is not installed
    __version__ = "0+unknown"

__all__ = [
    "Graph", "DynamicGraph", "graph", "batch", "unbatch", "spmm", "sddmm", "edge_softmax", "ops", "bfs", "BFSResult",
    "IncrementalBFS", "graph500",
    "set_backend", "get_backend", "use_backend", "resolve_backend", "BACKENDS", "show_config",
    "explain", "Plan",
    "GraphkernError", "BackendUnavailableError", "Graph500ValidationError", "DistributedError",
    "__version__",
    "segment_mm", "gather_mm",
    "tuning", "Tuning", "tuned",
]
