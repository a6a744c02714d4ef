"""Time a RelGraphConv training step (forward and backward) in graphkern and in DGL, side by side.

Both layers hold the same parameters (graphkern's loads DGL's state_dict) and run on the same Kronecker graph
with 8 random relations; their outputs are checked equal first. Needs dgl (CPU) next to graphkern:
``PYTHONPATH=tools/from_checkout python tools/relgraphconv_vs_dgl.py [--scale 14] [--features 32]``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np


def _median_ms(fn, repeats: int) -> float:
    fn()  # warm-up: compilation, formats, caches
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times)) * 1e3


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=14)
    parser.add_argument("--features", type=int, default=32)
    parser.add_argument("--relations", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        import dgl
        import torch

    import graphkern as gk
    import graphkern.torch as gkt

    g = gk.graph.kronecker(args.scale, progress=False)
    src, dst = (np.array(a, dtype=np.int64) for a in g.edges()[:2])  # copies: edges() are read-only views
    dg = dgl.graph((torch.from_numpy(src), torch.from_numpy(dst)), num_nodes=g.num_nodes)
    torch.manual_seed(0)
    x = torch.randn(g.num_nodes, args.features)
    etypes = torch.randint(0, args.relations, (g.num_edges,))
    f = args.features
    print(f"Kronecker scale {args.scale}: {g.num_edges} edges, {f} features, {args.relations} relations")
    for regularizer in (None, "basis", "bdd"):
        theirs = dgl.nn.RelGraphConv(f, f, args.relations, regularizer=regularizer, num_bases=4)
        ours = gkt.RelGraphConv(f, f, args.relations, regularizer=regularizer, num_bases=4)
        ours.load_state_dict(theirs.state_dict())
        if not torch.allclose(ours(g, x, etypes), theirs(dg, x, etypes), rtol=1e-3, atol=1e-3):
            raise AssertionError(f"regularizer={regularizer}: graphkern's output differs from DGL's")

        def step(layer, graph):
            layer.zero_grad()
            layer(graph, x, etypes).square().mean().backward()

        ours_ms = _median_ms(lambda: step(ours, g), args.repeats)
        theirs_ms = _median_ms(lambda: step(theirs, dg), args.repeats)
        print(f"regularizer={str(regularizer):6s} graphkern {ours_ms:8.1f} ms   dgl {theirs_ms:8.1f} ms   "
              f"dgl/graphkern {theirs_ms / ours_ms:5.2f}")


if __name__ == "__main__":
    main()
