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
              block (:func:`destination_blocks`): each edge adds into its output row in the cache while
              ``x`` streams in order. Taken by the cost model (graphkern.sparse) when ``x`` outgrows the
              L2; with CSC rows in source order its results equal the CSC kernels' bit for bit.
              CPU only: a GPU hides its gathers' latency with the warps in flight, and the CUDA
              backend keeps the CSC and COO kernels (kernels/cuda/).

Kernels are generated per (op, reducer, broadcast pattern, arg outputs) by :func:`spmm_csc_kernel` and
:func:`spmm_coo_kernel`: the op, the reducer and the operand strides (graphkern._broadcast) are closure
constants, so each specialisation compiles to straight-line code with the dead branches removed and a
contiguous inner loop over features. Numba adds the dtype (float32/64) and id (int32/64) specialisations.
``mean`` is ``sum`` with a division per row: it shares the ``sum`` kernels (a runtime flag where the
kernel divides, a pass over the output where it does not), so a cold start compiles a quarter fewer.
Kernels trust their inputs: graphkern's spmm() validated them.
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, prange

from ._intrinsics import prefetch_elements, prefetch_row
from .partition import nnz_balanced_row_bounds
from ._simd import vfull, vgt, vint, vload, vlt, vmask, vmax, vmin, vselect, vsplat, vstore, vzeros

# Lanes of every SpMM vector: one cache line of float32 (two of float64), one AVX-512 register per 32 bits.
LANES = 16
# Vector chunks a CSC row walk reduces at once when the output row needs more than one: four
# accumulators hide the add latency and the row's lines arrive together (one walk of a 64-wide float32
# row is clearly faster than four walks of one chunk; `python tools/compare_peers.py --family spmm`).
GROUP = 4
GROUP_LANES = GROUP * LANES

OPS = ("add", "sub", "mul", "div", "copy_lhs", "copy_rhs")
REDUCERS = ("sum", "max", "min", "mean")
_OP_CODE = {name: i for i, name in enumerate(OPS)}


@njit(inline="always")
def apply_op(op, lhs, rhs):
    """The binary op by code (a compile-time constant at every call site)."""
    if op == 0:
        return lhs + rhs
    if op == 1:
        return lhs - rhs
    if op == 2:
        return lhs * rhs
    if op == 3:
        return lhs / rhs
    if op == 4:
        return lhs
    return rhs


@njit(inline="always")
def stride_for(code, B):
    # graphkern._broadcast: STRIDE_ZERO = 0, STRIDE_ONE = 1, STRIDE_B = 2
    if code == 0:
        return 0
    if code == 1:
        return 1
    return B


@njit(inline="always")
def message(OP, USE_X, USE_W, LB, RB, GENERAL, x, w, u, e, a, b, k, la, ra, loff, roff):
    """The message of edge ``(u, e)`` for output element ``k = a * B + b``: ``op(x[u, .], w[e, .])``.

    The first six arguments are the calling kernel's compile-time constants; the call is inlined, so
    they fold (unused operands are never read, strides of 0 or 1 become plain loads)."""
    if GENERAL:
        xl = x[u, loff[k]] if USE_X else x[0, 0]
        wr = w[e, roff[k]] if USE_W else w[0, 0]
    else:
        xl = x[u, a * la + b * LB] if USE_X else x[0, 0]
        wr = w[e, a * ra + b * RB] if USE_W else w[0, 0]
    return apply_op(OP, xl, wr)


@njit(inline="always")
def accumulate_edge(OP, USE_X, USE_W, LB, RB, GENERAL, IS_SUM, IS_MAX, x, w, u, e, v, A, B, la, ra, loff, roff,
                    out, part_arg_u, part_arg_e, t, with_arg):
    """Reduce edge ``(u, e)`` into row ``v`` of the partial output ``out`` (thread ``t``'s): the shared
    body of the edge-parallel kernels (COO and packed) and of the CSC kernel (``t = 0``, its own output).
    The first eight arguments fold as constants; ``with_arg`` is a runtime flag whose branch is rare
    (only on a new best)."""
    for a in range(A):
        for b in range(B):
            k = a * B + b
            val = message(OP, USE_X, USE_W, LB, RB, GENERAL, x, w, u, e, a, b, k, la, ra, loff, roff)
            if IS_SUM:
                out[v, k] += val
            elif (val > out[v, k]) if IS_MAX else (val < out[v, k]):
                out[v, k] = val
                if with_arg:
                    if USE_X:
                        part_arg_u[t, v, k] = u
                    if USE_W:
                        part_arg_e[t, v, k] = e


@njit(inline="always")
def prefetch_plan(x, w, use_x, use_w):
    """(edges ahead, bytes of an x row, bytes of a w row) to prefetch: about 2 KB of rows in flight."""
    row = 0
    if use_x:
        row += x.shape[1] * x.itemsize
    if use_w:
        row += w.shape[1] * w.itemsize
    dist = 2048 // max(row, 1)
    return max(4, min(32, dist)), x.shape[1] * x.itemsize, w.shape[1] * w.itemsize


def _family(reduce: str) -> str:
    """The compiled kernel a reducer runs: ``mean`` is ``sum`` and a division."""
    return "sum" if reduce == "mean" else reduce


def spmm_csc_kernel(op: str, reduce: str, pattern: tuple):
    """The compiled destination-parallel kernel for one (op, reduce, broadcast pattern) combination.

    Call as ``kernel(indptr, indices, eids, has_eids, parts, x, w, A, B, loff, roff, out, arg_u, arg_e,
    with_arg, mean)``
    with ``x`` ``(N, Lx)`` and ``w`` ``(E, Lw)`` C-contiguous (dummies for an unused operand), ``out``
    ``(num_dst, A*B)`` zero-filled; ``arg_u``/``arg_e`` as ``out`` in the id dtype (dummies without args);
    ``mean`` (for a sum) divides each row by its in-degree. ``sum`` and ``mean`` get the same kernel.
    """
    return _spmm_csc_kernel(op, _family(reduce), pattern)


@functools.cache
def _spmm_csc_kernel(op: str, reduce: str, pattern: tuple):
    OP = _OP_CODE[op]
    USE_X = op != "copy_rhs"
    USE_W = op != "copy_lhs"
    LA, LB, RA, RB, GENERAL = pattern
    IS_SUM = reduce == "sum"
    IS_MAX = reduce == "max"

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


def vector_chunks(A: int, B: int) -> int:
    """Vector chunks of an ``A x B`` output row: each ``a`` gets ``ceil(B / LANES)`` (the last one masked)."""
    return A * -(-B // LANES)


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
    return _spmm_csc_vector_kernel(op, _family(reduce), pattern, chunks > 1)


@njit(inline="always")
def chunk_of(c, nchunks, nb, B):
    """``(a, b0, lanes)`` of vector chunk ``c`` of a row with ``nb`` chunks per ``a``; ``lanes`` is 0 for a
    chunk past the row's last (its mask is empty: nothing is loaded or stored)."""
    if c >= nchunks:
        return 0, 0, 0
    a = c // nb
    b0 = (c - a * nb) * LANES
    return a, b0, min(LANES, B - b0)


@njit(inline="always")
def operand_vector(arr, row, a, stride_a, b0, SB, mask):
    """An operand's lanes of one chunk: contiguous elements (``SB == 1``) or one broadcast element."""
    if SB == 1:
        return vload(arr, row, a * stride_a + b0, mask)
    return vsplat(arr, row, a * stride_a, LANES)


@njit(inline="always")
def vector_message(OP, USE_X, USE_W, LB, RB, x, w, u, e, a, b0, la, ra, mask):
    """``op(x[u], w[e])`` on one chunk's lanes; the first five arguments fold as constants."""
    xv = operand_vector(x, u, a, la, b0, LB, mask) if USE_X else vzeros(x, LANES)
    wv = operand_vector(w, e, a, ra, b0, RB, mask) if USE_W else vzeros(w, LANES)
    return apply_op(OP, xv, wv)


@njit(inline="always")
def prefetch_operands(USE_X, USE_W, LB, RB, x, w, u, e, a, b0, la, ra, count):
    """Prefetch the lines of ``x[u]`` and ``w[e]`` that ``count`` elements from chunk ``(a, b0)`` on read
    (``count``, a literal, is one chunk's or one group's lanes; a broadcast operand reads one element).

    The count is a compile-time constant, so the prefetches unroll; past the end of a short row they
    touch the next row's lines, which is harmless (a prefetch is a hint and never faults)."""
    if USE_X:
        if LB == 1:
            prefetch_elements(x, u, a * la + b0, count)
        else:
            prefetch_elements(x, u, a * la, 1)
    if USE_W:
        if RB == 1:
            prefetch_elements(w, e, a * ra + b0, count)
        else:
            prefetch_elements(w, e, a * ra, 1)


@njit(inline="always")
def extreme_step(IS_MAX, USE_X, USE_W, with_arg, val, acc, best_u, best_e, u, e, arg_u, arg_e):
    """One edge's max/min step: ``(acc, best_u, best_e)`` after ``val`` (a strict compare: ties keep
    the earlier edge, NaN never wins)."""
    if not with_arg:
        return (vmax(acc, val) if IS_MAX else vmin(acc, val)), best_u, best_e
    wins = vgt(val, acc) if IS_MAX else vlt(val, acc)
    if USE_X:
        best_u = vselect(wins, vint(arg_u, u, LANES), best_u)
    if USE_W:
        best_e = vselect(wins, vint(arg_e, e, LANES), best_e)
    return vselect(wins, val, acc), best_u, best_e


@njit(inline="always")
def store_chunk(IS_SUM, USE_X, USE_W, out, arg_u, arg_e, v, col, mask, acc, best_u, best_e, with_arg, mean, degree):
    """Write one chunk of row ``v`` (a mean divides the sum by the in-degree; arg outputs when asked)."""
    if IS_SUM:
        if mean:
            acc = acc / vfull(out, degree, LANES)
        vstore(out, v, col, acc, mask)
        return
    vstore(out, v, col, acc, mask)
    if with_arg:
        if USE_X:
            vstore(arg_u, v, col, best_u, mask)
        if USE_W:
            vstore(arg_e, v, col, best_e, mask)


@functools.cache
def _spmm_csc_vector_kernel(op: str, reduce: str, pattern: tuple, wide: bool):
    OP = _OP_CODE[op]
    USE_X = op != "copy_rhs"
    USE_W = op != "copy_lhs"
    LA, LB, RA, RB, GENERAL = pattern
    if GENERAL:
        raise ValueError("the vector kernels take the strided broadcast patterns; offset tables run spmm_csc_kernel")
    IS_SUM = reduce == "sum"
    IS_MAX = reduce == "max"
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
    return _spmm_coo_kernel(op, _family(reduce), pattern)


@functools.cache
def _spmm_coo_kernel(op: str, reduce: str, pattern: tuple):
    OP = _OP_CODE[op]
    USE_X = op != "copy_rhs"
    USE_W = op != "copy_lhs"
    LA, LB, RA, RB, GENERAL = pattern
    IS_SUM = reduce == "sum"
    IS_MAX = reduce == "max"

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
    the arrays of :func:`destination_blocks`: block ``b`` holds the edges ``block_ptr[b]:block_ptr[b+1]``
    into the destination rows ``block_rows[b]:block_rows[b+1]``, in source order. ``groups`` (contiguous
    runs of blocks of about equal edges) are the parallel work items; ``out`` and the arg arrays need no
    initial fill (each block writes its rows' start values). Without ``has_eids``, ``w`` is in the
    kernel's own edge order: the hub edges (``hub_edges`` of them), then the blocks' edges.

    ``hubs`` (ops that read x, a pattern without offset tables, no arg outputs) compiles the hub split of
    :func:`split_hub_edges`: each block first reduces every row's in-edges from the hub sources, in the
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
    are as fast (:func:`graphkern.sparse._hub_split`; ``python tools/compare_peers.py --family spmm
    --features 32 64 128 256``, figures in docs/performance.md).
    """
    if hubs and (op == "copy_rhs" or pattern[-1]):
        raise ValueError("the hub split runs ops that read x, without offset tables; "
                         f"found op={op!r}, general={pattern[-1]}")
    return _spmm_blocked_kernel(op, _family(reduce), pattern, chunks > 1, full, hubs, row_chunks,
                                bool(edge_ids) or op == "copy_lhs")


@functools.cache
def _spmm_blocked_kernel(op: str, reduce: str, pattern: tuple, wide: bool, full: bool, hubs: bool, row_chunks: int,
                         edge_ids: bool):
    OP = _OP_CODE[op]
    USE_X = op != "copy_rhs"
    USE_W = op != "copy_lhs"
    LA, LB, RA, RB, GENERAL = pattern
    IS_SUM = reduce == "sum"
    IS_MAX = reduce == "max"
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


def block_shift(rows_per_block: int) -> int:
    """log2 of the block height: the largest power of two at most ``rows_per_block`` (a block is found by
    a shift)."""
    return max(0, int(rows_per_block).bit_length() - 1)


@njit(parallel=True, cache=True)
def scatter_rows_to_blocks(indptr, indices, eids, has_eids, bounds, shift, heads, src, dst, eid):
    """Write slot ``j`` of row ``r`` of a CSR (in row order, each chunk of rows ``bounds[t]:bounds[t+1]``
    from its own heads) to ``heads[t, indices[j] >> shift]``: ``src = r``, ``dst = indices[j]``, ``eid``.
    Stable: a block receives its edges in CSR order."""
    for t in prange(bounds.size - 1):
        for r in range(bounds[t], bounds[t + 1]):
            for j in range(indptr[r], indptr[r + 1]):
                v = indices[j]
                b = v >> shift
                pos = heads[t, b]
                heads[t, b] = pos + 1
                src[pos] = r
                dst[pos] = v
                eid[pos] = eids[j] if has_eids else j


def destination_blocks(indptr, indices, eids, num_src: int, num_dst: int, rows_per_block: int, by_destination: bool):
    """The edges of a compressed matrix grouped in destination blocks, in source order within a block.

    ``(indptr, indices, eids)`` is the CSC when ``by_destination`` (rows are destinations, ``indices``
    sources), else the CSR; ``eids`` None means the slot is the edge id. Blocks are ``2**shift`` rows
    (:func:`block_shift` of ``rows_per_block``). Returns ``(block_rows, block_ptr, src, dst, eid)``:
    block ``b`` covers destinations ``block_rows[b]:block_rows[b+1]`` and holds the slots
    ``block_ptr[b]:block_ptr[b+1]`` of the three edge arrays, ordered by (block, source, slot in the
    input). A CSC is first transposed (stable, so its order remains within a source); then one stable
    count sort by block, as every format change does.
    """
    from .sort import _chunk_offsets, _histogram_rows, _num_chunks, transpose_compressed

    if by_destination:
        indptr, indices, eids = transpose_compressed(indptr, indices, eids, num_src)
    idx = indices.dtype
    E = int(indices.size)
    shift = block_shift(rows_per_block)
    blocks = max(1, (num_dst + (1 << shift) - 1) >> shift)
    block_rows = np.minimum(np.arange(blocks + 1, dtype=np.int64) << shift, num_dst)
    chunks = _num_chunks(E, blocks)
    bounds = nnz_balanced_row_bounds(indptr, chunks)
    counts = np.zeros((bounds.size - 1, blocks), dtype=np.int64)
    _histogram_rows(indptr, indices, bounds, shift, counts)
    block_ptr = np.empty(blocks + 1, dtype=np.int64)
    _chunk_offsets(counts, block_ptr)
    src = np.empty(E, idx)
    dst = np.empty(E, idx)
    eid = np.empty(E, idx if eids is None else eids.dtype)
    has_eids = eids is not None
    scatter_rows_to_blocks(indptr, indices, eids if has_eids else indices, has_eids, bounds, shift, counts, src, dst,
                           eid)
    return block_rows, block_ptr, src, dst, eid


@njit(parallel=True, cache=True)
def count_hub_edges(indptr, indices, hub_local, counts):
    """``counts[r]``: the slots of row ``r`` whose source is a hub (``hub_local[source] >= 0``)."""
    for r in prange(indptr.size - 1):
        c = 0
        for j in range(indptr[r], indptr[r + 1]):
            if hub_local[indices[j]] >= 0:
                c += 1
        counts[r] = c


@njit(parallel=True, cache=True)
def scatter_hub_edges(indptr, indices, eids, has_eids, hub_local, hub_indptr, rest_indptr, hub_src, hub_eids,
                      rest_indices, rest_eids):
    """Each row's slots in order, the hubs' to ``hub_src`` (as hub numbers) and ``hub_eids``, the others to
    ``rest_indices`` and ``rest_eids``, at the rows' offsets in ``hub_indptr`` and ``rest_indptr``."""
    for r in prange(indptr.size - 1):
        h = hub_indptr[r]
        o = rest_indptr[r]
        for j in range(indptr[r], indptr[r + 1]):
            u = indices[j]
            e = eids[j] if has_eids else j
            k = hub_local[u]
            if k >= 0:
                hub_src[h] = k
                hub_eids[h] = e
                h += 1
            else:
                rest_indices[o] = u
                rest_eids[o] = e
                o += 1


def split_hub_edges(indptr, indices, eids, num_src: int, hubs):
    """A CSC split in two by source: the edges from ``hubs`` (sorted source ids) and the rest.

    Returns ``(hub_indptr, hub_src, hub_eids, rest_indptr, rest_indices, rest_eids)``: two CSCs over the
    same rows, each keeping the input's order within a row; ``hub_src`` holds hub numbers (the position
    in ``hubs``), so that a kernel gathers from the hubs' rows copied together (``x[hubs]``). ``eids``
    None means the slot is the edge id.

    Why: in a skewed graph a few sources carry most edges (Graph500 Kronecker scale 18: the top 8,192 of
    262,144, 63%). Their feature rows fit the L2 cache, so their edges can be summed per destination in
    registers, while the blocked kernel streams the other edges in source order.
    """
    idx = indices.dtype
    rows = indptr.size - 1
    hub_local = np.full(max(num_src, 1), -1, idx)
    hub_local[hubs] = np.arange(hubs.size, dtype=idx)
    counts = np.empty(rows, np.int64)
    count_hub_edges(indptr, indices, hub_local, counts)
    hub_indptr = np.zeros(rows + 1, np.int64)
    np.cumsum(counts, out=hub_indptr[1:])
    rest_indptr = indptr.astype(np.int64) - hub_indptr
    H = int(hub_indptr[-1])
    E = int(indices.size)
    eid_dtype = idx if eids is None else eids.dtype
    hub_src = np.empty(H, idx)
    hub_eids = np.empty(H, eid_dtype)
    rest_indices = np.empty(E - H, idx)
    rest_eids = np.empty(E - H, eid_dtype)
    scatter_hub_edges(indptr, indices, eids if eids is not None else indices, eids is not None, hub_local,
                      hub_indptr, rest_indptr, hub_src, hub_eids, rest_indices, rest_eids)
    return hub_indptr, hub_src, hub_eids, rest_indptr, rest_indices, rest_eids


@njit(parallel=True, cache=True)
def edge_slots(eids, num_edge_ids, slots):
    """``slots[eids[j]] = j``; ids no slot holds get -1 (a graph whose id space exceeds its edges)."""
    for e in prange(num_edge_ids):
        slots[e] = -1
    for j in prange(eids.size):
        slots[eids[j]] = j
    return slots


@njit(parallel=True, cache=True)
def edge_rows_to_blocks(slots, rows, out):
    """``out[slots[e]] = rows[e]`` for every edge id with a slot: edge rows, read in id order, written in
    the blocked kernel's edge order (one write stream per block; the hub edges, when split off, first in
    CSC order), so that the kernel reads them as one stream instead of through the ids, where each block
    fetches nearly every line of narrow rows again."""
    E, D = rows.shape
    if D == 1:  # flat: the common scalar weight per edge
        flat_rows = rows.ravel()
        flat_out = out.ravel()
        for e in prange(E):
            s = slots[e]
            if s >= 0:
                flat_out[s] = flat_rows[e]
        return out
    for e in prange(E):
        s = slots[e]
        if s >= 0:
            for k in range(D):
                out[s, k] = rows[e, k]
    return out


def spmm_packed_kernel(op: str, reduce: str, pattern: tuple):
    """SpMM straight over a DynamicGraph's packed memory array: thread ``t`` walks rows (sources)
    ``bounds[t]:bounds[t+1]``, skipping walls, gaps and tombstones (negative ids), and reduces into its
    own ``part_out[t]`` (pre-filled with the reducer's identity), like the COO kernel. Rows go in source
    order, so after :func:`combine_extreme` ties go to the lowest source: the first edge in the CSC
    order of the graph's snapshot."""
    return _spmm_packed_kernel(op, _family(reduce), pattern)


@functools.cache
def _spmm_packed_kernel(op: str, reduce: str, pattern: tuple):
    OP = _OP_CODE[op]
    USE_X = op != "copy_rhs"
    USE_W = op != "copy_lhs"
    LA, LB, RA, RB, GENERAL = pattern
    IS_SUM = reduce == "sum"
    IS_MAX = reduce == "max"
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
