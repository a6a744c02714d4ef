"""g-SpMM against the NumPy reference: every op and reducer, broadcasting, both paths, the graph cases."""

import numpy as np
import pytest
import reference as ref
from graph_cases import CASES, facebook_edges
from hypothesis import given, settings
from hypothesis import strategies as st

import graphkern as gk
from graphkern.dispatch import Kernel

OPS = ["add", "sub", "mul", "div", "copy_lhs", "copy_rhs"]
REDUCERS = ["sum", "max", "min", "mean"]


def _tol(dtype, degree=1):
    if dtype == np.float32:
        return dict(rtol=1e-4, atol=1e-4 * max(1.0, np.sqrt(degree)))
    return dict(rtol=1e-10, atol=1e-10 * max(1.0, np.sqrt(degree)))


def _features(g, op, xshape, wshape, dtype, seed=0):
    rng = np.random.default_rng(seed)
    x = (rng.random((g.num_src,) + xshape) + 0.5).astype(dtype) if op != "copy_rhs" else None
    # positive, away from zero so div is tame; quantised so max/min ties really happen
    w = (np.round(rng.random((g.num_edges,) + wshape) * 8) / 4 + 0.5).astype(dtype) if op != "copy_lhs" else None
    return x, w


def _check(g, op, reduce, x, w, fmt=None):
    src, dst = g.edges()
    csc_eids = g.csc().eids if g.allows_format("csc") else np.argsort(dst, kind="stable")
    want, want_u, want_e = ref.spmm(src, dst, csc_eids, g.num_dst, op, reduce, x, w)
    dtype = (x if x is not None else w).dtype
    deg = int(g.in_degrees().max()) if g.num_edges else 1
    if reduce in ("max", "min"):
        got, arg_u, arg_e = gk.spmm(g, op, reduce, x, w, return_arg=True, format=fmt)
        np.testing.assert_allclose(got.reshape(want.shape), want, **_tol(dtype))
        if op != "copy_rhs":
            np.testing.assert_array_equal(arg_u.reshape(want.shape), want_u)
        else:
            assert arg_u is None
        if op != "copy_lhs":
            np.testing.assert_array_equal(arg_e.reshape(want.shape), want_e)
        else:
            assert arg_e is None
        plain = gk.spmm(g, op, reduce, x, w, format=fmt)
        np.testing.assert_array_equal(plain, got)
    else:
        got = gk.spmm(g, op, reduce, x, w, format=fmt)
        np.testing.assert_allclose(got.reshape(want.shape), want, **_tol(dtype, deg))
    assert got.dtype == dtype
    return got


# Every op and every reducer on both paths, each reducer with each operand form (both operands, x only,
# w only: the arg outputs differ). An op is one line of the message and max and min one compare, so the
# binary ops besides mul run with one sum-like and one extreme reducer, not all four (each (op, reducer)
# pair is a kernel of its own to compile; mean shares the sum's).
OP_REDUCE_FORMATS = (
    [(op, r, "csc") for op in ("mul", "copy_lhs", "copy_rhs") for r in REDUCERS]
    + [("add", "sum", "csc"), ("add", "max", "csc"), ("sub", "mean", "csc"), ("sub", "min", "csc"),
       ("div", "mean", "csc"), ("div", "max", "csc")]
    + [("mul", r, "coo") for r in REDUCERS] + [("copy_lhs", "mean", "coo"), ("copy_lhs", "min", "coo")]
)


@pytest.mark.fast
@pytest.mark.parametrize("op, reduce, fmt", OP_REDUCE_FORMATS)
def test_every_op_and_reducer(op, reduce, fmt):
    src, dst, n = CASES["multi_edges"]()
    src = np.concatenate([src, np.random.default_rng(1).integers(0, 40, 400)])
    dst = np.concatenate([dst, np.random.default_rng(2).integers(0, 40, 400)])
    g = gk.Graph.from_coo(src, dst, num_nodes=45)  # nodes 40..44 have no in-edges
    x, w = _features(g, op, (3,), (3,), np.float64)
    _check(g, op, reduce, x, w, fmt)


# (op, reducer, id dtype) for the graph cases: every reducer family with both id widths between them
GRAPH_CASE_KERNELS = [("copy_lhs", "sum", np.int32), ("copy_lhs", "sum", np.int64), ("mul", "max", np.int64),
                      ("add", "mean", np.int32)]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("op, reduce, idtype", GRAPH_CASE_KERNELS,
                         ids=[f"{o}-{r}-{np.dtype(i).name}" for o, r, i in GRAPH_CASE_KERNELS])
def test_graph_cases(case, op, reduce, idtype):
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    x, w = _features(g, op, (4,), (1,), np.float32)
    got = _check(g, op, reduce, x, w)
    assert got.shape == (g.num_dst, 4)


# DGL's worked broadcasting examples (docs/design.md, section 'Broadcasting'), plus the mirror images and a general case
BROADCASTS = [
    ("mul", (1, 3), (5, 1)),
    ("mul", (4, 8), (4, 1)),
    ("mul", (8,), (1,)),
    ("add", (2, 1, 3), (1, 4, 1)),
    ("sub", (3,), (2, 3)),
    ("div", (1,), (6,)),
    ("mul", (4, 1), (4, 8)),
    ("add", (2, 3, 4), (2, 3, 4)),
    ("mul", (2, 1, 3, 1), (1, 4, 1, 2)),
]


# Each broadcast pattern once, the reducer and path taking turns (three patterns each): a pattern is a
# kernel of its own to compile, and the reducers' code does not depend on it (test_broadcasting_hypothesis
# runs random patterns with sum and max besides).
BROADCAST_CASES = [(*b, *[("sum", "csc"), ("max", "csc"), ("sum", "coo")][i % 3]) for i, b in enumerate(BROADCASTS)]


@pytest.mark.parametrize("op, xshape, wshape, reduce, fmt", BROADCAST_CASES)
def test_broadcasting(op, xshape, wshape, reduce, fmt):
    src, dst, n = CASES["unsorted_random"]()
    g = gk.Graph.from_coo(src[:800], dst[:800])
    x, w = _features(g, op, xshape, wshape, np.float64)
    got = _check(g, op, reduce, x, w, fmt)
    want_shape = np.broadcast_shapes(*ref._pad(xshape, wshape))
    assert got.shape == (g.num_dst,) + want_shape


@settings(max_examples=12)  # each new broadcast pattern is a compile; test_broadcasting has the named classes
@given(
    lshape=st.lists(st.integers(1, 3), min_size=0, max_size=3),
    rshape=st.lists(st.integers(1, 3), min_size=0, max_size=3),
    op=st.just("mul"),
    reduce=st.sampled_from(["sum", "max"]),
    seed=st.integers(0, 2**16),
)
def test_broadcasting_hypothesis(lshape, rshape, op, reduce, seed):
    lshape, rshape = tuple(lshape) or (1,), tuple(rshape) or (1,)
    try:
        np.broadcast_shapes(*ref._pad(lshape, rshape))
    except ValueError:
        with pytest.raises(ValueError, match="do not broadcast"):
            g = gk.Graph.from_coo([0], [0])
            gk.spmm(g, op, reduce, np.ones((1,) + lshape), np.ones((1,) + rshape))
        return
    rng = np.random.default_rng(seed)
    g = gk.Graph.from_coo(rng.integers(0, 12, 60), rng.integers(0, 12, 60), num_nodes=14)
    x, w = _features(g, op, lshape, rshape, np.float64, seed)
    _check(g, op, reduce, x, w)


# rows wider than one vector chunk (16 lanes): several chunks, groups of four, masked tails, heads
WIDE_ROWS = [
    ("copy_lhs", (40,), None, np.float32),
    ("mul", (70,), (1,), np.float32),
    ("add", (5, 20), (5, 1), np.float32),
    ("copy_rhs", None, (33,), np.float64),
]


# sum (and mean) and max on the first and last layouts, one of them on the two between: each pair is a kernel
WIDE_ROW_CASES = [(*WIDE_ROWS[0], "sum"), (*WIDE_ROWS[0], "max"), (*WIDE_ROWS[1], "sum"), (*WIDE_ROWS[2], "max"),
                  (*WIDE_ROWS[3], "sum"), (*WIDE_ROWS[3], "max")]


@pytest.mark.parametrize("op, xshape, wshape, dtype, reduce", WIDE_ROW_CASES)
def test_rows_wider_than_one_vector(op, xshape, wshape, dtype, reduce):
    rng = np.random.default_rng(3)
    g = gk.Graph.from_coo(rng.integers(0, 30, 500), rng.integers(0, 30, 500), num_nodes=33)
    x, w = _features(g, op, xshape or (1,), wshape or (1,), dtype)
    got = _check(g, op, reduce, x, w, "csc")
    if reduce == "sum":  # the mean shares the sum kernel and divides each row in the output's dtype
        mean = gk.spmm(g, op, "mean", x, w, format="csc")
        deg = np.maximum(g.in_degrees(), 1).astype(dtype).reshape((-1,) + (1,) * (got.ndim - 1))
        np.testing.assert_array_equal(mean, got / deg)


def test_ties_go_to_the_first_edge_in_csc_order():
    # three edges into node 2 with equal messages; CSC order follows edge ids (stable count sort)
    g = gk.Graph.from_coo([3, 1, 0, 4], [2, 2, 2, 2], num_nodes=5)
    x = np.array([[0.0], [7.0], [5.0], [7.0], [1.0]])  # sources 3, 1 tie at 7; source 0 has the minimum
    for fmt in ("csc", "coo"):
        out, arg_u, _ = gk.spmm(g, "copy_lhs", "max", x, return_arg=True, format=fmt)
        assert out[2, 0] == 7.0 and arg_u[2, 0] == 3
        out, arg_u, _ = gk.spmm(g, "copy_lhs", "min", x, return_arg=True, format=fmt)
        assert out[2, 0] == 0.0 and arg_u[2, 0] == 0


def test_zero_in_degree_gives_zero_and_minus_one_for_every_reducer():
    g = gk.Graph.from_coo([0], [1], num_nodes=3)
    x = np.array([[5.0], [6.0], [7.0]])
    for reduce in REDUCERS:
        for fmt in ("csc", "coo"):
            res = gk.spmm(g, "copy_lhs", reduce, x, return_arg=reduce in ("max", "min"), format=fmt)
            out = res[0] if isinstance(res, tuple) else res
            assert out[:, 0].tolist() == [0.0, 5.0, 0.0]
            if isinstance(res, tuple):
                assert res[1][:, 0].tolist() == [-1, 0, -1]


def test_no_edges_and_empty_graph():
    g = gk.Graph.from_coo([], [], num_nodes=4)
    for reduce in REDUCERS:
        assert not gk.spmm(g, "copy_lhs", reduce, np.ones((4, 2))).any()
    g = gk.Graph.from_coo([], [], num_nodes=0)
    assert gk.spmm(g, "mul", "sum", np.ones((0, 3)), np.ones((0, 1))).shape == (0, 3)


def test_one_dimensional_features_give_one_dimensional_output():
    g = gk.Graph.from_coo([0, 1], [1, 1])
    out = gk.spmm(g, "mul", "sum", np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    assert out.shape == (2,) and out.tolist() == [0.0, 11.0]
    out = gk.spmm(g, "mul", "sum", np.array([[1.0], [2.0]]), np.array([3.0, 4.0]))
    assert out.shape == (2, 1)


def test_results_are_deterministic_across_runs_and_threads():
    import numba

    src, dst = gk.graph.kronecker_edges(12)
    g = gk.Graph.from_coo(src, dst)
    x = np.random.default_rng(0).random((g.num_src, 8), dtype=np.float32)
    first = gk.spmm(g, "copy_lhs", "sum", x)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        single = gk.spmm(g, "copy_lhs", "sum", x)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(first, gk.spmm(g, "copy_lhs", "sum", x))
    np.testing.assert_array_equal(first, single)


def test_read_only_inputs_are_fine_and_untouched():
    g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0])
    x = np.arange(6.0).reshape(3, 2)
    w = np.ones((3, 1))
    x.setflags(write=False)
    w.setflags(write=False)
    out = gk.spmm(g, "mul", "sum", x, w)
    assert out.tolist() == [[4.0, 5.0], [0.0, 1.0], [2.0, 3.0]]
    assert x.tolist() == [[0.0, 1.0], [2.0, 3.0], [4.0, 5.0]]


@pytest.mark.fast
def test_generated_op_names():
    g = gk.Graph.from_coo([0, 1, 1], [1, 0, 1])
    x = np.array([[1.0], [2.0]])
    w = np.array([[3.0], [4.0], [5.0]])
    np.testing.assert_array_equal(gk.ops.u_mul_e_sum(g, x, w), gk.spmm(g, "mul", "sum", x, w))
    np.testing.assert_array_equal(gk.ops.copy_u_max(g, x), gk.spmm(g, "copy_lhs", "max", x))
    np.testing.assert_array_equal(gk.ops.copy_e_mean(g, w), gk.spmm(g, "copy_rhs", "mean", None, w))
    out, arg_u, arg_e = gk.ops.u_add_e_min(g, x, w, return_arg=True)
    assert arg_u is not None and arg_e is not None
    names = [n for n in gk.ops.__all__ if n.startswith(("u_", "copy_u_", "copy_e_")) and n.count("_") >= 2
             and n.split("_")[-1] in REDUCERS]
    assert len(names) == 24


def test_facebook_against_scipy():
    edges = facebook_edges()
    if edges is None:
        pytest.skip("the real-world data files are not available (GRAPHKERN_TEST_DATA)")
    src, dst = np.concatenate([edges[0], edges[1]]), np.concatenate([edges[1], edges[0]])
    g = gk.Graph.from_coo(src, dst)
    x = np.random.default_rng(0).random((g.num_src, 16), dtype=np.float32)
    w = np.random.default_rng(1).random((g.num_edges, 1), dtype=np.float32)
    A = g.reverse().to_scipy("csr", data=w[:, 0]).astype(np.float64)  # A[v, u] = w(u -> v)
    np.testing.assert_allclose(gk.ops.u_mul_e_sum(g, x, w), A @ x.astype(np.float64), rtol=1e-4, atol=1e-3)
    ones = g.reverse().to_scipy("csr").astype(np.float64)
    np.testing.assert_allclose(gk.ops.copy_u_sum(g, x), ones @ x.astype(np.float64), rtol=1e-4, atol=1e-3)
    _check(g, "copy_lhs", "max", x, None)


@pytest.mark.parametrize("op, reduce", [("copy_lhs", "sum"), ("mul", "max")])
def test_coo_only_graph_uses_the_coo_kernel(op, reduce):
    src, dst, n = CASES["hub"]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n, formats="coo")
    x, w = _features(g, op, (2,), (1,), np.float32)
    assert gk.explain(g, "spmm", op=op, reduce=reduce, ufeat=x, efeat=w).kernel is Kernel.SPMM_COO
    _check(g, op, reduce, x, w)
    assert g.formats()["created"] == ["coo"]


@pytest.fixture
def small_blocks():
    """The blocked path on small graphs: any size qualifies and an 'L2 cache' of 8 bytes makes blocks of
    8 rows (the least), so every graph case spans several blocks and every gathered array outgrows it."""
    with gk.tuned(blocked_min_edges=0, l2_cache_bytes=8):
        yield


def _in_source_order(src, dst):
    """The edges sorted by source (stable): a COO whose CSC rows list their sources in order."""
    order = np.argsort(src, kind="stable")
    return src[order], dst[order]


# (op, reducer, id dtype) for the blocked path on the graph cases: every operand form, sum, mean, max and
# min, both id widths (each triple is a kernel to compile for the blocked path and one for the CSC)
BLOCKED_CASE_KERNELS = [("copy_lhs", "sum", np.int32), ("mul", "mean", np.int32), ("copy_rhs", "sum", np.int64),
                        ("copy_lhs", "max", np.int64), ("mul", "min", np.int32)]


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("op, reduce, idtype", BLOCKED_CASE_KERNELS,
                         ids=[f"{o}-{r}-{np.dtype(i).name}" for o, r, i in BLOCKED_CASE_KERNELS])
def test_blocked_path_on_graph_cases_equals_the_csc_bitwise(case, op, reduce, idtype, small_blocks):
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(*_in_source_order(src, dst), num_nodes=n, idtype=idtype)
    x, w = _features(g, op, (3,), (1,) if op != "copy_rhs" else (3,), np.float32)
    plan = gk.explain(g, "spmm", op=op, reduce=reduce, ufeat=x, efeat=w)
    g.csc()
    gathers = x is not None or not g.eids_are_identity("csc")  # copy_rhs: edge rows behind a permutation
    assert plan.kernel is (Kernel.SPMM_BLOCKED if g.num_edges and gathers else Kernel.SPMM_CSC_VECTOR), plan
    got = _check(g, op, reduce, x, w)
    want = gk.spmm(g, op, reduce, x, w, format="csc")
    np.testing.assert_array_equal(got, want)
    if reduce in ("max", "min"):  # the arg outputs too, ties included
        for a, b in zip(gk.spmm(g, op, reduce, x, w, return_arg=True, format="csr"),
                        gk.spmm(g, op, reduce, x, w, return_arg=True, format="csc")):
            assert (a is None and b is None) or np.array_equal(a, b)


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("op, reduce", [("copy_lhs", "max"), ("mul", "min")])
def test_blocked_max_min_over_one_full_vector_equals_the_csc_bitwise(case, op, reduce, small_blocks):
    """An output row of exactly one vector (F = 16, float32) takes the blocked kernel's unmasked form."""
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(*_in_source_order(src, dst), num_nodes=n)
    x, w = _features(g, op, (16,), (1,), np.float32)
    if g.num_edges:
        assert gk.explain(g, "spmm", op=op, reduce=reduce, ufeat=x, efeat=w).kernel is Kernel.SPMM_BLOCKED
    got = gk.spmm(g, op, reduce, x, w)  # no arg outputs: those take the CSC kernel
    src, dst = g.edges()
    want, _, _ = ref.spmm(src, dst, g.csc().eids, g.num_dst, op, reduce, x, w)
    np.testing.assert_allclose(got, want.reshape(got.shape), rtol=1e-6, atol=0)
    np.testing.assert_array_equal(got, gk.spmm(g, op, reduce, x, w, format="csc"))


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("op, reduce", [("copy_lhs", "sum"), ("mul", "mean"), ("copy_rhs", "sum")])
def test_blocked_csr_path_on_graph_cases(case, op, reduce, small_blocks):
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    # float32 and int32 ids, as in the CSC-order cases above: the kernels are the same; float64 features
    # take the blocked path in test_blocked_path_reads_edge_rows_by_id_in_a_spread_id_space
    x, w = _features(g, op, (3,), (1,), np.float32)
    assert gk.explain(g, "spmm", op=op, reduce=reduce, ufeat=x, efeat=w, format="csr").kernel is Kernel.SPMM_BLOCKED
    _check(g, op, reduce, x, w, "csr")


def test_blocked_path_needs_csc_rows_in_source_order(small_blocks):
    src, dst, n = CASES["unsorted_random"]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n)  # CSC rows list sources in COO order: not sorted
    x = np.ones((n, 4), np.float32)
    plan = gk.explain(g, "spmm", op="copy_lhs", reduce="sum", ufeat=x)
    assert (plan.kernel, plan.format, plan.params["op"], plan.params["reduce"]) == (Kernel.SPMM_CSC_VECTOR, "csc",
                                                                                    "copy_lhs", "sum")
    s, d = _in_source_order(src, dst)
    g2 = gk.Graph.from_coo(s, d, num_nodes=n)
    assert gk.explain(g2, "spmm", op="copy_lhs", reduce="sum", ufeat=x).kernel is Kernel.SPMM_BLOCKED
    # arg outputs, wide rows and offset tables stay on the CSC
    plan = gk.explain(g2, "spmm", op="copy_lhs", reduce="max", ufeat=x, return_arg=True)
    assert (plan.kernel, plan.params["arg"]) == (Kernel.SPMM_CSC_VECTOR, True)
    wide = np.ones((n, 64), np.float32)
    assert gk.explain(g2, "spmm", op="copy_lhs", reduce="sum", ufeat=wide).kernel is Kernel.SPMM_CSC_VECTOR
    # and the sums in source order still equal the reference on the unsorted graph
    _check(g, "copy_lhs", "sum", x, None, "csr")


def test_blocked_csr_ties_go_to_the_lowest_source():
    g = gk.Graph.from_coo([2, 1, 0], [0, 0, 1], num_nodes=3)  # CSC row 0 lists source 2 first
    x = np.ones((3, 2))
    _, arg_csc, _ = gk.spmm(g, "copy_lhs", "max", x, return_arg=True, format="csc")
    _, arg_csr, _ = gk.spmm(g, "copy_lhs", "max", x, return_arg=True, format="csr")
    assert arg_csc[0].tolist() == [2, 2] and arg_csr[0].tolist() == [1, 1]
    assert arg_csr[1].tolist() == [0, 0] and arg_csr[2].tolist() == [-1, -1]


@pytest.mark.fast
def test_blocked_equals_csc_bitwise_on_kronecker(small_blocks):
    g = gk.graph.kronecker(12)  # edge ids follow the CSR; the CSC is its transpose (rows in source order)
    g.csc()
    rng = np.random.default_rng(0)
    x = rng.random((g.num_src, 8), dtype=np.float32)
    w = rng.random((g.num_edges, 1), dtype=np.float32)
    plan = gk.explain(g, "spmm", op="copy_rhs", reduce="sum", efeat=w)
    assert plan.kernel is Kernel.SPMM_BLOCKED and plan.params["op"] == "copy_rhs" and "L2 cache" in str(plan)
    wide = np.ones((g.num_edges, 64), np.float32)
    assert gk.explain(g, "spmm", op="copy_rhs", reduce="sum", efeat=wide).format == "csc"
    cases = (("copy_rhs", "sum", None, w), ("mul", "sum", x, w), ("copy_lhs", "mean", x, None),
             ("copy_lhs", "max", x, None), ("div", "min", x, w))
    for op, reduce, a, b in cases:
        # narrow edge rows read through the ids, or first put in block order (edge_rows_to_blocks)
        with gk.tuned(edge_rows_to_blocks_min_blocks=10**9):
            by_ids = gk.spmm(g, op, reduce, a, b)
        with gk.tuned(edge_rows_to_blocks_min_blocks=1):
            np.testing.assert_array_equal(gk.spmm(g, op, reduce, a, b), by_ids)
    for op, reduce, a, b in cases:
        assert gk.explain(g, "spmm", op=op, reduce=reduce, ufeat=a, efeat=b).kernel is Kernel.SPMM_BLOCKED
        np.testing.assert_array_equal(gk.spmm(g, op, reduce, a, b), gk.spmm(g, op, reduce, a, b, format="csc"))
        np.testing.assert_array_equal(gk.spmm(g, op, reduce, a, b, format="csr"),
                                      gk.spmm(g, op, reduce, a, b, format="csc"))


@pytest.mark.parametrize("min_blocks", [1, 10**9])
def test_blocked_path_reads_edge_rows_by_id_in_a_spread_id_space(small_blocks, min_blocks):
    with gk.tuned(edge_rows_to_blocks_min_blocks=min_blocks):
        src, dst, n = CASES["unsorted_random"]()
        src, dst = _in_source_order(src, dst)
        ids = 3 * np.arange(src.size)[::-1] + 1  # every third id used, in reverse
        g = gk.Graph.from_coo(src, dst, num_nodes=n, eids=ids, num_edge_ids=3 * src.size + 2)
        compact = gk.Graph.from_coo(src, dst, num_nodes=n)
        rng = np.random.default_rng(5)
        x = rng.random((n, 4))
        w = rng.random((src.size, 1))
        spread = np.full((g.num_edge_ids, 1), 7.0)  # garbage at unused ids: never read
        spread[ids] = w
        assert gk.explain(g, "spmm", op="mul", reduce="sum", ufeat=x, efeat=spread).kernel is Kernel.SPMM_BLOCKED
        np.testing.assert_array_equal(gk.spmm(g, "mul", "sum", x, spread), gk.spmm(compact, "mul", "sum", x, w))
