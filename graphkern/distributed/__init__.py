"""Distributed kernels on MPI (mpi4py): the sparse and multigraph transpose, 1-D and 2-D BFS.

``from graphkern import distributed as gkd`` needs mpi4py (``pip install "graphkern[mpi]"`` brings it
with the ``mpich`` wheel and its ``mpiexec``). Every function here is collective: all ranks of the
communicator call it. Wrong or disagreeing input is detected collectively and raised on every rank as
:class:`DistributedError`, never on one rank while the others wait: each entry point checks its
arguments on every rank, then one allgather of a small tuple per rank decides, before any data moves.

- :class:`DistCSR` (row blocks, int64 global ids, values of any fixed-size dtype) and :class:`XCSR`
  (multigraph cells); :func:`transpose` (Allgather, Alltoall, Alltoallv; XCSR four collectives);
  :func:`gather_to_root_transpose`, the naive baseline.
- :class:`Grid2D` and :class:`Block2D` (2-D block distribution, ``Block2D.transpose`` swaps P(i,j) and
  P(j,i)); :func:`bfs_1d`, :func:`bfs_2d`.
- :class:`CountingComm`: counts each collective and the bytes this rank sends.
"""

from ._comm import CountingComm, DistributedError
from .bfs import DistBFSResult, bfs_1d, bfs_2d
from .csr import XCSR, DistCSR, even_offsets
from .grid import Block2D, Grid2D
from .transpose import gather_to_root_transpose, transpose

__all__ = ["CountingComm", "DistributedError", "DistCSR", "XCSR", "transpose", "gather_to_root_transpose",
           "Grid2D", "Block2D", "bfs_1d", "bfs_2d", "DistBFSResult", "even_offsets"]
