"""``graphkern bench``: the main job. Generate a Graph500 graph, run every kernel family, check, time.

Each kernel family contributes a *bench family*: a function that gets the shared :class:`BenchContext`
(the generated edges, the graph, the options) and returns :class:`Row`s. Every row is checked against a
reference result before it is timed, and graphkern and its peer are timed alternately in one process, so
the ratio of medians holds up on a noisy machine even when absolute times move.
"""

from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict

from ._bench_core import FAMILIES, BenchContext, Row, bench_family, time_pair

__all__ = ["Row", "BenchContext", "bench_family", "run_bench", "time_pair", "format_table"]


def _fmt_seconds(s: float | None) -> str:
    if s is None:
        return "-"
    if s >= 1:
        return f"{s:.2f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.1f} ms"
    return f"{s * 1e6:.0f} us"


def _fmt_rate(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    if unit in ("GFLOP/s", "GTEPS"):
        return f"{value:.3g} {unit}"
    for factor, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if value >= factor:
            return f"{value / factor:.3g} {prefix}{unit}"
    return f"{value:.3g} {unit}"


def format_table(rows: list[Row]) -> str:
    """The rows as a fixed-width text table."""
    header = ("family", "kernel", "graphkern", "peer", "peer time", "peer/gk", "throughput", "check")
    lines = [header]
    for r in rows:
        ratio = r.ratio
        lines.append((r.family, r.name, _fmt_seconds(r.graphkern_s), r.peer or "-", _fmt_seconds(r.peer_s),
                      f"{ratio:.2f}x" if ratio is not None else "-", _fmt_rate(r.throughput, r.unit), r.check))
    return fixed_width(lines)


def fixed_width(lines) -> str:
    """Tuples as left-aligned columns, the first one the header, underlined."""
    widths = [max(len(str(line[i])) for line in lines) for i in range(len(lines[0]))]
    out = []
    for k, line in enumerate(lines):
        out.append("  ".join(str(v).ljust(w) for v, w in zip(line, widths)).rstrip())
        if k == 0:
            out.append("  ".join("-" * w for w in widths))
    return "\n".join(out)


def run_bench(scale: int = 20, *, edgefactor: int = 16, repeat: int = 5, quick: bool = False,
              backend: str = "cpu", families=None, progress: bool = True, out=None, as_json: bool = False):
    """Run the benchmark families and print the table (or JSON); returns the rows.

    A failed check raises after the table is printed, so a wrong kernel can never pass as a fast one.
    """
    from . import _bench_families  # noqa: F401  (registers the families)
    from ._info import config_dict
    from .graph import kronecker_edges

    out = out or sys.stdout
    ctx = BenchContext(scale=scale, edgefactor=edgefactor, repeat=repeat, quick=quick, backend=backend)
    chosen = [(n, f) for n, f in FAMILIES if families is None or n in families]
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(chosen) + 1, desc="graphkern bench", leave=False, file=sys.stderr)
    # The first call compiles (or loads Numba's cache); time it apart so the generation row is the kernel.
    t0 = time.perf_counter()
    first_src, first_dst = kronecker_edges(10, 16)
    cold_s = time.perf_counter() - t0
    golden = (int(first_src[0]), int(first_dst[0])) == (299, 797)
    t0 = time.perf_counter()
    ctx.src, ctx.dst = kronecker_edges(scale, edgefactor, progress=False)
    gen_s = time.perf_counter() - t0
    rows = [Row("generate", "first call (JIT compile or cache load)", cold_s, check="golden" if golden else "MISMATCH"),
            Row("generate", f"kronecker_edges scale {scale}", gen_s, work=ctx.src.size, unit="edges/s")]
    if bar is not None:
        bar.update(1)
    for name, func in chosen:
        if bar is not None:
            bar.set_postfix_str(name)
        rows.extend(func(ctx))
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    failed = [r for r in rows if not r.check.startswith(("ok", "golden", "equal", "valid"))]
    if as_json:
        payload = {"config": config_dict(), "scale": scale, "edgefactor": edgefactor, "repeat": repeat,
                   "rows": [dict(asdict(r), ratio=r.ratio, throughput=r.throughput) for r in rows]}
        print(json.dumps(payload, indent=2), file=out)
    else:
        import numba

        print(f"graphkern bench: Graph500 Kronecker scale {scale}, edgefactor {edgefactor}, "
              f"{ctx.src.size:,} edge tuples, backend {backend}, {numba.get_num_threads()} threads, "
              f"median of {repeat}", file=out)
        print(format_table(rows), file=out)
    if failed:
        raise RuntimeError("graphkern bench: check failed for " + ", ".join(f"{r.family}/{r.name}" for r in failed))
    return rows
