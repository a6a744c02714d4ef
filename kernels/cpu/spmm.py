"""g-SpMM on the CPU: ``out[v] = reduce over in-edges (u, e, v) of op(x[u], w[e])``.

Two paths, as in DGL, with graphkern's choices:

``spmm_csc``  destination-parallel over the CSC. Rows are split into parts of about equal non-zeros (not
              equal row counts, which load-imbalance power-law graphs), every row is reduced by one thread
              in CSC order: sums are deterministic and max/min ties go to the first edge in CSC order.
``spmm_coo``  edge-parallel over the COO, for graphs where CSC is not allowed. Each thread reduces its
              contiguous chunk of edges into a private output; the partials are combined in chunk order,
              so ties still go to the earliest edge and there is no lock (DGL takes a global critical
              section for COO max/min).

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

from ._intrinsics import prefetch_row

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


def nnz_balanced_parts(indptr: np.ndarray, parts: int) -> np.ndarray:
    """Row bounds of ``parts`` ranges with about equal non-zeros (a row is never split)."""
    nnz = int(indptr[-1])
    targets = (np.arange(1, parts, dtype=np.int64) * nnz) // parts
    inner = np.searchsorted(indptr, targets, side="right") - 1
    bounds = np.concatenate([[0], np.clip(inner, 0, indptr.size - 1), [indptr.size - 1]]).astype(np.int64)
    return np.maximum.accumulate(bounds)


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
                    inv = 1.0 / (end - start)
                    for k in range(D):
                        out[v, k] *= inv

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
            inv = 1.0 / d
            for k in range(D):
                out[v, k] *= inv


@functools.cache
def spmm_tiled_csr_kernel(op: str, reduce: str, pattern: tuple):
    """Source-order sum over destination tiles: ``kernel(tile_indptr, indices, eids, has_eids, num_rows,
    x, w, A, B, loff, roff, out)``.

    ``tile_indptr`` has ``T * num_rows + 1`` entries: tile ``t`` is a CSR (rows = sources) holding only
    the edges whose destination lies in tile ``t``'s range, so thread ``t`` owns its output rows and needs
    no atomics or partial copies. Within a tile the edges stay in CSR order, so edge rows of ``w`` (edge-id
    order follows the CSR) stream instead of being gathered at random, and every output row adds its
    edges in the same order whatever the tile count (deterministic).
    """
    OP = _OP_CODE[op]
    USE_X = op != "copy_rhs"
    USE_W = op != "copy_lhs"
    LA, LB, RA, RB, GENERAL = pattern
    if reduce not in ("sum", "mean"):
        raise ValueError("the tiled CSR path reduces by sum (mean divides afterwards)")

    @njit(parallel=True, cache=True)
    def kernel(tile_indptr, indices, eids, has_eids, num_rows, x, w, A, B, loff, roff, out):
        la = stride_for(LA, B)
        ra = stride_for(RA, B)
        num_tiles = (tile_indptr.size - 1) // max(num_rows, 1)
        nnz = indices.size
        out_bytes = out.shape[1] * out.itemsize
        for t in prange(num_tiles):
            base = t * num_rows
            for u in range(num_rows):
                for j in range(tile_indptr[base + u], tile_indptr[base + u + 1]):
                    if j + 16 < nnz:
                        prefetch_row(out, indices[j + 16], out_bytes)
                    v = indices[j]
                    e = eids[j] if has_eids else j
                    for a in range(A):
                        for b in range(B):
                            k = a * B + b
                            out[v, k] += message(OP, USE_X, USE_W, LB, RB, GENERAL, x, w, u, e, a, b, k, la, ra,
                                                 loff, roff)

    return kernel


@njit(parallel=True, cache=True)
def tile_keys(indptr, indices, tile_of_node, num_rows, keys):
    """``keys[j] = tile(dst of slot j) * num_rows + row(j)``: sorting by it groups a CSR into tiles."""
    for r in prange(num_rows):
        for j in range(indptr[r], indptr[r + 1]):
            keys[j] = tile_of_node[indices[j]] * num_rows + r
    return keys


def destination_tiles(indptr, indices, eids, num_dst, tiles):
    """Split a CSR into ``tiles`` CSRs by destination range, balanced by in-degree.

    Returns ``(tile_indptr, tile_indices, tile_eids)`` with ``tiles * num_rows + 1`` row pointers. One
    stable count sort (the same kernel as every format change) by ``tile * num_rows + row``.
    """
    from .sort import coo_to_compressed, histogram

    num_rows = indptr.size - 1
    in_deg = histogram(indices, num_dst, np.int64)
    cum = np.cumsum(in_deg)
    targets = (np.arange(1, tiles, dtype=np.int64) * int(indices.size)) // tiles
    cuts = np.searchsorted(cum, targets, side="left") + 1
    bounds = np.concatenate([[0], np.minimum(cuts, num_dst), [num_dst]])
    tile_of_node = np.repeat(np.arange(tiles, dtype=np.int64), np.diff(np.maximum.accumulate(bounds)))
    key_dtype = np.int64 if tiles * num_rows >= np.iinfo(np.int32).max else indices.dtype
    keys = tile_keys(indptr, indices, tile_of_node.astype(key_dtype), num_rows, np.empty(indices.size, key_dtype))
    # eids None: slot j of the CSR is edge j, which is what the sort records for each moved slot
    return coo_to_compressed(keys, indices, eids, tiles * num_rows)


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
