"""Differentiable g-SpMM, g-SDDMM and edge softmax: torch autograd Functions over the compiled kernels."""

from __future__ import annotations

import torch

from .. import sparse as _sparse
from .._sparse_inputs import operands_read
from .._validate import check_choice
from ..graph import Graph
from ._tensors import (
    _array,
    _graph,
    _index_tensor,
    _narrowed,
    _need_reduce_last_dim,
    _node_counts,
    _padded,
    _reduce_grad,
    _reverse,
    _tensor,
    _times,
    _widened,
)

__all__ = ["spmm", "sddmm", "edge_softmax"]

# ------------------------------------------------------------------------------------------- SpMM

def _spmm_arrays(g, op, reduce, x, y, with_arg):
    """Call the compiled kernel on views of ``x``/``y``; return tensors (out, arg_u, arg_e)."""
    result = _sparse.spmm(g, op, reduce, _array(x, "ufeat"), _array(y, "efeat"), return_arg=with_arg)
    if not with_arg:
        return _tensor(result), None, None
    out, arg_u, arg_e = result
    return (_tensor(out), None if arg_u is None else _index_tensor(arg_u),
            None if arg_e is None else _index_tensor(arg_e))


def _gather_expanded(t: torch.Tensor, index: torch.Tensor, out_dims: tuple[int, ...]) -> torch.Tensor:
    """``t[index]`` elementwise, ``t`` broadcast to the output's feature shape first."""
    full = _padded(t, len(out_dims)).expand(t.shape[0], *out_dims)
    return torch.gather(full, 0, index.clamp(min=0))


def _scatter_to_arg(grad: torch.Tensor, arg: torch.Tensor, rows: int) -> torch.Tensor:
    """Send each output element's gradient to the row its arg names; arg -1 (no in-edges) sends none."""
    grad = grad.masked_fill(arg < 0, 0)
    out = grad.new_zeros((rows,) + tuple(grad.shape[1:]))
    return out.scatter_add_(0, arg.clamp(min=0), grad)


def _without_sub_div(op: str, rhs):
    """DGL's rewrite before autograd: ``sub`` is ``add`` of ``-rhs``, ``div`` is ``mul`` by ``1 / rhs``."""
    if op == "sub" and rhs is not None:
        return "add", -rhs
    if op == "div" and rhs is not None:
        return "mul", 1.0 / rhs
    return op, rhs


class GSpMM(torch.autograd.Function):
    """``spmm(g, op, reduce, x, y)`` for op in add, mul, copy_lhs, copy_rhs and reduce in sum, max, min."""

    @staticmethod
    def forward(ctx, g, op, reduce, x, y):
        with_arg = reduce in ("max", "min")
        out, arg_u, arg_e = _spmm_arrays(g, op, reduce, x, y, with_arg)
        ctx.g, ctx.op, ctx.reduce = g, op, reduce
        ctx.x_shape = None if x is None else x.shape
        ctx.y_shape = None if y is None else y.shape
        ctx.save_for_backward(x, y, arg_u, arg_e)
        # The arg outputs say which edge won; they are not differentiable.
        return out

    @staticmethod
    def backward(ctx, grad_out):
        g, op, reduce = ctx.g, ctx.op, ctx.reduce
        x, y, arg_u, arg_e = ctx.saved_tensors
        grad_out = grad_out.contiguous()
        dx = dy = None
        out_dims = tuple(grad_out.shape[1:])
        if reduce == "sum":
            if ctx.needs_input_grad[3] and op != "copy_rhs":
                rev = _reverse(g)
                if op == "mul":
                    dx = _tensor(_sparse.spmm(rev, "mul", "sum", _array(grad_out, "grad"), _array(y, "y")))
                else:
                    dx = _tensor(_sparse.spmm(rev, "copy_lhs", "sum", _array(grad_out, "grad")))
                dx = _reduce_grad(dx, ctx.x_shape)
            if ctx.needs_input_grad[4] and op != "copy_lhs":
                if op == "mul" and _need_reduce_last_dim(x, y):
                    dy = _sparse.sddmm(g, "dot", _array(x, "x"), _array(grad_out, "grad"), "u", "v")
                elif op == "mul":
                    dy = _sparse.sddmm(g, "mul", _array(x, "x"), _array(grad_out, "grad"), "u", "v")
                else:
                    dy = _sparse.sddmm(g, "copy_rhs", None, _array(grad_out, "grad"), "u", "v")
                dy = _reduce_grad(_tensor(dy), ctx.y_shape)
        else:
            if ctx.needs_input_grad[3] and op != "copy_rhs":
                contrib = grad_out
                if op == "mul":
                    contrib = _gather_expanded(y, arg_e, out_dims) * grad_out
                dx = _reduce_grad(_scatter_to_arg(contrib, arg_u, g.num_src), ctx.x_shape)
            if ctx.needs_input_grad[4] and op != "copy_lhs":
                contrib = grad_out
                if op == "mul":
                    contrib = _gather_expanded(x, arg_u, out_dims) * grad_out
                dy = _reduce_grad(_scatter_to_arg(contrib, arg_e, g.num_edge_ids), ctx.y_shape)
        return None, None, None, dx, dy


def spmm(g: Graph, op: str, reduce: str, ufeat: torch.Tensor | None = None, efeat: torch.Tensor | None = None):
    """Differentiable :func:`graphkern.spmm`: ``out[v] = reduce over in-edges (u, e, v) of op(ufeat[u],
    efeat[e])``.

    ``mean`` is the sum divided by the in-degree (at least 1), ``sub``/``div`` go through ``add``/``mul``
    with ``-efeat``/``1 / efeat`` as in DGL. Arguments and shapes as in :func:`graphkern.spmm`; the
    operand a copy op does not read is ignored (no gradient). bfloat16 and float16 operands on the CPU
    (bfloat16 on a GPU) are computed in float32 and the result, like the gradients, has their dtype.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1], [1, 1])
    >>> x = torch.tensor([[1.0], [2.0]], requires_grad=True)
    >>> w = torch.tensor([[3.0], [4.0]], requires_grad=True)
    >>> out = gkt.spmm(g, "mul", "max", x, w)
    >>> out.ravel().tolist()
    [0.0, 8.0]
    >>> out.sum().backward(); x.grad.ravel().tolist(), w.grad.ravel().tolist()
    ([0.0, 4.0], [0.0, 2.0])
    """
    g = _graph(g)
    check_choice("op", op, _sparse.SPMM_OPS)
    check_choice("reduce", reduce, _sparse.SPMM_REDUCERS)
    (ufeat, efeat), dtype = _widened(*zip(("ufeat", "efeat"), operands_read(op, ufeat, efeat)))
    op, efeat = _without_sub_div(op, efeat)
    if reduce == "mean":
        total = GSpMM.apply(g, op, "sum", ufeat, efeat)
        degrees = _node_counts(g, "in", total).clamp(min=1).to(total.dtype)
        return _narrowed(total / degrees.reshape(-1, *([1] * (total.dim() - 1))), dtype)
    return _narrowed(GSpMM.apply(g, op, reduce, ufeat, efeat), dtype)


# ------------------------------------------------------------------------------------------ SDDMM

def _sddmm_arrays(g, op, lhs, rhs, lhs_target, rhs_target):
    return _tensor(_sparse.sddmm(g, op, _array(lhs, "lhs"), _array(rhs, "rhs"), lhs_target, rhs_target))


def _sddmm_operand_grad(g, op, grad, other, target, other_target, shape):
    """The gradient of one SDDMM operand at ``target`` given the other operand at ``other_target``."""
    if target == "e":
        if op in ("add", "copy"):
            d = grad
        else:  # mul, dot: the other operand gathered onto each edge, times the gradient
            d = _sddmm_arrays(g, "mul", grad.contiguous(), other, "e", other_target)
        return _reduce_grad(d, shape)
    onto = g if target == "v" else _reverse(g)  # an SpMM whose destinations are the operand's nodes
    grad = grad.contiguous()
    if op in ("add", "copy"):
        d = _tensor(_sparse.spmm(onto, "copy_rhs", "sum", None, _array(grad, "grad")))
    elif other_target == target:
        d = _times(_tensor(_sparse.spmm(onto, "copy_rhs", "sum", None, _array(grad, "grad"))), other)
    elif other_target == "e":
        d = _tensor(_sparse.spmm(onto, "copy_rhs", "sum", None, _array(_times(grad, other).contiguous(), "grad")))
    else:  # the other operand sits at the other end of each edge: a weighted SpMM
        d = _tensor(_sparse.spmm(onto, "mul", "sum", _array(other, "other"), _array(grad, "grad")))
    return _reduce_grad(d, shape)


class GSDDMM(torch.autograd.Function):
    """``sddmm(g, op, lhs, rhs, lhs_target, rhs_target)`` for op in add, mul, dot, copy_lhs, copy_rhs."""

    @staticmethod
    def forward(ctx, g, op, lhs, rhs, lhs_target, rhs_target):
        out = _sddmm_arrays(g, op, lhs, rhs, lhs_target, rhs_target)
        ctx.g, ctx.op, ctx.targets = g, op, (lhs_target, rhs_target)
        ctx.shapes = (None if lhs is None else lhs.shape, None if rhs is None else rhs.shape)
        ctx.save_for_backward(lhs, rhs)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        g, op, (lt, rt) = ctx.g, ctx.op, ctx.targets
        lhs, rhs = ctx.saved_tensors
        dl = dr = None
        kind = {"copy_lhs": "copy", "copy_rhs": "copy"}.get(op, op)
        if ctx.needs_input_grad[2] and op != "copy_rhs":
            dl = _sddmm_operand_grad(g, kind, grad_out, rhs, lt, rt, ctx.shapes[0])
        if ctx.needs_input_grad[3] and op != "copy_lhs":
            dr = _sddmm_operand_grad(g, kind, grad_out, lhs, rt, lt, ctx.shapes[1])
        return None, None, dl, dr, None, None


def sddmm(g: Graph, op: str, lhs: torch.Tensor | None, rhs: torch.Tensor | None, lhs_target: str = "u",
          rhs_target: str = "v"):
    """Differentiable :func:`graphkern.sddmm`: ``out[e] = op(lhs at lhs_target, rhs at rhs_target)``.

    The operand a copy op does not read is ignored; half-precision operands as in :func:`spmm`.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1], [1, 0])
    >>> x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    >>> s = gkt.sddmm(g, "dot", x, x, "u", "v")
    >>> s.ravel().tolist()
    [11.0, 11.0]
    >>> s.sum().backward(); x.grad.tolist()
    [[6.0, 8.0], [2.0, 4.0]]
    """
    g = _graph(g)
    check_choice("op", op, _sparse.SDDMM_OPS)
    check_choice("lhs_target", lhs_target, _sparse.TARGETS)
    check_choice("rhs_target", rhs_target, _sparse.TARGETS)
    (lhs, rhs), dtype = _widened(*zip(("lhs", "rhs"), operands_read(op, lhs, rhs)))
    op, rhs = _without_sub_div(op, rhs)
    return _narrowed(GSDDMM.apply(g, op, lhs, rhs, lhs_target, rhs_target), dtype)


# ----------------------------------------------------------------------------------- edge softmax

class EdgeSoftmax(torch.autograd.Function):
    """Softmax of edge logits over each destination's in-edges (source's out-edges for norm_by="src")."""

    @staticmethod
    def forward(ctx, g, logits, norm_by):
        out = _tensor(_sparse.edge_softmax(g, _array(logits, "logits"), norm_by))
        ctx.g, ctx.norm_by = g, norm_by
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, grad_out):
        (out,) = ctx.saved_tensors
        onto = ctx.g if ctx.norm_by == "dst" else _reverse(ctx.g)
        weighted = (out * grad_out).contiguous()
        row_sums = _sparse.spmm(onto, "copy_rhs", "sum", None, _array(weighted, "grad"))
        correction = _sparse.sddmm(onto, "mul", _array(out, "out"), row_sums, "e", "v")
        return None, weighted - _tensor(correction).reshape(weighted.shape), None


def edge_softmax(g: Graph, logits: torch.Tensor, norm_by: str = "dst"):
    """Differentiable :func:`graphkern.edge_softmax`; ``logits`` of shape ``(E,)``, ``(E, H)`` or ``(E, H, 1)``
    (half precision as in :func:`spmm`).

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2], [2, 2, 0])
    >>> a = gkt.edge_softmax(g, torch.zeros(3))
    >>> a.tolist()
    [0.5, 0.5, 1.0]
    """
    g = _graph(g)
    check_choice("norm_by", norm_by, ("dst", "src"))
    (logits,), dtype = _widened(("logits", logits))
    return _narrowed(EdgeSoftmax.apply(g, logits, norm_by), dtype)


