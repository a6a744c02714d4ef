"""DGL's RGCN entity classifier moved to graphkern: the model code stays, the imports and the graph lines change.

The model is the one DGL's entity-classification example writes: a node embedding, then two RelGraphConv
layers with the basis regularizer (here with the self-loop weight on), the edges weighted by
``1 / in-degree`` of their destination (``dgl.norm_by_dst``). DGL's example reads a heterograph and calls
``dgl.to_homogeneous``, taking the relation of each edge from ``g.edata[dgl.ETYPE]``; here the edges and
their relations come as arrays, and the graph is built from them. Every changed line carries a
``# changed`` comment; DGL is not needed. A DGL heterograph converts with ``gk.Graph.from_dgl(hg)`` (numbered
as ``dgl.to_homogeneous`` numbers it, the relation of each edge in ``g.edata["_TYPE"]``).

The data stands in for DGL's entity datasets (AIFB, MUTAG, ...): every node's class is the relation most
of its in-edges have, so the class is read from the relations and not from any node feature.

    python examples/dgl_rgcn.py                  # 40 epochs, prints the loss and the test accuracy
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import graphkern as gk  # changed: was `import dgl`
from graphkern.torch import RelGraphConv  # changed: was `from dgl.nn.pytorch import RelGraphConv`


class RGCN(nn.Module):
    def __init__(self, num_nodes, h_dim, out_dim, num_rels):
        super().__init__()
        self.emb = nn.Embedding(num_nodes, h_dim)
        # two-layer RGCN
        self.conv1 = RelGraphConv(h_dim, h_dim, num_rels, regularizer="basis", num_bases=num_rels, self_loop=True)
        self.conv2 = RelGraphConv(h_dim, out_dim, num_rels, regularizer="basis", num_bases=num_rels, self_loop=True)

    def forward(self, g, etypes, norm):
        x = self.emb.weight
        h = F.relu(self.conv1(g, x, etypes, norm))
        h = self.conv2(g, h, etypes, norm)
        return h


def relational_graph(num_nodes, num_edges, num_rels, seed):
    """``(src, dst, etypes, labels)``: random edges, each node's in-edges mostly of its class's relation."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, num_rels, num_nodes)
    src, dst = rng.integers(0, num_nodes, num_edges), rng.integers(0, num_nodes, num_edges)
    etypes = np.where(rng.random(num_edges) < 0.6, labels[dst], rng.integers(0, num_rels, num_edges))
    return src, dst, etypes, labels


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=40)
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.manual_seed(args.seed)
    num_rels = 4
    src, dst, etypes, labels = relational_graph(args.nodes, 8 * args.nodes, num_rels, args.seed)

    g = gk.Graph.from_coo(src, dst, num_nodes=args.nodes)  # changed: was dgl.to_homogeneous(hg)
    etypes = torch.from_numpy(etypes)  # changed: was g.edata[dgl.ETYPE]
    norm = torch.from_numpy(1.0 / np.maximum(g.in_degrees(), 1)[dst]).float()[:, None]  # changed: dgl.norm_by_dst
    labels = torch.from_numpy(labels)
    perm = torch.randperm(args.nodes)
    train_idx, test_idx = perm[: args.nodes // 2], perm[args.nodes // 2 :]

    model = RGCN(args.nodes, 16, num_rels, num_rels)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2, weight_decay=5e-4)
    losses = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        logits = model(g, etypes, norm)
        loss = F.cross_entropy(logits[train_idx], labels[train_idx])
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
        print(f"epoch {epoch:3d}  loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        accuracy = float((model(g, etypes, norm)[test_idx].argmax(1) == labels[test_idx]).float().mean())
    print(f"test accuracy {accuracy:.3f}")
    return {"losses": losses, "accuracy": accuracy}


if __name__ == "__main__":
    main()
