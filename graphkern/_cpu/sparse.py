"""The CPU runs of :func:`graphkern.spmm`, :func:`graphkern.sddmm` and :func:`graphkern.edge_softmax`.

graphkern.sparse validates every input and plans the call (graphkern._sparse_plan); each function here
takes that validated, planned call (the graph, the plan and the prepared operands), allocates the outputs
and runs the plan's compiled kernel (:mod:`graphkern.kernels.cpu`), with the data derived from the graph
for it kept on the graph (graphkern._sparse_caches). Outputs are host arrays of one row per destination
(spmm) or per edge id (sddmm), ``(rows, D)``: the front end gives them the call's shape. The CUDA twin is
``graphkern._cuda.sparse``, with the same functions and parameters.
"""

from __future__ import annotations

import numpy as np

from .. import _memory, tuning
from .. import _sparse_caches as _caches
from .._fair_share import fair_share
from ..dispatch import Kernel, kept_in_degrees
from ..kernels.cpu import blocks as _blocks_cpu
from ..kernels.cpu import edge_softmax as _softmax_cpu
from ..kernels.cpu import sddmm as _sddmm_cpu
from ..kernels.cpu import spmm as _spmm_cpu
from ..kernels.cpu import spmm_blocked as _spmm_blocked_cpu
from ..kernels.cpu.partition import nnz_balanced_row_bounds

__all__ = ["spmm", "sddmm", "edge_softmax"]

# The blocked kernel compiles the chunk loop of rows up to this many vectors unrolled, one compile per width
# (a compile-time property of the kernels, not a knob: each width is its own compiled loop).
_BLOCKED_UNROLLED_CHUNKS = 4


def _as_rows(arr: np.ndarray) -> np.ndarray:
    """2-D view ``(rows, features)`` of a contiguous feature array (no copy)."""
    return arr.reshape(arr.shape[0], -1) if arr.shape[0] else arr.reshape(0, max(1, int(np.prod(arr.shape[1:]))))


def _dummy(dtype) -> np.ndarray:
    """The placeholder of an operand the op does not read (the kernels never index it)."""
    return np.zeros((1, 1), dtype=dtype)


# ------------------------------------------------------------------------------------------------ spmm

def spmm(g, the_plan, op, reduce, x, w, bcast, with_arg):
    """``(out, arg_u, arg_e)`` of shape ``(num_dst, D)`` (an arg output is None for an operand the op does
    not read, both are None without ``with_arg``); ``x``/``w`` are the checked operands or None."""
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
        x2 = _as_rows(x) if x is not None else _dummy(dtype)
        w2 = _as_rows(w) if w is not None else _dummy(dtype)
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
    return out, arg_u, arg_e


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

def sddmm(g, the_plan, op, L, R, lhs_target, rhs_target, bcast):
    """``out`` of shape ``(num_edge_ids, D)`` (unused edge ids hold 0); ``L``/``R`` are the checked
    operands or None."""
    dtype = (L if L is not None else R).dtype
    # unused edge ids (a graph whose id space exceeds its edges) read 0
    alloc = _memory.empty if g.num_edge_ids == g.num_edges else _memory.zeros
    out = alloc((g.num_edge_ids, bcast.out_len), dtype)
    if g.num_edges and bcast.out_len:
        L2 = _as_rows(L) if L is not None else _dummy(dtype)
        R2 = _as_rows(R) if R is not None else _dummy(dtype)
        loff = bcast.lhs_offsets if bcast.general else np.zeros(1, np.int64)
        roff = bcast.rhs_offsets if bcast.general else np.zeros(1, np.int64)
        targets = _sddmm_cpu.target_codes(lhs_target if L is not None else "u", rhs_target if R is not None else "u")
        if the_plan.kernel is Kernel.SDDMM_PACKED:
            kernel = _sddmm_cpu.sddmm_packed_kernel(op, bcast.pattern)
            kernel(g._keys, g._eids, g._row_off, _caches.packed_row_bounds(g), L2, R2, targets[0], targets[1], bcast.A,
                   bcast.B, bcast.reduce_size, loff, roff, out)
            return out
        if the_plan.kernel is Kernel.SDDMM_BLOCKED:
            _sddmm_blocked_run(g, op, bcast, L2, R2, targets, loff, roff, out)
            return out
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
    return out


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

def edge_softmax(g, the_plan, z):
    """Softmax of ``z`` (``(num_edge_ids, ...)``) over the rows the plan normalises by, in ``z``'s shape."""
    z2 = _as_rows(z)
    out = (_memory.empty if g.num_edge_ids == g.num_edges else _memory.zeros)(z2.shape, z2.dtype)  # unused ids: 0
    if g.num_edges and z2.shape[1]:
        _run_edge_softmax(g, the_plan, the_plan.params["norm_by"], z2, out)
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
