"""Small top-down levels on one thread (kernels/cpu/bfs_serial.py): the kernels against SciPy and NumPy, and
:func:`graphkern.bfs` on high-diameter graphs (a shuffled grid, a path) where nearly every level runs there."""

import numpy as np
import pytest
import scipy.sparse as sp
from graph_cases import CASES
from graphkern.kernels.cpu import bfs_serial as serial
from scipy.sparse.csgraph import breadth_first_order, shortest_path

import graphkern as gk

ALGORITHMS = ["direction_optimizing", "top_down", "bottom_up", "spmsv", "auto"]


def _shuffled_grid(side, seed=0):
    """A ``side`` x ``side`` grid, both directions of each edge, its vertex ids a random permutation."""
    ids = np.arange(side * side).reshape(side, side)
    perm = np.random.default_rng(seed).permutation(ids.size)
    a = perm[np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])]
    b = perm[np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])]
    return np.concatenate([a, b]), np.concatenate([b, a]), side * side


GRAPHS = {
    "grid": lambda: _shuffled_grid(40),
    "path": lambda: (np.arange(2999), np.arange(1, 3000), 3000),
    "single_vertex": lambda: (np.zeros(0, np.int64), np.zeros(0, np.int64), 1),
    **{name: CASES[name] for name in ("no_edges", "isolated_and_zero_in_degree", "self_loops", "multi_edges",
                                      "unsorted_random", "kronecker_10")},
}


def _csr(src, dst, n, idtype):
    g = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    indptr, indices, _ = g._raw("csr")
    return g, indptr, indices


def _scipy_levels(indptr, indices, n, source):
    A = sp.csr_array((np.ones(indices.size), indices, indptr), shape=(n, n))
    d = shortest_path(A, unweighted=True, indices=source, directed=True)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def _serial_search(indptr, indices, n, source, levels_per_call=1 << 20, edge_limit=1 << 60):
    """A whole search by the serial kernels alone, calling them as the driver does (``levels_per_call``
    levels a call): ``(parents, levels, found per level, queue order)``."""
    dtype = indices.dtype
    queue = np.full(n + 2, -7, dtype=dtype)  # n + 1 places the kernel may use, and one it must not touch
    by = np.full(n + 2, -7, dtype=dtype)
    parents = np.full(n, -1, dtype=dtype)
    levels = np.full(n, -1, dtype=dtype)
    visited = np.zeros((n + 63) // 64, dtype=np.uint64)
    visited[source >> 6] = np.uint64(1) << np.uint64(source & 63)
    parents[source], levels[source] = source, 0
    found = np.empty(levels_per_call, dtype=np.int64)
    frontier = np.array([source], dtype=dtype)
    scout = int(indptr[source + 1] - indptr[source])
    level, previous, all_found, order = 0, -1, [], [source]
    while frontier.size:
        queue[:frontier.size] = frontier
        start, count, last, scout, previous, _, done = serial.top_down_serial_levels(
            indptr, indices, queue, by, frontier.size, visited, level, scout, previous, edge_limit, 1 << 60, 0.0,
            found)
        assert done > 0 and queue[n + 1] == -7 and by[n + 1] == -7
        record = serial.record_serial_levels if len(all_found) % 2 else serial.record_serial_levels_one_thread
        record(queue, by, frontier.size, found[:done], level + 1, parents, levels)
        all_found += found[:done].tolist()
        order += queue[frontier.size:count].tolist()
        frontier = queue[start:count].copy()
        assert scout == int(np.sum(indptr[frontier + 1] - indptr[frontier]))  # the frontier left's out-edges
        level = last
    return parents, levels, all_found, order


@pytest.mark.parametrize("undirected", [False, True])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_serial_levels_against_scipy(name, undirected, idtype):
    src, dst, n = GRAPHS[name]()
    if undirected:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    g, indptr, indices = _csr(src, dst, n, idtype)
    source = int(np.argmax(np.diff(indptr) > 0)) if indices.size else 0
    want = _scipy_levels(indptr, indices, n, source)
    for levels_per_call in (1 << 20, 3):  # the whole search in one call, and in calls of three levels
        parents, levels, found, order = _serial_search(indptr, indices, n, source, levels_per_call)
        assert parents.dtype == levels.dtype == idtype
        np.testing.assert_array_equal(levels, want)
        gk.graph500.validate(g, source, parents, levels, directed=True)
        # per level the vertices it found, the last level (the deepest frontier's, finding none) included
        np.testing.assert_array_equal(found, np.r_[np.bincount(want[want >= 0])[1:], 0])
        # the queue is the reached vertices once each, level by level: SciPy's order up to ties in a level
        assert sorted(order) == np.flatnonzero(want >= 0).tolist()
        assert np.all(np.diff(want[order]) >= 0)
        bfo = breadth_first_order(sp.csr_array((np.ones(indices.size), indices, indptr), shape=(n, n)), source,
                                  directed=True, return_predecessors=False)
        np.testing.assert_array_equal(np.sort(want[bfo]), want[order])


def test_serial_levels_stop_before_a_level_of_many_edges():
    """``edge_limit``: the call returns before the first level whose frontier has that many out-edges,
    with that frontier (and its out-edges) for a parallel step; the levels before it are recorded."""
    src, dst, n = _shuffled_grid(30)
    _, indptr, indices = _csr(src, dst, n, np.int64)
    source = 0
    want = _scipy_levels(indptr, indices, n, source)
    degree = np.diff(indptr)
    scouts = np.array([degree[want == d].sum() for d in range(want.max() + 1)])
    limit = int(scouts.max())  # the widest level's frontier is the first to reach it
    stop = int(np.argmax(scouts >= limit))
    queue = np.empty(n + 1, dtype=np.int64)
    by = np.empty(n + 1, dtype=np.int64)
    visited = np.zeros((n + 63) // 64, dtype=np.uint64)
    visited[0] = np.uint64(1)
    queue[0] = source
    found = np.empty(4096, dtype=np.int64)
    start, count, level, scout, _, edges_left, done = serial.top_down_serial_levels(
        indptr, indices, queue, by, 1, visited, 0, int(degree[source]), -1, limit, indptr[-1], 0.0, found)
    assert level == done == stop and scout == limit
    assert sorted(queue[start:count].tolist()) == np.flatnonzero(want == stop).tolist()
    assert edges_left == indptr[-1] - scouts[:stop].sum()
    np.testing.assert_array_equal(found[:done], [np.sum(want == d) for d in range(1, stop + 1)])


def test_serial_levels_step_bottom_up_only_on_a_growing_frontier():
    """The direction-optimizing rule (``scout * alpha > edges_left``) ends the run before a level only when
    the frontier's out-edges grew since the last level: a shrinking frontier stays top-down."""
    src, dst, n = _shuffled_grid(30)
    _, indptr, indices = _csr(src, dst, n, np.int64)
    degree = np.diff(indptr)
    source = int(np.flatnonzero(degree == 2)[0])  # a corner: levels grow to the diagonal, then shrink
    want = _scipy_levels(indptr, indices, n, source)
    scouts = np.array([degree[want == d].sum() for d in range(want.max() + 1)])
    queue = np.empty(n + 1, dtype=np.int64)
    by = np.empty(n + 1, dtype=np.int64)
    found = np.empty(4096, dtype=np.int64)
    for edges_left in (indptr[-1], 10 * int(scouts.max())):  # never fires; fires on the first growing level
        visited = np.zeros((n + 63) // 64, dtype=np.uint64)
        visited[source >> 6] = np.uint64(1) << np.uint64(source & 63)
        queue[0] = source
        start, count, level, scout, previous, left, done = serial.top_down_serial_levels(
            indptr, indices, queue, by, 1, visited, 0, int(degree[source]), -1, 1 << 60, edges_left, 1.0, found)
        if edges_left == indptr[-1]:
            assert count == start and level == want.max() + 1  # the whole search (the last level finds none)
            continue
        # the first level whose frontier grew and passes edges_left / alpha (as the kernel counts it down)
        remaining = edges_left - np.concatenate([[0], np.cumsum(scouts)])
        fires = [d for d in range(1, scouts.size) if scouts[d] > remaining[d] and scouts[d] > scouts[d - 1]]
        assert fires and level == fires[0] and scout == scouts[level] and previous == scouts[level - 1]


@pytest.mark.parametrize("one_thread", [False, True])
def test_record_serial_levels_against_numpy(one_thread, idtype):
    rng = np.random.default_rng(3)
    n, first = 70_000, 11
    found = rng.integers(0, 900, 150)
    total = int(found.sum())
    queue = rng.permutation(n)[:first + total].astype(idtype)
    by = rng.integers(0, n, first + total).astype(idtype)
    parents = np.full(n, -1, dtype=idtype)
    levels = np.full(n, -1, dtype=idtype)
    record = serial.record_serial_levels_one_thread if one_thread else serial.record_serial_levels
    record(queue, by, first, found, 5, parents, levels)
    want_parents = np.full(n, -1, dtype=idtype)
    want_levels = np.full(n, -1, dtype=idtype)
    want_parents[queue[first:]] = by[first:]
    want_levels[queue[first:]] = np.repeat(np.arange(5, 5 + found.size), found)
    np.testing.assert_array_equal(parents, want_parents)
    np.testing.assert_array_equal(levels, want_levels)
    record(queue, by, first, found[:0], 5, parents, levels)  # no levels: nothing written
    np.testing.assert_array_equal(levels, want_levels)


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_shuffled_grid_every_algorithm(algorithm, idtype):
    src, dst, n = _shuffled_grid(60, seed=4)
    g = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    indptr, indices, _ = g._raw("csr")
    corner = int(np.argmin(np.diff(indptr)))
    for source in (0, corner, n - 1):
        r = gk.bfs(g, source, algorithm=algorithm)
        np.testing.assert_array_equal(r.levels, _scipy_levels(indptr, indices, n, source))
        gk.graph500.validate(g, source, r.parents, r.levels)
        assert sum(t[3] for t in r.trace) == r.num_reached - 1
        if algorithm in ("auto", "direction_optimizing") and source == corner:
            # from a corner the frontier grows to the grid's diagonal and then shrinks: it is never wide
            # against what is left while it grows, so no level steps bottom-up
            assert {t[1] for t in r.trace} == {"top_down_serial"}


def test_path_from_its_middle_and_a_degree_zero_source(idtype):
    n = 20_001
    p = np.arange(n - 1)
    g = gk.Graph.from_coo(np.r_[p, p + 1], np.r_[p + 1, p], num_nodes=n + 1, idtype=idtype)  # vertex n: alone
    r = gk.bfs(g, n // 2)
    assert r.depth == n // 2 and r.num_reached == n and sum(t[3] for t in r.trace) == n - 1
    np.testing.assert_array_equal(r.parents[:n], np.r_[np.arange(1, n // 2 + 1), n // 2, np.arange(n // 2, n - 1)])
    r = gk.bfs(g, n)
    assert r.parents.tolist() == [-1] * n + [n] and r.levels.tolist() == [-1] * n + [0]
