"""What every section of ``graphkern bench`` shares: the result :class:`Row`, the :class:`BenchContext`
the sections get, their registry (:func:`bench_family`) and the alternating timer :func:`time_pair`.

The sections (graphkern._bench_families) and the runner (graphkern.bench) both build on this module, so
neither imports the other's internals.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Row", "BenchContext", "FAMILIES", "bench_family", "time_pair"]


@dataclass
class Row:
    """One line of the result table."""

    family: str
    name: str
    graphkern_s: float
    peer: str = ""
    peer_s: float | None = None
    work: float | None = None  # items processed per call (edges, updates, flops)
    unit: str = ""  # what ``work`` counts: "edges/s", "GFLOP/s", "GTEPS", "updates/s"
    check: str = "ok"
    extra: dict = field(default_factory=dict)

    @property
    def ratio(self) -> float | None:
        """Peer time over graphkern time (above 1 means graphkern is faster)."""
        if self.peer_s is None or self.graphkern_s <= 0:
            return None
        return self.peer_s / self.graphkern_s

    @property
    def throughput(self) -> float | None:
        if self.work is None or self.graphkern_s <= 0:
            return None
        scale = 1e-9 if self.unit in ("GFLOP/s", "GTEPS") else 1.0
        return self.work / self.graphkern_s * scale


@dataclass
class BenchContext:
    scale: int
    edgefactor: int
    repeat: int
    quick: bool
    backend: str
    src: np.ndarray = None
    dst: np.ndarray = None
    cache: dict = field(default_factory=dict)

    @property
    def on_gpu(self) -> bool:
        return self.backend == "cuda"

    def to_backend(self, obj):
        """An array or Graph where the backend runs: on the GPU for cuda (copied once), else as it is."""
        if not self.on_gpu:
            return obj
        from . import _cuda
        from .graph import Graph

        return obj.to("cuda") if isinstance(obj, Graph) else _cuda.to_device("bench input", obj)

    def timed(self, func: Callable[[], object]) -> Callable[[], object]:
        """``func`` made safe to time: on the GPU it waits for the device before returning."""
        if not self.on_gpu:
            return func

        def synced():
            from numba import cuda

            result = func()
            cuda.synchronize()
            return result

        return synced


# the registered sections, in the order they run: (name, func(ctx) -> list[Row])
FAMILIES: list[tuple[str, Callable[[BenchContext], list[Row]]]] = []


def bench_family(name: str):
    """Register ``func(ctx) -> list[Row]`` as one section of ``graphkern bench``."""

    def wrap(func):
        FAMILIES.append((name, func))
        return func

    return wrap


def time_pair(ours: Callable[[], object], peer: Callable[[], object] | None, repeat: int):
    """Median seconds of ``ours`` and ``peer``, called alternately ``repeat`` times after one warm-up each."""
    ours()
    if peer is not None:
        peer()
    t_ours, t_peer = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        ours()
        t_ours.append(time.perf_counter() - t0)
        if peer is not None:
            t0 = time.perf_counter()
            peer()
            t_peer.append(time.perf_counter() - t0)
    return float(np.median(t_ours)), (float(np.median(t_peer)) if peer is not None else None)
