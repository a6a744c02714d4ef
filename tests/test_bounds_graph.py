"""The format builds, BFS and the dynamic graph never read or write out of bounds, run with Numba's bounds
checks in a subprocess (see tests/test_bounds.py, which does the same for the sparse kernels)."""

SCRIPT = """
import numpy as np
import graphkern as gk
from graphkern.kernels.cpu import sort

sort._BUCKETED_MIN_ELEMENTS, sort._BUCKETED_MIN_KEYS, sort._BUCKET_BITS = 0, 0, 2  # the two-pass sort
rng = np.random.default_rng(0)
src = rng.integers(0, 30, 400)
dst = rng.integers(0, 30, 400)
g = gk.Graph.from_coo(src, dst, num_nodes=36)          # nodes 30..35: no edges at all
g.csr(); g.csc(); g.reverse().csr(); g.simple()
sort._MIN_ELEMENTS_PER_CHUNK = 16                      # several parts: the known-counts transpose
sort.transpose_compressed(*g._raw("csr"), 36, col_counts=np.bincount(dst, minlength=36))
sort._MIN_ELEMENTS_PER_CHUNK = 1 << 15
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
"""


def test_graph_kernels_stay_in_bounds(run_bounds_checked):
    run_bounds_checked(SCRIPT)
