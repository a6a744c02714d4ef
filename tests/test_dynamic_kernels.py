"""Kernels called on a DynamicGraph: SpMM and SDDMM on its snapshot (built once per change and reused) or,
with format="packed", straight over the packed arrays; BFS on the packed arrays while no snapshot is
current. The plan says which, and the results equal the snapshot's in every case."""

import numpy as np
import pytest

import graphkern as gk
from graphkern.dispatch import Kernel


@pytest.fixture
def dg():
    rng = np.random.default_rng(0)
    n = 60
    g = gk.DynamicGraph(n)
    e = rng.integers(0, n, (2, 500))
    g.apply(insert=(e[0], e[1]))
    d = rng.integers(0, n, (2, 150))
    g.apply(delete=(d[0], d[1]))  # tombstones and freed ids inside the packed array
    g.apply(insert=([0, n - 1, 5], [n - 1, 0, 5]))  # edges to node 0, from node n-1 and a self-loop
    return g


def _fresh_snapshot(dg):
    dg._snapshot_cache = None
    snap = dg.snapshot()
    dg._snapshot_cache = None
    return snap


# every reducer with both operands and with each copy, and the ops between them (each (op, reducer)
# pair is a compiled specialisation of its own; mean shares the sum's)
@pytest.mark.parametrize("op,reduce", [("add", "sum"), ("sub", "max"), ("mul", "min"), ("add", "mean"),
                                       ("copy_lhs", "max"), ("copy_rhs", "sum")])
@pytest.mark.fast
def test_spmm_on_the_packed_arrays(dg, op, reduce):
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 2, (dg.num_nodes, 3)) if op != "copy_rhs" else None
    w = rng.uniform(0.5, 2, (dg.max_edge_id, 1)) if op != "copy_lhs" else None
    with_arg = reduce in ("max", "min")
    plan = gk.explain(dg, "spmm", op=op, reduce=reduce, ufeat=x, efeat=w, return_arg=with_arg, format="packed")
    assert (plan.kernel, plan.format) == (Kernel.SPMM_PACKED, "packed")
    got = gk.spmm(dg, op, reduce, x, w, return_arg=with_arg, format="packed")
    want = gk.spmm(_fresh_snapshot(dg), op, reduce, x, w, return_arg=with_arg)
    if not with_arg:
        got, want = (got,), (want,)
    for a, b in zip(got, want):
        if b is None:
            assert a is None
        else:
            np.testing.assert_allclose(a, b)
    assert dg.cached_snapshot() is None  # the packed path built no snapshot


@pytest.mark.parametrize("op,lt,rt", [("dot", "u", "v"), ("mul", "e", "u"), ("sub", "v", "e"), ("copy_lhs", "u", "v"),
                                      ("copy_rhs", "u", "e")])
def test_sddmm_on_the_packed_arrays(dg, op, lt, rt):
    rng = np.random.default_rng(2)
    rows = {"u": dg.num_nodes, "v": dg.num_nodes, "e": dg.max_edge_id}
    L = rng.random((rows[lt], 4)) if op != "copy_rhs" else None
    R = rng.random((rows[rt], 4)) if op != "copy_lhs" else None
    plan = gk.explain(dg, "sddmm", op=op, lhs=L, rhs=R, lhs_target=lt, rhs_target=rt, format="packed")
    assert (plan.kernel, plan.format) == (Kernel.SDDMM_PACKED, "packed")
    got = gk.sddmm(dg, op, L, R, lt, rt, format="packed")
    np.testing.assert_allclose(got, gk.sddmm(_fresh_snapshot(dg), op, L, R, lt, rt))


@pytest.mark.fast
def test_bfs_on_the_packed_arrays(dg):
    assert gk.explain(dg, "bfs", 0).kernel is Kernel.BFS_PACKED_TOP_DOWN
    snap = _fresh_snapshot(dg)
    for source in (0, 5, dg.num_nodes - 1):
        res = gk.bfs(dg, source)
        np.testing.assert_array_equal(res.levels, gk.bfs(snap, source).levels)
        gk.graph500.validate(snap, source, res.parents, res.levels, directed=True)
    assert [r.source for r in gk.bfs(dg, sources=[1, 2])] == [1, 2]


def test_a_current_snapshot_is_used_and_a_change_retires_it(dg):
    x = np.ones((dg.num_nodes, 2))
    assert dg.cached_snapshot() is None
    out = gk.spmm(dg, "copy_lhs", "sum", x)  # builds the snapshot and keeps it
    snap = dg.cached_snapshot()
    assert snap is not None and dg.snapshot() is snap
    np.testing.assert_allclose(out, gk.spmm(snap, "copy_lhs", "sum", x))
    assert gk.explain(dg, "spmm", op="copy_lhs", reduce="sum", ufeat=x).format not in ("packed", "snapshot")
    assert gk.explain(dg, "bfs", 0).kernel is Kernel.BFS_DIRECTION_OPTIMIZING  # a current snapshot: the full search
    assert dg.apply(delete=([59], [59]))["deleted"] == 0  # a no-op batch keeps the snapshot
    assert dg.cached_snapshot() is snap
    dg.apply(insert=([1], [2]), delete=([0], [59]))
    assert dg.cached_snapshot() is None
    assert gk.explain(dg, "bfs", 0).kernel is Kernel.BFS_PACKED_TOP_DOWN
    with pytest.raises(ValueError, match="'packed' runs on a DynamicGraph"):
        gk.spmm(snap, "copy_lhs", "sum", x, format="packed")


def test_edge_softmax_and_forced_formats_use_a_snapshot(dg):
    z = np.random.default_rng(3).random((dg.max_edge_id, 2))
    got = gk.edge_softmax(dg, z)
    np.testing.assert_allclose(got, gk.edge_softmax(_fresh_snapshot(dg), z))
    x = np.ones((dg.num_nodes, 2))
    dg._snapshot_cache = None
    gk.spmm(dg, "copy_lhs", "sum", x, format="coo")
    assert dg.cached_snapshot() is not None
    assert gk.explain(dg, "spmm", op="copy_lhs", reduce="sum", ufeat=x, format="coo").kernel is Kernel.SPMM_COO


def test_bad_input_names_the_dynamic_graph_sizes(dg):
    with pytest.raises(ValueError, match=f"expected {dg.num_nodes} rows"):
        gk.spmm(dg, "copy_lhs", "sum", np.ones((3, 2)))
    with pytest.raises(ValueError, match=f"expected {dg.max_edge_id} rows"):
        gk.spmm(dg, "copy_rhs", "sum", None, np.ones((3, 2)))
