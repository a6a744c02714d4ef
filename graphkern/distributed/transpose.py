"""Distributed transpose of a :class:`DistCSR` or :class:`XCSR`: LocalTranspose, then ViewSwap.

Magalhães and Schürmann's algorithm (docs/design.md, section 'Distributed
transpose'). Each rank transposes its
row block locally: every entry becomes the record ``(new row, new column, value)``, grouped by the rank
that owns its new row (a stable bucket pass; the contiguous partition makes the owner a function of the
new row). One Alltoallv delivers the records; a stable counting sort by the local new row restores
``(row, column)`` order, parallel entries in their original order, because each source's records come
sorted by new column and the sources arrive in rank order, which is new-column order. (The paper sorts
on both sides; one sort suffices, and the sender's pass is a bucket pass.) So
``transpose(transpose(A)) == A`` exactly for a canonical ``A`` (:meth:`DistCSR.canonical`).

Collectives, exactly the paper's: CSR Allgather (the new row partition), Alltoall (counts), Alltoallv
(records); XCSR Allgather, Alltoall + Alltoallv for the ``(row, column, count)`` cells, Alltoallv for the
values: four, because the receive counts of the values follow from the cells received (the paper's
second Alltoall is redundant; ``paper_collectives=True`` issues it, five in all). Counts and
displacements are int64 records throughout; with MPI-4 (the mpich wheel) mpi4py uses the large-count
calls, so counts past 2^31 work.

Before them, one allgather of a small tuple per rank validates collectively (``_agree``): a malformed
block on any rank, or ranks that disagree on the shape, the partitions or the value dtype, make every
rank raise the same :class:`DistributedError` before any data moves.
"""

from __future__ import annotations

import numba
import numpy as np

from .._validate import type_name
from ..kernels.cpu import distributed as _pack
from ..kernels.cpu import sort as _sort
from ..kernels.cpu.partition import nnz_balanced_row_bounds
from ._agree import agree, local_check
from ._comm import alltoall_counts, alltoallv_records, as_counting, exclusive_scan, require_host_backend
from ._csr_checks import check_structure, invariants, mark_checked
from .csr import XCSR, DistCSR

__all__ = ["transpose", "gather_to_root_transpose"]

# A counting sort over the column span costs O(span); past this many keys per entry, sort by comparison.
_COUNT_SORT_SPAN_PER_ENTRY = 8


def stable_order(keys: np.ndarray, lo: int, hi: int) -> np.ndarray:
    """The stable sorting permutation of int64 ``keys`` in ``[lo, hi)``: graphkern's parallel counting
    sort when the span is moderate, NumPy's stable sort when the ids are sparse over a huge range."""
    span = hi - lo
    if keys.size == 0:
        return np.zeros(0, dtype=np.int64)
    if span <= _COUNT_SORT_SPAN_PER_ENTRY * keys.size + (1 << 16):
        shifted = keys - lo if lo else keys
        _, perm = _sort.count_sort(shifted, int(span), np.int64)
        return perm
    return np.argsort(keys, kind="stable")


def _record_dtype(with_count: bool, value_dtype):
    fields = [("row", np.int64), ("col", np.int64)]
    if with_count:
        fields.append(("count", np.int64))
    if value_dtype is not None:
        fields.append(("value", np.dtype((np.void, np.dtype(value_dtype).itemsize))))
    return np.dtype(fields)


def _new_partition(A, comm) -> np.ndarray:
    """Collective (Allgather): the row partition of the transpose, from each rank's block of columns."""
    mine = np.array([A._col_offsets[comm.rank + 1] - A._col_offsets[comm.rank]], dtype=np.int64)
    counts = np.empty(comm.size, dtype=np.int64)
    comm.Allgather(mine, counts)
    offsets = np.zeros(comm.size + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    return offsets


def _local_transpose(A, new_offsets):
    """Sort this rank's entries by column (stable) and count how many go to each rank."""
    order = stable_order(A._indices, int(A._indices.min()) if A._indices.size else 0,
                         int(A._indices.max()) + 1 if A._indices.size else 0)
    new_rows = A._indices[order]
    new_cols = A.local_rows()[order]
    # contiguous partition: destinations are monotone in the sorted new rows
    bounds = np.searchsorted(new_rows, new_offsets)
    send_counts = np.diff(bounds).astype(np.int64)
    return order, new_rows, new_cols, send_counts


def _restore(recv_rows, first, n_local):
    """Stable sort of the received entries by local new row: (row, column) order, duplicates in order."""
    local = recv_rows - first
    if local.size == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(n_local + 1, dtype=np.int64)
    indptr, perm = _sort.count_sort(local, n_local, np.int64)
    return perm, indptr.astype(np.int64)


def transpose(A: DistCSR, *, paper_collectives: bool = False) -> DistCSR:
    """Collective: the transpose of a row-distributed matrix, row-distributed by ``A.col_offsets``.

    Parameters
    ----------
    A : DistCSR or XCSR
    paper_collectives : bool
        XCSR only: also send the value counts with their own Alltoall, as the paper does (5 collectives
        instead of 4; the result is the same).

    Returns
    -------
    DistCSR or XCSR (the same kind as ``A``): rows = ``A``'s columns, partitioned by ``A.col_offsets``;
    its ``col_offsets`` are ``A.row_offsets``, so transposing again restores ``A``'s layout.

    Raises
    ------
    DistributedError
        On every rank, before any data moves, when any rank's block is malformed or the ranks disagree
        on the shape, ``row_offsets``, ``col_offsets``, the value dtype or ``paper_collectives``. The check
        costs one allgather of a small tuple per rank (and, once per block, a scan of its ids).
    TypeError
        On the calling rank when ``A`` is not a DistCSR: there is no communicator to agree on.

    Examples
    --------
    >>> import numpy as np
    >>> from mpi4py import MPI
    >>> from graphkern.distributed import DistCSR, transpose
    >>> A = DistCSR.from_global(np.array([0, 2, 3]), np.array([0, 1, 1]), np.array([1.0, 2.0, 3.0]),
    ...                         MPI.COMM_SELF)
    >>> T = transpose(A)
    >>> T.indptr.tolist(), T.indices.tolist(), T.values.tolist()
    ([0, 1, 3], [0, 0, 1], [1.0, 2.0, 3.0])
    """
    require_host_backend("graphkern.distributed.transpose")
    comm = _validate(A, "transpose", paper_collectives=paper_collectives)
    if isinstance(A, XCSR):
        return mark_checked(_transpose_xcsr(A, comm, paper_collectives))
    new_offsets = _new_partition(A, comm)
    words = _pack.value_words(A._values)
    num_words = words.shape[1]
    nnz = A._indices.size
    chunks = max(1, numba.get_num_threads())
    # sender: a stable bucket pass by destination rank (the partition is contiguous, so a new row's
    # owner follows from its id); the records keep the input's row-major order inside each bucket
    row_bounds = nnz_balanced_row_bounds(A._indptr, chunks)
    counts = np.zeros((chunks, comm.size), dtype=np.int64)
    _pack.destination_counts(A._indptr, A._indices, new_offsets, row_bounds, counts)
    send_counts = counts.sum(axis=0).astype(np.int64)
    heads = exclusive_scan(send_counts)[None, :] + np.cumsum(counts, axis=0) - counts
    send_block = _sort._take_scratch(nnz * 8 * (2 + num_words))
    try:
        records = send_block[: nnz * 8 * (2 + num_words)].view(np.int64).reshape(nnz, 2 + num_words)
        _pack.pack_by_destination(A._indptr, A._indices, words, new_offsets, row_bounds, np.ascontiguousarray(heads),
                                  A.first_row, records)
        recv_counts = alltoall_counts(comm, send_counts)
        total = int(recv_counts.sum())
        recv_block = _sort._take_scratch(total * 8 * (2 + num_words))
        try:
            received = recv_block[: total * 8 * (2 + num_words)].view(np.int64).reshape(total, 2 + num_words)
            alltoallv_records(comm, records.view(_record_view(num_words)).reshape(-1), send_counts, recv_counts,
                              out=received.view(_record_view(num_words)).reshape(-1))
            # receiver: from each source a run sorted by old row (= new column), sources in rank order
            # (= ascending new columns), so a stable sort by new row gives (row, column) order exactly
            me = comm.rank
            first, n_local = int(new_offsets[me]), int(new_offsets[me + 1] - new_offsets[me])
            indptr, indices, out_words = _sort_received(received, first, n_local, num_words, int(A.shape[0]))
        finally:
            _sort._give_scratch(recv_block)
    finally:
        _sort._give_scratch(send_block)
    values = None if A._values is None else _pack.words_to_values(out_words, A._values.dtype)
    return mark_checked(DistCSR._own(comm, (A.shape[1], A.shape[0]), new_offsets, A._row_offsets, indptr, indices,
                                     values))


def _sort_received(received, first, n_local, num_words, max_col):
    """The received records in (new row, new column) order: ``(indptr, columns, value words)``.

    Large inputs go through graphkern's two-pass bucketed count sort, its first pass reading the records
    directly; small ones through :func:`graphkern.kernels.cpu.sort.coo_to_compressed`.
    """
    total = received.shape[0]
    if _sort._use_buckets(total, n_local):
        chunks = max(1, numba.get_num_threads())
        shift = _sort._bucket_shift(n_local)
        num_buckets = ((n_local - 1) >> shift) + 1
        bounds = (np.arange(chunks + 1, dtype=np.int64) * total) // chunks
        counts = np.zeros((chunks, num_buckets), dtype=np.int64)
        _pack.record_bucket_counts(received, first, bounds, shift, counts)
        heads, starts = _sort._bucket_heads(counts, np.int64)
        packed_dtype = np.dtype(_sort._packed_dtype(max(max_col - 1, 0), shift))
        scratch = _sort._take_scratch(total * (8 + packed_dtype.itemsize))
        try:
            tmp_eids = scratch[: total * 8].view(np.int64)
            tmp_packed = scratch[total * 8: total * (8 + packed_dtype.itemsize)].view(packed_dtype)
            _pack.scatter_records_to_buckets(received, first, bounds, shift, heads, num_words == 1, tmp_packed,
                                             tmp_eids)
            indptr = np.empty(n_local + 1, dtype=np.int64)
            indices = np.empty(total, dtype=np.int64)
            carried = np.empty(total, dtype=np.int64)
            _sort._sort_within_buckets(starts, shift, n_local, tmp_packed, tmp_eids, indptr, indices, carried)
        finally:
            _sort._give_scratch(scratch)
        if num_words == 1:
            return indptr, indices, carried.reshape(total, 1)
        return indptr, indices, received[:, 2:][carried]
    local_rows = np.empty(total, dtype=np.int64)
    cols = np.empty(total, dtype=np.int64)
    in_words = np.empty((total, num_words), dtype=np.int64)
    _pack.record_fields(received, first, local_rows, cols, in_words)
    if num_words == 1:  # one 8-byte value: carried through the sort as the "edge id"
        indptr, indices, out = _sort.coo_to_compressed(local_rows, cols, in_words.reshape(-1), n_local)
        return indptr.astype(np.int64), indices.astype(np.int64), out.reshape(total, 1)
    indptr, indices, perm = _sort.coo_to_compressed(local_rows, cols, None, n_local)
    return indptr.astype(np.int64), indices.astype(np.int64), in_words[perm]


def _record_view(num_words: int):
    """The dtype under which one record (2 + W int64 words) is one element, for the Alltoallv."""
    return np.dtype((np.void, 8 * (2 + num_words)))


def _value_runs(cell_counts: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Indices of the values of the cells ``order[0], order[1], ...``, each cell's run kept together."""
    starts = exclusive_scan(np.r_[cell_counts, 0])[:-1] if cell_counts.size else np.zeros(0, np.int64)
    counts = cell_counts[order]
    new_starts = exclusive_scan(np.r_[counts, 0])[:-1] if counts.size else np.zeros(0, np.int64)
    total = int(counts.sum())
    return np.repeat(starts[order] - new_starts, counts) + np.arange(total, dtype=np.int64)


def _transpose_xcsr(A: XCSR, comm, paper_collectives: bool) -> XCSR:
    new_offsets = _new_partition(A, comm)
    order, new_rows, new_cols, send_cells = _local_transpose(A, new_offsets)
    recv_cells = alltoall_counts(comm, send_cells)
    cells = np.empty(order.size, dtype=_record_dtype(True, None))
    cells["row"], cells["col"], cells["count"] = new_rows, new_cols, A._cell_counts[order]
    received = alltoallv_records(comm, cells, send_cells, recv_cells)
    # values per destination: the cell counts of each destination's block of cells
    cell_bounds = exclusive_scan(np.r_[send_cells, 0])
    count_sums = np.r_[0, np.cumsum(cells["count"])]
    send_values = (count_sums[cell_bounds[1:]] - count_sums[cell_bounds[:-1]]).astype(np.int64)
    if paper_collectives:
        recv_values = alltoall_counts(comm, send_values)
    else:  # the received cells say how many values each source sends
        recv_bounds = exclusive_scan(np.r_[recv_cells, 0])
        got = np.r_[0, np.cumsum(received["count"])]
        recv_values = (got[recv_bounds[1:]] - got[recv_bounds[:-1]]).astype(np.int64)
    values_sent = A._values[_value_runs(A._cell_counts, order)]
    values_got = alltoallv_records(comm, np.ascontiguousarray(values_sent), send_values, recv_values)
    me = comm.rank
    n_local = int(new_offsets[me + 1] - new_offsets[me])
    perm, indptr = _restore(received["row"], int(new_offsets[me]), n_local)
    counts = np.ascontiguousarray(received["count"])
    values = values_got[_value_runs(counts, perm)]
    return XCSR._own(comm, (A.shape[1], A.shape[0]), new_offsets, A._row_offsets, indptr,
                np.ascontiguousarray(received["col"][perm]), values, counts[perm])


def _validate(A, where: str, **same) -> object:
    """Collective check of ``A`` (and of the arguments in ``same``, which must agree across ranks);
    returns the communicator to use."""
    if not isinstance(A, DistCSR):
        raise TypeError(f"{where}: argument 'A': expected a DistCSR or XCSR, found {type_name(A)}")
    comm = as_counting(A.comm)

    def local():
        for name, value in same.items():
            if not isinstance(value, bool):
                raise TypeError(f"argument '{name}': expected True or False, found {value!r}")
        check_structure(A, comm)

    _, problem = local_check(local)
    agree(comm, where, problem, None if problem else {**invariants(A), **{f"argument '{k}'": v for k, v in
                                                                          same.items()}})
    return comm


def gather_to_root_transpose(A: DistCSR, root: int = 0) -> DistCSR:
    """The naive baseline: gather the whole matrix on ``root``, transpose it there with the serial count
    sort, scatter the row blocks back (for comparison with :func:`transpose`).

    Validation is collective in each of its two phases (:meth:`DistCSR.gather` and
    :meth:`DistCSR.scatter`: one allgather of a small tuple per rank each), so a bad ``A`` or ``root``
    raises the same :class:`DistributedError` on every rank.
    """
    require_host_backend("graphkern.distributed.gather_to_root_transpose")
    if not isinstance(A, DistCSR):  # an XCSR is refused collectively by A.gather
        raise TypeError(f"gather_to_root_transpose: argument 'A': expected a DistCSR, found {type_name(A)}")
    whole = A.gather(root)
    comm = A.comm
    if comm.rank == root:
        indptr, indices, values = whole
        t_indptr, t_indices, perm = _sort.transpose_compressed(indptr, indices, None, A.shape[1])
        t_values = None if values is None else values[perm]
        counts = np.diff(A._col_offsets)
        return DistCSR.scatter(t_indptr.astype(np.int64), t_indices.astype(np.int64), t_values, comm, root=root,
                               row_counts=counts, shape=(A.shape[1], A.shape[0]), col_offsets=A._row_offsets)
    return DistCSR.scatter(None, None, None, comm, root=root, shape=None, col_offsets=A._row_offsets)
