#!/usr/bin/env python3
"""A short check of every CPU kernel family against plain NumPy/SciPy, for an installed graphkern.

CI runs it in a second virtual environment holding exactly the oldest numba and llvmlite that
pyproject.toml declares, so the declared minimum is a tested one:

    python tools/smoke.py

Families: g-SpMM in both of its formats (CSC, COO) with sum, mean, max and min with arg outputs; g-SDDMM;
edge softmax; BFS (every algorithm, Graph500-validated); the dynamic graph with a snapshot. Prints one
line a family and exits 1 on the first disagreement.
"""

from __future__ import annotations

import sys

import numpy as np


def main() -> int:
    import scipy.sparse as sp

    import graphkern as gk

    rng = np.random.default_rng(0)
    n, e = 300, 3000
    src = np.concatenate([rng.integers(0, n, e), np.zeros(200, np.int64), [5, 5]])  # a hub, a self-loop twice
    dst = np.concatenate([rng.integers(0, n, e), rng.integers(0, n, 200), [5, 5]])
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    x = rng.standard_normal((n, 8)).astype(np.float32)
    w = rng.standard_normal((src.size, 1)).astype(np.float32)
    adj_t = sp.csr_matrix((np.ones(src.size), (dst, src)), shape=(n, n))  # row v: in-edges of v
    degree = np.bincount(dst, minlength=n)

    def check(name, ok):
        print(f"{name}: {'ok' if ok else 'MISMATCH'}", flush=True)
        if not ok:
            raise SystemExit(1)

    for fmt in ("csc", "coo"):  # the formats g-SpMM runs on (a CSR-only graph builds neither)
        out = gk.spmm(g.formats(fmt), "copy_lhs", "sum", x)
        check(f"spmm copy_u_sum ({fmt})", np.allclose(out, adj_t @ x, rtol=1e-4, atol=1e-4))
        mean = gk.spmm(g.formats(fmt), "copy_lhs", "mean", x)
        check(f"spmm copy_u_mean ({fmt})", np.allclose(mean, (adj_t @ x) / np.maximum(degree, 1)[:, None],
                                                       rtol=1e-4, atol=1e-4))
        for reduce, pick in (("max", np.max), ("min", np.min)):
            out, arg_u, _ = gk.spmm(g.formats(fmt), "copy_lhs", reduce, x, return_arg=True)
            want = np.zeros_like(x)
            for v in range(n):
                nbrs = src[dst == v]
                if nbrs.size:
                    want[v] = pick(x[nbrs], axis=0)
            picked = np.where(arg_u >= 0, x[np.maximum(arg_u, 0), np.arange(x.shape[1])], 0)
            check(f"spmm copy_u_{reduce} with arg ({fmt})", np.array_equal(out, want) and np.array_equal(picked, want))
    weighted = sp.csr_matrix((w[:, 0].astype(np.float64), (dst, src)), shape=(n, n))
    check("spmm u_mul_e_sum", np.allclose(gk.spmm(g, "mul", "sum", x, w), weighted @ x, rtol=1e-4, atol=1e-4))

    dots = gk.sddmm(g, "dot", x, x)
    check("sddmm u_dot_v", np.allclose(dots[:, 0], np.einsum("ij,ij->i", x[src], x[dst]), rtol=1e-4, atol=1e-4))
    check("sddmm u_add_v", np.allclose(gk.sddmm(g, "add", x, x), x[src] + x[dst]))

    soft = gk.edge_softmax(g, w)[:, 0]
    ok = True
    for v in range(n):
        ids = np.flatnonzero(dst == v)
        if ids.size:
            ex = np.exp(w[ids, 0].astype(np.float64) - w[ids, 0].max())
            ok &= bool(np.allclose(soft[ids], ex / ex.sum(), rtol=1e-4, atol=1e-6))
    check("edge_softmax", ok)

    # a graph large enough for the blocked SpMM/SDDMM paths and the vectorised softmax
    big = gk.graph.kronecker(12)
    bs, bd = big.edges()
    xb = rng.standard_normal((big.num_nodes, 16)).astype(np.float32)
    zb = rng.standard_normal((big.num_edges, 1)).astype(np.float32)
    big_t = sp.csr_matrix((np.ones(bs.size), (bd, bs)), shape=(big.num_nodes, big.num_nodes))
    check("spmm copy_u_sum, Kronecker 12", np.allclose(gk.spmm(big, "copy_lhs", "sum", xb), big_t @ xb,
                                                        rtol=1e-4, atol=1e-3))
    check("sddmm u_dot_v, Kronecker 12", np.allclose(gk.sddmm(big, "dot", xb, xb)[:, 0],
                                                      np.einsum("ij,ij->i", xb[bs], xb[bd]), rtol=1e-4, atol=1e-4))
    soft = gk.edge_softmax(big, zb)[:, 0]
    z = zb[:, 0].astype(np.float64)
    row_max = np.full(big.num_nodes, -np.inf)
    np.maximum.at(row_max, bd, z)
    ex = np.exp(z - row_max[bd])
    sums = np.zeros(big.num_nodes)
    np.add.at(sums, bd, ex)
    check("edge_softmax, Kronecker 12", np.allclose(soft, ex / sums[bd], rtol=1e-4, atol=1e-6))

    sym = gk.graph.kronecker(10)
    reference = None
    for algorithm in ("direction_optimizing", "top_down", "bottom_up", "spmsv"):
        res = gk.bfs(sym, 0, algorithm=algorithm)
        gk.graph500.validate(sym, 0, res.parents)
        reference = res.levels if reference is None else reference
        check(f"bfs {algorithm}", np.array_equal(res.levels, reference))

    dg = gk.DynamicGraph(n)
    dg.apply(insert=(src, dst))
    dg.apply(insert=(np.array([1, 2]), np.array([3, 4])), delete=(src[:50], dst[:50]))
    keys = set(zip(src.tolist(), dst.tolist())) - set(zip(src[:50].tolist(), dst[:50].tolist()))
    keys |= {(1, 3), (2, 4)}
    snap = dg.snapshot()
    s, d = snap.edges()
    check("dynamic graph and snapshot", set(zip(s.tolist(), d.tolist())) == keys and snap.num_edges == len(keys))
    print("smoke: every family agreed", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
