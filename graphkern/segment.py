"""Typed matrix products: :func:`segment_mm` and :func:`gather_mm` (DGL's ``dgl.ops`` semantics).

``segment_mm(a, b, seglen_a)``: ``a`` is cut into consecutive segments of ``seglen_a[r]`` rows and segment
``r`` is multiplied by ``b[r]``. ``gather_mm(a, b, idx_a=None, idx_b=None)``: ``out[i] = a[idx_a[i]] @
b[idx_b[i]]``, a missing index meaning ``i`` itself. These are the products of a relational layer (one
weight matrix per edge or node type), run without materialising a weight per row.

The backend is chosen as for :func:`graphkern.spmm`: ``backend=`` (or the context manager, or the
environment) picks, and ``auto`` runs on the GPU only when an input already lives there; on the cuda
backend host inputs are copied to the device once and the result is a device array. Every input is
validated here, before any compiled code runs; the kernels trust it. The run itself, output included, is
the ``segment`` module of the backend's driver (``graphkern._cpu.segment`` or ``graphkern._cuda.segment``,
picked by :func:`graphkern._backend.driver`).
"""

from __future__ import annotations

import numpy as np

from . import _cuda
from ._backend import driver
from ._config import resolve_backend
from ._validate import as_index_array, check_ids_in_range, type_name

__all__ = ["segment_mm", "gather_mm", "segment_mm_backward_b"]

_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))


def _dense(name: str, arr, ndim: int, shape_words: str, on_device: bool):
    """A float32/float64 C-contiguous array of ``ndim`` dimensions, on the device when ``on_device``."""
    if _cuda.is_device_array(arr):
        if not on_device:
            raise TypeError(f"argument '{name}': expected a host array, found a CUDA device array; "
                            f"device arrays need backend='cuda'")
        arr = _cuda.adopt(arr)
    elif not isinstance(arr, np.ndarray):
        if hasattr(arr, "detach") and hasattr(arr, "numpy"):  # a CPU torch tensor, without importing torch
            arr = arr.detach().numpy()
        else:
            raise TypeError(f"argument '{name}': expected a NumPy array, found {type_name(arr)}")
    if np.dtype(arr.dtype) not in _FLOAT_DTYPES:
        raise TypeError(f"argument '{name}': expected float32 or float64, found {arr.dtype}")
    if arr.ndim != ndim:
        raise ValueError(f"argument '{name}': expected a {ndim}-D array {shape_words}, found shape {arr.shape}")
    if not _cuda.is_c_contiguous(arr):
        raise ValueError(f"argument '{name}': expected a C-contiguous array, found strides {arr.strides}; "
                         f"pass np.ascontiguousarray({name})")
    if on_device and isinstance(arr, np.ndarray):
        arr = _cuda.to_device(name, arr)
    return arr


def _same_dtype(a, b, b_name: str = "b") -> None:
    if np.dtype(a.dtype) != np.dtype(b.dtype):
        raise TypeError(f"argument '{b_name}': expected the dtype of 'a' ({a.dtype}), found {b.dtype}")


def _index(name: str, idx, upper: int, what: str, on_device: bool):
    """A 1-D int32/int64 index array with every value in ``[0, upper)`` (other integer dtypes become int64)."""
    if _cuda.is_device_array(idx):
        if not on_device:
            raise TypeError(f"argument '{name}': expected a host array, found a CUDA device array; "
                            f"device arrays need backend='cuda'")
        arr = _cuda.index_array(name, idx)
        _cuda.check_ids_in_range(name, arr, upper, what)
        return arr
    arr = as_index_array(name, idx)
    if arr.dtype not in _INDEX_DTYPES:
        arr = as_index_array(name, arr, np.int64)
    check_ids_in_range(name, arr, upper, what)
    return _cuda.to_device(name, arr) if on_device else arr


def _offsets(seglen, segments: int, rows: int) -> np.ndarray:
    """``[0, cumsum(seglen)]`` after checking ``seglen``: host integers, one per segment, none negative,
    summing to ``rows``. A device ``seglen`` is copied to the host (it is one value per segment)."""
    if _cuda.is_device_array(seglen):
        seglen = _cuda.to_host(seglen)
    lengths = as_index_array("seglen_a", seglen)
    if lengths.size != segments:
        raise ValueError(f"argument 'seglen_a': expected {segments} segment lengths (one per matrix of 'b'), "
                         f"found {lengths.size}")
    if lengths.size and lengths.dtype.kind == "i" and int(lengths.min()) < 0:
        pos = int(np.argmax(lengths < 0))
        raise ValueError(f"argument 'seglen_a': expected lengths >= 0, found {int(lengths[pos])} at position {pos}")
    if lengths.size and int(lengths.max()) > rows:
        pos = int(np.argmax(lengths > rows))
        raise ValueError(f"argument 'seglen_a': expected lengths summing to the {rows} rows of 'a', found "
                         f"{int(lengths[pos])} at position {pos} alone")
    total = int(lengths.sum(dtype=np.uint64))  # each length is in [0, rows] now: the sum cannot wrap
    if total != rows:
        raise ValueError(f"argument 'seglen_a': expected lengths summing to the {rows} rows of 'a', found sum "
                         f"{total}")
    offsets = np.zeros(lengths.size + 1, np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return offsets


def segment_mm(a, b, seglen_a, *, backend=None):
    """Matrix products by segment: ``out[o_r:o_r + seglen_a[r]] = a[o_r:o_r + seglen_a[r]] @ b[r]``
    with ``o_r = seglen_a[:r].sum()``.

    Parameters
    ----------
    a : ndarray, shape (N, D1), float32 or float64
    b : ndarray, shape (R, D1, D2), the dtype of ``a``
    seglen_a : array of R integers
        Segment lengths, none negative, summing to N. Empty segments are allowed.
    backend : {None, "auto", "cpu", "cuda"}

    Returns
    -------
    out : ndarray, shape (N, D2)

    Examples
    --------
    >>> import numpy as np, graphkern as gk
    >>> a = np.arange(6.0).reshape(3, 2)
    >>> b = np.stack([np.eye(2), 2 * np.eye(2)])
    >>> gk.segment_mm(a, b, [1, 2]).tolist()
    [[0.0, 1.0], [4.0, 6.0], [8.0, 10.0]]
    """
    concrete = resolve_backend(backend, a, b)
    on_device = concrete == "cuda"
    a = _dense("a", a, 2, "(N, D1)", on_device)
    b = _dense("b", b, 3, "(R, D1, D2)", on_device)
    _same_dtype(a, b)
    if b.shape[1] != a.shape[1]:
        raise ValueError(f"argument 'b': expected shape (R, {a.shape[1]}, D2) (D1 = a.shape[1]), found {b.shape}")
    offsets = _offsets(seglen_a, b.shape[0], a.shape[0])
    return driver(concrete).segment.segment_mm(a, b, offsets)


def gather_mm(a, b, *, idx_a=None, idx_b=None, backend=None):
    """Gathered matrix products: ``out[i] = a[idx_a[i]] @ b[idx_b[i]]``.

    As DGL's ``gather_mm`` (``dgl.ops.gather_mm(a, b, *, idx_b)`` and the two-index form of its backend):
    a missing ``idx_a`` means row ``i`` of ``a``, a missing ``idx_b`` matrix ``i`` of ``b``. The output
    has one row per index (``len(idx_a)`` or ``len(idx_b)``; both, when given, have that length).

    Parameters
    ----------
    a : ndarray, shape (N, D1), float32 or float64
    b : ndarray, shape (R, D1, D2), the dtype of ``a``
    idx_a : array of K integers in [0, N), optional
    idx_b : array of K integers in [0, R), optional
    backend : {None, "auto", "cpu", "cuda"}

    Returns
    -------
    out : ndarray, shape (K, D2)

    Examples
    --------
    >>> import numpy as np, graphkern as gk
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> b = np.stack([np.eye(2), -np.eye(2)])
    >>> gk.gather_mm(a, b, idx_b=[1, 0]).tolist()
    [[-1.0, -2.0], [3.0, 4.0]]
    >>> gk.gather_mm(a, b, idx_a=[1, 1, 0], idx_b=[0, 1, 1]).tolist()
    [[3.0, 4.0], [-3.0, -4.0], [-1.0, -2.0]]
    """
    concrete = resolve_backend(backend, a, b, idx_a, idx_b)
    on_device = concrete == "cuda"
    a = _dense("a", a, 2, "(N, D1)", on_device)
    b = _dense("b", b, 3, "(R, D1, D2)", on_device)
    _same_dtype(a, b)
    if b.shape[1] != a.shape[1]:
        raise ValueError(f"argument 'b': expected shape (R, {a.shape[1]}, D2) (D1 = a.shape[1]), found {b.shape}")
    ia = None if idx_a is None else _index("idx_a", idx_a, a.shape[0], "row ids of 'a'", on_device)
    ib = None if idx_b is None else _index("idx_b", idx_b, b.shape[0], "matrix ids of 'b'", on_device)
    if ia is not None and ib is not None and ia.shape[0] != ib.shape[0]:
        raise ValueError(f"argument 'idx_b': expected the length of 'idx_a' ({ia.shape[0]}), found {ib.shape[0]}")
    if ia is None and ib is None and b.shape[0] != a.shape[0]:
        raise ValueError(f"argument 'b': without indices, expected one matrix per row of 'a' ({a.shape[0]}), "
                         f"found {b.shape[0]}")
    if ia is None and ib is not None and ib.shape[0] != a.shape[0]:
        raise ValueError(f"argument 'idx_b': without 'idx_a', expected one index per row of 'a' ({a.shape[0]}), "
                         f"found {ib.shape[0]}")
    if ib is None and ia is not None and ia.shape[0] != b.shape[0]:
        raise ValueError(f"argument 'idx_a': without 'idx_b', expected one index per matrix of 'b' "
                         f"({b.shape[0]}), found {ia.shape[0]}")
    rows = ia.shape[0] if ia is not None else (ib.shape[0] if ib is not None else a.shape[0])
    # an absent index is passed as a one-element placeholder the kernel never reads (use_idx_* is False)
    placeholder = ia if ia is not None else ib
    if placeholder is None:
        placeholder = _cuda.to_device("idx", np.zeros(1, np.int64)) if on_device else np.zeros(1, np.int64)
    return driver(concrete).segment.gather_mm(a, b, placeholder if ia is None else ia,
                                              placeholder if ib is None else ib, ia is not None, ib is not None,
                                              rows)


def segment_mm_backward_b(a, dz, seglen_a, *, backend=None):
    """The gradient of ``b`` in :func:`segment_mm`: ``out[r] = a[seg r].T @ dz[seg r]``, shape (R, D1, D2).

    Examples
    --------
    >>> import numpy as np
    >>> from graphkern.segment import segment_mm_backward_b
    >>> a = np.array([[1.0], [2.0], [3.0]])
    >>> dz = np.ones((3, 2))
    >>> segment_mm_backward_b(a, dz, [2, 1]).tolist()
    [[[3.0, 3.0]], [[3.0, 3.0]]]
    """
    concrete = resolve_backend(backend, a, dz)
    on_device = concrete == "cuda"
    a = _dense("a", a, 2, "(N, D1)", on_device)
    dz = _dense("dz", dz, 2, "(N, D2)", on_device)
    _same_dtype(a, dz, "dz")
    if dz.shape[0] != a.shape[0]:
        raise ValueError(f"argument 'dz': expected {a.shape[0]} rows (those of 'a'), found shape {dz.shape}")
    lengths = seglen_a
    if _cuda.is_device_array(lengths):
        lengths = _cuda.to_host(lengths)
    lengths = as_index_array("seglen_a", lengths)
    offsets = _offsets(lengths, lengths.size, a.shape[0])
    return driver(concrete).segment.segment_mm_backward_b(a, dz, offsets)
