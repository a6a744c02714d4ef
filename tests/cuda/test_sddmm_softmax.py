"""g-SDDMM and edge softmax on the cuda backend against the CPU backend and the NumPy references."""

import numpy as np
import pytest
import reference as ref
from conftest import CASES
from numba import cuda

import graphkern as gk


def _graph(case, idtype=None):
    src, dst, n = CASES[case]()
    return gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)


def _rows(g, target, shape, seed):
    n = {"u": g.num_src, "v": g.num_dst, "e": g.num_edges}[target]
    return np.random.default_rng(seed).uniform(0.5, 2.0, (n,) + shape)


@pytest.mark.parametrize("op", ["add", "sub", "mul", "div", "copy_lhs", "copy_rhs"])
@pytest.mark.parametrize("targets", [("u", "v"), ("e", "u"), ("v", "e")])
def test_elementwise_ops(op, targets):
    g = _graph("multi_edges")
    lt, rt = targets
    L = _rows(g, lt, (2, 3), 0) if op != "copy_rhs" else None
    R = _rows(g, rt, (2, 1), 1) if op != "copy_lhs" else None
    got = gk.sddmm(g, op, L, R, lt, rt, backend="cuda").copy_to_host()
    np.testing.assert_allclose(got, gk.sddmm(g, op, L, R, lt, rt))
    src, dst = g.edges()
    want = ref.sddmm(src, dst, op, L, R, lt, rt)
    np.testing.assert_allclose(got.reshape(want.shape), want)


@pytest.mark.parametrize("width", [1, 3, 8, 40])
def test_dot_at_every_width(width):
    g = _graph("random_300")
    x = _rows(g, "u", (2, width), 2)
    y = _rows(g, "v", (2, width), 3)
    got = gk.sddmm(g, "dot", x, y, "u", "v", backend="cuda").copy_to_host()
    np.testing.assert_allclose(got, gk.sddmm(g, "dot", x, y, "u", "v"), rtol=1e-12)


@pytest.mark.parametrize("case", sorted(CASES))
def test_graph_cases(case):
    # alternate the id dtype over the cases (both are covered; each case costs simulated reductions)
    g = _graph(case, np.int32 if sorted(CASES).index(case) % 2 else np.int64)
    x = _rows(g, "u", (4,), 4)
    y = _rows(g, "v", (4,), 5)
    np.testing.assert_allclose(gk.sddmm(g, "dot", x, y, backend="cuda").copy_to_host(), gk.sddmm(g, "dot", x, y))
    z = _rows(g, "e", (2,), 6)
    got = gk.edge_softmax(g, z, backend="cuda").copy_to_host()
    np.testing.assert_allclose(got, gk.edge_softmax(g, z), rtol=1e-6, atol=1e-12)
    np.testing.assert_allclose(got, ref.edge_softmax(g.edges()[1], g.num_dst, z), rtol=1e-6, atol=1e-12)


def test_sddmm_on_a_graph_without_coo_expands_the_csr():
    src, dst, n = CASES["random_300"]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n).formats("csr")
    x = _rows(g, "u", (3,), 7)
    assert gk.explain(g, "sddmm", backend="cuda", op="dot").format == "csr"
    np.testing.assert_allclose(gk.sddmm(g, "dot", x, x, "u", "u", backend="cuda").copy_to_host(),
                               gk.sddmm(g, "dot", x, x, "u", "u"))


def test_edge_softmax_by_source_multi_head_float32_and_float16():
    g = _graph("hub_60")
    z = _rows(g, "e", (2, 1), 8).astype(np.float32)
    for norm_by in ("dst", "src"):
        got = gk.edge_softmax(g, cuda.to_device(z), norm_by, backend="cuda")
        assert got.shape == z.shape
        np.testing.assert_allclose(got.copy_to_host(), gk.edge_softmax(g, z, norm_by), rtol=1e-5)
    half = gk.edge_softmax(g, z.astype(np.float16), backend="cuda").copy_to_host()
    assert half.dtype == np.float16
    np.testing.assert_allclose(half.astype(np.float32), gk.edge_softmax(g, z), rtol=2e-3, atol=1e-3)
