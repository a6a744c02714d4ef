"""Breadth-first search: :func:`bfs` with top-down, bottom-up, direction-optimizing and linear-algebra steps.

The driver is GAP's direction-optimizing loop (docs/design.md, section
'Direction-optimizing BFS'): top-down while the frontier's
out-edges are few, bottom-up while the frontier is large (``alpha = 15``, ``beta = 18``), with each level
one compiled parallel step (:mod:`graphkern.kernels.cpu.bfs`). Directed graphs are searched along
out-edges; bottom-up steps scan in-edges, so they need the CSC (built on first use and cached).
"""

from __future__ import annotations

import time
from typing import NamedTuple

import numpy as np

from . import _memory, tuning
from ._bfs_multi import MS_BATCH, _multi_source  # noqa: F401 (MS_BATCH: importable from here as before)
from ._bfs_result import BFSResult, _SerialLevels
from ._config import resolve_backend
from ._fair_share import fair_share
from ._validate import check_choice, check_int_scalar, check_real_scalar, type_name
from .dispatch import Kernel, Plan, builds, log_plan, register_explainer
from .graph.dynamic import holding_graph_lock
from .kernels.cpu import bfs as _bfs
from .kernels.cpu import bfs_serial as _serial

__all__ = ["bfs", "BFSResult", "ALGORITHMS"]

ALGORITHMS = ("auto", "direction_optimizing", "top_down", "bottom_up", "spmsv")
# the defaults of bfs()'s alpha and beta (GAP's): arguments of every call, so not knobs
ALPHA = 15
BETA = 18
# The search's switches are knobs (graphkern.tuning, the bfs_* fields), read when a search starts.


def _as_searchable(g, algorithm: str, explaining: bool = False):
    """A Graph, or a CPU DynamicGraph searched top-down on its packed arrays (``auto`` without a current
    snapshot); any other DynamicGraph case runs on its snapshot (None when ``explaining``: a plan builds
    no snapshot).

    Without a snapshot the packed search is never much slower than building the snapshot and its CSC
    for a direction-optimizing search, and far faster when the source reaches few vertices; with a
    current snapshot the direction-optimizing search wins (measured by ``python tools/dynamic_bench.py
    --figures packed``; figures in docs/performance.md)."""
    from .graph import DynamicGraph

    if isinstance(g, DynamicGraph):
        snap = g.cached_snapshot()
        if snap is None and g.device == "cpu" and algorithm in ("auto", "top_down"):
            return g
        if snap is None and explaining:
            return None
        return snap if snap is not None else g.snapshot()
    return g


class BfsCall(NamedTuple):
    """A validated, planned bfs call: the graph searched (a Graph, a DynamicGraph's packed arrays, or None
    when explaining a call that builds a snapshot first), the switch thresholds, the source or the sources
    and the plan."""

    g: object
    alpha: float
    beta: float
    root: int | None
    roots: list[int] | None
    plan: Plan


def bfs_call(g, source=None, sources=None, algorithm="auto", backend=None, alpha=ALPHA, beta=BETA, batch=None, *,
             explaining=False) -> BfsCall:
    """Validate the arguments of :func:`bfs` and plan the search (logged unless ``explaining``); the
    ``"bfs"`` explainer of ``gk.explain`` returns its plan."""
    _check_graph(g)
    # the switch divides by them: 0, negative, NaN, inf, bools and non-numbers are refused by name
    alpha = check_real_scalar("alpha", alpha, low=0, low_open=True)
    beta = check_real_scalar("beta", beta, low=0, low_open=True)
    if batch is not None and not isinstance(batch, (bool, np.bool_)):
        raise TypeError(f"argument 'batch': expected None, True or False, found {type_name(batch)} {batch!r}")
    if (source is None) == (sources is None):
        raise ValueError("arguments 'source' and 'sources': give exactly one of them")
    check_choice("algorithm", algorithm, ALGORITHMS)
    searched = _as_searchable(g, algorithm, explaining)
    target = g if searched is None else searched
    concrete = resolve_backend(backend, target)
    if concrete == "cpu":
        target._require_host("the cpu backend")
    root = roots = None
    if sources is not None:
        roots = [check_int_scalar("sources[i]", s, low=0, high=target.num_src - 1)
                 for s in np.asarray(sources).tolist()]
    else:
        root = check_int_scalar("source", source, low=0, high=target.num_src - 1)
    if searched is None:
        from ._sparse_plan import snapshot_plan

        the_plan = snapshot_plan("bfs", concrete)
    else:
        the_plan = _plan_bfs(searched, concrete, algorithm, None if roots is None else len(roots), batch)
    return BfsCall(searched, alpha, beta, root, roots, the_plan if explaining else log_plan(the_plan))


@register_explainer("bfs")
def _explain_bfs(g, source=None, *, sources=None, algorithm="auto", backend=None, alpha=ALPHA, beta=BETA,
                 batch=None) -> Plan:
    return bfs_call(g, source, sources, algorithm, backend, alpha, beta, batch, explaining=True).plan


_BFS_KERNELS = {"top_down": Kernel.BFS_TOP_DOWN, "bottom_up": Kernel.BFS_BOTTOM_UP,
                "direction_optimizing": Kernel.BFS_DIRECTION_OPTIMIZING, "spmsv": Kernel.BFS_SPMSV}


def _plan_bfs(g, backend, algorithm, num_sources, batch):
    """The search's plan: the algorithm ``auto`` stands for, its kernels, and whether several sources run
    batched (``batch`` None: by the rule :func:`bfs` documents)."""
    if not hasattr(g, "formats"):  # the packed arrays of a DynamicGraph
        return Plan("bfs", backend, Kernel.BFS_PACKED_TOP_DOWN, "packed", (), {"algorithm": "top_down"},
                    ("a DynamicGraph without a current snapshot: top-down levels straight over its packed memory "
                     "array (no CSR or CSC to build)",))
    reasons = []
    chosen = algorithm
    if algorithm == "auto":
        if g.allows_format("csc"):
            chosen = "direction_optimizing"
            reasons.append("auto: direction-optimizing (top-down on small frontiers, bottom-up on large ones)")
        else:
            chosen = "top_down"
            reasons.append("auto: top-down, because this graph does not allow the csc that bottom-up steps read")
    needs_csc = chosen in ("direction_optimizing", "bottom_up", "spmsv")
    if needs_csc and not g.allows_format("csc"):
        raise ValueError(f"argument 'algorithm': {chosen!r} scans in-edges and needs the csc format, which this "
                         f"graph does not allow ({g.formats()}); use algorithm='top_down' or g.formats([..., 'csc'])")
    batched = False
    if num_sources is not None and backend == "cuda" and batch:
        raise ValueError("argument 'batch': batched multi-source searches run on the cpu backend; the "
                         "cuda backend runs the sources one after another")
    if num_sources is not None and backend == "cpu":
        batched = batch if batch is not None else (algorithm == "auto"
                                                   and num_sources >= tuning.current().bfs_batch_min_sources
                                                   and g.allows_format("csc"))
        if batched and not g.allows_format("csc"):
            raise ValueError(f"argument 'batch': batched searches pull along in-edges and need the csc format, "
                             f"which this graph does not allow ({g.formats()})")
    if batched:
        kernel, params = Kernel.BFS_MULTI_SOURCE, {"batch": MS_BATCH}
        reasons.append(f"{num_sources} sources, batched: up to {MS_BATCH} searches share each pass over the edges")
    else:
        kernel = Kernel.CUDA_BFS if backend == "cuda" else _BFS_KERNELS[chosen]
        params = {"algorithm": chosen}
    if backend == "cpu" and not batched and chosen in ("top_down", "direction_optimizing"):
        workers, need, fits = _private_maps_size((g.num_src + 63) // 64)
        reasons.append(f"top-down levels claim on a private visited map per thread ({workers} x "
                       f"{_bytes(need // workers)})" if fits else
                       f"top-down levels claim on one shared visited map by compare-and-swap: {workers} private "
                       f"maps would take {_bytes(need)}, over bfs_private_maps_max_bytes "
                       f"({_bytes(tuning.current().bfs_private_maps_max_bytes)})")
    # in-edges: the csc, or on a symmetric graph the csr's own lists (Graph._in_adjacency)
    in_fmt = g._in_adjacency_format() if batched or chosen != "top_down" else "csr"
    fmt = "csr" if in_fmt == "csr" else "csr+csc"
    return Plan("bfs", backend, kernel, fmt, builds(g, "csr", in_fmt, backend=backend), params, tuple(reasons))


def _check_graph(g):
    from .graph import DynamicGraph, Graph

    if isinstance(g, DynamicGraph):
        return
    if not isinstance(g, Graph):
        raise TypeError(f"argument 'g': expected a graphkern Graph or DynamicGraph, found {type_name(g)}")
    if g.num_src != g.num_dst:
        raise ValueError(f"argument 'g': BFS needs a square graph, found {g.num_src} sources and {g.num_dst} "
                         f"destinations")


@holding_graph_lock  # a DynamicGraph: no batch rewrites its packed arrays mid-search
def bfs(g, source=None, *, sources=None, algorithm: str = "auto", backend=None, alpha: float = ALPHA,
        beta: float = BETA, batch: bool | None = None):
    """Breadth-first search from ``source`` (or from each of ``sources``), along out-edges.

    Parameters
    ----------
    g : Graph
        A square graph; multi-edges and self-loops are fine.
    source : int
    sources : sequence of int, optional
        Several searches on the same graph (formats are built once); returns a list of results, one per
        source in order. With ``algorithm="auto"`` and at least 8 sources (the knob ``bfs_batch_min_sources``
        of :mod:`graphkern.tuning`) they run batched:
        up to 64 searches share each pass over the edges (MS-BFS, a bit per search in a 64-bit mask per
        vertex), with ``trace`` shared by the batch and ``algorithm == "multi_source"``.
    algorithm : {"auto", "direction_optimizing", "top_down", "bottom_up", "spmsv"}
        ``auto`` is direction-optimizing (top-down when the graph does not allow the CSC).
        ``spmsv`` is the linear-algebra form: every vertex takes its highest-labelled parent.
    alpha, beta : float
        The direction-optimizing switch thresholds (GAP's defaults 15 and 18).
    batch : bool, optional
        Force (True) or forbid (False) batching of ``sources``; default: batch under ``auto`` when there
        are at least ``bfs_batch_min_sources`` of them and the graph allows the CSC the pull levels read.

    Returns
    -------
    BFSResult
        ``parents`` (``parents[source] == source``, -1 unreached), ``levels`` (hops, -1 unreached),
        and a per-level ``trace``.

    Examples
    --------
    >>> import graphkern as gk
    >>> g = gk.Graph.from_coo([0, 1, 1, 2], [1, 2, 3, 0], num_nodes=5)
    >>> r = gk.bfs(g, 0)
    >>> r.parents.tolist(), r.levels.tolist()
    ([0, 0, 1, 1, -1], [0, 1, 2, 2, -1])
    """
    g, alpha, beta, root, roots, the_plan = bfs_call(g, source, sources, algorithm, backend, alpha, beta, batch)
    if the_plan.kernel is Kernel.BFS_PACKED_TOP_DOWN:
        if roots is not None:
            return [_search_packed(g, r) for r in roots]
        return _search_packed(g, root)
    if the_plan.kernel is Kernel.CUDA_BFS:
        from ._bfs_cuda import search as search_on_device

        chosen = the_plan.params["algorithm"]
        if roots is not None:
            return [search_on_device(g, r, chosen, alpha, beta) for r in roots]
        return search_on_device(g, root, chosen, alpha, beta)
    if the_plan.kernel is Kernel.BFS_MULTI_SOURCE:
        with fair_share():  # levels are short parallel steps (graphkern._fair_share)
            return _multi_source(g, roots)
    chosen = the_plan.params["algorithm"]
    with fair_share():
        if roots is not None:
            return [_search(g, r, chosen, alpha, beta) for r in roots]
        return _search(g, root, chosen, alpha, beta)


def _search_packed(dg, source: int) -> BFSResult:
    """Top-down levels over a DynamicGraph's packed arrays (each level one parallel step)."""
    import numba

    n = dg.num_nodes
    parents = _memory.full(n, -1, np.int64)
    levels = _memory.full(n, -1, np.int64)
    parents[source] = source
    levels[source] = 0
    next_front = np.zeros(n, dtype=np.uint8)
    queue = np.empty(n, dtype=np.int64)
    frontier = np.array([source], dtype=np.int64)
    parts = max(1, numba.get_num_threads() * 8)
    trace = []
    level = 0
    while frontier.size:
        level += 1
        t0 = time.perf_counter()
        found = _bfs.packed_top_down_step(dg._keys, dg._eids, dg._row_off, frontier, parts, parents, levels, level,
                                          next_front)
        frontier = _bfs.bitmap_to_queue(next_front, queue, True)[:found].copy() if found else frontier[:0]
        trace.append((level, "top_down", -1, int(found), time.perf_counter() - t0))
    return BFSResult(parents, levels, source, "top_down", trace)


def _hubs(g, in_indptr, in_indices, out_indptr):
    """The graph's hub index for bottom-up steps (``hubs[v]``: the in-neighbour of ``v`` with the highest
    out-degree), built at the second search that steps bottom-up and cached with the graph; None before,
    and None on a graph whose degrees are not skewed (the knob ``bfs_hub_min_skew``).

    A bottom-up vertex tries its hub before reading its row: in a power-law graph the hubs join the
    frontier early, so most vertices find their parent without touching the in-edges (measured by
    ``python tools/compare_peers.py --family bfs``). Building it is one pass over the in-edges, about
    the cost of a few searches, so a graph searched once does not pay for it."""
    hubs = g._cache.get("bfs_hubs")
    if hubs is not None:
        return hubs
    skewed = g._cache.get("bfs_degrees_skewed")
    if skewed is None:
        skewed = g._cache["bfs_degrees_skewed"] = _degrees_skewed(out_indptr)
    if not skewed:
        return None
    seen = g._cache.get("bfs_bottom_up_searches", 0)
    g._cache["bfs_bottom_up_searches"] = seen + 1
    if seen == 0:
        return None
    hubs = np.empty(g.num_dst, dtype=in_indices.dtype)
    _bfs.in_neighbour_hubs(in_indptr, in_indices, out_indptr, hubs)
    g._cache["bfs_hubs"] = hubs
    return hubs


def _degrees_skewed(out_indptr) -> bool:
    """Whether some vertex has at least ``bfs_hub_min_skew`` (a knob) times the mean out-degree: on a graph
    without hubs the index finds no early parents and its build costs two or three searches."""
    num = out_indptr.size - 1
    if num == 0 or out_indptr[num] == 0:
        return False
    largest = int(np.max(out_indptr[1:] - out_indptr[:-1]))
    return largest >= tuning.current().bfs_hub_min_skew * int(out_indptr[num]) / num


def _vertices_with_edges(g, indptr) -> int:
    """Vertices of non-zero out-degree (cached with the graph): what a search can still claim, at most,
    is bounded by these less the ones it reached (a heuristic bound: on a directed graph a vertex is
    reached by its in-edges)."""
    count = g._cache.get("bfs_vertices_with_edges")
    if count is None:
        count = g._cache["bfs_vertices_with_edges"] = int(np.count_nonzero(indptr[1:] != indptr[:-1]))
    return count


def _borrow(g, borrowed: dict, key: str, fits, make):
    """The scratch buffer ``key`` kept with the graph, taken out of its cache for one search (``borrowed``
    holds it until :func:`_search` puts it back), or a new one from ``make()`` when the cache has none
    that ``fits``. Two searches of one graph at once (from two Python threads) so never share scratch:
    the second finds the cache empty and makes its own."""
    buf = borrowed.get(key)
    if buf is None:
        buf = g._cache.pop(key, None)
    if buf is None or not fits(buf):
        buf = make()
    borrowed[key] = buf
    return buf


def _claim_buffers(g, borrowed: dict, n: int, parts: int, dtype):
    """The top-down claim buffers (``claim_v``, ``claim_u``, ``fills``, ``counter``), kept with the graph."""
    size = _bfs.claim_buffer_size(n, parts)
    return _borrow(g, borrowed, "bfs_claims", lambda b: b[0].size >= size,
                   lambda: (np.empty(size, dtype=dtype), np.empty(size, dtype=dtype),
                            np.zeros(size // _bfs.CLAIM_CHUNK + 1, dtype=np.int64), np.zeros(1, dtype=np.int64)))


def _bytes(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.0f} KiB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MiB"


def _private_maps_size(words: int):
    """``(workers, bytes, fits)``: one map of ``words`` 64-bit words per Numba thread, their bytes, and
    whether they fit the knob ``bfs_private_maps_max_bytes`` (past it the threads share one map, claims
    by compare-and-swap)."""
    import numba

    workers = numba.get_num_threads()
    return workers, workers * words * 8, workers * words * 8 <= tuning.current().bfs_private_maps_max_bytes


def _private_maps(g, borrowed: dict, words: int):
    """One visited map per thread for :func:`top_down_step_private` (kept with the graph), or None when
    they would take more than the knob ``bfs_private_maps_max_bytes``. A thread's map lives in its own cache, where
    the shared map's lines travel between cores on every claim (the asv benchmarks ``BFS`` and
    ``TopDownSharedMap`` compare the two)."""
    workers, _, fits = _private_maps_size(words)
    if not fits:
        return None
    return _borrow(g, borrowed, "bfs_private_maps", lambda m: m.shape == (workers, words),
                   lambda: np.empty((workers, words), dtype=np.uint64))


def _search(g, source: int, algorithm: str, alpha: float, beta: float) -> BFSResult:
    """One search; its scratch buffers are borrowed from the graph's cache and put back afterwards."""
    borrowed = {}
    try:
        return _search_levels(g, source, algorithm, alpha, beta, borrowed)
    finally:
        g._cache.update(borrowed)


def _in_rows_sorted(g) -> bool:
    """Whether each vertex's in-neighbours are listed in ascending order (checked once per graph): the
    SpMSV pull then stops at the highest-labelled parent."""
    flag = g._cache.get("in_adjacency_sorted")
    if flag is None:
        from .kernels.cpu.sort import rows_are_sorted

        flag = g._cache["in_adjacency_sorted"] = bool(rows_are_sorted(*g._in_adjacency()))
    return flag


def _search_levels(g, source: int, algorithm: str, alpha: float, beta: float, borrowed: dict) -> BFSResult:
    import numba

    n = g.num_src
    indptr, indices, _ = g._raw("csr")
    in_indptr = in_indices = None
    if algorithm != "top_down":
        in_indptr, in_indices = g._in_adjacency()
    dtype = g.idtype
    # work buffers live with the graph between searches (first-touch page faults cost as much as a level)
    work = _borrow(g, borrowed, "bfs_work", lambda w: True,
                   lambda: [np.empty(n + 1, dtype=dtype), np.empty(n + 1, dtype=dtype), np.zeros(n, dtype=np.uint8),
                            np.zeros(n, dtype=np.uint8), np.zeros((n + 63) // 64, dtype=np.uint64),
                            np.zeros((n + 63) // 64, dtype=np.uint64), np.empty(n + 1, dtype=dtype)])
    # frontiers are views into the queue buffers (n + 1 places: see top_down_serial_levels); `before` is
    # the visited map as a top-down level found it; `by[k]` the vertex that found serial queue place k
    queue_buf, spare_buf, front, next_front, visited, before, by = work
    # results come from the recycled output maps: fresh pages cost page faults on every search, the
    # pool does not (graphkern._memory)
    parents = _memory.empty(n, dtype)
    levels = _memory.empty(n, dtype)
    _bfs.init_search(parents, levels, visited, source)
    trace = []
    frontier = np.array([source], dtype=dtype)
    next_front.fill(0)
    knobs = tuning.current()  # one reading for the whole search
    parts = max(1, numba.get_num_threads() * knobs.parts_per_thread)
    slots_below = n // max(1, knobs.bfs_slots_below)
    levels_per_call = max(1, knobs.bfs_serial_levels_per_call)
    level = 0
    edges_to_check = g.num_edges
    scout = int(indptr[source + 1] - indptr[source])
    previous = -1  # the last top-down frontier's out-edges: bottom-up only on a growing frontier
    spmsv = algorithm == "spmsv"
    best = _memory.full(n, -1, dtype) if spmsv else None
    hubs, hubs_looked_up = None, False
    reached = 1  # vertices with a level so far
    next_part = np.zeros(1, dtype=np.int64)  # the private top-down step's work counter
    chunk_scouts = np.empty(_bfs.claim_chunks(visited.size), dtype=np.int64)  # claimed_vertices' chunk sums
    chunk_starts = np.empty(chunk_scouts.size + 1, dtype=np.int64)
    next_bounds = None  # the next top-down level's parts, when claimed_vertices listed its frontier

    while frontier.size:
        listed_bounds, next_bounds = next_bounds, None  # only for the frontier the last level listed
        bottom_up = algorithm == "bottom_up" or (
            algorithm in ("direction_optimizing", "spmsv") and scout > edges_to_check / alpha and scout > previous)
        if bottom_up:
            awake = frontier.size
            _bfs.queue_to_bitmap(frontier, front)
            # a byte per vertex: faster than GAP's bit map on the big levels while the byte map still
            # fits the L2 (`python tools/compare_peers.py --family bfs`)
            if spmsv:
                pull = _bfs.spmsv_pull_step_sorted if _in_rows_sorted(g) else _bfs.spmsv_pull_step
            else:
                if not hubs_looked_up:  # once a search: _hubs counts the searches
                    hubs = _hubs(g, in_indptr, in_indices, indptr)
                    hubs_looked_up = True

                def pull(in_indptr, in_indices, front, next_front, parents, levels, level, hubs=hubs):
                    return _bfs.bottom_up_step(in_indptr, in_indices, hubs if hubs is not None else in_indptr,
                                               hubs is not None, front, next_front, parents, levels, level)
            while True:
                old = awake
                level += 1
                t0 = time.perf_counter()
                awake = pull(in_indptr, in_indices, front, next_front, parents, levels, level)
                reached += int(awake)
                front, next_front = next_front, front
                trace.append((level, "pull" if spmsv else "bottom_up", old, int(awake), time.perf_counter() - t0))
                if awake == 0:
                    break
                if algorithm != "bottom_up" and not (awake >= old or awake > n / beta):
                    break
            frontier = _bfs.bitmap_to_queue(front, queue_buf, True)
            queue_buf, spare_buf = spare_buf, queue_buf
            next_front.fill(0)  # it holds the level before last; top-down steps expect an empty map
            if algorithm != "bottom_up" and not spmsv:
                _bfs.visited_bits_from_parents(parents, visited)
            if algorithm == "bottom_up":
                break
            scout, previous = 1, -1
            continue
        if not spmsv and scout < knobs.bfs_serial_level_edges:
            t0 = time.perf_counter()
            # the frontier is never in queue_buf at the top of the loop (each step leaves it in spare_buf)
            found_per_level = _borrow(g, borrowed, "bfs_serial_found", lambda f: f.size == levels_per_call,
                                      lambda: np.empty(levels_per_call, dtype=np.int64))
            queue_buf[:frontier.size] = frontier
            first = frontier.size
            start, count, last_level, scout, previous, edges_to_check, done = _serial.top_down_serial_levels(
                indptr, indices, queue_buf, by, first, visited, level, scout, previous, knobs.bfs_serial_level_edges,
                edges_to_check, float(alpha) if algorithm == "direction_optimizing" else 0.0, found_per_level)
            # the run's parents and levels, from its queue: in parallel when it found many vertices
            record = (_serial.record_serial_levels if count - first >= knobs.bfs_parallel_record_from
                      else _serial.record_serial_levels_one_thread)
            record(queue_buf, by, first, found_per_level[:done], level + 1, parents, levels)
            if done:
                trace.append(_SerialLevels(level + 1, int(first), found_per_level[:done].copy(),
                                           time.perf_counter() - t0))
                reached += int(count - first)
                level = int(last_level)
                scout, previous = int(scout), int(previous)
                frontier = queue_buf[start:count]
                queue_buf, spare_buf = spare_buf, queue_buf
                continue
        edges_to_check -= scout
        previous = scout
        level += 1
        t0 = time.perf_counter()
        if not spmsv and scout < slots_below:
            # few out-edges: collect the claimed vertices in slots instead of scanning a map of all n
            offsets = np.empty(frontier.size + 1, dtype=np.int64)
            total = _bfs.frontier_degree_offsets(indptr, frontier, offsets)
            slots = np.empty(total, dtype=dtype)
            scout = int(_bfs.top_down_step_slots(indptr, indices, frontier, offsets, parents, levels, level, slots,
                                                 visited))
            found = slots[slots >= 0]
            reached += found.size
            trace.append((level, "top_down", int(frontier.size), int(found.size), time.perf_counter() - t0))
            frontier = found
            continue
        bounds = _bfs.degree_balanced_bounds(indptr, frontier, parts) if listed_bounds is None else listed_bounds
        if spmsv:
            _bfs.spmsv_push_step(indptr, indices, frontier, bounds, parents, best, next_front)
            found = _bfs.bitmap_to_queue(next_front, queue_buf, True)
            _bfs.spmsv_commit(found, best, parents, levels, level)
            scout = int(_bfs.sum_degrees(indptr, found)) if found.size else 0
            reached += found.size
        else:
            # claims set bits of `visited`; the bits the level set are the next frontier. With a private map
            # per thread each claims on its own copy and the copies are ORed in afterwards. On one shared
            # map (too many threads for that) the gather reads the map as the level found it when few
            # claims can come of many edges (at most the vertices with edges not reached yet: the lines
            # claims write then stay out of the other core's gathers), else the live map (many claims: it
            # filters the repeats). See top_down_step_private and top_down_step.
            maps = _private_maps(g, borrowed, visited.size)
            if maps is not None:
                _bfs.top_down_step_private(indptr, indices, frontier, bounds, visited, maps, maps.view(indices.dtype),
                                           parents, next_part)
                claimed, known = maps, visited
            else:
                np.copyto(before, visited)
                unreached = max(_vertices_with_edges(g, indptr) - reached, 0)
                words = before if scout > knobs.bfs_stale_gather_edges_per_claim * unreached else visited
                claim_v, claim_u, fills, counter = _claim_buffers(g, borrowed, n, bounds.size - 1, dtype)
                counter[0] = 0
                _bfs.top_down_step(indptr, indices, frontier, bounds, claim_v, claim_u, fills, counter, visited,
                                   words.view(indices.dtype))
                _bfs.write_claimed_parents(claim_v, claim_u, fills, counter, parents)
                claimed, known = visited[None, :], before  # `before` becomes a copy of `visited` again
            count, scout = _bfs.claimed_vertices(claimed, known, indptr, levels, level, queue_buf, chunk_starts,
                                                 chunk_scouts)
            found, scout = queue_buf[:count], int(scout)
            if scout >= slots_below:  # the next level scans the map too: split it by the chunk sums
                next_bounds = _bfs.bounds_from_chunks(chunk_starts, chunk_scouts, parts)
            reached += int(count)
        queue_buf, spare_buf = spare_buf, queue_buf
        trace.append((level, "push" if spmsv else "top_down", int(frontier.size), int(found.size),
                      time.perf_counter() - t0))
        frontier = found
    return BFSResult(parents, levels, source, algorithm, trace)
