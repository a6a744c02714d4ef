"""Distributed breadth-first search: 1-D (row blocks) and 2-D (Buluç-Madduri on a processor grid).

Both are level-synchronous and follow out-edges. A vertex reached by several frontier vertices in one
level takes the highest-labelled one as parent (the select-max rule of the linear-algebraic BFS), so the result does not
depend on the number of ranks or on message order. Each returns this rank's piece of the parent and
level arrays; :meth:`DistBFSResult.gather` assembles them for :func:`graphkern.graph500.validate`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validate import type_name
from ._agree import agree, check_grid_shape, check_vertex, local_check
from ._comm import alltoall_counts, alltoallv_records, as_counting, exclusive_scan, require_host_backend
from ._csr_checks import check_root, check_structure, invariants
from .csr import DistCSR
from .grid import Block2D, Grid2D, check_block

__all__ = ["bfs_1d", "bfs_2d", "DistBFSResult"]

_PAIR = np.dtype([("v", np.int64), ("parent", np.int64)])


@dataclass
class DistBFSResult:
    """This rank's piece ``first .. first + parents.size`` of the parents and levels (-1 = unreached)."""

    comm: object
    first: int
    parents: np.ndarray
    levels: np.ndarray
    source: int
    # per level: (level, frontier size found, bytes this rank sent, collectives this rank joined)
    trace: list = field(default_factory=list)

    def gather(self, root: int = 0):
        """Collective: the global ``(parents, levels)`` on ``root`` (None elsewhere).

        Validation is collective: one allgather of a small tuple per rank (which also carries the piece
        sizes the gather needs) makes every rank raise the same :class:`DistributedError` when ``root`` is
        out of range on some rank or the ranks disagree on it.
        """
        comm = as_counting(self.comm)

        def local():
            r = check_root(root, comm.size)
            if np.shape(self.parents) != np.shape(self.levels) or np.ndim(self.parents) != 1:
                raise ValueError(f"parents and levels: expected two 1-D arrays of one length, found shapes "
                                 f"{np.shape(self.parents)} and {np.shape(self.levels)}")
            return r

        r, problem = local_check(local)
        infos = agree(comm, "DistBFSResult.gather", problem, None if problem else {"argument 'root'": r},
                      None if problem else int(self.parents.size))
        counts, root = np.asarray(infos, dtype=np.int64), r
        out = []
        for local in (self.parents, self.levels):
            whole = np.empty(int(counts.sum()), dtype=np.int64) if comm.rank == root else None
            from mpi4py import MPI

            comm.Gatherv(np.ascontiguousarray(local, dtype=np.int64),
                              None if whole is None else [whole, (counts, exclusive_scan(counts)), MPI.INT64_T],
                              root=root)
            out.append(whole)
        return tuple(out) if comm.rank == root else None


def _select_max_parents(received, first, parents, levels, level):
    """Claim the unvisited vertices among ``received`` (v, parent) pairs; each takes its largest parent.
    Returns the newly reached vertices (global ids, ascending)."""
    if received.size == 0:
        return np.zeros(0, dtype=np.int64)
    local = received["v"] - first
    fresh = levels[local] < 0
    local, cand = local[fresh], received["parent"][fresh]
    if local.size == 0:
        return np.zeros(0, dtype=np.int64)
    best = np.full(parents.size, -1, dtype=np.int64)
    np.maximum.at(best, local, cand)
    new = np.flatnonzero(best >= 0)
    parents[new] = best[new]
    levels[new] = level
    return new + first


def _neighbours(indptr, indices, local_frontier, global_frontier):
    """(v, u) for every out-edge of the frontier vertices (local row ids into indptr)."""
    starts, ends = indptr[local_frontier], indptr[local_frontier + 1]
    degrees = ends - starts
    total = int(degrees.sum())
    pairs = np.empty(total, dtype=_PAIR)
    if total:
        offsets = np.repeat(starts - exclusive_scan(np.r_[degrees, 0])[:-1], degrees) + np.arange(total)
        pairs["v"] = indices[offsets]
        pairs["parent"] = np.repeat(global_frontier, degrees)
    return pairs


def _start(comm, first: int, count: int, source: int):
    """This rank's empty result for the vertices ``first .. first + count`` and its first frontier (the
    source when this rank owns it)."""
    parents = np.full(count, -1, dtype=np.int64)
    levels = np.full(count, -1, dtype=np.int64)
    frontier = np.zeros(0, dtype=np.int64)
    if first <= source < first + count:
        parents[source - first], levels[source - first] = source, 0
        frontier = np.array([source], dtype=np.int64)
    return DistBFSResult(comm, first, parents, levels, int(source)), frontier


def _send_to_owners(comm, pairs, bounds):
    """Deliver each (v, parent) pair to the rank of ``comm`` whose block ``bounds[r]:bounds[r+1]`` holds
    ``v`` (one Alltoall of counts, one Alltoallv of pairs); returns the pairs this rank receives."""
    owner = np.searchsorted(bounds, pairs["v"], "right") - 1
    order = np.argsort(owner, kind="stable")
    send_counts = np.bincount(owner, minlength=comm.size).astype(np.int64)
    return alltoallv_records(comm, pairs[order], send_counts, alltoall_counts(comm, send_counts))


def bfs_1d(A: DistCSR, source: int) -> DistBFSResult:
    """Collective: level-synchronous BFS over a square :class:`DistCSR` (vertex = row, row blocks).

    Each level every rank expands its own frontier vertices, sends each (neighbour, parent) to the
    neighbour's owner (one Alltoall of counts, one Alltoallv of pairs) and claims what it receives; an
    Allreduce of the new frontier's size ends the search.

    Validation is collective: one allgather of a small tuple per rank (and, once per matrix, a scan of
    its ids) makes every rank raise the same :class:`DistributedError` before the search when a rank's
    block is malformed, the matrix is not square, ``source`` is not a vertex id, or the ranks disagree
    on ``source``, the shape or the partitions.

    Examples
    --------
    >>> import numpy as np
    >>> from mpi4py import MPI
    >>> from graphkern.distributed import DistCSR, bfs_1d
    >>> A = DistCSR.from_global(np.array([0, 1, 2, 2]), np.array([1, 2]), None, MPI.COMM_SELF)
    >>> bfs_1d(A, 0).parents.tolist()
    [0, 0, 1]
    """
    require_host_backend("graphkern.distributed.bfs_1d")
    if not isinstance(A, DistCSR):
        raise TypeError(f"bfs_1d: argument 'A': expected a DistCSR, found {type_name(A)}")
    comm = as_counting(A.comm)
    source, problem = local_check(_square_and_source, A, comm, source)
    agree(comm, "bfs_1d", problem, None if problem else {**invariants(A), "argument 'source'": source})
    first, count = A.first_row, A.num_local_rows
    result, frontier = _start(comm, first, count, source)
    parents, levels = result.parents, result.levels
    level = 0
    total = np.ones(1, dtype=np.int64)
    while True:
        before = (comm.bytes_sent, comm.collectives)
        pairs = _neighbours(A._indptr, A._indices, frontier - first, frontier)
        received = _send_to_owners(comm, pairs, A._row_offsets)
        level += 1
        frontier = _select_max_parents(received, first, parents, levels, level)
        comm.Allreduce(np.array([frontier.size], dtype=np.int64), total)
        result.trace.append((level, int(total[0]), comm.bytes_sent - before[0], comm.collectives - before[1]))
        if total[0] == 0:
            return result


def _square_and_source(A: DistCSR, comm, source) -> int:
    """This rank's checks of a BFS over ``A``: a well-formed square block and a vertex id."""
    check_structure(A, comm)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"argument 'A': expected a square matrix (BFS follows edges u -> v), found shape "
                         f"{tuple(A.shape)}")
    return check_vertex("source", source, A.shape[0])


def _block_of(A: DistCSR, grid, source) -> tuple[Block2D, int]:
    """``A`` distributed on a ``grid = (pr, pc)`` (one Alltoallv of its edges), kept on ``A`` for reuse;
    everything checked in one agreement step first (A, the grid shape, the source)."""
    comm = as_counting(A.comm)

    def local():
        shape = Grid2D.factor(comm.size) if grid is None else check_grid_shape("grid", grid, comm.size)
        return shape, _square_and_source(A, comm, source)

    got, problem = local_check(local)
    same = None if problem else {**invariants(A), "argument 'grid'": got[0], "argument 'source'": got[1]}
    agree(comm, "bfs_2d", problem, same)
    (pr, pc), source = got
    cache = A.__dict__.setdefault("_blocks", {})
    if (pr, pc) not in cache:
        cache[(pr, pc)] = Block2D._exchange(Grid2D._checked(A.comm, pr, pc), A.shape[0], *_even_bounds(A, pr, pc),
                                            A.local_rows(), A._indices, None)
    return cache[(pr, pc)], source


def _source_on_block(block, source, grid) -> int:
    """This rank's checks of a 2-D BFS over a built block (the block's own: :func:`check_block`)."""
    source = check_vertex("source", source, int(block.n))
    if grid is not None and tuple(grid) != tuple(block.grid.shape):
        raise ValueError(f"argument 'grid': expected None or the block's grid {block.grid.shape} (it only "
                         f"chooses the grid for a DistCSR), found {grid!r}")
    return source


def _even_bounds(A, pr, pc):
    from .csr import even_offsets

    return even_offsets(A.shape[0], pr), even_offsets(A.shape[0], pc)


def bfs_2d(block, source: int, *, grid=None) -> DistBFSResult:
    """Collective: Buluç-Madduri 2-D BFS over a :class:`Block2D` (``P(i, j)`` holds ``A^T[D_i, S_j]``),
    or over a :class:`DistCSR` distributed first on ``grid = (pr, pc)`` (default: the most square grid
    for the communicator's size; the blocks are kept on the DistCSR for later searches).

    Per level: the new frontier moves to the processor columns that hold its out-edges (an Alltoallv
    along each processor row, then an Allgatherv along each processor column: the expand); each
    processor scans its block's out-edges of that frontier; the (vertex, parent) candidates go to the
    vertex's owner along the processor row (Alltoall + Alltoallv: the fold), which keeps the largest
    parent of each unvisited vertex. Returns the rank's piece of :meth:`Block2D.vector_bounds`.

    Validation is collective, one allgather of a small tuple per rank (and, once per block, a scan of its
    ids) before any data moves: a malformed block or matrix on any rank, a ``source`` that is not a
    vertex id, a ``grid`` whose ``pr * pc`` is not the number of ranks, or ranks that disagree on any of
    them make every rank raise the same :class:`DistributedError`.

    Examples
    --------
    >>> import numpy as np
    >>> from mpi4py import MPI
    >>> from graphkern.distributed import Block2D, Grid2D, bfs_2d
    >>> grid = Grid2D(MPI.COMM_SELF, 1, 1)
    >>> block = Block2D.from_edges(grid, np.array([0, 1]), np.array([1, 2]), 3)
    >>> bfs_2d(block, 0).parents.tolist()
    [0, 0, 1]
    >>> A = DistCSR.from_global(np.array([0, 1, 2, 2]), np.array([1, 2]), None, MPI.COMM_SELF)
    >>> bfs_2d(A, 0, grid=(1, 1)).parents.tolist()
    [0, 0, 1]
    """
    require_host_backend("graphkern.distributed.bfs_2d")
    if isinstance(block, DistCSR):
        block, source = _block_of(block, grid, source)
    else:
        source, problem = local_check(_source_on_block, block, source, grid)
        check_block(block, "bfs_2d", problem, {"argument 'source'": source})
    grid = block.grid
    comm, row_comm, col_comm = grid.comm, grid.row_comm, grid.col_comm
    bounds = block.vector_bounds()
    me = comm.rank
    first, count = int(bounds[me]), int(bounds[me + 1] - bounds[me])
    result, frontier = _start(comm, first, count, source)
    parents, levels = result.parents, result.levels
    cb, j = block._col_bounds, grid.col
    piece_bounds = bounds[grid.row * grid.pc: (grid.row + 1) * grid.pc + 1]  # my row's pieces of D_i
    level = 0
    total = np.ones(1, dtype=np.int64)
    from mpi4py import MPI

    while True:
        before = grid.stats()
        # expand 1/2: each new frontier vertex to the processor of my row whose column block holds it
        target = np.searchsorted(cb, frontier, "right") - 1
        send_counts = np.bincount(target, minlength=grid.pc).astype(np.int64)
        mine = alltoallv_records(row_comm, frontier, send_counts, alltoall_counts(row_comm, send_counts))
        # expand 2/2: gather the column block's frontier from every processor of my column
        counts = np.empty(grid.pr, dtype=np.int64)
        col_comm.Allgather(np.array([mine.size], dtype=np.int64), counts)
        column_frontier = np.empty(int(counts.sum()), dtype=np.int64)
        col_comm.Allgatherv(mine, [column_frontier, (counts, exclusive_scan(counts)), MPI.INT64_T])
        # local: out-edges of the column's frontier inside my block, candidates for D_i
        pairs = _neighbours(block._indptr, block._indices, column_frontier - cb[j], column_frontier)
        # fold: candidates to the owner of each vertex along my processor row
        received = _send_to_owners(row_comm, pairs, piece_bounds)
        level += 1
        frontier = _select_max_parents(received, first, parents, levels, level)
        comm.Allreduce(np.array([frontier.size], dtype=np.int64), total)
        after = grid.stats()
        sent = sum(v[1] for v in after.values()) - sum(v[1] for v in before.values())
        calls = sum(v[0] for v in after.values()) - sum(v[0] for v in before.values())
        result.trace.append((level, int(total[0]), sent, calls))
        if total[0] == 0:
            return result
