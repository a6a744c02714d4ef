"""Breadth-first search on one thread: the small top-down levels of :func:`graphkern.bfs`, and a queue BFS
in networkx's visiting order.

``top_down_serial_levels``  top-down levels back to back in one compiled call while the frontier's out-edges
                    stay few (a high-diameter graph: thousands of levels of a few hundred vertices). The
                    queue itself is the search's record: each vertex enters it once, with the vertex that
                    found it in ``by`` at the same place, and the levels are the runs
                    ``found_per_level`` counts. :func:`record_serial_levels` then writes ``parents`` and
                    ``levels`` from that record, in parallel.
``bfs_queue_order`` a sequential queue BFS in adjacency order (networkx's order).
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._intrinsics import prefetch_item

# A level first walks its frontier once, summing the out-degrees (the count the stopping rule needs) and
# prefetching each row's first line; this many places ahead of that walk it prefetches the row offsets.
OFFSETS_AHEAD = 16


@njit(cache=True)
def top_down_serial_levels(indptr, indices, queue, by, count, visited, level, scout, previous, edge_limit,
                           edges_left, alpha, found_per_level):
    """Top-down levels on one thread while the frontier's out-edges stay few: a FIFO queue in one call.

    ``queue[:count]`` is the frontier at ``level`` (``scout``: its out-edges, as the caller counted them)
    and ``visited`` the search's bit map (bit ``v & 63`` of word ``v >> 6``). Each level appends the
    vertices it claims after the frontier, and ``by[k]`` is the frontier vertex that claimed
    ``queue[k]``; ``found_per_level`` records how many each level claimed. ``queue`` and ``by`` need room
    for one item past every vertex (``n + 1``): each vertex enters once, and the claim loop writes its
    slot before it knows whether the vertex is new. Parents and levels are not written here
    (:func:`record_serial_levels` does that from ``queue``, ``by`` and ``found_per_level``).

    Stops before a level whose frontier has ``edge_limit`` out-edges or more (a parallel step pays off
    there), before one the direction-optimizing rule would step bottom-up (``scout * alpha >
    edges_left`` on a frontier with more out-edges than the last one, ``previous``; ``alpha`` 0 never
    does), when ``found_per_level`` is full, or when the frontier is empty. Returns ``(start, count,
    level, scout, previous, edges_left, levels_done)``: the frontier left is ``queue[start:count]``, with
    ``scout`` out-edges, and ``previous`` those of the last level run.

    Why it is written so. A level first walks its frontier: the row offsets (prefetched a few places
    ahead) give the out-degree sum the stopping rule needs and the start of each row, which it
    prefetches; every one of these loads is independent, so their cache misses overlap. The claim loop
    then finds its rows in cache and has no branch on the visited bit, which is as likely set as not on
    a grid-like graph: each out-neighbour is written to the queue's next slot unconditionally and the
    count moves on only when its bit was clear (the bit is set in the same step, so a repeat later in
    the level is not counted twice). No parent or level is written in the loop: those are stores to
    random lines of two arrays of ``n``, which a thread's stores wait on, and the queue and ``by`` are
    written in order. Measured on a shuffled grid (``python tools/compare_peers.py --family diameter``;
    figures in docs/performance.md)."""
    start = 0
    done = 0
    one64 = np.uint64(1)
    while count > start:
        end = count
        total = 0
        for i in range(start, end):
            if i + OFFSETS_AHEAD < end:
                prefetch_item(indptr, queue[i + OFFSETS_AHEAD])
            u = queue[i]
            row = indptr[u]
            prefetch_item(indices, row)
            total += indptr[u + 1] - row
        if done:  # the first frontier's out-edges are the caller's count (GAP's after a bottom-up step)
            scout = total
        if (done == found_per_level.size or scout >= edge_limit
                or (alpha > 0 and scout * alpha > edges_left and scout > previous)):
            break
        previous = scout
        edges_left -= scout
        level += 1
        for i in range(start, end):
            u = queue[i]
            for j in range(indptr[u], indptr[u + 1]):
                v = indices[j]
                w = v >> 6
                shift = np.uint64(v & 63)
                word = visited[w]
                visited[w] = word | (one64 << shift)
                queue[count] = v
                by[count] = u
                count += 1 - np.int64((word >> shift) & one64)
        found_per_level[done] = count - end
        done += 1
        start = end
    if count == start:
        scout = 0
    return start, count, level, scout, previous, edges_left, done


@njit(inline="always")
def _record(queue, by, first, ends, first_level, parents, levels, lo, hi):
    """``parents``/``levels`` of the queue places ``lo:hi`` (``ends[d]``: where level ``first_level + d``'s
    vertices end in the queue)."""
    d = np.searchsorted(ends, lo, side="right")
    for k in range(lo, hi):
        while k >= ends[d]:
            d += 1
        v = queue[k]
        parents[v] = by[k]
        levels[v] = first_level + d


@njit(cache=True)
def _level_ends(first, found):
    ends = np.empty(found.size, dtype=np.int64)
    acc = first
    for d in range(found.size):
        acc += found[d]
        ends[d] = acc
    return ends


@njit(parallel=True, cache=True)
def record_serial_levels(queue, by, first, found, first_level, parents, levels):
    """Write what :func:`top_down_serial_levels` found: the vertices at queue places ``first`` on, level by
    level (``found``: how many each level holds, the first being ``first_level``), get ``parents[v] =
    by[k]`` and ``levels[v]``. Each vertex is in the queue once, so the parts write disjoint places; the
    stores are random lines, and two threads keep twice as many of them in flight."""
    ends = _level_ends(first, found)
    total = ends[-1] - first if ends.size else 0
    parts = max(1, min(64, total // 4096))
    for p in prange(parts):
        _record(queue, by, first, ends, first_level, parents, levels, first + (total * p) // parts,
                first + (total * (p + 1)) // parts)


@njit(cache=True)
def record_serial_levels_one_thread(queue, by, first, found, first_level, parents, levels):
    """:func:`record_serial_levels` without a parallel launch, for a few vertices."""
    ends = _level_ends(first, found)
    if ends.size:
        _record(queue, by, first, ends, first_level, parents, levels, first, ends[-1])


@njit(cache=True)
def bfs_queue_order(indptr, indices, sources, depth_limit, levels, parents, order):
    """Sequential queue BFS in adjacency order: the exact visiting order of networkx's BFS.

    ``order`` receives the vertices as they are discovered (the sources first, each once); a vertex's
    parent is the first dequeued vertex that lists it, its neighbours are taken in slot order, and no
    vertex at level ``depth_limit`` is expanded. ``levels``/``parents`` must hold -1. Returns how many
    vertices were reached. Sequential on purpose: networkx's order is a property of one queue.
    """
    count = 0
    for i in range(sources.size):
        s = sources[i]
        if levels[s] < 0:
            levels[s] = 0
            parents[s] = s
            order[count] = s
            count += 1
    head = 0
    while head < count:
        u = order[head]
        head += 1
        if levels[u] >= depth_limit:
            continue
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            if levels[v] < 0:
                levels[v] = levels[u] + 1
                parents[v] = u
                order[count] = v
                count += 1
    return count
