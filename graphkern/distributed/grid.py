"""A Pr x Pc processor grid and the 2-D block distribution of a square matrix on it.

Rank ``i * pc + j`` is processor ``P(i, j)``. The vertices split into ``pr`` contiguous row blocks
``D_i`` and ``pc`` contiguous column blocks ``S_j``; ``P(i, j)`` holds the edges ``u -> v`` with
``v`` in ``D_i`` and ``u`` in ``S_j`` (the block ``A^T[D_i, S_j]``, CombBLAS's layout), stored as a CSR
over its sources ``u`` (local index ``u - S_j.start``) with global destination ids. Vectors over the
vertices (BFS parents) split each ``D_i`` into ``pc`` contiguous pieces, one per processor of row ``i``,
so rank order is vertex order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._comm import DistributedError, alltoall_counts, alltoallv_records, as_counting, require_same
from .csr import even_offsets
from .transpose import stable_order

__all__ = ["Grid2D", "Block2D"]


class Grid2D:
    """A ``pr x pc`` grid over a communicator of ``pr * pc`` ranks, with row and column communicators.

    Examples
    --------
    >>> from mpi4py import MPI
    >>> from graphkern.distributed import Grid2D
    >>> grid = Grid2D(MPI.COMM_SELF, 1, 1)
    >>> grid.shape, grid.coords
    ((1, 1), (0, 0))
    """

    def __init__(self, comm, pr: int, pc: int):
        comm = as_counting(comm)
        pr, pc = int(pr), int(pc)
        if pr < 1 or pc < 1 or pr * pc != comm.size:
            # every rank computes the same test from the same arguments and raises; no rank waits
            raise DistributedError(f"argument 'grid': expected pr * pc == {comm.size} ranks, found {pr} x {pc}")
        require_same(comm, "the grid shape", (pr, pc))
        self.comm, self.pr, self.pc = comm, pr, pc
        self.row, self.col = divmod(comm.rank, pc)
        self.row_comm = comm.Split(self.row, self.col)  # the processors P(row, *)
        self.col_comm = comm.Split(self.col, self.row)  # the processors P(*, col)

    @property
    def shape(self) -> tuple[int, int]:
        return self.pr, self.pc

    @property
    def coords(self) -> tuple[int, int]:
        return self.row, self.col

    def rank_of(self, i: int, j: int) -> int:
        return i * self.pc + j

    @staticmethod
    def factor(size: int) -> tuple[int, int]:
        """The most square ``pr x pc`` with ``pr <= pc`` for ``size`` ranks (4 -> 2x2, 6 -> 2x3)."""
        pr = int(np.sqrt(size))
        while size % pr:
            pr -= 1
        return pr, size // pr

    def stats(self) -> dict[str, list[int]]:
        """The collectives of the grid's three communicators, added up."""
        total: dict[str, list[int]] = {}
        for c in (self.comm, self.row_comm, self.col_comm):
            for name, (calls, nbytes) in c.stats.items():
                entry = total.setdefault(name, [0, 0])
                entry[0] += calls
                entry[1] += nbytes
        return total

    def reset_stats(self):
        for c in (self.comm, self.row_comm, self.col_comm):
            c.reset()


@dataclass
class Block2D:
    """This processor's block ``A^T[D_i, S_j]`` of an ``n x n`` matrix on a :class:`Grid2D`."""

    grid: Grid2D
    n: int
    row_bounds: np.ndarray   # pr + 1 offsets of the destination blocks D_i
    col_bounds: np.ndarray   # pc + 1 offsets of the source blocks S_j
    indptr: np.ndarray       # over the local sources u - col_bounds[j]
    indices: np.ndarray      # global destination ids, in D_i
    values: np.ndarray | None = None

    @classmethod
    def from_edges(cls, grid: Grid2D, src, dst, n: int, values=None, *, row_bounds=None, col_bounds=None):
        """Collective: every rank passes the same global edge list (or any part of it, as long as each edge
        is passed by exactly one rank) and keeps the edges of its block; edges travel by one Alltoallv."""
        comm = grid.comm
        src = np.ascontiguousarray(src, dtype=np.int64)
        dst = np.ascontiguousarray(dst, dtype=np.int64)
        require_same(comm, "the number of vertices", int(n))
        problem = None
        if src.shape != dst.shape:
            problem = f"arguments 'src' and 'dst': expected equal lengths, found {src.size} and {dst.size}"
        elif src.size and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
            problem = f"arguments 'src'/'dst': expected vertex ids in [0, {n}), found " \
                      f"[{min(src.min(), dst.min())}, {max(src.max(), dst.max())}]"
        from ._comm import raise_everywhere

        raise_everywhere(comm, problem)
        rb = even_offsets(n, grid.pr) if row_bounds is None else np.asarray(row_bounds, dtype=np.int64)
        cb = even_offsets(n, grid.pc) if col_bounds is None else np.asarray(col_bounds, dtype=np.int64)
        return cls._exchange(grid, n, rb, cb, src, dst, values)

    @classmethod
    def _exchange(cls, grid, n, rb, cb, src, dst, values):
        """Send each edge u -> v to P(block of v, block of u) and build the local CSR by source."""
        comm = grid.comm
        owner = (np.searchsorted(rb, dst, "right") - 1) * grid.pc + (np.searchsorted(cb, src, "right") - 1)
        order = stable_order(owner, 0, comm.size)
        fields = [("src", np.int64), ("dst", np.int64)]
        if values is not None:
            values = np.asarray(values)
            fields.append(("value", np.dtype((np.void, values.dtype.itemsize))))
        rec = np.empty(src.size, dtype=np.dtype(fields))
        rec["src"], rec["dst"] = src[order], dst[order]
        if values is not None:
            rec["value"] = values[order].view(rec.dtype["value"])
        send_counts = np.bincount(owner, minlength=comm.size).astype(np.int64)
        got = alltoallv_records(comm, rec, send_counts, alltoall_counts(comm, send_counts))
        j = grid.col
        local_src = got["src"] - cb[j]
        n_local = int(cb[j + 1] - cb[j])
        # stable by source, so each source's destinations keep their arrival order (rank order, then input)
        if local_src.size:
            from ..kernels.cpu import sort as _sort

            indptr, perm = _sort.count_sort(local_src, n_local, np.int64)
        else:
            indptr, perm = np.zeros(n_local + 1, dtype=np.int64), np.zeros(0, dtype=np.int64)
        vals = None
        if values is not None:
            vals = np.ascontiguousarray(got["value"][perm]).view(values.dtype)
        return cls(grid, int(n), rb, cb, indptr.astype(np.int64), np.ascontiguousarray(got["dst"][perm]), vals)

    def edges(self):
        """This block's edges as global ``(src, dst)``."""
        j = self.grid.col
        src = np.repeat(np.arange(self.col_bounds[j], self.col_bounds[j + 1], dtype=np.int64), np.diff(self.indptr))
        return src, self.indices

    def transpose(self) -> "Block2D":
        """Collective: the transposed matrix on the same grid and blocks.

        On a square grid with equal row and column blocks, block ``(i, j)`` of the transpose is the
        transpose of block ``(j, i)``: one Sendrecv with the partner ``P(j, i)`` (diagonal blocks stay).
        Otherwise the blocks do not line up and the edges are redistributed by one Alltoallv.
        """
        grid = self.grid
        src, dst = self.edges()
        square = grid.pr == grid.pc and np.array_equal(self.row_bounds, self.col_bounds)
        if not square:
            return Block2D._exchange(grid, self.n, self.row_bounds, self.col_bounds, dst, src, self.values)
        partner = grid.rank_of(grid.col, grid.row)
        fields = [("src", np.int64), ("dst", np.int64)]
        if self.values is not None:
            fields.append(("value", np.dtype((np.void, self.values.dtype.itemsize))))
        rec = np.empty(src.size, dtype=np.dtype(fields))
        rec["src"], rec["dst"] = dst, src  # the transposed edges
        if self.values is not None:
            rec["value"] = self.values.view(rec.dtype["value"])
        if partner != grid.comm.rank:
            count = np.array([rec.size], dtype=np.int64)
            other = np.empty(1, dtype=np.int64)
            grid.comm.Sendrecv(count, dest=partner, recvbuf=other, source=partner)
            got = np.empty(int(other[0]), dtype=rec.dtype)
            from ._comm import record_type

            rtype = record_type(rec.dtype.itemsize)
            grid.comm.Sendrecv([rec.view(np.uint8) if rec.size else np.empty(0, np.uint8), rec.size, rtype],
                               dest=partner, recvbuf=[got.view(np.uint8) if got.size else np.empty(0, np.uint8),
                                                      got.size, rtype], source=partner, sendtag=1)
            rtype.Free()
        else:
            got = rec
        j = grid.col
        local_src = got["src"] - self.col_bounds[j]
        n_local = int(self.col_bounds[j + 1] - self.col_bounds[j])
        # sort by (source, destination): the transpose of a canonical block is canonical
        keys = local_src * np.int64(max(self.n, 1)) + got["dst"]
        perm = np.argsort(keys, kind="stable")
        indptr = np.zeros(n_local + 1, dtype=np.int64)
        np.cumsum(np.bincount(local_src, minlength=n_local), out=indptr[1:])
        vals = None
        if self.values is not None:
            vals = np.ascontiguousarray(got["value"][perm]).view(self.values.dtype)
        return Block2D(grid, self.n, self.row_bounds, self.col_bounds, indptr, np.ascontiguousarray(got["dst"][perm]),
                       vals)

    def vector_bounds(self) -> np.ndarray:
        """``P + 1`` offsets: rank ``i * pc + k`` owns the vertices of piece ``k`` of ``D_i``."""
        pieces = [self.row_bounds[i] + even_offsets(self.row_bounds[i + 1] - self.row_bounds[i], self.grid.pc)[:-1]
                  for i in range(self.grid.pr)]
        return np.r_[np.concatenate(pieces), self.n].astype(np.int64)
