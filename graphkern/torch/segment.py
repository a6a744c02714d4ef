"""Differentiable typed matrix products and segment operations: DGL's ``segment_mm``, ``gather_mm``,
``segment_reduce`` and ``segment_softmax`` on tensors.

``segment_mm`` and ``gather_mm`` run graphkern's kernels (graphkern.segment) forward and backward, with
DGL's backward rules: ``grad_a = grad_out @ b.T`` by the same segments or indices (scattered back through
``idx_a`` when it is given), and ``grad_b[r] = sum of a[i].T @ grad_out[i]`` over the rows that used
``b[r]``. ``segment_reduce`` and ``segment_softmax`` use torch's own scatter operations (one fused
kernel each in torch, with torch's autograd), which is faster than building a graph per call as DGL does.
"""

from __future__ import annotations

import numpy as np
import torch

from .. import segment as _segment
from .._validate import as_index_array, check_choice, private, type_name
from ._tensors import _array, _integer_tensor, _narrowed, _tensor, _widened

__all__ = ["segment_mm", "gather_mm", "segment_reduce", "segment_softmax"]


def _host_lengths(name: str, seglen) -> np.ndarray:
    """Segment lengths as a host int64 array (a tensor on a GPU is copied: one value per segment)."""
    if isinstance(seglen, torch.Tensor):
        seglen = seglen.detach().cpu().numpy()
    lengths = as_index_array(name, seglen)
    return private(lengths.astype(np.int64, copy=False), seglen)  # kept for backward


def _transposed(b: torch.Tensor) -> torch.Tensor:
    """``b[r].T`` for every matrix, contiguous (the kernels read row-major matrices)."""
    return b.detach().transpose(1, 2).contiguous()


class SegmentMM(torch.autograd.Function):
    """``segment_mm(a, b, seglen)`` with gradients for ``a`` and ``b``."""

    @staticmethod
    def forward(ctx, a, b, seglen):
        out = _tensor(_segment.segment_mm(_array(a, "a"), _array(b, "b"), seglen))
        ctx.seglen = seglen
        ctx.save_for_backward(a, b)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        a, b = ctx.saved_tensors
        grad = _array(grad_out, "grad_out")
        da = db = None
        if ctx.needs_input_grad[0]:
            da = _tensor(_segment.segment_mm(grad, _array(_transposed(b), "b"), ctx.seglen))
        if ctx.needs_input_grad[1]:
            db = _tensor(_segment.segment_mm_backward_b(_array(a, "a"), grad, ctx.seglen))
        return da, db, None


def segment_mm(a: torch.Tensor, b: torch.Tensor, seglen_a) -> torch.Tensor:
    """Differentiable :func:`graphkern.segment_mm`: ``out[rows of segment r] = a[rows of segment r] @ b[r]``.

    Parameters
    ----------
    a : Tensor, shape (N, D1), float32 or float64 (bfloat16 and float16 on the CPU are computed in
        float32, the result and the gradients stored in their dtype, as DGL does)
    b : Tensor, shape (R, D1, D2), the dtype of ``a``
    seglen_a : Tensor or sequence of R integers summing to N
        Kept on the host as in DGL (a tensor on a GPU is copied once).

    Returns
    -------
    Tensor, shape (N, D2)

    Examples
    --------
    >>> import torch, graphkern.torch as gkt
    >>> a = torch.ones(3, 2, requires_grad=True)
    >>> b = torch.stack([torch.eye(2), 2 * torch.eye(2)]).requires_grad_()
    >>> out = gkt.segment_mm(a, b, torch.tensor([1, 2]))
    >>> out.tolist()
    [[1.0, 1.0], [2.0, 2.0], [2.0, 2.0]]
    >>> out.sum().backward(); a.grad.tolist(), b.grad[1].tolist()
    ([[1.0, 1.0], [2.0, 2.0], [2.0, 2.0]], [[2.0, 2.0], [2.0, 2.0]])
    """
    (a, b), dtype = _widened(("a", a), ("b", b))
    return _narrowed(SegmentMM.apply(a, b, _host_lengths("seglen_a", seglen_a)), dtype)


def _index_tensor(name: str, idx, like: torch.Tensor) -> torch.Tensor | None:
    if idx is None:
        return None
    idx = _integer_tensor(name, idx)
    if idx.dtype not in (torch.int32, torch.int64):
        idx = idx.to(torch.int64)
    # saved for backward: a copy, so that a caller who changes the array (which may share the memory of the
    # tensor made from it) after the forward cannot change the backward
    return idx.to(like.device, copy=True)


class GatherMM(torch.autograd.Function):
    """``gather_mm(a, b, idx_a, idx_b)`` with gradients for ``a`` and ``b``."""

    @staticmethod
    def forward(ctx, a, b, idx_a, idx_b):
        out = _segment.gather_mm(_array(a, "a"), _array(b, "b"), idx_a=_array(idx_a, "idx_a"),
                                 idx_b=_array(idx_b, "idx_b"))
        ctx.save_for_backward(a, b, idx_a, idx_b)
        return _tensor(out)

    @staticmethod
    def backward(ctx, grad_out):
        a, b, idx_a, idx_b = ctx.saved_tensors
        grad_out = grad_out.contiguous()
        da = db = None
        if ctx.needs_input_grad[0]:
            # grad_out[i] @ b[idx_b[i]].T for every output row, then back to the row of a it came from
            rows = _tensor(_segment.gather_mm(_array(grad_out, "grad_out"), _array(_transposed(b), "b"),
                                              idx_b=_array(idx_b, "idx_b")))
            da = rows if idx_a is None else torch.zeros_like(a).index_add_(0, idx_a.long(), rows)
        if ctx.needs_input_grad[1]:
            a_rows = a.detach() if idx_a is None else a.detach().index_select(0, idx_a.long())
            if idx_b is None:  # one matrix per output row: each gets its own outer product
                db = a_rows.unsqueeze(2) * grad_out.unsqueeze(1)
            else:  # rows by matrix (a stable sort), then one sum of outer products per matrix
                order = torch.argsort(idx_b, stable=True)
                seglen = torch.bincount(idx_b.long(), minlength=b.shape[0]).cpu().numpy()
                db = _tensor(_segment.segment_mm_backward_b(
                    _array(a_rows.index_select(0, order), "a"), _array(grad_out.index_select(0, order), "grad_out"),
                    seglen))
        return da, db, None, None


def gather_mm(a: torch.Tensor, b: torch.Tensor, *, idx_a=None, idx_b=None) -> torch.Tensor:
    """Differentiable :func:`graphkern.gather_mm`: ``out[i] = a[idx_a[i]] @ b[idx_b[i]]``.

    ``dgl.ops.gather_mm(a, b, *, idx_b)`` is the call with ``idx_b`` alone; ``idx_a`` is the other index of
    DGL's backend function (a missing index means the row number itself). Dtypes as in :func:`segment_mm`.

    Examples
    --------
    >>> import torch, graphkern.torch as gkt
    >>> a = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> b = torch.stack([torch.eye(2), -torch.eye(2)]).requires_grad_()
    >>> out = gkt.gather_mm(a, b, idx_b=torch.tensor([1, 0]))
    >>> out.tolist()
    [[-1.0, -2.0], [3.0, 4.0]]
    >>> out.sum().backward(); a.grad.tolist()
    [[-1.0, -1.0], [1.0, 1.0]]
    """
    for name, t in (("a", a), ("b", b)):
        if not isinstance(t, torch.Tensor):
            raise TypeError(f"argument '{name}': expected a torch.Tensor, found {type_name(t)}")
    (a, b), dtype = _widened(("a", a), ("b", b))
    return _narrowed(GatherMM.apply(a, b, _index_tensor("idx_a", idx_a, a), _index_tensor("idx_b", idx_b, a)),
                     dtype)


# ------------------------------------------------------------------------------------ segment reductions

def _segment_ids(seglen, value: torch.Tensor, name: str = "seglen") -> tuple[torch.Tensor, torch.Tensor]:
    """``(lengths, segment of each row)`` on ``value``'s device, after checking the lengths."""
    if not isinstance(value, torch.Tensor):
        raise TypeError(f"argument 'value': expected a torch.Tensor, found {type_name(value)}")
    lengths = _host_lengths(name, seglen)
    if lengths.size and int(lengths.min()) < 0:
        pos = int(np.argmax(lengths < 0))
        raise ValueError(f"argument '{name}': expected lengths >= 0, found {int(lengths[pos])} at position {pos}")
    if value.dim() == 0:
        raise ValueError("argument 'value': expected at least 1-D (one row per element), found a scalar")
    rows = value.shape[0]
    if lengths.size and int(lengths.max()) > rows:
        pos = int(np.argmax(lengths > rows))
        raise ValueError(f"argument '{name}': expected lengths summing to value.shape[0] = {rows}, found "
                         f"{int(lengths[pos])} at position {pos} alone")
    total = int(lengths.sum(dtype=np.uint64))  # each length is in [0, rows] now: the sum cannot wrap
    if total != rows:
        raise ValueError(f"argument '{name}': expected lengths summing to value.shape[0] = {rows}, found sum {total}")
    counts = torch.from_numpy(lengths).to(value.device)
    ids = torch.repeat_interleave(torch.arange(lengths.size, device=value.device), counts, output_size=rows)
    return counts, ids


def _expand_ids(ids: torch.Tensor, value: torch.Tensor) -> torch.Tensor:
    return ids.reshape(-1, *([1] * (value.dim() - 1))).expand_as(value)


def segment_reduce(seglen, value: torch.Tensor, reducer: str = "sum") -> torch.Tensor:
    """DGL's ``segment_reduce``: reduce ``value`` along its first axis by consecutive segments.

    ``seglen[r]`` rows form segment ``r`` (they sum to ``value.shape[0]``; zero-length segments are allowed
    and give 0, as in DGL). ``reducer`` is ``"sum"``, ``"max"``, ``"min"`` or ``"mean"``. Runs on torch's
    scatter operations (``index_add``/``scatter_reduce``, one kernel each, differentiable by torch): for
    max and min torch shares the gradient of tied maxima equally, where DGL gives it to one of them.

    Examples
    --------
    >>> import torch, graphkern.torch as gkt
    >>> gkt.segment_reduce(torch.tensor([1, 0, 5, 4]), torch.ones(10, 2)).tolist()
    [[1.0, 1.0], [0.0, 0.0], [5.0, 5.0], [4.0, 4.0]]
    >>> gkt.segment_reduce([2, 1], torch.tensor([1.0, 3.0, -2.0]), "max").tolist()
    [3.0, -2.0]
    """
    check_choice("reducer", reducer, ("sum", "max", "min", "mean"))
    counts, ids = _segment_ids(seglen, value)
    out = value.new_zeros((counts.shape[0],) + tuple(value.shape[1:]))
    if reducer in ("sum", "mean"):
        out = out.index_add(0, ids, value)
        if reducer == "mean":
            out = out / counts.clamp(min=1).to(value.dtype).reshape(-1, *([1] * (value.dim() - 1)))
        return out
    # include_self=False: an empty segment keeps its 0, a non-empty one only its own values
    return out.scatter_reduce(0, _expand_ids(ids, value), value, "amax" if reducer == "max" else "amin",
                              include_self=False)


def segment_softmax(seglen, value: torch.Tensor) -> torch.Tensor:
    """DGL's ``segment_softmax``: softmax of ``value`` along its first axis within each segment.

    Stable (each segment's maximum is subtracted first; it cancels in the result, so it carries no
    gradient), on torch's scatter operations like :func:`segment_reduce`.

    Examples
    --------
    >>> import torch, graphkern.torch as gkt
    >>> gkt.segment_softmax(torch.tensor([1, 0, 3]), torch.zeros(4)).tolist()
    [1.0, 0.3333333432674408, 0.3333333432674408, 0.3333333432674408]
    """
    counts, ids = _segment_ids(seglen, value)
    shape = (counts.shape[0],) + tuple(value.shape[1:])
    index = _expand_ids(ids, value)
    peak = value.detach().new_zeros(shape).scatter_reduce(0, index, value.detach(), "amax", include_self=False)
    z = torch.exp(value - peak.index_select(0, ids))
    total = z.new_zeros(shape).index_add(0, ids, z)
    return z / total.index_select(0, ids)
