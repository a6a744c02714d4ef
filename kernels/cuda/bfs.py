"""BFS steps on the GPU: top-down (push from a frontier queue, a vertex claimed by compare-and-swap on
its parent), bottom-up (pull: every unvisited vertex scans its in-neighbours against a byte-per-vertex
frontier map and stops at the first hit), and the linear-algebra step of ``spmsv`` (every newly reached
vertex takes its highest-labelled frontier neighbour, by ``atomic.max`` when pushing and by a full scan
when pulling). The host loop in graphkern.traversal decides the direction per level from two counters
the steps leave on the device (vertices found, out-edges of the new frontier).

Same step names as :mod:`graphkern.kernels.cpu.bfs` where the step is the same.
"""

from __future__ import annotations

from numba import cuda


@cuda.jit
def init_search(parents, levels, source):
    for v in range(cuda.grid(1), parents.size, cuda.gridsize(1)):
        parents[v] = source if v == source else -1
        levels[v] = 0 if v == source else -1


@cuda.jit
def top_down_step(indptr, indices, frontier, frontier_size, parents, levels, level, next_frontier, counters):
    """Push from ``frontier[:frontier_size]``; ``counters[0]`` += vertices found (appended to
    ``next_frontier``), ``counters[1]`` += their out-edges."""
    for i in range(cuda.grid(1), frontier_size, cuda.gridsize(1)):
        u = frontier[i]
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            if parents[v] == -1 and cuda.atomic.cas(parents, v, -1, u) == -1:
                levels[v] = level
                slot = cuda.atomic.add(counters, 0, 1)
                next_frontier[slot] = v
                cuda.atomic.add(counters, 1, indptr[v + 1] - indptr[v])


@cuda.jit
def bottom_up_step(in_indptr, in_indices, out_indptr, front, next_front, parents, levels, level, counters):
    """Pull: each unvisited vertex takes its first in-neighbour (CSC order) in ``front``."""
    for v in range(cuda.grid(1), parents.size, cuda.gridsize(1)):
        next_front[v] = 0
        if parents[v] != -1:
            continue
        for j in range(in_indptr[v], in_indptr[v + 1]):
            u = in_indices[j]
            if front[u]:
                parents[v] = u
                levels[v] = level
                next_front[v] = 1
                cuda.atomic.add(counters, 0, 1)
                cuda.atomic.add(counters, 1, out_indptr[v + 1] - out_indptr[v])
                break


@cuda.jit
def spmsv_push_step(indptr, indices, frontier, frontier_size, parents, best, touched, counters):
    """The push half of the masked product: ``best[v] = max`` frontier in-neighbour of every unvisited
    ``v``; the first thread to touch ``v`` lists it in ``touched``."""
    for i in range(cuda.grid(1), frontier_size, cuda.gridsize(1)):
        u = frontier[i]
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            if parents[v] == -1 and cuda.atomic.max(best, v, u) == -1:
                touched[cuda.atomic.add(counters, 0, 1)] = v


@cuda.jit
def spmsv_commit(touched, count, best, indptr, parents, levels, level, counters):
    for i in range(cuda.grid(1), count, cuda.gridsize(1)):
        v = touched[i]
        parents[v] = best[v]
        levels[v] = level
        best[v] = -1
        cuda.atomic.add(counters, 1, indptr[v + 1] - indptr[v])


@cuda.jit
def spmsv_pull_step(in_indptr, in_indices, out_indptr, front, next_front, parents, levels, level, counters):
    """Pull with the linear-algebra rule: the highest-labelled in-neighbour in ``front`` (no early exit)."""
    for v in range(cuda.grid(1), parents.size, cuda.gridsize(1)):
        next_front[v] = 0
        if parents[v] != -1:
            continue
        pick = -1
        for j in range(in_indptr[v], in_indptr[v + 1]):
            u = in_indices[j]
            if front[u] and u > pick:
                pick = u
        if pick >= 0:
            parents[v] = pick
            levels[v] = level
            next_front[v] = 1
            cuda.atomic.add(counters, 0, 1)
            cuda.atomic.add(counters, 1, out_indptr[v + 1] - out_indptr[v])


@cuda.jit
def mark_queue(frontier, frontier_size, bitmap):
    for i in range(cuda.grid(1), frontier_size, cuda.gridsize(1)):
        bitmap[frontier[i]] = 1


@cuda.jit
def clear_bytes(bitmap):
    for v in range(cuda.grid(1), bitmap.size, cuda.gridsize(1)):
        bitmap[v] = 0


@cuda.jit
def bitmap_to_queue(bitmap, queue, counters):
    """List the set vertices of ``bitmap`` (in no fixed order) and count them in ``counters[0]``."""
    for v in range(cuda.grid(1), bitmap.size, cuda.gridsize(1)):
        if bitmap[v]:
            queue[cuda.atomic.add(counters, 0, 1)] = v
