"""tests/mpi run under ``mpiexec -n N`` (tools/run_tests.py loops over N): every rank runs every test.

Assertions that follow communication are combined across ranks (:func:`all_ranks`), so one failing rank
fails the test on every rank instead of leaving the others waiting in a collective. Only rank 0 writes
the junit file the test runner counts.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

mpi4py = pytest.importorskip("mpi4py")
from mpi4py import MPI  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # graph_cases, reference


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    if MPI.COMM_WORLD.Get_rank() != 0:
        config.option.xmlpath = None  # one junit file per run, from rank 0


@pytest.fixture
def comm():
    """A fresh counting communicator per test, so that no stray message crosses tests."""
    from graphkern.distributed import CountingComm

    dup = MPI.COMM_WORLD.Dup()
    yield CountingComm(dup)
    dup.Free()


def all_ranks(comm, ok: bool) -> bool:
    """True on every rank when ``ok`` holds on every rank."""
    return bool(comm.allreduce(int(bool(ok)), op=MPI.MIN))


def random_partition(rng, n: int, parts: int) -> np.ndarray:
    """Row counts for ``parts`` ranks adding up to ``n``, uneven, with empty ranks (rank 0 among them)."""
    cuts = np.sort(rng.integers(0, n + 1, parts - 1)) if parts > 1 else np.zeros(0, dtype=np.int64)
    counts = np.diff(np.r_[0, cuts, n])
    if parts > 2:
        counts[0], counts[1] = 0, counts[0] + counts[1]  # rank 0 empty: the reference code's bug case
    return counts.astype(np.int64)


def write_into_each(obj, names) -> list[str]:
    """Try to write into (and to rebind) each array ``obj`` hands out; the names of those that took it."""
    took = []
    for name in names:
        arr = getattr(obj, name)
        try:
            arr[...] = arr[::-1].copy()  # reversed offsets or ids: the next kernel would index past its arrays
            took.append(name)
        except ValueError as exc:
            assert "read-only" in str(exc), (name, exc)
        try:
            setattr(obj, name, np.zeros(1, np.int64))
            took.append(f"{name} (rebound)")
        except AttributeError:
            pass
    return took
