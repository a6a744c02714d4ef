"""The building blocks every SpMM kernel shares (kernels/cpu/spmm.py, spmm_blocked.py) and SDDMM reuses.

Constants of the vector layout (:data:`LANES`, :data:`GROUP`), the ops and reducers, the constants a
kernel factory closes over (:func:`kernel_constants`), and the ``inline="always"`` device functions
that compute and reduce one edge's message, as scalars (:func:`message`, :func:`accumulate_edge`) or
one vector chunk of an output row at a time (:func:`vector_message`, :func:`extreme_step`,
:func:`store_chunk`). Their leading upper-case arguments are the calling kernel's compile-time
constants: each call is inlined and the dead branches fold away.

They are module-level functions rather than closures, since a closure over another compiled function
gives the kernel a cache key that changes every process (Numba would compile it again each time).
"""

from __future__ import annotations

from numba import njit

from ._intrinsics import prefetch_elements
from ._simd import vfull, vgt, vint, vload, vlt, vmax, vmin, vselect, vsplat, vstore, vzeros

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


def kernel_family(reduce: str) -> str:
    """The compiled kernel a reducer runs: ``mean`` is ``sum`` and a division."""
    return "sum" if reduce == "mean" else reduce


def kernel_constants(op: str, reduce: str, pattern: tuple) -> tuple:
    """The compile-time constants a kernel factory closes over, in the order the kernels name them:
    ``(OP, USE_X, USE_W, LA, LB, RA, RB, GENERAL, IS_SUM, IS_MAX)``.

    ``OP`` is the op's code for :func:`apply_op`; ``USE_X``/``USE_W`` say which operands the op reads;
    ``LA, LB, RA, RB, GENERAL`` is the broadcast pattern (graphkern._broadcast); ``IS_SUM``/``IS_MAX``
    name the reducer family (``reduce`` is ``"sum"``, ``"max"`` or ``"min"``: :func:`kernel_family`
    folds ``mean`` into ``sum`` first). Scalars only (no compiled function), so a kernel closing over
    them keeps a stable key in Numba's on-disk cache.
    """
    LA, LB, RA, RB, GENERAL = pattern
    return _OP_CODE[op], op != "copy_rhs", op != "copy_lhs", LA, LB, RA, RB, GENERAL, reduce == "sum", reduce == "max"


def vector_chunks(A: int, B: int) -> int:
    """Vector chunks of an ``A x B`` output row: each ``a`` gets ``ceil(B / LANES)`` (the last one masked)."""
    return A * -(-B // LANES)


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
