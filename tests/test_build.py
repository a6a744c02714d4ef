"""gk.graph.undirected: the simple undirected graph of an edge list, built in place, against a NumPy reference;
the symmetric graph it makes searched without a CSC; Graph500's kernel 1 and validation without an edge list."""

import numpy as np
import pytest
from graphkern.graph.build import undirected_csr

import graphkern as gk


def reference_undirected(src, dst, n):
    """Both directions of every non-loop tuple, repeated pairs once, rows sorted: (indptr, indices)."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    keep = src != dst
    rows = np.concatenate([src[keep], dst[keep]])
    cols = np.concatenate([dst[keep], src[keep]])
    pairs = np.unique(rows * max(n, 1) + cols)
    rows, cols = pairs // max(n, 1), pairs % max(n, 1)
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    return indptr, cols


def _cases():
    rng = np.random.default_rng(7)
    path = np.arange(99_999)
    hub_leaves = np.arange(1, 100_001)
    yield "empty", [], [], 0
    yield "no edges", [], [], 5
    yield "only self-loops", [0, 1, 1], [0, 1, 1], 3
    yield "multi-edges both ways", [0, 1, 0, 1, 0], [1, 0, 1, 0, 1], 2
    yield "isolated vertices", [2, 7], [7, 2], 10
    yield "hub of 10^5 leaves", np.zeros(100_000, np.int64), hub_leaves, 100_001
    yield "hub as destination", hub_leaves, np.zeros(100_000, np.int64), 100_001
    yield "path (high diameter)", path, path + 1, 100_000
    yield "random with repeats", rng.integers(0, 300, 5000), rng.integers(0, 300, 5000), 300
    yield "int64 ids", rng.integers(0, 1000, 3000).astype(np.int64), rng.integers(0, 1000, 3000).astype(np.int64), 1000
    src, dst = gk.graph.kronecker_edges(12)
    yield "kronecker 12", src, dst, 1 << 12


@pytest.mark.fast
@pytest.mark.parametrize("label,src,dst,n", list(_cases()), ids=[c[0] for c in _cases()])
def test_undirected_equals_reference(label, src, dst, n):
    g = gk.graph.undirected(src, dst, n)
    indptr, indices = reference_undirected(src, dst, n)
    csr = g.csr()
    assert g.num_src == g.num_dst == n
    np.testing.assert_array_equal(csr.indptr, indptr)
    np.testing.assert_array_equal(csr.indices, indices)
    np.testing.assert_array_equal(csr.eids, np.arange(indices.size))
    # the same graph as the general path: the doubled edge list made simple
    s = np.asarray(src, dtype=np.int64)
    d = np.asarray(dst, dtype=np.int64)
    general = gk.Graph.from_coo(np.r_[s, d], np.r_[d, s], num_nodes=n).simple()
    np.testing.assert_array_equal(general.csr().indices, csr.indices)


def test_tuples_from_counts_non_loop_tuples_by_first_end():
    src, dst = gk.graph.kronecker_edges(10)
    _, _, tuples_from = undirected_csr(src, dst, 1 << 10)
    keep = src != dst
    np.testing.assert_array_equal(tuples_from, np.bincount(src[keep], minlength=1 << 10))


def test_default_node_count_and_idtype():
    g = gk.graph.undirected([0, 4], [4, 2])
    assert g.num_src == 5 and g.idtype == np.int32
    assert gk.graph.undirected([0, 4], [4, 2], idtype="int64").csr().indices.dtype == np.int64


def test_kronecker_is_the_undirected_graph_of_its_tuples():
    src, dst = gk.graph.kronecker_edges(11)
    g = gk.graph.kronecker(11)
    indptr, indices = reference_undirected(src, dst, 1 << 11)
    np.testing.assert_array_equal(g.csr().indices, indices)
    assert g.formats()["created"] == ["csr"]


@pytest.mark.fast
@pytest.mark.parametrize("algorithm", ["top_down", "bottom_up", "direction_optimizing", "spmsv"])
def test_search_on_a_symmetric_graph_builds_no_csc(algorithm):
    src, dst = gk.graph.kronecker_edges(11)
    g = gk.graph.undirected(src, dst, 1 << 11)
    general = gk.Graph.from_coo(np.r_[src, dst], np.r_[dst, src], num_nodes=1 << 11).simple()
    source = int(gk.graph500.search_keys(g, 1)[0])
    got = gk.bfs(g, source, algorithm=algorithm)
    want = gk.bfs(general, source, algorithm=algorithm)
    np.testing.assert_array_equal(got.levels, want.levels)
    gk.graph500.validate(g, source, got.parents, got.levels)
    assert "csc" not in g.formats()["created"]


def test_batched_search_on_a_symmetric_graph():
    g = gk.graph.kronecker(10)
    sources = gk.graph500.search_keys(g, 3).tolist()
    general = gk.Graph.from_coo(*g.edges(), num_nodes=g.num_src)
    for got, source in zip(gk.bfs(g, sources=sources), sources):
        np.testing.assert_array_equal(got.levels, gk.bfs(general, source).levels)


def test_reverse_and_copies_stay_symmetric_and_correct():
    g = gk.graph.undirected([0, 1, 2], [1, 2, 3])
    for h in (g.reverse(), g.formats(["csr", "csc"]), g.simple()):
        np.testing.assert_array_equal(gk.bfs(h, 0, algorithm="bottom_up").levels, [0, 1, 2, 3])


def test_validation_reads_rows_and_names_the_broken_rule():
    g = gk.graph.undirected([0, 1, 2], [1, 2, 3])
    assert gk.graph500.validate(g, 0, np.array([0, 0, 1, 2])) == 4
    cycle = gk.graph.undirected([0, 1, 2, 3], [1, 2, 3, 0])
    with pytest.raises(gk.Graph500ValidationError, match="rule 3"):
        gk.graph500.validate(cycle, 0, np.array([0, 0, 1, 2]))  # edge 3 - 0 spans levels 3 and 0
    with pytest.raises(gk.Graph500ValidationError, match="rule 4"):
        gk.graph500.validate(g, 0, np.array([0, 0, 1, -1]))
    directed = gk.Graph.from_coo([0, 1, 3], [1, 2, 2], num_nodes=4, formats=["coo"])
    assert gk.graph500.validate(directed, 0, np.array([0, 0, 1, -1]), directed=True) == 3
    assert directed.formats()["created"] == ["coo"]


@pytest.mark.parametrize("src,dst,n,error,match", [
    ([0, 1], [1], None, ValueError, "equal lengths"),
    ([0, -1], [1, 0], 3, ValueError, "argument 'src': expected node ids >= 0"),
    ([0, 1], [1, 3], 3, ValueError, "argument 'dst': expected node ids < 3"),
    ([0.0, 1.0], [1, 0], None, TypeError, "argument 'src': expected an integer array"),
    ([0, 1], [1, 0], -1, ValueError, "num_nodes"),
])
def test_bad_input_is_refused_before_any_kernel(src, dst, n, error, match):
    with pytest.raises(error, match=match):
        gk.graph.undirected(src, dst, n)


def test_caller_arrays_are_read_not_changed():
    src = np.array([3, 1, 1, 0], dtype=np.int64)
    dst = np.array([1, 3, 1, 2], dtype=np.int64)
    before = src.copy(), dst.copy()
    g = gk.graph.undirected(src, dst, 4)
    np.testing.assert_array_equal(src, before[0])
    np.testing.assert_array_equal(dst, before[1])
    src[:] = 0
    np.testing.assert_array_equal(g.csr().indices, [2, 3, 0, 1])


@pytest.mark.parametrize("digits", [(13, 1), (5, 3), (11, 2)])
def test_row_sort_of_every_length_equals_numpy_unique(digits):
    from graphkern.kernels.cpu import build
    from graphkern.kernels.cpu.partition import nnz_balanced_row_bounds

    rng = np.random.default_rng(3)
    lengths = np.array([0, 1, 5, 32, 33, 63, 64, 65, 500, 1023, 1024, 5000, 0, 2])
    indptr = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=indptr[1:])
    values = rng.integers(0, 1 << 13, indptr[-1]).astype(np.int32)
    values[indptr[8]:indptr[8] + 100] = 7  # a run of repeats (in the row of 500)
    indices = values.copy()
    unique_count = np.empty(lengths.size, dtype=np.int64)
    build.sort_unique_rows(indptr, indptr[1:].copy(), indices, nnz_balanced_row_bounds(indptr, 3), unique_count,
                           *digits)
    for r in range(lengths.size):
        want = np.unique(values[indptr[r]:indptr[r + 1]])
        np.testing.assert_array_equal(indices[indptr[r]:indptr[r] + unique_count[r]], want)


def test_radix_digits_cover_the_ids_in_few_passes():
    from graphkern.kernels.cpu.build import radix_digits

    assert radix_digits(1) == (1, 1)
    assert radix_digits(1 << 13) == (13, 1)
    assert radix_digits(1 << 22) == (11, 2)
    assert radix_digits(1 << 25) == (13, 2)
    assert radix_digits(1 << 40) == (10, 4)
