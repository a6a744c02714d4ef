"""DynamicGraph and IncrementalBFS under concurrent use: several Python threads applying batches to one
graph while others take snapshots, run kernels on it and update an incremental search.

Writers touch disjoint sets of edges (thread ``t`` only sources ``s`` with ``s % WRITERS == t``), so their
batches commute and the final edge set is the same whatever the interleaving: a serial replay of every
batch on a fresh graph gives it. Unserialized, two batches rewrite the packed arrays at once (a reader
then indexes arrays of another layout), which corrupts the graph or crashes the process; the hammer runs
in a child process so that a crash is a failed test, not a dead pytest run.
"""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import graphkern as gk

HAMMER = textwrap.dedent(
    """
    import sys
    import threading

    import numpy as np

    import graphkern as gk

    N, WRITERS, BATCHES = 96, 3, 40

    def batches_of(t):
        rng = np.random.default_rng(100 + t)
        own = np.arange(t, N, WRITERS)
        out = []
        for i in range(BATCHES):
            k = int(rng.integers(1, 60)) if i % 7 else 400  # now and then a batch big enough to merge
            ins = (rng.choice(own, k), rng.integers(0, N, k))
            dele = (rng.choice(own, k // 2), rng.integers(0, N, k // 2))
            out.append((ins, dele))
        return out

    plans = [batches_of(t) for t in range(WRITERS)]
    dg = gk.DynamicGraph(N)
    dg.apply(insert=(np.arange(N), (np.arange(N) + 1) % N))  # a ring, so the search reaches far
    inc = gk.IncrementalBFS(dg, 0)
    errors = []
    stop = threading.Event()

    def guard(fn):
        def run():
            try:
                fn()
            except BaseException as exc:  # reported by the main thread
                errors.append(repr(exc))
                stop.set()
        return run

    def writer(t):
        def go():
            for ins, dele in plans[t]:
                dg.apply(insert=ins, delete=dele)
        return go

    def reader():
        x = np.ones((N, 2))
        while not stop.is_set():
            snap = dg.snapshot()
            indptr, indices, eids = (np.asarray(a) for a in snap.csr())
            assert indptr[-1] == snap.num_edges == indices.size
            assert np.unique(eids).size == eids.size
            assert eids.size == 0 or eids.max() < snap.num_edge_ids
            out = gk.spmm(snap, "copy_lhs", "sum", x)
            assert np.array_equal(out[:, 0], np.bincount(indices, minlength=N))
            packed = gk.spmm(dg, "copy_lhs", "sum", x, format="packed")
            assert packed.shape == (N, 2) and np.all(packed >= 0) and packed.sum() <= 2 * N * N
            gk.spmm(dg, "copy_lhs", "max", x)
            gk.sddmm(dg, "dot", x, x)
            with dg._lock:  # the number of edge ids and the call see the same batch
                gk.edge_softmax(dg, np.zeros(dg.max_edge_id))
            src, dst, ids = dg.edges()
            assert src.size == dst.size == ids.size
            res = gk.bfs(dg, 0)
            assert res.levels[0] == 0

    def searcher():
        while not stop.is_set():
            inc.update()

    workers = [threading.Thread(target=guard(writer(t))) for t in range(WRITERS)]
    others = [threading.Thread(target=guard(reader)) for _ in range(2)] + [threading.Thread(target=guard(searcher))]
    for th in others + workers:
        th.start()
    for th in workers:
        th.join()
    stop.set()
    for th in others:
        th.join()
    if errors:
        print("\\n".join(errors))
        sys.exit(3)

    # the serial replay: the same batches one after another on a fresh graph
    ref = gk.DynamicGraph(N)
    ref.apply(insert=(np.arange(N), (np.arange(N) + 1) % N))
    for t in range(WRITERS):
        for ins, dele in plans[t]:
            ref.apply(insert=ins, delete=dele)
    got = set(zip(*(a.tolist() for a in dg.edges()[:2])))
    want = set(zip(*(a.tolist() for a in ref.edges()[:2])))
    assert got == want, (len(got), len(want))
    assert dg.num_edges == ref.num_edges
    assert np.array_equal(dg.out_degrees(), ref.out_degrees())
    assert np.array_equal(dg.in_degrees(), ref.in_degrees())
    ids = dg.edges()[2]
    assert np.unique(ids).size == ids.size and ids.max() < dg.max_edge_id
    inc.update()
    assert np.array_equal(inc.levels, gk.bfs(ref.snapshot(), 0).levels), "incremental levels"
    print("ok", len(got))
    """
)


def _run_child(script: str, timeout: float = 600):
    env = dict(os.environ)
    return subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=timeout, env=env)


@pytest.mark.parametrize("round_", range(2))
def test_threads_hammering_one_graph_match_a_serial_replay(round_):
    proc = _run_child(HAMMER)
    assert proc.returncode == 0, (
        f"exit status {proc.returncode} (a negative one is a signal: -11 is SIGSEGV)\n"
        f"stdout:\n{proc.stdout[-3000:]}\nstderr:\n{proc.stderr[-3000:]}")
    assert proc.stdout.startswith("ok")


def test_lock_is_reentrant_and_per_graph():
    """A kernel called while its thread holds the graph's lock (a layer calling several kernels) does not
    deadlock, and two graphs have two locks."""
    a, b = gk.DynamicGraph(3), gk.DynamicGraph(3)
    assert a._lock is not b._lock
    a.apply(insert=([0, 1], [1, 2]))
    with a._lock:
        a.apply(insert=([2], [0]))
        out = gk.spmm(a, "copy_lhs", "sum", np.ones((3, 1)))
        assert out.ravel().tolist() == [1.0, 1.0, 1.0]
        assert gk.bfs(a, 0).levels.tolist() == [0, 1, 2]


def test_apply_waits_for_a_reader_holding_the_lock():
    """While another thread holds the graph's lock (as a kernel reading it does), apply blocks."""
    import threading

    dg = gk.DynamicGraph(4)
    done = threading.Event()
    with dg._lock:
        th = threading.Thread(target=lambda: (dg.apply(insert=([0], [1])), done.set()))
        th.start()
        assert not done.wait(0.3), "apply ran while the graph's lock was held elsewhere"
        assert dg.num_edges == 0
    th.join(10)
    assert done.is_set() and dg.num_edges == 1


def test_incremental_update_holds_the_graphs_lock():
    import threading

    dg = gk.DynamicGraph(4)
    dg.apply(insert=([0], [1]))
    inc = gk.IncrementalBFS(dg, 0)
    dg.apply(insert=([1], [2]))
    done = threading.Event()
    with dg._lock:
        th = threading.Thread(target=lambda: (inc.update(), done.set()))
        th.start()
        assert not done.wait(0.3), "update read the graph while its lock was held elsewhere"
    th.join(10)
    assert done.is_set() and inc.levels.tolist() == [0, 1, 2, -1]
