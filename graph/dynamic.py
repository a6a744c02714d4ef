"""``DynamicGraph``: a directed graph in a packed memory array (GPMA's layout) with stable edge ids.

Batches of insertions and deletions update the array in place: a deletion leaves a tombstone, an
insertion goes into its leaf's window, climbing to larger windows while a window would pass its density
bound, and a full rebuild grows (or, after many deletions, shrinks) the array. Each live edge keeps its id
until it is deleted; freed ids are reused, so ids stay below :attr:`max_edge_id` and edge-feature arrays of
that many rows stay valid across batches. :meth:`snapshot` is a :class:`~graphkern.Graph` whose CSR comes
from the packed order and whose edge ids are the stable ids.

Kernels take the DynamicGraph itself (graphkern.sparse and graphkern.traversal decide between its
snapshot and its packed arrays), :class:`~graphkern.IncrementalBFS` follows its changes through a change
log, and :mod:`graphkern.graph.temporal` steps it through time.

The graph holds the storage of its backend (``DynamicGraph(n, backend="cuda")`` keeps it on the GPU): a
``PackedStorage`` of the backend's driver package, ``graphkern._cpu.pma`` or ``graphkern._cuda.pma``
(twins with the same methods), picked once by :func:`graphkern._backend.resolve_driver`. This class adds
what does not depend on the device: the argument checks of the node count, the lock, the change logs of
incremental searches and the cached snapshot.
"""

from __future__ import annotations

import functools
import threading
import weakref

import numpy as np

from .._backend import resolve_driver
from .._fair_share import fair_share
from .._validate import check_bool, check_int_scalar, named_as

__all__ = ["DynamicGraph"]

# node ids must leave the key's low 32 bits one value for walls, and the key must fit a signed int64
MAX_NODES = (1 << 31) - 2


def serialized(method):
    """Run ``method`` holding its object's ``_lock`` (a re-entrant lock): a batch rewrites the packed
    arrays in place and may swap them for new ones, so a reader running beside it would index arrays
    of another layout (out of bounds in compiled code)."""

    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


def holding_graph_lock(func):
    """Run ``func(g, ...)`` holding ``g``'s lock when ``g`` (the first argument, or ``g=``) is a
    DynamicGraph: kernels that read its packed arrays, or build its snapshot, then see one batch's
    state from start to end. Other graphs run as they are."""

    @functools.wraps(func)
    def locked(*args, **kwargs):
        g = args[0] if args else kwargs.get("g")
        if isinstance(g, DynamicGraph):
            with g._lock:
                return func(*args, **kwargs)
        return func(*args, **kwargs)

    return locked


class DynamicGraph:
    """A directed graph on ``num_nodes`` nodes that changes by batches.

    Parameters
    ----------
    num_nodes : int
        Nodes ``0 .. num_nodes - 1`` (at most ``2**31 - 2``); the graph starts with no edge.
    backend : {None, "auto", "cpu", "cuda"}, optional
        Where the storage lives (the default: the backend in force, see :func:`graphkern.set_backend`;
        ``auto`` is the CPU). On ``"cuda"`` the arrays the graph returns (degrees, edges, snapshots) are
        device arrays, and batches may be host or device arrays.

    Examples
    --------
    >>> import graphkern as gk
    >>> dg = gk.DynamicGraph(4)
    >>> dg.apply(insert=([0, 0, 2], [1, 3, 1]))
    {'inserted': 3, 'deleted': 0}
    >>> dg.apply(insert=([0], [1]), delete=([0, 3], [3, 0]))   # (0, 1) exists, (3, 0) does not
    {'inserted': 0, 'deleted': 1}
    >>> snap = dg.snapshot()
    >>> snap.csr().indices.tolist(), snap.csr().eids.tolist(), dg.max_edge_id
    ([1, 1], [0, 2], 3)

    Notes
    -----
    Thread-safe: calls on one graph are serialized. Every method that reads or writes the storage
    (:meth:`apply`, :meth:`snapshot`, :meth:`edges`, :meth:`contains`, the degree queries) holds the
    graph's re-entrant lock, and so do the kernels that take the graph itself (``gk.spmm``,
    ``gk.sddmm``, ``gk.edge_softmax``, ``gk.bfs``, the ``graphkern.torch`` functions and layers) and
    :meth:`IncrementalBFS.update <graphkern.IncrementalBFS.update>`. Calls on different graphs run
    side by side.
    """

    def __init__(self, num_nodes: int, *, backend=None):
        n = self._check_nodes(num_nodes)
        self._lock = threading.RLock()  # serializes every call that reads or writes the storage
        self._watchers = weakref.WeakSet()  # change logs of incremental algorithms (IncrementalBFS)
        self._version = 0  # counts the batches that changed the edge set
        self._snapshot_cache = None  # (version, Graph)
        # the packed arrays, ids and degrees, in the memory of the backend's device
        self._storage = resolve_driver(backend).pma.PackedStorage(n)

    @staticmethod
    def _check_nodes(num_nodes) -> int:
        n = check_int_scalar("num_nodes", num_nodes, low=0)
        if n > MAX_NODES:
            raise ValueError(f"argument 'num_nodes': expected at most {MAX_NODES} nodes (node ids share a 64-bit "
                             f"key with 32 bits each), found {n}")
        return n

    # ------------------------------------------------------------------ state
    @property
    def num_nodes(self) -> int:
        return self._storage.num_nodes

    @property
    @serialized
    def num_edges(self) -> int:
        """Live edges."""
        return self._storage.live

    @property
    @serialized
    def max_edge_id(self) -> int:
        """Every live edge id is below this bound (ids freed by deletions are reused first)."""
        return self._storage.next_id

    @serialized
    def out_degrees(self):
        """Out-degree of every node (a copy, on the graph's device)."""
        return self._storage.out_degrees()

    @serialized
    def in_degrees(self):
        """In-degree of every node (a copy, on the graph's device)."""
        return self._storage.in_degrees()

    # the packed arrays, read by the kernels that walk the packed order (graphkern.sparse, graphkern.traversal,
    # graphkern.incremental) while they hold the graph's lock
    @property
    def _keys(self):
        return self._storage.keys

    @property
    def _eids(self):
        return self._storage.eids

    @property
    def _row_off(self):
        return self._storage.row_off

    @property
    def _leaf(self) -> int:
        return self._storage.leaf

    @property
    def _in_deg(self):
        return self._storage.in_deg

    # ------------------------------------------------------------------ updates
    @serialized
    def apply(self, insert=None, delete=None) -> dict:
        """Apply one batch: the deletions, then the insertions. Deleting an absent edge, inserting an
        existing one and repeats inside the batch are counted no-ops. Returns the effective counts.

        Every argument is checked before anything changes: a bad batch leaves the graph as it was. On a
        ``backend="cuda"`` graph ``src`` and ``dst`` may be host or device arrays.
        """
        storage = self._storage
        ins = storage.check_batch("insert", insert)
        dele = storage.check_batch("delete", delete)
        with fair_share():  # a batch is a chain of short parallel steps (graphkern._fair_share)
            inserted, deleted = storage.apply(ins, dele, self._record, keep_keys=bool(len(self._watchers)))
        return {"inserted": inserted, "deleted": deleted}

    def _record(self, inserted=None, deleted=None) -> None:
        """Hand the effective changes of a batch (edge keys, on the graph's device) to every watcher's
        change log; the arrays are the batch's own (nothing reuses them)."""
        self._version += 1
        for log in self._watchers:
            log.append(inserted, deleted)

    @serialized
    def _watch(self, log) -> None:
        self._watchers.add(log)

    @serialized
    def contains(self, src, dst):
        """Whether each ``src[i] -> dst[i]`` is a live edge (a bool array, on the graph's device)."""
        with named_as(**{"edges[0]": "src", "edges[1]": "dst", "edges": "src, dst"}):
            pair = self._storage.check_batch("edges", (src, dst))
        return self._storage.contains(*pair)

    # ------------------------------------------------------------------ readers
    @serialized
    def edges(self):
        """``(src, dst, eids)`` of the live edges in key order (by source, then destination), on the
        graph's device."""
        return self._storage.edges()

    @serialized
    def snapshot(self, *, csc: bool = False):
        """The graph now, as a :class:`~graphkern.Graph` on the graph's device: its CSR from the packed
        order, edge ids the stable ids (``num_edge_ids == max_edge_id``); the reverse (CSC) is built by
        the stable count sort when a kernel asks for it, or now with ``csc=True`` (on the CPU the CSC's
        row lengths are the in-degrees the graph keeps, so the sort needs no histogram pass for its last
        part). The snapshot is cached until the next batch that changes an edge, and kernels called on
        the DynamicGraph use it while it is current.

        The Graph is made directly, in the id dtype :meth:`Graph.from_csr` would choose: the packed order
        and the id bookkeeping already guarantee what from_csr would check (sorted rows, in-range
        destinations, distinct ids below max_edge_id).

        Examples
        --------
        >>> import graphkern as gk
        >>> dg = gk.DynamicGraph(3)
        >>> _ = dg.apply(insert=([0, 2, 1], [1, 1, 2]))
        >>> g = dg.snapshot(csc=True)
        >>> g.csr().indices.tolist(), g.csc().indices.tolist(), g.csc().eids.tolist()
        ([1, 2, 1], [0, 2, 1], [0, 2, 1])
        """
        csc = check_bool("csc", csc)
        snap = self.cached_snapshot()
        if snap is None:
            from .._validate import choose_idtype
            from ._formats import normalise_formats
            from .graph import Graph

            s = self._storage
            dtype = choose_idtype("idtype", None, max(s.num_nodes, s.live, s.next_id))
            snap = Graph(_num_src=s.num_nodes, _num_dst=s.num_nodes, _num_edges=s.live, _num_edge_ids=s.next_id,
                         _idtype=dtype, _allowed=normalise_formats(None), _formats=s.snapshot_formats(dtype, csc),
                         _identity=set(), _is_block=False, _device=s.device)
            self._snapshot_cache = (self._version, snap)
        if csc:
            snap.csc()
        return snap

    @serialized
    def cached_snapshot(self):
        """The snapshot taken since the last change, or None (a kernel called on the DynamicGraph then
        builds it, except BFS, which walks the packed arrays)."""
        if self._snapshot_cache is not None and self._snapshot_cache[0] == self._version:
            return self._snapshot_cache[1]
        return None

    # the names kernels validate against, as on a Graph (square: sources and destinations are the nodes)
    @property
    def num_src(self) -> int:
        return self._storage.num_nodes

    @property
    def num_dst(self) -> int:
        return self._storage.num_nodes

    @property
    @serialized
    def num_edge_ids(self) -> int:
        """Rows of an edge-feature array: :attr:`max_edge_id`."""
        return self._storage.next_id

    @property
    def device(self) -> str:
        """``"cpu"`` or ``"cuda"``: where the packed arrays, and the arrays the graph returns, live."""
        return self._storage.device

    @property
    def _device(self) -> str:  # the name graphkern._config.resolve_backend reads on a Graph or a DynamicGraph
        return self._storage.device

    @property
    def idtype(self) -> np.dtype:
        """Ids of the packed arrays (and of arg outputs of kernels run on them)."""
        return np.dtype(np.int64)

    def _require_host(self, what: str) -> None:
        if self.device != "cpu":
            raise ValueError(f"{what} works on a graph in host memory; this DynamicGraph is on {self.device}")
