"""The dynamic graph: batch insertions and deletions against batch size, snapshots, IncrementalBFS."""

import time

import numpy as np

import graphkern as gk


def _base(num_nodes, num_edges, seed=0):
    rng = np.random.default_rng(seed)
    dg = gk.DynamicGraph(num_nodes)
    e = rng.integers(0, num_nodes, (2, num_edges))
    dg.apply(insert=(e[0], e[1]))
    return dg, rng


class Apply:
    """Insert a batch into a uniform graph of 2M edges on 2^18 nodes, then delete it again (the graph
    returns to its size, so every timed call sees the same state)."""

    params = [[100, 10_000, 1_000_000]]
    param_names = ["batch"]
    timeout = 900

    def setup(self, batch):
        self.dg, rng = _base(1 << 18, 2_000_000)
        self.batch = rng.integers(0, 1 << 18, (2, batch))
        got = self.dg.apply(insert=tuple(self.batch))  # compile, then check the counts add up
        if self.dg.apply(delete=tuple(self.batch))["deleted"] != got["inserted"]:
            raise AssertionError("a batch inserted and deleted again did not cancel out")

    def time_insert_then_delete(self, batch):
        self.dg.apply(insert=tuple(self.batch))
        self.dg.apply(delete=tuple(self.batch))

    def track_insert_updates_per_s(self, batch):
        t0 = time.perf_counter()
        self.dg.apply(insert=tuple(self.batch))
        seconds = time.perf_counter() - t0
        self.dg.apply(delete=tuple(self.batch))
        return batch / seconds

    track_insert_updates_per_s.unit = "updates/s"


class Snapshot:
    def setup(self):
        self.dg, _ = _base(1 << 17, 1_000_000, seed=1)
        snap = self.dg.snapshot()
        if snap.num_edges != self.dg.num_edges:
            raise AssertionError("snapshot lost edges")
        snap.csc()
        self.dg._snapshot_cache = None
        self.dg.snapshot(csc=True)  # compiles the transpose from the kept in-degrees

    def time_snapshot_with_csc(self):
        self.dg._snapshot_cache = None  # time the build, not the cache
        self.dg.snapshot(csc=True)

    def time_snapshot_then_lazy_csc(self):
        self.dg._snapshot_cache = None
        self.dg.snapshot().csc()


class IncrementalBFS:
    timeout = 900

    def setup(self):
        g = gk.graph.kronecker(18, progress=False)
        src, dst = g.edges()
        self.dg = gk.DynamicGraph(g.num_nodes)
        self.dg.apply(insert=(src, dst))
        self.root = int(gk.graph500.search_keys(g, 1)[0])
        self.inc = gk.IncrementalBFS(self.dg, self.root, symmetric=True)
        self.rng = np.random.default_rng(2)
        self.n = g.num_nodes
        self._change()
        self.inc.update()
        if not np.array_equal(self.inc.levels, gk.bfs(self.dg.snapshot(), self.root).levels):
            raise AssertionError("IncrementalBFS levels differ from a fresh search")

    def _change(self):
        # 500 directed insertions (250 undirected edges) and the deletion of as many random pairs
        a = self.rng.integers(0, self.n, (2, 250))
        self.dg.apply(insert=(np.concatenate([a[0], a[1]]), np.concatenate([a[1], a[0]])),
                      delete=(np.concatenate([a[1], a[0]]), np.concatenate([a[0], a[1]])))

    def time_apply_and_update_1000_changes(self):
        self._change()
        self.inc.update()
