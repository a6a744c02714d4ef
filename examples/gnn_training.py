"""Shared training loop of the GNN examples: full-batch node classification with Adam."""

from __future__ import annotations

import argparse
import time

import torch


def accuracy(logits: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> float:
    return float((logits[mask].argmax(1) == labels[mask]).float().mean())


def fit(model, g, features, labels, train, test, *, epochs: int, lr: float = 0.01, weight_decay: float = 5e-4,
        quiet: bool = False) -> float:
    """Train ``model(g, features) -> logits``, print the accuracy every epoch, return the final test accuracy."""
    optimiser = torch.optim.Adam(model.parameters(), lr=lr, weight_decay=weight_decay)
    start = time.perf_counter()
    test_acc = 0.0
    for epoch in range(1, epochs + 1):
        model.train()
        logits = model(g, features)
        loss = torch.nn.functional.cross_entropy(logits[train], labels[train])
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        model.eval()
        with torch.no_grad():
            logits = model(g, features)
        train_acc, test_acc = accuracy(logits, labels, train), accuracy(logits, labels, test)
        if not quiet:
            print(f"epoch {epoch:3d}  loss {loss.item():.4f}  train acc {train_acc:.3f}  test acc {test_acc:.3f}  "
                  f"({time.perf_counter() - start:.1f} s)")
    return test_acc


def example_parser(doc: str, hidden: int) -> argparse.ArgumentParser:
    """The command line both GNN examples take (``--dataset``, ``--nodes``, ``--epochs``, ...)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="karate", choices=["karate", "planted"])
    parser.add_argument("--nodes", type=int, default=20_000, help="planted partition size")
    parser.add_argument("--epochs", type=int, default=None, help="default: 50 (karate), 100 (planted)")
    parser.add_argument("--hidden", type=int, default=hidden)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quiet", action="store_true")
    return parser


def load(args):
    """Seed torch and load the dataset the arguments name: ``(g, x, y, train, test, epochs)``."""
    import gnn_datasets

    torch.manual_seed(args.seed)
    kwargs = {"num_nodes": args.nodes, "seed": args.seed} if args.dataset == "planted" else {}
    g, x, y, train, test = gnn_datasets.load(args.dataset, **kwargs)
    return g, x, y, train, test, args.epochs or (50 if args.dataset == "karate" else 100)
