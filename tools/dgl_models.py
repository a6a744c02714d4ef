#!/usr/bin/env python3
"""Four GNNs as DGL's own examples build them, trained in graphkern.torch and in DGL with the same weights.

Used by ``tools/compare_peers.py --family dgl-models`` (needs ``dgl`` importable, else the family is skipped
with one line). Each model is written once and built twice, its layers taken from ``dgl.nn`` or from
``graphkern.torch``:

- ``gin``: graph classification on a batch of small random graphs, as DGL's GIN example writes it (four
  GINConv layers with a two-layer MLP and batch norm, sum aggregation, a SumPooling readout of every
  layer's output, dropout 0.5);
- ``rgcn``: entity classification, two RelGraphConv layers with the basis regularizer and the self-loop
  weight, a node embedding as input, edge norms ``1 / in-degree`` (``dgl.norm_by_dst``);
- ``sage``: three SAGEConv layers (mean) trained on blocks sampled by DGL's ``NeighborSampler`` (fanouts
  10, 10, 10); graphkern reads each sampled block with ``Graph.from_dgl`` (a block becomes a bipartite
  graph with DGL's edge ids, destination nodes first among the sources, as in DGL), and that conversion
  is counted in graphkern's step;
- ``gat``: node classification, GATConv with 8 heads of 8 (ELU, heads joined) then one head averaged,
  feature and attention dropout 0.6, on a random graph with a self-loop per node.

For each model: graphkern's model loads DGL's ``state_dict`` (``strict=True``) and the first forward
outputs are compared (eval mode, largest difference relative to the largest output, within 1e-4); then
the two train in lockstep (forward, cross-entropy, backward, Adam), the torch seed set to the step number
before each step so that both draw the same dropout masks, and the losses are compared (within 1e-3
relative). Three figures per model, graphkern against DGL, ratio = DGL's time / graphkern's time:

- ``step``: the median training step, the two libraries alternating;
- ``graph``: the sparse calls the model's layers make, through each library's ``dgl.ops`` names on the
  same inputs, forward and backward (``copy_u_sum`` for GIN; ``gather_mm`` over the edges and
  ``copy_e_sum`` for RGCN, as each library's RelGraphConv calls them; ``copy_u_mean`` on each block for
  GraphSAGE; ``u_add_v``, leaky ReLU, ``edge_softmax`` and ``u_mul_e_sum`` for GAT), apart from the dense
  layers;
- ``first``: the first training step of a new model in a new process (this script run with
  ``--first-step``), after one process of the same kind has filled graphkern's kernel cache; the import,
  the data and the model are not counted, the blocks' conversion is.

    DGLBACKEND=pytorch python tools/compare_peers.py --family dgl-models
    DGLBACKEND=pytorch python tools/dgl_models.py --first-step gat --lib graphkern   # one first step, JSON
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import numpy as np

MODELS = ("gin", "rgcn", "sage", "gat")
TARGETS = {"step": {"gat": 2.0}, "graph": {}, "first": {}}  # DGL time / graphkern time
DEFAULT_TARGET = {"step": 1.0, "graph": 2.0, "first": 1 / 1.5}
TOLERANCE = 1e-4  # the first forward
LOSS_TOLERANCE = 1e-3  # the losses of the lockstep steps: float32 rounding grows through Adam and batch norm

# sizes: a few seconds a model on 2 cores, the shapes of the datasets DGL's examples use
GIN_GRAPHS, GIN_NODES, GIN_DEGREE, GIN_FEATURES, GIN_HIDDEN, GIN_CLASSES = 128, (10, 40), 4, 16, 64, 2
RGCN_NODES, RGCN_EDGES, RGCN_RELATIONS, RGCN_HIDDEN, RGCN_CLASSES, RGCN_LABELLED = 8000, 60000, 32, 16, 4, 400
SAGE_NODES, SAGE_DEGREE, SAGE_FEATURES, SAGE_HIDDEN, SAGE_CLASSES = 30000, 15, 64, 64, 16
SAGE_FANOUTS, SAGE_BATCH, SAGE_BATCHES = (10, 10, 10), 512, 4
GAT_NODES, GAT_DEGREE, GAT_FEATURES, GAT_HIDDEN, GAT_HEADS, GAT_CLASSES = 3000, 8, 256, 8, (8, 1), 7


def add_arguments(parser) -> None:
    """The ``dgl-models`` family's options, on ``tools/compare_peers.py``'s parser."""
    group = parser.add_argument_group("dgl-models family (four of DGL's example models against DGL)")
    group.add_argument("--dm-models", nargs="+", choices=MODELS, default=list(MODELS), help="dgl-models: models to run")
    group.add_argument("--dm-steps", type=int, default=12, help="dgl-models: timed training steps per library")
    group.add_argument(
        "--dm-first",
        type=int,
        default=3,
        help="dgl-models: new processes per library for the first step (after one that fills the cache)",
    )


def import_dgl():
    """``(dgl, None)``, or ``(None, reason)``: tools/dgl_peer.py's, loaded by path (this script also runs
    on its own, in the new processes of the first step, outside any package)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dgl_peer.py")
    spec = importlib.util.spec_from_file_location("_graphkern_tools_dgl_peer", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.import_dgl()


# ----------------------------------------------------------------------------------- the models


def build_model(kind, layers):
    """DGL's example model of ``kind``, its layers from ``layers`` (``dgl.nn`` or ``graphkern.torch``)."""
    from torch import nn
    from torch.nn import functional as F

    if kind == "gin":

        class MLP(nn.Module):
            def __init__(self, input_dim, hidden_dim, output_dim):
                super().__init__()
                self.linears = nn.ModuleList(
                    [nn.Linear(input_dim, hidden_dim, bias=False), nn.Linear(hidden_dim, output_dim, bias=False)]
                )
                self.batch_norm = nn.BatchNorm1d(hidden_dim)

            def forward(self, x):
                return self.linears[1](F.relu(self.batch_norm(self.linears[0](x))))

        class GIN(nn.Module):
            def __init__(self, input_dim, hidden_dim, output_dim, num_layers=5):
                super().__init__()
                self.ginlayers, self.batch_norms = nn.ModuleList(), nn.ModuleList()
                for layer in range(num_layers - 1):
                    mlp = MLP(input_dim if layer == 0 else hidden_dim, hidden_dim, hidden_dim)
                    self.ginlayers.append(layers.GINConv(mlp, learn_eps=False))
                    self.batch_norms.append(nn.BatchNorm1d(hidden_dim))
                self.linear_prediction = nn.ModuleList(
                    [nn.Linear(input_dim if layer == 0 else hidden_dim, output_dim) for layer in range(num_layers)]
                )
                self.drop = nn.Dropout(0.5)
                self.pool = layers.SumPooling()

            def forward(self, g, h):
                hidden_rep = [h]
                for i, layer in enumerate(self.ginlayers):
                    h = F.relu(self.batch_norms[i](layer(g, h)))
                    hidden_rep.append(h)
                score_over_layer = 0
                for i, h in enumerate(hidden_rep):
                    score_over_layer = score_over_layer + self.drop(self.linear_prediction[i](self.pool(g, h)))
                return score_over_layer

        return GIN(GIN_FEATURES, GIN_HIDDEN, GIN_CLASSES)

    if kind == "rgcn":

        class RGCN(nn.Module):
            def __init__(self, num_nodes, h_dim, out_dim, num_rels):
                super().__init__()
                self.emb = nn.Embedding(num_nodes, h_dim)
                self.conv1 = layers.RelGraphConv(
                    h_dim, h_dim, num_rels, regularizer="basis", num_bases=num_rels, self_loop=True
                )
                self.conv2 = layers.RelGraphConv(
                    h_dim, out_dim, num_rels, regularizer="basis", num_bases=num_rels, self_loop=True
                )

            def forward(self, g, etypes, norm):
                h = F.relu(self.conv1(g, self.emb.weight, etypes, norm))
                return self.conv2(g, h, etypes, norm)

        return RGCN(RGCN_NODES, RGCN_HIDDEN, RGCN_CLASSES, RGCN_RELATIONS)

    if kind == "sage":

        class SAGE(nn.Module):
            def __init__(self, in_size, hid_size, out_size):
                super().__init__()
                self.layers = nn.ModuleList(
                    [
                        layers.SAGEConv(in_size, hid_size, "mean"),
                        layers.SAGEConv(hid_size, hid_size, "mean"),
                        layers.SAGEConv(hid_size, out_size, "mean"),
                    ]
                )
                self.dropout = nn.Dropout(0.5)

            def forward(self, blocks, x):
                h = x
                for i, (layer, block) in enumerate(zip(self.layers, blocks)):
                    h = layer(block, h)
                    if i != len(self.layers) - 1:
                        h = self.dropout(F.relu(h))
                return h

        return SAGE(SAGE_FEATURES, SAGE_HIDDEN, SAGE_CLASSES)

    class GAT(nn.Module):
        def __init__(self, in_size, hid_size, out_size, heads):
            super().__init__()
            self.gat_layers = nn.ModuleList(
                [
                    layers.GATConv(in_size, hid_size, heads[0], feat_drop=0.6, attn_drop=0.6, activation=F.elu),
                    layers.GATConv(hid_size * heads[0], out_size, heads[1], feat_drop=0.6, attn_drop=0.6),
                ]
            )

        def forward(self, g, inputs):
            h = inputs
            for i, layer in enumerate(self.gat_layers):
                h = layer(g, h)
                h = h.mean(1) if i == 1 else h.flatten(1)
            return h

    return GAT(GAT_FEATURES, GAT_HIDDEN, GAT_CLASSES, GAT_HEADS)


# ----------------------------------------------------------------------------------- the data


def _random_edges(rng, n, e):
    return rng.integers(0, n, e), rng.integers(0, n, e)


def make_data(kind, seed=0):
    """The arrays a model trains on (NumPy, the same for both libraries), drawn from ``seed``."""
    rng = np.random.default_rng(seed)
    if kind == "gin":
        sizes = rng.integers(GIN_NODES[0], GIN_NODES[1] + 1, GIN_GRAPHS)
        parts = []
        for n in sizes.tolist():
            u, v = _random_edges(rng, n, n * GIN_DEGREE // 2)
            parts.append((np.concatenate([u, v]), np.concatenate([v, u]), n))  # undirected, as the datasets are
        x = rng.standard_normal((int(sizes.sum()), GIN_FEATURES), dtype=np.float32)
        return {"parts": parts, "x": x, "labels": rng.integers(0, GIN_CLASSES, GIN_GRAPHS)}
    if kind == "rgcn":
        src, dst = _random_edges(rng, RGCN_NODES, RGCN_EDGES)
        in_degree = np.bincount(dst, minlength=RGCN_NODES)
        norm = (1.0 / np.maximum(in_degree[dst], 1)).astype(np.float32)[:, None]  # dgl.norm_by_dst
        return {
            "src": src,
            "dst": dst,
            "etypes": rng.integers(0, RGCN_RELATIONS, RGCN_EDGES),
            "norm": norm,
            "labelled": rng.choice(RGCN_NODES, RGCN_LABELLED, replace=False),
            "labels": rng.integers(0, RGCN_CLASSES, RGCN_NODES),
        }
    if kind == "sage":
        u, v = _random_edges(rng, SAGE_NODES, SAGE_NODES * SAGE_DEGREE // 2)
        seeds = rng.permutation(SAGE_NODES)[: SAGE_BATCH * SAGE_BATCHES].reshape(SAGE_BATCHES, SAGE_BATCH)
        return {
            "src": np.concatenate([u, v]),
            "dst": np.concatenate([v, u]),
            "seeds": seeds,
            "x": rng.standard_normal((SAGE_NODES, SAGE_FEATURES), dtype=np.float32),
            "labels": rng.integers(0, SAGE_CLASSES, SAGE_NODES),
        }
    src, dst = _random_edges(rng, GAT_NODES, GAT_NODES * GAT_DEGREE)
    return {
        "src": src,
        "dst": dst,
        "x": rng.standard_normal((GAT_NODES, GAT_FEATURES), dtype=np.float32),
        "labels": rng.integers(0, GAT_CLASSES, GAT_NODES),
        "train": rng.random(GAT_NODES) < 0.2,
    }


def dgl_graphs(kind, data, dgl):
    """DGL's graph (or, for ``sage``, a list of sampled block lists, one per batch), built as its examples do."""
    import torch

    if kind == "gin":
        return dgl.batch(
            [dgl.graph((torch.from_numpy(u), torch.from_numpy(v)), num_nodes=n) for u, v, n in data["parts"]]
        )
    if kind == "rgcn":
        return dgl.graph((torch.from_numpy(data["src"]), torch.from_numpy(data["dst"])), num_nodes=RGCN_NODES)
    if kind == "sage":
        g = dgl.graph((torch.from_numpy(data["src"]), torch.from_numpy(data["dst"])), num_nodes=SAGE_NODES)
        sampler = dgl.dataloading.NeighborSampler(list(SAGE_FANOUTS))
        dgl.seed(0)  # the same blocks in every process (DGL's sampler has its own generator)
        return [sampler.sample(g, torch.from_numpy(seeds)) for seeds in data["seeds"]]
    g = dgl.graph((torch.from_numpy(data["src"]), torch.from_numpy(data["dst"])), num_nodes=GAT_NODES)
    return dgl.add_self_loop(g)


def graphkern_graphs(kind, data, sampled=None):
    """graphkern's graph for ``kind``, from the same arrays; for ``sage``, a function converting a batch's
    blocks (``sampled`` from :func:`dgl_graphs`), called in every step, as a user would."""
    import graphkern as gk

    if kind == "gin":
        return gk.batch([gk.Graph.from_coo(u, v, num_nodes=n) for u, v, n in data["parts"]])
    if kind == "rgcn":
        return gk.Graph.from_coo(data["src"], data["dst"], num_nodes=RGCN_NODES)
    if kind == "sage":
        return lambda blocks: [gk.Graph.from_dgl(b) for b in blocks]
    return gk.Graph.from_coo(data["src"], data["dst"], num_nodes=GAT_NODES).add_self_loop()


def make_step(kind, model, graph, data, convert=None):
    """``step(i) -> loss`` (seeded with ``i``, for the same dropout masks) and ``predict() -> logits``."""
    import torch
    from torch.nn import functional as F

    optimiser = torch.optim.Adam(model.parameters(), lr=0.01)
    t = {key: torch.from_numpy(value) for key, value in data.items() if isinstance(value, np.ndarray)}

    if kind == "gin":

        def forward(_):
            return F.cross_entropy(model(graph, t["x"]), t["labels"])
    elif kind == "rgcn":

        def forward(_):
            logits = model(graph, t["etypes"], t["norm"])
            return F.cross_entropy(logits[t["labelled"]], t["labels"][t["labelled"]])
    elif kind == "sage":

        def forward(i):
            input_nodes, output_nodes, blocks = graph[i % len(graph)]
            blocks = convert(blocks) if convert is not None else blocks
            return F.cross_entropy(model(blocks, t["x"][input_nodes]), t["labels"][output_nodes])
    else:

        def forward(_):
            logits = model(graph, t["x"])
            return F.cross_entropy(logits[t["train"]], t["labels"][t["train"]])

    def step(i):
        torch.manual_seed(i)
        model.train()
        loss = forward(i)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        return loss.item()

    def predict():
        model.eval()
        with torch.no_grad():
            if kind == "gin":
                return model(graph, t["x"])
            if kind == "rgcn":
                return model(graph, t["etypes"], t["norm"])
            if kind == "sage":
                input_nodes, _, blocks = graph[0]
                return model(convert(blocks) if convert is not None else blocks, t["x"][input_nodes])
            return model(graph, t["x"])

    return step, predict


# ----------------------------------------------------------------------------------- the graph part


def graph_part(kind, ops, graph, data, blocks_of=None):
    """``run()``: the sparse calls ``kind``'s layers make, through ``ops`` (``dgl.ops`` or
    ``graphkern.torch.ops``), forward and backward, on fixed inputs drawn from seed 1."""
    import torch
    from torch.nn import functional as F

    gen = torch.Generator().manual_seed(1)

    def leaf(*shape):
        return torch.randn(*shape, generator=gen).requires_grad_()

    calls = []  # (function of the leaves, leaves)
    if kind == "gin":
        n = int(data["x"].shape[0])
        for width in (GIN_FEATURES, GIN_HIDDEN, GIN_HIDDEN, GIN_HIDDEN):  # the input of each GINConv
            calls.append((lambda x: ops.copy_u_sum(graph, x), (leaf(n, width),)))
    elif kind == "rgcn":
        src = torch.from_numpy(data["src"])
        etypes = torch.from_numpy(data["etypes"])
        norm = torch.from_numpy(data["norm"])
        gathered = ops.__name__.startswith("dgl")  # DGL's message function reads x[src]; graphkern gathers inside
        for out in (RGCN_HIDDEN, RGCN_CLASSES):

            def relational(x, w):
                messages = (
                    ops.gather_mm(x[src], w, idx_b=etypes) if gathered else ops.gather_mm(x, w, idx_a=src, idx_b=etypes)
                )
                return ops.copy_e_sum(graph, messages * norm)

            calls.append((relational, (leaf(RGCN_NODES, RGCN_HIDDEN), leaf(RGCN_RELATIONS, RGCN_HIDDEN, out))))
    elif kind == "sage":
        blocks = blocks_of
        widths = []
        for a, b in ((SAGE_FEATURES, SAGE_HIDDEN), (SAGE_HIDDEN, SAGE_HIDDEN), (SAGE_HIDDEN, SAGE_CLASSES)):
            widths.append(b if a > b else a)  # both libraries transform first when that narrows the features
        for block, width in zip(blocks, widths):
            calls.append(
                (
                    lambda x, block=block: ops.copy_u_mean(block, x),
                    (leaf(block.num_src_nodes() if hasattr(block, "num_src_nodes") else block.num_src, width),),
                )
            )
    else:
        n = GAT_NODES
        for heads, out in ((GAT_HEADS[0], GAT_HIDDEN), (GAT_HEADS[1], GAT_CLASSES)):

            def attention(el, er, ft):
                logits = F.leaky_relu(ops.u_add_v(graph, el, er), 0.2)
                return ops.u_mul_e_sum(graph, ft, ops.edge_softmax(graph, logits))

            calls.append((attention, (leaf(n, heads, 1), leaf(n, heads, 1), leaf(n, heads, out))))
    grads = []

    def run():
        for i, (f, leaves) in enumerate(calls):
            out = f(*leaves)
            if len(grads) <= i:
                grads.append(torch.randn(out.shape, generator=gen))
            out.backward(grads[i])
            for x in leaves:
                x.grad = None

    return run


# ----------------------------------------------------------------------------------- the first step


def first_step(kind, lib, profile=None) -> dict:
    """The first training step of a new model in this (new) process: ``{"import_s", "first_s", ...}``;
    with ``profile`` (a path), cProfile's statistics of that step are written there."""
    start = time.perf_counter()
    import numba
    import torch

    torch.set_num_threads(max(1, numba.get_num_threads()))
    if lib == "dgl" or kind == "sage":
        dgl, reason = import_dgl()
        if dgl is None:
            raise SystemExit(f"dgl not importable: {reason}")
    if lib == "dgl":
        layers = dgl.nn
    else:
        import graphkern.torch as layers
    imported = time.perf_counter() - start
    data = make_data(kind)
    convert = None
    if lib == "dgl":
        graph = dgl_graphs(kind, data, dgl)
    elif kind == "sage":
        graph = dgl_graphs(kind, data, dgl)
        convert = graphkern_graphs(kind, data)
    else:
        graph = graphkern_graphs(kind, data)
    torch.manual_seed(0)
    model = build_model(kind, layers)
    step, _ = make_step(kind, model, graph, data, convert)
    profiler = None
    if profile:
        import cProfile

        profiler = cProfile.Profile()
        profiler.enable()
    t0 = time.perf_counter()
    loss = step(0)
    first = time.perf_counter() - t0
    if profiler is not None:
        profiler.disable()
        profiler.dump_stats(profile)
    t0 = time.perf_counter()
    step(1)
    second = time.perf_counter() - t0
    return {"model": kind, "lib": lib, "import_s": imported, "first_s": first, "second_s": second, "loss": loss}


def first_step_in_new_processes(kind, repeat) -> tuple[float, float]:
    """Median first step (graphkern, DGL) over ``repeat`` new processes each, after one each that fills
    graphkern's kernel cache (and the operating system's file cache for both)."""
    times = {"graphkern": [], "dgl": []}
    for run in range(repeat + 1):
        for lib in times:
            out = subprocess.run(
                [sys.executable, os.path.abspath(__file__), "--first-step", kind, "--lib", lib],
                capture_output=True,
                text=True,
                check=False,
            )
            if out.returncode != 0:
                raise RuntimeError(f"first step of {kind} in {lib} failed:\n{out.stderr[-2000:]}")
            if run:
                times[lib].append(json.loads(out.stdout.strip().splitlines()[-1])["first_s"])
    return float(np.median(times["graphkern"])), float(np.median(times["dgl"]))


# ----------------------------------------------------------------------------------- the family


def compare_model(kind, args, dgl) -> dict:
    """Every figure of one model: forward difference, loss difference, and the three pairs of medians."""
    import torch

    import graphkern.torch as gkt
    from graphkern.bench import time_pair

    data = make_data(kind)
    dg = dgl_graphs(kind, data, dgl)
    convert = None
    if kind == "sage":
        g, convert = dg, graphkern_graphs(kind, data)
    else:
        g = graphkern_graphs(kind, data)
    torch.manual_seed(0)
    theirs = build_model(kind, dgl.nn)
    ours = build_model(kind, gkt)
    ours.load_state_dict(theirs.state_dict(), strict=True)
    ours_step, ours_predict = make_step(kind, ours, g, data, convert)
    theirs_step, theirs_predict = make_step(kind, theirs, dg, data)
    want, got = theirs_predict(), ours_predict()
    forward = float((got - want).abs().max() / want.abs().max().clamp_min(1e-30))
    times = {"ours": [], "theirs": []}
    loss_diff = 0.0
    for i in range(args.dm_steps + 2):  # two warm-up steps each, then timed; lockstep throughout
        t0 = time.perf_counter()
        a = ours_step(i)
        t1 = time.perf_counter()
        b = theirs_step(i)
        t2 = time.perf_counter()
        loss_diff = max(loss_diff, abs(a - b) / max(abs(b), 1e-30))
        if i >= 2:
            times["ours"].append(t1 - t0)
            times["theirs"].append(t2 - t1)
    row = {
        "forward_rel_diff": forward,
        "loss_rel_diff": loss_diff,
        "step": (float(np.median(times["ours"])), float(np.median(times["theirs"]))),
    }
    if kind == "sage":
        input_nodes, output_nodes, blocks = dg[0]
        ours_blocks = convert(blocks)
        t0 = time.perf_counter()
        for _ in range(5):
            convert(blocks)
        row["convert_s"] = (time.perf_counter() - t0) / 5
        row["graph"] = time_pair(
            graph_part(kind, gkt.ops, None, data, ours_blocks),
            graph_part(kind, dgl.ops, None, data, blocks),
            args.dm_steps,
        )
        row["edges"] = sum(b.num_edges for b in ours_blocks)
    else:
        row["graph"] = time_pair(graph_part(kind, gkt.ops, g, data), graph_part(kind, dgl.ops, dg, data), args.dm_steps)
        row["edges"] = g.num_edges
    row["first"] = first_step_in_new_processes(kind, args.dm_first)
    return row


def run_family(args, result_cls) -> list:
    """The ``dgl-models`` family: prints its own table and returns one ``result_cls`` row per model and figure."""
    dgl, reason = import_dgl()
    if dgl is None:
        print(f"family skipped: dgl-models (dgl not importable: {reason}; pip install dgl)", file=sys.stderr)
        return []
    import numba
    import torch

    threads = max(1, numba.get_num_threads())
    torch.set_num_threads(threads)
    print(
        f"# dgl-models: DGL {dgl.__version__}, torch {torch.__version__}, {threads} threads for both; DGL's example "
        f"models with DGL's weights loaded strictly, trained in lockstep; step = median of {args.dm_steps} "
        f"alternated steps after 2 warm-up; graph = the layers' sparse calls, forward + backward; first = median "
        f"first step of {args.dm_first} new processes each, kernels cached; ratio = DGL / graphkern; targets: "
        f"step >= 1.0x (GAT >= 2.0x), graph >= 2.0x, first >= 0.67x (within 1.5x)"
    )
    header = (
        f"{'model':<5} {'edges':>9} {'figure':<6} {'graphkern':>12} {'dgl':>12} {'ratio':>7} {'target':>7} "
        f"{'':<7} fwd diff / loss diff"
    )
    print(f"{header}\n{'-' * len(header)}", flush=True)
    results = []
    for kind in args.dm_models:
        row = compare_model(kind, args, dgl)
        check = "ok" if row["forward_rel_diff"] <= TOLERANCE and row["loss_rel_diff"] <= LOSS_TOLERANCE else "MISMATCH"
        for figure in ("step", "graph", "first"):
            ours_s, theirs_s = row[figure]
            target = TARGETS[figure].get(kind, DEFAULT_TARGET[figure])
            ratio = theirs_s / ours_s
            extra = {
                "edges": row["edges"],
                "forward_rel_diff": row["forward_rel_diff"],
                "loss_rel_diff": row["loss_rel_diff"],
                "target": target,
                "met": ratio >= target,
            }
            if "convert_s" in row:
                extra["block_conversion_s"] = row["convert_s"]
            results.append(
                result_cls(
                    "dgl-models",
                    f"{kind}: {figure}",
                    0,
                    ours_s,
                    {f"dgl {dgl.__version__}": theirs_s},
                    check,
                    extra=extra,
                )
            )
            note = f"{row['forward_rel_diff']:.1e} / {row['loss_rel_diff']:.1e}" if figure == "step" else ""
            if figure == "step" and "convert_s" in row:
                note += f"  (blocks' conversion {row['convert_s'] * 1e3:.2f} ms of graphkern's step)"
            print(
                f"{kind:<5} {row['edges']:>9,} {figure:<6} {ours_s * 1e3:>9.2f} ms {theirs_s * 1e3:>9.2f} ms "
                f"{ratio:>6.2f}x {target:>6.2f}x {'met' if ratio >= target else 'NOT MET':<7} {note}"
                f"{'' if check == 'ok' or figure != 'step' else ' MISMATCH'}",
                flush=True,
            )
    return results


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--first-step", choices=MODELS, required=True, help="time one first step of this model")
    parser.add_argument("--lib", choices=["graphkern", "dgl"], default="graphkern")
    parser.add_argument("--profile", metavar="PATH", help="write cProfile's statistics of the first step here")
    args = parser.parse_args(argv)
    print(json.dumps(first_step(args.first_step, args.lib, args.profile)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
