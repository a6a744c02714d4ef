#!/usr/bin/env python3
"""The dynamic-graph figures: updates/s against batch size, deletions, snapshots, a small temporal graph
step by step, IncrementalBFS against a fresh search, and the kernels on the packed arrays against a snapshot.

Every figure is a median of ``--repeat`` runs in one process; SciPy's rebuild of the CSR and its
transpose is the peer for a batch. ``--plot DIR`` draws updates/s against batch size (matplotlib).

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


def snapshots(args, rows):
    dg, _ = base_graph(args.snapshot_nodes, args.snapshot_edges, seed=1)

    def snap():
        dg._snapshot_cache = None  # time the build, not the cache
        dg.snapshot(csc=True)

    t = median_time(snap, args.repeat)
    rows.append({"figure": "snapshot", "edges": dg.num_edges, "seconds": t})
    print(f"snapshot (CSR + CSC + ids) of {dg.num_edges} edges: {t * 1e3:.2f} ms", flush=True)


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
    p.add_argument("--snapshot-nodes", type=int, default=1 << 17)
    p.add_argument("--snapshot-edges", type=int, default=1_000_000)
    p.add_argument("--bfs-scale", type=int, default=20)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--figures", nargs="+", default=["apply", "snapshot", "seed", "incremental", "packed"])
    p.add_argument("--plot", help="write dynamic_updates.png to this folder")
    p.add_argument("--json", help="write the rows to this file")
    args = p.parse_args(argv)
    if args.quick:
        args.nodes, args.edges, args.batches = 1 << 12, 20_000, [10, 100, 1000]
        args.snapshot_nodes, args.snapshot_edges, args.bfs_scale, args.repeat = 1 << 10, 10_000, 10, 2
    rows: list = []
    steps = {"apply": updates_vs_batch, "snapshot": snapshots, "seed": seed_scale, "incremental": incremental_bfs,
             "packed": packed_kernels}
    for name in args.figures:
        steps[name](args, rows)
    if args.plot:
        plot(rows, args.plot)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
