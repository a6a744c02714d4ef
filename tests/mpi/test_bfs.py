"""1-D and 2-D distributed BFS, validated by the Graph500 rules and equal to SciPy's distances."""

import numpy as np
import pytest
import scipy.sparse as sp
from conftest import all_ranks, write_into_each
from scipy.sparse.csgraph import shortest_path

import graphkern as gk
from graphkern.distributed import Block2D, DistCSR, DistributedError, Grid2D, bfs_1d, bfs_2d


def _graphs():
    rng = np.random.default_rng(4)
    src, dst = gk.graph.kronecker_edges(9, 8, progress=False)
    keep = src != dst
    kron = (np.r_[src[keep], dst[keep]], np.r_[dst[keep], src[keep]], 512)
    n = 200
    s = rng.integers(0, n, 600)
    d = rng.integers(0, n, 600)
    directed = (s, d, n)
    path = (np.arange(99), np.arange(1, 100), 100)
    two = (np.array([0, 1, 5, 6, 3, 3]), np.array([1, 0, 6, 5, 3, 3]), 8)  # two components, a self-loop
    return {"kronecker": kron, "directed": directed, "path": path, "components": two}


GRAPHS = _graphs()


def _check(result, g, source, src, dst, n, comm):
    got = result.gather()
    ok = True
    if comm.rank == 0:
        parents, levels = got
        try:
            gk.graph500.validate(g, source, parents, levels, directed=True)
        except Exception:
            ok = False
        A = sp.csr_array((np.ones(src.size), (src, dst)), shape=(n, n))
        dist = shortest_path(A, unweighted=True, indices=source)
        want = np.where(np.isinf(dist), -1, dist).astype(np.int64)
        ok = ok and np.array_equal(levels, want)
    return all_ranks(comm, ok)


@pytest.mark.fast
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_bfs_1d(comm, name):
    src, dst, n = GRAPHS[name]
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    indptr, indices, _ = g.csr()
    A = DistCSR.from_global(indptr, indices, None, comm)
    for source in (0, n // 2, n - 1):
        assert _check(bfs_1d(A, source), g, source, src, dst, n, comm)


def _grids(size):
    pr, pc = Grid2D.factor(size)
    return sorted({(pr, pc), (pc, pr), (1, size)})


def test_block_bounds_are_kept_privately(comm):
    """Block2D keeps the row and column bounds it was given as its own: a caller overwriting them after
    the call leaves the search that of the untouched bounds."""
    name = sorted(GRAPHS)[0]
    src, dst, n = GRAPHS[name]
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    grid = Grid2D(comm, 1, comm.size)
    mine = slice(comm.rank, None, comm.size)
    for kind in ("numpy", "list", "numpy slice"):
        bounds = {"row": np.array([0, n], np.int64),
                  "col": np.linspace(0, n, comm.size + 1).astype(np.int64)}
        given = {k: v.tolist() if kind == "list" else v.copy() if kind == "numpy" else
                 np.repeat(v, 2)[::2] for k, v in bounds.items()}
        block = Block2D.from_edges(grid, src[mine], dst[mine], n, row_bounds=given["row"], col_bounds=given["col"])
        for v in given.values():
            v[:] = [n] * len(v)  # a partition nothing can index by
        assert _check(bfs_2d(block, 0), g, 0, src, dst, n, comm), kind


BLOCK_ARRAYS = ("row_bounds", "col_bounds", "indptr", "indices", "values")


@pytest.mark.parametrize("kind", ["from_edges", "transpose", "direct"])
def test_what_a_block_hands_out_is_read_only(comm, kind):
    """graphkern._validate.read_only at Block2D: every array a block hands out (its fields and the
    destinations of ``edges()``) refuses writes and rebinding, a block built directly keeps copies of the
    caller's arrays, and the search stays that of the untouched graph."""
    src, dst, n = GRAPHS["directed"]
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    mine = slice(comm.rank, None, comm.size)
    grid = Grid2D(comm, 1, comm.size)
    block = Block2D.from_edges(grid, src[mine], dst[mine], n, np.arange(src.size, dtype=np.float64)[mine])
    if kind == "transpose":  # the transpose of the transpose: the same graph, made by graphkern
        block = block.transpose().transpose()
    elif kind == "direct":
        given = {name: np.array(getattr(block, name)) for name in BLOCK_ARRAYS}
        block = Block2D(grid, n, **given)
        for arr in given.values():
            arr[...] = n  # ids and bounds nothing can index by
    assert all_ranks(comm, write_into_each(block, BLOCK_ARRAYS) == [])
    assert all_ranks(comm, not block.edges()[1].flags.writeable)
    assert _check(bfs_2d(block, 0), g, 0, src, dst, n, comm)


@pytest.mark.fast
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_bfs_2d_on_every_grid_shape(comm, name):
    src, dst, n = GRAPHS[name]
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    for pr, pc in _grids(comm.size):
        grid = Grid2D(comm, pr, pc)
        mine = slice(comm.rank, None, comm.size)  # each edge passed by one rank
        block = Block2D.from_edges(grid, src[mine], dst[mine], n)
        for source in (0, n - 1):
            res = bfs_2d(block, source)
            assert _check(res, g, source, src, dst, n, comm)
            assert all_ranks(comm, res.trace[-1][1] == 0 and all(t[2] >= 0 for t in res.trace))


def test_bfs_select_max_parent_is_rank_independent(comm):
    """Parents do not depend on the grid: every shape gives the serial select-max tree."""
    src, dst, n = GRAPHS["kronecker"]
    trees = []
    for pr, pc in _grids(comm.size):
        block = Block2D.from_edges(Grid2D(comm, pr, pc), src, dst, n) if comm.rank == 0 else \
            Block2D.from_edges(Grid2D(comm, pr, pc), src[:0], dst[:0], n)
        got = bfs_2d(block, 3).gather()
        trees.append(None if got is None else got[0])
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    indptr, indices, _ = g.csr()
    one_d = bfs_1d(DistCSR.from_global(indptr, indices, None, comm), 3).gather()
    assert all_ranks(comm, comm.rank != 0 or all(np.array_equal(t, one_d[0]) for t in trees))


@pytest.mark.fast
def test_grid_transpose(comm):
    rng = np.random.default_rng(2)
    n = 60
    src, dst = rng.integers(0, n, 300), rng.integers(0, n, 300)
    for pr, pc in _grids(comm.size):
        grid = Grid2D(comm, pr, pc)
        mine = slice(comm.rank, None, comm.size)
        vals = np.arange(src.size, dtype=np.float64)[mine]
        block = Block2D.from_edges(grid, src[mine], dst[mine], n, vals)
        comm.reset(); grid.reset_stats()  # noqa: E702
        T = block.transpose()
        stats = grid.stats()
        want = Block2D.from_edges(grid, dst[mine], src[mine], n, vals)
        got_edges = sorted(zip(*T.edges(), T.values.tolist()))
        want_edges = sorted(zip(*want.edges(), want.values.tolist()))
        assert all_ranks(comm, got_edges == want_edges)
        if pr == pc:  # the square grid swaps P(i, j) with P(j, i): one pairwise exchange, no all-to-all
            assert all_ranks(comm, "Alltoallv" not in stats and (stats.get("Sendrecv", [0])[0] == 2
                                                                  or grid.row == grid.col))


def test_bad_grid_and_source(comm):
    with pytest.raises(DistributedError, match="pr \\* pc"):
        Grid2D(comm, comm.size + 1, 1)
    src, dst, n = GRAPHS["path"]
    block = Block2D.from_edges(Grid2D(comm, 1, comm.size), src, dst, n) if comm.rank == 0 else \
        Block2D.from_edges(Grid2D(comm, 1, comm.size), src[:0], dst[:0], n)
    with pytest.raises(DistributedError, match="source"):
        bfs_2d(block, n)
    with pytest.raises(DistributedError, match="vertex ids"):
        Block2D.from_edges(Grid2D(comm, 1, comm.size), np.array([0]), np.array([n + comm.rank]), n)


@pytest.mark.fast
def test_bfs_2d_on_a_distcsr_as_in_the_design(comm):
    """``gkd.bfs_2d(A, source, grid=(pr, pc))`` with A a DistCSR: distributed once, then searched."""
    src, dst, n = GRAPHS["kronecker"]
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    indptr, indices, _ = g.csr()
    A = DistCSR.from_global(indptr, indices, None, comm)
    pr, pc = Grid2D.factor(comm.size)
    for source in (0, 7):
        assert _check(bfs_2d(A, source, grid=(pr, pc)), g, source, src, dst, n, comm)
    assert all_ranks(comm, list(A._blocks) == [(pr, pc)])
