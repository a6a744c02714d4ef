"""Input validation: the one place where user input is checked, before any compiled code runs.

Every error names the argument, what was expected and what was found, so the message alone says how to
fix the call. Checks never modify the caller's arrays; what is kept past the call is made private first
(:func:`private`). Compiled kernels trust what passed here and do no checking of their own.
"""

from __future__ import annotations

import contextlib
import numbers
from typing import Any

import numpy as np

INDEX_DTYPES = (np.dtype(np.int32), np.dtype(np.int64))
INT32_MAX = int(np.iinfo(np.int32).max)
INT64_MAX = int(np.iinfo(np.int64).max)  # the widest index type: every count and id must fit it


def is_device_array(obj: Any) -> bool:
    """True for CUDA device data: numba device arrays, any ``__cuda_array_interface__`` object (CuPy,
    torch CUDA tensors), and the simulator's device arrays (which carry no such interface)."""
    return hasattr(obj, "__cuda_array_interface__") or type(obj).__name__ == "FakeCUDAArray"


def private(arr: np.ndarray, caller: Any) -> np.ndarray:
    """``arr`` itself when it is memory no one else can reach, else a copy: the one ownership rule for every
    array graphkern keeps past the call that received it (graph arrays, distributed matrices, what autograd
    saves for backward).

    ``arr`` is what a conversion of ``caller`` gave (``as_index_array``, ``np.asarray``...). It is private
    only when it owns its memory and that memory is not the caller's: a view of anything (a NumPy slice, a
    torch tensor's storage, a memoryview, an ``array.array``, a memory map) is copied, and so is the
    caller's own array and whatever another kind of object's ``__array__`` handed over (it may be that
    object's own memory; only a list or tuple always converts to new memory). Otherwise a caller who
    changes the buffer after the call, say an id after it was validated, would send a compiled kernel out
    of bounds.

    >>> import numpy as np
    >>> mine = np.arange(3)
    >>> private(mine, mine) is mine, private(np.asarray([0, 1]), [0, 1]).tolist()
    (False, [0, 1])
    """
    shared = arr is caller or not arr.flags.owndata or not isinstance(caller, (np.ndarray, list, tuple))
    return arr.copy() if shared else arr


def read_only(arr):
    """A view of host array ``arr`` that refuses writes, for handing out memory graphkern relies on.

    The other half of :func:`private`: a format, a snapshot's arrays or a search's live state handed to
    a caller as a writable array would let ``out[0] = 10**9`` change a graph whose ids were validated
    once, and the next compiled kernel would index past its arrays. The view shares the memory (no
    copy) and only the view is frozen: graphkern's own array stays writable, so the kernels that read
    it keep their one (writable) Numba specialisation. Arrays already read-only and device arrays
    (which carry no such flag) are returned as they are.

    >>> import numpy as np
    >>> kept = np.arange(3)
    >>> out = read_only(kept)
    >>> out.flags.writeable, kept.flags.writeable, np.shares_memory(out, kept)
    (False, True, True)
    """
    if isinstance(arr, np.ndarray) and arr.flags.writeable:
        arr = arr.view()
        arr.flags.writeable = False
    return arr


def read_only_field(name: str, doc: str) -> property:
    """A property handing out the array an object keeps in ``_<name>`` as a :func:`read_only` view.

    For objects whose arrays compiled kernels read directly (the distributed matrices): graphkern's code
    reads the private attribute, writable, so the kernels keep their one specialisation; callers get the
    public name, which refuses writes and cannot be rebound (the property has no setter).

    >>> import numpy as np
    >>> class Held:
    ...     ids = read_only_field("ids", "The ids.")
    ...     def __init__(self):
    ...         self._ids = np.arange(3)
    >>> h = Held()
    >>> h.ids.flags.writeable, h._ids.flags.writeable
    (False, True)
    """
    attr = "_" + name

    def get(self):
        return read_only(getattr(self, attr))

    return property(get, doc=doc)


def writable(arr: np.ndarray) -> np.ndarray:
    """``arr`` itself when it is writable, else a copy: the form an input takes before compiled code.

    Numba types a read-only array apart from a writable one (``readonly=True``), so handing one to a
    kernel compiles a second specialisation of it; what graphkern hands out (:func:`read_only`) comes
    back as input this way, e.g. ``Graph.from_csr(*g.csr())``. A writable array, the usual input, is
    not copied.

    >>> import numpy as np
    >>> a = read_only(np.arange(3))
    >>> writable(a).flags.writeable, writable(a) is not a
    (True, True)
    """
    return arr if arr.flags.writeable else arr.copy()


@contextlib.contextmanager
def named_as(**caller_names: str):
    """Errors raised inside name the arguments as the caller wrote them: a wrapper under another
    signature (DGL's ``u_mul_e_sum(g, x, y)`` calling ``spmm(g, "mul", "sum", ufeat, efeat)``) passes
    ``named_as(ufeat="x", efeat="y")``, and ``argument 'ufeat'`` in a ValueError or TypeError from the
    call reads ``argument 'x'``. The original error stays chained.

    >>> with named_as(ufeat="x"):  # doctest: +ELLIPSIS
    ...     raise ValueError("argument 'ufeat': expected 4 rows")
    Traceback (most recent call last):
    ...
    ValueError: argument 'x': expected 4 rows
    """
    try:
        yield
    except (ValueError, TypeError) as exc:
        message = renamed = str(exc)
        for inner, outer in caller_names.items():
            renamed = renamed.replace(f"'{inner}'", f"'{outer}'")
        if type(exc) not in (ValueError, TypeError) or renamed == message:
            raise  # a subclass may need more than a message to be rebuilt: left as it is
        raise type(exc)(renamed) from exc


def type_name(value: Any) -> str:
    """The type of ``value`` as an error message names it: with its module unless it is a builtin, so a
    networkx ``Graph`` is never mistaken for graphkern's."""
    kind = type(value)
    return kind.__qualname__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__qualname__}"


def _describe(value: Any) -> str:
    if isinstance(value, np.ndarray):
        return f"ndarray of dtype {value.dtype} and shape {value.shape}"
    return f"{type_name(value)} {value!r}" if np.isscalar(value) or value is None else type_name(value)


def check_int_scalar(name: str, value: Any, low: int | None = None, high: int | None = None) -> int:
    """An integer scalar (Python or NumPy, not bool) within ``[low, high]``."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"argument '{name}': expected an integer, found {_describe(value)}")
    value = int(value)
    if low is not None and value < low:
        raise ValueError(f"argument '{name}': expected an integer >= {low}, found {value}")
    if high is not None and value > high:
        raise ValueError(f"argument '{name}': expected an integer <= {high}, found {value}")
    return value


def check_bool(name: str, value: Any) -> bool:
    """``True`` or ``False`` (a NumPy bool too), not a truthy stand-in: a flag that reaches a compiled
    kernel as an int, a list or None would compile a specialisation of its own, or fail inside Numba."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"argument '{name}': expected True or False, found {_describe(value)}")
    return bool(value)


def check_real_scalar(name: str, value: Any, low: float | None = None, high: float | None = None, *,
                      low_open: bool = False, high_open: bool = False) -> float:
    """A finite real scalar (Python or NumPy int or float, not bool) within ``[low, high]`` (an open end
    with ``low_open``/``high_open``), as a float.

    NaN compares false with everything, so a bound check alone lets it through; infinities pass any
    one-sided bound. Both are refused here, by name."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise TypeError(f"argument '{name}': expected a real number, found {_describe(value)}")
    value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"argument '{name}': expected a finite real number, found {value}")
    if low is not None and (value <= low if low_open else value < low):
        raise ValueError(f"argument '{name}': expected a number {'>' if low_open else '>='} {low}, found {value}")
    if high is not None and (value >= high if high_open else value > high):
        raise ValueError(f"argument '{name}': expected a number {'<' if high_open else '<='} {high}, found {value}")
    return value


def check_choice(name: str, value: Any, choices) -> str:
    """One of a fixed set of names; the error lists the valid ones."""
    if not isinstance(value, str) or value not in choices:
        valid = ", ".join(repr(c) for c in choices)
        raise ValueError(f"argument '{name}': expected one of {valid}, found {value!r}")
    return value


def to_host_array(name: str, obj: Any) -> np.ndarray:
    """A NumPy view of ``obj`` (NumPy arrays, sequences, CPU torch tensors); no copy when possible."""
    if isinstance(obj, np.ndarray):
        return obj
    if is_device_array(obj):
        raise TypeError(
            f"argument '{name}': expected a host array (NumPy or a CPU tensor), found a CUDA device array "
            f"({type(obj).__name__}); device inputs need the cuda backend"
        )
    if hasattr(obj, "detach") and hasattr(obj, "numpy"):  # torch.Tensor on the CPU, without importing torch
        return obj.detach().numpy()
    try:
        return np.asarray(obj)
    except Exception as exc:  # pragma: no cover - numpy's own message is kept in the chain
        raise TypeError(f"argument '{name}': expected an array, found {_describe(obj)}") from exc


def as_index_array(name: str, obj: Any, dtype=None, *, ndim: int = 1) -> np.ndarray:
    """A C-contiguous, writable integer array of ``dtype`` (the caller's array itself when it already is
    one; a read-only array is copied, see :func:`writable`).

    Rejects floats, booleans and objects: ids are never silently truncated.
    """
    arr = to_host_array(name, obj)
    if arr.ndim != ndim:
        raise ValueError(f"argument '{name}': expected a {ndim}-D array, found {arr.ndim}-D with shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        if arr.size == 0 and arr.dtype.kind == "f":  # np.asarray([]) is float64; an empty list is fine
            arr = arr.astype(np.int64)
        else:
            raise TypeError(f"argument '{name}': expected an integer array, found dtype {arr.dtype}")
    if dtype is not None and arr.dtype != dtype:
        if arr.size and arr.dtype.kind == "u" and int(arr.max()) > np.iinfo(dtype).max:
            raise ValueError(f"argument '{name}': values up to {int(arr.max())} do not fit {np.dtype(dtype)}")
        if arr.size and np.dtype(dtype).itemsize < arr.dtype.itemsize:
            lo, hi = int(arr.min()), int(arr.max())
            info = np.iinfo(dtype)
            if lo < info.min or hi > info.max:
                raise ValueError(f"argument '{name}': values in [{lo}, {hi}] do not fit {np.dtype(dtype)}")
        arr = arr.astype(dtype)
    return writable(np.ascontiguousarray(arr))


class IndexReductions:
    """The reductions the index checks below run over an array, here over NumPy arrays.

    Each check is written once over these; the CUDA backend hands it a subclass that runs them as small
    device kernels over a device array (``graphkern._cuda.DEVICE_REDUCTIONS``), so a check takes the same
    arguments, tests in the same order and raises the same message on every backend. Every method
    returns host integers.
    """

    @staticmethod
    def item(arr, pos: int) -> int:
        """``arr[pos]`` (``0 <= pos < arr.size``)."""
        return int(arr[pos])

    @staticmethod
    def first_outside(arr, low: int, high: int) -> int:
        """The first position whose value is outside ``[low, high)``, or -1 (``arr`` not empty)."""
        if int(arr.min()) >= low and int(arr.max()) < high:  # two passes, no temporary, on valid input
            return -1
        return int(np.argmax((arr < low) | (arr >= high)))

    @staticmethod
    def first_descent(arr) -> int:
        """The first ``i`` with ``arr[i] > arr[i + 1]``, or -1."""
        # compared, not differenced: np.diff of an unsigned array wraps and never goes negative
        falls = arr[1:] < arr[:-1]
        return int(np.argmax(falls)) if falls.any() else -1

    @staticmethod
    def first_repeated(ids, space: int) -> tuple[int, int] | None:
        """``(id, count)`` of the smallest id held more than once by ``ids`` (values in ``[0, space)``, not
        empty), or None."""
        if sparse_id_space(ids.size, space):
            # a count per id of a space far larger than the ids (a graph's edges spread over 2**40 ids)
            # would allocate the whole space: sorted, a repeat is two equal neighbours
            ids = np.sort(ids)
            same = ids[1:] == ids[:-1]
            if not same.any():
                return None
            dup = int(ids[int(np.argmax(same))])
            return dup, int(np.count_nonzero(ids == dup))
        seen = np.bincount(ids, minlength=space)
        if int(seen.max()) <= 1:
            return None
        dup = int(np.argmax(seen > 1))
        return dup, int(seen[dup])


HOST_REDUCTIONS = IndexReductions()


def sparse_id_space(size: int, space: int) -> bool:
    """Whether ``size`` ids in ``[0, space)`` are few enough that a pass over the whole space (a count per
    id) would cost more than sorting the ids."""
    return space > 4 * size + 1024


def check_ids_in_range(name: str, ids, upper: int, what: str = "node ids", *,
                       reductions: IndexReductions = HOST_REDUCTIONS) -> None:
    """All of ``ids`` in ``[0, upper)``; the message gives the first offending position."""
    if ids.size == 0:
        return
    pos = reductions.first_outside(ids, 0, upper)
    if pos >= 0:
        value = reductions.item(ids, pos)
        bound = ">= 0" if value < 0 else f"< {upper}"
        raise ValueError(f"argument '{name}': expected {what} {bound}, found {value} at position {pos}")


def check_indptr(name: str, indptr, nnz: int, *, reductions: IndexReductions = HOST_REDUCTIONS) -> None:
    """A CSR row pointer: starts at 0, never decreases, ends at ``nnz``."""
    if indptr.size == 0:
        raise ValueError(f"argument '{name}': expected at least one entry (num_rows + 1), found 0")
    first, last = reductions.item(indptr, 0), reductions.item(indptr, indptr.size - 1)
    if first != 0:
        raise ValueError(f"argument '{name}': expected indptr[0] == 0, found {first}")
    if last != nnz:
        raise ValueError(f"argument '{name}': expected indptr[-1] == len(indices) == {nnz}, found {last}")
    pos = reductions.first_descent(indptr)
    if pos >= 0:
        raise ValueError(
            f"argument '{name}': expected a non-decreasing indptr, found indptr[{pos}] = "
            f"{reductions.item(indptr, pos)} > indptr[{pos + 1}] = {reductions.item(indptr, pos + 1)}"
        )


def check_permutation(name: str, eids, size: int, id_space: int | None = None, *,
                      reductions: IndexReductions = HOST_REDUCTIONS) -> None:
    """``eids`` holds ``size`` distinct ids in ``[0, id_space)`` (every id in ``[0, size)`` by default)."""
    if eids.size != size:
        raise ValueError(f"argument '{name}': expected {size} edge ids, found {eids.size}")
    space = size if id_space is None else id_space
    check_ids_in_range(name, eids, space, "edge ids", reductions=reductions)
    repeated = reductions.first_repeated(eids, space) if size else None
    if repeated is not None:
        dup, count = repeated
        raise ValueError(f"argument '{name}': expected unique edge ids, found {dup} {count} times")


def choose_idtype(name: str, requested, largest: int) -> np.dtype:
    """int32 when every id and count fits (``largest`` is the biggest of them), else int64; or as asked."""
    if requested is None:
        return np.dtype(np.int32) if largest <= INT32_MAX else np.dtype(np.int64)
    try:
        dtype = np.dtype(requested)
    except TypeError as exc:
        raise TypeError(f"argument '{name}': expected int32 or int64, found {requested!r}") from exc
    if dtype not in INDEX_DTYPES:
        raise TypeError(f"argument '{name}': expected int32 or int64, found {dtype}")
    if dtype == np.int32 and largest > INT32_MAX:
        raise ValueError(f"argument '{name}': int32 cannot hold {largest} nodes or edges; use int64")
    return dtype
