"""The generalized sparse kernels: :func:`spmm`, :func:`sddmm` and :func:`edge_softmax` (DGL semantics).

``spmm(g, op, reduce, ufeat, efeat)``: ``out[v] = reduce over edges (u, e, v) of op(ufeat[u], efeat[e])``.
``sddmm(g, op, lhs, rhs, lhs_target, rhs_target)``: ``out[e] = op(L[e], R[e])``, each operand taken from the
source (``"u"``), destination (``"v"``) or edge (``"e"``) of edge ``e``.
``edge_softmax(g, logits)``: softmax of edge logits over the in-edges of each destination.

Where DGL is inconsistent graphkern chooses (docs/design.md, section 'Semantics of the sparse
kernels'): a destination without in-edges gets
0 for every reducer and arg outputs -1; max/min ties go to the first edge in CSC order on every path;
sums over a row are deterministic; NaN never wins a max/min. Edge features are always indexed by edge id.
Inputs are validated here, once, before any compiled code runs.
"""

from __future__ import annotations

import numpy as np

from . import _broadcast, _cuda, _memory
from ._config import resolve_backend
from ._validate import check_choice, type_name
from .dispatch import Plan, csc_rows_sorted, how_to_build, kept_in_degrees, plan, register_planner, select_format
from .graph.dynamic import holding_graph_lock
from .kernels.cpu import edge_softmax as _softmax_cpu
from .kernels.cpu import sddmm as _sddmm_cpu
from .kernels.cpu import spmm as _spmm_cpu

__all__ = ["spmm", "sddmm", "edge_softmax", "SPMM_OPS", "SPMM_REDUCERS", "SDDMM_OPS", "TARGETS"]

SPMM_OPS = _spmm_cpu.OPS
SPMM_REDUCERS = _spmm_cpu.REDUCERS
SDDMM_OPS = _sddmm_cpu.OPS
TARGETS = ("u", "v", "e")
_FLOAT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_DEVICE_FLOAT_DTYPES = (np.dtype(np.float16),) + _FLOAT_DTYPES
# Partitions per thread for the destination-parallel kernels: enough that a few heavy rows even out.
_PARTS_PER_THREAD = 8


def _graph_of(g, format=None):
    """A Graph, or for a DynamicGraph what the kernel runs on: its snapshot (the cached one while it is
    current, else built and cached), or with ``format="packed"`` its packed arrays directly.

    Building the snapshot (CSR, plus the CSC for SpMM) and running the kernel there costs about as much
    as one call over the packed arrays (gaps, walls and, for SpMM, per-thread partial outputs), and a
    current snapshot then serves every later call on the same edges much faster; a GNN layer calls
    several kernels per batch of changes, so SpMM and SDDMM build the snapshot; BFS runs on the packed
    arrays (see graphkern.traversal). Measured by ``python tools/dynamic_bench.py --figures packed``
    (figures in docs/performance.md, section 'CPU: dynamic graph')."""
    from .graph import DynamicGraph, Graph

    if isinstance(g, DynamicGraph):
        if format == "packed":
            if g.device != "cpu":
                raise ValueError("argument 'format': the packed kernels run on a cpu DynamicGraph")
            return g
        snap = g.cached_snapshot()
        return snap if snap is not None else g.snapshot()
    if format == "packed":
        raise ValueError("argument 'format': 'packed' runs on a DynamicGraph's packed arrays; this is a Graph")
    if not isinstance(g, Graph):
        raise TypeError(f"argument 'g': expected a graphkern Graph or DynamicGraph, found {type_name(g)}")
    return g


def _is_packed(g) -> bool:
    from .graph import DynamicGraph

    return isinstance(g, DynamicGraph)


def _packed_plan(family: str, backend: str, kernel: str) -> Plan:
    return Plan(family, backend, "packed", kernel, None,
                ("format='packed' was asked for: the kernel walks the DynamicGraph's packed memory array (rows "
                 "by source; walls, gaps and tombstones skipped) without a snapshot",))


def _row_parts(dg) -> np.ndarray:
    import numba

    return _spmm_cpu.nnz_balanced_parts(dg._row_off, max(1, numba.get_num_threads() * _PARTS_PER_THREAD))


def _where(g, backend, *arrays) -> bool:
    """Resolve the backend of a call: True for cuda (a device graph or device inputs under auto, or asked
    for), False for cpu, where a graph on the GPU is refused."""
    on_device = resolve_backend(backend, g, *arrays) == "cuda"
    if not on_device:
        g._require_host("the cpu backend")
    return on_device


def _feature(name: str, arr, rows: int, what: str, on_device: bool = False):
    """A float feature array with ``rows`` rows, C-contiguous; 1-D means one scalar per row.

    On the cuda backend the result is a device array: device input is adopted without a copy (float16
    allowed), host input is checked here and then copied to the device once."""
    if _cuda.is_device_array(arr):
        if not on_device:
            raise TypeError(f"argument '{name}': expected a host array, found a CUDA device array; "
                            f"device arrays need backend='cuda'")
        arr = _cuda.adopt(arr)
    elif not isinstance(arr, np.ndarray):
        if hasattr(arr, "detach") and hasattr(arr, "numpy"):
            arr = arr.detach().numpy()
        else:
            raise TypeError(f"argument '{name}': expected a NumPy array, found {type_name(arr)}")
    allowed = _DEVICE_FLOAT_DTYPES if on_device else _FLOAT_DTYPES
    if np.dtype(arr.dtype) not in allowed:
        if on_device:
            raise TypeError(f"argument '{name}': expected float16, float32 or float64, found {arr.dtype}")
        hint = " (float16 runs on the cuda backend only)" if arr.dtype == np.float16 else ""
        raise TypeError(f"argument '{name}': expected float32 or float64, found {arr.dtype}{hint}")
    if arr.ndim == 0:
        raise ValueError(f"argument '{name}': expected at least 1-D (one row per {what}), found a scalar")
    if arr.shape[0] != rows:
        raise ValueError(f"argument '{name}': expected {rows} rows (one per {what}), found shape {arr.shape}")
    if not _cuda.is_c_contiguous(arr):
        raise ValueError(f"argument '{name}': expected a C-contiguous array, found strides {arr.strides}; "
                         f"pass np.ascontiguousarray({name})")
    if on_device and isinstance(arr, np.ndarray):
        arr = _cuda.to_device(name, arr)
    return arr


def _as_rows(arr: np.ndarray) -> np.ndarray:
    """2-D view ``(rows, features)`` of a contiguous feature array (no copy)."""
    return arr.reshape(arr.shape[0], -1) if arr.shape[0] else arr.reshape(0, max(1, int(np.prod(arr.shape[1:]))))


def _dummy(dtype) -> np.ndarray:
    return np.zeros((1, 1), dtype=dtype)


def _parts(g, fmt: str, indptr: np.ndarray) -> np.ndarray:
    import numba

    key = ("parts", fmt, numba.get_num_threads())
    parts = g._cache.get(key)
    if parts is None:
        parts = _spmm_cpu.nnz_balanced_parts(indptr, max(1, numba.get_num_threads() * _PARTS_PER_THREAD))
        g._cache[key] = parts
    return parts


def _cache_bytes() -> int:
    """Bytes of this machine's per-core L2 cache (1 MB when the system does not say)."""
    global _L2_BYTES
    if _L2_BYTES is None:
        _L2_BYTES = 1 << 20
        try:
            with open("/sys/devices/system/cpu/cpu0/cache/index2/size") as fh:
                text = fh.read().strip().upper()
            scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
            _L2_BYTES = int(text.rstrip("KM")) * scale
        except (OSError, ValueError):
            pass
    return _L2_BYTES


_L2_BYTES = None


def _rows_per_block(out_row_bytes: int) -> int:
    """Destination rows of one block: a power of two, at most half the L2 cache of output rows (each a
    whole number of cache lines)."""
    line = 64
    row = max(line, -(-int(out_row_bytes) // line) * line)
    return 1 << _spmm_cpu.block_shift(max(8, (_cache_bytes() // 2) // row))


def _blocks(g, base: str, rows_per_block: int, hub_rows: int = 0):
    """The destination blocks of ``g`` (:func:`kernels.cpu.spmm.destination_blocks`) from the ``base``
    format, with their parallel groups, cached on the graph.

    Returns ``(bounds, block_ptr, groups, src, dst, eid, hubs)``. With ``hub_rows`` (the CSC only), the
    edges from the hubs of :func:`_hubs` are split off first (:func:`kernels.cpu.spmm.split_hub_edges`)
    and ``hubs`` is ``(hub_ids, hub_indptr, hub_src, hub_eids)``; the blocks hold the other edges, and
    the groups balance both. Else ``hubs`` is None.
    """
    import numba

    threads = numba.get_num_threads()
    split = bool(hub_rows)
    key = ("dst_blocks", base, split, rows_per_block, hub_rows, threads)
    blocks = _cached_recent(g, key)
    if blocks is None:
        indptr, indices, eids = g._raw(base)
        eids = None if g.eids_are_identity(base) else eids
        hubs = None
        parts = max(1, threads * _PARTS_PER_THREAD)
        if split:
            hub_ids, _ = _hubs(g, hub_rows)
            hub_indptr, hub_src, hub_eids, indptr, indices, eids = _spmm_cpu.split_hub_edges(
                indptr, indices, eids, g.num_src, hub_ids)
            hubs = (hub_ids, hub_indptr, hub_src, hub_eids)
        bounds, block_ptr, src, dst, eid = _spmm_cpu.destination_blocks(
            indptr, indices, eids, g.num_src, g.num_dst, rows_per_block, by_destination=base == "csc")
        if split:  # a block's work: its own edges and its rows' hub edges
            groups = _spmm_cpu.nnz_balanced_parts(block_ptr + hubs[1][bounds], parts)
        else:
            groups = _spmm_cpu.nnz_balanced_parts(block_ptr, parts)
        blocks = (bounds, block_ptr, groups, src, dst, eid, hubs)
        _cache_recent(g, ("dst_blocks", base, split), key, blocks)
    return blocks


# Block sets (each as large as the CSC) kept per graph and kind (with or without hubs): two, for a model
# whose layers alternate two widths. With one, a GAT-like chain (u_dot_v at F = 16, then at F = 64)
# rebuilt the blocks on every call, several times the cost of the kernel itself.
_BLOCK_SETS_KEPT = 2


def _cached_recent(g, key):
    """The graph's cached entry ``key`` (None if absent), marked as the most recently used."""
    found = g._cache.pop(key, None)
    if found is not None:
        g._cache[key] = found
    return found


def _cache_recent(g, prefix: tuple, key, value, keep: int = _BLOCK_SETS_KEPT) -> None:
    """Cache ``value`` at ``key``, dropping the least recently used entries whose key starts with
    ``prefix`` beyond ``keep`` (the cache keeps insertion order; :func:`_cached_recent` moves hits last).
    The keys are listed from a copy: another thread may add one meanwhile."""
    others = [k for k in list(g._cache) if k[:len(prefix)] == prefix and k != key]
    for stale in others[:max(0, len(others) - (keep - 1))]:
        g._cache.pop(stale, None)
    g._cache[key] = value


# The hub split of the blocked kernel: the hubs' feature rows take at most this share of the L2 cache,
# and the split runs when they carry at least this share of the edges. Measured on the scale-18
# Kronecker graph, float32, 2 threads: a quarter of the L2 was as fast as an eighth or a half at F = 16
# and 64, and at F = 32 and 256 faster than no split.
_HUB_L2_SHARE = 4
_HUB_MIN_EDGE_SHARE = 0.1


def _hub_rows(row_bytes: int) -> int:
    """How many hub rows of ``row_bytes`` fit the hubs' share of the L2 cache."""
    return (_cache_bytes() // _HUB_L2_SHARE) // max(1, int(row_bytes))


def _hubs(g, hub_rows: int):
    """The at most ``hub_rows`` sources of highest out-degree (ties to the lower id; sources without
    edges left out), sorted, and the share of the edges they carry; cached on the graph."""
    key = ("spmm_hubs", hub_rows)
    found = _cached_recent(g, key)
    if found is None:
        degrees = g.out_degrees()
        count = min(max(int(hub_rows), 0), g.num_src)
        top = np.argsort(-degrees.astype(np.int64), kind="stable")[:count]
        hub_ids = np.sort(top[degrees[top] > 0]).astype(g.idtype)
        share = float(degrees[hub_ids].sum(dtype=np.int64)) / max(g.num_edges, 1)
        found = (hub_ids, share)
        _cache_recent(g, ("spmm_hubs",), key, found)
    return found


def _block_slots(g, base: str, rows_per_block: int, eid: np.ndarray, hubs=None, hub_rows: int = 0) -> np.ndarray:
    """Where each edge id sits in the edge order of the blocked kernel over :func:`_blocks` (-1 for unused
    ids), cached: the hub edges first when ``hubs``, then the blocks' edges."""
    split = hubs is not None
    key = ("dst_block_slots", base, split, rows_per_block, hub_rows)
    slots = _cached_recent(g, key)
    if slots is None:
        order = np.concatenate([hubs[3], eid]) if split else eid
        slots = _spmm_cpu.edge_slots(order, g.num_edge_ids, np.empty(g.num_edge_ids, eid.dtype))  # slots < E fit
        _cache_recent(g, ("dst_block_slots", base, split), key, slots)
    return slots


def _edge_word(g) -> str:
    """How an error names an edge feature's row: per edge, or per edge id when some ids are unused."""
    return "edge" if g.num_edge_ids == g.num_edges else "edge id"


def _feature_shape(arr):
    return tuple(arr.shape[1:]) if arr.ndim > 1 else (1,)


# ------------------------------------------------------------------------------------------------ spmm

def _check_spmm(g, op, reduce, ufeat, efeat, on_device=False):
    check_choice("op", op, SPMM_OPS)
    check_choice("reduce", reduce, SPMM_REDUCERS)
    uses_x, uses_w = op != "copy_rhs", op != "copy_lhs"
    if uses_x and ufeat is None:
        raise ValueError(f"argument 'ufeat': op '{op}' needs source-node features, found None")
    if uses_w and efeat is None:
        raise ValueError(f"argument 'efeat': op '{op}' needs edge features, found None")
    if not uses_x and ufeat is not None:
        raise ValueError("argument 'ufeat': op 'copy_rhs' reads only efeat; pass ufeat=None")
    if not uses_w and efeat is not None:
        raise ValueError("argument 'efeat': op 'copy_lhs' reads only ufeat; pass efeat=None")
    x = _feature("ufeat", ufeat, g.num_src, "source node", on_device) if uses_x else None
    w = _feature("efeat", efeat, g.num_edge_ids, _edge_word(g), on_device) if uses_w else None
    if x is not None and w is not None and x.dtype != w.dtype:
        raise TypeError(f"arguments 'ufeat' and 'efeat': expected the same dtype, found {x.dtype} and {w.dtype}")
    bcast = _broadcast.analyse(op, _feature_shape(x) if x is not None else (),
                               _feature_shape(w) if w is not None else (), "ufeat", "efeat")
    return x, w, bcast


# Narrow edge rows (several to a cache line) read through the ids in block order fetch nearly every line
# of the edge array once per block; from this many blocks on one pass puts them in block order first
# (u_mul_e_sum with w (E, 1): even at 16 blocks, a clear gain at 64; `python tools/compare_peers.py
# --family spmm --scale 20`).
_EDGE_ROWS_TO_BLOCKS_MAX_BYTES = 16
_EDGE_ROWS_TO_BLOCKS_MIN_BLOCKS = 16
# The blocked kernel compiles the chunk loop of rows up to this many vectors unrolled, one compile per width.
_BLOCKED_UNROLLED_CHUNKS = 4
# Below this many edges the CSC's gathers stay in the caches and the blocks would not pay their build.
_BLOCKED_MIN_EDGES = 1 << 16


def _hub_split(g, op, reduce, with_arg, ufeat_bytes, edge_row_bytes, out_chunks):
    """Why the blocked sums split off the hub sources' edges, or None (see :func:`_blocks`).

    Every reducer of an op that reads x, without arg outputs, over output rows of several vector chunks
    and a pattern without offset tables, when the sources of highest out-degree whose rows fit a
    quarter of the L2 carry a tenth of the edges or more (arg outputs would need each row's ties
    resolved across the two parts). Rows of one vector keep the blocks alone (the split measured
    slightly slower there). An op that also reads edge rows needs them narrow: the hub edges run in CSC
    order, so the edge rows are first permuted into it, a random scatter several times dearer than the
    reorder into block order alone, which pays from F = 32 on, not at F = 8 and 16. Measured by
    ``python tools/compare_peers.py --family spmm --features 8 16 32 64`` (figures in
    docs/performance.md, section 'CPU: what the kernels' design choices are worth').
    """
    if (op == "copy_rhs" or with_arg or (out_chunks or 0) < 2 or ufeat_bytes is None
            or g.num_edges == 0 or g.num_src == 0):
        return None
    if op != "copy_lhs" and (edge_row_bytes is None or edge_row_bytes > _EDGE_ROWS_TO_BLOCKS_MAX_BYTES):
        return None
    hub_rows = _hub_rows(ufeat_bytes // g.num_src)
    if hub_rows < 1:
        return None
    hub_ids, share = _hubs(g, hub_rows)
    if share < _HUB_MIN_EDGE_SHARE:
        return None
    return (f"hub split: the {hub_ids.size} sources of highest out-degree carry {share:.0%} of the edges; "
            f"their rows are copied together into the L2 and each row reduces its edges from them first")


def _use_blocked(g, op, with_arg, ufeat_bytes, edge_row_bytes, out_chunks, hub_split=False):
    """Why the blocked path runs instead of the CSC kernel, or None (the cost model's measured rule).

    The blocked path (``spmm_blocked_*``) walks each destination block's edges in source order, adding
    into output rows held in the L2 cache. Against the CSC vector kernel it is faster for one-vector
    rows (F = 1 to 16, float32 and float64) on graphs whose gathered rows outgrow the L2: copy_u_sum,
    copy_u_max, copy_e_sum and u_mul_e_sum with w (E, 1) (edge ids in source order, so w streams). Not
    taken: rows of two or more vector chunks without the hub split (x is re-read for twice the blocks),
    arg outputs (an extra read-modify-write per edge), gathered arrays that fit the L2 (the CSC's
    gathers hit it), and CSC rows not in source order (results then would not be the CSC's bit for
    bit). The blocks cost a stable transpose and a count sort, once per graph.

    With the hub split (``hub_split``, :func:`_hub_split`) rows of several vector chunks take the blocks
    too, faster than the CSC kernel from F = 32 to 256. Measured by ``python tools/compare_peers.py
    --family spmm --features 16 64 256`` (figures in docs/performance.md, section 'CPU: what the
    kernels' design choices are worth').
    """
    if (with_arg or (out_chunks != 1 and not hub_split) or g.num_edges < max(1, _BLOCKED_MIN_EDGES)
            or not g.allows_format("csc")):
        return None
    l2 = _cache_bytes()
    gathers_x = op != "copy_rhs" and ufeat_bytes is not None and ufeat_bytes > l2
    # behind the CSC's permutation edge rows are gathered; in source order they stream
    csc_permutes = not (g.has_format("csc") and g.eids_are_identity("csc"))
    gathers_w = (op != "copy_lhs" and edge_row_bytes is not None and g.num_edges * edge_row_bytes > l2
                 and csc_permutes)
    if not (gathers_x or gathers_w):
        return None
    if not csc_rows_sorted(g):
        return None
    what = "ufeat" if gathers_x else "edge rows behind the csc's edge ids"
    size = f"{l2 >> 10} KB" if l2 >= 1024 else f"{l2} bytes"
    return (f"{what} outgrow the L2 cache ({size}) and an output row is one vector: destination "
            f"blocks of the csc in source order, output rows in the cache")


@register_planner("spmm")
def _plan_spmm(g, backend, op="copy_lhs", reduce="sum", format=None, return_arg=False, edge_row_bytes=None,
               ufeat_bytes=None, out_chunks=None):
    g = _graph_of(g, format)
    if _is_packed(g):
        return _packed_plan("spmm", backend, f"spmm_packed_{op}_{reduce}")
    supported = ("csc", "coo", "csr")
    arg = "_arg" if return_arg and reduce in ("max", "min") else ""
    if format is not None:
        check_choice("format", format, supported)
        if not g.allows_format(format):
            raise ValueError(f"argument 'format': the graph does not allow {format!r} (allowed formats: "
                             f"{g.formats()})")
        if format == "csr":
            if backend == "cuda":
                raise ValueError("argument 'format': the cuda backend runs spmm on the 'csc' or the 'coo'; "
                                 "found 'csr'")
            return Plan("spmm", backend, "csr", f"spmm_blocked_{op}_{reduce}{arg}", how_to_build(g, "csr"),
                        ("format='csr' was asked for: destination blocks of the csr, in source order",))
        fmt, reasons = format, [f"format={format!r} was asked for"]
    else:
        with_arg = return_arg and reduce in ("max", "min")
        hubs = (_hub_split(g, op, reduce, with_arg, ufeat_bytes, edge_row_bytes, out_chunks) if backend == "cpu"
                else None)
        why = (_use_blocked(g, op, with_arg, ufeat_bytes, edge_row_bytes, out_chunks, hubs is not None)
               if backend == "cpu" else None)
        if why is not None:
            kernel = f"spmm_blocked_hubs_{op}_{reduce}" if hubs else f"spmm_blocked_{op}_{reduce}{arg}"
            return Plan("spmm", backend, "csc", kernel, how_to_build(g, "csc"), (why,) + ((hubs,) if hubs else ()))
        fmt, reasons = select_format(g, "csc", ("csc", "coo"))
    return Plan("spmm", backend, fmt, f"spmm_{fmt}_{op}_{reduce}{arg}", how_to_build(g, fmt), tuple(reasons))


@holding_graph_lock  # a DynamicGraph: no batch rewrites its arrays or snapshot mid-call
def spmm(g, op: str, reduce: str, ufeat=None, efeat=None, *, return_arg: bool = False, backend=None,
         format=None):
    """Generalized sparse-dense matrix multiplication (message passing with a reducer).

    ``out[v] = reduce over in-edges (u, e, v) of op(ufeat[u], efeat[e])``.

    Parameters
    ----------
    g : Graph
    op : {"add", "sub", "mul", "div", "copy_lhs", "copy_rhs"}
        ``copy_lhs`` reads only ``ufeat`` (DGL's copy_u), ``copy_rhs`` only ``efeat`` (copy_e).
    reduce : {"sum", "max", "min", "mean"}
        ``mean`` is the sum divided by the in-degree; a destination without in-edges gets 0.
    ufeat : ndarray, shape (num_src, ...)
    efeat : ndarray, shape (num_edge_ids, ...), indexed by edge id (num_edge_ids == num_edges unless the
        graph leaves edge ids unused)
        Feature shapes broadcast by NumPy rules after padding the shorter one after axis 0 (DGL's rule),
        so ``(N, D)`` with ``(E, 1)`` is a scalar weight per edge and ``(N, H, F)`` with ``(E, H, 1)`` a
        weight per edge and head. A 1-D array is one scalar per row; the output is then 1-D too.
    return_arg : bool
        For max/min, also return ``(arg_u, arg_e)``: the source node and the edge id that won each output
        element (-1 for a destination without in-edges; None for an operand the op does not read).
    backend : {None, "auto", "cpu", "cuda"}
    format : {None, "csc", "coo", "csr", "packed"}
        Force a path: ``"csc"`` destination-parallel, ``"coo"`` edge-parallel, ``"csr"`` the edges of
        the CSR in destination blocks sized to the L2 cache, in source order (ties go to the lowest
        source), ``"packed"`` straight over a DynamicGraph's packed arrays. By default a measured cost
        model picks (``gk.explain`` says which and why): the CSC kernel, or the same blocks built from
        the CSC when the gathered rows outgrow the L2 cache, an output row is one vector and the CSC
        rows are in source order (results equal the CSC kernel's bit for bit), and the COO when the CSC
        is not allowed; a DynamicGraph runs on its snapshot (built once per change, then reused).
        On a skewed graph, rows of several vectors may also split off the edges of the sources of
        highest out-degree (the hub split; not with arg outputs): each row then reduces its hub edges
        first and the rest after, both in source order, so a sum is deterministic and equals the CSC
        kernel's within rounding, not bit for bit; max and min give the CSC's values (a zero may differ
        in sign).

    Returns
    -------
    out : ndarray, shape (num_dst, ...) — or ``(out, arg_u, arg_e)`` with ``return_arg``.

    Examples
    --------
    >>> import numpy as np, graphkern as gk
    >>> g = gk.Graph.from_coo([0, 1, 2], [2, 2, 0], num_nodes=3)
    >>> x = np.array([[1.0], [2.0], [4.0]])
    >>> gk.spmm(g, "copy_lhs", "sum", x).ravel().tolist()
    [4.0, 0.0, 3.0]
    >>> out, arg_u, _ = gk.spmm(g, "copy_lhs", "max", x, return_arg=True)
    >>> out.ravel().tolist(), arg_u.ravel().tolist()
    ([4.0, 0.0, 2.0], [2, -1, 1])
    """
    g = _graph_of(g, format)
    on_device = _where(g, backend, ufeat, efeat)
    x, w, bcast = _check_spmm(g, op, reduce, ufeat, efeat, on_device)
    with_arg = bool(return_arg) and reduce in ("max", "min")
    if return_arg and not with_arg:
        raise ValueError(f"argument 'return_arg': arg outputs exist for max and min, found reduce={reduce!r}")
    the_plan = plan(g, "spmm", "cuda" if on_device else "cpu", (), op=op, reduce=reduce,
                    format=format, return_arg=with_arg,
                    edge_row_bytes=None if w is None else int(np.prod(w.shape[1:])) * np.dtype(w.dtype).itemsize,
                    ufeat_bytes=None if x is None else x.nbytes,
                    out_chunks=0 if bcast.general else _spmm_cpu.vector_chunks(bcast.A, bcast.B))
    squeeze = (x is None or x.ndim == 1) and (w is None or w.ndim == 1)
    out_shape = (g.num_dst,) + bcast.out_shape
    if on_device:
        from . import _sparse_cuda

        out, arg_u, arg_e = _sparse_cuda.spmm(g, the_plan, op, reduce, x, w, bcast, with_arg)
        shape = (g.num_dst,) if squeeze else out_shape
        out = out.reshape(*shape)
        if with_arg:
            return out, *(a.reshape(*shape) if a is not None else None for a in (arg_u, arg_e))
        return out
    dtype = (x if x is not None else w).dtype
    blocked = the_plan.kernel.startswith("spmm_blocked") and g.num_edges > 0 and bcast.out_len > 0
    # outputs on huge pages when large (graphkern._memory): the next kernel gathers from them. The
    # blocked kernel writes every row's start value itself, so its outputs need no fill.
    shape = (g.num_dst, bcast.out_len)
    out = _memory.empty(shape, dtype) if blocked else _memory.zeros(shape, dtype)
    arg_u = arg_e = None
    if with_arg:
        def new_arg():
            return _memory.empty(shape, g.idtype) if blocked else _memory.full(shape, -1, g.idtype)

        arg_u = new_arg() if op != "copy_rhs" else None
        arg_e = new_arg() if op != "copy_lhs" else None
    if g.num_edges and bcast.out_len:
        x2 = _as_rows(x) if x is not None else _dummy(dtype)
        w2 = _as_rows(w) if w is not None else _dummy(dtype)
        loff = bcast.lhs_offsets if bcast.general else np.zeros(1, np.int64)
        roff = bcast.rhs_offsets if bcast.general else np.zeros(1, np.int64)
        au = arg_u if arg_u is not None else np.zeros((1, 1), g.idtype)
        ae = arg_e if arg_e is not None else np.zeros((1, 1), g.idtype)
        if blocked:
            rows_per_block = _rows_per_block(bcast.out_len * out.itemsize)
            split = the_plan.kernel.startswith("spmm_blocked_hubs")
            hub_rows = _hub_rows(x2.shape[1] * x2.itemsize) if split else 0
            bounds, block_ptr, groups, src, dst, eid, hubs = _blocks(g, the_plan.format, rows_per_block, hub_rows)
            has_eids = True
            # narrow edge rows: put them in the kernel's edge order first, when the blocks would each
            # fetch their lines again, or the hub edges would gather them through the CSC's permutation
            if (w is not None and not with_arg and (bounds.size - 1 >= _EDGE_ROWS_TO_BLOCKS_MIN_BLOCKS or split)
                    and w2.shape[1] * w2.itemsize <= _EDGE_ROWS_TO_BLOCKS_MAX_BYTES):
                slots = _block_slots(g, the_plan.format, rows_per_block, eid, hubs, hub_rows)
                w2 = _spmm_cpu.edge_rows_to_blocks(slots, w2, _memory.empty((g.num_edges, w2.shape[1]), w2.dtype))
                has_eids = False
            chunks = 0 if bcast.general else _spmm_cpu.vector_chunks(bcast.A, bcast.B)
            # an output row of exactly one vector: max/min read-modify-write it unmasked (faster for
            # copy_u_max; sums measured the same or slower); with the hub split every row of whole
            # vectors does (`python tools/compare_peers.py --family spmm`)
            full = ((reduce in ("max", "min") and chunks == 1 and bcast.B == _spmm_cpu.LANES)
                    or (split and bcast.B % _spmm_cpu.LANES == 0))
            # rows of one head and a few vectors: the chunk loop compiled unrolled (see blocked_edges)
            row_chunks = chunks if bcast.A == 1 and 1 < chunks <= _BLOCKED_UNROLLED_CHUNKS else 0
            kernel = _spmm_cpu.spmm_blocked_kernel(op, reduce, bcast.pattern, chunks, full, split, row_chunks,
                                                   has_eids)
            if split:
                hub_ids, hub_indptr, hub_src, hub_eids = hubs
                x_hub = np.take(x2, hub_ids, axis=0)  # the hubs' rows together: they stay in the L2
                hub_edges = hub_src.size
            else:
                hub_indptr, hub_src, hub_eids = np.zeros(1, np.int64), np.zeros(1, src.dtype), np.zeros(1, eid.dtype)
                x_hub, hub_edges = x2[:1], 0
            kernel(bounds, block_ptr, groups, src, dst, eid, has_eids, kept_in_degrees(g), x2, w2, bcast.A, bcast.B,
                   loff, roff, out, au, ae, with_arg, reduce == "mean", hub_indptr, hub_src, hub_eids, x_hub, hub_edges)
        elif the_plan.format == "packed":
            _spmm_packed(g, op, reduce, bcast, with_arg, x2, w2, loff, roff, out, au, ae)
        elif the_plan.format == "csc":
            indptr, indices, eids = g._raw("csc")
            has_eids = not g.eids_are_identity("csc")
            parts = _parts(g, "csc", indptr)
            if bcast.general:
                kernel = _spmm_cpu.spmm_csc_kernel(op, reduce, bcast.pattern)
                kernel(indptr, indices, eids if has_eids else indices, has_eids, parts,
                       x2, w2, bcast.A, bcast.B, loff, roff, out, au, ae, with_arg, reduce == "mean")
            else:
                kernel = _spmm_cpu.spmm_csc_vector_kernel(op, reduce, bcast.pattern,
                                                          _spmm_cpu.vector_chunks(bcast.A, bcast.B))
                kernel(indptr, indices, eids if has_eids else indices, has_eids, parts,
                       x2, w2, bcast.A, bcast.B, out, au, ae, with_arg, reduce == "mean")
        else:
            _spmm_coo(g, op, reduce, bcast, with_arg, x2, w2, loff, roff, out, au, ae)
    if squeeze:
        out_shape = (g.num_dst,)
    out = out.reshape(out_shape)
    if with_arg:
        arg_u = arg_u.reshape(out_shape) if arg_u is not None else None
        arg_e = arg_e.reshape(out_shape) if arg_e is not None else None
        return out, arg_u, arg_e
    return out


def _spmm_packed(dg, op, reduce, bcast, with_arg, x2, w2, loff, roff, out, arg_u, arg_e):
    """Per-thread partial outputs over row ranges of the packed array, combined as on the COO path."""
    import numba

    threads = max(1, min(numba.get_num_threads(), dg.num_edges // 4096 or 1))
    bounds = _spmm_cpu.nnz_balanced_parts(dg._row_off, threads)
    T = bounds.size - 1
    D = bcast.out_len
    is_sum = reduce in ("sum", "mean")
    fill = 0 if is_sum else (-np.inf if reduce == "max" else np.inf)
    idt = np.int64
    part_out = np.full((T, dg.num_dst, D), fill, dtype=out.dtype)
    part_u = np.full((T, dg.num_dst, D), -1, dtype=idt) if with_arg else np.zeros((1, 1, 1), idt)
    part_e = np.full((T, dg.num_dst, D), -1, dtype=idt) if with_arg else np.zeros((1, 1, 1), idt)
    kernel = _spmm_cpu.spmm_packed_kernel(op, reduce, bcast.pattern)
    kernel(dg._keys, dg._eids, dg._row_off, bounds, x2, w2, bcast.A, bcast.B, loff, roff, part_out, part_u, part_e,
           with_arg)
    if is_sum:
        _spmm_cpu.combine_sum(part_out, out)
    else:
        _spmm_cpu.combine_extreme(part_out, part_u, part_e, reduce == "max", with_arg, op != "copy_rhs",
                                  op != "copy_lhs", out, arg_u, arg_e)
    _spmm_cpu.finish_rows(dg._in_deg, reduce == "mean", out, arg_u, arg_e,
                          with_arg and op != "copy_rhs", with_arg and op != "copy_lhs")


def _spmm_coo(g, op, reduce, bcast, with_arg, x2, w2, loff, roff, out, arg_u, arg_e):
    import numba

    src, dst, eids = g._raw("coo")
    has_eids = not g.eids_are_identity("coo")
    threads = max(1, min(numba.get_num_threads(), g.num_edges // 4096 or 1))
    bounds = (np.arange(threads + 1, dtype=np.int64) * g.num_edges) // threads
    D = bcast.out_len
    is_sum = reduce in ("sum", "mean")
    fill = 0 if is_sum else (-np.inf if reduce == "max" else np.inf)
    part_out = np.full((threads, g.num_dst, D), fill, dtype=out.dtype)
    part_u = np.full((threads, g.num_dst, D), -1, dtype=g.idtype) if with_arg else np.zeros((1, 1, 1), g.idtype)
    part_e = np.full((threads, g.num_dst, D), -1, dtype=g.idtype) if with_arg else np.zeros((1, 1, 1), g.idtype)
    kernel = _spmm_cpu.spmm_coo_kernel(op, reduce, bcast.pattern)
    kernel(src, dst, eids if has_eids else src, has_eids, bounds, x2, w2, bcast.A, bcast.B, loff, roff,
           part_out, part_u, part_e, with_arg)
    if is_sum:
        _spmm_cpu.combine_sum(part_out, out)
    else:
        _spmm_cpu.combine_extreme(part_out, part_u, part_e, reduce == "max", with_arg, op != "copy_rhs",
                                  op != "copy_lhs", out, arg_u, arg_e)
    _spmm_cpu.finish_rows(kept_in_degrees(g), reduce == "mean", out, arg_u, arg_e,
                          with_arg and op != "copy_rhs", with_arg and op != "copy_lhs")


# ----------------------------------------------------------------------------------------------- sddmm

def _operand(name, arr, target, g, on_device=False):
    rows = {"u": g.num_src, "v": g.num_dst, "e": g.num_edge_ids}[target]
    what = {"u": "source node", "v": "destination node", "e": _edge_word(g)}[target]
    return _feature(name, arr, rows, what, on_device)


# Output rows up to this many bytes take the blocked SDDMM: wider ones move their output twice and are
# slower than on the CSR (u_add_v at F = 16; at F = 4 the blocks still win).
_SDDMM_BLOCKED_MAX_ROW_BYTES = 16


def _sddmm_blocked(g, op, lhs_target, rhs_target, lhs_bytes, rhs_bytes, out_row_bytes):
    """Why the SDDMM runs over destination blocks, or None (the cost model's measured rule): operands from
    u and v only, a destination-side operand that outgrows the L2 cache, narrow output rows (``dot``'s one
    value per head). u_dot_v on the blocks is several times faster than on the CSR at F = 16 and still
    faster at F = 64 (``python tools/compare_peers.py --family spmm``)."""
    targets = ([lhs_target] if op != "copy_rhs" else []) + ([rhs_target] if op != "copy_lhs" else [])
    if "e" in targets or "v" not in targets or out_row_bytes is None or out_row_bytes > _SDDMM_BLOCKED_MAX_ROW_BYTES:
        return None
    if g.num_edges < max(1, _BLOCKED_MIN_EDGES) or not g.allows_format("csc"):
        return None
    v_bytes = max((b or 0) for t, b in ((lhs_target, lhs_bytes), (rhs_target, rhs_bytes)) if t == "v")
    l2 = _cache_bytes()
    if v_bytes <= l2:
        return None
    return ("the destination operand outgrows the L2 cache: destination blocks of the csc in source order "
            "(destination rows in the cache), then the values moved to edge-id order")


@register_planner("sddmm")
def _plan_sddmm(g, backend, op="dot", lhs_target="u", rhs_target="v", format=None, lhs_bytes=None, rhs_bytes=None,
                out_row_bytes=None):
    g = _graph_of(g, format)
    if _is_packed(g):
        return _packed_plan("sddmm", backend, f"sddmm_packed_{lhs_target}_{op}_{rhs_target}")
    if backend == "cpu" and format is None:
        why = _sddmm_blocked(g, op, lhs_target, rhs_target, lhs_bytes, rhs_bytes, out_row_bytes)
        if why is not None:
            return Plan("sddmm", backend, "csc", f"sddmm_blocked_{lhs_target}_{op}_{rhs_target}",
                        how_to_build(g, "csc"), (why,))
    supported = ("coo", "csr")
    if backend == "cuda":
        # the GPU kernel walks an edge list: the COO, or a compressed format expanded once and cached
        if format is not None:
            check_choice("format", format, ("coo", "csr", "csc"))
            if not g.allows_format(format):
                raise ValueError(f"argument 'format': the graph does not allow {format!r} (allowed formats: "
                                 f"{g.formats()})")
            fmt, reasons = format, [f"format={format!r} was asked for"]
        else:
            fmt, reasons = select_format(g, "coo", ("coo", "csr", "csc"))
        return Plan("sddmm", backend, fmt, f"sddmm_coo_{lhs_target}_{op}_{rhs_target}", how_to_build(g, fmt),
                    tuple(reasons) + (("edge-parallel over the edge list (the compressed rows expanded once)"
                                       if fmt != "coo" else "edge-parallel over the edge list"),))
    if format is not None:
        check_choice("format", format, supported)
        if not g.allows_format(format):
            raise ValueError(f"argument 'format': the graph does not allow {format!r} (allowed formats: "
                             f"{g.formats()})")
        fmt, reasons = format, [f"format={format!r} was asked for"]
    else:
        fmt, reasons = select_format(g, "csr", supported, _sddmm_cost_model, op=op, lhs_target=lhs_target,
                                     rhs_target=rhs_target)
    return Plan("sddmm", backend, fmt, f"sddmm_{fmt}_{lhs_target}_{op}_{rhs_target}", how_to_build(g, fmt),
                tuple(reasons))


def _sddmm_cost_model(g, candidates, op, lhs_target, rhs_target):
    """CSR (source-parallel) keeps ``x[u]`` hot across a row; COO writes ``out`` in edge-id order.

    Measured (scale-18 Kronecker, F = 16 and 64, 2 threads): when the COO is in edge-id order and no
    operand is a source row, COO is as fast and needs no conversion; otherwise CSR order wins because
    each source row is loaded once for all its out-edges. Among created formats the model prefers the
    one whose eids are the identity (sequential output writes).
    """
    reads_u = "u" in (lhs_target, rhs_target)
    if "csr" in candidates and (reads_u or not g.has_format("coo")):
        return "csr"
    if "coo" in candidates and g.has_format("coo"):
        return "coo"
    return None


@holding_graph_lock  # a DynamicGraph: no batch rewrites its arrays or snapshot mid-call
def sddmm(g, op: str, lhs, rhs, lhs_target: str = "u", rhs_target: str = "v", *, backend=None, format=None):
    """Generalized sampled dense-dense matrix multiplication: one value per edge.

    ``out[e] = op(L[e], R[e])`` where ``L[e]`` is ``lhs[src(e)]``, ``lhs[dst(e)]`` or ``lhs[e]`` for
    ``lhs_target`` ``"u"``, ``"v"`` or ``"e"`` (``R`` likewise). ``dot`` reduces the last axis (which must
    be equal; the output keeps it with length 1); ``copy_lhs``/``copy_rhs`` read one operand. Broadcasting
    as in :func:`spmm`. The output is indexed by edge id.

    Examples
    --------
    >>> import numpy as np, graphkern as gk
    >>> g = gk.Graph.from_coo([0, 1], [1, 0])
    >>> x = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> gk.sddmm(g, "dot", x, x, "u", "v").ravel().tolist()
    [11.0, 11.0]
    """
    g = _graph_of(g, format)
    check_choice("op", op, SDDMM_OPS)
    check_choice("lhs_target", lhs_target, TARGETS)
    check_choice("rhs_target", rhs_target, TARGETS)
    on_device = _where(g, backend, lhs, rhs)
    uses_l, uses_r = op != "copy_rhs", op != "copy_lhs"
    if uses_l and lhs is None:
        raise ValueError(f"argument 'lhs': op '{op}' needs it, found None")
    if uses_r and rhs is None:
        raise ValueError(f"argument 'rhs': op '{op}' needs it, found None")
    L = _operand("lhs", lhs, lhs_target, g, on_device) if uses_l else None
    R = _operand("rhs", rhs, rhs_target, g, on_device) if uses_r else None
    if L is not None and R is not None and L.dtype != R.dtype:
        raise TypeError(f"arguments 'lhs' and 'rhs': expected the same dtype, found {L.dtype} and {R.dtype}")
    bcast = _broadcast.analyse(op, _feature_shape(L) if L is not None else (),
                               _feature_shape(R) if R is not None else (), "lhs", "rhs")
    the_plan = plan(g, "sddmm", "cuda" if on_device else "cpu", (), op=op, lhs_target=lhs_target,
                    rhs_target=rhs_target, format=format, lhs_bytes=None if L is None else L.nbytes,
                    rhs_bytes=None if R is None else R.nbytes,
                    out_row_bytes=bcast.out_len * np.dtype((L if L is not None else R).dtype).itemsize)
    squeeze = (L is None or L.ndim == 1) and (R is None or R.ndim == 1) and op != "dot"
    if on_device:
        from . import _sparse_cuda

        out = _sparse_cuda.sddmm(g, the_plan, op, L, R, lhs_target, rhs_target, bcast)
        return out.reshape(*((g.num_edge_ids,) if squeeze else (g.num_edge_ids,) + bcast.out_shape))
    dtype = (L if L is not None else R).dtype
    # unused edge ids (a graph whose id space exceeds its edges) read 0
    alloc = _memory.empty if g.num_edge_ids == g.num_edges else _memory.zeros
    out = alloc((g.num_edge_ids, bcast.out_len), dtype)
    if g.num_edges and bcast.out_len:
        L2 = _as_rows(L) if L is not None else _dummy(dtype)
        R2 = _as_rows(R) if R is not None else _dummy(dtype)
        loff = bcast.lhs_offsets if bcast.general else np.zeros(1, np.int64)
        roff = bcast.rhs_offsets if bcast.general else np.zeros(1, np.int64)
        targets = _sddmm_cpu.target_codes(lhs_target if uses_l else "u", rhs_target if uses_r else "u")
        if the_plan.format == "packed":
            kernel = _sddmm_cpu.sddmm_packed_kernel(op, bcast.pattern)
            kernel(g._keys, g._eids, g._row_off, _row_parts(g), L2, R2, targets[0], targets[1], bcast.A, bcast.B,
                   bcast.reduce_size, loff, roff, out)
            shape = (g.num_edge_ids,) if squeeze else (g.num_edge_ids,) + bcast.out_shape
            return out.reshape(shape)
        if the_plan.kernel.startswith("sddmm_blocked"):
            _sddmm_blocked_run(g, op, bcast, L2, R2, targets, loff, roff, out)
            shape = (g.num_edge_ids,) if squeeze else (g.num_edge_ids,) + bcast.out_shape
            return out.reshape(shape)
        kernel = _sddmm_cpu.sddmm_kernel(op, bcast.pattern, the_plan.format)
        a, b, eids = g._raw(the_plan.format)
        has_eids = not g.eids_are_identity(the_plan.format)
        if the_plan.format == "csr":
            bounds = _parts(g, "csr", a)
        else:
            import numba

            parts = max(1, numba.get_num_threads() * _PARTS_PER_THREAD)
            bounds = (np.arange(parts + 1, dtype=np.int64) * g.num_edges) // parts
        kernel(a, b, eids if has_eids else b, has_eids, bounds, L2, R2, targets[0], targets[1], bcast.A, bcast.B,
               bcast.reduce_size, loff, roff, out)
    shape = (g.num_edge_ids,) if squeeze else (g.num_edge_ids,) + bcast.out_shape
    return out.reshape(shape)


def _sddmm_blocked_run(g, op, bcast, L2, R2, targets, loff, roff, out):
    """The blocked SDDMM: values in block order into a scratch array, then moved to edge-id order."""
    v_rows = L2 if targets[0] == 1 else R2
    rows_per_block = _rows_per_block(v_rows.shape[1] * v_rows.itemsize)
    _, block_ptr, groups, src, dst, eid, _ = _blocks(g, "csc", rows_per_block)
    slots = _block_slots(g, "csc", rows_per_block, eid)
    rows = _memory.empty((g.num_edges, bcast.out_len), out.dtype)
    kernel = _sddmm_cpu.sddmm_blocked_kernel(op, bcast.pattern, *("uv"[t] for t in targets))
    kernel(groups, block_ptr, src, dst, L2, R2, bcast.A, bcast.B, bcast.reduce_size, loff, roff, rows)
    _sddmm_cpu.rows_to_edge_order(slots, rows, out)


# ---------------------------------------------------------------------------------------- edge softmax

@register_planner("edge_softmax")
def _plan_edge_softmax(g, backend, norm_by="dst"):
    """Rows of the CSC (CSR for norm_by="src") when they hold edges in edge-id order; otherwise, on a
    graph whose edge ids follow another created format and whose average degree is at least
    EDGE_ORDER_CHUNKS, the edge-order kernel.

    On a graph whose edge ids follow the CSR, the CSC reaches the logits through a permutation, and the
    edge-order kernel is several times faster than the row kernel, faster again when all logits lie
    within its one-shift range (``python tools/compare_peers.py --family spmm``, the edge softmax rows).
    """
    g = _graph_of(g)  # a DynamicGraph runs as its snapshot
    fmt = "csc" if norm_by == "dst" else "csr"
    num_nodes = g.num_dst if norm_by == "dst" else g.num_src
    order_fmt = next((f for f in ("coo", "csr" if norm_by == "dst" else "csc") if g.eids_are_identity(f)), None)
    dense_enough = g.num_edges >= _softmax_cpu.EDGE_ORDER_CHUNKS * max(num_nodes, 1)
    if backend == "cpu" and not g.eids_are_identity(fmt) and order_fmt is not None and dense_enough:
        return Plan("edge_softmax", backend, order_fmt, "edge_softmax_edge_order", None,
                    (f"edge ids follow the {order_fmt}: stream edges in id order, reduce into per-node arrays",))
    if not g.allows_format(fmt):
        raise ValueError(f"argument 'g': edge_softmax(norm_by={norm_by!r}) needs the {fmt} format, which this "
                         f"graph does not allow ({g.formats()})")
    return Plan("edge_softmax", backend, fmt, f"edge_softmax_{fmt}", how_to_build(g, fmt),
                (f"normalising over {'in' if norm_by == 'dst' else 'out'}-edges needs rows by {norm_by}",))


@holding_graph_lock  # a DynamicGraph: no batch rewrites its arrays or snapshot mid-call
def edge_softmax(g, logits, norm_by: str = "dst", *, backend=None):
    """Softmax of edge logits over the in-edges of each destination (``norm_by="dst"``) or the
    out-edges of each source (``"src"``), one fused pass per row, for every head at once.

    ``logits`` has shape ``(E,)``, ``(E, H)`` or ``(E, H, 1)`` and is indexed by edge id; the result has
    the same shape. Rows are computed stably (the row maximum is subtracted before ``exp``).

    Examples
    --------
    >>> import numpy as np, graphkern as gk
    >>> g = gk.Graph.from_coo([0, 1, 2], [2, 2, 0])
    >>> a = gk.edge_softmax(g, np.log(np.array([1.0, 3.0, 5.0])))
    >>> np.round(a, 3).tolist()
    [0.25, 0.75, 1.0]
    """
    g = _graph_of(g)  # a DynamicGraph runs as its snapshot
    check_choice("norm_by", norm_by, ("dst", "src"))
    on_device = _where(g, backend, logits)
    z = _feature("logits", logits, g.num_edge_ids, _edge_word(g), on_device)
    the_plan = plan(g, "edge_softmax", "cuda" if on_device else "cpu", (), norm_by=norm_by)
    if on_device:
        from . import _sparse_cuda

        return _sparse_cuda.edge_softmax(g, the_plan, z)
    z2 = _as_rows(z)
    out = (_memory.empty if g.num_edge_ids == g.num_edges else _memory.zeros)(z2.shape, z2.dtype)  # unused ids: 0
    if g.num_edges and z2.shape[1]:
        keys = _edge_order_keys(g, norm_by) if the_plan.kernel == "edge_softmax_edge_order" else None
        if keys is not None:
            E = g.num_edges  # slots are edge ids here, so the first E rows are the edges
            _softmax_cpu.edge_softmax_edge_order(keys, g.num_dst if norm_by == "dst" else g.num_src, z2[:E],
                                                 out[:E])
        else:
            fmt = the_plan.format
            indptr, _, eids = g._raw(fmt)
            has_eids = not g.eids_are_identity(fmt)
            _softmax_cpu.edge_softmax_rows(indptr, eids if has_eids else indptr, has_eids, _parts(g, fmt, indptr),
                                           z2, out, _softmax_cpu.POW2)
    return out.reshape(z.shape)


def _edge_order_keys(g, norm_by):
    """The node each edge is normalised over, in edge-id order, from a format whose slots are edge ids."""
    if g.eids_are_identity("coo"):
        src, dst, _ = g._raw("coo")
        return dst if norm_by == "dst" else src
    fmt = "csr" if norm_by == "dst" else "csc"  # rows are the other endpoint; indices are the keys
    if g.eids_are_identity(fmt):
        return g._raw(fmt)[1]
    return None
