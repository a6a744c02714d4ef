"""The distributed transpose against the serial stable-sort oracle, on every rank count the runner uses."""

import numpy as np
import pytest
from conftest import all_ranks, random_partition, write_into_each
from mpi4py import MPI

from graphkern.distributed import XCSR, DistCSR, DistributedError, gather_to_root_transpose, transpose
from graphkern.distributed.csr import even_offsets
from graphkern.distributed.transpose import _local_transpose, stable_order


def random_csr(rng, n_rows, n_cols, nnz, *, duplicates=True):
    """A canonical global CSR (rows sorted by column, parallel entries in order) with tagged values."""
    rows = rng.integers(0, n_rows, nnz) if n_rows else np.zeros(0, np.int64)
    cols = rng.integers(0, n_cols, nnz) if n_cols else np.zeros(0, np.int64)
    if duplicates and nnz > 4:
        rows[-3:], cols[-3:] = rows[0], cols[0]  # parallel entries
    order = np.lexsort((cols, rows))  # stable: equal (row, col) keep their draw order
    rows, cols = rows[order], cols[order]
    values = np.arange(nnz, dtype=np.float64) + 0.5  # the value says which entry it is
    indptr = np.zeros(n_rows + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n_rows), out=indptr[1:])
    return indptr, cols.astype(np.int64), values, rows


def oracle_transpose(indptr, cols, values, rows, n_cols):
    """Serial: a stable sort of the entries by column; within a new row, old rows ascending, in order."""
    order = np.argsort(cols, kind="stable")
    t_indptr = np.zeros(n_cols + 1, dtype=np.int64)
    np.cumsum(np.bincount(cols, minlength=n_cols), out=t_indptr[1:])
    return t_indptr, rows[order].astype(np.int64), values[order]


def same_on_root(comm, got, want) -> bool:
    ok = True
    if comm.rank == 0:
        ok = all(np.array_equal(a, b) for a, b in zip(got, want))
    return all_ranks(comm, ok)


CASES = [("square", 40, 40, 150), ("empty rows", 30, 30, 12), ("no entries", 9, 9, 0), ("empty", 0, 0, 0),
         ("rectangular", 17, 33, 90), ("hub column", 25, 25, 0)]


@pytest.mark.fast
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("uneven", [False, True], ids=["even", "uneven"])
def test_transpose_equals_the_serial_oracle(comm, case, uneven):
    name, n_rows, n_cols, nnz = case
    rng = np.random.default_rng(7)  # the same matrix on every rank
    indptr, cols, values, rows = random_csr(rng, n_rows, n_cols, nnz)
    if name == "hub column":  # every row points at column 0: all data converges on one rank
        rows = np.repeat(np.arange(n_rows), 3)
        cols = np.zeros(rows.size, dtype=np.int64)
        values = np.arange(rows.size, dtype=np.float64)
        indptr = np.arange(0, rows.size + 1, 3, dtype=np.int64)
    row_counts = random_partition(rng, n_rows, comm.size) if uneven else None
    col_offsets = None
    if n_rows != n_cols:
        col_offsets = np.r_[0, np.cumsum(random_partition(rng, n_cols, comm.size))] if uneven else None
    A = DistCSR.from_global(indptr, cols, values, comm, row_counts=row_counts, shape=(n_rows, n_cols),
                            col_offsets=col_offsets)
    comm.reset()
    T = transpose(A)
    # the paper's three collectives, after the one small allgather of the collective validation
    assert all_ranks(comm, {k: v[0] for k, v in comm.stats.items()} == {"allgather": 1, "Allgather": 1,
                                                                          "Alltoall": 1, "Alltoallv": 1})
    assert T.shape == (n_cols, n_rows)
    assert same_on_root(comm, T.gather(), oracle_transpose(indptr, cols, values, rows, n_cols))
    # the involution, exactly: ids, order of parallel entries and values
    TT = transpose(T)
    assert all_ranks(comm, np.array_equal(TT.row_offsets, A.row_offsets))
    assert all_ranks(comm, np.array_equal(TT.indptr, A.indptr) and np.array_equal(TT.indices, A.indices)
                     and np.array_equal(TT.values, A.values))


def _kinds(values: np.ndarray):
    """``values`` as each kind of buffer a caller may pass, with a function that overwrites it in place."""
    import array

    whole = np.zeros(2 * values.size, values.dtype)
    whole[::2] = values
    kinds = {"numpy": values.copy(), "numpy slice": whole[::2], "memoryview": memoryview(values.copy())}
    if values.dtype == np.int64:
        kinds["array.array"] = array.array("q", values.tolist())

    def overwrite(obj, v):
        if isinstance(obj, array.array):
            obj[:] = array.array("q", [v] * len(obj))
        else:
            np.asarray(obj)[...] = v
    return kinds, overwrite


@pytest.mark.parametrize("entry", ["from_global", "from_local"])
def test_a_matrix_keeps_no_buffer_its_caller_can_change(comm, entry):
    """graphkern._validate.private at the distributed constructors: the caller overwrites its arrays (ids
    past every column) after the call, and the transpose is still that of the untouched input."""
    rng = np.random.default_rng(11)
    indptr, cols, values, rows = random_csr(rng, 20, 20, 70)
    want = oracle_transpose(indptr, cols, values, rows, 20)
    offsets = even_offsets(20, comm.size)
    lo, hi = offsets[comm.rank], offsets[comm.rank + 1]
    for which in ("indptr", "indices", "values"):
        arrays = {"indptr": indptr, "indices": cols, "values": values}
        if entry == "from_local":
            a, b = int(indptr[lo]), int(indptr[hi])
            arrays = {"indptr": indptr[lo:hi + 1] - a, "indices": cols[a:b], "values": values[a:b]}
        kinds, overwrite = _kinds(arrays[which])
        for kind, obj in kinds.items():
            given = dict(arrays, **{which: obj})
            if entry == "from_global":
                A = DistCSR.from_global(given["indptr"], given["indices"], given["values"], comm)
            else:
                A = DistCSR.from_local(given["indptr"], given["indices"], given["values"], comm, (20, 20))
            overwrite(obj, 10**9)
            assert same_on_root(comm, transpose(A).gather(), want), (which, kind)


def test_col_offsets_are_kept_privately(comm):
    """The column partition a rectangular matrix keeps (its transpose's row partition) is the matrix's own:
    a caller overwriting the offsets it passed changes neither the check of later calls nor the result."""
    rng = np.random.default_rng(12)
    indptr, cols, values, rows = random_csr(rng, 15, 26, 60)
    want = oracle_transpose(indptr, cols, values, rows, 26)
    kinds, overwrite = _kinds(np.asarray(even_offsets(26, comm.size), np.int64))
    for kind, offsets in kinds.items():
        A = DistCSR.from_global(indptr, cols, values, comm, shape=(15, 26), col_offsets=offsets)
        overwrite(offsets, 10**9)
        assert same_on_root(comm, transpose(A).gather(), want), kind


MATRIX_ARRAYS = ("row_offsets", "col_offsets", "indptr", "indices", "values")


@pytest.mark.parametrize("kind", ["DistCSR", "XCSR", "transposed", "scattered", "canonical", "to_csr"])
def test_what_a_matrix_hands_out_is_read_only(comm, kind):
    """graphkern._validate.read_only at the distributed matrices: every array a DistCSR or XCSR hands out,
    from each way of making one, refuses writes and rebinding, and the matrix's results stay those of the
    untouched input (its own arrays, which the kernels read, are never frozen)."""
    rng = np.random.default_rng(21)
    indptr, cols, values, rows = random_csr(rng, 20, 20, 70)
    A = DistCSR.from_global(indptr, cols, values, comm)
    names = MATRIX_ARRAYS
    if kind in ("XCSR", "to_csr"):
        X = XCSR.from_csr(A)
        A, names = (X, (*MATRIX_ARRAYS, "cell_counts")) if kind == "XCSR" else (X.to_csr(), MATRIX_ARRAYS)
    elif kind == "transposed":
        A = transpose(transpose(A))
    elif kind == "scattered":
        whole = (indptr, cols, values) if comm.rank == 0 else (None, None, None)
        A = DistCSR.scatter(*whole, comm)
    elif kind == "canonical":
        A = A.canonical()
    assert all_ranks(comm, write_into_each(A, names) == [])
    T = transpose(A)
    got = (T.to_csr() if kind == "XCSR" else T).gather()
    assert same_on_root(comm, got, oracle_transpose(indptr, cols, values, rows, 20)), kind


def test_a_directly_built_matrix_keeps_copies(comm):
    """``DistCSR(comm, shape, ...)`` and ``XCSR(...)`` built from a caller's arrays keep copies: the caller
    overwriting every array after the call leaves the transpose that of the untouched input."""
    rng = np.random.default_rng(22)
    indptr, cols, values, rows = random_csr(rng, 20, 20, 70)
    want = oracle_transpose(indptr, cols, values, rows, 20)
    A = DistCSR.from_global(indptr, cols, values, comm)
    given = {name: np.array(getattr(A, name)) for name in MATRIX_ARRAYS}
    B = DistCSR(comm, A.shape, **given)
    X = XCSR.from_csr(A)
    given_x = {name: np.array(getattr(X, name)) for name in (*MATRIX_ARRAYS, "cell_counts")}
    Y = XCSR(comm, X.shape, **given_x)
    for arr in (*given.values(), *given_x.values()):
        arr[...] = 10**9
    assert same_on_root(comm, transpose(B).gather(), want)
    assert same_on_root(comm, transpose(Y).to_csr().gather(), want)


def test_structured_values_and_no_values(comm):
    rng = np.random.default_rng(3)
    indptr, cols, values, rows = random_csr(rng, 20, 20, 70)
    record = np.dtype([("weight", np.float32), ("tag", np.int16), ("time", np.int64)])
    vals = np.zeros(cols.size, dtype=record)
    vals["weight"], vals["tag"], vals["time"] = values, np.arange(cols.size) % 7, np.arange(cols.size) * 10**12
    T = transpose(DistCSR.from_global(indptr, cols, vals, comm))
    assert same_on_root(comm, T.gather(), oracle_transpose(indptr, cols, vals, rows, 20))
    T = transpose(DistCSR.from_global(indptr, cols, None, comm))
    want = oracle_transpose(indptr, cols, values, rows, 20)
    got = T.gather()
    assert all_ranks(comm, comm.rank != 0 or (np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
                                              and got[2] is None))


@pytest.mark.fast
def test_xcsr_transpose_matches_csr_and_is_an_involution(comm):
    rng = np.random.default_rng(11)
    indptr, cols, values, rows = random_csr(rng, 24, 24, 120)
    A = DistCSR.from_global(indptr, cols, values, comm, row_counts=random_partition(rng, 24, comm.size))
    X = XCSR.from_csr(A)
    assert all_ranks(comm, int(X.cell_counts.sum()) == A.nnz_local)
    comm.reset()
    XT = transpose(X)  # four data collectives, plus the validation's allgather
    assert all_ranks(comm, comm.collectives == 5 and comm.stats["Alltoallv"][0] == 2
                     and comm.stats["allgather"][0] == 1)
    comm.reset()
    XT5 = transpose(X, paper_collectives=True)
    assert all_ranks(comm, comm.collectives == 6 and comm.stats["Alltoall"][0] == 2)
    assert all_ranks(comm, np.array_equal(XT.values, XT5.values) and np.array_equal(XT.cell_counts, XT5.cell_counts))
    # the value stream of the XCSR transpose equals that of the CSR transpose (cells keep runs in order)
    T = transpose(A)
    assert all_ranks(comm, np.array_equal(XT.to_csr().values, T.values) and np.array_equal(XT.to_csr().indices,
                                                                                          T.indices))
    XTT = transpose(XT)
    assert all_ranks(comm, np.array_equal(XTT.indptr, X.indptr) and np.array_equal(XTT.indices, X.indices)
                     and np.array_equal(XTT.cell_counts, X.cell_counts) and np.array_equal(XTT.values, X.values))


@pytest.mark.fast
def test_gather_to_root_baseline_agrees(comm):
    rng = np.random.default_rng(5)
    indptr, cols, values, rows = random_csr(rng, 35, 35, 140)
    A = DistCSR.from_global(indptr, cols, values, comm, row_counts=random_partition(rng, 35, comm.size))
    T, B = transpose(A), gather_to_root_transpose(A)
    assert all_ranks(comm, np.array_equal(T.indptr, B.indptr) and np.array_equal(T.indices, B.indices)
                     and np.array_equal(T.values, B.values))


@pytest.mark.fast
def test_scatter_from_root_equals_from_global(comm):
    rng = np.random.default_rng(9)
    indptr, cols, values, _ = random_csr(rng, 21, 21, 60)
    counts = random_partition(rng, 21, comm.size)
    A = DistCSR.from_global(indptr, cols, values, comm, row_counts=counts)
    root = comm.size - 1
    B = DistCSR.scatter(indptr if comm.rank == root else None, cols if comm.rank == root else None,
                        values if comm.rank == root else None, comm, root=root, row_counts=counts)
    assert all_ranks(comm, np.array_equal(A.indptr, B.indptr) and np.array_equal(A.indices, B.indices)
                     and np.array_equal(A.values, B.values))


def test_int64_ids_past_2_31_on_a_synthetic_partition():
    """Owner lookup, the local sort and the records keep ids near and past 2^31 and 2^32 exact."""
    offsets = np.array([0, 2**31 - 1, 2**31 + 1, 2**33], dtype=np.int64)
    ids = np.array([2**33 - 1, 2**31 - 2, 2**31, 2**31 + 1, 5, 2**32, 2**31 - 1], dtype=np.int64)
    owner = np.searchsorted(offsets, ids, "right") - 1
    assert owner.tolist() == [2, 0, 1, 2, 0, 2, 1]
    order = stable_order(ids, int(ids.min()), int(ids.max()) + 1)  # a span of 2^33: the comparison sort
    assert np.array_equal(ids[order], np.sort(ids))

    class Rows:  # a stand-in for a DistCSR block whose rows start past 2^32 (the kernels read _indices)
        _indices = ids
        _indptr = np.array([0, 3, 7], dtype=np.int64)
        first_row = 2**32 + 3

        def local_rows(self):
            return np.repeat(np.array([self.first_row, self.first_row + 1], dtype=np.int64), np.diff(self._indptr))

    order, new_rows, new_cols, send_counts = _local_transpose(Rows(), offsets)
    assert new_rows.dtype == np.int64 and new_cols.dtype == np.int64
    assert new_rows.tolist() == sorted(ids.tolist())
    assert send_counts.tolist() == [2, 2, 3]
    assert set(new_cols.tolist()) == {2**32 + 3, 2**32 + 4}


def test_disagreeing_ranks_raise_everywhere(comm):
    n = 10 + (comm.rank if comm.size > 1 else 0)  # rank r claims another shape
    indptr = np.zeros(1, dtype=np.int64)
    with pytest.raises(DistributedError, match="argument 'shape': expected the same on every rank" if comm.size > 1
                       else "add up"):
        DistCSR.from_local(indptr, np.zeros(0, np.int64), None, comm, (n, n))
    values = np.zeros(0, dtype=np.float32 if comm.rank == 0 else np.float64)
    if comm.size > 1:
        with pytest.raises(DistributedError, match="dtype of 'values'"):
            DistCSR.from_local(indptr, np.zeros(0, np.int64), values, comm, (0, 0))


@pytest.mark.fast
def test_out_of_range_ids_on_one_rank_raise_everywhere(comm):
    offsets = even_offsets(8, comm.size)
    rows = int(offsets[comm.rank + 1] - offsets[comm.rank])
    indptr = np.arange(rows + 1, dtype=np.int64)
    indices = np.zeros(rows, dtype=np.int64)
    if comm.rank == comm.size - 1 and rows:
        indices[-1] = 8  # one bad id on the last rank
    with pytest.raises(DistributedError, match="expected column ids < 8"):
        DistCSR.from_local(indptr, indices, None, comm, (8, 8))
    assert all_ranks(comm, True)  # everyone got here: nobody hangs
    MPI.COMM_WORLD.Barrier()


@pytest.mark.parametrize("values", ["int64", "record", "none"])
def test_large_transpose_takes_the_bucketed_path(comm, values):
    """Past 2^20 received entries into 2^17+ rows the receiver sorts in two bucketed passes."""
    rng = np.random.default_rng(1)
    n, nnz = 1 << 17, 1 << 21
    indptr, cols, tags, rows = random_csr(rng, n, n, nnz)
    if values == "int64":
        vals = np.arange(nnz, dtype=np.int64)
    elif values == "record":
        vals = np.zeros(nnz, dtype=[("a", np.int64), ("b", np.float32)])
        vals["a"], vals["b"] = np.arange(nnz), tags
    else:
        vals = None
    A = DistCSR.from_global(indptr, cols, vals, comm)
    T = transpose(A)
    want = oracle_transpose(indptr, cols, np.arange(nnz) if vals is None else vals, rows, n)
    got = T.gather()
    ok = True
    if comm.rank == 0:
        ok = np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1]) and (
            got[2] is None if vals is None else np.array_equal(got[2], want[2]))
    assert all_ranks(comm, ok)


def test_local_block_runs_the_cpu_kernels(comm):
    """``A.local_graph()``: this rank's rows as a Graph block (local rows -> global columns)."""
    import graphkern as gk

    rng = np.random.default_rng(13)
    indptr, cols, values, rows = random_csr(rng, 30, 30, 100)
    A = DistCSR.from_global(indptr, cols, values, comm, row_counts=random_partition(rng, 30, comm.size))
    g = A.local_graph()
    ok = g.num_src == A.num_local_rows and g.num_dst == 30
    ok = ok and np.array_equal(g.out_degrees(), np.diff(A.indptr))
    # the column sums of this block by g-SpMM equal those of the SciPy block
    x = np.ones((A.num_local_rows, 1))
    got = gk.ops.copy_u_sum(g, x)[:, 0]
    ok = ok and np.array_equal(got, np.bincount(A.indices, minlength=30).astype(float))
    assert all_ranks(comm, ok)
