"""g-SDDMM and edge softmax on the cuda backend against the NumPy references (tests/cuda/conftest.py)."""

import warnings

import numpy as np
import pytest
from conftest import CASES, expected_edge_softmax, expected_sddmm
from numba import cuda

import graphkern as gk
from graphkern.dispatch import Kernel


def _graph(case, idtype=None):
    src, dst, n = CASES[case]()
    return gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)


def _rows(g, target, shape, seed):
    n = {"u": g.num_src, "v": g.num_dst, "e": g.num_edges}[target]
    return np.random.default_rng(seed).uniform(0.5, 2.0, (n,) + shape)


# the targets are a run-time argument of the op's one kernel: every op under two of the target pairs,
# every pair under four ops, each side of every pair read by a copy
OP_TARGETS = [("add", ("u", "v")), ("add", ("e", "u")), ("sub", ("e", "u")), ("sub", ("v", "e")),
              ("mul", ("v", "e")), ("mul", ("u", "v")), ("div", ("u", "v")), ("div", ("v", "e")),
              ("copy_lhs", ("u", "v")), ("copy_lhs", ("e", "u")), ("copy_rhs", ("e", "u")), ("copy_rhs", ("v", "e"))]


@pytest.mark.parametrize("op,targets", OP_TARGETS, ids=[f"{op}-{lt}{rt}" for op, (lt, rt) in OP_TARGETS])
def test_elementwise_ops(op, targets):
    g = _graph("multi_edges")
    lt, rt = targets
    L = _rows(g, lt, (2, 3), 0) if op != "copy_rhs" else None
    R = _rows(g, rt, (2, 1), 1) if op != "copy_lhs" else None
    got = gk.sddmm(g, op, L, R, lt, rt, backend="cuda").copy_to_host()
    want = expected_sddmm(g, op, L, R, lt, rt)
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want)


@pytest.mark.fast
@pytest.mark.parametrize("width", [1, 3, 8, 40, 70])
def test_dot_at_every_width(width):
    g = _graph("random_300")
    x = _rows(g, "u", (2, width), 2)
    y = _rows(g, "v", (2, width), 3)
    got = gk.sddmm(g, "dot", x, y, "u", "v", backend="cuda").copy_to_host()
    np.testing.assert_allclose(got, expected_sddmm(g, "dot", x, y, "u", "v"), rtol=1e-12)


@pytest.mark.parametrize("case", sorted(CASES))
def test_graph_cases(case):
    # alternate the id dtype over the cases (both are covered; each case costs simulated reductions)
    g = _graph(case, np.int32 if sorted(CASES).index(case) % 2 else np.int64)
    x = _rows(g, "u", (4,), 4)
    y = _rows(g, "v", (4,), 5)
    np.testing.assert_allclose(gk.sddmm(g, "dot", x, y, backend="cuda").copy_to_host(), expected_sddmm(g, "dot", x, y))
    z = _rows(g, "e", (2,), 6)
    got = gk.edge_softmax(g, z, backend="cuda").copy_to_host()
    np.testing.assert_allclose(got, expected_edge_softmax(g, z), rtol=1e-6, atol=1e-12)


@pytest.mark.fast
def test_sddmm_on_a_graph_without_coo_expands_the_csr():
    src, dst, n = CASES["random_300"]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n).formats("csr")
    x = _rows(g, "u", (3,), 7)
    plan = gk.explain(g, "sddmm", backend="cuda", op="dot", lhs=x, rhs=x, lhs_target="u", rhs_target="u")
    assert (plan.kernel, plan.format) == (Kernel.CUDA_SDDMM_EDGES, "csr")
    np.testing.assert_allclose(gk.sddmm(g, "dot", x, x, "u", "u", backend="cuda").copy_to_host(),
                               expected_sddmm(g, "dot", x, x, "u", "u"))


@pytest.mark.fast
def test_edge_softmax_by_source_multi_head_float32_and_float16():
    g = _graph("hub_60")
    z = _rows(g, "e", (2, 1), 8).astype(np.float32)
    for norm_by in ("dst", "src"):
        got = gk.edge_softmax(g, cuda.to_device(z), norm_by, backend="cuda")
        assert got.shape == z.shape
        np.testing.assert_allclose(got.copy_to_host(), expected_edge_softmax(g, z, norm_by), rtol=1e-5)
    half = gk.edge_softmax(g, z.astype(np.float16), backend="cuda").copy_to_host()
    assert half.dtype == np.float16
    np.testing.assert_allclose(half.astype(np.float32), expected_edge_softmax(g, z), rtol=2e-3, atol=1e-3)


# around the lowered thresholds of low_softmax_degrees: small (<= 2), warp (3..6), blocks (> 6: one chunk
# of 7, two of exactly 16, three with a short last one, five)
LADDER = [0, 1, 2, 3, 6, 7, 0, 40, 5, 2, 1, 70, 32]


# each dtype, each direction (the same kernels over the CSC or the CSR), float16 (float32 accumulation)
# both ways
@pytest.mark.parametrize("dtype,norm_by", [(np.float64, "src"), (np.float32, "dst"), (np.float16, "dst"),
                                           (np.float16, "src")], ids=["float64-src", "float32-dst", "float16-dst",
                                                                      "float16-src"])
def test_edge_softmax_every_row_class(dtype, norm_by, low_softmax_degrees):
    from graphkern.kernels.cuda import edge_softmax as K

    chunks = K.classify_rows(np.array([0, 0, 7, 47, 79]), 2, 6, 16)[2]  # the limits of low_softmax_degrees
    np.testing.assert_array_equal(chunks, [[0, 7, 23, 39, 47, 63], [7, 23, 39, 47, 63, 79], [0, 1, 1, 1, 4, 4],
                                           [1, 3, 3, 3, 2, 2], [1, 2, 2, 2, 3, 3]])
    from conftest import degree_ladder

    src, dst, n = degree_ladder(LADDER)
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    z = np.random.default_rng(9).normal(0, 3, (g.num_edges, 3, 1)).astype(dtype)
    got = gk.edge_softmax(g, cuda.to_device(z), norm_by, backend="cuda").copy_to_host()
    assert got.dtype == dtype and got.shape == z.shape
    want = expected_edge_softmax(g, z.astype(np.float64), norm_by)
    rtol, atol = {np.float64: (1e-10, 1e-14), np.float32: (1e-4, 1e-7), np.float16: (2e-3, 1e-3)}[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=rtol, atol=atol)
    keys = dst if norm_by == "dst" else src
    sums = np.zeros((n, 3, 1))
    np.add.at(sums, keys, got.astype(np.float64))
    has = np.bincount(keys, minlength=n) > 0
    np.testing.assert_allclose(sums[has], 1, rtol=10 * rtol)


def test_edge_softmax_infinite_and_large_logits(low_softmax_degrees):
    from conftest import degree_ladder

    src, dst, n = degree_ladder(LADDER, seed=1)
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    z = np.random.default_rng(10).normal(0, 1, (g.num_edges, 2)).astype(np.float32)
    z[::3, 0] = -np.inf  # some edges of most rows masked out, never a whole row (that row would be NaN)
    first = np.unique(dst, return_index=True)[1]
    z[first, 0] = 0.5
    masked = np.isneginf(z[:, 0])
    z[::5, 1] = 1e38  # near float32's largest: exp(z - max) must not overflow
    z[1::5, 1] = -1e38
    got = gk.edge_softmax(g, cuda.to_device(z), backend="cuda").copy_to_host()
    want = expected_edge_softmax(g, z.astype(np.float64))
    assert np.isfinite(got).all()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-7)
    assert masked.sum() > 10 and (got[masked, 0] == 0).all()
    # a +inf logit: exp(inf - inf) is NaN, so is its row's sum and every output of the row (as on the CPU)
    hub, warp_row = np.flatnonzero(dst == 11)[5], np.flatnonzero(dst == 4)[2]
    z[[hub, warp_row], 1] = np.inf
    with warnings.catch_warnings():  # the simulator computes inf - inf in NumPy, which warns
        warnings.simplefilter("ignore", RuntimeWarning)
        got = gk.edge_softmax(g, cuda.to_device(z), backend="cuda").copy_to_host()
    nan_rows = np.isin(dst, [4, 11])
    assert np.isnan(got[nan_rows, 1]).all() and np.isfinite(got[~nan_rows]).all()


@pytest.mark.parametrize("shapes", [((1,), (1,)), ((33,), (1,)), ((3, 1), (1, 11))])
@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_elementwise_output_widths(shapes, dtype):
    # 1 lane per edge, 32 lanes with a second round of output elements, and a general broadcast (3 x 11)
    g = _graph("multi_edges")
    L = _rows(g, "u", shapes[0], 11).astype(dtype)
    R = _rows(g, "e", shapes[1], 12).astype(dtype)
    for op in ("sub", "div"):
        got = gk.sddmm(g, op, L, R, "u", "e", backend="cuda").copy_to_host()
        want = expected_sddmm(g, op, L.astype(np.float64), R.astype(np.float64), "u", "e")
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=1e-3 if dtype == np.float16 else 1e-6)
