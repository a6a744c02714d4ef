"""graphkern.torch: forward equals the NumPy kernels, gradients pass torch.autograd.gradcheck in float64
for every op, reducer and broadcast pattern, and the GNN layers run, train and match dense formulas."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import graphkern as gk  # noqa: E402
import graphkern.torch as gkt  # noqa: E402
from graphkern.errors import BackendUnavailableError  # noqa: E402

# A small graph with the cases that break backward rules: a self-loop, parallel edges, a node without
# in-edges (2) and one without out-edges (4), and edge ids that do not follow the CSC order.
SRC = np.array([0, 1, 3, 0, 0, 3, 1, 2, 3])
DST = np.array([1, 0, 3, 3, 1, 4, 4, 1, 0])
N, E = 5, SRC.size


@pytest.fixture(scope="module")
def g():
    return gk.Graph.from_coo(SRC, DST, num_nodes=N)


def _rand(*shape, seed):
    gen = torch.Generator().manual_seed(seed)
    # distinct values away from 0, so max/min have no ties and div never divides by ~0
    return (torch.rand(*shape, generator=gen, dtype=torch.float64) + 0.5).requires_grad_(True)


# (ufeat feature shape, efeat feature shape): equal, scalar per edge, per-head scalar, broadcast node side,
# both 1-D
SPMM_SHAPES = [((3,), (3,)), ((3,), (1,)), ((2, 3), (2, 1)), ((1,), (3,)), ((), ())]
# A backward is the op's derivative routed by the reducer (to every edge for sum and mean, to the winner
# for max and min): every op meets both kinds. On equal shapes each binary op runs with two reducers, one
# of each kind, and each copy op with the two the 1-D cases below leave out; every other broadcast pattern
# runs with every binary op and every reducer once (the backward's broadcast reduction is the same code
# for all of them), so each binary op meets three of the four reducers and each copy op all four. (The
# full product compiled about a hundred kernels for a cold cache, minutes of the suite.)
SPMM_GRAD_CASES = (
    [(op, reduce, SPMM_SHAPES[0]) for op, reducers in (("add", ("max", "mean")), ("sub", ("sum", "min")),
                                                        ("mul", ("mean", "max")), ("div", ("min", "sum")),
                                                        ("copy_lhs", ("mean", "min")), ("copy_rhs", ("mean", "min")))
     for reduce in reducers]
    + [(op, reduce, shapes) for shapes in SPMM_SHAPES[1:]
       for op, reduce in (("add", "sum"), ("sub", "max"), ("mul", "min"), ("div", "mean"))]
    + [(op, reduce, SPMM_SHAPES[-1]) for op in ("copy_lhs", "copy_rhs") for reduce in ("sum", "max")]
)


@pytest.mark.parametrize(("op", "reduce", "shapes"), SPMM_GRAD_CASES,
                         ids=[f"{s[0]}x{s[1]}-{r}-{o}" for o, r, s in SPMM_GRAD_CASES])
def test_spmm_gradcheck(g, op, reduce, shapes):
    x = _rand(N, *shapes[0], seed=1) if op != "copy_rhs" else None
    w = _rand(E, *shapes[1], seed=2) if op != "copy_lhs" else None
    expected = gk.spmm(g, op, reduce, None if x is None else x.detach().numpy(),
                       None if w is None else w.detach().numpy())
    out = gkt.spmm(g, op, reduce, x, w)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-12)
    inputs = tuple(t for t in (x, w) if t is not None)

    def func(*args):
        it = iter(args)
        return gkt.spmm(g, op, reduce, next(it) if x is not None else None, next(it) if w is not None else None)

    assert torch.autograd.gradcheck(func, inputs, eps=1e-6, atol=1e-6)


def test_spmm_max_gradient_goes_to_the_winner_and_not_to_empty_rows(g):
    x = torch.tensor([[1.0], [5.0], [2.0], [3.0], [4.0]], dtype=torch.float64, requires_grad=True)
    out = gkt.spmm(g, "copy_lhs", "max", x)
    out.sum().backward()
    # in-neighbours: 0 <- {1, 3}, 1 <- {0, 0, 2}, 2 <- {}, 3 <- {3, 0}, 4 <- {3, 1}
    assert out.detach().ravel().tolist() == [5.0, 2.0, 0.0, 3.0, 5.0]
    assert x.grad.ravel().tolist() == [0.0, 2.0, 1.0, 1.0, 0.0]


SDDMM_SHAPES = [((3,), (3,)), ((3,), (1,)), ((2, 3), (2, 1)), ((2, 3), (2, 3))]
SDDMM_OPS = ["add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs"]
# The gradient of the lhs is one backward rule per (op, lhs target), that of the rhs one per (op, rhs
# target): each op runs with three (lhs, rhs) target pairs, a Latin square shifted per op, so every op
# meets every target on both sides and every one of the nine pairs runs with two or three ops. (The full
# product of ops and pairs compiled about thirty more kernels for the same backward rules.)
SDDMM_GRAD_CASES = [(op, ("uve"[k], "uve"[(k + i) % 3])) for i, op in enumerate(SDDMM_OPS) for k in range(3)]


@pytest.mark.parametrize(("op", "targets"), SDDMM_GRAD_CASES, ids=[f"{o}-{''.join(t)}" for o, t in SDDMM_GRAD_CASES])
def test_sddmm_gradcheck(g, op, targets):
    lt, rt = targets
    rows = {"u": N, "v": N, "e": E}
    shapes = SDDMM_SHAPES[3] if op == "dot" else SDDMM_SHAPES[(ord(lt) + ord(rt)) % 3]
    lhs = _rand(rows[lt], *shapes[0], seed=3) if op != "copy_rhs" else None
    rhs = _rand(rows[rt], *shapes[1], seed=4) if op != "copy_lhs" else None
    expected = gk.sddmm(g, op, None if lhs is None else lhs.detach().numpy(),
                        None if rhs is None else rhs.detach().numpy(), lt, rt)
    out = gkt.sddmm(g, op, lhs, rhs, lt, rt)
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-12, atol=1e-12)
    inputs = tuple(t for t in (lhs, rhs) if t is not None)

    def func(*args):
        it = iter(args)
        return gkt.sddmm(g, op, next(it) if lhs is not None else None, next(it) if rhs is not None else None, lt, rt)

    assert torch.autograd.gradcheck(func, inputs, eps=1e-6, atol=1e-6)


@pytest.mark.fast
@pytest.mark.parametrize("shape", [(E,), (E, 2), (E, 2, 1)])
@pytest.mark.parametrize("norm_by", ["dst", "src"])
def test_edge_softmax_gradcheck(g, shape, norm_by):
    logits = _rand(*shape, seed=5)
    out = gkt.edge_softmax(g, logits, norm_by)
    np.testing.assert_allclose(out.detach().numpy(), gk.edge_softmax(g, logits.detach().numpy(), norm_by),
                               rtol=1e-12)
    assert torch.autograd.gradcheck(lambda z: gkt.edge_softmax(g, z, norm_by), (logits,), eps=1e-6, atol=1e-6)


def test_gradients_on_a_float32_real_graph():
    """float32 through the whole chain on facebook_combined-sized degrees: a GAT-style attention."""
    from graph_cases import FACEBOOK

    if not FACEBOOK.exists():
        pytest.skip(f"{FACEBOOK} is not there")
    gf = gk.graph.read_edgelist(FACEBOOK, undirected=True)
    gen = torch.Generator().manual_seed(0)
    h = torch.randn(gf.num_src, 2, 4, generator=gen, requires_grad=True)
    el = h.sum(-1, keepdim=True)
    a = gkt.edge_softmax(gf, gkt.u_add_v(gf, el, el))
    out = gkt.u_mul_e_sum(gf, h, a)
    out.square().sum().backward()
    # the same computation in plain torch over the COO
    src, dst, eids = gf.coo()
    src_t, dst_t = torch.from_numpy(src.astype(np.int64)), torch.from_numpy(dst.astype(np.int64))
    h2 = h.detach().clone().requires_grad_(True)
    el2 = h2.sum(-1, keepdim=True)
    logits = (el2[src_t] + el2[dst_t])
    exp = (logits - logits.max()).exp()
    denom = torch.zeros(gf.num_dst, 2, 1).index_add_(0, dst_t, exp)
    a2 = exp / denom[dst_t]
    out2 = torch.zeros(gf.num_dst, 2, 4).index_add_(0, dst_t, h2[src_t] * a2)
    out2.square().sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), out2.detach().numpy(), rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(h.grad.numpy(), h2.grad.numpy(), rtol=1e-3, atol=1e-3)


def test_tensors_are_shared_not_copied(g):
    x = torch.rand(N, 3, dtype=torch.float64)
    view = gkt._tensors._array(x, "x")
    assert view.ctypes.data == x.data_ptr()
    out = gkt.spmm(g, "copy_lhs", "sum", x)
    assert isinstance(out, torch.Tensor) and out.dtype == torch.float64


def test_strided_input_is_accepted(g):
    x = torch.rand(3, N, dtype=torch.float64).t()  # not contiguous
    out = gkt.copy_u_sum(g, x)
    np.testing.assert_allclose(out.numpy(), gk.ops.copy_u_sum(g, np.ascontiguousarray(x.numpy())))


def test_bad_input(g):
    with pytest.raises(TypeError, match="ufeat"):
        gkt.spmm(g, "copy_lhs", "sum", np.ones((N, 2)))
    with pytest.raises(ValueError, match="reduce"):
        gkt.spmm(g, "copy_lhs", "median", torch.ones(N, 2))
    with pytest.raises(TypeError, match="float32 or float64"):
        gkt.spmm(g, "copy_lhs", "sum", torch.ones(N, 2, dtype=torch.int64))
    with pytest.raises(ValueError, match="rows"):
        gkt.spmm(g, "copy_lhs", "sum", torch.ones(N + 1, 2))


def test_tensor_on_another_device_says_which():
    if not hasattr(torch, "device"):
        pytest.skip("torch without devices")
    fake = torch.ones(2, 2, device="meta")
    with pytest.raises(TypeError, match="CPU or on a CUDA device, found one on meta"):
        gkt._tensors._array(fake, "x")


def test_cuda_tensor_without_a_gpu_says_why(g, monkeypatch):
    """A CUDA tensor reaches the cuda backend; with no GPU (and no simulator) that is refused, saying why,
    before torch's CUDA runtime is touched."""
    from graphkern._config import cuda_status

    if cuda_status()[0]:
        pytest.skip("a GPU (or the simulator) is usable here")
    monkeypatch.setattr(gkt._tensors, "_device_type", lambda t: "cuda")
    with pytest.raises(BackendUnavailableError, match="backend 'cuda' is not usable"):
        gkt.copy_u_sum(g, _rand(N, 2, seed=1))


@pytest.mark.fast
def test_ops_namespace_has_dgl_names(g):
    assert {"u_mul_e_sum", "copy_u_max", "copy_e_mean", "u_dot_v", "e_sub_v", "copy_u", "copy_v"} <= set(dir(gkt.ops))
    x = _rand(N, 3, seed=7)
    np.testing.assert_allclose(gkt.ops.u_dot_v(g, x, x).detach().numpy(),
                               gk.ops.u_dot_v(g, x.detach().numpy(), x.detach().numpy()))


# ------------------------------------------------------------------------------------------ layers

def _dense(g):
    """Dense adjacency A[v, u] = number of edges u -> v."""
    a = np.zeros((g.num_dst, g.num_src))
    src, dst, _ = g.coo()
    np.add.at(a, (dst, src), 1.0)
    return torch.from_numpy(a)


@pytest.mark.fast
@pytest.mark.parametrize("norm", ["both", "right", "left", "none"])
@pytest.mark.parametrize("in_out", [(3, 2), (2, 3)])
def test_graphconv_matches_the_dense_formula(norm, in_out):
    g = gk.Graph.from_coo(np.r_[SRC, np.arange(N)], np.r_[DST, np.arange(N)], num_nodes=N)  # + self-loops
    conv = gkt.GraphConv(*in_out, norm=norm).double()
    x = _rand(N, in_out[0], seed=8)
    a = _dense(g)
    out_deg = a.sum(0).clamp(min=1)
    in_deg = a.sum(1).clamp(min=1)
    h = x
    if norm in ("both", "left"):
        h = h * (out_deg.pow(-0.5) if norm == "both" else 1 / out_deg).unsqueeze(1)
    h = a @ h @ conv.weight
    if norm in ("both", "right"):
        h = h * (in_deg.pow(-0.5) if norm == "both" else 1 / in_deg).unsqueeze(1)
    h = h + conv.bias
    torch.testing.assert_close(conv(g, x), h)
    assert torch.autograd.gradcheck(lambda t: conv(g, t), (x,), eps=1e-6, atol=1e-6)


def test_graphconv_zero_in_degree_is_refused(g):
    with pytest.raises(ValueError, match="allow_zero_in_degree"):
        gkt.GraphConv(3, 2)(g, torch.ones(N, 3))
    out = gkt.GraphConv(3, 2, allow_zero_in_degree=True)(g, torch.ones(N, 3))
    assert out.shape == (N, 2)


def test_graphconv_edge_weight(g):
    conv = gkt.GraphConv(3, 2, norm="none", allow_zero_in_degree=True, bias=False).double()
    x = _rand(N, 3, seed=9)
    w = _rand(E, seed=10)
    a = np.zeros((N, N))
    np.add.at(a, (DST, SRC), w.detach().numpy())
    torch.testing.assert_close(conv(g, x, edge_weight=w), torch.from_numpy(a) @ x @ conv.weight)


@pytest.mark.fast
def test_gatconv_matches_a_dense_attention():
    g = gk.Graph.from_coo(np.r_[SRC, np.arange(N)], np.r_[DST, np.arange(N)], num_nodes=N)
    heads, out_feats = 2, 3
    gat = gkt.GATConv(4, out_feats, heads).double()
    x = _rand(N, 4, seed=11)
    rst, att = gat(g, x, get_attention=True)
    f = gat.fc(x).view(N, heads, out_feats)
    el = (f * gat.attn_l).sum(-1)  # (N, H)
    er = (f * gat.attn_r).sum(-1)
    src, dst, eids = g.coo()
    order = np.argsort(eids)
    src, dst = torch.from_numpy(src[order].astype(np.int64)), torch.from_numpy(dst[order].astype(np.int64))
    e = torch.nn.functional.leaky_relu(el[src] + er[dst], 0.2)
    expected = torch.zeros(N, heads, out_feats, dtype=torch.float64)
    for v in range(N):
        mask = dst == v
        alpha = torch.softmax(e[mask], dim=0)  # (deg, H)
        expected[v] = (alpha.unsqueeze(-1) * f[src[mask]]).sum(0)
    torch.testing.assert_close(rst, expected)
    assert att.shape == (g.num_edges, heads, 1)
    assert torch.autograd.gradcheck(lambda t: gat(g, t), (x,), eps=1e-6, atol=1e-6)


@pytest.mark.fast
@pytest.mark.parametrize("aggregator", ["mean", "gcn", "pool", "lstm"])
def test_sageconv_matches_a_loop_over_neighbours(g, aggregator):
    torch.manual_seed(0)
    sage = gkt.SAGEConv(3, 2, aggregator).double()
    x = _rand(N, 3, seed=12)
    out = sage(g, x)
    indptr, indices, _ = g.csc()
    rows = []
    for v in range(N):
        nb = indices[indptr[v]:indptr[v + 1]].astype(np.int64)
        h = x[torch.from_numpy(nb)]
        if aggregator == "mean":
            agg = h.mean(0) if len(nb) else torch.zeros(3, dtype=torch.float64)
            rows.append(sage.fc_self(x[v]) + sage.fc_neigh(agg))
        elif aggregator == "gcn":
            rows.append(sage.fc_neigh((h.sum(0) + x[v]) / (len(nb) + 1)))
        elif aggregator == "pool":
            pooled = torch.relu(sage.fc_pool(h)).max(0).values if len(nb) else torch.zeros(3, dtype=torch.float64)
            rows.append(sage.fc_self(x[v]) + sage.fc_neigh(pooled))
        else:
            last = sage.lstm(h.unsqueeze(0))[1][0][0, 0] if len(nb) else torch.zeros(3, dtype=torch.float64)
            rows.append(sage.fc_self(x[v]) + sage.fc_neigh(last))
    # DGL 2.1's layout: fc_self carries the bias; only 'gcn' (no fc_self) has a bias of its own
    expected = torch.stack(rows) + (sage.bias if aggregator == "gcn" else 0)
    torch.testing.assert_close(out, expected)
    assert torch.autograd.gradcheck(lambda t: sage(g, t), (x,), eps=1e-6, atol=1e-5)


@pytest.mark.fast
def test_layer_argument_errors():
    with pytest.raises(ValueError, match="aggregator_type"):
        gkt.SAGEConv(3, 2, "attention")
    with pytest.raises(ValueError, match="norm"):
        gkt.GraphConv(3, 2, norm="sym")
    g = gk.Graph.from_coo(SRC, DST, num_nodes=N)
    for layer in (gkt.GraphConv(3, 2, allow_zero_in_degree=True), gkt.GATConv(3, 2, 1, allow_zero_in_degree=True),
                  gkt.SAGEConv(3, 2, "mean")):
        with pytest.raises(ValueError, match="'feat'.*width 3"):
            layer(g, torch.ones(N, 4))
        with pytest.raises(ValueError, match="'feat'.*5 rows"):
            layer(g, torch.ones(N + 1, 3))


def _dynamic_graph():
    """A DynamicGraph with self-loops (GATConv needs every in-degree > 0) whose edge ids have holes: a
    deleted edge's id is free, so num_edge_ids > num_edges."""
    dg = gk.DynamicGraph(N)
    dg.apply(insert=(np.r_[SRC, np.arange(N), [2]], np.r_[DST, np.arange(N), [0]]))
    dg.apply(delete=([2], [0]))
    assert dg.max_edge_id > dg.num_edges
    return dg


@pytest.mark.parametrize("layer", ["graphconv", "gatconv", "sageconv", "edge_weight"])
def test_layers_on_a_dynamic_graph_equal_its_snapshot(layer):
    """A temporal GNN calls the layers on the DynamicGraph itself: forward and gradients equal the same
    calls on its snapshot (with an edge-weight array of max_edge_id rows, indexed by the stable ids)."""
    dg = _dynamic_graph()
    snap = dg.snapshot()
    torch.manual_seed(3)
    if layer == "gatconv":
        module = gkt.GATConv(4, 3, 2).double()
    elif layer == "sageconv":
        module = gkt.SAGEConv(4, 3, "pool").double()
    else:
        module = gkt.GraphConv(4, 3).double()
    weight = _rand(dg.max_edge_id, seed=5) if layer == "edge_weight" else None
    results = []
    for graph in (dg, snap):
        x = _rand(N, 4, seed=21)
        module.zero_grad()
        out = module(graph, x) if weight is None else module(graph, x, edge_weight=weight)
        out.square().sum().backward()
        results.append((out.detach(), x.grad, [p.grad.clone() for p in module.parameters() if p.grad is not None]))
    (out_d, gx_d, gp_d), (out_s, gx_s, gp_s) = results
    torch.testing.assert_close(out_d, out_s)
    torch.testing.assert_close(gx_d, gx_s)
    assert len(gp_d) == len(gp_s) > 0
    for a, b in zip(gp_d, gp_s):
        torch.testing.assert_close(a, b)


def test_functions_on_a_dynamic_graph_and_backward_after_a_batch():
    """spmm, sddmm and edge_softmax take a DynamicGraph; a batch between forward and backward does not
    change the gradient (autograd keeps the snapshot the forward ran on)."""
    dg = _dynamic_graph()
    snap = dg.snapshot()
    x = _rand(N, 3, seed=1)
    w = _rand(dg.max_edge_id, 1, seed=2)
    out = gkt.spmm(dg, "mul", "max", x, w)
    dg.apply(insert=([4, 4], [2, 3]), delete=([0], [1]))  # the graph moves on before the backward
    out.sum().backward()
    x2, w2 = x.detach().clone().requires_grad_(True), w.detach().clone().requires_grad_(True)
    gkt.spmm(snap, "mul", "max", x2, w2).sum().backward()
    torch.testing.assert_close(x.grad, x2.grad)
    torch.testing.assert_close(w.grad, w2.grad)
    logits = _rand(dg.max_edge_id, 2, seed=4)
    torch.testing.assert_close(gkt.edge_softmax(dg, logits), gkt.edge_softmax(dg.snapshot(), logits))
    torch.testing.assert_close(gkt.sddmm(dg, "dot", x, x, "u", "v"), gkt.sddmm(dg.snapshot(), "dot", x, x, "u", "v"))
    with pytest.raises(TypeError, match="argument 'g'"):
        gkt.spmm("not a graph", "copy_lhs", "sum", x)
    with pytest.raises(TypeError, match="argument 'g'"):
        gkt.GraphConv(3, 2)(None, x)
