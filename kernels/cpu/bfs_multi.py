"""Multi-source BFS (MS-BFS, Then et al., VLDB 2015): up to 64 searches share one pass over the edges.

Vertex v carries three 64-bit masks, bit i for search i: seen (reached), frontier (reached at the last
level) and next. A level ORs the frontier masks of v's in-neighbours into v (pull) or pushes each frontier
vertex's mask to its out-neighbours (push, for small frontiers); every newly set bit i records the parent
of v in search i. Searches that reach v earlier stop costing anything at v. The driver is
:mod:`graphkern._bfs_multi`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_DEBRUIJN64 = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_INDEX = np.array([
    0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4, 62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33, 30,
    24, 18, 12, 5, 63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11, 46, 26, 40, 15, 34, 20, 31,
    10, 25, 14, 19, 9, 13, 8, 7, 6], dtype=np.int64)


@njit(cache=True, inline="always")
def _lowest_bit(mask):
    """Index of the lowest set bit of a non-zero uint64 (de Bruijn multiplication)."""
    low = mask & (~mask + np.uint64(1))
    return _DEBRUIJN_INDEX[(low * _DEBRUIJN64) >> np.uint64(58)]


@njit(cache=True, inline="always")
def _record_bits(new, v, u, parents, levels, level):
    while new != np.uint64(0):
        b = _lowest_bit(new)
        parents[b, v] = u
        levels[b, v] = level
        new &= new - np.uint64(1)


@njit(parallel=True, cache=True)
def msbfs_pull_level(in_indptr, in_indices, bounds, frontier, seen, next_frontier, full, parents, levels, level):
    """One pull level for every vertex; returns how many vertices gained a bit."""
    found = 0
    for t in prange(bounds.size - 1):
        for v in range(bounds[t], bounds[t + 1]):
            have = seen[v]
            if have == full:
                next_frontier[v] = np.uint64(0)
                continue
            gained = np.uint64(0)
            for k in range(in_indptr[v], in_indptr[v + 1]):
                u = in_indices[k]
                new = frontier[u] & ~(have | gained)
                if new != np.uint64(0):
                    gained |= new
                    _record_bits(new, v, u, parents, levels, level)
                    if (have | gained) == full:
                        break
            next_frontier[v] = gained
            if gained != np.uint64(0):
                seen[v] = have | gained
                found += 1
    return found


@njit(cache=True)
def msbfs_push_level(indptr, indices, front_list, frontier, seen, next_frontier, parents, levels, level, found_list):
    """One push level from the listed frontier vertices (sequential: it runs when they are few).
    ``next_frontier`` must be all zero; the vertices it sets are listed in ``found_list``. Afterwards the
    listed entries of ``frontier`` are cleared, so that it can serve as the next level's zeroed array."""
    found = 0
    for i in range(front_list.size):
        u = front_list[i]
        mask = frontier[u]
        for k in range(indptr[u], indptr[u + 1]):
            v = indices[k]
            new = mask & ~seen[v]
            if new != np.uint64(0):
                if next_frontier[v] == np.uint64(0):
                    found_list[found] = v
                    found += 1
                seen[v] |= new
                next_frontier[v] |= new
                _record_bits(new, v, u, parents, levels, level)
    for i in range(front_list.size):
        frontier[front_list[i]] = np.uint64(0)
    return found


@njit(parallel=True, cache=True)
def fill_unreached(parents, levels):
    """``-1`` everywhere, in parallel: the first touch of fresh (searches x n) outputs costs a page fault
    per page on these VMs, and spreading the faults over the threads halves that cost."""
    flat_p = parents.reshape(-1)
    flat_l = levels.reshape(-1)
    for i in prange(flat_p.size):
        flat_p[i] = -1
        flat_l[i] = -1
