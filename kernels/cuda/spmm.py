"""g-SpMM on the GPU: ``out[v] = reduce over in-edges (u, e, v) of op(x[u], w[e])``.

``spmm_csc``  destination-parallel: one warp per row, its lanes over the feature dimension (coalesced
              row loads of ``x`` and ``w``; outputs narrower than 32 elements take a group of lanes as
              wide as the output rounded up to a power of two, several rows to a warp), each lane
              walking the row's edges in CSC order, so sums are deterministic and max/min ties go to the
              first edge as on the CPU. A lane finds its element's operand offsets once per row (the
              broadcast strides are compile-time constants; no division in the edge loop) and takes
              ``UNROLL`` edges at a time: their ids, then their rows, then the in-order combine, so that
              several row loads are in flight per lane. Rows with more than ``hub_degree`` in-edges are
              cut into chunks of ``chunk_edges`` edges (both the driver's, from the knobs
              ``cuda_spmm_hub_degree`` and ``cuda_spmm_chunk_edges`` of graphkern.tuning), a block of
              ``HUB_BLOCK`` threads per chunk: its
              warps reduce contiguous pieces of the chunk, warp 0 combines them in order into a
              per-chunk partial, and a second kernel combines a row's chunks in order (still
              deterministic, still first-edge ties).
``spmm_coo``  edge-parallel with atomics, for graphs that do not allow the CSC: one thread per (edge,
              feature) element. Sums use ``atomic.add`` (so their rounding order is not fixed); max/min take
              ``atomic.max``/``atomic.min`` and a second pass that records, for every output element, the
              earliest edge attaining it (``atomic.min`` on the COO position): CSC order within a
              destination is COO order, so ties resolve as on the CPU.

Values are accumulated in ``float32`` for float16 and float32 inputs and in ``float64`` for float64,
and stored in the input dtype. Kernels are generated per (op, reducer, broadcast pattern, accumulator)
with the op and the strides as closure constants; graphkern's spmm() validated every input.
"""

from __future__ import annotations

import functools

import numba
import numpy as np
from numba import cuda

from ..cpu.spmm import OPS, REDUCERS  # noqa: F401  (the same names on both backends)
from .launch import SIMULATED, WARP

_OP_CODE = {name: i for i, name in enumerate(OPS)}
# threads of the block that reduces a chunk of a hub row (a compile-time size: the block's shared arrays);
# which rows are hubs and how long a chunk is are the driver's (graphkern.tuning, cuda_spmm_*)
HUB_BLOCK = 512
# edges a lane of the CSC kernels loads at a time (reduce_range spells the four out)
UNROLL = 4


def _accumulator(acc: str):
    return numba.float64 if acc == "float64" else numba.float32


def make_message(op: str, pattern: tuple, acc: str):
    """``(offsets, message)``: device functions for one (op, pattern).

    ``offsets(k, B, loff, roff) -> (xi, wi)``: where output element ``k`` reads each operand's row (the
    only place with a division, so kernels call it once per element, outside their edge loops);
    ``message(x, w, u, e, xi, wi) -> acc``: the op on ``x[u, xi]`` and ``w[e, wi]``."""
    OP = _OP_CODE[op]
    USE_X = op != "copy_rhs"
    USE_W = op != "copy_lhs"
    LA, LB, RA, RB, GENERAL = pattern
    ACC = _accumulator(acc)

    @cuda.jit(device=True)
    def offsets(k, B, loff, roff):
        if GENERAL:
            return loff[k], roff[k]
        a = k // B
        b = k - a * B
        la = 0 if LA == 0 else (1 if LA == 1 else B)
        ra = 0 if RA == 0 else (1 if RA == 1 else B)
        return a * la + b * LB, a * ra + b * RB

    @cuda.jit(device=True)
    def message(x, w, u, e, xi, wi):
        lhs = ACC(x[u, xi]) if USE_X else ACC(0)
        rhs = ACC(w[e, wi]) if USE_W else ACC(0)
        if OP == 0:
            return lhs + rhs
        if OP == 1:
            return lhs - rhs
        if OP == 2:
            return lhs * rhs
        if OP == 3:
            return lhs / rhs
        if OP == 4:
            return lhs
        return rhs

    return offsets, message


def row_width(D: int) -> int:
    """Lanes per row of the light kernel: the output row rounded up to a power of two, at most a warp, so
    that narrow outputs (a scalar per edge, a few heads) put several rows on a warp instead of idle lanes."""
    width = 1
    while width < min(int(D), WARP):
        width *= 2
    return width


def block_jit(block: int):
    """``cuda.jit`` for a kernel launched with up to ``block`` threads per block: on a GPU it is held to
    ``65536 // block`` registers per thread (an SM's register file), so that such a block can always
    launch however many registers the unrolled loops would like. The simulator takes no such option."""
    if SIMULATED:
        return cuda.jit
    return cuda.jit(max_registers=65536 // block)


def chunk_rows(indptr, rows, chunk_edges: int):
    """Host side: the listed rows (of a host ``indptr``) cut into pieces of at most ``chunk_edges`` edges,
    as an int64 array of shape ``(5, num_chunks)``: each chunk's first and past-the-end edge, the index of
    its row's first chunk, its row's number of chunks, and the row (a row's chunks are consecutive, in
    edge order)."""
    indptr = np.asarray(indptr, np.int64)
    rows = np.asarray(rows, np.int64)
    starts, ends = indptr[rows], indptr[rows + 1]
    count = -(-(ends - starts) // chunk_edges)
    row = np.repeat(np.arange(rows.size), count)
    first = np.cumsum(count) - count
    begin = starts[row] + (np.arange(row.size) - first[row]) * chunk_edges
    return np.stack([begin, np.minimum(begin + chunk_edges, ends[row]), first[row], count[row],
                     rows[row]]).astype(np.int64).reshape(5, -1)


@functools.cache
def spmm_csc_kernel(op: str, reduce: str, pattern: tuple, acc: str):
    """``(light, hub, finish)``; ``out`` zero-filled and the args -1-filled by the caller (the empty-row rule).

    ``light(indptr, indices, eids, has_eids, x, w, B, D, loff, roff, hub_degree, out, arg_u, arg_e, with_arg,
    width)``: a group of ``width`` lanes per row (:func:`row_width`), rows above ``hub_degree`` skipped;
    ``hub(chunks, indices, eids, has_eids, x, w, B, D, loff, roff, part_val, part_u, part_e)``: a block per
    chunk of a long row (:func:`chunk_rows`; any block size that is a multiple of 32 up to ``HUB_BLOCK``),
    its result per output element into row ``c`` of the ``(num_chunks, D)`` partial arrays (accumulator
    dtype, int64, int64; the two int64 ones only for max/min, placeholders for sums);
    ``finish(chunks, D, part_val, part_u, part_e, out, arg_u, arg_e, with_arg)``: a block per long row
    (at its first chunk), combining the row's chunks in order and storing the row."""
    offsets, message = make_message(op, pattern, acc)
    USE_X = op != "copy_rhs"
    USE_W = op != "copy_lhs"
    IS_SUM = reduce in ("sum", "mean")
    IS_MEAN = reduce == "mean"
    IS_MAX = reduce == "max"
    ACC = _accumulator(acc)

    @cuda.jit(device=True)
    def better(val, best):
        return (val > best) if IS_MAX else (val < best)

    @cuda.jit(device=True)
    def reduce_range(indices, eids, has_eids, x, w, xi, wi, start, end):
        """The reduction over edges ``start..end`` of one output element, in edge order. The main loop
        takes ``UNROLL`` edges at a time: their ids first, then their rows, so that a lane has that many
        independent row loads in flight before it combines them (still in edge order: the same sums and
        the same first-edge ties as one at a time)."""
        if IS_SUM:
            best = ACC(0)
        else:
            best = ACC(-np.inf) if IS_MAX else ACC(np.inf)
        bu = -1
        be = -1
        j = start
        while j + UNROLL <= end:
            u0 = indices[j]
            u1 = indices[j + 1]
            u2 = indices[j + 2]
            u3 = indices[j + 3]
            e0 = eids[j] if has_eids else j
            e1 = eids[j + 1] if has_eids else j + 1
            e2 = eids[j + 2] if has_eids else j + 2
            e3 = eids[j + 3] if has_eids else j + 3
            m0 = message(x, w, u0, e0, xi, wi)
            m1 = message(x, w, u1, e1, xi, wi)
            m2 = message(x, w, u2, e2, xi, wi)
            m3 = message(x, w, u3, e3, xi, wi)
            if IS_SUM:
                best = best + m0 + m1 + m2 + m3  # left to right: the order of the one-at-a-time loop
            else:
                if better(m0, best):
                    best, bu, be = m0, u0, e0
                if better(m1, best):
                    best, bu, be = m1, u1, e1
                if better(m2, best):
                    best, bu, be = m2, u2, e2
                if better(m3, best):
                    best, bu, be = m3, u3, e3
            j += UNROLL
        while j < end:
            u = indices[j]
            e = eids[j] if has_eids else j
            val = message(x, w, u, e, xi, wi)
            if IS_SUM:
                best += val
            elif better(val, best):
                best, bu, be = val, u, e
            j += 1
        return best, bu, be

    @cuda.jit(device=True)
    def combine(best, bu, be, val, u, e):
        """``best`` (from earlier edges) and a later piece's result: the sum, or the later piece's winner
        only when it has one (``u >= 0``) and it is strictly better (first-edge ties)."""
        if IS_SUM:
            return best + val, bu, be
        if u >= 0 and better(val, best):
            return val, u, e
        return best, bu, be

    @cuda.jit(device=True)
    def store(out, arg_u, arg_e, with_arg, v, k, best, bu, be, degree):
        if IS_MEAN:
            best = best / degree
        out[v, k] = best
        if with_arg and not IS_SUM and bu >= 0:
            if USE_X:
                arg_u[v, k] = bu
            if USE_W:
                arg_e[v, k] = be

    @cuda.jit
    def light(indptr, indices, eids, has_eids, x, w, B, D, loff, roff, hub_degree, out, arg_u, arg_e, with_arg,
              width):
        # a group of `width` lanes per row (no lane talks to another, so groups need not stay in step)
        tid = cuda.grid(1)
        sub = tid % width
        for v in range(tid // width, indptr.size - 1, cuda.gridsize(1) // width):
            start = indptr[v]
            end = indptr[v + 1]
            if end == start or end - start > hub_degree:
                continue
            for k in range(sub, D, width):
                xi, wi = offsets(k, B, loff, roff)
                best, bu, be = reduce_range(indices, eids, has_eids, x, w, xi, wi, start, end)
                store(out, arg_u, arg_e, with_arg, v, k, best, bu, be, end - start)

    @block_jit(HUB_BLOCK)
    def hub(chunks, indices, eids, has_eids, x, w, B, D, loff, roff, part_val, part_u, part_e):
        piece_val = cuda.shared.array(HUB_BLOCK, numba.float64)
        piece_u = cuda.shared.array(HUB_BLOCK, numba.int64)
        piece_e = cuda.shared.array(HUB_BLOCK, numba.int64)
        t = cuda.threadIdx.x
        lane = t % WARP
        warp = t // WARP
        nw = cuda.blockDim.x // WARP
        for c in range(cuda.blockIdx.x, chunks.shape[1], cuda.gridDim.x):
            start = chunks[0, c]
            end = chunks[1, c]
            piece = (end - start + nw - 1) // nw
            lo = min(end, start + warp * piece)
            hi = min(end, lo + piece)
            for k0 in range(0, D, WARP):
                k = k0 + lane
                best = ACC(0)
                bu = -1
                be = -1
                if k < D:
                    xi, wi = offsets(k, B, loff, roff)
                    best, bu, be = reduce_range(indices, eids, has_eids, x, w, xi, wi, lo, hi)
                piece_val[t] = best
                piece_u[t] = bu
                piece_e[t] = be
                cuda.syncthreads()
                if warp == 0 and k < D:
                    best = ACC(piece_val[lane])
                    bu = piece_u[lane]
                    be = piece_e[lane]
                    for p in range(1, nw):  # pieces in edge order: a later piece wins only if strictly better
                        best, bu, be = combine(best, bu, be, ACC(piece_val[p * WARP + lane]), piece_u[p * WARP + lane],
                                               piece_e[p * WARP + lane])
                    part_val[c, k] = best
                    if not IS_SUM:  # sums carry no winners (their arrays are placeholders)
                        part_u[c, k] = bu
                        part_e[c, k] = be
                cuda.syncthreads()

    @cuda.jit
    def finish(chunks, D, part_val, part_u, part_e, out, arg_u, arg_e, with_arg):
        for c in range(cuda.blockIdx.x, chunks.shape[1], cuda.gridDim.x):
            if chunks[2, c] != c:
                continue  # not its row's first chunk (the same for the whole block)
            last = c + chunks[3, c]
            v = chunks[4, c]
            degree = chunks[1, last - 1] - chunks[0, c]
            for k in range(cuda.threadIdx.x, D, cuda.blockDim.x):
                best = ACC(part_val[c, k])
                bu = -1
                be = -1
                if not IS_SUM:
                    bu = part_u[c, k]
                    be = part_e[c, k]
                for q in range(c + 1, last):  # chunks in edge order, as the pieces within a chunk
                    if IS_SUM:
                        best += ACC(part_val[q, k])
                    else:
                        best, bu, be = combine(best, bu, be, ACC(part_val[q, k]), part_u[q, k], part_e[q, k])
                store(out, arg_u, arg_e, with_arg, v, k, best, bu, be, degree)

    return light, hub, finish


@functools.cache
def spmm_coo_kernel(op: str, reduce: str, pattern: tuple, acc: str):
    """``(accumulate, pick_args)``: edge-parallel atomics into ``acc_out`` (``(num_dst, D)`` in the
    accumulator dtype, pre-filled with the reducer's identity), then for max/min the earliest COO
    position attaining each element into ``pos`` (pre-filled with E)."""
    offsets, message = make_message(op, pattern, acc)
    IS_SUM = reduce in ("sum", "mean")
    IS_MAX = reduce == "max"

    @cuda.jit
    def accumulate(src, dst, eids, has_eids, x, w, B, D, loff, roff, acc_out):
        total = src.size * D
        for idx in range(cuda.grid(1), total, cuda.gridsize(1)):
            i = idx // D
            k = idx - i * D
            e = eids[i] if has_eids else i
            xi, wi = offsets(k, B, loff, roff)
            val = message(x, w, src[i], e, xi, wi)
            if IS_SUM:
                cuda.atomic.add(acc_out, (dst[i], k), val)
            elif val == val:  # NaN never wins a max/min
                if IS_MAX:
                    cuda.atomic.max(acc_out, (dst[i], k), val)
                else:
                    cuda.atomic.min(acc_out, (dst[i], k), val)

    @cuda.jit
    def pick_args(src, dst, eids, has_eids, x, w, B, D, loff, roff, acc_out, pos):
        total = src.size * D
        for idx in range(cuda.grid(1), total, cuda.gridsize(1)):
            i = idx // D
            k = idx - i * D
            e = eids[i] if has_eids else i
            xi, wi = offsets(k, B, loff, roff)
            if message(x, w, src[i], e, xi, wi) == acc_out[dst[i], k]:
                cuda.atomic.min(pos, (dst[i], k), i)

    return accumulate, pick_args


@cuda.jit
def finish_coo(acc_out, pos, src, eids, has_eids, degrees, is_mean, is_sum, with_arg_u, with_arg_e, out, arg_u,
               arg_e):
    """Store the accumulated values: empty rows 0 (args stay -1), mean divides by the in-degree, and the
    arg outputs come from the recorded COO positions."""
    N, D = out.shape
    E = src.size
    for idx in range(cuda.grid(1), N * D, cuda.gridsize(1)):
        v = idx // D
        k = idx - v * D
        d = degrees[v]
        if d == 0:
            out[v, k] = 0
            continue
        val = acc_out[v, k]
        if is_mean:
            val = val / d
        out[v, k] = val
        if not is_sum and (with_arg_u or with_arg_e):  # without args, pos is a (1, 1) placeholder
            p = pos[v, k]
            if p < E:
                if with_arg_u:
                    arg_u[v, k] = src[p]
                if with_arg_e:
                    arg_e[v, k] = eids[p] if has_eids else p

