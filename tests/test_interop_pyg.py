"""Conversions to and from torch_geometric's Data (skipped where torch_geometric is not importable)."""

import numpy as np
import pytest
from graph_cases import CASES

import graphkern as gk

pyg_data = pytest.importorskip("torch_geometric.data")
torch = pytest.importorskip("torch")


@pytest.mark.parametrize("name", ["empty", "no_edges", "self_loops", "multi_edges", "unsorted_random"])
def test_pyg_round_trip_keeps_edge_order(name, idtype):
    src, dst, n = CASES[name]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    data = g.to_pyg()
    assert isinstance(data, pyg_data.Data) and data.num_nodes == n
    assert data.edge_index.dtype == torch.int64
    np.testing.assert_array_equal(data.edge_index.numpy(), np.stack([src, dst]).reshape(2, -1))
    back = gk.Graph.from_pyg(data)
    assert back.num_nodes == n
    np.testing.assert_array_equal(back.to_edge_index(), g.to_edge_index())


def test_from_pyg_reads_a_data_built_by_pyg():
    data = pyg_data.Data(edge_index=torch.tensor([[0, 2, 2], [1, 1, 0]]), x=torch.zeros(5, 2))
    g = gk.Graph.from_pyg(data)
    assert g.num_nodes == 5 and g.to_edge_index().tolist() == [[0, 2, 2], [1, 1, 0]]
