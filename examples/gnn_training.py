"""Shared training loop of the GNN examples: full-batch node classification with Adam."""

from __future__ import annotations

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
