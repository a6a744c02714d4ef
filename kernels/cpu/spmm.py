"""g-SpMM on the CPU: ``out[v] = reduce over in-edges (u, e, v) of op(x[u], w[e])``.

Three paths: DGL's two, with graphkern's choices, and a cache-blocked one:

``spmm_csc``  destination-parallel over the CSC. Rows are split into parts of about equal non-zeros (not
              equal row counts, which load-imbalance power-law graphs), every row is reduced by one thread
              in CSC order: sums are deterministic and max/min ties go to the first edge in CSC order.
              The strided broadcast patterns run :func:`spmm_csc_vector_kernel`, whose accumulators are
              explicit SIMD vectors (kernels/cpu/_simd.py); offset tables run the scalar kernel.
``spmm_coo``  edge-parallel over the COO, for graphs where CSC is not allowed. Each thread reduces its
              contiguous chunk of edges into a private output; the partials are combined in chunk order,
              so ties still go to the earliest edge and there is no lock (DGL takes a global critical
              section for COO max/min).
``spmm_blocked``  the edges in destination blocks sized to half the L2 cache, in source order within a
              block (kernels/cpu/blocks.py): each edge adds into its output row in the cache while
              ``x`` streams in order (kernels/cpu/spmm_blocked.py). Taken by the cost model
              (graphkern._sparse_plan) when ``x`` outgrows the L2; with CSC rows in source order its
              results equal the CSC kernels' bit for bit. CPU only: a GPU hides its gathers' latency
              with the warps in flight, and the CUDA backend keeps the CSC and COO kernels (kernels/cuda/).

Kernels are generated per (op, reducer, broadcast pattern, arg outputs) by :func:`spmm_csc_kernel` and
:func:`spmm_coo_kernel`: the op, the reducer and the operand strides (graphkern._broadcast) are closure
constants (``kernel_constants`` in kernels/cpu/_spmm_common.py), so each specialisation compiles to
straight-line code with the dead branches removed and a contiguous inner loop over features. Numba adds
the dtype (float32/64) and id (int32/64) specialisations.
``mean`` is ``sum`` with a division per row: it shares the ``sum`` kernels (a runtime flag where the
kernel divides, a pass over the output where it does not), so a cold start compiles a quarter fewer.
Kernels trust their inputs: graphkern's spmm() validated them.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, prange

from ._intrinsics import prefetch_row
from ._simd import vfull, vint, vmask
from ._spmm_common import (
    GROUP,
    GROUP_LANES,
    LANES,
    OPS,
    REDUCERS,
    accumulate_edge,
    chunk_of,
    extreme_step,
    kernel_constants,
    kernel_family,
    prefetch_operands,
    prefetch_plan,
    store_chunk,
    stride_for,
    vector_chunks,
    vector_message,
)

# the family's names (graphkern.sparse and the CUDA twin read OPS and REDUCERS here)
__all__ = ["OPS", "REDUCERS", "LANES", "vector_chunks", "spmm_csc_kernel", "spmm_csc_vector_kernel", "spmm_coo_kernel",
           "combine_sum", "combine_extreme", "finish_rows", "spmm_packed_kernel"]


def spmm_csc_kernel(op: str, reduce: str, pattern: tuple):
    """The compiled destination-parallel kernel for one (op, reduce, broadcast pattern) combination.

    Call as ``kernel(indptr, indices, eids, has_eids, parts, x, w, A, B, loff, roff, out, arg_u, arg_e,
    with_arg, mean)``
    with ``x`` ``(N, Lx)`` and ``w`` ``(E, Lw)`` C-contiguous (dummies for an unused operand), ``out``
    ``(num_dst, A*B)`` zero-filled; ``arg_u``/``arg_e`` as ``out`` in the id dtype (dummies without args);
    ``mean`` (for a sum) divides each row by its in-degree. ``sum`` and ``mean`` get the same kernel.
    """
    return _spmm_csc_kernel(op, kernel_family(reduce), pattern)


@functools.cache
def _spmm_csc_kernel(op: str, reduce: str, pattern: tuple):
    OP, USE_X, USE_W, LA, LB, RA, RB, GENERAL, IS_SUM, IS_MAX = kernel_constants(op, reduce, pattern)

    @njit(parallel=True, cache=True)
    def kernel(indptr, indices, eids, has_eids, parts, x, w, A, B, loff, roff, out, arg_u, arg_e, with_arg, mean):
        la = stride_for(LA, B)
        ra = stride_for(RA, B)
        D = A * B
        nnz = indices.size
        dist, x_bytes, w_bytes = prefetch_plan(x, w, USE_X, USE_W)
        # the row's own arg arrays as the single "thread" slice accumulate_edge writes
        args_u = arg_u.reshape((1,) + arg_u.shape)
        args_e = arg_e.reshape((1,) + arg_e.shape)
        for p in prange(parts.size - 1):
            for v in range(parts[p], parts[p + 1]):
                start = indptr[v]
                end = indptr[v + 1]
                if end == start:
                    continue  # out is zero and args are -1 already: graphkern's rule for empty rows
                if not IS_SUM:
                    for k in range(D):
                        out[v, k] = -np.inf if IS_MAX else np.inf
                for j in range(start, end):
                    if j + dist < nnz:  # the rows of an edge a few slots ahead: misses overlap
                        if USE_X:
                            prefetch_row(x, indices[j + dist], x_bytes)
                        if USE_W and has_eids:
                            prefetch_row(w, eids[j + dist], w_bytes)
                    u = indices[j]
                    e = eids[j] if has_eids else j
                    accumulate_edge(OP, USE_X, USE_W, LB, RB, GENERAL, IS_SUM, IS_MAX, x, w, u, e, v, A, B, la, ra,
                                    loff, roff, out, args_u, args_e, 0, with_arg)
                if IS_SUM and mean:  # a runtime flag, tested once per row
                    degree = out.dtype.type(end - start)
                    for k in range(D):
                        out[v, k] /= degree

    return kernel


def spmm_csc_vector_kernel(op: str, reduce: str, pattern: tuple, chunks: int):
    """The destination-parallel kernel with explicit vectors, for every broadcast pattern but the
    general one (offset tables): same call as :func:`spmm_csc_kernel` without ``loff``/``roff``.

    The output row is cut into vector chunks of ``LANES`` elements within one ``a`` (``out[v, a*B + b0 :
    a*B + b0 + LANES]``, the last one of each ``a`` masked); an operand with ``stride_b == 1`` is loaded
    as a vector there, one with ``stride_b == 0`` is its element at ``a * stride_a`` in every lane. Each
    lane reduces its edges in CSC order, so sums equal the scalar kernels' bit for bit, ties keep the
    earlier edge (a strict compare) and NaN never wins a max/min. A row of one chunk is one walk of its
    edges; a wider row is walked once per group of :data:`GROUP` chunks. ``chunks``
    (:func:`vector_chunks`) picks between the two compiled forms.
    """
    return _spmm_csc_vector_kernel(op, kernel_family(reduce), pattern, chunks > 1)


@functools.cache
def _spmm_csc_vector_kernel(op: str, reduce: str, pattern: tuple, wide: bool):
    OP, USE_X, USE_W, LA, LB, RA, RB, GENERAL, IS_SUM, IS_MAX = kernel_constants(op, reduce, pattern)
    if GENERAL:
        raise ValueError("the vector kernels take the strided broadcast patterns; offset tables run spmm_csc_kernel")
    WIDE = wide
    INIT = 0.0 if IS_SUM else (-np.inf if IS_MAX else np.inf)

    @njit(parallel=True, cache=True)
    def kernel(indptr, indices, eids, has_eids, parts, x, w, A, B, out, arg_u, arg_e, with_arg, mean):
        la = stride_for(LA, B)
        ra = stride_for(RA, B)
        nb = (B + LANES - 1) // LANES
        nchunks = A * nb
        nnz = indices.size
        dist, _, _ = prefetch_plan(x, w, USE_X, USE_W)
        pf_w = USE_W and has_eids  # edge rows in slot order stream; behind eids they are gathered
        for p in prange(parts.size - 1):
            for v in range(parts[p], parts[p + 1]):
                start = indptr[v]
                end = indptr[v + 1]
                if end == start:
                    continue  # out is zero and args are -1 already: graphkern's rule for empty rows
                if not WIDE:
                    # one accumulator, edges in CSC order: sums equal every other path's (blocked, COO,
                    # CUDA) bit for bit; two alternating accumulators measured slightly faster but would
                    # change the order of the sums
                    mask = vmask(B, LANES)
                    acc = vfull(out, INIT, LANES)
                    best_u = vint(arg_u, -1, LANES)
                    best_e = vint(arg_e, -1, LANES)
                    for j in range(start, end):
                        if j + dist < nnz:
                            prefetch_operands(USE_X, pf_w, LB, RB, x, w, indices[j + dist],
                                              eids[j + dist] if has_eids else j + dist, 0, 0, la, ra, LANES)
                        u = indices[j]
                        e = eids[j] if has_eids else j
                        val = vector_message(OP, USE_X, USE_W, LB, RB, x, w, u, e, 0, 0, la, ra, mask)
                        if IS_SUM:
                            acc = acc + val
                        else:
                            acc, best_u, best_e = extreme_step(IS_MAX, USE_X, USE_W, with_arg, val, acc, best_u,
                                                               best_e, u, e, arg_u, arg_e)
                    store_chunk(IS_SUM, USE_X, USE_W, out, arg_u, arg_e, v, 0, mask, acc, best_u, best_e, with_arg,
                                mean, end - start)
                    continue
                for c in range(0, nchunks, GROUP):
                    a0, b0, n0 = chunk_of(c, nchunks, nb, B)
                    a1, b1, n1 = chunk_of(c + 1, nchunks, nb, B)
                    a2, b2, n2 = chunk_of(c + 2, nchunks, nb, B)
                    a3, b3, n3 = chunk_of(c + 3, nchunks, nb, B)
                    m0 = vmask(n0, LANES)
                    m1 = vmask(n1, LANES)
                    m2 = vmask(n2, LANES)
                    m3 = vmask(n3, LANES)
                    acc0 = vfull(out, INIT, LANES)
                    acc1 = vfull(out, INIT, LANES)
                    acc2 = vfull(out, INIT, LANES)
                    acc3 = vfull(out, INIT, LANES)
                    bu0 = bu1 = bu2 = bu3 = vint(arg_u, -1, LANES)
                    be0 = be1 = be2 = be3 = vint(arg_e, -1, LANES)
                    for j in range(start, end):
                        if j + dist < nnz:
                            prefetch_operands(USE_X, pf_w, LB, RB, x, w, indices[j + dist],
                                              eids[j + dist] if has_eids else j + dist, a0, b0, la, ra, GROUP_LANES)
                        u = indices[j]
                        e = eids[j] if has_eids else j
                        val0 = vector_message(OP, USE_X, USE_W, LB, RB, x, w, u, e, a0, b0, la, ra, m0)
                        val1 = vector_message(OP, USE_X, USE_W, LB, RB, x, w, u, e, a1, b1, la, ra, m1)
                        val2 = vector_message(OP, USE_X, USE_W, LB, RB, x, w, u, e, a2, b2, la, ra, m2)
                        val3 = vector_message(OP, USE_X, USE_W, LB, RB, x, w, u, e, a3, b3, la, ra, m3)
                        if IS_SUM:
                            acc0 = acc0 + val0
                            acc1 = acc1 + val1
                            acc2 = acc2 + val2
                            acc3 = acc3 + val3
                        else:
                            acc0, bu0, be0 = extreme_step(IS_MAX, USE_X, USE_W, with_arg, val0, acc0, bu0, be0, u, e,
                                                          arg_u, arg_e)
                            acc1, bu1, be1 = extreme_step(IS_MAX, USE_X, USE_W, with_arg, val1, acc1, bu1, be1, u, e,
                                                          arg_u, arg_e)
                            acc2, bu2, be2 = extreme_step(IS_MAX, USE_X, USE_W, with_arg, val2, acc2, bu2, be2, u, e,
                                                          arg_u, arg_e)
                            acc3, bu3, be3 = extreme_step(IS_MAX, USE_X, USE_W, with_arg, val3, acc3, bu3, be3, u, e,
                                                          arg_u, arg_e)
                    degree = end - start
                    store_chunk(IS_SUM, USE_X, USE_W, out, arg_u, arg_e, v, a0 * B + b0, m0, acc0, bu0, be0, with_arg,
                                mean, degree)
                    store_chunk(IS_SUM, USE_X, USE_W, out, arg_u, arg_e, v, a1 * B + b1, m1, acc1, bu1, be1, with_arg,
                                mean, degree)
                    store_chunk(IS_SUM, USE_X, USE_W, out, arg_u, arg_e, v, a2 * B + b2, m2, acc2, bu2, be2, with_arg,
                                mean, degree)
                    store_chunk(IS_SUM, USE_X, USE_W, out, arg_u, arg_e, v, a3 * B + b3, m3, acc3, bu3, be3, with_arg,
                                mean, degree)

    return kernel


def spmm_coo_kernel(op: str, reduce: str, pattern: tuple):
    """The compiled edge-parallel kernel: thread ``t`` reduces edges ``bounds[t]:bounds[t+1]`` into
    ``part_out[t]`` (and ``part_arg_u[t]``/``part_arg_e[t]``), pre-filled with the reducer's identity."""
    return _spmm_coo_kernel(op, kernel_family(reduce), pattern)


@functools.cache
def _spmm_coo_kernel(op: str, reduce: str, pattern: tuple):
    OP, USE_X, USE_W, LA, LB, RA, RB, GENERAL, IS_SUM, IS_MAX = kernel_constants(op, reduce, pattern)

    @njit(parallel=True, cache=True)
    def kernel(src, dst, eids, has_eids, bounds, x, w, A, B, loff, roff, part_out, part_arg_u, part_arg_e,
               with_arg):
        la = stride_for(LA, B)
        ra = stride_for(RA, B)
        for t in prange(bounds.size - 1):
            out = part_out[t]
            for i in range(bounds[t], bounds[t + 1]):
                u = src[i]
                v = dst[i]
                e = eids[i] if has_eids else i
                accumulate_edge(OP, USE_X, USE_W, LB, RB, GENERAL, IS_SUM, IS_MAX, x, w, u, e, v, A, B, la, ra, loff,
                                roff, out, part_arg_u, part_arg_e, t, with_arg)

    return kernel


@njit(parallel=True, cache=True)
def combine_sum(part_out, out):
    """``out = sum(part_out, axis=0)`` in chunk order (deterministic)."""
    T, N, D = part_out.shape
    for v in prange(N):
        for k in range(D):
            acc = part_out[0, v, k]
            for t in range(1, T):
                acc += part_out[t, v, k]
            out[v, k] = acc


@njit(parallel=True, cache=True)
def combine_extreme(part_out, part_arg_u, part_arg_e, is_max, with_arg, use_u, use_e, out, arg_u, arg_e):
    """Pick each element's max (min) over the partials; an earlier chunk wins ties (first edge wins)."""
    T, N, D = part_out.shape
    for v in prange(N):
        for k in range(D):
            best = part_out[0, v, k]
            bt = 0
            for t in range(1, T):
                val = part_out[t, v, k]
                if (val > best) if is_max else (val < best):
                    best = val
                    bt = t
            out[v, k] = best
            if with_arg:
                if use_u:
                    arg_u[v, k] = part_arg_u[bt, v, k]
                if use_e:
                    arg_e[v, k] = part_arg_e[bt, v, k]


@njit(parallel=True, cache=True)
def finish_rows(degrees, is_mean, out, arg_u, arg_e, with_arg_u, with_arg_e):
    """Empty rows -> 0 and arg -1 (graphkern's rule for every reducer); mean divides by the in-degree.

    ``with_arg_u``/``with_arg_e`` say which arg arrays are real: an op that reads one operand passes a
    (1, 1) placeholder for the other, which must never be written."""
    N, D = out.shape
    for v in prange(N):
        d = degrees[v]
        if d == 0:
            for k in range(D):
                out[v, k] = 0
                if with_arg_u:
                    arg_u[v, k] = -1
                if with_arg_e:
                    arg_e[v, k] = -1
        elif is_mean:
            # a division in the output's dtype, as the vector and CUDA kernels do (bitwise the same means)
            degree = out.dtype.type(d)
            for k in range(D):
                out[v, k] /= degree


def spmm_packed_kernel(op: str, reduce: str, pattern: tuple):
    """SpMM straight over a DynamicGraph's packed memory array: thread ``t`` walks rows (sources)
    ``bounds[t]:bounds[t+1]``, skipping walls, gaps and tombstones (negative ids), and reduces into its
    own ``part_out[t]`` (pre-filled with the reducer's identity), like the COO kernel. Rows go in source
    order, so after :func:`combine_extreme` ties go to the lowest source: the first edge in the CSC
    order of the graph's snapshot."""
    return _spmm_packed_kernel(op, kernel_family(reduce), pattern)


@functools.cache
def _spmm_packed_kernel(op: str, reduce: str, pattern: tuple):
    OP, USE_X, USE_W, LA, LB, RA, RB, GENERAL, IS_SUM, IS_MAX = kernel_constants(op, reduce, pattern)
    LOW = np.int64(0xFFFFFFFF)

    @njit(parallel=True, cache=True)
    def kernel(keys, eids, row_off, bounds, x, w, A, B, loff, roff, part_out, part_arg_u, part_arg_e, with_arg):
        la = stride_for(LA, B)
        ra = stride_for(RA, B)
        for t in prange(bounds.size - 1):
            out = part_out[t]
            for u in range(bounds[t], bounds[t + 1]):
                for s in range(row_off[u], row_off[u + 1]):
                    e = eids[s]
                    if e < 0:
                        continue
                    accumulate_edge(OP, USE_X, USE_W, LB, RB, GENERAL, IS_SUM, IS_MAX, x, w, u, e, keys[s] & LOW, A, B,
                                    la, ra, loff, roff, out, part_arg_u, part_arg_e, t, with_arg)

    return kernel
