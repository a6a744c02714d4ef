"""Incremental BFS on the GPU, over a CUDA DynamicGraph's packed arrays (graphkern.IncrementalBFS).

The same rules as :mod:`graphkern.kernels.cpu.incremental_bfs` (RisGraph's), in level-synchronous
parallel form: the subtree under the heads of deleted tree edges is collected frontier by frontier (a
vertex claimed by compare-and-swap on its level), re-attached vertices and the heads of inserted edges
become candidates, and candidates relax onward frontier by frontier. A candidate is packed as
``level << 32 | parent`` so that ``atomic.min`` keeps the lowest level (and, among equals, the lowest
parent) whatever the thread order; a vertex lowered again later relaxes again, so the levels end exact
(label-correcting with unit weights from upper bounds).
"""

from __future__ import annotations

from numba import cuda

from ..cpu.gpma import WALL_LOW

_LOW = int(WALL_LOW)
AFFECTED = -2
NO_CANDIDATE = (1 << 63) - 1


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
def expand_subtree(keys, eids, row_off, frontier, size, source, parents, levels, next_frontier, counters):
    """The tree children of the frontier join the subtree (each claimed once)."""
    for i in range(cuda.grid(1), size, cuda.gridsize(1)):
        x = frontier[i]
        for s in range(row_off[x], row_off[x + 1]):
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
def reattach(rkeys, reids, rrow_off, affected, size, levels, candidate, touched, counters):
    """Each affected vertex's best in-neighbour outside the subtree becomes its candidate."""
    for i in range(cuda.grid(1), size, cuda.gridsize(1)):
        w = affected[i]
        best = NO_CANDIDATE
        for s in range(rrow_off[w], rrow_off[w + 1]):
            if reids[s] < 0:
                continue
            x = rkeys[s] & _LOW
            if levels[x] >= 0:
                packed = ((levels[x] + 1) << 32) | x
                if packed < best:
                    best = packed
        if best != NO_CANDIDATE and cuda.atomic.min(candidate, w, best) == NO_CANDIDATE:
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
def relax_frontier(keys, eids, row_off, frontier, size, levels, candidate, touched, counters):
    for i in range(cuda.grid(1), size, cuda.gridsize(1)):
        x = frontier[i]
        level = levels[x] + 1
        for s in range(row_off[x], row_off[x + 1]):
            if eids[s] < 0:
                continue
            y = keys[s] & _LOW
            if levels[y] < 0 or level < levels[y]:
                if cuda.atomic.min(candidate, y, (level << 32) | x) == NO_CANDIDATE:
                    touched[cuda.atomic.add(counters, 0, 1)] = y
