"""RelGraphConv and TypedLinear: DGL's relational graph convolution, with DGL 2.1's arguments, behaviour and
``state_dict`` keys, on graphkern's gather_mm / segment_mm and g-SpMM.

A message is ``W_r h_u`` for an edge ``(u, e, v)`` of relation ``r = etypes[e]`` (times ``norm[e]`` when
given), and a node sums the messages on its in-edges. The messages are computed by
:func:`graphkern.torch.gather_mm` straight from the node features (``idx_a`` = the edge's source,
``idx_b`` = its type), so neither the per-edge inputs nor a weight per edge is materialised; with
``presorted=True`` (edge ids in type order) the gathered inputs go through :func:`graphkern.torch.segment_mm`
instead, one matrix product per relation.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from ... import _cuda
from ..._validate import check_bool, type_name
from ...graph import Graph
from .._tensors import _graph, _integer_tensor
from ..autograd import spmm
from ..segment import gather_mm, segment_mm
from ._common import check_layer_args

__all__ = ["RelGraphConv", "TypedLinear"]

_REGULARIZERS = (None, "basis", "bdd")


def _types(name: str, x_type, rows: int, num_types: int, device) -> torch.Tensor:
    """An int64 tensor of ``rows`` type ids in ``[0, num_types)`` on ``device`` (checked on the host side of
    torch: one reduction each for the minimum and the maximum)."""
    x_type = _integer_tensor(name, x_type)
    if x_type.dim() != 1 or x_type.shape[0] != rows:
        raise ValueError(f"argument '{name}': expected shape ({rows},), found {tuple(x_type.shape)}")
    x_type = x_type.to(device=device, dtype=torch.int64, copy=True)  # kept for backward: the caller's no more
    if rows:
        lo, hi = int(x_type.min()), int(x_type.max())
        if lo < 0 or hi >= num_types:
            bad = lo if lo < 0 else hi
            raise ValueError(f"argument '{name}': expected type ids in [0, {num_types}), found {bad}")
    return x_type


def _type_lengths(name: str, x_type: torch.Tensor, num_types: int, flag: str) -> np.ndarray:
    """Rows per type for rows sorted by type (``sorted_by_type`` / ``presorted``, named by ``flag``): checked,
    on the host. The message names both arguments: either one may be the mistake."""
    if x_type.shape[0] > 1 and bool((x_type[1:] < x_type[:-1]).any()):
        pos = int(torch.nonzero(x_type[1:] < x_type[:-1])[0, 0])
        raise ValueError(f"argument '{name}': expected types in non-decreasing order (argument '{flag}' is True), "
                         f"found {int(x_type[pos])} before {int(x_type[pos + 1])} at position {pos}")
    return torch.bincount(x_type, minlength=num_types).cpu().numpy()


def _check_regularizer(regularizer, num_bases):
    """``regularizer`` one of None, 'basis', 'bdd' (a string first: a dict or an array is no set member);
    ``num_bases`` None or a size."""
    if not (regularizer is None or isinstance(regularizer, str)) or regularizer not in _REGULARIZERS:
        raise ValueError(f"argument 'regularizer': expected None, 'basis' or 'bdd', found {regularizer!r}")
    if num_bases is not None:
        check_layer_args(sizes={"num_bases": num_bases})


class TypedLinear(nn.Module):
    """A linear map chosen by type: ``y[i] = x[i] @ W[x_type[i]]`` (DGL's ``TypedLinear``).

    ``regularizer`` ``"basis"`` builds the ``num_types`` matrices from ``num_bases`` shared ones
    (``W_t = sum_b coeff[t, b] V_b``); ``"bdd"`` makes each one block-diagonal with ``num_bases`` blocks
    of ``(in_size / num_bases, out_size / num_bases)``. Parameters ``W`` (and ``coeff``) as DGL names and
    shapes them, so state dicts load both ways.

    Examples
    --------
    >>> import torch, graphkern.torch as gkt
    >>> m = gkt.nn.TypedLinear(4, 6, 3, regularizer="basis", num_bases=2)
    >>> m(torch.ones(5, 4), torch.tensor([0, 2, 1, 1, 0])).shape
    torch.Size([5, 6])
    >>> list(m.state_dict())
    ['W', 'coeff']
    """

    def __init__(self, in_size: int, out_size: int, num_types: int, regularizer: str | None = None,
                 num_bases: int | None = None):
        super().__init__()
        _check_regularizer(regularizer, num_bases)
        check_layer_args(sizes={"in_size": in_size, "out_size": out_size, "num_types": num_types})
        self.in_size, self.out_size, self.num_types = in_size, out_size, num_types
        if regularizer is None:
            self.W = nn.Parameter(torch.empty(num_types, in_size, out_size))
        else:
            if num_bases is None:
                raise ValueError(f"argument 'num_bases': the {regularizer!r} regularizer needs a number of bases, "
                                 f"found None")
            if regularizer == "basis":
                self.W = nn.Parameter(torch.empty(num_bases, in_size, out_size))
                self.coeff = nn.Parameter(torch.empty(num_types, num_bases))
            else:
                if in_size % num_bases or out_size % num_bases:
                    raise ValueError(f"argument 'num_bases': 'bdd' needs it to divide in_size ({in_size}) and "
                                     f"out_size ({out_size}), found {num_bases}")
                self.submat_in, self.submat_out = in_size // num_bases, out_size // num_bases
                self.W = nn.Parameter(torch.empty(num_types, num_bases * self.submat_in * self.submat_out))
            self.num_bases = num_bases
        self.regularizer = regularizer
        self.reset_parameters()

    def reset_parameters(self):
        """DGL's initialisation: uniform in +-1/sqrt(fan-in) (the block's for bdd), Xavier for ``coeff``."""
        with torch.no_grad():
            fan_in = self.submat_in if self.regularizer == "bdd" else self.in_size
            nn.init.uniform_(self.W, -1 / math.sqrt(fan_in), 1 / math.sqrt(fan_in))
            if self.regularizer == "basis":
                nn.init.xavier_uniform_(self.coeff, gain=nn.init.calculate_gain("relu"))

    def get_weight(self) -> torch.Tensor:
        """The per-type weights: ``(num_types, in, out)``, or for bdd the blocks ``(num_types, B * bi * bo)``."""
        if self.regularizer == "basis":
            bases = self.W.view(self.num_bases, self.in_size * self.out_size)
            return (self.coeff @ bases).view(self.num_types, self.in_size, self.out_size)
        return self.W

    def forward(self, x: torch.Tensor, x_type, sorted_by_type: bool = False) -> torch.Tensor:
        """``x[i] @ W[x_type[i]]`` for every row; ``sorted_by_type`` (rows in type order) runs one matrix
        product per type (:func:`graphkern.torch.segment_mm`)."""
        return self._rows(x, None, x_type, sorted_by_type)

    def _rows(self, x: torch.Tensor, rows: torch.Tensor | None, x_type, sorted_by_type: bool) -> torch.Tensor:
        """``x[rows[i]] @ W[x_type[i]]`` (``rows`` None: every row of ``x`` in order)."""
        if not isinstance(x, torch.Tensor):
            raise TypeError(f"argument 'x': expected a torch.Tensor, found {type_name(x)}")
        check_bool("sorted_by_type", sorted_by_type)
        count = x.shape[0] if rows is None else rows.shape[0]
        if x.dim() != 2 or x.shape[1] != self.in_size:
            raise ValueError(f"argument 'x': expected shape (N, {self.in_size}), found {tuple(x.shape)}")
        x_type = _types("x_type", x_type, count, self.num_types, x.device)
        w = self.get_weight()
        x = x.contiguous()
        if self.regularizer == "bdd":
            # block j of row i is row i * B + j of x viewed as (N * B, bi), times block j of its type's matrix
            nb = self.num_bases
            blocks = torch.arange(nb, device=x.device)
            src = torch.arange(count, device=x.device) if rows is None else rows.to(torch.int64)
            idx_a = (src.unsqueeze(1) * nb + blocks).reshape(-1)
            idx_b = (x_type.unsqueeze(1) * nb + blocks).reshape(-1)
            mats = w.reshape(self.num_types * nb, self.submat_in, self.submat_out)
            out = gather_mm(x.reshape(-1, self.submat_in), mats.contiguous(), idx_a=idx_a, idx_b=idx_b)
            return out.reshape(count, self.out_size)
        if sorted_by_type:
            seglen = _type_lengths("x_type", x_type, self.num_types, "sorted_by_type")
            inputs = x if rows is None else x.index_select(0, rows)
            return segment_mm(inputs, w.contiguous(), seglen)
        return gather_mm(x, w.contiguous(), idx_a=rows, idx_b=x_type)

    def __repr__(self):
        extra = "" if self.regularizer is None else f", regularizer={self.regularizer}, num_bases={self.num_bases}"
        return f"TypedLinear(in_size={self.in_size}, out_size={self.out_size}, num_types={self.num_types}{extra})"


def _sources_by_edge_id(g: Graph, device) -> torch.Tensor:
    """The source of every edge id (0 for an unused id, whose message no destination reads), cached on ``g``."""
    key = ("relgraphconv_sources", str(device))
    cached = g._cache.get(key)
    if cached is None:
        src, _, slots = (_cuda.to_host(arr) for arr in g.coo())
        by_id = np.zeros(g.num_edge_ids, np.int64)
        by_id[slots] = src
        cached = torch.from_numpy(by_id).to(device)
        g._cache[key] = cached
    return cached


class RelGraphConv(nn.Module):
    """Relational graph convolution (Schlichtkrull et al.), DGL's ``RelGraphConv``.

    ``h_v = act(dropout(sum over in-edges (u, e, v) of norm[e] * h_u @ W[etypes[e]] + h_v @ W_0 + bias))``,
    with layer norm (when asked) before the bias, as in DGL 2.1. ``regularizer`` is ``None``, ``"basis"``
    or ``"bdd"`` (see :class:`TypedLinear`, here ``linear_r``); ``num_bases`` defaults to ``num_rels``.
    ``state_dict`` keys are DGL's: ``h_bias``, ``loop_weight``, ``linear_r.W``, ``linear_r.coeff`` (basis)
    and ``layer_norm_weight.weight``/``.bias`` (layer norm), each present when its option is on.

    ``forward(g, feat, etypes, norm=None, *, presorted=False)``: ``etypes`` holds one relation per edge id,
    ``norm`` one weight per edge id (shape ``(E,)`` or ``(E, 1)``); ``presorted=True`` says the edge ids are
    in relation order (checked), which runs one matrix product per relation.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2, 3, 2, 5], [1, 2, 3, 4, 0, 3])
    >>> conv = gkt.RelGraphConv(10, 2, 3, regularizer="basis", num_bases=2)
    >>> conv(g, torch.ones(6, 10), torch.tensor([0, 1, 2, 0, 1, 2])).shape
    torch.Size([6, 2])
    >>> list(conv.state_dict())
    ['h_bias', 'loop_weight', 'linear_r.W', 'linear_r.coeff']
    """

    def __init__(self, in_feat: int, out_feat: int, num_rels: int, regularizer: str | None = None,
                 num_bases: int | None = None, bias: bool = True, activation=None, self_loop: bool = True,
                 dropout: float = 0.0, layer_norm: bool = False):
        super().__init__()
        _check_regularizer(regularizer, num_bases)
        check_layer_args(sizes={"in_feat": in_feat, "out_feat": out_feat, "num_rels": num_rels},
                         flags={"bias": bias, "self_loop": self_loop, "layer_norm": layer_norm},
                         rates={"dropout": dropout}, functions={"activation": activation})
        if regularizer is not None and num_bases is None:
            num_bases = num_rels
        # registered in DGL's order, so that state_dict() lists the keys in DGL's order too
        self.linear_r = TypedLinear(in_feat, out_feat, num_rels, regularizer, num_bases)
        self.bias, self.activation, self.self_loop, self.layer_norm = bias, activation, self_loop, layer_norm
        if self.bias:
            self.h_bias = nn.Parameter(torch.zeros(out_feat))
        if self.layer_norm:
            self.layer_norm_weight = nn.LayerNorm(out_feat, elementwise_affine=True)
        if self.self_loop:
            self.loop_weight = nn.Parameter(torch.empty(in_feat, out_feat))
            nn.init.xavier_uniform_(self.loop_weight, gain=nn.init.calculate_gain("relu"))
        self.dropout = nn.Dropout(dropout)
        self.presorted = False

    def forward(self, g, feat: torch.Tensor, etypes, norm: torch.Tensor | None = None, *,
                presorted: bool = False) -> torch.Tensor:
        g = _graph(g)  # a DynamicGraph: its snapshot, for every kernel of the layer
        self.presorted = check_bool("presorted", presorted)
        if not isinstance(feat, torch.Tensor) or feat.dim() != 2 or feat.shape[0] != g.num_src:
            raise ValueError(f"argument 'feat': expected a tensor of shape ({g.num_src}, {self.linear_r.in_size}) "
                             f"(a row per source node), found {tuple(getattr(feat, 'shape', ()))}")
        edges = g.num_edge_ids
        etypes = _types("etypes", etypes, edges, self.linear_r.num_types, feat.device)
        if presorted:
            # refuse edges that are not in type order
            _type_lengths("etypes", etypes, self.linear_r.num_types, "presorted")
        messages = self.linear_r._rows(feat, _sources_by_edge_id(g, feat.device), etypes, presorted)
        if norm is not None:
            if not isinstance(norm, torch.Tensor) or norm.numel() != edges or norm.shape[0] != edges:
                raise ValueError(f"argument 'norm': expected a tensor of shape ({edges},) or ({edges}, 1) (a weight "
                                 f"per edge), found {tuple(getattr(norm, 'shape', ()))}")
            messages = messages * norm.reshape(edges, 1).to(messages.dtype)
        h = spmm(g, "copy_rhs", "sum", None, messages.contiguous())
        if self.layer_norm:
            h = self.layer_norm_weight(h)
        if self.bias:
            h = h + self.h_bias
        if self.self_loop:
            h = h + feat[: g.num_dst] @ self.loop_weight
        if self.activation:
            h = self.activation(h)
        return self.dropout(h)
