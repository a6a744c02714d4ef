"""g-SpMM's hub split (the blocked kernel's hub sources reduced from their rows in the L2): the graph
cases against the NumPy reference, the planner's rules, and the kernel's two ways to edge rows.

A file of its own so that the test runner's workers share the g-SpMM tests (it spreads them by file)."""

import numpy as np
import pytest
from graph_cases import CASES
from test_spmm import _check, _features, _in_source_order

import graphkern as gk
from graphkern.dispatch import Kernel


@pytest.fixture
def small_blocks():
    """The blocked path on small graphs (as in test_spmm): any size qualifies and an 'L2 cache' of 8 bytes
    makes blocks of 8 rows, so every graph case spans several blocks and every gathered array outgrows it."""
    with gk.tuned(blocked_min_edges=0, l2_cache_bytes=8):
        yield


@pytest.fixture
def any_hub_share():
    """The hub split runs whatever share of the edges the hubs carry."""
    with gk.tuned(hub_min_edge_share=0.0):
        yield


@pytest.fixture
def hub_split(small_blocks, any_hub_share, monkeypatch):
    """The hub split on small graphs: the 3 sources of highest out-degree are the hubs, whatever their
    share of the edges."""
    from graphkern import _sparse_caches

    monkeypatch.setattr(_sparse_caches, "hub_capacity", lambda row_bytes: 3)


def _spmm_plan(g, op, reduce, x, w):
    """gk.explain of ``gk.spmm(g, op, reduce, x, w)``."""
    return gk.explain(g, "spmm", op=op, reduce=reduce, ufeat=x, efeat=w)


# (op, reduce, x row, w row, dtype): chunks unrolled (masked, full), the chunk loop at run time, two heads
HUB_CASES = [("copy_lhs", "sum", (20,), None, np.float64), ("copy_lhs", "mean", (32,), None, np.float32),
             ("copy_lhs", "sum", (40,), None, np.float32), ("copy_lhs", "sum", (80,), None, np.float32),
             ("mul", "mean", (32,), (1,), np.float32), ("mul", "sum", (2, 20), (2, 1), np.float32),
             ("mul", "sum", (20,), (1,), np.float64), ("copy_lhs", "max", (40,), None, np.float32),
             ("mul", "min", (32,), (1,), np.float32), ("div", "max", (2, 20), (2, 1), np.float64)]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("op, reduce, xshape, wshape, dtype", HUB_CASES)
def test_hub_split_on_graph_cases(case, op, reduce, xshape, wshape, dtype, hub_split):
    src, dst, n = CASES[case]()
    # int32 and int64 ids on alternate feature shapes: every graph case meets both widths, and each
    # (op, reducer, shape, dtype) compiles for one of them (the id width does not change a kernel's
    # indexing by shape; the full product compiled twice the kernels)
    idtype = (np.int32, np.int64)[HUB_CASES.index((op, reduce, xshape, wshape, dtype)) % 2]
    g = gk.Graph.from_coo(*_in_source_order(src, dst), num_nodes=n, idtype=idtype)
    x, w = _features(g, op, xshape, wshape or (1,), dtype)
    plan = _spmm_plan(g, op, reduce, x, w)
    assert plan.kernel is (Kernel.SPMM_BLOCKED_HUBS if g.num_edges else Kernel.SPMM_CSC_VECTOR), plan
    if g.num_edges:
        assert "hub split: the" in str(plan)
    got = _check(g, op, reduce, x, w)  # max/min: the arg outputs take the CSC, the plain call the hubs
    np.testing.assert_array_equal(got, gk.spmm(g, op, reduce, x, w))  # deterministic run to run
    if reduce in ("max", "min"):  # the same values as the CSC kernel (ties and NaN cannot move them)
        np.testing.assert_array_equal(got, gk.spmm(g, op, reduce, x, w, format="csc"))


def test_hub_split_max_skips_nan_as_the_csc_does(hub_split):
    src, dst, n = CASES["kronecker_10"]()
    g = gk.Graph.from_coo(*_in_source_order(src, dst), num_nodes=n)
    x = np.random.default_rng(8).random((n, 32)).astype(np.float32)
    hub = int(np.argmax(g.out_degrees()))
    x[hub, :5] = np.nan  # a hub's NaN never wins, as on the CSC
    x[hub + 1:hub + 40, 7] = np.nan
    for reduce in ("max", "min"):
        assert _spmm_plan(g, "copy_lhs", reduce, x, None).kernel is Kernel.SPMM_BLOCKED_HUBS
        got = gk.spmm(g, "copy_lhs", reduce, x)
        np.testing.assert_array_equal(got, gk.spmm(g, "copy_lhs", reduce, x, format="csc"))
        assert not np.isnan(got).any()


@pytest.mark.parametrize("hubs", [1, 10**6])  # one hub; every source with edges a hub (no edges in the blocks)
def test_hub_split_few_and_all_hubs(hubs, small_blocks, any_hub_share, monkeypatch):
    from graphkern import _sparse_caches

    monkeypatch.setattr(_sparse_caches, "hub_capacity", lambda row_bytes: hubs)
    g = gk.graph.kronecker(9)
    rng = np.random.default_rng(3)
    x = rng.random((g.num_src, 24), dtype=np.float32)
    w = rng.random((g.num_edges, 1), dtype=np.float32)
    for op, b in (("copy_lhs", None), ("mul", w)):
        assert _spmm_plan(g, op, "sum", x, b).kernel is Kernel.SPMM_BLOCKED_HUBS
        _check(g, op, "sum", x, b)
    key = next(k for k in g._cache if k[0] == "dst_blocks" and k[2])
    hub_ids, hub_indptr = g._cache[key][-1][:2]
    if hubs == 1:
        assert hub_ids.tolist() == [int(np.argmax(g.out_degrees()))]
    else:
        assert hub_indptr[-1] == g.num_edges and g._cache[key][1][-1] == 0


def test_hub_split_planner_rules():
    """Which calls split off hubs, on a skewed graph big enough for the default rules (Kronecker 12, F =
    32 float32: 256 KB of x, more than the 'L2' of 64 KB set here; its top 128 sources carry 25% of the
    edges)."""
    from graphkern import _sparse_caches

    g = gk.graph.kronecker(12)
    rng = np.random.default_rng(4)
    x = rng.random((g.num_src, 32), dtype=np.float32)
    w1 = rng.random((g.num_edges, 1), dtype=np.float32)
    with gk.tuned(blocked_min_edges=0, l2_cache_bytes=64 << 10):
        hub_ids, share = _sparse_caches.hub_sources(g, _sparse_caches.hub_capacity(128))
        assert hub_ids.size == 128 and share >= gk.tuning.current().hub_min_edge_share
        assert np.all(np.diff(hub_ids) > 0)
        assert _spmm_plan(g, "copy_lhs", "sum", x, None).kernel is Kernel.SPMM_BLOCKED_HUBS
        plan = _spmm_plan(g, "mul", "mean", x, w1)
        assert (plan.kernel, plan.params["op"], plan.params["reduce"]) == (Kernel.SPMM_BLOCKED_HUBS, "mul", "mean")
        assert _spmm_plan(g, "copy_lhs", "max", x, None).kernel is Kernel.SPMM_BLOCKED_HUBS
        # not: rows of one vector (F = 16), arg outputs (their ties keep source order), copy_rhs (reads
        # no x), edge rows wider than 16 bytes (the permutation into CSC order would not pay)
        assert _spmm_plan(g, "copy_lhs", "sum", x[:, :16].copy(), None).kernel is Kernel.SPMM_BLOCKED
        plan = gk.explain(g, "spmm", op="copy_lhs", reduce="max", return_arg=True, ufeat=x)
        assert (plan.kernel, plan.params["arg"]) == (Kernel.SPMM_CSC_VECTOR, True)
        edge_rows = np.ones((g.num_edges, 32), np.float32)
        assert _spmm_plan(g, "copy_rhs", "sum", None, edge_rows).kernel is not Kernel.SPMM_BLOCKED_HUBS
        assert _spmm_plan(g, "mul", "sum", x[:, :16].copy(), w1).kernel is Kernel.SPMM_BLOCKED
        wide = rng.random((g.num_edges, 32), dtype=np.float32)
        assert _spmm_plan(g, "mul", "sum", x, wide).kernel is Kernel.SPMM_CSC_VECTOR
        np.testing.assert_allclose(gk.spmm(g, "mul", "sum", x, wide), gk.spmm(g, "mul", "sum", x, wide,
                                                                              format="csc"))
        # hubs that carry too few edges: no split, and F = 32 stays on the CSC
        with gk.tuned(hub_min_edge_share=0.9):
            assert _spmm_plan(g, "copy_lhs", "sum", x, None).kernel is Kernel.SPMM_CSC_VECTOR


def test_hub_split_kernel_reads_edge_rows_by_id_or_in_its_order(hub_split):
    """The kernel's two ways to reach edge rows (through the ids, or permuted into its own order first)
    give the same bits, with edge ids spread over a larger id space."""
    from graphkern.kernels.cpu import spmm_blocked as kernels

    from graphkern import _broadcast, _sparse_caches

    src, dst, n = CASES["kronecker_10"]()
    src, dst = _in_source_order(src, dst)
    ids = 2 * np.arange(src.size)[::-1]
    g = gk.Graph.from_coo(src, dst, num_nodes=n, eids=ids, num_edge_ids=2 * src.size + 1)
    rng = np.random.default_rng(6)
    x = rng.random((n, 32), dtype=np.float32)
    w = np.full((g.num_edge_ids, 1), np.nan, np.float32)  # NaN at unused ids: never read
    w[ids] = rng.random((src.size, 1), dtype=np.float32)
    via_order = gk.spmm(g, "mul", "sum", x, w)
    assert np.isfinite(via_order).all()
    height = _sparse_caches.block_height(128)
    bounds, block_ptr, groups, s, d, eid, hubs = _sparse_caches.dst_blocks(g, "csc", height, 3)
    bc = _broadcast.analyse("mul", (32,), (1,))
    kernel = kernels.spmm_blocked_kernel("mul", "sum", bc.pattern, 2, False, True, 2)
    out = np.empty((n, 32), np.float32)
    z = np.zeros(1, np.int64)
    arg = np.zeros((1, 1), g.idtype)
    kernel(bounds, block_ptr, groups, s, d, eid, True, g.in_degrees(), x, w, bc.A, bc.B, z, z, out, arg, arg, False,
           False, hubs[1], hubs[2], hubs[3], np.take(x, hubs[0], axis=0), hubs[2].size)
    np.testing.assert_array_equal(out, via_order)
    with pytest.raises(ValueError, match="has_eids"):  # compiled to read w through the ids
        kernel(bounds, block_ptr, groups, s, d, eid, False, g.in_degrees(), x, w, bc.A, bc.B, z, z, out, arg, arg,
               False, False, hubs[1], hubs[2], hubs[3], np.take(x, hubs[0], axis=0), hubs[2].size)
    compact = gk.Graph.from_coo(src, dst, num_nodes=n)  # edge k has id ids[k]
    np.testing.assert_allclose(via_order, gk.spmm(compact, "mul", "sum", x, w[ids], format="csc"), rtol=1e-5)


def test_hub_split_kernel_refuses_what_it_cannot_run():
    from graphkern.kernels.cpu.spmm_blocked import spmm_blocked_kernel

    for op, reduce, pattern in (("copy_rhs", "sum", (0, 0, 0, 1, False)), ("add", "sum", (0, 0, 0, 0, True))):
        with pytest.raises(ValueError, match="hub split"):
            spmm_blocked_kernel(op, reduce, pattern, 1, hubs=True)
