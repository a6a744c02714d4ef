"""Collective validation: bad input on one rank (or several) raises the same DistributedError on every rank.

Each case corrupts one argument of one public entry point on the "bad" ranks only. Every rank must raise
:class:`DistributedError` with the same message, naming the same failing ranks, after exactly one
collective (the validation's allgather, before any data moves); then a valid call of the same entry
point must still work on the same communicator. A rank that escaped the validation would leave the
others waiting in a collective: run these under a timeout (``timeout 300 mpiexec -n 3 ...``).

Placements: "one" is the last rank alone, next to good ranks (skipped on one rank, where there is no
good rank); "several" is ranks 0 and the last for a local problem (on one rank, rank 0 alone), and the
odd ranks for a disagreement (skipped below four ranks, where they are not several or not a minority).
"""

import re

import numpy as np
import pytest
import validation_cases
import validation_cases_2d
from conftest import all_ranks
from validation_cases import N, built, corrupt, matrix, other_partition, valid_matrix, valid_transpose

from graphkern.distributed import DistCSR, DistributedError, bfs_1d, transpose
from graphkern.distributed._agree import SHOWN, key
from graphkern.distributed.csr import even_offsets
from graphkern.errors import GraphkernError

CASES = validation_cases.CASES + validation_cases_2d.CASES
VALID = {**validation_cases.VALID, **validation_cases_2d.VALID}

# ----------------------------------------------------------------------------- the tests


def bad_ranks(kind: str, placement: str, size: int) -> set[int]:
    if placement == "one":
        if size == 1:
            pytest.skip("one bad rank next to good ones needs two ranks")
        return {size - 1}
    if kind == "same":
        if size < 4:
            pytest.skip("several disagreeing ranks in a minority need four ranks")
        return set(range(1, size, 2))
    return {0, size - 1}


def expected_ranks(kind: str, bad: set[int], size: int) -> tuple[int, ...]:
    if kind == "all":  # a condition only the ranks together can check: every rank is named
        return tuple(range(size))
    if kind == "root":  # only the root's data is read
        return tuple(sorted(bad & {size - 1}))
    return tuple(sorted(bad))


@pytest.mark.parametrize("placement", ["one", "several"])
@pytest.mark.parametrize("case", CASES, ids=[f"{c.entry}: {c.name}" for c in CASES])
def test_bad_input_raises_the_same_error_on_every_rank(comm, case, placement):
    bad = bad_ranks(case.kind, placement, comm.size)
    call = case.build(comm, comm.rank in bad)  # may build objects collectively: not counted
    comm.reset()
    try:
        call()
        exc = None
    except Exception as err:  # anything but a DistributedError is a failure, reported below
        exc = err
    stats = comm.snapshot()
    found = []
    if not isinstance(exc, DistributedError):
        found.append(f"raised {exc!r}, expected a DistributedError")
    else:
        want = expected_ranks(case.kind, bad, comm.size)
        if exc.ranks != want:
            found.append(f"named ranks {exc.ranks}, expected {want}: {exc}")
        if not re.search(case.match, str(exc)):
            found.append(f"message {str(exc)!r} does not match {case.match!r}")
        if exc.first_message not in str(exc) or sorted(exc.problems) != list(exc.ranks):
            found.append(f"attributes: first_message {exc.first_message!r}, problems {exc.problems}")
        if not isinstance(exc, (GraphkernError, ValueError)):
            found.append("not a GraphkernError and ValueError")
    # raised after the validation's one allgather, before any data collective
    if stats != {"allgather": [1, 0]}:
        found.append(f"collectives before the error: {stats}")
    if len(set(comm.allgather(str(exc)))) != 1:
        found.append("the ranks' messages differ")
    everywhere = comm.allgather(found)
    assert not any(everywhere), {r: f for r, f in enumerate(everywhere) if f}
    # the communicator is not left broken: a valid call of the same entry point works
    assert all_ranks(comm, VALID[case.entry](comm))


def test_every_entry_point_has_bad_input_cases_of_every_kind():
    entries = {c.entry for c in CASES}
    assert entries == set(VALID)
    kinds = {c.kind for c in CASES}
    assert kinds == {"local", "same", "all", "root"}
    names = " ".join(c.name for c in CASES)
    for kind in ("wrong length", "negative", "float dtype", "differ", "out of range"):
        assert kind in names


def test_message_names_the_failing_ranks_and_the_first_ones_message(comm):
    indptr, cols, values, _ = matrix()
    bad = {0, comm.size - 1}
    counts = np.diff(even_offsets(N, comm.size))
    with pytest.raises(DistributedError) as info:
        DistCSR.from_global(indptr, cols, values, comm, row_counts=counts[:-1] if comm.rank in bad else counts)
    exc = info.value
    first = f"argument 'row_counts': expected {comm.size} counts (one per rank), found {comm.size - 1}"
    head = "rank 0" if comm.size == 1 else f"ranks 0, {comm.size - 1} failed; rank 0"
    assert str(exc) == f"DistCSR.from_global: {head}: {first}"
    assert exc.ranks == tuple(sorted(bad)) and exc.first_message == first
    assert exc.problems == {r: first for r in sorted(bad)}


def test_the_three_reported_hostile_inputs(comm):
    """Bad row_counts or col_offsets on the last rank only, and a transpose whose ranks disagree on
    col_offsets: a hang, a rank returning alone, and an MPI abort before; one error everywhere now."""
    indptr, cols, values, _ = matrix()
    last = comm.rank == comm.size - 1
    counts = np.diff(even_offsets(N, comm.size))
    with pytest.raises(DistributedError, match=f"rank {comm.size - 1}: argument 'row_counts'"):
        DistCSR.from_global(indptr, cols, values, comm, row_counts=np.r_[counts, 1] if last else counts)
    offsets = even_offsets(N, comm.size)
    with pytest.raises(DistributedError, match=f"rank {comm.size - 1}: argument 'col_offsets'"):
        DistCSR.from_global(indptr, cols, values, comm, col_offsets=np.r_[offsets[:-1], N + 1] if last else offsets)
    A = built(comm)
    if comm.size > 1:  # one rank cannot disagree with itself
        bad = corrupt(A, col_offsets=other_partition(comm.size)) if last else A
        with pytest.raises(DistributedError, match="A.col_offsets: expected the same on every rank"):
            transpose(bad)
    assert all_ranks(comm, valid_transpose(comm))


@pytest.mark.fast
def test_a_valid_call_costs_one_small_allgather(comm):
    indptr, cols, values, _ = matrix()
    comm.reset()
    A = DistCSR.from_global(indptr, cols, values, comm)
    assert comm.snapshot() == {"allgather": [1, 0]}  # from_global moves no data
    comm.reset()
    A.gather()
    stats = comm.snapshot()
    assert stats["allgather"] == [1, 0] and set(stats) == {"allgather", "Gatherv"}  # the counts ride along
    comm.reset()
    bfs_1d(A, 0)
    assert comm.snapshot()["allgather"] == [1, 0]


def test_long_arrays_travel_as_a_digest():
    short = np.arange(SHOWN)
    long = np.arange(SHOWN + 1)
    assert key(short) == short.tolist()
    assert isinstance(key(long), str) and len(key(long)) < 80
    assert key(long) == key(long.copy()) and key(long) != key(long[::-1].copy())
    assert key(np.dtype(np.float32)) != key(np.dtype(np.float64))


def test_a_directly_built_object_is_scanned_at_its_first_call(comm):
    """Only graphkern's constructors mark an object checked: one built directly from arrays (a new object
    with copies of them) is scanned at its first collective call, a bad id on one rank caught on all."""
    A = built(comm)
    bfs_1d(A, 0)
    indices = A.indices.copy()
    if comm.rank == comm.size - 1:
        indices[:1] = N  # every rank holds two or more rows of the even partition
    B = corrupt(A, indices=indices)
    with pytest.raises(DistributedError, match="A.indices"):
        bfs_1d(B, 0)


def test_scatter_col_offsets_must_end_at_the_roots_columns(comm):
    """Only the root knows the column count: the other ranks' col_offsets are checked against it after the
    allgather, the same check on every rank, so every rank is named."""
    indptr, cols, values, _ = matrix()
    root = comm.size - 1
    whole = (indptr, cols, values) if comm.rank == root else (None, None, None)
    with pytest.raises(DistributedError, match="'col_offsets': expected offsets from 0 to 12") as info:
        DistCSR.scatter(*whole, comm, root=root, col_offsets=np.r_[even_offsets(N, comm.size)[:-1], N + 1])
    assert info.value.ranks == tuple(range(comm.size))
    assert all_ranks(comm, valid_matrix(comm, DistCSR.scatter(*whole, comm, root=root)))
