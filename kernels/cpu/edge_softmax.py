"""Edge softmax on the CPU: one fused pass per row (max, exp-sum, normalise), every head at once.

Rows are the CSC (normalise over the in-edges of a destination) or the CSR (over the out-edges of a
source), split into nnz-balanced parts. A row's logits are gathered once into a per-thread buffer (the
only random reads), max and exp-sum run on the buffer in cache, and the results are scattered once to
their edge ids, instead of three gathers and two scatters. Where the rows reach the logits through a
permutation, :func:`edge_softmax_edge_order` streams the edges in id order instead.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._fastmath import POW2, fast_exp, vexp32_finite
from ._intrinsics import prefetch_row
from ._simd import mask_and, vbits, vfull, vgt, vload_at, vlt, vmask, vmax, vmin, vstore_at

# edges ahead to prefetch the logits (and output) rows of, when rows are reached through edge ids
_PREFETCH_EDGES = 16


@njit(parallel=True, cache=True)
def edge_softmax_rows(indptr, eids, has_eids, parts, logits, out, pow2):
    """``out[e, h] = exp(logits[e, h] - m) / sum`` over the edges ``e`` of each row, per head ``h``."""
    H = logits.shape[1]
    nnz = eids.size if has_eids else 0
    row_bytes = H * logits.itemsize
    for p in prange(parts.size - 1):
        cap = 64
        buf = np.empty((cap, H), dtype=logits.dtype)
        row_max = np.empty(H, dtype=logits.dtype)
        row_sum = np.empty(H, dtype=logits.dtype)
        for v in range(parts[p], parts[p + 1]):
            start = indptr[v]
            deg = indptr[v + 1] - start
            if deg == 0:
                continue
            if deg > cap:
                cap = 2 * deg
                buf = np.empty((cap, H), dtype=logits.dtype)
            for h in range(H):
                row_max[h] = -np.inf
                row_sum[h] = 0
            for i in range(deg):
                if has_eids and start + i + _PREFETCH_EDGES < nnz:
                    ahead = eids[start + i + _PREFETCH_EDGES]
                    prefetch_row(logits, ahead, row_bytes)
                    prefetch_row(out, ahead, row_bytes)  # written in the last pass of this row
                e = eids[start + i] if has_eids else start + i
                for h in range(H):
                    val = logits[e, h]
                    buf[i, h] = val
                    if val > row_max[h]:
                        row_max[h] = val
            for i in range(deg):
                for h in range(H):
                    ex = fast_exp(buf[i, h] - row_max[h], pow2)
                    buf[i, h] = ex
                    row_sum[h] += ex
            for h in range(H):
                row_sum[h] = 1.0 / row_sum[h]
            for i in range(deg):
                e = eids[start + i] if has_eids else start + i
                for h in range(H):
                    out[e, h] = buf[i, h] * row_sum[h]


@njit(parallel=True, cache=True)
def _partial_max(keys, bounds, logits, part_max):
    H = logits.shape[1]
    for c in prange(bounds.size - 1):
        for e in range(bounds[c], bounds[c + 1]):
            k = keys[e]
            for h in range(H):
                val = logits[e, h]
                cur = part_max[c, k, h]
                part_max[c, k, h] = val if val > cur else cur  # branchless: keys arrive in random order


@njit(parallel=True, cache=True)
def _combine_max(part_max, row_max):
    C, N, H = part_max.shape
    for n in prange(N):
        for h in range(H):
            m = part_max[0, n, h]
            for c in range(1, C):
                if part_max[c, n, h] > m:
                    m = part_max[c, n, h]
            row_max[n, h] = m


@njit(parallel=True, cache=True)
def _exp_minus_row_max(keys, logits, row_max, out, pow2):
    """``out[e] = exp(logits[e] - row_max[keys[e]])``; the sums are :func:`_partial_sum`'s (apart, the two
    passes measured faster than one fused pass, ``python tools/compare_peers.py --family spmm``)."""
    E, H = logits.shape
    for e in prange(E):
        k = keys[e]
        for h in range(H):
            out[e, h] = fast_exp(logits[e, h] - row_max[k, h], pow2)


@njit(parallel=True, cache=True)
def _combine_inverse_sum(part_sum, inv_sum):
    """``inv_sum = 1 / sum(part_sum, axis=0)`` (0 where the sum is 0), the partials added in chunk order:
    the same result for any thread count. Flat over nodes and heads, in blocks, so it vectorises."""
    C = part_sum.shape[0]
    parts = part_sum.reshape((C, -1))
    inv = inv_sum.ravel()
    size = inv.size
    blocks = (size + 4095) // 4096
    for b in prange(blocks):
        for i in range(b * 4096, min(size, (b + 1) * 4096)):
            inv[i] = parts[0, i]
        for c in range(1, C):
            for i in range(b * 4096, min(size, (b + 1) * 4096)):
                inv[i] += parts[c, i]
        for i in range(b * 4096, min(size, (b + 1) * 4096)):
            total = inv[i]
            inv[i] = 1.0 / total if total > 0 else 0.0


@njit(parallel=True, cache=True)
def _normalise(keys, inv_sum, out):
    """``out *= inv_sum[keys]``; flat over edges (vectorises, with gathers) when H = 1."""
    E, H = out.shape
    if H == 1:
        o = out.ravel()
        inv = inv_sum.ravel()
        for e in prange(E):
            o[e] *= inv[np.uint64(keys[e])]
    else:
        for e in prange(E):
            k = keys[e]
            for h in range(H):
                out[e, h] *= inv_sum[k, h]


@njit(parallel=True, cache=True)
def _exp_shifted(flat, shift, out, pow2):
    """``out = exp(flat - shift)``: one stream in, one out, vectorised."""
    for i in prange(flat.size):
        out[i] = fast_exp(flat[i] - shift, pow2)


@njit(inline="always")
def exp_span32(flat, out, start, stop, shift, low, high):
    """float32 ``out[start:stop] = exp(flat[start:stop] - shift)`` in explicit 512-bit vectors; returns
    the bits of the lanes whose ``flat - shift`` does not lie strictly between ``low`` and ``high`` (NaN
    included), 0 when all do.

    The range test rides in the same loop as compare masks, and the exponentials of lanes outside it
    are not used (the caller starts over), so inputs outside ``[-87, 87]``, where
    :func:`vexp32_finite` is not valid, are only clamped: none of the NaN-keeping selects of
    ``fast_exp``. LLVM vectorised ``fast_exp`` at 256 bits with a table gather, about half as fast as
    this loop (the same values, bit for bit; figures in docs/performance.md)."""
    W = 16
    shift_v = vfull(flat, shift, W)
    low_v = vfull(flat, low, W)
    high_v = vfull(flat, high, W)
    floor_v = vfull(flat, -87.0, W)
    ceil_v = vfull(flat, 87.0, W)
    stray = 0
    for i in range(start, stop, W):
        lanes = vmask(stop - i, W)
        z = vload_at(flat, i, lanes) - shift_v
        stray |= vbits(lanes) & ~vbits(mask_and(vgt(z, low_v), vlt(z, high_v)))
        vstore_at(out, i, vexp32_finite(vmin(ceil_v, vmax(floor_v, z)), flat), lanes)
    return stray


@njit(parallel=True, cache=True)
def _exp_shifted_in_range32(flat, shift, low, high, out):
    """float32 ``out = exp(flat - shift)`` (:func:`exp_span32` over spans of 16,384); True when every
    ``flat - shift`` lies strictly between ``low`` and ``high``, else ``out`` is not to be used."""
    span = 16384
    outside = 0
    for t in prange((flat.size + span - 1) // span):
        outside += exp_span32(flat, out, t * span, min(flat.size, (t + 1) * span), shift, low, high) != 0
    return outside == 0


@njit(parallel=True, cache=True)
def _exp_shifted_partial_sum32(keys, bounds, flat, shift, low, high, out, part_sum):
    """One head, float32: :func:`_exp_shifted_in_range32` and :func:`_partial_sum` in one pass. Chunk
    ``c`` zeroes its row of ``part_sum`` (2-D, ``(chunks, num_nodes)``: a ``ravel`` of a 3-D chunk in
    the loop stopped LLVM vectorising it), then, 128 edges at a time, writes their exponentials and
    adds them, still in L1, to its partials. The exp and the sums apart read and write the E-sized
    arrays once more. Small tiles (``tile`` below) let the core overlap one tile's exp with the last
    one's scattered adds; tiles of 64 to 128 edges measured best (the edge softmax rows of ``python
    tools/compare_peers.py --family spmm``; figures in docs/performance.md)."""
    tile = 128
    outside = 0
    for c in prange(bounds.size - 1):
        for n in range(part_sum.shape[1]):
            part_sum[c, n] = 0
        stray = 0
        end = bounds[c + 1]
        for t0 in range(bounds[c], end, tile):
            t1 = min(end, t0 + tile)
            stray |= exp_span32(flat, out, t0, t1, shift, low, high)
            for e in range(t0, t1):
                i = np.uint64(e)  # unsigned: no negative-index fix-up
                part_sum[c, np.uint64(keys[i])] += out[i]
        outside += stray != 0
    return outside == 0


@njit(parallel=True, cache=True)
def _count_within(values, low, high):
    """How many of ``values`` lie in ``[low, high]`` (NaN does not). A pass of its own: counted inside
    :func:`_exp_shifted`'s loop, the exp no longer vectorised."""
    count = 0
    for i in prange(values.size):
        value = values[i]
        count += (value >= low) & (value <= high)
    return count


@njit(parallel=True, cache=True)
def _partial_sum(keys, bounds, values, part_sum):
    """``part_sum[c, keys[e]] += values[e]`` over chunk ``c``'s edges. One head: flat arrays, no prefetch
    (the per-head loop and a prefetch per edge cost more than they save while the partials stay in L2).
    Several heads: the per-node row a few edges ahead is prefetched, as the streamed keys and values push
    the partials out of L2."""
    H = values.shape[1]
    if H == 1:
        flat_values = values.ravel()
        for c in prange(bounds.size - 1):
            flat_part = part_sum[c].ravel()
            for e in range(bounds[c], bounds[c + 1]):
                i = np.uint64(e)
                flat_part[np.uint64(keys[i])] += flat_values[i]
        return
    row_bytes = H * part_sum.itemsize
    for c in prange(bounds.size - 1):
        part = part_sum[c]
        end = bounds[c + 1]
        for e in range(bounds[c], end):
            if e + _PREFETCH_EDGES < end:
                prefetch_row(part, keys[e + _PREFETCH_EDGES], row_bytes)
            k = keys[e]
            for h in range(H):
                part[k, h] += values[e, h]


# Chunks of the edge-order softmax: fixed (not the thread count) so the sums are combined in the same
# order on every machine; each chunk owns (num_nodes, H) partials.
EDGE_ORDER_CHUNKS = 8

# The widest logit range (max - min over all edges) for which one shift, the global max, is as safe as
# each row's own max: every exp(z - max) then lies in [exp(-range), 1], all normal numbers (float32's
# smallest normal is about exp(-87.3), float64's exp(-708)), so no row sum overflows or underflows and
# each term keeps full relative precision. The results equal the per-row-max ones up to rounding.
ONE_SHIFT_RANGE = {np.dtype(np.float32): 80.0, np.dtype(np.float64): 700.0}
# The shift is first the largest of a strided sample of the logits, and the exponentials are accepted
# when every one lies in [exp(-ONE_SHIFT_RANGE), exp(SAMPLE_HEADROOM)] (the logits that beat the sample's
# largest by up to this much): the same guarantee as above, checked in the exp pass itself, instead of
# a min/max pass over the logits before it (a sizeable share of the whole softmax).
SHIFT_SAMPLE = 4096
SAMPLE_HEADROOM = 8.0


def edge_softmax_edge_order(keys, num_nodes, logits, out):
    """Edge softmax with edges in edge-id order: ``keys[e]`` is the node edge ``e`` is normalised over.

    For graphs whose row format reaches logits through a permutation (random reads and writes), this
    streams the E-sized arrays in order and keeps the random accesses in per-node arrays (a few MB, in
    cache). Softmax does not change when every logit of a row moves by the same amount, so when all
    logits lie close enough together one shift serves every row: the largest of a sample of the logits,
    a streamed exp, a streamed count that every exponential lies in a safe range (else the largest logit
    is the shift, if the range allows, else the per-node max), per-node sums, the division. That skips
    the per-node max, whose random read-modify-writes cost about as much as the sums. Wider ranges,
    infinities and NaNs take the per-node max (passes: max, exp, sums, division); separate passes
    measured faster than an online-softmax single pass (max and sum together). float32 takes the exp in
    explicit 512-bit vectors with the range test in the same loop, and one head takes the per-node sums
    in that pass too (:func:`_exp_shifted_partial_sum32`), faster than the passes apart with the
    compiler's vectorised exp. Measured by the edge softmax rows of ``python tools/compare_peers.py
    --family spmm`` (figures in docs/performance.md).
    """
    E, H = logits.shape
    chunks = EDGE_ORDER_CHUNKS if E >= EDGE_ORDER_CHUNKS * 1024 else 1
    bounds = (np.arange(chunks + 1, dtype=np.int64) * E) // chunks
    flat = logits.reshape(-1)
    inv_sum = np.empty((num_nodes, H), dtype=logits.dtype)
    dtype = np.dtype(logits.dtype)
    low, high = dtype.type(np.exp(-ONE_SHIFT_RANGE[dtype])), dtype.type(np.exp(SAMPLE_HEADROOM))
    if E * H:
        sample = flat[:: max(1, flat.size // SHIFT_SAMPLE)]
        shift = float(sample.max())
        for attempt in range(2):
            if not np.isfinite(shift):
                break
            # exponentials are accepted when every shifted logit lies in (-ONE_SHIFT_RANGE, SAMPLE_HEADROOM)
            # (float32, tested on the inputs) or every exponential in [low, high] (float64, on the outputs)
            shift_t, z_low, z_high = dtype.type(shift), dtype.type(-ONE_SHIFT_RANGE[dtype]), dtype.type(SAMPLE_HEADROOM)
            summed = dtype == np.float32 and H == 1
            if summed:  # exp, range test and per-node sums in one pass
                part = np.empty((chunks, num_nodes, H), dtype=logits.dtype)
                in_range = _exp_shifted_partial_sum32(keys, bounds, flat, shift_t, z_low, z_high, out.reshape(-1),
                                                      part.reshape(chunks, num_nodes))
            elif dtype == np.float32:
                in_range = _exp_shifted_in_range32(flat, shift_t, z_low, z_high, out.reshape(-1))
            else:
                _exp_shifted(flat, shift_t, out.reshape(-1), POW2)
                in_range = _count_within(out.reshape(-1), low, high) == flat.size
            if in_range:
                if not summed:
                    part = np.zeros((chunks, num_nodes, H), dtype=logits.dtype)
                    _partial_sum(keys, bounds, out, part)
                _combine_inverse_sum(part, inv_sum)
                _normalise(keys, inv_sum, out)
                return out
            if attempt:
                break
            # the sample missed the largest logits, or the range is too wide for this shift: NumPy's min
            # and max are SIMD reductions that propagate NaN, so an infinity or a NaN anywhere makes one
            # of them non-finite (several times faster than a compiled scalar pass)
            lowest, highest = float(flat.min()), float(flat.max())
            if not (np.isfinite(lowest) and np.isfinite(highest)) or highest - lowest > ONE_SHIFT_RANGE[dtype]:
                break
            shift = highest
    part = np.full((chunks, num_nodes, H), -np.inf, dtype=logits.dtype)
    _partial_max(keys, bounds, logits, part)
    row_max = np.empty((num_nodes, H), dtype=logits.dtype)
    _combine_max(part, row_max)
    part[:] = 0
    _exp_minus_row_max(keys, logits, row_max, out, POW2)
    _partial_sum(keys, bounds, out, part)
    _combine_inverse_sum(part, inv_sum)
    _normalise(keys, inv_sum, out)
    return out
