"""The inputs of the sparse kernels (graphkern.sparse), checked once, in Python, before any compiled code.

Which graph a call runs on (a DynamicGraph runs on its snapshot or, asked for, its packed arrays), which
backend (:func:`where`), and the feature arrays: float dtype, rows, C order, device (:func:`feature`),
with every error naming the argument, the expected and the found value.
"""

from __future__ import annotations

import numpy as np

from . import _broadcast, _cuda
from ._config import resolve_backend
from ._validate import check_choice, type_name, writable
from .kernels.cpu import spmm as _spmm_cpu

_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_DEVICE_FLOAT_DTYPES = (np.dtype(np.float16),) + _FLOAT_DTYPES


def graph_of(g, format=None):
    """A Graph, or for a DynamicGraph what the kernel runs on: its snapshot (the cached one while it is
    current, else built and cached), or with ``format="packed"`` its packed arrays directly.

    Building the snapshot (CSR, plus the CSC for SpMM) and running the kernel there costs about as much
    as one call over the packed arrays (gaps, walls and, for SpMM, per-thread partial outputs), and a
    current snapshot then serves every later call on the same edges much faster; a GNN layer calls
    several kernels per batch of changes, so SpMM and SDDMM build the snapshot; BFS runs on the packed
    arrays (see graphkern.traversal). Measured by ``python tools/dynamic_bench.py --figures packed``
    (figures in docs/performance.md, section 'CPU: dynamic graph')."""
    from .graph import DynamicGraph, Graph

    if format is not None and not isinstance(format, str):
        raise TypeError(f"argument 'format': expected None or a format name, found {type_name(format)}")
    if isinstance(g, DynamicGraph):
        if format == "packed":
            if g.device != "cpu":
                raise ValueError("argument 'format': the packed kernels run on a cpu DynamicGraph")
            return g
        snap = g.cached_snapshot()
        return snap if snap is not None else g.snapshot()
    if format == "packed":
        raise ValueError("argument 'format': 'packed' runs on a DynamicGraph's packed arrays; this is a Graph")
    if not isinstance(g, Graph):
        raise TypeError(f"argument 'g': expected a graphkern Graph or DynamicGraph, found {type_name(g)}")
    return g


def graph_planned(g, format=None, explaining: bool = False):
    """:func:`graph_of` for a plan: None when explaining a call on a DynamicGraph that would build its
    snapshot first (a plan builds nothing; the call then plans on the snapshot it builds)."""
    from .graph import DynamicGraph

    if explaining and isinstance(g, DynamicGraph) and format != "packed" and g.cached_snapshot() is None:
        return None
    return graph_of(g, format)


def is_packed(g) -> bool:
    """Whether :func:`graph_of` gave the packed arrays (a DynamicGraph) rather than a Graph."""
    from .graph import DynamicGraph

    return isinstance(g, DynamicGraph)


def where(g, backend, *arrays) -> bool:
    """Resolve the backend of a call: True for cuda (a device graph or device inputs under auto, or asked
    for), False for cpu, where a graph on the GPU is refused."""
    on_device = resolve_backend(backend, g, *arrays) == "cuda"
    if not on_device:
        g._require_host("the cpu backend")
    return on_device


def feature(name: str, arr, rows: int, what: str, on_device: bool = False, to_device: bool = True):
    """A float feature array with ``rows`` rows, C-contiguous; 1-D means one scalar per row.

    On the cuda backend the result is a device array: device input is adopted without a copy (float16
    allowed), host input is checked here and then copied to the device once (not with ``to_device=False``:
    a plan reads only the array's shape and dtype)."""
    if _cuda.is_device_array(arr):
        if not on_device:
            raise TypeError(f"argument '{name}': expected a host array, found a CUDA device array; "
                            f"device arrays need backend='cuda'")
        arr = _cuda.adopt(arr)
    elif not isinstance(arr, np.ndarray):
        if hasattr(arr, "detach") and hasattr(arr, "numpy"):
            arr = arr.detach().numpy()
        else:
            raise TypeError(f"argument '{name}': expected a NumPy array, found {type_name(arr)}")
    allowed = _DEVICE_FLOAT_DTYPES if on_device else _FLOAT_DTYPES
    if np.dtype(arr.dtype) not in allowed:
        if on_device:
            raise TypeError(f"argument '{name}': expected float16, float32 or float64, found {arr.dtype}")
        hint = " (float16 runs on the cuda backend only)" if arr.dtype == np.float16 else ""
        raise TypeError(f"argument '{name}': expected float32 or float64, found {arr.dtype}{hint}")
    if arr.ndim == 0:
        raise ValueError(f"argument '{name}': expected at least 1-D (one row per {what}), found a scalar")
    if arr.shape[0] != rows:
        raise ValueError(f"argument '{name}': expected {rows} rows (one per {what}), found shape {arr.shape}")
    if not _cuda.is_c_contiguous(arr):
        raise ValueError(f"argument '{name}': expected a C-contiguous array, found strides {arr.strides}; "
                         f"pass np.ascontiguousarray({name})")
    if on_device and to_device and isinstance(arr, np.ndarray):
        arr = _cuda.to_device(name, arr)
    elif to_device and isinstance(arr, np.ndarray):
        # a read-only array (one graphkern handed out, a memory map) is copied, not compiled for; a
        # writable one, the usual input, goes to the kernel as it is
        arr = writable(arr)
    return arr


def edge_word(g) -> str:
    """How an error names an edge feature's row: per edge, or per edge id when some ids are unused."""
    return "edge" if g.num_edge_ids == g.num_edges else "edge id"


def feature_shape(arr):
    """The feature shape broadcasting sees: the axes after the first, ``(1,)`` for one scalar per row."""
    return tuple(arr.shape[1:]) if arr.ndim > 1 else (1,)


def operands_read(op, lhs, rhs):
    """The operands an op reads: ``copy_lhs`` ignores ``rhs`` and ``copy_rhs`` ignores ``lhs``, whatever
    they are, never checked (DGL's rule: its own backward passes the unused operand along). An ``op`` that is
    not a name keeps both, for the op's own check to refuse by name."""
    if not isinstance(op, str):
        return lhs, rhs
    return (None if op == "copy_rhs" else lhs), (None if op == "copy_lhs" else rhs)


def check_spmm(g, op, reduce, ufeat, efeat, on_device=False, to_device=True):
    """The op, the reducer and the operands of an SpMM call: ``(x, w, broadcast)``, each operand a
    checked feature array or None when the op does not read it (``to_device``: see :func:`feature`)."""
    check_choice("op", op, _spmm_cpu.OPS)
    check_choice("reduce", reduce, _spmm_cpu.REDUCERS)
    ufeat, efeat = operands_read(op, ufeat, efeat)
    uses_x, uses_w = op != "copy_rhs", op != "copy_lhs"
    if uses_x and ufeat is None:
        raise ValueError(f"argument 'ufeat': op '{op}' needs source-node features, found None")
    if uses_w and efeat is None:
        raise ValueError(f"argument 'efeat': op '{op}' needs edge features, found None")
    x = feature("ufeat", ufeat, g.num_src, "source node", on_device, to_device) if uses_x else None
    w = feature("efeat", efeat, g.num_edge_ids, edge_word(g), on_device, to_device) if uses_w else None
    if x is not None and w is not None and x.dtype != w.dtype:
        raise TypeError(f"arguments 'ufeat' and 'efeat': expected the same dtype, found {x.dtype} and {w.dtype}")
    bcast = _broadcast.analyse(op, feature_shape(x) if x is not None else (),
                               feature_shape(w) if w is not None else (), "ufeat", "efeat")
    return x, w, bcast


def operand(name, arr, target, g, on_device=False, to_device=True):
    """An SDDMM operand taken from sources (``"u"``), destinations (``"v"``) or edges (``"e"``)."""
    rows = {"u": g.num_src, "v": g.num_dst, "e": g.num_edge_ids}[target]
    what = {"u": "source node", "v": "destination node", "e": edge_word(g)}[target]
    return feature(name, arr, rows, what, on_device, to_device)
