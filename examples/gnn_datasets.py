"""Labelled graphs for the GNN examples: Zachary's karate club (shipped with networkx) and a planted
partition (a stochastic block model) generated to any size.

Each loader returns ``(g, features, labels, train_mask, test_mask)`` with ``g`` a symmetric
:class:`graphkern.Graph` with self-loops (so every node has an in-edge, as GCN and GAT expect).
"""

from __future__ import annotations

import numpy as np
import torch

import graphkern as gk


def _symmetric_with_self_loops(src, dst, n):
    src, dst = np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64)
    loops = np.arange(n, dtype=np.int64)
    return gk.Graph.from_coo(np.r_[src, dst, loops], np.r_[dst, src, loops], num_nodes=n)


def karate_club(train_per_class: int = 2):
    """The karate club split into its two factions; ``train_per_class`` labelled members of each (the
    instructor, node 0, and the administrator, node 33, first), the rest to predict."""
    import networkx as nx

    G = nx.karate_club_graph()
    n = G.number_of_nodes()
    src, dst = zip(*G.edges())
    labels = torch.tensor([0 if G.nodes[v]["club"] == "Mr. Hi" else 1 for v in range(n)])
    features = torch.eye(n)  # no node features: each member is its own one-hot
    train = torch.zeros(n, dtype=torch.bool)
    for cls, leader in ((0, 0), (1, 33)):
        members = [leader] + [v for v in range(n) if labels[v] == cls and v != leader]
        train[members[:train_per_class]] = True
    return _symmetric_with_self_loops(src, dst, n), features, labels, train, ~train


def planted_partition(num_nodes: int = 20_000, num_classes: int = 4, degree_in: float = 8.0,
                      degree_out: float = 4.0, num_features: int = 16, signal: float = 0.4,
                      train_fraction: float = 0.05, seed: int = 0):
    """A stochastic block model: each node has about ``degree_in`` neighbours in its class and
    ``degree_out`` outside it; features are a weak class signal under unit Gaussian noise, so a model must
    use the graph to do well (a linear model on the features alone stays far below)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, num_classes, num_nodes)
    by_class = [np.flatnonzero(labels == c) for c in range(num_classes)]
    m_in = int(num_nodes * degree_in / 2)
    m_out = int(num_nodes * degree_out / 2)
    # within-class edges: a random node and a random member of its class
    u_in = rng.integers(0, num_nodes, m_in)
    v_in = np.empty(m_in, dtype=np.int64)
    for c, members in enumerate(by_class):
        pick = labels[u_in] == c
        v_in[pick] = members[rng.integers(0, members.size, int(pick.sum()))]
    # between-class edges: uniform pairs whose classes differ
    u_out = rng.integers(0, num_nodes, 2 * m_out)
    v_out = rng.integers(0, num_nodes, 2 * m_out)
    keep = labels[u_out] != labels[v_out]
    u_out, v_out = u_out[keep][:m_out], v_out[keep][:m_out]
    src, dst = np.r_[u_in, u_out], np.r_[v_in, v_out]
    not_loop = src != dst
    g = _symmetric_with_self_loops(src[not_loop], dst[not_loop], num_nodes)
    means = rng.normal(0.0, 1.0, (num_classes, num_features))
    features = signal * means[labels] + rng.normal(0.0, 1.0, (num_nodes, num_features))
    train = torch.from_numpy(rng.random(num_nodes) < train_fraction)
    return (g, torch.from_numpy(features.astype(np.float32)), torch.from_numpy(labels), train, ~train)


def load(name: str, **kwargs):
    loaders = {"karate": karate_club, "planted": planted_partition}
    if name not in loaders:
        raise ValueError(f"argument 'dataset': expected one of {sorted(loaders)}, found {name!r}")
    return loaders[name](**kwargs)
