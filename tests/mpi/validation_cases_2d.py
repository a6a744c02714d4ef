"""The bad-input cases of test_validation.py for the processor grid, the 2-D blocks, BFS and the distributed
Graph500 run (the kinds and placements: validation_cases.py)."""


import numpy as np
from validation_cases import Case, N, built, edges, even_offsets, ids_out_of_range, on_built, other_partition

from graphkern.distributed import Block2D, Grid2D, bfs_1d, bfs_2d
from graphkern.distributed import graph500 as dist_graph500


def _grid(comm, shape):
    return lambda: Grid2D(comm, *shape)


def _grid_arg(bad_shape):
    def build(comm, bad):
        good = (1, comm.size)
        shape = bad_shape(comm) if bad else good
        return _grid(comm, shape)

    return build


GRID = [
    Case(
        "grid",
        "pr * pc not the rank count",
        "local",
        r"'grid': expected pr \* pc == \d+ ranks, found",
        _grid_arg(lambda c: (c.size + 1, 1)),
    ),
    Case("grid", "pr zero", "local", r"'grid\[0\]': expected an integer >= 1, found 0", _grid_arg(lambda c: (0, 1))),
    Case(
        "grid",
        "pr not an integer",
        "local",
        r"'grid\[0\]': expected an integer, found float",
        _grid_arg(lambda c: (1.0, c.size)),
    ),
    Case(
        "grid",
        "shape differs between ranks",
        "same",
        r"argument 'grid': expected the same",
        _grid_arg(lambda c: (c.size, 1)),
    ),
]


def _from_edges(**bad_kwargs):
    def build(comm, bad):
        grid = Grid2D(comm, comm.size, 1)
        src, dst = edges()
        mine = slice(comm.rank, None, comm.size)
        kwargs = {"src": src[mine], "dst": dst[mine], "n": N}
        if bad:
            kwargs.update({k: (v(comm) if callable(v) else v) for k, v in bad_kwargs.items()})
        return lambda: Block2D.from_edges(grid, kwargs.pop("src"), kwargs.pop("dst"), kwargs.pop("n"), **kwargs)

    return build


FROM_EDGES = [
    Case(
        "from_edges",
        "src out of range",
        "local",
        r"'src': expected vertex ids in \[0, 12\), found 12",
        _from_edges(src=np.array([N]), dst=np.array([0])),
    ),
    Case(
        "from_edges",
        "negative dst",
        "local",
        r"'dst': expected vertex ids in \[0, 12\), found -3",
        _from_edges(src=np.array([0]), dst=np.array([-3])),
    ),
    Case(
        "from_edges",
        "src float dtype",
        "local",
        r"'src': expected an integer array, found dtype float",
        _from_edges(src=np.array([0.5]), dst=np.array([0])),
    ),
    Case(
        "from_edges",
        "lengths differ",
        "local",
        r"'src' and 'dst': expected equal lengths",
        _from_edges(src=np.array([0, 1]), dst=np.array([0])),
    ),
    Case(
        "from_edges",
        "values wrong length",
        "local",
        r"'values': expected 1 values",
        _from_edges(src=np.array([0]), dst=np.array([1]), values=np.ones(3)),
    ),
    Case("from_edges", "n differs between ranks", "same", r"argument 'n': expected the same", _from_edges(n=N + 1)),
    Case(
        "from_edges",
        "row_bounds wrong length",
        "local",
        r"'row_bounds': expected \d+ offsets",
        _from_edges(row_bounds=np.array([0, N, N, N, N, N, N, N, N])),
    ),
    Case(
        "from_edges",
        "row_bounds differ between ranks",
        "same",
        r"'row_bounds': expected the same",
        _from_edges(row_bounds=lambda c: other_partition(c.size)),
    ),
]


def _block(comm):
    src, dst = edges()
    return Block2D.from_edges(Grid2D(comm, comm.size, 1), src[comm.rank :: comm.size], dst[comm.rank :: comm.size], N)


def _block_call(call, **fields):
    def build(comm, bad):
        block = _block(comm)
        if bad:
            given = {k: (v(block) if callable(v) else v) for k, v in fields.items()}
            names = ("grid", "n", "row_bounds", "col_bounds", "indptr", "indices", "values")
            block = Block2D(**{name: given.get(name, getattr(block, name)) for name in names})
        return lambda: call(block)

    return build


BLOCK = [
    Case(
        "block_transpose",
        "id outside the row block",
        "local",
        r"'block.indices': expected destination ids",
        _block_call(
            Block2D.transpose,
            indices=lambda b: np.r_[b.indices, N].astype(np.int64),
            indptr=lambda b: np.r_[b.indptr[:-1], b.indptr[-1] + 1].astype(np.int64),
        ),
    ),
    Case(
        "block_transpose",
        "n differs between ranks",
        "local",
        r"'block.row_bounds': expected offsets from 0 to 13",
        _block_call(Block2D.transpose, n=N + 1),
    ),
    Case(
        "block_transpose",
        "value dtype differs",
        "same",
        r"the dtype of block.values: expected the same",
        _block_call(Block2D.transpose, values=lambda b: np.zeros(b.indices.size)),
    ),
]


def _bfs1(source_of):
    def build(comm, bad):
        A = built(comm)
        source = source_of(comm) if bad else 0
        return lambda: bfs_1d(A, source)

    return build


def _bfs2_block(source_of, grid_of=None):
    def build(comm, bad):
        block = _block(comm)
        source = source_of(comm) if bad else 0
        return lambda: bfs_2d(block, source, grid=grid_of(comm) if grid_of and bad else None)

    return build


def _bfs2_csr(grid_of):
    def build(comm, bad):
        A = built(comm)
        return lambda: bfs_2d(A, 0, grid=grid_of(comm) if bad else (1, comm.size))

    return build


def _result_gather(comm, bad):
    result = bfs_1d(built(comm), 0)
    return lambda: result.gather(root=7 if bad else 0)


BFS = [
    Case(
        "bfs_1d",
        "source out of range",
        "local",
        r"'source': expected a vertex id in \[0, 12\), found 12",
        _bfs1(lambda c: N),
    ),
    Case(
        "bfs_1d",
        "source negative",
        "local",
        r"'source': expected a vertex id in \[0, 12\), found -1",
        _bfs1(lambda c: -1),
    ),
    Case(
        "bfs_1d",
        "source not an integer",
        "local",
        r"'source': expected an integer vertex id, found float",
        _bfs1(lambda c: 1.0),
    ),
    Case("bfs_1d", "source differs between ranks", "same", r"argument 'source': expected the same", _bfs1(lambda c: 3)),
    Case(
        "bfs_1d",
        "not square",
        "local",
        r"'A': expected a square matrix",
        on_built(lambda A: bfs_1d(A, 0), shape=(N, N + 1), col_offsets=lambda A: even_offsets(N + 1, A.comm.size)),
    ),
    Case(
        "bfs_1d",
        "id out of range",
        "local",
        r"'A.indices': expected column ids < 12",
        on_built(lambda A: bfs_1d(A, 0), indices=ids_out_of_range),
    ),
    Case("bfs_2d", "source out of range", "local", r"'source': expected a vertex id", _bfs2_block(lambda c: 40)),
    Case(
        "bfs_2d",
        "source differs between ranks",
        "same",
        r"argument 'source': expected the same",
        _bfs2_block(lambda c: 5),
    ),
    Case(
        "bfs_2d",
        "grid unlike the block's",
        "local",
        r"'grid': expected None or the block's grid",
        _bfs2_block(lambda c: 0, lambda c: (1, c.size + 1)),
    ),
    Case(
        "bfs_2d",
        "grid of a DistCSR: pr * pc not the rank count",
        "local",
        r"'grid': expected pr \* pc",
        _bfs2_csr(lambda c: (2, c.size)),
    ),
    Case(
        "bfs_2d",
        "grid of a DistCSR differs between ranks",
        "same",
        r"argument 'grid': expected the same",
        _bfs2_csr(lambda c: (c.size, 1)),
    ),
    Case(
        "bfs_result",
        "gather root out of range",
        "local",
        r"argument 'root': expected an integer <= \d+, found 7",
        _result_gather,
    ),
]


def _run(**bad_kwargs):
    def build(comm, bad):
        kwargs = {"scale": 5, "edgefactor": 4, "num_roots": 1, "progress": False}
        if bad:
            kwargs.update({k: (v(comm) if callable(v) else v) for k, v in bad_kwargs.items()})
        return lambda: dist_graph500.run(comm=comm, **kwargs)

    return build


GRAPH500 = [
    Case(
        "graph500",
        "grid pr * pc not the rank count",
        "local",
        r"'grid': expected pr \* pc",
        _run(grid=lambda c: (c.size, 2)),
    ),
    Case("graph500", "scale not an integer", "local", r"'scale': expected an integer, found float", _run(scale=5.0)),
    Case("graph500", "scale differs between ranks", "same", r"argument 'scale': expected the same", _run(scale=6)),
]

CASES = GRID + FROM_EDGES + BLOCK + BFS + GRAPH500


def _valid_bfs(comm, result):
    got = result.gather()
    return comm.rank != 0 or (got[0][0] == 0 and got[1][0] == 0 and int((got[1] >= 0).sum()) > 1)


def _valid_block(comm, block, transposed):
    """Rank i of the (P, 1) grid holds the edges into the row block D_i (of the transpose, if asked)."""
    src, dst = edges()
    if transposed:
        src, dst = dst, src
    lo, hi = even_offsets(N, comm.size)[comm.rank : comm.rank + 2]
    want = sorted((int(s), int(d)) for s, d in zip(src, dst) if lo <= d < hi)
    return sorted(zip(*(x.tolist() for x in block.edges()))) == want


def _valid_graph500(comm):
    result = dist_graph500.run(5, 4, num_roots=1, comm=comm, progress=False)
    return comm.rank != 0 or result.validated


VALID = {
    "grid": lambda comm: Grid2D(comm, 1, comm.size).shape == (1, comm.size),
    "from_edges": lambda comm: _valid_block(comm, _block(comm), transposed=False),
    "block_transpose": lambda comm: _valid_block(comm, _block(comm).transpose(), transposed=True),
    "bfs_1d": lambda comm: _valid_bfs(comm, bfs_1d(built(comm), 0)),
    "bfs_2d": lambda comm: _valid_bfs(comm, bfs_2d(_block(comm), 0)),
    "bfs_result": lambda comm: _valid_bfs(comm, bfs_1d(built(comm), 0)),
    "graph500": _valid_graph500,
}
