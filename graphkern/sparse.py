"""The generalized sparse kernels: :func:`spmm`, :func:`sddmm` and :func:`edge_softmax` (DGL semantics).

``spmm(g, op, reduce, ufeat, efeat)``: ``out[v] = reduce over edges (u, e, v) of op(ufeat[u], efeat[e])``.
``sddmm(g, op, lhs, rhs, lhs_target, rhs_target)``: ``out[e] = op(L[e], R[e])``, each operand taken from the
source (``"u"``), destination (``"v"``) or edge (``"e"``) of edge ``e``.
``edge_softmax(g, logits)``: softmax of edge logits over the in-edges of each destination.

Where DGL is inconsistent graphkern chooses (docs/design.md, section 'Semantics of the sparse
kernels'): a destination without in-edges gets
0 for every reducer and arg outputs -1; max/min ties go to the first edge in CSC order on every path;
sums over a row are deterministic; NaN never wins a max/min. Edge features are always indexed by edge id.
Inputs are validated first, once, before any compiled code runs (graphkern._sparse_inputs); the planners
(graphkern._sparse_plan) pick the format and the kernel, and the data derived from a graph for them is
kept on it (graphkern._sparse_caches). This module runs the plan.
"""

from __future__ import annotations

import numpy as np

from . import _memory, tuning
from . import _sparse_caches as _caches
from ._fair_share import fair_share
from ._sparse_inputs import as_rows, dummy, graph_of
from ._sparse_plan import TARGETS, edge_softmax_call, sddmm_call, spmm_call
from .dispatch import Kernel, kept_in_degrees
from .graph.dynamic import holding_graph_lock
from .kernels.cpu import blocks as _blocks_cpu
from .kernels.cpu import edge_softmax as _softmax_cpu
from .kernels.cpu import sddmm as _sddmm_cpu
from .kernels.cpu import spmm as _spmm_cpu
from .kernels.cpu import spmm_blocked as _spmm_blocked_cpu
from .kernels.cpu.partition import nnz_balanced_row_bounds

__all__ = ["spmm", "sddmm", "edge_softmax", "SPMM_OPS", "SPMM_REDUCERS", "SDDMM_OPS", "TARGETS"]

SPMM_OPS = _spmm_cpu.OPS
SPMM_REDUCERS = _spmm_cpu.REDUCERS
SDDMM_OPS = _sddmm_cpu.OPS
# graphkern.torch resolves a kernel's graph argument (Graph or DynamicGraph) as the kernels do
_graph_of = graph_of

# The blocked kernel compiles the chunk loop of rows up to this many vectors unrolled, one compile per width
# (a compile-time property of the kernels, not a knob: each width is its own compiled loop).
_BLOCKED_UNROLLED_CHUNKS = 4


# ------------------------------------------------------------------------------------------------ spmm

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
    g, on_device, x, w, bcast, with_arg, the_plan = spmm_call(g, op, reduce, ufeat, efeat, return_arg, backend,
                                                              format)
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
    split = the_plan.kernel is Kernel.SPMM_BLOCKED_HUBS
    blocked = split or the_plan.kernel is Kernel.SPMM_BLOCKED
    # with no edge or an empty output row nothing runs: the outputs are their start values
    blocked = blocked and g.num_edges > 0 and bcast.out_len > 0
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
        x2 = as_rows(x) if x is not None else dummy(dtype)
        w2 = as_rows(w) if w is not None else dummy(dtype)
        loff = bcast.lhs_offsets if bcast.general else np.zeros(1, np.int64)
        roff = bcast.rhs_offsets if bcast.general else np.zeros(1, np.int64)
        au = arg_u if arg_u is not None else np.zeros((1, 1), g.idtype)
        ae = arg_e if arg_e is not None else np.zeros((1, 1), g.idtype)
        if blocked:
            rows_per_block = _caches.block_height(bcast.out_len * out.itemsize)
            hub_rows = _caches.hub_capacity(x2.shape[1] * x2.itemsize) if split else 0
            bounds, block_ptr, groups, src, dst, eid, hubs = _caches.dst_blocks(g, the_plan.format, rows_per_block,
                                                                                hub_rows)
            has_eids = True
            # narrow edge rows: put them in the kernel's edge order first, when the blocks would each
            # fetch their lines again, or the hub edges would gather them through the CSC's permutation
            # narrow edge rows read through the ids in block order fetch nearly every line of the edge
            # array once per block: from enough blocks on (or for the hub split) one pass reorders them
            knobs = tuning.current()
            if (w is not None and not with_arg
                    and (bounds.size - 1 >= knobs.edge_rows_to_blocks_min_blocks or split)
                    and w2.shape[1] * w2.itemsize <= knobs.edge_rows_to_blocks_max_bytes):
                slots = _caches.block_slots(g, the_plan.format, rows_per_block, eid, hubs, hub_rows)
                w2 = _blocks_cpu.edge_rows_to_blocks(slots, w2, _memory.empty((g.num_edges, w2.shape[1]), w2.dtype))
                has_eids = False
            chunks = 0 if bcast.general else _spmm_cpu.vector_chunks(bcast.A, bcast.B)
            # an output row of exactly one vector: max/min read-modify-write it unmasked (faster for
            # copy_u_max; sums measured the same or slower); with the hub split every row of whole
            # vectors does (`python tools/compare_peers.py --family spmm`)
            full = ((reduce in ("max", "min") and chunks == 1 and bcast.B == _spmm_cpu.LANES)
                    or (split and bcast.B % _spmm_cpu.LANES == 0))
            # rows of one head and a few vectors: the chunk loop compiled unrolled (see blocked_edges)
            row_chunks = chunks if bcast.A == 1 and 1 < chunks <= _BLOCKED_UNROLLED_CHUNKS else 0
            kernel = _spmm_blocked_cpu.spmm_blocked_kernel(op, reduce, bcast.pattern, chunks, full, split,
                                                           row_chunks, has_eids)
            if split:
                hub_ids, hub_indptr, hub_src, hub_eids = hubs
                x_hub = np.take(x2, hub_ids, axis=0)  # the hubs' rows together: they stay in the L2
                hub_edges = hub_src.size
            else:
                hub_indptr, hub_src, hub_eids = np.zeros(1, np.int64), np.zeros(1, src.dtype), np.zeros(1, eid.dtype)
                x_hub, hub_edges = x2[:1], 0
            kernel(bounds, block_ptr, groups, src, dst, eid, has_eids, kept_in_degrees(g), x2, w2, bcast.A, bcast.B,
                   loff, roff, out, au, ae, with_arg, reduce == "mean", hub_indptr, hub_src, hub_eids, x_hub, hub_edges)
        elif the_plan.kernel is Kernel.SPMM_PACKED:
            _spmm_packed(g, op, reduce, bcast, with_arg, x2, w2, loff, roff, out, au, ae)
        elif the_plan.kernel in (Kernel.SPMM_CSC, Kernel.SPMM_CSC_VECTOR):
            indptr, indices, eids = g._raw("csc")
            has_eids = not g.eids_are_identity("csc")
            parts = _caches.row_bounds(g, "csc", indptr)
            if the_plan.kernel is Kernel.SPMM_CSC:  # general broadcast: offset tables
                kernel = _spmm_cpu.spmm_csc_kernel(op, reduce, bcast.pattern)
                kernel(indptr, indices, eids if has_eids else indices, has_eids, parts,
                       x2, w2, bcast.A, bcast.B, loff, roff, out, au, ae, with_arg, reduce == "mean")
            else:
                kernel = _spmm_cpu.spmm_csc_vector_kernel(op, reduce, bcast.pattern,
                                                          _spmm_cpu.vector_chunks(bcast.A, bcast.B))
                kernel(indptr, indices, eids if has_eids else indices, has_eids, parts,
                       x2, w2, bcast.A, bcast.B, out, au, ae, with_arg, reduce == "mean")
        elif the_plan.kernel is Kernel.SPMM_COO:
            _spmm_coo(g, op, reduce, bcast, with_arg, x2, w2, loff, roff, out, au, ae)
        else:
            raise AssertionError(f"spmm has no cpu path for the plan {the_plan}")
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
    bounds = nnz_balanced_row_bounds(dg._row_off, threads)
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
    g, on_device, L, R, bcast, the_plan = sddmm_call(g, op, lhs, rhs, lhs_target, rhs_target, backend, format)
    uses_l, uses_r = L is not None, R is not None
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
        L2 = as_rows(L) if L is not None else dummy(dtype)
        R2 = as_rows(R) if R is not None else dummy(dtype)
        loff = bcast.lhs_offsets if bcast.general else np.zeros(1, np.int64)
        roff = bcast.rhs_offsets if bcast.general else np.zeros(1, np.int64)
        targets = _sddmm_cpu.target_codes(lhs_target if uses_l else "u", rhs_target if uses_r else "u")
        if the_plan.kernel is Kernel.SDDMM_PACKED:
            kernel = _sddmm_cpu.sddmm_packed_kernel(op, bcast.pattern)
            kernel(g._keys, g._eids, g._row_off, _caches.packed_row_bounds(g), L2, R2, targets[0], targets[1], bcast.A,
                   bcast.B, bcast.reduce_size, loff, roff, out)
            shape = (g.num_edge_ids,) if squeeze else (g.num_edge_ids,) + bcast.out_shape
            return out.reshape(shape)
        if the_plan.kernel is Kernel.SDDMM_BLOCKED:
            _sddmm_blocked_run(g, op, bcast, L2, R2, targets, loff, roff, out)
            shape = (g.num_edge_ids,) if squeeze else (g.num_edge_ids,) + bcast.out_shape
            return out.reshape(shape)
        if the_plan.kernel not in (Kernel.SDDMM_CSR, Kernel.SDDMM_COO):
            raise AssertionError(f"sddmm has no cpu path for the plan {the_plan}")
        kernel = _sddmm_cpu.sddmm_kernel(op, bcast.pattern, the_plan.format)
        a, b, eids = g._raw(the_plan.format)
        has_eids = not g.eids_are_identity(the_plan.format)
        if the_plan.format == "csr":
            bounds = _caches.row_bounds(g, "csr", a)
        else:
            import numba

            parts = max(1, numba.get_num_threads() * tuning.current().parts_per_thread)
            bounds = (np.arange(parts + 1, dtype=np.int64) * g.num_edges) // parts
        kernel(a, b, eids if has_eids else b, has_eids, bounds, L2, R2, targets[0], targets[1], bcast.A, bcast.B,
               bcast.reduce_size, loff, roff, out)
    shape = (g.num_edge_ids,) if squeeze else (g.num_edge_ids,) + bcast.out_shape
    return out.reshape(shape)


def _sddmm_blocked_run(g, op, bcast, L2, R2, targets, loff, roff, out):
    """The blocked SDDMM: values in block order into a scratch array, then moved to edge-id order."""
    v_rows = L2 if targets[0] == 1 else R2
    rows_per_block = _caches.block_height(v_rows.shape[1] * v_rows.itemsize)
    _, block_ptr, groups, src, dst, eid, _ = _caches.dst_blocks(g, "csc", rows_per_block)
    slots = _caches.block_slots(g, "csc", rows_per_block, eid)
    rows = _memory.empty((g.num_edges, bcast.out_len), out.dtype)
    kernel = _sddmm_cpu.sddmm_blocked_kernel(op, bcast.pattern, *("uv"[t] for t in targets))
    kernel(groups, block_ptr, src, dst, L2, R2, bcast.A, bcast.B, bcast.reduce_size, loff, roff, rows)
    _sddmm_cpu.rows_to_edge_order(slots, rows, out)


# ---------------------------------------------------------------------------------------- edge softmax

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
    g, on_device, z, the_plan = edge_softmax_call(g, logits, norm_by, backend)  # a DynamicGraph: its snapshot
    if on_device:
        from . import _sparse_cuda

        return _sparse_cuda.edge_softmax(g, the_plan, z)
    z2 = as_rows(z)
    out = (_memory.empty if g.num_edge_ids == g.num_edges else _memory.zeros)(z2.shape, z2.dtype)  # unused ids: 0
    if g.num_edges and z2.shape[1]:
        _run_edge_softmax(g, the_plan, norm_by, z2, out)
    return out.reshape(z.shape)


def _run_edge_softmax(g, the_plan, norm_by, z2, out):
    """The cpu edge softmax into ``out``: a few row passes, under fair_share (graphkern._fair_share)."""
    with fair_share():
        if the_plan.kernel is Kernel.EDGE_SOFTMAX_EDGE_ORDER:
            keys = _edge_order_keys(g, the_plan.format, norm_by)
            E = g.num_edges  # slots are edge ids here, so the first E rows are the edges
            _softmax_cpu.edge_softmax_edge_order(keys, g.num_dst if norm_by == "dst" else g.num_src, z2[:E],
                                                 out[:E])
        else:
            fmt = the_plan.format
            indptr, _, eids = g._raw(fmt)
            has_eids = not g.eids_are_identity(fmt)
            _softmax_cpu.edge_softmax_rows(indptr, eids if has_eids else indptr, has_eids,
                                           _caches.row_bounds(g, fmt, indptr), z2, out, _softmax_cpu.POW2)


def _edge_order_keys(g, fmt, norm_by):
    """The node each edge is normalised over, in edge-id order, from ``fmt``, a format whose slots are
    edge ids: the COO's column, or the indices of the CSR (``norm_by="dst"``) or CSC (``"src"``), whose
    rows are the other endpoint."""
    if fmt == "coo":
        src, dst, _ = g._raw("coo")
        return dst if norm_by == "dst" else src
    return g._raw(fmt)[1]
