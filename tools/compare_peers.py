#!/usr/bin/env python3
"""graphkern against the peers a user would pick instead, on the same graph and inputs, in one process.

Families: ``convert`` (COO -> CSR and CSR -> CSC with edge ids, against SciPy and torch), ``spmm``
(g-SpMM, g-SDDMM and edge softmax against torch, SciPy, python-graphblas and, when it imports, DGL's own
CPU kernels through ``dgl.ops``), ``bfs`` (every BFS
algorithm against SciPy, python-graphblas's LAGraph push/pull, igraph and networkit) and ``diameter``
(BFS on a shuffled grid and a long path, where each level's fixed cost shows) and ``gap`` (BFS against
the GAP Benchmark Suite's ``bfs`` binary on the same input files: tools/gap_peer.py); ``dgl`` (GNN
training steps against DGL with the same weights: tools/dgl_peer.py; only when asked for) and
``dgl-models`` (four of DGL's example models, GIN, RGCN, GraphSAGE on sampled blocks and GAT: training
step, their sparse calls and the first step in a new process: tools/dgl_models.py; only when asked for). Every result is
checked (against the peer, the reference or the Graph500 rules) before anything is timed; then graphkern
and each peer in turn are called alternately (a round robin of two, per peer; for BFS every algorithm
and peer takes its turn with all its search keys in a row, as Graph500's kernel 2 runs them)
``--repeat`` times and the medians and ratios are printed as one table (ratio = peer time / graphkern
time in the same pairing, so above 1 means graphkern is faster). Pairs, not one rotation of every
peer: a peer's large temporaries or its spinning OpenMP threads slow whoever runs next (figures in
docs/performance.md). Peers that are not installed are skipped by name; ``--plot DIR`` saves one PNG
per family (needs matplotlib). These machines are shared and noisy: the ratios measured side by side are
the figures that count.

    python tools/compare_peers.py                                   # every family, scale 18 / 20
    python tools/compare_peers.py --family spmm --features 16 64 --plot docs/img --json results.json
    python tools/compare_peers.py --family bfs --bfs-scale 20 --roots 16
    python tools/compare_peers.py --family diameter --grid-side 1000 --path-length 100000
    python tools/compare_peers.py --family gap --gap-bfs /path/to/gapbs/bfs --gap-scale 20 --json gap.json
    python tools/compare_peers.py --family dgl --repeat 5 --dgl-graph facebook kronecker --json dgl.json
    DGLBACKEND=pytorch python tools/compare_peers.py --family dgl-models --dm-steps 12 --json models.json
    python tools/compare_peers.py --family planner --planner-scales 14 16 18 --json planner.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import textwrap
import time
import warnings
from dataclasses import asdict, dataclass, field

import numpy as np

# torch notes that its sparse tensors are beta and skip invariant checks; the comparison knows
warnings.filterwarnings("ignore", message="Sparse (CSR tensor support|invariant checks)", category=UserWarning)


@dataclass
class Result:
    family: str
    kernel: str
    features: int
    graphkern_s: float
    peers: dict = field(default_factory=dict)  # name -> median seconds
    check: str = "ok"
    extra: dict = field(default_factory=dict)
    graphkern_by_peer: dict = field(default_factory=dict)  # name -> graphkern's median alternated with it

    def ours_against(self, name):
        """graphkern's median seconds in the pairing with peer ``name`` (else over every run)."""
        return self.graphkern_by_peer.get(name, self.graphkern_s)

    def ratios(self):
        return {name: t / self.ours_against(name) for name, t in self.peers.items()}


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


def paired_round_robin(ours, peers: dict, repeat: int):
    """graphkern (``ours``) alternated with one peer at a time, ``repeat`` times each after a warm-up
    (``graphkern.bench.time_pair``, as ``graphkern bench`` times its rows): returns graphkern's median
    over the pairings, the peers' medians and graphkern's median in each pairing."""
    from graphkern.bench import time_pair

    if not peers:
        return time_pair(ours, None, repeat)[0], {}, {}
    peer_medians, ours_by_peer = {}, {}
    for name, f in peers.items():
        ours_by_peer[name], peer_medians[name] = time_pair(ours, f, repeat)
    return float(np.median(list(ours_by_peer.values()))), peer_medians, ours_by_peer


def _paired_result(family, kernel, features, funcs, repeat, check):
    """One Result from ``funcs`` (``"graphkern"`` and the peers), each peer timed in its own pairing."""
    peers = {name: f for name, f in funcs.items() if name != "graphkern"}
    ours, medians, by_peer = paired_round_robin(funcs["graphkern"], peers, repeat)
    return Result(family, kernel, features, ours, medians, check, graphkern_by_peer=by_peer)


def _sibling(name):
    """A module of tools/ loaded by path (this script also runs loaded by path, outside any package)."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_graphkern_tools_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


PEERS = {"torch": "torch", "graphblas": "python-graphblas", "igraph": "igraph", "networkit": "networkit", "dgl": "dgl"}


def _peer_modules(wanted=None):
    """The installed peers among ``wanted`` (default: all), each skipped by name when it is missing."""
    import numba

    peers = {}
    for name, package in PEERS.items():
        if wanted is not None and name not in wanted:
            print(f"peer skipped: {package} (not asked for)", file=sys.stderr)
            continue
        if name == "dgl":  # DGL's own kernels (forward calls of dgl.ops) in the spmm family
            dgl, reason = _sibling("dgl_peer").import_dgl()
            if dgl is None:
                print(f"peer skipped: dgl ({reason}; pip install dgl)", file=sys.stderr)
            else:
                peers[name] = dgl
            continue
        try:
            module = __import__(name)
        except ImportError:
            print(f"peer skipped: {package} (not installed; pip install {package})", file=sys.stderr)
            continue
        if name == "torch":
            module.set_num_threads(max(1, numba.get_num_threads()))
        elif name == "graphblas":
            try:
                module.init("suitesparse", blocking=True)
            except Exception:  # initialised already in this process
                pass
        elif name == "networkit":
            module.setNumberOfThreads(max(1, numba.get_num_threads()))
        peers[name] = module
    return peers


def convert_family(scale, repeat, peers) -> list[Result]:
    """COO -> CSR and CSR -> CSC with edge ids (the stable count sort) against SciPy and torch."""
    import scipy.sparse as sp

    import graphkern as gk

    src, dst = gk.graph.kronecker_edges(scale, progress=False)
    n = 1 << scale
    E = src.size
    ids = np.arange(E, dtype=np.int64)
    torch = peers.get("torch")
    results = []

    from graphkern.kernels.cpu import sort

    # the conversions themselves (Graph.from_coo/from_csr would add their input validation)
    def ours_coo_to_csr():
        return sort.coo_to_compressed(src, dst, None, n)

    indptr, indices, eids = ours_coo_to_csr()

    def ours_csr_to_csc():
        return sort.transpose_compressed(indptr, indices, eids, n)

    # the peers carry the edge id as the stored value, so they move as much data as graphkern does
    coo = sp.coo_array((ids, (src, dst)), shape=(n, n))
    csr = sp.csr_array((eids.astype(np.int64), indices, indptr), shape=(n, n))
    want_csc = ours_csr_to_csc()
    got_csc = csr.tocsc()
    check = "equal" if (np.array_equal(got_csc.indptr, want_csc[0]) and np.array_equal(
        got_csc.indices, want_csc[1]) and np.array_equal(got_csc.data, want_csc[2])) else "MISMATCH"
    funcs = {"graphkern": ours_coo_to_csr, "scipy coo.tocsr()": lambda: coo.tocsr()}
    if torch is not None:
        t_coo = torch.sparse_coo_tensor(torch.from_numpy(np.stack([src, dst]).astype(np.int64)),
                                        torch.from_numpy(ids), (n, n))
        funcs["torch coalesce().to_sparse_csr()"] = lambda: t_coo.coalesce().to_sparse_csr()
    results.append(_paired_result("convert", "coo -> csr (+eids)", 0, funcs, repeat, "ok"))
    funcs = {"graphkern": ours_csr_to_csc, "scipy csr.tocsc()": lambda: csr.tocsc()}
    if torch is not None:
        t_csr = torch.sparse_csr_tensor(torch.from_numpy(indptr.astype(np.int64)),
                                        torch.from_numpy(indices.astype(np.int64)),
                                        torch.from_numpy(eids.astype(np.int64)), (n, n))
        funcs["torch to_sparse_csc()"] = lambda: t_csr.to_sparse_csc()
    results.append(_paired_result("convert", "csr -> csc (+eids)", 0, funcs, repeat, check))
    return results


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
    dgl = peers.get("dgl")
    if dgl is not None:
        # DGL's graph of the same edges with the same edge ids, its formats built before anything is timed
        import torch as dgl_torch  # DGL's operands are torch tensors whether or not torch is a peer itself

        dg = dgl.graph((dgl_torch.from_numpy(src.astype(np.int64)), dgl_torch.from_numpy(dst.astype(np.int64))),
                       num_nodes=n)
        dg.create_formats_()
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
            # the yardstick for edge softmax: torch's csr @ X at F = 16 (its X made once, outside the
            # timing, so that drawing random numbers is not charged to torch)
            X16 = torch.from_numpy(rng.random((n, 16), dtype=np.float32))
            cases["edge_softmax (H=1)"][0]["torch csr@X (F=16 yardstick)"] = lambda: T_ones @ X16
        if dgl is not None:  # the same memory as torch tensors; DGL's forward kernels, no autograd graph
            Xt, wt, lt1 = dgl_torch.from_numpy(X), dgl_torch.from_numpy(w), dgl_torch.from_numpy(logits)
            if not np.allclose(dgl.ops.copy_u_sum(dg, Xt).numpy(), ref_sum, rtol=1e-4, atol=1e-2):
                raise SystemExit("dgl's copy_u_sum differs from SciPy's: the two graphs are not the same")
            for kernel, call in (("copy_u_sum", lambda: dgl.ops.copy_u_sum(dg, Xt)),
                                 ("u_mul_e_sum (w: E x 1)", lambda: dgl.ops.u_mul_e_sum(dg, Xt, wt)),
                                 ("copy_u_max", lambda: dgl.ops.copy_u_max(dg, Xt)),
                                 ("u_dot_v", lambda: dgl.ops.u_dot_v(dg, Xt, Xt)),
                                 ("edge_softmax (H=1)", lambda: dgl.ops.edge_softmax(dg, lt1))):
                cases[kernel][0][f"dgl {dgl.__version__}"] = call
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
            results.append(_paired_result("spmm", kernel, F, funcs, repeat, check))
    return results


def graphblas_bfs(gb, A, n, deg, source):
    """LAGraph's push/pull BFS (docs/design.md, section 'Linear-algebraic BFS') in python-graphblas: parents."""
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
    ig = peers.get("igraph")
    nk = peers.get("networkit")
    undirected = src != dst
    pairs = np.unique(np.sort(np.stack([src[undirected], dst[undirected]], axis=1), axis=1), axis=0)
    if ig is not None:
        G_ig = ig.Graph(n=n, edges=pairs, directed=False)
    if nk is not None:
        G_nk = nk.graph.GraphFromCoo((np.ones(len(pairs)), (pairs[:, 0].astype(np.uint64),
                                                            pairs[:, 1].astype(np.uint64))),
                                     n=n, directed=False, weighted=False)

        def networkit_bfs(r):
            search = nk.distance.BFS(G_nk, r, storePaths=False)
            search.run()
            return search

    nedges = np.array([gk.graph500.traversed_edges(src, dst, gk.bfs(g, int(r)).parents) for r in roots], float)
    results = []
    funcs_per_root = []
    for r in roots.tolist():
        funcs = {f"graphkern {a}": (lambda a=a, r=r: gk.bfs(g, r, algorithm=a))
                 for a in ("direction_optimizing", "top_down", "spmsv", "bottom_up")}
        funcs["scipy csgraph"] = lambda r=r: breadth_first_order(A_sp, r, directed=True, return_predecessors=True)
        if gb is not None:
            funcs["graphblas push/pull"] = lambda r=r: graphblas_bfs(gb, A_gb, n, deg, r)
        if ig is not None:
            funcs["igraph bfs"] = lambda r=r: G_ig.bfs(r)
        if nk is not None:
            funcs["networkit BFS"] = lambda r=r: networkit_bfs(r)
        funcs_per_root.append(funcs)
    # validate every algorithm once per root against the Graph500 rules before timing anything
    for r, funcs in zip(roots.tolist(), funcs_per_root):
        for name, f in funcs.items():
            if name.startswith("graphkern"):
                res = f()
                gk.graph500.validate(g, r, res.parents, res.levels)
    # Each repeat runs every algorithm's searches back to back, as Graph500's kernel 2 does, with the
    # algorithms taking turns between repeats (drift hits them alike). Interleaving algorithms per root
    # instead charges each search for the caches the previous algorithm's arrays evicted (top_down
    # measured markedly slower interleaved with bottom_up than in its own block).
    times = {name: [] for name in funcs_per_root[0]}
    for _ in range(repeat):
        for name in times:
            for funcs in funcs_per_root:
                t0 = time.perf_counter()
                funcs[name]()
                times[name].append(time.perf_counter() - t0)
    per_root_edges = np.tile(nedges, repeat)
    hmean = {name: float(1.0 / np.mean(np.array(t) / per_root_edges)) for name, t in times.items()}
    med = {name: float(np.median(t)) for name, t in times.items()}
    for name in times:
        if not name.startswith("graphkern"):
            continue
        peers_t = {k: med[k] for k in times if not k.startswith("graphkern")}
        res = Result("bfs", name.replace("graphkern ", ""), 0, med[name], peers_t, "valid")
        res.extra = {"harmonic_mean_TEPS": hmean[name],
                     "peers_harmonic_mean_TEPS": {k: hmean[k] for k in peers_t}}
        results.append(res)
    return results


def high_diameter_graphs(grid_side: int, path_length: int, seed: int = 0):
    """``{name: (Graph, source)}``: a ``grid_side`` x ``grid_side`` grid with shuffled vertex ids (a
    road-like graph: diameter about ``2 * grid_side``, no locality in the ids) and a path of
    ``path_length`` vertices searched from one end (every level holds one vertex), both symmetric."""
    import graphkern as gk

    rng = np.random.default_rng(seed)
    ids = np.arange(grid_side * grid_side).reshape(grid_side, grid_side)
    perm = rng.permutation(ids.size)
    a = perm[np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])]
    b = perm[np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])]
    grid = gk.Graph.from_coo(np.concatenate([a, b]), np.concatenate([b, a]), num_nodes=ids.size)
    p = np.arange(path_length - 1)
    path = gk.Graph.from_coo(np.concatenate([p, p + 1]), np.concatenate([p + 1, p]), num_nodes=path_length)
    return {f"grid {grid_side}x{grid_side}": (grid, int(perm[0])), f"path {path_length}": (path, 0)}


def diameter_family(grid_side, path_length, repeat, peers) -> list[Result]:
    """direction-optimizing and top-down BFS on high-diameter graphs (thousands of small levels, where
    a per-level cost shows) against SciPy, igraph and networkit."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order

    import graphkern as gk

    results = []
    for name, (g, source) in high_diameter_graphs(grid_side, path_length).items():
        g.csc()
        indptr, indices, _ = g.csr()
        n = g.num_nodes
        A_sp = sp.csr_array((np.ones(indices.size, np.int8), indices, indptr), shape=(n, n))
        funcs = {f"graphkern {a}": (lambda a=a: gk.bfs(g, source, algorithm=a))
                 for a in ("direction_optimizing", "top_down")}
        funcs["scipy csgraph"] = lambda: breadth_first_order(A_sp, source, directed=True, return_predecessors=True)
        src, dst = g.edges()
        keep = src < dst
        if peers.get("igraph") is not None:
            G_ig = peers["igraph"].Graph(n=n, edges=np.stack([src[keep], dst[keep]], axis=1), directed=False)
            funcs["igraph bfs"] = lambda: G_ig.bfs(source)
        if peers.get("networkit") is not None:
            nk = peers["networkit"]
            G_nk = nk.graph.GraphFromCoo((np.ones(int(keep.sum())), (src[keep].astype(np.uint64),
                                                                      dst[keep].astype(np.uint64))),
                                         n=n, directed=False, weighted=False)
            funcs["networkit BFS"] = lambda: nk.distance.BFS(G_nk, source, storePaths=False).run()
        for algo in ("direction_optimizing", "top_down"):
            res = funcs[f"graphkern {algo}"]()
            gk.graph500.validate(g, source, res.parents, res.levels)
        edges = gk.graph500.traversed_edges(src, dst, res.parents)
        med = round_robin(funcs, repeat)
        peers_t = {k: med[k] for k in med if not k.startswith("graphkern")}
        for algo in ("direction_optimizing", "top_down"):
            short = "dir_opt" if algo == "direction_optimizing" else algo
            r = Result("diameter", f"{name}: {short}", 0, med[f"graphkern {algo}"], peers_t, "valid")
            r.extra = {"levels": int(res.levels.max()), "TEPS": edges / med[f"graphkern {algo}"]}
            results.append(r)
    return results


def format_table(results) -> str:
    """One row per (kernel, peer): graphkern's median, the peer's, and the ratio peer / graphkern."""
    header = f"{'family':<8} {'kernel':<28} {'F':>4} {'graphkern':>20} {'peer':<34} {'peer time':>11} {'ratio':>7}"
    lines = [header, "-" * len(header)]
    for r in results:
        F = str(r.features) if r.features else "-"
        ours = f"{r.graphkern_s * 1e3:.2f} ms"
        kernel = r.kernel + ("" if r.check in ("ok", "equal", "valid") else f" [{r.check}]")
        if "harmonic_mean_TEPS" in r.extra:
            ours += f" {r.extra['harmonic_mean_TEPS'] / 1e6:.0f} MTEPS"
        if not r.peers:
            lines.append(f"{r.family:<8} {kernel:<28} {F:>4} {ours:>20} {'(no peer)':<34}")
        for name, t in r.peers.items():
            mine = ours if name not in r.graphkern_by_peer else f"{r.ours_against(name) * 1e3:.2f} ms"
            lines.append(f"{r.family:<8} {kernel:<28} {F:>4} {mine:>20} {name:<34} {t * 1e3:>8.2f} ms "
                         f"{t / r.ours_against(name):>6.2f}x")
    return "\n".join(lines)


def plot(results, directory, title_note: str) -> list[str]:
    """One PNG per family: the ratio peer time / graphkern time for each kernel and peer (log scale)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot skipped: matplotlib (not installed; pip install matplotlib)", file=sys.stderr)
        return []
    import os

    os.makedirs(directory, exist_ok=True)
    written = []
    for family in dict.fromkeys(r.family for r in results):
        rows = [(f"{r.kernel}{f' F={r.features}' if r.features else ''}  vs  {name}", ratio)
                for r in results if r.family == family for name, ratio in r.ratios().items()]
        if not rows:
            continue
        fig, ax = plt.subplots(figsize=(10, 0.32 * len(rows) + 1.4))
        labels, ratios = zip(*rows)
        colours = ["tab:green" if x >= 1 else "tab:red" for x in ratios]
        ax.barh(range(len(rows)), ratios, color=colours)
        ax.set_yticks(range(len(rows)), labels, fontsize=7)
        ax.invert_yaxis()
        ax.set_xscale("log")
        ax.axvline(1.0, color="black", linewidth=0.8)
        for i, x in enumerate(ratios):
            ax.text(x, i, f" {x:.2f}x", va="center", fontsize=7)
        ax.set_xlabel("peer time / graphkern time (right of 1: graphkern is faster)")
        wrapped = textwrap.fill(title_note, 140)
        ax.set_title(f"graphkern vs peers: {family}\n{wrapped}", fontsize=8)
        fig.tight_layout()
        path = os.path.join(directory, f"compare_{family}.png")
        fig.savefig(path, dpi=110)
        plt.close(fig)
        written.append(path)
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--family", action="append",
                        choices=["convert", "spmm", "bfs", "diameter", "gap", "dgl", "dgl-models", "planner"],
                        help="run only this family (repeatable; default: all but dgl, dgl-models and planner)")
    parser.add_argument("--scale", type=int, default=18, help="spmm: Graph500 Kronecker scale (symmetric, simple)")
    parser.add_argument("--convert-scale", type=int, default=20, help="convert: Kronecker scale of the edge list")
    parser.add_argument("--bfs-scale", type=int, default=20, help="bfs: Kronecker scale")
    parser.add_argument("--features", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument("--roots", type=int, default=16, help="bfs: search keys (the Graph500 rule)")
    parser.add_argument("--grid-side", type=int, default=1000, help="diameter: side of the shuffled grid")
    parser.add_argument("--path-length", type=int, default=100_000, help="diameter: vertices of the path")
    parser.add_argument("--peers", default=None, help="comma-separated peers to try (default: all of "
                                                      f"{', '.join(PEERS)}); SciPy always runs")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", default=None, help="also write the results to this JSON file")
    parser.add_argument("--plot", default=None, metavar="DIR", help="save one PNG per family here (matplotlib)")
    gap_peer = _sibling("gap_peer")
    gap_peer.add_arguments(parser)
    dgl_peer = _sibling("dgl_peer")
    dgl_peer.add_arguments(parser)
    dgl_models = _sibling("dgl_models")
    dgl_models.add_arguments(parser)
    planner_bench = _sibling("planner_bench")
    planner_bench.add_arguments(parser)
    args = parser.parse_args(argv)

    import platform

    import numba

    import graphkern as gk

    if args.threads:
        numba.set_num_threads(args.threads)
    wanted = None if args.peers is None else set(filter(None, args.peers.split(",")))
    if wanted is not None and wanted - set(PEERS):
        parser.error(f"argument --peers: expected names among {', '.join(PEERS)}, found {', '.join(sorted(wanted))}")
    peers = _peer_modules(wanted)
    families = args.family or ["convert", "spmm", "bfs", "diameter", "gap"]
    versions = ", ".join(f"{name} {getattr(module, '__version__', '?')}" for name, module in peers.items())
    note = (f"{numba.get_num_threads()} threads, {platform.machine()} {os.cpu_count()} cores, "
            f"graphkern {gk.__version__ if hasattr(gk, '__version__') else ''}, numba {numba.__version__}; {versions}")
    print(f"# {time.strftime('%Y-%m-%d')}; {note}")
    print(f"# median of {args.repeat} runs, graphkern alternated with each peer in turn (BFS: every algorithm and peer "
          f"in one rotation); ratio = peer time / graphkern time in that pairing (above 1: graphkern faster)")
    results = []
    if "convert" in families:
        print(f"# convert: Graph500 Kronecker scale {args.convert_scale} edge list "
              f"({16 << args.convert_scale:,} tuples), int64 edge ids as the peers' values")
        results += convert_family(args.convert_scale, args.repeat, peers)
    if "spmm" in families:
        g = gk.graph.kronecker(args.scale, progress=False)
        g.csc()
        print(f"# spmm: Graph500 Kronecker scale {args.scale}, symmetric, no self-loops or duplicates: "
              f"{g.num_nodes:,} nodes, {g.num_edges:,} edges; float32")
        results += spmm_family(g, args.features, args.repeat, peers)
    if "bfs" in families:
        print(f"# bfs: Graph500 Kronecker scale {args.bfs_scale}, symmetric, {args.roots} Graph500 search keys, "
              f"every graphkern tree validated; TEPS counts the input edges of the traversed component")
        results += bfs_family(args.bfs_scale, args.roots, args.repeat, peers)
    if "diameter" in families:
        print(f"# diameter: a {args.grid_side} x {args.grid_side} grid with shuffled ids and a path of "
              f"{args.path_length:,} vertices, symmetric; every graphkern tree validated; each call timed whole")
        results += diameter_family(args.grid_side, args.path_length, args.repeat, peers)
    if "gap" in families:
        results += gap_peer.run_family(args, Result)
    if "dgl" in families:
        results += dgl_peer.run_family(args, Result)
    if "dgl-models" in families:
        results += dgl_models.run_family(args, Result)
    if "planner" in families:
        results += planner_bench.run_family(args, Result, round_robin)
    print(format_table(results))
    if args.plot:
        for path in plot(results, args.plot, note):
            print(f"# plot: {path}")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"config": gk._info.config_dict(), "note": note,
                       "results": [dict(asdict(r), ratios=r.ratios()) for r in results]}, fh, indent=2)
    return 1 if any(r.check == "MISMATCH" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
