"""Every documented input error: raised before compiled code runs, naming argument, expected, found."""

import re

import numpy as np
import pytest

import graphkern as gk


def test_float_ids_are_rejected():
    with pytest.raises(TypeError, match="argument 'src': expected an integer array, found dtype float64"):
        gk.Graph.from_coo(np.array([0.0, 1.0]), np.array([1, 0]))


@pytest.mark.fast
def test_negative_and_out_of_range_ids():
    with pytest.raises(ValueError, match=r"argument 'dst': expected node ids >= 0, found -1 at position 1"):
        gk.Graph.from_coo([0, 1], [1, -1])
    with pytest.raises(ValueError, match=r"argument 'src': expected node ids < 3, found 3 at position 0"):
        gk.Graph.from_coo([3], [0], num_nodes=3)
    with pytest.raises(ValueError, match=r"argument 'dst': expected node ids < 2"):
        gk.Graph.from_coo([0], [4], num_nodes=(5, 2))
    # ids wrong both ways: the first offending position is named, whichever way it is wrong (as on the device,
    # which runs the same check over its own reductions)
    with pytest.raises(ValueError, match=r"argument 'dst': expected node ids < 3, found 5 at position 1"):
        gk.Graph.from_coo([0, 1, 2], [1, 5, -1], num_nodes=3)


def test_mismatched_lengths_and_dimensions():
    with pytest.raises(ValueError, match="expected equal lengths, found 2 and 1"):
        gk.Graph.from_coo([0, 1], [1])
    with pytest.raises(ValueError, match="argument 'src': expected a 1-D array"):
        gk.Graph.from_coo(np.zeros((2, 2), np.int64), np.zeros(4, np.int64))
    with pytest.raises(ValueError, match=r"argument 'edge_index': expected shape \(2, E\)"):
        gk.Graph.from_edge_index(np.zeros((3, 4), np.int64))


def test_bad_indptr():
    with pytest.raises(ValueError, match=r"expected indptr\[0\] == 0, found 1"):
        gk.Graph.from_csr([1, 2], [0])
    with pytest.raises(ValueError, match=r"expected indptr\[-1\] == len\(indices\) == 2, found 1"):
        gk.Graph.from_csr([0, 1], [0, 0])
    with pytest.raises(ValueError, match=r"non-decreasing indptr, found indptr\[1\] = 2 > indptr\[2\] = 1"):
        gk.Graph.from_csr([0, 2, 1, 3], [0, 1, 2])
    with pytest.raises(ValueError, match="expected at least one entry"):
        gk.Graph.from_csr([], [])


def test_bad_eids():
    with pytest.raises(ValueError, match="argument 'eids': expected unique edge ids"):
        gk.Graph.from_csr([0, 2], [0, 0], eids=[1, 1])
    with pytest.raises(ValueError, match="argument 'eids': expected 2 edge ids, found 1"):
        gk.Graph.from_csr([0, 2], [0, 0], eids=[0])
    with pytest.raises(ValueError, match=r"argument 'eids': expected edge ids < 2"):
        gk.Graph.from_csr([0, 2], [0, 0], eids=[0, 2])


def test_bad_idtype_formats_and_num_nodes():
    with pytest.raises(TypeError, match="argument 'idtype': expected int32 or int64, found float32"):
        gk.Graph.from_coo([0], [0], idtype=np.float32)
    with pytest.raises(ValueError, match="argument 'formats'"):
        gk.Graph.from_coo([0], [0], formats=["dense"])
    with pytest.raises(ValueError, match="argument 'num_nodes'"):
        gk.Graph.from_coo([0], [0], num_nodes=(1, 2, 3))
    with pytest.raises(TypeError, match="argument 'num_nodes'"):
        gk.Graph.from_coo([0], [0], num_nodes=2.0)


def test_unsigned_ids_too_large_for_the_dtype():
    with pytest.raises(ValueError, match="do not fit int64"):
        gk.Graph.from_coo(np.array([2**63], dtype=np.uint64), np.array([0], dtype=np.uint64))
    with pytest.raises(ValueError, match="expected node ids < 1, found 9223372036854775808"):
        gk.Graph.from_coo(np.array([2**63], dtype=np.uint64), np.array([0], dtype=np.uint64), num_nodes=1)


def test_device_arrays_need_a_usable_gpu():
    class FakeDeviceArray:
        __cuda_array_interface__ = {"shape": (1,), "typestr": "<i8", "data": (0, False), "version": 3}

    ok, _ = gk._config.cuda_status()
    if ok:
        pytest.skip("a GPU (or the simulator) is usable here")
    # device input builds a graph on the GPU: without one, the error says why before anything runs
    with pytest.raises(gk.BackendUnavailableError, match="backend 'cuda' is not usable: "):
        gk.Graph.from_coo(FakeDeviceArray(), [0])
    with pytest.raises(TypeError, match="found a CUDA device array"):
        gk.spmm(gk.Graph.from_coo([0], [0]), "copy_lhs", "sum", FakeDeviceArray(), backend="cpu")


def test_inputs_are_never_modified():
    src = np.array([2, 0, 1], dtype=np.int64)
    dst = np.array([0, 1, 2], dtype=np.int64)
    keep = (src.copy(), dst.copy())
    g = gk.Graph.from_coo(src, dst, idtype="int64")
    g.csr(), g.csc(), g.reverse().csr(), g.simple()
    np.testing.assert_array_equal(src, keep[0])
    np.testing.assert_array_equal(dst, keep[1])
    # a failing call leaves its inputs alone too
    bad = np.array([0, 5])
    with pytest.raises(ValueError):
        gk.Graph.from_coo(bad, np.array([0, 0]), num_nodes=2)
    assert bad.tolist() == [0, 5]


def test_scipy_input_must_be_sparse():
    with pytest.raises(TypeError, match="argument 'matrix': expected a scipy.sparse"):
        gk.Graph.from_scipy(np.eye(2))


def test_to_scipy_bad_arguments():
    g = gk.Graph.from_coo([0], [1])
    with pytest.raises(ValueError, match="argument 'fmt'"):
        g.to_scipy("dense")
    with pytest.raises(ValueError, match="argument 'data': expected 1 values"):
        g.to_scipy(data=[1.0, 2.0])


def test_counts_past_int64_are_refused_by_name():
    """Every count an entry point takes is checked against int64, the widest index type: an edge-id
    space of 2**64 was once accepted and failed later."""
    huge = 2**64
    with pytest.raises(ValueError, match="argument 'num_edge_ids': expected an integer <= 9223372036854775807"):
        gk.Graph.from_coo([0], [1], num_edge_ids=huge)
    with pytest.raises(ValueError, match="argument 'num_edge_ids'"):
        gk.Graph.from_csr([0, 1], [0], num_edge_ids=huge)
    with pytest.raises(ValueError, match="argument 'num_dst': expected an integer <="):
        gk.Graph.from_csr([0, 1], [0], num_dst=huge)
    with pytest.raises(ValueError, match="argument 'num_src': expected an integer <="):
        gk.Graph.from_csc([0, 1], [0], num_src=huge)
    with pytest.raises(ValueError, match="argument 'num_nodes'"):
        gk.Graph.from_coo([0], [1], num_nodes=huge)
    with pytest.raises(ValueError, match="argument 'num_edges': expected an integer <="):
        gk.graph.uniform_edges(10, huge)
    with pytest.raises(ValueError, match="argument 'num_keys': expected an integer <="):
        gk.graph500.search_keys(gk.Graph.from_coo([0], [1]), huge)
    g = gk.Graph.from_coo([0], [1], num_edge_ids=2**40)  # a large space of unused ids is fine
    assert g.num_edge_ids == 2**40 and g.idtype == np.int64


def test_a_spread_edge_id_space_is_checked_without_allocating_it():
    """Edges may hold any ids of a space far larger than memory; their checks (repeats, ids of no edge)
    once counted over the whole space and failed in NumPy's allocator on a valid graph."""
    torch = pytest.importorskip("torch")
    import graphkern.torch as gkt

    src, dst = np.array([0, 1, 2]), np.array([2, 2, 0])
    g = gk.Graph.from_coo(src, dst, num_nodes=3, eids=np.array([0, 2**40, 7]), num_edge_ids=2**41)
    assert g.num_edge_ids == 2**41 and g.edges()[1].tolist() == [2, 0, 2]  # in id order: 0, 7, 2**40
    with pytest.raises(ValueError, match="argument 'eids': expected unique edge ids, found 7 2 times"):
        gk.Graph.from_coo(src, dst, num_nodes=3, eids=np.array([7, 2**40, 7]), num_edge_ids=2**41)
    out = gkt.ops.edge_softmax(g, torch.zeros(3, dtype=torch.float64), eids=np.array([2**40, 0, 7]))
    assert out.tolist() == [0.5, 0.5, 1.0]  # edges 2**40 and 0 share node 2; edge 7 alone into node 0
    out = gkt.ops.edge_softmax(g, torch.zeros(2, dtype=torch.float64), eids=np.array([0, 2**40]), norm_by="src")
    assert out.tolist() == [1.0, 1.0]


def _id_space_calls():
    """``(label, call, the argument its message names)``: every public argument that names nodes or edges,
    given an id outside the space it names (a node id past the nodes, an edge id past the id space or in
    it but held by no edge, a negative id), and every count past what the index types hold."""
    torch = pytest.importorskip("torch")
    import graphkern.torch as gkt

    src, dst, n = np.array([0, 1, 2]), np.array([1, 2, 0]), 3
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    spread = gk.Graph.from_coo(src, dst, num_nodes=n, eids=np.array([0, 2, 4]), num_edge_ids=5)
    wide = gk.Graph.from_coo(src, dst, num_nodes=n, eids=np.array([0, 2**40, 7]), num_edge_ids=2**41)
    last_ids = gk.Graph.from_coo(src, dst, num_nodes=n, eids=np.array([0, 1, 2**63 - 2]), num_edge_ids=2**63 - 1)
    many_nodes = gk.Graph.from_coo(src, dst, num_nodes=2**62)
    dg = gk.DynamicGraph(n)
    dg.apply(insert=(src, dst))
    x = np.ones((n, 2))
    t = torch.ones(3, 2, dtype=torch.float64)
    b = torch.ones(2, 2, 2, dtype=torch.float64)
    return [
        ("from_coo eids past num_edge_ids", lambda: gk.Graph.from_coo(src, dst, eids=[0, 1, 5], num_edge_ids=5),
         "eids"),
        ("from_coo eids negative", lambda: gk.Graph.from_coo(src, dst, eids=[0, -1, 2]), "eids"),
        ("from_coo eids repeated", lambda: gk.Graph.from_coo(src, dst, eids=[0, 0, 1]), "eids"),
        ("from_csr eids past the edges", lambda: gk.Graph.from_csr([0, 1, 2, 3], [1, 2, 0], eids=[0, 1, 3]), "eids"),
        ("torch edge_softmax eids past num_edge_ids",
         lambda: gkt.ops.edge_softmax(spread, torch.ones(1), eids=np.array([5])), "eids"),
        ("torch edge_softmax eids of no edge",
         lambda: gkt.ops.edge_softmax(spread, torch.ones(1), eids=np.array([1])), "eids"),
        ("torch edge_softmax eids of no edge in a space of 2**41",
         lambda: gkt.ops.edge_softmax(wide, torch.ones(2), eids=np.array([2**40, 8])), "eids"),
        ("bfs source past the nodes", lambda: gk.bfs(g, n), "source"),
        ("bfs source negative", lambda: gk.bfs(g, -1), "source"),
        ("bfs sources past the nodes", lambda: gk.bfs(g, sources=[0, n]), "sources[1]"),
        ("explain bfs source", lambda: gk.explain(g, "bfs", source=n), "source"),
        ("IncrementalBFS source", lambda: gk.IncrementalBFS(dg, n), "source"),
        ("IncrementalBFS source on no nodes", lambda: gk.IncrementalBFS(gk.DynamicGraph(0), 0), "source"),
        ("graph500.validate source", lambda: gk.graph500.validate(g, n, np.zeros(n, np.int64)), "source"),
        ("DynamicGraph.apply insert", lambda: dg.apply(insert=([0], [n])), "insert[1]"),
        ("DynamicGraph.apply delete", lambda: dg.apply(delete=([-1], [0])), "delete[0]"),
        ("DynamicGraph.contains", lambda: dg.contains([n], [0]), "src"),
        ("node_subgraph", lambda: g.node_subgraph([0, n]), "nodes"),
        ("in_subgraph", lambda: g.in_subgraph([-1]), "nodes"),
        ("TemporalGraph ids", lambda: gk.graph.temporal.TemporalGraph(src, [0, 1, n], n, base=2, step=1), "dst"),
        ("undirected ids", lambda: gk.graph.undirected(src, [0, 1, n], n), "dst"),
        ("read_edgelist ids past num_nodes", None, "num_nodes"),
        ("gather_mm idx_b", lambda: gk.gather_mm(x[:, :2].copy(), b.numpy(), idx_b=np.array([0, 2, 1])), "idx_b"),
        ("torch gather_mm idx_a", lambda: gkt.gather_mm(t, b, idx_a=np.array([0, 3]), idx_b=np.array([0, 1])),
         "idx_a"),
        ("RelGraphConv etypes", lambda: gkt.RelGraphConv(2, 2, 2).double()(g, t, np.array([0, 2, 1])), "etypes"),
        # counts: each against int64, the widest index type (and the node bound of the packed keys)
        ("DynamicGraph num_nodes", lambda: gk.DynamicGraph(2**31), "num_nodes"),
        ("uniform num_edges", lambda: gk.graph.uniform(4, 2**63), "num_edges"),
        ("kronecker edges past int64", lambda: gk.graph.kronecker_edges(40, 2**40), "edgefactor"),
        ("graph500_random_doubles count", lambda: gk.graph.graph500_random_doubles(2**63), "count"),
        ("TemporalGraph base", lambda: gk.graph.temporal.TemporalGraph(src, dst, n, base=4, step=1), "base"),
        ("search_keys num_keys", lambda: gk.graph500.search_keys(g, 2**63), "num_keys"),
        # totals of counts: each once wrapped past int64 into a negative count or id
        ("batch nodes past int64", lambda: gk.batch([many_nodes, many_nodes]), "graphs"),
        ("batch edge ids past int64", lambda: gk.batch([last_ids, g]), "graphs"),
        ("add_self_loop edge ids past int64", lambda: last_ids.add_self_loop(), "g"),
    ]


@pytest.mark.parametrize("case", range(34))
def test_every_id_argument_is_checked_against_the_space_it_names(case, tmp_path):
    calls = _id_space_calls()
    assert len(calls) == 34
    label, call, name = calls[case]
    if call is None:  # a reader's ids against the num_nodes it was given
        path = tmp_path / "g.txt"
        path.write_text("0 1\n1 5\n")
        call = lambda: gk.graph.read_edgelist(path, num_nodes=3)  # noqa: E731
    with pytest.raises(ValueError, match=re.escape(f"argument '{name}'")):
        call()
