"""g-SDDMM and edge softmax against the NumPy references."""

import numpy as np
import pytest
import reference as ref
from graph_cases import CASES, facebook_edges

import graphkern as gk
from graphkern.dispatch import Kernel

TARGET_PAIRS = [(a, b) for a in "uve" for b in "uve"]


def _operand(g, target, shape, seed):
    rows = {"u": g.num_src, "v": g.num_dst, "e": g.num_edges}[target]
    return (np.random.default_rng(seed).random((rows,) + shape) + 0.5)


def _check(g, op, lt, rt, lshape, rshape, dtype=np.float64, fmt=None):
    L = _operand(g, lt, lshape, 1).astype(dtype) if op != "copy_rhs" else None
    R = _operand(g, rt, rshape, 2).astype(dtype) if op != "copy_lhs" else None
    src, dst = g.edges()
    want = ref.sddmm(src, dst, op, L, R, lt, rt)
    got = gk.sddmm(g, op, L, R, lt, rt, format=fmt)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got.reshape(want.shape), want, **tol)
    assert got.shape[0] == g.num_edges and got.dtype == dtype
    return got


# every op on the CSR path, and on the COO path the dot, one binary op of each kind and both copies (each
# (op, path) pair is a kernel to compile; the target pair is a run-time choice)
SDDMM_OP_FORMATS = ([(op, "csr") for op in ("add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs")]
                    + [(op, "coo") for op in ("dot", "sub", "div", "copy_lhs", "copy_rhs")])


@pytest.mark.fast
@pytest.mark.parametrize("op, fmt", SDDMM_OP_FORMATS)
def test_every_op_and_target_pair(op, fmt):
    src, dst, n = CASES["unsorted_random"]()
    g = gk.Graph.from_coo(src[:1500], dst[:1500], num_nodes=n)
    for lt, rt in TARGET_PAIRS:
        _check(g, op, lt, rt, (3,), (3,), fmt=fmt)


@pytest.mark.parametrize("op, lshape, rshape", [
    ("dot", (4, 8), (1, 8)),       # per-head attention score against a shared query
    ("dot", (4, 8), (4, 8)),
    ("mul", (1, 3), (5, 1)),
    ("add", (2, 1, 3), (1, 4, 1)),
    ("dot", (2, 1, 3, 5), (1, 4, 1, 5)),
    ("sub", (6,), (1,)),
    ("dot", (3, 40), (3, 40)),     # reduced axis over three vector chunks, the last one masked
    ("mul", (37,), (1,)),          # output rows wider than one vector
    ("add", (2, 20), (2, 1)),
])
def test_broadcasting(op, lshape, rshape):
    src, dst, n = CASES["multi_edges"]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    got = _check(g, op, "u", "e", lshape, rshape)
    if op == "dot":
        assert got.shape[-1] == 1


@pytest.fixture
def small_blocks():
    """The blocked SDDMM on small graphs: any size qualifies, and an 'L2 cache' of 8 bytes makes blocks of
    8 destination rows (the least) that every operand outgrows."""
    with gk.tuned(blocked_min_edges=0, l2_cache_bytes=8):
        yield


@pytest.fixture
def small_l2():
    """The blocked SDDMM on small graphs with an 'L2 cache' of 4 KB."""
    with gk.tuned(blocked_min_edges=0, l2_cache_bytes=4096):
        yield


# (op, lhs target, rhs target, feature shape, id dtype): int32 and int64 ids take turns, one kernel each
BLOCKED_SDDMM_CASES = [("dot", "u", "v", (3,), np.int32), ("dot", "v", "u", (20,), np.int64),
                       ("add", "v", "v", (2,), np.int32), ("copy_rhs", "u", "v", (1,), np.int64),
                       ("div", "u", "v", (2,), np.int32)]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("op, lt, rt, shape, idtype", BLOCKED_SDDMM_CASES,
                         ids=[f"{o}-{lt}{rt}-{s[0]}-{np.dtype(i).name}" for o, lt, rt, s, i in BLOCKED_SDDMM_CASES])
def test_blocked_path_on_graph_cases(case, op, lt, rt, shape, idtype, small_blocks):
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    L, R = _operands(g, op, lt, rt, shape)
    kernel = gk.explain(g, "sddmm", op=op, lhs=L, rhs=R, lhs_target=lt, rhs_target=rt).kernel
    assert (kernel is Kernel.SDDMM_BLOCKED) == (g.num_edges > 0), kernel
    got = _check(g, op, lt, rt, shape, shape)
    np.testing.assert_array_equal(got, gk.sddmm(g, op, *_operands(g, op, lt, rt, shape), lt, rt, format="csr"))


@pytest.mark.usefixtures("small_l2")
def test_blocks_of_two_heights_stay_cached():
    """A model alternating two widths reuses both block sets; a third height drops the least recently
    used one. (An 'L2' of 4 KB: float32 rows of F = 16, 32, 64 get blocks of 32, 16 and 8 rows.)"""
    g = gk.graph.kronecker(8)
    src, dst = g.edges()
    rng = np.random.default_rng(5)
    xs = {F: rng.random((g.num_src, F), dtype=np.float32) for F in (16, 32, 64)}

    def cached_blocks():
        return {key[3]: value for key, value in g._cache.items() if key[0] == "dst_blocks"}

    def u_dot_v(F):
        got = gk.sddmm(g, "dot", xs[F], xs[F], "u", "v")
        want = ref.sddmm(src, dst, "dot", xs[F], xs[F], "u", "v")
        np.testing.assert_allclose(got.ravel(), want.ravel(), rtol=1e-5)

    u_dot_v(16)
    u_dot_v(32)
    first = cached_blocks()
    assert sorted(first) == [16, 32]
    u_dot_v(16)
    u_dot_v(32)
    again = cached_blocks()
    assert all(again[h] is first[h] for h in first)  # the second round built nothing
    u_dot_v(16)
    u_dot_v(64)
    assert sorted(cached_blocks()) == [8, 32] and cached_blocks()[32] is first[32]


def _operands(g, op, lt, rt, shape):
    L = _operand(g, lt, shape, 1) if op != "copy_rhs" else None
    R = _operand(g, rt, shape, 2) if op != "copy_lhs" else None
    return L, R


def test_blocked_path_is_not_taken_where_it_loses(small_blocks):
    src, dst, n = CASES["unsorted_random"]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    # an edge operand, no destination operand, wide output rows (8 float64)
    for op, lt, rt, shape in (("dot", "u", "e", (1,)), ("dot", "u", "u", (1,)), ("add", "u", "v", (8,))):
        L, R = _operands(g, op, lt, rt, shape)
        plan = gk.explain(g, "sddmm", op=op, lhs=L, rhs=R, lhs_target=lt, rhs_target=rt)
        assert plan.kernel is not Kernel.SDDMM_BLOCKED, plan
    # a destination operand that fits the cache
    L, R = _operands(g, "dot", "u", "v", (1,))
    with gk.tuned(l2_cache_bytes=R.nbytes):
        assert gk.explain(g, "sddmm", op="dot", lhs=L, rhs=R).kernel is Kernel.SDDMM_CSR
    with gk.tuned(l2_cache_bytes=R.nbytes - 1):
        assert gk.explain(g, "sddmm", op="dot", lhs=L, rhs=R).kernel is Kernel.SDDMM_BLOCKED


def test_blocked_path_writes_zero_at_unused_edge_ids(small_blocks):
    src, dst, n = CASES["multi_edges"]()
    ids = 3 * np.arange(src.size)[::-1] + 1
    g = gk.Graph.from_coo(src, dst, num_nodes=n, eids=ids, num_edge_ids=3 * src.size + 2)
    x = np.random.default_rng(0).random((n, 4))
    got = gk.sddmm(g, "dot", x, x)
    plan = gk.explain(g, "sddmm", op="dot", lhs=x, rhs=x)
    assert (plan.kernel, dict(plan.params, pattern=None)) == (
        Kernel.SDDMM_BLOCKED, {"op": "dot", "lhs_target": "u", "rhs_target": "v", "pattern": None})
    want = np.zeros(g.num_edge_ids)
    want[ids] = np.einsum("ij,ij->i", x[src], x[dst])
    np.testing.assert_allclose(got.ravel(), want, rtol=1e-12)


@pytest.mark.parametrize("case", sorted(CASES))
def test_graph_cases_u_dot_v(case, idtype):
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    _check(g, "dot", "u", "v", (5,), (5,), np.float32)
    _check(g, "mul", "u", "e", (4,), (1,), np.float32)


def test_csr_and_coo_agree_on_a_permuted_edge_order():
    src, dst = gk.graph.kronecker_edges(11)
    g = gk.Graph.from_coo(src, dst)
    x = np.random.default_rng(0).random((g.num_src, 16), dtype=np.float32)
    a = gk.sddmm(g, "dot", x, x, format="csr")
    b = gk.sddmm(g, "dot", x, x, format="coo")
    np.testing.assert_array_equal(a, b)


@pytest.mark.fast
def test_generated_sddmm_names():
    g = gk.Graph.from_coo([0, 1], [1, 0])
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    e = np.array([[10.0, 20.0], [30.0, 40.0]])
    np.testing.assert_array_equal(gk.ops.u_dot_v(g, x, x), [[11.0], [11.0]])
    np.testing.assert_array_equal(gk.ops.e_sub_v(g, e, x), [[7.0, 16.0], [29.0, 38.0]])
    np.testing.assert_array_equal(gk.ops.copy_u(g, x), x)
    np.testing.assert_array_equal(gk.ops.copy_v(g, x), x[::-1])
    assert gk.ops.copy_e(g, e) is e
    sddmm_names = [n for n in gk.ops.__all__ if n.count("_") == 2 and n.split("_")[1] in
                   ("add", "sub", "mul", "div", "dot")]
    assert len(sddmm_names) == 30


def test_facebook_u_dot_v():
    edges = facebook_edges()
    if edges is None:
        pytest.skip("the real-world data files are not available (GRAPHKERN_TEST_DATA)")
    g = gk.Graph.from_coo(edges[0], edges[1])
    x = np.random.default_rng(0).random((g.num_src, 16), dtype=np.float32)
    got = gk.ops.u_dot_v(g, x, x)
    want = np.einsum("ij,ij->i", x[edges[0]], x[edges[1]])[:, None]
    np.testing.assert_allclose(got, want, rtol=1e-5)


# ----------------------------------------------------------------------------------- edge softmax

@pytest.mark.fast
@pytest.mark.parametrize("shape", [(), (1,), (4,), (4, 1)])
@pytest.mark.parametrize("norm_by", ["dst", "src"])
def test_edge_softmax(shape, norm_by):
    src, dst, n = CASES["multi_edges"]()
    src = np.concatenate([src, np.random.default_rng(0).integers(0, 30, 500)])
    dst = np.concatenate([dst, np.random.default_rng(1).integers(0, 30, 500)])
    g = gk.Graph.from_coo(src, dst, num_nodes=32)
    z = np.random.default_rng(2).normal(size=(g.num_edges,) + shape) * 5
    got = gk.edge_softmax(g, z, norm_by=norm_by)
    want = ref.edge_softmax(dst if norm_by == "dst" else src, 32, z)
    assert got.shape == z.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    sums = np.zeros((32,) + shape)
    np.add.at(sums, dst if norm_by == "dst" else src, got)
    has = np.bincount(dst if norm_by == "dst" else src, minlength=32) > 0
    np.testing.assert_allclose(sums[has], 1.0, rtol=1e-12)


@pytest.mark.parametrize("case", sorted(CASES))
def test_edge_softmax_graph_cases(case):
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    z = np.random.default_rng(0).normal(size=(g.num_edges, 2)).astype(np.float32)
    got = gk.edge_softmax(g, z)
    want = ref.edge_softmax(dst, g.num_dst, z)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_edge_softmax_is_stable_for_large_logits():
    g = gk.Graph.from_coo([0, 1], [2, 2])
    got = gk.edge_softmax(g, np.array([1000.0, 1000.0]))
    np.testing.assert_array_equal(got, [0.5, 0.5])


@pytest.mark.parametrize("heads", [1, 3])
def test_edge_order_softmax_is_used_and_independent_of_threads(heads):
    import numba

    g = gk.graph.kronecker(12)  # edge ids follow the CSR; the CSC reaches logits through a permutation
    g.csc()
    z = np.random.default_rng(0).normal(size=(g.num_edges, heads)).astype(np.float32)
    assert gk.explain(g, "edge_softmax", z).kernel is Kernel.EDGE_SOFTMAX_EDGE_ORDER
    first = gk.edge_softmax(g, z)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        single = gk.edge_softmax(g, z)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(first, single)
    src, dst = g.edges()
    np.testing.assert_allclose(first, ref.edge_softmax(dst, g.num_dst, z), rtol=1e-5, atol=1e-7)
    rows = gk.edge_softmax(gk.Graph.from_csc(*g.csc()), z)  # the row kernel on the same edges
    np.testing.assert_allclose(rows, first, rtol=1e-5, atol=1e-7)


def test_fast_exp_accuracy():
    from graphkern.kernels.cpu._fastmath import POW2, fast_exp
    from numba import njit

    @njit
    def many(x, out):
        for i in range(x.size):
            out[i] = fast_exp(x[i], POW2)
        return out

    x = np.linspace(-80, 80, 100_001).astype(np.float32)
    got = many(x, np.empty_like(x))
    want = np.exp(x.astype(np.float64))
    assert np.max(np.abs(got - want) / want) < 5e-7
    x64 = np.linspace(-5, 5, 11)
    np.testing.assert_array_equal(many(x64, np.empty_like(x64)), np.exp(x64))
    # NaN and the ends: NaN must not form a table index (an out-of-bounds read before), and masked
    # logits of -inf weigh exactly 0
    odd = np.array([np.nan, np.inf, -np.inf, -100.0, 100.0, 0.0], dtype=np.float32)
    got = many(odd, np.empty_like(odd))
    np.testing.assert_array_equal(got, [np.nan, np.inf, 0.0, 0.0, np.inf, 1.0])


# The pass that makes the one-shift exponentials, and where its shift argument is: float32 with one head
# adds the per-node sums in the same pass
_EXP_PASSES = {(np.float32, 1): ("_exp_shifted_partial_sum32", 3), (np.float32, 2): ("_exp_shifted_in_range32", 1),
               (np.float64, 1): ("_exp_shifted", 1), (np.float64, 2): ("_exp_shifted", 1)}


@pytest.mark.parametrize("heads", [1, 2])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_edge_order_softmax_one_shift_and_per_node_max_agree(dtype, heads, monkeypatch):
    """Logits within ONE_SHIFT_RANGE take one shift for every row (a sample's max, else the global max);
    wider ones, infinities and NaNs take each node's max. Both give the reference's softmax; a row far
    below the global max (by more than float32's exp range) still sums to 1 on the per-node path."""
    from graphkern.kernels.cpu import edge_softmax as softmax_cpu

    g = gk.graph.kronecker(12)
    g.csc()
    src, dst = g.edges()
    z = (np.random.default_rng(3).normal(size=(g.num_edges, heads)) * 6).astype(dtype)
    assert gk.explain(g, "edge_softmax", z).kernel is Kernel.EDGE_SOFTMAX_EDGE_ORDER
    tol = dict(rtol=1e-5, atol=1e-7) if dtype == np.float32 else dict(rtol=1e-10, atol=1e-14)
    one_shift = gk.edge_softmax(g, z)
    np.testing.assert_allclose(one_shift, ref.edge_softmax(dst, g.num_dst, z), **tol)
    monkeypatch.setitem(softmax_cpu.ONE_SHIFT_RANGE, np.dtype(dtype), -1.0)  # every range is too wide
    per_node = gk.edge_softmax(g, z)
    monkeypatch.undo()
    np.testing.assert_allclose(one_shift, per_node, **tol)
    # one destination's logits 1000 below the rest: the range rules the one shift out, rows stay exact
    wide = z.copy()
    low = dst == dst[0]
    wide[low] -= 1000
    got = gk.edge_softmax(g, wide)
    np.testing.assert_allclose(got, ref.edge_softmax(dst, g.num_dst, wide), **tol)
    np.testing.assert_allclose(got[low].sum(axis=0), 1.0, rtol=1e-5)
    # the first shift is the largest of a strided sample: a logit 20 above the rest, off the sample, passes
    # the headroom, and the exponentials are made again with the largest logit as the shift (the range
    # still allows one shift)
    spike = z.copy()
    spike[1, heads - 1] = z.max() + 20
    assert spike.max() - spike.min() < softmax_cpu.ONE_SHIFT_RANGE[np.dtype(np.float32)]
    calls = []
    name, at = _EXP_PASSES[dtype, heads]
    exp_pass = getattr(softmax_cpu, name)
    monkeypatch.setattr(softmax_cpu, name, lambda *a: calls.append(float(a[at])) or exp_pass(*a))
    got = gk.edge_softmax(g, spike)
    np.testing.assert_allclose(got, ref.edge_softmax(dst, g.num_dst, spike), **tol)
    assert len(calls) == 2 and calls[1] == spike.max() > calls[0]
    # an infinite logit takes the per-node path too: its row puts all weight on it, the others are unchanged
    inf = z.copy()
    inf[0, 0] = np.inf
    got = gk.edge_softmax(g, inf)
    row = dst == dst[0]
    assert got[0, 0] == 1.0 or np.isnan(got[0, 0])
    np.testing.assert_allclose(got[~row], one_shift[~row], **tol)
    # a NaN logit gives NaN for its edge, every other row as before, on both kernels (and no table
    # lookup at a NaN index inside exp)
    nan = z.copy()
    nan[0, 0] = np.nan
    for graph in (g, gk.Graph.from_csc(*g.csc())):
        got = gk.edge_softmax(graph, nan)
        assert np.isnan(got[0, 0])
        np.testing.assert_allclose(got[~row], one_shift[~row], **tol)
