"""g-SDDMM on the CPU: ``out[e] = op(L[e], R[e])`` with operands taken from u, v or e of each edge.

Orders over the same kernel body, generated per (op, broadcast pattern, format):

``csr``  source-parallel over out-CSR rows (nnz-balanced parts): every out-edge of ``u`` reuses the row
         ``x[u]`` while it is in L1, which is what DGL's per-edge COO loop throws away.
``coo``  edge-parallel over the COO slots; when the COO is in edge-id order the output is written
         sequentially.
``blocked``  operands from u and v over the destination blocks of the SpMM's blocked path (destination
         rows in the L2 cache, source rows streamed), written in block order and then moved to edge-id
         order (:func:`sddmm_blocked_kernel`, :func:`rows_to_edge_order`).

``dot`` reduces over the last axis of both operands (length ``reduce_size``) for each output element.
The output is always indexed by edge id. Kernels trust their inputs (graphkern.sparse validated them).
"""

from __future__ import annotations

import functools

import numpy as np
from numba import njit, prange

from ._intrinsics import prefetch_row
from ._simd import vload, vmask, vstore, vsum, vzeros
from ._spmm_common import LANES, apply_op, operand_vector, stride_for

OPS = ("add", "sub", "mul", "div", "dot", "copy_lhs", "copy_rhs")
_OP_CODE = {"add": 0, "sub": 1, "mul": 2, "div": 3, "copy_lhs": 4, "copy_rhs": 5, "dot": 6}
_TARGET_CODE = {"u": 0, "v": 1, "e": 2}


@njit(inline="always")
def _pick(target, u, v, e):
    if target == 0:
        return u
    if target == 1:
        return v
    return e


@njit(inline="always")
def _edge(OP, DOT, USE_L, USE_R, LB, RB, GENERAL, u, v, e, L, R, lt, rt, A, B, la, ra, RS, loff, roff, out):
    """One edge's outputs. The first seven arguments are the kernel's compile-time constants: the call is
    inlined into the kernel, where they fold (a module-level function keeps the kernel cacheable; a
    nested dispatcher in its closure would change the cache key in every process)."""
    li = _pick(lt, u, v, e)
    ri = _pick(rt, u, v, e)
    if not GENERAL:
        _edge_vector(OP, DOT, USE_L, USE_R, LB, RB, li, ri, e, L, R, A, B, la, ra, RS, out)
        return
    for k in range(A * B):  # offset tables: the general broadcast
        lo = loff[k]
        ro = roff[k]
        if DOT:
            acc = L[li, lo * RS] * R[ri, ro * RS]
            for t in range(1, RS):
                acc += L[li, lo * RS + t] * R[ri, ro * RS + t]
            out[e, k] = acc
        else:
            lval = L[li, lo] if USE_L else L[0, 0]
            rval = R[ri, ro] if USE_R else R[0, 0]
            out[e, k] = apply_op(OP, lval, rval)


@njit(inline="always")
def _edge_vector(OP, DOT, USE_L, USE_R, LB, RB, li, ri, e, L, R, A, B, la, ra, RS, out):
    """One edge's outputs with explicit vectors (the strided patterns). ``dot``: each output element is
    the lane sum (a fixed tree) of vector products over chunks of the reduced axis; elementwise ops:
    vector chunks of ``b`` within each ``a``, the last one masked, as in the SpMM kernels."""
    if DOT:
        for a in range(A):
            for b in range(B):
                lo = (a * la + b * LB) * RS
                ro = (a * ra + b * RB) * RS
                acc = vzeros(out, LANES)
                for t in range(0, RS, LANES):
                    mask = vmask(RS - t, LANES)
                    acc = acc + vload(L, li, lo + t, mask) * vload(R, ri, ro + t, mask)
                out[e, a * B + b] = vsum(acc)
        return
    for a in range(A):
        for b0 in range(0, B, LANES):
            mask = vmask(B - b0, LANES)
            lv = operand_vector(L, li, a, la, b0, LB, mask) if USE_L else vzeros(L, LANES)
            rv = operand_vector(R, ri, a, ra, b0, RB, mask) if USE_R else vzeros(R, LANES)
            vstore(out, e, a * B + b0, apply_op(OP, lv, rv), mask)


def target_codes(lhs_target: str, rhs_target: str) -> tuple[int, int]:
    """The runtime codes of two targets (u, v, e) for :func:`sddmm_kernel`."""
    return _TARGET_CODE[lhs_target], _TARGET_CODE[rhs_target]


@functools.cache
def sddmm_kernel(op: str, pattern: tuple, fmt: str):
    """``kernel(a, b, eids, has_eids, bounds, L, R, lhs_target, rhs_target, A, B, reduce_size, loff, roff, out)``.

    The targets are runtime codes (:func:`target_codes`): picking a row per edge is a cheap branch, and
    keeping them out of the specialisation divides the number of compiled kernels by nine.

    ``fmt == "coo"``: ``a, b`` are src and dst and ``bounds`` split the slots; ``fmt == "csr"``: ``a, b``
    are indptr and indices and ``bounds`` split the rows. ``L``/``R`` are 2-D row views (dummies for an
    unused operand); ``out`` is ``(E, A*B)``.
    """
    OP = _OP_CODE[op]
    DOT = op == "dot"
    USE_L = op != "copy_rhs"
    USE_R = op != "copy_lhs"
    LA, LB, RA, RB, GENERAL = pattern
    CSR = fmt == "csr"

    @njit(parallel=True, cache=True)
    def kernel(a_arr, b_arr, eids, has_eids, bounds, L, R, lt, rt, A, B, RS, loff, roff, out):
        la = stride_for(LA, B)
        ra = stride_for(RA, B)
        nnz = b_arr.size
        l_bytes = L.shape[1] * L.itemsize
        r_bytes = R.shape[1] * R.itemsize
        dist = max(4, min(32, 2048 // max(l_bytes + r_bytes, 1)))
        # rows that a CSR walk reads at random: the destination operand (and edge rows behind eids)
        pf_l = USE_L and (lt == 1 or (lt == 2 and has_eids))
        pf_r = USE_R and (rt == 1 or (rt == 2 and has_eids))
        for p in prange(bounds.size - 1):
            if CSR:
                for u in range(bounds[p], bounds[p + 1]):
                    for j in range(a_arr[u], a_arr[u + 1]):
                        if j + dist < nnz:
                            ahead_v = b_arr[j + dist]
                            ahead_e = eids[j + dist] if has_eids else j + dist
                            if pf_l:
                                prefetch_row(L, ahead_v if lt == 1 else ahead_e, l_bytes)
                            if pf_r:
                                prefetch_row(R, ahead_v if rt == 1 else ahead_e, r_bytes)
                        e = eids[j] if has_eids else j
                        _edge(OP, DOT, USE_L, USE_R, LB, RB, GENERAL, u, b_arr[j], e, L, R, lt, rt, A, B, la, ra,
                              RS, loff, roff, out)
            else:
                for i in range(bounds[p], bounds[p + 1]):
                    if i + dist < nnz:
                        if USE_L and lt != 2:
                            prefetch_row(L, a_arr[i + dist] if lt == 0 else b_arr[i + dist], l_bytes)
                        if USE_R and rt != 2:
                            prefetch_row(R, a_arr[i + dist] if rt == 0 else b_arr[i + dist], r_bytes)
                    e = eids[i] if has_eids else i
                    _edge(OP, DOT, USE_L, USE_R, LB, RB, GENERAL, a_arr[i], b_arr[i], e, L, R, lt, rt, A, B, la, ra, RS,
                          loff, roff, out)

    return kernel


@functools.cache
def sddmm_packed_kernel(op: str, pattern: tuple):
    """SDDMM straight over a DynamicGraph's packed memory array (rows = sources; walls, gaps and
    tombstones skipped): ``kernel(keys, eids, row_off, bounds, L, R, lt, rt, A, B, RS, loff, roff, out)``
    with ``out`` indexed by the stable edge id. Each edge writes its own row: no races."""
    OP = _OP_CODE[op]
    DOT = op == "dot"
    USE_L = op != "copy_rhs"
    USE_R = op != "copy_lhs"
    LA, LB, RA, RB, GENERAL = pattern
    LOW = np.int64(0xFFFFFFFF)

    @njit(parallel=True, cache=True)
    def kernel(keys, eids, row_off, bounds, L, R, lt, rt, A, B, RS, loff, roff, out):
        la = stride_for(LA, B)
        ra = stride_for(RA, B)
        for p in prange(bounds.size - 1):
            for u in range(bounds[p], bounds[p + 1]):
                for s in range(row_off[u], row_off[u + 1]):
                    e = eids[s]
                    if e < 0:
                        continue
                    _edge(OP, DOT, USE_L, USE_R, LB, RB, GENERAL, u, keys[s] & LOW, e, L, R, lt, rt, A, B, la, ra, RS,
                          loff, roff, out)

    return kernel


def sddmm_blocked_kernel(op: str, pattern: tuple, lhs_target: str, rhs_target: str):
    """SDDMM over destination blocks (:func:`graphkern.kernels.cpu.blocks.destination_blocks`):
    ``kernel(groups, block_ptr, src, dst, L, R, A, B, RS, loff, roff, rows)``.

    Edge ``j`` of the block order writes ``rows[j]``; :func:`rows_to_edge_order` then moves each row to its
    edge id. Operands come from u or v only: an edge operand would be read through the ids at random.
    Why: in CSR order every edge gathers its destination's row from anywhere in the operand; here a
    block's destination rows stay in the L2 cache while the source rows stream in ascending order.
    With the reorder included it is faster than the CSR kernel (``python tools/compare_peers.py --family
    spmm``, the u_dot_v rows). The values are the CSR kernel's, bit for bit. The targets are compile-time
    constants here (four kernels at most).
    """
    return _sddmm_blocked_kernel(op, pattern, _TARGET_CODE[lhs_target], _TARGET_CODE[rhs_target])


@functools.cache
def _sddmm_blocked_kernel(op: str, pattern: tuple, LT: int, RT: int):
    OP = _OP_CODE[op]
    DOT = op == "dot"
    USE_L = op != "copy_rhs"
    USE_R = op != "copy_lhs"
    LA, LB, RA, RB, GENERAL = pattern

    @njit(parallel=True, cache=True)
    def kernel(groups, block_ptr, src, dst, L, R, A, B, RS, loff, roff, rows):
        la = stride_for(LA, B)
        ra = stride_for(RA, B)
        # one dot product of at most one vector an edge (u_dot_v with F <= 16): straight-line code
        one_vector_dot = DOT and not GENERAL and A * B == 1 and RS <= LANES
        mask = vmask(RS, LANES)
        for p in prange(groups.size - 1):
            for j in range(block_ptr[groups[p]], block_ptr[groups[p + 1]]):
                k = np.uint64(j)  # unsigned: no negative-index fix-up per load
                u = src[k]
                v = dst[k]
                if one_vector_dot:
                    rows[k, 0] = vsum(vload(L, u if LT == 0 else v, 0, mask) * vload(R, u if RT == 0 else v, 0, mask))
                else:
                    _edge(OP, DOT, USE_L, USE_R, LB, RB, GENERAL, u, v, j, L, R, LT, RT, A, B, la, ra, RS, loff, roff,
                          rows)

    return kernel


@njit(parallel=True, cache=True)
def rows_to_edge_order(slots, rows, out):
    """``out[e] = rows[slots[e]]`` (0 where ``slots[e]`` is -1). Edge ids in order read the block-order rows
    as one stream per block, so the reorder streams too."""
    E, D = out.shape
    if D == 1:
        flat_out = out.ravel()
        flat_rows = rows.ravel()
        for e in prange(E):
            s = slots[e]
            flat_out[e] = flat_rows[s] if s >= 0 else 0
        return
    for e in prange(E):
        s = slots[e]
        for k in range(D):
            out[e, k] = rows[s, k] if s >= 0 else 0
