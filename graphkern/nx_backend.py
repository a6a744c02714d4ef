"""graphkern as a networkx backend: ``nx.bfs_edges(G, s, backend="graphkern")`` runs compiled BFS.

Registered through the ``networkx.backends`` and ``networkx.backend_info`` entry points (networkx's
backend protocol, docs/design.md, section 'networkx backend'), so an installed graphkern is found by networkx without
an import. Implemented: ``bfs_edges``, ``bfs_layers``, ``single_source_shortest_path_length``.

networkx defines the order of these results (the order one queue visits vertices in, neighbours in
adjacency order), and its own tests check it, so ``bfs_edges`` and ``bfs_layers`` run a compiled
sequential queue BFS over the adjacency in networkx's order (:func:`graphkern.kernels.cpu.bfs.
bfs_queue_order`); ``single_source_shortest_path_length`` returns a dict, whose equality ignores order,
so it runs the parallel direction-optimizing :func:`graphkern.bfs`. A ``sort_neighbors`` callable cannot
run in compiled code: ``can_run`` says so and networkx runs its own version.

>>> import networkx as nx
>>> nx.config.warnings_to_ignore.add("cache")  # networkx notes each reuse of a cached conversion
>>> G = nx.path_graph(4)
>>> list(nx.bfs_edges(G, 0, backend="graphkern"))
[(0, 1), (1, 2), (2, 3)]
>>> nx.single_source_shortest_path_length(G, 3, backend="graphkern")
{3: 0, 2: 1, 1: 2, 0: 3}
"""

from __future__ import annotations

import inspect
import math
import numbers

import numpy as np

from .kernels.cpu import bfs as _bfs_cpu

__all__ = ["BackendInterface", "GraphkernNxGraph", "get_info"]

_FUNCTIONS = ("bfs_edges", "bfs_layers", "single_source_shortest_path_length")


def _adjacency(adj, index, nodes):
    """CSR arrays of a networkx adjacency (dict of dicts), rows and slots in networkx's iteration order."""
    degrees = np.fromiter((len(adj[u]) for u in nodes), dtype=np.int64, count=len(nodes))
    indptr = np.zeros(len(nodes) + 1, dtype=np.int64)
    np.cumsum(degrees, out=indptr[1:])
    indices = np.fromiter((index[v] for u in nodes for v in adj[u]), dtype=np.int64, count=int(indptr[-1]))
    return indptr, indices


class GraphkernNxGraph:
    """A networkx graph converted for graphkern: node labels, their CSR in adjacency order, and a Graph.

    ``succ`` is the CSR of ``G.adj`` (out-edges for a directed graph); ``pred`` that of ``G.pred`` for a
    directed graph (``bfs_edges(..., reverse=True)``), built on first use from the graph it came from.
    """

    __networkx_backend__ = "graphkern"

    def __init__(self, G):
        self.nodes = list(G)
        self.index = {node: i for i, node in enumerate(self.nodes)}
        self.directed = G.is_directed()
        self.multigraph = G.is_multigraph()
        self.succ = _adjacency(G._adj, self.index, self.nodes)
        self.pred = _adjacency(G._pred, self.index, self.nodes) if self.directed else self.succ
        self._graph = None

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, node) -> bool:
        try:
            return node in self.index
        except TypeError:  # an unhashable "node" is not in any graph
            return False

    def is_directed(self) -> bool:
        return self.directed

    def is_multigraph(self) -> bool:
        return self.multigraph

    @property
    def graph(self):
        """The :class:`graphkern.Graph` of the out-edges (built once, on first use)."""
        if self._graph is None:
            from .graph import Graph

            indptr, indices = self.succ
            self._graph = Graph.from_csr(indptr, indices, num_dst=len(self.nodes))
        return self._graph

    def queue_order(self, sources, depth_limit=None, *, reverse=False):
        """``(order, levels, parents)`` of networkx's queue BFS from ``sources`` (label indices)."""
        indptr, indices = self.pred if reverse else self.succ
        n = len(self.nodes)
        levels = np.full(n, -1, dtype=np.int64)
        parents = np.full(n, -1, dtype=np.int64)
        order = np.empty(max(n, 1), dtype=np.int64)
        limit = _levels_kept(depth_limit, n, lambda depth: depth < depth_limit)
        count = _bfs_cpu.bfs_queue_order(indptr, indices, np.asarray(sources, dtype=np.int64), limit, levels,
                                         parents, order) if n else 0
        return order[:count], levels, parents


def _levels_kept(bound, n: int, searches_past) -> int:
    """How many levels past the sources networkx's search keeps under a depth bound (``cutoff`` or
    ``depth_limit``), as an int for the compiled search.

    networkx searches level ``L + 1`` while ``searches_past(L)`` holds (``cutoff > L``, ``depth < depth_limit``),
    from ``L = 0``, so any value networkx compares is accepted: ``1.5`` keeps two levels, a negative bound, 0
    and NaN none, ``inf`` all. The first comparison runs here in networkx's own operand order, so a value it
    cannot compare raises networkx's own error (a TypeError)."""
    if bound is None:
        return n
    if not searches_past(0):
        return 0
    if isinstance(bound, numbers.Real):  # a number past 0: levels 1 .. ceil(bound)
        return n if bound >= n else math.ceil(bound)
    kept = 1  # any other comparable value: compared level by level, as networkx does
    while kept < n and searches_past(kept):
        kept += 1
    return kept


def _not_found(node):
    import networkx as nx

    return nx.NetworkXError(f"The node {node} is not in the graph.")


def bfs_edges(G, source, reverse=False, depth_limit=None, sort_neighbors=None):
    """Edges of networkx's BFS tree from ``source``, in networkx's order (a generator, like networkx)."""
    try:  # an unhashable source raises networkx's TypeError ("unhashable type")
        root = G.index[source]
    except KeyError:
        raise _not_found(source) from None
    order, _, parents = G.queue_order([root], depth_limit, reverse=reverse and G.directed)
    labels = G.nodes
    for v in order[1:].tolist():
        yield labels[parents[v]], labels[v]


def bfs_layers(G, sources):
    """The vertices at each distance from ``sources`` (a node or an iterable of nodes), as networkx orders
    them: the first layer is ``list(set(sources))``, then discovery order."""
    if sources in G:
        sources = [sources]
    first = list(set(sources))
    for source in first:
        if source not in G:
            raise _not_found(source)
    order, levels, _ = G.queue_order([G.index[s] for s in first])
    labels = G.nodes
    layer_of = levels[order]
    # order is level-sorted already (a queue); split it where the level changes
    cuts = np.flatnonzero(np.diff(layer_of)) + 1
    for chunk in np.split(order, cuts) if order.size else []:
        yield [labels[v] for v in chunk.tolist()]


def single_source_shortest_path_length(G, source, cutoff=None):
    """``{node: hops}`` for every node within ``cutoff`` hops of ``source``, by graphkern's parallel BFS.

    ``cutoff`` follows networkx exactly (the source is always in the result; a level ``L`` is kept while
    ``cutoff > L - 1``: ``1.5`` keeps two levels, a negative cutoff or NaN only the source)."""
    import networkx as nx

    from .traversal import bfs

    if source not in G:
        raise nx.NodeNotFound(f"Source {source} is not in G")
    kept = _levels_kept(cutoff, len(G), lambda level: cutoff > level)
    levels = bfs(G.graph, G.index[source]).levels
    reached = np.flatnonzero(levels >= 0)
    if kept < len(G):
        reached = reached[levels[reached] <= kept]
    reached = reached[np.argsort(levels[reached], kind="stable")]  # networkx yields nearest first
    labels = G.nodes
    return {labels[v]: int(d) for v, d in zip(reached.tolist(), levels[reached].tolist())}


class BackendInterface:
    """The object networkx loads from the ``networkx.backends`` entry point."""

    bfs_edges = staticmethod(bfs_edges)
    bfs_layers = staticmethod(bfs_layers)
    single_source_shortest_path_length = staticmethod(single_source_shortest_path_length)

    @staticmethod
    def convert_from_nx(G, edge_attrs=None, node_attrs=None, preserve_edge_attrs=False, preserve_node_attrs=False,
                        preserve_graph_attrs=False, name=None, graph_name=None):
        """A :class:`GraphkernNxGraph` of ``G`` (the BFS functions read no attributes)."""
        del edge_attrs, node_attrs, preserve_edge_attrs, preserve_node_attrs, preserve_graph_attrs, name, graph_name
        return G if isinstance(G, GraphkernNxGraph) else GraphkernNxGraph(G)

    @staticmethod
    def convert_to_nx(obj, *, name=None):
        """Results are plain Python values already (edges, lists, dicts): returned unchanged."""
        del name
        return obj

    @staticmethod
    def can_run(name, args, kwargs):
        if name not in _FUNCTIONS:
            return f"graphkern does not implement {name}"
        if name == "bfs_edges":
            bound = inspect.signature(bfs_edges).bind(None, *args[1:], **kwargs)
            if bound.arguments.get("sort_neighbors") is not None:
                return "sort_neighbors is a Python callable, which compiled code cannot call"
        return True

    @staticmethod
    def should_run(name, args, kwargs):
        return True


def get_info() -> dict:
    """What networkx shows about this backend (the ``networkx.backend_info`` entry point)."""
    return {
        "backend_name": "graphkern",
        "project": "graphkern",
        "package": "graphkern",
        "short_summary": "BFS compiled by Numba (sequential in networkx's order, or parallel direction-optimizing)",
        "functions": {
            "bfs_edges": {"additional_docs": "Compiled queue BFS; sort_neighbors falls back to networkx."},
            "bfs_layers": {"additional_docs": "Compiled queue BFS in networkx's order."},
            "single_source_shortest_path_length": {
                "additional_docs": "graphkern's parallel direction-optimizing BFS."},
        },
    }
