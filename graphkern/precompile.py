"""Fill Numba's on-disk cache with the kernels a user will run, before the first real call needs them.

A compiled kernel is cached per specialisation: the op and reducer, the dtypes of the features and of the
graph's ids, the feature layout (width in vector chunks, heads, broadcast pattern) and the path the planner
picks (CSC rows, COO, destination blocks, the hub split). Each one costs about a second to compile the
first time a process meets it, and a few milliseconds to load from the cache afterwards.
:func:`precompile` runs every kernel family over small graphs in each of those shapes, twice: once as a
small graph plans it, and once with the cache-size knobs lowered so the large-graph paths (destination
blocks, hub split, edge-order softmax) are planned on the same small graph. Kernels compile to the same
code either way: the knobs steer the host-side planner only. The large-graph paths follow this machine's
calibration (graphkern._calibration): with ``calibrate=True`` it is measured first, between the two
phases, so that a blocked path this machine runs slower than the plain kernel is not compiled at all.

``graphkern compile`` on the command line calls it (with a progress bar and a summary). Run it once after
installing graphkern or upgrading it, numba or llvmlite, and after moving to a machine with another CPU;
the cache lives in a per-user folder (``graphkern.precompile.cache_dir()``), and ``NUMBA_CACHE_DIR`` wins.

>>> from graphkern.precompile import precompile
>>> report = precompile(families=["edge_softmax"], progress=False)
>>> report.families[0].family
'edge_softmax'
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from . import _numba_cache
from ._validate import check_bool, check_int_scalar

FAMILIES = ("spmm", "sddmm", "edge_softmax", "bfs", "dynamic", "torch")
CALIBRATION = "calibration"  # the group that compiles the kernels graphkern._calibrate measures
FLOAT_DTYPES = ("float32", "float64")
ID_DTYPES = ("int32", "int64")
# Feature widths with distinct compiled shapes: scalar rows, a part of a vector, one vector, two and four
# vector chunks (unrolled), and more chunks than are unrolled (the loop)
FEATURE_WIDTHS = (1, 4, 16, 32, 64, 160)
# Ops and reducers users run most (DGL's copy_u_*, u_mul_e_*, copy_e_*); ``ops="all"`` adds the rest
COMMON_SPMM = (("copy_lhs", ("sum", "mean", "max", "min")), ("mul", ("sum", "max", "mean")),
               ("copy_rhs", ("sum", "mean", "max")))
COMMON_SDDMM = ("dot", "add", "mul", "copy_lhs")


def cache_dir() -> Path:
    """The folder Numba caches graphkern's kernels in: ``NUMBA_CACHE_DIR`` when set, else the per-user one."""
    explicit = os.environ.get("NUMBA_CACHE_DIR")
    return Path(explicit) if explicit else _numba_cache.cache_root()


@dataclass
class FamilyReport:
    """What :func:`precompile` did for one kernel family."""

    family: str
    calls: int = 0
    compiled: int = 0  # specialisations compiled, not loaded from the on-disk cache
    seconds: float = 0.0  # summed over the worker processes
    skipped: str | None = None  # why the family did not run (torch missing), or None


@dataclass
class PrecompileReport:
    """The summary :func:`precompile` returns: one :class:`FamilyReport` per family, in the order run."""

    cache_dir: Path
    families: list[FamilyReport] = field(default_factory=list)
    wall_seconds: float = 0.0
    jobs: int = 1
    calibration: dict | None = None  # what graphkern._calibrate.calibrate measured and kept, when it ran

    @property
    def compiled(self) -> int:
        return sum(f.compiled for f in self.families)

    @property
    def seconds(self) -> float:
        return sum(f.seconds for f in self.families)

    def table(self) -> str:
        """The summary as an aligned text table."""
        lines = [f"{'family':<14}{'calls':>7}{'compiled':>10}{'seconds':>10}"]
        for f in self.families:
            if f.skipped:
                lines.append(f"{f.family:<14}  skipped: {f.skipped}")
            else:
                lines.append(f"{f.family:<14}{f.calls:>7}{f.compiled:>10}{f.seconds:>10.1f}")
        lines.append(f"{'total':<14}{sum(f.calls for f in self.families):>7}{self.compiled:>10}"
                     f"{self.seconds:>10.1f}")
        lines.append(f"wall time {self.wall_seconds:.1f} s with {self.jobs} worker process"
                     f"{'es' if self.jobs > 1 else ''}")
        lines.append(f"cache: {self.cache_dir}")
        return "\n".join(lines)


def _large_graph_paths():
    """Plan the large-graph paths on small graphs: a tiny L2 cache, no edge-count floor for the blocks and
    any hub share enough for the hub split; knobs of graphkern.tuning, for a ``with`` block. Where this
    machine's calibration found a blocked path slower than the plain kernel, the planner runs the plain
    one on large graphs too, and so does this: the blocked kernel is not compiled (if a later calibration
    picks it, its first call compiles it)."""
    from .tuning import tuned

    return tuned(l2_cache_bytes=4096, blocked_min_edges=0, hub_min_edge_share=0.0)


def _follows_calibration(group) -> bool:
    """Whether a group's plans depend on this machine's calibration: the large-graph paths of the sparse
    families and of the torch layers built on them."""
    family, _, _, large_graph_paths, _ = group
    return large_graph_paths and family in ("spmm", "sddmm", "torch")


def _graphs(idtype: str):
    """A small multigraph with a hub, a self-loop, zero-degree nodes and edge ids in source order (so the
    CSC's rows are sorted and the blocks qualify), and a Kronecker graph for BFS."""
    from .graph import Graph

    rng = np.random.default_rng(0)
    n, e = 600, 6000
    src = np.concatenate([rng.integers(0, n - 20, e), np.zeros(e // 2, np.int64), [7, 7]])
    dst = np.concatenate([rng.integers(0, n - 20, e), rng.integers(0, n - 20, e // 2), [7, 7]])
    order = np.argsort(src, kind="stable")
    return Graph.from_coo(src[order], dst[order], num_nodes=n, idtype=idtype)


def _spmm_calls(g, dtype, ops):
    from .sparse import SPMM_OPS, SPMM_REDUCERS, spmm

    rng = np.random.default_rng(1)
    table = COMMON_SPMM if ops == "common" else tuple((op, SPMM_REDUCERS) for op in SPMM_OPS)
    for width in FEATURE_WIDTHS:
        x = rng.random((g.num_src, width)).astype(dtype)
        for op, reducers in table:
            for reduce in reducers:
                # the edge operand as a scalar per edge (attention weights) and, for copy_e, full rows
                edge_widths = (width,) if op == "copy_rhs" else ((1, width) if op != "copy_lhs" else (None,))
                for ew in edge_widths:
                    w = None if ew is None else rng.random((g.num_edges, ew)).astype(dtype)
                    ufeat = None if op == "copy_rhs" else x
                    yield lambda o=op, r=reduce, u=ufeat, w=w: spmm(g, o, r, u, w)
                    if reduce in ("max", "min"):
                        yield lambda o=op, r=reduce, u=ufeat, w=w: spmm(g, o, r, u, w, return_arg=True)
    heads = rng.random((g.num_src, 4, 8)).astype(dtype)  # multi-head attention: (N, H, F) by (E, H, 1)
    attention = rng.random((g.num_edges, 4, 1)).astype(dtype)
    yield lambda: spmm(g, "mul", "sum", heads, attention)


def _sddmm_calls(g, dtype, ops):
    from .sparse import SDDMM_OPS, sddmm

    rng = np.random.default_rng(2)
    names = COMMON_SDDMM if ops == "common" else SDDMM_OPS
    pairs = (("u", "v"), ("u", "e"), ("v", "u")) if ops == "common" else (
        ("u", "v"), ("u", "e"), ("v", "u"), ("v", "e"), ("e", "u"), ("e", "v"))
    for width in FEATURE_WIDTHS:
        nodes = rng.random((g.num_nodes, width)).astype(dtype)
        edges = rng.random((g.num_edges, width)).astype(dtype)
        for op in names:
            for lt, rt in pairs:
                lhs, rhs = (edges if lt == "e" else nodes), (edges if rt == "e" else nodes)
                yield lambda o=op, a=lhs, b=rhs, lt=lt, rt=rt: sddmm(g, o, a, b, lt, rt)
    heads = rng.random((g.num_nodes, 4, 8)).astype(dtype)
    yield lambda: sddmm(g, "dot", heads, heads)
    scores = rng.random((g.num_nodes, 4, 1)).astype(dtype)
    yield lambda: sddmm(g, "add", scores, scores)


def _edge_softmax_calls(g, dtype):
    """Rows of the CSC/CSR where edge ids follow them, the edge-order kernel where they do not."""
    from .graph import Graph
    from .sparse import edge_softmax

    rng = np.random.default_rng(3)
    src, dst = g.edges()  # g's edge ids follow its sources; by_dst's follow its destinations
    order = np.argsort(dst, kind="stable")
    by_dst = Graph.from_coo(src[order], dst[order], num_nodes=g.num_nodes, idtype=g.idtype)
    for heads in (1, 4):
        logits = rng.standard_normal((g.num_edges, heads, 1)).astype(dtype)
        for graph in (g, by_dst):
            for norm_by in ("dst", "src"):
                yield lambda gr=graph, z=logits, nb=norm_by: edge_softmax(gr, z, norm_by)


def _bfs_calls(idtype):
    from . import graph as graph_module
    from .graph import Graph
    from .traversal import bfs

    kron = graph_module.kronecker(10, idtype=idtype)
    side = 40
    ids = np.arange(side * side).reshape(side, side)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    grid = Graph.from_coo(np.concatenate([src, dst]), np.concatenate([dst, src]), num_nodes=side * side,
                          idtype=idtype)
    for graph in (kron, grid):
        for algorithm in ("auto", "direction_optimizing", "top_down", "bottom_up", "spmsv"):
            yield lambda gr=graph, a=algorithm: bfs(gr, 0, algorithm=a)
        yield lambda gr=graph: bfs(gr, sources=np.arange(16))


def _dynamic_calls():
    from .graph import DynamicGraph
    from .incremental import IncrementalBFS

    def grow_and_slide():
        rng = np.random.default_rng(4)
        dg = DynamicGraph(2000)
        for _ in range(3):
            dg.apply(insert=(rng.integers(0, 2000, 3000), rng.integers(0, 2000, 3000)))
        s, d = dg.edges()[:2]
        dg.apply(insert=(rng.integers(0, 2000, 500), rng.integers(0, 2000, 500)), delete=(s[:500], d[:500]))
        dg.contains(s[:10], d[:10])
        dg.snapshot(csc=True)
        search = IncrementalBFS(dg, 0)
        dg.apply(insert=(rng.integers(0, 2000, 100), rng.integers(0, 2000, 100)))
        search.update()

    yield grow_and_slide


def _torch_calls(g, dtype):
    import torch

    from . import torch as gk_torch

    torch_dtype = getattr(torch, dtype)
    layers = [gk_torch.GraphConv(16, 16, norm=norm, allow_zero_in_degree=True) for norm in ("both", "right", "none")]
    layers += [gk_torch.GATConv(16, 8, num_heads=heads, allow_zero_in_degree=True) for heads in (4, 1)]
    layers += [gk_torch.SAGEConv(16, 16, aggr) for aggr in gk_torch.SAGEConv.AGGREGATORS if aggr != "lstm"]
    for layer in layers:
        layer.to(torch_dtype)

        def step(layer=layer):
            x = torch.rand(g.num_nodes, 16, dtype=torch_dtype, requires_grad=True)
            layer(g, x).sum().backward()
        yield step
    # RelGraphConv: gather_mm forward and backward (every regularizer), segment_mm for presorted edges
    etypes = torch.from_numpy(np.random.default_rng(5).integers(0, 4, g.num_edge_ids))
    for regularizer, presorted in ((None, False), ("basis", False), ("bdd", False), (None, True)):
        rel = gk_torch.RelGraphConv(16, 16, 4, regularizer=regularizer, num_bases=2).to(torch_dtype)
        types = torch.sort(etypes).values if presorted else etypes

        def rel_step(rel=rel, types=types, presorted=presorted):
            x = torch.rand(g.num_nodes, 16, dtype=torch_dtype, requires_grad=True)
            rel(g, x, types, presorted=presorted).sum().backward()
        yield rel_step


def _calls(family, g, dtype, idtype, ops):
    if family == "spmm":
        return _spmm_calls(g, dtype, ops)
    if family == "sddmm":
        return _sddmm_calls(g, dtype, ops)
    if family == "edge_softmax":
        return _edge_softmax_calls(g, dtype)
    if family == "torch":
        return _torch_calls(g, dtype)
    return iter(())


def _check_choices(name, values, allowed):
    values = tuple(values)
    bad = [v for v in values if v not in allowed]
    if bad or not values:
        raise ValueError(f"argument {name!r}: expected one or more of {', '.join(allowed)}; found "
                         f"{', '.join(map(repr, bad)) if bad else 'none'}")
    return values


def _group_calls(family, dtype, idtype, ops):
    if family == "bfs":
        return _bfs_calls(idtype)
    if family == "dynamic":
        return _dynamic_calls()
    return _calls(family, _graphs(idtype), dtype, idtype, ops)


class _CompileCounter:
    """Counts the specialisations Numba compiles (outermost ``numba:compile`` events; a cache load fires
    none) while it is registered."""

    def __init__(self):
        from numba.core import event

        counter = self

        class Listener(event.Listener):
            depth = 0

            def on_start(self, ev):
                self.depth += 1
                counter.compiled += self.depth == 1

            def on_end(self, ev):
                self.depth -= 1

        self.compiled = 0
        self._listener = Listener()

    def __enter__(self):
        from numba.core import event

        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc):
        from numba.core import event

        event.unregister("numba:compile", self._listener)


def _run_group(group):
    """Run one group of calls (a family in one dtype, id dtype and planning regime) on the CPU backend;
    returns (calls, compiled, seconds). A top-level function, so that worker processes can run it."""
    family, dtype, idtype, large_graph_paths, ops = group
    from . import _calibrate, _calibration
    from ._config import use_backend

    _calibration.forget()  # a worker reads the calibration as it is now, not as an earlier group found it
    start, calls = time.perf_counter(), 0
    with use_backend("cpu"), _CompileCounter() as counter:
        if family == CALIBRATION:
            calls = _calibrate.compile_candidates()
            return calls, counter.compiled, time.perf_counter() - start
        with _large_graph_paths() if large_graph_paths else contextlib.nullcontext():
            for call in _group_calls(family, dtype, idtype, ops):
                call()
                calls += 1
    return calls, counter.compiled, time.perf_counter() - start


def default_jobs() -> int:
    """Worker processes for :func:`precompile`: one per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # macOS, Windows
        return max(1, os.cpu_count() or 1)


def precompile(dtypes=("float32",), idtypes=("int32",), families=None, *, ops: str = "common",
               progress: bool = True, jobs: int | None = 1, calibrate: bool = False,
               calibrate_repeats: int = 9) -> PrecompileReport:
    """Compile (or load from the cache) every CPU kernel specialisation the given dtypes and families need.

    Parameters
    ----------
    dtypes : sequence of {'float32', 'float64'}
        Feature dtypes to compile the sparse kernels and the torch layers for.
    idtypes : sequence of {'int32', 'int64'}
        Dtypes of the graphs' ids (graphkern picks int32 unless a graph needs int64 or asks for it).
    families : sequence of str, optional
        Any of ``FAMILIES``; default all (``torch`` only when torch is installed).
    ops : {'common', 'all'}
        ``'common'``: the ops and reducers GNN layers run (copy_u, u_mul_e, copy_e; dot, add, mul, copy_u);
        ``'all'``: every op, reducer and target pair of g-SpMM and g-SDDMM (several times longer).
    progress : bool
        Show a progress bar (tqdm) on stderr.
    jobs : int or None
        Processes that compile at once. Numba compiles on one thread, so ``None`` (one a core,
        :func:`default_jobs`) divides the wall time by about the number of cores; each worker writes the
        same on-disk cache. 1 compiles in this process.
    calibrate : bool
        Also time the planner's machine-dependent choices (``graphkern calibrate``) and keep the outcome,
        when the sparse families are compiled and a calibration can be kept (not under
        ``GRAPHKERN_CALIBRATION=off``). The candidates compile beside the other kernels; they are timed
        while nothing else runs, and then the large-graph paths compile as the planner will take them on
        this machine. Without it the large-graph paths follow the calibration kept already, if any.
    calibrate_repeats : int
        Timed runs of each candidate (the median is kept).

    Returns
    -------
    PrecompileReport
        Calls made, specialisations compiled (not loaded from the on-disk cache) and seconds per family (summed
        over the workers), and the calibration measured (``report.calibration``, or None); ``report.table()``
        prints it.

    Examples
    --------
    >>> from graphkern.precompile import precompile
    >>> precompile(families=["bfs"], progress=False).families[0].calls > 0
    True
    """
    from . import _calibration

    dtypes = _check_choices("dtypes", dtypes, FLOAT_DTYPES)
    idtypes = _check_choices("idtypes", idtypes, ID_DTYPES)
    families = _check_choices("families", FAMILIES if families is None else families, FAMILIES)
    if ops not in ("common", "all"):
        raise ValueError(f"argument 'ops': expected 'common' or 'all', found {ops!r}")
    if jobs is None:
        jobs = default_jobs()
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise ValueError(f"argument 'jobs': expected a positive int or None, found {jobs!r}")
    check_bool("calibrate", calibrate)
    check_int_scalar("calibrate_repeats", calibrate_repeats, low=1)
    from tqdm.auto import tqdm

    started = time.perf_counter()
    report = PrecompileReport(cache_dir(), jobs=jobs)
    calibrate = calibrate and _calibration.path() is not None and bool({"spmm", "sddmm"} & set(families))
    groups = []  # (family, dtype, idtype, large_graph_paths, ops)
    if calibrate:  # first: the blocked candidates are among the slowest kernels to compile
        groups.append((CALIBRATION, None, "int32", True, ops))
    for family in families:
        if family == "torch":
            try:
                import torch  # noqa: F401
            except ImportError:
                report.families.append(FamilyReport(family, skipped="torch is not installed"))
                continue
        for idtype in idtypes:
            if family == "bfs":
                groups.append((family, None, idtype, False, ops))
                continue
            if family == "dynamic":
                if idtype == idtypes[0]:  # the dynamic graph keeps int64 keys whatever the ids
                    groups.append((family, None, idtype, False, ops))
                continue
            for dtype in dtypes:
                for large_graph_paths in (False, True):
                    groups.append((family, dtype, idtype, large_graph_paths, ops))
    reports = {f.family: f for f in report.families}
    for group in groups:
        if group[0] not in reports:
            reports[group[0]] = FamilyReport(group[0])
            report.families.append(reports[group[0]])

    def record(group, outcome):
        entry = reports[group[0]]
        entry.calls += outcome[0]
        entry.compiled += outcome[1]
        entry.seconds += outcome[2]

    # Two phases around the calibration: what does not depend on it, then the large-graph paths it chose
    phases = ([g for g in groups if not _follows_calibration(g)], [g for g in groups if _follows_calibration(g)])
    bar = tqdm(total=len(groups), desc="graphkern compile", unit="group", disable=not progress)
    with contextlib.ExitStack() as stack:
        pool = None
        if jobs > 1 and len(groups) > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor, as_completed

            # spawn, not fork: a forked child would inherit Numba's and torch's thread pools mid-state.
            # Groups go out in FAMILIES order, the slowest (spmm) first, and the torch layers, whose
            # kernels the sparse families compile, last: by then the cache answers most of them.
            pool = stack.enter_context(ProcessPoolExecutor(max_workers=min(jobs, len(groups)),
                                                           mp_context=multiprocessing.get_context("spawn")))
        for number, phase in enumerate(phases):
            if number == 1 and calibrate:
                from . import _calibrate

                bar.set_postfix_str("measuring")
                measuring = time.perf_counter()
                report.calibration = _calibrate.calibrate(calibrate_repeats)
                reports[CALIBRATION].seconds += time.perf_counter() - measuring
            if pool is None:
                for group in phase:
                    bar.set_postfix_str(group[0])
                    record(group, _run_group(group))
                    bar.update()
                continue
            futures = {pool.submit(_run_group, group): group for group in phase}
            for future in as_completed(futures):
                record(futures[future], future.result())
                bar.set_postfix_str(futures[future][0])
                bar.update()
    bar.close()
    report.wall_seconds = time.perf_counter() - started
    return report
