"""Big batches into the packed memory array (kernels/cpu/gpma.py): one merge into a fresh layout (CPU).

A batch that lands in most leaves (10^6 keys into 10^6 leaves touches 63% of them) costs a random
search and an in-place merge per key, far dearer than streaming a slot of the whole array. So a
batch past a few percent of the capacity is merged with the array into a fresh layout in two parallel
passes over chunks of leaves (count, then write), which also drops every tombstone.

Both passes work a leaf at a time on 8-lane vectors (kernels/cpu/_simd.py) rather than a slot at a
time: a slot-by-slot merge mispredicts a branch at every leaf end, tombstone, wall and batch key (four
to five million a batch of 10^6 into 10M edges), far from the cost of a plain copy of the arrays. The
write pass packs each old leaf's live elements into a small staging buffer (one compress-store per
vector), places its batch keys there by rank, and writes every new leaf whole from the buffer; both
passes take about half the time of the slot-by-slot versions (`python tools/dynamic_bench.py
--figures apply`; figures in docs/performance.md, section 'CPU: dynamic graph').
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._intrinsics import popcount, prefetch_item, prefetch_item_for_write
from ._simd import (
    lanes,
    mask_and,
    vand,
    vbits,
    vcompress_at,
    veq,
    vfull,
    viota,
    vlanes,
    vload_at,
    vlt,
    vne,
    vscatter,
    vselect,
    vshr,
    vstore_at,
)
from .gpma import EMPTY, KEY_NONE, TOMB, WALL_LOW

LANES = lanes(np.int64)
# slots ahead (2 KB of keys) to prefetch the old arrays, and the new arrays for writing
MERGE_READ_AHEAD = 256
MERGE_WRITE_AHEAD = 256
# batch keys placed in the staging buffer before its finished leaves are written (bounds its size
# when many keys fall into one leaf)
INSERTS_PER_FLUSH = 8


@njit(parallel=True, cache=True)
def merge_count(keys, eids, leaf_size, chunk_leaves, batch, batch_bounds, live_counts, new_counts, has_tombs):
    """Per chunk ``c`` of leaves ``chunk_leaves[c]:chunk_leaves[c + 1]`` and its batch keys
    ``batch_bounds[c]:batch_bounds[c + 1]`` (sorted, distinct): the elements that stay (walls and live
    edges) and the batch keys that are effective (absent, or a tombstone, which comes back as a new
    edge). A batch key equal to a live edge is a no-op.

    Leaf by leaf: its live slots counted a vector at a time, then each batch key below the next leaf's
    first key looked up in it (a key is in the last leaf whose first key is not above it) by one vector
    compare per 8 slots. Without tombstones (``has_tombs`` False) the ids are not read at all: the pass
    reads half the bytes."""
    S = leaf_size
    for c in prange(live_counts.size):
        j = batch_bounds[c]
        j_end = batch_bounds[c + 1]
        live = 0
        new = 0
        last = chunk_leaves[c + 1]
        none = vfull(keys, KEY_NONE, LANES)
        tomb = vfull(eids, TOMB, LANES)
        for leaf in range(chunk_leaves[c], last):
            base = leaf * S
            if base + MERGE_READ_AHEAD + LANES < keys.size:
                prefetch_item(keys, base + MERGE_READ_AHEAD)
                prefetch_item(keys, base + MERGE_READ_AHEAD + LANES)
                if has_tombs:
                    prefetch_item(eids, base + MERGE_READ_AHEAD)
                    prefetch_item(eids, base + MERGE_READ_AHEAD + LANES)
            for p0 in range(0, S, LANES):
                in_leaf = vlanes(0, S - p0, LANES)
                on = mask_and(in_leaf, vne(vload_at(keys, base + p0, in_leaf), none))
                if has_tombs:
                    on = mask_and(on, vne(vload_at(eids, base + p0, in_leaf), tomb))
                live += popcount(vbits(on))
            limit = keys[base + S] if leaf + 1 < last else KEY_NONE
            while j < j_end and batch[j] < limit:
                key = vfull(keys, batch[j], LANES)
                j += 1
                hits = 0
                for p0 in range(0, S, LANES):
                    in_leaf = vlanes(0, S - p0, LANES)
                    hit = mask_and(in_leaf, veq(vload_at(keys, base + p0, in_leaf), key))
                    if has_tombs:  # a tombstone with the key is not live: the key comes back as new
                        hit = mask_and(hit, vne(vload_at(eids, base + p0, in_leaf), tomb))
                    hits |= vbits(hit)
                new += hits == 0
        live_counts[c] = live
        new_counts[c] = new


@njit(inline="always")
def _stage_leaf(keys, eids, base, S, stage_k, stage_e, count):
    """Append the live elements of the old leaf at ``base`` (``S`` slots) to the staging buffer at
    ``count``, in order; returns the new count. Gaps and tombstones are left out."""
    none = vfull(keys, KEY_NONE, LANES)
    tomb = vfull(eids, TOMB, LANES)
    for p0 in range(0, S, LANES):
        in_leaf = vlanes(0, S - p0, LANES)
        kv = vload_at(keys, base + p0, in_leaf)
        ev = vload_at(eids, base + p0, in_leaf)
        live = mask_and(in_leaf, mask_and(vne(kv, none), vne(ev, tomb)))
        vcompress_at(stage_k, count, kv, live)
        vcompress_at(stage_e, count, ev, live)
        count += popcount(vbits(live))
    return count


@njit(inline="always")
def _rank(stage_k, start, count, key, S):
    """``(elements of stage_k[start:count] below key, whether key is one of them)``; ``count - start``
    is at most ``S`` (the rest of one old leaf)."""
    below = 0
    equal = 0
    kv = vfull(stage_k, key, LANES)
    for p0 in range(0, S, LANES):
        on = vlanes(0, count - start - p0, LANES)
        v = vload_at(stage_k, start + p0, on)
        below += popcount(vbits(mask_and(on, vlt(v, kv))))
        equal |= vbits(mask_and(on, veq(v, kv)))
    return below, equal != 0


@njit(inline="always")
def _shift_up(stage_k, stage_e, at, count, S):
    """``stage[at + 1:count + 1] = stage[at:count]`` (at most ``S`` elements), the top vector first."""
    for p0 in range(((S - 1) // LANES) * LANES, -1, -LANES):
        on = vlanes(0, count - at - p0, LANES)
        kv = vload_at(stage_k, at + p0, on)
        ev = vload_at(stage_e, at + p0, on)
        vstore_at(stage_k, at + p0 + 1, kv, on)
        vstore_at(stage_e, at + p0 + 1, ev, on)


@njit(inline="always")
def _write_leaf(stage_k, stage_e, head, count, lo, tail, S, seg, out_keys, out_eids, row_off):
    """Lanes ``lo .. lo+count-1`` of new leaf ``seg`` from ``stage[head:head+count]``, and gaps in the lanes
    after them when ``tail`` (this chunk writes the leaf's last element); no other lane is touched, so two
    chunks can share a leaf. Walls among the elements set ``row_off`` (a masked scatter)."""
    base = seg * S
    hi = lo + count
    end = S if tail else hi
    none = vfull(stage_k, KEY_NONE, LANES)
    empty = vfull(stage_e, EMPTY, LANES)
    low = vfull(stage_k, WALL_LOW, LANES)
    one = vfull(stage_k, 1, LANES)
    thirty_two = vfull(stage_k, 32, LANES)
    for p0 in range(0, S, LANES):
        elements = vlanes(lo - p0, hi - p0, LANES)
        written = vlanes(lo - p0, end - p0, LANES)
        kv = vselect(elements, vload_at(stage_k, head + p0 - lo, elements), none)
        ev = vselect(elements, vload_at(stage_e, head + p0 - lo, elements), empty)
        vstore_at(out_keys, base + p0, kv, written)
        vstore_at(out_eids, base + p0, ev, written)
        walls = mask_and(elements, veq(vand(kv, low), low))
        vscatter(row_off, vshr(kv, thirty_two) + one, viota(row_off, base + p0, LANES), walls)


@njit(inline="always")
def _write_ready(stage_k, stage_e, head, ready, k, k_end, seg, first, last, rem, step, step_rem, leaves, S,
                 out_keys, out_eids, row_off):
    """Write new leaves while the buffer holds their elements: element ``k`` (in leaf ``seg``, whose
    elements are ``first .. last-1``) onwards, up to the buffer's ready index or the chunk's end
    ``k_end``. The next leaf's bounds step without a division (``last`` grows by ``m / leaves``, the
    remainder carried). Returns the state ``(head, k, seg, first, last, rem)``."""
    while k < k_end:
        hi = min(last, k_end)
        count = hi - k
        if ready - head < count:
            break
        ahead = seg * S + MERGE_WRITE_AHEAD
        if ahead + LANES < out_keys.size:
            prefetch_item_for_write(out_keys, ahead)
            prefetch_item_for_write(out_eids, ahead)
            prefetch_item_for_write(out_keys, ahead + LANES)
            prefetch_item_for_write(out_eids, ahead + LANES)
        _write_leaf(stage_k, stage_e, head, count, k - first, last <= k_end, S, seg, out_keys, out_eids, row_off)
        head += count
        k = hi
        if k == last:
            seg += 1
            first = last
            last += step
            rem += step_rem
            if rem >= leaves:
                rem -= leaves
                last += 1
    return head, k, seg, first, last, rem


@njit(inline="always")
def _rewind(stage_k, stage_e, origin, head, count):
    """Move ``stage[head:count]`` down to ``origin``; returns the new count."""
    for t in range(head, count):
        stage_k[origin + t - head] = stage_k[t]
        stage_e[origin + t - head] = stage_e[t]
    return origin + count - head


@njit(parallel=True, cache=True)
def merge_write(keys, eids, leaf_size, chunk_leaves, batch, batch_bounds, out_first, new_first, ids,
                out_keys, out_eids, out_leaf_size, row_off, effective):
    """The second pass of :func:`merge_count`: chunk ``c`` writes its merged elements from element
    ``out_first[c]`` of the new layout (``out_first[-1]`` elements spread evenly over the leaves of
    ``out_keys``, as :func:`graphkern.kernels.cpu.gpma.spread` lays them out); its effective batch keys,
    from ``new_first[c]``, take ``ids`` in key order and are listed in ``effective``. Every slot of the
    new arrays is written (a leaf's tail by the chunk that writes its last element), every wall's
    ``row_off``; tombstones are dropped.

    Each chunk stages elements in a buffer of a few leaves: an old leaf's live elements go in packed
    (:func:`_stage_leaf`), its batch keys are placed by rank (:func:`_rank`, :func:`_shift_up`; a key
    equal to a live edge is dropped, one equal to a tombstone is new, as the tombstone is not staged),
    and every new leaf whose elements are all there is written whole (:func:`_write_leaf`). Staged
    elements up to the last placed key are final, since later batch keys are larger; the buffer
    starts at ``origin = S`` so that the first, partial leaf's lanes index it from ``head - lo >= 0``."""
    m = out_first[out_first.size - 1]
    S = out_leaf_size
    S_old = leaf_size
    leaves = out_keys.size // S
    step = m // leaves
    step_rem = m % leaves
    origin = S
    chunks = chunk_leaves.size - 1
    # per chunk: left over (< S) + one old leaf + the keys placed between writes, from origin, and a
    # vector spare (one allocation: on a graph of about 56K edges a merge has 256 chunks of a few
    # leaves each)
    stages_k = np.empty((chunks, origin + S + S_old + INSERTS_PER_FLUSH + LANES), dtype=np.int64)
    stages_e = np.empty_like(stages_k)
    for c in prange(chunks):
        k = out_first[c]
        k_end = out_first[c + 1]
        if k == k_end:
            continue
        stage_k = stages_k[c]
        stage_e = stages_e[c]
        e = new_first[c]
        j = batch_bounds[c]
        j_end = batch_bounds[c + 1]
        seg = (leaves * k) // m
        first = (m * seg + leaves - 1) // leaves
        num = m * (seg + 1) + leaves - 1
        last = num // leaves
        rem = num - last * leaves
        head = origin
        count = origin
        leaf_end = chunk_leaves[c + 1]
        for leaf in range(chunk_leaves[c], leaf_end):
            base = leaf * S_old
            if base + MERGE_READ_AHEAD + LANES < keys.size:
                prefetch_item(keys, base + MERGE_READ_AHEAD)
                prefetch_item(eids, base + MERGE_READ_AHEAD)
                prefetch_item(keys, base + MERGE_READ_AHEAD + LANES)
                prefetch_item(eids, base + MERGE_READ_AHEAD + LANES)
            limit = keys[base + S_old] if leaf + 1 < leaf_end else KEY_NONE
            start = count
            count = _stage_leaf(keys, eids, base, S_old, stage_k, stage_e, count)
            placed = 0
            while j < j_end and batch[j] < limit:
                key = batch[j]
                j += 1
                below, present = _rank(stage_k, start, count, key, S_old)
                if present:
                    continue
                at = start + below
                _shift_up(stage_k, stage_e, at, count, S_old)
                stage_k[at] = key
                stage_e[at] = ids[e]
                effective[e] = key
                e += 1
                count += 1
                start = at + 1
                placed += 1
                if placed == INSERTS_PER_FLUSH and j < j_end and batch[j] < limit:
                    # many keys in one leaf: write what is final (up to the key just placed) first
                    placed = 0
                    head, k, seg, first, last, rem = _write_ready(stage_k, stage_e, head, start, k, k_end, seg,
                                                                  first, last, rem, step, step_rem, leaves, S,
                                                                  out_keys, out_eids, row_off)
                    start -= head - origin
                    count = _rewind(stage_k, stage_e, origin, head, count)
                    head = origin
            head, k, seg, first, last, rem = _write_ready(stage_k, stage_e, head, count, k, k_end, seg, first, last,
                                                          rem, step, step_rem, leaves, S, out_keys, out_eids, row_off)
            count = _rewind(stage_k, stage_e, origin, head, count)
            head = origin
