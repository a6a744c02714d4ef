"""Graph generators: the Graph500 Kronecker generator (bit-exact) and uniform random graphs."""

from __future__ import annotations

import numpy as np

from .._validate import INT64_MAX, check_int_scalar
from ..kernels.cpu import generate as _gen

__all__ = ["kronecker_edges", "kronecker", "uniform_edges", "uniform", "graph500_random_doubles"]

GRAPH500_SEED = 2
# Above this many edges the generators show a progress bar (when ``progress`` is left to None).
PROGRESS_MIN_EDGES = 10_000_000
_PROGRESS_CHUNK = 1 << 22


def _seed_pair(seed) -> tuple[int, int]:
    """An int ``s`` stands for the reference's pair ``(s, s + 1)``; a pair is taken as given."""
    if isinstance(seed, (tuple, list)):
        if len(seed) != 2:
            raise ValueError(f"argument 'seed': expected an int or a pair of ints, found {len(seed)} values")
        return check_int_scalar("seed[0]", seed[0]), check_int_scalar("seed[1]", seed[1])
    s = check_int_scalar("seed", seed)
    return s, s + 1


def _host_mrg_next(z: list[int]) -> int:
    new = (_gen.MRG_X * z[0] + _gen.MRG_Y * z[4]) % _gen.MRG_MODULUS
    z[1:] = z[:4]
    z[0] = new
    return new


def _scramble_values(seed_state: np.ndarray) -> tuple[np.uint64, np.uint64]:
    z = [int(v) for v in _gen.skip_state(seed_state, 50 * (1 << 128) + 7 * (1 << 64))]
    mask = (1 << 64) - 1
    val0 = (_host_mrg_next(z) * 0xFFFFFFFF + _host_mrg_next(z)) & mask
    val1 = (_host_mrg_next(z) * 0xFFFFFFFF + _host_mrg_next(z)) & mask
    return np.uint64(val0), np.uint64(val1)


def _progress_bar(total: int, desc: str, progress):
    if progress is None:
        progress = total >= PROGRESS_MIN_EDGES
    if not progress:
        return None
    from tqdm.auto import tqdm

    return tqdm(total=total, desc=desc, unit="edge", unit_scale=True, leave=False)


def kronecker_edges(scale: int, edgefactor: int = 16, seed=GRAPH500_SEED, *, dtype=None, progress=None):
    """The raw Graph500 Kronecker edge list, identical to the reference generator's output.

    Parameters
    ----------
    scale : int
        ``log2`` of the number of vertices (1 to 40).
    edgefactor : int
        Edge tuples per vertex; Graph500 requires 16.
    seed : int or (int, int)
        The reference's two user seeds; an int ``s`` means ``(s, s + 1)``. The default 2 is the
        reference driver's ``(2, 3)``.
    dtype : numpy dtype, optional
        Id dtype of the result: int32 when ``2**scale`` fits, else int64, unless given.
    progress : bool, optional
        Show a progress bar; by default only above 10**7 edges.

    Returns
    -------
    src, dst : ndarray
        ``edgefactor * 2**scale`` tuples, self-loops and duplicates included, in the reference's order.

    Examples
    --------
    >>> import graphkern as gk
    >>> src, dst = gk.graph.kronecker_edges(10)
    >>> len(src), (int(src[0]), int(dst[0]))
    (16384, (299, 797))
    """
    scale = check_int_scalar("scale", scale, low=1, high=40)
    edgefactor = check_int_scalar("edgefactor", edgefactor, low=1)
    num_edges = edgefactor << scale
    if num_edges > INT64_MAX:  # the edge count is an int64 everywhere it goes
        raise ValueError(f"argument 'edgefactor': expected edgefactor * 2**scale <= {INT64_MAX} edges, found "
                         f"{edgefactor} * 2**{scale} = {num_edges}")
    if dtype is None:
        dtype = np.int32 if scale <= 31 else np.int64
    dtype = np.dtype(dtype)
    if dtype not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise TypeError(f"argument 'dtype': expected int32 or int64, found {dtype}")
    if dtype == np.int32 and scale > 31:
        raise ValueError(f"argument 'dtype': int32 cannot hold vertex ids of scale {scale}; use int64")
    seed1, seed2 = _seed_pair(seed)
    state = _gen.mrg_seed(seed1, seed2)
    val0, val1 = _scramble_values(state)
    powers = _gen.edge_stride_powers(max(1, int(num_edges).bit_length()))
    src = np.empty(num_edges, dtype=dtype)
    dst = np.empty(num_edges, dtype=dtype)
    bar = _progress_bar(num_edges, f"kronecker scale {scale}", progress)
    step = num_edges if bar is None else _PROGRESS_CHUNK
    for lo in range(0, num_edges, step):
        hi = min(num_edges, lo + step)
        _gen.kronecker_edges_range(state, powers, scale, val0, val1, lo, src[lo:hi], dst[lo:hi])
        if bar is not None:
            bar.update(hi - lo)
    if bar is not None:
        bar.close()
    return src, dst


def graph500_random_doubles(count: int, seed=GRAPH500_SEED, position: int = 0) -> np.ndarray:
    """The reference's ``make_random_numbers(count, seed1, seed2, position)``: doubles in ``[0, 1)``.

    Used to pick the Graph500 search keys. The stream is skipped by ``2 * 2**128 + 2 * position``.

    Examples
    --------
    >>> from graphkern.graph import graph500_random_doubles
    >>> round(float(graph500_random_doubles(1)[0]), 12)
    0.410212082829
    """
    count = check_int_scalar("count", count, low=0, high=INT64_MAX)
    position = check_int_scalar("position", position, low=0)  # the skip is exact Python-int arithmetic
    seed1, seed2 = _seed_pair(seed)
    state = _gen.skip_state(_gen.mrg_seed(seed1, seed2), 2 * (1 << 128) + 2 * position)
    return _gen.mrg_doubles(state, count, np.empty(count, dtype=np.float64))


def kronecker(scale: int, edgefactor: int = 16, seed=GRAPH500_SEED, *, simple: bool = True, idtype=None,
              progress=None):
    """A Graph500 Kronecker graph as a symmetric :class:`~graphkern.Graph`.

    Every generated tuple ``(u, v)`` becomes the two directed edges ``u -> v`` and ``v -> u``. With
    ``simple=True`` (the default) self-loops and duplicate edges are dropped, which is the graph the
    benchmarks use (scale 18: 262,144 nodes and 7,611,866 directed edges). With ``simple=False`` every
    tuple is kept in both directions (a self-loop once): the multigraph that Graph500's TEPS counts.

    Examples
    --------
    >>> import graphkern as gk
    >>> g = gk.graph.kronecker(10)
    >>> g.num_src, g.num_edges
    (1024, 21102)
    """
    from .graph import Graph

    src, dst = kronecker_edges(scale, edgefactor, seed, progress=progress)
    n = 1 << scale
    if simple:
        from .build import undirected

        return undirected(src, dst, n, idtype=idtype)
    loops = src == dst
    both_src = np.concatenate([src, dst[~loops]])
    both_dst = np.concatenate([dst, src[~loops]])
    return Graph.from_coo(both_src, both_dst, num_nodes=n, idtype=idtype)


def uniform_edges(num_nodes: int, num_edges: int, seed: int = 0, *, dtype=None):
    """``num_edges`` directed edges with both endpoints uniform in ``[0, num_nodes)`` (deterministic).

    Examples
    --------
    >>> import graphkern as gk
    >>> src, dst = gk.graph.uniform_edges(100, 1000, seed=1)
    >>> len(src), int(src.max()) < 100
    (1000, True)
    """
    num_nodes = check_int_scalar("num_nodes", num_nodes, low=1, high=(1 << 32) - 1)
    num_edges = check_int_scalar("num_edges", num_edges, low=0, high=INT64_MAX)
    seed = check_int_scalar("seed", seed, low=0)
    if dtype is None:
        dtype = np.int32 if num_nodes <= np.iinfo(np.int32).max else np.int64
    chunks = (num_edges + (1 << 16) - 1) >> 16
    seeds = np.random.SeedSequence(seed).generate_state(max(chunks, 1), dtype=np.uint64)
    src = np.empty(num_edges, dtype=dtype)
    dst = np.empty(num_edges, dtype=dtype)
    _gen.uniform_edges(seeds, num_nodes, src, dst)
    return src, dst


def uniform(num_nodes: int, num_edges: int, seed: int = 0, *, idtype=None):
    """A directed uniform random multigraph (Erdos-Renyi G(n, m) with replacement) as a Graph.

    Examples
    --------
    >>> import graphkern as gk
    >>> gk.graph.uniform(1000, 5000).num_edges
    5000
    """
    from .graph import Graph

    src, dst = uniform_edges(num_nodes, num_edges, seed)
    return Graph.from_coo(src, dst, num_nodes=num_nodes, idtype=idtype)
