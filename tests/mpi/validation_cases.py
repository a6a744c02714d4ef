"""The bad-input cases of test_validation.py for the row-block CSR (constructors, gather, transpose; the
grid, 2-D blocks, BFS and Graph500 are in validation_cases_2d.py): for each entry point and each
kind of bad argument, how to make the call with the argument corrupted on the "bad" ranks only, and the
valid call that must work afterwards on the same communicator.

Kinds: "local", the bad ranks' own check fails and exactly they are named; "same", the ranks disagree on an
argument that must be equal everywhere and the ranks holding the less common value are named (ties: the
value of the lowest rank is taken as intended); "all", a condition only the ranks together can check (the
row counts adding up), every rank named; "root", only the root's data is read, so only the root is named.
"""

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from graphkern.distributed import XCSR, DistCSR, transpose
from graphkern.distributed.csr import even_offsets
from graphkern.distributed.transpose import gather_to_root_transpose

N = 12  # rows; with at most 6 ranks every rank holds two or more rows of the even partition


def matrix():
    """A canonical N x N CSR with two entries per row, and its float64 values (fresh arrays every call)."""
    rows = np.repeat(np.arange(N), 2)
    cols = np.sort(((np.arange(N) * 5)[:, None] + np.array([1, 3])) % N, axis=1).reshape(-1)
    indptr = np.arange(0, 2 * N + 1, 2, dtype=np.int64)
    return indptr, cols.astype(np.int64), np.arange(2 * N, dtype=np.float64), rows


def edges():
    _, cols, _, rows = matrix()
    return rows, cols


def other_partition(size, total=N):
    """A valid partition unlike the even one: everything on the last rank."""
    out = np.zeros(size + 1, dtype=np.int64)
    out[-1] = total
    return out


def local_block(comm):
    """This rank's rows of :func:`matrix` under the even partition, for ``from_local``."""
    indptr, cols, values, _ = matrix()
    offsets = even_offsets(N, comm.size)
    lo, hi = offsets[comm.rank], offsets[comm.rank + 1]
    a, b = indptr[lo], indptr[hi]
    return indptr[lo : hi + 1] - a, cols[a:b], values[a:b]


def built(comm, cls=DistCSR):
    indptr, cols, values, _ = matrix()
    if cls is XCSR:
        return XCSR.from_global(indptr, cols, np.ones(cols.size, dtype=np.int64), values, comm)
    return DistCSR.from_global(indptr, cols, values, comm)


def corrupt(A, **fields):
    """A new object like ``A`` with some fields replaced, built directly (it keeps copies of the arrays,
    checked at its first collective call)."""
    names = ["comm", "shape", "row_offsets", "col_offsets", "indptr", "indices", "values"]
    names += ["cell_counts"] if isinstance(A, XCSR) else []
    return type(A)(**{name: fields.get(name, getattr(A, name)) for name in names})


# ----------------------------------------------------------------------------- the cases


class Case(NamedTuple):
    entry: str  # which valid call follows
    name: str
    kind: str  # "local": the bad ranks fail; "same": ranks disagree; "all": every rank is named; "root": the root
    match: str
    build: Callable  # build(comm, bad) -> the call to make; runs before the counted section


def _from_global(**bad_kwargs):
    def build(comm, bad):
        indptr, cols, values, _ = matrix()
        kwargs = {"indptr": indptr, "indices": cols, "values": values}
        if bad:
            kwargs.update({k: (v(comm) if callable(v) else v) for k, v in bad_kwargs.items()})
        return lambda: DistCSR.from_global(
            kwargs.pop("indptr"), kwargs.pop("indices"), kwargs.pop("values"), comm, **kwargs
        )

    return build


def _counts_negative(comm):
    if comm.size == 1:
        return np.array([-1])
    counts = np.zeros(comm.size, dtype=np.int64)
    counts[0], counts[-1] = -1, N + 1
    return counts


def _bad_id_in_own_block(value):
    def make(comm):
        _, cols, _, _ = matrix()
        cols[int(even_offsets(N, comm.size)[comm.rank]) * 2] = value  # the first entry of this rank's rows
        return cols

    return make


def _decreasing_indptr(comm):
    indptr = matrix()[0]
    indptr[1], indptr[2] = indptr[2], indptr[1]
    return indptr


def _bigger_matrix(comm):
    indptr = matrix()[0]
    return np.r_[indptr, indptr[-1]]  # one more (empty) row


FROM_GLOBAL = [
    Case(
        "from_global",
        "row_counts wrong length",
        "local",
        r"argument 'row_counts': expected \d+ counts",
        _from_global(row_counts=lambda c: np.r_[np.diff(even_offsets(N, c.size)), 0]),
    ),
    Case(
        "from_global",
        "row_counts negative",
        "local",
        r"'row_counts': expected counts >= 0",
        _from_global(row_counts=_counts_negative),
    ),
    Case(
        "from_global",
        "row_counts float dtype",
        "local",
        r"'row_counts': expected an integer array, found",
        _from_global(row_counts=lambda c: np.diff(even_offsets(N, c.size)).astype(float)),
    ),
    Case(
        "from_global",
        "row_counts wrong sum",
        "local",
        r"'row_counts': expected counts adding up to 12",
        _from_global(row_counts=lambda c: np.diff(even_offsets(N + 1, c.size))),
    ),
    Case(
        "from_global",
        "row_counts differ between ranks",
        "same",
        r"'row_counts': expected the same on every rank",
        _from_global(row_counts=lambda c: np.diff(other_partition(c.size))),
    ),
    Case(
        "from_global",
        "col_offsets wrong length",
        "local",
        r"'col_offsets': expected \d+ offsets",
        _from_global(col_offsets=lambda c: np.r_[even_offsets(N, c.size), N]),
    ),
    Case(
        "from_global",
        "col_offsets negative",
        "local",
        r"'col_offsets': expected offsets from 0 to 12, found -1",
        _from_global(col_offsets=lambda c: np.r_[-1, even_offsets(N, c.size)[1:]]),
    ),
    Case(
        "from_global",
        "col_offsets float dtype",
        "local",
        r"'col_offsets': expected an integer array",
        _from_global(col_offsets=lambda c: even_offsets(N, c.size).astype(float)),
    ),
    Case(
        "from_global",
        "col_offsets differ between ranks",
        "same",
        r"'col_offsets': expected the same on every rank",
        _from_global(col_offsets=lambda c: other_partition(c.size)),
    ),
    Case(
        "from_global",
        "id out of range",
        "local",
        r"'indices': expected column ids < 12, found 17 at position",
        _from_global(indices=_bad_id_in_own_block(N + 5)),
    ),
    Case(
        "from_global",
        "negative id",
        "local",
        r"'indices': expected column ids >= 0, found -1",
        _from_global(indices=_bad_id_in_own_block(-1)),
    ),
    Case(
        "from_global",
        "indices float dtype",
        "local",
        r"'indices': expected an integer array, found dtype float",
        _from_global(indices=lambda c: matrix()[1].astype(float)),
    ),
    Case(
        "from_global",
        "indptr decreasing",
        "local",
        r"'indptr': expected a non-decreasing indptr",
        _from_global(indptr=_decreasing_indptr),
    ),
    Case(
        "from_global",
        "values wrong length",
        "local",
        r"'values': expected 24 values",
        _from_global(values=lambda c: matrix()[2][:-1]),
    ),
    Case(
        "from_global",
        "values 2-D",
        "local",
        r"'values': expected a 1-D array",
        _from_global(values=lambda c: matrix()[2].reshape(-1, 2)),
    ),
    Case(
        "from_global",
        "value dtype differs",
        "same",
        r"the dtype of 'values': expected the same",
        _from_global(values=lambda c: matrix()[2].astype(np.float32)),
    ),
    Case(
        "from_global",
        "shape differs",
        "same",
        r"argument 'shape': expected the same on every rank",
        _from_global(shape=(N, N + 1)),
    ),
    Case(
        "from_global",
        "matrix size differs",
        "same",
        r"the row count len\(indptr\) - 1: expected the same",
        _from_global(indptr=_bigger_matrix),
    ),
]


def _from_local(**bad_kwargs):
    def build(comm, bad):
        indptr, cols, values = local_block(comm)
        kwargs = {"indptr": indptr, "indices": cols, "values": values, "shape": (N, N)}
        if bad:
            kwargs.update({k: (v(comm) if callable(v) else v) for k, v in bad_kwargs.items()})
        return lambda: DistCSR.from_local(
            kwargs.pop("indptr"), kwargs.pop("indices"), kwargs.pop("values"), comm, kwargs.pop("shape"), **kwargs
        )

    return build


FROM_LOCAL = [
    Case(
        "from_local",
        "indptr not from 0",
        "local",
        r"'indptr': expected indptr\[0\] == 0",
        _from_local(indptr=lambda c: local_block(c)[0] + 1),
    ),
    Case(
        "from_local",
        "id out of range",
        "local",
        r"'indices': expected column ids < 12",
        _from_local(indices=lambda c: local_block(c)[1] + N),
    ),
    Case(
        "from_local",
        "negative id",
        "local",
        r"'indices': expected column ids >= 0",
        _from_local(indices=lambda c: local_block(c)[1] - N),
    ),
    Case(
        "from_local",
        "indices float dtype",
        "local",
        r"'indices': expected an integer array",
        _from_local(indices=lambda c: local_block(c)[1].astype(float)),
    ),
    Case(
        "from_local",
        "values wrong length",
        "local",
        r"'values': expected \d+ values",
        _from_local(values=lambda c: local_block(c)[2][:-1]),
    ),
    Case("from_local", "shape not a pair", "local", r"argument 'shape': expected a pair", _from_local(shape=N)),
    Case("from_local", "shape differs", "same", r"argument 'shape': expected the same", _from_local(shape=(N, N + 1))),
    Case(
        "from_local",
        "col_offsets differ",
        "same",
        r"'col_offsets': expected the same",
        _from_local(col_offsets=lambda c: other_partition(c.size)),
    ),
    # one rank's extra row breaks the sum, which only all ranks together can see: every rank is named
    Case(
        "from_local",
        "row counts do not add up",
        "all",
        r"row counts .* add up to 1[3-8], expected 12",
        _from_local(indptr=lambda c: np.r_[local_block(c)[0], local_block(c)[0][-1]]),
    ),
]


def _xcsr(**bad_kwargs):
    def build(comm, bad):
        indptr, cols, values, _ = matrix()
        kwargs = {"cell_counts": np.ones(cols.size, dtype=np.int64), "values": values}
        if bad:
            kwargs.update({k: (v(comm) if callable(v) else v) for k, v in bad_kwargs.items()})
        return lambda: XCSR.from_global(indptr, cols, kwargs["cell_counts"], kwargs["values"], comm)

    return build


def _xcsr_local(comm, bad):
    indptr, cols, values = local_block(comm)
    counts = np.ones(cols.size, dtype=np.int64)
    if bad:
        counts[:1] = 0
    return lambda: XCSR.from_local(indptr, cols, counts, values, comm, (N, N))


XCSR_CASES = [
    Case(
        "xcsr",
        "cell_counts wrong length",
        "local",
        r"'cell_counts': expected one count per cell \(24\)",
        _xcsr(cell_counts=np.ones(5, dtype=np.int64)),
    ),
    Case(
        "xcsr",
        "cell count zero",
        "local",
        r"'cell_counts': expected counts >= 1, found 0",
        _xcsr(cell_counts=lambda c: np.r_[0, np.ones(2 * N - 1, dtype=np.int64)]),
    ),
    Case(
        "xcsr",
        "values fewer than the cells hold",
        "local",
        r"'values': expected 24 values",
        _xcsr(values=lambda c: matrix()[2][:-2]),
    ),
    Case("xcsr", "from_local cell count zero", "local", r"'cell_counts': expected counts >= 1", _xcsr_local),
]


def _scatter(**bad_kwargs):
    """Every rank holds the matrix (only the root's is read); the root is the last rank."""

    def build(comm, bad):
        indptr, cols, values, _ = matrix()
        kwargs = {"indptr": indptr, "indices": cols, "values": values, "root": comm.size - 1}
        if bad:
            kwargs.update({k: (v(comm) if callable(v) else v) for k, v in bad_kwargs.items()})
        return lambda: DistCSR.scatter(
            kwargs.pop("indptr"), kwargs.pop("indices"), kwargs.pop("values"), comm, **kwargs
        )

    return build


SCATTER = [
    Case(
        "scatter",
        "root out of range",
        "local",
        r"argument 'root': expected an integer <= \d+, found 99",
        _scatter(root=99),
    ),
    Case(
        "scatter",
        "root not an integer",
        "local",
        r"argument 'root': expected an integer, found float",
        _scatter(root=0.0),
    ),
    Case("scatter", "root differs between ranks", "same", r"argument 'root': expected the same", _scatter(root=0)),
    Case(
        "scatter",
        "id out of range on the root",
        "root",
        r"'indices': expected column ids < 12",
        _scatter(indices=lambda c: matrix()[1] + N),
    ),
    Case(
        "scatter",
        "row_counts wrong on the root",
        "root",
        r"'row_counts': expected \d+ counts",
        _scatter(row_counts=[N, 0, 0, 0, 0, 0, 0]),
    ),
]


def on_built(call, cls=DistCSR, **fields):
    """Build a valid object on every rank, then corrupt some of its fields on the bad ranks."""

    def build(comm, bad):
        A = built(comm, cls)
        if bad:
            A = corrupt(A, **{k: (v(A) if callable(v) else v) for k, v in fields.items()})
        return lambda: call(A)

    return build


def _transpose_with(**fields):
    return on_built(transpose, **fields)


def ids_out_of_range(A):
    return A.indices + N


def _gather_root(bad_root):
    def build(comm, bad):
        A = built(comm)
        return lambda: A.gather(root=bad_root if bad else 0)

    return build


def _xcsr_next_to_distcsr(call):
    """Bad ranks pass the XCSR of the matrix, the others the DistCSR."""

    def build(comm, bad):
        A = built(comm)
        A = XCSR.from_csr(A) if bad else A
        return lambda: call(A)

    return build


def _paper_collectives(comm, bad):
    X = built(comm, XCSR)
    return lambda: transpose(X, paper_collectives=1 if bad else False)


def _gather_to_root(comm, bad):
    A = built(comm)
    return lambda: gather_to_root_transpose(A, 50 if bad else 0)


TRANSPOSE = [
    Case(
        "transpose",
        "col_offsets differ between ranks",
        "same",
        r"A.col_offsets: expected the same on every rank",
        _transpose_with(col_offsets=lambda A: other_partition(A.comm.size)),
    ),
    Case(
        "transpose",
        "col_offsets wrong length",
        "local",
        r"'A.col_offsets': expected \d+ offsets",
        _transpose_with(col_offsets=lambda A: np.r_[A.col_offsets, N]),
    ),
    Case(
        "transpose",
        "indptr wrong length",
        "local",
        r"'A.indptr': expected \d+ entries",
        _transpose_with(indptr=lambda A: A.indptr[:-1]),
    ),
    Case(
        "transpose",
        "row_offsets not ending at the rows",
        "local",
        r"'A.row_offsets': expected offsets from 0 to 12",
        _transpose_with(row_offsets=lambda A: np.r_[A.row_offsets[:-1], N + 1]),
    ),
    Case(
        "transpose",
        "id out of range",
        "local",
        r"'A.indices': expected column ids < 12",
        _transpose_with(indices=ids_out_of_range),
    ),
    Case(
        "transpose",
        "negative id",
        "local",
        r"'A.indices': expected column ids >= 0",
        _transpose_with(indices=lambda A: A.indices - N),
    ),
    Case(
        "transpose",
        "indices float dtype",
        "local",
        r"'A.indices': expected a 1-D int64 array",
        _transpose_with(indices=lambda A: A.indices.astype(float)),
    ),
    Case(
        "transpose",
        "value dtype differs",
        "same",
        r"the dtype of A.values: expected the same",
        _transpose_with(values=lambda A: A.values.astype(np.float32)),
    ),
    Case(
        "transpose",
        "values wrong length",
        "local",
        r"'A.values': expected \d+ values",
        _transpose_with(values=lambda A: A.values[:-1]),
    ),
    Case(
        "transpose",
        "shape differs",
        "local",
        r"'A.col_offsets': expected offsets from 0 to 13",
        _transpose_with(shape=(N, N + 1)),
    ),
    Case(
        "transpose",
        "paper_collectives not a bool",
        "local",
        r"'paper_collectives': expected True or False",
        _paper_collectives,
    ),
    Case(
        "transpose",
        "XCSR next to DistCSR",
        "same",
        r"the kind of 'A': expected the same",
        _xcsr_next_to_distcsr(transpose),
    ),
]

GATHER = [
    Case("gather", "root negative", "local", r"argument 'root': expected an integer >= 0, found -1", _gather_root(-1)),
    Case("gather", "root differs between ranks", "same", r"argument 'root': expected the same", _gather_root(1)),
    Case("gather", "an XCSR", "local", r"expected a DistCSR, found an XCSR", _xcsr_next_to_distcsr(XCSR.gather)),
    Case(
        "gather_to_root",
        "root out of range",
        "local",
        r"argument 'root': expected an integer <= \d+, found 50",
        _gather_to_root,
    ),
]


CASES = FROM_GLOBAL + FROM_LOCAL + XCSR_CASES + SCATTER + TRANSPOSE + GATHER


# ----------------------------------------------------------------------------- the valid calls that follow


def valid_matrix(comm, A):
    indptr, cols, values, _ = matrix()
    got = A.gather()
    return comm.rank != 0 or all(np.array_equal(g, w) for g, w in zip(got, (indptr, cols, values)))


def valid_transpose(comm):
    indptr, cols, values, rows = matrix()
    T = transpose(built(comm))
    order = np.argsort(cols, kind="stable")
    got = T.gather()
    return comm.rank != 0 or (np.array_equal(got[1], rows[order]) and np.array_equal(got[2], values[order]))


VALID = {
    "from_global": lambda comm: valid_matrix(comm, built(comm)),
    "from_local": lambda comm: valid_matrix(comm, DistCSR.from_local(*local_block(comm), comm, (N, N))),
    "xcsr": lambda comm: int(built(comm, XCSR).cell_counts.sum()) == built(comm).nnz_local,
    "scatter": lambda comm: valid_matrix(comm, DistCSR.scatter(*matrix()[:3], comm, root=comm.size - 1)),
    "transpose": valid_transpose,
    "gather": lambda comm: valid_matrix(comm, built(comm)),
    "gather_to_root": lambda comm: np.array_equal(
        gather_to_root_transpose(built(comm)).indices, transpose(built(comm)).indices
    ),
}
