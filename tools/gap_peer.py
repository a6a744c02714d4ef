#!/usr/bin/env python3
"""graphkern's BFS against the GAP Benchmark Suite's ``bfs`` binary, on the same input file.

Used by ``tools/compare_peers.py --family gap --gap-bfs PATH`` (the ``gap`` family). For each graph (the
Graph500 Kronecker generator, a uniform random graph with 16 tuples per vertex, a grid with shuffled ids)
the edge list is written once as a GAP ``.el`` text file; both sides read that file and build the simple
undirected graph of it (GAP: ``-sf file.el``; graphkern: ``read_edgelist`` then ``graph.undirected``), each
in its own process. graphkern's process picks the roots (``graph500.search_keys``), makes one warm-up search
from a vertex outside them, then calls ``gk.bfs(g, root)`` once per root (the figure a user gets), and twice
more per root (the third call is the warm figure); every third-call tree is validated. GAP then runs once
per root with ``-r ROOT -n 3``. TEPS for both sides uses one edge count per root: the undirected edges of the
component reached, i.e. the degrees of the reached vertices summed and halved.

Run as a script, this module is graphkern's side of one graph (``graphkern-side FILE``), printing JSON.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

GNU_TIME = "/usr/bin/time"
LINES_PER_CHUNK = 1 << 20


# --- the input file --------------------------------------------------------------------------------------

def _digit_counts(values: np.ndarray) -> np.ndarray:
    widths = np.ones(values.size, dtype=np.int64)
    rest = values // 10
    while rest.any():
        widths += rest > 0
        rest //= 10
    return widths


def _ascii_lines(src: np.ndarray, dst: np.ndarray) -> bytes:
    """``b"src dst\\n"`` for every pair, formatted by array operations (no Python loop over edges)."""
    columns = [np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)]
    widths = [_digit_counts(c) for c in columns]
    starts = np.zeros(src.size + 1, dtype=np.int64)
    np.cumsum(widths[0] + widths[1] + 2, out=starts[1:])
    buf = np.empty(int(starts[-1]), dtype=np.uint8)
    first = starts[:-1]
    for column, width, offset, end in ((columns[0], widths[0], first, ord(" ")),
                                       (columns[1], widths[1], first + widths[0] + 1, ord("\n"))):
        buf[offset + width] = end
        value = column.copy()
        for k in range(int(width.max()) if width.size else 0):
            live = width > k
            buf[offset[live] + width[live] - 1 - k] = ord("0") + value[live] % 10
            value //= 10
    return buf.tobytes()


def write_edgelist(path, src, dst) -> None:
    """Write the tuples ``(src[i], dst[i])`` as a GAP/SNAP ``.el`` text file, one ``"u v"`` line each."""
    src = np.asarray(src)
    dst = np.asarray(dst)
    if src.shape != dst.shape or src.ndim != 1:
        raise ValueError(f"arguments 'src' and 'dst': expected 1-D arrays of one length, found shapes "
                         f"{src.shape} and {dst.shape}")
    if src.size and min(int(src.min()), int(dst.min())) < 0:
        raise ValueError("arguments 'src' and 'dst': expected non-negative ids, found a negative one")
    with open(path, "wb") as fh:
        for i in range(0, src.size, LINES_PER_CHUNK):
            fh.write(_ascii_lines(src[i:i + LINES_PER_CHUNK], dst[i:i + LINES_PER_CHUNK]))


def shuffled_grid_edges(side: int, seed: int = 0):
    """One tuple per edge of a ``side`` x ``side`` grid whose vertex ids are a random permutation."""
    ids = np.arange(side * side).reshape(side, side)
    perm = np.random.default_rng(seed).permutation(ids.size)
    a = perm[np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])]
    b = perm[np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])]
    return a, b


def graph_edges(kind: str, scale: int, grid_side: int):
    """``(label, src, dst)`` of one input graph, as tuples (self-loops and repeats left for the builders)."""
    import graphkern as gk

    if kind == "kronecker":
        src, dst = gk.graph.kronecker_edges(scale, progress=False)
        return f"kronecker {scale}", src, dst
    if kind == "uniform":
        n = 1 << scale
        src, dst = gk.graph.uniform_edges(n, 16 * n, seed=0)
        return f"uniform {scale}", src, dst
    if kind == "grid":
        src, dst = shuffled_grid_edges(grid_side)
        return f"grid {grid_side}x{grid_side}", src, dst
    raise ValueError(f"argument 'kind': expected 'kronecker', 'uniform' or 'grid', found {kind!r}")


# --- GAP's output --------------------------------------------------------------------------------------------

_TIME_LINE = re.compile(r"^\s*(Read|Generate|Build|Trial|Average) Time:\s+([0-9.eE+-]+)\s*$", re.M)
_GRAPH_LINE = re.compile(r"Graph has (\d+) nodes and (\d+) (un)?directed edges")


def parse_gap_output(text: str) -> dict:
    """The timings a GAP kernel prints: ``read_s``/``generate_s``/``build_s`` (seconds, ``None`` when not
    printed), ``trials_s`` (one per trial), ``average_s``, and the graph's ``nodes`` and ``edges``
    (undirected edges for a symmetric graph)."""
    found = {"read_s": None, "generate_s": None, "build_s": None, "trials_s": [], "average_s": None,
             "nodes": None, "edges": None, "undirected": None}
    for name, value in _TIME_LINE.findall(text):
        if name == "Trial":
            found["trials_s"].append(float(value))
        else:
            found[f"{name.lower()}_s"] = float(value)
    graph = _GRAPH_LINE.search(text)
    if graph:
        found["nodes"], found["edges"] = int(graph.group(1)), int(graph.group(2))
        found["undirected"] = graph.group(3) is not None
    return found


def timed_run(command: list, env=None) -> tuple[str, float, int | None]:
    """Run ``command``; return its output, wall seconds and peak RSS in KiB (GNU time's ``%M``; ``None``
    without ``/usr/bin/time``). A non-zero exit raises with the command's last output."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as stats:
        wrapped = [GNU_TIME, "-f", "%e %M", "-o", stats.name, *command] if os.path.exists(GNU_TIME) else command
        t0 = time.perf_counter()
        proc = subprocess.run(wrapped, capture_output=True, text=True, env=env)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            raise RuntimeError(f"{' '.join(map(str, command))} exited with {proc.returncode}:\n"
                               f"{(proc.stdout + proc.stderr)[-2000:]}")
        rss = None
        if wrapped is not command:
            fields = stats.read().split()
            if len(fields) >= 2:
                wall, rss = float(fields[-2]), int(fields[-1])
    return proc.stdout, wall, rss


# --- graphkern's side, in its own process -----------------------------------------------------------------

def graphkern_side(path: str, num_roots: int, threads: int) -> dict:
    """Read and build ``path`` as a user would, search from each root (one warm-up first), validate."""
    import resource

    import numba

    import graphkern as gk

    numba.set_num_threads(threads)
    # compile (or load from the cache) the reader and the builder on a two-line file first: the read and
    # build times are the work on this input (the cold start is asv's bench_coldstart)
    tiny = f"{path}.warmup.el"
    write_edgelist(tiny, np.array([0, 1]), np.array([1, 2]))
    warm_tuples = gk.graph.read_edgelist(tiny)
    gk.graph.undirected(*warm_tuples.edges(), warm_tuples.num_nodes)
    os.remove(tiny)
    t0 = time.perf_counter()
    tuples = gk.graph.read_edgelist(path)
    t1 = time.perf_counter()
    src, dst = tuples.edges()
    g = gk.graph.undirected(src, dst, tuples.num_nodes)
    t2 = time.perf_counter()
    del tuples, src, dst
    roots = gk.graph500.search_keys(g, num_roots)
    indptr = g.csr().indptr
    degree = np.diff(indptr)
    outside = np.flatnonzero(degree > 0)
    outside = outside[~np.isin(outside, roots)]
    warmup = int(outside[0]) if outside.size else int(roots[0])
    gk.bfs(g, warmup)  # compiles (or loads the cache) and touches the graph, untimed
    first, reached_first = [], []
    for root in roots.tolist():
        t0_search = time.perf_counter()
        res = gk.bfs(g, root)
        first.append(time.perf_counter() - t0_search)
        reached_first.append(int(np.count_nonzero(res.parents >= 0)))
        del res
    # the peak of the work GAP's process does too: read, build, searches (validation below is extra)
    peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    for root in roots.tolist():
        gk.bfs(g, root)
    warm, edges, valid = [], [], True
    for root, reached in zip(roots.tolist(), reached_first):
        t0_search = time.perf_counter()
        res = gk.bfs(g, root)
        warm.append(time.perf_counter() - t0_search)
        gk.graph500.validate(g, root, res.parents, res.levels)
        hit = res.parents >= 0
        valid &= int(hit.sum()) == reached
        edges.append(int(degree[hit].sum()) // 2)
    return {"read_s": t1 - t0, "build_s": t2 - t1, "roots": roots.tolist(), "warmup_root": warmup,
            "first_s": first, "warm_s": warm, "edges": edges, "valid": bool(valid), "peak_rss_kib": peak_kib,
            "nodes": g.num_nodes, "undirected_edges": g.num_edges // 2, "threads": threads}


# --- the comparison ------------------------------------------------------------------------------------------

def hmean_teps(edges, seconds) -> float:
    """Harmonic-mean TEPS of searches with these edge counts and times (Graph500's statistic)."""
    edges = np.asarray(edges, dtype=np.float64)
    seconds = np.asarray(seconds, dtype=np.float64)
    return float(1.0 / np.mean(seconds / edges))


def compare_graph(gap_bfs: str, kind: str, scale: int, grid_side: int, num_roots: int, threads: int) -> dict:
    """Both sides on one graph kind: the figures the ``gap`` family prints."""
    label, src, dst = graph_edges(kind, scale, grid_side)
    with tempfile.TemporaryDirectory(prefix="graphkern-gap-") as tmp:
        path = os.path.join(tmp, f"{kind}.el")
        write_edgelist(path, src, dst)
        num_tuples = int(src.size)
        del src, dst
        out, _, gk_rss_whole = timed_run([sys.executable, os.path.abspath(__file__), "graphkern-side", path,
                                          "--roots", str(num_roots), "--threads", str(threads)])
        ours = json.loads(out.strip().splitlines()[-1])
        env = dict(os.environ, OMP_NUM_THREADS=str(threads))
        gap_runs = []
        for root in ours["roots"]:
            text, _, rss = timed_run([gap_bfs, "-sf", path, "-r", str(root), "-n", "3"], env=env)
            run = parse_gap_output(text)
            if len(run["trials_s"]) != 3:
                raise RuntimeError(f"GAP bfs printed {len(run['trials_s'])} trial times for root {root}, "
                                   f"expected 3:\n{text[-2000:]}")
            run["peak_rss_kib"] = rss
            gap_runs.append(run)
    edges = np.array(ours["edges"], dtype=np.float64)
    gap_trials = np.array([r["trials_s"] for r in gap_runs])  # roots x 3
    same_graph = all(r["nodes"] == ours["nodes"] and r["edges"] == ours["undirected_edges"] for r in gap_runs)
    rss = [r["peak_rss_kib"] for r in gap_runs]
    summary = {
        "graph": label, "tuples": num_tuples, "nodes": ours["nodes"], "undirected_edges": ours["undirected_edges"],
        "roots": ours["roots"], "warmup_root": ours["warmup_root"], "edges_per_root": ours["edges"],
        "same_graph": same_graph, "valid": ours["valid"], "threads": threads,
        "graphkern": {"first_s": ours["first_s"], "warm_s": ours["warm_s"],
                      "median_s": float(np.median(ours["first_s"])), "warm_median_s": float(np.median(ours["warm_s"])),
                      "hmean_teps": hmean_teps(edges, ours["first_s"]),
                      "warm_hmean_teps": hmean_teps(edges, ours["warm_s"]),
                      "read_s": ours["read_s"], "build_s": ours["build_s"], "peak_rss_kib": ours["peak_rss_kib"],
                      "peak_rss_kib_with_validation": gk_rss_whole},
        "gap": {"trials_s": gap_trials.tolist(), "average_s": [r["average_s"] for r in gap_runs],
                "median_s": float(np.median(gap_trials)), "warm_median_s": float(np.median(gap_trials[:, 2])),
                "hmean_teps": hmean_teps(np.repeat(edges, 3), gap_trials.ravel()),
                "warm_hmean_teps": hmean_teps(edges, gap_trials[:, 2]),
                "read_s": float(np.median([r["read_s"] for r in gap_runs])),
                "build_s": float(np.median([r["build_s"] for r in gap_runs])),
                "peak_rss_kib": None if None in rss else max(rss)},
    }
    summary["ratio"] = summary["graphkern"]["hmean_teps"] / summary["gap"]["hmean_teps"]
    summary["warm_ratio"] = summary["graphkern"]["warm_hmean_teps"] / summary["gap"]["warm_hmean_teps"]
    return summary


def compare_graph500(gap_bfs: str, scale: int, num_roots: int, threads: int) -> dict:
    """GAP's ``bfs -g SCALE`` against ``graphkern graph500 --scale SCALE``: construction and peak RSS."""
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    text, gap_wall, gap_rss = timed_run([gap_bfs, "-g", str(scale), "-n", str(num_roots)], env=env)
    gap = parse_gap_output(text)
    out, gk_wall, gk_rss = timed_run([sys.executable, "-m", "graphkern.cli", "graph500", "--scale", str(scale),
                                      "--roots", str(num_roots), "--threads", str(threads), "--no-progress"])
    stats = dict(line.split(": ", 1) for line in out.splitlines() if ": " in line)
    return {"scale": scale, "roots": num_roots, "threads": threads,
            "gap": {"generate_s": gap["generate_s"], "build_s": gap["build_s"], "average_s": gap["average_s"],
                    "wall_s": gap_wall, "peak_rss_kib": gap_rss},
            "graphkern": {"generate_s": float(stats["graph_generation"]),
                          "build_s": float(stats["construction_time"]),
                          "median_s": float(stats["bfs_median_time"]),
                          "hmean_teps": float(stats["bfs_harmonic_mean_TEPS"]),
                          "wall_s": gk_wall, "peak_rss_kib": gk_rss}}


def _mib(kib) -> str:
    return "n/a" if kib is None else f"{kib / 1024:.0f} MiB"


def format_gap_tables(graphs: list, graph500: dict | None) -> str:
    """The per-graph figures (TEPS, ratio, read+build, RSS) and the ``-g`` construction comparison."""
    head = (f"{'graph':<22} {'side':<10} {'MTEPS':>8} {'warm':>8} {'ratio':>6} {'warm':>6} {'read s':>8} "
            f"{'build s':>8} {'peak RSS':>10}")
    lines = [head, "-" * len(head)]
    for s in graphs:
        for side in ("graphkern", "gap"):
            f = s[side]
            ratio = f"{s['ratio']:>5.2f}x {s['warm_ratio']:>5.2f}x" if side == "graphkern" else " " * 13
            name = s["graph"] + ("" if s["same_graph"] and s["valid"] else " [MISMATCH]")
            lines.append(f"{name if side == 'graphkern' else '':<22} {'GAP' if side == 'gap' else side:<10} "
                         f"{f['hmean_teps'] / 1e6:>8.1f} {f['warm_hmean_teps'] / 1e6:>8.1f} {ratio} "
                         f"{f['read_s']:>8.3f} {f['build_s']:>8.3f} {_mib(f['peak_rss_kib']):>10}")
    if graph500 is not None:
        gap, ours = graph500["gap"], graph500["graphkern"]
        lines += ["", f"graph500 scale {graph500['scale']}, {graph500['roots']} searches "
                      f"(each side its own generator, roots and process)",
                  f"{'side':<10} {'generate s':>11} {'build s':>9} {'search s':>9} {'wall s':>8} {'peak RSS':>10}",
                  f"{'graphkern':<10} {ours['generate_s']:>11.3f} {ours['build_s']:>9.3f} {ours['median_s']:>9.4f} "
                  f"{ours['wall_s']:>8.1f} {_mib(ours['peak_rss_kib']):>10}",
                  f"{'GAP':<10} {gap['generate_s']:>11.3f} {gap['build_s']:>9.3f} {gap['average_s']:>9.4f} "
                  f"{gap['wall_s']:>8.1f} {_mib(gap['peak_rss_kib']):>10}",
                  "search s: graphkern's median, GAP's average"]
    return "\n".join(lines)


GRAPH_KINDS = ("kronecker", "uniform", "grid")


def add_arguments(parser) -> None:
    """The ``gap`` family's options, on ``tools/compare_peers.py``'s parser."""
    group = parser.add_argument_group("gap family (the GAP Benchmark Suite's bfs)")
    group.add_argument("--gap-bfs", metavar="PATH", default=None,
                       help="a built GAP bfs binary (make bfs in a gapbs checkout); without it the family is skipped")
    group.add_argument("--gap-scale", type=int, default=20, help="gap: scale of the Kronecker and uniform graphs")
    group.add_argument("--gap-graphs", nargs="+", choices=GRAPH_KINDS, default=list(GRAPH_KINDS),
                       help="gap: graph kinds (the grid's side is --grid-side)")
    group.add_argument("--gap-graph500", type=int, default=20, metavar="SCALE",
                       help="gap: also GAP's bfs -g SCALE against graphkern graph500 --scale SCALE, construction "
                            "and peak RSS, each in its own process (0: skip; 22 takes minutes)")


def run_family(args, result_cls) -> list:
    """The ``gap`` family: prints its own table and returns one ``result_cls`` row per graph and figure."""
    import numba

    if not args.gap_bfs:
        print("family skipped: gap (needs --gap-bfs PATH, a GAP bfs binary built with make bfs)", file=sys.stderr)
        return []
    if not (os.path.isfile(args.gap_bfs) and os.access(args.gap_bfs, os.X_OK)):
        raise SystemExit(f"argument --gap-bfs: expected an executable GAP bfs binary, found {args.gap_bfs!r}")
    gap_bfs = os.path.abspath(args.gap_bfs)
    threads = numba.get_num_threads()
    print(f"# gap: GAP bfs {gap_bfs}, OMP_NUM_THREADS={threads} (numba's thread count); each graph written once "
          f"as .el text, read by both (GAP -sf, graphkern read_edgelist + graph.undirected), each side in its "
          f"own process; {args.roots} roots from graphkern's search_keys; graphkern: one warm-up search, then "
          f"each root once (as called) and a third time (warm), every warm tree validated; GAP: -r ROOT -n 3 per "
          f"root (all trials; warm: the 3rd); TEPS counts the undirected edges of the reached component "
          f"(degrees of reached vertices / 2) for both; ratio = graphkern TEPS / GAP TEPS (harmonic means); "
          f"graphkern's read and build follow a warm-up on a tiny file (no compile counted); its peak RSS is its "
          f"process after read, build and searches (numba's runtime included)")
    results, graphs = [], []
    for kind in args.gap_graphs:
        s = compare_graph(gap_bfs, kind, args.gap_scale, args.grid_side, args.roots, threads)
        graphs.append(s)
        check = "valid" if s["valid"] and s["same_graph"] else "MISMATCH"
        for figure, key, peer in (("as called", "median_s", "GAP bfs (3 trials)"),
                                  ("warm", "warm_median_s", "GAP bfs (3rd trial)")):
            results.append(result_cls("gap", f"{s['graph']}: {figure}", 0, s["graphkern"][key],
                                      {peer: s["gap"][key]}, check, extra=s if figure == "as called" else {}))
    graph500 = None
    if args.gap_graph500:
        graph500 = compare_graph500(gap_bfs, args.gap_graph500, args.roots, threads)
        results.append(result_cls("gap", f"graph500 {args.gap_graph500}: build", 0, graph500["graphkern"]["build_s"],
                                  {"GAP bfs -g (Build Time)": graph500["gap"]["build_s"]}, "ok", extra=graph500))
    print(format_gap_tables(graphs, graph500))
    return results


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description="graphkern's side of one graph of the GAP comparison (JSON)")
    sub = parser.add_subparsers(dest="command", required=True)
    side = sub.add_parser("graphkern-side")
    side.add_argument("path")
    side.add_argument("--roots", type=int, default=16)
    side.add_argument("--threads", type=int, required=True)
    args = parser.parse_args(argv)
    print(json.dumps(graphkern_side(args.path, args.roots, args.threads)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
