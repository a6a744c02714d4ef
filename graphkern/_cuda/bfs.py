"""The CUDA runs of :func:`graphkern.bfs`: the direction-optimizing loop of the CPU twin (``graphkern._cpu.bfs``,
the same functions and parameters) with every level decided and run on the device
(:mod:`graphkern.kernels.cuda.bfs`).

A search is one cooperative launch of ``search_levels`` (grid barriers between the phases of a level),
then one copy of its state back: the host waits once per search, however many levels it has. Where
cooperative launch is unavailable (or the knob ``cuda_bfs_cooperative`` is 0) the same phases run as separate
launches, a batch of levels at a time (1, 2, 4, ... levels), checking for the end after each batch:
a search of depth ``d`` waits about ``log2(d)`` times.

The trace comes from a per-level log the device keeps, ``(mode, frontier size in, found)``, copied back
once at the end; the levels are not timed one by one (no host syncs between them), so each entry's
seconds are NaN and the search's time is the caller's to take.

Scratch (queues, frontier maps, counters, the level log, the heavy in-row lists) lives with the device
graph between searches; ``parents`` and ``levels`` are new arrays on every call, never written again.
"""

from __future__ import annotations

import math

import numpy as np

from .. import _cuda, tuning
from .._bfs_result import BFSResult

__all__ = ["search", "searches"]


def _thresholds(knobs) -> tuple:
    """The kernels' degree thresholds (push: group, block, grid; pull: group, grid) from the knobs."""
    return (knobs.cuda_bfs_push_group_degree, knobs.cuda_bfs_push_block_degree, knobs.cuda_bfs_push_grid_degree,
            knobs.cuda_bfs_pull_group_degree, knobs.cuda_bfs_pull_grid_degree)


def _fixed_launch(knobs):
    """``(blocks, threads)`` of every launch when the knob ``cuda_bfs_launch_blocks`` fixes it, else None."""
    return (knobs.cuda_bfs_launch_blocks, knobs.cuda_bfs_threads) if knobs.cuda_bfs_launch_blocks > 0 else None


def _heavy_lists(dg, in_indptr, n, thresholds, launch):
    """The vertices whose in-lists pulls split among groups (by in-degree, see ``list_heavy_in_rows``),
    made once per graph and set of thresholds."""
    from ..kernels.cuda import bfs as K
    from ..kernels.cuda.launch import grid_1d

    key = ("bfs_heavy_in_rows", thresholds[3], thresholds[4])
    lists = dg._cache.get(key)
    if lists is None:
        heavy = _cuda.empty(max(n, 1), in_indptr.dtype)
        heavy_ctr = _cuda.zeros(2, np.int64)
        if n:
            shape = launch or grid_1d(n)
            K.list_heavy_in_rows[shape](in_indptr, heavy[:n], heavy_ctr, thresholds[3], thresholds[4])
        lists = dg._cache[key] = (heavy, heavy_ctr)
    return lists


def _work(dg, n: int, dtype):
    """The search's scratch, taken out of the graph's cache (put back by :func:`search` after a search that
    finished; two concurrent searches of one graph so never share it). Invariants between searches: the
    frontier maps are zero and ``pick`` is -1."""
    key = ("bfs_work", np.dtype(dtype).str)
    work = dg._cache.pop(key, None)
    if work is None:
        work = {
            "qa": _cuda.empty((2, n), dtype), "qb": _cuda.empty((2, n), dtype),
            "bm": _cuda.zeros((2, n), np.uint8), "pick": _cuda.full(n, -1, np.int64),
            "touched": _cuda.empty(n, dtype), "ctr": _cuda.zeros((2, 8), np.int64),
            "st": _cuda.zeros(8, np.int64),
            # (mode, frontier size in, found) per level; a search has at most n levels
            "log": _cuda.zeros((n + 1, 3), dtype),
        }
    return key, work


def _cooperative_blocks(kernel, args, threads) -> int:
    """Blocks of ``threads`` that can all be resident for ``kernel`` (0 when cooperative launch fails)."""
    from ..kernels.cuda.launch import SIMULATED

    if SIMULATED:
        return 1
    try:
        compiled = kernel.compile(tuple(kernel.typeof_pyval(a) for a in args))
        return int(compiled.max_cooperative_grid_blocks(threads))
    except Exception as exc:  # noqa: BLE001 - any failure means the per-phase launches instead
        import warnings

        warnings.warn(f"graphkern bfs: a cooperative launch is not available here ({type(exc).__name__}: {exc}); "
                      "searching with one launch per phase instead", RuntimeWarning, stacklevel=3)
        return 0


def searches(g, the_plan, sources: list[int], alpha: float, beta: float) -> list[BFSResult]:
    """The searches from each of ``sources``, one after another (the device runs no batched search)."""
    return [search(g, the_plan, s, alpha, beta) for s in sources]


def search(g, the_plan, source: int, alpha: float, beta: float) -> BFSResult:
    """The search from ``source`` with the plan's algorithm, its state on the device; ``parents`` and
    ``levels`` of the result are device arrays."""
    from ..kernels.cuda import bfs as K
    from ..kernels.cuda.launch import SIMULATED, grid_1d

    algorithm = the_plan.params["algorithm"]
    dg = _cuda.device_graph(g)
    n = g.num_src
    idt = g.idtype
    indptr, indices, _ = dg._raw("csr")
    knobs = tuning.current()
    thresholds = _thresholds(knobs)
    fixed = _fixed_launch(knobs)
    if algorithm != "top_down":
        in_indptr, in_indices = dg._in_adjacency()
        heavy, heavy_ctr = _heavy_lists(dg, in_indptr, n, thresholds, fixed)
    else:  # never pulls: the csr stands in for the csc, with empty heavy lists
        in_indptr, in_indices = indptr, indices
        heavy, heavy_ctr = dg._cache.get("bfs_no_heavy_in_rows") or dg._cache.setdefault(
            "bfs_no_heavy_in_rows", (_cuda.empty(1, indptr.dtype), _cuda.zeros(2, np.int64)))
    code = K.ALGORITHM_CODES[algorithm]
    parents = _cuda.empty(n, idt)
    levels = _cuda.empty(n, idt)
    key, w = _work(dg, n, idt)
    qa, qb, bm, pick, touched, ctr, st, log = (w[k] for k in ("qa", "qb", "bm", "pick", "touched", "ctr", "st",
                                                               "log"))
    shape = fixed or grid_1d(n, knobs.cuda_bfs_threads)
    K.init_search[shape](parents, levels, source, g.num_edges, indptr, qa, qb, ctr, st, thresholds)
    width = knobs.cuda_bfs_group_width
    args = (indptr, indices, in_indptr, in_indices, parents, levels, pick, touched, qa, qb, bm, heavy, heavy_ctr, ctr,
            st, log, source, code, g.num_edges, float(alpha), float(beta), thresholds, width)
    blocks = _cooperative_blocks(K.search_levels, args, shape[1]) if knobs.cuda_bfs_cooperative else 0
    if blocks:
        # every block of a cooperative grid must be resident at once; a small graph takes fewer (cheaper
        # grid barriers), enough for a thread per vertex or per edge
        wanted = shape[0] if fixed or SIMULATED else max(shape[0], grid_1d(g.num_edges, shape[1])[0])
        launch = (min(wanted, blocks), shape[1])
        K.search_levels[launch](*args)
        state = st.copy_to_host()
    else:
        batch = 1
        while True:
            for _ in range(batch):
                K.decide_kernel[1, 1](st, ctr, log, indptr, source, code, n, float(alpha), float(beta))
                K.convert_kernel[shape](st, ctr, indptr, qa, qb, bm, thresholds)
                K.step_kernel[shape](indptr, indices, in_indptr, in_indices, parents, levels, pick, touched, qa, qb,
                                     bm, heavy, heavy_ctr, ctr, st, code, thresholds, width)
                K.commit_kernel[shape](indptr, in_indices, parents, levels, pick, touched, qa, qb, bm, heavy,
                                       heavy_ctr, ctr, st, code, thresholds)
            state = st.copy_to_host()
            if state[K.ST_PREV] == K.STOP:
                break
            batch *= 2
    depth = int(state[K.ST_LEVEL])
    rows = log[1:depth + 1].copy_to_host() if depth else np.zeros((0, 3), log.dtype)
    dg._cache[key] = w  # a finished search leaves the scratch as the next one expects it
    spmsv = algorithm == "spmsv"
    names = {K.PUSH: "push" if spmsv else "top_down", K.PULL: "pull" if spmsv else "bottom_up"}
    trace = [(i + 1, names[int(mode)], int(size), int(found), math.nan) for i, (mode, size, found) in enumerate(rows)]
    return BFSResult(parents, levels, source, algorithm, trace)
