"""DynamicGraph(backend="cuda") against the CPU class: the same counts, ids, degrees and snapshots after
every batch (growth, tombstones, revival, compaction, root overflow)."""

import numpy as np
import pytest
from numba import cuda

import graphkern as gk


def _same(cpu, gpu):
    assert (cpu.num_edges, cpu.max_edge_id) == (gpu.num_edges, gpu.max_edge_id)
    np.testing.assert_array_equal(gpu.out_degrees().copy_to_host(), cpu.out_degrees())
    np.testing.assert_array_equal(gpu.in_degrees().copy_to_host(), cpu.in_degrees())
    snap_c, snap_g = cpu.snapshot(), gpu.snapshot(csc=True)
    assert snap_g.device == "cuda" and snap_g.num_edge_ids == snap_c.num_edge_ids
    assert "csc" in snap_g._formats  # built by snapshot(csc=True), not by the comparison below
    for a, b in zip(snap_c.csr(), snap_g.csr()):
        np.testing.assert_array_equal(b.copy_to_host(), a)
    for a, b in zip(snap_c.csc(), snap_g.csc()):
        np.testing.assert_array_equal(b.copy_to_host(), a)


@pytest.mark.parametrize("seed", [0, 1])
def test_random_batches_match_the_cpu(seed):
    """Five growing batches then a heavy deletion. Both seeds: a bulk load and a growth rebuild (steps 0-1),
    insertions placed in place among tombstones with freed ids reused (2-4), a deletion that grows the
    free-id stack (5). Seed 0: tombstones revived by a batch whose placement overflows the root (4), the
    tombstones compacted and the array shrunk after a batch (5). Seed 1: tombstones revived in place (3),
    a placement whose root overflows with the tombstones counted (5). Further heavy deletions only repeat
    these."""
    rng = np.random.default_rng(seed)
    n = 24
    cpu, gpu = gk.DynamicGraph(n), gk.DynamicGraph(n, backend="cuda")
    assert type(gpu) is gk.DynamicGraph and gpu.device == "cuda"
    for step in range(6):
        heavy_deletes = step >= 5  # drive the tombstones past the compaction threshold
        ins = rng.integers(0, n, (2, 10 if heavy_deletes else 50))
        dele = rng.integers(0, n, (2, 200 if heavy_deletes else 20))
        edges = cpu.edges()
        if heavy_deletes and edges[0].size:
            dele = np.concatenate([dele, np.stack(edges[:2])[:, : edges[0].size // 2]], axis=1)
        want = cpu.apply(insert=(ins[0], ins[1]), delete=(dele[0], dele[1]))
        got = gpu.apply(insert=(cuda.to_device(ins[0]), cuda.to_device(ins[1])), delete=(dele[0], dele[1]))
        assert got == want
        _same(cpu, gpu)


@pytest.mark.fast
def test_edges_to_node_zero_and_from_the_last_node_and_id_reuse():
    n = 9
    cpu, gpu = gk.DynamicGraph(n), gk.DynamicGraph(n, backend="cuda")
    for dg in (cpu, gpu):
        dg.apply(insert=([8, 8, 0, 3], [0, 8, 0, 0]))
        dg.apply(delete=([8, 0], [0, 0]))
        dg.apply(insert=([1, 8, 0], [0, 0, 0]), delete=([5], [5]))
    _same(cpu, gpu)
    src, dst, eids = gpu.edges()
    assert sorted(eids.copy_to_host().tolist()) == sorted(cpu.edges()[2].tolist())


@pytest.mark.fast
def test_bad_batches_change_nothing():
    gpu = gk.DynamicGraph(5, backend="cuda")
    gpu.apply(insert=([0, 1], [1, 2]))
    with pytest.raises(ValueError, match="expected node ids < 5"):
        gpu.apply(insert=([0, 7], [1, 1]))
    with pytest.raises(ValueError, match="expected node ids < 5"):
        gpu.apply(insert=(cuda.to_device(np.array([0, 1])), cuda.to_device(np.array([9, 1]))))
    with pytest.raises(ValueError, match="equal lengths"):
        gpu.apply(delete=([0, 1], [1]))
    assert gpu.num_edges == 2 and gpu.snapshot().num_edges == 2


@pytest.mark.parametrize("symmetric", [pytest.param(False, marks=pytest.mark.fast), True])
def test_incremental_bfs_on_the_device(symmetric):
    """IncrementalBFS on a CUDA DynamicGraph: device levels equal a fresh search after every batch, the
    parents pass the Graph500 rules, and a large change falls back to a fresh search."""
    rng = np.random.default_rng(int(symmetric))
    n = 30
    dg = gk.DynamicGraph(n, backend="cuda")
    e = rng.integers(0, n, (2, 70))
    if symmetric:
        e = np.concatenate([e, e[::-1]], axis=1)
    dg.apply(insert=(e[0], e[1]))
    inc = gk.IncrementalBFS(dg, 0, symmetric=symmetric, fallback_fraction=1.0)
    for _ in range(2):  # a third batch of the same kind ran no kernel line the file does not run otherwise
        src, dst, _ = (a.copy_to_host() for a in dg.edges())
        pick = rng.integers(0, src.size, 4)
        new = rng.integers(0, n, (2, 4))
        dele, ins = (src[pick], dst[pick]), (new[0], new[1])
        if symmetric:
            dele = (np.concatenate(dele), np.concatenate(dele[::-1]))
            ins = (np.concatenate(ins), np.concatenate(ins[::-1]))
        dg.apply(insert=ins, delete=dele)
        assert not inc.update()["full_search"]
        snap = dg.snapshot().to("cpu")
        levels = inc.levels.copy_to_host()
        np.testing.assert_array_equal(levels, gk.bfs(snap, 0).levels)
        gk.graph500.validate(snap, 0, inc.parents.copy_to_host(), levels, directed=True)
    assert inc.full_searches == 1


@pytest.mark.parametrize("shape", [None, (1, 1), (2, 20)])
def test_incremental_bfs_through_a_hub_row(shape):
    """A hub whose out-row holds most of the graph: cutting its tree edge sends the whole subtree through
    the slot-parallel kernels (collection, re-attachment through the reverse rows, relaxation), one
    thread per slot of the hub's row, whatever the launch shape: the simulator's one block of 64 threads,
    one thread, or two blocks of 20 (no multiple of 32, fewer threads than the row has slots)."""
    from graphkern.kernels.cuda.launch import launch_shape

    n = 60
    leaves = np.arange(2, n)
    rng = np.random.default_rng(5)
    # 0 -> 1 -> every leaf; a few leaves also reachable from 0 through a longer path
    src = np.concatenate([[0], np.ones(leaves.size, np.int64), [0, 2, 3], rng.choice(leaves, 10)])
    dst = np.concatenate([[1], leaves, [2, 3, 4], rng.choice(leaves, 10)])
    dg = gk.DynamicGraph(n, backend="cuda")
    dg.apply(insert=(src, dst))
    with launch_shape(*shape) if shape else _no_shape():
        inc = gk.IncrementalBFS(dg, 0, fallback_fraction=1.0)
        for dele, ins in [(([0], [1]), ([5], [1])), (([5], [1]), ([0], [1])), (([0, 2], [1, 40]), ([3], [1]))]:
            dg.apply(insert=ins, delete=dele)
            report = inc.update()
            assert not report["full_search"]
            snap = dg.snapshot().to("cpu")
            levels = inc.levels.copy_to_host()
            np.testing.assert_array_equal(levels, gk.bfs(snap, 0).levels)
            gk.graph500.validate(snap, 0, inc.parents.copy_to_host(), levels, directed=True)


def _no_shape():
    import contextlib

    return contextlib.nullcontext()


def _apply_both(cpu, gpu, insert=None, delete=None):
    want = cpu.apply(insert=insert, delete=delete)
    got = gpu.apply(insert=insert, delete=delete)
    assert got == want
    _same(cpu, gpu)
    return got


@pytest.fixture(params=["default", "odd", "wide"])
def launch_shape(request, monkeypatch):
    """The dynamic graph's launches as the simulator gives them (one block of 64 threads); or several
    blocks of a size that is no multiple of 32, so that blocks loop over more windows and items than
    they have threads, with windows from 32 slots on merged by the grid-wide kernels; or every window
    merged by the grid-wide kernels."""
    from graphkern._cuda import pma

    wide_window = gk.tuning.current().gpma_wide_window
    if request.param == "odd":  # launch shapes the storage's launch helpers give (test doubles)
        monkeypatch.setattr(pma, "_grid", lambda n: (2, 24))
        monkeypatch.setattr(pma, "_blocks", lambda n, block: (3, 20))
        wide_window = 16
    elif request.param == "wide":
        wide_window = 0
    with gk.tuned(gpma_wide_window=wide_window):
        yield request.param


def test_skewed_inserts_climb_past_a_window_into_one_hub(launch_shape, monkeypatch):
    """Edges into one source row, far more than a leaf (and the windows just above it) can hold, are
    placed in place by a window several levels up (no rebuild), as on the CPU."""
    rng = np.random.default_rng(3)
    n = 80
    cpu, gpu = gk.DynamicGraph(n), gk.DynamicGraph(n, backend="cuda")
    base = rng.integers(0, n, (2, 250))
    _apply_both(cpu, gpu, insert=(base[0], base[1]))
    hub = rng.choice(n, 60, replace=False)
    assert hub.size > 4 * gpu._leaf
    rebuilds = []
    gpu._storage.rebuild = lambda *arrays: rebuilds.append(arrays)  # a rebuild would leave the graph wrong
    levels = []

    class Spy:  # records the kind and level of every merge launch
        def __init__(self, kernel):
            self.kernel = kernel

        def __getitem__(self, grid):
            launch = self.kernel[grid]
            return lambda *args: (levels.append((self.kernel is wide, args[3])), launch(*args))

    from graphkern.kernels.cuda import gpma

    wide = gpma.wide_spread
    monkeypatch.setattr(gpma, "rebalance_level", Spy(gpma.rebalance_level))
    monkeypatch.setattr(gpma, "wide_spread", Spy(wide))
    _apply_both(cpu, gpu, insert=(np.full(hub.size, 5), hub))
    assert not rebuilds and max(level for _, level in levels) >= 3, levels
    kinds = {is_wide for is_wide, _ in levels}
    assert kinds == {"default": {False}, "odd": {False, True}, "wide": {True}}[launch_shape], levels
    assert gpu.contains(np.full(hub.size, 5), hub).copy_to_host().all()


def test_sliding_window_duplicates_empty_batches_and_id_reuse(launch_shape):
    rng = np.random.default_rng(7)
    n = 40
    cpu, gpu = gk.DynamicGraph(n), gk.DynamicGraph(n, backend="cuda")
    assert _apply_both(cpu, gpu) == {"inserted": 0, "deleted": 0}
    empty = np.zeros(0, np.int64)
    assert _apply_both(cpu, gpu, insert=(empty, empty), delete=(empty, empty)) == {"inserted": 0, "deleted": 0}
    first = rng.integers(0, n, (2, 80))
    # every edge three times in one batch: counted once
    _apply_both(cpu, gpu, insert=(np.tile(first[0], 3), np.tile(first[1], 3)))
    window = [first]
    for _ in range(2):  # the first batch of the window, then one the loop added
        new = rng.integers(0, n, (2, 30))
        old = window.pop(0)[:, :30]
        # the oldest edges leave (some twice in the batch, some already gone), new ones arrive
        got = _apply_both(cpu, gpu, insert=(new[0], new[1]),
                          delete=(np.concatenate([old[0], old[0][:5]]), np.concatenate([old[1], old[1][:5]])))
        assert got["deleted"] <= 30
        window.append(new)
    # deleted edges come back with ids that were freed (max_edge_id does not grow)
    src, dst, _ = cpu.edges()
    gone = (src[:10].copy(), dst[:10].copy())
    _apply_both(cpu, gpu, delete=gone)
    top = gpu.max_edge_id
    assert _apply_both(cpu, gpu, insert=gone) == {"inserted": 10, "deleted": 0}
    assert gpu.max_edge_id == top
    # inserting what exists and deleting what does not are counted no-ops
    src, dst, _ = cpu.edges()
    present = set(zip(src.tolist(), dst.tolist()))
    absent = tuple(np.array([(s, d) for s in range(n) for d in range(n) if (s, d) not in present][:3]).T)
    assert _apply_both(cpu, gpu, insert=gone, delete=absent) == {"inserted": 0, "deleted": 0}


def test_threads_applying_batches_match_a_serial_replay():
    """Calls on one graph are serialized: two threads applying batches (on disjoint sources, so the final
    edge set does not depend on the interleaving) while a third takes snapshots end with the edges of a
    serial replay, and every snapshot is whole."""
    import threading

    n, writers = 16, 2
    rng = np.random.default_rng(7)
    # two batches a writer: an insertion, then an insertion with deletions; the reader snapshots for as
    # long as the writers run
    plans = [[(rng.choice(np.arange(t, n, writers), 12), rng.integers(0, n, 12)) for _ in range(2)]
             for t in range(writers)]
    gpu = gk.DynamicGraph(n, backend="cuda")
    assert gpu._lock is not None
    errors, stop = [], threading.Event()

    def writer(t):
        try:
            for i, (s, d) in enumerate(plans[t]):
                gpu.apply(insert=(s, d), delete=(s[::3], d[::3]) if i % 2 else None)
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    def reader():
        try:
            while not stop.is_set():
                snap = gpu.snapshot()
                indptr = snap.csr().indptr.copy_to_host()
                assert int(indptr[-1]) == snap.num_edges
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=writer, args=(t,)) for t in range(writers)]
    watcher = threading.Thread(target=reader)
    watcher.start()
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    stop.set()
    watcher.join()
    assert not errors, errors
    cpu = gk.DynamicGraph(n)
    for t in range(writers):
        for i, (s, d) in enumerate(plans[t]):
            cpu.apply(insert=(s, d), delete=(s[::3], d[::3]) if i % 2 else None)
    got = gpu.edges()
    want = cpu.edges()
    assert set(zip(got[0].copy_to_host().tolist(), got[1].copy_to_host().tolist())) == set(
        zip(want[0].tolist(), want[1].tolist()))
    np.testing.assert_array_equal(gpu.out_degrees().copy_to_host(), cpu.out_degrees())
