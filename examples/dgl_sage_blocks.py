"""DGL's mini-batch GraphSAGE moved to graphkern: DGL samples the blocks, graphkern's layers train on them.

The model is the one DGL's GraphSAGE node-classification example writes (three SAGEConv layers, mean
aggregation, ReLU and dropout 0.5 between them), trained on the blocks (message flow graphs) that DGL's
``NeighborSampler`` and ``DataLoader`` sample for each mini-batch. graphkern has no neighbour sampler of
its own, so a DGL user keeps DGL's: each sampled block converts with ``gk.Graph.from_dgl(block)`` (a
bipartite graph with DGL's edge ids, the destination nodes first among the sources, as in the block),
and that is the one line added to DGL's training loop. The layers come from ``graphkern.torch``. Changed
and added lines carry a ``# changed`` comment.

Without DGL installed (or with ``--no-dgl``), :func:`sample_blocks` below stands in for DGL's sampler:
uniform neighbour sampling without replacement over graphkern's CSC, blocks numbered as DGL numbers
them. It is part of this example, not of graphkern.

    python examples/dgl_sage_blocks.py           # 5 epochs of mini-batches, prints the loss and accuracy
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import graphkern as gk  # changed: was `import dgl`
import graphkern.torch as gkt  # changed: was `import dgl.nn as dglnn`


class SAGE(nn.Module):
    def __init__(self, in_size, hid_size, out_size):
        super().__init__()
        self.layers = nn.ModuleList()
        # three-layer GraphSAGE-mean
        self.layers.append(gkt.SAGEConv(in_size, hid_size, "mean"))  # changed: gkt.SAGEConv, was dglnn.SAGEConv
        self.layers.append(gkt.SAGEConv(hid_size, hid_size, "mean"))  # changed
        self.layers.append(gkt.SAGEConv(hid_size, out_size, "mean"))  # changed
        self.dropout = nn.Dropout(0.5)

    def forward(self, blocks, x):
        h = x
        for i, (layer, block) in enumerate(zip(self.layers, blocks)):
            h = layer(block, h)
            if i != len(self.layers) - 1:
                h = F.relu(h)
                h = self.dropout(h)
        return h


def sample_blocks(g, seeds, fanouts, rng):
    """``(input_nodes, output_nodes, blocks)`` as DGL's ``NeighborSampler(fanouts).sample(g, seeds)``
    returns them: up to ``fanout`` in-neighbours of every destination, drawn without replacement; the
    sources of a block are its destinations first, then the new nodes in the order they were drawn."""
    indptr, indices, _ = (np.asarray(a) for a in g.csc())
    output_nodes = seeds = np.asarray(seeds, np.int64)
    blocks = []
    for fanout in reversed(fanouts):
        starts, counts = indptr[seeds], indptr[seeds + 1] - indptr[seeds]
        owner = np.repeat(np.arange(seeds.size), counts)
        first = np.repeat(np.cumsum(counts) - counts, counts)
        slots = np.arange(owner.size) - first + np.repeat(starts, counts)
        order = np.lexsort((rng.random(owner.size), owner))  # a random order within each destination
        keep = order[np.arange(owner.size) - first < fanout]
        nodes = np.concatenate([seeds, indices[slots[keep]]])
        unique, first_seen, inverse = np.unique(nodes, return_index=True, return_inverse=True)
        local = np.empty(unique.size, np.int64)
        local[np.argsort(first_seen)] = np.arange(unique.size)  # numbered in the order first seen
        src_nodes = nodes[np.sort(first_seen)]
        blocks.insert(
            0, gk.Graph.from_coo(local[inverse[seeds.size :]], owner[keep], num_nodes=(src_nodes.size, seeds.size))
        )
        seeds = src_nodes
    return seeds, output_nodes, blocks


def planted(num_nodes, num_classes, seed):
    """``(src, dst, features, labels)``: a graph whose edges mostly join nodes of one class, and features
    that show the class only faintly, so the neighbours' features are needed."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, num_classes, num_nodes)
    by_class = [np.flatnonzero(labels == c) for c in range(num_classes)]
    src = rng.integers(0, num_nodes, 10 * num_nodes)
    same = rng.random(src.size) < 0.8
    dst = np.where(same, [rng.choice(by_class[c]) for c in labels[src]], rng.integers(0, num_nodes, src.size))
    features = rng.standard_normal((num_nodes, 16)).astype(np.float32)
    features[np.arange(num_nodes), labels] += 1.0
    return np.concatenate([src, dst]), np.concatenate([dst, src]), features, labels


def loader(g, train_idx, fanouts, batch_size, use_dgl, rng):
    """DGL's ``DataLoader(g, train_idx, NeighborSampler(fanouts), shuffle=True)``; without DGL, the same
    mini-batches from :func:`sample_blocks`."""
    if use_dgl:
        import dgl

        sampler = dgl.dataloading.NeighborSampler(fanouts)
        yield from dgl.dataloading.DataLoader(
            g.to_dgl().long(),
            torch.from_numpy(train_idx),
            sampler,
            batch_size=batch_size,
            shuffle=True,
            drop_last=False,
            num_workers=0,
        )
        return
    order = rng.permutation(train_idx)
    for start in range(0, order.size, batch_size):
        yield sample_blocks(g, order[start : start + batch_size], fanouts, rng)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--nodes", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-dgl", action="store_true", help="sample with this example's sampler even with DGL")
    args = parser.parse_args(argv)
    try:
        import dgl  # noqa: F401

        use_dgl = not args.no_dgl
    except ImportError:
        use_dgl = False
    print(f"blocks sampled by {'DGL' if use_dgl else 'this example'}")
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    src, dst, features, labels = planted(args.nodes, 4, args.seed)
    g = gk.Graph.from_coo(src, dst, num_nodes=args.nodes)  # changed: was dgl.graph((src, dst))
    feat, labels = torch.from_numpy(features), torch.from_numpy(labels)
    perm = rng.permutation(args.nodes)
    train_idx, test_idx = perm[: args.nodes // 2], perm[args.nodes // 2 :]

    model = SAGE(16, 64, 4)
    opt = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=5e-4)  # DGL: 1e-3, on a far larger graph
    losses = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        total = 0.0
        for input_nodes, output_nodes, blocks in loader(g, train_idx, [10, 10, 10], 256, use_dgl, rng):
            if use_dgl:
                blocks = [gk.Graph.from_dgl(b) for b in blocks]  # changed: the line added to DGL's loop
            x = feat[input_nodes]
            y = labels[output_nodes]
            y_hat = model(blocks, x)
            loss = F.cross_entropy(y_hat, y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            total += loss.item()
        losses.append(total)
        print(f"epoch {epoch:3d}  loss {total:.4f}")
    model.eval()
    with torch.no_grad():
        # the test nodes' predictions from full neighbourhoods (fanout -1 in DGL): sampled blocks of every in-edge
        input_nodes, output_nodes, blocks = sample_blocks(g, test_idx, [args.nodes] * 3, rng)
        accuracy = float((model(blocks, feat[input_nodes]).argmax(1) == labels[output_nodes]).float().mean())
    print(f"test accuracy {accuracy:.3f}")
    return {"losses": losses, "accuracy": accuracy}


if __name__ == "__main__":
    main()
