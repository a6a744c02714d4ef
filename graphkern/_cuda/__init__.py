"""The CUDA driver package; its own namespace holds the host-side helpers of the CUDA backend:
recognising device arrays, adopting them without copies, validating device input with small device
reductions, and moving arrays between host and device.

Its driver modules are the twins of ``graphkern._cpu``'s (the same module names, classes, functions and
parameters; tests/test_twins.py compares them): :mod:`.sparse` (``spmm``, ``sddmm``, ``edge_softmax`` of a
validated, planned call), :mod:`.bfs` (``search``, ``searches``), :mod:`.segment` (``segment_mm``,
``gather_mm``, ``segment_mm_backward_b``), :mod:`.formats` (the sort and scan steps that build a graph's
formats on the device), :mod:`.pma` (``PackedStorage``, the packed memory array of a
:class:`~graphkern.DynamicGraph` on the GPU) and :mod:`.incremental` (``SearchState``, the device state of
an :class:`~graphkern.IncrementalBFS`). :func:`graphkern._backend.driver` imports them when the CUDA
backend is asked for; importing this package imports neither them nor ``numba.cuda``. They, this package
and ``kernels/cuda`` itself are the only modules that import ``graphkern.kernels.cuda``.

``numba.cuda`` is imported inside the functions, so importing graphkern never touches CUDA (the
simulator switch ``NUMBA_ENABLE_CUDASIM`` must be set before the first import of ``numba.cuda``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import _validate
from .._validate import IndexReductions, is_device_array, to_host_array
from ..errors import BackendUnavailableError


def require_cuda() -> None:
    """Raise :class:`BackendUnavailableError` saying why when no GPU (nor the simulator) is usable."""
    from .._config import cuda_status

    ok, why = cuda_status()
    if not ok:
        raise BackendUnavailableError(f"backend 'cuda' is not usable: {why}")


# ``__cuda_array_interface__`` stream values that need no host-side wait before graphkern launches:
# none given, or the legacy default stream (1), which numba's default stream (legacy or per-thread, where
# graphkern launches) is ordered after by CUDA itself. Any other stream is synchronised once on import.
_ORDERED_STREAMS = (None, 1)


def adopt(obj: Any, ordered: bool = False):
    """A numba device array viewing ``obj``'s device memory (no copy), or ``obj`` if it is one already.

    numba synchronises the exporter's stream on every import by default, a host-blocking wait per call
    (a torch training step would stall at every graphkern call); here that wait happens only for a stream
    CUDA does not already order before graphkern's launches (:data:`_ORDERED_STREAMS`), and never when the
    caller has ordered it on the device (``ordered``: the default stream waits for an event of it)."""
    from numba import cuda

    if type(obj).__name__ == "FakeCUDAArray" or cuda.devicearray.is_cuda_ndarray(obj):
        return obj
    stream = getattr(obj, "__cuda_array_interface__", {}).get("stream")
    return cuda.as_cuda_array(obj, sync=not ordered and stream not in _ORDERED_STREAMS)


def device_graph(g):
    """``g`` itself when it lives on the GPU, else its device twin (made once, cached on ``g``): the graph
    whose formats a cuda call on ``g`` uses (graphkern.dispatch plans its builds on the same one)."""
    if g.device == "cuda":
        return g
    twin = g._cache.get("cuda_twin")
    if twin is None:
        twin = g.to("cuda")
        g._cache["cuda_twin"] = twin
    return twin


def to_device(name: str, obj: Any):
    """``obj`` on the device: device arrays are adopted as they are, host arrays copied once."""
    from numba import cuda

    require_cuda()
    if is_device_array(obj):
        return adopt(obj)
    return cuda.to_device(np.ascontiguousarray(to_host_array(name, obj)))


def to_host(obj: Any) -> np.ndarray:
    """A NumPy copy of a device array (a host array is returned as it is)."""
    if is_device_array(obj):
        return adopt(obj).copy_to_host()
    return np.asarray(obj)


def empty(shape, dtype):
    from numba import cuda

    return cuda.device_array(shape, dtype)


def zeros(shape, dtype):
    return full(shape, 0, dtype)


def full(shape, value, dtype):
    from ..kernels.cuda.sort import fill

    out = empty(shape, dtype)
    if out.size:
        fill(out.reshape(out.size), value)
    return out


def is_c_contiguous(arr) -> bool:
    return bool(arr.is_c_contiguous()) if hasattr(arr, "is_c_contiguous") else bool(arr.flags.c_contiguous)


# ------------------------------------------------------------------------------ validation on the device

def index_array(name: str, obj: Any, dtype=None):
    """A 1-D contiguous int32/int64 device array (cast on the device when ``dtype`` differs)."""
    arr = adopt(obj)
    if arr.ndim != 1:
        raise ValueError(f"argument '{name}': expected a 1-D array, found {arr.ndim}-D with shape {arr.shape}")
    if np.dtype(arr.dtype) not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise TypeError(f"argument '{name}': expected an int32 or int64 device array, found dtype {arr.dtype}")
    if not is_c_contiguous(arr):
        raise ValueError(f"argument '{name}': expected a contiguous device array, found strides {arr.strides}")
    if dtype is not None and np.dtype(arr.dtype) != np.dtype(dtype):
        from ..kernels.cuda.sort import cast

        if arr.size and np.dtype(dtype) == np.int32:
            lo, hi = min_max(arr)
            if lo < np.iinfo(np.int32).min or hi > np.iinfo(np.int32).max:
                raise ValueError(f"argument '{name}': values in [{lo}, {hi}] do not fit int32")
        arr = cast(arr, empty(arr.size, dtype))
    return arr


def min_max(arr) -> tuple[int, int]:
    from ..kernels.cuda.reduce import min_max as _min_max

    return _min_max(arr)


class _DeviceReductions(IndexReductions):
    """The index checks' reductions over a device array: each one small kernel (kernels/cuda/reduce.py,
    kernels/cuda/sort.py) whose result alone comes back to the host."""

    @staticmethod
    def item(arr, pos: int) -> int:
        return int(arr[pos:pos + 1].copy_to_host()[0])

    @staticmethod
    def first_outside(arr, low: int, high: int) -> int:
        from ..kernels.cuda.reduce import first_outside

        return first_outside(arr, low, high)

    @staticmethod
    def first_descent(arr) -> int:
        from ..kernels.cuda.reduce import first_descent

        return first_descent(arr)

    @staticmethod
    def first_repeated(ids, space: int) -> tuple[int, int] | None:
        """Distinct ids are counted with one atomic increment each: valid input never sends two to one
        address."""
        from ..kernels.cuda.sort import histogram

        if _validate.sparse_id_space(ids.size, space):  # a histogram of the space would not fit: the host sorts
            return _validate.HOST_REDUCTIONS.first_repeated(ids.copy_to_host(), space)
        counts = histogram(ids, space, np.int64)
        if min_max(counts)[1] <= 1:
            return None
        seen = counts.copy_to_host()
        dup = int(np.argmax(seen > 1))
        return dup, int(seen[dup])


DEVICE_REDUCTIONS = _DeviceReductions()


# the checks of graphkern._validate over device arrays: one definition of each, with the device's reductions

def check_ids_in_range(name: str, ids, upper: int, what: str = "node ids") -> None:
    """:func:`graphkern._validate.check_ids_in_range` for device ``ids``."""
    _validate.check_ids_in_range(name, ids, upper, what, reductions=DEVICE_REDUCTIONS)


def check_indptr(name: str, indptr, nnz: int) -> None:
    """:func:`graphkern._validate.check_indptr` for a device ``indptr``."""
    _validate.check_indptr(name, indptr, nnz, reductions=DEVICE_REDUCTIONS)


def check_permutation(name: str, eids, size: int, id_space: int | None = None) -> None:
    """:func:`graphkern._validate.check_permutation` for device ``eids``."""
    _validate.check_permutation(name, eids, size, id_space, reductions=DEVICE_REDUCTIONS)
