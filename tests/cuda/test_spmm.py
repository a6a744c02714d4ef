"""g-SpMM on the cuda backend against the NumPy reference (tests/cuda/conftest.py's expected_spmm)."""

import numpy as np
import pytest
from conftest import CASES, expected_spmm
from numba import cuda

import graphkern as gk
from graphkern.dispatch import Kernel


def _graph(case, idtype=None):
    src, dst, n = CASES[case]()
    return gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)


def _operands(g, op, xshape, wshape, dtype=np.float64, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(0.5, 2.0, (g.num_src,) + xshape).astype(dtype) if op != "copy_rhs" else None
    w = rng.uniform(0.5, 2.0, (g.num_edges,) + wshape).astype(dtype) if op != "copy_lhs" else None
    return x, w


def _compare(g, op, reduce, x, w, fmt, rtol=1e-6):
    with_arg = reduce in ("max", "min")
    got = gk.spmm(g, op, reduce, x, w, return_arg=with_arg, backend="cuda", format=fmt)
    got = got if with_arg else (got, None, None)
    want = expected_spmm(g, op, reduce, x, w)
    np.testing.assert_allclose(got[0].copy_to_host().reshape(want[0].shape), want[0], rtol=rtol, atol=1e-6)
    if with_arg:  # the arg outputs exactly, each None where the op does not read its operand
        for a, b in zip(want[1:], got[1:]):
            assert (a is None) == (b is None)
            if a is not None:
                np.testing.assert_array_equal(b.copy_to_host().reshape(a.shape), a)


# every op and every reducer, each at least twice, on both paths (the full cross product runs on the CPU;
# here each case costs a simulated launch)
OP_REDUCER = [("add", "sum"), ("sub", "max"), ("mul", "min"), ("div", "mean"), ("copy_lhs", "sum"),
              ("copy_lhs", "min"), ("copy_rhs", "max"), ("copy_rhs", "mean"), ("mul", "max")]


@pytest.mark.fast
@pytest.mark.parametrize("fmt", ["csc", "coo"])
@pytest.mark.parametrize("op,reduce", OP_REDUCER)
def test_every_op_and_reducer(op, reduce, fmt, low_hub_degree):
    g = _graph("hub_60")
    x, w = _operands(g, op, (3,), (3,))
    _compare(g, op, reduce, x, w, fmt)


@pytest.mark.parametrize("xshape,wshape", [((4,), (1,)), ((2, 3), (2, 1)), ((2, 1, 3), (1, 2, 1)), ((3,), ())])
@pytest.mark.parametrize("fmt", ["csc", "coo"])
def test_broadcast_patterns(xshape, wshape, fmt):
    g = _graph("random_300")
    x, w = _operands(g, "mul", xshape, wshape)
    _compare(g, "mul", "sum", x, w, fmt)
    _compare(g, "div", "max", x, w, fmt)


@pytest.mark.parametrize("case", sorted(CASES))
def test_graph_cases(case, low_hub_degree):
    # alternate the id dtype over the cases (both are covered; each case costs simulated launches)
    g = _graph(case, np.int32 if sorted(CASES).index(case) % 2 else np.int64)
    x, _ = _operands(g, "copy_lhs", (2,), ())
    for reduce in ("sum", "max"):
        _compare(g, "copy_lhs", reduce, x, None, "csc")
    x, w = _operands(g, "mul", (2,), (1,))
    _compare(g, "mul", "mean", x, w, "coo")


def test_ties_go_to_the_first_edge_in_csc_order(low_hub_degree):
    g = _graph("hub_60")
    x = np.ones((g.num_src, 2))
    for fmt in ("csc", "coo"):
        _, arg_u, arg_e = gk.spmm(g, "copy_lhs", "max", x, return_arg=True, backend="cuda", format=fmt)
        np.testing.assert_array_equal(arg_u.copy_to_host(), expected_spmm(g, "copy_lhs", "max", x)[1])


def test_float16_accumulates_in_float32():
    g = _graph("random_300")
    x = np.random.default_rng(1).uniform(-1, 1, (g.num_src, 8)).astype(np.float16)
    out = gk.spmm(g, "copy_lhs", "sum", cuda.to_device(x), backend="cuda")
    assert out.dtype == np.float16
    want = expected_spmm(g, "copy_lhs", "sum", x.astype(np.float32))[0]
    np.testing.assert_allclose(out.copy_to_host().astype(np.float32), want, rtol=2e-3, atol=2e-3)


def test_unused_edge_ids_and_permuted_ids():
    src, dst, n = CASES["random_300"]()
    ids = np.random.default_rng(0).permutation(400)[: src.size]
    g = gk.Graph.from_coo(src, dst, num_nodes=n, eids=ids, num_edge_ids=400)
    w = np.random.default_rng(2).uniform(0.5, 2, (400, 2))
    x = np.random.default_rng(3).uniform(0.5, 2, (n, 2))
    for fmt in ("csc", "coo"):
        got = gk.spmm(g, "mul", "sum", x, w, backend="cuda", format=fmt).copy_to_host()
        np.testing.assert_allclose(got, expected_spmm(g, "mul", "sum", x, w)[0])


def test_bad_input_on_the_cuda_backend():
    g = _graph("random_300")
    with pytest.raises(TypeError, match="expected float16, float32 or float64, found int64"):
        gk.spmm(g, "copy_lhs", "sum", np.ones((g.num_src, 2), np.int64), backend="cuda")
    with pytest.raises(ValueError, match="expected 40 rows"):
        gk.spmm(g, "copy_lhs", "sum", cuda.to_device(np.ones((3, 2))), backend="cuda")
    with pytest.raises(TypeError, match="same dtype"):
        gk.spmm(g, "mul", "sum", np.ones((40, 2), np.float32), np.ones((300, 2)), backend="cuda")
    with pytest.raises(ValueError, match="the cuda backend runs spmm on the 'csc' or the 'coo'"):
        gk.spmm(g, "copy_lhs", "sum", np.ones((40, 2)), backend="cuda", format="csr")


@pytest.mark.fast
def test_explain_names_the_cuda_kernel():
    g = _graph("random_300")
    x, w = np.ones((g.num_src, 2)), np.ones((g.num_edges, 1))
    plan = gk.explain(g, "spmm", backend="cuda", op="mul", reduce="sum", ufeat=x, efeat=w)
    assert plan.backend == "cuda" and plan.format == "csc" and plan.kernel is Kernel.CUDA_SPMM_CSC
    assert (plan.params["op"], plan.params["reduce"]) == ("mul", "sum")


# in-degrees around the unrolled edge loop (1..5, 8, 9) and the lowered hub threshold of low_hub_degree
# (16 stays on the warp kernel, 17 and 40 go to the block kernel)
LADDER = [0, 1, 2, 3, 4, 5, 8, 9, 16, 17, 40, 0]


@pytest.mark.parametrize("F", [1, 3, 33])
@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16])
def test_degree_ladder_every_width_and_dtype(F, dtype, low_hub_degree):
    from conftest import degree_ladder

    src, dst, n = degree_ladder(LADDER, seed=F)
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    rng = np.random.default_rng(F)
    x = rng.uniform(-1, 1, (n, F)).astype(dtype)
    w = rng.uniform(0.5, 2, (g.num_edges, F)).astype(dtype)
    if dtype == np.float16:
        x[rng.random(x.shape) < 0.3] = 0.5  # repeated values: ties, to the first edge in CSC order
    rtol = {np.float64: 1e-12, np.float32: 1e-5, np.float16: 2e-3}[dtype]
    cases = [("copy_lhs", "sum"), ("mul", "max"), ("sub", "min"), ("add", "mean")]
    if F != 33:  # each op-reducer pair is a simulated launch; F = 33 (two lane rounds) takes the two reducers
        cases += [("copy_rhs", "max"), ("div", "sum")]
    for op, reduce in cases:
        with_arg = reduce in ("max", "min")
        want = expected_spmm(g, op, reduce, x.astype(np.float64) if op != "copy_rhs" else None,
                             w.astype(np.float64) if op != "copy_lhs" else None)
        got = gk.spmm(g, op, reduce, x if op != "copy_rhs" else None, w if op != "copy_lhs" else None,
                      return_arg=with_arg, backend="cuda")
        got = got if with_arg else (got, None, None)
        np.testing.assert_allclose(got[0].copy_to_host().astype(np.float64), want[0], rtol=rtol, atol=rtol)
        for a, b in zip(want[1:], got[1:]):
            if with_arg and a is not None:
                np.testing.assert_array_equal(b.copy_to_host(), a)
