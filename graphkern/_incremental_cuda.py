"""The GPU path of :class:`graphkern.IncrementalBFS` (a DynamicGraph with ``backend="cuda"``): levels and
parents stay on the device, each update is a short host loop of the kernels in
:mod:`graphkern.kernels.cuda.incremental_bfs`, and only counts come back to the host."""

from __future__ import annotations

import numpy as np

from . import _cuda


def _grid(n):
    from .kernels.cuda.launch import grid_1d

    return grid_1d(max(int(n), 1))


def _slot_offsets(inc, rows, size, row_off):
    """The exclusive scan of the slot counts of ``rows[:size]`` in ``row_off`` (a packed array's), total
    last, on the device: the slot-parallel kernels' map from a slot to its row."""
    from .kernels.cuda.incremental_bfs import row_spans
    from .kernels.cuda.sort import exclusive_scan

    spans = inc._spans[:size]
    row_spans[_grid(size)](rows, size, row_off, spans)
    return exclusive_scan(spans, inc._span_offsets[:size + 1])


def _slot_grid(size):
    """A slot-parallel launch: at least ``SLOT_THREADS`` threads, so that a few hub rows fill the GPU."""
    from .kernels.cuda.incremental_bfs import SLOT_THREADS
    from .kernels.cuda.launch import grid_1d

    return grid_1d(max(int(size), SLOT_THREADS))


def _counts(counters):
    return [int(c) for c in counters.copy_to_host()]


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


def split_keys(keys):
    """``(src, dst)`` device arrays of edge keys ``src << 32 | dst``."""
    from .kernels.cuda.gpma import split_keys as kernel

    src = _cuda.empty(keys.size, np.int64)
    dst = _cuda.empty(keys.size, np.int64)
    if keys.size:
        kernel[_grid(keys.size)](keys, src, dst)
    return src, dst


def search_from_scratch(dg, source):
    """Levels and parents (int64 device arrays) of a fresh search on the snapshot."""
    from .kernels.cuda.sort import cast
    from .traversal import bfs

    res = bfs(dg.snapshot(), source, backend="cuda")
    n = dg.num_nodes
    return (cast(res.levels, _cuda.empty(n, np.int64)), cast(res.parents, _cuda.empty(n, np.int64)))


def update(inc, batches, report, limit):
    """Replay ``batches`` (device key arrays) on ``inc``'s device state; True when it fell back to a
    fresh search."""
    from .kernels.cuda import gpma as G
    from .kernels.cuda import incremental_bfs as K
    from .kernels.cuda.sort import fill

    dg = inc._dg
    for ins, dele in batches:
        report["inserted"] += int(ins.size)
        report["deleted"] += int(dele.size)
        if inc._rev is not None:  # the reverse array follows batch by batch, deletions first
            i_src, i_dst = split_keys(ins)
            d_src, d_dst = split_keys(dele)
            inc._rev.apply(insert=(i_dst, i_src) if ins.size else None, delete=(d_dst, d_src) if dele.size else None)
    ins = concat([b[0] for b in batches])
    dele = concat([b[1] for b in batches])
    levels, parents = inc._levels, inc._parents
    counters = _cuda.zeros(2, np.int64)
    affected = inc._affected
    count = 0
    if dele.size:
        K.mark_heads[_grid(dele.size)](dele, inc._source, parents, levels, affected, counters)
        start, end = 0, _counts(counters)[0]
        while end > start:  # each round appends the children of the last round's vertices
            frontier = affected[start:end]
            offsets = _slot_offsets(inc, frontier, end - start, dg._row_off)
            K.expand_subtree[_slot_grid(end - start)](dg._keys, dg._eids, dg._row_off, frontier, offsets,
                                                      inc._source, parents, levels, affected, counters)
            start, end = end, _counts(counters)[0]
            if end > limit:
                break
        count = end
    report["affected"] = count
    if count > limit:
        return True
    if count:
        K.reset_vertices[_grid(count)](affected, count, parents, levels)
    candidate, touched, frontier = inc._candidate, inc._touched, inc._frontier
    fill(counters, 0)
    rev = inc._rev if inc._rev is not None else dg
    if count:
        offsets = _slot_offsets(inc, affected, count, rev._row_off)
        K.reattach[_slot_grid(count)](rev._keys, rev._eids, rev._row_off, affected, offsets, levels, candidate,
                                      touched, counters)
    if ins.size:
        present = _cuda.empty(ins.size, np.bool_)
        G.contains[_grid(ins.size)](dg._keys, dg._eids, dg._leaf, dg._row_off, ins, present)
        K.seed_insertions[_grid(ins.size)](ins, present, levels, candidate, touched, counters)
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
            offsets = _slot_offsets(inc, frontier, found, dg._row_off)
            K.relax_frontier[_slot_grid(found)](dg._keys, dg._eids, dg._row_off, frontier, offsets, levels,
                                                candidate, touched, counters)
    report["relabelled"] = labelled
    return False


def allocate(inc, n):
    from .kernels.cuda.incremental_bfs import NO_CANDIDATE

    inc._affected = _cuda.empty(max(n, 1), np.int64)
    inc._candidate = _cuda.full(max(n, 1), NO_CANDIDATE, np.int64)
    inc._touched = _cuda.empty(max(n, 1), np.int64)
    inc._frontier = _cuda.empty(max(n, 1), np.int64)
    inc._spans = _cuda.empty(max(n, 1), np.int64)  # slot counts of a listed set of rows, and their scan
    inc._span_offsets = _cuda.empty(max(n, 1) + 1, np.int64)
