"""What DGL's own operator tests (run by tools/dgl_ops_tests.py) need from graphkern, one section per
need. Plain torch except where DGL itself is the reference (skipped where it does not import); the graphs
are tiny and the kernels float32 copy/sum ones that the other tests compile too."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import graphkern as gk  # noqa: E402
import graphkern.torch as gkt  # noqa: E402

SRC = np.array([0, 1, 2, 2, 3, 0])
DST = np.array([1, 1, 0, 3, 3, 2])
N, E = 4, SRC.size


@pytest.fixture(scope="module")
def g():
    return gk.Graph.from_coo(SRC, DST, num_nodes=N)


def _rand(*shape, seed=0, dtype=torch.float32):
    gen = torch.Generator().manual_seed(seed)
    return (torch.rand(*shape, generator=gen) + 0.5).to(dtype)


# ---------------------------------------------------------------------------- copy ops, unused operand

def test_copy_ops_ignore_the_operand_they_do_not_read(g):
    x = np.arange(N * 2, dtype=np.float32).reshape(N, 2)
    w = np.arange(E * 2, dtype=np.float32).reshape(E, 2)
    junk = "not even an array"  # DGL never looks at it: neither does graphkern
    np.testing.assert_array_equal(gk.spmm(g, "copy_lhs", "sum", x, junk), gk.spmm(g, "copy_lhs", "sum", x))
    np.testing.assert_array_equal(gk.spmm(g, "copy_rhs", "sum", junk, w), gk.spmm(g, "copy_rhs", "sum", None, w))
    np.testing.assert_array_equal(gk.sddmm(g, "copy_lhs", x, junk), gk.sddmm(g, "copy_lhs", x, None))


def test_copy_ops_still_check_the_operand_they_read(g):
    with pytest.raises(ValueError, match="argument 'ufeat': expected 4 rows"):
        gk.spmm(g, "copy_lhs", "sum", np.ones((3, 2), np.float32), np.ones((E, 2), np.float32))
    with pytest.raises(ValueError, match="argument 'efeat': op 'copy_rhs' needs edge features, found None"):
        gk.spmm(g, "copy_rhs", "sum", np.ones((N, 2), np.float32), None)


def test_torch_copy_ops_take_the_unused_operand_and_give_it_no_gradient(g):
    x = _rand(N, 2).requires_grad_()
    w = _rand(E, 2, seed=1).requires_grad_()
    out = gkt.ops.gspmm(g, "copy_lhs", "sum", x, w)
    out.sum().backward()
    assert w.grad is None
    np.testing.assert_allclose(x.grad.numpy(), np.bincount(SRC, minlength=N)[:, None] * np.ones((1, 2)))
    np.testing.assert_array_equal(out.detach().numpy(), gk.spmm(g, "copy_lhs", "sum", x.detach().numpy()))
    e = gkt.ops.gsddmm(g, "copy_rhs", x, w, "u", "e")
    torch.testing.assert_close(e, w)


# ---------------------------------------------------------------------------- half precision on the CPU

HALF = [torch.bfloat16, torch.float16]


def _half_pair(*shapes, dtype):
    """The same values as float32 leaves and as ``dtype`` leaves (the half values, widened exactly)."""
    halves = [_rand(*shape, seed=i, dtype=dtype).requires_grad_() for i, shape in enumerate(shapes)]
    return halves, [h.detach().float().requires_grad_() for h in halves]


def _assert_like_float32(out, ref, halves, fulls, dtype):
    """``out`` (from ``halves``) is ``ref`` (from ``fulls``) stored in ``dtype``; so are the gradients."""
    assert out.dtype == dtype
    torch.testing.assert_close(out, ref.to(dtype), rtol=0, atol=0)
    grad = _rand(*out.shape, seed=9)
    out.backward(grad.to(dtype))
    ref.backward(grad.to(dtype).float())
    for h, f in zip(halves, fulls):
        assert h.grad.dtype == dtype
        torch.testing.assert_close(h.grad, f.grad.to(dtype), rtol=0, atol=0)


@pytest.mark.parametrize("dtype", HALF)
def test_half_spmm_and_edge_softmax_compute_in_float32(g, dtype):
    (x,), (xf,) = _half_pair((N, 3), dtype=dtype)
    _assert_like_float32(gkt.copy_u_sum(g, x), gkt.copy_u_sum(g, xf), [x], [xf], dtype)
    (a,), (af,) = _half_pair((E, 2), dtype=dtype)
    _assert_like_float32(gkt.ops.edge_softmax(g, a), gkt.ops.edge_softmax(g, af), [a], [af], dtype)


@pytest.mark.parametrize("dtype", HALF)
def test_half_segment_mm_and_gather_mm_compute_in_float32(dtype):
    (a, b), (af, bf) = _half_pair((5, 3), (2, 3, 2), dtype=dtype)
    seglen = torch.tensor([2, 3])
    _assert_like_float32(gkt.segment_mm(a, b, seglen), gkt.segment_mm(af, bf, seglen), [a, b], [af, bf], dtype)
    (a, b), (af, bf) = _half_pair((5, 3), (2, 3, 2), dtype=dtype)
    idx = torch.tensor([1, 0, 1, 1, 0])
    _assert_like_float32(gkt.gather_mm(a, b, idx_b=idx), gkt.gather_mm(af, bf, idx_b=idx), [a, b], [af, bf], dtype)


def test_half_operands_of_different_dtypes_are_refused(g):
    x = torch.ones(N, 2, dtype=torch.bfloat16)
    # named as the caller passed them (u_mul_e_sum's x and y)
    with pytest.raises(TypeError, match="arguments 'x' and 'y': expected the same dtype, found "
                                        "torch.bfloat16 and torch.float32"):
        gkt.ops.u_mul_e_sum(g, x, torch.ones(E, 2))


# ---------------------------------------------------------------------------- Graph.from_dgl

class _FakeHeterograph:
    """The part of a DGL heterograph that ``Graph.from_dgl`` reads (it is duck-typed): DGL's own test graph
    of users, games and developers, with its types in DGL's sorted order."""

    ntypes = ["developer", "game", "user"]
    canonical_etypes = [("developer", "develops", "game"), ("user", "follows", "user"),
                        ("user", "plays", "game"), ("user", "wishes", "game")]
    edge_lists = {("developer", "develops", "game"): ([0, 1, 0], [0, 1, 1]),
                  ("user", "follows", "user"): ([0, 1, 2, 1, 1], [0, 0, 1, 1, 2]),
                  ("user", "plays", "game"): ([0, 1, 2, 1], [0, 0, 1, 1]),
                  ("user", "wishes", "game"): ([0, 1, 1], [0, 0, 1])}
    sizes = {"developer": 2, "game": 2, "user": 3}
    idtype = torch.int64
    is_block = False

    def num_nodes(self, ntype):
        return self.sizes[ntype]

    def num_edges(self, etype):
        return len(self.edge_lists[etype][0])

    def num_src_nodes(self):
        raise AssertionError("a heterograph has no single source count")

    num_dst_nodes = num_src_nodes

    def formats(self):
        return {"created": ["coo"], "not created": ["csr", "csc"]}

    def edges(self, order="eid", etype=None):
        u, v = self.edge_lists[etype]
        return torch.tensor(u), torch.tensor(v)


# to_homogeneous numbering: developers 0-1, games 2-3, users 4-6; edges develops, follows, plays, wishes
HOMOGENEOUS_SRC = [0, 1, 0, 4, 5, 6, 5, 5, 4, 5, 6, 5, 4, 5, 5]
HOMOGENEOUS_DST = [2, 3, 3, 4, 4, 5, 5, 6, 2, 2, 3, 3, 2, 2, 3]


@pytest.fixture(scope="module")
def hg():
    return gk.Graph.from_dgl(_FakeHeterograph())


def test_heterograph_converts_as_to_homogeneous_numbers_it(hg):
    src, dst = hg.edges()
    assert src.tolist() == HOMOGENEOUS_SRC and dst.tolist() == HOMOGENEOUS_DST
    assert hg.types.ntypes == ("developer", "game", "user")
    assert hg.types.etype_id("plays") == 2 and hg.types.etype_id(("user", "follows", "user")) == 1
    assert hg.ndata["_TYPE"].tolist() == [0, 0, 1, 1, 2, 2, 2]
    assert hg.ndata["_ID"].tolist() == [0, 1, 0, 1, 0, 1, 2]
    assert hg.edata["_TYPE"].tolist() == [0] * 3 + [1] * 5 + [2] * 4 + [3] * 3
    assert hg.edata["_ID"].tolist() == [0, 1, 2, 0, 1, 2, 3, 4, 0, 1, 2, 3, 0, 1, 2]
    assert hg.formats("csc").types is hg.types


def test_edge_type_names_that_are_not_unique_need_the_canonical_form():
    types = gk.graph.interop.GraphTypes(("a", "b"), (("a", "r", "b"), ("b", "r", "a")), (1, 1), (1, 1))
    with pytest.raises(KeyError, match="names one relation"):
        types.etype_id("r")
    with pytest.raises(KeyError, match="expected an edge type of"):
        types.etype_id("s")


@pytest.mark.parametrize("formats", [["csc"], ["csr"], ["coo"], ["csr", "csc"]])
def test_from_dgl_reads_a_graph_restricted_to_some_formats(formats):
    dgl = pytest.importorskip("dgl")
    dg = dgl.graph((torch.tensor(SRC), torch.tensor(DST)), num_nodes=N, idtype=torch.int32)
    restricted = dg.formats(formats)
    g = gk.Graph.from_dgl(restricted)
    assert g.idtype == np.int32 and g.edges()[0].tolist() == SRC.tolist() and g.edges()[1].tolist() == DST.tolist()
    allowed = restricted.formats()
    assert sorted(allowed["created"] + allowed["not created"]) == sorted(formats)  # still restricted


def test_from_dgl_heterograph_matches_to_homogeneous():
    dgl = pytest.importorskip("dgl")
    fake = _FakeHeterograph()
    dg = dgl.heterograph(fake.edge_lists, num_nodes_dict=fake.sizes)
    g = gk.Graph.from_dgl(dg.formats(["csc"]))  # restricted: DGL's own to_homogeneous refuses this one
    hm = dgl.to_homogeneous(dg)
    u, v = hm.edges(order="eid")
    assert g.edges()[0].tolist() == u.tolist() and g.edges()[1].tolist() == v.tolist()
    for key in ("_TYPE", "_ID"):
        assert g.ndata[key].tolist() == hm.ndata[key].tolist()
        assert g.edata[key].tolist() == hm.edata[key].tolist()


# ---------------------------------------------------------------------------- per-type edge_softmax, gspmm

@pytest.mark.parametrize("norm_by", ["dst", "src"])
def test_edge_softmax_per_type_is_the_softmax_over_every_type(hg, norm_by):
    """DGL's heterograph edge softmax normalises over the edges of all types at a node: the homogeneous
    softmax of the logits concatenated in type order, split back by type."""
    counts = hg.types.num_edges
    parts = [_rand(n, 2, seed=i).requires_grad_() for i, n in enumerate(counts)]
    whole = torch.cat([p.detach() for p in parts]).requires_grad_()
    keys = ["develops", ("user", "follows", "user"), "plays", "wishes"]  # names or canonical, as DGL takes
    out = gkt.ops.edge_softmax(hg, dict(zip(keys, parts)), norm_by=norm_by)
    ref = gkt.ops.edge_softmax(hg, whole, norm_by=norm_by)
    assert list(out) == list(hg.types.canonical_etypes)
    torch.testing.assert_close(torch.cat(list(out.values())), ref)
    (out[("user", "plays", "game")].sum() + out[("user", "follows", "user")].sum()).backward()
    ref[3:12].sum().backward()
    torch.testing.assert_close(torch.cat([p.grad for p in parts]), whole.grad)


def test_edge_softmax_per_type_value_from_dgl_unidirectional_test():
    fake = _FakeHeterograph()
    fake.ntypes = ["A", "B"]
    fake.canonical_etypes = [("A", "AB", "B"), ("B", "BB", "B")]
    fake.edge_lists = {("A", "AB", "B"): ([1, 2, 3] * 3, [0] * 3 + [1] * 3 + [2] * 3),
                       ("B", "BB", "B"): ([0, 1, 2] * 3, [0] * 3 + [1] * 3 + [2] * 3)}
    fake.sizes = {"A": 4, "B": 3}
    out = gkt.ops.edge_softmax(gk.Graph.from_dgl(fake), {"AB": torch.full((9,), 2.0), "BB": torch.ones(9)})
    total = (math.exp(2) + math.exp(1)) * 3
    torch.testing.assert_close(out[("A", "AB", "B")], torch.full((9,), math.exp(2) / total))
    torch.testing.assert_close(out[("B", "BB", "B")], torch.full((9,), math.exp(1) / total))


def test_edge_softmax_per_type_errors(hg, g):
    with pytest.raises(ValueError, match="argument 'logits': expected one tensor per edge type"):
        gkt.ops.edge_softmax(hg, {"plays": torch.ones(4)})
    with pytest.raises(ValueError, match=r"argument 'logits\[\('user', 'plays', 'game'\)\]': expected 4 rows"):
        gkt.ops.edge_softmax(hg, {"develops": torch.ones(3), "follows": torch.ones(5), "plays": torch.ones(3),
                                  "wishes": torch.ones(3)})
    logits = {"develops": torch.ones(3), "follows": torch.ones(5), "plays": torch.ones(4), "wishes": torch.ones(3)}
    with pytest.raises(ValueError, match=r"argument 'logits\[\('user', 'wishes', 'game'\)\]': expected the feature "
                                         r"shape, dtype and device of logits\[\('developer', 'develops', 'game'\)\]"):
        gkt.ops.edge_softmax(hg, {**logits, "wishes": torch.ones(3, 2)})
    with pytest.raises(TypeError, match=r"argument 'logits\[\('user', 'plays', 'game'\)\]': expected a torch.Tensor"):
        gkt.ops.edge_softmax(hg, {**logits, "plays": [1.0] * 4})
    with pytest.raises(ValueError, match=r"argument 'logits': features given per type \(dict\) need a graph with "
                                         "node and edge types"):
        gkt.ops.edge_softmax(g, {"plays": torch.ones(4)})


def test_gspmm_per_type_is_the_homogeneous_spmm_split_by_node_type(hg):
    """DGL's form: source features by node type id, edge features by edge type id; one output per node
    type, empty for a type no edge ends at (developers)."""
    x = [_rand(2, 3, seed=1), None, _rand(3, 3, seed=2)]  # games are no edge's source: None, as DGL allows
    full = torch.cat([x[0], torch.zeros(2, 3), x[2]])
    outs = gkt.ops.gspmm(hg, "copy_lhs", "sum", x, None)
    ref = gkt.copy_u_sum(hg, full)
    assert isinstance(outs, tuple) and outs[0].shape == (0,)
    torch.testing.assert_close(torch.cat(outs[1:]), ref[2:])
    named = gkt.ops.gspmm(hg, "copy_lhs", "sum", {"developer": x[0], "user": x[2]}, None)
    assert list(named) == ["game", "user"]
    torch.testing.assert_close(named["game"], ref[2:4])
    with pytest.raises(ValueError, match=r"argument 'lhs_data': expected features for node type 'user'"):
        gkt.ops.gspmm(hg, "copy_lhs", "sum", {"developer": x[0]}, None)
