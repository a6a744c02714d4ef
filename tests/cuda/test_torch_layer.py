"""graphkern.torch on the cuda backend: forward and backward of every autograd function and GNN layer
with the tensors' data on the (simulated) device, against the same calls on CPU tensors.

This machine's torch is the CPU build and cannot make CUDA tensors, so the three functions that are the
layer's whole torch <-> CUDA boundary (``_device_type``, ``_device_view``, ``_tensor_from_device``) are
replaced: every tensor counts as a CUDA tensor, reaches the kernels as a numba (simulator) device array,
and each device result comes back as a tensor. Everything between them runs as it does on a GPU: the
cuda backend chosen from device inputs, the graph's device twin, device arg outputs, degrees per device.
"""

import numpy as np
import pytest
from conftest import CASES

torch = pytest.importorskip("torch")

import graphkern as gk  # noqa: E402
import graphkern.torch as gkt  # noqa: E402
from graphkern._cuda import is_device_array  # noqa: E402


class DeviceBoundary:
    """Routes every tensor through numba device arrays and counts the crossings."""

    def __init__(self, monkeypatch):
        from numba import cuda

        self.views = self.results = 0

        def view(t):
            self.views += 1
            return cuda.to_device(t.numpy())

        def result(a):
            assert is_device_array(a), f"a host result on the device path: {type(a)}"
            self.results += 1
            return torch.from_numpy(a.copy_to_host())

        monkeypatch.setattr(gkt._tensors, "_device_type", lambda t: "cuda")
        monkeypatch.setattr(gkt._tensors, "_device_view", view)
        monkeypatch.setattr(gkt._tensors, "_tensor_from_device", result)


def _graph(case="multi_edges"):
    src, dst, n = CASES[case]()
    return gk.Graph.from_coo(src, dst, num_nodes=n)


def _leaf(shape, seed):
    gen = torch.Generator().manual_seed(seed)
    return (torch.rand(*shape, generator=gen, dtype=torch.float64) + 0.5).requires_grad_(True)


def _run(fn, inputs):
    """``fn(*inputs)``, its output and the gradient of ``(out * weights).sum()`` for every input."""
    leaves = [t.detach().clone().requires_grad_(True) for t in inputs]
    out = fn(*leaves)
    weights = torch.linspace(0.5, 1.5, out.numel(), dtype=out.dtype).reshape(out.shape)
    (out * weights).sum().backward()
    return out.detach(), [t.grad for t in leaves]


def _same_on_device(monkeypatch, fn, inputs, kernels=True):
    host_out, host_grads = _run(fn, inputs)
    boundary = DeviceBoundary(monkeypatch)
    dev_out, dev_grads = _run(fn, inputs)
    monkeypatch.undo()
    if kernels:
        assert boundary.views > 0 and boundary.results > 0, "the device path was not taken"
    else:  # torch ops only (the LSTM aggregator), with the graph's index arrays moved to the features' device
        assert boundary.views == boundary.results == 0
    np.testing.assert_allclose(dev_out.numpy(), host_out.numpy(), rtol=1e-10, atol=1e-12)
    for got, want in zip(dev_grads, host_grads):
        assert (got is None) == (want is None)
        if want is not None:
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-12)
    return boundary


SPMM_CASES = [
    ("copy_lhs", "sum", (3,), None),
    ("copy_lhs", "mean", (3,), None),
    ("mul", "sum", (2, 3), (2, 1)),
    ("mul", "max", (3,), (1,)),
    ("sub", "min", (3,), (3,)),
    ("div", "sum", (3,), (1,)),
    ("copy_rhs", "max", None, (2,)),
    ("add", "mean", (1,), (3,)),
]


@pytest.mark.parametrize("op,reduce,xshape,wshape", SPMM_CASES)
def test_spmm_forward_and_backward(monkeypatch, op, reduce, xshape, wshape):
    g = _graph()
    inputs, names = [], []
    if xshape is not None:
        inputs.append(_leaf((g.num_src,) + xshape, 1))
        names.append("x")
    if wshape is not None:
        inputs.append(_leaf((g.num_edges,) + wshape, 2))
        names.append("w")

    def fn(*ts):
        given = dict(zip(names, ts))
        return gkt.spmm(g, op, reduce, given.get("x"), given.get("w"))

    _same_on_device(monkeypatch, fn, inputs)


@pytest.mark.parametrize("op,lt,rt,lshape,rshape", [
    ("dot", "u", "v", (2, 4), (2, 4)),
    ("add", "u", "e", (3,), (3,)),
    ("mul", "e", "v", (2, 3), (2, 1)),
    ("sub", "v", "u", (3,), (1,)),
    ("div", "u", "v", (3,), (3,)),
])
def test_sddmm_forward_and_backward(monkeypatch, op, lt, rt, lshape, rshape):
    g = _graph("random_300")
    rows = {"u": g.num_src, "v": g.num_dst, "e": g.num_edges}
    inputs = [_leaf((rows[lt],) + lshape, 3), _leaf((rows[rt],) + rshape, 4)]
    _same_on_device(monkeypatch, lambda a, b: gkt.sddmm(g, op, a, b, lt, rt), inputs)


@pytest.mark.fast
@pytest.mark.parametrize("norm_by", ["dst", "src"])
def test_edge_softmax_forward_and_backward(monkeypatch, norm_by):
    g = _graph("hub_60")
    _same_on_device(monkeypatch, lambda z: gkt.edge_softmax(g, z, norm_by), [_leaf((g.num_edges, 2, 1), 5)])


def _self_looped():
    src, dst, n = CASES["random_300"]()
    loops = np.arange(n)
    return gk.Graph.from_coo(np.concatenate([src, loops]), np.concatenate([dst, loops]), num_nodes=n)


@pytest.mark.parametrize("layer", ["graphconv", "graphconv_weighted", "gat", "sage_mean", "sage_gcn", "sage_pool",
                                   "sage_lstm"])
@pytest.mark.fast
def test_layers_forward_and_backward(monkeypatch, layer):
    g = _self_looped()
    torch.manual_seed(0)
    feats = 5
    if layer.startswith("graphconv"):
        module = gkt.GraphConv(feats, 3, norm="both")
    elif layer == "gat":
        module = gkt.GATConv(feats, 3, num_heads=2)
    else:
        module = gkt.SAGEConv(feats, 3, layer.split("_")[1])
    module = module.double()
    x = _leaf((g.num_src, feats), 6)
    if layer == "graphconv_weighted":
        inputs = [x, _leaf((g.num_edges,), 7)]
        fn = lambda h, w: module(g, h, edge_weight=w)
    else:
        inputs = [x]
        fn = lambda h: module(g, h)
    _same_on_device(monkeypatch, fn, inputs, kernels=layer != "sage_lstm")
    # the parameters' gradients too: the same module, host then device
    grads = []
    for on_device in (False, True):
        module.zero_grad()
        if on_device:
            DeviceBoundary(monkeypatch)
        out = fn(*[t.detach() for t in inputs])
        out.sum().backward()
        grads.append([p.grad.clone() for p in module.parameters() if p.grad is not None])
        monkeypatch.undo()
    assert len(grads[0]) == len(grads[1]) > 0
    for got, want in zip(grads[1], grads[0]):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-9, atol=1e-12)


def test_degrees_are_kept_per_device(monkeypatch):
    """The mean's degrees are made once per graph and device, on the device of the features."""
    g = _graph()
    x = _leaf((g.num_src, 2), 8)
    DeviceBoundary(monkeypatch)
    gkt.spmm(g, "copy_lhs", "mean", x)
    keys = [k for k in g._cache if isinstance(k, tuple) and k[0] == "torch_degrees"]
    assert keys == [("torch_degrees", "in", "cpu")]  # the stand-in tensors live on the CPU
    np.testing.assert_array_equal(g._cache[keys[0]].numpy(), g.in_degrees())


def _new_layer(name, feats):
    """The layers of graphkern.torch.nn beyond the first three, by test id."""
    if name == "gin_max_weighted":
        return gkt.GINConv(torch.nn.Linear(feats, 3), "max", learn_eps=True)
    if name == "gin_mean":
        return gkt.GINConv(None, "mean", init_eps=0.5)
    if name == "sgconv_weighted":
        return gkt.SGConv(feats, 3, k=2)
    if name == "appnp":
        return gkt.APPNPConv(k=3, alpha=0.2)
    if name == "tagconv":
        return gkt.TAGConv(feats, 3, k=2)
    if name == "chebconv":
        return gkt.ChebConv(feats, 3, k=3)
    if name == "gatv2":
        return gkt.GATv2Conv(feats, 3, num_heads=2, residual=True)
    if name == "edgeconv":
        return gkt.EdgeConv(feats, 3)
    if name == "edgeconv_bn":
        return gkt.EdgeConv(feats, 3, batch_norm=True)
    return gkt.MaxPooling()


@pytest.mark.parametrize("layer", ["gin_max_weighted", "gin_mean", "sgconv_weighted", "appnp", "tagconv", "chebconv",
                                   "gatv2", "edgeconv", "edgeconv_bn", "maxpool"])
def test_more_layers_forward_and_backward(monkeypatch, layer):
    g = _self_looped()
    torch.manual_seed(0)
    feats = 5
    module = _new_layer(layer, feats).double()
    x = _leaf((g.num_src, feats), 6)
    if layer.endswith("_weighted"):
        inputs = [x, _leaf((g.num_edges,), 7)]
        fn = lambda h, w: module(g, h, edge_weight=w)
    else:
        inputs = [x]
        fn = lambda h: module(g, h)
    _same_on_device(monkeypatch, fn, inputs, kernels=layer != "maxpool")  # the readout is torch ops only


@pytest.mark.parametrize("norm", ["both", "right"])
def test_edge_weight_norm_forward_and_backward(monkeypatch, norm):
    g = _graph("random_300")
    _same_on_device(monkeypatch, lambda w: gkt.EdgeWeightNorm(norm)(g, w), [_leaf((g.num_edges,), 8)])
