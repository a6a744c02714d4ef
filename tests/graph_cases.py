"""The labelled registry of graphs that break kernels (docs/design.md, section 'Test graph registry').

Each case is a function returning ``(src, dst, num_nodes)`` with ``num_nodes`` an int or a
``(num_src, num_dst)`` pair. Tests parametrize over ``CASES`` (and over int32/int64 ids).
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

# the real-world data files (SNAP ego-Facebook, bitcoin-alpha) are not part of the repository: they are
# read from $GRAPHKERN_TEST_DATA, else from the folder named below (beside the checkout); the tests
# that need them skip when they are absent
DATA_DIR = Path(os.environ.get("GRAPHKERN_TEST_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data")
FACEBOOK = DATA_DIR / "facebook_combined.txt"
BITCOIN = DATA_DIR / "soc-sign-bitcoinalpha.csv"


def empty():
    return np.zeros(0, np.int64), np.zeros(0, np.int64), 0


def no_edges():
    return np.zeros(0, np.int64), np.zeros(0, np.int64), 7


def isolated_and_zero_in_degree():
    # node 0 only sends, node 3 only receives, nodes 4..5 are isolated
    return np.array([0, 0, 1, 2]), np.array([1, 3, 3, 1]), 6


def self_loops():
    return np.array([0, 1, 1, 2, 2]), np.array([0, 1, 2, 2, 0]), 3


def multi_edges():
    return np.array([0, 0, 0, 1, 1, 2, 0]), np.array([1, 1, 1, 2, 2, 0, 1]), 3


def hub():
    # a star: node 0 points to 10**5 leaves, and every third leaf points back
    leaves = np.arange(1, 100_001)
    back = leaves[::3]
    src = np.concatenate([np.zeros(leaves.size, np.int64), back])
    dst = np.concatenate([leaves, np.zeros(back.size, np.int64)])
    return src, dst, 100_001


def bipartite():
    rng = np.random.default_rng(3)
    return rng.integers(0, 40, 300), rng.integers(0, 25, 300), (40, 25)


def unsorted_random():
    rng = np.random.default_rng(7)
    return rng.integers(0, 500, 5000), rng.integers(0, 500, 5000), 500


def kronecker_10():
    import graphkern as gk

    src, dst = gk.graph.kronecker_edges(10)
    return src, dst, 1024


def path_long():
    n = 100_000
    return np.arange(n - 1), np.arange(1, n), n


CASES = {
    "empty": empty,
    "no_edges": no_edges,
    "isolated_and_zero_in_degree": isolated_and_zero_in_degree,
    "self_loops": self_loops,
    "multi_edges": multi_edges,
    "hub": hub,
    "bipartite": bipartite,
    "unsorted_random": unsorted_random,
    "kronecker_10": kronecker_10,
    "path_long": path_long,
}


def facebook_edges():
    """SNAP ego-Facebook as (src, dst) each undirected edge once; None when the file is absent."""
    if not FACEBOOK.exists():
        return None
    data = np.loadtxt(FACEBOOK, dtype=np.int64, comments="#")
    return data[:, 0], data[:, 1]
