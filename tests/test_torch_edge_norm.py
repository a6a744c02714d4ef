"""EdgeWeightNorm against a dense reference (outputs and weight gradients, float32 1e-4; float64
gradcheck), its DGL 2.1 signature, and its errors."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import graphkern as gk  # noqa: E402
import graphkern.torch as gkt  # noqa: E402

# parallel edges (0 -> 1 twice), a self-loop (3 -> 3), a node without in-edges (2), a bipartite block
GRAPHS = {
    "multi": gk.Graph.from_coo([0, 1, 3, 0, 0, 3, 1, 2, 3], [1, 0, 3, 3, 1, 4, 4, 1, 0], num_nodes=5),
    "block": gk.Graph.from_coo([0, 1, 2, 3, 4, 4, 0], [0, 0, 1, 2, 2, 1, 2], num_nodes=(5, 3)),
    "real": gk.graph.kronecker(6, edgefactor=4),
}


def reference(g, weight, norm, eps):
    """Each edge's weight over its endpoints' weighted degrees, from a dense weighted adjacency."""
    src, dst = (torch.from_numpy(a.astype(np.int64)) for a in g.edges())
    adjacency = torch.zeros(g.num_src, g.num_dst, dtype=weight.dtype).index_put((src, dst), weight,
                                                                                 accumulate=True)
    out_weight, in_weight = adjacency.sum(1) + eps, adjacency.sum(0) + eps
    if norm == "none":
        return weight
    if norm == "right":
        return weight / in_weight[dst]
    return weight / torch.sqrt(out_weight[src] * in_weight[dst])


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize(("norm", "eps"), [("both", 0.0), ("both", 0.5), ("right", 0.0), ("right", 0.1),
                                           ("none", 0.0)])
@pytest.mark.fast
def test_edge_weight_norm(name, norm, eps):
    g = GRAPHS[name]
    gen = torch.Generator().manual_seed(0)
    w64 = (torch.rand(g.num_edges, generator=gen, dtype=torch.float64) + 0.5).requires_grad_(True)
    w32 = w64.detach().float().requires_grad_(True)
    direction = torch.randn(g.num_edges, generator=gen, dtype=torch.float64)
    layer = gkt.EdgeWeightNorm(norm, eps)
    ours, expected = layer(g, w32), reference(g, w64, norm, eps)
    (ours * direction.float()).sum().backward()
    (expected * direction).sum().backward()
    torch.testing.assert_close(ours.double(), expected.detach(), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(w32.grad.double(), w64.grad, rtol=1e-4, atol=1e-4)
    if name != "real":
        assert torch.autograd.gradcheck(lambda w: layer(g, w), (w64.detach().requires_grad_(True),), eps=1e-6,
                                        atol=1e-6)


def test_normalised_weights_feed_graphconv():
    """GraphConv(norm="none") with EdgeWeightNorm("both") weights equals the plain symmetric GraphConv when
    every weight is 1, in-degrees and out-degrees being the weighted degrees then."""
    g = GRAPHS["multi"]
    g = gk.Graph.from_coo(*(np.r_[a, np.arange(5)] for a in g.edges()), num_nodes=5)  # no zero degrees
    torch.manual_seed(0)
    plain = gkt.GraphConv(3, 2).double()
    weighted = gkt.GraphConv(3, 2, norm="none").double()
    weighted.load_state_dict(plain.state_dict())
    x = torch.randn(5, 3, dtype=torch.float64)
    w = gkt.EdgeWeightNorm("both")(g, torch.ones(g.num_edges, dtype=torch.float64))
    torch.testing.assert_close(weighted(g, x, edge_weight=w), plain(g, x))


def test_edge_weight_norm_errors():
    g = GRAPHS["multi"]
    with pytest.raises(ValueError, match="'norm'"):
        gkt.EdgeWeightNorm("left")
    with pytest.raises(ValueError, match="'edge_weight'.*positive"):
        gkt.EdgeWeightNorm()(g, torch.zeros(g.num_edges))
    with pytest.raises(ValueError, match="'edge_weight'"):
        gkt.EdgeWeightNorm("right")(g, torch.ones(g.num_edges, 1))
    with pytest.raises(ValueError, match="'edge_weight'"):
        gkt.EdgeWeightNorm("none")(g, torch.ones(g.num_edges + 1))
    assert gkt.EdgeWeightNorm("right")(g, -torch.ones(g.num_edges)).shape == (g.num_edges,)  # allowed, as DGL
