"""Transforms and conversions (graph/transform.py, graph/interop.py) against plain NumPy references."""

import numpy as np
import pytest
from graph_cases import CASES
from hypothesis import given
from hypothesis import strategies as st

import graphkern as gk

SMALL = ["empty", "no_edges", "isolated_and_zero_in_degree", "self_loops", "multi_edges", "bipartite",
         "unsorted_random"]
SQUARE = [name for name in SMALL if name != "bipartite"]


def _counts(n):
    return n if isinstance(n, tuple) else (n, n)


def _graph(name, idtype):
    src, dst, n = CASES[name]()
    return gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype), np.asarray(src), np.asarray(dst), n


def _edge_list(g):
    src, dst = g.edges()
    return np.asarray(src, np.int64).tolist(), np.asarray(dst, np.int64).tolist()


def _snapshot(g):
    """Everything a transform must leave as it was."""
    return (_edge_list(g), g.num_src, g.num_dst, g.num_edge_ids, sorted(g.formats()["created"]), g.batch_size,
            {k: np.array(v) for k, v in g.edata.items()})


def _same_snapshot(a, b):
    assert a[:6] == b[:6]
    assert a[6].keys() == b[6].keys()
    for key in a[6]:
        np.testing.assert_array_equal(a[6][key], b[6][key])


# ------------------------------------------------------------------ references, written for reading


def ref_add_self_loop(src, dst, n):
    return list(src) + list(range(n)), list(dst) + list(range(n))


def ref_remove_self_loop(src, dst):
    kept = [e for e in range(len(src)) if src[e] != dst[e]]
    return [src[e] for e in kept], [dst[e] for e in kept], kept


def ref_batch(parts):
    """parts: list of (src, dst, num_src, num_dst) -> the block-diagonal edge list."""
    out_src, out_dst, src_off, dst_off = [], [], 0, 0
    for src, dst, ns, nd in parts:
        out_src += [int(u) + src_off for u in src]
        out_dst += [int(v) + dst_off for v in dst]
        src_off, dst_off = src_off + ns, dst_off + nd
    return out_src, out_dst


def ref_node_subgraph(src, dst, nodes):
    new_id = {int(v): i for i, v in enumerate(nodes)}
    kept = [e for e in range(len(src)) if int(src[e]) in new_id and int(dst[e]) in new_id]
    return [new_id[int(src[e])] for e in kept], [new_id[int(dst[e])] for e in kept], kept


def ref_in_subgraph(src, dst, nodes):
    wanted = {int(v) for v in nodes}
    kept = [e for e in range(len(src)) if int(dst[e]) in wanted]
    return [int(src[e]) for e in kept], [int(dst[e]) for e in kept], kept


# ------------------------------------------------------------------ self-loops


@pytest.mark.fast
@pytest.mark.parametrize("name", SQUARE)
def test_add_self_loop_appends_one_loop_per_node(name, idtype):
    g, src, dst, n = _graph(name, idtype)
    g.edata["w"] = np.arange(g.num_edges, dtype=np.float32)
    before = _snapshot(g)
    h = g.add_self_loop()
    assert _edge_list(h) == ref_add_self_loop(src.tolist(), dst.tolist(), n)
    assert h.num_edges == g.num_edges + n and h.idtype == idtype and h.batch_size == 1
    np.testing.assert_array_equal(h.edata["w"], np.concatenate([np.arange(g.num_edges), np.ones(n)]))
    _same_snapshot(before, _snapshot(g))


@pytest.mark.fast
@pytest.mark.parametrize("name", SQUARE)
def test_remove_self_loop_compacts_ids_in_order(name, idtype):
    g, src, dst, _ = _graph(name, idtype)
    g.edata["w"] = np.arange(g.num_edges) * 10
    before = _snapshot(g)
    h, kept = g.remove_self_loop(return_eids=True)
    want_src, want_dst, want_kept = ref_remove_self_loop(src.tolist(), dst.tolist())
    assert _edge_list(h) == (want_src, want_dst)
    assert kept.tolist() == want_kept and kept.dtype == np.int64
    np.testing.assert_array_equal(h.edata["w"], np.asarray(want_kept, np.int64) * 10)
    assert h.idtype == idtype
    _same_snapshot(before, _snapshot(g))


def test_self_loops_on_a_graph_built_from_csr_and_with_unused_ids():
    # from_csr numbers edges by slot; eids given: edge ids are not positions
    g = gk.Graph.from_csr([0, 2, 3, 4], [1, 0, 1, 2], eids=[3, 0, 1, 2])
    src, dst = _edge_list(g)
    assert _edge_list(g.add_self_loop()) == ref_add_self_loop(src, dst, 3)
    assert _edge_list(g.remove_self_loop())[:2] == tuple(ref_remove_self_loop(src, dst)[:2])
    # ids 1 and 4 unused: loops take ids 5.. and the space grows by n
    sparse = gk.Graph.from_coo([0, 1, 1], [1, 1, 2], eids=[0, 2, 3], num_edge_ids=5)
    h = sparse.add_self_loop()
    assert h.num_edge_ids == 8 and sorted(h.coo().eids.tolist()) == [0, 2, 3, 5, 6, 7]
    r, kept = sparse.remove_self_loop(return_eids=True)
    assert r.num_edge_ids == 2 and kept.tolist() == [0, 3] and _edge_list(r) == ([0, 1], [1, 2])


def test_add_self_loop_refuses_a_bipartite_block():
    g = gk.Graph.from_coo([0, 1], [0, 0], num_nodes=(3, 1))
    with pytest.raises(ValueError, match=r"argument 'g': expected a graph with num_src == num_dst.*3 source and 1"):
        g.add_self_loop()
    # a square block may lose its self-loops (ids equal on both sides name one node); it stays a block
    h = gk.Graph.from_coo([0, 1], [0, 0], num_nodes=(2, 2)).remove_self_loop()
    assert h.is_block and _edge_list(h) == ([1], [0])
    with pytest.raises(TypeError, match="argument 'return_eids'"):
        g.remove_self_loop(return_eids="yes")


def test_add_self_loop_keeps_int32():
    g = gk.Graph.from_coo([0], [1], num_nodes=4, idtype="int32")
    assert g.add_self_loop().idtype == np.int32


def test_torch_features_travel_with_their_edges_and_nodes():
    torch = pytest.importorskip("torch")
    g = gk.Graph.from_coo([0, 1, 1], [1, 1, 2])
    g.edata["w"] = torch.tensor([[1.0], [2.0], [3.0]])
    g.ndata["h"] = torch.tensor([10, 11, 12])
    assert g.add_self_loop().edata["w"].flatten().tolist() == [1, 2, 3, 1, 1, 1]
    assert g.remove_self_loop().edata["w"].flatten().tolist() == [1, 3]
    sub = g.node_subgraph([2, 1])
    assert sub.ndata["h"].tolist() == [12, 11] and sub.edata["w"].flatten().tolist() == [2, 3]
    bg = gk.batch([g, g])
    assert isinstance(bg.edata["w"], torch.Tensor) and bg.edata["w"].shape == (6, 1)
    assert [p.ndata["h"].tolist() for p in gk.unbatch(bg)] == [[10, 11, 12]] * 2


@pytest.mark.parametrize("fmt", ["csr", "csc"])
def test_transforms_read_a_graph_restricted_to_one_format_and_build_nothing(fmt):
    ids = gk.graph.transform.edges_by_id
    full = gk.Graph.from_csr([0, 3, 5, 6], [1, 0, 1, 2, 1, 0], eids=[4, 0, 5, 1, 3, 2])
    g = gk.Graph.from_csr([0, 3, 5, 6], [1, 0, 1, 2, 1, 0], eids=[4, 0, 5, 1, 3, 2], formats=fmt)
    g.formats(fmt)  # only the allowed format exists; CSC is built from the CSR at construction
    created = g.formats()
    as_lists = lambda h: [np.asarray(a).tolist() for a in ids(h)]  # noqa: E731
    assert as_lists(g) == as_lists(full)
    assert as_lists(g.add_self_loop()) == as_lists(full.add_self_loop())
    assert as_lists(g.remove_self_loop()) == as_lists(full.remove_self_loop())
    assert as_lists(g.node_subgraph([2, 0])) == as_lists(full.node_subgraph([2, 0]))
    assert as_lists(g.in_subgraph([1])) == as_lists(full.in_subgraph([1]))
    assert [as_lists(p) for p in gk.unbatch(gk.batch([g, full]))] == [as_lists(g), as_lists(full)]
    np.testing.assert_array_equal(g.to_edge_index(), full.to_edge_index())
    assert g.formats() == created and g.add_self_loop().formats()["created"] == [fmt]


# ------------------------------------------------------------------ batch / unbatch


def _parts(idtype):
    return [_graph(name, idtype) for name in SMALL]


def test_batch_is_block_diagonal_and_unbatch_returns_the_inputs(idtype):
    parts = _parts(idtype)
    graphs = [p[0] for p in parts]
    for i, g in enumerate(graphs):
        g.edata["w"] = np.full(g.num_edges, float(i))
    before = [_snapshot(g) for g in graphs]
    bg = gk.batch(graphs)
    want = ref_batch([(src, dst, *_counts(n)) for _, src, dst, n in parts])
    assert _edge_list(bg) == want
    assert bg.batch_size == len(graphs) and bg.is_block
    np.testing.assert_array_equal(bg.batch_num_nodes("src"), [g.num_src for g in graphs])
    np.testing.assert_array_equal(bg.batch_num_nodes("dst"), [g.num_dst for g in graphs])
    np.testing.assert_array_equal(bg.batch_num_edges(), [g.num_edges for g in graphs])
    assert bg.batch_num_edges().dtype == np.int64
    with pytest.raises(ValueError, match="argument 'side'"):
        bg.batch_num_nodes()
    for g, part in zip(graphs, gk.unbatch(bg)):
        assert _edge_list(part) == _edge_list(g)
        assert (part.num_src, part.num_dst, part.is_block, part.idtype) == (g.num_src, g.num_dst, g.is_block,
                                                                           g.idtype)
        np.testing.assert_array_equal(part.edata["w"], g.edata["w"])
    for snap, g in zip(before, graphs):
        _same_snapshot(snap, _snapshot(g))


def test_batch_of_square_graphs_and_nested_batches():
    a = gk.Graph.from_coo([0, 1], [1, 1], num_nodes=2)
    b = gk.Graph.from_coo([2, 0, 0], [0, 0, 0], num_nodes=3)
    a.ndata["h"], b.ndata["h"] = np.array([1.0, 2.0]), np.array([3.0, 4.0, 5.0])
    bg = gk.batch([a, b])
    assert not bg.is_block and bg.num_nodes == 5
    np.testing.assert_array_equal(bg.batch_num_nodes(), [2, 3])
    np.testing.assert_array_equal(bg.ndata["h"], [1, 2, 3, 4, 5])
    nested = gk.batch([bg, a])  # a batched input contributes its parts, as dgl.batch flattens
    np.testing.assert_array_equal(nested.batch_num_nodes(), [2, 3, 2])
    assert [_edge_list(p) for p in gk.unbatch(nested)] == [_edge_list(a), _edge_list(b), _edge_list(a)]
    np.testing.assert_array_equal(gk.unbatch(nested)[1].ndata["h"], [3, 4, 5])
    # a graph never batched: one part, counts of its own
    assert gk.Graph.from_coo([0], [1]).batch_size == 1
    np.testing.assert_array_equal(a.batch_num_nodes(), [2])
    assert [_edge_list(p) for p in gk.unbatch(a)] == [_edge_list(a)]


def test_batch_keeps_unused_edge_ids_per_part():
    a = gk.Graph.from_coo([0, 1], [1, 0], eids=[2, 0], num_edge_ids=3)
    b = gk.Graph.from_coo([0], [0], num_nodes=1)
    bg = gk.batch([a, b])
    assert bg.num_edge_ids == 4
    coo = bg.coo()
    by_id = dict(zip(coo.eids.tolist(), zip(coo.src.tolist(), coo.dst.tolist())))
    assert by_id == {2: (0, 1), 0: (1, 0), 3: (2, 2)}
    pa, pb = gk.unbatch(bg)
    assert pa.num_edge_ids == 3 and sorted(zip(pa.coo().eids.tolist(), pa.coo().src.tolist())) == [(0, 1), (2, 0)]
    assert _edge_list(pb) == ([0], [0])


@pytest.mark.fast
def test_batch_mixed_idtypes_widen_and_remove_self_loop_keeps_the_batch():
    a = gk.Graph.from_coo([0, 1], [0, 1], idtype="int32")
    b = gk.Graph.from_coo([0, 1, 2], [1, 2, 2], idtype="int64")
    bg = gk.batch([a, b])
    assert bg.idtype == np.int64
    r = bg.remove_self_loop()
    np.testing.assert_array_equal(r.batch_num_edges(), [0, 2])
    np.testing.assert_array_equal(r.batch_num_nodes(), [2, 3])
    assert [_edge_list(p) for p in gk.unbatch(r)] == [([], []), ([0, 1], [1, 2])]
    # the transforms that move edges out of the parts' id ranges drop the batch (documented)
    assert bg.add_self_loop().batch_size == 1
    assert bg.node_subgraph([0, 1]).batch_size == 1
    assert bg.in_subgraph([0]).batch_size == 1
    # reverse keeps it; formats() and to("cpu") too
    assert bg.reverse().batch_size == 2 and bg.formats("csr").batch_size == 2


def test_spmm_on_a_batch_equals_the_parts_concatenated(idtype):
    graphs = [_graph(name, idtype)[0] for name in SQUARE]
    bg = gk.batch(graphs)
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((g.num_src, 3)) for g in graphs]
    got = gk.spmm(bg, "copy_lhs", "sum", np.concatenate(xs))
    want = np.concatenate([gk.spmm(g, "copy_lhs", "sum", x) for g, x in zip(graphs, xs)])
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    ws = [rng.standard_normal(g.num_edges) for g in graphs]
    got = gk.spmm(bg, "copy_rhs", "max", efeat=np.concatenate(ws))
    want = np.concatenate([gk.spmm(g, "copy_rhs", "max", efeat=w) for g, w in zip(graphs, ws)])
    np.testing.assert_array_equal(got, want)


@given(st.lists(st.tuples(st.integers(0, 6), st.integers(0, 12), st.integers(0, 2 ** 16)), min_size=1, max_size=5))
def test_batch_unbatch_round_trip_property(specs):
    graphs = []
    for n, e, seed in specs:
        rng = np.random.default_rng(seed)
        e = e if n else 0
        graphs.append(gk.Graph.from_coo(rng.integers(0, max(n, 1), e), rng.integers(0, max(n, 1), e), num_nodes=n))
    bg = gk.batch(graphs)
    assert bg.num_edges == sum(g.num_edges for g in graphs)
    assert [_edge_list(p) for p in gk.unbatch(bg)] == [_edge_list(g) for g in graphs]
    assert [p.num_nodes for p in gk.unbatch(bg)] == [g.num_nodes for g in graphs]


def test_batch_refuses_bad_input():
    g = gk.Graph.from_coo([0], [1])
    with pytest.raises(ValueError, match="argument 'graphs': expected at least one graph, found an empty list"):
        gk.batch([])
    with pytest.raises(TypeError, match=r"argument 'graphs': expected a list of graphkern Graphs, found .*Graph"):
        gk.batch(g)
    with pytest.raises(TypeError, match=r"argument 'graphs\[1\]': expected a graphkern Graph, found tuple"):
        gk.batch([g, ([0], [1])])
    h = gk.Graph.from_coo([0], [1])
    h.edata["w"] = np.ones(1)
    with pytest.raises(ValueError, match=r"expected the same edata keys in every graph, found \[\] in graphs\[0\] "
                                         r"and \['w'\] in graphs\[1\]"):
        gk.batch([g, h])
    with pytest.raises(TypeError, match="argument 'g': expected a graphkern Graph"):
        gk.unbatch([g])
    assert _edge_list(g) == ([0], [1]) and h.batch_size == 1


# ------------------------------------------------------------------ subgraphs


def _node_choices(n, rng):
    """Orders and subsets that break relabelling: all, none, reversed, a random half, one node."""
    if n == 0:
        return [np.zeros(0, np.int64)]
    return [np.arange(n), np.zeros(0, np.int64), np.arange(n)[::-1].copy(), rng.permutation(n)[: n // 2 + 1],
            np.array([n - 1])]


@pytest.mark.parametrize("name", SQUARE)
def test_node_subgraph_matches_a_numpy_filter(name, idtype):
    g, src, dst, n = _graph(name, idtype)
    g.ndata["h"] = np.arange(n) * 2
    g.edata["w"] = np.arange(g.num_edges) * 3
    rng = np.random.default_rng(1)
    for nodes in _node_choices(n, rng):
        for as_passed in (nodes.astype(idtype), nodes.tolist()):
            before = _snapshot(g)
            sub = g.node_subgraph(as_passed)
            want_src, want_dst, kept = ref_node_subgraph(src, dst, nodes)
            assert _edge_list(sub) == (want_src, want_dst)
            assert sub.num_nodes == nodes.size and sub.idtype == idtype
            assert sub.parent_nids.dtype == np.int64 and sub.parent_nids.tolist() == nodes.tolist()
            assert sub.parent_eids.dtype == np.int64 and sub.parent_eids.tolist() == kept
            np.testing.assert_array_equal(sub.ndata["h"], nodes * 2)
            np.testing.assert_array_equal(sub.edata["w"], np.asarray(kept, np.int64) * 3)
            assert not sub.parent_nids.flags.writeable
            _same_snapshot(before, _snapshot(g))
    mask = np.arange(n) % 2 == 0
    sub = g.node_subgraph(mask)
    assert sub.parent_nids.tolist() == np.flatnonzero(mask).tolist()
    assert _edge_list(sub) == tuple(ref_node_subgraph(src, dst, np.flatnonzero(mask))[:2])


@pytest.mark.parametrize("name", SMALL)
def test_in_subgraph_keeps_every_node_and_the_in_edges(name, idtype):
    g, src, dst, n = _graph(name, idtype)
    g.edata["w"] = np.arange(g.num_edges) + 0.5
    rng = np.random.default_rng(2)
    for nodes in _node_choices(g.num_dst, rng):
        before = _snapshot(g)
        sub = g.in_subgraph(nodes.astype(idtype))
        want_src, want_dst, kept = ref_in_subgraph(src, dst, nodes)
        assert _edge_list(sub) == (want_src, want_dst)
        assert (sub.num_src, sub.num_dst, sub.is_block) == (g.num_src, g.num_dst, g.is_block)
        assert sub.parent_nids is None and sub.parent_eids.tolist() == kept
        np.testing.assert_array_equal(sub.edata["w"], np.asarray(kept) + 0.5)
        _same_snapshot(before, _snapshot(g))


def test_subgraphs_of_a_graph_with_non_positional_edge_ids():
    g = gk.Graph.from_csr([0, 2, 3, 4], [1, 2, 2, 0], eids=[3, 1, 0, 2])
    src, dst = _edge_list(g)  # in edge-id order
    sub = g.node_subgraph([1, 2])
    want_src, want_dst, kept = ref_node_subgraph(src, dst, [1, 2])
    assert _edge_list(sub) == (want_src, want_dst) and sub.parent_eids.tolist() == kept
    sparse = gk.Graph.from_coo([0, 1, 2], [1, 2, 0], eids=[4, 0, 2], num_edge_ids=5)
    sub = sparse.in_subgraph([0, 1])
    assert sub.parent_eids.tolist() == [2, 4] and _edge_list(sub) == ([2, 0], [0, 1])


@pytest.mark.parametrize("call", ["node_subgraph", "in_subgraph"])
def test_subgraph_refuses_bad_nodes_and_leaves_the_graph(call):
    g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0])
    before = _snapshot(g)
    nodes = np.array([0, 1])
    bad = [
        ([0, 3], ValueError, r"argument 'nodes': expected node ids < 3, found 3 at position 1"),
        ([-1], ValueError, r"argument 'nodes': expected node ids >= 0, found -1"),
        ([1, 1], ValueError, r"argument 'nodes': expected distinct node ids, found 1 2 times"),
        (np.array([0.0, 1.0]), TypeError, r"argument 'nodes': expected an integer array, found dtype float64"),
        (np.array([True, False]), ValueError, r"argument 'nodes': expected a bool mask of length 3"),
        (np.zeros((1, 2), np.int64), ValueError, r"argument 'nodes': expected a 1-D array"),
    ]
    for value, kind, message in bad:
        with pytest.raises(kind, match=message):
            getattr(g, call)(value)
    getattr(g, call)(nodes)
    assert nodes.tolist() == [0, 1] and nodes.flags.writeable
    _same_snapshot(before, _snapshot(g))
    with pytest.raises(TypeError, match="argument 'g': expected a graphkern Graph, found list"):
        getattr(gk.graph.transform, call)([0], [0])


def test_node_subgraph_refuses_a_bipartite_block_in_subgraph_takes_it():
    g = gk.Graph.from_coo([0, 2], [0, 1], num_nodes=(3, 2))
    with pytest.raises(ValueError, match="argument 'g': expected a graph with num_src == num_dst for node_subgraph"):
        g.node_subgraph([0])
    sub = g.in_subgraph([1])
    assert _edge_list(sub) == ([2], [1]) and sub.parent_eids.tolist() == [1] and sub.num_src == 3


# ------------------------------------------------------------------ edge index and PyG


@pytest.mark.parametrize("name", SMALL)
def test_to_edge_index_is_edge_id_order_and_inverts_from_edge_index(name, idtype):
    g, src, dst, n = _graph(name, idtype)
    ei = g.to_edge_index()
    assert ei.dtype == np.int64 and ei.shape == (2, src.size)
    np.testing.assert_array_equal(ei, np.stack([src, dst]).astype(np.int64).reshape(2, -1))
    back = gk.Graph.from_edge_index(ei, num_nodes=n)
    assert _edge_list(back) == _edge_list(g)
    ei[0] = 0  # the array is the caller's; the graph does not share it
    assert _edge_list(g) == (src.tolist(), dst.tolist())


def test_from_pyg_is_duck_typed():
    class Data:  # what a torch_geometric Data looks like to from_pyg
        def __init__(self, edge_index, num_nodes):
            self.edge_index, self.num_nodes = edge_index, num_nodes

    g = gk.Graph.from_pyg(Data(np.array([[0, 3], [1, 1]]), 6))
    assert g.num_nodes == 6 and g.to_edge_index().tolist() == [[0, 3], [1, 1]]
    g = gk.Graph.from_pyg(Data(np.array([[0, 3], [1, 1]]), None))
    assert g.num_nodes == 4
    assert gk.Graph.from_pyg(Data(np.array([[0], [1]]), 2), num_nodes=(1, 2)).is_block
    with pytest.raises(ValueError, match=r"argument 'edge_index': expected shape \(2, E\)"):
        gk.Graph.from_pyg(Data(np.zeros((3, 2), np.int64), 3))
    with pytest.raises(TypeError, match="argument 'data': expected a torch_geometric Data with an edge_index"):
        gk.Graph.from_pyg(np.zeros((2, 1), np.int64))


def test_from_dgl_is_duck_typed():
    class Counts(np.ndarray):  # DGL hands its counts back as tensors, which .cpu() brings to the host
        def cpu(self):
            return np.asarray(self)

    class DGLGraph:  # what a batched homogeneous DGL graph looks like to from_dgl
        canonical_etypes = [("_N", "_E", "_N")]
        idtype = "torch.int64"
        batch_size = 2

        def edges(self, order):
            assert order == "eid"
            return np.array([0, 3, 2]), np.array([1, 4, 2])

        def num_src_nodes(self):
            return 5

        num_dst_nodes = num_src_nodes

        def batch_num_nodes(self):
            return np.array([2, 3]).view(Counts)

        def batch_num_edges(self):
            return np.array([1, 2]).view(Counts)

    g = gk.Graph.from_dgl(DGLGraph())
    assert type(g) is gk.Graph and g.idtype == np.int64 and not g.is_block
    assert _edge_list(g) == ([0, 3, 2], [1, 4, 2])
    assert g.batch_num_nodes().tolist() == [2, 3] and g.batch_num_edges().tolist() == [1, 2]
    assert [_edge_list(part) for part in gk.unbatch(g)] == [([0], [1]), ([1, 0], [2, 0])]
    assert gk.Graph.from_dgl(DGLGraph(), idtype="int32").idtype == np.int32


@pytest.mark.fast
def test_from_pyg_takes_torch_tensors():
    torch = pytest.importorskip("torch")

    class Data:
        edge_index = torch.tensor([[0, 1], [1, 2]])
        num_nodes = 3

    g = gk.Graph.from_pyg(Data())
    assert _edge_list(g) == ([0, 1], [1, 2])
    assert torch.equal(torch.from_numpy(g.to_edge_index()), Data.edge_index)


@pytest.mark.fast
def test_to_pyg_and_to_dgl_say_what_is_missing(monkeypatch):
    import sys

    for name in ("dgl", "torch_geometric", "torch_geometric.data"):
        monkeypatch.setitem(sys.modules, name, None)  # a None entry makes the import fail, as when absent
    g = gk.Graph.from_coo([0], [1])
    with pytest.raises(ImportError, match="to_pyg\\(\\) needs the 'torch_geometric' package"):
        g.to_pyg()
    with pytest.raises(ImportError, match="to_dgl\\(\\) needs the 'dgl' package"):
        g.to_dgl()
    with pytest.raises(ValueError, match="expected a square graph, found a bipartite block"):
        gk.Graph.from_coo([0], [1], num_nodes=(1, 2)).to_pyg()
    with pytest.raises(TypeError, match="argument 'dg': expected a dgl.DGLGraph, found"):
        gk.Graph.from_dgl(g)


def test_importing_graphkern_imports_no_torch_or_dgl():
    import subprocess
    import sys

    code = ("import sys, graphkern as gk; g = gk.Graph.from_coo([0], [1]); g.add_self_loop(); gk.batch([g, g]); "
            "g.to_edge_index(); print(sorted(m for m in ('torch', 'dgl', 'torch_geometric') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_transforms_of_a_bipartite_block_keep_its_sides_or_are_refused_by_name():
    """A block with num_src != num_dst: transforms that take source id i and destination id i for one node
    (self-loops, induced subgraphs) are refused as DGL refuses them (remove_self_loop once dropped the
    edges i -> i between two different nodes); the others keep both sides and the edges."""
    b = gk.Graph.from_coo([0, 1, 2, 2], [1, 0, 1, 1], num_nodes=(3, 2))
    refused = {"self-loops": (b.add_self_loop, b.remove_self_loop), "node_subgraph": (lambda: b.node_subgraph([0]),)}
    for what, calls in refused.items():
        for call in calls:
            with pytest.raises(ValueError, match=f"argument 'g': expected a graph with num_src == num_dst for "
                                                 f"{what}, found 3 source and 2 destination nodes"):
                call()
    r = b.reverse()
    assert (r.num_src, r.num_dst, _edge_list(r)) == (2, 3, ([1, 0, 1, 1], [0, 1, 2, 2]))
    s = b.simple()
    assert (s.num_src, s.num_dst, _edge_list(s)[:2]) == (3, 2, ([0, 1, 2], [1, 0, 1]))
    sub = b.in_subgraph([1])  # destination ids
    assert (sub.num_src, sub.num_dst, sub.parent_eids.tolist()) == (3, 2, [0, 2, 3])
    with pytest.raises(ValueError, match="argument 'nodes': expected node ids < 2"):
        b.in_subgraph([2])
    bb = gk.batch([b, b])
    assert (bb.num_src, bb.num_dst, [(p.num_src, p.num_dst) for p in gk.unbatch(bb)]) == (6, 4, [(3, 2), (3, 2)])
