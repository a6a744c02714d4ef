"""The packed memory array of :mod:`graphkern.kernels.cpu.gpma` on the GPU (same layout, same names).

A batch runs as a host-driven loop of kernels over the tree's levels, with no grid-wide synchronisation
inside a kernel (a level's windows are independent, so a kernel boundary per level is all the ordering
needed): the batch's keys are built,
radix sorted and deduplicated on the device (:mod:`graphkern.kernels.cuda.sort`), each key locates its
leaf by a binary search over the leaf separators (one thread per key), deletions tombstone in place, and
insertions climb the tree a level at a time. At a level the pending keys are grouped by window (a mark,
a scan and a compaction, all on the device); one block per window counts the window's elements leaf by
leaf (a block-wide scan gives every leaf its first rank), checks the level's density bound, and, when
the window takes its keys, merges them by rank -- an element's place in the merged window is its rank
in its own sorted list plus its rank (a binary search) in the other -- into the window's stretch of a
scratch array as wide as the tree, then spreads the result back, one thread per slot. Wide windows
(few, often a single hub's) run the same steps as grid-wide kernels over every (window, leaf) and
(window, slot) pair (the ``wide_*`` kernels), so one window gets the whole GPU. Groups that do not fit
go up a level. A rebuild lays every element out afresh with one thread per slot.

Compactions (the live elements of a rebuild, the CSR of a snapshot) count each leaf's survivors, scan
the counts and copy each leaf's survivors to its offset; only counts come back to the host.
"""

from __future__ import annotations

from numba import cuda, int64

from ..cpu import gpma as _cpu_gpma
from ..cpu.gpma import EMPTY, KEY_NONE, TOMB, WALL_LOW  # noqa: F401  (one layout for both backends)
from .launch import BLOCK

_KEY_NONE = int(KEY_NONE)
_WALL_LOW = int(WALL_LOW)
_TOMB = int(TOMB)
_EMPTY = int(EMPTY)


# the CPU's own function, compiled for the device: one definition of where a key lives
locate = cuda.jit(device=True)(_cpu_gpma.locate.py_func)


@cuda.jit(device=True)
def _fill_slot(src_keys, src_eids, base, m, keys, eids, start, t, leaves, leaf_size, row_off):
    """Slot ``start + t`` of a window holding ``m`` sorted elements ``src_*[base:base + m]``: leaf ``seg``
    holds elements ``ceil(m seg / leaves) ..`` packed at its start (the CPU's spread, slot-wise)."""
    seg = t // leaf_size
    lane = t - seg * leaf_size
    first = (m * seg + leaves - 1) // leaves
    last = (m * (seg + 1) + leaves - 1) // leaves
    s = start + t
    k = first + lane
    if k < last:
        key = src_keys[base + k]
        keys[s] = key
        eids[s] = src_eids[base + k]
        if (key & _WALL_LOW) == _WALL_LOW:
            row_off[(key >> 32) + 1] = s
    else:
        keys[s] = _KEY_NONE
        eids[s] = _EMPTY


@cuda.jit
def spread(keys_in, eids_in, m, keys, eids, start, width, leaf_size, row_off):
    """Lay ``m`` sorted elements over the window ``[start, start + width)``, one thread per slot."""
    for t in range(cuda.grid(1), width, cuda.gridsize(1)):
        _fill_slot(keys_in, eids_in, 0, m, keys, eids, start, t, width // leaf_size, leaf_size, row_off)


@cuda.jit
def batch_keys(src, dst, n, out):
    """``src * n + dst``: a key that sorts like ``src << 32 | dst`` on fewer bits (fewer radix passes)."""
    for i in range(cuda.grid(1), src.size, cuda.gridsize(1)):
        out[i] = src[i] * n + dst[i]


@cuda.jit
def mark_first_of_runs(sorted_keys, perm, flags):
    for i in range(cuda.grid(1), perm.size, cuda.gridsize(1)):
        flags[i] = 1 if i == 0 or sorted_keys[perm[i]] != sorted_keys[perm[i - 1]] else 0


@cuda.jit
def scatter_unique(keys, perm, flags, ranks, n, out):
    """The first of each run of equal keys to its rank, as ``src << 32 | dst``."""
    for i in range(cuda.grid(1), perm.size, cuda.gridsize(1)):
        if flags[i]:
            k = keys[perm[i]]
            out[ranks[i]] = ((k // n) << 32) | (k % n)


@cuda.jit
def find_deletions(keys, eids, leaf_size, row_off, del_keys, slot_of, flags):
    for i in range(cuda.grid(1), del_keys.size, cuda.gridsize(1)):
        _, s = locate(keys, row_off, leaf_size, del_keys[i])
        live = s >= 0 and eids[s] >= 0
        slot_of[i] = s if live else -1
        flags[i] = 1 if live else 0


@cuda.jit
def apply_deletions(del_keys, slot_of, ranks, eids, out_deg, in_deg, freed):
    """Tombstone the live ones; their ids go to ``freed`` in key order (the CPU's order)."""
    for i in range(cuda.grid(1), del_keys.size, cuda.gridsize(1)):
        s = slot_of[i]
        if s >= 0:
            freed[ranks[i]] = eids[s]
            eids[s] = _TOMB
            cuda.atomic.sub(out_deg, del_keys[i] >> 32, 1)
            cuda.atomic.sub(in_deg, del_keys[i] & _WALL_LOW, 1)


@cuda.jit
def classify_inserts(keys, eids, leaf_size, row_off, ins_keys, leaf_of, slot_of, effective, new):
    """Each key's leaf and slot (-1 when absent); effective = new or a tombstone to revive."""
    for i in range(cuda.grid(1), ins_keys.size, cuda.gridsize(1)):
        leaf, s = locate(keys, row_off, leaf_size, ins_keys[i])
        leaf_of[i] = leaf
        slot_of[i] = s
        is_new = s < 0
        new[i] = 1 if is_new else 0
        effective[i] = 1 if is_new or eids[s] == _TOMB else 0


@cuda.jit
def assign_ids(ins_keys, effective, ranks, free, free_count, reuse, next_id, slot_of, eids, out_deg, in_deg, ids):
    """Ids in key order, freed ids first (the last freed first); revive tombstones in place; degrees."""
    for i in range(cuda.grid(1), ins_keys.size, cuda.gridsize(1)):
        if not effective[i]:
            continue
        r = ranks[i]
        e = free[free_count - 1 - r] if r < reuse else next_id + r - reuse
        ids[i] = e
        if slot_of[i] >= 0:
            eids[slot_of[i]] = e
        cuda.atomic.add(out_deg, ins_keys[i] >> 32, 1)
        cuda.atomic.add(in_deg, ins_keys[i] & _WALL_LOW, 1)


@cuda.jit
def compact3(flags, ranks, a, b, c, out_a, out_b, out_c, shift_c):
    """``out_x[ranks[i]] = x[i]`` where ``flags[i]`` (``c`` shifted right by ``shift_c``)."""
    for i in range(cuda.grid(1), flags.size, cuda.gridsize(1)):
        if flags[i]:
            r = ranks[i]
            out_a[r] = a[i]
            out_b[r] = b[i]
            out_c[r] = c[i] >> shift_c


@cuda.jit
def mark_groups(windows, flags):
    for i in range(cuda.grid(1), windows.size, cuda.gridsize(1)):
        flags[i] = 1 if i == 0 or windows[i] != windows[i - 1] else 0


@cuda.jit
def group_starts(flags, ranks, starts):
    for i in range(cuda.grid(1), flags.size, cuda.gridsize(1)):
        if flags[i]:
            starts[ranks[i]] = i


@cuda.jit(device=True)
def _leaf_count(keys, first, leaf_size):
    """Occupied slots of the leaf starting at ``first`` (its elements are packed at its start)."""
    c = 0
    for s in range(first, first + leaf_size):
        if keys[s] == _KEY_NONE:
            break
        c += 1
    return c


@cuda.jit(device=True)
def last_leaf_below(keys, leaf_size, first_leaf, leaves, key):
    """The last leaf of the window ``[first_leaf, first_leaf + leaves)`` whose first key is below ``key``,
    or ``first_leaf - 1`` when there is none (binary search; leaves are never empty)."""
    a = first_leaf - 1
    b = first_leaf + leaves - 1
    while a < b:
        mid = (a + b + 1) // 2
        if keys[mid * leaf_size] < key:
            a = mid
        else:
            b = mid - 1
    return a


@cuda.jit
def rebalance_level(keys, eids, leaf_size, level, upper, windows, new_keys, new_eids, starts, group_ranks,
                    num_pending, row_off, done, leaf_rank, scratch_keys, scratch_eids):
    """One block per pending group (all its keys in one window of this level; ``group_ranks[num_pending]``
    is the number of groups, read here so the host need not wait for it). The block counts the window's
    elements (tombstones included) leaf by leaf and scans the counts; if the window would pass the
    level's bound the group stays pending (``done[g] = 0``). Otherwise every element and every new key
    goes to the scratch at its rank in the merged window (its index in its own sorted list plus the
    number of the other list's keys below it; the lists share no key), and the merged window is spread
    back one thread per slot (``done[g] = 1``). ``leaf_rank`` (one entry per leaf) holds each leaf's first
    rank in its window; windows are disjoint, so blocks never share an entry of it or of the scratch.

    Any block size up to ``BLOCK`` threads works (the shared totals are sized by it)."""
    totals = cuda.shared.array(BLOCK, int64)
    occupied_of = cuda.shared.array(1, int64)  # the window's element count (tombstones included)
    tid = cuda.threadIdx.x
    nt = cuda.blockDim.x
    num_groups = group_ranks[num_pending]
    width = leaf_size << level
    leaves = 1 << level
    per = (leaves + nt - 1) // nt  # leaves counted by each thread, a contiguous run
    active = (leaves + per - 1) // per  # threads with a run of leaves
    for g in range(cuda.blockIdx.x, num_groups, cuda.gridDim.x):
        lo = starts[g]
        hi = starts[g + 1] if g + 1 < num_groups else num_pending
        first_leaf = windows[lo] << level
        start = first_leaf * leaf_size
        c0 = first_leaf + min(tid * per, leaves)
        c1 = first_leaf + min(tid * per + per, leaves)
        acc = 0
        for leaf in range(c0, c1):
            leaf_rank[leaf] = acc
            acc += _leaf_count(keys, leaf * leaf_size, leaf_size)
        totals[tid] = acc
        cuda.syncthreads()
        if tid == 0:
            run = 0
            for t in range(active):
                c = totals[t]
                totals[t] = run
                run += c
            occupied_of[0] = run
        cuda.syncthreads()
        occupied = occupied_of[0]
        fits = occupied + hi - lo <= upper
        if fits:
            base = totals[tid] if tid < active else 0
            for leaf in range(c0, c1):
                leaf_rank[leaf] += base
        cuda.syncthreads()  # every leaf's rank is in place (global writes are visible to the block)
        if fits:
            m = hi - lo
            for t in range(tid, width, nt):
                s = start + t
                k = keys[s]
                if k != _KEY_NONE:
                    leaf = s // leaf_size
                    rank = leaf_rank[leaf] + s - leaf * leaf_size
                    pos = start + rank + _lower_bound_from(new_keys, lo, hi, k) - lo
                    scratch_keys[pos] = k
                    scratch_eids[pos] = eids[s]
            for j in range(lo + tid, hi, nt):
                k = new_keys[j]
                a = last_leaf_below(keys, leaf_size, first_leaf, leaves, k)
                rank = 0
                if a >= first_leaf:
                    rank = leaf_rank[a]
                    for s in range(a * leaf_size, a * leaf_size + leaf_size):
                        e = keys[s]
                        if e == _KEY_NONE or e > k:
                            break
                        rank += 1
                pos = start + rank + j - lo
                scratch_keys[pos] = k
                scratch_eids[pos] = new_eids[j]
            cuda.syncthreads()  # the merged window is complete in the scratch
            for t in range(tid, width, nt):
                _fill_slot(scratch_keys, scratch_eids, start, occupied + m, keys, eids, start, t, leaves,
                           leaf_size, row_off)
        if tid == 0:
            done[g] = 1 if fits else 0
        cuda.syncthreads()  # the shared totals and count are free for the next window


# Wide windows: the same merge by rank as rebalance_level, as grid-wide kernels over (window, leaf) and
# (window, slot) pairs, so that a few wide windows (a hub's inserts climbing high) keep the whole GPU busy
# instead of one block each. ``counts`` and ``pre`` index the pairs: pair ``g << level | i`` is leaf ``i``
# of group ``g``'s window, and ``pre`` is the exclusive scan of the counts (a window's element ranks
# are differences of it).

@cuda.jit
def wide_leaf_counts(keys, leaf_size, level, windows, starts, num_groups, counts):
    leaves = 1 << level
    for t in range(cuda.grid(1), num_groups << level, cuda.gridsize(1)):
        g = t >> level
        leaf = (windows[starts[g]] << level) + (t & (leaves - 1))
        counts[t] = _leaf_count(keys, leaf * leaf_size, leaf_size)


@cuda.jit
def wide_verdicts(level, upper, starts, num_groups, num_pending, pre, done):
    """``done[g]``: whether group ``g``'s window takes its keys under the level's bound."""
    for g in range(cuda.grid(1), num_groups, cuda.gridsize(1)):
        hi = starts[g + 1] if g + 1 < num_groups else num_pending
        occupied = pre[(g + 1) << level] - pre[g << level]
        done[g] = 1 if occupied + hi - starts[g] <= upper else 0


@cuda.jit
def wide_merge_elements(keys, eids, leaf_size, level, windows, new_keys, starts, num_groups, num_pending, pre,
                        done, scratch_keys, scratch_eids):
    """Each element of a window that takes its keys to its rank in the merged window, in the scratch."""
    width = leaf_size << level
    for t in range(cuda.grid(1), num_groups * width, cuda.gridsize(1)):
        g = t // width
        if not done[g]:
            continue
        lo = starts[g]
        hi = starts[g + 1] if g + 1 < num_groups else num_pending
        start = windows[lo] * width
        off = t - g * width
        k = keys[start + off]
        if k == _KEY_NONE:
            continue
        i = off // leaf_size
        rank = pre[(g << level) + i] - pre[g << level] + off - i * leaf_size
        pos = start + rank + _lower_bound_from(new_keys, lo, hi, k) - lo
        scratch_keys[pos] = k
        scratch_eids[pos] = eids[start + off]


@cuda.jit
def wide_merge_new(keys, leaf_size, level, windows, new_keys, new_eids, flags, ranks, starts, pre, done,
                   scratch_keys, scratch_eids):
    """Each pending key of a window that takes its keys to its rank in the merged window, in the scratch."""
    leaves = 1 << level
    for j in range(cuda.grid(1), new_keys.size, cuda.gridsize(1)):
        g = ranks[j] + flags[j] - 1
        if not done[g]:
            continue
        k = new_keys[j]
        first_leaf = windows[j] << level
        a = last_leaf_below(keys, leaf_size, first_leaf, leaves, k)
        rank = 0
        if a >= first_leaf:
            rank = pre[(g << level) + a - first_leaf] - pre[g << level]
            for s in range(a * leaf_size, a * leaf_size + leaf_size):
                e = keys[s]
                if e == _KEY_NONE or e > k:
                    break
                rank += 1
        pos = first_leaf * leaf_size + rank + j - starts[g]
        scratch_keys[pos] = k
        scratch_eids[pos] = new_eids[j]


@cuda.jit
def wide_spread(keys, eids, leaf_size, level, windows, starts, num_groups, num_pending, pre, done, scratch_keys,
                scratch_eids, row_off):
    """Spread each merged window back from the scratch, one thread per slot."""
    width = leaf_size << level
    for t in range(cuda.grid(1), num_groups * width, cuda.gridsize(1)):
        g = t // width
        if not done[g]:
            continue
        lo = starts[g]
        hi = starts[g + 1] if g + 1 < num_groups else num_pending
        m = pre[(g + 1) << level] - pre[g << level] + hi - lo
        start = windows[lo] * width
        _fill_slot(scratch_keys, scratch_eids, start, m, keys, eids, start, t - g * width, 1 << level, leaf_size,
                   row_off)


@cuda.jit
def keep_pending(flags, ranks, done, keep):
    """Keys of groups not done stay pending (``ranks`` is the exclusive scan of the group marks)."""
    for i in range(cuda.grid(1), flags.size, cuda.gridsize(1)):
        keep[i] = 1 - done[ranks[i] + flags[i] - 1]


@cuda.jit(device=True)
def _survives(eid, edges_only):
    """A live edge (id >= 0), or with ``edges_only`` false also a wall (``EMPTY``); never a tombstone."""
    return eid >= 0 or (not edges_only and eid == _EMPTY)


@cuda.jit
def leaf_survivors(keys, eids, leaf_size, edges_only, counts):
    """``counts[leaf]``: the leaf's live edges (and walls unless ``edges_only``), one thread per leaf."""
    for leaf in range(cuda.grid(1), counts.size, cuda.gridsize(1)):
        c = 0
        for s in range(leaf * leaf_size, leaf * leaf_size + leaf_size):
            if keys[s] == _KEY_NONE:
                break
            if _survives(eids[s], edges_only):
                c += 1
        counts[leaf] = c


@cuda.jit
def gather_survivors(keys, eids, leaf_size, edges_only, offsets, key_mask, out_keys, out_eids):
    """Each leaf's survivors (see :func:`leaf_survivors`) from ``offsets[leaf]`` on, in key order:
    ``key & key_mask`` (the destination for a CSR, ``-1`` for the whole key) and the id."""
    for leaf in range(cuda.grid(1), offsets.size - 1, cuda.gridsize(1)):
        pos = offsets[leaf]
        for s in range(leaf * leaf_size, leaf * leaf_size + leaf_size):
            k = keys[s]
            if k == _KEY_NONE:
                break
            e = eids[s]
            if _survives(e, edges_only):
                out_keys[pos] = k & key_mask
                out_eids[pos] = e
                pos += 1


@cuda.jit(device=True)
def _lower_bound(arr, size, key):
    lo = 0
    hi = size
    while lo < hi:
        mid = (lo + hi) // 2
        if arr[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


@cuda.jit(device=True)
def _lower_bound_from(arr, lo, hi, key):
    """The first index in ``[lo, hi)`` whose value is not below ``key`` (``hi`` when none)."""
    while lo < hi:
        mid = (lo + hi) // 2
        if arr[mid] < key:
            lo = mid + 1
        else:
            hi = mid
    return lo


@cuda.jit
def merge_sorted(a_keys, a_eids, na, b_keys, b_eids, out_keys, out_eids):
    """Merge ``a_keys[:na]`` and ``b_keys`` (sorted, no key in both): each element's slot is its index plus
    its rank in the other array (one thread per element)."""
    nb = b_keys.size
    for t in range(cuda.grid(1), na + nb, cuda.gridsize(1)):
        if t < na:
            pos = t + _lower_bound(b_keys, nb, a_keys[t])
            out_keys[pos] = a_keys[t]
            out_eids[pos] = a_eids[t]
        else:
            j = t - na
            pos = j + _lower_bound(a_keys, na, b_keys[j])
            out_keys[pos] = b_keys[j]
            out_eids[pos] = b_eids[j]


@cuda.jit
def wall_keys(out):
    for r in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[r] = (r << 32) | _WALL_LOW


@cuda.jit
def contains(keys, eids, leaf_size, row_off, query, out):
    """``out[i]``: whether ``query[i]`` is a live edge key."""
    for i in range(cuda.grid(1), query.size, cuda.gridsize(1)):
        _, s = locate(keys, row_off, leaf_size, query[i])
        out[i] = s >= 0 and eids[s] >= 0


@cuda.jit
def split_keys(keys, src, dst):
    """``src, dst`` of edge keys ``src << 32 | dst``."""
    for i in range(cuda.grid(1), keys.size, cuda.gridsize(1)):
        src[i] = keys[i] >> 32
        dst[i] = keys[i] & _WALL_LOW
