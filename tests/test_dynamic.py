"""DynamicGraph against a Python model: random insert/delete batches, every invariant after every batch."""

import numpy as np
import pytest
from graphkern.kernels.cpu import gpma
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

import graphkern as gk
from graphkern._cpu.pma import PackedStorage


def check_invariants(dg, model):
    """``model``: {(src, dst): id} of the live edges."""
    storage = dg._storage
    keys, row_off, leaf = storage.keys, storage.row_off, storage.leaf
    occupied = keys != gpma.KEY_NONE
    # sorted, ignoring gaps; every leaf packed at its start and not empty
    assert np.all(np.diff(keys[occupied]) > 0)
    for start in range(0, keys.size, leaf):
        block = occupied[start:start + leaf]
        assert block[0], "an empty leaf"
        assert not np.any(block[np.argmin(block):]) or block.all(), "a gap before an element in a leaf"
    # the root's density bound (walls, live edges and tombstones all take a slot)
    assert occupied.sum() <= storage.upper[storage.height]
    assert occupied.sum() == dg.num_nodes + dg.num_edges + storage.tombs
    # walls where row_off says, rows in between
    n = dg.num_nodes
    for r in range(n):
        assert keys[row_off[r + 1]] == (r << 32 | 0xFFFFFFFF)
    # no tombstone visible, ids unique and stable, degrees from effective updates only
    src, dst, ids = dg.edges()
    got = {(int(s), int(d)): int(e) for s, d, e in zip(src, dst, ids)}
    assert got == model
    # contains: every pair of nodes (up to 40 of them), live or not, against the model
    probe = np.arange(min(n := dg.num_nodes, 40), dtype=np.int64)
    ps, pd = np.repeat(probe, probe.size), np.tile(probe, probe.size)
    np.testing.assert_array_equal(dg.contains(ps, pd), [(int(a), int(b)) in model for a, b in zip(ps, pd)])
    assert len(set(ids.tolist())) == ids.size and (ids.size == 0 or ids.max() < dg.max_edge_id)
    assert dg.num_edges == len(model)
    out_deg = np.zeros(n, dtype=np.int64)
    in_deg = np.zeros(n, dtype=np.int64)
    for s, d in model:
        out_deg[s] += 1
        in_deg[d] += 1
    np.testing.assert_array_equal(dg.out_degrees(), out_deg)
    np.testing.assert_array_equal(dg.in_degrees(), in_deg)
    # the snapshot: CSR in packed order with the stable ids, and its reverse the transpose
    snap = dg.snapshot()
    assert snap.num_edges == len(model) and snap.num_edge_ids == dg.max_edge_id
    csr = snap.csr()
    rows = np.repeat(np.arange(n), np.diff(csr.indptr))
    assert {(int(s), int(d)): int(e) for s, d, e in zip(rows, csr.indices, csr.eids)} == model
    csc = snap.csc()
    cols = np.repeat(np.arange(n), np.diff(csc.indptr))
    assert {(int(s), int(d)): int(e) for s, d, e in zip(csc.indices, cols, csc.eids)} == model
    # built eagerly, the CSC is the same arrays
    dg._snapshot_cache = None
    eager = dg.snapshot(csc=True)
    assert "csc" in eager._formats
    for got, want in zip(eager.csc(), csc):
        np.testing.assert_array_equal(got, want)


def apply_to_model(model, free, next_id, insert, delete):
    """The reference semantics: deletions first, then insertions; repeats are no-ops."""
    deleted = 0
    for edge in sorted(set(zip(*delete))):
        if edge in model:
            free.append(model.pop(edge))
            deleted += 1
    inserted = 0
    for edge in sorted(set(zip(*insert))):
        if edge not in model:
            if free:
                model[edge] = free.pop()
            else:
                model[edge] = next_id[0]
                next_id[0] += 1
            inserted += 1
    return {"inserted": inserted, "deleted": deleted}


# a batch goes in place (searches, leaf merges, window rebalances) or, past capacity / gpma_merge_ratio keys,
# through one merge of the whole array; each path must keep every invariant on its own
PATHS = {"in_place": 0, "merge": 1 << 40}


@pytest.fixture(params=sorted(PATHS))
def batch_path(request):
    with gk.tuned(gpma_merge_ratio=PATHS[request.param]):
        yield request.param


@pytest.mark.parametrize("n,batches,size,seed", [(5, 60, 6, 0), (40, 40, 80, 1), (300, 25, 900, 2),
                                                 (1, 10, 3, 3)])
@pytest.mark.fast
def test_random_batches_against_the_model(n, batches, size, seed, batch_path):
    rng = np.random.default_rng(seed)
    dg = gk.DynamicGraph(n)
    model, free, next_id = {}, [], [0]
    check_invariants(dg, model)
    for b in range(batches):
        ins = (rng.integers(0, n, size), rng.integers(0, n, size))
        dels = (rng.integers(0, n, size // 2), rng.integers(0, n, size // 2))
        if b % 3 == 2:  # delete what exists, so that tombstones and compactions happen
            live = list(model)
            pick = rng.permutation(len(live))[: size]
            dels = (np.array([live[i][0] for i in pick], dtype=np.int64), np.array([live[i][1] for i in pick],
                                                                                   dtype=np.int64))
        want = apply_to_model(model, free, next_id, ins, dels)
        assert dg.apply(insert=ins, delete=dels) == want
        check_invariants(dg, model)


def test_degrees_on_two_threads_for_big_batches(batch_path):
    """From gpma_split_degrees_min keys on, the out- and in-degrees are added on two threads (one array
    each): the same degrees as the model's, through inserts, deletes and revived tombstones."""
    rng = np.random.default_rng(21)
    n, size = 50, 400
    dg = gk.DynamicGraph(n)
    model, free, next_id = {}, [], [0]
    with gk.tuned(gpma_split_degrees_min=0):
        for _ in range(12):
            ins = (rng.integers(0, n, size), rng.integers(0, n, size))
            dels = (rng.integers(0, n, size), rng.integers(0, n, size))
            assert dg.apply(insert=ins, delete=dels) == apply_to_model(model, free, next_id, ins, dels)
            check_invariants(dg, model)


def test_snapshot_csc_from_in_degrees_on_a_graph_that_splits_into_parts():
    """Above the sort's part size the CSC build from the kept in-degrees fills the last part's runs from
    their ends: it must equal the CSC that Graph.from_coo builds from the same edges and ids."""
    rng = np.random.default_rng(8)
    n, m = 5000, 150_000
    dg = gk.DynamicGraph(n)
    dg.apply(insert=(rng.integers(0, n, m), rng.integers(0, n, m)))
    dg.apply(delete=(rng.integers(0, n, m // 4), rng.integers(0, n, m // 4)),
             insert=(np.zeros(3000, np.int64), rng.integers(0, n, 3000)))  # node 0 becomes a hub
    src, dst, ids = dg.edges()
    want = gk.Graph.from_coo(src, dst, num_nodes=n, eids=ids, num_edge_ids=dg.max_edge_id).csc()
    for got, w in zip(dg.snapshot(csc=True).csc(), want):
        np.testing.assert_array_equal(got, w)


def test_edges_to_node_0_and_from_the_last_node_and_the_first_id():
    dg = gk.DynamicGraph(6)
    dg.apply(insert=([5, 3, 5], [0, 0, 5]))
    src, dst, ids = dg.edges()
    assert list(zip(src.tolist(), dst.tolist(), ids.tolist())) == [(3, 0, 0), (5, 0, 1), (5, 5, 2)]
    snap = dg.snapshot()
    assert sorted(snap.csr().eids.tolist()) == [0, 1, 2]  # the edge with id 0 is there (STGraph's off-by-one)


def test_ids_are_stable_and_reused():
    dg = gk.DynamicGraph(10)
    dg.apply(insert=(np.arange(9), np.arange(1, 10)))
    before = dict(zip(zip(*dg.edges()[:2]), dg.edges()[2].tolist()))
    dg.apply(delete=([2, 4], [3, 5]))
    dg.apply(insert=([9, 0], [0, 9]))
    after = dict(zip(zip(*dg.edges()[:2]), dg.edges()[2].tolist()))
    for edge, eid in before.items():
        if edge in after:
            assert after[(int(edge[0]), int(edge[1]))] == eid
    assert dg.max_edge_id == 9 and sorted(after.values()) == list(range(9))


def test_bad_batches_change_nothing():
    dg = gk.DynamicGraph(4)
    dg.apply(insert=([0, 1], [1, 2]))
    state = (dg._keys.copy(), dg._eids.copy(), dg.out_degrees())
    with pytest.raises(ValueError, match="node ids < 4"):
        dg.apply(insert=([0, 1], [3, 4]), delete=([0], [1]))
    with pytest.raises(ValueError, match="node ids >= 0"):
        dg.apply(delete=([-1], [0]))
    with pytest.raises(ValueError, match="equal lengths"):
        dg.apply(insert=([0, 1], [1]))
    with pytest.raises(TypeError, match="pair"):
        dg.apply(insert=np.zeros((2, 3)))
    assert np.array_equal(dg._keys, state[0]) and np.array_equal(dg._eids, state[1])
    assert np.array_equal(dg.out_degrees(), state[2])
    with pytest.raises(ValueError, match="key"):
        gk.DynamicGraph(1 << 31)


class DynamicGraphMachine(RuleBasedStateMachine):
    """Hypothesis stateful test: any sequence of batches keeps every invariant."""

    n = 12

    def __init__(self):
        super().__init__()
        self.dg = gk.DynamicGraph(self.n)
        self.model, self.free, self.next_id = {}, [], [0]

    edges = st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=30)

    @rule(ins=edges, dels=edges)
    def batch(self, ins, dels):
        to_arrays = lambda pairs: (np.array([p[0] for p in pairs], dtype=np.int64),
                                   np.array([p[1] for p in pairs], dtype=np.int64))
        want = apply_to_model(self.model, self.free, self.next_id, to_arrays(ins), to_arrays(dels))
        assert self.dg.apply(insert=to_arrays(ins), delete=to_arrays(dels)) == want

    @invariant()
    def consistent(self):
        check_invariants(self.dg, self.model)


DynamicGraphMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=15, deadline=None)
test_dynamic_graph_machine = DynamicGraphMachine.TestCase


class MergingDynamicGraphMachine(DynamicGraphMachine):
    """The same machine with every insertion batch merged with the whole array."""

    def __init__(self):
        self._merging = gk.tuned(gpma_merge_ratio=PATHS["merge"])
        self._merging.__enter__()
        super().__init__()

    def teardown(self):
        self._merging.__exit__(None, None, None)


MergingDynamicGraphMachine.TestCase.settings = settings(max_examples=40, stateful_step_count=15, deadline=None)
test_merging_dynamic_graph_machine = MergingDynamicGraphMachine.TestCase


def test_merge_without_memory_for_a_second_array_goes_in_place(monkeypatch):
    """A batch big enough for the merge, with too little free memory for its new arrays, is inserted in
    place instead: the same edges and ids."""
    rng = np.random.default_rng(11)
    n = 200
    base = rng.integers(0, n, (2, 3000))
    batch = rng.integers(0, n, (2, 150))  # small enough for the root to take in place
    results = []
    for free in (None, 0):
        dg = gk.DynamicGraph(n)
        dg.apply(insert=(base[0], base[1]))
        dg.apply(delete=(base[0][:500], base[1][:500]))
        # host memory as the storage sees it: unknown (nothing refused), or none free
        monkeypatch.setattr(PackedStorage, "free_memory", staticmethod(lambda free=free: free))
        with gk.tuned(gpma_batch_bytes_per_edge=0, gpma_merge_ratio=PATHS["merge"]):
            assert dg.apply(insert=(batch[0], batch[1]))["inserted"] > 0
        monkeypatch.undo()
        # the merge drops every tombstone; the in-place path leaves those it did not revive
        assert (dg._storage.tombs == 0) == (free is None)
        results.append(dg.edges())
    for got, want in zip(results[0], results[1]):
        np.testing.assert_array_equal(got, want)


def test_big_batch_keys_sorted_on_two_threads_equal_numpy_unique():
    """From gpma_parallel_sort_min keys on, a batch is split at a sampled pivot and each side sorted on its own
    thread: the keys must be NumPy's sorted distinct keys (repeats, and keys equal to the pivot,
    included)."""
    rng = np.random.default_rng(12)
    n = 1000
    size = gk.tuning.current().gpma_parallel_sort_min + 12345
    src, dst = rng.integers(0, n, size), rng.integers(0, n, size)
    dg = gk.DynamicGraph(n)
    np.testing.assert_array_equal(dg._storage.unique_keys(src, dst), np.unique(src << 32 | dst))
    # skewed batches: one edge repeated (one side takes all), one source, keys in descending order
    for s_, d_ in ((np.full(size, 7), np.full(size, 3)), (np.full(size, n - 1), dst),
                   (np.sort(src)[::-1].copy(), np.sort(dst)[::-1].copy())):
        np.testing.assert_array_equal(dg._storage.unique_keys(s_, d_), np.unique(s_ << 32 | d_))
    # and the batch goes in through the merge: every distinct edge once
    assert dg.apply(insert=(src, dst))["inserted"] == np.unique(src << 32 | dst).size


@pytest.fixture
def merging():
    """Every insertion batch merged with the whole array."""
    with gk.tuned(gpma_merge_ratio=PATHS["merge"]):
        yield


@pytest.mark.parametrize("num_nodes", [40, 400, 5000])
def test_merge_with_many_keys_in_one_leaf_and_tombstones(num_nodes, merging):
    """The merge stages an old leaf and places its batch keys by rank, writing finished leaves every
    INSERTS_PER_FLUSH keys: one row taking hundreds of new edges in one batch (all in the leaf of its
    wall), deleted edges coming back (tombstones staged out, the keys new) and existing edges repeated
    (dropped) must keep every invariant. Sizes give leaves of fewer than, exactly and more than one
    vector of slots."""
    rng = np.random.default_rng(7)
    dg = gk.DynamicGraph(num_nodes)
    model, free, next_id = {}, [], [0]

    def step(insert=((), ()), delete=((), ())):
        want = apply_to_model(model, free, next_id, insert, delete)
        assert dg.apply(insert=insert, delete=delete) == want
        check_invariants(dg, model)

    step(insert=(rng.integers(0, num_nodes, 3 * num_nodes), rng.integers(0, num_nodes, 3 * num_nodes)))
    hub = num_nodes // 3
    fan = np.arange(num_nodes)
    step(insert=(np.full(num_nodes, hub), fan))                           # the whole row in one leaf's range
    step(delete=(np.full(num_nodes // 2, hub), fan[::2]))                 # tombstones in the row
    step(insert=(np.concatenate([np.full(num_nodes, hub), [0, num_nodes - 1]]),
                 np.concatenate([fan[::-1], [num_nodes - 1, 0]])))       # revive, repeat, both ends
