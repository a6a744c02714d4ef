"""The Graph500 BFS benchmark: search keys, the five validation rules, TEPS and the reference's output.

Follows the specification and the reference code 3.0 (docs/design.md, section 'Graph500'): kernel 1 builds the
graph from ``kronecker_edges`` (timed), 64 search keys are drawn exactly as the reference draws them, kernel 2
is one timed BFS per key, every result is validated, and TEPS counts the input edges of the traversed
component (self-loops excluded, duplicates counted, as the reference's validator enforces). The statistics
block is the reference's ``key: value`` format, so existing Graph500 tooling reads it.
"""

from __future__ import annotations

import sys
import time
from dataclasses import dataclass, field

import numpy as np
from numba import njit, prange

from .errors import Graph500ValidationError

__all__ = ["search_keys", "validate", "traversed_edges", "statistics", "run", "Graph500Result", "format_output"]


def _host_graph(g):
    """``g`` checked to be a Graph (a DynamicGraph gives its snapshot); TypeError naming ``g`` otherwise."""
    from ._validate import type_name
    from .graph import DynamicGraph, Graph

    if isinstance(g, DynamicGraph):
        g = g.snapshot()
    if not isinstance(g, Graph):
        raise TypeError(f"argument 'g': expected a graphkern Graph or DynamicGraph, found {type_name(g)}")
    return g


def search_keys(g, num_keys: int = 64, seed=2) -> np.ndarray:
    """The reference's search keys: distinct vertices with a non-loop edge, from its random stream.

    Candidate ``c`` is ``int((d[2c] + d[2c+1]) * N) mod N`` with ``d`` the doubles of
    ``make_random_numbers`` from position 0; duplicates and vertices without a non-loop edge are
    skipped, and the search stops after ``2N`` candidates (so a tiny graph may give fewer keys).

    Examples
    --------
    >>> import graphkern as gk
    >>> g = gk.graph.kronecker(10)
    >>> gk.graph500.search_keys(g, 8).tolist()
    [458, 214, 220, 966, 395, 9, 848, 777]
    """
    from ._validate import INT64_MAX, check_int_scalar
    from .graph.generators import graph500_random_doubles

    num_keys = check_int_scalar("num_keys", num_keys, low=0, high=INT64_MAX)
    g = _host_graph(g)
    n = g.num_src
    if n == 0:
        return np.empty(0, dtype=np.int64)  # no vertex has an edge
    g = g.to("cpu")
    has_edge = _vertices_with_nonloop_edges(g)
    keys: list[int] = []
    chosen = set()
    batch = max(64, 4 * num_keys)
    counter = 0
    while len(keys) < num_keys and counter <= 2 * n:
        d = graph500_random_doubles(2 * batch, seed, position=counter)
        for c in range(batch):
            if len(keys) >= num_keys or counter > 2 * n:
                break
            root = int((d[2 * c] + d[2 * c + 1]) * n) % n
            counter += 2
            if has_edge[root] and root not in chosen:
                chosen.add(root)
                keys.append(root)
    return np.array(keys, dtype=np.int64)


@njit(parallel=True, cache=True)
def _nonloop_out_degrees(indptr, indices, out):
    for r in prange(indptr.size - 1):
        count = 0
        for j in range(indptr[r], indptr[r + 1]):
            count += indices[j] != r
        out[r] = count
    return out


def _vertices_with_nonloop_edges(g) -> np.ndarray:
    """Which vertices have an edge to or from another vertex, from the CSR and the in-degrees (no edge
    list is built: at scale 22 that would be a gigabyte)."""
    if "csr" in g._formats or g.allows_format("csr"):
        indptr, indices, _ = g._raw("csr")
    else:
        indptr, indices, _ = g.sorted_csr()
    nonloop_out = _nonloop_out_degrees(indptr, indices, np.empty(g.num_src, dtype=np.int64))
    has_edge = nonloop_out > 0
    if not g._symmetric:
        loops = np.diff(indptr) - nonloop_out
        has_edge |= g.in_degrees() - loops > 0
    return has_edge


@njit(cache=True)
def _depths_from_parents(parents, root, depth):
    """Depth of every vertex by following parents; -1 for unreached or cycle members (rule 1).

    Each vertex is walked up until a vertex of known depth (or -1, or a cycle) and the whole walk is
    labelled on the way back, so the cost is O(n) whatever the depth (a level-by-level sweep costs
    O(n * depth): minutes on a path of 10^5 vertices).
    """
    n = parents.size
    unknown, on_walk = -2, -3
    for v in range(n):
        depth[v] = unknown
    depth[root] = 0
    walk = np.empty(n, dtype=np.int64)
    for v in range(n):
        if depth[v] != unknown:
            continue
        length = 0
        u = v
        while depth[u] == unknown:
            depth[u] = on_walk
            walk[length] = u
            length += 1
            p = parents[u]
            if p < 0 or p == u:  # unreached, or a self-parent other than the root
                u = -1
                break
            u = p
        base = -1 if u < 0 or depth[u] < 0 else depth[u]  # depth[u] == on_walk: a cycle
        for i in range(length - 1, -1, -1):
            if base >= 0:
                base += 1
                depth[walk[i]] = base
            else:
                depth[walk[i]] = -1
    return depth


@njit(parallel=True, cache=True)
def _check_edges(indptr, indices, depth, directed, bad_slot):
    """Rules 3 and 4 over a CSR: every edge has both or no endpoints reached, and depths differ by <= 1
    (directed: a reached source needs a reached destination at most one level deeper). ``bad_slot[u]`` is
    the first offending slot of row ``u``, or -1."""
    for u in prange(indptr.size - 1):
        bad_slot[u] = -1
        du = depth[u]
        for j in range(indptr[u], indptr[u + 1]):
            dv = depth[indices[j]]
            if directed:
                bad = du >= 0 and (dv < 0 or dv > du + 1)
            else:
                bad = (du >= 0) != (dv >= 0) or (du >= 0 and abs(du - dv) > 1)
            if bad:
                bad_slot[u] = j
                break
    return bad_slot


@njit(parallel=True, cache=True)
def _tree_edges_exist(indptr, sorted_indices, parents, root, missing):
    """Rule 5: ``parents[v] -> v`` is an edge (binary search in the sorted CSR row of the parent)."""
    for v in prange(parents.size):
        p = parents[v]
        missing[v] = False
        if p >= 0 and v != root:
            lo = indptr[p]
            hi = indptr[p + 1]
            pos = lo + np.searchsorted(sorted_indices[lo:hi], v)
            missing[v] = not (pos < hi and sorted_indices[pos] == v)
    return missing


def validate(g, source: int, parents, levels=None, *, directed: bool = False) -> int:
    """Check a BFS parent array with the five Graph500 rules; raise on the first rule broken.

    1. the tree is a tree (following parents from any reached vertex ends at the source);
    2. tree edges join vertices whose levels differ by one (checked against ``levels`` when given);
    3. every input edge joins vertices whose levels differ by at most one, or two unreached vertices;
    4. the tree spans the source's connected component (no edge leaves the reached set);
    5. each reached vertex and its parent are joined by an edge of the graph.

    Rules 3 and 4 treat the graph as undirected, as Graph500 does; with ``directed=True`` they follow
    edge directions (an edge ``u -> v`` from a reached ``u`` needs ``v`` reached, at most one level
    deeper). Returns the number of reached vertices. Raises :class:`~graphkern.Graph500ValidationError`
    naming the rule and a vertex.

    Examples
    --------
    >>> import numpy as np, graphkern as gk
    >>> g = gk.Graph.from_coo([0, 1, 1, 2], [1, 0, 2, 1])
    >>> gk.graph500.validate(g, 0, np.array([0, 0, 1]))
    3
    >>> gk.graph500.validate(g, 0, np.array([0, 0, 0]))
    Traceback (most recent call last):
    ...
    graphkern.errors.Graph500ValidationError: Graph500 rule 5 (parent edge exists) failed at vertex 2: ...
    """
    from ._cuda import to_host
    from ._validate import check_bool, check_int_scalar

    directed = check_bool("directed", directed)  # a kernel argument: anything else compiles its own build
    g = _host_graph(g)
    if g.num_src != g.num_dst:
        raise ValueError(f"argument 'g': expected a square graph (a search tree lives on one vertex set), found "
                         f"{g.num_src} sources and {g.num_dst} destinations")
    if g.num_src == 0:
        raise ValueError("argument 'g': expected a graph with vertices, found 0 (a search needs a source)")
    source = check_int_scalar("source", source, low=0, high=g.num_src - 1)
    g = g.to("cpu")  # the check reads the edge list on the host (device results come back once)
    n = g.num_src
    parents = to_host(parents)
    levels = None if levels is None else to_host(levels)
    if levels is not None and np.shape(levels) != (n,):
        raise ValueError(f"argument 'levels': expected shape ({n},), found {np.shape(levels)}")
    if levels is not None and np.asarray(levels).dtype.kind not in "iu":
        raise TypeError(f"argument 'levels': expected integers, found dtype {np.asarray(levels).dtype}")
    if parents.shape != (n,):
        raise Graph500ValidationError(f"parents has shape {parents.shape}, expected ({n},)")
    if parents.dtype.kind not in "iu":
        raise Graph500ValidationError(f"parents has dtype {parents.dtype}, expected integers")
    parents = parents.astype(np.int64)
    bad = np.flatnonzero((parents < -1) | (parents >= n))
    if bad.size:
        v = int(bad[0])
        raise Graph500ValidationError(f"Graph500 rule 1 (tree): parents[{v}] = {parents[v]} is not a vertex or -1")
    if parents[source] != source:
        raise Graph500ValidationError(f"Graph500 rule 1 (tree): parents[source={source}] = {parents[source]}, "
                                      f"expected the source itself")
    depth = _depths_from_parents(parents, source, np.empty(n, dtype=np.int64))
    orphan = np.flatnonzero((parents >= 0) & (depth < 0))
    if orphan.size:
        v = int(orphan[0])
        raise Graph500ValidationError(f"Graph500 rule 1 (tree) failed at vertex {v}: following parents from it "
                                      f"never reaches the source (a cycle or a detached branch)")
    if levels is not None:
        levels = np.asarray(levels).astype(np.int64)
        wrong = np.flatnonzero(levels != depth)
        if wrong.size:
            v = int(wrong[0])
            raise Graph500ValidationError(f"Graph500 rule 2 (tree edges span one level) failed at vertex {v}: "
                                          f"level {levels[v]}, but its tree depth is {depth[v]}")
    sorted_csr = g._cache.get("sorted_csr")
    if sorted_csr is None:
        sorted_csr = g._cache["sorted_csr"] = g.sorted_csr()
    indptr, indices, _ = sorted_csr  # rules 3 and 4 read it too: no edge list is built
    bad_slot = _check_edges(indptr, indices, depth, directed, np.empty(n, dtype=np.int64))
    where = np.flatnonzero(bad_slot >= 0)
    if where.size:
        u = int(where[0])
        v = int(indices[bad_slot[u]])
        if (depth[u] >= 0) != (depth[v] >= 0):
            reached, other = (u, v) if depth[u] >= 0 else (v, u)
            raise Graph500ValidationError(f"Graph500 rule 4 (spans the component) failed at vertex {other}: edge "
                                          f"{u} - {v} joins it to reached vertex {reached}, but it is unreached")
        raise Graph500ValidationError(f"Graph500 rule 3 (edges span at most one level) failed at vertex {u}: edge "
                                      f"{u} - {v} joins levels {depth[u]} and {depth[v]}")
    missing = _tree_edges_exist(indptr, indices, parents, source, np.empty(n, dtype=np.bool_))
    where = np.flatnonzero(missing)
    if where.size:
        v = int(where[0])
        raise Graph500ValidationError(f"Graph500 rule 5 (parent edge exists) failed at vertex {v}: there is no edge "
                                      f"{parents[v]} -> {v}")
    return int(np.count_nonzero(depth >= 0))


def traversed_edges(edge_src, edge_dst, parents) -> int:
    """Input edge tuples in the traversed component, self-loops excluded and duplicates counted: the
    reference's ``nedge`` (its validator rejects any other count)."""
    reached = np.asarray(parents) >= 0
    keep = (edge_src != edge_dst) & reached[edge_src]
    return int(np.count_nonzero(keep))


def statistics(values) -> dict:
    """The reference's order statistics: min, quartiles (its interpolation), median, max, mean, stddev."""
    x = np.sort(np.asarray(values, dtype=np.float64))
    n = x.size
    q1 = (x[(n - 1) // 4] + x[n // 4]) / 2
    med = (x[(n - 1) // 2] + x[n // 2]) / 2
    q3 = (x[((n - 1) * 3) // 4] + x[(n * 3) // 4]) / 2
    return {"min": x[0], "firstquartile": q1, "median": med, "thirdquartile": q3, "max": x[-1],
            "mean": x.mean(), "stddev": x.std(ddof=1) if n > 1 else 0.0}


@dataclass
class Graph500Result:
    scale: int
    edgefactor: int
    algorithm: str
    construction_time: float
    roots: np.ndarray
    times: np.ndarray
    nedges: np.ndarray
    validated: bool
    level_traces: list = field(default_factory=list)
    num_mpi_processes: int = 1
    generation_time: float = 0.0

    @property
    def teps(self) -> np.ndarray:
        return self.nedges / self.times

    @property
    def harmonic_mean_teps(self) -> float:
        return float(1.0 / np.mean(self.times / self.nedges))


def run(scale: int, edgefactor: int = 16, *, num_roots: int = 64, algorithm: str = "auto", validate_results=True,
        seed=2, progress: bool = True, backend=None) -> Graph500Result:
    """Generate, build (kernel 1, timed), search from each key (kernel 2, timed), validate.

    ``backend`` is where the searches run (as in :func:`graphkern.bfs`; ``"cuda"`` builds the graph's
    device twin once, before the first search, and every timed search runs on the GPU)."""
    from . import traversal
    from ._cuda import to_host
    from .graph import Graph, kronecker_edges
    from .graph.build import undirected_csr

    t0 = time.perf_counter()
    src, dst = kronecker_edges(scale, edgefactor, seed, progress=progress)
    generation = time.perf_counter() - t0
    t0 = time.perf_counter()
    # kernel 1: the symmetric graph without self-loops or repeated edges, built in place from the tuples;
    # per vertex, the count of tuples leaving it is all that TEPS needs of them afterwards
    indptr, indices, tuples_from = undirected_csr(src, dst, 1 << scale)
    g = Graph._symmetric_csr(indptr, indices)
    construction = time.perf_counter() - t0
    del src, dst, indptr, indices
    roots = search_keys(g, num_roots, seed)
    # untimed warm-up, as the reference (on the cuda backend it also puts the graph on the device)
    traversal.bfs(g, int(roots[0]) if roots.size else 0, algorithm=algorithm, backend=backend)
    times, nedges, traces = [], [], []
    bar = None
    if progress:
        from tqdm.auto import tqdm

        bar = tqdm(total=len(roots), desc=f"graph500 scale {scale}", leave=False, file=sys.stderr)
    for root in roots.tolist():
        t0 = time.perf_counter()
        res = traversal.bfs(g, root, algorithm=algorithm, backend=backend)
        times.append(time.perf_counter() - t0)
        if validate_results:
            validate(g, root, res.parents, res.levels)
        nedges.append(int(tuples_from[to_host(res.parents) >= 0].sum()))
        traces.append(res.trace)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return Graph500Result(scale, edgefactor, res.algorithm if roots.size else algorithm, construction, roots,
                          np.array(times), np.array(nedges, dtype=np.float64), validate_results, traces,
                          generation_time=generation)


def format_output(r: Graph500Result) -> str:
    """The reference's output block (``key: value`` lines)."""
    lines = [f"SCALE: {r.scale}", f"edgefactor: {r.edgefactor}", f"NBFS: {len(r.roots)}",
             f"graph_generation: {r.generation_time:.8g}", f"num_mpi_processes: {r.num_mpi_processes}",
             f"construction_time: {r.construction_time:.8g}",
             f"algorithm: {r.algorithm}"]
    for name, values in (("time", r.times), ("nedge", r.nedges)):
        for key, value in statistics(values).items():
            lines.append(f"bfs_{key}_{name}: {value:.8g}")
    teps = statistics(r.teps)
    for key in ("min", "firstquartile", "median", "thirdquartile", "max"):
        lines.append(f"bfs_{key}_TEPS: {teps[key]:.8g}")
    s = r.times / r.nedges
    hmean = 1.0 / s.mean()
    hstd = s.std(ddof=1) / (s.mean() ** 2 * np.sqrt(len(s) - 1)) if len(s) > 1 else 0.0
    lines.append(f"bfs_harmonic_mean_TEPS: {hmean:.8g}")
    lines.append(f"bfs_harmonic_stddev_TEPS: {hstd:.8g}")
    lines.append(f"validation: {'passed' if r.validated else 'not run'}")
    return "\n".join(lines)
