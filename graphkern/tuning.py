"""The run-time knobs of graphkern's host code, in one place: :class:`Tuning`, :func:`current`, :func:`tuned`.

A performance choice the drivers make at run time (when a path pays, how big a block is, how many
partitions a thread gets) belongs here as a field of the frozen dataclass :class:`Tuning`, whose default
is the value graphkern ships with; each field says what it trades, the measurement behind its default
and the command that reproduces it. The host code reads ``current().<knob>`` at call time, and passes
what a compiled kernel needs as an argument: Numba freezes a global read inside compiled code when it compiles (and
``cache=True`` keeps it), and a kernel module never reads configuration.

Change knobs for a block with :func:`tuned` (``gk.tuned``), or for a whole process, before graphkern is
imported, with the environment variable ``GRAPHKERN_TUNING`` (``name=value`` entries separated by
commas). A knob is an int or a float within the range its field declares (:func:`knob`); an int given
for a float knob is held as a float, and a value of another type or outside the range is refused.

Values a compiled kernel is built around (vector lanes, unroll widths, the block sizes of shared arrays)
stay constants of their kernel modules; docs/design.md, section 'Tuning knobs', lists them and the
constants that have not moved here yet.

Examples
--------
>>> import graphkern as gk
>>> gk.tuning.current().fair_share_refresh_s
0.05
>>> with gk.tuned(fair_share_refresh_s=1):
...     gk.tuning.current().fair_share_refresh_s
1.0
>>> gk.tuning.current().fair_share_refresh_s
0.05
"""

from __future__ import annotations

import dataclasses
import math
import numbers
import os
import threading
import typing
from dataclasses import dataclass

from ._validate import INT64_MAX  # knobs reach compiled code as int64

__all__ = ["Tuning", "current", "tuned", "ENV_VAR"]

ENV_VAR = "GRAPHKERN_TUNING"


def knob(default, *, low=0, high=None):
    """A field of :class:`Tuning`: its default and the inclusive range it accepts (``low`` to ``high``; no
    ``high`` means the largest int64 for an int knob and no bound for a float knob, which must be finite).
    A value outside the range is refused by :func:`tuned`, by ``GRAPHKERN_TUNING`` and by ``Tuning(...)``
    alike, with the knob's name, its range and the value."""
    return dataclasses.field(default=default, metadata={"low": low, "high": high})


@dataclass(frozen=True)
class Tuning:
    """The knobs in force (:func:`current`); change them with :func:`tuned` or ``GRAPHKERN_TUNING``.

    Figures quoted below were measured on the machines named with them; rerun the command given to
    measure on yours (docs/performance.md holds the dated results).
    """

    # ------------------------------------------------------------------------------------- incremental BFS
    incremental_fallback_fraction: float = knob(0.05, high=1.0)
    """``IncrementalBFS.update`` runs a fresh search once more than this fraction of the vertices would be
    re-labelled (the default of ``IncrementalBFS(fallback_fraction=...)``, read when one is constructed):
    past it a fresh search is faster. Measured by ``python tools/dynamic_bench.py``, its IncrementalBFS
    rows."""

    incremental_min_limit: int = knob(256)
    """The fresh-search limit of ``IncrementalBFS.update`` is never below this many vertices: a small
    relabelling costs microseconds either way (no measurement is recorded with the choice)."""

    # ------------------------------------------------------------------------------ sparse kernels (CPU)
    l2_cache_bytes: int = knob(0)
    """Bytes of the per-core L2 cache the cost model and the blocked kernels plan for; 0 reads it from
    ``/sys/devices/system/cpu/cpu0/cache/index2/size`` on first use (1 MB when the system does not say).
    A small value plans the large-graph paths (destination blocks, the hub split, the blocked SDDMM) on
    a small graph; a value is the size of a real cache, not a trade (``gk.explain`` shows the plan it
    gives)."""

    parts_per_thread: int = knob(8, low=1, high=1 << 12)
    """Partitions per thread of the row- and destination-parallel kernels (the sparse kernels' row
    bounds and blocks' groups, the BFS levels' parts): enough that a few heavy rows even out, against a
    per-part cost in every step (no measurement is recorded with the choice). Each call allocates the
    bounds of all the parts, hence the bound: 4,096 a thread is far past any useful balance."""

    use_calibration: int = knob(1, high=1)
    """1: where this machine's calibration is stored (``graphkern compile`` or ``graphkern calibrate``
    measures it; graphkern._calibration), the cost model takes the blocked g-SpMM paths only where they
    measured faster than the CSC kernel here; 0: the fixed rules below decide alone."""

    blocked_min_edges: int = knob(1 << 16)
    """Below this many edges the CSC's gathers stay in the caches and the destination blocks (the blocked
    SpMM and SDDMM) would not pay their build, a stable transpose and a count sort once per graph
    (docs/performance.md, section 'CPU: what the kernels' design choices are worth';
    ``python tools/compare_peers.py --family spmm``)."""

    edge_rows_to_blocks_max_bytes: int = knob(16)
    """Edge rows up to this many bytes are narrow: several to a cache line, so read through the ids in
    block order they fetch nearly every line of the edge array once per block, and the blocked SpMM puts
    them in its edge order first; the hub split takes edge rows only this narrow (permuting wider ones
    into CSC order costs more than the split saves: u_mul_e_sum at F = 8 and 16 with the split 24-25 ms
    against 14-17 ms for the blocks alone). Measured by ``python tools/compare_peers.py --family spmm
    --features 8 16 32 64``."""

    edge_rows_to_blocks_min_blocks: int = knob(16)
    """From this many destination blocks on, narrow edge rows (:attr:`edge_rows_to_blocks_max_bytes`) are
    put in block order by one pass before the blocked SpMM, instead of read through the ids: u_mul_e_sum
    with w (E, 1) gains even at 16 blocks (scale 18, F = 16: 15.3-16.0 against 16.1-17.2 ms) and clearly at
    64 (scale 20: 110 against 155 ms). Measured by ``python tools/compare_peers.py --family spmm --scale
    20``."""

    hub_l2_share: float = knob(0.25, high=1.0)
    """The hub split's hub sources are as many as their feature rows fit this share of the L2 cache:
    on the scale-18 Kronecker graph (float32, 2 threads) a quarter was as fast as an eighth or a half at
    F = 16 and 64, and at F = 32 and 256 faster than no split (2,048 hubs at F = 64, carrying 38% of the
    edges). Measured by ``python tools/compare_peers.py --family spmm --features 16 64 256``."""

    hub_min_edge_share: float = knob(0.1, high=1.0)
    """The hub split runs when the hub sources (:attr:`hub_l2_share`) carry at least this share of the
    edges (set on the scale-18 Kronecker graph, float32, 2 threads, whose hubs carry 38% of the edges at
    F = 64; there the split against the CSC kernel: copy_u_sum F = 32 19-20 against 32 ms, F = 256 228
    against 261 ms). Measured by ``python tools/compare_peers.py --family spmm --features 16 64 256``."""

    sddmm_blocked_max_row_bytes: int = knob(16)
    """Output rows up to this many bytes take the blocked SDDMM (when the destination operand outgrows
    the L2); wider ones move their output twice and are slower than on the CSR: u_add_v at F = 16 136
    against 67 ms, while at F = 4 the blocks still win, 27 against 36 ms; u_dot_v F = 16 15.5 against
    43.6 ms. Measured by ``python tools/compare_peers.py --family spmm``."""

    block_sets_kept: int = knob(2, low=1)
    """Destination block sets (each as large as the CSC) kept per graph and kind (with or without hubs),
    least recently used dropped first: two, for a model whose layers alternate two widths. With one, a
    GAT-like chain (u_dot_v at F = 16 between F = 64 calls) rebuilt the blocks on every call, 127 ms a
    call against 16-16.7 ms (``python tools/compare_peers.py --family spmm``)."""

    # ------------------------------------------------------------------------------------------ BFS (CPU)
    bfs_batch_min_sources: int = knob(8, low=1)
    """``gk.bfs(g, sources=...)`` with ``algorithm="auto"`` runs its searches batched (MS-BFS, up to 64
    sharing each pass over the edges) from this many sources on: batching pays from there (measured when
    the batched searches were written; no figures are kept in docs/performance.md)."""

    bfs_multi_push_below: int = knob(20, low=1)
    """A batched (MS-BFS) level pushes from its frontier while the frontier's out-edges are under
    ``num_edges / bfs_multi_push_below``, else it pulls along in-edges (no measurement is recorded with
    the choice)."""

    bfs_slots_below: int = knob(16, low=1)
    """A top-down level whose frontier has fewer than ``n / bfs_slots_below`` out-edges collects the
    vertices it claims in slots instead of scanning a visited map of all ``n`` (no measurement is
    recorded with the choice; ``python tools/compare_peers.py --family bfs``)."""

    bfs_serial_level_edges: int = knob(1 << 13)
    """Top-down levels whose frontier has fewer out-edges than this run on one thread, back to back in one
    compiled call: a parallel step costs tens of microseconds to launch and sync, which dominates a
    high-diameter graph's thousands of small levels. Measured by the path and grid rows of ``python
    tools/compare_peers.py --family diameter`` (figures in docs/performance.md)."""

    bfs_serial_levels_per_call: int = knob(4096, low=1, high=1 << 20)
    """Levels one serial call (:attr:`bfs_serial_level_edges`) records before it returns to the driver:
    the size of its per-level count buffer, kept with the graph (no measurement is recorded with the
    choice); bounded so that the buffer stays within 8 MB."""

    bfs_parallel_record_from: int = knob(1 << 14)
    """A serial run's parents and levels are written by a parallel pass from this many vertices found on,
    by one thread below (no measurement is recorded with the choice)."""

    bfs_hub_min_skew: int = knob(16)
    """The in-edge hub index of the bottom-up steps is built only where some vertex has at least this many
    times the mean out-degree: on a graph without hubs (uniform random, a grid, a mesh) the index finds no
    early parents and its build costs two or three searches (with hubs it saves 13.5-14.0 against
    16.3-16.7 ms a search at scale 20, building it 58 ms). Measured by the uniform rows of ``python
    tools/compare_peers.py --family gap``."""

    bfs_stale_gather_edges_per_claim: int = knob(64)
    """On the shared visited map, a top-down level gathers from the map as the level found it when its
    frontier's out-edges pass this many per vertex that could still be claimed (few claims from many
    edges: the lines claims write stay out of the other cores' gathers); else from the live map, which
    filters repeats (no measurement is recorded with the choice)."""

    bfs_private_maps_max_bytes: int = knob(256 << 20)
    """Top-down levels give each thread a private copy of the visited map while all the copies together
    take at most this many bytes; past it they share one map (claims by compare-and-swap). Private maps:
    the two big top-down levels at scale 20 11.7 and 4.4 ms against 19.4 and 7.2 ms on the shared map.
    Measured by the asv benchmarks ``BFS`` and ``TopDownSharedMap`` (``python tools/asv_run.py``)."""

    # ---------------------------------------------------------------------------------- output memory
    huge_page_min_bytes: int = knob(4 << 20)
    """Outputs from this many bytes on go on transparent huge pages, recycled through a pool
    (graphkern._memory); below it an output spans few pages, and NumPy's allocator reuses freed memory
    without new faults (copy_u_sum with its input on 2 MB pages against 4 KB ones 17.8 against 22.5 ms at
    F = 16; ``GRAPHKERN_HUGE_PAGES=0 python tools/compare_peers.py --family spmm`` compares)."""

    pool_maps: int = knob(8)
    """At most this many freed huge-page maps are held for reuse: a freshly faulted huge page costs about
    20 ms a call on a virtual machine (copy_u_sum F = 16 38-41 ms on fresh maps against 14-19 ms on reused
    memory); the pool's size itself was not measured (``python tools/compare_peers.py --family spmm``)."""

    pool_bytes: int = knob(1 << 30)
    """At most this many bytes of freed huge-page maps are held for reuse (with :attr:`pool_maps`)."""

    # -------------------------------------------------------------------------------------- CUDA drivers
    cuda_spmm_hub_degree: int = knob(2048)
    """The CUDA SpMM on the CSC gives rows with more in-edges than this to the hub kernels (a block of
    ``HUB_BLOCK`` threads per chunk of :attr:`cuda_spmm_chunk_edges` edges) instead of a warp. Measured by
    ``python3 tools/gpu_check.py``, rows "copy_u_sum" and "copy_u_max"."""

    cuda_spmm_chunk_edges: int = knob(4096, low=1)
    """The hub rows of the CUDA SpMM (:attr:`cuda_spmm_hub_degree`) are cut into chunks of at most this many
    edges, a block each: a chunk gives each of a 512-thread block's 16 warps 256 edges. Measured by
    ``python3 tools/gpu_check.py``, rows "copy_u_sum" and "copy_u_max"."""

    cuda_softmax_small_degree: int = knob(8)
    """The CUDA edge softmax gives rows of at most this many edges to groups of 8 lanes, four rows to a warp,
    so short rows do not leave most of a warp idle (no separate figure is recorded; ``python3
    tools/gpu_check.py``, row "edge_softmax H=1")."""

    cuda_softmax_hub_degree: int = knob(1024)
    """The CUDA edge softmax gives rows with more edges than this to blocks of ``HUB_BLOCK`` threads instead
    of a warp (below it a warp's lanes take at most 1024 / 32 edges each per pass). Measured by ``python3
    tools/gpu_check.py``, row "edge_softmax H=1"."""

    cuda_softmax_chunk_edges: int = knob(8192, low=1)
    """The CUDA edge softmax cuts its hub rows into chunks of at most this many edges (16 per thread of a
    512-thread block), a block each, so that a row of 160,000 edges is spread over 20 blocks rather than
    walked by one (``python3 tools/gpu_check.py``, row "edge_softmax H=1")."""

    cuda_segment_backward_chunk_rows: int = knob(1024, low=1)
    """The CUDA ``segment_mm`` backward for ``b`` cuts segments longer than this many rows into chunks (of at
    least this many rows) summed by many threads, then added in order: a thread per output element
    walking a long segment is too few threads (no figure is recorded; ``python3 tools/gpu_check.py``,
    row "segment_mm")."""

    cuda_segment_chunk_target_items: int = knob(1 << 20, low=1)
    """The chunks of the CUDA ``segment_mm`` backward (:attr:`cuda_segment_backward_chunk_rows`) grow where
    the rows are many, so that the partial products stay near this many elements: a GPU's worth of
    threads (no figure is recorded; ``python3 tools/gpu_check.py``, row "segment_mm")."""

    cuda_bfs_push_group_degree: int = knob(32)
    """CUDA BFS pushes: a frontier vertex of out-degree below this is expanded by one thread, from it by a
    group of :attr:`cuda_bfs_group_width` threads (Merrill's and Gunrock's thread/warp/block/grid
    expansion). The five degree thresholds are measured by ``python3 tools/gpu_check.py``, rows
    "bfs ..."."""

    cuda_bfs_push_block_degree: int = knob(1024)
    """CUDA BFS pushes: a frontier vertex of at least this out-degree is expanded by a block (``python3
    tools/gpu_check.py``, rows "bfs ...")."""

    cuda_bfs_push_grid_degree: int = knob(16384)
    """CUDA BFS pushes: a frontier vertex of at least this out-degree is expanded by the whole grid
    (``python3 tools/gpu_check.py``, rows "bfs ...")."""

    cuda_bfs_pull_group_degree: int = knob(32)
    """CUDA BFS pulls: a vertex of at least this in-degree is scanned by a group of threads, below it by one
    (``python3 tools/gpu_check.py``, rows "bfs ...")."""

    cuda_bfs_pull_grid_degree: int = knob(16384)
    """CUDA BFS pulls: a vertex of at least this in-degree is scanned by the whole grid (``python3
    tools/gpu_check.py``, rows "bfs ...")."""

    cuda_bfs_group_width: int = knob(32, low=1, high=1024)
    """Threads of a CUDA BFS group (a warp on a GPU; groups are cut from the global thread index, so any
    width is correct, and tests take 8 so that small graphs reach every path)."""

    cuda_bfs_threads: int = knob(256, low=1, high=1024)
    """Threads per block of the CUDA BFS's launches (no figure is recorded; ``python3 tools/gpu_check.py``,
    rows "bfs ...")."""

    cuda_bfs_launch_blocks: int = knob(0, high=(1 << 31) - 1)
    """Blocks of every CUDA BFS launch (with :attr:`cuda_bfs_threads` threads each); 0 sizes the grid to
    the graph (a thread per vertex, a cooperative grid as large as resident blocks allow). A fixed count
    is for testing launch shapes, not for speed; at most CUDA's largest grid, 2**31 - 1 blocks."""

    cuda_bfs_cooperative: int = knob(1, high=1)
    """1: a CUDA search is one cooperative launch with grid barriers between the phases of a level (the host
    waits once per search); 0: the phases run as separate launches, a batch of levels at a time, the path
    of a device that refuses cooperative launches (``python3 tools/gpu_check.py``, rows "bfs ..." and "bfs
    (per-phase launches)")."""
    # ------------------------------------------------------------------- dynamic graph (packed storage)
    gpma_merge_ratio: int = knob(24)
    """A ``DynamicGraph`` batch of at least ``capacity / gpma_merge_ratio`` distinct keys is merged with the
    whole packed array into a fresh layout (``kernels/cpu/gpma_merge.py``) instead of inserted in place: in
    place a key costs a search and a leaf merge, the merge a few ns a slot. The two break even near 5 10^5
    keys into 10M edges (16M slots); on a small graph (131K slots, about 4,500 keys a step) a ratio of 32
    sent the steps to the merge and made them slower (apply plus snapshot 1.03-1.05 ms a step against
    0.95-1.01 ms with 24). Measured by ``python tools/dynamic_bench.py --figures apply seed``
    (docs/performance.md, sections 'CPU: dynamic graph' and 'Further figures behind the source's tuning
    choices'). CPU storage only."""

    gpma_merge_chunks: int = knob(256, low=1)
    """Chunks of leaves a whole-array merge of a ``DynamicGraph`` batch is cut into: enough for the threads
    to balance, and each chunk costs a search of the batch (no measurement is recorded with the choice;
    ``python tools/dynamic_bench.py --figures apply`` times the merge). CPU storage only."""

    gpma_parallel_sort_min: int = knob(1 << 18, low=1)
    """``DynamicGraph`` batches of at least this many edges are split at a sampled pivot and the two sides
    sorted on two threads (NumPy releases the GIL); below it one sort is cheaper than starting the second
    thread. 10^6 keys sort in 5.6-5.7 ms split at a pivot against 8.9 ms as halves sorted on two threads and
    merged (docs/performance.md, 'Further figures behind the source's tuning choices'; ``python
    tools/dynamic_bench.py --figures apply``); the threshold itself was not measured. CPU storage only."""

    gpma_sort_pivot_sample: int = knob(1024, low=1)
    """Keys sampled (evenly spaced) to pick the pivot that splits a big ``DynamicGraph`` batch for its two
    sorting threads: more balances the sides better and costs a bigger sort of the sample (no measurement
    is recorded with the choice). CPU storage only."""

    gpma_split_degrees_min: int = knob(1 << 16)
    """``DynamicGraph`` batches of at least this many effective edges update the out- and in-degrees on two
    threads (``kernels/cpu/gpma.py``, ``add_degrees_split``); below it a parallel region costs more than it
    saves (no measurement is recorded with the choice). CPU storage only."""

    gpma_tombstone_fraction: float = knob(0.25)
    """A ``DynamicGraph`` batch drops the tombstones (deleted edges still holding a slot) once they pass
    this fraction of the live edges (at least 64): fewer compactions against more dead slots for readers
    and searches to skip (no measurement is recorded with the choice)."""

    gpma_batch_bytes_per_edge: int = knob(96, high=1 << 12)
    """Working memory a ``DynamicGraph`` batch is taken to need per edge (keys, ids, leaves, slots and masks
    of 8 bytes, with sort buffers): a batch whose need passes the free memory of its device is refused
    before anything changes, rather than failing halfway. An estimate from the arrays a batch allocates,
    not a timing. 0 admits every batch (the check is off; a merge that then finds no memory for its new arrays
    still goes in place); past 4 KB an edge it would refuse every batch."""

    gpma_small_window: int = knob(512)
    """On the GPU, ``DynamicGraph`` windows of at most this many slots are merged by blocks of one warp
    (most of a block of ``launch.BLOCK`` threads would idle on a leaf or two), wider ones by blocks of
    ``launch.BLOCK`` threads. Not tuned yet: ``python3 tools/gpu_check.py``, rows "gpma ...", measures
    it. CUDA storage only."""

    gpma_wide_window: int = knob(4096)
    """On the GPU, ``DynamicGraph`` windows wider than this many slots are merged by grid-wide kernels
    (every thread of the GPU on the few wide windows a level has, a hub's inserts say) rather than by a
    block each. Not tuned yet: ``python3 tools/gpu_check.py``, rows "gpma ...", measures it. CUDA storage
    only."""

    # ----------------------------------------------------------------------------------------- threads
    fair_share_refresh_s: float = knob(0.05)
    """Seconds a count of other runnable threads is reused by the fair-share rule: reading it costs tens
    of microseconds a thread of this process, and a busy neighbour stays busy for far longer than this
    (docs/design.md, section 'Threads on a shared machine'; ``graphkern bench --contention``)."""

    def __post_init__(self):
        for name in _FIELDS:
            object.__setattr__(self, name, _checked(name, getattr(self, name)))


_FIELDS = {f.name: f for f in dataclasses.fields(Tuning)}
_TYPES = typing.get_type_hints(Tuning)
_lock = threading.Lock()


def _names() -> str:
    return ", ".join(sorted(_FIELDS))


def _range(name: str) -> tuple:
    """The inclusive range of knob ``name``: (low, high), high None for an unbounded float knob."""
    meta = _FIELDS[name].metadata
    high = meta["high"]
    return meta["low"], (INT64_MAX if high is None and _TYPES[name] is int else high)


def _expected(name: str) -> str:
    low, high = _range(name)
    kind = "an int" if _TYPES[name] is int else "a finite float"
    return f"{kind} from {low} to {high}" if high is not None else f"{kind} of at least {low}"


def _checked(name: str, value):
    """``value`` as knob ``name`` holds it (an int for a float knob becomes a float), or ValueError naming
    the knob, its type and range, and the value."""
    tp = _TYPES[name]
    ok = False
    if tp is int:
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        value = int(value) if ok else value
    elif tp is float:
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)
        value = float(value) if ok else value
    if ok:
        low, high = _range(name)
        ok = low <= value and (high is None or value <= high)
    if not ok:
        raise ValueError(f"knob {name!r}: expected {_expected(name)}, found {value!r} ({type(value).__name__})")
    return value


def _changes(changes: dict) -> dict:
    unknown = [name for name in changes if name not in _FIELDS]
    if unknown:
        raise TypeError(f"unknown knob {unknown[0]!r}; the knobs are: {_names()}")
    return {name: _checked(name, value) for name, value in changes.items()}


def _parse(name: str, text: str):
    """The value of knob ``name`` written as ``text`` in ``GRAPHKERN_TUNING``."""
    tp = _TYPES[name]
    if tp is int:
        return int(text, 0)
    if tp is float:
        return float(text)
    raise ValueError(text)  # pragma: no cover - a knob of another type needs its parser here


def from_environment(text: str | None) -> Tuning:
    """The knobs that ``GRAPHKERN_TUNING`` (its value ``text``) asks for: ``name=value`` entries separated by
    commas over the defaults; a bad entry raises ValueError naming the variable, the entry and the knobs.

    Examples
    --------
    >>> from graphkern.tuning import from_environment
    >>> from_environment("fair_share_refresh_s=0.5").fair_share_refresh_s
    0.5
    >>> from_environment("").fair_share_refresh_s
    0.05
    """
    changes = {}
    for entry in (text or "").split(","):
        if not entry.strip():
            continue
        name, sep, value = (part.strip() for part in entry.partition("="))
        if not sep or name not in _FIELDS:
            why = "expected name=value" if not sep else f"unknown knob {name!r}"
            raise ValueError(f"{ENV_VAR}: bad entry {entry.strip()!r} ({why}); the knobs are: {_names()}")
        try:
            changes[name] = _checked(name, _parse(name, value))
        except ValueError:
            raise ValueError(f"{ENV_VAR}: bad entry {entry.strip()!r} (knob {name!r} takes "
                             f"{_expected(name)}); the knobs are: {_names()}") from None
    return dataclasses.replace(Tuning(), **changes)


_current = from_environment(os.environ.get(ENV_VAR))


def current() -> Tuning:
    """The knobs in force now: the defaults, changed by ``GRAPHKERN_TUNING`` at import and by the
    :func:`tuned` blocks that are open.

    Examples
    --------
    >>> import graphkern as gk
    >>> gk.tuning.current().fair_share_refresh_s
    0.05
    """
    return _current


class tuned:
    """Change knobs for a ``with`` block: ``with gk.tuned(fair_share_refresh_s=0): ...``.

    The knobs are process-wide: the block swaps the module's value and restores it on exit, so every
    thread sees the change while the block is open, and two threads that open blocks at the same time
    restore each other's values in the order they leave. Blocks nest. An unknown knob raises TypeError
    (naming it and the knobs); a value of the wrong type raises ValueError.

    Examples
    --------
    >>> import graphkern as gk
    >>> with gk.tuned(fair_share_refresh_s=0) as knobs:
    ...     knobs.fair_share_refresh_s
    0.0
    >>> gk.tuned(no_such_knob=1)
    Traceback (most recent call last):
    ...
    TypeError: unknown knob 'no_such_knob'; the knobs are: ...
    """

    def __init__(self, **changes):
        self._changes = _changes(changes)
        self._saved: list[Tuning] = []

    def __enter__(self) -> Tuning:
        global _current
        with _lock:
            self._saved.append(_current)
            _current = dataclasses.replace(_current, **self._changes)
            return _current

    def __exit__(self, *exc) -> None:
        global _current
        with _lock:
            _current = self._saved.pop()
