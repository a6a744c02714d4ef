"""graphkern.torch against DGL itself, where DGL is installed: RelGraphConv with DGL's state_dict loaded,
and dgl.ops' gather_mm, segment_mm, segment_reduce, segment_softmax, gspmm, gsddmm and edge_softmax
(outputs and gradients). Skipped without dgl."""

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    dgl = pytest.importorskip("dgl")

import graphkern as gk  # noqa: E402
import graphkern.torch as gkt  # noqa: E402

SRC = np.array([0, 1, 3, 0, 0, 3, 1, 2, 3, 4, 4])
DST = np.array([1, 0, 3, 3, 1, 4, 4, 1, 0, 0, 1])
N, E, R = 5, SRC.size, 3
ETYPES = torch.tensor([0, 2, 1, 1, 2, 0, 0, 2, 1, 0, 2])
TOL = dict(rtol=1e-4, atol=1e-4)


def _graphs(order=None):
    src, dst = (SRC, DST) if order is None else (SRC[order], DST[order])
    return (gk.Graph.from_coo(src, dst, num_nodes=N),
            dgl.graph((torch.from_numpy(src), torch.from_numpy(dst)), num_nodes=N))


def _grads(out, inputs, seed=0):
    grad = torch.randn(out.shape, generator=torch.Generator().manual_seed(seed), dtype=out.dtype)
    return torch.autograd.grad(out, inputs, grad)


@pytest.mark.parametrize("presorted", [False, True])
@pytest.mark.parametrize("config", [dict(regularizer=None), dict(regularizer="basis", num_bases=2),
                                    dict(regularizer="bdd", num_bases=2), dict(layer_norm=True, self_loop=False),
                                    dict(regularizer="basis", bias=False, activation=torch.tanh)],
                         ids=["none", "basis", "bdd", "layer_norm", "basis-tanh"])
def test_relgraphconv_equals_dgls(config, presorted):
    torch.manual_seed(0)
    theirs = dgl.nn.RelGraphConv(6, 4, R, **config)
    with torch.no_grad():
        if theirs.bias:
            theirs.h_bias.uniform_(-1, 1)
    ours = gkt.RelGraphConv(6, 4, R, **config)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict(theirs.state_dict())
    order = torch.argsort(ETYPES, stable=True).numpy() if presorted else None
    g, dg = _graphs(order)
    etypes = ETYPES if order is None else ETYPES[order]
    norm = torch.rand(E, 1) + 0.5
    feat = torch.randn(N, 6, requires_grad=True)
    out = ours(g, feat, etypes, norm, presorted=presorted)
    want = theirs(dg, feat, etypes, norm, presorted=presorted)
    torch.testing.assert_close(out, want, **TOL)
    inputs = [feat, *ours.parameters()]
    for got, expected in zip(_grads(out, inputs), _grads(want, [feat, *theirs.parameters()])):
        torch.testing.assert_close(got, expected, **TOL)


def test_gather_mm_and_segment_mm_equal_dgl_ops():
    torch.manual_seed(1)
    a = torch.randn(40, 12, requires_grad=True)
    b = torch.randn(4, 12, 10, requires_grad=True)
    idx_b = torch.randint(0, 4, (40,))
    for ours, theirs in ((gkt.gather_mm(a, b, idx_b=idx_b), dgl.ops.gather_mm(a, b, idx_b=idx_b)),
                         (gkt.segment_mm(a, b, torch.tensor([10, 0, 25, 5])),
                          dgl.ops.segment_mm(a, b, torch.tensor([10, 0, 25, 5])))):
        torch.testing.assert_close(ours, theirs, **TOL)
        for got, expected in zip(_grads(ours, [a, b]), _grads(theirs, [a, b])):
            torch.testing.assert_close(got, expected, **TOL)


@pytest.mark.parametrize("reducer", ["sum", "max", "min", "mean"])
def test_segment_reduce_and_softmax_equal_dgl_ops(reducer):
    seglen = torch.tensor([2, 0, 5, 1, 0])
    value = torch.randn(8, 3, requires_grad=True)
    ours = gkt.segment_reduce(seglen, value, reducer)
    theirs = dgl.ops.segment_reduce(seglen, value, reducer)
    torch.testing.assert_close(ours, theirs, **TOL)
    for got, expected in zip(_grads(ours, [value]), _grads(theirs, [value])):
        torch.testing.assert_close(got, expected, **TOL)
    torch.testing.assert_close(gkt.segment_softmax(seglen, value), dgl.ops.segment_softmax(seglen, value), **TOL)


def test_gspmm_gsddmm_edge_softmax_equal_dgl_ops():
    g, dg = _graphs()
    x = torch.randn(N, 3, requires_grad=True)
    w = torch.randn(E, 1, requires_grad=True)
    has_in_edges = torch.from_numpy(np.bincount(DST, minlength=N) > 0)
    for op, reduce in (("mul", "sum"), ("sub", "mean"), ("add", "max"), ("div", "min")):
        ours = gkt.ops.gspmm(g, op, reduce, x, w)
        theirs = dgl.ops.gspmm(dg, op, reduce, x, w)
        # DGL gives +-inf to a destination without in-edges under max/min; graphkern gives 0
        torch.testing.assert_close(ours[has_in_edges], theirs[has_in_edges], **TOL)
    for op, lt, rt in (("dot", "u", "v"), ("add", "u", "e"), ("div", "e", "v")):
        lhs = {"u": x, "v": x, "e": w}[lt]
        rhs = {"u": x, "v": x, "e": w}[rt]
        torch.testing.assert_close(gkt.ops.gsddmm(g, op, lhs, rhs, lt, rt), dgl.ops.gsddmm(dg, op, lhs, rhs, lt, rt),
                                   **TOL)
    logits = torch.randn(E, 2, requires_grad=True)
    for norm_by in ("dst", "src"):
        ours = gkt.ops.edge_softmax(g, logits, norm_by=norm_by)
        theirs = dgl.ops.edge_softmax(dg, logits, norm_by=norm_by)
        torch.testing.assert_close(ours, theirs, **TOL)
        for got, expected in zip(_grads(ours, [logits]), _grads(theirs, [logits])):
            torch.testing.assert_close(got, expected, **TOL)
        eids = torch.tensor([8, 0, 4, 7, 5, 10])
        torch.testing.assert_close(gkt.ops.edge_softmax(g, logits[:6], eids, norm_by),
                                   dgl.ops.edge_softmax(dg, logits[:6], eids, norm_by), **TOL)
