#!/usr/bin/env python3
"""Time a GNN's first training step in a new process: what a user waits for before training starts.

A first step pays for loading (or, with an empty cache, compiling) every kernel it runs; ``graphkern
compile`` fills the cache beforehand. Run it in a new process for each figure:

    python tools/first_step.py --model gat            # the cache as it is
    GRAPHKERN_CACHE_DIR=$(mktemp -d) python tools/first_step.py   # an empty cache: every kernel compiles

Prints the import time, the first step and the median of the next steps (seconds), one JSON line.
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", choices=["gat", "gcn", "sage"], default="gat")
    parser.add_argument("--nodes", type=int, default=4096)
    parser.add_argument("--degree", type=int, default=16)
    parser.add_argument("--features", type=int, default=64)
    parser.add_argument("--steps", type=int, default=5)
    args = parser.parse_args()

    start = time.perf_counter()
    import numpy as np
    import torch

    import graphkern as gk
    import graphkern.torch as gkt

    imported = time.perf_counter() - start
    rng = np.random.default_rng(0)
    n, e = args.nodes, args.nodes * args.degree
    src, dst = rng.integers(0, n, e), rng.integers(0, n, e)
    loops = np.arange(n)  # every node has an in-edge, as GraphConv and GATConv require
    g = gk.Graph.from_coo(np.concatenate([src, loops]), np.concatenate([dst, loops]), num_nodes=n)
    x = torch.randn(n, args.features)
    labels = torch.from_numpy(rng.integers(0, 8, n))
    if args.model == "gat":
        layers = torch.nn.ModuleList([gkt.GATConv(args.features, 8, num_heads=8), gkt.GATConv(64, 8, num_heads=1)])
    elif args.model == "gcn":
        layers = torch.nn.ModuleList([gkt.GraphConv(args.features, 64), gkt.GraphConv(64, 8)])
    else:
        layers = torch.nn.ModuleList([gkt.SAGEConv(args.features, 64, "mean"), gkt.SAGEConv(64, 8, "mean")])
    optimizer = torch.optim.Adam(layers.parameters(), lr=0.01)

    def step():
        t0 = time.perf_counter()
        h = layers[0](g, x).flatten(1).relu()
        out = layers[1](g, h).flatten(1)
        loss = torch.nn.functional.cross_entropy(out, labels)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return time.perf_counter() - t0

    first = step()
    rest = sorted(step() for _ in range(args.steps))
    print(json.dumps({"model": args.model, "nodes": n, "edges": int(g.num_edges), "import_s": round(imported, 3),
                      "first_step_s": round(first, 4), "next_step_median_s": round(rest[len(rest) // 2], 4)}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
