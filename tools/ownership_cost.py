#!/usr/bin/env python3
"""What a Graph's ownership of its arrays costs: building a Graph500 graph with and without the copy.

``Graph.from_coo`` copies the caller's ``src`` and ``dst`` when they are already in the graph's id dtype
(otherwise the dtype conversion is the copy), so that no later change by the caller reaches a compiled
kernel. This times, on the symmetric Kronecker edge list of ``--scale``, ``from_coo`` plus the CSR
build (what a user's first kernel call pays) and the copy alone, medians of ``--repeat`` runs:

    python tools/ownership_cost.py --scale 22
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=22)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args(argv)

    import graphkern as gk

    src, dst = gk.graph.kronecker_edges(args.scale, progress=False)
    n = 1 << args.scale
    s = np.concatenate([src, dst]).astype(np.int32)
    d = np.concatenate([dst, src]).astype(np.int32)
    del src, dst

    def build():
        g = gk.Graph.from_coo(s, d, num_nodes=n)
        g.csr()

    def copy():
        s.copy()
        d.copy()

    build()  # compiles and warms up
    times = {"from_coo + csr": [], "the copy alone": []}
    for _ in range(args.repeat):
        for name, fn in (("from_coo + csr", build), ("the copy alone", copy)):
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"scale {args.scale}: {s.size:,} edges (int32), {n:,} nodes; medians of {args.repeat}")
    for name, t in med.items():
        print(f"  {name:<16} {t * 1e3:9.1f} ms")
    print(f"  copy share       {med['the copy alone'] / med['from_coo + csr']:9.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
