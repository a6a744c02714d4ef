"""The packed storage of a :class:`~graphkern.DynamicGraph` on the GPU: :class:`PackedStorage`.

The same layout, rules and results as the CPU twin (``graphkern._cpu.pma``): walls, density bounds,
tombstones, rebuilds, ids reused last-freed first in key order. Every per-edge step is a kernel of
:mod:`graphkern.kernels.cuda.gpma`; the host sees only counts (how many keys are distinct, effective,
new, and still pending after each level of the insertion's climb, and at wide levels how many
windows) and never loops over windows: a level is a fixed handful of launches whatever the number of
windows. Narrow windows are merged by a block each; windows wider than the knob ``gpma_wide_window``
(graphkern.tuning) by grid-wide kernels over all their leaves and slots. Batches may be host arrays
(checked on the host, copied once) or device arrays (checked on the device).

Kernels compile on first use. An insertion that fits in place runs kernels that a bulk load (which
goes straight to a rebuild) never needs, so the first storage of a process runs a few tiny batches on a
storage of its own first (:func:`_warm_up`): their compilation is paid when the first graph is made, not
inside the first small batch that happens to need them.
"""

from __future__ import annotations

import threading

import numpy as np

from .. import _cuda, tuning
from .._packed_layout import PackedShape, check_pair_lengths, host_batch, layout
from .._validate import choose_idtype, type_name
from ..kernels.cpu.gpma import WALL_LOW as K_WALL_LOW

__all__ = ["PackedStorage"]


def _grid(n):
    from ..kernels.cuda.launch import grid_1d

    return grid_1d(max(int(n), 1))


def _blocks(n, block):
    from ..kernels.cuda.launch import grid_blocks

    return grid_blocks(max(int(n), 1), block)


def _scan_on_device(flags):
    """The exclusive scan of ``flags`` with their sum at the end (left on the device)."""
    from ..kernels.cuda.sort import exclusive_scan

    ranks = _cuda.empty(flags.size + 1, np.int64)
    exclusive_scan(flags, ranks)
    return ranks


def _scan(flags):
    """``(ranks, total)``: the exclusive scan of 0/1 flags and their sum (which the host waits for)."""
    ranks = _scan_on_device(flags)
    return ranks, int(ranks[flags.size:].copy_to_host()[0])


def _ignore(inserted=None, deleted=None) -> None:
    """A change record that keeps nothing (the warm-up's storage has no graph to tell)."""


_WARMED = False
_WARM_LOCK = threading.RLock()


def _warm_up():
    """Compile every kernel of a batch once per process: a tiny storage takes in-place insertions that
    climb two levels (by blocks) or stay in their leaf (by the grid-wide kernels), deletions, root
    overflows (a rebuild runs the kernels of a compaction) and a snapshot's CSR with its edge list.
    Snapshots that need 64-bit ids compile their own specialisation later."""
    global _WARMED
    with _WARM_LOCK:  # re-entrant: the warm-up's own storage comes back here, and finds _WARMED set
        if _WARMED:
            return
        _WARMED = True
        try:
            _run_warm_up()
        except BaseException:
            _WARMED = False  # the next construction tries again and raises where it fails
            raise


def _run_warm_up():
    s = PackedStorage(8)

    def apply(insert=None, delete=None):
        s.apply(s.check_batch("insert", insert), s.check_batch("delete", delete), _ignore, False)

    src = np.arange(8, dtype=np.int64)
    apply(insert=(src, (src + 1) % 8))
    apply(insert=(src[:3], src[:3]), delete=(src[:2], (src[:2] + 1) % 8))
    apply(insert=(np.zeros(8, np.int64), src))
    apply(insert=(src, (src + 1) % 8), delete=(src, src))
    s.snapshot_formats(choose_idtype("idtype", None, max(s.num_nodes, s.live, s.next_id)), False)
    s.edges()
    s._wide_window = 0  # an in-place insertion by the grid-wide kernels (this storage only)
    apply(insert=(np.array([5, 6]), np.array([2, 3])))


class PackedStorage(PackedShape):
    """The packed arrays, ids and degrees of a directed graph on ``num_nodes`` nodes, on the GPU.

    The same attributes as the CPU twin (``keys``, ``eids``, ``row_off``, ``leaf``, ``cap``, ``height``,
    ``upper``, ``live``, ``tombs``, ``next_id``, ``out_deg``, ``in_deg``), the arrays on the device.
    """

    device = "cuda"

    def __init__(self, num_nodes: int):
        from ..kernels.cuda import gpma as K

        _cuda.require_cuda()
        self.num_nodes = n = num_nodes
        self._wide_window = None  # the gpma_wide_window this storage uses; None: the knob's, read at each level
        self._scratch = None  # (keys, eids, leaf ranks) of in-place insertions
        self.keys = self.eids = None
        self.out_deg = _cuda.zeros(n, np.int64)
        self.in_deg = _cuda.zeros(n, np.int64)
        self._free = _cuda.empty(16, np.int64)  # a stack of freed ids on the device
        self._free_count = 0
        self.next_id = 0
        self.live = 0
        self.tombs = 0
        walls = _cuda.empty(n, np.int64)
        if n:
            K.wall_keys[_grid(n)](walls)
        self.rebuild(walls, _cuda.full(n, int(K.EMPTY), np.int64))
        _warm_up()

    @staticmethod
    def free_memory():
        """Free bytes of the current GPU, or None when it cannot say (the simulator; then nothing is
        refused)."""
        try:
            from numba import cuda

            return int(cuda.current_context().get_memory_info()[0])
        except Exception:  # noqa: BLE001 - the simulator and some drivers cannot say
            return None

    def rebuild(self, keys, eids) -> None:
        """Lay ``keys`` (sorted, tombstone-free, with their ``eids``) out afresh, sized for them."""
        from ..kernels.cuda import gpma as K

        m = keys.size
        old = (self.keys, self.eids) if self.keys is not None else None
        scratch = self._scratch
        self.cap, self.leaf, self.height, self.upper = layout(m)
        # a rebuild to the same capacity (a compaction, say) swaps the arrays with the scratch instead of
        # allocating two arrays as wide as the tree (the inputs are never either of them)
        if scratch is not None and scratch[0].size == self.cap:
            self.keys, self.eids = scratch[0], scratch[1]
        else:
            self.keys = _cuda.empty(self.cap, np.int64)
            self.eids = _cuda.empty(self.cap, np.int64)
        self._scratch = None
        if old is not None and old[0].size == self.cap:
            if scratch is not None and scratch[2].size == self.num_leaves:
                ranks = scratch[2]
            else:
                ranks = _cuda.empty(self.num_leaves, np.int64)
            self._scratch = (old[0], old[1], ranks)
        self.row_off = _cuda.zeros(self.num_nodes + 1, np.int64)
        if self.num_nodes:
            K.spread[_grid(self.cap)](keys, eids, m, self.keys, self.eids, 0, self.cap, self.leaf, self.row_off)
        self.tombs = 0

    # ------------------------------------------------------------------ batches
    def check_batch(self, name: str, pair):
        """``(src, dst)`` int64 device arrays of the batch ``pair`` (host arrays, empty for None, are
        checked on the host and copied once; device arrays are checked on the device)."""
        if pair is None:
            return host_batch(name, pair, self.num_nodes, self.free_memory, self.device)  # empty: skipped
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"argument '{name}': expected a pair (src, dst), found {type_name(pair)}")
        if _cuda.is_device_array(pair[0]) or _cuda.is_device_array(pair[1]):
            src = _cuda.index_array(f"{name}[0]", _cuda.to_device(f"{name}[0]", pair[0]), np.int64)
            dst = _cuda.index_array(f"{name}[1]", _cuda.to_device(f"{name}[1]", pair[1]), np.int64)
            check_pair_lengths(name, src, dst)
            _cuda.check_ids_in_range(f"{name}[0]", src, self.num_nodes)
            _cuda.check_ids_in_range(f"{name}[1]", dst, self.num_nodes)
            return src, dst
        src, dst = host_batch(name, pair, self.num_nodes, self.free_memory, self.device)
        return _cuda.to_device(name, src), _cuda.to_device(name, dst)

    def apply(self, insert, delete, record, keep_keys: bool):
        """Apply one checked batch, the deletions then the insertions, and drop the tombstones once they
        pass ``gpma_tombstone_fraction`` of the live edges; ``(inserted, deleted)`` effective counts.

        ``record(inserted=keys)`` and ``record(deleted=keys)`` are called after each step that changed
        the edges; ``keys`` are the changed edge keys on the device when ``keep_keys``, else None (their
        compaction is skipped)."""
        deleted = self._delete(*delete, record, keep_keys) if delete[0].size else 0
        inserted = self._insert(*insert, record, keep_keys) if insert[0].size else 0
        if self.tombs > tuning.current().gpma_tombstone_fraction * max(self.live, 64):
            self.rebuild(*self._live_elements())
        return int(inserted), int(deleted)

    def _effective_keys(self, flags, ranks, keys, count, keep_keys: bool):
        """The keys a batch changed (for the change logs of incremental searches; None unless kept)."""
        from ..kernels.cuda import gpma as K

        if not keep_keys:
            return None
        out = _cuda.empty(count, np.int64)
        K.compact3[_grid(keys.size)](flags, ranks, keys, keys, keys, out, out, out, 0)
        return out

    def unique_keys(self, src, dst):
        """The batch's distinct ``src << 32 | dst`` keys, sorted (a radix sort on ``src * n + dst``)."""
        from ..kernels.cuda import gpma as K
        from ..kernels.cuda.sort import sort_permutation

        k, n = src.size, self.num_nodes
        compact = _cuda.empty(k, np.int64)
        K.batch_keys[_grid(k)](src, dst, n, compact)
        perm = sort_permutation(compact, n * n, np.int64)
        flags = _cuda.empty(k, np.int64)
        K.mark_first_of_runs[_grid(k)](compact, perm, flags)
        ranks, total = _scan(flags)
        out = _cuda.empty(total, np.int64)
        K.scatter_unique[_grid(k)](compact, perm, flags, ranks, n, out)
        return out

    def _delete(self, src, dst, record, keep_keys: bool) -> int:
        from ..kernels.cuda import gpma as K

        keys = self.unique_keys(src, dst)
        k = keys.size
        slot_of = _cuda.empty(k, np.int64)
        flags = _cuda.empty(k, np.int64)
        K.find_deletions[_grid(k)](self.keys, self.eids, self.leaf, self.row_off, keys, slot_of, flags)
        ranks, count = _scan(flags)
        if count == 0:
            return 0
        if self._free_count + count > self._free.size:
            grown = _cuda.empty(2 * (self._free_count + count), np.int64)
            if self._free_count:
                grown[:self._free_count].copy_to_device(self._free[:self._free_count])
            self._free = grown
        freed = self._free[self._free_count:self._free_count + count]
        K.apply_deletions[_grid(k)](keys, slot_of, ranks, self.eids, self.out_deg, self.in_deg, freed)
        self._free_count += count
        record(deleted=self._effective_keys(flags, ranks, keys, count, keep_keys))
        self.live -= count
        self.tombs += count
        return count

    def _insert(self, src, dst, record, keep_keys: bool) -> int:
        from ..kernels.cuda import gpma as K

        keys = self.unique_keys(src, dst)
        k = keys.size
        leaf_of = _cuda.empty(k, np.int64)
        slot_of = _cuda.empty(k, np.int64)
        effective = _cuda.empty(k, np.int64)
        new = _cuda.empty(k, np.int64)
        K.classify_inserts[_grid(k)](self.keys, self.eids, self.leaf, self.row_off, keys, leaf_of, slot_of,
                                     effective, new)
        ranks, count = _scan(effective)
        if count == 0:
            return 0
        reuse = min(count, self._free_count)
        ids = _cuda.empty(k, np.int64)
        K.assign_ids[_grid(k)](keys, effective, ranks, self._free, self._free_count, reuse, self.next_id, slot_of,
                               self.eids, self.out_deg, self.in_deg, ids)
        self._free_count -= reuse
        record(inserted=self._effective_keys(effective, ranks, keys, count, keep_keys))
        self.next_id += count - reuse
        new_ranks, pending = _scan(new)
        self.tombs -= count - pending  # the revived tombstones
        self.live += count
        if pending:
            p_keys = _cuda.empty(pending, np.int64)
            p_ids = _cuda.empty(pending, np.int64)
            p_leaves = _cuda.empty(pending, np.int64)
            K.compact3[_grid(k)](new, new_ranks, keys, ids, leaf_of, p_keys, p_ids, p_leaves, 0)
            self._place(p_keys, p_ids, p_leaves)
        return count

    def _place(self, keys, ids, windows):
        """GPMA+'s bottom-up rebalance, a level per iteration of this host loop; each level's groups
        (pending keys that share a window) are merged by a block each, or by the grid-wide kernels where
        windows are wider than ``gpma_wide_window``, and the host waits only for the number of keys left
        pending (and, at wide levels, for the number of windows)."""
        from ..kernels.cuda import gpma as K
        from ..kernels.cuda.launch import BLOCK, WARP

        knobs = tuning.current()
        wide_window = knobs.gpma_wide_window if self._wide_window is None else self._wide_window
        level = 0
        if self.root_overflows():
            level = self.height + 1  # past the root's bound: a bulk load, rebuild at once
        elif self._scratch is None:
            self._scratch = (_cuda.empty(self.cap, np.int64), _cuda.empty(self.cap, np.int64),
                             _cuda.empty(self.num_leaves, np.int64))
        while keys.size:
            if level > self.height:  # the root would overflow: rebuild with room for everything
                live_k, live_e = self._live_elements(pending=keys.size)
                out_k = _cuda.empty(live_k.size + keys.size, np.int64)
                out_e = _cuda.empty(live_k.size + keys.size, np.int64)
                K.merge_sorted[_grid(out_k.size)](live_k, live_e, live_k.size, keys, ids, out_k, out_e)
                self.rebuild(out_k, out_e)
                return
            k = keys.size
            flags = _cuda.empty(k, np.int64)
            K.mark_groups[_grid(k)](windows, flags)
            ranks = _scan_on_device(flags)  # ranks[k]: the number of groups, read by the kernels
            starts = _cuda.empty(k, np.int64)
            K.group_starts[_grid(k)](flags, ranks, starts)
            done = _cuda.empty(k, np.int64)
            width = self.leaf << level
            if width > wide_window:
                self._merge_wide(level, windows, keys, ids, flags, ranks, starts, done)
            else:
                block = WARP if width <= knobs.gpma_small_window else BLOCK
                K.rebalance_level[_blocks(k, block)](self.keys, self.eids, self.leaf, level,
                                                     int(self.upper[level]), windows, keys, ids, starts, ranks, k,
                                                     self.row_off, done, self._scratch[2], *self._scratch[:2])
            keep = _cuda.empty(k, np.int64)
            K.keep_pending[_grid(k)](flags, ranks, done, keep)
            keep_ranks, left = _scan(keep)
            next_keys = _cuda.empty(left, np.int64)
            next_ids = _cuda.empty(left, np.int64)
            next_windows = _cuda.empty(left, np.int64)
            if left:
                K.compact3[_grid(k)](keep, keep_ranks, keys, ids, windows, next_keys, next_ids, next_windows, 1)
            keys, ids, windows = next_keys, next_ids, next_windows
            level += 1

    def _merge_wide(self, level, windows, keys, ids, flags, ranks, starts, done):
        """A level of wide windows: grid-wide kernels over every (window, leaf) and (window, slot) pair
        instead of a block per window (the host waits for the number of windows)."""
        from ..kernels.cuda import gpma as K

        k = keys.size
        groups = int(ranks[k:].copy_to_host()[0])
        pairs = groups << level
        width = self.leaf << level
        scratch_k, scratch_e, _ = self._scratch
        counts = _cuda.empty(pairs, np.int64)
        K.wide_leaf_counts[_grid(pairs)](self.keys, self.leaf, level, windows, starts, groups, counts)
        pre = _scan_on_device(counts)
        K.wide_verdicts[_grid(groups)](level, int(self.upper[level]), starts, groups, k, pre, done)
        K.wide_merge_elements[_grid(groups * width)](self.keys, self.eids, self.leaf, level, windows, keys,
                                                     starts, groups, k, pre, done, scratch_k, scratch_e)
        K.wide_merge_new[_grid(k)](self.keys, self.leaf, level, windows, keys, ids, flags, ranks, starts, pre,
                                   done, scratch_k, scratch_e)
        K.wide_spread[_grid(groups * width)](self.keys, self.eids, self.leaf, level, windows, starts, groups, k,
                                             pre, done, scratch_k, scratch_e, self.row_off)

    def _survivors(self, edges_only: bool, total: int, key_mask: int, dtype):
        """Each leaf's survivors (live edges, and walls unless ``edges_only``) gathered in key order into
        ``total`` slots: a count per leaf, a scan of the counts, a copy per leaf. ``(keys & key_mask, eids)``
        in ``dtype``."""
        from ..kernels.cuda import gpma as K

        leaves = self.num_leaves
        counts = _cuda.empty(leaves, np.int64)
        K.leaf_survivors[_grid(leaves)](self.keys, self.eids, self.leaf, edges_only, counts)
        offsets = _scan_on_device(counts)
        out_k = _cuda.empty(total, dtype)
        out_e = _cuda.empty(total, dtype)
        if total:
            K.gather_survivors[_grid(leaves)](self.keys, self.eids, self.leaf, edges_only, offsets, key_mask,
                                              out_k, out_e)
        return out_k, out_e

    def _live_elements(self, pending: int = 0):
        """The walls and live edges in key order (tombstones and gaps dropped): ``(keys, eids)``;
        ``pending`` of the live edges counted in ``live`` are not in the array yet."""
        return self._survivors(False, self.num_nodes + self.live - pending, -1, np.int64)

    # ------------------------------------------------------------------ readers
    def contains(self, src, dst):
        """Whether each ``src[i] -> dst[i]`` (a checked batch) is a live edge: a bool device array."""
        from ..kernels.cuda import gpma as K

        keys = _cuda.empty(src.size, np.int64)
        K.batch_keys[_grid(src.size)](src, dst, 1 << 32, keys)
        out = _cuda.empty(src.size, np.bool_)
        K.contains[_grid(src.size)](self.keys, self.eids, self.leaf, self.row_off, keys, out)
        return out

    @staticmethod
    def _copy(arr):
        out = _cuda.empty(arr.size, arr.dtype)
        out.copy_to_device(arr)
        return out

    def out_degrees(self):
        return self._copy(self.out_deg)

    def in_degrees(self):
        return self._copy(self.in_deg)

    def csr(self, dtype):
        """``(indptr, indices, eids)`` device arrays of the live edges in packed order, in ``dtype``."""
        from ..kernels.cuda.sort import exclusive_scan

        indptr = _cuda.empty(self.num_nodes + 1, dtype)
        exclusive_scan(self.out_deg, indptr)
        indices, eids = self._survivors(True, self.live, int(K_WALL_LOW), dtype)
        return indptr, indices, eids

    def edges(self):
        """``(src, dst, eids)`` of the live edges in key order, as device arrays."""
        from ..kernels.cuda.sort import expand_indptr

        indptr, indices, eids = self.csr(np.int64)
        return expand_indptr(indptr, _cuda.empty(indices.size, np.int64)), indices, eids

    def snapshot_formats(self, dtype, csc: bool) -> dict:
        """The formats of a snapshot in ``dtype``: its CSR, a compaction of the packed arrays (live edges
        counted per leaf, the counts scanned, each leaf's edges copied to its offset). The CSC is left to
        the Graph's device count sort, which ``csc`` does not change here."""
        return {"csr": self.csr(dtype)}
