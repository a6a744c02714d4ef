"""The sparse kernels never read or write out of bounds: their risky paths, run with Numba's bounds checks.

An out-of-bounds write in a kernel corrupts the heap silently and crashes much later (it did once: a
placeholder arg array written for empty rows). Here g-SpMM, g-SDDMM and the edge softmax run in a subprocess
with ``NUMBA_BOUNDSCHECK=1`` (and a Numba cache of bounds-checked builds), where any such access raises
IndexError instead. tests/test_bounds_graph.py does the same for the format builds, BFS and the dynamic graph.

Bounds-checked compilation is slow and each specialisation compiles anew, so the script runs one
specialisation per distinct indexing path rather than every (op, reducer, layout) combination. What a
kernel indexes depends on the kernel (each factory), on which operands the op reads (x only, w only,
both: the unread one and the unused arg output are one-element placeholders that must never be touched),
on whether arg outputs are written, on the layout constants (narrow or wide rows, one head or several,
unrolled row chunks, unmasked full vectors, edge rows read through the ids or in the kernel's order, the
hub split) and on the broadcast pattern class (strided, a broadcast operand, offset tables). It does not
depend on the float dtype (every vector path is ``LANES`` elements, whatever the dtype), on max against
min (the compare's direction), on sum against mean (a run-time flag; the division indexes nothing) or on
which binary op combines the operands. Each call below says which of these it stands for.
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


def spmm(fmt, op, reducer, with_arg=False, plan=None, graph=g, a=None, b=None):
    a, b = operands[op] if a is None and b is None else (a, b)
    if plan is not None:
        assert gk.explain(graph, "spmm", op=op, reduce=reducer, ufeat=a, efeat=b, format=fmt).kernel is plan
    gk.spmm(graph, op, reducer, a, b, format=fmt, return_arg=with_arg)


# CSC, explicit vectors, narrow rows: x only and w only, each with its arg output (the other one a placeholder),
# and without (a run-time flag of the same kernel)
for op in ("copy_lhs", "copy_rhs"):
    spmm("csc", op, "max", plan=Kernel.SPMM_CSC_VECTOR); spmm("csc", op, "max", True)
# CSC, wide rows of several heads (groups of four chunks, the last ones past the row's end), both operands,
# w broadcast over each head's features: the sum, and the mean
spmm("csc", "mul", "sum", a=rng.random((36, 5, 20)), b=rng.random((400, 5, 1)), plan=Kernel.SPMM_CSC_VECTOR)
spmm("csc", "mul", "mean", a=rng.random((36, 5, 20)), b=rng.random((400, 5, 1)))
# CSC, scalar, offset tables (the general broadcast)
spmm(None, "add", "sum", a=rng.random((36, 2, 1, 3)), b=rng.random((400, 1, 4, 1)), plan=Kernel.SPMM_CSC)
# COO (partials per thread, then combined): x only and w only with arg outputs, both operands broadcast
spmm("coo", "copy_lhs", "max"); spmm("coo", "copy_lhs", "max", True)
spmm("coo", "copy_rhs", "min", True)
spmm("coo", "mul", "sum", plan=Kernel.SPMM_COO); spmm("coo", "mul", "mean")
# blocked, narrow rows, edge rows read through the ids: x only and w only, each with its arg output (the
# block's start values fill only the real one); sums and the reordered edge rows run in the hub cases below
spmm("csr", "copy_lhs", "min", plan=Kernel.SPMM_BLOCKED); spmm("csr", "copy_lhs", "min", True)
spmm("csr", "copy_rhs", "max", True, plan=Kernel.SPMM_BLOCKED)
by_src = np.argsort(src, kind="stable")                 # the hub split: sums of x, hubs' rows in 256 bytes
gs = gk.Graph.from_coo(src[by_src], dst[by_src], num_nodes=36)  # (it needs the CSC's rows in source order)
x32 = rng.random((36, 32)).astype(np.float32); w32 = rng.random((400, 1)).astype(np.float32)
xw = rng.random((36, 40)).astype(np.float32)
# the hub split, and the blocks for the other edges: rows of unrolled chunks, the last one masked (x only);
# rows of whole vectors, unmasked, with the edge rows moved to the kernel's order (both operands); rows of
# several heads, masked, edge rows in the kernel's order, the mean
for a, b, op, reduce in ((xw, None, "copy_lhs", "max"), (x32, w32, "mul", "min"),
                         (x32[:, :24].reshape(36, 2, 12).copy(), rng.random((400, 2, 1)).astype(np.float32),
                          "mul", "mean")):
    with gk.tuned(hub_min_edge_share=0):
        spmm(None, op, reduce, graph=gs, a=a, b=b, plan=Kernel.SPMM_BLOCKED_HUBS)
# g-SDDMM over CSR rows and over the COO: the left operand only, the right one only, both (elementwise and a
# dot; broadcast below) in one or the other; the targets are a run-time argument of one kernel, so each
# kernel runs node and edge operands on either side
for fmt, op in (("csr", "copy_lhs"), ("csr", "dot"), ("csr", "add"), ("coo", "copy_rhs")):
    for lt, rt in (("u", "v"), ("e", "u"), ("v", "e")):
        L = {"u": x, "v": x, "e": e3}[lt]; R = {"u": x, "v": x, "e": e3}[rt]
        assert gk.explain(g, "sddmm", op=op, lhs=L, rhs=R, lhs_target=lt, rhs_target=rt,
                          format=fmt).kernel.name.endswith(fmt.upper())
        gk.sddmm(g, op, None if op == "copy_rhs" else L, None if op == "copy_lhs" else R, lt, rt, format=fmt)
gk.sddmm(g, "mul", e3, x[:, :1].copy(), "e", "v", format="coo")  # both operands in the COO, one broadcast
# the blocked g-SDDMM (blocks of 8 rows): a dot over several vectors, and the one-vector dot, one kernel
for feats in (xw, xw[:, :8].copy()):
    assert gk.explain(g, "sddmm", op="dot", lhs=feats, rhs=feats).kernel is Kernel.SDDMM_BLOCKED
    gk.sddmm(g, "dot", feats, feats)
z = rng.random((400, 2)).astype(np.float32)
gk.edge_softmax(g, z); gk.edge_softmax(g, z, norm_by="src")
# the edge-order kernel on a graph of enough edges per node (random: no generator to compile here)
k = gk.Graph.from_coo(rng.integers(0, 1024, 21102), rng.integers(0, 1024, 21102), num_nodes=1024)
assert gk.explain(k, "edge_softmax", logits=rng.random((21102, 1))).kernel is Kernel.EDGE_SOFTMAX_EDGE_ORDER
gk.edge_softmax(k, rng.random((21102, 1)).astype(np.float32))
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
