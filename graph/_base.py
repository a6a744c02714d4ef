"""The base class of :class:`~graphkern.graph.Graph`, below everything that works on graphs.

Graph's conversion and transform methods (``g.to_scipy()``, ``g.add_self_loop()``, ``Graph.from_dgl()``,
...) call the modules that implement them (graph/convert.py, graph/interop.py, graph/transform.py), so
those modules must not import graph.py: they check an argument with ``isinstance(g, GraphBase)`` and
build new graphs through ``type(g)`` or the class a constructor hands them. Imports then run one way,
from graph.py down to them.
"""

from __future__ import annotations

__all__ = ["GraphBase"]


class GraphBase:
    """What every :class:`~graphkern.graph.Graph` is an instance of; it holds no state of its own."""

    __slots__ = ()
