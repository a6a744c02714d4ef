"""The communicator layer: a counting wrapper and record datatypes (collective checks: ``_agree``).

Every collective graphkern.distributed issues goes through the methods below, so wrapping a
communicator in :class:`CountingComm` counts each call and the bytes this rank sends, which is what
carries from these 2-core machines to a cluster (the alpha-beta model of the README).
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np

from ..errors import DistributedError  # noqa: F401  (graphkern.distributed re-exports it from here)


def require_host_backend(what: str) -> None:
    """Refuse the cuda backend by name: the distributed layer moves host arrays over MPI and has no GPU
    path, and under ``GRAPHKERN_BACKEND=cuda`` running it on the CPU anyway would be a silent fallback."""
    from .._config import get_backend
    from ..errors import BackendUnavailableError

    if get_backend() == "cuda":
        raise BackendUnavailableError(
            f"{what}: the distributed layer runs on the CPU (host arrays over MPI) and has no cuda path, but the "
            f"backend is 'cuda'; use gk.use_backend('cpu') around it or set GRAPHKERN_BACKEND=cpu (or auto)")


def _nbytes(buf) -> int:
    """Bytes described by an mpi4py buffer spec (array, [array, type], [array, (counts, displs), type])."""
    if buf is None:
        return 0
    if isinstance(buf, np.ndarray):
        return buf.nbytes
    if isinstance(buf, (list, tuple)) and buf:
        data = buf[0]
        if len(buf) >= 2 and isinstance(buf[1], (list, tuple)) and len(buf[1]) == 2:
            counts = np.asarray(buf[1][0])
            extent = buf[2].Get_extent()[1] if len(buf) > 2 else np.asarray(data).itemsize
            return int(counts.sum()) * int(extent)
        return np.asarray(data).nbytes
    return 0


class CountingComm:
    """An mpi4py communicator that counts its collectives and the bytes this rank sends.

    ``stats`` maps a collective's name to ``[calls, bytes sent]``; :meth:`reset` clears it,
    :meth:`snapshot` copies it. Any attribute it does not wrap is the communicator's own.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> from graphkern.distributed import CountingComm
    >>> comm = CountingComm(MPI.COMM_SELF)
    >>> import numpy as np
    >>> out = np.zeros(1, dtype=np.int64)
    >>> comm.Allgather(np.ones(1, dtype=np.int64), out)
    >>> comm.stats["Allgather"]
    [1, 8]
    """

    def __init__(self, comm):
        self.comm = comm.comm if isinstance(comm, CountingComm) else comm
        self.stats: dict[str, list[int]] = defaultdict(lambda: [0, 0])

    def __getattr__(self, name):
        return getattr(self.comm, name)

    @property
    def rank(self) -> int:
        return self.comm.Get_rank()

    @property
    def size(self) -> int:
        return self.comm.Get_size()

    def _count(self, name: str, nbytes: int):
        entry = self.stats[name]
        entry[0] += 1
        entry[1] += int(nbytes)

    def reset(self):
        self.stats.clear()

    def snapshot(self) -> dict[str, list[int]]:
        return {k: list(v) for k, v in self.stats.items()}

    @property
    def collectives(self) -> int:
        return sum(v[0] for v in self.stats.values())

    @property
    def bytes_sent(self) -> int:
        return sum(v[1] for v in self.stats.values())

    # --- the collectives graphkern uses -------------------------------------------------------------
    def Allgather(self, send, recv):
        self._count("Allgather", _nbytes(send) * self.size)
        return self.comm.Allgather(send, recv)

    def Allgatherv(self, send, recv):
        self._count("Allgatherv", _nbytes(send) * self.size)
        return self.comm.Allgatherv(send, recv)

    def Alltoall(self, send, recv):
        self._count("Alltoall", _nbytes(send))
        return self.comm.Alltoall(send, recv)

    def Alltoallv(self, send, recv):
        self._count("Alltoallv", _nbytes(send))
        return self.comm.Alltoallv(send, recv)

    def Allreduce(self, send, recv, op=None):
        self._count("Allreduce", _nbytes(send))
        from mpi4py import MPI

        return self.comm.Allreduce(send, recv, op=MPI.SUM if op is None else op)

    def Gatherv(self, send, recv, root=0):
        self._count("Gatherv", _nbytes(send))
        return self.comm.Gatherv(send, recv, root=root)

    def Scatterv(self, send, recv, root=0):
        self._count("Scatterv", _nbytes(send) if self.rank == root else 0)
        return self.comm.Scatterv(send, recv, root=root)

    def Bcast(self, buf, root=0):
        self._count("Bcast", _nbytes(buf) if self.rank == root else 0)
        return self.comm.Bcast(buf, root=root)

    def Sendrecv(self, sendbuf, dest, recvbuf=None, source=None, sendtag=0, recvtag=None):
        self._count("Sendrecv", _nbytes(sendbuf))
        return self.comm.Sendrecv(sendbuf, dest=dest, sendtag=sendtag, recvbuf=recvbuf, source=source,
                                  recvtag=sendtag if recvtag is None else recvtag)

    def allgather(self, obj):
        self._count("allgather", 0)
        return self.comm.allgather(obj)

    def allreduce(self, obj, op=None):
        from mpi4py import MPI

        self._count("allreduce", 0)
        return self.comm.allreduce(obj, op=MPI.SUM if op is None else op)

    def bcast(self, obj, root=0):
        self._count("bcast", 0)
        return self.comm.bcast(obj, root=root)

    def Split(self, color, key):
        return CountingComm(self.comm.Split(color, key))


def as_counting(comm) -> CountingComm:
    return comm if isinstance(comm, CountingComm) else CountingComm(comm)


def record_type(itemsize: int):
    """A committed MPI datatype of ``itemsize`` contiguous bytes: one record per count, so counts stay in
    records (2^31 records, not 2^31 bytes) and any fixed-size NumPy dtype, structured ones too, travels."""
    from mpi4py import MPI

    dtype = MPI.BYTE.Create_contiguous(int(itemsize))
    dtype.Commit()
    return dtype


def exclusive_scan(counts: np.ndarray) -> np.ndarray:
    out = np.zeros(counts.size, dtype=np.int64)
    np.cumsum(counts[:-1], out=out[1:])
    return out


def alltoallv_records(comm, send: np.ndarray, send_counts: np.ndarray, recv_counts: np.ndarray,
                      out: np.ndarray | None = None) -> np.ndarray:
    """One Alltoallv of a record array (any dtype), int64 counts and displacements in records."""
    recv = np.empty(int(recv_counts.sum()), dtype=send.dtype) if out is None else out
    itemsize = send.dtype.itemsize
    if itemsize == 0:
        return recv
    dtype = record_type(itemsize)
    try:
        comm.Alltoallv([send.view(np.uint8) if send.size else np.empty(0, np.uint8),
                        (send_counts.astype(np.int64), exclusive_scan(send_counts)), dtype],
                       [recv.view(np.uint8) if recv.size else np.empty(0, np.uint8),
                        (recv_counts.astype(np.int64), exclusive_scan(recv_counts)), dtype])
    finally:
        dtype.Free()
    return recv


def alltoall_counts(comm, send_counts: np.ndarray) -> np.ndarray:
    recv = np.empty(comm.Get_size(), dtype=np.int64)
    comm.Alltoall(np.ascontiguousarray(send_counts, dtype=np.int64), recv)
    return recv
