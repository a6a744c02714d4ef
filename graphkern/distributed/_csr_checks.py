"""This rank's checks of the row-block CSR arguments and objects (they raise; :mod:`._agree` collects them).

The constructors of :class:`~graphkern.distributed.csr.DistCSR` and :class:`~graphkern.distributed.csr.XCSR`
check what each rank passed here, and the functions that take a built object (transpose, BFS, gather)
check its structure with :func:`check_structure`, so that no collective and no compiled kernel ever sees
a wrong size or an out-of-range id.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from .._validate import as_index_array, check_indptr, check_int_scalar, private, to_host_array, type_name
from ._agree import check_counts, check_offsets, check_shape, check_values, key

# The O(local nnz) scan of a built object's ids runs once per set of arrays: the object remembers the
# identities of the arrays it checked under this attribute (the constructors set it for what they built).
CHECKED = "_graphkern_checked"


def even_offsets(n: int, parts: int) -> np.ndarray:
    """``parts + 1`` offsets splitting ``n`` rows into blocks whose sizes differ by at most one."""
    return (np.arange(parts + 1, dtype=np.int64) * int(n)) // max(parts, 1)


def _id_array(name: str, obj) -> np.ndarray:
    """A 1-D integer array, not converted (a slice of it is converted later, so a rank copies only its
    own block of a whole matrix)."""
    if obj is None:
        raise TypeError(f"argument '{name}': expected an integer array, found None")
    arr = to_host_array(name, obj)
    if arr.ndim != 1:
        raise ValueError(f"argument '{name}': expected a 1-D array, found {arr.ndim}-D with shape {arr.shape}")
    if arr.dtype.kind not in "iu" and not (arr.size == 0 and arr.dtype.kind == "f"):
        raise TypeError(f"argument '{name}': expected an integer array, found dtype {arr.dtype}")
    return arr


def _check_ids(name: str, ids: np.ndarray, upper: int, base: int = 0) -> None:
    """Column ids in ``[0, upper)``; positions are reported in the caller's array (``base`` + local)."""
    if ids.size == 0:
        return
    if int(ids.min()) < 0:
        pos = int(np.argmax(ids < 0))
        raise ValueError(f"argument '{name}': expected column ids >= 0, found {int(ids[pos])} at position {base + pos}")
    if int(ids.max()) >= upper:
        pos = int(np.argmax(ids >= upper))
        raise ValueError(
            f"argument '{name}': expected column ids < {upper}, found {int(ids[pos])} at position {base + pos}"
        )


def _check_cells(cell_counts, cells: int) -> np.ndarray:
    counts = as_index_array("cell_counts", cell_counts, np.int64)
    if counts.size != cells:
        raise ValueError(f"argument 'cell_counts': expected one count per cell ({cells}), found {counts.size}")
    if counts.size and int(counts.min()) < 1:
        pos = int(np.argmax(counts < 1))
        raise ValueError(f"argument 'cell_counts': expected counts >= 1, found {int(counts[pos])} at position {pos}")
    return counts


def _check_xcsr_values(values, total: int) -> np.ndarray:
    if values is None:
        raise TypeError("argument 'values': expected the cells' values (an XCSR has values), found None")
    arr = check_values("values", values, total)
    return arr


def value_dtype(values):
    return None if values is None else key(values.dtype)


def local_rows(parts: int, indptr, indices, values, shape, col_offsets, cell_counts=None, xcsr=False):
    """``from_local``: this rank's own rows. Returns the converted arrays and what the ranks must share."""
    shape = check_shape("shape", shape)
    given = {"indptr": indptr, "indices": indices, "values": values, "cell_counts": cell_counts}
    indptr = as_index_array("indptr", indptr, np.int64)
    indices = as_index_array("indices", indices, np.int64)
    check_indptr("indptr", indptr, indices.size)
    _check_ids("indices", indices, shape[1])
    counts = None
    if xcsr:
        counts = _check_cells(cell_counts, indices.size)
        values = _check_xcsr_values(values, int(counts.sum()))
    else:
        values = check_values("values", values, indices.size)
    cols = None if col_offsets is None else private(check_offsets("col_offsets", col_offsets, parts, shape[1]),
                                                    col_offsets)
    return SimpleNamespace(  # the matrix keeps these: none may be memory the caller can still change
        shape=shape,
        indptr=private(indptr, given["indptr"]),
        indices=private(indices, given["indices"]),
        values=None if values is None else private(values, given["values"]),
        cell_counts=None if counts is None else private(counts, given["cell_counts"]),
        col_offsets=cols,
        n_local=indptr.size - 1,
    )


def global_rows(
    parts: int, rank: int, indptr, indices, values, row_counts, shape, col_offsets, cell_counts=None, xcsr=False
):
    """``from_global``: the whole CSR on every rank; checks all of its row pointer and this rank's block of
    ids and values, and returns that block."""
    indptr = as_index_array("indptr", indptr, np.int64)
    ids = _id_array("indices", indices)
    check_indptr("indptr", indptr, ids.shape[0])
    n_rows = indptr.size - 1
    shape = (n_rows, n_rows) if shape is None else check_shape("shape", shape)
    if shape[0] != n_rows:
        raise ValueError(f"argument 'shape': expected {n_rows} rows (len(indptr) - 1), found {shape[0]}")
    offsets = (
        even_offsets(n_rows, parts) if row_counts is None else check_counts("row_counts", row_counts, parts, n_rows)
    )
    lo, hi = int(offsets[rank]), int(offsets[rank + 1])
    a, b = int(indptr[lo]), int(indptr[hi])
    local_ids = as_index_array("indices", ids[a:b], np.int64)
    _check_ids("indices", local_ids, shape[1], a)
    counts = None
    if xcsr:
        all_counts = _check_cells(cell_counts, ids.shape[0])
        starts = np.zeros(all_counts.size + 1, dtype=np.int64)
        np.cumsum(all_counts, out=starts[1:])
        vals = _check_xcsr_values(values, int(starts[-1]))
        counts, values = all_counts[a:b], vals[int(starts[a]) : int(starts[b])]
    else:
        vals = check_values("values", values, ids.shape[0])
        values = None if vals is None else vals[a:b]
    cols = None if col_offsets is None else private(check_offsets("col_offsets", col_offsets, parts, shape[1]),
                                                    col_offsets)
    return SimpleNamespace(  # the matrix keeps these: blocks of the caller's arrays are copied (private)
        shape=shape,
        row_offsets=offsets,
        indptr=indptr[lo : hi + 1] - a,
        indices=private(local_ids, indices),
        values=None if values is None else private(values, vals),
        cell_counts=None if counts is None else private(counts, cell_counts),
        col_offsets=cols,
        nnz=ids.shape[0],
        dtype=None if vals is None else vals.dtype,
    )


def root_rows(parts: int, indptr, indices, values, row_counts, shape):
    """``scatter`` on the root: the whole CSR, checked; returns it and the header every rank needs."""
    if indptr is None:
        raise TypeError("argument 'indptr': expected the whole CSR on the root rank, found None")
    indptr = as_index_array("indptr", indptr, np.int64)
    indices = as_index_array("indices", indices, np.int64)
    check_indptr("indptr", indptr, indices.size)
    n_rows = indptr.size - 1
    shape = (n_rows, n_rows) if shape is None else check_shape("shape", shape)
    if shape[0] != n_rows:
        raise ValueError(f"argument 'shape': expected {n_rows} rows (len(indptr) - 1), found {shape[0]}")
    _check_ids("indices", indices, shape[1])
    values = check_values("values", values, indices.size)
    offsets = (
        even_offsets(n_rows, parts) if row_counts is None else check_counts("row_counts", row_counts, parts, n_rows)
    )
    nnz = indptr[offsets[1:]] - indptr[offsets[:-1]]
    header = (shape, None if values is None else values.dtype, offsets.tolist(), nnz.tolist())
    return SimpleNamespace(indptr=indptr, indices=indices, values=values, header=header)


# --------------------------------------------------------------------------- built objects


def mark_checked(A):
    """Record that ``A``'s arrays passed the full check (the constructors call it on what they build)."""
    A.__dict__[CHECKED] = _identity(A)
    return A


def _identity(A):
    return tuple(id(x) for x in (A._indptr, A._indices, A._values, getattr(A, "_cell_counts", None)))


def check_structure(A, comm, name: str = "A", cls=None) -> None:
    """This rank's part of the built object ``A`` is well formed for ``comm`` (raises otherwise).

    The O(P) checks (shape, partitions, sizes) run on every call; the O(local nnz) scan of the row pointer,
    the ids and the cells runs once per set of arrays (see :func:`mark_checked`).
    """
    if cls is not None and not isinstance(A, cls):
        raise TypeError(f"argument '{name}': expected a {cls.__name__}, found {type_name(A)}")
    parts, rank = comm.size, comm.rank
    shape = check_shape(f"{name}.shape", A.shape)
    rows = check_offsets(f"{name}.row_offsets", A._row_offsets, parts, shape[0])
    check_offsets(f"{name}.col_offsets", A._col_offsets, parts, shape[1])
    for field in ("indptr", "indices"):
        arr = getattr(A, "_" + field)
        if not isinstance(arr, np.ndarray) or arr.dtype != np.int64 or arr.ndim != 1:
            raise TypeError(
                f"argument '{name}.{field}': expected a 1-D int64 array, found "
                f"{type_name(arr)}{'' if not isinstance(arr, np.ndarray) else f' of {arr.dtype}'}"
            )
    n_local = int(rows[rank + 1] - rows[rank])
    if A._indptr.size != n_local + 1:
        raise ValueError(
            f"argument '{name}.indptr': expected {n_local + 1} entries for the {n_local} rows "
            f"{name}.row_offsets gives rank {rank}, found {A._indptr.size}"
        )
    xcsr = hasattr(A, "cell_counts")  # an XCSR: the one kind with cells (csr.py, which imports this module)
    if xcsr and not isinstance(A._cell_counts, np.ndarray):
        raise TypeError(f"argument '{name}.cell_counts': expected an int64 array, found {type_name(A._cell_counts)}")
    if A.__dict__.get(CHECKED) != _identity(A):
        check_indptr(f"{name}.indptr", A._indptr, A._indices.size)
        _check_ids(f"{name}.indices", A._indices, shape[1])
        if xcsr:
            counts = _check_cells(A._cell_counts, A._indices.size)
            _check_xcsr_values(A._values, int(counts.sum()))
        else:
            check_values(f"{name}.values", A._values, A._indices.size)
        mark_checked(A)
    elif int(A._indptr[-1]) != A._indices.size:
        raise ValueError(
            f"argument '{name}.indptr': expected indptr[-1] == len(indices) == {A._indices.size}, "
            f"found {int(A._indptr[-1])}"
        )


def invariants(A, name: str = "A") -> dict:
    """What must be the same for ``A`` on every rank (compared by :func:`._agree.agree`)."""
    return {
        f"the kind of '{name}'": type(A).__name__,
        f"{name}.shape": tuple(A.shape),
        f"{name}.row_offsets": np.asarray(A._row_offsets),
        f"{name}.col_offsets": np.asarray(A._col_offsets),
        f"the dtype of {name}.values": value_dtype(A._values),
    }


def check_root(root, parts: int) -> int:
    return check_int_scalar("root", root, 0, parts - 1)
