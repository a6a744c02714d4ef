"""Incremental BFS on the live packed arrays of a DynamicGraph (graphkern.IncrementalBFS).

The rules are RisGraph's (docs/design.md, section 'Incremental BFS'): an insertion can only lower levels, so it seeds a
relaxation at its head; a deleted tree edge invalidates the subtree under its head, whose vertices are
re-attached to a neighbour outside the subtree when they have one, and everything re-labelled relaxes
onward. The relaxation processes vertices in increasing level (a bucket queue, levels being hop counts),
so every level ends exact, as a fresh search would give.

Rows of the packed memory array are walked in place: row ``r`` is ``keys[row_off[r]:row_off[r + 1]]``,
and slots whose id is negative (walls, gaps, tombstones) are skipped. The forward array gives
out-neighbours; the reverse one (``dst << 32 | src`` keys) gives in-neighbours.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .gpma import WALL_LOW

AFFECTED = -2  # a level that marks a vertex of an invalidated subtree while it is being collected


@njit(cache=True)
def invalidate_subtrees(keys, eids, row_off, heads, source, parents, levels, affected):
    """Collect the tree under every head in ``heads`` (the heads of deleted tree edges) into ``affected``
    and unlabel it; returns how many vertices it holds."""
    count = 0
    for v in heads:
        if v != source and levels[v] >= 0:
            levels[v] = AFFECTED
            affected[count] = v
            count += 1
    i = 0
    while i < count:
        x = affected[i]
        i += 1
        for s in range(row_off[x], row_off[x + 1]):
            if eids[s] < 0:
                continue
            y = keys[s] & WALL_LOW
            if parents[y] == x and levels[y] >= 0 and y != source:
                levels[y] = AFFECTED
                affected[count] = y
                count += 1
    for j in range(count):
        levels[affected[j]] = -1
        parents[affected[j]] = -1
    return count


@njit(cache=True)
def reattach(rkeys, reids, rrow_off, affected, count, levels, seed_v, seed_level, seed_parent, nseeds):
    """Seed each affected vertex with its best in-neighbour outside the subtree; returns the seed count."""
    for j in range(count):
        w = affected[j]
        best = -1
        parent = -1
        for s in range(rrow_off[w], rrow_off[w + 1]):
            if reids[s] < 0:
                continue
            x = rkeys[s] & WALL_LOW
            lx = levels[x]
            if lx >= 0 and (best < 0 or lx + 1 < best):
                best = lx + 1
                parent = x
        if best >= 0:
            seed_v[nseeds] = w
            seed_level[nseeds] = best
            seed_parent[nseeds] = parent
            nseeds += 1
    return nseeds


@njit(cache=True)
def seed_insertions(src, dst, present, levels, seed_v, seed_level, seed_parent, nseeds):
    """Seed the head of every inserted edge that shortens its head's level."""
    for i in range(src.size):
        if not present[i]:
            continue
        u = src[i]
        v = dst[i]
        if levels[u] >= 0 and (levels[v] < 0 or levels[u] + 1 < levels[v]):
            seed_v[nseeds] = v
            seed_level[nseeds] = levels[u] + 1
            seed_parent[nseeds] = u
            nseeds += 1
    return nseeds


@njit(cache=True)
def relax(keys, eids, row_off, seed_v, seed_level, seed_parent, nseeds, parents, levels, queue, limit):
    """Apply the seeds and relax onward in increasing level. Returns the vertices labelled, or -1 once
    more than ``limit`` were (the caller then runs a full search instead).

    ``queue`` (n entries) holds one level's vertices after another. Labels only go down and levels are
    processed in increasing order, so a vertex is queued at most once per call; a stale entry (a level
    that no longer matches) would be skipped."""
    order = np.argsort(seed_level[:nseeds], kind="mergesort")
    labelled = 0
    head = 0
    tail = 0
    k = 0
    while k < nseeds or head < tail:
        # the current level: the lowest of the next seed and the queue's front
        level = levels[queue[head]] if head < tail else seed_level[order[k]]
        if k < nseeds and seed_level[order[k]] < level:
            level = seed_level[order[k]]
        while k < nseeds and seed_level[order[k]] == level:
            v = seed_v[order[k]]
            if levels[v] < 0 or level < levels[v]:
                levels[v] = level
                parents[v] = seed_parent[order[k]]
                if tail < queue.size:
                    queue[tail] = v
                    tail += 1
                labelled += 1
            k += 1
        end = tail
        while head < end:
            x = queue[head]
            head += 1
            if levels[x] != level:
                continue  # stale: re-labelled lower since it was queued
            for s in range(row_off[x], row_off[x + 1]):
                if eids[s] < 0:
                    continue
                y = keys[s] & WALL_LOW
                if levels[y] < 0 or level + 1 < levels[y]:
                    levels[y] = level + 1
                    parents[y] = x
                    labelled += 1
                    if labelled > limit or tail >= queue.size:
                        return -1
                    queue[tail] = y
                    tail += 1
    return labelled
