"""The layers against DGL's own, where DGL is installed: each of ours loads the DGL layer's ``state_dict``
with ``strict=True`` and gives the same outputs and gradients (inputs, edge weights and parameters),
float32, relative and absolute 1e-4. Skipped without dgl."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")
dgl = pytest.importorskip("dgl")

import dgl.nn as dglnn  # noqa: E402

import graphkern as gk  # noqa: E402
import graphkern.torch as gkt  # noqa: E402

# self-loop (3 -> 3), parallel edges (0 -> 1 twice), a node without in-edges (2) and one without out-edges
# (4); the edge order is the edge id order on both sides
SRC = np.array([0, 1, 3, 0, 0, 3, 1, 2, 3])
DST = np.array([1, 0, 3, 3, 1, 4, 4, 1, 0])
N = 5
# the same graph with a self-loop on every node, for the layers that refuse zero in-degrees
LOOP_SRC, LOOP_DST = np.r_[SRC, np.arange(N)], np.r_[DST, np.arange(N)]
# a bipartite block: 5 source nodes, 3 destination nodes, every destination with in-edges
BLOCK_SRC = np.array([0, 1, 2, 3, 4, 4, 0])
BLOCK_DST = np.array([0, 0, 1, 2, 2, 1, 2])


class _Batched(gk.Graph):
    """A Graph that says how its nodes split into the graphs of a batch, as a batched graph does."""

    def batch_num_nodes(self):
        return self._counts


def _graphs(kind):
    if kind == "block":
        ours = gk.Graph.from_coo(BLOCK_SRC, BLOCK_DST, num_nodes=(5, 3))
        theirs = dgl.create_block((torch.from_numpy(BLOCK_SRC), torch.from_numpy(BLOCK_DST)), num_src_nodes=5,
                                  num_dst_nodes=3)
        return ours, theirs
    if kind == "batch":  # three graphs, the middle one empty
        parts = [(SRC, DST, N), (np.array([], np.int64), np.array([], np.int64), 0), (BLOCK_SRC, BLOCK_SRC, 5)]
        theirs = dgl.batch([dgl.graph((torch.from_numpy(s), torch.from_numpy(d)), num_nodes=n) for s, d, n in parts])
        offsets = np.cumsum([0] + [n for _, _, n in parts])
        ours = _Batched.from_coo(np.concatenate([s + o for (s, _, _), o in zip(parts, offsets)]),
                                 np.concatenate([d + o for (_, d, _), o in zip(parts, offsets)]),
                                 num_nodes=int(offsets[-1]))
        ours._counts = np.array([n for _, _, n in parts])
        return ours, theirs
    if kind == "real":  # a Graph500 Kronecker graph: skewed degrees, isolated nodes
        ours = gk.graph.kronecker(7, edgefactor=4)
        src, dst = (torch.from_numpy(a.astype(np.int64)) for a in ours.edges())
        return ours, dgl.graph((src, dst), num_nodes=ours.num_src)
    src, dst = (LOOP_SRC, LOOP_DST) if kind == "loops" else (SRC, DST)
    return (gk.Graph.from_coo(src, dst, num_nodes=N),
            dgl.graph((torch.from_numpy(src), torch.from_numpy(dst)), num_nodes=N))


def _feat(graph, width, gen, pair):
    """Features for the sources (or a pair: sources, destinations); ``width`` an int or (source, dst)."""
    src_width, dst_width = width if isinstance(width, tuple) else (width, width)

    def rows(n, w):
        return torch.randn(n, w, generator=gen).requires_grad_(True)
    if pair:
        return (rows(graph.num_src, src_width), rows(graph.num_dst, dst_width))
    return rows(graph.num_src, src_width)


# name: (build(namespace), graph kind, input width, pair of features, edge weight, extra forward kwargs)
CASES = {
    "graphconv-both": (lambda nn: nn.GraphConv(4, 3, allow_zero_in_degree=True), "plain", 4, False, False, {}),
    "graphconv-left-ew": (lambda nn: nn.GraphConv(4, 3, norm="left", allow_zero_in_degree=True), "plain", 4, False,
                          True, {}),
    "graphconv-right-widen": (lambda nn: nn.GraphConv(3, 5, norm="right", allow_zero_in_degree=True), "plain", 3,
                              False, False, {}),
    "graphconv-none-block": (lambda nn: nn.GraphConv(4, 3, norm="none"), "block", 4, False, False, {}),
    "gatconv": (lambda nn: nn.GATConv(4, 3, 2), "loops", 4, False, False, {}),
    "gatconv-res-linear-ew": (lambda nn: nn.GATConv(4, 3, 2, residual=True, allow_zero_in_degree=True), "plain",
                              4, False, True, {}),
    "gatconv-res-identity": (lambda nn: nn.GATConv(6, 3, 2, residual=True), "loops", 6, False, False, {}),
    "gatconv-nobias": (lambda nn: nn.GATConv(4, 3, 2, bias=False, residual=True), "loops", 4, False, False, {}),
    "gatconv-block-pair": (lambda nn: nn.GATConv((4, 4), 3, 2, residual=True), "block", 4, True, False, {}),
    "sage-mean-ew": (lambda nn: nn.SAGEConv(4, 3, "mean"), "plain", 4, False, True, {}),
    "sage-mean-shrink": (lambda nn: nn.SAGEConv(4, 2, "mean", bias=False), "plain", 4, False, False, {}),
    "sage-gcn": (lambda nn: nn.SAGEConv(4, 3, "gcn"), "plain", 4, False, False, {}),
    "sage-gcn-shrink-ew": (lambda nn: nn.SAGEConv(4, 2, "gcn"), "plain", 4, False, True, {}),
    "sage-pool": (lambda nn: nn.SAGEConv(4, 3, "pool"), "plain", 4, False, False, {}),
    "sage-lstm": (lambda nn: nn.SAGEConv(4, 3, "lstm"), "plain", 4, False, False, {}),
    "sage-lstm-ew": (lambda nn: nn.SAGEConv(4, 3, "lstm", bias=False), "plain", 4, False, True, {}),
    "sage-pool-block": (lambda nn: nn.SAGEConv((4, 4), 3, "pool"), "block", 4, True, False, {}),
    "gin-sum": (lambda nn: nn.GINConv(torch.nn.Linear(4, 3), "sum"), "plain", 4, False, False, {}),
    "gin-mean-learn-ew": (lambda nn: nn.GINConv(torch.nn.Linear(4, 3), "mean", init_eps=0.3, learn_eps=True),
                          "plain", 4, False, True, {}),
    "gin-max-ew": (lambda nn: nn.GINConv(None, "max", init_eps=-0.2), "plain", 4, False, True, {}),
    "gin-block": (lambda nn: nn.GINConv(torch.nn.Linear(4, 3), "sum", learn_eps=True), "block", 4, True, False,
                  {}),
    "sgconv": (lambda nn: nn.SGConv(4, 3, k=2, allow_zero_in_degree=True), "plain", 4, False, False, {}),
    "sgconv-ew": (lambda nn: nn.SGConv(4, 3, k=3, bias=False), "loops", 4, False, True, {}),
    "appnp": (lambda nn: nn.APPNPConv(3, 0.2), "plain", 4, False, False, {}),
    "appnp-ew": (lambda nn: nn.APPNPConv(2, 0.1), "plain", 4, False, True, {}),
    "tagconv": (lambda nn: nn.TAGConv(4, 3, k=2), "plain", 4, False, False, {}),
    "tagconv-ew": (lambda nn: nn.TAGConv(4, 3, k=3, activation=torch.tanh), "plain", 4, False, True, {}),
    "chebconv": (lambda nn: nn.ChebConv(4, 3, 3), "plain", 4, False, False, {"lambda_max": [1.7]}),
    "chebconv-default-lambda": (lambda nn: nn.ChebConv(4, 3, 2, bias=False), "plain", 4, False, False, {}),
    "chebconv-k1": (lambda nn: nn.ChebConv(4, 3, 1, activation=None), "plain", 4, False, False, {}),
    "chebconv-batch": (lambda nn: nn.ChebConv(4, 3, 4), "batch", 4, False, False,
                       {"lambda_max": [1.5, 2.0, 1.2]}),
    "gatv2": (lambda nn: nn.GATv2Conv(4, 3, 2), "loops", 4, False, False, {}),
    "gatv2-shared-res": (lambda nn: nn.GATv2Conv(4, 3, 2, share_weights=True, residual=True,
                                                 allow_zero_in_degree=True), "plain", 4, False, False, {}),
    "gatv2-nobias-res-identity": (lambda nn: nn.GATv2Conv(6, 3, 2, bias=False, residual=True), "loops", 6, False,
                                  False, {}),
    "gatv2-block-pair": (lambda nn: nn.GATv2Conv((4, 5), 3, 2, residual=True), "block", (4, 5), True, False, {}),
    "edgeconv": (lambda nn: nn.EdgeConv(4, 3, allow_zero_in_degree=True), "plain", 4, False, False, {}),
    "edgeconv-bn": (lambda nn: nn.EdgeConv(4, 3, batch_norm=True), "loops", 4, False, False, {}),
    "edgeconv-block": (lambda nn: nn.EdgeConv(4, 3), "block", 4, True, False, {}),
    "real-graphconv-ew": (lambda nn: nn.GraphConv(4, 3, allow_zero_in_degree=True), "real", 4, False, True, {}),
    "real-gatconv-ew": (lambda nn: nn.GATConv(4, 3, 2, residual=True, allow_zero_in_degree=True), "real", 4,
                        False, True, {}),
    "real-sage-lstm": (lambda nn: nn.SAGEConv(4, 3, "lstm"), "real", 4, False, False, {}),
    "real-sage-pool-ew": (lambda nn: nn.SAGEConv(4, 3, "pool"), "real", 4, False, True, {}),
    "real-gin-max-ew": (lambda nn: nn.GINConv(torch.nn.Linear(4, 3), "max"), "real", 4, False, True, {}),
    "real-sgconv-ew": (lambda nn: nn.SGConv(4, 3, k=2, allow_zero_in_degree=True), "real", 4, False, True, {}),
    "real-appnp": (lambda nn: nn.APPNPConv(5, 0.1), "real", 4, False, False, {}),
    "real-tagconv-ew": (lambda nn: nn.TAGConv(4, 3, k=3), "real", 4, False, True, {}),
    "real-chebconv": (lambda nn: nn.ChebConv(4, 3, 4), "real", 4, False, False, {"lambda_max": [1.9]}),
    "real-gatv2": (lambda nn: nn.GATv2Conv(4, 3, 2, allow_zero_in_degree=True), "real", 4, False, False, {}),
    "real-edgeconv": (lambda nn: nn.EdgeConv(4, 3, allow_zero_in_degree=True), "real", 4, False, False, {}),
    "real-edgeconv-bn": (lambda nn: nn.EdgeConv(4, 3, batch_norm=True, allow_zero_in_degree=True), "real", 4, False,
                         False, {}),
    "sumpool": (lambda nn: nn.SumPooling(), "batch", 4, False, False, {}),
    "avgpool": (lambda nn: nn.AvgPooling(), "batch", 4, False, False, {}),
    "maxpool": (lambda nn: nn.MaxPooling(), "batch", 4, False, False, {}),
}


def _run(module, graph, feat, weight, kwargs, seed):
    out = module(graph, feat, edge_weight=weight, **kwargs) if weight is not None else module(graph, feat, **kwargs)
    gen = torch.Generator().manual_seed(seed)
    (out * torch.randn(out.shape, generator=gen)).sum().backward()
    return out


@pytest.mark.filterwarnings("ignore:lambda_max is not provided")  # DGL's ChebConv, on purpose
@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_equals_dgl(name):
    build, kind, width, pair, with_weight, kwargs = CASES[name]
    torch.manual_seed(0)
    theirs = build(dglnn)
    ours = build(gkt)
    ours.load_state_dict(theirs.state_dict(), strict=True)
    assert sorted((k, v.shape) for k, v in ours.state_dict().items()) == \
        sorted((k, v.shape) for k, v in theirs.state_dict().items())
    ours_g, theirs_g = _graphs(kind)
    results = []
    for module, graph in ((theirs, theirs_g), (ours, ours_g)):
        gen = torch.Generator().manual_seed(1)
        feat = _feat(ours_g, width, gen, pair)
        weight = (torch.rand(ours_g.num_edges, generator=gen) + 0.5).requires_grad_(True) if with_weight else None
        out = _run(module, graph, tuple(feat) if pair else feat, weight, kwargs, seed=2)
        grads = [t.grad for t in (feat if pair else (feat,))] + ([weight.grad] if with_weight else [])
        params = {k: p.grad for k, p in module.named_parameters()}
        results.append((out.detach(), grads, params))
    (out_t, grads_t, params_t), (out_o, grads_o, params_o) = results
    torch.testing.assert_close(out_o, out_t, rtol=1e-4, atol=1e-4)
    for a, b in zip(grads_o, grads_t):
        torch.testing.assert_close(a, b, rtol=1e-4, atol=1e-4)
    assert params_o.keys() == params_t.keys()
    for key in params_t:
        torch.testing.assert_close(params_o[key], params_t[key], rtol=1e-4, atol=1e-4, msg=key)


def test_attention_equals_dgl():
    torch.manual_seed(0)
    for cls, kwargs in ((dglnn.GATConv, {}), (dglnn.GATv2Conv, {"share_weights": True})):
        theirs = cls(4, 3, 2, **kwargs)
        ours = getattr(gkt, cls.__name__)(4, 3, 2, **kwargs)
        ours.load_state_dict(theirs.state_dict(), strict=True)
        ours_g, theirs_g = _graphs("loops")
        x = torch.randn(N, 4)
        _, a_t = theirs(theirs_g, x, get_attention=True)
        _, a_o = ours(ours_g, x, get_attention=True)
        torch.testing.assert_close(a_o, a_t, rtol=1e-4, atol=1e-4)


def test_sgconv_cache_equals_dgl():
    torch.manual_seed(0)
    theirs = dglnn.SGConv(4, 3, k=2, cached=True)
    ours = gkt.SGConv(4, 3, k=2, cached=True)
    ours.load_state_dict(theirs.state_dict(), strict=True)
    ours_g, theirs_g = _graphs("loops")
    x, y = torch.randn(N, 4), torch.randn(N, 4)
    theirs(theirs_g, x), ours(ours_g, x)
    torch.testing.assert_close(ours(ours_g, y), theirs(theirs_g, y), rtol=1e-4, atol=1e-4)


LAYERS = ["GraphConv", "GATConv", "SAGEConv", "GINConv", "SGConv", "APPNPConv", "TAGConv", "ChebConv", "GATv2Conv",
          "EdgeConv", "SumPooling", "AvgPooling", "MaxPooling", "EdgeWeightNorm"]


@pytest.mark.parametrize("name", LAYERS)
def test_signatures_and_methods_equal_dgl(name):
    """Constructor and forward: the same parameter names, order and defaults; every public method of DGL's."""
    import inspect

    theirs, ours = getattr(dglnn, name), getattr(gkt, name)
    for method in ("__init__", "forward"):
        def params(cls):
            return [(p.name, p.default) for p in inspect.signature(getattr(cls, method)).parameters.values()]
        assert params(ours) == params(theirs), method
    public = {m for m in dir(theirs) if not m.startswith("_")}
    assert public <= set(dir(ours))


@pytest.mark.parametrize(("norm", "eps"), [("both", 0.0), ("both", 0.3), ("right", 0.0), ("none", 0.0)])
@pytest.mark.parametrize("kind", ["plain", "block", "real"])
def test_edge_weight_norm_equals_dgl(norm, eps, kind):
    ours_g, theirs_g = _graphs(kind)
    gen = torch.Generator().manual_seed(0)
    weight = torch.rand(ours_g.num_edges, generator=gen) + 0.5
    direction = torch.randn(ours_g.num_edges, generator=gen)
    results = []
    for layer, graph in ((dglnn.EdgeWeightNorm(norm, eps), theirs_g), (gkt.EdgeWeightNorm(norm, eps), ours_g)):
        w = weight.clone().requires_grad_(True)
        out = layer(graph, w)
        (out * direction).sum().backward()
        results.append((out.detach(), w.grad))
    torch.testing.assert_close(results[1][0], results[0][0], rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(results[1][1], results[0][1], rtol=1e-4, atol=1e-4)
