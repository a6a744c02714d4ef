"""A Pr x Pc processor grid and the 2-D block distribution of a square matrix on it.

Rank ``i * pc + j`` is processor ``P(i, j)``. The vertices split into ``pr`` contiguous row blocks
``D_i`` and ``pc`` contiguous column blocks ``S_j``; ``P(i, j)`` holds the edges ``u -> v`` with
``v`` in ``D_i`` and ``u`` in ``S_j`` (the block ``A^T[D_i, S_j]``, CombBLAS's layout), stored as a CSR
over its sources ``u`` (local index ``u - S_j.start``) with global destination ids. Vectors over the
vertices (BFS parents) split each ``D_i`` into ``pc`` contiguous pieces, one per processor of row ``i``,
so rank order is vertex order.
"""

from __future__ import annotations

import numpy as np

from .._validate import as_index_array, check_int_scalar, private, read_only_field, type_name
from ._agree import agree, check_grid_shape, check_offsets, check_values, key, local_check
from ._comm import alltoall_counts, alltoallv_records, as_counting
from ._csr_checks import CHECKED
from ._held import Held, kept
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
        """Collective. Validation is collective: one allgather of a small tuple per rank makes every rank
        raise the same :class:`DistributedError` when ``pr * pc`` is not the communicator's size on some
        rank or the ranks disagree on ``(pr, pc)``; then two ``Split`` make the row and column communicators."""
        comm = as_counting(comm)
        shape, problem = local_check(check_grid_shape, "grid", (pr, pc), comm.size)
        agree(comm, "Grid2D", problem, None if problem else {"argument 'grid'": shape})
        self._split(comm, *shape)

    @classmethod
    def _checked(cls, comm, pr: int, pc: int) -> "Grid2D":
        """A grid whose shape the caller has already agreed on collectively (no second agreement)."""
        grid = cls.__new__(cls)
        grid._split(as_counting(comm), pr, pc)
        return grid

    def _split(self, comm, pr: int, pc: int):
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


class Block2D(Held):
    """This processor's block ``A^T[D_i, S_j]`` of an ``n x n`` matrix on a :class:`Grid2D`.

    Build it collectively with :meth:`from_edges`. Its arrays are handed out as read-only views (the
    2-D BFS indexes by them); building one directly, ``Block2D(grid, n, row_bounds, col_bounds, indptr,
    indices, values=None)``, keeps copies of the arrays, checked at the first collective call.
    """

    row_bounds = read_only_field("row_bounds", "The pr + 1 offsets of the destination blocks D_i (read-only view).")
    col_bounds = read_only_field("col_bounds", "The pc + 1 offsets of the source blocks S_j (read-only view).")
    indptr = read_only_field("indptr", "The row pointer over the local sources u - col_bounds[j] (read-only view).")
    indices = read_only_field("indices", "The global destination id of each local edge, in D_i (read-only view).")
    values = read_only_field("values", "One value per local edge, or None (read-only view).")

    FIELDS = ("grid", "n", "row_bounds", "col_bounds", "indptr", "indices", "values")
    ARRAYS = frozenset(FIELDS[2:])

    def __init__(self, grid, n, row_bounds, col_bounds, indptr, indices, values=None):
        # a caller's arrays: kept as copies (graphkern's own constructors use _own and copy nothing)
        self._set(grid, n, *(kept(a) for a in (row_bounds, col_bounds, indptr, indices, values)))

    def __repr__(self) -> str:
        return (f"Block2D(n={self.n!r}, grid={getattr(self.grid, 'shape', '?')}, "
                f"coords={getattr(self.grid, 'coords', '?')}, local edges={np.size(self._indices)})")

    @classmethod
    def from_edges(cls, grid: Grid2D, src, dst, n: int, values=None, *, row_bounds=None, col_bounds=None):
        """Collective: every rank passes the same global edge list (or any part of it, as long as each edge
        is passed by exactly one rank) and keeps the edges of its block; edges travel by one Alltoallv.

        Validation is collective: each rank checks its edges (integer ids in ``[0, n)``, equal lengths, one
        value per edge) and the bounds; one allgather of a small tuple per rank makes every rank raise the
        same :class:`DistributedError` when any rank's input is wrong or the ranks disagree on ``n``, the
        grid shape, the bounds or the value dtype.
        """
        if not isinstance(grid, Grid2D):
            raise TypeError(f"Block2D.from_edges: argument 'grid': expected a Grid2D, found {type_name(grid)}")
        got, problem = local_check(_edges, grid, src, dst, n, values, row_bounds, col_bounds)
        same = None
        if not problem:
            same = {"argument 'n'": got[0], "the grid shape": grid.shape, "argument 'row_bounds'": got[1],
                    "argument 'col_bounds'": got[2], "the dtype of 'values'": None if got[5] is None else
                    key(got[5].dtype)}
        agree(grid.comm, "Block2D.from_edges", problem, same)
        n, rb, cb, src, dst, values = got
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
        return _mark(cls._own(grid, int(n), rb, cb, indptr.astype(np.int64), np.ascontiguousarray(got["dst"][perm]),
                              vals))

    def edges(self):
        """This block's edges as global ``(src, dst)``."""
        j = self.grid.col
        src = np.repeat(np.arange(self._col_bounds[j], self._col_bounds[j + 1], dtype=np.int64), np.diff(self._indptr))
        return src, self.indices  # read-only: the block indexes by it

    def transpose(self) -> "Block2D":
        """Collective: the transposed matrix on the same grid and blocks.

        On a square grid with equal row and column blocks, block ``(i, j)`` of the transpose is the
        transpose of block ``(j, i)``: one Sendrecv with the partner ``P(j, i)`` (diagonal blocks stay).
        Otherwise the blocks do not line up and the edges are redistributed by one Alltoallv.

        Validation is collective (one allgather of a small tuple per rank, and once per block a scan of its
        ids): a malformed block on any rank, or ranks that disagree on ``n``, the grid or the bounds, make
        every rank raise the same :class:`DistributedError` before any data moves.
        """
        check_block(self, "Block2D.transpose")
        grid = self.grid
        src, dst = self.edges()
        square = grid.pr == grid.pc and np.array_equal(self._row_bounds, self._col_bounds)
        if not square:
            return Block2D._exchange(grid, self.n, self._row_bounds, self._col_bounds, dst, src, self._values)
        partner = grid.rank_of(grid.col, grid.row)
        fields = [("src", np.int64), ("dst", np.int64)]
        if self._values is not None:
            fields.append(("value", np.dtype((np.void, self._values.dtype.itemsize))))
        rec = np.empty(src.size, dtype=np.dtype(fields))
        rec["src"], rec["dst"] = dst, src  # the transposed edges
        if self._values is not None:
            rec["value"] = self._values.view(rec.dtype["value"])
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
        local_src = got["src"] - self._col_bounds[j]
        n_local = int(self._col_bounds[j + 1] - self._col_bounds[j])
        # sort by (source, destination): the transpose of a canonical block is canonical
        keys = local_src * np.int64(max(self.n, 1)) + got["dst"]
        perm = np.argsort(keys, kind="stable")
        indptr = np.zeros(n_local + 1, dtype=np.int64)
        np.cumsum(np.bincount(local_src, minlength=n_local), out=indptr[1:])
        vals = None
        if self._values is not None:
            vals = np.ascontiguousarray(got["value"][perm]).view(self._values.dtype)
        return _mark(Block2D._own(grid, self.n, self._row_bounds, self._col_bounds, indptr,
                             np.ascontiguousarray(got["dst"][perm]), vals))

    def vector_bounds(self) -> np.ndarray:
        """``P + 1`` offsets: rank ``i * pc + k`` owns the vertices of piece ``k`` of ``D_i``."""
        pieces = [self._row_bounds[i] + even_offsets(self._row_bounds[i + 1] - self._row_bounds[i], self.grid.pc)[:-1]
                  for i in range(self.grid.pr)]
        return np.r_[np.concatenate(pieces), self.n].astype(np.int64)


def _edges(grid, src, dst, n, values, row_bounds, col_bounds):
    """``from_edges``: this rank's checks; returns ``(n, row bounds, column bounds, src, dst, values)``."""
    n = check_int_scalar("n", n, 0)
    src = as_index_array("src", src, np.int64)
    dst = as_index_array("dst", dst, np.int64)
    if src.size != dst.size:
        raise ValueError(f"arguments 'src' and 'dst': expected equal lengths, found {src.size} and {dst.size}")
    for name, ids in (("src", src), ("dst", dst)):
        if ids.size and (int(ids.min()) < 0 or int(ids.max()) >= n):
            pos = int(np.argmax((ids < 0) | (ids >= n)))
            raise ValueError(f"argument '{name}': expected vertex ids in [0, {n}), found {int(ids[pos])} at "
                             f"position {pos}")
    values = check_values("values", values, src.size)
    # the block keeps its bounds: none may be memory the caller can still change
    rb = (even_offsets(n, grid.pr) if row_bounds is None
          else private(check_offsets("row_bounds", row_bounds, grid.pr, n), row_bounds))
    cb = (even_offsets(n, grid.pc) if col_bounds is None
          else private(check_offsets("col_bounds", col_bounds, grid.pc, n), col_bounds))
    return n, rb, cb, src, dst, values


def _identity(block):
    return id(block._indptr), id(block._indices), id(block._values)


def _mark(block):
    """Record that ``block``'s arrays passed the full check (see :func:`check_block`)."""
    block.__dict__[CHECKED] = _identity(block)
    return block


def _block_structure(block):
    """This rank's checks of a built block: the O(P) ones every call, the scan of its ids once."""
    if not isinstance(block, Block2D):
        raise TypeError(f"argument 'block': expected a Block2D, found {type_name(block)}")
    grid = block.grid
    n = check_int_scalar("block.n", block.n, 0)
    rb = check_offsets("block.row_bounds", block._row_bounds, grid.pr, n)
    cb = check_offsets("block.col_bounds", block._col_bounds, grid.pc, n)
    i, j = grid.row, grid.col
    for name in ("indptr", "indices"):
        arr = getattr(block, "_" + name)
        if not isinstance(arr, np.ndarray) or arr.dtype != np.int64 or arr.ndim != 1:
            raise TypeError(f"argument 'block.{name}': expected a 1-D int64 array, found {type_name(arr)}")
    sources = int(cb[j + 1] - cb[j])
    if block._indptr.size != sources + 1:
        raise ValueError(f"argument 'block.indptr': expected {sources + 1} entries (the sources of column block "
                         f"{j} + 1), found {block._indptr.size}")
    if block.__dict__.get(CHECKED) != _identity(block):
        from .._validate import check_indptr

        check_indptr("block.indptr", block._indptr, block._indices.size)
        ids = block._indices
        if ids.size and (int(ids.min()) < rb[i] or int(ids.max()) >= rb[i + 1]):
            pos = int(np.argmax((ids < rb[i]) | (ids >= rb[i + 1])))
            raise ValueError(f"argument 'block.indices': expected destination ids in the row block "
                             f"[{int(rb[i])}, {int(rb[i + 1])}), found {int(ids[pos])} at position {pos}")
        check_values("block.values", block._values, ids.size)
        _mark(block)
    elif int(block._indptr[-1]) != block._indices.size:
        raise ValueError(f"argument 'block.indptr': expected indptr[-1] == len(indices) == {block._indices.size}, "
                         f"found {int(block._indptr[-1])}")


def block_same(block) -> dict:
    """What must be the same for a block on every rank."""
    return {"block.n": block.n, "the grid shape": block.grid.shape, "block.row_bounds": np.asarray(block._row_bounds),
            "block.col_bounds": np.asarray(block._col_bounds),
            "the dtype of block.values": None if block._values is None else key(block._values.dtype)}


def check_block(block, where: str, problem: str | None = None, same: dict | None = None):
    """Collective: the block's own checks, plus a ``problem`` and ``same`` arguments of the caller, in one
    agreement step. ``block`` must be a Block2D on every rank (its grid holds the communicator)."""
    if not isinstance(block, Block2D):
        raise TypeError(f"{where}: argument 'block': expected a Block2D, found {type_name(block)}")
    _, mine = local_check(_block_structure, block)
    problem = problem or mine
    agree(block.grid.comm, where, problem, None if problem else {**block_same(block), **(same or {})})
