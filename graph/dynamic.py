"""``DynamicGraph``: a directed graph in a packed memory array (GPMA's layout) with stable edge ids.

Batches of insertions and deletions update the array in place: a deletion leaves a tombstone, an
insertion goes into its leaf's window, climbing to larger windows while a window would pass its density
bound, and a full rebuild grows (or, after many deletions, shrinks) the array. Each live edge keeps its id
until it is deleted; freed ids are reused, so ids stay below :attr:`max_edge_id` and edge-feature arrays of
that many rows stay valid across batches. :meth:`snapshot` is a :class:`~graphkern.Graph` whose CSR comes
from the packed order and whose edge ids are the stable ids.

Kernels take the DynamicGraph itself (graphkern.sparse and graphkern.traversal decide between its
snapshot and its packed arrays), :class:`~graphkern.IncrementalBFS` follows its changes through a change
log, and :mod:`graphkern.graph.temporal` steps it through time. ``DynamicGraph(n, backend="cuda")`` is
the GPU twin (graph/dynamic_cuda.py).
"""

from __future__ import annotations

import functools
import threading
import weakref

import numba
import numpy as np

from .. import _memory
from .._fair_share import fair_share
from .._validate import as_index_array, check_ids_in_range, check_int_scalar, type_name
from ..kernels.cpu import gpma as _pma
from ..kernels.cpu import gpma_merge as _pma_merge
from ..kernels.cpu import sort as _sort

__all__ = ["DynamicGraph"]

# node ids must leave the key's low 32 bits one value for walls, and the key must fit a signed int64
MAX_NODES = (1 << 31) - 2
# a rebuild drops tombstones once they pass this fraction of the live edges
TOMBSTONE_FRACTION = 0.25
# GPMA's density bounds: leaves up to 0.92 full, the root up to 0.84 (linear in between)
_LEAF_UPPER, _ROOT_UPPER = 0.92, 0.84


# working memory of a batch per edge: keys, ids, leaves, slots and masks of 8 bytes, with sort buffers
BATCH_BYTES_PER_EDGE = 96
# a batch of at least capacity / MERGE_RATIO keys is merged with the whole array into a fresh layout
# (kernels/cpu/gpma_merge.py, merge_count): in place a key costs a search and a leaf merge, the merge a few ns
# a slot. The two break even near 5 10^5 keys into 10M edges (16M slots); on a small graph (131K slots,
# ~4,500 keys a step) a ratio of 32 sent the steps to the merge and made them slower. Measured by
# `python tools/dynamic_bench.py --figures apply seed` (figures in docs/performance.md, section
# 'CPU: dynamic graph').
MERGE_RATIO = 24
# chunks of leaves of a merge (enough for the threads to balance; each costs a search of the batch)
MERGE_CHUNKS = 256


def _free_memory(device: str):
    """Free bytes of host memory (``cpu``) or of the current GPU (``cuda``), or None when unknown."""
    try:
        if device == "cuda":
            from numba import cuda

            return int(cuda.current_context().get_memory_info()[0])
        import os

        return int(os.sysconf("SC_AVPHYS_PAGES")) * int(os.sysconf("SC_PAGE_SIZE"))
    except Exception:  # noqa: BLE001 - the simulator and some platforms cannot say; then do not refuse
        return None


# batches from this size on are split at a pivot and the two sides sorted on two threads
PARALLEL_SORT_MIN = 1 << 18
# keys sampled to pick the pivot that splits a big batch for its two sorting threads
SORT_PIVOT_SAMPLE = 1024
_SORT_THREADS = None
_SORT_THREADS_LOCK = threading.Lock()
# batches from this size on update the out- and in-degrees on two threads (kernels/cpu/gpma.py,
# add_degrees_split); below it a parallel region costs more than it saves
SPLIT_DEGREES_MIN = 1 << 16


def _add_degrees(keys, out_deg, in_deg, delta: int) -> None:
    """``out_deg[src] += delta``, ``in_deg[dst] += delta`` for each key, on two threads for big batches."""
    if keys.size >= SPLIT_DEGREES_MIN:
        _pma.add_degrees_split(keys, out_deg, in_deg, delta)
    else:
        _pma.add_degrees(keys, out_deg, in_deg, delta)


def _sort_threads():
    global _SORT_THREADS
    with _SORT_THREADS_LOCK:  # two graphs' first big batches on two threads make one pool, not two
        if _SORT_THREADS is None:
            from concurrent.futures import ThreadPoolExecutor

            _SORT_THREADS = ThreadPoolExecutor(2, thread_name_prefix="graphkern-sort")
    return _SORT_THREADS


def serialized(method):
    """Run ``method`` holding its object's ``_lock`` (a re-entrant lock): a batch rewrites the packed
    arrays in place and may swap them for new ones, so a reader running beside it would index arrays
    of another layout (out of bounds in compiled code)."""

    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)

    return locked


def holding_graph_lock(func):
    """Run ``func(g, ...)`` holding ``g``'s lock when ``g`` (the first argument, or ``g=``) is a
    DynamicGraph: kernels that read its packed arrays, or build its snapshot, then see one batch's
    state from start to end. Other graphs run as they are."""

    @functools.wraps(func)
    def locked(*args, **kwargs):
        g = args[0] if args else kwargs.get("g")
        if isinstance(g, DynamicGraph):
            with g._lock:
                return func(*args, **kwargs)
        return func(*args, **kwargs)

    return locked


def _fls(x: int) -> int:
    return int(x).bit_length()


def _layout(m: int):
    """Capacity, leaf size, height and per-level upper bounds for ``m`` elements (docs/design.md, section
    'Dynamic graph (GPMA)'):
    the smallest power-of-two capacity whose root bound (after each level's bound is clamped to twice the
    one below) holds them."""
    cap = 4
    while True:
        leaf = 1 << (_fls(_fls(cap)) - 1)
        # every leaf must hold an element after a rebuild (leaf separators are then sorted)
        while cap // leaf > max(m, 1) and leaf < cap:
            leaf <<= 1
        height = _fls(cap // leaf) - 1
        upper = np.empty(height + 1, dtype=np.int64)
        for i in range(height + 1):
            density = _ROOT_UPPER + (_LEAF_UPPER - _ROOT_UPPER) * ((height - i) / height if height else 0.0)
            upper[i] = int(density * (leaf << i))
            if i:
                upper[i] = min(upper[i], 2 * upper[i - 1])
        if upper[height] >= m:
            return cap, leaf, height, upper
        cap <<= 1


class DynamicGraph:
    """A directed graph on ``num_nodes`` nodes that changes by batches.

    Examples
    --------
    >>> import graphkern as gk
    >>> dg = gk.DynamicGraph(4)
    >>> dg.apply(insert=([0, 0, 2], [1, 3, 1]))
    {'inserted': 3, 'deleted': 0}
    >>> dg.apply(insert=([0], [1]), delete=([0, 3], [3, 0]))   # (0, 1) exists, (3, 0) does not
    {'inserted': 0, 'deleted': 1}
    >>> snap = dg.snapshot()
    >>> snap.csr().indices.tolist(), snap.csr().eids.tolist(), dg.max_edge_id
    ([1, 1], [0, 2], 3)

    Notes
    -----
    Thread-safe: calls on one graph are serialized. Every method that reads or writes the storage
    (:meth:`apply`, :meth:`snapshot`, :meth:`edges`, :meth:`contains`, the degree queries) holds the
    graph's re-entrant lock, and so do the kernels that take the graph itself (``gk.spmm``,
    ``gk.sddmm``, ``gk.edge_softmax``, ``gk.bfs``, the ``graphkern.torch`` functions and layers) and
    :meth:`IncrementalBFS.update <graphkern.IncrementalBFS.update>`. Calls on different graphs run
    side by side.
    """

    # the twins on other devices, by backend name: each registers itself by subclassing with
    # ``device=...`` (graph/dynamic_cuda.py, imported by the package), so this class needs no import of them
    _DEVICE_TWINS: dict[str, type] = {}

    def __init_subclass__(cls, device: str | None = None, **kwargs):
        super().__init_subclass__(**kwargs)
        if device is not None:
            DynamicGraph._DEVICE_TWINS[device] = cls

    def __new__(cls, num_nodes: int = 0, *, backend=None):
        from .._config import resolve_backend

        if cls is DynamicGraph and resolve_backend(backend) == "cuda":
            return super().__new__(DynamicGraph._DEVICE_TWINS["cuda"])
        return super().__new__(cls)

    @staticmethod
    def _check_nodes(num_nodes) -> int:
        n = check_int_scalar("num_nodes", num_nodes, low=0)
        if n > MAX_NODES:
            raise ValueError(f"argument 'num_nodes': expected at most {MAX_NODES} nodes (node ids share a 64-bit "
                             f"key with 32 bits each), found {n}")
        return n

    def _check_batch_memory(self, name: str, size: int) -> None:
        """Refuse a batch whose working arrays (about ``BATCH_BYTES_PER_EDGE`` per edge) would not fit the
        free memory of the device it runs on, before anything is allocated or changed."""
        need = size * BATCH_BYTES_PER_EDGE
        free = _free_memory(self._device)
        if free is not None and need > free:
            raise MemoryError(f"argument '{name}': a batch of {size} edges needs about {need / 2**30:.1f} GiB of "
                              f"working memory on {self._device}, which has {free / 2**30:.1f} GiB free; split it")

    def __init__(self, num_nodes: int, *, backend=None):
        self._lock = threading.RLock()  # serializes every call that reads or writes the storage
        self._n = n = self._check_nodes(num_nodes)
        self._device = "cpu"
        self._watchers = weakref.WeakSet()  # change logs of incremental algorithms (IncrementalBFS)
        self._version = 0  # counts the batches that changed the edge set
        self._snapshot_cache = None  # (version, Graph)
        self._out_deg = np.zeros(n, dtype=np.int64)
        self._in_deg = np.zeros(n, dtype=np.int64)
        self._free = np.zeros(0, dtype=np.int64)  # freed ids, reused last-freed first
        self._next_id = 0
        self._live = 0
        self._tombs = 0
        self._spare = None  # the arrays a merge left, reused by the next merge of the same capacity
        walls = (np.arange(n, dtype=np.int64) << np.int64(32)) | _pma.WALL_LOW
        self._rebuild(walls, np.full(n, _pma.EMPTY, dtype=np.int64))

    # ------------------------------------------------------------------ state
    @property
    def num_nodes(self) -> int:
        return self._n

    @property
    @serialized
    def num_edges(self) -> int:
        """Live edges."""
        return self._live

    @property
    @serialized
    def max_edge_id(self) -> int:
        """Every live edge id is below this bound (ids freed by deletions are reused first)."""
        return self._next_id

    @serialized
    def out_degrees(self) -> np.ndarray:
        return self._out_deg.copy()

    @serialized
    def in_degrees(self) -> np.ndarray:
        return self._in_deg.copy()

    def _rebuild(self, keys, eids):
        """Lay ``keys`` (sorted, tombstone-free) out afresh, sized for them."""
        m = keys.size
        self._cap, self._leaf, self._height, self._upper = _layout(m)
        if self._spare is not None and self._spare[0].size != self._cap:
            self._spare = None
        self._keys = np.empty(self._cap, dtype=np.int64)
        self._eids = np.empty(self._cap, dtype=np.int64)
        self._row_off = np.zeros(self._n + 1, dtype=np.int64)
        if self._n:
            _pma.spread_parallel(keys, eids, m, self._keys, self._eids, self._cap, self._leaf, self._row_off)
        self._tombs = 0

    @property
    def _num_leaves(self) -> int:
        return self._cap // self._leaf

    # ------------------------------------------------------------------ updates
    def _batch(self, name, pair):
        if pair is None:
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise TypeError(f"argument '{name}': expected a pair (src, dst), found {type_name(pair)}")
        src = as_index_array(f"{name}[0]", pair[0], np.int64)
        dst = as_index_array(f"{name}[1]", pair[1], np.int64)
        if src.size != dst.size:
            raise ValueError(f"argument '{name}': expected src and dst of equal lengths, found {src.size} and "
                             f"{dst.size}")
        check_ids_in_range(f"{name}[0]", src, self._n)
        check_ids_in_range(f"{name}[1]", dst, self._n)
        self._check_batch_memory(name, src.size)
        return src, dst

    @serialized
    def apply(self, insert=None, delete=None) -> dict:
        """Apply one batch: the deletions, then the insertions. Deleting an absent edge, inserting an
        existing one and repeats inside the batch are counted no-ops. Returns the effective counts.

        Every argument is checked before anything changes: a bad batch leaves the graph as it was.
        """
        ins_src, ins_dst = self._batch("insert", insert)
        del_src, del_dst = self._batch("delete", delete)
        with fair_share():  # a batch is a chain of short parallel steps (graphkern._fair_share)
            deleted = self._delete(del_src, del_dst) if del_src.size else 0
            inserted = self._insert(ins_src, ins_dst) if ins_src.size else 0
            if self._tombs > TOMBSTONE_FRACTION * max(self._live, 64):
                self._compact()
        return {"inserted": int(inserted), "deleted": int(deleted)}

    def _sorted_unique_keys(self, src, dst) -> np.ndarray:
        """The batch's distinct ``src << 32 | dst`` keys in order. NumPy's sort of 64-bit keys is a SIMD
        sort, an order of magnitude faster than two stable parallel count sorts by destination and
        source (their histograms have a counter per node). A big batch is split at a pivot (the median
        of a sample of its keys): two threads each gather one side and sort it (NumPy releases the GIL),
        and the sides lie in order one after the other, with nothing to merge, which is faster than
        sorting halves on two threads and merging them (``python tools/dynamic_bench.py --figures
        apply``)."""
        if src.size >= PARALLEL_SORT_MIN and numba.get_num_threads() > 1:  # fewer under fair_share
            step = src.size // SORT_PIVOT_SAMPLE
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

    def _delete(self, src, dst) -> int:
        keys = self._sorted_unique_keys(src, dst)
        freed = np.empty(keys.size, dtype=np.int64)
        deleted = np.empty(keys.size, dtype=np.int64)
        count = _pma.delete_batch(self._keys, self._eids, self._leaf, self._row_off, keys, freed, deleted)
        self._free = np.concatenate([self._free, freed[:count]])
        if count:
            _add_degrees(deleted[:count], self._out_deg, self._in_deg, -1)
            self._record(deleted=deleted[:count])
        self._live -= count
        self._tombs += count
        return count

    def _record(self, inserted=None, deleted=None) -> None:
        """Hand the effective changes of a batch (edge keys, on the graph's device) to every watcher's
        change log; the arrays are the batch's own (nothing reuses them)."""
        self._version += 1
        for log in self._watchers:
            log.append(inserted, deleted)

    @serialized
    def _watch(self, log) -> None:
        self._watchers.add(log)

    @serialized
    def contains(self, src, dst) -> np.ndarray:
        """Whether each ``src[i] -> dst[i]`` is a live edge (a bool array)."""
        src, dst = self._batch("edges", (src, dst))
        keys = (src << np.int64(32)) | dst
        return _pma.contains(self._keys, self._eids, self._leaf, self._row_off, keys,
                             np.empty(keys.size, np.bool_))

    def _take_ids(self, k: int) -> np.ndarray:
        reuse = min(k, self._free.size)
        ids = np.empty(k, dtype=np.int64)
        if reuse:
            ids[:reuse] = self._free[::-1][:reuse]
            self._free = self._free[: self._free.size - reuse]
        ids[reuse:] = np.arange(self._next_id, self._next_id + k - reuse, dtype=np.int64)
        self._next_id += k - reuse
        return ids

    def _insert(self, src, dst) -> int:
        keys = self._sorted_unique_keys(src, dst)
        # a batch that reaches most leaves, or that the root could not take, is merged in one sweep
        if keys.size * MERGE_RATIO >= self._cap or self._n + self._live + self._tombs + keys.size > int(
                self._upper[self._height]):
            count = self._merge(keys)
            if count is not None:
                return count
        leaf_of = np.empty(keys.size, dtype=np.int64)
        slot_of = np.empty(keys.size, dtype=np.int64)
        _pma.classify_inserts(self._keys, self._leaf, self._row_off, keys, leaf_of, slot_of)
        count, revived = _pma.count_effective_inserts(self._eids, slot_of)
        if count == 0:
            return 0
        # ids go to the effective keys in key order (freed ids first, the last freed first); tombstones
        # come back to life with a fresh id (a new edge), in place
        ids = self._take_ids(count)
        effective = np.empty(count, dtype=np.int64)
        pending = np.empty(count - revived, dtype=np.int64)
        pending_ids = np.empty(count - revived, dtype=np.int64)
        pending_leaves = np.empty(count - revived, dtype=np.int64)
        _pma.split_inserts(self._eids, slot_of, leaf_of, keys, ids, effective, pending, pending_ids, pending_leaves)
        self._tombs -= revived
        self._record(inserted=effective)
        _add_degrees(effective, self._out_deg, self._in_deg, 1)
        self._live += count
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
        # occupied slots: walls, live edges and tombstones; past the root's bound no window can take the
        # batch, so go straight to the rebuild instead of climbing every level first (a bulk load)
        if self._n + self._live + self._tombs > int(self._upper[self._height]):
            level = self._height + 1
        while size:
            if level > self._height:  # the root would overflow: rebuild with room for everything
                live_k, live_e = self._live_elements()
                out_k = np.empty(live_k.size + size, dtype=np.int64)
                out_e = np.empty(live_k.size + size, dtype=np.int64)
                _pma.merge_sorted(live_k, live_e, live_k.size, keys[:size], ids[:size], out_k, out_e)
                self._rebuild(out_k, out_e)
                return
            groups = _pma.window_groups(windows, size, starts)
            done[:groups] = False
            _pma.rebalance_level(self._keys, self._eids, self._leaf, level, int(self._upper[level]),
                                 windows[starts[:groups]], keys, ids, starts[:groups], starts[1:groups + 1],
                                 self._row_off, done[:groups])
            size = _pma.keep_pending(keys, ids, windows, starts, groups, done)
            level += 1

    def _merge(self, keys, compact: bool = False):
        """Merge the sorted distinct ``keys`` with the array into a fresh layout sized for the result
        (tombstones dropped); returns the effective count, or None when the memory for a second pair of
        arrays is not there (the caller then inserts in place).

        Two parallel passes over chunks of leaves, each with its share of the batch: the first counts what
        every chunk keeps and adds, the second writes it at its place in the new layout. The new arrays
        are the spare pair of the previous merge when the capacity is the same (a merge into fresh memory
        pays a page fault every 4 KiB); the old pair becomes the spare, so a graph that has merged holds two
        pairs of arrays."""
        leaves = self._num_leaves
        chunks = min(leaves, MERGE_CHUNKS)
        chunk_leaves = (np.arange(chunks + 1, dtype=np.int64) * leaves) // chunks
        bounds = np.empty(chunks + 1, dtype=np.int64)
        bounds[0], bounds[-1] = 0, keys.size
        # chunk c takes the batch keys from its first leaf's first key (leaves are never empty) on
        bounds[1:-1] = np.searchsorted(keys, self._keys[chunk_leaves[1:-1] * self._leaf])
        live = np.empty(chunks, dtype=np.int64)
        new = np.empty(chunks, dtype=np.int64)
        _pma_merge.merge_count(self._keys, self._eids, self._leaf, chunk_leaves, keys, bounds, live, new,
                               self._tombs > 0)
        out_first = np.zeros(chunks + 1, dtype=np.int64)
        np.cumsum(live + new, out=out_first[1:])
        new_first = np.zeros(chunks + 1, dtype=np.int64)
        np.cumsum(new, out=new_first[1:])
        count = int(new_first[-1])
        if count == 0 and not compact:
            return 0
        cap, leaf, height, upper = _layout(int(out_first[-1]))
        if self._spare is not None and self._spare[0].size == cap:
            out_k, out_e = self._spare
        else:
            self._spare = None
            free = _free_memory(self._device)
            if free is not None and 16 * cap > free:
                return None
            out_k = np.empty(cap, dtype=np.int64)
            out_e = np.empty(cap, dtype=np.int64)
        ids = self._take_ids(count)
        effective = np.empty(count, dtype=np.int64)
        _pma_merge.merge_write(self._keys, self._eids, self._leaf, chunk_leaves, keys, bounds, out_first, new_first,
                               ids, out_k, out_e, leaf, self._row_off, effective)
        self._spare = (self._keys, self._eids) if self._cap == cap else None
        self._keys, self._eids = out_k, out_e
        self._cap, self._leaf, self._height, self._upper = cap, leaf, height, upper
        self._tombs = 0
        if count:
            self._live += count
            self._record(inserted=effective)
            _add_degrees(effective, self._out_deg, self._in_deg, 1)
        return count

    def _live_elements(self):
        """The walls and live edges in key order (tombstones and gaps dropped): ``(keys, eids)``."""
        live_k = np.empty(self._cap, dtype=np.int64)
        live_e = np.empty(self._cap, dtype=np.int64)
        n = _pma.live_elements(self._keys, self._eids, live_k, live_e)
        return live_k[:n], live_e[:n]

    def _compact(self):
        """Drop the tombstones: a merge with no keys (two streaming passes), or, without the memory for
        a second pair of arrays, a rebuild from the live elements."""
        if self._merge(np.zeros(0, dtype=np.int64), compact=True) is None:
            self._rebuild(*self._live_elements())

    # ------------------------------------------------------------------ readers
    @serialized
    def edges(self):
        """``(src, dst, eids)`` of the live edges in key order (by source, then destination)."""
        csr = self._csr()
        src = np.repeat(np.arange(self._n, dtype=np.int64), np.diff(csr[0]))
        return src, csr[1], csr[2]

    def _csr(self, dtype=np.int64):
        indptr = np.zeros(self._n + 1, dtype=dtype)
        np.cumsum(self._out_deg, out=indptr[1:])
        indices = np.empty(self._live, dtype=dtype)
        eids = np.empty(self._live, dtype=dtype)
        if self._n:
            _pma.forward_csr(self._keys, self._eids, self._row_off, indptr, indices, eids)
        return indptr, indices, eids

    @serialized
    def snapshot(self, *, csc: bool = False):
        """The graph now, as a :class:`~graphkern.Graph`: its CSR from the packed order, edge ids the
        stable ids (``num_edge_ids == max_edge_id``); the reverse (CSC) is built by the stable count sort
        when a kernel asks for it, or now with ``csc=True`` (the CSC's row lengths are the in-degrees the
        graph keeps, so the sort needs no histogram pass for its last part). The snapshot is cached until
        the next batch that changes an edge, and kernels called on the DynamicGraph use it while it is
        current.

        Examples
        --------
        >>> import graphkern as gk
        >>> dg = gk.DynamicGraph(3)
        >>> _ = dg.apply(insert=([0, 2, 1], [1, 1, 2]))
        >>> g = dg.snapshot(csc=True)
        >>> g.csr().indices.tolist(), g.csc().indices.tolist(), g.csc().eids.tolist()
        ([1, 2, 1], [0, 2, 1], [0, 2, 1])
        """
        cached = self.cached_snapshot()
        if cached is not None:
            if csc:
                cached.csc()
            return cached
        from .._validate import choose_idtype
        from .graph import Graph

        # built from the graph's own invariants (sorted rows, distinct ids below max_edge_id), so the
        # input checks of Graph.from_csr would only re-prove them: construct directly, in the id dtype
        # from_csr would choose
        dtype = choose_idtype("idtype", None, max(self._n, self._live, self._next_id))
        formats = {"csr": self._csr(dtype)}
        if csc:  # the CSC's row lengths are the in-degrees the graph keeps: its sort skips a histogram
            formats["csc"] = _sort.transpose_compressed(*formats["csr"], self._n, col_counts=self._in_deg)
        snap = Graph(_num_src=self._n, _num_dst=self._n, _num_edges=self._live, _num_edge_ids=self._next_id,
                     _idtype=dtype, _allowed={"coo", "csr", "csc"}, _formats=formats, _identity=set(),
                     _is_block=False)
        self._snapshot_cache = (self._version, snap)
        return snap

    @serialized
    def cached_snapshot(self):
        """The snapshot taken since the last change, or None (a kernel called on the DynamicGraph then
        builds it, except BFS, which walks the packed arrays)."""
        if self._snapshot_cache is not None and self._snapshot_cache[0] == self._version:
            return self._snapshot_cache[1]
        return None

    # the names kernels validate against, as on a Graph (square: sources and destinations are the nodes)
    @property
    def num_src(self) -> int:
        return self._n

    @property
    def num_dst(self) -> int:
        return self._n

    @property
    @serialized
    def num_edge_ids(self) -> int:
        """Rows of an edge-feature array: :attr:`max_edge_id`."""
        return self._next_id

    @property
    def device(self) -> str:
        return self._device

    @property
    def idtype(self) -> np.dtype:
        """Ids of the packed arrays (and of arg outputs of kernels run on them)."""
        return np.dtype(np.int64)

    def _require_host(self, what: str) -> None:
        if self._device != "cpu":
            raise ValueError(f"{what} works on a graph in host memory; this DynamicGraph is on {self._device}")
