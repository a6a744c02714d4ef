"""Graph: constructors, lazily built formats with edge ids, reverse, simple, degrees, interop."""

import numpy as np
import pytest
import reference as ref
import scipy.sparse as sp
from graph_cases import CASES, facebook_edges

import graphkern as gk


def _counts(n):
    return n if isinstance(n, tuple) else (n, n)


def _check_formats(g, src, dst):
    """Every format of g describes the edge list (src[e] -> dst[e] is edge e) exactly."""
    num_src, num_dst = g.num_src, g.num_dst
    src = np.asarray(src, np.int64)
    dst = np.asarray(dst, np.int64)
    coo = g.coo()
    np.testing.assert_array_equal(src[coo.eids], coo.src)
    np.testing.assert_array_equal(dst[coo.eids], coo.dst)
    csr = g.csr()
    want = ref.compress(src, dst, num_src)
    np.testing.assert_array_equal(csr.indptr, want[0])
    np.testing.assert_array_equal(dst[csr.eids], csr.indices)
    np.testing.assert_array_equal(src[csr.eids], np.repeat(np.arange(num_src), np.diff(csr.indptr)))
    csc = g.csc()
    want = ref.compress(dst, src, num_dst)
    np.testing.assert_array_equal(csc.indptr, want[0])
    np.testing.assert_array_equal(src[csc.eids], csc.indices)
    np.testing.assert_array_equal(dst[csc.eids], np.repeat(np.arange(num_dst), np.diff(csc.indptr)))
    for fmt in (coo, csr, csc):
        assert sorted(fmt.eids.tolist()) == list(range(g.num_edges))
        assert all(a.dtype == g.idtype for a in fmt)
    e_src, e_dst = g.edges()
    np.testing.assert_array_equal(e_src, src)
    np.testing.assert_array_equal(e_dst, dst)
    np.testing.assert_array_equal(g.in_degrees(), np.bincount(dst, minlength=num_dst))
    np.testing.assert_array_equal(g.out_degrees(), np.bincount(src, minlength=num_src))


@pytest.mark.fast
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_format_from_coo(case, idtype):
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    assert (g.num_src, g.num_dst) == _counts(n)
    assert g.num_edges == len(src) and g.idtype == idtype
    _check_formats(g, src, dst)


@pytest.mark.fast
@pytest.mark.parametrize("case", sorted(CASES))
def test_every_format_from_csr_and_csc(case, idtype):
    src, dst, n = CASES[case]()
    num_src, num_dst = _counts(n)
    indptr, indices, order = ref.compress(src, dst, num_src)
    g = gk.Graph.from_csr(indptr, indices, num_dst=num_dst, idtype=idtype)
    # slot j of the CSR is edge j
    _check_formats(g, np.asarray(src)[order], np.asarray(dst)[order])
    g = gk.Graph.from_csr(indptr, indices, eids=order, num_dst=num_dst, idtype=idtype)
    _check_formats(g, src, dst)
    indptr, indices, order = ref.compress(dst, src, num_dst)
    g = gk.Graph.from_csc(indptr, indices, eids=order, num_src=num_src, idtype=idtype)
    _check_formats(g, src, dst)


@pytest.mark.parametrize("case", sorted(CASES))
def test_reverse_keeps_edge_ids(case):
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    g.csr()
    r = g.reverse()
    assert (r.num_src, r.num_dst) == (g.num_dst, g.num_src)
    _check_formats(r, dst, src)
    # the graph's CSR (created before reversing) is the reverse's CSC, shared, not copied
    assert np.shares_memory(r.csc().indptr, g.csr().indptr)


@pytest.mark.fast
@pytest.mark.parametrize("case", sorted(CASES))
def test_simple_drops_loops_and_duplicates(case):
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    s, kept = g.simple(return_eids=True)
    want_src, want_dst, want_ids = ref.simple_edges(src, dst, drop_self_loops=not isinstance(n, tuple))
    e_src, e_dst = s.edges()
    np.testing.assert_array_equal(e_src, want_src)
    np.testing.assert_array_equal(e_dst, want_dst)
    np.testing.assert_array_equal(kept, want_ids)


def test_default_idtype_is_int32_when_it_fits_and_int64_when_asked():
    g = gk.Graph.from_coo(np.array([0, 1], dtype=np.int64), np.array([1, 0], dtype=np.int64))
    assert g.idtype == np.int32
    g = gk.Graph.from_coo([0, 1], [1, 0], idtype="int64")
    assert g.idtype == np.int64 and g.csc().indptr.dtype == np.int64


def test_ids_past_int32_need_int64():
    big = 2**31 + 5
    g = gk.Graph.from_coo(np.array([0, big - 1]), np.array([big - 1, 0]), num_nodes=big)
    assert g.idtype == np.int64
    with pytest.raises(ValueError, match="int32 cannot hold"):
        gk.Graph.from_coo(np.array([0]), np.array([1]), num_nodes=big, idtype="int32")


def test_formats_restriction_and_report():
    g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0])
    assert g.formats() == {"created": ["coo"], "not created": ["csr", "csc"]}
    g.csc()
    assert g.formats() == {"created": ["coo", "csc"], "not created": ["csr"]}
    only_csr = g.formats("csr")
    assert only_csr.formats() == {"created": ["csr"], "not created": []}
    with pytest.raises(ValueError, match="format 'csc' is not allowed"):
        only_csr.csc()
    restricted = gk.Graph.from_coo([0, 1], [1, 0], formats=["csc"])
    assert restricted.formats() == {"created": ["csc"], "not created": []}
    _check_formats_restricted = restricted.csc()
    assert _check_formats_restricted.indices.tolist() == [1, 0]


def test_lazy_formats_are_built_once_and_cached():
    g = gk.Graph.from_coo([0, 0, 1], [1, 2, 2])
    first = g.csc()
    # each call hands out new read-only views of the one cached array
    assert np.shares_memory(g.csc().indptr, first.indptr)


def test_scipy_round_trip_and_explicit_zeros():
    A = sp.random(50, 30, density=0.2, format="csr", random_state=1, dtype=np.float64)
    A.data[::7] = 0.0  # explicit zeros are not edges
    A_copy = A.copy()
    g = gk.Graph.from_scipy(A, edge_data="w")
    assert (g.num_src, g.num_dst) == (50, 30) and g.is_block
    assert g.num_edges == int(np.count_nonzero(A.data))
    B = g.to_scipy("csr", data=g.edata["w"])
    assert abs(B - A).max() == 0
    for fmt in ("csc", "coo"):
        assert abs(g.to_scipy(fmt, data=g.edata["w"]).tocsr() - A).max() == 0
    # the caller's matrix is untouched
    assert (A != A_copy).nnz == 0 and A.nnz == A_copy.nnz


@pytest.mark.fast
def test_from_edge_index_and_networkx():
    nx = pytest.importorskip("networkx")
    g = gk.Graph.from_edge_index(np.array([[0, 1, 2], [1, 2, 0]]))
    assert g.num_nodes == 3 and g.edges()[1].tolist() == [1, 2, 0]
    G = nx.MultiGraph()
    G.add_edge("a", "b", weight=2.0)
    G.add_edge("a", "b", weight=3.0)
    G.add_edge("b", "b", weight=1.0)
    g = gk.Graph.from_networkx(G, edge_attrs=["weight"])
    assert g.num_edges == 5  # two parallel edges both ways, and the self-loop once
    assert sorted(g.edata["weight"].tolist()) == [1.0, 2.0, 2.0, 3.0, 3.0]
    assert g.ndata["label"].tolist() == ["a", "b"]
    D = g.to_networkx()
    assert D.number_of_edges() == 5


def test_facebook_formats_against_scipy():
    edges = facebook_edges()
    if edges is None:
        pytest.skip("facebook_combined.txt is not available (GRAPHKERN_TEST_DATA)")
    src, dst = edges
    src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    g = gk.Graph.from_coo(src, dst)
    assert g.num_nodes == 4039 and g.num_edges == 2 * 88234
    _check_formats(g, src, dst)
    A = sp.coo_array((np.ones(src.size), (src, dst)), shape=(4039, 4039)).tocsr()
    assert abs(g.to_scipy("csr").astype(np.float64) - A).max() == 0
    ours = g.csc()
    theirs = sp.csr_array((np.arange(g.num_edges), g.csr().indices, g.csr().indptr), shape=A.shape).tocsc()
    np.testing.assert_array_equal(ours.indptr, theirs.indptr)
    np.testing.assert_array_equal(ours.indices, theirs.indices)
    np.testing.assert_array_equal(ours.eids, g.csr().eids[theirs.data])


def test_repr_and_num_nodes_of_a_block():
    g = gk.Graph.from_coo([0], [2], num_nodes=(1, 3))
    assert "num_src=1" in repr(g)
    with pytest.raises(ValueError, match="1 source and 3 destination"):
        g.num_nodes


@pytest.mark.fast
@pytest.mark.parametrize("case", ["multi_edges", "self_loops", "hub", "bipartite", "no_edges"])
def test_sorted_csr_lists_each_row_by_destination_then_edge_id(case, idtype):
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    before = [a.copy() for a in g.csr()]
    indptr, indices, eids = g.sorted_csr()
    order = np.lexsort((np.arange(len(src)), dst, src))  # by source, then destination, then edge id
    np.testing.assert_array_equal(indptr, np.r_[0, np.cumsum(np.bincount(src, minlength=g.num_src))])
    np.testing.assert_array_equal(indices, np.asarray(dst)[order])
    np.testing.assert_array_equal(eids, order)
    for kept, now in zip(before, g.csr()):  # the graph's own CSR is not changed
        np.testing.assert_array_equal(kept, now)
