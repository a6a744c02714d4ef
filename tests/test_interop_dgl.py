"""Transforms and conversions compared with DGL itself (skipped where dgl is not importable).

DGL numbers the edges of its subgraphs differently (see docs/interop.md), so subgraphs are compared
through their parent edge ids; everything else must agree edge id for edge id.
"""

import numpy as np
import pytest
from graph_cases import CASES

import graphkern as gk

dgl = pytest.importorskip("dgl")
torch = pytest.importorskip("torch")

SMALL = ["empty", "no_edges", "isolated_and_zero_in_degree", "self_loops", "multi_edges", "unsorted_random"]


def _pair(name, idtype):
    """The same graph in both libraries, edge i = i-th listed edge."""
    src, dst, n = CASES[name]()
    tid = torch.int32 if idtype == np.int32 else torch.int64
    dg = dgl.graph((torch.as_tensor(src, dtype=tid), torch.as_tensor(dst, dtype=tid)), num_nodes=n, idtype=tid)
    return gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype), dg


def _edges(g):
    src, dst = g.edges()
    return np.asarray(src, np.int64).tolist(), np.asarray(dst, np.int64).tolist()


def _dgl_edges(dg):
    u, v = dg.edges(order="eid")
    return u.long().tolist(), v.long().tolist()


@pytest.mark.parametrize("name", SMALL)
def test_self_loops_match_dgl_edge_for_edge(name, idtype):
    g, dg = _pair(name, idtype)
    assert _edges(g.add_self_loop()) == _dgl_edges(dgl.add_self_loop(dg))
    assert _edges(g.remove_self_loop()) == _dgl_edges(dgl.remove_self_loop(dg))
    assert _edges(g.add_self_loop().remove_self_loop()) == _dgl_edges(dgl.remove_self_loop(dgl.add_self_loop(dg)))


def test_batch_and_unbatch_match_dgl(idtype):
    pairs = [_pair(name, idtype) for name in SMALL]
    bg = gk.batch([g for g, _ in pairs])
    dbg = dgl.batch([dg for _, dg in pairs])
    assert _edges(bg) == _dgl_edges(dbg)
    assert bg.batch_size == dbg.batch_size
    np.testing.assert_array_equal(bg.batch_num_nodes(), dbg.batch_num_nodes().numpy())
    np.testing.assert_array_equal(bg.batch_num_edges(), dbg.batch_num_edges().numpy())
    for part, dpart in zip(gk.unbatch(bg), dgl.unbatch(dbg)):
        assert _edges(part) == _dgl_edges(dpart) and part.num_nodes == dpart.num_nodes()
    # remove_self_loop keeps the batch in both libraries, with the same counts
    np.testing.assert_array_equal(bg.remove_self_loop().batch_num_edges(),
                                  dgl.remove_self_loop(dbg).batch_num_edges().numpy())


def test_batch_of_bipartite_graphs_matches_dgl():
    rng = np.random.default_rng(5)
    parts, dparts = [], []
    for ns, nd, e in [(3, 1, 2), (4, 5, 9), (2, 2, 0)]:
        src, dst = rng.integers(0, ns, e), rng.integers(0, nd, e)
        parts.append(gk.Graph.from_coo(src, dst, num_nodes=(ns, nd)))
        dparts.append(dgl.heterograph({("a", "r", "b"): (torch.as_tensor(src), torch.as_tensor(dst))},
                                      num_nodes_dict={"a": ns, "b": nd}))
    bg, dbg = gk.batch(parts), dgl.batch(dparts)
    assert _edges(bg) == _dgl_edges(dbg)
    np.testing.assert_array_equal(bg.batch_num_nodes("src"), dbg.batch_num_nodes("a").numpy())
    np.testing.assert_array_equal(bg.batch_num_nodes("dst"), dbg.batch_num_nodes("b").numpy())


def _by_parent_eid(sub_edges, parent_eids):
    src, dst = sub_edges
    return {int(e): (u, v) for e, u, v in zip(parent_eids, src, dst)}


@pytest.mark.parametrize("name", SMALL)
def test_subgraphs_match_dgl_through_parent_ids(name, idtype):
    g, dg = _pair(name, idtype)
    rng = np.random.default_rng(4)
    n = g.num_nodes
    choices = [np.arange(n), rng.permutation(n)[: n // 2 + 1], np.arange(n)[::-1].copy()] if n else []
    for nodes in choices:
        sub = g.node_subgraph(nodes)
        dsub = dgl.node_subgraph(dg, torch.as_tensor(nodes, dtype=dg.idtype))
        assert sub.parent_nids.tolist() == dsub.ndata[dgl.NID].tolist()
        assert sorted(sub.parent_eids.tolist()) == sorted(dsub.edata[dgl.EID].tolist())
        assert (_by_parent_eid(_edges(sub), sub.parent_eids)
                == _by_parent_eid(_dgl_edges(dsub), dsub.edata[dgl.EID].tolist()))
        isub = g.in_subgraph(nodes)
        disub = dgl.in_subgraph(dg, torch.as_tensor(nodes, dtype=dg.idtype))
        assert isub.num_nodes == disub.num_nodes()
        assert (_by_parent_eid(_edges(isub), isub.parent_eids)
                == _by_parent_eid(_dgl_edges(disub), disub.edata[dgl.EID].tolist()))
    mask = np.arange(n) % 3 == 0
    sub, dsub = g.node_subgraph(mask), dgl.node_subgraph(dg, torch.as_tensor(mask))
    assert sub.parent_nids.tolist() == dsub.ndata[dgl.NID].tolist()


@pytest.mark.parametrize("name", SMALL)
def test_from_dgl_and_to_dgl_keep_edge_ids(name, idtype):
    g, dg = _pair(name, idtype)
    # an edge removal renumbers DGL's edges; the conversion must follow DGL's ids, not the input order
    if dg.num_edges() > 1:
        dg = dgl.remove_edges(dg, torch.tensor([0], dtype=dg.idtype))
    h = gk.Graph.from_dgl(dg)
    assert _edges(h) == _dgl_edges(dg) and h.num_nodes == dg.num_nodes() and h.idtype == idtype
    back = h.to_dgl()
    assert _dgl_edges(back) == _edges(h) and back.num_nodes() == dg.num_nodes()
    assert back.idtype == dg.idtype
    # kernels agree edge id for edge id: weights indexed by edge id on both sides
    rng = np.random.default_rng(0)
    x = rng.standard_normal((h.num_nodes, 4))
    w = rng.standard_normal((h.num_edges, 1))
    want = dgl.ops.u_mul_e_sum(dg, torch.from_numpy(x), torch.from_numpy(w)).numpy()
    np.testing.assert_allclose(gk.ops.u_mul_e_sum(h, x, w), want, rtol=1e-10, atol=1e-10)


def test_blocks_and_bipartite_graphs_convert_both_ways():
    block = dgl.create_block((torch.tensor([0, 2, 1]), torch.tensor([0, 0, 1])), num_src_nodes=4, num_dst_nodes=2)
    g = gk.Graph.from_dgl(block)
    assert g.is_block and (g.num_src, g.num_dst) == (4, 2) and _edges(g) == _dgl_edges(block)
    back = g.to_dgl()
    assert back.is_block and (back.num_src_nodes(), back.num_dst_nodes()) == (4, 2)
    assert _dgl_edges(back) == _edges(g)
    bip = dgl.heterograph({("user", "buys", "item"): (torch.tensor([0, 1]), torch.tensor([2, 2]))},
                          num_nodes_dict={"user": 2, "item": 3})
    g = gk.Graph.from_dgl(bip)
    assert g.is_block and (g.num_src, g.num_dst) == (2, 3) and _edges(g) == ([0, 1], [2, 2])
    hetero = dgl.heterograph({("a", "r", "a"): ([0], [0]), ("a", "s", "a"): ([0], [1])})
    assert _edges(gk.Graph.from_dgl(hetero)) == ([0, 0], [0, 1])  # numbered by type: test_dgl_ops_compat.py
    with pytest.raises(ValueError, match="argument 'dg': expected a graph, or a block with one edge type, found "
                                         "a block with 2 edge types"):
        gk.Graph.from_dgl(dgl.to_block(hetero))


def test_batched_graphs_convert_with_their_batch():
    pairs = [_pair(name, np.int64) for name in ("self_loops", "no_edges", "multi_edges")]
    dbg = dgl.batch([dg for _, dg in pairs])
    g = gk.Graph.from_dgl(dbg)
    np.testing.assert_array_equal(g.batch_num_nodes(), dbg.batch_num_nodes().numpy())
    assert [_edges(p) for p in gk.unbatch(g)] == [_dgl_edges(p) for p in dgl.unbatch(dbg)]
    back = gk.batch([g for g, _ in pairs]).to_dgl()
    assert back.batch_size == 3
    assert [_dgl_edges(p) for p in dgl.unbatch(back)] == [_dgl_edges(dg) for _, dg in pairs]


def test_from_dgl_takes_a_sampled_blocks_csc_when_it_is_graphkerns():
    """DGL's sampler hands out blocks with their CSC built; from_dgl copies it instead of sorting again
    when its edge ids ascend within every row (graphkern's order), and the arrays equal the built ones."""
    torch.manual_seed(0)
    dg = dgl.graph((torch.randint(0, 300, (4000,)), torch.randint(0, 300, (4000,))))
    _, _, blocks = dgl.dataloading.NeighborSampler([5, 5]).sample(dg, torch.arange(20))
    for block in blocks:
        g = gk.Graph.from_dgl(block)
        assert g.has_format("csc")
        built = gk.Graph.from_coo(*g.edges(), num_nodes=(g.num_src, g.num_dst), idtype=g.idtype)
        for got, want in zip(g.csc(), built.csc()):
            assert got.dtype == want.dtype and np.array_equal(got, want)


def test_from_dgl_builds_its_own_csc_when_dgls_order_differs():
    # DGL's CSC lists destination 1's edges as 1, 0: graphkern's CSC lists them by ascending edge id
    dg = dgl.graph(("csc", (torch.tensor([0, 0, 2]), torch.tensor([1, 0]), torch.tensor([1, 0]))))
    g = gk.Graph.from_dgl(dg)
    assert not g.has_format("csc")
    src, dst = dg.edges(order="eid")
    built = gk.Graph.from_coo(src.numpy(), dst.numpy(), num_nodes=2, idtype=g.idtype)
    for got, want in zip(g.csc(), built.csc()):
        assert np.array_equal(got, want)
    assert g.csc().eids.tolist() == [0, 1]
