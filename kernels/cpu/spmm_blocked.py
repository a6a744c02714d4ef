"""The cache-blocked g-SpMM on the CPU (``spmm_blocked``): destination blocks in source order.

The edges come in destination blocks sized to half the L2 cache, in source order within a block
(:func:`graphkern.kernels.cpu.blocks.destination_blocks`): each edge adds into its output row in the
cache while ``x`` streams in order, optionally after the hub sources' edges were split off and reduced
in registers (:func:`graphkern.kernels.cpu.blocks.split_hub_edges`). The cost model
(graphkern._sparse_plan) takes it when ``x`` outgrows the L2; with CSC rows in source order its results
equal the CSC kernels' (kernels/cpu/spmm.py) bit for bit. Kernels trust their inputs.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, prange

from ._simd import vfull, vgt, vint, vload, vlt, vmask, vmax, vmin, vselect, vstore, vzeros
from ._spmm_common import (
    LANES,
    accumulate_edge,
    kernel_constants,
    kernel_family,
    stride_for,
    vector_message,
)


@njit(inline="always")
def blocked_edge_chunk(OP, USE_X, USE_W, LB, RB, FULL, IS_SUM, IS_MAX, x, w, u, e, v, a, b0, B, la, ra, out, arg_u,
                       arg_e, with_arg):
    """Edge ``(u, e, v)`` into chunk ``(a, b0)`` of output row ``v``: a read-modify-write in the cache (the
    leading upper-case arguments fold as constants)."""
    mask = vmask(LANES if FULL else min(LANES, B - b0), LANES)
    col = a * B + b0
    val = vector_message(OP, USE_X, USE_W, LB, RB, x, w, u, e, a, b0, la, ra, mask)
    acc = vload(out, v, col, mask)
    if IS_SUM:
        vstore(out, v, col, acc + val, mask)
    elif not with_arg:
        vstore(out, v, col, vmax(acc, val) if IS_MAX else vmin(acc, val), mask)
    else:
        wins = vgt(val, acc) if IS_MAX else vlt(val, acc)
        vstore(out, v, col, vselect(wins, val, acc), mask)
        if USE_X:
            vstore(arg_u, v, col, vselect(wins, vint(arg_u, u, LANES), vload(arg_u, v, col, mask)), mask)
        if USE_W:
            vstore(arg_e, v, col, vselect(wins, vint(arg_e, e, LANES), vload(arg_e, v, col, mask)), mask)


@njit(inline="always")
def blocked_edges(OP, USE_X, USE_W, LB, RB, GENERAL, IS_SUM, IS_MAX, FULL, WIDE, ROW_CHUNKS, HAS_EIDS, lo, hi, src,
                  dst, eids, hub_edges, x, w, A, B, la, ra, loff, roff, out, arg_u, arg_e, with_arg):
    """Edges ``lo:hi`` of the blocks, each read-modify-writing its output row; without ids, ``w`` is in
    the kernel's edge order (edge_rows_to_blocks). The upper-case arguments fold as constants:
    module-level functions rather than closures, since a closure over another compiled function gives
    the kernel a cache key that changes every process (Numba would compile it again each time).

    The chunks of a row step by ``(a, b0)``: a division per chunk and edge (chunk_of) was markedly
    slower. Rows of one head and a few vectors (``ROW_CHUNKS``, a compile-time count) run the chunks
    unrolled, faster than a run-time chunk loop. Whether ``w`` is read through the ids is a constant too:
    as a run-time flag LLVM kept its branch in the edge loop, with registers spilled around it. The edge
    arrays are indexed unsigned: a signed index gets a negative-index fix-up per load. Each of these
    measured by ``python tools/compare_peers.py --family spmm`` (figures in docs/performance.md).
    (At most 30 arguments: past that CPython passes them as ``*args``, which Numba cannot inline.)
    """
    if GENERAL:
        args_u = arg_u.reshape((1,) + arg_u.shape)
        args_e = arg_e.reshape((1,) + arg_e.shape)
        for j in range(lo, hi):
            k = np.uint64(j)
            e = eids[k] if HAS_EIDS else hub_edges + j
            accumulate_edge(OP, USE_X, USE_W, LB, RB, GENERAL, IS_SUM, IS_MAX, x, w, src[k], e, dst[k], A, B, la, ra,
                            loff, roff, out, args_u, args_e, 0, with_arg)
    elif ROW_CHUNKS:
        for j in range(lo, hi):
            k = np.uint64(j)
            e = eids[k] if HAS_EIDS else hub_edges + j
            u = src[k]
            v = dst[k]
            for c in range(ROW_CHUNKS):  # a compile-time count: LLVM unrolls it
                blocked_edge_chunk(OP, USE_X, USE_W, LB, RB, FULL, IS_SUM, IS_MAX, x, w, u, e, v, 0, c * LANES, B,
                                   la, ra, out, arg_u, arg_e, with_arg)
    elif A == 1 or not WIDE:
        for j in range(lo, hi):
            k = np.uint64(j)
            e = eids[k] if HAS_EIDS else hub_edges + j
            u = src[k]
            v = dst[k]
            for b0 in range(0, B if WIDE else 1, LANES):
                blocked_edge_chunk(OP, USE_X, USE_W, LB, RB, FULL, IS_SUM, IS_MAX, x, w, u, e, v, 0, b0, B, la, ra,
                                   out, arg_u, arg_e, with_arg)
    else:
        for j in range(lo, hi):
            k = np.uint64(j)
            e = eids[k] if HAS_EIDS else hub_edges + j
            u = src[k]
            v = dst[k]
            for a in range(A):
                for b0 in range(0, B, LANES):
                    blocked_edge_chunk(OP, USE_X, USE_W, LB, RB, FULL, IS_SUM, IS_MAX, x, w, u, e, v, a, b0, B, la,
                                       ra, out, arg_u, arg_e, with_arg)


def spmm_blocked_kernel(op: str, reduce: str, pattern: tuple, chunks: int, full: bool = False,
                        hubs: bool = False, row_chunks: int = 0, edge_ids: bool = True):
    """Destination blocks in source order: the cache-blocked path for every reducer.

    Call as ``kernel(block_rows, block_ptr, groups, src, dst, eids, has_eids, degrees, x, w, A, B, loff,
    roff, out, arg_u, arg_e, with_arg, mean, hub_indptr, hub_src, hub_eids, x_hub, hub_edges)``, with
    the arrays of :func:`.blocks.destination_blocks`: block ``b`` holds the edges ``block_ptr[b]:block_ptr[b+1]``
    into the destination rows ``block_rows[b]:block_rows[b+1]``, in source order. ``groups`` (contiguous
    runs of blocks of about equal edges) are the parallel work items; ``out`` and the arg arrays need no
    initial fill (each block writes its rows' start values). Without ``has_eids``, ``w`` is in the
    kernel's own edge order: the hub edges (``hub_edges`` of them), then the blocks' edges.

    ``hubs`` (ops that read x, a pattern without offset tables, no arg outputs) compiles the hub split of
    :func:`.blocks.split_hub_edges`: each block first reduces every row's in-edges from the hub sources, in the
    CSC order of ``(hub_indptr, hub_src, hub_eids)``, in registers, gathering from ``x_hub`` (the hubs'
    rows, copied together so that they stay in the L2); then its other edges join in as above. The hub
    arrays are one-element dummies without ``hubs``. ``row_chunks`` (rows of one head and that many
    vectors, else 0) compiles the chunk loop with a constant count, which LLVM unrolls. ``edge_ids``
    compiles the kernel for one value of ``has_eids``, which must then be passed (an op that does not
    read ``w`` ignores both).

    Why: on the CSC a row gathers ``x[u]`` for each in-edge from anywhere in ``x``; once ``x`` outgrows
    the L2 cache every gather waits on the L3. Here a block's output rows are sized to stay in the L2
    while its edges walk ``x`` in ascending source order, which the hardware prefetchers stream, and edge
    rows whose ids follow the source order stream too. Each edge adds into its output row in the cache
    instead of into a register. At F = 16 this is clearly faster than the CSC kernel; at F = 64 without
    hubs the two are about even, because ``x`` is then re-read for 4x more blocks (``python
    tools/compare_peers.py --family spmm``).

    Every output row still reduces its edges in source order from the reducer's start value; when the
    CSC's rows are in source order too (:func:`.sort.rows_are_sorted`), sums, means, max/min and their arg
    outputs equal the CSC kernels' bit for bit, ties included. ``full`` (an output row of exactly one
    vector, ``A == 1`` and ``B == LANES``) compiles the row's loads and stores without a mask.

    With hubs, a row reduces its hub edges first (in source order), then the rest (in source order): a
    sum is deterministic run to run, but not in the CSC kernel's order, so equal to it within rounding
    only; a max or min is the CSC's value (NaN never wins either way), except that of two zeros the
    other sign may come first. With the hubs' rows in a quarter of the L2 this beats the CSC kernel from
    F = 32 to 256 for copy_u_sum, copy_u_max and u_mul_e_sum with w (E, 1); at F = 16 the blocks alone
    are as fast (:func:`graphkern._sparse_plan._hub_split`; ``python tools/compare_peers.py --family spmm
    --features 32 64 128 256``, figures in docs/performance.md).
    """
    if hubs and (op == "copy_rhs" or pattern[-1]):
        raise ValueError("the hub split runs ops that read x, without offset tables; "
                         f"found op={op!r}, general={pattern[-1]}")
    return _spmm_blocked_kernel(op, kernel_family(reduce), pattern, chunks > 1, full, hubs, row_chunks,
                                bool(edge_ids) or op == "copy_lhs")


@functools.cache
def _spmm_blocked_kernel(op: str, reduce: str, pattern: tuple, wide: bool, full: bool, hubs: bool, row_chunks: int,
                         edge_ids: bool):
    OP, USE_X, USE_W, LA, LB, RA, RB, GENERAL, IS_SUM, IS_MAX = kernel_constants(op, reduce, pattern)
    WIDE = wide
    FULL = full
    HUBS = hubs
    ROW_CHUNKS = row_chunks
    HAS_EIDS = edge_ids
    INIT = 0.0 if IS_SUM else (-np.inf if IS_MAX else np.inf)

    @njit(parallel=True, cache=True)
    def kernel(block_rows, block_ptr, groups, src, dst, eids, has_eids, degrees, x, w, A, B, loff, roff, out, arg_u,
               arg_e, with_arg, mean, hub_indptr, hub_src, hub_eids, x_hub, hub_edges):
        if USE_W and has_eids != HAS_EIDS:
            raise ValueError("has_eids differs from the edge_ids the kernel was compiled for")
        la = stride_for(LA, B)
        ra = stride_for(RA, B)
        D = A * B
        flat_out = out.reshape(out.size)
        for p in prange(groups.size - 1):
            for blk in range(groups[p], groups[p + 1]):
                first = block_rows[blk]
                last = block_rows[blk + 1]
                if HUBS:
                    # each row starts as the reduction (sum, max or min) of its hub edges, taken in
                    # registers: the hubs' rows are few enough to stay in the L2, so these gathers hit
                    # it and nothing is stored per edge
                    for v in range(first, last):
                        for a in range(A if WIDE else 1):
                            for b0 in range(0, B if WIDE else 1, LANES):
                                mask = vmask(LANES if FULL else min(LANES, B - b0), LANES)
                                acc = vzeros(out, LANES) if IS_SUM else vfull(out, INIT, LANES)
                                for k in range(hub_indptr[v], hub_indptr[v + 1]):
                                    e = hub_eids[k] if HAS_EIDS else k
                                    val = vector_message(OP, USE_X, USE_W, LB, RB, x_hub, w, hub_src[k], e, a, b0,
                                                         la, ra, mask)
                                    if IS_SUM:
                                        acc = acc + val
                                    else:
                                        acc = vmax(acc, val) if IS_MAX else vmin(acc, val)
                                vstore(out, v, a * B + b0, acc, mask)
                # without hubs the block's rows start at the reducer's identity (and arg -1): they stay
                # in the cache. The output span is one fill the compiler vectorises.
                if not HUBS:
                    flat_out[first * D:last * D] = INIT
                    if with_arg:
                        for v in range(first, last):
                            for k in range(D):
                                if USE_X:
                                    arg_u[v, k] = -1
                                if USE_W:
                                    arg_e[v, k] = -1
                blocked_edges(OP, USE_X, USE_W, LB, RB, GENERAL, IS_SUM, IS_MAX, FULL, WIDE, ROW_CHUNKS, HAS_EIDS,
                              block_ptr[blk], block_ptr[blk + 1], src, dst, eids, hub_edges, x, w, A, B,
                              la, ra, loff, roff, out, arg_u, arg_e, with_arg)
                # graphkern's rule for rows without in-edges (0, arg -1); a mean divides as the CSC does
                for v in range(first, last):
                    if degrees[v] == 0:
                        for k in range(D):
                            out[v, k] = 0
                    elif IS_SUM and mean:
                        degree = out.dtype.type(degrees[v])
                        if GENERAL:
                            for k in range(D):
                                out[v, k] /= degree
                        else:
                            for a in range(A if WIDE else 1):
                                for b0 in range(0, B if WIDE else 1, LANES):
                                    mask = vmask(min(LANES, B - b0), LANES)
                                    col = a * B + b0
                                    vstore(out, v, col, vload(out, v, col, mask) / vfull(out, degree, LANES), mask)

    return kernel
