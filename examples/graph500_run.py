"""A Graph500 BFS run from Python: build the Kronecker graph (kernel 1), search from the 64 reference
keys (kernel 2), validate every tree by the five rules, and print the reference's statistics block.

    python examples/graph500_run.py                 # scale 16, seconds
    python examples/graph500_run.py --scale 20      # the default benchmark size (minutes on 2 cores)

The same as ``graphkern graph500 --scale N``, written out so the steps can be read and changed.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import graphkern as gk


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scale", type=int, default=16)
    parser.add_argument("--edgefactor", type=int, default=16)
    parser.add_argument("--roots", type=int, default=64)
    parser.add_argument("--algorithm", default="direction_optimizing", choices=list(gk.traversal.ALGORITHMS))
    args = parser.parse_args(argv)

    # the reference's edge list (generation is not timed), then kernel 1: a symmetric graph without
    # self-loops or duplicates, with the in-edges bottom-up steps read
    src, dst = gk.graph.kronecker_edges(args.scale, args.edgefactor)
    start = time.perf_counter()
    keep = src != dst
    g = gk.Graph.from_coo(np.r_[src[keep], dst[keep]], np.r_[dst[keep], src[keep]],
                          num_nodes=1 << args.scale).simple()
    g.csc()
    construction = time.perf_counter() - start
    print(f"graph: {g.num_src:,} vertices, {g.num_edges:,} directed edges; kernel 1 {construction:.2f} s")

    keys = gk.graph500.search_keys(g, args.roots)
    gk.bfs(g, int(keys[0]), algorithm=args.algorithm)  # compile before timing
    teps = []
    for key in keys.tolist():
        t0 = time.perf_counter()
        result = gk.bfs(g, key, algorithm=args.algorithm)
        seconds = time.perf_counter() - t0
        gk.graph500.validate(g, key, result.parents)  # raises with the rule and the vertex on failure
        edges = gk.graph500.traversed_edges(src, dst, result.parents)
        teps.append(edges / seconds)
    teps = np.array(teps)
    harmonic = len(teps) / np.sum(1.0 / teps)
    print(f"{len(keys)} searches validated; TEPS min {teps.min():.3e}, median {np.median(teps):.3e}, "
          f"harmonic mean {harmonic:.3e}")
    return {"harmonic_mean_teps": harmonic, "searches": len(keys)}


if __name__ == "__main__":
    main()
