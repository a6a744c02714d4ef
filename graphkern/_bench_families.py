"""The sections of ``graphkern bench``, one function per kernel family (run by :mod:`graphkern.bench`)."""

from __future__ import annotations

import time

import numpy as np

from ._bench_core import BenchContext, Row, bench_family, time_pair


@bench_family("convert")
def bench_conversions(ctx: BenchContext) -> list[Row]:
    """COO -> CSR (Graph500 kernel 1's core), CSR -> CSC with edge ids, and the bare stable count sort."""
    import scipy.sparse as sp

    from ._backend import driver
    from ._cuda import to_host

    steps = driver("cuda" if ctx.on_gpu else "cpu").formats  # the sort steps that build a graph's formats

    n = 1 << ctx.scale
    src, dst = ctx.src, ctx.dst
    d_src, d_dst = ctx.to_backend(src), ctx.to_backend(dst)
    num_edges = src.size
    rows = []

    # COO -> CSR. SciPy's tocsr also sums duplicates; the check compares with a stable argsort instead.
    ours = ctx.timed(lambda: steps.coo_to_compressed(d_src, d_dst, None, n))
    ones = np.ones(num_edges, dtype=np.float32)
    peer = lambda: sp.coo_array((ones, (src, dst)), shape=(n, n)).tocsr()  # noqa: E731
    indptr, indices, eids = (to_host(a) for a in ours())
    order = np.argsort(src, kind="stable")
    check = "equal" if (np.array_equal(eids, order) and np.array_equal(indices, dst[order])
                        and np.array_equal(indptr, np.searchsorted(src[order], np.arange(n + 1)))) else "MISMATCH"
    t_ours, t_peer = time_pair(ours, peer, ctx.repeat)
    rows.append(Row("convert", "coo -> csr (with eids)", t_ours, "scipy coo.tocsr", t_peer, num_edges,
                    "edges/s", check))

    # CSR -> CSC carrying edge ids: the reverse graph. SciPy's tocsc with data = edge ids does the same.
    csr = sp.csr_array((eids, indices, indptr), shape=(n, n))
    d_csr = [ctx.to_backend(a) for a in (indptr, indices, eids)]
    ours = ctx.timed(lambda: steps.transpose_compressed(*d_csr, n))
    peer = csr.tocsc
    t_indptr, t_indices, t_eids = (to_host(a) for a in ours())
    ref = peer()
    check = "equal" if (np.array_equal(t_indptr, ref.indptr) and np.array_equal(t_indices, ref.indices)
                        and np.array_equal(t_eids, ref.data)) else "MISMATCH"
    t_ours, t_peer = time_pair(ours, peer, ctx.repeat)
    rows.append(Row("convert", "csr -> csc (with eids)", t_ours, "scipy csr.tocsc", t_peer, num_edges,
                    "edges/s", check))

    # The stable count sort by itself, against NumPy's stable (radix) argsort.
    ours = ctx.timed(lambda: steps.count_sort(d_dst, n, np.int32 if num_edges < 2**31 else np.int64))
    peer = lambda: np.argsort(dst, kind="stable")  # noqa: E731
    _, perm = ours()
    check = "equal" if np.array_equal(to_host(perm), peer()) else "MISMATCH"
    t_ours, t_peer = time_pair(ours, peer, ctx.repeat)
    rows.append(Row("convert", "stable count sort (perm)", t_ours, "numpy argsort stable", t_peer, num_edges,
                    "edges/s", check))
    ctx.cache["csr"] = (indptr, indices, eids)
    return rows


def _reference_edges(ctx: BenchContext):
    """``(src, dst, scale)``: the generated edges, regenerated at scale 18 (the size of the
    sparse-kernel benchmarks, which loads in seconds) unless the run is --quick or asked for less."""
    scale = ctx.scale if ctx.quick else min(ctx.scale, 18)
    if scale == ctx.scale:
        return ctx.src, ctx.dst, scale
    from .graph import kronecker_edges

    src, dst = kronecker_edges(scale, ctx.edgefactor, progress=False)
    return src, dst, scale


def sparse_inputs(ctx: BenchContext):
    """``(g, x, rng, scale)``: the symmetric simple Kronecker graph the sparse kernels run on (its CSC
    built), float32 node features of width 16, and the generator that made them (for more inputs)."""
    from .graph import Graph

    src, dst, scale = _reference_edges(ctx)
    n = 1 << scale
    loops = src == dst
    g = Graph.from_coo(np.concatenate([src, dst[~loops]]), np.concatenate([dst, src[~loops]]), num_nodes=n).simple()
    g.csc()
    rng = np.random.default_rng(0)
    return g, rng.random((n, 16), dtype=np.float32), rng, scale


@bench_family("spmm")
def bench_spmm(ctx: BenchContext) -> list[Row]:
    """g-SpMM, g-SDDMM and edge softmax on the symmetric simple Kronecker graph, against SciPy."""
    import scipy.sparse as sp

    from . import edge_softmax, ops

    g, x, rng, scale = sparse_inputs(ctx)
    n, F = x.shape
    indptr, indices, eids = g.csc()
    E = g.num_edges
    w = rng.random((E, 1), dtype=np.float32)
    At = sp.csr_array((np.ones(E, np.float32), indices, indptr), shape=(n, n))
    At_w = sp.csr_array((w[eids, 0], indices, indptr), shape=(n, n))
    rows = []
    name = f"(kron {scale}, F={F})"
    from ._cuda import to_host

    # on the cuda backend the graph and features go to the GPU once; the kernels then run there
    gb, xb, wb = ctx.to_backend(g), ctx.to_backend(x), ctx.to_backend(w)

    def row(label, ours, peer_name, peer, ref, flops):
        ours = ctx.timed(ours)
        got = to_host(ours())
        check = "ok"
        if ref is not None:
            check = "equal" if np.allclose(got, ref, rtol=1e-4, atol=1e-2) else "MISMATCH"
        t_ours, t_peer = time_pair(ours, peer, ctx.repeat)
        rows.append(Row("spmm", f"{label} {name}", t_ours, peer_name, t_peer, flops, "GFLOP/s", check))

    row("copy_u_sum", lambda: ops.copy_u_sum(gb, xb), "scipy A.T @ X", lambda: At @ x, At @ x, E * F)
    row("u_mul_e_sum w:(E,1)", lambda: ops.u_mul_e_sum(gb, xb, wb), "scipy A_w.T @ X", lambda: At_w @ x, At_w @ x,
        2 * E * F)
    dense_max = None
    if E:
        from .kernels.cpu.sort import expand_indptr

        # the graph's own (writable) row pointer: a read-only view would compile a second kernel
        dst_of_slot = expand_indptr(g._raw("csc")[0], np.empty(E, dtype=indices.dtype))
        dense_max = np.full((n, F), -np.inf, np.float32)
        np.maximum.at(dense_max, dst_of_slot, x[indices])
        dense_max[np.isinf(dense_max)] = 0
    row("copy_u_max", lambda: ops.copy_u_max(gb, xb), "numpy maximum.at", None, dense_max, E * F)
    s, d = g.edges()
    ref_dot = np.einsum("ij,ij->i", x[s], x[d])[:, None]
    row("u_dot_v", lambda: ops.u_dot_v(gb, xb, xb), "numpy gather+einsum",
        lambda: np.einsum("ij,ij->i", x[s], x[d]), ref_dot, 2 * E * F)
    logits = ctx.to_backend(rng.standard_normal((E, 1), dtype=np.float32))
    row("edge_softmax H=1", lambda: edge_softmax(gb, logits), "", None, None, 3 * E)
    return rows


def bfs_inputs(ctx: BenchContext):
    """``(g, roots)``: the generated graph, undirected and simple without its self-loops (CSC built), and
    its Graph500 search keys (4 with --quick, else 8)."""
    from . import graph500
    from .graph import Graph

    src, dst = ctx.src, ctx.dst
    loops = src == dst
    g = Graph.from_coo(np.concatenate([src[~loops], dst[~loops]]), np.concatenate([dst[~loops], src[~loops]]),
                       num_nodes=1 << ctx.scale).simple()
    g.csc()
    return g, graph500.search_keys(g, 4 if ctx.quick else 8)


@bench_family("bfs")
def bench_bfs(ctx: BenchContext) -> list[Row]:
    """Direction-optimizing and top-down BFS from Graph500 keys, validated, against SciPy's csgraph."""
    import scipy.sparse as sp
    from scipy.sparse.csgraph import breadth_first_order

    from . import graph500
    from .traversal import bfs

    src, dst = ctx.src, ctx.dst
    n = 1 << ctx.scale
    g, roots = bfs_inputs(ctx)
    indptr, indices, _ = g.csr()
    A = sp.csr_array((np.ones(indices.size, np.int8), indices, indptr), shape=(n, n))
    rows = []
    peer = lambda: [breadth_first_order(A, r, return_predecessors=True) for r in roots.tolist()]  # noqa: E731
    t_peer = None
    from ._cuda import to_host

    gb = ctx.to_backend(g)
    for algorithm in ("direction_optimizing", "top_down", "spmsv"):
        checks = []
        for r in roots.tolist():
            res = bfs(gb, r, algorithm=algorithm)
            graph500.validate(g, r, res.parents, res.levels)
            checks.append(graph500.traversed_edges(src, dst, to_host(res.parents)))
        nedge = float(np.mean(checks))
        ours = ctx.timed(lambda a=algorithm: [bfs(gb, r, algorithm=a) for r in roots.tolist()])
        # SciPy is timed alternately with the first algorithm only: it is slow, and the same search
        t_ours, first_peer = time_pair(ours, peer if t_peer is None else None, ctx.repeat)
        t_peer = first_peer if t_peer is None else t_peer
        per = len(roots)
        rows.append(Row("bfs", f"{algorithm} ({per} Graph500 keys)", t_ours / per, "scipy csgraph", t_peer / per,
                        nedge, "GTEPS", "valid"))
    return rows


def dynamic_inputs(ctx: BenchContext):
    """``(dg, src, dst)``: a DynamicGraph on the backend holding the generated edges both ways (no
    self-loops), and the edge list it was filled from."""
    from .graph import DynamicGraph

    gen_src, gen_dst, scale = _reference_edges(ctx)
    loops = gen_src == gen_dst
    src = np.concatenate([gen_src[~loops], gen_dst[~loops]])
    dst = np.concatenate([gen_dst[~loops], gen_src[~loops]])
    dg = DynamicGraph(1 << scale, backend=ctx.backend)
    dg.apply(insert=(src, dst))
    return dg, src, dst


@bench_family("dynamic")
def bench_dynamic(ctx: BenchContext) -> list[Row]:
    """The DynamicGraph on the generated graph: batch insertions and deletions (SciPy's CSR + CSC rebuild
    as the peer), a snapshot with both formats, and IncrementalBFS against a fresh search."""
    import scipy.sparse as sp

    from . import graph500
    from .incremental import IncrementalBFS
    from .traversal import bfs

    dg, src, dst = dynamic_inputs(ctx)
    n = dg.num_nodes
    rng = np.random.default_rng(5)
    rows = []
    from ._cuda import to_host

    batch = min(10_000, n * n // 4)
    # a batch of edges the graph does not have, so that inserting and deleting it restores the graph
    new = rng.integers(0, n, (2, 2 * batch))
    absent = ~to_host(dg.contains(new[0], new[1]))
    keys = np.unique(new[0][absent] * n + new[1][absent])[:batch]
    new = np.stack([keys // n, keys % n])
    batch = new.shape[1]
    # the snapshot after insert-then-delete of a batch must equal the graph before it (SciPy's CSR)
    dg.apply(insert=(new[0], new[1]))
    dg.apply(delete=(new[0], new[1]))
    ref = sp.coo_array((np.ones(src.size, np.int8), (src, dst)), shape=(n, n)).tocsr()
    ref.sum_duplicates()
    snap = dg.snapshot().to("cpu")
    indptr, indices, _ = snap.csr()
    check = "equal" if (np.array_equal(indptr, ref.indptr) and np.array_equal(indices, ref.indices)) else "MISMATCH"
    s2, d2 = np.concatenate([src, new[0]]), np.concatenate([dst, new[1]])

    def rebuild():
        m = sp.coo_array((np.ones(s2.size, np.float32), (s2, d2)), shape=(n, n))
        m.tocsr(), m.tocsc()

    # time_pair alternates its two calls: each insert is undone by the delete after it
    insert = ctx.timed(lambda: dg.apply(insert=(new[0], new[1])))
    delete = ctx.timed(lambda: dg.apply(delete=(new[0], new[1])))
    t_ins, t_del = time_pair(insert, delete, ctx.repeat)
    t_peer, _ = time_pair(rebuild, None, ctx.repeat)
    rows.append(Row("dynamic", f"insert batch {batch} into {dg.num_edges:,} edges", t_ins, "scipy rebuild csr+csc",
                    t_peer, batch, "updates/s", check))
    rows.append(Row("dynamic", f"delete batch {batch}", t_del, "", None, batch, "updates/s", check))

    def snapshot():
        dg._snapshot_cache = None  # the build, not the cache
        dg.snapshot().csc()

    t_snap, _ = time_pair(ctx.timed(snapshot), None, ctx.repeat)
    rows.append(Row("dynamic", "snapshot (csr + csc + stable ids)", t_snap, "", None, dg.num_edges, "edges/s", check))
    root = int(graph500.search_keys(snap, 1)[0])
    inc = IncrementalBFS(dg, root, symmetric=True)
    fresh_snap = dg.snapshot()
    t_fresh, _ = time_pair(ctx.timed(lambda: bfs(fresh_snap, root)), None, ctx.repeat)
    times = []
    update = ctx.timed(inc.update)
    for _ in range(ctx.repeat):
        a = rng.integers(0, n, (2, 250))
        dg.apply(insert=(np.concatenate([a[0], a[1]]), np.concatenate([a[1], a[0]])))
        t0 = time.perf_counter()
        update()
        times.append(time.perf_counter() - t0)
    equal = np.array_equal(to_host(inc.levels), to_host(bfs(dg.snapshot(), root).levels))
    rows.append(Row("dynamic", "IncrementalBFS update (500 directed inserts)", float(np.median(times)),
                    "fresh DO bfs", t_fresh, 500, "updates/s", "equal" if equal else "MISMATCH"))
    return rows
