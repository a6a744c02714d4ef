"""RelGraphConv and TypedLinear against a plain torch reference that sums one dense adjacency matrix per
relation: outputs, input and parameter gradients, every regularizer, presorted edges, norms, options, and
DGL 2.1's state_dict keys (hard-coded from its source: python/dgl/nn/pytorch/conv/relgraphconv.py and
python/dgl/nn/pytorch/linear.py)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import graphkern as gk  # noqa: E402
import graphkern.torch as gkt  # noqa: E402

# multi-edges (0 -> 1 twice, with different relations), a self-loop (3 -> 3), node 2 without in-edges
SRC = np.array([0, 1, 3, 0, 0, 3, 1, 2, 3, 4, 4])
DST = np.array([1, 0, 3, 3, 1, 4, 4, 1, 0, 0, 1])
N, E, R = 5, SRC.size, 3
ETYPES = torch.tensor([0, 2, 1, 1, 2, 0, 0, 2, 1, 0, 2])
TOL = dict(rtol=1e-4, atol=1e-4)


def _adjacency(etypes, norm, r):
    """``A[v, u]`` = the sum of the norms of the edges u -> v of relation ``r``."""
    a = torch.zeros(N, N)
    weights = torch.ones(E) if norm is None else norm.reshape(-1)
    for e in range(E):
        if int(etypes[e]) == r:
            a[DST[e], SRC[e]] += weights[e]
    return a


def reference(conv, feat, etypes, norm=None):
    """``sum_r A_r @ feat @ W_r`` plus DGL's layer norm, bias, self-loop and activation, in DGL's order."""
    lin = conv.linear_r
    if lin.regularizer == "bdd":
        nb, bi, bo = lin.num_bases, lin.submat_in, lin.submat_out
        blocks = lin.W.view(R, nb, bi, bo)
        weights = torch.stack([torch.block_diag(*blocks[r]) for r in range(R)])
    elif lin.regularizer == "basis":
        weights = torch.einsum("rb,bio->rio", lin.coeff, lin.W)
    else:
        weights = lin.W
    h = sum(_adjacency(etypes, norm, r) @ feat @ weights[r] for r in range(R))
    if conv.layer_norm:
        h = conv.layer_norm_weight(h)
    if conv.bias:
        h = h + conv.h_bias
    if conv.self_loop:
        h = h + feat @ conv.loop_weight
    if conv.activation:
        h = conv.activation(h)
    return h


@pytest.fixture(scope="module")
def g():
    return gk.Graph.from_coo(SRC, DST, num_nodes=N)


CONFIGS = [
    dict(regularizer=None),
    dict(regularizer="basis", num_bases=2),
    dict(regularizer="bdd", num_bases=2),
    dict(regularizer=None, layer_norm=True, activation=torch.relu),
    dict(regularizer="basis", bias=False, self_loop=False),
]


@pytest.mark.parametrize("presorted", [False, True])
@pytest.mark.parametrize("with_norm", [False, True])
@pytest.mark.parametrize("config", CONFIGS, ids=lambda c: "-".join(f"{k}={getattr(v, '__name__', v)}"
                                                                    for k, v in c.items()))
@pytest.mark.fast
def test_outputs_and_gradients_match_the_dense_reference(g, config, with_norm, presorted):
    torch.manual_seed(0)
    conv = gkt.RelGraphConv(6, 4, R, **config)
    with torch.no_grad():
        if conv.bias:
            conv.h_bias.uniform_(-1, 1)  # zero at construction: make it count
    graph, etypes = g, ETYPES
    if presorted:  # the same edges with ids in relation order
        order = torch.argsort(ETYPES, stable=True).numpy()
        graph = gk.Graph.from_coo(SRC[order], DST[order], num_nodes=N)
        etypes = ETYPES[order]
    norm = torch.rand(E, 1) + 0.5 if with_norm else None
    feat = torch.randn(N, 6, requires_grad=True)
    out = conv(graph, feat, etypes, norm if not presorted or norm is None else norm[order], presorted=presorted)
    ref_feat = feat.detach().clone().requires_grad_(True)
    want = reference(conv, ref_feat, ETYPES, norm)
    torch.testing.assert_close(out, want, **TOL)
    grad = torch.randn_like(out)
    params = [p for p in conv.parameters()]
    got_grads = torch.autograd.grad(out, [feat, *params], grad)
    want_grads = torch.autograd.grad(want, [ref_feat, *params], grad)
    for got, expected in zip(got_grads, want_grads):
        torch.testing.assert_close(got, expected, **TOL)


def test_float64_gradcheck_of_the_layer_input(g):
    conv = gkt.RelGraphConv(3, 2, R, regularizer="bdd", num_bases=1).double()
    feat = torch.randn(N, 3, dtype=torch.float64, requires_grad=True)
    norm = torch.rand(E, dtype=torch.float64, requires_grad=True)
    assert torch.autograd.gradcheck(lambda x, w: conv(g, x, ETYPES, w), (feat, norm))


# DGL 2.1's keys, in DGL's order (parameters of the layer, then linear_r's, then the layer norm's)
DGL_KEYS = {
    (None, False): ["h_bias", "loop_weight", "linear_r.W"],
    ("basis", False): ["h_bias", "loop_weight", "linear_r.W", "linear_r.coeff"],
    ("bdd", False): ["h_bias", "loop_weight", "linear_r.W"],
    (None, True): ["h_bias", "loop_weight", "linear_r.W", "layer_norm_weight.weight", "layer_norm_weight.bias"],
    ("basis", True): ["h_bias", "loop_weight", "linear_r.W", "linear_r.coeff", "layer_norm_weight.weight",
                      "layer_norm_weight.bias"],
}


@pytest.mark.parametrize(("regularizer", "layer_norm"), sorted(DGL_KEYS, key=str))
def test_state_dict_keys_and_shapes_are_dgls(regularizer, layer_norm):
    conv = gkt.RelGraphConv(8, 4, 5, regularizer=regularizer, num_bases=2, layer_norm=layer_norm)
    state = conv.state_dict()
    assert list(state) == DGL_KEYS[(regularizer, layer_norm)]
    assert state["loop_weight"].shape == (8, 4) and state["h_bias"].shape == (4,)
    w_shape = {None: (5, 8, 4), "basis": (2, 8, 4), "bdd": (5, 2 * 4 * 2)}[regularizer]
    assert state["linear_r.W"].shape == w_shape
    if regularizer == "basis":
        assert state["linear_r.coeff"].shape == (5, 2)
    assert list(gkt.RelGraphConv(8, 4, 5, bias=False, self_loop=False).state_dict()) == ["linear_r.W"]
    # num_bases defaults to num_rels with a regularizer, as in DGL
    assert gkt.RelGraphConv(8, 4, 5, regularizer="basis").state_dict()["linear_r.coeff"].shape == (5, 5)


@pytest.mark.fast
def test_typed_linear_matches_per_type_products():
    torch.manual_seed(1)
    x = torch.randn(20, 6)
    types = torch.randint(0, 4, (20,))
    for regularizer, bases in ((None, None), ("basis", 3), ("bdd", 2)):
        m = gkt.TypedLinear(6, 4, 4, regularizer=regularizer, num_bases=bases)
        w = m.get_weight()
        if regularizer == "bdd":
            blocks = w.view(4, 2, 3, 2)
            w = torch.stack([torch.block_diag(*blocks[t]) for t in range(4)])
        want = torch.stack([x[i] @ w[types[i]] for i in range(20)])
        torch.testing.assert_close(m(x, types), want, **TOL)
        order = torch.argsort(types, stable=True)
        torch.testing.assert_close(m(x[order], types[order], sorted_by_type=True), want[order], **TOL)


def test_bad_arguments_are_refused(g):
    conv = gkt.RelGraphConv(6, 4, R)
    feat = torch.randn(N, 6)
    with pytest.raises(ValueError, match="argument 'etypes': expected type ids in \\[0, 3\\), found 3"):
        conv(g, feat, torch.full((E,), 3))
    with pytest.raises(ValueError, match=f"argument 'etypes': expected shape \\({E},\\), found \\(4,\\)"):
        conv(g, feat, torch.zeros(4, dtype=torch.int64))
    with pytest.raises(TypeError, match="argument 'etypes': expected an integer tensor"):
        conv(g, feat, torch.zeros(E))
    with pytest.raises(ValueError, match="argument 'etypes': expected types in non-decreasing order"):
        conv(g, feat, ETYPES, presorted=True)
    with pytest.raises(ValueError, match="argument 'feat': expected a tensor of shape \\(5, 6\\)"):
        conv(g, feat[:3], ETYPES)
    with pytest.raises(ValueError, match=f"argument 'norm': expected a tensor of shape \\({E},\\) or \\({E}, 1\\)"):
        conv(g, feat, ETYPES, torch.ones(E, 2))
    with pytest.raises(ValueError, match="argument 'num_bases': 'bdd' needs it to divide in_size \\(6\\)"):
        gkt.RelGraphConv(6, 4, R, regularizer="bdd", num_bases=4)
    with pytest.raises(ValueError, match="argument 'regularizer'"):
        gkt.RelGraphConv(6, 4, R, regularizer="lowrank")


def test_it_trains(g):
    torch.manual_seed(2)
    conv = gkt.RelGraphConv(6, 3, R, regularizer="basis", num_bases=2)
    feat = torch.randn(N, 6)
    target = torch.randn(N, 3)
    opt = torch.optim.Adam(conv.parameters(), lr=0.05)
    losses = []
    for _ in range(30):
        opt.zero_grad()
        loss = ((conv(g, feat, ETYPES) - target) ** 2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize("regularizer", [None, "basis", "bdd"])
def test_a_graph_without_edges_gives_the_self_loop_and_bias(regularizer):
    g0 = gk.Graph.from_coo(np.array([], np.int64), np.array([], np.int64), num_nodes=3)
    conv = gkt.RelGraphConv(4, 2, 2, regularizer=regularizer, num_bases=2)
    feat = torch.randn(3, 4, requires_grad=True)
    for presorted in (False, True):
        out = conv(g0, feat, torch.zeros(0, dtype=torch.int64), presorted=presorted)
        torch.testing.assert_close(out, feat @ conv.loop_weight + conv.h_bias)
        out.sum().backward()


def test_bipartite_block():
    """Sources and destinations apart (a sampled block): messages from the sources, the self-loop from
    the first num_dst rows, as DGL does."""
    torch.manual_seed(3)
    src, dst = np.array([0, 1, 4, 3, 4]), np.array([0, 1, 1, 0, 0])
    block = gk.Graph.from_coo(src, dst, num_nodes=(5, 2))
    types = torch.tensor([0, 1, 1, 0, 1])
    conv = gkt.RelGraphConv(4, 3, 2)
    feat = torch.randn(5, 4)
    want = feat[:2] @ conv.loop_weight + conv.h_bias
    for e in range(5):
        want = want.index_add(0, torch.tensor([int(dst[e])]), (feat[src[e]] @ conv.linear_r.W[types[e]])[None])
    torch.testing.assert_close(conv(block, feat, types), want, **TOL)
