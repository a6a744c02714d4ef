"""Graph500 Kronecker generation."""

import graphkern as gk


class KroneckerEdges:
    params = [[14, 18]]
    param_names = ["scale"]
    timeout = 600

    def setup(self, scale):
        gk.graph.kronecker_edges(8)  # compile (or load the cache) outside the timing
        if scale == 14:
            src, dst = gk.graph.kronecker_edges(10)
            assert (int(src[0]), int(dst[0])) == (299, 797)

    def time_kronecker_edges(self, scale):
        gk.graph.kronecker_edges(scale, progress=False)

    def track_edges_per_second(self, scale):
        import time

        t0 = time.perf_counter()
        gk.graph.kronecker_edges(scale, progress=False)
        return (16 << scale) / (time.perf_counter() - t0)

    track_edges_per_second.unit = "edges/s"
