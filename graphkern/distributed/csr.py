"""Row-block distributed CSR (:class:`DistCSR`) and its multigraph form with value cells (:class:`XCSR`).

Rank ``r`` of ``R`` holds the contiguous global rows ``row_offsets[r]:row_offsets[r+1]`` (uneven and empty
blocks allowed) with their column ids as global int64 ids and one value per entry (any fixed-size NumPy
dtype, structured records too, or none). ``col_offsets`` is the row partition of the transpose: the same
as ``row_offsets`` for a square matrix unless given.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._comm import DistributedError, as_counting, exclusive_scan, raise_everywhere, require_same


def even_offsets(n: int, parts: int) -> np.ndarray:
    """``parts + 1`` offsets splitting ``n`` rows into blocks whose sizes differ by at most one."""
    return (np.arange(parts + 1, dtype=np.int64) * int(n)) // max(parts, 1)


def _offsets_from_counts(counts) -> np.ndarray:
    counts = np.asarray(counts, dtype=np.int64)
    out = np.zeros(counts.size + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


def _check_local(indptr, indices, n_cols, n_local) -> str | None:
    """The problem with one rank's local arrays, or None (checked before any collective that uses them)."""
    if indptr.ndim != 1 or indptr.size != n_local + 1:
        return f"argument 'indptr': expected {n_local + 1} entries for {n_local} local rows, found {indptr.size}"
    if indptr.size and (indptr[0] != 0 or np.any(np.diff(indptr) < 0)):
        return "argument 'indptr': expected non-decreasing offsets starting at 0"
    if indptr.size and indptr[-1] != indices.size:
        return f"argument 'indices': expected {int(indptr[-1])} column ids (indptr[-1]), found {indices.size}"
    if indices.size:
        lo, hi = int(indices.min()), int(indices.max())
        if lo < 0:
            return f"argument 'indices': expected column ids >= 0, found {lo}"
        if hi >= n_cols:
            return f"argument 'indices': expected column ids < {n_cols}, found {hi}"
    return None


@dataclass
class DistCSR:
    """This rank's row block of a distributed sparse matrix (or directed multigraph, one entry per edge).

    Build it collectively with :meth:`from_global`, :meth:`scatter` or :meth:`from_local`; every rank
    must call, and the constructors check on every rank that the ranks agree on the shape and dtypes.

    Examples
    --------
    >>> import numpy as np
    >>> from mpi4py import MPI
    >>> from graphkern.distributed import DistCSR
    >>> A = DistCSR.from_global(np.array([0, 2, 3]), np.array([0, 1, 0]), np.array([1.0, 2.0, 3.0]),
    ...                         MPI.COMM_SELF)
    >>> A.shape, A.indices.tolist(), A.values.tolist()
    ((2, 2), [0, 1, 0], [1.0, 2.0, 3.0])
    """

    comm: object
    shape: tuple[int, int]
    row_offsets: np.ndarray
    col_offsets: np.ndarray
    indptr: np.ndarray
    indices: np.ndarray
    values: np.ndarray | None

    # ------------------------------------------------------------------------------ constructors
    @classmethod
    def from_local(cls, indptr, indices, values, comm, shape, *, col_offsets=None):
        """Collective: every rank passes its own rows; the row partition is gathered from their counts."""
        comm = as_counting(comm)
        indptr = np.ascontiguousarray(indptr, dtype=np.int64)
        indices = np.ascontiguousarray(indices, dtype=np.int64)
        shape = (int(shape[0]), int(shape[1]))
        dtype = None if values is None else np.asarray(values).dtype
        require_same(comm, "the global shape", shape)
        require_same(comm, "the value dtype", None if dtype is None else dtype.descr)
        counts = comm.allgather(int(indptr.size - 1))
        row_offsets = _offsets_from_counts(counts)
        problem = None
        if row_offsets[-1] != shape[0]:
            problem = f"the ranks' row counts add up to {int(row_offsets[-1])}, expected {shape[0]} rows"
        problem = problem or _check_local(indptr, indices, shape[1], indptr.size - 1)
        if problem is None and values is not None and np.asarray(values).shape[0] != indices.size:
            problem = f"argument 'values': expected {indices.size} values (one per entry), found {len(values)}"
        raise_everywhere(comm, problem)
        if col_offsets is None:
            col_offsets = row_offsets if shape[0] == shape[1] else even_offsets(shape[1], comm.size)
        col_offsets = np.asarray(col_offsets, dtype=np.int64)
        if col_offsets.size != comm.size + 1 or col_offsets[0] != 0 or col_offsets[-1] != shape[1]:
            raise DistributedError(f"argument 'col_offsets': expected {comm.size + 1} offsets from 0 to {shape[1]}, "
                                   f"found {col_offsets.tolist()}")
        vals = None if values is None else np.ascontiguousarray(values)
        return cls(comm, shape, row_offsets, col_offsets, indptr, indices, vals)

    @classmethod
    def from_global(cls, indptr, indices, values, comm, *, row_counts=None, shape=None, col_offsets=None):
        """Collective: every rank holds the whole CSR and keeps its row block (even blocks by default)."""
        comm = as_counting(comm)
        indptr = np.asarray(indptr, dtype=np.int64)
        n_rows = indptr.size - 1
        if shape is None:
            shape = (n_rows, n_rows)
        offsets = even_offsets(n_rows, comm.size) if row_counts is None else _offsets_from_counts(row_counts)
        if offsets.size != comm.size + 1 or offsets[-1] != n_rows:
            raise DistributedError(f"argument 'row_counts': expected {comm.size} counts adding up to {n_rows}, "
                                   f"found {list(np.diff(offsets))}")
        lo, hi = offsets[comm.rank], offsets[comm.rank + 1]
        a, b = int(indptr[lo]), int(indptr[hi])
        local_values = None if values is None else np.asarray(values)[a:b]
        return cls.from_local(indptr[lo:hi + 1] - a, np.asarray(indices)[a:b], local_values, comm, shape,
                              col_offsets=col_offsets)

    @classmethod
    def scatter(cls, indptr, indices, values, comm, *, root=0, row_counts=None, shape=None, col_offsets=None):
        """Collective: ``root`` holds the whole CSR (others pass None) and sends each rank its row block."""
        comm = as_counting(comm)
        me = comm.rank
        if me == root:
            indptr = np.asarray(indptr, dtype=np.int64)
            n_rows = indptr.size - 1
            offsets = even_offsets(n_rows, comm.size) if row_counts is None else _offsets_from_counts(row_counts)
            header = (n_rows, shape, None if values is None else np.asarray(values).dtype, offsets.tolist())
        else:
            header = None
        n_rows, shape, value_dtype, offsets = comm.bcast(header, root=root)
        offsets = np.asarray(offsets, dtype=np.int64)
        shape = (n_rows, n_rows) if shape is None else shape
        lo, hi = offsets[me], offsets[me + 1]
        row_counts_all = np.diff(offsets)
        local_indptr = np.empty(hi - lo + 1, dtype=np.int64)
        if me == root:
            nnz_per_rank = indptr[offsets[1:]] - indptr[offsets[:-1]]
            # each rank's indptr slice, rebased to 0, packed one after another
            packed = np.concatenate([indptr[offsets[r]:offsets[r + 1] + 1] - indptr[offsets[r]]
                                     for r in range(comm.size)])
            send_ptr = [packed, (row_counts_all + 1, exclusive_scan(row_counts_all + 1)), _mpi_type(np.int64)]
        else:
            nnz_per_rank = None
            send_ptr = None
        comm.Scatterv(send_ptr, local_indptr, root=root)
        nnz = int(local_indptr[-1])
        local_indices = np.empty(nnz, dtype=np.int64)
        nnz_all = comm.bcast(None if me != root else nnz_per_rank.tolist(), root=root)
        nnz_all = np.asarray(nnz_all, dtype=np.int64)
        send_idx = ([np.asarray(indices, dtype=np.int64), (nnz_all, exclusive_scan(nnz_all)), _mpi_type(np.int64)]
                    if me == root else None)
        comm.Scatterv(send_idx, local_indices, root=root)
        local_values = None
        if value_dtype is not None:
            from ._comm import record_type

            dtype = np.dtype(value_dtype)
            local_values = np.empty(nnz, dtype=dtype)
            rtype = record_type(dtype.itemsize)
            send_vals = ([np.ascontiguousarray(values).view(np.uint8), (nnz_all, exclusive_scan(nnz_all)), rtype]
                         if me == root else None)
            comm.Scatterv(send_vals, [local_values.view(np.uint8), rtype], root=root)
            rtype.Free()
        return cls.from_local(local_indptr, local_indices, local_values, comm, shape, col_offsets=col_offsets)

    # ------------------------------------------------------------------------------ access
    @property
    def rank(self) -> int:
        return self.comm.rank

    @property
    def first_row(self) -> int:
        return int(self.row_offsets[self.rank])

    @property
    def num_local_rows(self) -> int:
        return self.indptr.size - 1

    @property
    def nnz_local(self) -> int:
        return self.indices.size

    def local_graph(self):
        """This rank's rows as a :class:`graphkern.Graph` block (local rows -> global columns), for the CPU
        kernels; edge ids are the local entry positions."""
        from ..graph import Graph

        return Graph.from_csr(self.indptr, self.indices, num_dst=self.shape[1])

    def local_rows(self) -> np.ndarray:
        """The global row id of each local entry."""
        return np.repeat(np.arange(self.first_row, self.first_row + self.num_local_rows, dtype=np.int64),
                         np.diff(self.indptr))

    def canonical(self) -> "DistCSR":
        """The same matrix with column ids ascending inside every row, parallel entries in their order
        (the form in which ``transpose(transpose(A)) == A`` holds exactly). Local, no communication."""
        keys = self.local_rows() * np.int64(max(self.shape[1], 1)) + self.indices
        order = np.argsort(keys, kind="stable")
        vals = None if self.values is None else self.values[order]
        return DistCSR(self.comm, self.shape, self.row_offsets, self.col_offsets, self.indptr.copy(),
                       self.indices[order], vals)

    def gather(self, root=0):
        """Collective: the whole ``(indptr, indices, values)`` on ``root``, None on the other ranks."""
        comm = self.comm
        counts = np.asarray(comm.allgather(self.nnz_local), dtype=np.int64)
        rows = np.diff(self.row_offsets)
        me = comm.rank
        indptr_all = np.empty(int(rows.sum()), dtype=np.int64) if me == root else None
        comm.Gatherv(np.ascontiguousarray(self.indptr[1:] + 0), None if me != root else
                     [indptr_all, (rows, exclusive_scan(rows)), _mpi_type(np.int64)], root=root)
        indices_all = np.empty(int(counts.sum()), dtype=np.int64) if me == root else None
        comm.Gatherv(self.indices, None if me != root else
                     [indices_all, (counts, exclusive_scan(counts)), _mpi_type(np.int64)], root=root)
        values_all = None
        if self.values is not None:
            from ._comm import record_type

            rtype = record_type(self.values.dtype.itemsize)
            if me == root:
                values_all = np.empty(int(counts.sum()), dtype=self.values.dtype)
            comm.Gatherv([self.values.view(np.uint8) if self.values.size else np.empty(0, np.uint8),
                          self.values.size, rtype],
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


@dataclass
class XCSR(DistCSR):
    """A :class:`DistCSR` whose entries are cells holding ``cell_counts[c]`` values each (a multigraph with
    its parallel edges grouped per (row, column), or a matrix of variable-length cells). ``indices`` has one
    column id per cell; ``values`` holds every cell's values, cell after cell, row-major.

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

    cell_counts: np.ndarray | None = None

    @classmethod
    def from_local(cls, indptr, indices, cell_counts, values, comm, shape, *, col_offsets=None):
        comm = as_counting(comm)
        cell_counts = np.ascontiguousarray(cell_counts, dtype=np.int64)
        problem = None
        if cell_counts.size != np.asarray(indices).size:
            problem = f"argument 'cell_counts': expected one count per cell ({np.asarray(indices).size}), " \
                      f"found {cell_counts.size}"
        elif cell_counts.size and cell_counts.min() < 1:
            problem = f"argument 'cell_counts': expected counts >= 1, found {int(cell_counts.min())}"
        elif np.asarray(values).shape[0] != int(cell_counts.sum()):
            problem = f"argument 'values': expected {int(cell_counts.sum())} values (the cells' counts), " \
                      f"found {np.asarray(values).shape[0]}"
        raise_everywhere(comm, problem)
        base = DistCSR.from_local(indptr, indices, None, comm, shape, col_offsets=col_offsets)
        require_same(comm, "the value dtype", np.asarray(values).dtype.descr)
        return cls(base.comm, base.shape, base.row_offsets, base.col_offsets, base.indptr, base.indices,
                   np.ascontiguousarray(values), cell_counts)

    @classmethod
    def from_global(cls, indptr, indices, cell_counts, values, comm, *, row_counts=None, shape=None,
                    col_offsets=None):
        """Collective: every rank holds the whole XCSR and keeps its row block."""
        comm = as_counting(comm)
        indptr = np.asarray(indptr, dtype=np.int64)
        cell_counts = np.asarray(cell_counts, dtype=np.int64)
        n_rows = indptr.size - 1
        shape = (n_rows, n_rows) if shape is None else shape
        offsets = even_offsets(n_rows, comm.size) if row_counts is None else _offsets_from_counts(row_counts)
        lo, hi = offsets[comm.rank], offsets[comm.rank + 1]
        a, b = int(indptr[lo]), int(indptr[hi])
        starts = exclusive_scan(np.r_[cell_counts, 0])
        va, vb = int(starts[a]), int(starts[b])
        return cls.from_local(indptr[lo:hi + 1] - a, np.asarray(indices)[a:b], cell_counts[a:b],
                              np.asarray(values)[va:vb], comm, shape, col_offsets=col_offsets)

    @classmethod
    def from_csr(cls, A: DistCSR) -> "XCSR":
        """Group the parallel entries of a canonical :class:`DistCSR` into cells (local, no communication)."""
        rows = A.local_rows()
        new_cell = np.ones(A.indices.size, dtype=bool)
        if A.indices.size > 1:
            new_cell[1:] = (rows[1:] != rows[:-1]) | (A.indices[1:] != A.indices[:-1])
        starts = np.flatnonzero(new_cell)
        cell_counts = np.diff(np.r_[starts, A.indices.size]).astype(np.int64)
        cell_rows = rows[starts] - A.first_row
        indptr = np.zeros(A.num_local_rows + 1, dtype=np.int64)
        np.cumsum(np.bincount(cell_rows, minlength=A.num_local_rows), out=indptr[1:])
        values = A.values if A.values is not None else np.zeros(A.indices.size, dtype=np.int8)
        return cls(A.comm, A.shape, A.row_offsets, A.col_offsets, indptr, A.indices[starts], values, cell_counts)

    def to_csr(self) -> DistCSR:
        """One entry per value (cells expanded into parallel entries); local, no communication."""
        indices = np.repeat(self.indices, self.cell_counts)
        row_of_cell = np.repeat(np.arange(self.num_local_rows), np.diff(self.indptr))
        per_row = np.bincount(row_of_cell, weights=self.cell_counts, minlength=self.num_local_rows).astype(np.int64)
        indptr = np.zeros(self.num_local_rows + 1, dtype=np.int64)
        np.cumsum(per_row, out=indptr[1:])
        return DistCSR(self.comm, self.shape, self.row_offsets, self.col_offsets, indptr, indices, self.values)
