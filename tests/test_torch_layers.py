"""The DGL-compatible layers of graphkern.torch.nn against plain torch references written from each layer's
formula (dense adjacency for the sums, a loop over destinations for max and softmax): outputs and the
gradients of features and edge weights agree in float32 (1e-4), float64 gradcheck passes on a tiny graph,
the ``state_dict`` keys and shapes are DGL 2.1's, and bad arguments raise ValueError naming the argument.

tests/test_torch_layers_dgl.py compares the same layers with DGL's own where dgl is installed."""

import copy

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import graphkern as gk  # noqa: E402
import graphkern.torch as gkt  # noqa: E402

TOL = {"rtol": 1e-4, "atol": 1e-4}

# self-loop (3 -> 3), parallel edges (0 -> 1 twice), a node without in-edges (2), one without out-edges (4)
SRC = np.array([0, 1, 3, 0, 0, 3, 1, 2, 3])
DST = np.array([1, 0, 3, 3, 1, 4, 4, 1, 0])
N = 5


def _graph(kind):
    if kind == "zero_in":
        return gk.Graph.from_coo(SRC, DST, num_nodes=N)
    if kind == "loops":  # every node has an in-edge
        return gk.Graph.from_coo(np.r_[SRC, np.arange(N)], np.r_[DST, np.arange(N)], num_nodes=N)
    if kind == "block":  # 5 sources, 3 destinations, with a parallel edge (4 -> 1 twice)
        return gk.Graph.from_coo([0, 1, 2, 3, 4, 4, 0, 4], [0, 0, 1, 2, 2, 1, 2, 1], num_nodes=(5, 3))
    if kind == "real":  # a Graph500 Kronecker graph: skewed degrees, isolated nodes
        return gk.graph.kronecker(7, edgefactor=4)
    raise AssertionError(kind)


GRAPHS = ["zero_in", "loops", "real"]


@pytest.fixture(scope="module", params=GRAPHS)
def graph(request):
    return _graph(request.param)


def _rand(*shape, seed, low=None):
    gen = torch.Generator().manual_seed(seed)
    if low is not None:  # positive values, for edge weights
        return torch.rand(*shape, generator=gen, dtype=torch.float64) + low
    return torch.randn(*shape, generator=gen, dtype=torch.float64)


# ------------------------------------------------------------------------------------ references

def edge_list(g):
    src, dst = g.edges()  # by edge id
    return torch.from_numpy(src.astype(np.int64)), torch.from_numpy(dst.astype(np.int64))


def adjacency(g, weight=None):
    """Dense ``A[u, v]``: the number of edges u -> v, or the sum of their weights."""
    src, dst = edge_list(g)
    values = torch.ones(src.shape[0], dtype=torch.float64) if weight is None else weight
    return torch.zeros(g.num_src, g.num_dst, dtype=values.dtype).index_put((src, dst), values, accumulate=True)


def in_degrees(g):
    return adjacency(g).sum(0)


def out_degrees(g):
    return adjacency(g).sum(1)


def sym_norm(degrees):
    return degrees.clamp(min=1).pow(-0.5)


def weight_norm_both(g, weight):
    """DGL's EdgeWeightNorm("both") as a dense matrix: ``W[u, v] / sqrt(out_weight(u) * in_weight(v))``."""
    w = adjacency(g, weight)
    return w / torch.sqrt(torch.outer(w.sum(1), w.sum(0)).clamp(min=1e-24))


def per_destination(g, values, reduce):
    """``reduce`` over each destination's in-edges of the per-edge ``values`` (0 where there are none)."""
    _, dst = edge_list(g)
    rows = []
    for v in range(g.num_dst):
        mine = values[dst == v]
        if mine.shape[0] == 0:
            rows.append(values.new_zeros(values.shape[1:]))
        elif reduce == "max":
            rows.append(mine.max(0).values)
        else:
            rows.append(getattr(mine, reduce)(0))
    return torch.stack(rows)


def softmax_per_destination(g, scores):
    _, dst = edge_list(g)
    out = torch.zeros_like(scores)
    for v in range(g.num_dst):
        mask = dst == v
        if mask.any():
            out = out.index_put((torch.nonzero(mask).ravel(),), torch.softmax(scores[mask], dim=0))
    return out


def pair(feat, g):
    return feat if isinstance(feat, tuple) else (feat, feat[: g.num_dst])


# -------------------------------------------------------------------------------------- the harness

def check(layer, reference, g, feat, weight=None, gradcheck=False, **kwargs):
    """The float32 layer against the float64 reference on a float64 copy of its parameters: outputs and
    the gradients of every input; with ``gradcheck``, also torch's gradcheck of the layer in float64."""
    ref_layer = copy.deepcopy(layer).double()
    is_pair = isinstance(feat, tuple)
    leaves64 = list(feat if is_pair else (feat,)) + ([] if weight is None else [weight])
    leaves64 = [t.detach().clone().requires_grad_(True) for t in leaves64]
    leaves32 = [t.detach().float().requires_grad_(True) for t in leaves64]

    def call(module, leaves, fn):
        f = tuple(leaves[:2]) if is_pair else leaves[0]
        w = leaves[-1] if weight is not None else None
        return fn(module, g, f, w)

    def ours_fn(module, g_, f, w):
        return module(g_, f, edge_weight=w, **kwargs) if w is not None else module(g_, f, **kwargs)

    ours = call(layer, leaves32, ours_fn)
    expected = call(ref_layer, leaves64, lambda m, g_, f, w: reference(m, g_, f, w, **kwargs))
    assert ours.dtype == torch.float32 and ours.shape == expected.shape
    direction = _rand(*expected.shape, seed=99)
    (ours * direction.float()).sum().backward()
    (expected * direction).sum().backward()
    torch.testing.assert_close(ours.double(), expected.detach(), **TOL)
    for a, b in zip(leaves32, leaves64):
        torch.testing.assert_close(a.grad.double(), b.grad, **TOL)
    if gradcheck:
        layer64 = copy.deepcopy(layer).double()
        assert torch.autograd.gradcheck(lambda *t: call(layer64, list(t), ours_fn), tuple(leaves64), eps=1e-6,
                                        atol=1e-5)


# ------------------------------------------------------------------------------------------ GINConv

def ref_gin(m, g, feat, weight):
    x_src, x_dst = pair(feat, g)
    if m._aggregator_type == "max":
        src, _ = edge_list(g)
        messages = x_src[src] * (1 if weight is None else weight[:, None])
        neigh = per_destination(g, messages, "max")
    else:
        neigh = adjacency(g, weight).T @ x_src
        if m._aggregator_type == "mean":
            neigh = neigh / in_degrees(g).clamp(min=1)[:, None]
    h = (1 + m.eps) * x_dst + neigh
    return m.apply_func(h) if m.apply_func is not None else h


@pytest.mark.fast
@pytest.mark.parametrize("aggregator", ["sum", "mean", "max"])
@pytest.mark.parametrize("weighted", [False, True])
def test_ginconv(graph, aggregator, weighted):
    torch.manual_seed(0)
    layer = gkt.GINConv(torch.nn.Linear(4, 3), aggregator, init_eps=0.25, learn_eps=True)
    weight = _rand(graph.num_edges, seed=2, low=0.5) if weighted else None
    check(layer, ref_gin, graph, _rand(graph.num_src, 4, seed=1), weight, gradcheck=graph.num_src == N)


def test_ginconv_on_a_block_with_a_feature_pair():
    g = _graph("block")
    layer = gkt.GINConv(None, "max", init_eps=-0.5)
    check(layer, ref_gin, g, (_rand(5, 4, seed=1), _rand(3, 4, seed=2)), _rand(g.num_edges, seed=3, low=0.5),
          gradcheck=True)


@pytest.mark.parametrize("kind", ["zero_in", "real", "block"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("learn_eps", [False, True])
def test_ginconv_sum_equals_its_composition_bit_for_bit(kind, dtype, learn_eps):
    # the fused sum aggregation against (1 + eps) * h_dst + copy_u_sum(h): same forward values and the
    # same gradients of h and eps, to the last bit (a block's destinations are its first sources)
    g = _graph(kind)
    layer = gkt.GINConv(None, "sum", init_eps=0.3, learn_eps=learn_eps).to(dtype)
    x = _rand(g.num_src, 7, seed=4).to(dtype).requires_grad_(True)
    x_ref = x.detach().clone().requires_grad_(True)
    eps_ref = layer.eps.detach().clone().requires_grad_(learn_eps)
    out = layer(g, x)
    ref = (1 + eps_ref) * x_ref[: g.num_dst] + gkt.spmm(g, "copy_lhs", "sum", x_ref)
    assert out.dtype == ref.dtype and torch.equal(out, ref)
    grad = _rand(*out.shape, seed=5).to(dtype)
    out.backward(grad)
    ref.backward(grad)
    assert torch.equal(x.grad, x_ref.grad)
    if learn_eps:
        assert torch.equal(layer.eps.grad, eps_ref.grad)


def test_ginconv_sum_runs_no_gradient_kernel_for_features_without_grad(monkeypatch):
    # the first layer's input features need no gradient: its backward runs no SpMM (the learned eps
    # still gets its gradient, from the features themselves)
    from graphkern import sparse

    g = _graph("real")
    layer = gkt.GINConv(torch.nn.Linear(4, 3), "sum", learn_eps=True)
    x = _rand(g.num_src, 4, seed=1).float()
    calls = []
    real_spmm = sparse.spmm

    def counting(*args, **kwargs):
        calls.append(args[1:3])
        return real_spmm(*args, **kwargs)

    monkeypatch.setattr(sparse, "spmm", counting)
    loss = layer(g, x).square().sum()
    assert len(calls) == 1
    loss.backward()
    assert len(calls) == 1
    assert layer.eps.grad is not None and layer.apply_func.weight.grad is not None
    # with features that need a gradient, the backward runs one SpMM (on the reverse graph)
    layer(g, x.requires_grad_(True)).square().sum().backward()
    assert len(calls) == 3 and x.grad is not None


def test_ginconv_sum_keeps_the_composition_for_float64_eps_on_float32_features():
    # torch promotes (1 + eps) * h to float64 there: the fused path would not, so it is not taken
    g = _graph("zero_in")
    layer = gkt.GINConv(None, "sum", init_eps=0.1)
    layer.eps = layer.eps.double()
    x = _rand(N, 3, seed=1).float()
    out = layer(g, x)
    assert out.dtype == torch.float64
    assert torch.equal(out, (1 + layer.eps) * x + gkt.spmm(g, "copy_lhs", "sum", x))


def test_ginconv_eps_is_a_buffer_unless_learned():
    assert "eps" in dict(gkt.GINConv(learn_eps=True).named_parameters())
    fixed = gkt.GINConv(init_eps=0.5)
    assert "eps" not in dict(fixed.named_parameters()) and fixed.state_dict()["eps"].tolist() == [0.5]


# ------------------------------------------------------------------- SGConv, APPNPConv, TAGConv, ChebConv

def propagation(g, weight):
    """The matrix that SGConv/TAGConv apply: D_in^-1/2 A^T D_in^-1/2, or the normalised weights."""
    if weight is not None:
        return weight_norm_both(g, weight).T
    norm = sym_norm(in_degrees(g))
    return norm[:, None] * adjacency(g).T * norm[None, :]


def ref_sg(m, g, feat, weight):
    h = feat
    for _ in range(m._k):
        h = propagation(g, weight) @ h
    return m.fc(h)


def ref_appnp(m, g, feat, weight):
    if weight is None:
        a_hat = sym_norm(in_degrees(g))[:, None] * adjacency(g).T * sym_norm(out_degrees(g))[None, :]
    else:
        a_hat = weight_norm_both(g, weight).T
    h = feat
    for _ in range(m._k):
        h = (1 - m._alpha) * (a_hat @ h) + m._alpha * feat
    return h


def ref_tag(m, g, feat, weight):
    hops = [feat]
    for _ in range(m._k):
        hops.append(propagation(g, weight) @ hops[-1])
    out = m.lin(torch.cat(hops, dim=1))
    return m._activation(out) if m._activation is not None else out


def ref_cheb(m, g, feat, weight, lambda_max=None, counts=None):
    counts = [g.num_dst] if counts is None else counts
    lambdas = torch.tensor([2.0] * len(counts) if lambda_max is None else lambda_max, dtype=feat.dtype)
    re_norm = torch.repeat_interleave(2.0 / lambdas, torch.tensor(counts))[:, None]
    laplacian = torch.eye(g.num_dst, dtype=feat.dtype) - propagation(g, None)
    scaled = re_norm * laplacian - torch.eye(g.num_dst, dtype=feat.dtype)  # 2 L / lambda - I, row by row
    terms = [feat]
    if m._k > 1:
        terms.append(scaled @ feat)
    while len(terms) < m._k:
        terms.append(2 * scaled @ terms[-1] - terms[-2])
    out = m.linear(torch.cat(terms, dim=1))
    return m.activation(out) if m.activation else out


@pytest.mark.fast
@pytest.mark.parametrize("weighted", [False, True])
def test_sgconv(graph, weighted):
    torch.manual_seed(0)
    layer = gkt.SGConv(4, 3, k=3, allow_zero_in_degree=True)
    weight = _rand(graph.num_edges, seed=2, low=0.5) if weighted else None
    check(layer, ref_sg, graph, _rand(graph.num_src, 4, seed=1), weight, gradcheck=graph.num_src == N)


def test_sgconv_cached_reuses_the_first_propagation():
    g = _graph("loops")
    layer = gkt.SGConv(4, 3, k=2, cached=True).double()
    x = _rand(N, 4, seed=1)
    first = layer(g, x)
    torch.testing.assert_close(layer(g, _rand(N, 4, seed=2)), first)
    torch.testing.assert_close(first, ref_sg(layer, g, x, None))


@pytest.mark.fast
@pytest.mark.parametrize("weighted", [False, True])
def test_appnpconv(graph, weighted):
    layer = gkt.APPNPConv(k=4, alpha=0.15)
    weight = _rand(graph.num_edges, seed=2, low=0.5) if weighted else None
    check(layer, ref_appnp, graph, _rand(graph.num_src, 4, seed=1), weight, gradcheck=graph.num_src == N)


def test_appnpconv_edge_drop_is_off_in_eval_and_drops_in_training():
    g = _graph("loops")
    layer = gkt.APPNPConv(k=2, alpha=0.1, edge_drop=0.5).double()
    x = _rand(N, 3, seed=1)
    torch.testing.assert_close(layer.eval()(g, x), ref_appnp(layer, g, x, None))
    torch.manual_seed(0)
    assert not torch.allclose(layer.train()(g, x), ref_appnp(layer, g, x, None))


@pytest.mark.fast
@pytest.mark.parametrize("weighted", [False, True])
def test_tagconv(graph, weighted):
    torch.manual_seed(0)
    layer = gkt.TAGConv(4, 3, k=2, activation=torch.tanh)
    weight = _rand(graph.num_edges, seed=2, low=0.5) if weighted else None
    check(layer, ref_tag, graph, _rand(graph.num_src, 4, seed=1), weight, gradcheck=graph.num_src == N)


@pytest.mark.fast
@pytest.mark.parametrize("k", [1, 2, 4])
def test_chebconv(graph, k):
    torch.manual_seed(0)
    layer = gkt.ChebConv(4, 3, k)
    check(layer, ref_cheb, graph, _rand(graph.num_src, 4, seed=1), lambda_max=[1.6], gradcheck=graph.num_src == N)


def test_chebconv_default_lambda_max_is_two():
    torch.manual_seed(0)
    check(gkt.ChebConv(4, 3, 3, activation=None), ref_cheb, _graph("zero_in"), _rand(N, 4, seed=1))


class _Batched(gk.Graph):
    """A Graph that says how its nodes split into the graphs of a batch, as a batched graph does."""

    def batch_num_nodes(self):
        return self._counts


def _batched(counts, seed=0):
    """Random graphs of ``counts`` nodes each (an empty one allowed), renumbered into one graph."""
    rng = np.random.default_rng(seed)
    src, dst, offset = [], [], 0
    for n in counts:
        if n:
            src.append(rng.integers(0, n, 3 * n) + offset)
            dst.append(rng.integers(0, n, 3 * n) + offset)
        offset += n
    g = _Batched.from_coo(np.concatenate(src), np.concatenate(dst), num_nodes=offset)
    g._counts = np.asarray(counts)
    return g


def test_chebconv_lambda_max_per_graph_of_a_batch():
    torch.manual_seed(0)
    counts = [4, 0, 6]
    g = _batched(counts)
    layer = gkt.ChebConv(4, 3, 3).double()
    x = _rand(10, 4, seed=1)
    torch.testing.assert_close(layer(g, x, lambda_max=[1.5, 2.0, 1.2]),
                               ref_cheb(layer, g, x, None, lambda_max=[1.5, 2.0, 1.2], counts=counts))


# ---------------------------------------------------------------------------------------- GATv2Conv

def ref_gatv2(m, g, feat, weight):
    h_src, h_dst = pair(feat, g)
    heads, out = m._num_heads, m._out_feats
    f_src = m.fc_src(h_src).view(-1, heads, out)
    f_dst = m.fc_dst(h_dst).view(-1, heads, out)
    src, dst = edge_list(g)
    scores = (torch.nn.functional.leaky_relu(f_src[src] + f_dst[dst], 0.2) * m.attn).sum(-1)  # (E, H)
    attention = softmax_per_destination(g, scores)
    rst = per_destination(g, attention[:, :, None] * f_src[src], "sum")
    if m.res_fc is not None:
        rst = rst + m.res_fc(h_dst).view(h_dst.shape[0], heads, out)
    return m.activation(rst) if m.activation else rst


@pytest.mark.fast
@pytest.mark.parametrize("variant", ["plain", "shared", "residual", "identity_residual"])
def test_gatv2conv(graph, variant):
    torch.manual_seed(0)
    width = 6 if variant == "identity_residual" else 4
    layer = gkt.GATv2Conv(width, 3, 2, allow_zero_in_degree=True, share_weights=variant == "shared",
                          residual=variant in ("residual", "identity_residual"), activation=torch.nn.functional.elu)
    check(layer, ref_gatv2, graph, _rand(graph.num_src, width, seed=1), gradcheck=graph.num_src == N)


def test_gatv2conv_on_a_block():
    torch.manual_seed(0)
    g = _graph("block")
    check(gkt.GATv2Conv((4, 5), 3, 2, residual=True), ref_gatv2, g, (_rand(5, 4, seed=1), _rand(3, 5, seed=2)),
          gradcheck=True)
    check(gkt.GATv2Conv(4, 3, 2), ref_gatv2, g, _rand(5, 4, seed=1))  # one tensor: the first 3 rows are dst


def test_gatv2conv_attention_is_a_softmax_per_destination():
    g = _graph("loops")
    _, attention = gkt.GATv2Conv(4, 3, 2)(g, torch.randn(N, 4), get_attention=True)
    assert attention.shape == (g.num_edges, 2, 1)
    totals = torch.zeros(N, 2).index_add(0, edge_list(g)[1], attention[:, :, 0].detach())
    torch.testing.assert_close(totals, torch.ones(N, 2))


# ----------------------------------------------------------------------------------------- EdgeConv

def ref_edge(m, g, feat, weight):
    h_src, h_dst = pair(feat, g)
    src, dst = edge_list(g)
    messages = m.theta(h_dst[dst] - h_src[src]) + m.phi(h_dst[dst])
    if m.batch_norm:
        messages = m.bn(messages)
    return per_destination(g, messages, "max")


@pytest.mark.fast
@pytest.mark.parametrize("batch_norm", [False, True])
def test_edgeconv(graph, batch_norm):
    torch.manual_seed(0)
    layer = gkt.EdgeConv(4, 3, batch_norm=batch_norm, allow_zero_in_degree=True)
    check(layer, ref_edge, graph, _rand(graph.num_src, 4, seed=1), gradcheck=graph.num_src == N and not batch_norm)


def test_edgeconv_on_a_block():
    torch.manual_seed(0)
    check(gkt.EdgeConv(4, 3), ref_edge, _graph("block"), (_rand(5, 4, seed=1), _rand(3, 4, seed=2)),
          gradcheck=True)


def test_edgeconv_batch_norm_skips_unused_edge_ids():
    """A graph whose edge ids have a gap: the gap's row takes no part in the batch statistics."""
    g = gk.Graph.from_coo([0, 1, 2, 2], [1, 2, 0, 1], num_nodes=3, eids=[0, 1, 3, 4], num_edge_ids=5)
    dense = gk.Graph.from_coo([0, 1, 2, 2], [1, 2, 0, 1], num_nodes=3)
    torch.manual_seed(0)
    layer = gkt.EdgeConv(2, 3, batch_norm=True).double()
    x = _rand(3, 2, seed=1)
    torch.testing.assert_close(layer(g, x), copy.deepcopy(layer)(dense, x))


# ---------------------------------------------------------------------------------- readout (pooling)

def ref_pool(reduce, feat, counts):
    rows, start = [], 0
    for n in counts:
        part = feat[start:start + n]
        start += n
        if n == 0:
            rows.append(part.sum(0))  # zeros (DGL's value for an empty graph), still attached to feat
        else:
            rows.append(part.max(0).values if reduce == "max" else getattr(part, reduce)(0))
    return torch.stack(rows)


@pytest.mark.parametrize(("layer", "reduce"), [(gkt.SumPooling, "sum"), (gkt.AvgPooling, "mean"),
                                               (gkt.MaxPooling, "max")])
@pytest.mark.fast
@pytest.mark.parametrize("counts", [[4, 0, 6, 1], [0], [7]])
def test_pooling(layer, reduce, counts):
    g = _batched(counts) if sum(counts) else _Batched.from_coo([], [], num_nodes=0)
    g._counts = np.asarray(counts)
    x = _rand(sum(counts), 2, 3, seed=1)
    check(layer(), lambda m, g_, f, w: ref_pool(reduce, f, counts), g, x, gradcheck=sum(counts) > 0)


def test_pooling_without_a_batch_is_one_graph():
    g = _graph("zero_in")
    x = _rand(N, 3, seed=1)
    torch.testing.assert_close(gkt.AvgPooling()(g, x), x.mean(0, keepdim=True))


def test_max_pooling_gradient_goes_to_the_first_maximum():
    g = _batched([3])
    x = torch.tensor([[1.0, 2.0], [5.0, 2.0], [5.0, 0.0]], requires_grad=True)
    gkt.MaxPooling()(g, x).sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0], [1.0, 0.0], [0.0, 0.0]]


# ---------------------------------------------------------------------------- state_dict: DGL 2.1's keys

# Read from DGL 2.1's python/dgl/nn/pytorch/conv/*.py: the keys and shapes its layers save.
DGL_KEYS = [
    (lambda: gkt.GraphConv(3, 2), {"weight": (3, 2), "bias": (2,)}),
    (lambda: gkt.GATConv(3, 2, 2), {"attn_l": (1, 2, 2), "attn_r": (1, 2, 2), "bias": (4,), "fc.weight": (4, 3)}),
    (lambda: gkt.GATConv(3, 2, 2, residual=True), {"attn_l": (1, 2, 2), "attn_r": (1, 2, 2), "fc.weight": (4, 3),
                                                   "res_fc.weight": (4, 3), "res_fc.bias": (4,)}),
    (lambda: gkt.GATConv((3, 4), 2, 2), {"attn_l": (1, 2, 2), "attn_r": (1, 2, 2), "bias": (4,),
                                         "fc_src.weight": (4, 3), "fc_dst.weight": (4, 4)}),
    (lambda: gkt.SAGEConv(3, 2, "mean"), {"fc_neigh.weight": (2, 3), "fc_self.weight": (2, 3),
                                          "fc_self.bias": (2,)}),
    (lambda: gkt.SAGEConv(3, 2, "gcn"), {"bias": (2,), "fc_neigh.weight": (2, 3)}),
    (lambda: gkt.SAGEConv(3, 2, "pool"), {"fc_pool.weight": (3, 3), "fc_pool.bias": (3,), "fc_neigh.weight": (2, 3),
                                          "fc_self.weight": (2, 3), "fc_self.bias": (2,)}),
    (lambda: gkt.SAGEConv(3, 2, "lstm"), {"lstm.weight_ih_l0": (12, 3), "lstm.weight_hh_l0": (12, 3),
                                          "lstm.bias_ih_l0": (12,), "lstm.bias_hh_l0": (12,),
                                          "fc_neigh.weight": (2, 3), "fc_self.weight": (2, 3), "fc_self.bias": (2,)}),
    (lambda: gkt.GINConv(torch.nn.Linear(3, 3), "sum", learn_eps=True),
     {"eps": (1,), "apply_func.weight": (3, 3), "apply_func.bias": (3,)}),
    (lambda: gkt.GINConv(None, "max"), {"eps": (1,)}),
    (lambda: gkt.SGConv(3, 2), {"fc.weight": (2, 3), "fc.bias": (2,)}),
    (lambda: gkt.APPNPConv(2, 0.1), {}),
    (lambda: gkt.TAGConv(3, 2), {"lin.weight": (2, 9), "lin.bias": (2,)}),
    (lambda: gkt.ChebConv(3, 2, 2), {"linear.weight": (2, 6), "linear.bias": (2,)}),
    (lambda: gkt.GATv2Conv(3, 2, 2), {"attn": (1, 2, 2), "fc_src.weight": (4, 3), "fc_src.bias": (4,),
                                      "fc_dst.weight": (4, 3), "fc_dst.bias": (4,)}),
    (lambda: gkt.GATv2Conv(3, 2, 2, residual=True, share_weights=True),
     {"attn": (1, 2, 2), "fc_src.weight": (4, 3), "fc_src.bias": (4,), "fc_dst.weight": (4, 3),
      "fc_dst.bias": (4,), "res_fc.weight": (4, 3), "res_fc.bias": (4,)}),
    (lambda: gkt.EdgeConv(3, 2), {"theta.weight": (2, 3), "theta.bias": (2,), "phi.weight": (2, 3),
                                  "phi.bias": (2,)}),
    (lambda: gkt.EdgeConv(3, 2, batch_norm=True),
     {"theta.weight": (2, 3), "theta.bias": (2,), "phi.weight": (2, 3), "phi.bias": (2,), "bn.weight": (2,),
      "bn.bias": (2,), "bn.running_mean": (2,), "bn.running_var": (2,), "bn.num_batches_tracked": ()}),
    (lambda: gkt.SumPooling(), {}),
]


@pytest.mark.fast
@pytest.mark.parametrize("index", range(len(DGL_KEYS)))
def test_state_dict_keys_and_shapes_are_dgl_2_1s(index):
    build, expected = DGL_KEYS[index]
    layer = build()
    assert {k: tuple(v.shape) for k, v in layer.state_dict().items()} == expected
    layer.load_state_dict({k: torch.zeros(shape) for k, shape in expected.items()}, strict=True)


# ------------------------------------------------------------------------------------- bad arguments

def test_bad_arguments_name_the_argument():
    g = _graph("zero_in")
    loops = _graph("loops")
    block = _graph("block")
    x = torch.randn(N, 4)
    with pytest.raises(ValueError, match="aggregator_type"):
        gkt.GINConv(None, "lstm")
    for layer in (gkt.SGConv(3, 2, allow_zero_in_degree=True), gkt.TAGConv(3, 2), gkt.ChebConv(3, 2, 2),
                  gkt.GATv2Conv(3, 2, 2, allow_zero_in_degree=True), gkt.EdgeConv(3, 2, allow_zero_in_degree=True)):
        with pytest.raises(ValueError, match="'feat'.*width 3"):
            layer(g, x)
    with pytest.raises(ValueError, match="'feat'.*5 rows"):
        gkt.GINConv()(g, torch.randn(4, 4))
    for make in (lambda: gkt.SGConv(3, 2, k=-1), lambda: gkt.ChebConv(3, 2, 0)):
        with pytest.raises(ValueError, match="'k'"):
            make()
    with pytest.raises(TypeError, match="'k': expected an integer"):  # a count of another type
        gkt.APPNPConv(1.5, 0.1)
    for layer in (gkt.SGConv(4, 2), gkt.GATv2Conv(4, 2, 1), gkt.EdgeConv(4, 2)):
        with pytest.raises(ValueError, match="allow_zero_in_degree"):
            layer(g, x)
    for layer in (gkt.SGConv(4, 2), gkt.APPNPConv(1, 0.1), gkt.TAGConv(4, 2), gkt.ChebConv(4, 2, 2)):
        with pytest.raises(ValueError, match="'graph'"):
            layer(block, torch.randn(5, 4))
    with pytest.raises(ValueError, match="'edge_weight'"):
        gkt.GINConv()(g, x, edge_weight=torch.ones(g.num_edges - 1))
    with pytest.raises(ValueError, match="'edge_weight'.*positive"):
        gkt.SGConv(4, 2)(loops, x, edge_weight=torch.zeros(loops.num_edges))
    with pytest.raises(ValueError, match="'lambda_max'"):
        gkt.ChebConv(4, 2, 2)(g, x, lambda_max=[2.0, 2.0])
    batched = _batched([2, 2])
    with pytest.raises(ValueError, match="'feat'.*4 rows"):
        gkt.MaxPooling()(batched, torch.ones(3, 1))
    batched._counts = np.array([1, 2])  # sums to 3 nodes of 4
    with pytest.raises(ValueError, match="'graph'.*batch_num_nodes"):
        gkt.SumPooling()(batched, torch.ones(4, 1))


# ------------------------------------------------- GATConv and SAGEConv in DGL 2.1's parameter layout

def ref_gat(m, g, feat, weight):
    h_src, h_dst = pair(feat, g)
    heads, out = m._num_heads, m._out_feats
    fc_src, fc_dst = (m.fc_src, m.fc_dst) if hasattr(m, "fc_src") else (m.fc, m.fc)
    f_src, f_dst = fc_src(h_src).view(-1, heads, out), fc_dst(h_dst).view(-1, heads, out)
    src, dst = edge_list(g)
    scores = torch.nn.functional.leaky_relu((f_src * m.attn_l).sum(-1)[src] + (f_dst * m.attn_r).sum(-1)[dst], 0.2)
    attention = softmax_per_destination(g, scores)  # (E, H)
    if weight is not None:
        attention = attention * weight[:, None]
    rst = per_destination(g, attention[:, :, None] * f_src[src], "sum")
    if m.res_fc is not None:
        rst = rst + m.res_fc(h_dst).view(h_dst.shape[0], heads, out)
    if m.bias is not None:
        rst = rst + m.bias.view(heads, out)
    return rst


@pytest.mark.parametrize("residual", [False, True])
def test_gatconv_edge_weight_and_residual(graph, residual):
    torch.manual_seed(0)
    layer = gkt.GATConv(4, 3, 2, residual=residual, allow_zero_in_degree=True)
    assert (layer.bias is None) == residual  # a linear residual carries the bias
    check(layer, ref_gat, graph, _rand(graph.num_src, 4, seed=1), _rand(graph.num_edges, seed=2, low=0.5),
          gradcheck=graph.num_src == N)


def test_gatconv_feature_pair_through_one_fc():
    torch.manual_seed(0)
    check(gkt.GATConv(4, 3, 2, residual=True), ref_gat, _graph("block"), (_rand(5, 4, seed=1), _rand(3, 4, seed=2)),
          gradcheck=True)


# ------------------------------------------------------------------------ on a DynamicGraph

NEW_LAYERS = {
    "gin": lambda: gkt.GINConv(torch.nn.Linear(4, 3), "max", learn_eps=True),
    "sgconv": lambda: gkt.SGConv(4, 3, k=2),
    "appnp": lambda: gkt.APPNPConv(2, 0.2),
    "tagconv": lambda: gkt.TAGConv(4, 3),
    "chebconv": lambda: gkt.ChebConv(4, 3, 3),
    "gatv2": lambda: gkt.GATv2Conv(4, 3, 2),
    "edgeconv": lambda: gkt.EdgeConv(4, 3),
    "edgeconv_bn": lambda: gkt.EdgeConv(4, 3, batch_norm=True),
}
WEIGHTED = {"gin", "sgconv", "appnp", "tagconv"}


@pytest.mark.fast
@pytest.mark.parametrize("name", sorted(NEW_LAYERS))
def test_layers_on_a_dynamic_graph_equal_its_snapshot(name):
    """On a DynamicGraph whose edge ids have a hole (a deleted edge), the same as on its snapshot, edge
    weights indexed by the stable edge ids."""
    dg = gk.DynamicGraph(N)
    dg.apply(insert=(np.r_[SRC, np.arange(N), [2]], np.r_[DST, np.arange(N), [0]]))
    dg.apply(delete=([2], [0]))
    assert dg.max_edge_id > dg.num_edges
    torch.manual_seed(0)
    module = NEW_LAYERS[name]().double()
    weight = _rand(dg.max_edge_id, seed=5, low=0.5) if name in WEIGHTED else None
    results = []
    for g in (dg, dg.snapshot()):
        x = _rand(N, 4, seed=1).requires_grad_(True)
        out = module(g, x) if weight is None else module(g, x, edge_weight=weight)
        out.square().sum().backward()
        results.append((out.detach(), x.grad))
    torch.testing.assert_close(results[0][0], results[1][0])
    torch.testing.assert_close(results[0][1], results[1][1])


def test_a_graph_without_edges():
    g, x = gk.Graph.from_coo([], [], num_nodes=3), torch.randn(3, 4)
    assert gkt.GINConv(None, "max")(g, x, edge_weight=torch.ones(0)).equal(x)
    for layer in (gkt.EdgeConv(4, 2, allow_zero_in_degree=True), gkt.GATv2Conv(4, 2, 1, allow_zero_in_degree=True)):
        assert not layer(g, x).any()
    torch.testing.assert_close(gkt.APPNPConv(3, 0.25)(g, x), 0.25 * x)  # only the teleport term is left


@pytest.mark.parametrize("make", [lambda: gkt.GATConv(4, 3, 2, feat_drop=0.5, residual=True),
                                  lambda: gkt.SAGEConv(4, 3, "mean", feat_drop=0.5)], ids=["gat", "sage"])
@pytest.mark.parametrize("block", [False, True], ids=["graph", "block"])
def test_feature_dropout_draws_one_mask_for_a_single_tensor(make, block):
    """DGL drops a single input tensor once and takes its first num_dst rows as the destinations; the same
    seed then gives the same masks, and the same output, as dropping the input by hand first."""
    g = (gk.Graph.from_coo([0, 1, 2, 3, 4], [1, 2, 0, 1, 2], num_nodes=(5, 3)) if block
         else gk.Graph.from_coo([0, 1, 2, 3, 4], [1, 2, 3, 4, 0]))
    torch.manual_seed(0)
    layer = make()
    x = torch.rand(5, 4) + 0.5
    torch.manual_seed(1)
    got = layer(g, x)
    torch.manual_seed(1)
    dropped = torch.nn.functional.dropout(x, 0.5, training=True)
    layer.feat_drop.p = 0.0
    assert torch.equal(got, layer(g, dropped))
