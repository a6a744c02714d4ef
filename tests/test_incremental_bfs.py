"""IncrementalBFS: after every batch its levels equal a fresh search's and its parents pass the Graph500
rules, on directed and symmetric graphs, through tree-edge deletions, insertions that shorten paths or
reach new vertices, several batches between updates, and the fallback to a full search."""

import numpy as np
import pytest

import graphkern as gk


def _check(dg, inc):
    snap = dg.snapshot()
    np.testing.assert_array_equal(inc.levels, gk.bfs(snap, inc.source).levels)
    gk.graph500.validate(snap, inc.source, inc.parents, inc.levels, directed=True)


def _both_ways(pair):
    return np.concatenate([pair[0], pair[1]]), np.concatenate([pair[1], pair[0]])


@pytest.mark.fast
@pytest.mark.parametrize("symmetric", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_batches(symmetric, seed):
    rng = np.random.default_rng(seed)
    n = 200
    dg = gk.DynamicGraph(n)
    start = rng.integers(0, n, (2, 500))
    dg.apply(insert=_both_ways(start) if symmetric else tuple(start))
    inc = gk.IncrementalBFS(dg, int(rng.integers(0, n)), symmetric=symmetric, fallback_fraction=1.0)
    _check(dg, inc)
    for step in range(25):
        src, dst, _ = dg.edges()
        pick = rng.integers(0, max(src.size, 1), 12) if src.size else np.zeros(0, np.int64)
        dele = (src[pick], dst[pick])
        new = rng.integers(0, n, (2, 12))
        ins = (new[0], new[1])
        if symmetric:
            dele, ins = _both_ways(dele), _both_ways(ins)
        dg.apply(insert=ins, delete=dele)
        if step % 4 == 0:  # a second batch before the update: the log keeps both, in order
            dg.apply(delete=_both_ways(dele) if symmetric else dele, insert=ins)
        report = inc.update()
        assert not report["full_search"]
        _check(dg, inc)
    assert inc.full_searches == 1  # only the initial search


def test_deleting_the_tree_under_a_vertex_and_reattaching_it():
    # 0 -> 1 -> 2 -> 3 -> 4 and a longer way round 0 -> 5 -> 6 -> 3
    dg = gk.DynamicGraph(7)
    dg.apply(insert=([0, 1, 2, 3, 0, 5, 6], [1, 2, 3, 4, 5, 6, 3]))
    inc = gk.IncrementalBFS(dg, 0, fallback_fraction=1.0)
    assert inc.levels.tolist() == [0, 1, 2, 3, 4, 1, 2]
    dg.apply(delete=([1], [2]))
    report = inc.update()
    assert report["affected"] >= 1 and inc.levels.tolist() == [0, 1, -1, 3, 4, 1, 2]
    _check(dg, inc)
    dg.apply(insert=([4], [2]))  # 2 comes back, below 4
    inc.update()
    assert inc.levels.tolist() == [0, 1, 5, 3, 4, 1, 2]
    dg.apply(insert=([0], [4]))  # a shortcut lowers 4 and then 2
    inc.update()
    assert inc.levels.tolist() == [0, 1, 2, 3, 1, 1, 2]
    _check(dg, inc)


def test_source_edges_self_loops_and_isolated_source():
    dg = gk.DynamicGraph(4)
    dg.apply(insert=([0, 0, 1, 2], [0, 1, 1, 3]))
    inc = gk.IncrementalBFS(dg, 0, fallback_fraction=1.0)
    dg.apply(delete=([0, 0], [0, 1]))  # the source's self-loop and its only out-edge
    inc.update()
    assert inc.levels.tolist() == [0, -1, -1, -1]
    lone = gk.IncrementalBFS(dg, 3)
    dg.apply(insert=([3], [2]))
    lone.update()
    assert lone.levels.tolist() == [-1, -1, 1, 0]
    assert inc.update()["inserted"] == 1
    _check(dg, inc)


def test_large_changes_fall_back_to_a_full_search():
    n = 2000
    dg = gk.DynamicGraph(n)
    chain = np.arange(n - 1)
    dg.apply(insert=(chain, chain + 1))
    inc = gk.IncrementalBFS(dg, 0, fallback_fraction=0.01)
    dg.apply(delete=([0], [1]))  # the whole chain below 1 is affected
    report = inc.update()
    assert report["full_search"] and inc.full_searches == 2
    assert inc.levels[1:].tolist() == [-1] * (n - 1)
    dg.apply(insert=([0], [1]))  # and reached again: more relabelled than the limit allows
    assert inc.update()["full_search"]
    np.testing.assert_array_equal(inc.levels, np.arange(n))


def test_bad_arguments():
    dg = gk.DynamicGraph(3)
    with pytest.raises(TypeError, match="expected a graphkern DynamicGraph"):
        gk.IncrementalBFS(gk.Graph.from_coo([0], [1]), 0)
    with pytest.raises(ValueError, match="argument 'source'"):
        gk.IncrementalBFS(dg, 3)
    for fraction in (-0.1, 1.5):  # the range of the knob incremental_fallback_fraction, [0, 1]
        with pytest.raises(ValueError, match="argument 'fallback_fraction'"):
            gk.IncrementalBFS(dg, 0, fallback_fraction=fraction)
    assert gk.IncrementalBFS(dg, 0, fallback_fraction=0).levels.tolist() == [0, -1, -1]
    assert gk.IncrementalBFS(dg, 0).update() == {"inserted": 0, "deleted": 0, "affected": 0, "relabelled": 0,
                                                 "full_search": False}
