#!/usr/bin/env python3
"""The dynamic-graph figures: updates/s against batch size, deletions, consecutive new batches, a sliding
window, snapshots, a small temporal graph step by step, IncrementalBFS against a fresh search, and the
kernels on the packed arrays against a snapshot.

Every figure is a median of ``--repeat`` runs in one process; SciPy's rebuild of the CSR and its
transpose is the peer for a batch. Consecutive batches, the sliding window and the snapshot are printed
against the targets (met / not met) at the end. ``--plot DIR`` draws updates/s against batch size (matplotlib).

    python tools/dynamic_bench.py                       # the default sizes (minutes)
    python tools/dynamic_bench.py --quick               # small sizes (seconds)
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np

CONSECUTIVE_TARGET = 5e6  # updates/s, consecutive new insert batches
WINDOW_TARGET = 8e6  # updates/s (inserts + deletes), sliding window
SNAPSHOT_TARGET = 0.020  # seconds, snapshot with CSR and CSC of the --snapshot-edges graph


def met(ok: bool) -> str:
    return "met" if ok else "not met"


def median_time(fn, repeat: int) -> float:
    """Median seconds of ``fn()`` after one warm-up call (compiles, caches)."""
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def base_graph(num_nodes: int, num_edges: int, seed: int = 0):
    import graphkern as gk

    rng = np.random.default_rng(seed)
    dg = gk.DynamicGraph(num_nodes)
    e = rng.integers(0, num_nodes, (2, num_edges))
    dg.apply(insert=(e[0], e[1]))
    return dg, rng


def updates_vs_batch(args, rows):
    """Insert batches of each size into a graph of ``--edges`` edges; delete the same batches again."""
    import scipy.sparse as sp

    dg, rng = base_graph(args.nodes, args.edges)
    print(f"base graph: {args.nodes} nodes, {dg.num_edges} edges", flush=True)
    src, dst, _ = dg.edges()
    for batch in args.batches:
        ins_t, del_t = [], []
        for r in range(args.repeat):
            b = rng.integers(0, args.nodes, (2, batch))
            t0 = time.perf_counter()
            got = dg.apply(insert=(b[0], b[1]))
            ins_t.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            dg.apply(delete=(b[0], b[1]))
            del_t.append(time.perf_counter() - t0)
            if r == 0:
                effective = got["inserted"]
        ins, dele = statistics.median(ins_t), statistics.median(del_t)
        row = {"figure": "apply", "batch": batch, "insert_s": ins, "insert_updates_per_s": batch / ins,
               "delete_s": dele, "delete_updates_per_s": batch / dele, "delete_over_insert": dele / ins,
               "effective_inserts": effective}
        if batch <= 10 ** 5:  # the peer: rebuild CSR and CSC with SciPy from the edge list plus the batch
            b = rng.integers(0, args.nodes, (2, batch))
            s2, d2 = np.concatenate([src, b[0]]), np.concatenate([dst, b[1]])

            def rebuild():
                m = sp.coo_array((np.ones(s2.size, np.float32), (s2, d2)), shape=(args.nodes, args.nodes))
                m.tocsr(), m.tocsc()

            row["scipy_rebuild_s"] = median_time(rebuild, max(1, args.repeat // 2))
            row["speedup_vs_scipy"] = row["scipy_rebuild_s"] / ins
        rows.append(row)
        print(f"batch {batch:>9}: insert {ins * 1e3:9.3f} ms ({batch / ins / 1e6:6.2f} M/s), delete {dele * 1e3:9.3f} "
              f"ms ({batch / dele / 1e6:6.2f} M/s)"
              + (f", scipy rebuild {row['scipy_rebuild_s'] * 1e3:.1f} ms ({row['speedup_vs_scipy']:.0f}x)"
                 if "scipy_rebuild_s" in row else ""), flush=True)


def distinct_stream(num_nodes: int, length: int, seed: int):
    """``(src, dst)``: ``length`` random edges, none twice, in the order they were drawn (an edge stream
    whose every slice is new to a graph holding the slices before it)."""
    rng = np.random.default_rng(seed)
    draw = int(length * 1.05) + 64
    while True:
        e = rng.integers(0, num_nodes, (2, draw))
        _, first = np.unique(e[0] * num_nodes + e[1], return_index=True)
        if first.size >= length:
            first = np.sort(first)[:length]
            return e[0][first], e[1][first]
        draw *= 2


def _stream_row(rows, figure, nodes, start_edges, batch, updates, times, target, what):
    times = np.asarray(times)
    # updates counts the effective ones: inserts, plus deletes in the window (two a position)
    median_rate, total_rate = updates / times.size / np.median(times), updates / times.sum()
    row = {"figure": figure, "nodes": nodes, "start_edges": start_edges, "batch": batch, "batches": times.size,
           "updates": updates, "median_batch_s": float(np.median(times)), "median_updates_per_s": median_rate,
           "total_updates_per_s": total_rate, "target_updates_per_s": target, "met": bool(total_rate >= target)}
    rows.append(row)
    print(f"{what} on {nodes} nodes from {start_edges} edges, {times.size} batches of {batch}: median batch "
          f"{row['median_batch_s'] * 1e3:.2f} ms = {median_rate / 1e6:.2f} M updates/s, total "
          f"{total_rate / 1e6:.2f} M updates/s (target >= {target / 1e6:.0f} M/s: {met(row['met'])})", flush=True)


def consecutive(args, rows):
    """Insert consecutive slices of one edge stream (each batch new, never repeated) into a growing graph."""
    import graphkern as gk

    n, batch = max(args.stream_nodes), args.stream_batch
    src, dst = distinct_stream(n, args.edges + (args.stream_batches + 1) * batch, seed=6)
    dg = gk.DynamicGraph(n)
    dg.apply(insert=(src[:args.edges], dst[:args.edges]))
    start, times, updates = dg.num_edges, [], 0
    for i in range(args.stream_batches + 1):
        lo = args.edges + i * batch
        t0 = time.perf_counter()
        got = dg.apply(insert=(src[lo:lo + batch], dst[lo:lo + batch]))
        if i:  # the first batch warms up (compiles)
            times.append(time.perf_counter() - t0)
            updates += got["inserted"]
    _stream_row(rows, "consecutive_inserts", n, start, batch, updates, times, CONSECUTIVE_TARGET,
                "consecutive new insert batches")


def sliding_window(args, rows):
    """A temporal window: each batch inserts the next slice of the stream and deletes the oldest one."""
    import graphkern as gk

    batch = args.stream_batch
    for n in args.stream_nodes:
        src, dst = distinct_stream(n, args.edges + (args.stream_batches + 1) * batch, seed=7)
        dg = gk.DynamicGraph(n)
        dg.apply(insert=(src[:args.edges], dst[:args.edges]))
        start, times, updates = dg.num_edges, [], 0
        for i in range(args.stream_batches + 1):
            old, new = slice(i * batch, (i + 1) * batch), slice(args.edges + i * batch, args.edges + (i + 1) * batch)
            t0 = time.perf_counter()
            got = dg.apply(insert=(src[new], dst[new]), delete=(src[old], dst[old]))
            if i:
                times.append(time.perf_counter() - t0)
                updates += got["inserted"] + got["deleted"]
        assert dg.num_edges == start, "the window must keep its size"
        _stream_row(rows, "sliding_window", n, start, batch, updates, times, WINDOW_TARGET,
                    "sliding window (insert newest + delete oldest)")
        del dg


def snapshots(args, rows):
    dg, _ = base_graph(args.snapshot_nodes, args.snapshot_edges, seed=1)

    def snap():
        dg._snapshot_cache = None  # time the build, not the cache
        dg.snapshot(csc=True)

    t = median_time(snap, args.repeat)
    rows.append({"figure": "snapshot", "edges": dg.num_edges, "seconds": t, "target_s": SNAPSHOT_TARGET,
                 "met": bool(t <= SNAPSHOT_TARGET)})
    print(f"snapshot (CSR + CSC + ids) of {dg.num_edges} edges: {t * 1e3:.2f} ms "
          f"(target <= {SNAPSHOT_TARGET * 1e3:.0f} ms: {met(t <= SNAPSHOT_TARGET)})", flush=True)


def targets_table(rows) -> str:
    """The figures that have a target, one line each."""
    lines = [("figure", "nodes", "edges", "measured", "target", "")]
    for r in rows:
        if r["figure"] == "snapshot":
            lines.append(("snapshot csr+csc", "-", f"{r['edges']:,}", f"{r['seconds'] * 1e3:.2f} ms",
                          f"<= {SNAPSHOT_TARGET * 1e3:.0f} ms", met(r["met"])))
        elif "target_updates_per_s" in r:
            lines.append((r["figure"], f"{r['nodes']:,}", f"{r['start_edges']:,}",
                          f"{r['total_updates_per_s'] / 1e6:.2f} M/s", f">= {r['target_updates_per_s'] / 1e6:.0f} M/s",
                          met(r["met"])))
    widths = [max(len(line[i]) for line in lines) for i in range(len(lines[0]))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(line, widths)).rstrip() for line in lines)


def seed_scale(args, rows):
    """A small temporal graph: 8,000 nodes, 56,650 edges at T=0, 6-12k edits a step, apply plus snapshot per step."""
    import graphkern as gk

    rng = np.random.default_rng(2)
    n = 8000
    stream = rng.integers(0, n, (2, 56_650 + 40 * 4_500))
    tg = gk.graph.temporal.TemporalGraph(stream[0], stream[1], n, base=56_650, step=4_500)
    times, edits = [], []
    while tg.time + 1 < tg.num_steps:
        a_s, _, d_s, _ = tg.diffs.steps[tg.time]
        t0 = time.perf_counter()
        tg.forward(csc=True)
        times.append(time.perf_counter() - t0)
        edits.append(a_s.size + d_s.size)
    rows.append({"figure": "seed_step", "edges_t0": 56_650, "edits_median": float(np.median(edits)),
                 "seconds": statistics.median(times[1:])})
    print(f"small temporal graph: {np.median(edits):.0f} edits a step (range {min(edits)}-{max(edits)}), "
          f"apply + snapshot {statistics.median(times[1:]) * 1e3:.3f} ms", flush=True)


def incremental_bfs(args, rows):
    import graphkern as gk

    g = gk.graph.kronecker(args.bfs_scale, progress=False)
    src, dst = g.edges()
    dg = gk.DynamicGraph(g.num_nodes)
    dg.apply(insert=(src, dst))
    root = int(gk.graph500.search_keys(g, 1)[0])
    snap = dg.snapshot()
    gk.bfs(snap, root)
    fresh = median_time(lambda: gk.bfs(snap, root), args.repeat)
    rng = np.random.default_rng(3)
    for symmetric in (True, False):
        inc = gk.IncrementalBFS(dg, root, symmetric=symmetric)
        for kind in ("insert", "delete", "mixed"):
            times = []
            for _ in range(args.repeat):
                s, d, _ = dg.edges()
                pick = rng.integers(0, s.size, 250)
                new = rng.integers(0, g.num_nodes, (2, 250))
                ins = (np.concatenate([new[0], new[1]]), np.concatenate([new[1], new[0]]))
                dele = (np.concatenate([s[pick], d[pick]]), np.concatenate([d[pick], s[pick]]))
                if kind == "mixed":  # 500 changes each way: 250 undirected insertions, 250 deletions
                    ins = (ins[0][::2].copy(), ins[1][::2].copy())
                    ins = (np.concatenate([ins[0], ins[1]]), np.concatenate([ins[1], ins[0]]))
                    half = pick[:125]
                    dele = (np.concatenate([s[half], d[half]]), np.concatenate([d[half], s[half]]))
                dg.apply(insert=ins if kind != "delete" else None, delete=dele if kind != "insert" else None)
                t0 = time.perf_counter()
                report = inc.update()
                times.append(time.perf_counter() - t0)
            ref = gk.bfs(dg.snapshot(), root)
            equal = bool(np.array_equal(ref.levels, inc.levels))
            t = statistics.median(times)
            rows.append({"figure": "incremental_bfs", "symmetric": symmetric, "kind": kind, "changes": 1000,
                         "update_s": t, "fresh_do_s": fresh, "speedup": fresh / t, "levels_equal": equal,
                         "last_report": report})
            print(f"IncrementalBFS scale {args.bfs_scale} {'symmetric' if symmetric else 'directed '} {kind:6}: update "
                  f"{t * 1e3:.3f} ms vs fresh DO {fresh * 1e3:.2f} ms = {fresh / t:.1f}x, levels equal {equal}",
                  flush=True)
        del inc


def packed_kernels(args, rows):
    """One kernel call on the packed arrays against building a snapshot (+ CSC) and calling it there."""
    import graphkern as gk

    dg, rng = base_graph(args.snapshot_nodes, args.snapshot_edges, seed=4)
    x = rng.random((dg.num_nodes, 16), dtype=np.float32)

    def via_snapshot(fn):
        def run():
            dg._snapshot_cache = None
            fn(dg.snapshot())
        return run

    packed_kw = {"format": "packed"}
    for name, fn, on_packed in (
            ("copy_u_sum F=16", lambda g, **kw: gk.spmm(g, "copy_lhs", "sum", x, **kw), packed_kw),
            ("u_dot_v F=16", lambda g, **kw: gk.sddmm(g, "dot", x, x, "u", "v", **kw), packed_kw),
            ("bfs", lambda g, **kw: gk.bfs(g, 0), {})):
        packed = median_time(lambda f=fn, kw=on_packed: (setattr(dg, "_snapshot_cache", None), f(dg, **kw)),
                             args.repeat)
        snapshot_then = median_time(via_snapshot(fn), args.repeat)
        snap = dg.snapshot()
        fn(snap)
        on_snapshot = median_time(lambda f=fn: f(snap), args.repeat)
        rows.append({"figure": "packed_kernel", "kernel": name, "packed_s": packed, "snapshot_then_kernel_s":
                     snapshot_then, "kernel_on_snapshot_s": on_snapshot})
        print(f"{name:16} packed {packed * 1e3:8.2f} ms | snapshot + kernel {snapshot_then * 1e3:8.2f} ms | on a "
              f"current snapshot {on_snapshot * 1e3:8.2f} ms", flush=True)


def plot(rows, folder):
    import matplotlib

    matplotlib.use("Agg")
    from pathlib import Path

    import matplotlib.pyplot as plt

    apply = [r for r in rows if r["figure"] == "apply"]
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog([r["batch"] for r in apply], [r["insert_updates_per_s"] for r in apply], "o-", label="insert")
    ax.loglog([r["batch"] for r in apply], [r["delete_updates_per_s"] for r in apply], "s-", label="delete")
    ax.set_xlabel("batch size (edges)")
    ax.set_ylabel("updates / s")
    ax.set_title("graphkern DynamicGraph (CPU), 2 cores")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    Path(folder).mkdir(parents=True, exist_ok=True)
    out = Path(folder) / "dynamic_updates.png"
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    print(f"plot: {out}")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--nodes", type=int, default=1 << 20)
    p.add_argument("--edges", type=int, default=10_000_000)
    p.add_argument("--batches", type=int, nargs="+", default=[10 ** k for k in range(1, 8)])
    p.add_argument("--stream-nodes", type=int, nargs="+", default=[1 << 20, 1 << 21],
                   help="node counts of the sliding window (consecutive batches use the largest)")
    p.add_argument("--stream-batch", type=int, default=10_000, help="edges a batch (consecutive and window)")
    p.add_argument("--stream-batches", type=int, default=50, help="timed batches (consecutive and window)")
    p.add_argument("--snapshot-nodes", type=int, default=1 << 17)
    p.add_argument("--snapshot-edges", type=int, default=1_000_000)
    p.add_argument("--bfs-scale", type=int, default=20)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--figures", nargs="+",
                   default=["apply", "consecutive", "window", "snapshot", "seed", "incremental", "packed"])
    p.add_argument("--plot", help="write dynamic_updates.png to this folder")
    p.add_argument("--json", help="write the rows to this file")
    args = p.parse_args(argv)
    if args.quick:
        args.nodes, args.edges, args.batches = 1 << 12, 20_000, [10, 100, 1000]
        args.snapshot_nodes, args.snapshot_edges, args.bfs_scale, args.repeat = 1 << 10, 10_000, 10, 2
        args.stream_nodes, args.stream_batches = [1 << 13, 1 << 14], 4
    rows: list = []
    steps = {"apply": updates_vs_batch, "consecutive": consecutive, "window": sliding_window, "snapshot": snapshots,
             "seed": seed_scale, "incremental": incremental_bfs, "packed": packed_kernels}
    for name in args.figures:
        steps[name](args, rows)
    if any("met" in r for r in rows):
        print("\ntargets\n" + targets_table(rows), flush=True)
    if args.plot:
        plot(rows, args.plot)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
