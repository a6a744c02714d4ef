"""Compiled kernels never read or write out of bounds: the risky paths, run with Numba's bounds checks.

An out-of-bounds write in a kernel corrupts the heap silently and crashes much later (it did once: a
placeholder arg array written for empty rows). Here the kernels of every family run in a subprocess with
``NUMBA_BOUNDSCHECK=1`` (and a Numba cache of bounds-checked builds), where any such access raises IndexError instead.
"""

import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import numpy as np
    import graphkern as gk
    from graphkern.dispatch import Kernel
    from graphkern.kernels.cpu import sort

    # (the knobs of TUNING are set for the whole script)
    sort._BUCKETED_MIN_ELEMENTS, sort._BUCKETED_MIN_KEYS, sort._BUCKET_BITS = 0, 0, 2
    rng = np.random.default_rng(0)
    src = rng.integers(0, 30, 400)
    dst = rng.integers(0, 30, 400)
    g = gk.Graph.from_coo(src, dst, num_nodes=36)          # nodes 30..35: no edges at all
    g.csr(); g.csc(); g.reverse().csr(); g.simple()
    sort._MIN_ELEMENTS_PER_CHUNK = 16                      # several parts: the known-counts transpose
    sort.transpose_compressed(*g._raw("csr"), 36, col_counts=np.bincount(dst, minlength=36))
    sort._MIN_ELEMENTS_PER_CHUNK = 1 << 15
    x = rng.random((36, 3)); w = rng.random((400, 1)); e3 = rng.random((400, 3))
    for fmt in ("csc", "coo", "csr"):
        for op, a, b in (("copy_lhs", x, None), ("copy_rhs", None, e3), ("mul", x, w)):
            for reduce in ("sum", "mean", "max", "min"):
                gk.spmm(g, op, reduce, a, b, format=fmt)
                if reduce in ("max", "min"):
                    gk.spmm(g, op, reduce, a, b, format=fmt, return_arg=True)
    gk.spmm(g, "add", "sum", rng.random((36, 2, 1, 3)), rng.random((400, 1, 4, 1)))   # offset tables
    xw = rng.random((36, 40)).astype(np.float32); ew = rng.random((400, 33))   # rows of several vector chunks
    for reduce in ("sum", "max"):
        gk.spmm(g, "copy_lhs", reduce, xw, format="csc", return_arg=reduce == "max")
        gk.spmm(g, "copy_rhs", reduce, None, ew, format="csc", return_arg=reduce == "max")
        gk.spmm(g, "mul", reduce, rng.random((36, 5, 20)), rng.random((400, 5, 1)), format="csc")
    by_src = np.argsort(src, kind="stable")                 # the hub split: sums of x, hubs' rows in 256 bytes
    gs = gk.Graph.from_coo(src[by_src], dst[by_src], num_nodes=36)  # (it needs the CSC's rows in source order)
    x32 = rng.random((36, 32)).astype(np.float32); w32 = rng.random((400, 1)).astype(np.float32)
    for a, b, op in ((rng.random((36, 20)), None, "copy_lhs"), (xw, None, "copy_lhs"), (x32, w32, "mul"),
                     (x32[:, :24].reshape(36, 2, 12).copy(), rng.random((400, 2, 1)).astype(np.float32), "mul")):
        for reduce in ("sum", "mean", "max", "min"):
            with gk.tuned(hub_min_edge_share=0):
                plan = gk.explain(gs, "spmm", op=op, reduce=reduce, ufeat=a, efeat=b)
                assert plan.kernel is Kernel.SPMM_BLOCKED_HUBS, plan
                gk.spmm(gs, op, reduce, a, b)
    gk.sddmm(g, "dot", xw, xw); gk.sddmm(g, "add", xw, xw); gk.sddmm(g, "mul", ew, x[:, :1].copy(), "e", "v")
    x8 = xw[:, :8].copy()                                  # blocked SDDMM: one-vector dots, blocks of 8 rows
    gk.sddmm(g, "dot", x8, x8, "v", "u"); gk.sddmm(g, "div", x8[:, :1].copy(), x8[:, :1].copy(), "v", "v")
    for fmt in ("csr", "coo"):
        for op in ("dot", "copy_lhs", "copy_rhs", "add"):
            for lt, rt in (("u", "v"), ("e", "u"), ("v", "e")):
                L = {"u": x, "v": x, "e": e3}[lt]; R = {"u": x, "v": x, "e": e3}[rt]
                gk.sddmm(g, op, None if op == "copy_rhs" else L, None if op == "copy_lhs" else R, lt, rt,
                         format=fmt)
    z = rng.random((400, 2)).astype(np.float32)
    gk.edge_softmax(g, z); gk.edge_softmax(g, z, norm_by="src")
    gk.edge_softmax(gk.graph.kronecker(10), rng.random((21102, 1)).astype(np.float32))  # edge-order kernel
    gk.edge_softmax(gk.graph.kronecker(10), rng.random((21102, 2)).astype(np.float32))  # its multi-head exp
    odd = rng.random((21102, 1)).astype(np.float32)
    odd[:3, 0] = [np.nan, np.inf, -np.inf]                 # the per-node max path, NaN reaching exp
    gk.edge_softmax(gk.graph.kronecker(10), odd); z[0, 0] = np.nan; gk.edge_softmax(g, z)
    k = gk.graph.kronecker(10)
    for alg in ("direction_optimizing", "top_down", "bottom_up", "spmsv"):
        for root in (0, 458, 1023):
            r = gk.bfs(k, root, algorithm=alg)
            gk.graph500.validate(k, root, r.parents, r.levels)
    for root in (0, 458):
        with gk.tuned(bfs_private_maps_max_bytes=0):        # top-down on the shared map (claim buffers)
            r = gk.bfs(gk.graph.kronecker(10), root, algorithm="top_down")
        gk.graph500.validate(k, root, r.parents, r.levels)
    dg = gk.DynamicGraph(50)                                # GPMA: locate with prefetching, merges, rebuilds
    dg.apply(insert=(rng.integers(0, 50, 3000), rng.integers(0, 50, 3000)))
    dg.apply(delete=(rng.integers(0, 50, 1000), rng.integers(0, 50, 1000)),
             insert=(rng.integers(0, 50, 300), rng.integers(0, 50, 300)))
    dg.contains(rng.integers(0, 50, 100), rng.integers(0, 50, 100)); dg.snapshot(csc=True)
    gk.graph500.search_keys(k, 8)
    gk.graph.kronecker_edges(8)
    print("ok")
""")


# the blocked path on a small graph (an 'L2' of 1 KB: blocks of 8 rows), narrow edge rows moved to block order
TUNING = "blocked_min_edges=0,l2_cache_bytes=1024,edge_rows_to_blocks_min_blocks=1"


def test_kernels_stay_in_bounds(bounds_checked_env):
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=dict(bounds_checked_env, GRAPHKERN_TUNING=TUNING),
                          capture_output=True, text=True, timeout=1200)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    assert proc.stdout.strip().endswith("ok")
