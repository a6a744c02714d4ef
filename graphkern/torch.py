"""PyTorch autograd for the generalized sparse kernels, and GNN layers built on them.

``import graphkern.torch as gkt`` needs torch (``pip install "graphkern[torch]"``); nothing else in graphkern
imports torch. The functions take and return tensors; CPU tensors reach the compiled kernels as NumPy views
of the same memory, CUDA tensors as numba device arrays viewing the same device memory (through
``__cuda_array_interface__``; no copy in, no copy out), so the cuda backend runs them and the results
are CUDA tensors on the same device. Gradients follow DGL's rules (docs/design.md, section 'Autograd'):

- ``sub`` and ``div`` become ``add(x, -y)`` and ``mul(x, 1 / y)`` before autograd, as in DGL, so only
  add, mul, dot and the copies need backward rules;
- the backward of an SpMM runs on the reverse graph (cached on the forward graph), sums for add/copy,
  ``mul`` with the other operand, and for max/min scatters the gradient to the arg outputs (a destination
  without in-edges, arg -1, passes no gradient anywhere);
- gradients of broadcast operands are summed over the broadcast axes.

>>> import torch, graphkern as gk, graphkern.torch as gkt
>>> g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0])
>>> x = torch.ones(3, 4, dtype=torch.float64, requires_grad=True)
>>> gkt.copy_u_sum(g, x).sum().backward()
>>> x.grad[:, 0].tolist()
[1.0, 1.0, 1.0]
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from . import _cuda
from . import sparse as _sparse
from ._validate import check_choice, type_name
from .graph import Graph

__all__ = ["spmm", "sddmm", "edge_softmax", "GraphConv", "GATConv", "SAGEConv", "ops"]


# ------------------------------------------------------------------------------ tensors <-> arrays

def _graph(g) -> Graph:
    """The Graph a call and its backward run on: ``g`` itself, or a DynamicGraph's snapshot (the cached
    one while it is current, as for graphkern.spmm). Autograd keeps that snapshot, so a backward runs on
    the edges its forward saw even when a batch changes the DynamicGraph in between, and the reverse
    graph and degrees cached for the backward live on an immutable Graph. Anything else is a TypeError
    naming ``g``."""
    return _sparse._graph_of(g)


def _array(t: torch.Tensor | None, name: str):
    """What the kernels take for a tensor: a NumPy view of a CPU tensor, a numba device array viewing a
    CUDA tensor (a contiguous copy first only when the tensor is strided)."""
    if t is None:
        return None
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"argument '{name}': expected a torch.Tensor, found {type_name(t)}")
    t = t.detach().contiguous()
    device = _device_type(t)
    if device == "cpu":
        return t.numpy()
    if device == "cuda":
        return _device_view(t)
    raise TypeError(f"argument '{name}': expected a tensor on the CPU or on a CUDA device, found one on {t.device}")


def _tensor(a) -> torch.Tensor:
    """The tensor viewing a kernel's result: host arrays stay on the CPU, device arrays on their GPU."""
    if isinstance(a, np.ndarray):
        return torch.from_numpy(a)
    return _tensor_from_device(a)


# The three functions below are the whole torch <-> CUDA boundary. tests/cuda replace them so that the
# layer's device path (graphkern's cuda backend in numba-cuda's simulator, device arrays through every
# forward and backward) runs with this machine's CPU-only torch.

def _device_type(t: torch.Tensor) -> str:
    return t.device.type


def _device_view(t: torch.Tensor):
    """A numba device array on ``t``'s memory, on the GPU numba works on (``numba.cuda.select_device``).
    Graphkern launches on numba's default stream; when torch works on a stream of its own
    (``torch.cuda.stream(...)``), that stream is drained first so that the kernel reads finished inputs."""
    from numba import cuda

    _cuda.require_cuda()
    current = cuda.get_current_device().id
    if t.device.index is not None and t.device.index != current:
        raise ValueError(f"a tensor on {t.device}, but numba works on cuda:{current}; move the tensor there or "
                         f"call numba.cuda.select_device({t.device.index}) first")
    stream = torch.cuda.current_stream(t.device)
    if stream.cuda_stream != 0:
        stream.synchronize()
    return _cuda.adopt(t)


def _tensor_from_device(a) -> torch.Tensor:
    """A CUDA tensor on a device array's memory (zero copy; torch keeps ``a`` alive). Under a torch stream
    of its own, graphkern's work is waited for, so torch's next kernel on that stream reads the result."""
    from numba import cuda

    device = torch.device("cuda", cuda.get_current_device().id)
    if torch.cuda.current_stream(device).cuda_stream != 0:
        cuda.default_stream().synchronize()
    return torch.as_tensor(a, device=device)


def _index_tensor(a) -> torch.Tensor:
    """An arg output (node or edge ids, -1 for none) as an int64 tensor, where torch's gather wants it."""
    return _tensor(a).to(torch.int64)


def _node_counts(g: Graph, which: str, like: torch.Tensor) -> torch.Tensor:
    """``g``'s in- or out-degrees as an int64 tensor on ``like``'s device (kept on the graph per device)."""
    cache = getattr(g, "_cache", None)  # a DynamicGraph changes between calls: nothing is kept on it
    key = ("torch_degrees", which, str(like.device))
    counts = None if cache is None else cache.get(key)
    if counts is None:
        degrees = g.in_degrees() if which == "in" else g.out_degrees()
        counts = torch.from_numpy(_cuda.to_host(degrees).astype(np.int64)).to(like.device)
        if cache is not None:
            cache[key] = counts
    return counts


def _reverse(g: Graph) -> Graph:
    """The reverse graph, kept on ``g`` so that the formats its backward builds are built once."""
    rev = g._cache.get("torch_reverse")
    if rev is None:
        rev = g.reverse()
        g._cache["torch_reverse"] = rev
    return rev


def _feature_dims(t: torch.Tensor) -> tuple[int, ...]:
    return tuple(t.shape[1:])


def _padded(t: torch.Tensor, ndim: int) -> torch.Tensor:
    """``t`` with size-1 axes inserted after axis 0 until it has ``ndim`` feature axes (DGL's padding)."""
    missing = ndim - (t.dim() - 1)
    return t.reshape(t.shape[0], *([1] * missing), *t.shape[1:]) if missing > 0 else t


def _times(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``a * b`` with DGL's broadcasting (feature axes padded after axis 0, not torch's left padding)."""
    ndim = max(a.dim(), b.dim()) - 1
    return _padded(a, ndim) * _padded(b, ndim)


def _reduce_grad(grad: torch.Tensor, shape: torch.Size) -> torch.Tensor:
    """Sum ``grad`` over the axes along which an operand of ``shape`` was broadcast."""
    if tuple(grad.shape) == tuple(shape):
        return grad
    feature = tuple(shape[1:])
    out_feature = tuple(grad.shape[1:])
    padded = (1,) * (len(out_feature) - len(feature)) + feature
    axes = [i + 1 for i, (a, b) in enumerate(zip(padded, out_feature)) if a == 1 and b != 1]
    if axes:
        grad = grad.sum(dim=axes, keepdim=True)
    return grad.reshape(shape)


def _need_reduce_last_dim(x: torch.Tensor, y: torch.Tensor) -> bool:
    """DGL's test for a weight broadcast along the last axis only, where ``dot`` gives its gradient."""
    xs, ys = _feature_dims(x), _feature_dims(y)
    return len(xs) == len(ys) and len(ys) > 0 and ys[-1] == 1 != xs[-1] and xs[:-1] == ys[:-1]


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
    with ``-efeat``/``1 / efeat`` as in DGL. Arguments and shapes as in :func:`graphkern.spmm`.

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
    op, efeat = _without_sub_div(op, efeat)
    if reduce == "mean":
        total = GSpMM.apply(g, op, "sum", ufeat, efeat)
        degrees = _node_counts(g, "in", total).clamp(min=1).to(total.dtype)
        return total / degrees.reshape(-1, *([1] * (total.dim() - 1)))
    return GSpMM.apply(g, op, reduce, ufeat, efeat)


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
    op, rhs = _without_sub_div(op, rhs)
    return GSDDMM.apply(g, op, lhs, rhs, lhs_target, rhs_target)


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
    """Differentiable :func:`graphkern.edge_softmax`; ``logits`` of shape ``(E,)``, ``(E, H)`` or ``(E, H, 1)``.

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
    return EdgeSoftmax.apply(g, logits, norm_by)


# ------------------------------------------------------------------------------ DGL's generated names

class _Ops:
    """DGL's generated names (``u_mul_e_sum``, ``copy_u_max``, ``u_dot_v``, ...) over the functions above."""

    def __init__(self):
        for op in ("add", "sub", "mul", "div"):
            for reduce in ("sum", "max", "min", "mean"):
                self._bind(f"u_{op}_e_{reduce}", lambda g, x, y, op=op, r=reduce: spmm(g, op, r, x, y))
        for reduce in ("sum", "max", "min", "mean"):
            self._bind(f"copy_u_{reduce}", lambda g, x, r=reduce: spmm(g, "copy_lhs", r, x, None))
            self._bind(f"copy_e_{reduce}", lambda g, y, r=reduce: spmm(g, "copy_rhs", r, None, y))
        for lt in "uve":
            for rt in "uve":
                if lt != rt:
                    for op in ("add", "sub", "mul", "div", "dot"):
                        self._bind(f"{lt}_{op}_{rt}",
                                   lambda g, x, y, op=op, lt=lt, rt=rt: sddmm(g, op, x, y, lt, rt))
        self._bind("copy_u", lambda g, x: sddmm(g, "copy_lhs", x, None, "u", "v"))
        self._bind("copy_v", lambda g, x: sddmm(g, "copy_rhs", None, x, "u", "v"))

    def _bind(self, name, func):
        func.__name__ = name
        func.__doc__ = f"Differentiable ``graphkern.ops.{name}``."
        setattr(self, name, func)
        globals()[name] = func
        __all__.append(name)


ops = _Ops()


# ----------------------------------------------------------------------------------------- layers


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


class GraphConv(nn.Module):
    """Graph convolution (Kipf and Welling), with DGL's ``GraphConv`` arguments and behaviour.

    ``norm`` is ``"both"`` (``D_out^-1/2 A D_in^-1/2``, degrees clamped to at least 1), ``"right"`` (divide
    by the in-degree), ``"left"`` (by the out-degree) or ``"none"``. The weight is applied before the
    aggregation when it shrinks the features, after it otherwise, as in DGL.

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2, 0, 1, 2], [1, 2, 0, 0, 1, 2])
    >>> conv = gkt.GraphConv(4, 2)
    >>> conv(g, torch.ones(3, 4)).shape
    torch.Size([3, 2])
    """

    def __init__(self, in_feats: int, out_feats: int, norm: str = "both", weight: bool = True, bias: bool = True,
                 activation=None, allow_zero_in_degree: bool = False):
        super().__init__()
        check_choice("norm", norm, ("none", "both", "right", "left"))
        self._in_feats, self._out_feats, self._norm = in_feats, out_feats, norm
        self._allow_zero_in_degree = allow_zero_in_degree
        self.weight = nn.Parameter(torch.empty(in_feats, out_feats)) if weight else None
        self.bias = nn.Parameter(torch.zeros(out_feats)) if bias else None
        self._activation = activation
        self.reset_parameters()

    def reset_parameters(self):
        if self.weight is not None:
            nn.init.xavier_uniform_(self.weight)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def forward(self, graph: Graph, feat, weight: torch.Tensor | None = None,
                edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        graph = _graph(graph)  # a DynamicGraph: its snapshot, for every kernel of the layer
        _check_zero_in_degree(graph, self._allow_zero_in_degree, "GraphConv")
        feat_src, _ = _split_feat(feat, graph)
        if weight is not None and self.weight is not None:
            raise ValueError("GraphConv: an external weight was passed to a module that has its own (weight=True)")
        weight = self.weight if weight is None else weight
        if self._norm in ("left", "both"):
            degrees = _node_counts(graph, "out", feat_src).clamp(min=1).to(feat_src.dtype)
            scale = degrees.pow(-0.5) if self._norm == "both" else 1.0 / degrees
            feat_src = feat_src * _column(scale, feat_src.dim(), feat_src.dtype)

        def aggregate(h):
            if edge_weight is None:
                return spmm(graph, "copy_lhs", "sum", h.contiguous(), None)
            return spmm(graph, "mul", "sum", h.contiguous(), edge_weight.reshape(-1, 1))

        if weight is not None and self._in_feats > self._out_feats:
            rst = aggregate(feat_src @ weight)
        else:
            rst = aggregate(feat_src)
            if weight is not None:
                rst = rst @ weight
        if self._norm in ("right", "both"):
            degrees = _node_counts(graph, "in", rst).clamp(min=1).to(rst.dtype)
            scale = degrees.pow(-0.5) if self._norm == "both" else 1.0 / degrees
            rst = rst * _column(scale, rst.dim(), rst.dtype)
        if self.bias is not None:
            rst = rst + self.bias
        return self._activation(rst) if self._activation is not None else rst


class GATConv(nn.Module):
    """Graph attention (Velickovic et al.), with DGL's ``GATConv`` arguments; output ``(N, num_heads, out)``.

    Attention logits ``leaky_relu(a_l . W h_u + a_r . W h_v)`` are normalised by :func:`edge_softmax` over
    each destination's in-edges and weight the messages ``W h_u`` (``u_mul_e_sum``).

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2, 0, 1, 2], [1, 2, 0, 0, 1, 2])
    >>> gat = gkt.GATConv(4, 3, num_heads=2)
    >>> gat(g, torch.ones(3, 4)).shape
    torch.Size([3, 2, 3])
    """

    def __init__(self, in_feats, out_feats: int, num_heads: int, feat_drop: float = 0.0, attn_drop: float = 0.0,
                 negative_slope: float = 0.2, residual: bool = False, activation=None,
                 allow_zero_in_degree: bool = False, bias: bool = True):
        super().__init__()
        self._num_heads, self._out_feats = num_heads, out_feats
        self._allow_zero_in_degree = allow_zero_in_degree
        in_src, in_dst = in_feats if isinstance(in_feats, tuple) else (in_feats, in_feats)
        self._bipartite = isinstance(in_feats, tuple)
        if self._bipartite:
            self.fc_src = nn.Linear(in_src, out_feats * num_heads, bias=False)
            self.fc_dst = nn.Linear(in_dst, out_feats * num_heads, bias=False)
        else:
            self.fc = nn.Linear(in_src, out_feats * num_heads, bias=False)
        self.attn_l = nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.attn_r = nn.Parameter(torch.empty(1, num_heads, out_feats))
        self.feat_drop = nn.Dropout(feat_drop)
        self.attn_drop = nn.Dropout(attn_drop)
        self.leaky_relu = nn.LeakyReLU(negative_slope)
        self.bias = nn.Parameter(torch.zeros(num_heads * out_feats)) if bias else None
        if residual:
            same = in_dst == num_heads * out_feats
            self.res_fc = nn.Identity() if same else nn.Linear(in_dst, num_heads * out_feats, bias=False)
        else:
            self.res_fc = None
        self.activation = activation
        self.reset_parameters()

    def reset_parameters(self):
        gain = nn.init.calculate_gain("relu")
        for fc in ([self.fc_src, self.fc_dst] if self._bipartite else [self.fc]):
            nn.init.xavier_normal_(fc.weight, gain=gain)
        nn.init.xavier_normal_(self.attn_l, gain=gain)
        nn.init.xavier_normal_(self.attn_r, gain=gain)
        if self.bias is not None:
            nn.init.zeros_(self.bias)
        if isinstance(self.res_fc, nn.Linear):
            nn.init.xavier_normal_(self.res_fc.weight, gain=gain)

    def forward(self, graph: Graph, feat, get_attention: bool = False):
        graph = _graph(graph)  # a DynamicGraph: its snapshot, for every kernel of the layer
        _check_zero_in_degree(graph, self._allow_zero_in_degree, "GATConv")
        h_src, h_dst = _split_feat(feat, graph)
        h_src, h_dst = self.feat_drop(h_src), self.feat_drop(h_dst)
        heads, out = self._num_heads, self._out_feats
        if self._bipartite:
            f_src = self.fc_src(h_src).view(-1, heads, out)
            f_dst = self.fc_dst(h_dst).view(-1, heads, out)
        else:
            f_src = self.fc(h_src).view(-1, heads, out)
            f_dst = f_src[: graph.num_dst]
        el = (f_src * self.attn_l).sum(dim=-1, keepdim=True)  # (N_src, H, 1)
        er = (f_dst * self.attn_r).sum(dim=-1, keepdim=True)  # (N_dst, H, 1)
        logits = self.leaky_relu(sddmm(graph, "add", el, er, "u", "v"))  # (E, H, 1)
        attention = self.attn_drop(edge_softmax(graph, logits))
        rst = spmm(graph, "mul", "sum", f_src.contiguous(), attention.contiguous())  # (N_dst, H, out)
        if self.res_fc is not None:
            rst = rst + self.res_fc(h_dst).view(h_dst.shape[0], -1, out)
        if self.bias is not None:
            rst = rst + self.bias.view(1, heads, out)
        if self.activation is not None:
            rst = self.activation(rst)
        return (rst, attention) if get_attention else rst


class SAGEConv(nn.Module):
    """GraphSAGE (Hamilton et al.), with DGL's ``SAGEConv`` arguments.

    ``aggregator_type``: ``"mean"`` (mean of the in-neighbours, plus a separate self transform), ``"gcn"``
    (the mean over the in-neighbours and the node itself), ``"pool"`` (max over ``relu(W_pool h_u)``) or
    ``"lstm"`` (an LSTM over the in-neighbours in CSC order, run per in-degree bucket as DGL does).

    Examples
    --------
    >>> import torch, graphkern as gk, graphkern.torch as gkt
    >>> g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0])
    >>> sage = gkt.SAGEConv(4, 2, "mean")
    >>> sage(g, torch.ones(3, 4)).shape
    torch.Size([3, 2])
    """

    AGGREGATORS = ("mean", "gcn", "pool", "lstm")

    def __init__(self, in_feats, out_feats: int, aggregator_type: str, feat_drop: float = 0.0, bias: bool = True,
                 norm=None, activation=None):
        super().__init__()
        check_choice("aggregator_type", aggregator_type, self.AGGREGATORS)
        in_src, in_dst = in_feats if isinstance(in_feats, tuple) else (in_feats, in_feats)
        self._aggre_type = aggregator_type
        self.norm, self.activation = norm, activation
        self.feat_drop = nn.Dropout(feat_drop)
        if aggregator_type == "pool":
            self.fc_pool = nn.Linear(in_src, in_src)
        if aggregator_type == "lstm":
            self.lstm = nn.LSTM(in_src, in_src, batch_first=True)
        self.fc_neigh = nn.Linear(in_src, out_feats, bias=False)
        self.fc_self = nn.Linear(in_dst, out_feats, bias=False) if aggregator_type != "gcn" else None
        self.bias = nn.Parameter(torch.zeros(out_feats)) if bias else None
        self.reset_parameters()

    def reset_parameters(self):
        gain = nn.init.calculate_gain("relu")
        if self._aggre_type == "pool":
            nn.init.xavier_uniform_(self.fc_pool.weight, gain=gain)
        if self._aggre_type == "lstm":
            self.lstm.reset_parameters()
        nn.init.xavier_uniform_(self.fc_neigh.weight, gain=gain)
        if self.fc_self is not None:
            nn.init.xavier_uniform_(self.fc_self.weight, gain=gain)
        if self.bias is not None:
            nn.init.zeros_(self.bias)

    def _lstm_reduce(self, graph: Graph, h_src: torch.Tensor, edge_weight: torch.Tensor | None) -> torch.Tensor:
        """Each destination's last LSTM state over its in-neighbours, one batched LSTM per in-degree."""
        indptr_t, indices_t, eids_t = (torch.from_numpy(_cuda.to_host(a).astype(np.int64)).to(h_src.device)
                                       for a in graph.csc())
        degrees = indptr_t[1:] - indptr_t[:-1]
        out = h_src.new_zeros((graph.num_dst, h_src.shape[1]))
        for degree in torch.unique(degrees).tolist():
            if degree == 0:
                continue
            nodes = torch.nonzero(degrees == degree).ravel()
            slots = indptr_t[nodes].unsqueeze(1) + torch.arange(degree, device=h_src.device)
            neighbours = h_src[indices_t[slots]]  # (nodes, degree, features)
            if edge_weight is not None:
                neighbours = neighbours * edge_weight.reshape(-1)[eids_t[slots]].unsqueeze(-1)
            _, (last, _) = self.lstm(neighbours)
            out = out.index_copy(0, nodes, last[0])
        return out

    def forward(self, graph: Graph, feat, edge_weight: torch.Tensor | None = None) -> torch.Tensor:
        graph = _graph(graph)  # a DynamicGraph: its snapshot, for every kernel of the layer
        h_src, h_dst = _split_feat(feat, graph)
        h_src, h_dst = self.feat_drop(h_src), self.feat_drop(h_dst)

        def aggregate(h, reduce):
            if edge_weight is None:
                return spmm(graph, "copy_lhs", reduce, h.contiguous(), None)
            return spmm(graph, "mul", reduce, h.contiguous(), edge_weight.reshape(-1, 1))

        if self._aggre_type == "mean":
            # Transform first when it shrinks the features: the aggregation then moves fewer bytes.
            if h_src.shape[1] > self.fc_neigh.out_features:
                h_neigh = aggregate(self.fc_neigh(h_src), "mean")
            else:
                h_neigh = self.fc_neigh(aggregate(h_src, "mean"))
        elif self._aggre_type == "gcn":
            total = aggregate(h_src, "sum") + h_dst
            degrees = _node_counts(graph, "in", total).to(total.dtype).unsqueeze(-1)
            h_neigh = self.fc_neigh(total / (degrees + 1))
        elif self._aggre_type == "pool":
            h_neigh = self.fc_neigh(aggregate(torch.relu(self.fc_pool(h_src)), "max"))
        else:
            h_neigh = self.fc_neigh(self._lstm_reduce(graph, h_src, edge_weight))
        rst = h_neigh if self.fc_self is None else self.fc_self(h_dst) + h_neigh
        if self.bias is not None:
            rst = rst + self.bias
        if self.activation is not None:
            rst = self.activation(rst)
        if self.norm is not None:
            rst = self.norm(rst)
        return rst

