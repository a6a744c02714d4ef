"""``graphkern graph500 --distributed`` under mpiexec, and MPI-4 large counts through the record layer."""

import os

import numpy as np
import pytest
from conftest import all_ranks
from mpi4py import MPI

from graphkern import cli


def test_graph500_distributed_cli(comm, capsys):
    code = cli.main(["graph500", "--scale", "10", "--roots", "4", "--distributed", "--no-progress"])
    out = capsys.readouterr().out
    ok = code == 0
    if comm.rank == 0:
        ok = ok and "validation: passed" in out and f"num_mpi_processes: {comm.size}" in out
        ok = ok and "bfs_harmonic_mean_TEPS" in out and "NBFS: 4" in out
    else:
        ok = ok and out == ""  # only rank 0 prints
    assert all_ranks(comm, ok)


def test_graph500_distributed_bad_grid(comm, capsys):
    from graphkern.distributed import DistributedError

    with pytest.raises(DistributedError, match="pr \\* pc"):
        cli.main(["graph500", "--scale", "8", "--roots", "2", "--distributed", "--no-progress",
                  "--grid", f"{comm.size + 1}x1"])
    assert all_ranks(comm, True)


@pytest.mark.skipif(os.environ.get("GRAPHKERN_MPI_LARGE") != "1",
                    reason="opt-in (GRAPHKERN_MPI_LARGE=1): moves 2^31 + 16 bytes, about 5 GB of memory")
def test_counts_past_2_31(comm):
    """One Alltoallv whose count from rank 0 to rank 1 is 2^31 + 16 one-byte records."""
    from graphkern.distributed._comm import alltoallv_records

    if comm.size < 2:
        pytest.skip("needs two ranks")
    big = (1 << 31) + 16
    send_counts = np.zeros(comm.size, dtype=np.int64)
    if comm.rank == 0:
        send_counts[1] = big
    send = np.empty(int(send_counts.sum()), dtype=np.uint8)
    if send.size:
        send[:] = 7
        send[-1] = 9
    recv_counts = np.zeros(comm.size, dtype=np.int64)
    if comm.rank == 1:
        recv_counts[0] = big
    got = alltoallv_records(comm, send, send_counts, recv_counts)
    ok = comm.rank != 1 or (got.size == big and got[0] == 7 and got[-1] == 9)
    del send, got
    assert all_ranks(comm, ok)
    MPI.COMM_WORLD.Barrier()
