#!/usr/bin/env python3
"""graphkern against the peers a user would pick instead, on the same graph and inputs, in one process.

Every kernel is checked against its peer's result first; then graphkern and the peers are called in
turn (round robin) ``--repeat`` times and the medians and ratios are printed. Peers that are not
installed (torch, python-graphblas, ...) are skipped by name. These machines are shared and noisy: the
ratios measured side by side are the figures that count.

    python tools/compare_peers.py --scale 18 --features 16 64
    python tools/compare_peers.py --family spmm --json results.json
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field

import numpy as np


@dataclass
class Result:
    family: str
    kernel: str
    features: int
    graphkern_s: float
    peers: dict = field(default_factory=dict)  # name -> median seconds
    check: str = "ok"
    extra: dict = field(default_factory=dict)

    def ratios(self):
        return {name: t / self.graphkern_s for name, t in self.peers.items()}


def round_robin(funcs: dict, repeat: int) -> dict:
    """Median seconds of each callable, called in turn ``repeat`` times after one warm-up each."""
    for f in funcs.values():
        f()
    times = {name: [] for name in funcs}
    for _ in range(repeat):
        for name, f in funcs.items():
            t0 = time.perf_counter()
            f()
            times[name].append(time.perf_counter() - t0)
    return {name: float(np.median(v)) for name, v in times.items()}


def _peer_modules():
    peers = {}
    try:
        import torch

        torch.set_num_threads(max(1, __import__("numba").get_num_threads()))
        peers["torch"] = torch
    except ImportError:
        print("peer skipped: torch (not installed; pip install torch)", file=sys.stderr)
    try:
        import graphblas as gb

        gb.init("suitesparse", blocking=True) if not getattr(gb, "_init_done", False) else None
        gb._init_done = True
        peers["graphblas"] = gb
    except ImportError:
        print("peer skipped: python-graphblas (not installed)", file=sys.stderr)
    except Exception:
        peers["graphblas"] = __import__("graphblas")
    return peers


def spmm_family(g, features, repeat, peers) -> list[Result]:
    """copy_u_sum, u_mul_e_sum with a scalar edge weight, copy_u_max, u_dot_v and edge_softmax."""
    import scipy.sparse as sp

    import graphkern as gk

    n, E = g.num_src, g.num_edges
    # the peers compute out = A^T X with A[u, v] = weight of u -> v: build A^T once, in CSR, from the CSC
    indptr, indices, eids = g.csc()
    src, dst = g.edges()
    results = []
    torch = peers.get("torch")
    gb = peers.get("graphblas")
    rng = np.random.default_rng(0)
    w = rng.random((E, 1), dtype=np.float32)
    w_csc = np.ascontiguousarray(w[eids, 0])
    At_ones = sp.csr_array((np.ones(E, np.float32), indices, indptr), shape=(n, n))
    At_w = sp.csr_array((w_csc, indices, indptr), shape=(n, n))
    if torch is not None:
        t_indptr = torch.from_numpy(indptr.astype(np.int64))
        t_indices = torch.from_numpy(indices.astype(np.int64))
        T_ones = torch.sparse_csr_tensor(t_indptr, t_indices, torch.ones(E), size=(n, n))
        T_w = torch.sparse_csr_tensor(t_indptr, t_indices, torch.from_numpy(w_csc), size=(n, n))
        t_src = torch.from_numpy(src.astype(np.int64))
        t_dst = torch.from_numpy(dst.astype(np.int64))
    if gb is not None:
        G_ones = gb.Matrix.from_csr(indptr.astype(np.uint64), indices.astype(np.uint64), np.ones(E, np.float32),
                                    nrows=n, ncols=n)
    for F in features:
        X = rng.random((n, F), dtype=np.float32)
        cases = {}
        ref_sum = At_ones @ X
        cases["copy_u_sum"] = ({"graphkern": lambda: gk.ops.copy_u_sum(g, X), "scipy": lambda: At_ones @ X},
                               ref_sum)
        ref_mul = At_w @ X
        cases["u_mul_e_sum (w: E x 1)"] = ({"graphkern": lambda: gk.ops.u_mul_e_sum(g, X, w),
                                            "scipy": lambda: At_w @ X}, ref_mul)
        cases["copy_u_max"] = ({"graphkern": lambda: gk.ops.copy_u_max(g, X)}, None)
        # peers that materialise an (E, F) gather; past ~2 GB each they would exhaust these machines
        gather_fits = E * F * X.itemsize <= 2 << 30
        if not gather_fits:
            print(f"peer skipped at F={F}: numpy/torch gather-based u_dot_v and scatter_reduce "
                  f"(they allocate {E * F * 4 / 2**30:.1f} GiB per operand)", file=sys.stderr)
        cases["u_dot_v"] = ({"graphkern": lambda: gk.ops.u_dot_v(g, X, X)}, None)
        if gather_fits:
            cases["u_dot_v"][0]["numpy gather"] = lambda: np.einsum("ij,ij->i", X[src], X[dst])
        logits = rng.standard_normal((E, 1), dtype=np.float32)
        cases["edge_softmax (H=1)"] = ({"graphkern": lambda: gk.edge_softmax(g, logits)}, None)
        if torch is not None:
            Xt = torch.from_numpy(X)
            cases["copy_u_sum"][0]["torch csr@X"] = lambda: T_ones @ Xt
            cases["u_mul_e_sum (w: E x 1)"][0]["torch csr@X"] = lambda: T_w @ Xt
            cases["copy_u_max"][0]["torch csr@X (sum)"] = lambda: T_ones @ Xt
            if gather_fits:
                cases["copy_u_max"][0]["torch scatter_reduce amax"] = lambda: torch.zeros(n, F).scatter_reduce_(
                    0, t_dst[:, None].expand(E, F), Xt[t_src], "amax", include_self=False)
                cases["u_dot_v"][0]["torch gather-mul-sum"] = lambda: (Xt[t_src] * Xt[t_dst]).sum(1)
            cases["u_dot_v"][0]["torch csr@X (same F)"] = lambda: T_ones @ Xt
            lt = torch.from_numpy(logits[:, 0])

            def torch_softmax():
                m = torch.full((n,), -float("inf")).scatter_reduce_(0, t_dst, lt, "amax", include_self=True)
                ex = torch.exp(lt - m[t_dst])
                s = torch.zeros(n).index_add_(0, t_dst, ex)
                return ex / s[t_dst]

            cases["edge_softmax (H=1)"][0]["torch scatter ops"] = torch_softmax
            cases["edge_softmax (H=1)"][0]["torch csr@X (F=16 yardstick)"] = (
                lambda: T_ones @ torch.from_numpy(rng.random((n, 16), dtype=np.float32)))
        if gb is not None:
            Gx = gb.Matrix.from_dense(X)
            cases["copy_u_sum"][0]["graphblas plus_times"] = lambda: G_ones.mxm(Gx, gb.semiring.plus_times).new()
            cases["copy_u_max"][0]["graphblas max_second"] = lambda: G_ones.mxm(Gx, gb.semiring.max_second).new()
        for kernel, (funcs, reference) in cases.items():
            check = "ok"
            if reference is not None:
                got = funcs["graphkern"]()
                ok = np.allclose(got, reference, rtol=1e-4, atol=1e-3 * np.sqrt(max(1, int(np.diff(indptr).max()))))
                check = "equal" if ok else "MISMATCH"
            medians = round_robin(funcs, repeat)
            ours = medians.pop("graphkern")
            results.append(Result("spmm", kernel, F, ours, medians, check))
    return results


def graphblas_bfs(gb, A, n, deg, source):
    """LAGraph's push/pull BFS (research/bfs.md 4.1 and 4.3) in python-graphblas: parents."""
    from graphblas import Vector, semiring

    sr = semiring.ss.any_secondi["INT64"]
    pi = Vector("INT64", n)
    pi.ss.config["sparsity_control"] = ["bitmap", "full"]
    q = Vector("INT64", n)
    pi[source] = source
    q[source] = source
    edges_unexplored = A.nvals
    push = True
    alpha, beta2 = 8.0, 512.0  # LAGraph's push->pull (alpha) and pull->push (beta2) thresholds
    nq = 1
    while True:
        nq_old = nq
        nq = q.nvals
        if nq == 0:
            break
        if push:
            edges_in_frontier = deg.ewise_mult(q.apply(gb.unary.one["INT64"]).new()).reduce().new().value or 0
            edges_unexplored -= edges_in_frontier
            if nq > nq_old and edges_in_frontier > edges_unexplored / alpha and edges_unexplored >= n:
                push = False
        else:
            if nq < nq_old and nq <= n / beta2:
                push = True
        q.ss.config["sparsity_control"] = ["sparse"] if push else ["bitmap"]
        if push:
            q(~pi.S, replace=True) << sr(q @ A)
        else:
            q(~pi.S, replace=True) << sr(A @ q)
        if q.nvals == 0:
            break
        pi(q.S) << q
    return pi


def bfs_family(scale, num_roots, repeat, peers) -> list[Result]:
    """direction-optimizing, top-down, spmsv and bottom-up BFS against SciPy and python-graphblas."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order

    import graphkern as gk

    src, dst = gk.graph.kronecker_edges(scale, progress=False)
    n = 1 << scale
    loops = src == dst
    g = gk.Graph.from_coo(np.concatenate([src[~loops], dst[~loops]]), np.concatenate([dst[~loops], src[~loops]]),
                          num_nodes=n).simple()
    g.csc()
    roots = gk.graph500.search_keys(g, num_roots)
    indptr, indices, _ = g.csr()
    A_sp = sp.csr_array((np.ones(indices.size, np.int8), indices, indptr), shape=(n, n))
    gb = peers.get("graphblas")
    if gb is not None:
        gsrc, gdst = g.edges()
        A_gb = gb.Matrix.from_coo(gsrc, gdst, True, nrows=n, ncols=n)
        deg = A_gb.reduce_rowwise(gb.monoid.plus["INT64"]).new()
    nedges = np.array([gk.graph500.traversed_edges(src, dst, gk.bfs(g, int(r)).parents) for r in roots], float)
    results = []
    funcs_per_root = []
    for r in roots.tolist():
        funcs = {f"graphkern {a}": (lambda a=a, r=r: gk.bfs(g, r, algorithm=a))
                 for a in ("direction_optimizing", "top_down", "spmsv", "bottom_up")}
        funcs["scipy csgraph"] = lambda r=r: breadth_first_order(A_sp, r, directed=True, return_predecessors=True)
        if gb is not None:
            funcs["graphblas push/pull"] = lambda r=r: graphblas_bfs(gb, A_gb, n, deg, r)
        funcs_per_root.append(funcs)
    # validate every algorithm once per root against the Graph500 rules before timing anything
    for r, funcs in zip(roots.tolist(), funcs_per_root):
        for name, f in funcs.items():
            if name.startswith("graphkern"):
                res = f()
                gk.graph500.validate(g, r, res.parents, res.levels)
    times = {name: [] for name in funcs_per_root[0]}
    for _ in range(repeat):
        for funcs in funcs_per_root:
            for name, f in funcs.items():
                t0 = time.perf_counter()
                f()
                times[name].append(time.perf_counter() - t0)
    per_root_edges = np.tile(nedges, repeat)
    hmean = {name: float(1.0 / np.mean(np.array(t) / per_root_edges)) for name, t in times.items()}
    med = {name: float(np.median(t)) for name, t in times.items()}
    ours = "graphkern direction_optimizing"
    for name in times:
        if not name.startswith("graphkern"):
            continue
        peers_t = {k: med[k] for k in times if not k.startswith("graphkern")}
        res = Result("bfs", name.replace("graphkern ", ""), 0, med[name], peers_t, "valid")
        res.extra = {"harmonic_mean_TEPS": hmean[name],
                     "peers_harmonic_mean_TEPS": {k: hmean[k] for k in peers_t}}
        results.append(res)
    del ours
    return results


def format_bfs(results) -> str:
    lines = []
    for r in results:
        peers = "; ".join(f"{k} {t * 1e3:.1f} ms, {r.extra['peers_harmonic_mean_TEPS'][k] / 1e6:.0f} MTEPS "
                          f"(median time {t / r.graphkern_s:.2f}x ours)" for k, t in r.peers.items())
        lines.append(f"{r.kernel:<22} median {r.graphkern_s * 1e3:7.2f} ms, harmonic mean "
                     f"{r.extra['harmonic_mean_TEPS'] / 1e6:8.1f} MTEPS [{r.check}]  vs  {peers}")
    return "\n".join(lines)


def format_results(results) -> str:
    lines = []
    for r in results:
        peers = "; ".join(f"{name} {t * 1e3:.1f} ms ({t / r.graphkern_s:.2f}x)" for name, t in r.peers.items())
        lines.append(f"{r.kernel:<24} F={r.features:<4} graphkern {r.graphkern_s * 1e3:8.1f} ms  [{r.check}]  {peers}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=18, help="Graph500 Kronecker scale (symmetric, simple)")
    parser.add_argument("--features", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--family", choices=["spmm", "bfs"], default="spmm")
    parser.add_argument("--roots", type=int, default=16, help="BFS: search keys (the Graph500 rule)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    args = parser.parse_args(argv)

    import numba

    import graphkern as gk

    if args.threads:
        numba.set_num_threads(args.threads)
    peers = _peer_modules()
    if args.family == "bfs":
        print(f"BFS: Graph500 Kronecker scale {args.scale} (seeds 2, 3), symmetric, {args.roots} Graph500 search keys, "
              f"{numba.get_num_threads()} threads, every result validated; round-robin over roots x {args.repeat}; "
              f"TEPS counts the input edges of the traversed component")
        results = bfs_family(args.scale, args.roots, args.repeat, peers)
        print(format_bfs(results))
        if args.json:
            with open(args.json, "w") as fh:
                json.dump({"config": gk._info.config_dict(), "scale": args.scale,
                           "results": [dict(asdict(r), ratios=r.ratios()) for r in results]}, fh, indent=2)
        return 0
    g = gk.graph.kronecker(args.scale, progress=False)
    g.csc()
    print(f"graph: Graph500 Kronecker scale {args.scale}, symmetric, no self-loops or duplicates: "
          f"{g.num_nodes:,} nodes, {g.num_edges:,} edges; float32; {numba.get_num_threads()} threads; "
          f"median of {args.repeat} round-robin runs; ratio = peer time / graphkern time")
    results = spmm_family(g, args.features, args.repeat, peers)
    print(format_results(results))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"config": gk._info.config_dict(), "scale": args.scale,
                       "results": [dict(asdict(r), ratios=r.ratios()) for r in results]}, fh, indent=2)
    return 1 if any(r.check == "MISMATCH" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
