"""``DynamicGraph(n, backend="cuda")``: the packed memory array, its ids and degrees on the GPU.

The same layout, rules and results as the CPU class (graphkern.graph.dynamic): walls, density bounds,
tombstones, rebuilds, ids reused last-freed first in key order. Every per-edge step is a kernel of
:mod:`graphkern.kernels.cuda.gpma`; the host sees only counts (how many keys are distinct, effective,
new, and still pending after each level of the insertion's climb, and at wide levels how many
windows) and never loops over windows: a level is a fixed handful of launches whatever the number of
windows. Narrow windows are merged by a block each; windows wider than ``WIDE_WINDOW`` slots (few, and
often one: a hub's inserts) by grid-wide kernels over all their leaves and slots. Batches may be host
arrays (checked on the host, copied once) or device arrays (checked on the device).

Kernels compile on first use. An insertion that fits in place runs kernels that a bulk load (which
goes straight to a rebuild) never needs, so the first graph of a process runs a few tiny batches on a
graph of its own first (:func:`_warm_up`): their compilation is paid when the first graph is made, not
inside the first small batch that happens to need them.
"""

from __future__ import annotations

import threading
import weakref

import numpy as np

from .. import _cuda
from .._validate import type_name
from ..kernels.cpu.gpma import WALL_LOW as K_WALL_LOW
from .dynamic import DynamicGraph, _layout, serialized


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


# windows of at most this many slots are merged by blocks of one warp (most of a block of launch.BLOCK
# threads would idle on a leaf or two); wider ones by blocks of launch.BLOCK threads. Not tuned yet:
# `python3 tools/gpu_check.py`, rows "gpma ...", measures it.
SMALL_WINDOW = 512

# windows wider than this many slots are merged by grid-wide kernels (every thread of the GPU on the
# few wide windows a level has, a hub's inserts say) rather than by a block each. Not tuned yet:
# `python3 tools/gpu_check.py`, rows "gpma ...", measures it.
WIDE_WINDOW = 4096

_WARMED = False
_WARM_LOCK = threading.RLock()


def _warm_up():
    """Compile every kernel of a batch once per process: a tiny graph takes in-place insertions that
    climb two levels (by blocks) or stay in their leaf (by the grid-wide kernels), deletions, root
    overflows (a rebuild runs the kernels of a compaction) and a snapshot with its edge list. Snapshots
    that need 64-bit ids compile their own specialisation later."""
    global _WARMED
    with _WARM_LOCK:  # re-entrant: the warm-up's own graph comes back here, and finds _WARMED set
        if _WARMED:
            return
        _WARMED = True
        try:
            _run_warm_up()
        except BaseException:
            _WARMED = False  # the next construction tries again and raises where it fails
            raise


def _run_warm_up():
    dg = CudaDynamicGraph(8)
    src = np.arange(8, dtype=np.int64)
    dg.apply(insert=(src, (src + 1) % 8))
    dg.apply(insert=(src[:3], src[:3]), delete=(src[:2], (src[:2] + 1) % 8))
    dg.apply(insert=(np.zeros(8, np.int64), src))
    dg.apply(insert=(src, (src + 1) % 8), delete=(src, src))
    dg.snapshot()
    dg.edges()
    dg._wide_window = 0  # an in-place insertion by the grid-wide kernels (this graph only)
    dg.apply(insert=(np.array([5, 6]), np.array([2, 3])))


class CudaDynamicGraph(DynamicGraph, device="cuda"):
    """The GPU twin of :class:`~graphkern.DynamicGraph` (made by ``DynamicGraph(n, backend="cuda")``).

    Thread-safe: calls on one graph are serialized (the same re-entrant lock as the CPU class: a batch's
    kernels and a reader's never interleave on one graph's device arrays).
    """

    def __init__(self, num_nodes: int, *, backend=None):
        from ..kernels.cuda import gpma as K

        _cuda.require_cuda()
        self._lock = threading.RLock()  # serializes every call that reads or writes the storage
        self._n = self._check_nodes(num_nodes)
        self._device = "cuda"
        self._wide_window = None  # the WIDE_WINDOW this graph uses; None: the module's, read at each batch
        self._watchers = weakref.WeakSet()  # change logs of incremental searches (IncrementalBFS)
        self._version = 0
        self._snapshot_cache = None
        self._out_deg = _cuda.zeros(self._n, np.int64)
        self._in_deg = _cuda.zeros(self._n, np.int64)
        self._free = _cuda.empty(16, np.int64)  # a stack of freed ids on the device
        self._free_count = 0
        self._next_id = 0
        self._live = 0
        self._tombs = 0
        walls = _cuda.empty(self._n, np.int64)
        if self._n:
            K.wall_keys[_grid(self._n)](walls)
        self._rebuild(walls, _cuda.full(self._n, int(K.EMPTY), np.int64))
        _warm_up()

    @serialized
    def out_degrees(self):
        return self._copy(self._out_deg)

    @serialized
    def in_degrees(self):
        return self._copy(self._in_deg)

    @staticmethod
    def _copy(arr):
        out = _cuda.empty(arr.size, arr.dtype)
        out.copy_to_device(arr)
        return out

    def _rebuild(self, keys, eids):
        from ..kernels.cuda import gpma as K

        m = keys.size
        old = (self._keys, self._eids) if hasattr(self, "_keys") else None
        scratch = getattr(self, "_scratch", None)  # (keys, eids, leaf ranks) of in-place insertions
        self._cap, self._leaf, self._height, self._upper = _layout(m)
        # a rebuild to the same capacity (a compaction, say) swaps the arrays with the scratch instead of
        # allocating two arrays as wide as the tree (the inputs are never either of them)
        if scratch is not None and scratch[0].size == self._cap:
            self._keys, self._eids = scratch[0], scratch[1]
        else:
            self._keys = _cuda.empty(self._cap, np.int64)
            self._eids = _cuda.empty(self._cap, np.int64)
        self._scratch = None
        if old is not None and old[0].size == self._cap:
            if scratch is not None and scratch[2].size == self._num_leaves:
                ranks = scratch[2]
            else:
                ranks = _cuda.empty(self._num_leaves, np.int64)
            self._scratch = (old[0], old[1], ranks)
        self._row_off = _cuda.zeros(self._n + 1, np.int64)
        if self._n:
            K.spread[_grid(self._cap)](keys, eids, m, self._keys, self._eids, 0, self._cap, self._leaf,
                                       self._row_off)
        self._tombs = 0

    def _batch(self, name, pair):
        if pair is None:
            return super()._batch(name, pair)  # empty: apply() skips it
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"argument '{name}': expected a pair (src, dst), found {type_name(pair)}")
        if _cuda.is_device_array(pair[0]) or _cuda.is_device_array(pair[1]):
            src = _cuda.index_array(f"{name}[0]", _cuda.to_device(f"{name}[0]", pair[0]), np.int64)
            dst = _cuda.index_array(f"{name}[1]", _cuda.to_device(f"{name}[1]", pair[1]), np.int64)
            if src.size != dst.size:
                raise ValueError(f"argument '{name}': expected src and dst of equal lengths, found {src.size} and "
                                 f"{dst.size}")
            _cuda.check_ids_in_range(f"{name}[0]", src, self._n)
            _cuda.check_ids_in_range(f"{name}[1]", dst, self._n)
            return src, dst
        src, dst = super()._batch(name, pair)  # checked on the host, then copied once
        return _cuda.to_device(name, src), _cuda.to_device(name, dst)

    @serialized
    def contains(self, src, dst):
        """Whether each ``src[i] -> dst[i]`` is a live edge (a bool device array)."""
        from ..kernels.cuda import gpma as K

        src, dst = self._batch("edges", (src, dst))
        keys = _cuda.empty(src.size, np.int64)
        K.batch_keys[_grid(src.size)](src, dst, 1 << 32, keys)
        out = _cuda.empty(src.size, np.bool_)
        K.contains[_grid(src.size)](self._keys, self._eids, self._leaf, self._row_off, keys, out)
        return out

    def _effective_keys(self, flags, ranks, keys, count):
        """The keys a batch changed (for the change logs of incremental searches; None without any)."""
        from ..kernels.cuda import gpma as K

        if not len(self._watchers):
            return None
        out = _cuda.empty(count, np.int64)
        K.compact3[_grid(keys.size)](flags, ranks, keys, keys, keys, out, out, out, 0)
        return out

    def _unique_keys(self, src, dst):
        """The batch's distinct ``src << 32 | dst`` keys, sorted (a radix sort on ``src * n + dst``)."""
        from ..kernels.cuda import gpma as K
        from ..kernels.cuda.sort import sort_permutation

        k = src.size
        compact = _cuda.empty(k, np.int64)
        K.batch_keys[_grid(k)](src, dst, self._n, compact)
        perm = sort_permutation(compact, self._n * self._n, np.int64)
        flags = _cuda.empty(k, np.int64)
        K.mark_first_of_runs[_grid(k)](compact, perm, flags)
        ranks, total = _scan(flags)
        out = _cuda.empty(total, np.int64)
        K.scatter_unique[_grid(k)](compact, perm, flags, ranks, self._n, out)
        return out

    def _delete(self, src, dst) -> int:
        from ..kernels.cuda import gpma as K

        keys = self._unique_keys(src, dst)
        k = keys.size
        slot_of = _cuda.empty(k, np.int64)
        flags = _cuda.empty(k, np.int64)
        K.find_deletions[_grid(k)](self._keys, self._eids, self._leaf, self._row_off, keys, slot_of, flags)
        ranks, count = _scan(flags)
        if count == 0:
            return 0
        if self._free_count + count > self._free.size:
            grown = _cuda.empty(2 * (self._free_count + count), np.int64)
            if self._free_count:
                grown[:self._free_count].copy_to_device(self._free[:self._free_count])
            self._free = grown
        freed = self._free[self._free_count:self._free_count + count]
        K.apply_deletions[_grid(k)](keys, slot_of, ranks, self._eids, self._out_deg, self._in_deg, freed)
        self._free_count += count
        self._record(deleted=self._effective_keys(flags, ranks, keys, count))
        self._live -= count
        self._tombs += count
        return count

    def _insert(self, src, dst) -> int:
        from ..kernels.cuda import gpma as K

        keys = self._unique_keys(src, dst)
        k = keys.size
        leaf_of = _cuda.empty(k, np.int64)
        slot_of = _cuda.empty(k, np.int64)
        effective = _cuda.empty(k, np.int64)
        new = _cuda.empty(k, np.int64)
        K.classify_inserts[_grid(k)](self._keys, self._eids, self._leaf, self._row_off, keys, leaf_of, slot_of,
                                     effective, new)
        ranks, count = _scan(effective)
        if count == 0:
            return 0
        reuse = min(count, self._free_count)
        ids = _cuda.empty(k, np.int64)
        K.assign_ids[_grid(k)](keys, effective, ranks, self._free, self._free_count, reuse, self._next_id, slot_of,
                               self._eids, self._out_deg, self._in_deg, ids)
        self._free_count -= reuse
        self._record(inserted=self._effective_keys(effective, ranks, keys, count))
        self._next_id += count - reuse
        new_ranks, pending = _scan(new)
        self._tombs -= count - pending  # the revived tombstones
        self._live += count
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
        windows are wider than ``WIDE_WINDOW``, and the host waits only for the number of keys left
        pending (and, at wide levels, for the number of windows)."""
        from ..kernels.cuda import gpma as K
        from ..kernels.cuda.launch import BLOCK, WARP

        level = 0
        if self._n + self._live + self._tombs > int(self._upper[self._height]):
            level = self._height + 1  # past the root's bound: a bulk load, rebuild at once
        elif self._scratch is None:
            self._scratch = (_cuda.empty(self._cap, np.int64), _cuda.empty(self._cap, np.int64),
                             _cuda.empty(self._num_leaves, np.int64))
        while keys.size:
            if level > self._height:  # the root would overflow: rebuild with room for everything
                live_k, live_e = self._live_elements(pending=keys.size)
                out_k = _cuda.empty(live_k.size + keys.size, np.int64)
                out_e = _cuda.empty(live_k.size + keys.size, np.int64)
                K.merge_sorted[_grid(out_k.size)](live_k, live_e, live_k.size, keys, ids, out_k, out_e)
                self._rebuild(out_k, out_e)
                return
            k = keys.size
            flags = _cuda.empty(k, np.int64)
            K.mark_groups[_grid(k)](windows, flags)
            ranks = _scan_on_device(flags)  # ranks[k]: the number of groups, read by the kernels
            starts = _cuda.empty(k, np.int64)
            K.group_starts[_grid(k)](flags, ranks, starts)
            done = _cuda.empty(k, np.int64)
            width = self._leaf << level
            if width > (WIDE_WINDOW if self._wide_window is None else self._wide_window):
                self._merge_wide(level, windows, keys, ids, flags, ranks, starts, done)
            else:
                block = WARP if width <= SMALL_WINDOW else BLOCK
                K.rebalance_level[_blocks(k, block)](self._keys, self._eids, self._leaf, level,
                                                     int(self._upper[level]), windows, keys, ids, starts, ranks, k,
                                                     self._row_off, done, self._scratch[2], *self._scratch[:2])
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
        width = self._leaf << level
        scratch_k, scratch_e, _ = self._scratch
        counts = _cuda.empty(pairs, np.int64)
        K.wide_leaf_counts[_grid(pairs)](self._keys, self._leaf, level, windows, starts, groups, counts)
        pre = _scan_on_device(counts)
        K.wide_verdicts[_grid(groups)](level, int(self._upper[level]), starts, groups, k, pre, done)
        K.wide_merge_elements[_grid(groups * width)](self._keys, self._eids, self._leaf, level, windows, keys,
                                                     starts, groups, k, pre, done, scratch_k, scratch_e)
        K.wide_merge_new[_grid(k)](self._keys, self._leaf, level, windows, keys, ids, flags, ranks, starts, pre,
                                   done, scratch_k, scratch_e)
        K.wide_spread[_grid(groups * width)](self._keys, self._eids, self._leaf, level, windows, starts, groups, k,
                                             pre, done, scratch_k, scratch_e, self._row_off)

    def _compact(self):
        self._rebuild(*self._live_elements())

    def _survivors(self, edges_only: bool, total: int, key_mask: int, dtype):
        """Each leaf's survivors (live edges, and walls unless ``edges_only``) gathered in key order into
        ``total`` slots: a count per leaf, a scan of the counts, a copy per leaf. ``(keys & key_mask, eids)``
        in ``dtype``."""
        from ..kernels.cuda import gpma as K

        leaves = self._num_leaves
        counts = _cuda.empty(leaves, np.int64)
        K.leaf_survivors[_grid(leaves)](self._keys, self._eids, self._leaf, edges_only, counts)
        offsets = _scan_on_device(counts)
        out_k = _cuda.empty(total, dtype)
        out_e = _cuda.empty(total, dtype)
        if total:
            K.gather_survivors[_grid(leaves)](self._keys, self._eids, self._leaf, edges_only, offsets, key_mask,
                                              out_k, out_e)
        return out_k, out_e

    def _live_elements(self, pending: int = 0):
        """The walls and live edges in key order (tombstones and gaps dropped): ``(keys, eids)``;
        ``pending`` of the live edges counted in ``_live`` are not in the array yet."""
        return self._survivors(False, self._n + self._live - pending, -1, np.int64)

    def _csr(self, dtype=np.int64):
        from ..kernels.cuda.sort import exclusive_scan

        indptr = _cuda.empty(self._n + 1, dtype)
        exclusive_scan(self._out_deg, indptr)
        indices, eids = self._survivors(True, self._live, int(K_WALL_LOW), dtype)
        return indptr, indices, eids

    @serialized
    def edges(self):
        """``(src, dst, eids)`` of the live edges in key order, as device arrays."""
        from ..kernels.cuda.sort import expand_indptr

        indptr, indices, eids = self._csr()
        return expand_indptr(indptr, _cuda.empty(indices.size, np.int64)), indices, eids

    @serialized
    def snapshot(self, *, csc: bool = False):
        """The graph now as a device :class:`~graphkern.Graph` (CSR from the packed order, stable ids);
        ``csc=True`` also builds its CSC (by the device count sort) before returning.

        The CSR is a compaction of the packed arrays (live edges counted per leaf, the counts scanned,
        each leaf's edges copied to its offset) in the id dtype :meth:`Graph.from_csr` would choose, and
        the Graph is made directly: the packed order and the id bookkeeping already guarantee what
        from_csr would check (sorted rows, in-range destinations, distinct ids below max_edge_id)."""
        cached = self.cached_snapshot()
        if cached is None:
            from .._validate import choose_idtype
            from ._formats import normalise_formats
            from .graph import Graph

            dtype = choose_idtype("idtype", None, max(self._n, self._live, self._next_id))
            cached = Graph(_num_src=self._n, _num_dst=self._n, _num_edges=self._live, _num_edge_ids=self._next_id,
                           _idtype=dtype, _allowed=normalise_formats(None), _formats={"csr": self._csr(dtype)},
                           _identity=set(), _is_block=False, _device="cuda")
            self._snapshot_cache = (self._version, cached)
        if csc:
            cached.csc()
        return cached
