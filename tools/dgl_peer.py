#!/usr/bin/env python3
"""Full GNN training steps in graphkern.torch against DGL, with the same weights, in one process.

Used by ``tools/compare_peers.py --family dgl`` (the ``dgl`` family; needs ``dgl`` importable, else the
family is skipped with one line). Four node classifiers of two layers each, built twice from the same
code, once with ``graphkern.torch`` layers and once with ``dgl.nn`` layers:

- ``gcn``: GraphConv(F, hidden, relu), GraphConv(hidden, classes);
- ``gat``: GATConv(F, 8, 8 heads, elu) with the heads concatenated, GATConv(64, classes, 1 head);
- ``gin``: GINConv with an MLP (Linear, ReLU, Linear) and sum aggregation, twice;
- ``rgcn``: RelGraphConv with the basis regularizer (4 bases) over 8 relations, twice; the relation of
  edge ``e`` is drawn once from a seeded generator, one per edge id (the same ids in both libraries).

graphkern's model loads DGL's ``state_dict`` (``strict=True``), the first forward outputs are compared
(largest difference within 1e-4 of the largest output), then training steps (forward, cross-entropy over
every node, backward, Adam step) of graphkern and DGL alternate, one warm-up each, ``--repeat`` timed
steps each, medians compared. Both use numba's thread count for torch. GCN and GAT get one self-loop
per node (DGL refuses nodes without in-edges there); GIN and RGCN run on the graph as read.
"""

from __future__ import annotations

import os
import sys
import warnings

import numpy as np

FACEBOOK = "/work/shared/data/facebook_combined.txt"
MODELS = ("gcn", "gat", "gin", "rgcn")
TARGETS = {"gat": 2.0}  # DGL time / graphkern time; every other model: 1.0
RELATIONS, BASES, GAT_HEADS = 8, 4, 8
TOLERANCE = 1e-4


def add_arguments(parser) -> None:
    """The ``dgl`` family's options, on ``tools/compare_peers.py``'s parser."""
    group = parser.add_argument_group("dgl family (GNN training steps against DGL)")
    group.add_argument("--dgl-graph", nargs="+", default=["facebook", "kronecker"], metavar="GRAPH",
                       help="dgl: 'kronecker' (Graph500, --dgl-scale), 'facebook' (SNAP facebook_combined at "
                            f"{FACEBOOK}, skipped when absent) or the path of an edge-list file (read undirected)")
    group.add_argument("--dgl-scale", type=int, default=18, help="dgl: scale of the Kronecker graph")
    group.add_argument("--dgl-models", nargs="+", choices=MODELS, default=list(MODELS), help="dgl: models to run")
    group.add_argument("--dgl-features", type=int, default=64, help="dgl: input features per node")
    group.add_argument("--dgl-hidden", type=int, default=64, help="dgl: hidden width")
    group.add_argument("--dgl-classes", type=int, default=16, help="dgl: output classes")


def import_dgl():
    """``(dgl, None)``, or ``(None, reason)`` when it cannot be imported (a missing package or a broken one)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            import dgl
            import dgl.nn  # noqa: F401  (the layers live in a subpackage that imports torch)
    except Exception as exc:  # a DGL built for another torch fails with OSError or FileNotFoundError too
        return None, f"{type(exc).__name__}: {exc}".splitlines()[0]
    return dgl, None


def load_graphs(names, scale):
    """``[(label, symmetric Graph without self-loops)]`` for the names of ``--dgl-graph``."""
    import graphkern as gk

    graphs = []
    for name in names:
        if name == "kronecker":
            graphs.append((f"kronecker {scale}", gk.graph.kronecker(scale, progress=False)))
            continue
        path = FACEBOOK if name == "facebook" else name
        if not os.path.isfile(path):
            if name == "facebook":
                print(f"graph skipped: facebook ({FACEBOOK} not found)", file=sys.stderr)
                continue
            raise SystemExit(f"argument --dgl-graph: expected 'kronecker', 'facebook' or an edge-list file, "
                             f"found {name!r}")
        label = "facebook" if name == "facebook" else os.path.basename(path)
        graphs.append((label, gk.graph.read_edgelist(path, undirected=True, progress=False)))
    return graphs


def build_model(kind, layers, in_feats, hidden, classes):
    """One two-layer model of ``kind`` whose layers come from ``layers`` (``graphkern.torch`` or ``dgl.nn``)."""
    import torch
    from torch import nn

    def mlp(a, b, c):
        return nn.Sequential(nn.Linear(a, b), nn.ReLU(), nn.Linear(b, c))

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            if kind == "gcn":
                self.conv1 = layers.GraphConv(in_feats, hidden, activation=torch.relu)
                self.conv2 = layers.GraphConv(hidden, classes)
            elif kind == "gat":
                self.conv1 = layers.GATConv(in_feats, hidden // GAT_HEADS, GAT_HEADS, activation=nn.functional.elu)
                self.conv2 = layers.GATConv(hidden // GAT_HEADS * GAT_HEADS, classes, 1)
            elif kind == "gin":
                self.conv1 = layers.GINConv(mlp(in_feats, hidden, hidden), "sum")
                self.conv2 = layers.GINConv(mlp(hidden, hidden, classes), "sum")
            else:
                self.conv1 = layers.RelGraphConv(in_feats, hidden, RELATIONS, regularizer="basis", num_bases=BASES,
                                                 activation=torch.relu)
                self.conv2 = layers.RelGraphConv(hidden, classes, RELATIONS, regularizer="basis", num_bases=BASES)

        def forward(self, g, x, etypes=None):
            if kind == "rgcn":
                return self.conv2(g, self.conv1(g, x, etypes), etypes)
            h = self.conv1(g, x)
            if kind == "gat":
                return self.conv2(g, h.flatten(1)).mean(1)
            if kind == "gcn":
                return self.conv2(g, h)
            return self.conv2(g, torch.relu(h))

    return Net()


def compare_model(kind, g, dg, x, labels, etypes, args, dgl):
    """``(graphkern median s, DGL median s, relative difference of the first forward)`` for one model."""
    import torch

    import graphkern.torch as gkt
    from graphkern.bench import time_pair

    torch.manual_seed(0)
    theirs = build_model(kind, dgl.nn, x.shape[1], args.dgl_hidden, args.dgl_classes)
    ours = build_model(kind, gkt, x.shape[1], args.dgl_hidden, args.dgl_classes)
    ours.load_state_dict(theirs.state_dict(), strict=True)
    with torch.no_grad():
        want = theirs(dg, x, etypes)
        got = ours(g, x, etypes)
    difference = float((got - want).abs().max() / want.abs().max().clamp_min(1e-30))

    def trainer(model, graph):
        optimiser = torch.optim.Adam(model.parameters(), lr=0.01)

        def step():
            optimiser.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(graph, x, etypes), labels)
            loss.backward()
            optimiser.step()

        return step

    ours_s, theirs_s = time_pair(trainer(ours, g), trainer(theirs, dg), args.repeat)
    return ours_s, theirs_s, difference


def run_family(args, result_cls) -> list:
    """The ``dgl`` family: prints its own table and returns one ``result_cls`` row per graph and model."""
    dgl, reason = import_dgl()
    if dgl is None:
        print(f"family skipped: dgl (not importable: {reason}; pip install dgl)", file=sys.stderr)
        return []
    import numba
    import torch

    threads = max(1, numba.get_num_threads())
    torch.set_num_threads(threads)
    print(f"# dgl: DGL {dgl.__version__}, torch {torch.__version__}, {threads} threads for both; training step = "
          f"forward, cross-entropy over every node, backward, Adam step; F={args.dgl_features}, hidden "
          f"{args.dgl_hidden}, {args.dgl_classes} classes; GAT {GAT_HEADS} heads of {args.dgl_hidden // GAT_HEADS} "
          f"then 1; RGCN basis ({BASES} bases) over {RELATIONS} relations; same weights (DGL's state_dict loaded "
          f"strictly); first forwards agree within {TOLERANCE:g}; median of {args.repeat} steps each after a "
          f"warm-up, alternating; ratio = DGL time / graphkern time; targets: GAT >= 2.0x, others >= 1.0x")
    header = (f"{'graph':<14} {'edges':>11} {'model':<5} {'graphkern':>13} {'dgl':>13} {'ratio':>7}  "
              f"{'target':<7} {'':<8} fwd diff")
    print(f"{header}\n{'-' * len(header)}", flush=True)  # then a row as each model finishes (minutes apart)
    results = []
    rng = np.random.default_rng(0)
    for label, base in load_graphs(args.dgl_graph, args.dgl_scale):
        looped = base.add_self_loop()
        x = torch.from_numpy(rng.standard_normal((base.num_nodes, args.dgl_features), dtype=np.float32))
        labels = torch.from_numpy(rng.integers(0, args.dgl_classes, base.num_nodes))
        etypes = torch.from_numpy(rng.integers(0, RELATIONS, base.num_edges))
        pairs = {}
        for kind in args.dgl_models:
            g = looped if kind in ("gcn", "gat") else base
            if id(g) not in pairs:
                pairs[id(g)] = (g, g.to_dgl())
            g, dg = pairs[id(g)]
            ours_s, theirs_s, difference = compare_model(kind, g, dg, x, labels, etypes if kind == "rgcn" else None,
                                                         args, dgl)
            target = TARGETS.get(kind, 1.0)
            ratio = theirs_s / ours_s
            check = "ok" if difference <= TOLERANCE else "MISMATCH"
            extra = {"graph": label, "nodes": g.num_nodes, "edges": g.num_edges, "forward_rel_diff": difference,
                     "target": target, "met": ratio >= target}
            results.append(result_cls("dgl", f"{label}: {kind}", args.dgl_features, ours_s,
                                      {f"dgl {dgl.__version__}": theirs_s}, check, extra=extra))
            print(f"{label:<14} {g.num_edges:>11,} {kind:<5} {ours_s * 1e3:>10.1f} ms "
                  f"{theirs_s * 1e3:>10.1f} ms {ratio:>6.2f}x  >= {target:.1f}x "
                  f"{'met' if ratio >= target else 'NOT MET':<8} {difference:.1e}"
                  f"{'' if check == 'ok' else ' MISMATCH'}", flush=True)
    return results
