"""graphkern as a networkx backend: found through the entry point, equal to networkx's own results
(order included) on the graph cases, and passing networkx's own BFS tests when they dispatch to it."""

import os
import subprocess
import sys

import numpy as np
import pytest

nx = pytest.importorskip("networkx")

from graph_cases import FACEBOOK  # noqa: E402

from graphkern import nx_backend  # noqa: E402

BACKEND = "graphkern"


@pytest.fixture(autouse=True)
def _quiet_cache_notes():
    # networkx warns each time a cached conversion is reused; the suite turns warnings into errors
    nx.config.warnings_to_ignore.add("cache")
    yield


def _graphs():
    rng = np.random.default_rng(0)
    cases = {
        "path": nx.path_graph(30),
        "star": nx.star_graph(200),
        "disconnected": nx.disjoint_union(nx.cycle_graph(5), nx.complete_graph(4)),
        "isolated": nx.empty_graph(5),
        "directed": nx.gnp_random_graph(80, 0.05, seed=1, directed=True),
        "multi": nx.MultiGraph([(0, 1), (0, 1), (1, 2), (2, 2), (2, 3)]),
        "multidi": nx.MultiDiGraph([(0, 1), (0, 1), (1, 2), (2, 0), (3, 1)]),
        "labels": nx.relabel_nodes(nx.gnm_random_graph(40, 90, seed=2), lambda i: f"n{i}"),
    }
    shuffled = nx.Graph()  # adjacency order that differs from label order
    edges = list(nx.gnm_random_graph(60, 200, seed=3).edges())
    rng.shuffle(edges)
    shuffled.add_edges_from(edges)
    cases["shuffled"] = shuffled
    return cases


GRAPHS = _graphs()


def test_entry_point_is_registered():
    assert BACKEND in nx.utils.backends.backends
    assert nx.utils.backends.backend_info[BACKEND]["backend_name"] == BACKEND


@pytest.mark.fast
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_bfs_edges_equals_networkx(name):
    G = GRAPHS[name]
    for source in list(G)[:3]:
        assert list(nx.bfs_edges(G, source, backend=BACKEND)) == list(nx.bfs_edges(G, source))
        for limit in (0, 1, 2):
            assert (list(nx.bfs_edges(G, source, depth_limit=limit, backend=BACKEND))
                    == list(nx.bfs_edges(G, source, depth_limit=limit)))
        if G.is_directed():
            assert (list(nx.bfs_edges(G, source, reverse=True, backend=BACKEND))
                    == list(nx.bfs_edges(G, source, reverse=True)))


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_bfs_layers_and_lengths_equal_networkx(name):
    G = GRAPHS[name]
    nodes = list(G)
    for sources in (nodes[0], nodes[:2], nodes[-1:]):
        assert list(nx.bfs_layers(G, sources, backend=BACKEND)) == list(nx.bfs_layers(G, sources))
    for source in nodes[:3]:
        got = nx.single_source_shortest_path_length(G, source, backend=BACKEND)
        assert got == nx.single_source_shortest_path_length(G, source)
        assert list(got.values()) == sorted(got.values())  # nearest first, as networkx yields them
        assert (nx.single_source_shortest_path_length(G, source, cutoff=1, backend=BACKEND)
                == nx.single_source_shortest_path_length(G, source, cutoff=1))


def test_real_graph():
    if not FACEBOOK.exists():
        pytest.skip(f"{FACEBOOK} is not there")
    G = nx.read_edgelist(FACEBOOK, nodetype=int)
    assert list(nx.bfs_edges(G, 0, backend=BACKEND)) == list(nx.bfs_edges(G, 0))
    assert nx.single_source_shortest_path_length(G, 107, backend=BACKEND) == nx.single_source_shortest_path_length(
        G, 107)


def test_missing_source_raises_like_networkx():
    G = nx.path_graph(3)
    with pytest.raises(nx.NetworkXError, match="not in the graph"):
        list(nx.bfs_edges(G, 9, backend=BACKEND))
    with pytest.raises(nx.NetworkXError, match="not in the graph"):
        list(nx.bfs_layers(G, [0, 9], backend=BACKEND))
    with pytest.raises(nx.NodeNotFound):
        nx.single_source_shortest_path_length(G, 9, backend=BACKEND)


def test_sort_neighbors_is_declined_with_the_reason():
    G = nx.path_graph(3)
    reason = nx_backend.BackendInterface.can_run("bfs_edges", (G, 0), {"sort_neighbors": sorted})
    assert isinstance(reason, str) and "sort_neighbors" in reason
    assert nx_backend.BackendInterface.can_run("bfs_edges", (G, 0), {}) is True
    with pytest.raises(NotImplementedError):
        list(nx.bfs_edges(G, 0, sort_neighbors=sorted, backend=BACKEND))


def test_networkx_own_tests_through_the_backend():
    """networkx's backend test convention: its own test modules with NETWORKX_TEST_BACKEND set."""
    env = dict(os.environ, NETWORKX_TEST_BACKEND=BACKEND, NETWORKX_FALLBACK_TO_NX="True")
    modules = ["networkx.algorithms.traversal.tests.test_bfs",
               "networkx.algorithms.shortest_paths.tests.test_unweighted"]
    proc = subprocess.run([sys.executable, "-m", "pytest", "--pyargs", *modules, "-q", "-p", "no:cacheprovider",
                           "--log-level=DEBUG", "-rA", "-W", "ignore::UserWarning"],
                          capture_output=True, text=True, env=env, timeout=600, cwd=os.path.dirname(__file__))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    for name in ("bfs_edges", "bfs_layers", "single_source_shortest_path_length"):
        assert f"Using backend 'graphkern' for call to '{name}'" in proc.stdout + proc.stderr, name


def _outcome(call):
    """A result (generators drained) or the exception's type and message."""
    try:
        out = call()
        return "ok", out if isinstance(out, dict) else list(out)
    except Exception as exc:  # noqa: BLE001 - compared with networkx's own outcome
        return type(exc).__name__, str(exc)


# every kind of value networkx compares a depth bound with: None, 0, negative, fractional, bool, NaN,
# infinities, huge ints, NumPy scalars, and values it cannot compare (its TypeError)
BOUNDS = [None, 0, 1, 2, -1, -0.5, 0.5, 1.5, 2.0, True, False, float("nan"), float("inf"), float("-inf"), 10**20,
          np.int64(3), np.float32(2.5), "a", [1]]


@pytest.mark.parametrize("bound", BOUNDS, ids=repr)
def test_depth_bounds_match_networkx_exactly(bound):
    for G, source in ((nx.path_graph(7), 3), (nx.DiGraph([(0, 1), (1, 2), (2, 3), (3, 4), (0, 4)]), 0),
                      (nx.Graph([(0, 1)]), 0), (nx.balanced_tree(2, 3), 0)):
        for func, kwargs in ((nx.single_source_shortest_path_length, {"cutoff": bound}),
                             (nx.bfs_edges, {"depth_limit": bound})):
            want = _outcome(lambda: func(G, source, **kwargs))
            got = _outcome(lambda: func(G, source, backend=BACKEND, **kwargs))
            assert got == want, (func.__name__, bound, G)


def test_unhashable_source_raises_like_networkx():
    G = nx.path_graph(3)
    for func in (nx.bfs_edges, nx.single_source_shortest_path_length):
        want = _outcome(lambda: func(G, [0]))
        assert _outcome(lambda: func(G, [0], backend=BACKEND)) == want
