"""Batched breadth-first searches (MS-BFS) for :func:`graphkern.bfs` with several ``sources``.

Up to 64 searches share each pass over the edges, a bit per search in a 64-bit mask per vertex; each level
pushes from a small frontier or pulls along in-edges (the kernels are :mod:`graphkern.kernels.cpu.bfs_multi`).
"""

from __future__ import annotations

import time

import numpy as np

from . import _memory, tuning
from .kernels.cpu import bfs as _bfs
from .kernels.cpu import bfs_multi as _multi

# multi-source: searches share a pass over the edges in batches of 64, one bit each in a uint64 mask (a
# property of the kernels, not a knob); a level pushes from the frontier while its out-edges are under
# num_edges / bfs_multi_push_below (a knob of graphkern.tuning), else pulls
MS_BATCH = 64


def _multi_source(g, roots: list[int]) -> list:
    """Batched searches (MS-BFS): 64 at a time, each level a push from few frontier vertices or a pull;
    a list of :class:`graphkern.traversal.BFSResult`, one per root."""
    import numba

    from ._bfs_result import BFSResult
    from .kernels.cpu.partition import nnz_balanced_row_bounds

    n = g.num_src
    indptr, indices, _ = g._raw("csr")
    in_indptr, in_indices = g._in_adjacency()
    dtype = g.idtype
    knobs = tuning.current()
    push_below = max(1, knobs.bfs_multi_push_below)
    bounds = nnz_balanced_row_bounds(in_indptr, max(1, numba.get_num_threads() * knobs.parts_per_thread))
    seen = np.empty(n, dtype=np.uint64)
    frontier = np.empty(n, dtype=np.uint64)
    nxt = np.empty(n, dtype=np.uint64)
    listed = np.empty(n, dtype=dtype)
    spare = np.empty(n, dtype=dtype)
    results = []
    for start in range(0, len(roots), MS_BATCH):
        batch = roots[start:start + MS_BATCH]
        k = len(batch)
        full = np.uint64((1 << k) - 1) if k < 64 else np.uint64(0xFFFFFFFFFFFFFFFF)
        parents = _memory.empty((k, n), dtype)
        levels = _memory.empty((k, n), dtype)
        _multi.fill_unreached(parents, levels)
        seen.fill(0)
        frontier.fill(0)
        for i, s in enumerate(batch):
            bit = np.uint64(1 << i)
            seen[s] |= bit
            frontier[s] |= bit
            parents[i, s] = s
            levels[i, s] = 0
        front_list = np.unique(np.asarray(batch, dtype=dtype))
        nxt.fill(0)
        clean = True  # nxt is all zero (a push level needs that)
        trace = []
        level = 0
        while True:
            level += 1
            t0 = time.perf_counter()
            push = front_list is not None and _bfs.sum_degrees(indptr, front_list) < g.num_edges / push_below
            if push:
                if not clean:
                    nxt.fill(0)
                found_list = spare if front_list.base is not spare else listed
                found = _multi.msbfs_push_level(indptr, indices, front_list, frontier, seen, nxt, parents, levels,
                                              level, found_list)
                clean = True  # the push cleared the old frontier, which becomes the next nxt
            else:
                found = _multi.msbfs_pull_level(in_indptr, in_indices, bounds, frontier, seen, nxt, full, parents,
                                              levels, level)
                clean = False
            trace.append((level, "push" if push else "pull", -1, int(found), time.perf_counter() - t0))
            if found == 0:
                break
            frontier, nxt = nxt, frontier
            # the next level pushes only from a small frontier: after a push it is listed already; after a
            # pull, list it with one O(n) pass
            if found >= n // push_below:
                front_list = None
            elif push:
                front_list = found_list[:found]
            else:
                front_list = _bfs.bitmap_to_queue(frontier, listed, False)
        results += [BFSResult(parents[i], levels[i], s, "multi_source", trace) for i, s in enumerate(batch)]
    return results
