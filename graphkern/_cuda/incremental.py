"""The device state and steps of an :class:`~graphkern.IncrementalBFS` on the GPU: :class:`SearchState`.

Levels and parents stay on the device, each update is a short host loop of the kernels in
:mod:`graphkern.kernels.cuda.incremental_bfs`, and only counts come back to the host. The CPU twin is
``graphkern._cpu.incremental.SearchState``, with the same methods.
"""

from __future__ import annotations

import numpy as np

from .. import _cuda

__all__ = ["SearchState"]


def _grid(n):
    from ..kernels.cuda.launch import grid_1d

    return grid_1d(max(int(n), 1))


def _slot_grid(size):
    """A slot-parallel launch: at least ``SLOT_THREADS`` threads, so that a few hub rows fill the GPU."""
    from ..kernels.cuda.incremental_bfs import SLOT_THREADS
    from ..kernels.cuda.launch import grid_1d

    return grid_1d(max(int(size), SLOT_THREADS))


def _counts(counters):
    return [int(c) for c in counters.copy_to_host()]


class SearchState:
    """Levels, parents and the scratch arrays of a search over ``num_nodes`` vertices, on the device."""

    def __init__(self, num_nodes: int):
        from ..kernels.cuda.incremental_bfs import NO_CANDIDATE

        size = max(num_nodes, 1)
        self.levels = self.parents = None  # int64 device arrays from the first search (adopt_search)
        self._affected = _cuda.empty(size, np.int64)
        self._candidate = _cuda.full(size, NO_CANDIDATE, np.int64)
        self._touched = _cuda.empty(size, np.int64)
        self._frontier = _cuda.empty(size, np.int64)
        self._spans = _cuda.empty(size, np.int64)  # slot counts of a listed set of rows, and their scan
        self._span_offsets = _cuda.empty(size + 1, np.int64)

    def adopt_search(self, levels, parents) -> None:
        """Take a fresh search's levels and parents (device arrays of any int dtype) as the state, in
        int64."""
        from ..kernels.cuda.sort import cast

        self.levels = cast(levels, _cuda.empty(levels.size, np.int64))
        self.parents = cast(parents, _cuda.empty(parents.size, np.int64))

    @staticmethod
    def split_keys(keys):
        """``(src, dst)`` device arrays of edge keys ``src << 32 | dst``."""
        from ..kernels.cuda.gpma import split_keys as kernel

        src = _cuda.empty(keys.size, np.int64)
        dst = _cuda.empty(keys.size, np.int64)
        if keys.size:
            kernel[_grid(keys.size)](keys, src, dst)
        return src, dst

    @staticmethod
    def concat(arrays):
        """One device array holding ``arrays`` one after another."""
        total = sum(a.size for a in arrays)
        out = _cuda.empty(total, np.int64)
        pos = 0
        for a in arrays:
            if a.size:
                out[pos:pos + a.size].copy_to_device(a)
                pos += a.size
        return out

    def _slot_offsets(self, rows, size, row_off):
        """The exclusive scan of the slot counts of ``rows[:size]`` in ``row_off`` (a packed array's), total
        last, on the device: the slot-parallel kernels' map from a slot to its row."""
        from ..kernels.cuda.incremental_bfs import row_spans
        from ..kernels.cuda.sort import exclusive_scan

        spans = self._spans[:size]
        row_spans[_grid(size)](rows, size, row_off, spans)
        return exclusive_scan(spans, self._span_offsets[:size + 1])

    def relabel(self, graph, reverse, source: int, inserted, deleted, limit: int, report: dict) -> bool:
        """Bring the levels and parents up to date with the edge keys ``inserted`` and ``deleted`` (device
        arrays), which ``graph`` (a packed storage, already changed) and ``reverse`` (the storage holding
        the reverse edges, or ``graph`` itself on a symmetric graph) reflect. Fills ``report["affected"]``
        and ``report["relabelled"]``; True when more than ``limit`` vertices would be touched, so that a
        fresh search is cheaper (the state is then to be replaced by one)."""
        from ..kernels.cuda import gpma as G
        from ..kernels.cuda import incremental_bfs as K
        from ..kernels.cuda.sort import fill

        levels, parents = self.levels, self.parents
        counters = _cuda.zeros(2, np.int64)
        affected = self._affected
        count = 0
        if deleted.size:
            K.mark_heads[_grid(deleted.size)](deleted, source, parents, levels, affected, counters)
            start, end = 0, _counts(counters)[0]
            while end > start:  # each round appends the children of the last round's vertices
                frontier = affected[start:end]
                offsets = self._slot_offsets(frontier, end - start, graph.row_off)
                K.expand_subtree[_slot_grid(end - start)](graph.keys, graph.eids, graph.row_off, frontier, offsets,
                                                          source, parents, levels, affected, counters)
                start, end = end, _counts(counters)[0]
                if end > limit:
                    break
            count = end
        report["affected"] = count
        if count > limit:
            return True
        if count:
            K.reset_vertices[_grid(count)](affected, count, parents, levels)
        candidate, touched, frontier = self._candidate, self._touched, self._frontier
        fill(counters, 0)
        if count:
            offsets = self._slot_offsets(affected, count, reverse.row_off)
            K.reattach[_slot_grid(count)](reverse.keys, reverse.eids, reverse.row_off, affected, offsets, levels,
                                          candidate, touched, counters)
        if inserted.size:
            present = _cuda.empty(inserted.size, np.bool_)
            G.contains[_grid(inserted.size)](graph.keys, graph.eids, graph.leaf, graph.row_off, inserted, present)
            K.seed_insertions[_grid(inserted.size)](inserted, present, levels, candidate, touched, counters)
        labelled = 0
        while True:
            size = _counts(counters)[0]
            if size == 0:
                break
            fill(counters, 0)
            K.commit_candidates[_grid(size)](touched, size, candidate, parents, levels, frontier, counters)
            found = _counts(counters)[1]
            labelled += found
            if labelled > limit:
                return True
            fill(counters, 0)
            if found:
                offsets = self._slot_offsets(frontier, found, graph.row_off)
                K.relax_frontier[_slot_grid(found)](graph.keys, graph.eids, graph.row_off, frontier, offsets, levels,
                                                    candidate, touched, counters)
        report["relabelled"] = labelled
        return False
