"""The thread count for chains of short parallel regions beside busy processes (graphkern._fair_share)."""

import os
import subprocess
import sys

import numba
import numpy as np
import pytest

import graphkern as gk
from graphkern._contention import busy_processes
from graphkern._fair_share import fair_share, other_runnable_threads, threads_beside


@pytest.mark.parametrize("others, threads, cores, expected", [
    (0, 2, 2, 2), (1, 2, 2, 1), (1, 1, 2, 1), (3, 2, 2, 1), (0, 8, 8, 8), (2, 8, 8, 6), (2, 4, 8, 4),
    (7, 8, 8, 1), (100, 16, 8, 1), (0, 1, 1, 1),
])
def test_threads_beside(others, threads, cores, expected):
    assert threads_beside(others, threads, cores) == expected


def test_fair_share_restores_the_thread_count():
    before = numba.get_num_threads()
    with fair_share() as used:
        assert 1 <= used <= before and numba.get_num_threads() == used
    assert numba.get_num_threads() == before


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the run-queue count is read from /proc")
def test_busy_processes_take_threads_away():
    threads = numba.get_num_threads()
    cores = os.cpu_count() or 1
    if threads < 2:
        pytest.skip("one Numba thread: nothing to give up")
    import time

    with busy_processes(cores, "python"):
        time.sleep(0.1)  # past the refresh interval: a count taken before the spinners started is stale
        assert other_runnable_threads() >= 1
        with fair_share() as used:
            assert used < threads


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the run-queue count is read from /proc")
def test_the_environment_variable_turns_the_rule_off():
    code = ("import graphkern._fair_share as f, graphkern._contention as c, time\n"
            "with c.busy_processes(2, 'python'):\n"
            "    time.sleep(0.1)\n"
            "    print(f.other_runnable_threads())\n")
    env = dict(os.environ, GRAPHKERN_FAIR_SHARE="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0"


def test_results_do_not_depend_on_the_thread_count():
    """bfs, edge_softmax and DynamicGraph.apply give the same results under fair_share as with every thread
    (each runs under it whatever the machine's load)."""
    src, dst = gk.graph.kronecker_edges(10, 8, progress=False)
    g = gk.graph.undirected(src, dst, 1 << 10)
    logits = np.random.default_rng(0).random((g.num_edges, 2), dtype=np.float32)
    threads = numba.get_num_threads()
    results = []
    for use in sorted({1, threads}):
        numba.set_num_threads(use)
        try:
            dg = gk.graph.DynamicGraph(1 << 10)
            dg.apply(insert=(src, dst))
            dg.apply(delete=(src[:100], dst[:100]))
            results.append((gk.bfs(g, 1).levels, gk.edge_softmax(g, logits), dg.snapshot().edges()))
        finally:
            numba.set_num_threads(threads)
    for got in results[1:]:
        np.testing.assert_array_equal(got[0], results[0][0])
        np.testing.assert_allclose(got[1], results[0][1], rtol=1e-6)
        for a, b in zip(got[2], results[0][2]):
            np.testing.assert_array_equal(a, b)
