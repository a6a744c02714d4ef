"""The packed memory array of :mod:`graphkern.kernels.cpu.gpma` on the GPU (same layout, same names).

A batch runs as a host-driven loop of kernels, with no device-side synchronisation (Hopper GPUs lack the
grid-wide sync the GPMA authors' code relies on, research/gpma.md 0): the batch's keys are built, radix
sorted and deduplicated on the device, each key locates its leaf by a binary search over the leaf
separators (one thread per key), deletions tombstone in place, and insertions climb the tree a level at a
time: the pending keys are grouped by window (a mark, a scan and a compaction), one thread per window
merges its pending keys with the window's elements through a scratch array as wide as the tree and
spreads them back when the window stays under the level's density bound, and the keys still pending
go up a level. A rebuild lays every element out afresh with one thread per slot.

Helpers for compaction (mark, exclusive scan, scatter to the ranks) keep every per-element step on the
device; only counts come back to the host.
"""

from __future__ import annotations

from numba import cuda

from ..cpu.gpma import EMPTY, KEY_NONE, TOMB, WALL_LOW  # noqa: F401  (one layout for both backends)

_KEY_NONE = int(KEY_NONE)
_WALL_LOW = int(WALL_LOW)
_TOMB = int(TOMB)
_EMPTY = int(EMPTY)


@cuda.jit(device=True)
def locate(keys, row_off, leaf_size, key):
    """``(leaf, slot)``: the leaf whose range holds ``key`` (searched between the walls of the key's row
    and the one before, as on the CPU), and the key's slot there or -1."""
    r = key >> 32
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
def spread(src_keys, src_eids, m, keys, eids, start, width, leaf_size, row_off):
    """Lay ``m`` sorted elements over the window ``[start, start + width)``, one thread per slot."""
    for t in range(cuda.grid(1), width, cuda.gridsize(1)):
        _fill_slot(src_keys, src_eids, 0, m, keys, eids, start, t, width // leaf_size, leaf_size, row_off)


@cuda.jit(device=True)
def _spread_serial(src_keys, src_eids, base, m, keys, eids, start, width, leaf_size, row_off):
    for t in range(width):
        _fill_slot(src_keys, src_eids, base, m, keys, eids, start, t, width // leaf_size, leaf_size, row_off)


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


@cuda.jit
def rebalance_level(keys, eids, leaf_size, level, upper, windows, new_keys, new_eids, starts, num_groups,
                    num_pending, row_off, done, scratch_keys, scratch_eids):
    """One thread per pending group (all its keys in one window of this level): if the window stays
    under the density bound, merge the group's keys with the window's elements (tombstones kept) in the
    window's own stretch of the scratch and spread them back; mark the group done."""
    width = leaf_size << level
    for g in range(cuda.grid(1), num_groups, cuda.gridsize(1)):
        lo = starts[g]
        hi = starts[g + 1] if g + 1 < num_groups else num_pending
        start = windows[lo] * width
        occupied = 0
        for leaf_start in range(start, start + width, leaf_size):
            for s in range(leaf_start, leaf_start + leaf_size):
                if keys[s] == _KEY_NONE:
                    break
                occupied += 1
        if occupied + hi - lo > upper:
            done[g] = 0
            continue
        n = 0
        j = lo
        for leaf_start in range(start, start + width, leaf_size):
            for s in range(leaf_start, leaf_start + leaf_size):
                k = keys[s]
                if k == _KEY_NONE:
                    break
                while j < hi and new_keys[j] < k:
                    scratch_keys[start + n] = new_keys[j]
                    scratch_eids[start + n] = new_eids[j]
                    n += 1
                    j += 1
                scratch_keys[start + n] = k
                scratch_eids[start + n] = eids[s]
                n += 1
        while j < hi:
            scratch_keys[start + n] = new_keys[j]
            scratch_eids[start + n] = new_eids[j]
            n += 1
            j += 1
        _spread_serial(scratch_keys, scratch_eids, start, n, keys, eids, start, width, leaf_size, row_off)
        done[g] = 1


@cuda.jit
def keep_pending(flags, ranks, done, keep):
    """Keys of groups not done stay pending (``ranks`` is the exclusive scan of the group marks)."""
    for i in range(cuda.grid(1), flags.size, cuda.gridsize(1)):
        keep[i] = 1 - done[ranks[i] + flags[i] - 1]


@cuda.jit
def mark_live(keys, eids, flags):
    for s in range(cuda.grid(1), keys.size, cuda.gridsize(1)):
        flags[s] = 1 if keys[s] != _KEY_NONE and eids[s] != _TOMB else 0


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


@cuda.jit
def merge_sorted(a_keys, a_eids, na, b_keys, b_eids, nb, out_keys, out_eids):
    """Merge two sorted key arrays with no key in both: each element's slot is its index plus its rank in
    the other array (one thread per element)."""
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
def forward_csr(keys, eids, row_off, indptr, indices, out_eids):
    """The live edges row by row in packed (destination) order: the snapshot's CSR (a thread per row)."""
    for r in range(cuda.grid(1), row_off.size - 1, cuda.gridsize(1)):
        pos = indptr[r]
        for s in range(row_off[r], row_off[r + 1]):
            e = eids[s]
            if e >= 0:
                indices[pos] = keys[s] & _WALL_LOW
                out_eids[pos] = e
                pos += 1


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
