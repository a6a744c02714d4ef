"""The CPU runs of :func:`graphkern.bfs`: each takes the validated, planned search (the graph, the plan, the
source or sources and the switch thresholds) and returns its :class:`~graphkern.BFSResult` (a list, one per
source, for several).

The loop is GAP's direction-optimizing one (docs/design.md, section 'Direction-optimizing BFS'):
top-down while the frontier's out-edges are few, bottom-up while the frontier is large, with each level
one compiled parallel step (:mod:`graphkern.kernels.cpu.bfs`); bottom-up steps scan in-edges, so they need
the CSC (built on first use and cached). A DynamicGraph without a current snapshot is searched top-down
straight over its packed arrays; batched sources run as MS-BFS (graphkern._bfs_multi). Scratch buffers
live with the graph between searches. The CUDA twin is ``graphkern._cuda.bfs``, with the same functions.
"""

from __future__ import annotations

import time

import numpy as np

from .. import _memory, tuning
from .._bfs_multi import _multi_source
from .._bfs_result import BFSResult, _SerialLevels
from .._bfs_scratch import private_maps_size
from .._fair_share import fair_share
from ..dispatch import Kernel
from ..kernels.cpu import bfs as _bfs
from ..kernels.cpu import bfs_serial as _serial

__all__ = ["search", "searches"]


def search(g, the_plan, source: int, alpha: float, beta: float) -> BFSResult:
    """The search from ``source`` the plan chose: top-down over a DynamicGraph's packed arrays, or the
    plan's algorithm over the graph's formats."""
    if the_plan.kernel is Kernel.BFS_PACKED_TOP_DOWN:
        return _search_packed(g, source)
    with fair_share():  # levels are short parallel steps (graphkern._fair_share)
        return _search(g, source, the_plan.params["algorithm"], alpha, beta)


def searches(g, the_plan, sources: list[int], alpha: float, beta: float) -> list[BFSResult]:
    """The searches from each of ``sources``, in order: batched (MS-BFS) when the plan says so, else one
    after another."""
    if the_plan.kernel is Kernel.BFS_PACKED_TOP_DOWN:
        return [_search_packed(g, s) for s in sources]
    with fair_share():
        if the_plan.kernel is Kernel.BFS_MULTI_SOURCE:
            return _multi_source(g, sources)
        return [_search(g, s, the_plan.params["algorithm"], alpha, beta) for s in sources]


def _search_packed(dg, source: int) -> BFSResult:
    """Top-down levels over a DynamicGraph's packed arrays (each level one parallel step)."""
    import numba

    n = dg.num_nodes
    parents = _memory.full(n, -1, np.int64)
    levels = _memory.full(n, -1, np.int64)
    parents[source] = source
    levels[source] = 0
    next_front = np.zeros(n, dtype=np.uint8)
    queue = np.empty(n, dtype=np.int64)
    frontier = np.array([source], dtype=np.int64)
    parts = max(1, numba.get_num_threads() * 8)
    trace = []
    level = 0
    while frontier.size:
        level += 1
        t0 = time.perf_counter()
        found = _bfs.packed_top_down_step(dg._keys, dg._eids, dg._row_off, frontier, parts, parents, levels, level,
                                          next_front)
        frontier = _bfs.bitmap_to_queue(next_front, queue, True)[:found].copy() if found else frontier[:0]
        trace.append((level, "top_down", -1, int(found), time.perf_counter() - t0))
    return BFSResult(parents, levels, source, "top_down", trace)


def _hubs(g, in_indptr, in_indices, out_indptr):
    """The graph's hub index for bottom-up steps (``hubs[v]``: the in-neighbour of ``v`` with the highest
    out-degree), built at the second search that steps bottom-up and cached with the graph; None before,
    and None on a graph whose degrees are not skewed (the knob ``bfs_hub_min_skew``).

    A bottom-up vertex tries its hub before reading its row: in a power-law graph the hubs join the
    frontier early, so most vertices find their parent without touching the in-edges (measured by
    ``python tools/compare_peers.py --family bfs``). Building it is one pass over the in-edges, about
    the cost of a few searches, so a graph searched once does not pay for it."""
    hubs = g._cache.get("bfs_hubs")
    if hubs is not None:
        return hubs
    skewed = g._cache.get("bfs_degrees_skewed")
    if skewed is None:
        skewed = g._cache["bfs_degrees_skewed"] = _degrees_skewed(out_indptr)
    if not skewed:
        return None
    seen = g._cache.get("bfs_bottom_up_searches", 0)
    g._cache["bfs_bottom_up_searches"] = seen + 1
    if seen == 0:
        return None
    hubs = np.empty(g.num_dst, dtype=in_indices.dtype)
    _bfs.in_neighbour_hubs(in_indptr, in_indices, out_indptr, hubs)
    g._cache["bfs_hubs"] = hubs
    return hubs


def _degrees_skewed(out_indptr) -> bool:
    """Whether some vertex has at least ``bfs_hub_min_skew`` (a knob) times the mean out-degree: on a graph
    without hubs the index finds no early parents and its build costs two or three searches."""
    num = out_indptr.size - 1
    if num == 0 or out_indptr[num] == 0:
        return False
    largest = int(np.max(out_indptr[1:] - out_indptr[:-1]))
    return largest >= tuning.current().bfs_hub_min_skew * int(out_indptr[num]) / num


def _vertices_with_edges(g, indptr) -> int:
    """Vertices of non-zero out-degree (cached with the graph): what a search can still claim, at most,
    is bounded by these less the ones it reached (a heuristic bound: on a directed graph a vertex is
    reached by its in-edges)."""
    count = g._cache.get("bfs_vertices_with_edges")
    if count is None:
        count = g._cache["bfs_vertices_with_edges"] = int(np.count_nonzero(indptr[1:] != indptr[:-1]))
    return count


def _borrow(g, borrowed: dict, key: str, fits, make):
    """The scratch buffer ``key`` kept with the graph, taken out of its cache for one search (``borrowed``
    holds it until :func:`_search` puts it back), or a new one from ``make()`` when the cache has none
    that ``fits``. Two searches of one graph at once (from two Python threads) so never share scratch:
    the second finds the cache empty and makes its own."""
    buf = borrowed.get(key)
    if buf is None:
        buf = g._cache.pop(key, None)
    if buf is None or not fits(buf):
        buf = make()
    borrowed[key] = buf
    return buf


def _claim_buffers(g, borrowed: dict, n: int, parts: int, dtype):
    """The top-down claim buffers (``claim_v``, ``claim_u``, ``fills``, ``counter``), kept with the graph."""
    size = _bfs.claim_buffer_size(n, parts)
    return _borrow(g, borrowed, "bfs_claims", lambda b: b[0].size >= size,
                   lambda: (np.empty(size, dtype=dtype), np.empty(size, dtype=dtype),
                            np.zeros(size // _bfs.CLAIM_CHUNK + 1, dtype=np.int64), np.zeros(1, dtype=np.int64)))


def _private_maps(g, borrowed: dict, words: int):
    """One visited map per thread for :func:`top_down_step_private` (kept with the graph), or None when
    they would take more than the knob ``bfs_private_maps_max_bytes``. A thread's map lives in its own cache, where
    the shared map's lines travel between cores on every claim (the asv benchmarks ``BFS`` and
    ``TopDownSharedMap`` compare the two)."""
    workers, _, fits = private_maps_size(words)
    if not fits:
        return None
    return _borrow(g, borrowed, "bfs_private_maps", lambda m: m.shape == (workers, words),
                   lambda: np.empty((workers, words), dtype=np.uint64))


def _search(g, source: int, algorithm: str, alpha: float, beta: float) -> BFSResult:
    """One search; its scratch buffers are borrowed from the graph's cache and put back afterwards."""
    borrowed = {}
    try:
        return _search_levels(g, source, algorithm, alpha, beta, borrowed)
    finally:
        g._cache.update(borrowed)


def _in_rows_sorted(g) -> bool:
    """Whether each vertex's in-neighbours are listed in ascending order (checked once per graph): the
    SpMSV pull then stops at the highest-labelled parent."""
    flag = g._cache.get("in_adjacency_sorted")
    if flag is None:
        from ..kernels.cpu.sort import rows_are_sorted

        flag = g._cache["in_adjacency_sorted"] = bool(rows_are_sorted(*g._in_adjacency()))
    return flag


def _search_levels(g, source: int, algorithm: str, alpha: float, beta: float, borrowed: dict) -> BFSResult:
    import numba

    n = g.num_src
    indptr, indices, _ = g._raw("csr")
    in_indptr = in_indices = None
    if algorithm != "top_down":
        in_indptr, in_indices = g._in_adjacency()
    dtype = g.idtype
    # work buffers live with the graph between searches (first-touch page faults cost as much as a level)
    work = _borrow(g, borrowed, "bfs_work", lambda w: True,
                   lambda: [np.empty(n + 1, dtype=dtype), np.empty(n + 1, dtype=dtype), np.zeros(n, dtype=np.uint8),
                            np.zeros(n, dtype=np.uint8), np.zeros((n + 63) // 64, dtype=np.uint64),
                            np.zeros((n + 63) // 64, dtype=np.uint64), np.empty(n + 1, dtype=dtype)])
    # frontiers are views into the queue buffers (n + 1 places: see top_down_serial_levels); `before` is
    # the visited map as a top-down level found it; `by[k]` the vertex that found serial queue place k
    queue_buf, spare_buf, front, next_front, visited, before, by = work
    # results come from the recycled output maps: fresh pages cost page faults on every search, the
    # pool does not (graphkern._memory)
    parents = _memory.empty(n, dtype)
    levels = _memory.empty(n, dtype)
    _bfs.init_search(parents, levels, visited, source)
    trace = []
    frontier = np.array([source], dtype=dtype)
    next_front.fill(0)
    knobs = tuning.current()  # one reading for the whole search
    parts = max(1, numba.get_num_threads() * knobs.parts_per_thread)
    slots_below = n // max(1, knobs.bfs_slots_below)
    levels_per_call = max(1, knobs.bfs_serial_levels_per_call)
    level = 0
    edges_to_check = g.num_edges
    scout = int(indptr[source + 1] - indptr[source])
    previous = -1  # the last top-down frontier's out-edges: bottom-up only on a growing frontier
    spmsv = algorithm == "spmsv"
    best = _memory.full(n, -1, dtype) if spmsv else None
    hubs, hubs_looked_up = None, False
    reached = 1  # vertices with a level so far
    next_part = np.zeros(1, dtype=np.int64)  # the private top-down step's work counter
    chunk_scouts = np.empty(_bfs.claim_chunks(visited.size), dtype=np.int64)  # claimed_vertices' chunk sums
    chunk_starts = np.empty(chunk_scouts.size + 1, dtype=np.int64)
    next_bounds = None  # the next top-down level's parts, when claimed_vertices listed its frontier

    while frontier.size:
        listed_bounds, next_bounds = next_bounds, None  # only for the frontier the last level listed
        bottom_up = algorithm == "bottom_up" or (
            algorithm in ("direction_optimizing", "spmsv") and scout > edges_to_check / alpha and scout > previous)
        if bottom_up:
            awake = frontier.size
            _bfs.queue_to_bitmap(frontier, front)
            # a byte per vertex: faster than GAP's bit map on the big levels while the byte map still
            # fits the L2 (`python tools/compare_peers.py --family bfs`)
            if spmsv:
                pull = _bfs.spmsv_pull_step_sorted if _in_rows_sorted(g) else _bfs.spmsv_pull_step
            else:
                if not hubs_looked_up:  # once a search: _hubs counts the searches
                    hubs = _hubs(g, in_indptr, in_indices, indptr)
                    hubs_looked_up = True

                def pull(in_indptr, in_indices, front, next_front, parents, levels, level, hubs=hubs):
                    return _bfs.bottom_up_step(in_indptr, in_indices, hubs if hubs is not None else in_indptr,
                                               hubs is not None, front, next_front, parents, levels, level)
            while True:
                old = awake
                level += 1
                t0 = time.perf_counter()
                awake = pull(in_indptr, in_indices, front, next_front, parents, levels, level)
                reached += int(awake)
                front, next_front = next_front, front
                trace.append((level, "pull" if spmsv else "bottom_up", old, int(awake), time.perf_counter() - t0))
                if awake == 0:
                    break
                if algorithm != "bottom_up" and not (awake >= old or awake > n / beta):
                    break
            frontier = _bfs.bitmap_to_queue(front, queue_buf, True)
            queue_buf, spare_buf = spare_buf, queue_buf
            next_front.fill(0)  # it holds the level before last; top-down steps expect an empty map
            if algorithm != "bottom_up" and not spmsv:
                _bfs.visited_bits_from_parents(parents, visited)
            if algorithm == "bottom_up":
                break
            scout, previous = 1, -1
            continue
        if not spmsv and scout < knobs.bfs_serial_level_edges:
            t0 = time.perf_counter()
            # the frontier is never in queue_buf at the top of the loop (each step leaves it in spare_buf)
            found_per_level = _borrow(g, borrowed, "bfs_serial_found", lambda f: f.size == levels_per_call,
                                      lambda: np.empty(levels_per_call, dtype=np.int64))
            queue_buf[:frontier.size] = frontier
            first = frontier.size
            start, count, last_level, scout, previous, edges_to_check, done = _serial.top_down_serial_levels(
                indptr, indices, queue_buf, by, first, visited, level, scout, previous, knobs.bfs_serial_level_edges,
                edges_to_check, float(alpha) if algorithm == "direction_optimizing" else 0.0, found_per_level)
            # the run's parents and levels, from its queue: in parallel when it found many vertices
            record = (_serial.record_serial_levels if count - first >= knobs.bfs_parallel_record_from
                      else _serial.record_serial_levels_one_thread)
            record(queue_buf, by, first, found_per_level[:done], level + 1, parents, levels)
            if done:
                trace.append(_SerialLevels(level + 1, int(first), found_per_level[:done].copy(),
                                           time.perf_counter() - t0))
                reached += int(count - first)
                level = int(last_level)
                scout, previous = int(scout), int(previous)
                frontier = queue_buf[start:count]
                queue_buf, spare_buf = spare_buf, queue_buf
                continue
        edges_to_check -= scout
        previous = scout
        level += 1
        t0 = time.perf_counter()
        if not spmsv and scout < slots_below:
            # few out-edges: collect the claimed vertices in slots instead of scanning a map of all n
            offsets = np.empty(frontier.size + 1, dtype=np.int64)
            total = _bfs.frontier_degree_offsets(indptr, frontier, offsets)
            slots = np.empty(total, dtype=dtype)
            scout = int(_bfs.top_down_step_slots(indptr, indices, frontier, offsets, parents, levels, level, slots,
                                                 visited))
            found = slots[slots >= 0]
            reached += found.size
            trace.append((level, "top_down", int(frontier.size), int(found.size), time.perf_counter() - t0))
            frontier = found
            continue
        bounds = _bfs.degree_balanced_bounds(indptr, frontier, parts) if listed_bounds is None else listed_bounds
        if spmsv:
            _bfs.spmsv_push_step(indptr, indices, frontier, bounds, parents, best, next_front)
            found = _bfs.bitmap_to_queue(next_front, queue_buf, True)
            _bfs.spmsv_commit(found, best, parents, levels, level)
            scout = int(_bfs.sum_degrees(indptr, found)) if found.size else 0
            reached += found.size
        else:
            # claims set bits of `visited`; the bits the level set are the next frontier. With a private map
            # per thread each claims on its own copy and the copies are ORed in afterwards. On one shared
            # map (too many threads for that) the gather reads the map as the level found it when few
            # claims can come of many edges (at most the vertices with edges not reached yet: the lines
            # claims write then stay out of the other core's gathers), else the live map (many claims: it
            # filters the repeats). See top_down_step_private and top_down_step.
            maps = _private_maps(g, borrowed, visited.size)
            if maps is not None:
                _bfs.top_down_step_private(indptr, indices, frontier, bounds, visited, maps, maps.view(indices.dtype),
                                           parents, next_part)
                claimed, known = maps, visited
            else:
                np.copyto(before, visited)
                unreached = max(_vertices_with_edges(g, indptr) - reached, 0)
                words = before if scout > knobs.bfs_stale_gather_edges_per_claim * unreached else visited
                claim_v, claim_u, fills, counter = _claim_buffers(g, borrowed, n, bounds.size - 1, dtype)
                counter[0] = 0
                _bfs.top_down_step(indptr, indices, frontier, bounds, claim_v, claim_u, fills, counter, visited,
                                   words.view(indices.dtype))
                _bfs.write_claimed_parents(claim_v, claim_u, fills, counter, parents)
                claimed, known = visited[None, :], before  # `before` becomes a copy of `visited` again
            count, scout = _bfs.claimed_vertices(claimed, known, indptr, levels, level, queue_buf, chunk_starts,
                                                 chunk_scouts)
            found, scout = queue_buf[:count], int(scout)
            if scout >= slots_below:  # the next level scans the map too: split it by the chunk sums
                next_bounds = _bfs.bounds_from_chunks(chunk_starts, chunk_scouts, parts)
            reached += int(count)
        queue_buf, spare_buf = spare_buf, queue_buf
        trace.append((level, "push" if spmsv else "top_down", int(frontier.size), int(found.size),
                      time.perf_counter() - t0))
        frontier = found
    return BFSResult(parents, levels, source, algorithm, trace)
