"""Shared helpers: graphs built once per process, the JIT warmed up before anything is timed."""

import functools

import numpy as np


@functools.lru_cache(maxsize=4)
def kronecker_edges(scale):
    import graphkern as gk

    return gk.graph.kronecker_edges(scale, progress=False)


def assert_equal_arrays(got, want, what):
    for g, w in zip(got, want):
        if not np.array_equal(g, w):
            raise AssertionError(f"{what}: graphkern's result differs from the reference")
