"""Breadth-first search: :func:`bfs` with top-down, bottom-up, direction-optimizing and linear-algebra steps.

The search is GAP's direction-optimizing loop (docs/design.md, section
'Direction-optimizing BFS'): top-down while the frontier's
out-edges are few, bottom-up while the frontier is large (``alpha = 15``, ``beta = 18``), with each level
one compiled parallel step. Directed graphs are searched along out-edges; bottom-up steps scan in-edges,
so they need the CSC (built on first use and cached). This module validates the call and plans the search;
the ``bfs`` module of the backend's driver runs it (``graphkern._cpu.bfs`` or ``graphkern._cuda.bfs``,
picked by :func:`graphkern._backend.driver`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import tuning
from ._backend import driver
from ._bfs_multi import MS_BATCH
from ._bfs_result import BFSResult
from ._bfs_scratch import private_maps_size
from ._config import resolve_backend
from ._validate import check_choice, check_int_scalar, check_real_scalar, to_host_array, type_name
from .dispatch import Kernel, Plan, builds, log_plan, register_explainer
from .graph.dynamic import holding_graph_lock

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
        listed = to_host_array("sources", sources)
        if listed.ndim != 1:
            raise TypeError(f"argument 'sources': expected a 1-D sequence of vertex ids, found shape {listed.shape}")
        roots = [check_int_scalar(f"sources[{i}]", s, low=0, high=target.num_src - 1)
                 for i, s in enumerate(listed.tolist())]
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
        workers, need, fits = private_maps_size((g.num_src + 63) // 64)
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
    run = driver(the_plan.backend).bfs
    if roots is not None:
        return run.searches(g, the_plan, roots, alpha, beta)
    return run.search(g, the_plan, root, alpha, beta)


def _bytes(n: int) -> str:
    return f"{n} B" if n < 1024 else f"{n / 1024:.0f} KiB" if n < 1 << 20 else f"{n / (1 << 20):.1f} MiB"
