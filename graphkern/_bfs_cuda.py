"""The CUDA path of :func:`graphkern.bfs`: the same direction-optimizing loop as the CPU driver, each
level one kernel (:mod:`graphkern.kernels.cuda.bfs`), with two counters per level (vertices found and
their out-edges) as the only data that comes back to the host. Parents and levels stay on the device.
"""

from __future__ import annotations

import time

import numpy as np

from . import _cuda
from ._sparse_cuda import device_graph


def search(g, source: int, algorithm: str, alpha: float, beta: float):
    from .kernels.cuda import bfs as K
    from .kernels.cuda.launch import grid_1d
    from .kernels.cuda.sort import fill
    from .traversal import BFSResult

    dg = device_graph(g)
    n = g.num_src
    idt = g.idtype
    indptr, indices, _ = dg._raw("csr")
    in_indptr = in_indices = None
    if algorithm != "top_down":
        in_indptr, in_indices, _ = dg._raw("csc")
    parents = _cuda.empty(n, idt)
    levels = _cuda.empty(n, idt)
    K.init_search[grid_1d(n)](parents, levels, source)
    frontier = _cuda.empty(n, idt)
    next_frontier = _cuda.empty(n, idt)
    frontier[0:1].copy_to_device(np.array([source], dtype=idt))
    front = _cuda.zeros(n, np.uint8)
    next_front = _cuda.zeros(n, np.uint8)
    counters = _cuda.zeros(2, np.int64)
    spmsv = algorithm == "spmsv"
    best = _cuda.full(n, -1, idt) if spmsv else None
    ends = indptr[source:source + 2].copy_to_host()
    scout = int(ends[1] - ends[0])
    frontier_size = 1
    edges_to_check = g.num_edges
    level = 0
    trace = []
    while frontier_size:
        bottom_up = algorithm == "bottom_up" or (
            algorithm in ("direction_optimizing", "spmsv") and scout > edges_to_check / alpha)
        if bottom_up:
            K.clear_bytes[grid_1d(n)](front)
            K.mark_queue[grid_1d(frontier_size)](frontier, frontier_size, front)
            step = K.spmsv_pull_step if spmsv else K.bottom_up_step
            awake = frontier_size
            while True:
                old = awake
                level += 1
                t0 = time.perf_counter()
                fill(counters, 0)
                step[grid_1d(n)](in_indptr, in_indices, indptr, front, next_front, parents, levels, level, counters)
                awake, scout = (int(c) for c in counters.copy_to_host())
                front, next_front = next_front, front
                trace.append((level, "pull" if spmsv else "bottom_up", old, awake, time.perf_counter() - t0))
                if awake == 0:
                    break
                if algorithm != "bottom_up" and not (awake >= old or awake > n / beta):
                    break
            fill(counters, 0)
            K.bitmap_to_queue[grid_1d(n)](front, frontier, counters)
            frontier_size = int(counters.copy_to_host()[0])
            scout = 1
            continue
        edges_to_check -= scout
        level += 1
        t0 = time.perf_counter()
        fill(counters, 0)
        if spmsv:
            K.spmsv_push_step[grid_1d(frontier_size)](indptr, indices, frontier, frontier_size, parents, best,
                                                      next_frontier, counters)
            found = int(counters.copy_to_host()[0])
            if found:
                K.spmsv_commit[grid_1d(found)](next_frontier, found, best, indptr, parents, levels, level, counters)
        else:
            K.top_down_step[grid_1d(frontier_size)](indptr, indices, frontier, frontier_size, parents, levels, level,
                                                    next_frontier, counters)
        found, scout = (int(c) for c in counters.copy_to_host())
        trace.append((level, "push" if spmsv else "top_down", frontier_size, found, time.perf_counter() - t0))
        frontier, next_frontier = next_frontier, frontier
        frontier_size = found
    return BFSResult(parents, levels, source, algorithm, trace)
