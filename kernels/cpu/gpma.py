"""A packed memory array of sorted edge keys (GPMA's layout) on the CPU.

The layout and its rules are described in docs/design.md, section 'Dynamic graph (GPMA)'.

Keys are ``src << 32 | dst``; every row ``r`` has a wall key ``r << 32 | 0xFFFFFFFF`` after its edges,
and ``row_off[r + 1]`` is the wall's slot, so row ``r`` lies in ``[row_off[r], row_off[r + 1])`` (its
first slot holds the previous row's wall). The array is ``num_leaves`` leaves of ``S`` slots; each leaf
holds its elements packed at its start (never none: the leaf separators stay sorted), empty slots hold
``KEY_NONE``. ``eids[s]`` is the stable edge id of a live edge, ``-1`` for walls and empty slots and
``TOMB`` for a deleted edge whose key stays until a rebalance compacts it.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._intrinsics import prefetch_row

KEY_NONE = np.int64(np.iinfo(np.int64).max)
WALL_LOW = np.int64(0xFFFFFFFF)
TOMB = np.int64(-2)
EMPTY = np.int64(-1)


@njit(cache=True)
def spread(keys_in, eids_in, m, keys, eids, start, width, leaf_size, row_off):
    """Write the ``m`` sorted elements evenly over the window ``[start, start + width)``: leaf by leaf,
    each leaf's share packed at its start (GPMA's redispatch); walls update ``row_off``."""
    leaves = width // leaf_size
    for s in range(start, start + width):
        keys[s] = KEY_NONE
        eids[s] = EMPTY
    for k in range(m):
        seg = (leaves * k) // m
        lane = k - (m * seg + leaves - 1) // leaves  # position of k among the elements given to leaf seg
        slot = start + seg * leaf_size + lane
        key = keys_in[k]
        keys[slot] = key
        eids[slot] = eids_in[k]
        if (key & WALL_LOW) == WALL_LOW:
            row_off[(key >> np.int64(32)) + 1] = slot


@njit(parallel=True, cache=True)
def spread_parallel(keys_in, eids_in, m, keys, eids, width, leaf_size, row_off):
    """:func:`spread` over the whole array ``[0, width)``, leaves in parallel (rebuilds): leaf ``seg``
    takes elements ``ceil(m seg / leaves) .. ceil(m (seg + 1) / leaves)``, the same layout."""
    leaves = width // leaf_size
    for seg in prange(leaves):
        first = (m * seg + leaves - 1) // leaves
        last = (m * (seg + 1) + leaves - 1) // leaves
        base = seg * leaf_size
        for lane in range(leaf_size):
            slot = base + lane
            k = first + lane
            if k < last:
                key = keys_in[k]
                keys[slot] = key
                eids[slot] = eids_in[k]
                if (key & WALL_LOW) == WALL_LOW:
                    row_off[(key >> np.int64(32)) + 1] = slot
            else:
                keys[slot] = KEY_NONE
                eids[slot] = EMPTY


@njit(cache=True)
def locate(keys, row_off, leaf_size, key):
    """``(leaf, slot)``: the leaf whose range holds ``key``, and the key's slot there or -1.

    The key's row bounds the search: row ``r`` lies between the previous row's wall (slot
    ``row_off[r]``) and its own (``row_off[r + 1]``), so only the leaves in between are searched for the
    last one whose first key is ``<= key`` -- a row of a few edges spans a leaf or two, where a search
    over all leaf separators would take ~log2(leaves) cache misses."""
    r = key >> np.int64(32)
    lo = row_off[r] // leaf_size
    hi = row_off[r + 1] // leaf_size
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if keys[mid * leaf_size] <= key:
            lo = mid
        else:
            hi = mid - 1
    base = lo * leaf_size
    for s in range(base, base + leaf_size):
        k = keys[s]
        if k == key:
            return lo, s
        if k > key:
            break
    return lo, -1


# Keys ahead whose row offsets are prefetched (their first leaf half as far ahead, once the offsets are
# in): a lookup is three dependent cache misses on a big array (row_off, the leaf search, the leaf), and
# without prefetching they do not overlap across keys; with it, classifying a batch takes about half the
# time (`python tools/dynamic_bench.py --figures apply`).
LOCATE_AHEAD = 16


@njit(inline="always")
def prefetch_locate(leaves, offsets, row_off, leaf_size, query, i, end):
    """Prefetch for :func:`locate` of ``query[i + LOCATE_AHEAD]`` (its row's offsets) and of
    ``query[i + LOCATE_AHEAD // 2]`` (its row's first leaf); ``leaves``/``offsets`` are 2-D views of the
    keys (a leaf a row) and of ``row_off`` (an offset a row)."""
    if i + LOCATE_AHEAD < end:
        prefetch_row(offsets, query[i + LOCATE_AHEAD] >> np.int64(32), 16)
    if i + LOCATE_AHEAD // 2 < end:
        r = query[i + LOCATE_AHEAD // 2] >> np.int64(32)
        prefetch_row(leaves, row_off[r] // leaf_size, leaf_size * 8)


@njit(parallel=True, cache=True)
def delete_batch(keys, eids, leaf_size, row_off, del_keys, freed, deleted):
    """Tombstone each present live key; returns how many were deleted (their ids go to ``freed``, their
    keys to ``deleted``, both in key order; the caller updates the degrees from ``deleted``). The
    searches run in parallel, the bookkeeping after them."""
    slots = np.empty(del_keys.size, dtype=np.int64)
    leaves = keys.reshape((keys.size // leaf_size, leaf_size))
    offsets = row_off.reshape((row_off.size, 1))
    for i in prange(del_keys.size):
        prefetch_locate(leaves, offsets, row_off, leaf_size, del_keys, i, del_keys.size)
        _, s = locate(keys, row_off, leaf_size, del_keys[i])
        slots[i] = s if s >= 0 and eids[s] >= 0 else -1
    count = 0
    for i in range(del_keys.size):
        s = slots[i]
        if s >= 0:
            freed[count] = eids[s]
            deleted[count] = del_keys[i]
            eids[s] = TOMB
            count += 1
    return count


@njit(cache=True)
def add_degrees(edge_keys, out_deg, in_deg, delta):
    """``out_deg[src] += delta`` and ``in_deg[dst] += delta`` for each ``src << 32 | dst`` key, serially
    (random increments would race), with the counters of the key 16 on prefetched: two misses a key on
    a big graph, overlapped (faster than ``np.add.at`` on both arrays)."""
    outs = out_deg.reshape((out_deg.size, 1))
    ins = in_deg.reshape((in_deg.size, 1))
    m = edge_keys.size
    for i in range(m):
        if i + LOCATE_AHEAD < m:
            k = edge_keys[i + LOCATE_AHEAD]
            prefetch_row(outs, k >> np.int64(32), 8)
            prefetch_row(ins, k & WALL_LOW, 8)
        k = edge_keys[i]
        out_deg[k >> np.int64(32)] += delta
        in_deg[k & WALL_LOW] += delta


@njit(parallel=True, cache=True)
def add_degrees_split(edge_keys, out_deg, in_deg, delta):
    """:func:`add_degrees` with the two arrays on two threads: one adds the out-degrees, the other the
    in-degrees, each serially, so no counter has two writers. For big batches, where a parallel region
    costs little next to the misses."""
    m = edge_keys.size
    for side in prange(2):
        counts = out_deg if side == 0 else in_deg
        rows = counts.reshape((counts.size, 1))
        shift = np.int64(32) if side == 0 else np.int64(0)
        for i in range(m):
            if i + LOCATE_AHEAD < m:
                prefetch_row(rows, (edge_keys[i + LOCATE_AHEAD] >> shift) & WALL_LOW, 8)
            counts[(edge_keys[i] >> shift) & WALL_LOW] += delta


@njit(parallel=True, cache=True)
def classify_inserts(keys, leaf_size, row_off, ins_keys, leaf_of, slot_of):
    """For each key: its leaf, and its slot when present (live or tombstone), else -1."""
    leaves = keys.reshape((keys.size // leaf_size, leaf_size))
    offsets = row_off.reshape((row_off.size, 1))
    for i in prange(ins_keys.size):
        prefetch_locate(leaves, offsets, row_off, leaf_size, ins_keys, i, ins_keys.size)
        leaf, s = locate(keys, row_off, leaf_size, ins_keys[i])
        leaf_of[i] = leaf
        slot_of[i] = s


@njit(cache=True)
def count_effective_inserts(eids, slot_of):
    """``(effective, revived)`` of a classified batch: keys that are absent (new) or tombstones (revived);
    a key that is live already is a no-op."""
    effective = 0
    revived = 0
    for i in range(slot_of.size):
        s = slot_of[i]
        if s < 0:
            effective += 1
        elif eids[s] == TOMB:
            effective += 1
            revived += 1
    return effective, revived


@njit(cache=True)
def split_inserts(eids, slot_of, leaf_of, keys, ids, effective_keys, pending_keys, pending_ids, pending_leaves):
    """Give the effective keys their ids (``ids``, in key order), revive tombstones in place, and collect
    the new keys with their ids and leaves for :func:`rebalance_level`; returns how many are new. One
    pass in place of half a dozen NumPy masks, several times faster."""
    e = 0
    new = 0
    for i in range(slot_of.size):
        s = slot_of[i]
        if s >= 0 and eids[s] != TOMB:
            continue
        effective_keys[e] = keys[i]
        if s >= 0:
            eids[s] = ids[e]
        else:
            pending_keys[new] = keys[i]
            pending_ids[new] = ids[e]
            pending_leaves[new] = leaf_of[i]
            new += 1
        e += 1
    return new


@njit(cache=True)
def window_groups(windows, size, starts):
    """Where each run of equal ``windows[:size]`` (sorted) starts; returns the number of runs (``starts``
    then holds them, followed by ``size``)."""
    groups = 0
    for i in range(size):
        if i == 0 or windows[i] != windows[i - 1]:
            starts[groups] = i
            groups += 1
    starts[groups] = size
    return groups


@njit(cache=True)
def keep_pending(keys, ids, windows, starts, groups, done):
    """Drop the groups placed at this level and move the rest up one level (their window halves), in
    place and in order; returns how many keys are still pending."""
    kept = 0
    for g in range(groups):
        if done[g]:
            continue
        for i in range(starts[g], starts[g + 1]):
            keys[kept] = keys[i]
            ids[kept] = ids[i]
            windows[kept] = windows[i] >> 1
            kept += 1
    return kept


@njit(cache=True)
def window_count(keys, start, width, leaf_size):
    """Occupied slots of a window (leaves are packed, so each leaf's count ends at its first gap)."""
    total = 0
    for leaf_start in range(start, start + width, leaf_size):
        for s in range(leaf_start, leaf_start + leaf_size):
            if keys[s] == KEY_NONE:
                break
            total += 1
    return total


@njit(cache=True)
def merge_window(keys, eids, start, width, leaf_size, new_keys, new_eids, lo, hi, row_off):
    """Merge the pending ``new_keys[lo:hi]`` (sorted) into the window and spread the result. Tombstones
    stay (a rebuild drops them): then no leaf of the window can come out empty."""
    occupied = window_count(keys, start, width, leaf_size)
    tmp_k = np.empty(occupied + hi - lo, dtype=np.int64)
    tmp_e = np.empty(occupied + hi - lo, dtype=np.int64)
    n = 0
    j = lo
    for leaf_start in range(start, start + width, leaf_size):
        for s in range(leaf_start, leaf_start + leaf_size):
            k = keys[s]
            if k == KEY_NONE:
                break
            while j < hi and new_keys[j] < k:
                tmp_k[n] = new_keys[j]
                tmp_e[n] = new_eids[j]
                n += 1
                j += 1
            tmp_k[n] = k
            tmp_e[n] = eids[s]
            n += 1
    while j < hi:
        tmp_k[n] = new_keys[j]
        tmp_e[n] = new_eids[j]
        n += 1
        j += 1
    spread(tmp_k, tmp_e, n, keys, eids, start, width, leaf_size, row_off)


@njit(cache=True)
def merge_leaf(keys, eids, start, occupied, new_keys, new_eids, lo, hi, row_off):
    """Level 0: merge the pending ``new_keys[lo:hi]`` into the leaf at ``start`` in place, from the back
    (the leaf stays packed at its start: the same layout as :func:`merge_window`, with no buffer)."""
    i = occupied - 1
    j = hi - 1
    w = start + occupied + (hi - lo) - 1
    while j >= lo:
        if i >= 0 and keys[start + i] > new_keys[j]:
            k = keys[start + i]
            keys[w] = k
            eids[w] = eids[start + i]
            if (k & WALL_LOW) == WALL_LOW:
                row_off[(k >> np.int64(32)) + 1] = w
            i -= 1
        else:
            keys[w] = new_keys[j]
            eids[w] = new_eids[j]
            j -= 1
        w -= 1


@njit(parallel=True, cache=True)
def rebalance_level(keys, eids, leaf_size, level, upper, window_of, new_keys, new_eids, starts, ends, row_off,
                    done):
    """Insert each pending group (``starts[g]:ends[g]`` of the sorted pending keys, all in one window of
    this level) whose window stays under the level's density bound; mark them done. The windows of one
    level are disjoint (and so are the walls in them), so groups run in parallel."""
    width = leaf_size << level
    key_leaves = keys.reshape((keys.size // leaf_size, leaf_size))
    eid_leaves = eids.reshape((eids.size // leaf_size, leaf_size))
    for g in prange(starts.size):
        if level == 0 and g + 8 < starts.size:  # the leaf merged 8 groups on: its misses overlap this one
            prefetch_row(key_leaves, window_of[g + 8], leaf_size * 8)
            prefetch_row(eid_leaves, window_of[g + 8], leaf_size * 8)
        start = window_of[g] * width
        occupied = window_count(keys, start, width, leaf_size)
        if occupied + ends[g] - starts[g] <= upper:
            if level == 0:
                merge_leaf(keys, eids, start, occupied, new_keys, new_eids, starts[g], ends[g], row_off)
            else:
                merge_window(keys, eids, start, width, leaf_size, new_keys, new_eids, starts[g], ends[g], row_off)
            done[g] = True


@njit(parallel=True, cache=True)
def live_elements(keys, eids, out_keys, out_eids):
    """The walls and live edges in order (tombstones and gaps dropped); returns how many. Two parallel
    passes over chunks of the array: count, then write at the chunk's offset."""
    chunks = 64
    size = keys.size
    counts = np.zeros(chunks + 1, dtype=np.int64)
    for c in prange(chunks):
        n = 0
        for s in range((size * c) // chunks, (size * (c + 1)) // chunks):
            if keys[s] != KEY_NONE and eids[s] != TOMB:
                n += 1
        counts[c + 1] = n
    for c in range(chunks):
        counts[c + 1] += counts[c]
    for c in prange(chunks):
        n = counts[c]
        for s in range((size * c) // chunks, (size * (c + 1)) // chunks):
            if keys[s] != KEY_NONE and eids[s] != TOMB:
                out_keys[n] = keys[s]
                out_eids[n] = eids[s]
                n += 1
    return counts[chunks]


@njit(cache=True)
def _co_rank(d, a_keys, na, b_keys, nb):
    """How many of the first ``d`` merged elements come from ``a`` (the merge-path split point)."""
    lo = max(0, d - nb)
    hi = min(d, na)
    while lo < hi:
        i = (lo + hi) // 2
        j = d - i
        if j > 0 and i < na and b_keys[j - 1] >= a_keys[i]:
            lo = i + 1
        else:
            hi = i
    return lo


@njit(parallel=True, cache=True)
def merge_sorted(a_keys, a_eids, na, b_keys, b_eids, out_keys, out_eids):
    """Merge two sorted runs with their ids (``a`` first on ties); the output is cut into pieces along
    the merge path, each merged by one thread."""
    nb = b_keys.size
    total = na + nb
    pieces = 64 if total > 1 << 16 else 1
    for p in prange(pieces):
        d0 = (total * p) // pieces
        d1 = (total * (p + 1)) // pieces
        i = _co_rank(d0, a_keys, na, b_keys, nb)
        j = d0 - i
        for n in range(d0, d1):
            if j >= nb or (i < na and a_keys[i] <= b_keys[j]):
                out_keys[n] = a_keys[i]
                out_eids[n] = a_eids[i]
                i += 1
            else:
                out_keys[n] = b_keys[j]
                out_eids[n] = b_eids[j]
                j += 1
    return total


@njit(parallel=True, cache=True)
def forward_csr(keys, eids, row_off, indptr, indices, out_eids):
    """The live edges row by row in packed (destination) order: the snapshot's CSR (rows in parallel,
    written in the output arrays' dtype)."""
    n = row_off.size - 1
    for r in prange(n):
        pos = indptr[r]
        end = indptr[r + 1]
        # branch-free: every slot is written at the row's next position, which advances only for a live
        # edge (walls, gaps and tombstones are overwritten by the next one); the row stops once full, so
        # nothing is written past it. Live and dead slots alternate unpredictably, so the branchy loop
        # took about twice as long (`python tools/dynamic_bench.py --figures seed`).
        for s in range(row_off[r], row_off[r + 1]):
            if pos == end:
                break
            e = eids[s]
            indices[pos] = keys[s] & WALL_LOW
            out_eids[pos] = e
            pos += e >= 0


@njit(parallel=True, cache=True)
def contains(keys, eids, leaf_size, row_off, query, out):
    """``out[i]``: whether ``query[i]`` is a live edge key."""
    leaves = keys.reshape((keys.size // leaf_size, leaf_size))
    offsets = row_off.reshape((row_off.size, 1))
    for i in prange(query.size):
        prefetch_locate(leaves, offsets, row_off, leaf_size, query, i, query.size)
        _, s = locate(keys, row_off, leaf_size, query[i])
        out[i] = s >= 0 and eids[s] >= 0
    return out


# ------------------------------------------------------------------ batch keys


@njit(parallel=True, cache=True)
def edge_keys(src, dst, out):
    """``out[i] = src[i] << 32 | dst[i]`` (ids already checked to fit 31 bits)."""
    for i in prange(src.size):
        out[i] = (src[i] << np.int64(32)) | dst[i]
    return out


@njit(nogil=True, cache=True)
def edge_keys_side(src, dst, pivot, above, out):
    """One side of a big batch, for one of two sorting threads: the keys ``src << 32 | dst`` below
    ``pivot`` (``above`` False) or not below it (``above`` True), in input order, to the front of ``out``
    (the thread's own array, as long as the batch); returns how many. Serial and without the GIL: each
    of the two Python threads that sort the sides runs one, and no OpenMP region runs just before the
    sorts (its worker would spin on a core they need, and the sorts measured almost twice as slow)."""
    n = 0
    for i in range(src.size):
        key = (src[i] << np.int64(32)) | dst[i]
        # no branch (the sides alternate at random): a key not taken is overwritten by the next one
        out[n] = key
        n += (key >= pivot) == above
    return n


@njit(parallel=True, cache=True)
def unique_sorted(keys, out):
    """The distinct values of the sorted ``keys`` into ``out``; returns how many. Two parallel passes
    over chunks (count the first of each run, then write at the chunk's offset)."""
    size = keys.size
    chunks = 64 if size > 1 << 16 else 1
    counts = np.zeros(chunks + 1, dtype=np.int64)
    for c in prange(chunks):
        n = 0
        for i in range((size * c) // chunks, (size * (c + 1)) // chunks):
            n += i == 0 or keys[i] != keys[i - 1]
        counts[c + 1] = n
    for c in range(chunks):
        counts[c + 1] += counts[c]
    for c in prange(chunks):
        n = counts[c]
        begin = (size * c) // chunks
        end = (size * (c + 1)) // chunks
        while 0 < begin < end and keys[begin] == keys[begin - 1]:  # a run from the chunk before writes its value
            begin += 1
        for i in range(begin, end):
            # no branch: a repeat writes its value again over the copy just written (this chunk's own
            # slot), never past the chunk's last distinct value into the next chunk's first slot
            n += i == 0 or keys[i] != keys[i - 1]
            out[n - 1] = keys[i]
    return counts[chunks]
