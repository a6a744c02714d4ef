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


@pytest.mark.fast
@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_kronecker_all_algorithms(algorithm):
    g = gk.graph.kronecker(7)
    for source in (5,):
        res = gk.bfs(g, source, algorithm=algorithm, backend="cuda")
        np.testing.assert_array_equal(res.levels.copy_to_host(), _levels(g, source))
        gk.graph500.validate(g, source, res.parents, res.levels)
        if algorithm == "spmsv":  # the linear-algebra rule fixes the parents: equal to the CPU's
            np.testing.assert_array_equal(res.parents.copy_to_host(), gk.bfs(g, source, algorithm="spmsv").parents)


DIRECTED_CASES = ["isolated_and_zero_in_degree", "self_loops", "multi_edges", "hub_60", "random_300"]


@pytest.mark.parametrize("case", DIRECTED_CASES)
def test_graph_cases_directed(case):
    # alternate the id dtype over the cases (both are covered; each case costs simulated searches)
    idtype = np.dtype(np.int32 if DIRECTED_CASES.index(case) % 2 else np.int64)
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    for algorithm in ("direction_optimizing", "bottom_up"):
        res = gk.bfs(g, 0, algorithm=algorithm, backend="cuda")
        assert res.parents.dtype == idtype
        np.testing.assert_array_equal(res.levels.copy_to_host(), _levels(g, 0))
        gk.graph500.validate(g, 0, res.parents, res.levels, directed=True)


@pytest.mark.fast
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
    from graphkern._cuda import bfs as cuda_bfs
    from graphkern.cli import main

    host = gk.graph500.run(5, num_roots=3, backend="cpu", progress=False)
    searches = []
    device_search = cuda_bfs.search  # (g, plan, source, alpha, beta)
    monkeypatch.setattr(cuda_bfs, "search", lambda *a, **k: searches.append(a[2]) or device_search(*a, **k))
    dev = gk.graph500.run(5, num_roots=3, backend="cuda", progress=False)
    assert searches == [int(dev.roots[0])] + dev.roots.tolist()  # the warm-up, then each key
    np.testing.assert_array_equal(dev.roots, host.roots)
    np.testing.assert_array_equal(dev.nedges, host.nedges)
    assert dev.validated and np.all(dev.times > 0)
    assert main(["graph500", "--scale", "5", "--roots", "2", "--backend", "cuda", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "NBFS: 2" in out and "harmonic_mean_TEPS" in out
    assert len(searches) == 1 + 3 + 1 + 2


# ----------------------------------------------------------------------------------- work splitting, launch shapes

def _symmetric(src, dst, n, idtype=np.int64):
    src, dst = np.asarray(src, np.int64), np.asarray(dst, np.int64)
    return gk.Graph.from_coo(np.concatenate([src, dst]), np.concatenate([dst, src]), num_nodes=n, idtype=idtype)


def _two_hubs():
    """Hubs 0 and 1 both joined to leaves 2..49, the leaves in a ring: from a hub the first pull finds the
    leaves and the second the other hub, whose in-list is over every lowered threshold."""
    leaves = np.arange(2, 50)
    src = np.concatenate([np.zeros(48, np.int64), np.ones(48, np.int64), leaves])
    dst = np.concatenate([leaves, leaves, np.roll(leaves, 1)])
    return _symmetric(src, dst, 50)


def _star(n=40):
    return _symmetric(np.zeros(n - 1, np.int64), np.arange(1, n), n)


def _path(n, idtype=np.int64):
    return _symmetric(np.arange(n - 1), np.arange(1, n), n, idtype)


@pytest.fixture
def low_bfs_thresholds():
    """Out- and in-degrees from 3 go to groups, from 6 to a block, from 12 to the grid, groups of 8
    threads: small graphs take every path of the searches."""
    with gk.tuned(cuda_bfs_push_group_degree=3, cuda_bfs_push_block_degree=6, cuda_bfs_push_grid_degree=12,
                  cuda_bfs_pull_group_degree=3, cuda_bfs_pull_grid_degree=12, cuda_bfs_group_width=8):
        yield


def _check(g, source, algorithm, directed=False, **rule):
    """Levels and the per-level trace (step, frontier size, found) equal to the CPU backend's, the tree
    valid by the Graph500 rules, and spmsv's parents exactly the CPU's (highest-labelled parent)."""
    res = gk.bfs(g, source, algorithm=algorithm, backend="cuda", **rule)
    ref = gk.bfs(g, source, algorithm=algorithm, backend="cpu", **rule)
    np.testing.assert_array_equal(res.levels.copy_to_host(), ref.levels)
    # the CPU runs small top-down levels on one thread ("top_down_serial"): the same top-down level
    cpu_steps = [(int(t[0]), "top_down" if t[1] == "top_down_serial" else t[1], int(t[2]), int(t[3]))
                 for t in ref.trace]
    assert [t[:4] for t in res.trace] == cpu_steps
    gk.graph500.validate(g, source, res.parents, res.levels, directed=directed)
    if algorithm == "spmsv":
        np.testing.assert_array_equal(res.parents.copy_to_host(), ref.parents)
    if algorithm == "bottom_up":  # every level a pull: the first frontier in-neighbour in CSC order
        levels = ref.levels
        indptr, indices = (np.asarray(a) for a in g.csc()[:2])
        first = [next((u for u in indices[indptr[v]:indptr[v + 1]] if levels[u] == levels[v] - 1), -1)
                 for v in range(g.num_nodes)]
        first = np.where(levels > 0, first, np.where(levels == 0, source, -1))
        np.testing.assert_array_equal(res.parents.copy_to_host(), first)
    return res


# the knobs of each launch shape: cooperative or per-phase launches, a grid sized to the graph or fixed
SHAPES = {"cooperative": dict(cuda_bfs_cooperative=1),
          "cooperative_one_thread": dict(cuda_bfs_cooperative=1, cuda_bfs_launch_blocks=1, cuda_bfs_threads=1),
          "cooperative_37_threads": dict(cuda_bfs_cooperative=1, cuda_bfs_launch_blocks=1, cuda_bfs_threads=37),
          "phases_3x5": dict(cuda_bfs_cooperative=0, cuda_bfs_launch_blocks=3, cuda_bfs_threads=5),
          "phases_default": dict(cuda_bfs_cooperative=0)}


# Each shape with two algorithms that push and pull between them (direction_optimizing does both), each
# algorithm under a cooperative and a per-phase shape: the phases are the same device functions whichever
# launch runs them, and the full cross product (20 cases) adds simulated searches, not paths.
SHAPE_ALGORITHMS = [("cooperative", "direction_optimizing"), ("cooperative", "spmsv"),
                    ("cooperative_one_thread", "top_down"), ("cooperative_one_thread", "bottom_up"),
                    ("cooperative_37_threads", "direction_optimizing"), ("cooperative_37_threads", "bottom_up"),
                    ("phases_3x5", "top_down"), ("phases_3x5", "spmsv"),
                    ("phases_default", "direction_optimizing"), ("phases_default", "bottom_up")]


@pytest.mark.parametrize("shape,algorithm", SHAPE_ALGORITHMS)
def test_hub_paths_under_any_launch_shape(algorithm, shape, low_bfs_thresholds):
    g = _two_hubs()
    src, dst, n = CASES["random_300"]()
    with gk.tuned(**SHAPES[shape]):
        for source in (0, 7):
            _check(g, source, algorithm)
        _check(g, 0, algorithm, alpha=0.5)  # direction-optimizing and spmsv push from the hubs too
        _check(gk.Graph.from_coo(src, dst, num_nodes=n), 0, algorithm, directed=True)


# each algorithm in one id type, each id type under two algorithms (the kernels take either)
@pytest.mark.parametrize("algorithm,idtype", [("direction_optimizing", np.int64), ("top_down", np.int32),
                                              ("bottom_up", np.int32), ("spmsv", np.int64)],
                         ids=["direction_optimizing-int64", "top_down-int32", "bottom_up-int32", "spmsv-int64"])
def test_path_star_no_edges_isolated_source(algorithm, idtype, low_bfs_thresholds):
    # high diameter: 49 levels in one search, each its own pass through the phases of a level (one
    # cooperative launch holds them all, the level log has a row for each), bottom-up levels that scan
    # every unvisited vertex to find one
    res = _check(_path(50, idtype), 0, algorithm)
    assert res.depth == 49 and len(res.trace) == 50 and res.trace[-1][3] == 0  # the last level finds none
    star = _star()
    _check(star, 0, algorithm)
    _check(star, 5, algorithm)
    src, dst, n = CASES["no_edges"]()
    res = _check(gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype), 3, algorithm, directed=True)
    assert res.num_reached == 1 and [t[3] for t in res.trace] == [0] and res.parents.dtype == idtype
    g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0], num_nodes=5, idtype=idtype)
    res = _check(g, 4, algorithm, directed=True)
    assert res.num_reached == 1 and [t[3] for t in res.trace] == [0]


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_default_thresholds_kronecker_symmetric(algorithm):
    g = gk.graph.kronecker(6)
    for source in gk.graph500.search_keys(g, 2):
        _check(g, int(source), algorithm)


def test_successive_searches_return_independent_arrays():
    g = _path(40)
    first = gk.bfs(g, 0, backend="cuda")
    parents, levels = first.parents.copy_to_host(), first.levels.copy_to_host()
    second = gk.bfs(g, 39, backend="cuda")
    np.testing.assert_array_equal(first.parents.copy_to_host(), parents)
    np.testing.assert_array_equal(first.levels.copy_to_host(), levels)
    assert second.levels.copy_to_host()[0] == 39 and levels[39] == 39
    assert all(a is not b for a in (first.parents, first.levels) for b in (second.parents, second.levels))
