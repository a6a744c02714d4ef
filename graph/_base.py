"""The base class of :class:`~graphkern.graph.Graph`, below everything that works on graphs.

Graph's conversion and transform methods (``g.to_scipy()``, ``g.add_self_loop()``, ``Graph.from_dgl()``,
...) call the modules that implement them (graph/convert.py, graph/interop.py, graph/transform.py), so
those modules must not import graph.py: they check an argument with :func:`require_host_graph` (or
``isinstance(g, GraphBase)``) and build new graphs through ``type(g)`` or the class a constructor hands
them. Imports then run one way, from graph.py down to them.
"""

from __future__ import annotations

from .._validate import type_name

__all__ = ["GraphBase", "require_host_graph"]


class GraphBase:
    """What every :class:`~graphkern.graph.Graph` is an instance of; it holds no state of its own."""

    __slots__ = ()


def require_host_graph(name: str, g, purpose: str) -> GraphBase:
    """``g``, checked to be a graphkern Graph (``TypeError`` naming argument ``name`` if not) whose formats
    are in host memory (``ValueError`` naming ``purpose``, the work that needs them there, if not)."""
    if not isinstance(g, GraphBase):
        raise TypeError(f"argument '{name}': expected a graphkern Graph, found {type_name(g)}")
    g._require_host(purpose)
    return g
