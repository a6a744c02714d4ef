"""What the layers share: the zero-in-degree check, source/destination features, per-node columns."""

from __future__ import annotations

import torch

from ... import _cuda
from ...graph import Graph


def _check_zero_in_degree(g: Graph, allow: bool, layer: str):
    if not allow and g.num_dst and int(_cuda.to_host(g.in_degrees()).min()) == 0:
        raise ValueError(
            f"{layer}: the graph has nodes with no in-edges, whose output would be invalid (as in DGL); add "
            f"self-loops or pass allow_zero_in_degree=True")


def _split_feat(feat, g: Graph):
    """``(source features, destination features)``; a single tensor serves both on a homogeneous graph."""
    if isinstance(feat, (tuple, list)):
        return feat[0], feat[1]
    return feat, feat[: g.num_dst]


def _column(values: torch.Tensor, ndim: int, dtype) -> torch.Tensor:
    return values.to(dtype).reshape(-1, *([1] * (ndim - 1)))
