"""A DGL node classifier moved to graphkern: the model code stays, four lines change.

The DGL original (a two-layer GAT as DGL's own examples write it) read::

    import dgl                                   # (1)
    import dgl.nn as dglnn                       # (2)

    g = dgl.graph((src, dst), num_nodes=n)       # (3)
    g = dgl.add_self_loop(g)                     # (4)
    ...
    self.layers.append(dglnn.GATConv(...))       # (2) the layers come from dgl.nn

With graphkern, ``import graphkern as gk`` and ``import graphkern.torch as gkt`` replace (1) and (2),
``gk.Graph.from_coo`` and ``g.add_self_loop()`` replace (3) and (4), and ``gkt.GATConv`` takes
``dglnn.GATConv``'s arguments and ``state_dict`` keys, so saved DGL weights load unchanged. A graph
that already exists as a ``dgl.DGLGraph`` converts with ``gk.Graph.from_dgl(dg)`` (edge ids kept, so
edge features line up). Every changed line below carries a ``# changed`` comment; DGL is not needed.

    python examples/port_from_dgl.py             # 30 epochs on Zachary's karate club, prints the loss
"""

from __future__ import annotations

import argparse

import networkx as nx
import torch
import torch.nn.functional as F
from torch import nn

import graphkern as gk  # changed: was `import dgl`
import graphkern.torch as gkt  # changed: was `import dgl.nn as dglnn`


class GAT(nn.Module):
    def __init__(self, in_size, hid_size, out_size, heads):
        super().__init__()
        self.layers = nn.ModuleList()
        # changed: gkt.GATConv in place of dglnn.GATConv (same arguments, same state_dict keys)
        self.layers.append(gkt.GATConv(in_size, hid_size, heads[0], feat_drop=0.6, attn_drop=0.6,
                                       activation=F.elu))
        self.layers.append(gkt.GATConv(hid_size * heads[0], out_size, heads[1], feat_drop=0.6, attn_drop=0.6))

    def forward(self, g, inputs):
        h = inputs
        for i, layer in enumerate(self.layers):
            h = layer(g, h)
            h = h.mean(1) if i == len(self.layers) - 1 else h.flatten(1)  # average the last heads, join the rest
        return h


def karate_club():
    """Zachary's karate club as an edge list: ``(src, dst, n, labels)``, each friendship in both directions."""
    G = nx.karate_club_graph()
    n = G.number_of_nodes()
    u, v = (torch.tensor(a) for a in zip(*G.edges()))
    labels = torch.tensor([0 if G.nodes[i]["club"] == "Mr. Hi" else 1 for i in range(n)])
    return torch.cat([u, v]), torch.cat([v, u]), n, labels


def main(argv=None) -> list[float]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    torch.manual_seed(args.seed)

    src, dst, n, labels = karate_club()
    g = gk.Graph.from_coo(src.numpy(), dst.numpy(), num_nodes=n)  # changed: was dgl.graph((src, dst), num_nodes=n)
    g = g.add_self_loop()  # changed: was dgl.add_self_loop(g)
    features = torch.eye(n)  # the rest is DGL's training loop, unchanged
    train = torch.zeros(n, dtype=torch.bool)
    train[[0, 1, 33, 32]] = True  # two members of each faction are labelled, the rest are predicted

    model = GAT(n, 8, 2, heads=[4, 1])
    optimiser = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    losses = []
    for epoch in range(1, args.epochs + 1):
        model.train()
        logits = model(g, features)
        loss = F.cross_entropy(logits[train], labels[train])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        losses.append(loss.item())
        print(f"epoch {epoch:3d}  loss {loss.item():.4f}")
    model.eval()
    with torch.no_grad():
        accuracy = float((model(g, features)[~train].argmax(1) == labels[~train]).float().mean())
    print(f"accuracy on the {int((~train).sum())} unlabelled members: {accuracy:.3f}")
    return losses


if __name__ == "__main__":
    main()
