"""graphkern.torch's segment_mm, gather_mm, segment_reduce, segment_softmax and dgl.ops' gspmm, gsddmm and
edge_softmax: forward against plain torch loops, gradients by torch.autograd.gradcheck in float64."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import graphkern as gk  # noqa: E402
import graphkern.torch as gkt  # noqa: E402
from graphkern.torch import ops  # noqa: E402


def _rand(*shape, seed, grad=True):
    gen = torch.Generator().manual_seed(seed)
    return torch.rand(*shape, generator=gen, dtype=torch.float64).sub_(0.5).requires_grad_(grad)


def _per_segment(a, b, seglen):
    parts, start = [], 0
    for r, length in enumerate(seglen):
        parts.append(a[start:start + length] @ b[r])
        start += length
    return torch.cat(parts)


@pytest.mark.parametrize("seglen", [[3, 0, 5, 1, 0], [9], [0, 0, 4]])
def test_segment_mm_forward_and_gradcheck(seglen):
    n = sum(seglen)
    a, b = _rand(n, 4, seed=1), _rand(len(seglen), 4, 3, seed=2)
    out = gkt.segment_mm(a, b, torch.tensor(seglen))
    torch.testing.assert_close(out, _per_segment(a, b, seglen), rtol=1e-12, atol=1e-12)
    assert torch.autograd.gradcheck(lambda x, y: gkt.segment_mm(x, y, seglen), (a, b))
    # one input only needs its gradient
    c = _rand(n, 4, seed=3)
    gkt.segment_mm(c, b.detach(), seglen).sum().backward()
    torch.testing.assert_close(c.grad, _per_segment(torch.ones(n, 3, dtype=torch.float64),
                                                    b.detach().transpose(1, 2), seglen))


def _gather_reference(a, b, idx_a, idx_b):
    rows = a if idx_a is None else a[idx_a]
    mats = b if idx_b is None else b[idx_b]
    return torch.bmm(rows.unsqueeze(1), mats).squeeze(1)


@pytest.mark.fast
@pytest.mark.parametrize("form", ["idx_b", "both", "idx_a", "neither"])
@pytest.mark.parametrize("index_dtype", [torch.int32, torch.int64])
def test_gather_mm_forward_and_gradcheck(form, index_dtype):
    gen = torch.Generator().manual_seed(0)
    n, r, k = 7, 3, 9
    a = _rand(n, 4, seed=1)
    if form == "idx_b":
        idx_a, idx_b, b = None, torch.randint(0, r, (n,), generator=gen), _rand(r, 4, 2, seed=2)
    elif form == "both":  # repeated rows of a: their gradients add up
        idx_a = torch.randint(0, n, (k,), generator=gen)
        idx_b, b = torch.randint(0, r, (k,), generator=gen), _rand(r, 4, 2, seed=2)
    elif form == "idx_a":
        idx_a, idx_b, b = torch.randint(0, n, (r,), generator=gen), None, _rand(r, 4, 2, seed=2)
    else:
        idx_a, idx_b, b = None, None, _rand(n, 4, 2, seed=2)
    idx_a = None if idx_a is None else idx_a.to(index_dtype)
    idx_b = None if idx_b is None else idx_b.to(index_dtype)
    out = gkt.gather_mm(a, b, idx_a=idx_a, idx_b=idx_b)
    want = _gather_reference(a, b, None if idx_a is None else idx_a.long(), None if idx_b is None else idx_b.long())
    torch.testing.assert_close(out, want, rtol=1e-12, atol=1e-12)
    assert torch.autograd.gradcheck(lambda x, y: gkt.gather_mm(x, y, idx_a=idx_a, idx_b=idx_b), (a, b))


def test_gather_mm_float32_and_refused_input():
    a = torch.rand(5, 3)
    b = torch.rand(2, 3, 4)
    idx = torch.tensor([0, 1, 1, 0, 1])
    torch.testing.assert_close(gkt.gather_mm(a, b, idx_b=idx), torch.bmm(a.unsqueeze(1), b[idx]).squeeze(1),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(TypeError, match="argument 'b': expected the dtype of 'a' \\(float32\\), found float64"):
        gkt.gather_mm(a, b.double(), idx_b=idx)
    with pytest.raises(ValueError, match="argument 'idx_b': expected matrix ids of 'b' < 2, found 2"):
        gkt.gather_mm(a, b, idx_b=torch.tensor([0, 1, 2, 0, 0]))
    with pytest.raises(TypeError, match="argument 'idx_b': expected an integer tensor"):
        gkt.gather_mm(a, b, idx_b=idx.float())
    with pytest.raises(TypeError, match="argument 'a': expected a torch.Tensor"):
        gkt.gather_mm(a.numpy(), b, idx_b=idx)
    with pytest.raises(ValueError, match="argument 'seglen_a': expected lengths summing to the 5 rows"):
        gkt.segment_mm(a, b, [2, 2])


# ------------------------------------------------------------------------------------------ segment ops

def _segments(value, seglen):
    start = 0
    for length in seglen:
        yield value[start:start + length]
        start += length


@pytest.mark.parametrize("reducer", ["sum", "max", "min", "mean"])
def test_segment_reduce_matches_a_loop_and_fills_empty_segments_with_zero(reducer):
    seglen = [2, 0, 3, 1]
    value = _rand(6, 2, 3, seed=4)
    got = gkt.segment_reduce(torch.tensor(seglen), value, reducer)
    parts = []
    for seg in _segments(value, seglen):
        if seg.shape[0] == 0:
            parts.append(torch.zeros(value.shape[1:], dtype=value.dtype))
        else:
            parts.append({"sum": seg.sum(0), "mean": seg.mean(0), "max": seg.max(0).values,
                          "min": seg.min(0).values}[reducer])
    torch.testing.assert_close(got, torch.stack(parts), rtol=1e-12, atol=1e-12)
    assert torch.autograd.gradcheck(lambda v: gkt.segment_reduce(seglen, v, reducer), (value,))


def test_segment_softmax_matches_a_loop_and_dgl_example():
    seglen = [1, 0, 5, 4]
    got = gkt.segment_softmax(torch.tensor(seglen), torch.ones(10, 3))
    want = torch.tensor([1.0] + [0.2] * 5 + [0.25] * 4).unsqueeze(1).expand(10, 3)
    torch.testing.assert_close(got, want)
    value = _rand(10, 2, seed=5) * 50  # large logits: stable
    out = gkt.segment_softmax(seglen, value)
    want = torch.cat([torch.softmax(seg, 0) for seg in _segments(value, seglen)])
    torch.testing.assert_close(out, want, rtol=1e-12, atol=1e-12)
    leaf = _rand(10, seed=6)
    assert torch.autograd.gradcheck(lambda v: gkt.segment_softmax(seglen, v), (leaf,))


def test_segment_ops_refuse_bad_lengths():
    value = torch.ones(4, 2)
    with pytest.raises(ValueError, match="argument 'seglen': expected lengths summing to value.shape\\[0\\] = 4"):
        gkt.segment_reduce([1, 2], value)
    with pytest.raises(ValueError, match="argument 'seglen': expected lengths >= 0, found -1 at position 0"):
        gkt.segment_softmax([-1, 5], value)
    with pytest.raises(ValueError, match="argument 'reducer'"):
        gkt.segment_reduce([4], value, "prod")
    with pytest.raises(TypeError, match="argument 'seglen': expected an integer array"):
        gkt.segment_reduce(torch.tensor([4.0]), value)


# ------------------------------------------------------------------------------------------ dgl.ops names

SRC = np.array([0, 1, 3, 0, 0, 3, 1, 2, 3])
DST = np.array([1, 0, 3, 3, 1, 4, 4, 1, 0])


@pytest.fixture(scope="module")
def g():
    return gk.Graph.from_coo(SRC, DST, num_nodes=5)


def test_gspmm_and_gsddmm_are_spmm_and_sddmm(g):
    x, w = _rand(5, 3, seed=1), _rand(9, 1, seed=2)
    torch.testing.assert_close(ops.gspmm(g, "div", "mean", x, w), gkt.spmm(g, "div", "mean", x, w))
    torch.testing.assert_close(ops.gspmm(g, "copy_rhs", "max", None, w), gkt.spmm(g, "copy_rhs", "max", None, w))
    torch.testing.assert_close(ops.gsddmm(g, "dot", x, x), gkt.sddmm(g, "dot", x, x, "u", "v"))
    torch.testing.assert_close(ops.gsddmm(g, "mul", w, x, "e", "u"), gkt.sddmm(g, "mul", w, x, "e", "u"))
    assert torch.autograd.gradcheck(lambda a, b: ops.gspmm(g, "mul", "sum", a, b), (x, w))


@pytest.mark.parametrize("norm_by", ["dst", "src"])
def test_edge_softmax_with_all_and_with_edge_ids(g, norm_by):
    logits = _rand(9, 2, seed=3)
    torch.testing.assert_close(ops.edge_softmax(g, logits, norm_by=norm_by), gkt.edge_softmax(g, logits, norm_by))
    ids = torch.tensor([8, 0, 4, 7, 5])
    sub = _rand(5, 2, seed=4)
    keys = (DST if norm_by == "dst" else SRC)[ids.numpy()]
    want = torch.empty_like(sub)
    for node in np.unique(keys):
        rows = torch.from_numpy(np.flatnonzero(keys == node))
        want[rows] = torch.softmax(sub[rows], 0)
    torch.testing.assert_close(ops.edge_softmax(g, sub, ids, norm_by), want, rtol=1e-12, atol=1e-12)
    assert torch.autograd.gradcheck(lambda z: ops.edge_softmax(g, z, ids, norm_by), (sub,))
    with pytest.raises(ValueError, match="argument 'eids': expected edge ids < 9, found 9"):
        ops.edge_softmax(g, sub, torch.tensor([0, 1, 2, 3, 9]))
    with pytest.raises(ValueError, match="argument 'logits': expected one row per id of 'eids' \\(5\\)"):
        ops.edge_softmax(g, logits, ids)
    with pytest.raises(ValueError, match="argument 'eids'"):
        ops.edge_softmax(g, logits, "some")


def test_edge_softmax_refuses_edge_ids_no_edge_has(g):
    """In a spread id space (num_edge_ids > num_edges) an id below num_edge_ids may name no edge: it was
    once normalised as an edge into node 0."""
    spread = gk.Graph.from_coo(SRC, DST, num_nodes=5, eids=2 * np.arange(SRC.size), num_edge_ids=2 * SRC.size)
    sub = _rand(3, seed=5)
    used = torch.tensor([16, 0, 4])  # edges 8, 0 and 2
    torch.testing.assert_close(ops.edge_softmax(spread, sub, used), ops.edge_softmax(g, sub, torch.tensor([8, 0, 2])))
    with pytest.raises(ValueError, match="argument 'eids': expected ids of edges of the graph, found 3 at "
                                         "position 1, an id no edge has \\(9 edges in an id space of 18\\)"):
        ops.edge_softmax(spread, sub, torch.tensor([16, 3, 4]))


@pytest.mark.fast
def test_dgl_names_are_exported():
    for name in ("gspmm", "gsddmm", "segment_reduce", "segment_softmax", "gather_mm", "segment_mm"):
        assert name in ops.__all__ and getattr(gkt, name) is getattr(ops, name)
    assert gkt.edge_softmax is gkt.autograd.edge_softmax  # norm_by stays its third argument
    assert ops.ALL == "__ALL__"
