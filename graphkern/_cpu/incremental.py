"""The host state and steps of an :class:`~graphkern.IncrementalBFS` on the CPU: :class:`SearchState`.

An update replays the batches' effective changes with RisGraph's rules (docs/design.md, section
'Incremental BFS'), compiled in :mod:`graphkern.kernels.cpu.incremental_bfs`. The CUDA twin is
``graphkern._cuda.incremental.SearchState``, with the same methods.
"""

from __future__ import annotations

import numpy as np

from ..kernels.cpu import gpma as _pma
from ..kernels.cpu import incremental_bfs as K

__all__ = ["SearchState"]

_LOW = np.int64(0xFFFFFFFF)


class SearchState:
    """Levels, parents and the scratch arrays of a search over ``num_nodes`` vertices, in host memory.

    Examples
    --------
    >>> import numpy as np
    >>> from graphkern._cpu.incremental import SearchState
    >>> state = SearchState(3)
    >>> [a.tolist() for a in state.split_keys(np.array([1 << 32 | 2]))]
    [[1], [2]]
    """

    def __init__(self, num_nodes: int):
        self.levels = self.parents = None  # int64 arrays from the first search (adopt_search)
        self._affected = np.empty(num_nodes, np.int64)
        self._queue = np.empty(num_nodes, np.int64)

    def adopt_search(self, levels, parents) -> None:
        """Take a fresh search's levels and parents (any int dtype) as the state, in int64."""
        self.levels = levels.astype(np.int64)
        self.parents = parents.astype(np.int64)

    @staticmethod
    def split_keys(keys):
        """``(src, dst)`` of edge keys ``src << 32 | dst``."""
        return keys >> np.int64(32), keys & _LOW

    @staticmethod
    def concat(arrays):
        """One array holding ``arrays`` one after another."""
        return np.concatenate(arrays)

    def relabel(self, graph, reverse, source: int, inserted, deleted, limit: int, report: dict) -> bool:
        """Bring the levels and parents up to date with the edge keys ``inserted`` and ``deleted``, which
        ``graph`` (a packed storage, already changed) and ``reverse`` (the storage holding the reverse
        edges, or ``graph`` itself on a symmetric graph) reflect. Fills ``report["affected"]`` and
        ``report["relabelled"]``; True when more than ``limit`` vertices would be touched, so that a fresh
        search is cheaper (the state is then to be replaced by one)."""
        levels, parents = self.levels, self.parents
        count = 0
        if deleted.size:
            du, dv = self.split_keys(deleted)
            heads = dv[parents[dv] == du]
            if heads.size:
                count = K.invalidate_subtrees(graph.keys, graph.eids, graph.row_off, heads, source, parents, levels,
                                              self._affected)
        report["affected"] = int(count)
        if count > limit:
            return True
        present = np.empty(inserted.size, np.bool_)
        if inserted.size:
            _pma.contains(graph.keys, graph.eids, graph.leaf, graph.row_off, inserted, present)
        size = count + inserted.size
        seed_v = np.empty(size, np.int64)
        seed_level = np.empty(size, np.int64)
        seed_parent = np.empty(size, np.int64)
        nseeds = K.reattach(reverse.keys, reverse.eids, reverse.row_off, self._affected, count, levels, seed_v,
                            seed_level, seed_parent, 0)
        ins_src, ins_dst = self.split_keys(inserted)
        nseeds = K.seed_insertions(ins_src, ins_dst, present, levels, seed_v, seed_level, seed_parent, nseeds)
        labelled = K.relax(graph.keys, graph.eids, graph.row_off, seed_v, seed_level, seed_parent, nseeds, parents,
                           levels, self._queue, limit)
        if labelled < 0:
            return True
        report["relabelled"] = int(labelled)
        return False
