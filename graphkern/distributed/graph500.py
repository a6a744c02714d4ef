"""The Graph500 BFS benchmark on MPI: ``graphkern graph500 --distributed`` under ``mpiexec -n P``."""

from __future__ import annotations

import sys
import time

import numpy as np

from .._validate import check_int_scalar
from ._agree import agree, check_grid_shape, local_check
from ._comm import as_counting, require_host_backend
from .bfs import bfs_2d
from .grid import Block2D, Grid2D


def run(scale: int, edgefactor: int = 16, *, num_roots: int = 64, grid=None, comm=None, seed=2,
        validate_results: bool = True, progress: bool = True):
    """Collective: generate the Kronecker graph (every rank the same edges, deterministic), distribute it on
    a ``pr x pc`` grid (kernel 1, timed), run the 2-D BFS from each Graph500 search key (kernel 2, timed,
    the slowest rank's time), gather and validate every tree on rank 0.

    Returns the :class:`graphkern.graph500.Graph500Result` on rank 0 and None on the other ranks.

    The arguments are validated collectively before the graph is generated (one allgather of a small
    tuple per rank): a wrong one on any rank (a ``grid`` whose ``pr * pc`` is not the number of ranks, a
    scale that is not an integer >= 1, ...), or ranks that disagree, make every rank raise the same
    :class:`graphkern.errors.DistributedError`.
    """
    require_host_backend("graphkern.distributed.graph500.run")
    from mpi4py import MPI

    from .. import graph500
    from ..graph import kronecker_edges, undirected

    comm = as_counting(MPI.COMM_WORLD if comm is None else comm)

    def local():
        for name, value in (("validate_results", validate_results), ("progress", progress)):
            if not isinstance(value, bool):
                raise TypeError(f"argument '{name}': expected True or False, found {value!r}")
        return (check_int_scalar("scale", scale, 1), check_int_scalar("edgefactor", edgefactor, 1),
                check_int_scalar("num_roots", num_roots, 0), _seed(seed),
                Grid2D.factor(comm.size) if grid is None else check_grid_shape("grid", grid, comm.size),
                validate_results)

    got, problem = local_check(local)
    names = ("scale", "edgefactor", "num_roots", "seed", "grid", "validate_results")
    agree(comm, "graph500.run", problem, None if problem else {f"argument '{k}'": v for k, v in zip(names, got)})
    scale, edgefactor, num_roots, seed, (pr, pc), _ = got
    me = comm.rank
    src, dst = kronecker_edges(scale, edgefactor, seed, progress=progress and me == 0)
    n = 1 << scale
    comm.Barrier()
    t0 = time.perf_counter()
    grid2d = Grid2D._checked(comm, pr, pc)
    keep = src != dst
    mine = slice(me, None, comm.size)  # each rank feeds a share of the symmetrised edges
    s, d = np.r_[src[keep][mine], dst[keep][mine]], np.r_[dst[keep][mine], src[keep][mine]]
    block = Block2D.from_edges(grid2d, s, d, n)
    construction = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
    g = None
    if me == 0:
        g = undirected(src, dst, n)  # rank 0's copy for the search keys and validation
        roots = graph500.search_keys(g, num_roots, seed)
    roots = np.asarray(comm.bcast(None if me else roots.tolist()), dtype=np.int64)
    bfs_2d(block, int(roots[0]) if roots.size else 0)  # untimed warm-up, as the reference
    times, nedges = [], []
    bar = None
    if progress and me == 0:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(roots), desc=f"graph500 scale {scale} on {pr}x{pc} ranks", leave=False, file=sys.stderr)
    for root in roots.tolist():
        comm.Barrier()
        t0 = time.perf_counter()
        res = bfs_2d(block, root)
        seconds = comm.allreduce(time.perf_counter() - t0, op=MPI.MAX)
        got = res.gather()
        if me == 0:
            parents, levels = got
            if validate_results:
                graph500.validate(g, root, parents, levels)
            times.append(seconds)
            nedges.append(graph500.traversed_edges(src, dst, parents))
            if bar is not None:
                bar.update(1)
    if bar is not None:
        bar.close()
    if me != 0:
        return None
    return graph500.Graph500Result(scale, edgefactor, f"bfs_2d ({pr}x{pc} grid)", construction, roots,
                                   np.array(times), np.array(nedges, dtype=np.float64), validate_results,
                                   num_mpi_processes=comm.size)


def _seed(seed):
    """An int, or the reference's pair of ints (see :func:`graphkern.graph.kronecker_edges`)."""
    if isinstance(seed, (tuple, list)):
        if len(seed) != 2:
            raise ValueError(f"argument 'seed': expected an int or a pair of ints, found {seed!r}")
        return check_int_scalar("seed[0]", seed[0]), check_int_scalar("seed[1]", seed[1])
    return check_int_scalar("seed", seed)
