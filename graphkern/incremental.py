"""``IncrementalBFS``: BFS levels and parents kept exact while a :class:`~graphkern.DynamicGraph` changes.

The dynamic graph hands every batch's effective changes (edge keys) to the search's change log;
:meth:`IncrementalBFS.update` replays them with RisGraph's rules (docs/design.md, section 'Incremental BFS'),
compiled in :mod:`graphkern.kernels.cpu.incremental_bfs`:

- a deleted edge that is not a tree edge changes nothing;
- a deleted tree edge ``u -> v`` invalidates the subtree under ``v``; each of its vertices that still has
  an in-neighbour outside the subtree is re-attached one level below the best such neighbour;
- an inserted edge ``u -> v`` with ``level[u] + 1 < level[v]`` (or ``v`` unreached) re-labels ``v``;
- everything re-labelled relaxes onward in increasing level, so the levels equal a fresh search's.

When an update touches more than ``fallback_fraction`` of the vertices (a large subtree, or an insertion
that connects a big component), a fresh direction-optimizing search is cheaper and runs instead.
In-neighbours come from a reverse packed array the search keeps in step, or from the graph itself when
it is ``symmetric`` (every change made in both directions, as for an undirected graph).

The levels, parents and steps live in a ``SearchState`` of the graph's backend driver
(``graphkern._cpu.incremental`` or ``graphkern._cuda.incremental``, twins with the same methods); this
class holds what does not depend on the device: the change log, the reverse graph, the fallback rule and
the locks.
"""

from __future__ import annotations

import threading

import numpy as np

from . import tuning
from ._backend import driver
from ._fair_share import fair_share
from ._validate import check_int_scalar, check_real_scalar, read_only, type_name

__all__ = ["IncrementalBFS"]


class _ChangeLog:
    """The effective changes of the batches since the last update, in order: ``(inserted, deleted)`` keys."""

    def __init__(self):
        self.batches: list[tuple[np.ndarray, np.ndarray]] = []
        self._pending_deleted = None

    def append(self, inserted=None, deleted=None):
        # a batch reports its deletions first, then its insertions
        if deleted is not None:
            self._pending_deleted = deleted
            if inserted is None:
                return
        dele = self._pending_deleted if self._pending_deleted is not None else np.zeros(0, np.int64)
        ins = inserted if inserted is not None else np.zeros(0, np.int64)
        self._pending_deleted = None
        if ins.size or dele.size:
            self.batches.append((ins, dele))

    def drain(self):
        self.append()  # a batch with deletions only
        batches, self.batches = self.batches, []
        return batches


class IncrementalBFS:
    """Levels and parents of a BFS from ``source`` in a :class:`~graphkern.DynamicGraph`, kept exact as
    batches arrive: call :meth:`update` after ``dg.apply(...)`` (one or several).

    Parameters
    ----------
    dg : DynamicGraph
        The search reads its packed arrays in place; on a ``backend="cuda"`` graph the levels and parents
        are device arrays and every step runs on the GPU.
    source : int
    symmetric : bool
        The caller keeps every edge in both directions, so out-neighbours are in-neighbours and no
        reverse array is needed.
    fallback_fraction : float, optional
        Re-labelling more than this fraction of the vertices (from 0 to 1; never fewer than the knob
        ``incremental_min_limit`` vertices) in one update switches to a fresh search; default: the knob
        ``incremental_fallback_fraction`` (0.05, graphkern.tuning) when constructed.

    Examples
    --------
    >>> import graphkern as gk
    >>> dg = gk.DynamicGraph(5)
    >>> _ = dg.apply(insert=([0, 1, 2], [1, 2, 3]))
    >>> inc = gk.IncrementalBFS(dg, 0)
    >>> inc.levels.tolist()
    [0, 1, 2, 3, -1]
    >>> _ = dg.apply(insert=([0], [3]), delete=([1], [2]))
    >>> inc.update()
    {'inserted': 1, 'deleted': 1, 'affected': 2, 'relabelled': 1, 'full_search': False}
    >>> inc.levels.tolist(), inc.parents.tolist()
    ([0, 1, -1, 1, -1], [0, 0, -1, 0, -1])

    Notes
    -----
    Thread-safe: calls on one graph are serialized. :meth:`update` holds the search's own lock and then
    its graph's, so it never reads the packed arrays while a batch rewrites them; batches applied from
    other threads meanwhile wait, and the next update sees them. :attr:`levels` and :attr:`parents` are
    read-only views of the arrays an update rewrites in place: copy them between updates to keep a state.
    """

    def __init__(self, dg, source: int, *, symmetric: bool = False, fallback_fraction: float | None = None):
        from .graph import DynamicGraph

        if not isinstance(dg, DynamicGraph):
            raise TypeError(f"argument 'dg': expected a graphkern DynamicGraph, found {type_name(dg)}")
        n = dg.num_nodes
        self._source = check_int_scalar("source", source, low=0, high=max(n - 1, 0))
        if fallback_fraction is None:
            fallback_fraction = tuning.current().incremental_fallback_fraction
        # the knob's range: with 0, an update searches afresh once it would relabel more than the
        # knob incremental_min_limit vertices
        fallback_fraction = check_real_scalar("fallback_fraction", fallback_fraction, low=0, high=1)
        self._lock = threading.RLock()
        self._dg = dg
        self._symmetric = bool(symmetric)
        self._fallback = float(fallback_fraction)
        self._log = _ChangeLog()
        self._rev = None
        # the graph's lock: no batch lands between the edges read here, the search from scratch and the
        # change log starting, so the log holds exactly the batches after the state computed now
        with dg._lock:
            dg._watch(self._log)
            if not self._symmetric:
                self._rev = DynamicGraph(n, backend=dg.device)
                src, dst, _ = dg.edges()
                if src.size:
                    self._rev.apply(insert=(dst, src))
            self._state = driver(dg.device).incremental.SearchState(n)
            self.full_searches = 0
            self._search_from_scratch()

    @property
    def source(self) -> int:
        return self._source

    @property
    def levels(self):
        """Hops from the source (-1 unreached), exact after the last :meth:`update` (on the graph's
        device). A read-only view of the state an update rewrites in place: copy it to keep a step's
        levels; a write into it raises, since the next update indexes by these values."""
        return read_only(self._state.levels)

    @property
    def parents(self):
        """A BFS parent of every reached vertex (``parents[source] == source``, -1 unreached); a read-only
        view, like :attr:`levels`."""
        return read_only(self._state.parents)

    def _search_from_scratch(self):
        from .traversal import bfs

        res = bfs(self._dg.snapshot(), self._source, backend=self._dg.device)
        self._state.adopt_search(res.levels, res.parents)
        self.full_searches += 1

    def update(self) -> dict:
        """Bring levels and parents up to date with every batch applied since the last call.

        Returns what it did: effective ``inserted``/``deleted`` edges seen, ``affected`` (vertices of
        invalidated subtrees), ``relabelled`` and whether it fell back to a ``full_search``.

        Holds the search's lock, then the graph's (always in that order, so two updates and a batch
        cannot deadlock)."""
        with self._lock, self._dg._lock, fair_share():  # short parallel steps (graphkern._fair_share)
            return self._update()

    def _update(self) -> dict:
        batches = self._log.drain()
        report = {"inserted": 0, "deleted": 0, "affected": 0, "relabelled": 0, "full_search": False}
        if not batches:
            return report
        limit = max(int(self._fallback * self._dg.num_nodes), tuning.current().incremental_min_limit)
        state = self._state
        for ins, dele in batches:
            report["inserted"] += int(ins.size)
            report["deleted"] += int(dele.size)
            if self._rev is not None:  # the reverse array follows batch by batch, deletions first
                i_src, i_dst = state.split_keys(ins)
                d_src, d_dst = state.split_keys(dele)
                self._rev.apply(insert=(i_dst, i_src) if ins.size else None,
                                delete=(d_dst, d_src) if dele.size else None)
        inserted = state.concat([b[0] for b in batches])
        deleted = state.concat([b[1] for b in batches])
        reverse = self._rev if self._rev is not None else self._dg
        if state.relabel(self._dg._storage, reverse._storage, self._source, inserted, deleted, limit, report):
            self._search_from_scratch()
            report["full_search"] = True
        return report
