"""BFS from Graph500 search keys on the symmetric Kronecker graph and on a uniform random graph (TEPS as
Graph500 counts them), and on high-diameter graphs."""

import time

import numpy as np

import graphkern as gk


def _prepare_search(bench, src, dst, n, algorithm):
    """The simple undirected graph of the tuples (as ``gk.graph.kronecker`` builds it), a Graph500 key, one
    search to compile and validate before timing, and the key's traversed tuples for GTEPS."""
    bench.g = gk.graph.undirected(src, dst, n)
    bench.root = int(gk.graph500.search_keys(bench.g, 1)[0])
    res = gk.bfs(bench.g, bench.root, algorithm=algorithm)
    gk.graph500.validate(bench.g, bench.root, res.parents, res.levels)
    bench.nedge = gk.graph500.traversed_edges(src, dst, res.parents)


class BFS:
    params = [[16, 20], ["direction_optimizing", "top_down", "bottom_up", "spmsv"]]
    param_names = ["scale", "algorithm"]
    timeout = 900

    def setup(self, scale, algorithm):
        src, dst = gk.graph.kronecker_edges(scale, progress=False)
        _prepare_search(self, src, dst, 1 << scale, algorithm)

    def time_bfs(self, scale, algorithm):
        gk.bfs(self.g, self.root, algorithm=algorithm)

    def track_gteps(self, scale, algorithm):
        t0 = time.perf_counter()
        gk.bfs(self.g, self.root, algorithm=algorithm)
        return self.nedge / (time.perf_counter() - t0) / 1e9

    track_gteps.unit = "GTEPS"


class UniformBFS:
    """A uniform random graph: ``2**scale`` vertices, ``16 * 2**scale`` tuples (the graph GAP's ``-u`` makes),
    built as ``gk.graph.undirected`` builds it; no hubs, so the frontier grows evenly and levels are few."""

    params = [[18], ["direction_optimizing", "top_down", "bottom_up", "spmsv"]]
    param_names = ["scale", "algorithm"]
    timeout = 600

    def setup(self, scale, algorithm):
        n = 1 << scale
        src, dst = gk.graph.uniform_edges(n, 16 * n, seed=0)
        _prepare_search(self, src, dst, n, algorithm)

    def time_bfs(self, scale, algorithm):
        gk.bfs(self.g, self.root, algorithm=algorithm)

    def track_gteps(self, scale, algorithm):
        t0 = time.perf_counter()
        gk.bfs(self.g, self.root, algorithm=algorithm)
        return self.nedge / (time.perf_counter() - t0) / 1e9

    track_gteps.unit = "GTEPS"


class TopDownSharedMap:
    """Top-down on one shared visited map (compare-and-swap claims), the path for thread counts whose
    private maps would pass the knob ``bfs_private_maps_max_bytes``; tracked next to the default."""

    params = [[16, 20]]
    param_names = ["scale"]
    timeout = 900

    def setup(self, scale):
        BFS.setup(self, scale, "top_down")

    def time_bfs(self, scale):
        with gk.tuned(bfs_private_maps_max_bytes=0):
            gk.bfs(self.g, self.root, algorithm="top_down")


class HighDiameter:
    """Thousands of small levels, where each level's fixed cost shows: a 1000 x 1000 grid with shuffled ids
    and a path of 10^5 vertices (small levels run on one thread: the knob ``bfs_serial_level_edges``)."""

    params = [["grid", "path"], ["direction_optimizing", "top_down"]]
    param_names = ["graph", "algorithm"]
    timeout = 600

    def setup(self, graph, algorithm):
        if graph == "grid":
            side = 1000
            ids = np.arange(side * side).reshape(side, side)
            perm = np.random.default_rng(0).permutation(ids.size)
            a = perm[np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])]
            b = perm[np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])]
            self.root = int(perm[0])
        else:
            a = np.arange(100_000 - 1)
            b = a + 1
            self.root = 0
        self.g = gk.Graph.from_coo(np.concatenate([a, b]), np.concatenate([b, a]))
        self.g.csc()
        res = gk.bfs(self.g, self.root, algorithm=algorithm)  # compile, then validate before timing
        gk.graph500.validate(self.g, self.root, res.parents, res.levels)

    def time_bfs(self, graph, algorithm):
        gk.bfs(self.g, self.root, algorithm=algorithm)
