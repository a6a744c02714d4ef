"""The packed storage of a :class:`~graphkern.DynamicGraph` in host memory: :class:`PackedStorage`.

The keys and stable edge ids of the packed memory array (docs/design.md, section 'Dynamic graph (GPMA)'),
the degrees, the freed ids, and the steps of a batch: deletions leave tombstones, insertions go into their
leaf's window, climbing to larger windows while a window would pass its density bound (GPMA+'s bottom-up
rebalance), a batch of many keys is merged with the whole array in two parallel passes, and a full
rebuild grows (or, after many deletions, shrinks) the array. The per-edge work is compiled in
:mod:`graphkern.kernels.cpu.gpma` and :mod:`graphkern.kernels.cpu.gpma_merge`.

The CUDA twin is ``graphkern._cuda.pma.PackedStorage``, with the same methods. The storage is not
thread-safe on its own: the DynamicGraph that holds it serializes every call.
"""

from __future__ import annotations

import os
import threading

import numba
import numpy as np

from .. import _memory, tuning
from .._packed_layout import PackedShape, host_batch, layout
from ..kernels.cpu import gpma as _pma
from ..kernels.cpu import gpma_merge as _pma_merge
from ..kernels.cpu import sort as _sort

__all__ = ["PackedStorage"]

_SORT_THREADS = None
_SORT_THREADS_LOCK = threading.Lock()


def _sort_threads():
    global _SORT_THREADS
    with _SORT_THREADS_LOCK:  # two graphs' first big batches on two threads make one pool, not two
        if _SORT_THREADS is None:
            from concurrent.futures import ThreadPoolExecutor

            _SORT_THREADS = ThreadPoolExecutor(2, thread_name_prefix="graphkern-sort")
    return _SORT_THREADS


def _add_degrees(keys, out_deg, in_deg, delta: int) -> None:
    """``out_deg[src] += delta``, ``in_deg[dst] += delta`` for each key, on two threads for big batches."""
    if keys.size >= tuning.current().gpma_split_degrees_min:
        _pma.add_degrees_split(keys, out_deg, in_deg, delta)
    else:
        _pma.add_degrees(keys, out_deg, in_deg, delta)


class PackedStorage(PackedShape):
    """The packed arrays, ids and degrees of a directed graph on ``num_nodes`` nodes, in host memory.

    Attributes read by the DynamicGraph and by the kernels that walk the packed order: ``keys`` and
    ``eids`` (the slots), ``row_off`` (each row's wall slot), ``leaf``, ``cap``, ``height`` and ``upper``
    (the layout), ``live``, ``tombs`` and ``next_id`` (counts), ``out_deg`` and ``in_deg``.

    Examples
    --------
    >>> from graphkern._cpu.pma import PackedStorage
    >>> s = PackedStorage(3)
    >>> changes = []
    >>> record = lambda **keys: changes.append({k: v.tolist() for k, v in keys.items()})
    >>> s.apply(s.check_batch("insert", ([0, 2, 0], [1, 1, 1])), s.check_batch("delete", None), record, False)
    (2, 0)
    >>> [a.tolist() for a in s.edges()], changes
    ([[0, 2], [1, 1], [0, 1]], [{'inserted': [1, 8589934593]}])
    """

    device = "cpu"

    def __init__(self, num_nodes: int):
        self.num_nodes = n = num_nodes
        self.out_deg = np.zeros(n, dtype=np.int64)
        self.in_deg = np.zeros(n, dtype=np.int64)
        self._free = np.zeros(0, dtype=np.int64)  # freed ids, reused last-freed first
        self.next_id = 0
        self.live = 0
        self.tombs = 0
        self._spare = None  # the arrays a merge left, reused by the next merge of the same capacity
        walls = (np.arange(n, dtype=np.int64) << np.int64(32)) | _pma.WALL_LOW
        self.rebuild(walls, np.full(n, _pma.EMPTY, dtype=np.int64))

    @staticmethod
    def free_memory():
        """Free bytes of host memory, or None when the platform cannot say (then nothing is refused)."""
        try:
            return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
        except (AttributeError, OSError, ValueError):
            return None

    def rebuild(self, keys, eids) -> None:
        """Lay ``keys`` (sorted, tombstone-free, with their ``eids``) out afresh, sized for them."""
        m = keys.size
        self.cap, self.leaf, self.height, self.upper = layout(m)
        if self._spare is not None and self._spare[0].size != self.cap:
            self._spare = None
        self.keys = np.empty(self.cap, dtype=np.int64)
        self.eids = np.empty(self.cap, dtype=np.int64)
        self.row_off = np.zeros(self.num_nodes + 1, dtype=np.int64)
        if self.num_nodes:
            _pma.spread_parallel(keys, eids, m, self.keys, self.eids, self.cap, self.leaf, self.row_off)
        self.tombs = 0

    # ------------------------------------------------------------------ batches
    def check_batch(self, name: str, pair):
        """``(src, dst)`` int64 arrays of the batch ``pair`` (empty for None), checked (argument ``name``)."""
        return host_batch(name, pair, self.num_nodes, self.free_memory, self.device)

    def apply(self, insert, delete, record, keep_keys: bool):
        """Apply one checked batch, the deletions then the insertions, and drop the tombstones once they
        pass ``gpma_tombstone_fraction`` of the live edges; ``(inserted, deleted)`` effective counts.

        ``record(inserted=keys)`` and ``record(deleted=keys)`` are called after each step that changed
        the edges, with the changed edge keys (the batch's own arrays; on the host they cost nothing to
        keep, so they are passed whatever ``keep_keys`` says)."""
        deleted = self._delete(*delete, record) if delete[0].size else 0
        inserted = self._insert(*insert, record) if insert[0].size else 0
        if self.tombs > tuning.current().gpma_tombstone_fraction * max(self.live, 64):
            self._compact()
        return int(inserted), int(deleted)

    def unique_keys(self, src, dst):
        """The batch's distinct ``src << 32 | dst`` keys in order. NumPy's sort of 64-bit keys is a SIMD
        sort, an order of magnitude faster than two stable parallel count sorts by destination and
        source (their histograms have a counter per node). A big batch is split at a pivot (the median
        of a sample of its keys): two threads each gather one side and sort it (NumPy releases the GIL),
        and the sides lie in order one after the other, with nothing to merge, which is faster than
        sorting halves on two threads and merging them (``python tools/dynamic_bench.py --figures
        apply``)."""
        knobs = tuning.current()
        if src.size >= knobs.gpma_parallel_sort_min and numba.get_num_threads() > 1:  # fewer under fair_share
            step = max(src.size // knobs.gpma_sort_pivot_sample, 1)
            sample = np.sort((src[::step] << 32) | dst[::step])
            pivot = np.int64(sample[sample.size // 2])
            # recycled maps (graphkern._memory): a fresh array costs page faults on every batch
            sides = (_memory.empty(src.size, np.int64), _memory.empty(src.size, np.int64))

            def gather_and_sort(above: bool) -> np.ndarray:
                side = sides[above][: _pma.edge_keys_side(src, dst, pivot, above, sides[above])]
                side.sort()
                return side

            below, above = _sort_threads().map(gather_and_sort, (False, True))
            # every key below the pivot is below every other key: the distinct keys are each side's
            out = _memory.empty(src.size, np.int64)
            n = _pma.unique_sorted(below, out)
            return out[: n + _pma.unique_sorted(above, out[n:])]
        keys = _pma.edge_keys(src, dst, np.empty(src.size, dtype=np.int64))
        keys.sort()
        out = np.empty_like(keys)
        return out[: _pma.unique_sorted(keys, out)]

    def _delete(self, src, dst, record) -> int:
        keys = self.unique_keys(src, dst)
        freed = np.empty(keys.size, dtype=np.int64)
        deleted = np.empty(keys.size, dtype=np.int64)
        count = _pma.delete_batch(self.keys, self.eids, self.leaf, self.row_off, keys, freed, deleted)
        self._free = np.concatenate([self._free, freed[:count]])
        if count:
            _add_degrees(deleted[:count], self.out_deg, self.in_deg, -1)
            record(deleted=deleted[:count])
        self.live -= count
        self.tombs += count
        return count

    def _take_ids(self, k: int) -> np.ndarray:
        reuse = min(k, self._free.size)
        ids = np.empty(k, dtype=np.int64)
        if reuse:
            ids[:reuse] = self._free[::-1][:reuse]
            self._free = self._free[: self._free.size - reuse]
        ids[reuse:] = np.arange(self.next_id, self.next_id + k - reuse, dtype=np.int64)
        self.next_id += k - reuse
        return ids

    def _insert(self, src, dst, record) -> int:
        keys = self.unique_keys(src, dst)
        # a batch that reaches most leaves, or that the root could not take, is merged in one sweep
        if keys.size * tuning.current().gpma_merge_ratio >= self.cap or self.root_overflows(keys.size):
            count = self._merge(keys, record)
            if count is not None:
                return count
        leaf_of = np.empty(keys.size, dtype=np.int64)
        slot_of = np.empty(keys.size, dtype=np.int64)
        _pma.classify_inserts(self.keys, self.leaf, self.row_off, keys, leaf_of, slot_of)
        count, revived = _pma.count_effective_inserts(self.eids, slot_of)
        if count == 0:
            return 0
        # ids go to the effective keys in key order (freed ids first, the last freed first); tombstones
        # come back to life with a fresh id (a new edge), in place
        ids = self._take_ids(count)
        effective = np.empty(count, dtype=np.int64)
        pending = np.empty(count - revived, dtype=np.int64)
        pending_ids = np.empty(count - revived, dtype=np.int64)
        pending_leaves = np.empty(count - revived, dtype=np.int64)
        _pma.split_inserts(self.eids, slot_of, leaf_of, keys, ids, effective, pending, pending_ids, pending_leaves)
        self.tombs -= revived
        record(inserted=effective)
        _add_degrees(effective, self.out_deg, self.in_deg, 1)
        self.live += count
        if pending.size:
            self._place(pending, pending_ids, pending_leaves)
        return count

    def _place(self, keys, ids, windows):
        """Insert the sorted new ``keys`` level by level (GPMA+'s bottom-up rebalance); ``windows`` starts
        as each key's leaf (all three arrays are the caller's scratch, compacted in place)."""
        level = 0
        size = keys.size
        starts = np.empty(size + 1, dtype=np.int64)
        done = np.empty(size, dtype=np.bool_)
        # past the root's bound no window can take the batch, so go straight to the rebuild instead of
        # climbing every level first (a bulk load)
        if self.root_overflows(0):
            level = self.height + 1
        while size:
            if level > self.height:  # the root would overflow: rebuild with room for everything
                live_k, live_e = self._live_elements()
                out_k = np.empty(live_k.size + size, dtype=np.int64)
                out_e = np.empty(live_k.size + size, dtype=np.int64)
                _pma.merge_sorted(live_k, live_e, live_k.size, keys[:size], ids[:size], out_k, out_e)
                self.rebuild(out_k, out_e)
                return
            groups = _pma.window_groups(windows, size, starts)
            done[:groups] = False
            _pma.rebalance_level(self.keys, self.eids, self.leaf, level, int(self.upper[level]),
                                 windows[starts[:groups]], keys, ids, starts[:groups], starts[1:groups + 1],
                                 self.row_off, done[:groups])
            size = _pma.keep_pending(keys, ids, windows, starts, groups, done)
            level += 1

    def _merge(self, keys, record, compact: bool = False):
        """Merge the sorted distinct ``keys`` with the array into a fresh layout sized for the result
        (tombstones dropped); returns the effective count, or None when the memory for a second pair of
        arrays is not there (the caller then inserts in place).

        Two parallel passes over chunks of leaves, each with its share of the batch: the first counts what
        every chunk keeps and adds, the second writes it at its place in the new layout. The new arrays
        are the spare pair of the previous merge when the capacity is the same (a merge into fresh memory
        pays a page fault every 4 KiB); the old pair becomes the spare, so a graph that has merged holds two
        pairs of arrays."""
        leaves = self.num_leaves
        chunks = min(leaves, tuning.current().gpma_merge_chunks)
        chunk_leaves = (np.arange(chunks + 1, dtype=np.int64) * leaves) // chunks
        bounds = np.empty(chunks + 1, dtype=np.int64)
        bounds[0], bounds[-1] = 0, keys.size
        # chunk c takes the batch keys from its first leaf's first key (leaves are never empty) on
        bounds[1:-1] = np.searchsorted(keys, self.keys[chunk_leaves[1:-1] * self.leaf])
        live = np.empty(chunks, dtype=np.int64)
        new = np.empty(chunks, dtype=np.int64)
        _pma_merge.merge_count(self.keys, self.eids, self.leaf, chunk_leaves, keys, bounds, live, new, self.tombs > 0)
        out_first = np.zeros(chunks + 1, dtype=np.int64)
        np.cumsum(live + new, out=out_first[1:])
        new_first = np.zeros(chunks + 1, dtype=np.int64)
        np.cumsum(new, out=new_first[1:])
        count = int(new_first[-1])
        if count == 0 and not compact:
            return 0
        cap, leaf, height, upper = layout(int(out_first[-1]))
        if self._spare is not None and self._spare[0].size == cap:
            out_k, out_e = self._spare
        else:
            self._spare = None
            free = self.free_memory()
            if free is not None and 16 * cap > free:
                return None
            out_k = np.empty(cap, dtype=np.int64)
            out_e = np.empty(cap, dtype=np.int64)
        ids = self._take_ids(count)
        effective = np.empty(count, dtype=np.int64)
        _pma_merge.merge_write(self.keys, self.eids, self.leaf, chunk_leaves, keys, bounds, out_first, new_first,
                               ids, out_k, out_e, leaf, self.row_off, effective)
        self._spare = (self.keys, self.eids) if self.cap == cap else None
        self.keys, self.eids = out_k, out_e
        self.cap, self.leaf, self.height, self.upper = cap, leaf, height, upper
        self.tombs = 0
        if count:
            self.live += count
            record(inserted=effective)
            _add_degrees(effective, self.out_deg, self.in_deg, 1)
        return count

    def _live_elements(self):
        """The walls and live edges in key order (tombstones and gaps dropped): ``(keys, eids)``."""
        live_k = np.empty(self.cap, dtype=np.int64)
        live_e = np.empty(self.cap, dtype=np.int64)
        n = _pma.live_elements(self.keys, self.eids, live_k, live_e)
        return live_k[:n], live_e[:n]

    def _compact(self):
        """Drop the tombstones: a merge with no keys (two streaming passes), or, without the memory for
        a second pair of arrays, a rebuild from the live elements."""
        if self._merge(np.zeros(0, dtype=np.int64), None, compact=True) is None:
            self.rebuild(*self._live_elements())

    # ------------------------------------------------------------------ readers
    def contains(self, src, dst):
        """Whether each ``src[i] -> dst[i]`` (a checked batch) is a live edge: a bool array."""
        keys = (src << np.int64(32)) | dst
        return _pma.contains(self.keys, self.eids, self.leaf, self.row_off, keys, np.empty(keys.size, np.bool_))

    def out_degrees(self):
        return self.out_deg.copy()

    def in_degrees(self):
        return self.in_deg.copy()

    def csr(self, dtype):
        """``(indptr, indices, eids)`` of the live edges in packed order, in ``dtype``."""
        n = self.num_nodes
        indptr = np.zeros(n + 1, dtype=dtype)
        np.cumsum(self.out_deg, out=indptr[1:])
        indices = np.empty(self.live, dtype=dtype)
        eids = np.empty(self.live, dtype=dtype)
        if n:
            _pma.forward_csr(self.keys, self.eids, self.row_off, indptr, indices, eids)
        return indptr, indices, eids

    def edges(self):
        """``(src, dst, eids)`` of the live edges in key order (by source, then destination)."""
        indptr, indices, eids = self.csr(np.int64)
        return np.repeat(np.arange(self.num_nodes, dtype=np.int64), np.diff(indptr)), indices, eids

    def snapshot_formats(self, dtype, csc: bool) -> dict:
        """The formats of a snapshot in ``dtype``: its CSR from the packed order, and with ``csc`` its
        CSC, by the stable count sort whose row lengths are the in-degrees kept here (the sort then needs
        no histogram pass for its last part)."""
        formats = {"csr": self.csr(dtype)}
        if csc:
            formats["csc"] = _sort.transpose_compressed(*formats["csr"], self.num_nodes, col_counts=self.in_deg)
        return formats
