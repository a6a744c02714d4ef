"""Incremental BFS on the GPU, over a CUDA DynamicGraph's packed arrays (graphkern.IncrementalBFS).

The same rules as :mod:`graphkern.kernels.cpu.incremental_bfs` (RisGraph's), in level-synchronous
parallel form: the subtree under the heads of deleted tree edges is collected frontier by frontier (a
vertex claimed by compare-and-swap on its level), re-attached vertices and the heads of inserted edges
become candidates, and candidates relax onward frontier by frontier. A candidate is packed as
``level << 32 | parent`` so that ``atomic.min`` keeps the lowest level (and, among equals, the lowest
parent) whatever the thread order; a vertex lowered again later relaxes again, so the levels end exact
(label-correcting with unit weights from upper bounds).

The kernels that walk rows (:func:`expand_subtree`, :func:`reattach`, :func:`relax_frontier`) take a thread
per slot of the listed rows, not per row: the driver lists the rows' slot counts (:func:`row_spans`) and
scans them, and each thread finds its slot's row by binary search over that scan. A hub row is spread
over the grid like any other row's slots, and any grid is correct (grid-stride loops over the slots).
"""

from __future__ import annotations

from numba import cuda

from ..cpu.gpma import WALL_LOW
from .sort import row_of_slot

_LOW = int(WALL_LOW)
AFFECTED = -2
NO_CANDIDATE = (1 << 63) - 1
# slot-parallel launches take at least this many threads (grid-stride, so any grid is correct): a frontier
# of a few hub rows then still spreads over the whole GPU
SLOT_THREADS = 1 << 16


@cuda.jit(device=True)
def _join_subtree(v, levels, frontier, counters):
    """Mark ``v`` affected and queue it, once: only the thread whose CAS moves its level wins."""
    old = levels[v]
    if old >= 0 and cuda.atomic.cas(levels, v, old, AFFECTED) == old:
        frontier[cuda.atomic.add(counters, 0, 1)] = v


@cuda.jit
def mark_heads(del_keys, source, parents, levels, frontier, counters):
    """Heads ``v`` of deleted tree edges ``u -> v`` start the invalidated subtree (``counters[0]``)."""
    for i in range(cuda.grid(1), del_keys.size, cuda.gridsize(1)):
        u = del_keys[i] >> 32
        v = del_keys[i] & _LOW
        if v != source and parents[v] == u:
            _join_subtree(v, levels, frontier, counters)


@cuda.jit
def row_spans(rows, size, row_off, spans):
    """``spans[i]``: the slots of row ``rows[i]`` in the packed array (``row_off``), for ``i < size``."""
    for i in range(cuda.grid(1), size, cuda.gridsize(1)):
        x = rows[i]
        spans[i] = row_off[x + 1] - row_off[x]


@cuda.jit(device=True)
def _slot(rows, offsets, row_off, t):
    """``(row, slot)`` of the ``t``-th slot of the listed rows (``offsets``: the exclusive scan of their
    spans, with the total last)."""
    i = row_of_slot(offsets, t)
    x = rows[i]
    return x, row_off[x] + t - offsets[i]


@cuda.jit
def expand_subtree(keys, eids, row_off, frontier, offsets, source, parents, levels, next_frontier, counters):
    """The tree children of the frontier join the subtree (each claimed once); a thread per slot."""
    for t in range(cuda.grid(1), offsets[offsets.size - 1], cuda.gridsize(1)):
        x, s = _slot(frontier, offsets, row_off, t)
        if eids[s] < 0:
            continue
        y = keys[s] & _LOW
        if y != source and parents[y] == x:
            _join_subtree(y, levels, next_frontier, counters)


@cuda.jit
def reset_vertices(vertices, size, parents, levels):
    for i in range(cuda.grid(1), size, cuda.gridsize(1)):
        levels[vertices[i]] = -1
        parents[vertices[i]] = -1


@cuda.jit
def reattach(rkeys, reids, rrow_off, affected, offsets, levels, candidate, touched, counters):
    """Each affected vertex's best in-neighbour outside the subtree becomes its candidate; a thread per slot
    of the in-rows, the vertex's minimum by ``atomic.min`` (tried only while it would lower the candidate,
    so a hub's in-row does not queue an atomic per slot on one address)."""
    for t in range(cuda.grid(1), offsets[offsets.size - 1], cuda.gridsize(1)):
        w, s = _slot(affected, offsets, rrow_off, t)
        if reids[s] < 0:
            continue
        x = rkeys[s] & _LOW
        if levels[x] >= 0:
            packed = ((levels[x] + 1) << 32) | x
            if packed < candidate[w] and cuda.atomic.min(candidate, w, packed) == NO_CANDIDATE:
                touched[cuda.atomic.add(counters, 0, 1)] = w


@cuda.jit
def seed_insertions(ins_keys, present, levels, candidate, touched, counters):
    for i in range(cuda.grid(1), ins_keys.size, cuda.gridsize(1)):
        if not present[i]:
            continue
        u = ins_keys[i] >> 32
        v = ins_keys[i] & _LOW
        if levels[u] >= 0 and (levels[v] < 0 or levels[u] + 1 < levels[v]):
            if cuda.atomic.min(candidate, v, ((levels[u] + 1) << 32) | u) == NO_CANDIDATE:
                touched[cuda.atomic.add(counters, 0, 1)] = v


@cuda.jit
def commit_candidates(touched, size, candidate, parents, levels, frontier, counters):
    """Candidates that lower their vertex's level take effect and form the next frontier."""
    for i in range(cuda.grid(1), size, cuda.gridsize(1)):
        v = touched[i]
        packed = candidate[v]
        candidate[v] = NO_CANDIDATE
        level = packed >> 32
        if levels[v] < 0 or level < levels[v]:
            levels[v] = level
            parents[v] = packed & _LOW
            frontier[cuda.atomic.add(counters, 1, 1)] = v


@cuda.jit
def relax_frontier(keys, eids, row_off, frontier, offsets, levels, candidate, touched, counters):
    """Every out-edge of the frontier offers its head a candidate one level down; a thread per slot."""
    for t in range(cuda.grid(1), offsets[offsets.size - 1], cuda.gridsize(1)):
        x, s = _slot(frontier, offsets, row_off, t)
        if eids[s] < 0:
            continue
        level = levels[x] + 1
        y = keys[s] & _LOW
        if levels[y] < 0 or level < levels[y]:
            if cuda.atomic.min(candidate, y, (level << 32) | x) == NO_CANDIDATE:
                touched[cuda.atomic.add(counters, 0, 1)] = y
