"""Graphs whose edge ids leave some ids unused (``num_edge_ids > num_edges``), as a dynamic graph's
snapshots will: features are indexed by id, outputs are 0 at unused ids, every path agrees with the
same graph numbered 0..E-1."""

import numpy as np
import pytest
from graph_cases import CASES

import graphkern as gk

SPACE_FACTOR = 3


def _pair(case, idtype="int32"):
    """The same edges twice: ids 0..E-1, and spread ids ``3 * (E - 1 - i) + 1`` in a space of 3E + 2."""
    src, dst, n = CASES[case]()
    E = src.size
    ids = SPACE_FACTOR * (E - 1 - np.arange(E)) + 1
    compact = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    spread = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype, eids=ids, num_edge_ids=SPACE_FACTOR * E + 2)
    return compact, spread, ids


def _spread_rows(x, ids, space):
    out = np.full((space,) + x.shape[1:], 7.0, dtype=x.dtype)  # garbage at unused ids: must not be read
    out[ids] = x
    return out


CASE_NAMES = ["isolated_and_zero_in_degree", "self_loops", "multi_edges", "hub", "unsorted_random"]


# Every (op, reducer) as the planner runs it (the CSC, or the blocked path for the hub), and the COO and
# an explicit CSC with some of them: the ids are read the same way whatever the op (each (op, reducer,
# path) is a kernel to compile)
BY_ID_CASES = ([(op, reduce, None) for op, reduce in (("mul", "sum"), ("add", "max"), ("copy_rhs", "min"),
                                                       ("div", "mean"), ("copy_lhs", "sum"))]
               + [("add", "max", "coo"), ("copy_rhs", "min", "coo"), ("mul", "sum", "coo"), ("mul", "sum", "csc"),
                  ("copy_lhs", "sum", "csc")])


@pytest.mark.parametrize("case", CASE_NAMES)
@pytest.mark.parametrize("op,reduce,fmt", BY_ID_CASES)
def test_spmm_reads_features_by_id(case, op, reduce, fmt):
    compact, spread, ids = _pair(case)
    rng = np.random.default_rng(0)
    x = rng.random((compact.num_src, 3))
    w = rng.random((compact.num_edges, 3)) + 0.5
    ufeat = None if op == "copy_rhs" else x
    want = gk.spmm(compact, op, reduce, ufeat, None if op == "copy_lhs" else w, format=fmt)
    got = gk.spmm(spread, op, reduce, ufeat, None if op == "copy_lhs" else _spread_rows(w, ids, spread.num_edge_ids),
                  format=fmt)
    np.testing.assert_allclose(got, want, rtol=1e-12)


@pytest.mark.parametrize("case", CASE_NAMES)
@pytest.mark.parametrize("op", ["dot", "add", "copy_rhs"])
@pytest.mark.parametrize("targets", [("u", "v"), ("e", "u"), ("v", "e")])
def test_sddmm_writes_by_id_and_zero_elsewhere(case, op, targets):
    compact, spread, ids = _pair(case)
    rng = np.random.default_rng(1)
    rows = {"u": compact.num_src, "v": compact.num_dst, "e": compact.num_edges}
    lhs = rng.random((rows[targets[0]], 2))
    rhs = rng.random((rows[targets[1]], 2))
    spread_l = _spread_rows(lhs, ids, spread.num_edge_ids) if targets[0] == "e" else lhs
    spread_r = _spread_rows(rhs, ids, spread.num_edge_ids) if targets[1] == "e" else rhs
    want = gk.sddmm(compact, op, None if op == "copy_rhs" else lhs, rhs, *targets)
    for fmt in (None, "csr", "coo"):
        got = gk.sddmm(spread, op, None if op == "copy_rhs" else spread_l, spread_r, *targets, format=fmt)
        assert got.shape[0] == spread.num_edge_ids
        np.testing.assert_allclose(got[ids], want, rtol=1e-12)
        unused = np.setdiff1d(np.arange(spread.num_edge_ids), ids)
        assert not np.any(got[unused])


@pytest.mark.parametrize("case", CASE_NAMES)
@pytest.mark.parametrize("norm_by", ["dst", "src"])
def test_edge_softmax_by_id(case, norm_by):
    compact, spread, ids = _pair(case)
    z = np.random.default_rng(2).standard_normal((compact.num_edges, 2))
    want = gk.edge_softmax(compact, z, norm_by)
    got = gk.edge_softmax(spread, _spread_rows(z, ids, spread.num_edge_ids), norm_by)
    np.testing.assert_allclose(got[ids], want, rtol=1e-12)
    assert not np.any(np.delete(got, ids, axis=0))


@pytest.mark.fast
def test_unused_ids_at_the_end_keep_the_identity_paths():
    src, dst, n = CASES["kronecker_10"]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n, num_edge_ids=src.size + 5)
    assert g.eids_are_identity("coo") and g.num_edge_ids == src.size + 5
    z = np.random.default_rng(3).standard_normal((g.num_edge_ids, 1))
    want = gk.edge_softmax(gk.Graph.from_coo(src, dst, num_nodes=n), z[: src.size])
    got = gk.edge_softmax(g, z)
    np.testing.assert_allclose(got[: src.size], want, rtol=1e-12)
    assert not np.any(got[src.size:])


@pytest.mark.fast
def test_formats_reverse_edges_scipy_and_files_keep_the_ids(tmp_path):
    compact, spread, ids = _pair("multi_edges")
    for name in ("csr", "csc", "coo"):
        a = getattr(compact, name)()
        b = getattr(spread, name)()
        np.testing.assert_array_equal(a[1], b[1])
        np.testing.assert_array_equal(ids[a.eids], b.eids)
    r = spread.reverse()
    assert r.num_edge_ids == spread.num_edge_ids
    np.testing.assert_array_equal(r.csr().eids, spread.csc().eids)
    s_src, s_dst = spread.edges()
    order = np.argsort(ids, kind="stable")
    c_src, c_dst = compact.edges()
    np.testing.assert_array_equal(s_src, c_src[order])
    np.testing.assert_array_equal(s_dst, c_dst[order])
    w = np.arange(spread.num_edge_ids, dtype=np.float64)
    A = spread.to_scipy("csr", data=w)
    B = compact.to_scipy("csr", data=w[ids])
    assert (A != B).nnz == 0
    gk.graph.save(spread, tmp_path / "g.npz")
    back = gk.graph.load(tmp_path / "g.npz")
    assert back.num_edge_ids == spread.num_edge_ids
    def triples(g):
        src, dst, eids = g.coo()
        return sorted(zip(src.tolist(), dst.tolist(), eids.tolist()))

    assert triples(back) == triples(spread)  # every edge keeps its id


def test_bad_id_spaces():
    with pytest.raises(ValueError, match="num_edge_ids"):
        gk.Graph.from_coo([0, 1], [1, 0], num_edge_ids=1)
    with pytest.raises(ValueError, match="edge ids"):
        gk.Graph.from_coo([0, 1], [1, 0], eids=[0, 9], num_edge_ids=5)
    with pytest.raises(ValueError, match="unique"):
        gk.Graph.from_csr([0, 1, 2], [1, 0], eids=[3, 3], num_edge_ids=5)
    g = gk.Graph.from_coo([0, 1], [1, 0], eids=[4, 0], num_edge_ids=5)
    with pytest.raises(ValueError, match="5 rows"):
        gk.spmm(g, "copy_rhs", "sum", None, np.ones((2, 1)))


def test_torch_gradients_by_id():
    torch = pytest.importorskip("torch")
    import graphkern.torch as gkt

    compact, spread, ids = _pair("multi_edges")
    w = torch.rand(spread.num_edge_ids, 1, dtype=torch.float64, requires_grad=True)
    x = torch.rand(spread.num_src, 2, dtype=torch.float64)
    gkt.spmm(spread, "mul", "max", x, w).sum().backward()
    grad = w.grad.numpy()
    unused = np.setdiff1d(np.arange(spread.num_edge_ids), ids)
    assert not np.any(grad[unused])
    assert torch.autograd.gradcheck(lambda t: gkt.spmm(spread, "mul", "sum", x, t), (w,), eps=1e-6, atol=1e-6)
