"""BFS: every algorithm validated by the Graph500 rules, levels equal to SciPy's distances; the validator."""

import numpy as np
import pytest
import scipy.sparse as sp
from graph_cases import CASES, facebook_edges
from scipy.sparse.csgraph import shortest_path

import graphkern as gk
from graphkern.dispatch import Kernel

ALGORITHMS = ["direction_optimizing", "top_down", "bottom_up", "spmsv", "auto"]


def _scipy_levels(g, source):
    A = sp.csr_array((np.ones(g.num_edges), g.csr().indices, g.csr().indptr), shape=(g.num_src, g.num_dst))
    d = shortest_path(A, unweighted=True, indices=source, directed=True)
    return np.where(np.isinf(d), -1, d).astype(np.int64)


def _check(g, source, algorithm, directed):
    r = gk.bfs(g, source, algorithm=algorithm)
    assert r.parents[source] == source and r.levels[source] == 0
    np.testing.assert_array_equal(r.levels, _scipy_levels(g, source))
    reached = gk.graph500.validate(g, source, r.parents, r.levels, directed=directed)
    assert reached == r.num_reached
    return r


def _source(g):
    deg = g.out_degrees()
    return int(np.argmax(deg > 0)) if g.num_edges else 0


# Bottom-up and the pull SpMSV scan every unvisited vertex per level: O(n * depth) on the 10^5-vertex path
# (slow: seconds each). They run on it once, in test_graph_cases_undirected (bottom-up on a 10^4-vertex
# prefix), not again for each id type here.
DIRECTED_CASES = [(c, a) for c in sorted(CASES) if c not in ("bipartite", "empty") for a in ALGORITHMS
                  if not (c == "path_long" and a in ("bottom_up", "spmsv"))]


@pytest.mark.parametrize(("case", "algorithm"), DIRECTED_CASES)
def test_graph_cases_directed(case, algorithm, idtype):
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    _check(g, _source(g), algorithm, directed=True)


@pytest.mark.fast
@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("case", ["self_loops", "multi_edges", "hub", "unsorted_random", "kronecker_10", "path_long"])
def test_graph_cases_undirected(case, algorithm):
    src, dst, n = CASES[case]()
    if case == "path_long" and algorithm == "bottom_up":
        # forced bottom-up scans every unvisited vertex at every level, O(n^2) on a path: its first
        # 10^4 vertices (10^4 levels) take a hundredth of the whole path's minutes and break it alike
        n = 10_000
        src, dst = src[:n - 1], dst[:n - 1]
    g = gk.Graph.from_coo(np.concatenate([src, dst]), np.concatenate([dst, src]), num_nodes=n)
    r = _check(g, _source(g), algorithm, directed=False)
    if case == "path_long":
        assert r.depth == n - 1 - _source(g)


@pytest.mark.parametrize("maps", ["private", "shared_live_map", "shared_map_before_the_level"])
@pytest.mark.parametrize("case", ["hub", "unsorted_random", "kronecker_10", "multi_edges"])
def test_top_down_claims_with_each_visited_map(case, maps):
    """Top-down levels claim on a private visited map per thread (merged after the level), or, when those
    would take too much memory, on one shared map gathered live or as the level found it (a heuristic
    picks per level); every way, every vertex is claimed at its level with a valid parent."""
    knobs = {} if maps == "private" else dict(
        bfs_private_maps_max_bytes=0,
        bfs_stale_gather_edges_per_claim=0 if maps == "shared_map_before_the_level" else 1 << 60)
    src, dst, n = CASES[case]()
    for directed in (True, False):
        if not directed:
            src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
        g = gk.Graph.from_coo(src, dst, num_nodes=n)
        with gk.tuned(**knobs):
            _check(g, _source(g), "top_down", directed=directed)
            _check(g, _source(g), "direction_optimizing", directed=directed)


def test_explain_says_which_visited_map_top_down_levels_claim_on():
    import numba

    g = gk.graph.kronecker(10)
    workers = numba.get_num_threads()
    for algorithm in ("top_down", "direction_optimizing", "auto"):
        why = " ".join(gk.explain(g, "bfs", 0, algorithm=algorithm).reasons)
        assert f"private visited map per thread ({workers} x 128 B)" in why  # 1,024 vertices
    assert "visited map" not in " ".join(gk.explain(g, "bfs", 0, algorithm="bottom_up").reasons)
    with gk.tuned(bfs_private_maps_max_bytes=0):
        why = " ".join(gk.explain(g, "bfs", 0, algorithm="top_down").reasons)
    assert (f"one shared visited map by compare-and-swap: {workers} private maps would take {128 * workers} B, "
            "over bfs_private_maps_max_bytes (0 B)") in why


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_private_top_down_with_any_thread_count(threads, monkeypatch):
    """One private map per thread: the maps follow the thread count between searches, and a vertex
    that several threads claim in one level still gets one level and a valid parent."""
    import numba

    from graphkern import _fair_share

    # the search would run on fewer threads while another test worker keeps a core busy
    monkeypatch.setattr(_fair_share, "_enabled", False)

    src, dst, n = CASES["kronecker_10"]()
    g = gk.Graph.from_coo(np.concatenate([src, dst]), np.concatenate([dst, src]), num_nodes=n)
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
        _check(g, _source(g), "top_down", directed=False)
        assert g._cache["bfs_private_maps"].shape[0] == numba.get_num_threads()
    finally:
        numba.set_num_threads(before)


def test_claimed_vertices_against_numpy():
    """The next frontier read off a level's new visited bits: ascending, levels written, the degree sum."""
    from graphkern.kernels.cpu import bfs as kernels

    rng = np.random.default_rng(5)
    n = 64 * 5000 + 37  # more words than one chunk, and a partial last word
    indptr = np.concatenate([[0], np.cumsum(rng.integers(0, 5, n))]).astype(np.int64)
    before_set = rng.random(n) < 0.3
    after_set = before_set | (rng.random(n) < 0.2)
    words = (n + 63) // 64

    def pack(flags):
        padded = np.zeros(words * 64, dtype=bool)
        padded[:n] = flags
        return np.packbits(padded.reshape(words, 64)[:, ::-1], axis=1).view(">u8").astype(np.uint64).ravel()

    levels = np.full(n, -1, dtype=np.int64)
    out = np.empty(n, dtype=np.int64)
    chunk_scouts = np.empty(kernels.claim_chunks(words), dtype=np.int64)
    chunk_starts = np.empty(chunk_scouts.size + 1, dtype=np.int64)
    assert chunk_scouts.size == 78  # 5001 words, 64 to a chunk
    # the level's claims in two rows (two threads' private maps, each from the map before the level) that
    # overlap, and whose union is after_set
    first = after_set & (rng.random(n) < 0.6)
    second = (after_set & ~first) | (after_set & (rng.random(n) < 0.3))
    rows = np.stack([pack(before_set | first), pack(before_set | second)])
    known = pack(before_set)
    count, scout = kernels.claimed_vertices(rows, known, indptr, levels, 7, out, chunk_starts, chunk_scouts)
    np.testing.assert_array_equal(known, pack(after_set))  # the map now holds the union
    want = np.flatnonzero(after_set & ~before_set)
    np.testing.assert_array_equal(out[:count], want)
    np.testing.assert_array_equal(np.flatnonzero(levels == 7), want)
    degrees = np.diff(indptr)
    assert scout == int(degrees[want].sum())
    # per chunk of words: where its vertices start in `out`, and their degree sum
    edges = (words * np.arange(chunk_scouts.size + 1)) // chunk_scouts.size * 64
    np.testing.assert_array_equal(chunk_starts, np.searchsorted(want, edges))
    np.testing.assert_array_equal(chunk_scouts, [degrees[want[a:b]].sum() for a, b in
                                                 zip(chunk_starts[:-1], chunk_starts[1:])])
    # the next level's parts: cut at chunk edges, each part's degree sum near an equal share
    parts = 6
    bounds = kernels.bounds_from_chunks(chunk_starts, chunk_scouts, parts)
    assert bounds[0] == 0 and bounds[-1] == count and bounds.size == parts + 1 and np.all(np.diff(bounds) >= 0)
    assert set(bounds) <= set(chunk_starts)
    sums = np.array([degrees[want[a:b]].sum() for a, b in zip(bounds[:-1], bounds[1:])])
    assert sums.sum() == scout and sums.max() <= scout / parts + chunk_scouts.max()


def _reference_hubs(g):
    """The in-neighbour of highest out-degree of each vertex, first in CSC order among equals; -1 if none."""
    indptr, indices, _ = g.csc()
    out_degree = g.out_degrees()
    hubs = np.full(g.num_dst, -1)
    for v in range(g.num_dst):
        row = indices[indptr[v]:indptr[v + 1]]
        if row.size:
            hubs[v] = row[np.argmax(out_degree[row])]
    return hubs


@pytest.fixture
def every_graph_skewed():
    """Every graph counts as skewed: the hub index is built."""
    with gk.tuned(bfs_hub_min_skew=0):
        yield


@pytest.mark.parametrize("case", ["self_loops", "multi_edges", "hub", "unsorted_random", "kronecker_10", "bipartite"])
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.usefixtures("every_graph_skewed")
def test_repeated_searches_use_the_hub_index(case, directed, idtype):
    src, dst, n = CASES[case]()
    if not directed:
        src, dst = np.concatenate([src, dst]), np.concatenate([dst, src])
    n = max(n) if isinstance(n, tuple) else n
    g = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    sources = [_source(g), int(np.argmax(g.out_degrees())), n - 1]
    for i, source in enumerate(sources):
        _check(g, source, "bottom_up", directed=directed)
        if i == 0:
            assert "bfs_hubs" not in g._cache  # a graph searched once does not pay for the index
        _check(g, source, "direction_optimizing", directed=directed)
    np.testing.assert_array_equal(g._cache["bfs_hubs"], _reference_hubs(g))
    assert g._cache["bfs_hubs"].dtype == g.idtype


@pytest.mark.parametrize("kind", ["kronecker", "uniform", "grid"])
def test_hub_index_only_where_degrees_are_skewed(kind):
    if kind == "kronecker":
        g = gk.graph.kronecker(12)
    elif kind == "uniform":
        g = gk.graph.undirected(*gk.graph.uniform_edges(4096, 16 * 4096, seed=2), 4096)
    else:
        side = np.arange(64 * 64).reshape(64, 64)
        g = gk.graph.undirected(np.r_[side[:, :-1].ravel(), side[:-1].ravel()],
                                np.r_[side[:, 1:].ravel(), side[1:].ravel()], 64 * 64)
    degrees = g.out_degrees()
    skewed = degrees.max() >= gk.tuning.current().bfs_hub_min_skew * degrees.mean()
    for source in (0, 1, 2):
        r = gk.bfs(g, source, algorithm="bottom_up")
        gk.graph500.validate(g, source, r.parents, r.levels)
    assert ("bfs_hubs" in g._cache) == skewed == (kind == "kronecker")


def test_isolated_source_and_empty_graph():
    g = gk.Graph.from_coo([0, 1], [1, 0], num_nodes=4)
    for algorithm in ALGORITHMS:
        r = gk.bfs(g, 3, algorithm=algorithm)
        assert r.parents.tolist() == [-1, -1, -1, 3] and r.levels.tolist() == [-1, -1, -1, 0]
    g = gk.Graph.from_coo([], [], num_nodes=1)
    assert gk.bfs(g, 0).parents.tolist() == [0]


@pytest.mark.parametrize("csc_sorted", [False, True])
def test_spmsv_takes_the_highest_labelled_parent_and_is_deterministic(csc_sorted):
    import numba

    from graphkern._cpu.bfs import _in_rows_sorted

    src, dst = gk.graph.kronecker_edges(12)
    if csc_sorted:
        g = gk.graph.kronecker(12)  # symmetric with sorted rows: its CSR is its in-adjacency
    else:
        g = gk.Graph.from_coo(np.concatenate([src, dst]), np.concatenate([dst, src]))  # CSC in COO order
    assert _in_rows_sorted(g) == csc_sorted
    r = gk.bfs(g, 1834, algorithm="spmsv")
    gk.graph500.validate(g, 1834, r.parents, r.levels)
    csc = g.csc()
    for v in np.flatnonzero(r.levels > 0)[:500].tolist():
        nbrs = csc.indices[csc.indptr[v]:csc.indptr[v + 1]]
        frontier_nbrs = nbrs[r.levels[nbrs] == r.levels[v] - 1]
        assert r.parents[v] == frontier_nbrs.max()
    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        single = gk.bfs(g, 1834, algorithm="spmsv")
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(single.parents, r.parents)


def test_multi_source():
    g = gk.graph.kronecker(10)
    keys = gk.graph500.search_keys(g, 4)
    results = gk.bfs(g, sources=keys)
    assert [r.source for r in results] == keys.tolist()
    for r in results:
        gk.graph500.validate(g, r.source, r.parents, r.levels)


def test_direction_optimizing_switches_and_traces_levels():
    g = gk.graph.kronecker(14)
    r = gk.bfs(g, int(gk.graph500.search_keys(g, 1)[0]), algorithm="direction_optimizing")
    steps = [t[1] for t in r.trace]
    assert {"top_down", "top_down_serial"} & set(steps) and "bottom_up" in steps
    assert [t[0] for t in r.trace] == list(range(1, len(r.trace) + 1))
    assert sum(t[3] for t in r.trace) == r.num_reached - 1


@pytest.mark.parametrize("algorithm", ["auto", "top_down", "direction_optimizing"])
def test_high_diameter_levels_run_serially_and_trace_every_level(algorithm):
    # a path then a star at its end: thousands of one-vertex levels on one thread, then a wide level
    # (past the knob bfs_serial_level_edges) that goes back to the parallel steps
    n_path, n_star = 5000, 3 * gk.tuning.current().bfs_serial_level_edges
    path_src = np.arange(n_path - 1)
    star_dst = np.arange(n_path, n_path + n_star)
    src = np.concatenate([path_src, np.full(n_star, n_path - 1), star_dst])
    dst = np.concatenate([path_src + 1, star_dst, (star_dst + 1 - n_path) % n_star + n_path])  # a ring
    g = gk.Graph.from_coo(np.r_[src, dst], np.r_[dst, src], num_nodes=n_path + n_star)
    r = gk.bfs(g, 0, algorithm=algorithm)
    np.testing.assert_array_equal(r.levels, _scipy_levels(g, 0))
    gk.graph500.validate(g, 0, r.parents, r.levels)
    steps = [t[1] for t in r.trace]
    assert steps.count("top_down_serial") >= n_path - 2
    assert [t[0] for t in r.trace] == list(range(1, len(r.trace) + 1))
    assert sum(t[3] for t in r.trace) == r.num_reached - 1
    assert all(r.trace[i + 1][2] == r.trace[i][3] for i in range(len(r.trace) - 1) if r.trace[i][1] != "bottom_up")


def test_facebook():
    edges = facebook_edges()
    if edges is None:
        pytest.skip("the real-world data files are not available (GRAPHKERN_TEST_DATA)")
    g = gk.graph.read_edgelist(__import__("graph_cases").FACEBOOK, undirected=True)
    for algorithm in ALGORITHMS:
        r = _check(g, 0, algorithm, directed=False)
        assert r.num_reached == 4039


@pytest.mark.fast
def test_golden_graph500_keys_and_edge_counts():
    g = gk.graph.kronecker(10)
    assert gk.graph500.search_keys(g, 8).tolist() == [458, 214, 220, 966, 395, 9, 848, 777]
    g = gk.graph.kronecker(16)
    keys = gk.graph500.search_keys(g, 8)
    assert keys.tolist() == [29348, 8064, 61854, 29808, 54316, 22032, 1364, 15128]
    src, dst = gk.graph.kronecker_edges(16)
    for root in keys[:4].tolist():
        r = gk.bfs(g, root)
        assert gk.graph500.validate(g, root, r.parents, r.levels) == 46_803  # the largest component
        assert gk.graph500.traversed_edges(src, dst, r.parents) == 1_048_079


# ---------------------------------------------------------------------------------------- the validator

@pytest.fixture
def triangle_path():
    # 0 - 1 - 2 - 3 and the chord 0 - 2; vertex 4 isolated
    u = [0, 1, 2, 0]
    v = [1, 2, 3, 2]
    return gk.Graph.from_coo(u + v, v + u, num_nodes=5)


def test_validator_accepts_a_correct_tree(triangle_path):
    assert gk.graph500.validate(triangle_path, 0, np.array([0, 0, 0, 2, -1]), np.array([0, 1, 1, 2, -1])) == 4


@pytest.mark.parametrize("parents, levels, rule", [
    ([0, 0, 7, 2, -1], None, "rule 1"),            # not a vertex
    ([1, 0, 0, 2, -1], None, "rule 1"),            # the root is not its own parent
    ([0, 2, 1, 2, -1], None, "rule 1"),            # 1 and 2 form a cycle, detached from the root
    ([0, 0, 0, 2, -1], [0, 1, 2, 2, -1], "rule 2"),  # levels that disagree with the tree
    ([0, 0, 1, 2, -1], None, "rule 3"),            # chord 0 - 2 spans levels 0 and 2
    ([0, 0, 0, -1, -1], None, "rule 4"),           # 3 is adjacent to a reached vertex
    ([0, 0, 0, 0, -1], None, "rule 5"),            # 0 -> 3 is not an edge (levels still consistent)
])
def test_validator_rejects_each_broken_rule(triangle_path, parents, levels, rule):
    with pytest.raises(gk.Graph500ValidationError, match=rule):
        gk.graph500.validate(triangle_path, 0, np.array(parents), None if levels is None else np.array(levels))


@pytest.mark.fast
def test_validator_shape_and_dtype(triangle_path):
    with pytest.raises(gk.Graph500ValidationError, match="shape"):
        gk.graph500.validate(triangle_path, 0, np.zeros(3, np.int64))
    with pytest.raises(gk.Graph500ValidationError, match="dtype"):
        gk.graph500.validate(triangle_path, 0, np.zeros(5))


# ----------------------------------------------------------------------------------------- bad input

def test_bad_input():
    g = gk.Graph.from_coo([0, 1], [1, 2], num_nodes=3)
    with pytest.raises(ValueError, match="argument 'source': expected an integer <= 2, found 3"):
        gk.bfs(g, 3)
    with pytest.raises(ValueError, match="argument 'source': expected an integer >= 0, found -1"):
        gk.bfs(g, -1)
    with pytest.raises(ValueError, match="argument 'algorithm': expected one of 'auto', 'direction_optimizing'"):
        gk.bfs(g, 0, algorithm="dfs")
    with pytest.raises(ValueError, match="give exactly one"):
        gk.bfs(g, 0, sources=[1])
    with pytest.raises(ValueError, match="square graph"):
        gk.bfs(gk.Graph.from_coo([0], [1], num_nodes=(1, 2)), 0)
    only_csr = g.formats("csr")
    with pytest.raises(ValueError, match="needs the csc format.*algorithm='top_down'"):
        gk.bfs(only_csr, 0, algorithm="bottom_up")
    plan = gk.explain(only_csr, "bfs", 0)
    assert (plan.kernel, plan.params["algorithm"]) == (Kernel.BFS_TOP_DOWN, "top_down")
    assert gk.bfs(only_csr, 0).parents.tolist() == [0, 0, 1]
    with pytest.raises(TypeError, match="argument 'g'"):
        gk.bfs("graph", 0)


@pytest.mark.fast
def test_graph500_run_and_output():
    result = gk.graph500.run(10, num_roots=4, progress=False)
    assert result.roots.tolist() == [458, 214, 220, 966]
    assert result.validated and (result.nedges == 16_239).all()
    text = gk.graph500.format_output(result)
    for key in ("SCALE: 10", "NBFS: 4", "bfs_harmonic_mean_TEPS:", "bfs_median_nedge: 16239", "construction_time:"):
        assert key in text


def test_graph500_cli(capsys):
    from graphkern import cli

    assert cli.main(["graph500", "--scale", "10", "--roots", "2", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "bfs_harmonic_mean_TEPS" in out and "validation: passed" in out


@pytest.mark.fast
def test_statistics_match_the_reference_quartiles():
    s = gk.graph500.statistics([4.0, 1.0, 3.0, 2.0])
    assert (s["min"], s["firstquartile"], s["median"], s["thirdquartile"], s["max"]) == (1.0, 1.5, 2.5, 3.5, 4.0)


@pytest.mark.parametrize("case", [c for c in sorted(CASES) if c not in ("bipartite", "empty")])
def test_batched_multi_source_equals_single_searches(case, idtype):
    """MS-BFS: every batched tree validates and its levels are SciPy's, on every graph case."""
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    rng = np.random.default_rng(0)
    roots = rng.integers(0, n, 12).tolist() + [_source(g)] * 2  # repeats share a batch too
    results = gk.bfs(g, sources=roots)  # auto: batched from bfs_batch_min_sources sources on
    assert len(results) == len(roots) and all(r.algorithm == "multi_source" for r in results)
    for root, r in zip(roots, results):
        assert r.source == root and r.parents[root] == root and r.levels[root] == 0
        np.testing.assert_array_equal(r.levels, _scipy_levels(g, root))
        gk.graph500.validate(g, root, r.parents, r.levels, directed=True)


def test_batched_multi_source_across_batches_and_full_masks():
    """More than 64 sources (two batches, the first with every mask bit set), on a real graph."""
    edges = facebook_edges()
    if edges is None:
        pytest.skip("facebook_combined.txt is not available (GRAPHKERN_TEST_DATA)")
    fb_src, fb_dst = edges
    n = int(max(fb_src.max(), fb_dst.max())) + 1
    g = gk.Graph.from_coo(np.r_[fb_src, fb_dst], np.r_[fb_dst, fb_src], num_nodes=n)
    roots = list(range(0, n, n // 70))[:70]
    batched = gk.bfs(g, sources=roots, batch=True)
    single = gk.bfs(g, sources=roots, batch=False)
    assert [r.algorithm for r in single] == ["direction_optimizing"] * 70
    for root, a, b in zip(roots, batched, single):
        np.testing.assert_array_equal(a.levels, b.levels)
        gk.graph500.validate(g, root, a.parents, a.levels)


def test_batching_choices():
    g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0])
    assert [r.algorithm for r in gk.bfs(g, sources=[0, 1])] == ["direction_optimizing"] * 2  # too few
    assert gk.bfs(g, sources=[0] * 9, algorithm="top_down")[0].algorithm == "top_down"  # an explicit algorithm
    assert gk.bfs(g, sources=[0, 1], batch=True)[1].levels.tolist() == [2, 0, 1]
    coo_only = gk.Graph.from_coo([0, 1], [1, 0]).formats(["coo", "csr"])
    assert gk.bfs(coo_only, sources=[0] * 9, algorithm="top_down")[0].parents.tolist() == [0, 0]
    with pytest.raises(ValueError, match="csc"):
        gk.bfs(coo_only, sources=[0, 1], batch=True)


def test_searches_of_one_graph_from_several_python_threads():
    """Searches keep scratch buffers with the graph; two at once must not share them (they did: a
    search from another thread overwrote the visited map and the frontier, and trees came out wrong)."""
    from concurrent.futures import ThreadPoolExecutor

    g = gk.graph.kronecker(12, seed=1)
    sources = [int(s) for s in np.flatnonzero(g.out_degrees() > 0)[:8]]
    jobs = [(s, a) for s in sources for a in ("top_down", "direction_optimizing", "spmsv")]
    want = {job: _scipy_levels(g, job[0]) for job in jobs}

    def search(job):
        source, algorithm = job
        for _ in range(4):
            r = gk.bfs(g, source, algorithm=algorithm)
            np.testing.assert_array_equal(r.levels, want[job])
            gk.graph500.validate(g, source, r.parents, r.levels)
        return True

    with ThreadPoolExecutor(4) as pool:
        assert all(pool.map(search, jobs))


@pytest.mark.parametrize("name,value,error", [
    ("alpha", 0, ValueError), ("beta", 0, ValueError), ("alpha", -1.0, ValueError),
    ("beta", float("nan"), ValueError), ("alpha", float("inf"), ValueError), ("beta", True, TypeError),
    ("alpha", "15", TypeError), ("batch", 1, TypeError), ("batch", "yes", TypeError),
])
def test_bad_direction_optimizing_parameters_are_refused_by_name(name, value, error):
    import graphkern as gk

    g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0], num_nodes=3)
    with pytest.raises(error, match=f"argument '{name}'"):
        gk.bfs(g, 0, **{name: value})
