"""BFS on the cuda backend: levels equal to SciPy's distances, parents valid by the Graph500 rules."""

import numpy as np
import pytest
import scipy.sparse.csgraph as csgraph
from conftest import CASES

import graphkern as gk

ALGORITHMS = ("direction_optimizing", "top_down", "bottom_up", "spmsv")


def _levels(g, source):
    dist = csgraph.shortest_path(g.to_scipy(), indices=source, unweighted=True, directed=True)
    return np.where(np.isinf(dist), -1, dist).astype(np.int64)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_kronecker_all_algorithms(algorithm):
    g = gk.graph.kronecker(7)
    for source in (5,):
        res = gk.bfs(g, source, algorithm=algorithm, backend="cuda")
        np.testing.assert_array_equal(res.levels.copy_to_host(), _levels(g, source))
        gk.graph500.validate(g, source, res.parents, res.levels)
        if algorithm == "spmsv":  # the linear-algebra rule fixes the parents: equal to the CPU's
            np.testing.assert_array_equal(res.parents.copy_to_host(), gk.bfs(g, source, algorithm="spmsv").parents)


@pytest.mark.parametrize("case", ["isolated_and_zero_in_degree", "self_loops", "multi_edges", "hub_60",
                                  "random_300"])
def test_graph_cases_directed(case, idtype):
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    for algorithm in ("direction_optimizing", "bottom_up"):
        res = gk.bfs(g, 0, algorithm=algorithm, backend="cuda")
        assert res.parents.dtype == idtype
        np.testing.assert_array_equal(res.levels.copy_to_host(), _levels(g, 0))
        gk.graph500.validate(g, 0, res.parents, res.levels, directed=True)


def test_isolated_source_multi_source_and_bad_input():
    g = gk.Graph.from_coo([0, 1], [1, 2], num_nodes=5)
    res = gk.bfs(g, 4, backend="cuda")
    assert res.num_reached == 1 and res.depth == 0
    results = gk.bfs(g, sources=[0, 1], backend="cuda")
    assert [r.num_reached for r in results] == [3, 2]
    with pytest.raises(ValueError, match="argument 'source': expected an integer <= 4"):
        gk.bfs(g, 5, backend="cuda")
    with pytest.raises(ValueError, match="batched multi-source searches run on the cpu backend"):
        gk.bfs(g, sources=[0, 1], backend="cuda", batch=True)


def test_graph500_driver_on_the_cuda_backend(capsys, monkeypatch):
    """`gk.graph500.run(..., backend="cuda")` and `graphkern graph500 --backend cuda` search on the device: the
    same keys and traversed edges as on the CPU, every tree validated, every search a device search."""
    from graphkern import _bfs_cuda
    from graphkern.cli import main

    host = gk.graph500.run(5, num_roots=3, backend="cpu", progress=False)
    searches = []
    device_search = _bfs_cuda.search
    monkeypatch.setattr(_bfs_cuda, "search", lambda *a, **k: searches.append(a[1]) or device_search(*a, **k))
    dev = gk.graph500.run(5, num_roots=3, backend="cuda", progress=False)
    assert searches == [int(dev.roots[0])] + dev.roots.tolist()  # the warm-up, then each key
    np.testing.assert_array_equal(dev.roots, host.roots)
    np.testing.assert_array_equal(dev.nedges, host.nedges)
    assert dev.validated and np.all(dev.times > 0)
    assert main(["graph500", "--scale", "5", "--roots", "2", "--backend", "cuda", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "NBFS: 2" in out and "harmonic_mean_TEPS" in out
    assert len(searches) == 1 + 3 + 1 + 2
