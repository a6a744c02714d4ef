"""``graphkern bench --contention``: how each kernel family holds up when other processes share the cores.

Each family is timed ``repeat`` times on a quiet machine, then ``repeat`` times again while ``busy``
processes spin beside it (a pure-Python loop by default; NumPy or torch with ``busy_kind``). The figures
that count are the ratios to the quiet median: a kernel whose parallel steps wait at a barrier for a
descheduled thread slows down far more than its share of lost cores. The targets are printed as met or
not met; they never make the command fail. Where torch is installed, a last table times a torch step and
a graphkern kernel alternating in one process, as in a training loop, against each alone.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

import numpy as np

__all__ = ["busy_processes", "run_contention", "BUSY_MARKER", "MEDIAN_TARGET", "WORST_TARGET"]

BUSY_MARKER = "graphkern-bench-busy"  # in every busy process's command line, so that leftovers can be found
MEDIAN_TARGET = 2.5  # contended median over quiet median
WORST_TARGET = 4.0  # contended worst over quiet median

# A busy process says "ready" once its imports are done, then works until it is terminated or its parent
# is gone (it checks between work units, so even a parent killed without cleanup leaves no spinner).
_BUSY_SOURCE = r"""
import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C in the terminal ends it quietly
parent, kind = int(sys.argv[1]), sys.argv[2]
if kind == "numpy":
    import numpy as np
    a = np.random.default_rng(0).random(1 << 16)
    def work():
        for _ in range(20):
            np.sort(a)
elif kind == "torch":
    import torch
    torch.set_num_threads(1)  # one core's worth of load per process, like the others
    a = torch.rand(256, 256)
    def work():
        for _ in range(20):
            a @ a
else:
    def work():
        x = 0
        for i in range(200000):
            x = (x * 31 + i) % 1000003
sys.stdout.write("ready\n")
sys.stdout.flush()
while os.getppid() == parent:
    work()
"""

BUSY_KINDS = ("python", "numpy", "torch")


def _stop(procs) -> None:
    for p in procs:
        if p.poll() is None:
            p.terminate()
    for p in procs:
        try:
            p.wait(timeout=5)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
        if p.stdout is not None:
            p.stdout.close()


@contextlib.contextmanager
def busy_processes(count: int, kind: str = "python"):
    """Run ``count`` processes that each keep one core busy, for as long as the ``with`` block runs.

    The processes are stopped when the block ends, however it ends (an exception, Ctrl-C), and also when
    one of them fails to start.

    Examples
    --------
    >>> from graphkern._contention import busy_processes
    >>> with busy_processes(1) as procs:
    ...     len(procs), procs[0].poll() is None
    (1, True)
    >>> procs[0].poll() is None
    False
    """
    if kind not in BUSY_KINDS:
        raise ValueError(f"busy_kind: expected one of {', '.join(BUSY_KINDS)}, found {kind!r}")
    if count < 0:
        raise ValueError(f"busy: expected a count >= 0, found {count}")
    procs: list[subprocess.Popen] = []
    try:
        for _ in range(count):
            procs.append(subprocess.Popen([sys.executable, "-c", _BUSY_SOURCE, str(os.getpid()), kind, BUSY_MARKER],
                                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, text=True))
        for p in procs:  # time nothing until every one of them is spinning
            if p.stdout.readline().strip() != "ready":
                raise RuntimeError(f"a busy process ({kind}) exited before it started working, "
                                   f"exit status {p.wait()}")
        yield procs
    finally:
        _stop(procs)


@dataclass
class ContentionRow:
    family: str
    name: str
    quiet_median_s: float
    contended_median_s: float
    contended_worst_s: float

    @property
    def median_ratio(self) -> float:
        return self.contended_median_s / self.quiet_median_s if self.quiet_median_s > 0 else float("inf")

    @property
    def worst_ratio(self) -> float:
        return self.contended_worst_s / self.quiet_median_s if self.quiet_median_s > 0 else float("inf")

    def as_dict(self) -> dict:
        return dict(asdict(self), median_ratio=self.median_ratio, worst_ratio=self.worst_ratio,
                    median_met=self.median_ratio <= MEDIAN_TARGET, worst_met=self.worst_ratio <= WORST_TARGET)


def _times(call, repeat: int) -> list[float]:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return times


def grid_edges(side: int, seed: int = 0):
    """The ``side x side`` grid's edges (each once), with the node ids shuffled so that neighbours are far
    apart in memory: a graph of diameter ``2 * (side - 1)`` that a level-synchronous search crosses in
    thousands of short levels."""
    ids = np.arange(side * side, dtype=np.int64).reshape(side, side)
    src = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    dst = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    perm = np.random.default_rng(seed).permutation(side * side)
    return perm[src], perm[dst]


def _workloads(ctx, grid_side: int, batch: int):
    """``(family, name, call)`` for every family; ``call`` is ready to time (compiled, on the backend)."""
    from . import edge_softmax, ops
    from ._bench_families import bfs_inputs, dynamic_inputs, sparse_inputs
    from .graph import undirected
    from .traversal import bfs

    g, x, rng, scale = sparse_inputs(ctx)
    gb, xb = ctx.to_backend(g), ctx.to_backend(x)
    logits = ctx.to_backend(rng.standard_normal((g.num_edges, 1), dtype=np.float32))
    label = f"(kron {scale}, F={x.shape[1]})"
    yield "spmm", f"copy_u_sum {label}", ctx.timed(lambda: ops.copy_u_sum(gb, xb))
    yield "sddmm", f"u_dot_v {label}", ctx.timed(lambda: ops.u_dot_v(gb, xb, xb))
    yield "edge_softmax", f"edge_softmax H=1 (kron {scale})", ctx.timed(lambda: edge_softmax(gb, logits))
    g = x = gb = xb = logits = None  # the closures above see these cells: let the arrays go
    kron, roots = bfs_inputs(ctx)
    kb, root = ctx.to_backend(kron), int(roots[0])
    yield "bfs", f"bfs kron {ctx.scale} (one Graph500 key)", ctx.timed(lambda: bfs(kb, root))
    kron = kb = None
    grid = ctx.to_backend(undirected(*grid_edges(grid_side), grid_side * grid_side))
    yield "bfs", f"bfs shuffled grid {grid_side}x{grid_side}", ctx.timed(lambda: bfs(grid, 0))
    grid = None
    dg, _, _ = dynamic_inputs(ctx)
    n = dg.num_nodes
    # every call inserts the next slice of one random stream: a batch is never inserted twice
    stream = np.random.default_rng(7).integers(0, n, (2, (2 * ctx.repeat + 1) * batch))
    cursor = iter(range(0, stream.shape[1], batch))

    def insert():
        i = next(cursor)
        dg.apply(insert=(stream[0, i:i + batch], stream[1, i:i + batch]))

    yield "dynamic", f"insert new batch of {batch:,} into {dg.num_edges:,} edges", ctx.timed(insert)


@dataclass
class BesideTorchRow:
    name: str
    alone_median_s: float
    interleaved_median_s: float

    @property
    def ratio(self) -> float:
        return self.interleaved_median_s / self.alone_median_s if self.alone_median_s > 0 else float("inf")

    def as_dict(self) -> dict:
        return dict(asdict(self), ratio=self.ratio)


def beside_torch(ctx, repeat: int, rounds: int = 3) -> list[BesideTorchRow] | None:
    """One process alternating a torch step and a graphkern kernel, as a training loop does, against each
    run alone; ``None`` without torch. Both use every core: torch's thread pool and Numba's may each hold
    the cores just after their own work, which is what would slow the other. The alone and the interleaved
    loops take turns ``rounds`` times, so that drift in the machine's speed falls on both."""
    import importlib.util

    if importlib.util.find_spec("torch") is None or ctx.backend != "cpu":
        return None
    import numba
    import torch

    from . import ops
    from ._bench_families import sparse_inputs

    g, x, _, scale = sparse_inputs(ctx)
    torch.set_num_threads(numba.get_num_threads())
    layer = torch.nn.Linear(64, 64)
    h = torch.randn(g.num_nodes, 64)

    def torch_step():
        layer.zero_grad(set_to_none=True)
        torch.relu(layer(h)).sum().backward()

    def graphkern_step():
        ops.copy_u_sum(g, x)

    torch_step(), graphkern_step()  # compile or load, and let both pools start their threads
    samples = {"torch": ([], []), "graphkern": ([], [])}
    for _ in range(rounds):
        samples["torch"][0].extend(_times(torch_step, repeat))
        samples["graphkern"][0].extend(_times(graphkern_step, repeat))
        for _ in range(repeat):
            for name, step in (("torch", torch_step), ("graphkern", graphkern_step)):
                t0 = time.perf_counter()
                step()
                samples[name][1].append(time.perf_counter() - t0)
    names = {"torch": f"torch Linear(64, 64) forward+backward ({g.num_nodes:,} rows)",
             "graphkern": f"copy_u_sum (kron {scale}, F={x.shape[1]})"}
    return [BesideTorchRow(names[k], float(np.median(a)), float(np.median(b))) for k, (a, b) in samples.items()]


def format_beside_torch(rows: list[BesideTorchRow]) -> str:
    """The side-by-side rows as a fixed-width text table."""
    from .bench import _fmt_seconds, fixed_width

    lines = [("beside torch, one process", "alone median", "interleaved median", "interleaved/alone")]
    lines += [(r.name, _fmt_seconds(r.alone_median_s), _fmt_seconds(r.interleaved_median_s), f"{r.ratio:.2f}x")
              for r in rows]
    return fixed_width(lines)


def format_contention(rows: list[ContentionRow]) -> str:
    """The rows as a fixed-width text table."""
    from .bench import _fmt_seconds, fixed_width

    header = ("family", "kernel", "quiet median", "contended median", "contended worst", "median/quiet",
              f"<= {MEDIAN_TARGET}x", "worst/quiet", f"<= {WORST_TARGET}x")
    lines = [header]
    for r in rows:
        lines.append((r.family, r.name, _fmt_seconds(r.quiet_median_s), _fmt_seconds(r.contended_median_s),
                      _fmt_seconds(r.contended_worst_s), f"{r.median_ratio:.2f}x",
                      "met" if r.median_ratio <= MEDIAN_TARGET else "not met", f"{r.worst_ratio:.2f}x",
                      "met" if r.worst_ratio <= WORST_TARGET else "not met"))
    return fixed_width(lines)


def run_contention(scale: int = 20, *, edgefactor: int = 16, repeat: int = 10, quick: bool = False,
                   backend: str = "cpu", busy: int | None = None, busy_kind: str = "python",
                   progress: bool = True, out=None, as_json: bool = False) -> list[ContentionRow]:
    """Time every family quiet and beside ``busy`` spinning processes (default: half the cores, at least
    one); print the table (or JSON) and return the rows."""
    from ._info import config_dict
    from .bench import BenchContext
    from .graph import kronecker_edges

    out = out or sys.stdout
    busy = max(1, (os.cpu_count() or 2) // 2) if busy is None else busy
    if busy_kind not in BUSY_KINDS:
        raise ValueError(f"busy_kind: expected one of {', '.join(BUSY_KINDS)}, found {busy_kind!r}")
    if busy_kind == "torch":
        import importlib.util

        if importlib.util.find_spec("torch") is None:
            raise ValueError("busy_kind: 'torch' needs torch installed, and it is not")
    ctx = BenchContext(scale=scale, edgefactor=edgefactor, repeat=repeat, quick=quick, backend=backend)
    ctx.src, ctx.dst = kronecker_edges(scale, edgefactor, progress=False)
    grid_side = 200 if quick else 1000
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=6, desc="graphkern bench --contention", leave=False, file=sys.stderr)
    rows = []
    for family, name, call in _workloads(ctx, grid_side, 10_000):
        if bar is not None:
            bar.set_postfix_str(name)
        call()  # compiles, or loads Numba's cache
        quiet = _times(call, repeat)
        with busy_processes(busy, busy_kind):
            contended = _times(call, repeat)
        rows.append(ContentionRow(family, name, float(np.median(quiet)), float(np.median(contended)),
                                  float(max(contended))))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    torch_rows = beside_torch(ctx, repeat)
    if as_json:
        payload = {"config": config_dict(), "scale": scale, "edgefactor": edgefactor, "repeat": repeat,
                   "busy": busy, "busy_kind": busy_kind,
                   "targets": {"median_ratio": MEDIAN_TARGET, "worst_ratio": WORST_TARGET},
                   "rows": [r.as_dict() for r in rows],
                   "beside_torch": None if torch_rows is None else [r.as_dict() for r in torch_rows]}
        print(json.dumps(payload, indent=2), file=out)
    else:
        import numba

        print(f"graphkern bench --contention: Kronecker scale {scale}, backend {backend}, "
              f"{numba.get_num_threads()} threads, {busy} busy {busy_kind} process(es) on {os.cpu_count()} cores, "
              f"{repeat} calls quiet then {repeat} contended", file=out)
        print(format_contention(rows), file=out)
        if torch_rows is not None:
            print(file=out)
            print(format_beside_torch(torch_rows), file=out)
    return rows
