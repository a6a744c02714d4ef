"""The sparse kernels never read or write out of bounds: their risky paths, run with Numba's bounds checks.

An out-of-bounds write in a kernel corrupts the heap silently and crashes much later (it did once: a
placeholder arg array written for empty rows). Here g-SpMM, g-SDDMM and the edge softmax run in a subprocess
with ``NUMBA_BOUNDSCHECK=1`` (and a Numba cache of bounds-checked builds), where any such access raises
IndexError instead. tests/test_bounds_graph.py does the same for the format builds, BFS and the dynamic graph.

A kernel compiles per (format, op, reducer), and bounds-checked compilation is slow, so the g-SpMM calls
cover every pair of those values once rather than every triple: a kernel's indexing depends on the format,
on which operands the op reads and on whether the reducer keeps arg outputs, one at a time or in pairs.
``mean`` runs ``sum``'s kernel and arg outputs are a run-time flag, so both ride along for free.
"""

SCRIPT = """
import numpy as np
import graphkern as gk
from graphkern.dispatch import Kernel

rng = np.random.default_rng(0)
src = rng.integers(0, 30, 400)
dst = rng.integers(0, 30, 400)
g = gk.Graph.from_coo(src, dst, num_nodes=36)          # nodes 30..35: no edges at all
x = rng.random((36, 3)); w = rng.random((400, 1)); e3 = rng.random((400, 3))
operands = {"copy_lhs": (x, None), "copy_rhs": (None, e3), "mul": (x, w)}
for fmt, op, reduce in (("csc", "copy_lhs", "sum"), ("csc", "copy_rhs", "max"), ("csc", "mul", "min"),
                        ("coo", "copy_lhs", "max"), ("coo", "copy_rhs", "min"), ("coo", "mul", "sum"),
                        ("csr", "copy_lhs", "min"), ("csr", "copy_rhs", "sum"), ("csr", "mul", "max")):
    a, b = operands[op]
    calls = (("sum", False), ("mean", False)) if reduce == "sum" else ((reduce, False), (reduce, True))
    for reducer, with_arg in calls:
        gk.spmm(g, op, reducer, a, b, format=fmt, return_arg=with_arg)
gk.spmm(g, "add", "sum", rng.random((36, 2, 1, 3)), rng.random((400, 1, 4, 1)))   # offset tables
xw = rng.random((36, 40)).astype(np.float32); ew = rng.random((400, 33))   # rows of several vector chunks
gk.spmm(g, "copy_lhs", "max", xw, format="csc", return_arg=True)
gk.spmm(g, "copy_rhs", "max", None, ew, format="csc", return_arg=True)
gk.spmm(g, "mul", "sum", rng.random((36, 5, 20)), rng.random((400, 5, 1)), format="csc")
by_src = np.argsort(src, kind="stable")                 # the hub split: sums of x, hubs' rows in 256 bytes
gs = gk.Graph.from_coo(src[by_src], dst[by_src], num_nodes=36)  # (it needs the CSC's rows in source order)
x32 = rng.random((36, 32)).astype(np.float32); w32 = rng.random((400, 1)).astype(np.float32)
for a, b, op, reduce in ((rng.random((36, 20)), None, "copy_lhs", "sum"), (xw, None, "copy_lhs", "max"),
                         (x32, w32, "mul", "min"),
                         (x32[:, :24].reshape(36, 2, 12).copy(), rng.random((400, 2, 1)).astype(np.float32),
                          "mul", "mean")):
    with gk.tuned(hub_min_edge_share=0):
        plan = gk.explain(gs, "spmm", op=op, reduce=reduce, ufeat=a, efeat=b)
        assert plan.kernel is Kernel.SPMM_BLOCKED_HUBS, plan
        gk.spmm(gs, op, reduce, a, b)
gk.sddmm(g, "dot", xw, xw); gk.sddmm(g, "add", xw, xw); gk.sddmm(g, "mul", ew, x[:, :1].copy(), "e", "v")
x8 = xw[:, :8].copy()                                  # blocked SDDMM: one-vector dots, blocks of 8 rows
gk.sddmm(g, "dot", x8, x8, "v", "u"); gk.sddmm(g, "div", x8[:, :1].copy(), x8[:, :1].copy(), "v", "v")
for fmt in ("csr", "coo"):                             # target pairs are a run-time argument of one kernel
    for op in ("dot", "copy_lhs", "copy_rhs", "add"):
        for lt, rt in (("u", "v"), ("e", "u"), ("v", "e")):
            L = {"u": x, "v": x, "e": e3}[lt]; R = {"u": x, "v": x, "e": e3}[rt]
            gk.sddmm(g, op, None if op == "copy_rhs" else L, None if op == "copy_lhs" else R, lt, rt,
                     format=fmt)
z = rng.random((400, 2)).astype(np.float32)
gk.edge_softmax(g, z); gk.edge_softmax(g, z, norm_by="src")
k = gk.graph.kronecker(10)
gk.edge_softmax(k, rng.random((21102, 1)).astype(np.float32))  # edge-order kernel
gk.edge_softmax(k, rng.random((21102, 2)).astype(np.float32))  # its multi-head exp
odd = rng.random((21102, 1)).astype(np.float32)
odd[:3, 0] = [np.nan, np.inf, -np.inf]                 # the per-node max path, NaN reaching exp
gk.edge_softmax(k, odd); z[0, 0] = np.nan; gk.edge_softmax(g, z)
print("ok")
"""

# the blocked path on a small graph (an 'L2' of 1 KB: blocks of 8 rows), narrow edge rows moved to block order
TUNING = "blocked_min_edges=0,l2_cache_bytes=1024,edge_rows_to_blocks_min_blocks=1"


def test_sparse_kernels_stay_in_bounds(run_bounds_checked):
    run_bounds_checked(SCRIPT, TUNING)
