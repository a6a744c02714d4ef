"""Breadth-first search on the CPU: top-down, bottom-up, direction-optimizing and the linear-algebra form.

All searches write ``parents`` (``parents[source] == source``, -1 unreached) and ``levels`` (hops, -1
unreached). Directed graphs are searched along out-edges: top-down steps read the CSR, bottom-up steps
the CSC (in-edges). Each level is one parallel kernel call driven from Python (a few per search).

``top_down_step_private``  frontier-parallel; each worker claims a vertex on its own copy of the visited
                    map (a plain store) and writes its parent; the copies are ORed together and the next
                    frontier is read off the bits the level set (``claimed_vertices``), in order, with no
                    shared queue. A vertex two workers reach in one level gets either as parent.
``top_down_step``   the same on one shared map, for when a map per thread takes too much memory: a
                    vertex is claimed by compare-and-swap on its bit, so exactly one frontier vertex
                    becomes its parent. Small frontiers use ``top_down_step_slots`` (a CAS on the
                    parent, output slots from the frontier's degree prefix sums).
``bottom_up_step``  vertex-parallel over the unvisited; each tries its hub (the in-neighbour of highest
                    out-degree, when the graph has that index) and then scans its in-neighbours, stopping
                    at the first one in the frontier (a byte map). Each vertex is written by one thread.
``spmsv_*``         the linear-algebraic form: the next frontier is A^T x over (select-second, max) masked
                    by the unvisited set, so each new vertex takes its highest-labelled frontier
                    neighbour as parent (deterministic). Push (sparse frontier, atomic max) or pull
                    (dense, masked) per level.

Top-down levels of few out-edges run back to back on one thread (:mod:`.bfs_serial`, with the queue BFS in
networkx's order); batched searches are :mod:`.bfs_multi`.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._intrinsics import atomic_cas, popcount, prefetch_item
from ._simd import vand, vbits, vgather, vint, vload_at, vmask, vshl, vshr, vzero_lanes

# the one-thread and multi-source kernels live in their own modules; their names stay importable from here
from .bfs_multi import _lowest_bit, fill_unreached, msbfs_pull_level, msbfs_push_level  # noqa: F401
from .bfs_serial import bfs_queue_order, top_down_serial_levels  # noqa: F401


@njit(parallel=True, cache=True)
def frontier_degree_offsets(indptr, frontier, offsets):
    """``offsets[i+1] - offsets[i] = degree(frontier[i])``; returns the total (the edges a step scans)."""
    n = frontier.size
    deg = np.empty(n, dtype=offsets.dtype)
    for i in prange(n):
        u = frontier[i]
        deg[i] = indptr[u + 1] - indptr[u]
    offsets[0] = 0
    acc = 0
    for i in range(n):
        acc += deg[i]
        offsets[i + 1] = acc
    return acc


def degree_balanced_bounds(indptr, frontier, parts):
    """Bounds of ``parts`` frontier ranges with about equal out-degree sums."""
    offsets = np.empty(frontier.size + 1, dtype=np.int64)
    total = frontier_degree_offsets(indptr, frontier, offsets)
    targets = (np.arange(1, parts, dtype=np.int64) * total) // max(parts, 1)
    inner = np.searchsorted(offsets, targets, side="right") - 1
    bounds = np.concatenate([[0], np.clip(inner, 0, frontier.size), [frontier.size]]).astype(np.int64)
    return np.maximum.accumulate(bounds)


@njit(parallel=True, cache=True)
def queue_to_bitmap(frontier, bitmap):
    bitmap[:] = 0
    for i in prange(frontier.size):
        bitmap[frontier[i]] = 1


# Bottom-up and pull steps prefetch the start of the in-edge row this many vertices ahead: a row is read
# only up to its first frontier hit, so consecutive rows are touched at their starts, a pattern the
# hardware prefetcher does not follow (measured by `python tools/compare_peers.py --family bfs`).
ROW_AHEAD = 32


@njit(parallel=True, cache=True)
def bottom_up_step(in_indptr, in_indices, hubs, has_hubs, front, next_front, parents, levels, level):
    """Every unvisited vertex takes an in-neighbour found in ``front``; returns how many did.

    With ``has_hubs``, ``hubs[v]`` (:func:`in_neighbour_hubs`) is tried first: the in-neighbour of
    highest out-degree is the likeliest to be in the frontier, and a hit costs no read of the row.
    Otherwise the row is scanned in CSC order up to its first frontier vertex."""
    n = parents.size
    awake = 0
    for v in prange(n):
        next_front[v] = 0
        if v + ROW_AHEAD < n:
            prefetch_item(in_indices, in_indptr[v + ROW_AHEAD])
        if parents[v] == -1:
            if has_hubs:
                h = hubs[v]
                if h >= 0 and front[h]:
                    parents[v] = h
                    levels[v] = level
                    next_front[v] = 1
                    awake += 1
                    continue
            for j in range(in_indptr[v], in_indptr[v + 1]):
                u = in_indices[j]
                if front[u]:
                    parents[v] = u
                    levels[v] = level
                    next_front[v] = 1
                    awake += 1
                    break
    return awake


@njit(parallel=True, cache=True)
def in_neighbour_hubs(in_indptr, in_indices, out_indptr, hubs):
    """``hubs[v]``: the in-neighbour of ``v`` with the highest out-degree (the first in CSC order among
    equals), -1 for a vertex without in-edges. One pass over the in-edges."""
    for v in prange(in_indptr.size - 1):
        best = -1
        best_degree = -1
        for j in range(in_indptr[v], in_indptr[v + 1]):
            u = in_indices[j]
            d = out_indptr[u + 1] - out_indptr[u]
            if d > best_degree:
                best_degree = d
                best = u
        hubs[v] = best


@njit(cache=True)
def bitmap_to_queue(bitmap, out, clear):
    """The set vertices of ``bitmap`` in ascending order (written to ``out``); optionally clears them."""
    count = 0
    for v in range(bitmap.size):
        if bitmap[v]:
            out[count] = v
            count += 1
            if clear:
                bitmap[v] = 0
    return out[:count]


@njit(parallel=True, cache=True)
def spmsv_push_step(indptr, indices, frontier, bounds, parents, best, next_front):
    """Push: ``best[v] = max(u in frontier, u -> v)`` for unvisited ``v`` (atomic max by CAS), and
    ``next_front[v] = 1``; :func:`spmsv_commit` then makes ``best`` the parents."""
    for p in prange(bounds.size - 1):
        for i in range(bounds[p], bounds[p + 1]):
            u = frontier[i]
            for j in range(indptr[u], indptr[u + 1]):
                v = indices[j]
                if parents[v] != -1:
                    continue
                cur = best[v]
                while cur < u:
                    seen = atomic_cas(best, v, cur, u)
                    if seen == cur:
                        next_front[v] = 1
                        break
                    cur = seen


@njit(parallel=True, cache=True)
def spmsv_commit(new_vertices, best, parents, levels, level):
    for i in prange(new_vertices.size):
        v = new_vertices[i]
        parents[v] = best[v]
        levels[v] = level
        best[v] = -1


@njit(parallel=True, cache=True)
def spmsv_pull_step(in_indptr, in_indices, front, next_front, parents, levels, level):
    """Pull (masked dot): every unvisited vertex takes its highest-labelled in-neighbour in ``front``.

    Parents are written after the scan of each vertex, so a vertex found at this level never serves as
    a frontier vertex of the same level (the frontier is ``front``, not ``parents``)."""
    n = parents.size
    awake = 0
    for v in prange(n):
        next_front[v] = 0
        if v + ROW_AHEAD < n:
            prefetch_item(in_indices, in_indptr[v + ROW_AHEAD])
        if parents[v] == -1:
            top = -1
            for j in range(in_indptr[v], in_indptr[v + 1]):
                u = in_indices[j]
                if front[u] and u > top:
                    top = u
            if top >= 0:
                parents[v] = top
                levels[v] = level
                next_front[v] = 1
                awake += 1
    return awake


@njit(parallel=True, cache=True)
def sum_degrees(indptr, frontier):
    total = 0
    for i in prange(frontier.size):
        u = frontier[i]
        total += indptr[u + 1] - indptr[u]
    return total


@njit(parallel=True, cache=True)
def top_down_step_slots(indptr, indices, frontier, offsets, parents, levels, level, slots, visited):
    """Top-down for small frontiers: claimed vertices go to the slot range of the vertex that claimed
    them (``offsets`` are the frontier's degree prefix sums); unused slots get -1. Cheaper than a
    scan of the visited map when the frontier's out-edges are few. A vertex is claimed as in
    :func:`top_down_step`, by a compare-and-swap on its visited bit: the map stays exact, which the
    next level's claims rely on."""
    scout = 0
    one64 = np.uint64(1)
    for i in prange(frontier.size):
        u = frontier[i]
        pos = offsets[i]
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            w = v >> 6
            bit = one64 << np.uint64(v & 63)
            word = visited[w]
            while not (word & bit):
                held = atomic_cas(visited, w, word, word | bit)
                if held == word:
                    parents[v] = u
                    levels[v] = level
                    slots[pos] = v
                    pos += 1
                    scout += indptr[v + 1] - indptr[v]
                    break
                word = held
        for k in range(pos, offsets[i + 1]):
            slots[k] = -1
    return scout


@njit(parallel=True, cache=True)
def init_search(parents, levels, visited, source):
    for v in prange(parents.size):
        parents[v] = -1
        levels[v] = -1
    for w in prange(visited.size):
        visited[w] = 0
    parents[source] = source
    levels[source] = 0
    visited[source >> 6] = np.uint64(1) << np.uint64(source & 63)


# Top-down steps prefetch the row offsets of the frontier vertex this many places ahead, and the row's
# first line fewer places ahead (a frontier of many short rows is a chain of cache misses otherwise). A
# level of hundreds of thousands of frontier vertices with a few edges each needs the distance; shorter
# distances measured slower (top-down rows of `python tools/compare_peers.py --family bfs`, figures in
# docs/performance.md).
FRONTIER_AHEAD = 96
ROW_START_AHEAD = 32


@njit(inline="always")
def _prefetch_rows_ahead(indptr, indices, frontier, i):
    """Prefetch the row offsets of frontier vertex ``i + FRONTIER_AHEAD`` and the first line of the row
    of vertex ``i + ROW_START_AHEAD`` (whose offsets came in earlier)."""
    if i + FRONTIER_AHEAD < frontier.size:
        prefetch_item(indptr, frontier[i + FRONTIER_AHEAD])
    if i + ROW_START_AHEAD < frontier.size:
        prefetch_item(indices, indptr[frontier[i + ROW_START_AHEAD]])


@njit(inline="always")
def _unvisited_lanes(indices, j, end, words, shift, low, one):
    """Bit ``k`` set for each neighbour ``indices[j + k]`` (``j + k < end``, up to sixteen) whose bit in
    the map ``words`` is clear: one vector load, one gather of the words, one bit test."""
    lanes = vmask(end - j, 16)
    neighbours = vload_at(indices, j, lanes)
    seen = vgather(words, vshr(neighbours, shift), lanes)
    return vbits(vzero_lanes(vand(seen, vshl(one, vand(neighbours, low))), lanes))


@njit(parallel=True, cache=True)
def top_down_step(indptr, indices, frontier, bounds, claim_v, claim_u, fills, counter, visited, words):
    """Claim the unvisited out-neighbours of the frontier: set each one's bit of ``visited`` by
    compare-and-swap, and the thread whose swap sets it records ``(v, u)`` in the claim buffers
    (``claim_v``, ``claim_u``: chunks of :data:`CLAIM_CHUNK` slots that each part takes from ``counter``,
    its fill in ``fills``); :func:`write_claimed_parents` then writes the parents and
    :func:`claimed_vertices` lists the bits the level set (the next frontier) and writes their levels.
    Why the buffer: a compare-and-swap waits until every earlier store of its core is done, and a
    ``parents[v]`` store right before it is a cache miss at a random line, so each claim waited for the
    last one's miss; buffered stores hit the cache, and the parents are written afterwards with no
    locked instruction between them.

    ``bounds`` splits the frontier into parts of about equal out-degree (hubs do not serialise a level).
    Each neighbour is first looked up in a bit map, sixteen at a time: a vector load of the neighbours,
    a gather of their words (``words``: a bit map viewed as the index dtype, so word ``v >> 5`` holds bit
    ``v & 31`` for int32 ids, ``v >> 6`` and ``v & 63`` for int64) and a bit test give the lanes that
    may be unvisited, and only those are claimed one by one (about twice as fast as a scalar test per
    edge on the big level). ``words`` is ``visited`` itself, or the map as it
    was before the level (the caller's choice per level): on a level that reaches most of what remains
    (few claims, many edges) a gather from a map nobody writes does not lose its cache lines to the
    other core's claims, while on a level of many claims the stale map lets every repeat through to a
    scalar check, and the live map is faster.

    Against claiming by a CAS on the parent and marking a byte map of the next frontier (the parent,
    level, byte and degree are four cache misses a claim, and the lock of the CAS waits on them), the
    big levels run faster, the frontier included. Measured by ``python tools/compare_peers.py --family
    bfs`` and the asv benchmark ``TopDownSharedMap`` (figures in docs/performance.md)."""
    one64 = np.uint64(1)
    bits = 5 if indices.itemsize == 4 else 6
    shift = vint(indices, bits, 16)
    low = vint(indices, (1 << bits) - 1, 16)
    one = vint(indices, 1, 16)
    for p in prange(bounds.size - 1):
        pos = 0
        stop = 0
        for i in range(bounds[p], bounds[p + 1]):
            _prefetch_rows_ahead(indptr, indices, frontier, i)
            u = frontier[i]
            end = indptr[u + 1]
            j = indptr[u]
            while j < end:
                fresh = _unvisited_lanes(indices, j, end, words, shift, low, one)
                while fresh:
                    v = indices[j + _lowest_bit(np.uint64(fresh))]
                    fresh &= fresh - 1
                    w = v >> 6
                    bit = one64 << np.uint64(v & 63)
                    word = visited[w]
                    while not (word & bit):  # until this thread sets the bit or sees it set
                        held = atomic_cas(visited, w, word, word | bit)
                        if held == word:
                            if pos == stop:  # this part's chunk is full (or it has none): take the next
                                if stop:
                                    fills[(stop - 1) // CLAIM_CHUNK] = CLAIM_CHUNK
                                pos = _fetch_add(counter, CLAIM_CHUNK)
                                stop = pos + CLAIM_CHUNK
                            claim_v[pos] = v
                            claim_u[pos] = u
                            pos += 1
                            break
                        word = held
                j += 16
        if stop:
            fills[(stop - 1) // CLAIM_CHUNK] = pos - (stop - CLAIM_CHUNK)


@njit(parallel=True, cache=True)
def top_down_step_private(indptr, indices, frontier, bounds, visited, maps, map_words, parents, next_part):
    """:func:`top_down_step` with no shared writes but the parents: each of the ``maps.shape[0]``
    workers starts from its own copy of ``visited`` (a row of ``maps``), claims an unvisited
    out-neighbour by setting its bit there with a plain store and writes ``parents[v] = u`` at once;
    :func:`claimed_vertices` then lists the bits the rows set and ORs them into ``visited``. Workers
    take parts of the frontier (``bounds``, about equal out-degree) in turn from ``next_part``.

    Why: on the shared map the two cores' claims and gathers keep taking each other's cache lines, and
    every claim is a locked compare-and-swap. Here a worker only sees its own claims, so a vertex found
    by several workers in one level is claimed by each and its parent is whichever store lands last:
    any frontier neighbour is a valid parent, and the level is the same. The big levels run markedly
    faster than on the shared map with claim buffers (figures in docs/performance.md).

    The worker's map is indexed by the ``prange`` index, never by a thread id, so two workers that
    share a thread still write different rows. ``maps`` is uint64 words; the gathers read the same
    memory as ``map_words`` (``maps`` viewed as the index dtype: word ``v >> 5``, bit ``v & 31`` for
    int32 ids), as in :func:`top_down_step`."""
    one64 = np.uint64(1)
    bits = 5 if indices.itemsize == 4 else 6
    shift = vint(indices, bits, 16)
    low = vint(indices, (1 << bits) - 1, 16)
    one = vint(indices, 1, 16)
    parts = bounds.size - 1
    next_part[0] = 0
    for worker in prange(maps.shape[0]):
        mine = maps[worker]
        mine[:] = visited
        words = map_words[worker]
        while True:
            p = _fetch_add(next_part, 1)  # past the last part each worker adds one more, then stops
            if p >= parts:
                break
            for i in range(bounds[p], bounds[p + 1]):
                _prefetch_rows_ahead(indptr, indices, frontier, i)
                u = frontier[i]
                end = indptr[u + 1]
                j = indptr[u]
                while j < end:
                    fresh = _unvisited_lanes(indices, j, end, words, shift, low, one)
                    while fresh:
                        v = indices[j + _lowest_bit(np.uint64(fresh))]
                        fresh &= fresh - 1
                        w = v >> 6
                        bit = one64 << np.uint64(v & 63)
                        word = mine[w]
                        if not (word & bit):  # a repeat inside these sixteen lanes is set by now
                            mine[w] = word | bit
                            parents[v] = u
                    j += 16


# Slots of the claim buffers a top-down part takes at once (one atomic add per chunk).
CLAIM_CHUNK = 1024


def claim_buffer_size(num_nodes: int, parts: int) -> int:
    """Slots the claim buffers need: every vertex at most once, plus a part-filled chunk per part."""
    return num_nodes + (parts + 1) * CLAIM_CHUNK


@njit(inline="always")
def _fetch_add(counter, delta):
    """``counter[0]`` before adding ``delta`` to it, atomically (a compare-and-swap loop): the next claim
    chunk of the shared top-down step, the next frontier part of the private one."""
    old = counter[0]
    while True:
        held = atomic_cas(counter, 0, old, old + delta)
        if held == old:
            return old
        old = held


@njit(parallel=True, cache=True)
def write_claimed_parents(claim_v, claim_u, fills, counter, parents):
    """``parents[v] = u`` for every claim :func:`top_down_step` recorded (the chunks below ``counter[0]``)."""
    for k in prange(counter[0] // CLAIM_CHUNK):
        base = k * CLAIM_CHUNK
        for i in range(fills[k]):
            parents[claim_v[base + i]] = claim_u[base + i]


@njit(inline="always")
def _union(maps, w):
    word = maps[0, w]
    for row in range(1, maps.shape[0]):
        word |= maps[row, w]
    return word


@njit(parallel=True, cache=True)
def claimed_vertices(maps, visited, indptr, levels, level, out, chunk_starts, chunk_scouts):
    """The vertices whose bit is set in some row of ``maps`` but not in ``visited`` (a level's claims),
    in ascending order into ``out``, with ``levels[v] = level``; ``visited`` then becomes the union
    (the private maps of :func:`top_down_step_private`, or one row: the shared map of
    :func:`top_down_step` against its copy from before the level). Returns ``(count, scout)``, ``scout``
    being the sum of their out-degrees (GAP's count for the direction switch). Two parallel passes
    over ``chunk_scouts.size`` chunks of words: count the new bits, then list them. Per chunk ``c`` it
    leaves where its vertices start in ``out`` (``chunk_starts[c]``, ``chunk_starts[-1] == count``) and
    their degree sum (``chunk_scouts[c]``): enough to split the next level into parts of about equal
    out-degree without another pass over the frontier (:func:`bounds_from_chunks`)."""
    words = visited.size
    chunks = chunk_scouts.size
    chunk_starts[0] = 0
    for c in prange(chunks):
        k = 0
        for w in range((words * c) // chunks, (words * (c + 1)) // chunks):
            k += popcount(_union(maps, w) & ~visited[w])
        chunk_starts[c + 1] = k
    for c in range(chunks):
        chunk_starts[c + 1] += chunk_starts[c]
    for c in prange(chunks):
        pos = chunk_starts[c]
        scout = 0
        for w in range((words * c) // chunks, (words * (c + 1)) // chunks):
            union = _union(maps, w)
            new = union & ~visited[w]
            visited[w] = union
            while new:
                v = w * 64 + _lowest_bit(new)
                new &= new - np.uint64(1)
                out[pos] = v
                pos += 1
                levels[v] = level
                scout += indptr[v + 1] - indptr[v]
        chunk_scouts[c] = scout
    return chunk_starts[chunks], chunk_scouts.sum()


def claim_chunks(words: int) -> int:
    """Chunks of the visited map for :func:`claimed_vertices`: fine enough to balance the next level
    (a chunk of 64 words, 4,096 vertices, or more), at most 256."""
    return max(1, min(256, words // 64))


def bounds_from_chunks(chunk_starts, chunk_scouts, parts):
    """Bounds of ``parts`` ranges of a frontier listed by :func:`claimed_vertices`, cut at chunk edges
    where the running out-degree sum passes each ``k / parts`` of the total (as
    :func:`degree_balanced_bounds` does vertex by vertex)."""
    running = np.cumsum(chunk_scouts)
    targets = (np.arange(1, parts, dtype=np.int64) * running[-1]) // max(parts, 1)
    cut = np.minimum(np.searchsorted(running, targets, side="left") + 1, chunk_scouts.size)
    bounds = np.concatenate([[0], chunk_starts[cut], [chunk_starts[-1]]]).astype(np.int64)
    return np.maximum.accumulate(bounds)


@njit(parallel=True, cache=True)
def visited_bits_from_parents(parents, visited):
    n = parents.size
    for w in prange(visited.size):
        word = np.uint64(0)
        for b in range(min(64, n - w * 64)):
            if parents[w * 64 + b] != -1:
                word |= np.uint64(1) << np.uint64(b)
        visited[w] = word


@njit(parallel=True, cache=True)
def spmsv_pull_step_sorted(in_indptr, in_indices, front, next_front, parents, levels, level):
    """:func:`spmsv_pull_step` for CSC rows sorted ascending: scanning a row from its end, the first
    in-neighbour found in the frontier is the highest-labelled one, so the scan stops there (the same
    parents, with bottom-up's early exit)."""
    n = parents.size
    awake = 0
    for v in prange(n):
        next_front[v] = 0
        if v + ROW_AHEAD < n:
            prefetch_item(in_indices, max(in_indptr[v + ROW_AHEAD + 1] - 1, 0))  # rows are read from the end
        if parents[v] == -1:
            for j in range(in_indptr[v + 1] - 1, in_indptr[v] - 1, -1):
                u = in_indices[j]
                if front[u]:
                    parents[v] = u
                    levels[v] = level
                    next_front[v] = 1
                    awake += 1
                    break
    return awake


@njit(parallel=True, cache=True)
def packed_top_down_step(keys, eids, row_off, frontier, parts, parents, levels, level, next_front):
    """:func:`top_down_step` over a DynamicGraph's packed memory array (walls, gaps and tombstones
    skipped); the frontier is split into ``parts`` equal pieces. Returns the vertices claimed."""
    low = np.int64(0xFFFFFFFF)
    found = 0
    n = frontier.size
    for p in prange(parts):
        for i in range((n * p) // parts, (n * (p + 1)) // parts):
            u = frontier[i]
            for s in range(row_off[u], row_off[u + 1]):
                if eids[s] < 0:
                    continue
                v = keys[s] & low
                if parents[v] == -1 and atomic_cas(parents, v, -1, u) == -1:
                    levels[v] = level
                    next_front[v] = 1
                    found += 1
    return found
