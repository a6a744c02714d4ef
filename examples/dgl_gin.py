"""DGL's GIN graph classifier moved to graphkern: the model code stays, the imports and the graph lines change.

The model is the one DGL's GIN example writes (four GINConv layers, each with a two-layer MLP and batch
norm, sum aggregation, a sum-pooled readout of every layer's output, dropout 0.5), trained on batches of
small graphs. DGL's example builds each batch with ``dgl.batch`` (its ``GraphDataLoader`` calls it);
``gk.batch`` takes its place and keeps ``batch_num_nodes()``, which ``SumPooling`` reads. Every changed line
carries a ``# changed`` comment; DGL is not needed. The data here is a stand-in for DGL's ``GINDataset``:
rings with a few chords (class 0) against random graphs of twice the mean degree (class 1), of the same
sizes, with a constant node feature, so that only the structure tells them apart.

    python examples/dgl_gin.py                   # 30 epochs, prints the loss and the test accuracy
"""

from __future__ import annotations

import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

import graphkern as gk  # changed: was `import dgl`
from graphkern.torch import GINConv, SumPooling  # changed: was `from dgl.nn.pytorch.conv import GINConv` (and glob)


class MLP(nn.Module):
    """Construct two-layer MLP-type aggreator for GIN model"""

    def __init__(self, input_dim, hidden_dim, output_dim):
        super().__init__()
        self.linears = nn.ModuleList()
        self.linears.append(nn.Linear(input_dim, hidden_dim, bias=False))
        self.linears.append(nn.Linear(hidden_dim, output_dim, bias=False))
        self.batch_norm = nn.BatchNorm1d(hidden_dim)

    def forward(self, x):
        h = F.relu(self.batch_norm(self.linears[0](x)))
        return self.linears[1](h)


class GIN(nn.Module):
    def __init__(self, input_dim, hidden_dim, output_dim):
        super().__init__()
        self.ginlayers = nn.ModuleList()
        self.batch_norms = nn.ModuleList()
        num_layers = 5
        for layer in range(num_layers - 1):  # excluding the input layer
            mlp = MLP(input_dim if layer == 0 else hidden_dim, hidden_dim, hidden_dim)
            self.ginlayers.append(GINConv(mlp, learn_eps=False))
            self.batch_norms.append(nn.BatchNorm1d(hidden_dim))
        self.linear_prediction = nn.ModuleList()
        for layer in range(num_layers):
            self.linear_prediction.append(nn.Linear(input_dim if layer == 0 else hidden_dim, output_dim))
        self.drop = nn.Dropout(0.5)
        self.pool = SumPooling()

    def forward(self, g, h):
        hidden_rep = [h]
        for i, layer in enumerate(self.ginlayers):
            h = layer(g, h)
            h = self.batch_norms[i](h)
            h = F.relu(h)
            hidden_rep.append(h)
        score_over_layer = 0
        for i, h in enumerate(hidden_rep):
            pooled_h = self.pool(g, h)
            score_over_layer += self.drop(self.linear_prediction[i](pooled_h))
        return score_over_layer


def ring_or_random(label, rng):
    """``(src, dst, n)`` of one small undirected graph: a ring with two chords (label 0) or a random graph
    with twice the ring's mean degree (label 1)."""
    n = int(rng.integers(10, 30))
    if label == 0:
        u = np.concatenate([np.arange(n), rng.integers(0, n, 2)])
        v = np.concatenate([(np.arange(n) + 1) % n, rng.integers(0, n, 2)])
    else:
        u, v = rng.integers(0, n, 2 * n), rng.integers(0, n, 2 * n)
    return np.concatenate([u, v]), np.concatenate([v, u]), n


def dataset(count, seed):
    """``[(graph, label)]``: ``count`` graphs, the two classes alternating."""
    rng = np.random.default_rng(seed)
    graphs = []
    for i in range(count):
        src, dst, n = ring_or_random(i % 2, rng)
        graphs.append((gk.Graph.from_coo(src, dst, num_nodes=n), i % 2))  # changed: was dgl.graph((src, dst))
    return graphs


def batches(graphs, batch_size, shuffle, rng):
    """The batches a ``GraphDataLoader`` yields: ``(batched graph, labels)``."""
    order = rng.permutation(len(graphs)) if shuffle else np.arange(len(graphs))
    for start in range(0, len(graphs), batch_size):
        part = [graphs[i] for i in order[start : start + batch_size]]
        batched = gk.batch([g for g, _ in part])  # changed: was dgl.batch(...)
        yield batched, torch.tensor([label for _, label in part])


def evaluate(model, graphs):
    model.eval()
    correct = 0
    with torch.no_grad():
        for g, labels in batches(graphs, 128, False, None):
            feat = torch.ones(g.num_nodes, 1)
            correct += int((model(g, feat).argmax(1) == labels).sum())
    return correct / len(graphs)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--graphs", type=int, default=400)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    graphs = dataset(args.graphs, args.seed)
    split = int(0.8 * len(graphs))
    train, test = graphs[:split], graphs[split:]

    model = GIN(1, 16, 2)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    losses = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        total = 0.0
        for g, labels in batches(train, 32, True, rng):
            feat = torch.ones(g.num_nodes, 1)  # a constant feature: only the structure tells the classes apart
            loss = F.cross_entropy(model(g, feat), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
        losses.append(total)
        print(f"epoch {epoch:3d}  loss {total:.4f}")
    accuracy = evaluate(model, test)
    print(f"test accuracy {accuracy:.3f}")
    return {"losses": losses, "accuracy": accuracy}


if __name__ == "__main__":
    main()
