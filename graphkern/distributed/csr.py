"""Row-block distributed CSR (:class:`DistCSR`) and its multigraph form with value cells (:class:`XCSR`).

Rank ``r`` of ``R`` holds the contiguous global rows ``row_offsets[r]:row_offsets[r+1]`` (uneven and empty
blocks allowed) with their column ids as global int64 ids and one value per entry (any fixed-size NumPy
dtype, structured records too, or none). ``col_offsets`` is the row partition of the transpose: the same
as ``row_offsets`` for a square matrix unless given.
"""

from __future__ import annotations

import numpy as np

from .._validate import private, read_only_field
from ._agree import SHOWN, agree, check_offsets, key, local_check
from ._comm import as_counting, exclusive_scan
from ._csr_checks import (
    check_root,
    check_structure,
    even_offsets,
    global_rows,
    invariants,
    local_rows,
    mark_checked,
    root_rows,
    value_dtype,
)
from ._held import Held, kept

__all__ = ["DistCSR", "XCSR", "even_offsets"]


def _rows_add_up(n_rows: int):
    """``agree``'s combine step: the ranks' local row counts must add up to the global row count."""

    def combine(counts):
        if sum(counts) == n_rows:
            return None
        shown = f" {counts}" if len(counts) <= SHOWN else ""
        return range(len(counts)), (f"argument 'indptr': the ranks' row counts{shown} add up to {sum(counts)}, "
                                    f"expected {n_rows} rows (shape[0])")

    return combine


def _col_offsets(given, shape, row_offsets, parts):
    """The row partition of the transpose: as given, else the row partition (square) or even blocks."""
    if given is not None:
        return given
    return row_offsets if shape[0] == shape[1] else even_offsets(shape[1], parts)


def _global_same(got) -> dict:
    """What ``from_global`` needs every rank to agree on."""
    return {"the row count len(indptr) - 1": got.shape[0], "the entry count indptr[-1]": got.nnz,
            "argument 'shape'": got.shape, "argument 'row_counts'": got.row_offsets,
            "argument 'col_offsets'": got.col_offsets, "the dtype of 'values'": key(got.dtype)}


def _partial_offsets(offsets, parts):
    """``col_offsets`` on a rank that does not know the column count yet (``scatter``): all but the end."""
    return private(check_offsets("col_offsets", offsets, parts, None), offsets)  # the matrix keeps it


def _col_offsets_fit(cols, root):
    """``scatter``'s combine step: ``col_offsets`` must end at the root's column count."""

    def combine(infos):
        n_cols = infos[root][0][1]
        if cols is None or int(cols[-1]) == n_cols:
            return None
        return range(len(infos)), (f"argument 'col_offsets': expected offsets from 0 to {n_cols} (the columns of "
                                   f"the root's matrix), found 0 to {int(cols[-1])}")

    return combine


class DistCSR(Held):
    """This rank's row block of a distributed sparse matrix (or directed multigraph, one entry per edge).

    Build it collectively with :meth:`from_global`, :meth:`scatter` or :meth:`from_local`; every rank
    must call, and the constructors check on every rank that the ranks agree on the shape and dtypes.

    The arrays (``row_offsets``, ``col_offsets``, ``indptr``, ``indices``, ``values``) are handed out as
    read-only views: the distributed kernels index by them, and ids checked once must not change under
    them. Building one directly, ``DistCSR(comm, shape, row_offsets, col_offsets, indptr, indices,
    values)``, keeps copies of the arrays; they are checked at the first collective call.

    Examples
    --------
    >>> import numpy as np
    >>> from mpi4py import MPI
    >>> from graphkern.distributed import DistCSR
    >>> A = DistCSR.from_global(np.array([0, 2, 3]), np.array([0, 1, 0]), np.array([1.0, 2.0, 3.0]),
    ...                         MPI.COMM_SELF)
    >>> A.shape, A.indices.tolist(), A.values.tolist()
    ((2, 2), [0, 1, 0], [1.0, 2.0, 3.0])
    >>> A.indices.flags.writeable
    False
    """

    row_offsets = read_only_field("row_offsets", "The global row partition: rank r holds rows "
                                  "row_offsets[r]:row_offsets[r+1] (read-only view).")
    col_offsets = read_only_field("col_offsets", "The row partition of the transpose (read-only view).")
    indptr = read_only_field("indptr", "This rank's row pointer, from 0 (read-only view).")
    indices = read_only_field("indices", "The global int64 column id of each local entry (read-only view).")
    values = read_only_field("values", "One value per local entry, or None (read-only view).")

    FIELDS = ("comm", "shape", "row_offsets", "col_offsets", "indptr", "indices", "values")
    ARRAYS = frozenset(FIELDS[2:])

    def __init__(self, comm, shape, row_offsets, col_offsets, indptr, indices, values):
        # a caller's arrays: kept as copies (graphkern's own constructors use _own and copy nothing)
        self._set(comm, shape, *(kept(a) for a in (row_offsets, col_offsets, indptr, indices, values)))

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(shape={self.shape!r}, rank={getattr(self.comm, 'rank', '?')}, "
                f"local rows={np.size(self._indptr) - 1}, local entries={np.size(self._indices)})")

    # ------------------------------------------------------------------------------ constructors
    @classmethod
    def from_local(cls, indptr, indices, values, comm, shape, *, col_offsets=None):
        """Collective: every rank passes its own rows; the row partition follows from their counts.

        Validation is collective: each rank checks its arrays (integer ids in ``[0, shape[1])``, a
        non-decreasing ``indptr``, one value per entry) and one allgather of a small tuple per rank, which
        also carries the row counts, makes every rank raise the same :class:`DistributedError` when any
        rank's input is wrong or the ranks disagree on ``shape``, the value dtype or ``col_offsets``.
        """
        comm = as_counting(comm)
        got, problem = local_check(local_rows, comm.size, indptr, indices, values, shape, col_offsets)
        same = None if problem else {"argument 'shape'": got.shape, "the dtype of 'values'": value_dtype(got.values),
                                     "argument 'col_offsets'": got.col_offsets}
        counts = agree(comm, "DistCSR.from_local", problem, same, None if problem else got.n_local,
                       _rows_add_up(None if problem else got.shape[0]))
        row_offsets = np.zeros(comm.size + 1, dtype=np.int64)
        np.cumsum(counts, out=row_offsets[1:])
        cols = _col_offsets(got.col_offsets, got.shape, row_offsets, comm.size)
        vals = None if got.values is None else np.ascontiguousarray(got.values)
        return mark_checked(cls._own(comm, got.shape, row_offsets, cols, got.indptr, got.indices, vals))

    @classmethod
    def from_global(cls, indptr, indices, values, comm, *, row_counts=None, shape=None, col_offsets=None):
        """Collective: every rank holds the whole CSR and keeps its row block (even blocks by default).

        Validation is collective: each rank checks the whole ``indptr``, ``row_counts`` (one integer
        count >= 0 per rank, adding up to the rows), ``col_offsets`` and its own block of ids and values;
        one allgather of a small tuple per rank then makes every rank raise the same
        :class:`DistributedError` when any rank's input is wrong or the ranks disagree on the sizes,
        ``shape``, ``row_counts``, ``col_offsets`` or the value dtype. (The ids themselves are not
        compared across ranks: each rank checks only the block it keeps.)
        """
        comm = as_counting(comm)
        got, problem = local_check(global_rows, comm.size, comm.rank, indptr, indices, values, row_counts, shape,
                                   col_offsets)
        agree(comm, "DistCSR.from_global", problem, None if problem else _global_same(got))
        cols = _col_offsets(got.col_offsets, got.shape, got.row_offsets, comm.size)
        vals = None if got.values is None else np.ascontiguousarray(got.values)
        return mark_checked(cls._own(comm, got.shape, got.row_offsets, cols, got.indptr, got.indices, vals))

    @classmethod
    def scatter(cls, indptr, indices, values, comm, *, root=0, row_counts=None, shape=None, col_offsets=None):
        """Collective: ``root`` holds the whole CSR (others pass None) and sends each rank its row block.

        ``row_counts`` and ``shape`` are read on ``root``; ``root`` and ``col_offsets`` must be the same on
        every rank. Validation is collective: ``root`` checks the whole CSR, and one allgather of a small
        tuple per rank (which also carries the root's sizes and partition to every rank) makes every rank
        raise the same :class:`DistributedError` before any data moves when something is wrong.
        """
        comm = as_counting(comm)
        me, parts = comm.rank, comm.size

        def local():
            r = check_root(root, parts)
            cols = None if col_offsets is None else _partial_offsets(col_offsets, parts)
            whole = root_rows(parts, indptr, indices, values, row_counts, shape) if me == r else None
            return r, cols, whole

        got, problem = local_check(local)
        same = None if problem else {"argument 'root'": got[0], "argument 'col_offsets'": got[1]}
        infos = agree(comm, "DistCSR.scatter", problem, same, None if problem or got[2] is None else got[2].header,
                      None if problem else _col_offsets_fit(got[1], got[0]))
        r, cols, whole = got
        shape, value_dt, offsets, nnz_all = infos[r]
        offsets, nnz_all = np.asarray(offsets, dtype=np.int64), np.asarray(nnz_all, dtype=np.int64)
        lo, hi = offsets[me], offsets[me + 1]
        row_counts_all = np.diff(offsets)
        local_indptr = np.empty(hi - lo + 1, dtype=np.int64)
        send_ptr = send_idx = None
        if me == r:
            # each rank's indptr slice, rebased to 0, packed one after another
            packed = np.concatenate([whole.indptr[offsets[k]:offsets[k + 1] + 1] - whole.indptr[offsets[k]]
                                     for k in range(parts)])
            send_ptr = [packed, (row_counts_all + 1, exclusive_scan(row_counts_all + 1)), _mpi_type(np.int64)]
            send_idx = [whole.indices, (nnz_all, exclusive_scan(nnz_all)), _mpi_type(np.int64)]
        comm.Scatterv(send_ptr, local_indptr, root=r)
        local_indices = np.empty(int(nnz_all[me]), dtype=np.int64)
        comm.Scatterv(send_idx, local_indices, root=r)
        local_values = None
        if value_dt is not None:
            from ._comm import record_type

            local_values = np.empty(int(nnz_all[me]), dtype=value_dt)
            rtype = record_type(local_values.dtype.itemsize)
            send_vals = ([np.ascontiguousarray(whole.values).view(np.uint8), (nnz_all, exclusive_scan(nnz_all)),
                          rtype] if me == r else None)
            comm.Scatterv(send_vals, [local_values.view(np.uint8), rtype], root=r)
            rtype.Free()
        cols = _col_offsets(cols, shape, offsets, parts)
        return mark_checked(cls._own(comm, shape, offsets, cols, local_indptr, local_indices, local_values))

    # ------------------------------------------------------------------------------ access
    @property
    def rank(self) -> int:
        return self.comm.rank

    @property
    def first_row(self) -> int:
        return int(self._row_offsets[self.rank])

    @property
    def num_local_rows(self) -> int:
        return self._indptr.size - 1

    @property
    def nnz_local(self) -> int:
        return self._indices.size

    def local_graph(self):
        """This rank's rows as a :class:`graphkern.Graph` block (local rows -> global columns), for the CPU
        kernels; edge ids are the local entry positions."""
        from ..graph import Graph

        return Graph.from_csr(self._indptr, self._indices, num_dst=self.shape[1])

    def local_rows(self) -> np.ndarray:
        """The global row id of each local entry."""
        return np.repeat(np.arange(self.first_row, self.first_row + self.num_local_rows, dtype=np.int64),
                         np.diff(self._indptr))

    def canonical(self) -> "DistCSR":
        """The same matrix with column ids ascending inside every row, parallel entries in their order
        (the form in which ``transpose(transpose(A)) == A`` holds exactly). Local, no communication."""
        keys = self.local_rows() * np.int64(max(self.shape[1], 1)) + self._indices
        order = np.argsort(keys, kind="stable")
        vals = None if self._values is None else self._values[order]
        return DistCSR._own(self.comm, self.shape, self._row_offsets, self._col_offsets, self._indptr.copy(),
                       self._indices[order], vals)

    def gather(self, root=0):
        """Collective: the whole ``(indptr, indices, values)`` on ``root``, None on the other ranks.

        Validation is collective: one allgather of a small tuple per rank (which also carries the entry
        counts the gather needs) checks ``root`` and this object on every rank, and makes every rank raise
        the same :class:`DistributedError` when a rank's part is malformed or the ranks disagree on
        ``root``, the shape, the partitions or the value dtype.
        """
        comm = as_counting(self.comm)

        def local():
            if isinstance(self, XCSR):
                raise TypeError("gather: expected a DistCSR, found an XCSR (its values are per cell); gather "
                                "X.to_csr() instead")
            check_structure(self, comm, "self")
            return check_root(root, comm.size)

        r, problem = local_check(local)
        same = None if problem else {"argument 'root'": r, **invariants(self, "self")}
        counts = np.asarray(agree(comm, "DistCSR.gather", problem, same, None if problem else self.nnz_local),
                            dtype=np.int64)
        root = r
        rows = np.diff(self._row_offsets)
        me = comm.rank
        indptr_all = np.empty(int(rows.sum()), dtype=np.int64) if me == root else None
        comm.Gatherv(np.ascontiguousarray(self._indptr[1:] + 0), None if me != root else
                     [indptr_all, (rows, exclusive_scan(rows)), _mpi_type(np.int64)], root=root)
        indices_all = np.empty(int(counts.sum()), dtype=np.int64) if me == root else None
        comm.Gatherv(self._indices, None if me != root else
                     [indices_all, (counts, exclusive_scan(counts)), _mpi_type(np.int64)], root=root)
        values_all = None
        if self._values is not None:
            from ._comm import record_type

            rtype = record_type(self._values.dtype.itemsize)
            if me == root:
                values_all = np.empty(int(counts.sum()), dtype=self._values.dtype)
            comm.Gatherv([self._values.view(np.uint8) if self._values.size else np.empty(0, np.uint8),
                          self._values.size, rtype],
                         None if me != root else [values_all.view(np.uint8), (counts, exclusive_scan(counts)), rtype],
                         root=root)
            rtype.Free()
        if me != root:
            return None
        # rebase each rank's local offsets onto the global entry positions
        starts = np.repeat(exclusive_scan(counts), rows)
        indptr = np.zeros(indptr_all.size + 1, dtype=np.int64)
        indptr[1:] = indptr_all + starts
        return indptr, indices_all, values_all


def _mpi_type(dtype):
    from mpi4py.util import dtlib

    return dtlib.from_numpy_dtype(np.dtype(dtype))


class XCSR(DistCSR):
    """A :class:`DistCSR` whose entries are cells holding ``cell_counts[c]`` values each (a multigraph with
    its parallel edges grouped per (row, column), or a matrix of variable-length cells). ``indices`` has one
    column id per cell; ``values`` holds every cell's values, cell after cell, row-major. Its arrays are
    handed out as read-only views, as a DistCSR's.

    Examples
    --------
    >>> import numpy as np
    >>> from mpi4py import MPI
    >>> from graphkern.distributed import XCSR
    >>> X = XCSR.from_global(np.array([0, 2, 2]), np.array([0, 1]), np.array([2, 1]), np.array([5, 6, 7]),
    ...                      MPI.COMM_SELF)
    >>> X.cell_counts.tolist(), X.values.tolist()
    ([2, 1], [5, 6, 7])
    """

    cell_counts = read_only_field("cell_counts", "The number of values of each local cell (read-only view).")

    FIELDS = (*DistCSR.FIELDS, "cell_counts")
    ARRAYS = frozenset(FIELDS[2:])

    def __init__(self, comm, shape, row_offsets, col_offsets, indptr, indices, values, cell_counts=None):
        super().__init__(comm, shape, row_offsets, col_offsets, indptr, indices, values)
        self._cell_counts = kept(cell_counts)

    @classmethod
    def from_local(cls, indptr, indices, cell_counts, values, comm, shape, *, col_offsets=None):
        """Collective: every rank passes its own rows of cells (see :meth:`DistCSR.from_local`).

        Validation is collective, one allgather of a small tuple per rank: besides the checks of
        :meth:`DistCSR.from_local`, one count >= 1 per cell and ``sum(cell_counts)`` values.
        """
        comm = as_counting(comm)
        got, problem = local_check(local_rows, comm.size, indptr, indices, values, shape, col_offsets, cell_counts,
                                   xcsr=True)
        same = None if problem else {"argument 'shape'": got.shape, "the dtype of 'values'": value_dtype(got.values),
                                     "argument 'col_offsets'": got.col_offsets}
        counts = agree(comm, "XCSR.from_local", problem, same, None if problem else got.n_local,
                       _rows_add_up(None if problem else got.shape[0]))
        row_offsets = np.zeros(comm.size + 1, dtype=np.int64)
        np.cumsum(counts, out=row_offsets[1:])
        cols = _col_offsets(got.col_offsets, got.shape, row_offsets, comm.size)
        return mark_checked(cls._own(comm, got.shape, row_offsets, cols, got.indptr, got.indices,
                                np.ascontiguousarray(got.values), got.cell_counts))

    @classmethod
    def from_global(cls, indptr, indices, cell_counts, values, comm, *, row_counts=None, shape=None,
                    col_offsets=None):
        """Collective: every rank holds the whole XCSR and keeps its row block.

        Validation is collective, as in :meth:`DistCSR.from_global` (one allgather of a small tuple per
        rank), with one count >= 1 per cell and ``sum(cell_counts)`` values.
        """
        comm = as_counting(comm)
        got, problem = local_check(global_rows, comm.size, comm.rank, indptr, indices, values, row_counts, shape,
                                   col_offsets, cell_counts, xcsr=True)
        agree(comm, "XCSR.from_global", problem, None if problem else _global_same(got))
        cols = _col_offsets(got.col_offsets, got.shape, got.row_offsets, comm.size)
        return mark_checked(cls._own(comm, got.shape, got.row_offsets, cols, got.indptr, got.indices,
                                np.ascontiguousarray(got.values), np.ascontiguousarray(got.cell_counts)))

    @classmethod
    def from_csr(cls, A: DistCSR) -> "XCSR":
        """Group the parallel entries of a canonical :class:`DistCSR` into cells (local, no communication)."""
        rows = A.local_rows()
        new_cell = np.ones(A._indices.size, dtype=bool)
        if A._indices.size > 1:
            new_cell[1:] = (rows[1:] != rows[:-1]) | (A._indices[1:] != A._indices[:-1])
        starts = np.flatnonzero(new_cell)
        cell_counts = np.diff(np.r_[starts, A._indices.size]).astype(np.int64)
        cell_rows = rows[starts] - A.first_row
        indptr = np.zeros(A.num_local_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(cell_rows, minlength=A.num_local_rows), out=indptr[1:])
        values = A._values if A._values is not None else np.zeros(A._indices.size, dtype=np.int8)
        return cls._own(A.comm, A.shape, A._row_offsets, A._col_offsets, indptr, A._indices[starts], values,
                        cell_counts)

    def to_csr(self) -> DistCSR:
        """One entry per value (cells expanded into parallel entries); local, no communication."""
        indices = np.repeat(self._indices, self._cell_counts)
        row_of_cell = np.repeat(np.arange(self.num_local_rows), np.diff(self._indptr))
        per_row = np.bincount(row_of_cell, weights=self._cell_counts, minlength=self.num_local_rows).astype(np.int64)
        indptr = np.zeros(self.num_local_rows + 1, dtype=np.int64)
        np.cumsum(per_row, out=indptr[1:])
        return DistCSR._own(self.comm, self.shape, self._row_offsets, self._col_offsets, indptr, indices, self._values)
