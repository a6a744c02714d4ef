"""The boundary between torch tensors and graphkern's arrays, and the tensor arithmetic the backward rules share.

CPU tensors reach the compiled kernels as NumPy views of the same memory, CUDA tensors as numba device arrays
viewing the same device memory (through ``__cuda_array_interface__``); results come back the same way, with no
copy.
"""

from __future__ import annotations

import numpy as np
import torch

from .. import _cuda
from .. import sparse as _sparse
from .._validate import type_name, writable
from ..graph import Graph

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


def _integer_tensor(name: str, obj) -> torch.Tensor:
    """``obj`` as an integer tensor: a tensor as it is, anything the array protocol takes converted (a
    read-only array copied, which torch would refuse to view); a TypeError naming ``name`` otherwise."""
    if not isinstance(obj, torch.Tensor):
        arr = np.asarray(obj)
        if arr.dtype.kind not in "iu":
            raise TypeError(f"argument '{name}': expected an integer tensor or array, found dtype {arr.dtype}")
        obj = torch.as_tensor(writable(arr))
    if obj.dtype.is_floating_point or obj.dtype.is_complex or obj.dtype == torch.bool:
        raise TypeError(f"argument '{name}': expected an integer tensor, found {obj.dtype}")
    return obj


# Dtypes the compiled kernels lack on a device: the operands are computed in float32 there and the result
# is stored in their dtype again, as DGL's CPU kernels accumulate bfloat16 and float16 in float32. The casts
# are torch operations, so autograd casts the gradients back the same way.
_WIDENED_DTYPES = {"cpu": (torch.float16, torch.bfloat16), "cuda": (torch.bfloat16,)}


def _widened(*named) -> tuple[list, torch.dtype | None]:
    """``(operands, dtype)``: the ``(name, tensor or None)`` operands in float32 when one of them has a dtype
    the kernels lack on its device, with that dtype to store the result in; else as given, and None.

    Operands of different dtypes raise ``TypeError`` naming both (the kernels' own rule, checked here
    before the cast would hide it)."""
    given = [(name, t) for name, t in named if isinstance(t, torch.Tensor)]
    narrow = [(name, t) for name, t in given if t.dtype in _WIDENED_DTYPES.get(_device_type(t), ())]
    if not narrow:
        return [t for _, t in named], None
    first, dtype = narrow[0][0], narrow[0][1].dtype
    for name, t in given:
        if t.dtype != dtype:
            raise TypeError(f"arguments '{first}' and '{name}': expected the same dtype, found {dtype} and {t.dtype}")
    return [t.float() if isinstance(t, torch.Tensor) else t for _, t in named], dtype


def _narrowed(out: torch.Tensor, dtype: torch.dtype | None) -> torch.Tensor:
    """A result computed by :func:`_widened` operands, in the operands' own dtype again."""
    return out if dtype is None else out.to(dtype)


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


def _order_after(waiting, done) -> None:
    """Make stream ``waiting`` run its later work after what stream ``done`` holds now (an event recorded on
    ``done`` that ``waiting`` waits for): the ordering happens on the device, the host does not wait."""
    from numba import cuda

    event = cuda.event(timing=False)
    event.record(done)
    event.wait(waiting)


def _torch_stream(device):
    """torch's current stream on ``device`` as a numba stream, or None for the legacy default stream
    (handle 0), which graphkern's launches on numba's default stream already follow."""
    from numba import cuda

    handle = torch.cuda.current_stream(device).cuda_stream
    return None if handle == 0 else cuda.external_stream(handle)


def _device_view(t: torch.Tensor):
    """A numba device array on ``t``'s memory, on the GPU numba works on (``numba.cuda.select_device``).
    Graphkern launches on numba's default stream; when torch works on a stream of its own
    (``torch.cuda.stream(...)``), the default stream is made to wait for the work queued there so far, on
    the device: no host synchronisation per call."""
    from numba import cuda

    _cuda.require_cuda()
    current = cuda.get_current_device().id
    if t.device.index is not None and t.device.index != current:
        raise ValueError(f"a tensor on {t.device}, but numba works on cuda:{current}; move the tensor there or "
                         f"call numba.cuda.select_device({t.device.index}) first")
    stream = _torch_stream(t.device)
    if stream is not None:
        _order_after(cuda.default_stream(), stream)
    return _cuda.adopt(t, ordered=True)


def _tensor_from_device(a) -> torch.Tensor:
    """A CUDA tensor on a device array's memory (zero copy; torch keeps ``a`` alive). Under a torch stream
    of its own, that stream is made to wait for graphkern's work on the default stream (on the device), so
    torch's next kernel there reads the finished result and the host never waits."""
    from numba import cuda

    device = torch.device("cuda", cuda.get_current_device().id)
    stream = _torch_stream(device)
    if stream is not None:
        _order_after(stream, cuda.default_stream())
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

