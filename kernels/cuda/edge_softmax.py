"""Edge softmax on the GPU over the rows of the CSC (or the CSR for ``norm_by="src"``), fused per row.

The driver sorts the non-empty rows once per graph into three lists by degree (``small_degree``,
``hub_degree``: :func:`classify_rows`, with the knobs ``cuda_softmax_*`` of graphkern.tuning), and each
list has its own launch:

``rows_kernel`` with ``width`` 8    rows of at most ``small_degree`` edges, four rows to a warp (a group of
                                     8 lanes each), so short rows do not leave most of a warp idle;
``rows_kernel`` with ``width`` 32   rows up to ``hub_degree`` edges, one warp each;
``hub_kernels``                      longer rows, cut into chunks of at most ``chunk_edges`` edges, a block
                                     of ``HUB_BLOCK`` threads per chunk: a first kernel stores each
                                     chunk's maximum and sum (block reductions: warp shuffles, then one
                                     slot per warp in shared memory), a second combines the chunks of the
                                     row in chunk order and writes the chunk.

For every head a row is read twice: a first pass keeps, per thread, a running maximum ``m`` and the sum
``s`` of ``exp(z - m)`` rescaled whenever the maximum grows (the "online" softmax normaliser), the
threads' pairs are combined into the row's maximum and sum, and a second pass writes
``exp(z - max) / sum`` to the edges' ids. Only the output is written. The results equal the three-pass
definition up to float32 rounding (float64 for float64 logits; float16 logits accumulate in float32).

Infinite logits behave as in the three-pass form: ``-inf`` edges get 0, a row of only ``-inf`` gives NaN
(``exp(-inf - -inf)``), a ``+inf`` logit makes its whole row NaN, and so does a NaN logit.
"""

from __future__ import annotations

import functools
import math

import numba
from numba import cuda

from .launch import WARP
from .spmm import block_jit, chunk_rows
from .warp import group_max, group_sum

# short rows share a warp in groups of SMALL_WIDTH lanes; hub rows take blocks of HUB_BLOCK threads (a
# compile-time size: the block reductions' shared arrays). The degree limits are the driver's.
SMALL_WIDTH = 8
HUB_BLOCK = 512
_HUB_WARPS = HUB_BLOCK // WARP  # per-warp slots of the block reductions (shared arrays need a constant size)


def classify_rows(indptr, small_degree: int, hub_degree: int, chunk_edges: int):
    """Host side: ``(small_rows, medium_rows, chunks)``: the non-empty rows of at most ``small_degree``
    and of at most ``hub_degree`` edges (int64 arrays), and the longer rows cut into chunks of at most
    ``chunk_edges`` edges (:func:`.spmm.chunk_rows`)."""
    import numpy as np

    indptr = np.asarray(indptr, np.int64)
    deg = np.diff(indptr)
    return (np.flatnonzero((deg > 0) & (deg <= small_degree)),
            np.flatnonzero((deg > small_degree) & (deg <= hub_degree)),
            chunk_rows(indptr, np.flatnonzero(deg > hub_degree), chunk_edges))


@functools.cache
def _device_functions(acc: str):
    ACC = numba.float64 if acc == "float64" else numba.float32
    NEG_INF = -math.inf

    @cuda.jit(device=True)
    def running(first, end, step, eids, has_eids, logits, h):
        """This thread's ``(m, s)`` over the edges ``first, first + step, ... < end``."""
        m = ACC(NEG_INF)
        s = ACC(0)
        for j in range(first, end, step):
            val = ACC(logits[eids[j] if has_eids else j, h])
            if val > m:
                s = s * math.exp(m - val) + ACC(1)  # exp(-inf) = 0 for the first finite value
                m = val
            elif m != NEG_INF or val != val:
                # skipped only for -inf against a maximum of -inf: it adds 0, exp(-inf - -inf) would add NaN
                s += math.exp(val - m)
        return m, s

    @cuda.jit(device=True)
    def rescaled(m, s, top):
        """``s * exp(m - top)``: a thread's sum relative to the row's maximum ``top >= m``."""
        if m == top:
            return s
        if m == NEG_INF:
            return ACC(0)
        return s * math.exp(m - top)

    @cuda.jit(device=True)
    def inverse(total, top):
        """``1 / total``; 0 for an empty range (its group writes nothing); NaN for a row whose maximum is
        ``+inf``, whose exact sum holds ``exp(inf - inf)`` (the running sums saw 0 for it)."""
        if top == math.inf:
            return ACC(math.nan)
        return ACC(1) / total if total != 0 else ACC(0)

    @cuda.jit(device=True)
    def write(first, end, step, eids, has_eids, logits, out, h, top, inv):
        for j in range(first, end, step):
            e = eids[j] if has_eids else j
            out[e, h] = math.exp(ACC(logits[e, h]) - top) * inv

    return ACC, running, rescaled, inverse, write


@functools.cache
def rows_kernel(acc: str):
    """``kernel(rows, indptr, eids, has_eids, logits, out, width)``: a group of ``width`` lanes (a power of
    two, at most 32) per listed row; ``logits``/``out`` are ``(num_edge_ids, H)``."""
    ACC, running, rescaled, inverse, write = _device_functions(acc)

    @cuda.jit
    def kernel(rows, indptr, eids, has_eids, logits, out, width):
        lane = cuda.threadIdx.x % WARP
        sub = lane % width
        per_warp = WARP // width
        warp = cuda.grid(1) // WARP
        warps = cuda.gridsize(1) // WARP
        n = rows.size
        H = logits.shape[1]
        # warp-uniform loop: every lane reaches every reduction; a group past the list has an empty range
        for base in range(warp * per_warp, n, warps * per_warp):
            i = base + lane // width
            start = 0
            end = 0
            if i < n:
                v = rows[i]
                start = indptr[v]
                end = indptr[v + 1]
            for h in range(H):
                m, s = running(start + sub, end, width, eids, has_eids, logits, h)
                top = ACC(group_max(m, width))
                total = ACC(group_sum(rescaled(m, s, top), width))
                write(start + sub, end, width, eids, has_eids, logits, out, h, top, inverse(total, top))

    return kernel


@functools.cache
def hub_kernels(acc: str):
    """``(partial, finish)`` over the chunks of the long rows (:func:`.spmm.chunk_rows`), a block per chunk (any
    block size that is a multiple of 32 up to ``HUB_BLOCK``):

    ``partial(chunks, eids, has_eids, logits, chunk_max, chunk_sum)`` stores each chunk's maximum and its
    sum of ``exp(z - maximum)`` per head (``(num_chunks, H)`` arrays in the accumulator dtype);
    ``finish(chunks, eids, has_eids, logits, chunk_max, chunk_sum, out)`` combines the pairs of the
    chunk's row in chunk order (the same result in every block of the row) and writes the chunk."""
    ACC, running, rescaled, inverse, write = _device_functions(acc)

    @cuda.jit(device=True)
    def block_pair(m, s, part_m, part_s):
        """The block's ``(maximum, sum relative to it)`` from every thread's pair, in every thread."""
        lane = cuda.threadIdx.x % WARP
        warp = cuda.threadIdx.x // WARP
        wm = ACC(group_max(m, WARP))
        ws = ACC(group_sum(rescaled(m, s, wm), WARP))
        if lane == 0:
            part_m[warp] = wm
            part_s[warp] = ws
        cuda.syncthreads()
        # every thread combines the warps' pairs itself, in warp order (no second shuffle level)
        nw = cuda.blockDim.x // WARP
        top = ACC(part_m[0])
        for p in range(1, nw):
            if ACC(part_m[p]) > top:
                top = ACC(part_m[p])
        total = ACC(0)
        for p in range(nw):
            total += rescaled(ACC(part_m[p]), ACC(part_s[p]), top)
        cuda.syncthreads()  # every thread has read the slots before the next call overwrites them
        return top, total

    @block_jit(HUB_BLOCK)
    def partial(chunks, eids, has_eids, logits, chunk_max, chunk_sum):
        part_m = cuda.shared.array(_HUB_WARPS, numba.float64)
        part_s = cuda.shared.array(_HUB_WARPS, numba.float64)
        t = cuda.threadIdx.x
        H = logits.shape[1]
        for c in range(cuda.blockIdx.x, chunks.shape[1], cuda.gridDim.x):
            start = chunks[0, c]
            end = chunks[1, c]
            for h in range(H):
                m, s = running(start + t, end, cuda.blockDim.x, eids, has_eids, logits, h)
                top, total = block_pair(m, s, part_m, part_s)
                if t == 0:
                    chunk_max[c, h] = top
                    chunk_sum[c, h] = total

    @block_jit(HUB_BLOCK)
    def finish(chunks, eids, has_eids, logits, chunk_max, chunk_sum, out):
        t = cuda.threadIdx.x
        H = logits.shape[1]
        for c in range(cuda.blockIdx.x, chunks.shape[1], cuda.gridDim.x):
            start = chunks[0, c]
            end = chunks[1, c]
            first = chunks[2, c]
            last = first + chunks[3, c]
            for h in range(H):
                top = ACC(chunk_max[first, h])
                for q in range(first + 1, last):
                    if chunk_max[q, h] > top:
                        top = ACC(chunk_max[q, h])
                total = ACC(0)
                for q in range(first, last):
                    total += rescaled(ACC(chunk_max[q, h]), ACC(chunk_sum[q, h]), top)
                write(start + t, end, cuda.blockDim.x, eids, has_eids, logits, out, h, top, inverse(total, top))

    return partial, finish
