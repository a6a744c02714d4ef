"""The visited maps of a CPU top-down level, sized once for the bfs planner (graphkern.traversal, whose
plan says how a level claims) and the CPU search that claims on them (graphkern._cpu.bfs)."""

from __future__ import annotations

from . import tuning


def private_maps_size(words: int):
    """``(workers, bytes, fits)``: one map of ``words`` 64-bit words per Numba thread, their bytes, and
    whether they fit the knob ``bfs_private_maps_max_bytes`` (past it the threads share one map, claims
    by compare-and-swap)."""
    import numba

    workers = numba.get_num_threads()
    return workers, workers * words * 8, workers * words * 8 <= tuning.current().bfs_private_maps_max_bytes
