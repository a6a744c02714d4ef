"""graphkern.torch's segment_mm, gather_mm and RelGraphConv with the tensors' data on the (simulated) device,
forward and backward, against the same calls on CPU tensors (the device boundary of test_torch_layer)."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from test_torch_layer import _leaf, _same_on_device  # noqa: E402

import graphkern as gk  # noqa: E402
import graphkern.torch as gkt  # noqa: E402


@pytest.mark.fast
def test_segment_mm_on_the_device(monkeypatch):
    seglen = [2, 0, 3]
    _same_on_device(monkeypatch, lambda a, b: gkt.segment_mm(a, b, seglen), [_leaf((5, 3), 1), _leaf((3, 3, 2), 2)])


@pytest.mark.fast
@pytest.mark.parametrize("form", ["idx_b", "both"])
def test_gather_mm_on_the_device(monkeypatch, form):
    idx_b = torch.tensor([1, 0, 1, 1])
    idx_a = torch.tensor([3, 3, 0, 1]) if form == "both" else None
    _same_on_device(monkeypatch, lambda a, b: gkt.gather_mm(a, b, idx_a=idx_a, idx_b=idx_b),
                    [_leaf((4, 3), 1), _leaf((2, 3, 2), 2)])


@pytest.mark.parametrize("regularizer", [None, "bdd"])
def test_relgraphconv_on_the_device(monkeypatch, regularizer):
    g = gk.Graph.from_coo(np.array([0, 1, 2, 0, 3]), np.array([1, 2, 0, 1, 3]), num_nodes=4)
    torch.manual_seed(0)
    conv = gkt.RelGraphConv(2, 2, 2, regularizer=regularizer, num_bases=1 if regularizer else None).double()
    etypes = torch.tensor([0, 1, 1, 0, 1])
    _same_on_device(monkeypatch, lambda x: conv(g, x, etypes), [_leaf((4, 2), 3)])
