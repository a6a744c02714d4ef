"""What the layers share: argument checks, source/destination features, per-node columns, degree and
edge-weight normalisation, and the nodes per graph of a batch."""

from __future__ import annotations

import numpy as np
import torch

from ... import _cuda
from ..._validate import INT64_MAX, check_bool, check_int_scalar, check_real_scalar, type_name
from ...dispatch import kept_in_degrees
from ...graph import Graph
from .._tensors import _node_counts, _reverse
from ..autograd import sddmm, spmm


def check_layer_args(*, sizes=None, pairs=None, counts=None, rates=None, reals=None, flags=None, functions=None):
    """A layer's constructor arguments, each checked by its kind before any parameter is made.

    Without it a malformed size reaches ``torch.empty`` (a RuntimeError or an error naming torch's own
    argument), a rate reaches ``nn.Dropout``, a hop count of ``2**70`` loops for ever, and a function
    that is not callable fails only in ``forward``. Each keyword maps argument names to values.

    Parameters
    ----------
    sizes : dict, optional
        Integers >= 1 (feature widths, heads, relation and type counts).
    pairs : dict, optional
        Sizes that may also be a ``(source, destination)`` pair of sizes (a bipartite layer's ``in_feats``).
    counts : dict, optional
        Integers >= 0 (hop counts).
    rates : dict, optional
        Real numbers in ``[0, 1]`` (dropout probabilities, teleport probabilities).
    reals : dict, optional
        Finite real numbers.
    flags : dict, optional
        ``True`` or ``False``.
    functions : dict, optional
        None or a callable (activations, norms, modules).
    """
    for name, value in (pairs or {}).items():
        if isinstance(value, tuple) and len(value) == 2:
            check_int_scalar(f"{name}[0]", value[0], 1, INT64_MAX)
            check_int_scalar(f"{name}[1]", value[1], 1, INT64_MAX)
        else:
            check_int_scalar(name, value, 1, INT64_MAX)
    for name, value in (sizes or {}).items():
        check_int_scalar(name, value, 1, INT64_MAX)
    for name, value in (counts or {}).items():
        check_int_scalar(name, value, 0, INT64_MAX)
    for name, value in (rates or {}).items():
        check_real_scalar(name, value, 0.0, 1.0)
    for name, value in (reals or {}).items():
        check_real_scalar(name, value)
    for name, value in (flags or {}).items():
        check_bool(name, value)
    for name, value in (functions or {}).items():
        if value is not None and not callable(value):
            raise TypeError(f"argument '{name}': expected None or a callable, found {type_name(value)}")


def _check_zero_in_degree(g: Graph, allow: bool, layer: str):
    if not allow and g.num_dst and int(_cuda.to_host(kept_in_degrees(g)).min()) == 0:
        raise ValueError(
            f"{layer}: the graph has nodes with no in-edges, whose output would be invalid (as in DGL); add "
            f"self-loops or pass allow_zero_in_degree=True")


def _split_feat(feat, g: Graph):
    """``(source features, destination features)``; a single tensor serves both on a homogeneous graph."""
    if isinstance(feat, (tuple, list)):
        return feat[0], feat[1]
    return feat, feat[: g.num_dst]


def _dropped_pair(feat, h_src: torch.Tensor, h_dst: torch.Tensor, g: Graph, dropout):
    """``dropout`` on a layer's inputs as DGL applies it: once to each tensor of a pair, once to a single
    tensor whose first ``num_dst`` rows then serve as the destinations. One mask for a single tensor keeps
    the destination rows equal to the source rows they are, and draws from torch's generator exactly as
    DGL does, so a seeded model trains in lockstep with DGL's."""
    if isinstance(feat, (tuple, list)):
        return dropout(h_src), dropout(h_dst)
    h_src = dropout(h_src)
    return h_src, h_src[: g.num_dst]


def _column(values: torch.Tensor, ndim: int, dtype) -> torch.Tensor:
    return values.to(dtype).reshape(-1, *([1] * (ndim - 1)))


def _edge_column(weight: torch.Tensor, feat: torch.Tensor) -> torch.Tensor:
    """A scalar-per-edge weight shaped to multiply ``feat``'s messages: ``(E, 1, ..., 1)``."""
    return weight.reshape(weight.shape[0], *([1] * (feat.dim() - 1)))


def _check_edge_weight(g: Graph, edge_weight: torch.Tensor, layer: str):
    if not isinstance(edge_weight, torch.Tensor):
        raise TypeError(f"{layer}: argument 'edge_weight': expected a torch.Tensor, found "
                        f"{type(edge_weight).__name__}")
    if edge_weight.dim() == 0 or edge_weight.shape[0] != g.num_edge_ids or edge_weight[:1].numel() > 1:
        raise ValueError(f"{layer}: argument 'edge_weight': expected one scalar per edge, shape "
                         f"({g.num_edge_ids},), found shape {tuple(edge_weight.shape)}")


def _check_feat(g: Graph, feat: torch.Tensor, rows: int, width: int | None, layer: str, name: str = "feat"):
    """Features for ``rows`` nodes whose last axis is ``width`` wide (``None``: any width)."""
    if not isinstance(feat, torch.Tensor):
        raise TypeError(f"{layer}: argument '{name}': expected a torch.Tensor, found {type(feat).__name__}")
    if feat.dim() < (1 if width is None else 2):
        raise ValueError(f"{layer}: argument '{name}': expected one row per node, found shape {tuple(feat.shape)}")
    if feat.shape[0] != rows:
        raise ValueError(f"{layer}: argument '{name}': expected {rows} rows (one per node), found "
                         f"{feat.shape[0]}")
    if width is not None and feat.shape[-1] != width:
        raise ValueError(f"{layer}: argument '{name}': expected feature width {width} (the layer's in_feats), "
                         f"found {feat.shape[-1]}")


def _check_square(g: Graph, layer: str):
    if g.num_src != g.num_dst:
        raise ValueError(f"{layer}: argument 'graph': expected a graph whose sources are its destinations (as "
                         f"in DGL, this layer has no bipartite form), found {g.num_src} source and {g.num_dst} "
                         f"destination nodes")


def _degree_norm(g: Graph, which: str, like: torch.Tensor) -> torch.Tensor:
    """``max(degree, 1) ** -1/2`` per node as a column that broadcasts against ``like``."""
    degrees = _node_counts(g, which, like).clamp(min=1).to(like.dtype)
    return _column(degrees.pow(-0.5), like.dim(), like.dtype)


def _edge_weight_norm_both(g: Graph, edge_weight: torch.Tensor, layer: str) -> torch.Tensor:
    """DGL's ``EdgeWeightNorm("both")``, the normalisation SGConv, APPNPConv and TAGConv apply to edge weights."""
    return _normalised_edge_weight(g, edge_weight, "both", 0.0, layer)


def _normalised_edge_weight(g: Graph, edge_weight: torch.Tensor, norm: str, eps: float, layer: str) -> torch.Tensor:
    """``w_e / sqrt((out_weight(u) + eps) * (in_weight(v) + eps))`` for ``"both"``, ``w_e / (in_weight(v) +
    eps)`` for ``"right"``, for each edge ``e = (u, v)``: the weighted degrees are sums of ``w`` over a node's
    out- and in-edges.

    The product is taken per edge before the square root, so a node without edges never produces an
    infinite value that a backward could multiply by zero."""
    _check_edge_weight(g, edge_weight, layer)
    weight = edge_weight.reshape(-1)
    if norm == "none":
        return weight
    if norm == "both" and bool((weight <= 0).any()):
        raise ValueError(f"{layer}: argument 'edge_weight': the 'both' normalisation takes square roots of "
                         f"weighted degrees, so every weight must be positive; found a weight <= 0")
    in_weight = spmm(g, "copy_rhs", "sum", None, weight) + eps
    if norm == "right":
        return weight / sddmm(g, "copy_rhs", None, in_weight, "u", "v")
    out_weight = spmm(_reverse(g), "copy_rhs", "sum", None, weight) + eps
    return weight * sddmm(g, "mul", out_weight, in_weight, "u", "v").pow(-0.5)


def _batch_num_nodes(graph, rows: int, like: torch.Tensor) -> torch.Tensor:
    """Nodes per graph of a batch, as an int64 tensor on ``like``'s device: ``graph.batch_num_nodes()``
    where the graph has it, else the whole graph as a batch of one."""
    counts = getattr(graph, "batch_num_nodes", None)
    if counts is None:
        return torch.tensor([rows], dtype=torch.int64, device=like.device)
    counts = counts() if callable(counts) else counts
    if not isinstance(counts, torch.Tensor):
        counts = torch.from_numpy(np.asarray(_cuda.to_host(counts)))
    counts = counts.to(device=like.device, dtype=torch.int64).reshape(-1)
    if bool((counts < 0).any()) or int(counts.sum()) != rows:
        raise ValueError(f"argument 'graph': batch_num_nodes() sums to {int(counts.sum())} nodes, but the "
                         f"features have {rows} rows")
    return counts


def _checked_pair(feat, g: Graph, layer: str, in_src: int | None = None, in_dst: int | None = None):
    """:func:`_split_feat` after checking rows (one per source / destination node) and widths."""
    if isinstance(feat, (tuple, list)):
        if len(feat) != 2:
            raise ValueError(f"{layer}: argument 'feat': expected a tensor or a pair (source features, "
                             f"destination features), found a sequence of {len(feat)}")
        _check_feat(g, feat[0], g.num_src, in_src, layer, "feat[0]")
        _check_feat(g, feat[1], g.num_dst, in_dst, layer, "feat[1]")
    else:
        _check_feat(g, feat, g.num_src, in_src, layer)
    return _split_feat(feat, g)
