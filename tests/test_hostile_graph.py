"""Regression tests for hostile input to the Graph constructors, the npz loader and the Graph500 helpers."""

import numpy as np
import pytest
import scipy.sparse as sp

import graphkern as gk


@pytest.mark.parametrize("idtype", [np.int32, np.int64])
def test_from_coo_owns_its_arrays(idtype):
    src, dst = np.array([0, 1, 2], dtype=idtype), np.array([1, 2, 0], dtype=idtype)
    g = gk.Graph.from_coo(src, dst, num_nodes=3, idtype=idtype)
    src[:] = 10**6  # the caller changes its array after construction
    dst[:] = -5
    np.testing.assert_array_equal(g.csr().indices, [1, 2, 0])
    np.testing.assert_array_equal(g.csc().indices, [2, 0, 1])


@pytest.mark.parametrize("idtype", [np.int32, np.int64])
def test_from_csr_owns_its_arrays(idtype):
    indptr, indices = np.array([0, 1, 2, 3], dtype=idtype), np.array([1, 2, 0], dtype=idtype)
    eids = np.array([2, 0, 1], dtype=idtype)
    g = gk.Graph.from_csr(indptr, indices, eids=eids, idtype=idtype)
    indices[:] = 10**6
    indptr[1:] = 0
    eids[:] = 7
    src, dst, ids = g.coo()
    assert sorted(zip(ids.tolist(), src.tolist(), dst.tolist())) == [(0, 1, 2), (1, 2, 0), (2, 0, 1)]


def test_unsigned_indptr_that_falls_is_refused():
    with pytest.raises(ValueError, match="argument 'indptr': expected a non-decreasing indptr"):
        gk.Graph.from_csr(np.array([0, 255, 3], dtype=np.uint8), np.zeros(3, dtype=np.int64))


@pytest.mark.fast
def test_from_scipy_keeps_one_edge_per_stored_coo_entry():
    A = sp.coo_matrix((np.array([1.0, 2.0, 3.0]), ([1, 0, 0], [0, 1, 1])), shape=(2, 2))
    g = gk.Graph.from_scipy(A, edge_data="w")
    assert g.num_edges == 3
    indptr, indices, _ = g.csr()
    assert indptr.tolist() == [0, 2, 3] and indices.tolist() == [1, 1, 0]
    assert g.edata["w"].tolist() == [2.0, 3.0, 1.0]  # row by row, stored order within a row


@pytest.mark.parametrize("num_nodes", [2**64, 2**63])
def test_counts_past_int64_are_refused(num_nodes):
    with pytest.raises(ValueError, match="argument 'num_nodes': expected an integer <="):
        gk.Graph.from_coo([0], [0], num_nodes=num_nodes)


def test_from_networkx_refuses_a_non_graph():
    with pytest.raises(TypeError, match="argument 'nx_graph': expected a networkx graph, found builtins.list"):
        gk.Graph.from_networkx([1, 2])


def _pair():
    return gk.Graph.from_coo([0, 1], [1, 0], num_nodes=2)


@pytest.mark.parametrize("source, kind", [(-1, ValueError), (2, ValueError), (1.5, TypeError), (True, TypeError)])
def test_validate_refuses_a_source_out_of_range(source, kind):
    with pytest.raises(kind, match="argument 'source'"):
        gk.graph500.validate(_pair(), source, np.array([-1, -1]))


def test_validate_refuses_a_bipartite_block_and_bad_levels():
    block = gk.Graph.from_coo([0, 1], [0, 2], num_nodes=(2, 3))
    with pytest.raises(ValueError, match="argument 'g': expected a square graph"):
        gk.graph500.validate(block, 0, np.array([0, -1]))
    with pytest.raises(ValueError, match="argument 'levels'"):
        gk.graph500.validate(_pair(), 0, np.array([0, 0]), np.array([0]))
    with pytest.raises(TypeError, match="argument 'g'"):
        gk.graph500.validate("graph", 0, np.array([0, 0]))


def test_validate_and_search_keys_take_a_dynamic_graph():
    dg = gk.DynamicGraph(3)
    dg.apply(insert=([0, 1], [1, 0]))
    assert gk.graph500.validate(dg, 0, np.array([0, 0, -1])) == 2
    assert sorted(gk.graph500.search_keys(dg, 2).tolist()) == [0, 1]


def test_search_keys_of_an_empty_graph_is_empty():
    assert gk.graph500.search_keys(gk.Graph.from_coo([], [], num_nodes=0), 4).size == 0


def test_load_refuses_bad_archives(tmp_path):
    good = tmp_path / "good.npz"
    gk.graph.save(_pair(), good)
    arrays = dict(np.load(good))
    cases = {
        "missing": ({k: v for k, v in arrays.items() if k != "dst"}, "missing dst"),
        "short_shape": (dict(arrays, shape=np.array([2, 2])), "'shape' of shape \\(3,\\)"),
        "float_shape": (dict(arrays, shape=np.array([2.5, 2.5, 0.0])), "counts"),
        "empty_space": (dict(arrays, num_edge_ids=np.array([], dtype=np.int64)), "'num_edge_ids' of shape"),
    }
    for name, (content, message) in cases.items():
        path = tmp_path / f"{name}.npz"
        np.savez(path, **content)
        with pytest.raises(ValueError, match=message):
            gk.graph.load(path)
    text = tmp_path / "text.npz"
    text.write_text("not an archive")
    with pytest.raises(ValueError, match="argument 'path'"):
        gk.graph.load(text)


def test_load_refuses_truncated_and_corrupt_archives_by_path(tmp_path):
    good = tmp_path / "good.npz"
    g = _pair()
    g.edata["w"] = np.arange(g.num_edges, dtype=np.float64)
    gk.graph.save(g, good)
    raw = good.read_bytes()
    cuts = {"truncated_half": raw[: len(raw) // 2], "truncated_tail": raw[:-10], "no_bytes": b"",
            "flipped": raw[:40] + bytes(b ^ 0xFF for b in raw[40:80]) + raw[80:]}
    for name, content in cuts.items():
        path = tmp_path / f"{name}.npz"
        path.write_bytes(content)
        with pytest.raises(ValueError, match=f"argument 'path': expected an .npz file .* found '{path}' unreadable"):
            gk.graph.load(path)
    with pytest.raises(ValueError, match="unreadable \\(FileNotFoundError"):
        gk.graph.load(tmp_path / "absent.npz")


def test_type_errors_name_the_module_of_what_was_found():
    nx = pytest.importorskip("networkx")
    for call in (lambda: gk.bfs(nx.Graph(), 0), lambda: gk.spmm(nx.Graph(), "copy_lhs", "sum", np.ones((1, 1)))):
        with pytest.raises(TypeError, match="found networkx.classes.graph.Graph"):
            call()
