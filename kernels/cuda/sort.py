"""Sorting and scanning on the GPU: the stable count sort behind every format change, prefix scans,
histograms, and the small reductions that validate device input.

The count sort is an LSD radix sort, at most ``RADIX_BITS`` bits a pass, over only the bits the keys use
(the bits are spread evenly over the passes). The input is cut into tiles of ``SORT_TILE`` consecutive
items, one block per tile at a time (tile-stride loops, so any grid is correct). Each pass is three
launches:

1. ``_tile_digit_counts``: a block loads its tile with coalesced reads and counts the tile's digits in a
   shared-memory histogram; the counts go to a digit-major ``(digit, tile)`` table.
2. :func:`exclusive_scan` of that table: the start of every ``(digit, tile)`` run in the output.
3. ``_tile_sort_scatter``: the block loads the tile again (coalesced), ranks every item stably inside
   the tile by its digit, and writes the keys and the values carried along (``buf``, staged in shared
   memory one array at a time) to ``run start + rank - first rank of the digit in the tile``. Threads
   with consecutive ranks write consecutive addresses while they are in the same digit run, so the
   scatter is as coalesced as the digit runs are long.

The stable rank inside a tile is an LSD sort of the digit in ``RANK_BITS``-bit steps, CUB
``BlockRadixRank`` style without warp primitives: thread ``t`` owns a blocked run of consecutive items
and one counter per sub-digit; a block scan over the counters in ``(sub-digit, thread)`` order gives
every item its rank, and equal sub-digits keep their order because the counters are scanned in item
order. Two 16-bit counters are packed per 32-bit word (a tile holds fewer than 2**16 items), which halves
the counters' shared memory and the scan. Keys and values travel with the sort (ping-pong buffers):
nothing is gathered through a permutation, and the last pass does not write keys.

Equal keys therefore keep their input order (the sort is stable and deterministic, unlike an
atomic-decrement scatter), which is what makes the CSR, CSC and reverse CSR with edge ids equal to the
CPU backend's, slot for slot.

Scans are block-cooperative reduce-then-scan over tiles of ``SCAN_TILE`` items (coalesced loads, a
shared-memory block scan, tile totals scanned recursively). The reductions that validate device input are
in :mod:`.reduce`.

Same function names and arguments as :mod:`graphkern.kernels.cpu.sort` where both have them; arguments are
device arrays.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .launch import grid_1d, grid_blocks

# Tuning constants (measured by ``python3 tools/gpu_check.py``, row "count sort coo->csc"). Shared-memory
# arrays are sized by them, so they are compile-time constants; every kernel is correct with any block of
# at most its ``*_THREADS`` threads (one block of 64 threads in the simulator).
RADIX_BITS = 8  # bits a pass at most: 256 digits, so a 22-bit key space takes 3 passes
RADIX = 1 << RADIX_BITS
RANK_BITS = 4  # bits ranked per step inside a tile: 16 sub-digits, packed as 8 rows x two 16-bit lanes
RANK_DIGITS = 1 << RANK_BITS
RANK_ROWS = RANK_DIGITS // 2
_ROW_BITS = RANK_BITS - 1
SORT_THREADS = 256
SORT_TILE_BITS = 11
SORT_TILE = 1 << SORT_TILE_BITS  # items per tile: 8 per thread at SORT_THREADS; below 2**16 (16-bit counters)
SCAN_THREADS = 256
SCAN_TILE = 2048

# shared sizes: a pad word every 32 int32 words (every 16 int64) keeps blocked per-thread runs off one bank
_PK_SIZE = SORT_TILE + SORT_TILE // 32
_CNT_SIZE = RANK_ROWS * SORT_THREADS + RANK_ROWS * SORT_THREADS // 32
_SCAN_SIZE = SCAN_TILE + SCAN_TILE // 16
_SORT_PART = 2 * SORT_THREADS  # the two halves of a block scan's scratch
_SCAN_PART = 2 * SCAN_THREADS


# ------------------------------------------------------------------------------- block-level helpers

@cuda.jit(device=True, inline=True)
def _pad32(i):
    return i + (i >> 5)


@cuda.jit(device=True, inline=True)
def _pad16(i):
    return i + (i >> 4)


@cuda.jit(device=True)
def _block_exclusive_scan(part, value):
    """``(exclusive prefix, block total)`` of one ``value`` per thread, in thread order. ``part`` is a
    shared scratch of two halves of at least ``blockDim.x`` slots (Hillis-Steele, ping-pong halves, one
    barrier a step). Every thread of the block must call it."""
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    half = part.size // 2
    src = 0
    dst = half
    part[t] = value
    cuda.syncthreads()
    step = 1
    while step < nt:
        v = part[src + t]
        if t >= step:
            v += part[src + t - step]
        part[dst + t] = v
        cuda.syncthreads()
        src, dst = dst, src
        step *= 2
    inclusive = part[src + t]
    total = part[src + nt - 1]
    cuda.syncthreads()  # the next call overwrites part
    return inclusive - value, total


# ------------------------------------------------------------------------------------------ scans

@cuda.jit
def _tile_totals(values, totals):
    n = values.size
    tiles = totals.size
    t = cuda.threadIdx.x
    part = cuda.shared.array(_SCAN_PART, np.int64)
    for tile in range(cuda.blockIdx.x, tiles, cuda.gridDim.x):
        base = tile * SCAN_TILE
        end = min(n, base + SCAN_TILE)
        acc = 0
        for i in range(base + t, end, cuda.blockDim.x):
            acc += values[i]
        _, total = _block_exclusive_scan(part, acc)
        if t == 0:
            totals[tile] = total


@cuda.jit
def _tile_scan(values, tile_offsets, use_offsets, out):
    """Exclusive scan of every tile plus its offset; the last tile also writes the total to ``out[n]``."""
    n = values.size
    tiles = (n + SCAN_TILE - 1) // SCAN_TILE
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    per = (SCAN_TILE + nt - 1) // nt
    sh = cuda.shared.array(_SCAN_SIZE, np.int64)
    part = cuda.shared.array(_SCAN_PART, np.int64)
    if n == 0 and cuda.blockIdx.x == 0 and t == 0:
        out[0] = 0
    for tile in range(cuda.blockIdx.x, tiles, cuda.gridDim.x):
        base = tile * SCAN_TILE
        m = min(SCAN_TILE, n - base)
        for i in range(t, m, nt):  # coalesced
            sh[_pad16(i)] = values[base + i]
        cuda.syncthreads()
        lo = min(m, t * per)  # a blocked run per thread, in item order
        hi = min(m, lo + per)
        acc = 0
        for i in range(lo, hi):
            acc += sh[_pad16(i)]
        excl, total = _block_exclusive_scan(part, acc)
        start = tile_offsets[tile] if use_offsets else 0
        run = start + excl
        for i in range(lo, hi):
            v = sh[_pad16(i)]
            sh[_pad16(i)] = run
            run += v
        cuda.syncthreads()
        for i in range(t, m, nt):
            out[base + i] = sh[_pad16(i)]
        if tile == tiles - 1 and t == 0:
            out[n] = start + total
        cuda.syncthreads()  # sh is reused by the next tile


def exclusive_scan(values, out):
    """Exclusive prefix sum of ``values`` into ``out[:-1]``, the total into ``out[-1]`` (a CSR indptr
    from row counts). One block per tile of ``SCAN_TILE`` items; with several tiles, the tile totals are
    scanned recursively first."""
    return _exclusive_scan(values, out, None)


def _exclusive_scan(values, out, launch):
    """:func:`exclusive_scan` with every kernel launched as ``launch`` (``(blocks, threads)``, at most
    ``SCAN_THREADS`` threads), or sized to the work when ``None``."""
    n = values.size
    tiles = -(-n // SCAN_TILE)
    if tiles <= 1:
        _tile_scan[launch or (1, grid_blocks(1, SCAN_THREADS)[1])](values, out, False, out)
        return out
    totals = cuda.device_array(tiles, np.int64)
    _tile_totals[launch or grid_blocks(tiles, SCAN_THREADS)](values, totals)
    offsets = _exclusive_scan(totals, cuda.device_array(tiles + 1, np.int64), launch)
    _tile_scan[launch or grid_blocks(tiles, SCAN_THREADS)](values, offsets, True, out)
    return out


# ------------------------------------------------------------------------- histograms and small maps

@cuda.jit
def _count_keys(keys, counts):
    for i in range(cuda.grid(1), keys.size, cuda.gridsize(1)):
        cuda.atomic.add(counts, keys[i], 1)


@cuda.jit
def _fill(out, value):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = value


@cuda.jit
def _arange(out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = i


def fill(out, value):
    """``out[:] = value`` on the device (any 1-D array)."""
    if out.size:
        _fill[grid_1d(out.size)](out, value)
    return out


def arange(n: int, dtype):
    """``0 .. n-1`` as a device array."""
    out = cuda.device_array(int(n), dtype)
    if n:
        _arange[grid_1d(n)](out)
    return out


def histogram(keys, num_keys: int, dtype=np.int64):
    """Count of every key in ``[0, num_keys)`` (degrees from a COO column)."""
    counts = fill(cuda.device_array(int(num_keys), dtype), 0)
    if keys.size:
        _count_keys[grid_1d(keys.size)](keys, counts)
    return counts


@cuda.jit
def _degrees(indptr, out):
    for r in range(cuda.grid(1), indptr.size - 1, cuda.gridsize(1)):
        out[r] = indptr[r + 1] - indptr[r]


def degrees_from_indptr(indptr, out):
    """``out[r] = indptr[r+1] - indptr[r]``."""
    if out.size:
        _degrees[grid_1d(out.size)](indptr, out)
    return out


@cuda.jit(device=True)
def row_of_slot(indptr, j):
    """The row holding slot ``j``: the last ``r`` with ``indptr[r] <= j`` (binary search; empty rows skip)."""
    lo = 0
    hi = indptr.size - 2
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if indptr[mid] <= j:
            lo = mid
        else:
            hi = mid - 1
    return lo


@cuda.jit
def _expand(indptr, out):
    for j in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[j] = row_of_slot(indptr, j)


def expand_indptr(indptr, out):
    """Row id of every slot (CSR -> COO rows): one thread per slot, so a hub row costs no more than others."""
    if out.size:
        _expand[grid_1d(out.size)](indptr, out)
    return out


@cuda.jit
def _scatter_by_eid(values, eids, out):
    for j in range(cuda.grid(1), eids.size, cuda.gridsize(1)):
        out[eids[j]] = values[j]


def scatter_by_eid(values, eids, out):
    """``out[eids[j]] = values[j]``."""
    if eids.size:
        _scatter_by_eid[grid_1d(eids.size)](values, eids, out)
    return out


# ------------------------------------------------------------------------------------ the count sort

@cuda.jit
def _tile_digit_counts(keys, shift, bits, counts):
    """``counts[d * tiles + tile]``: how many keys of the tile have digit ``d`` (``bits`` bits from
    ``shift``)."""
    n = keys.size
    tiles = (n + SORT_TILE - 1) // SORT_TILE
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    digits = 1 << bits
    mask = digits - 1
    hist = cuda.shared.array(RADIX, np.int32)
    for tile in range(cuda.blockIdx.x, tiles, cuda.gridDim.x):
        base = tile * SORT_TILE
        end = min(n, base + SORT_TILE)
        for d in range(t, digits, nt):
            hist[d] = 0
        cuda.syncthreads()
        for i in range(base + t, end, nt):
            cuda.atomic.add(hist, (keys[i] >> shift) & mask, 1)
        cuda.syncthreads()
        for d in range(t, digits, nt):
            counts[d * tiles + tile] = hist[d]
        cuda.syncthreads()  # hist is reset by the next tile


@cuda.jit
def _tile_sort_scatter(keys, v1, v2, v1_mode, v2_mode, write_keys, shift, bits, offsets,
                       keys_out, v1_out, v2_out):
    """One pass of the count sort: every tile ranked stably by its digit, then keys and values scattered
    to ``offsets[d * tiles + tile]`` plus the rank within the tile's run of digit ``d``. A value mode is
    0 (no such value), 1 (the value is the item's input position) or 2 (read from ``v1``/``v2``)."""
    n = keys.size
    tiles = (n + SORT_TILE - 1) // SORT_TILE
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    per = (SORT_TILE + nt - 1) // nt
    mask = (1 << bits) - 1
    buf = cuda.shared.array(SORT_TILE, np.int64)  # one array of the tile at a time, by input position
    pk_a = cuda.shared.array(_PK_SIZE, np.int32)  # digit << SORT_TILE_BITS | input position, in rank order
    pk_b = cuda.shared.array(_PK_SIZE, np.int32)
    cnt = cuda.shared.array(_CNT_SIZE, np.int32)  # (row, thread) words, two 16-bit sub-digit counters each
    part = cuda.shared.array(_SORT_PART, np.int32)
    run_start = cuda.shared.array(RADIX, np.int64)  # output slot of the tile's first item of each digit
    for tile in range(cuda.blockIdx.x, tiles, cuda.gridDim.x):
        base = tile * SORT_TILE
        m = min(SORT_TILE, n - base)
        for i in range(t, m, nt):  # coalesced
            k = keys[base + i]
            buf[i] = k
            pk_a[_pad32(i)] = (((k >> shift) & mask) << SORT_TILE_BITS) | i
        lo = min(m, t * per)  # this thread's blocked run: ranks stay in item order
        hi = min(m, lo + per)
        sub = 0
        while sub < bits:
            for r in range(RANK_ROWS):
                cnt[_pad32(r * nt + t)] = 0
            cuda.syncthreads()
            for i in range(lo, hi):
                sd = (pk_a[_pad32(i)] >> (SORT_TILE_BITS + sub)) & (RANK_DIGITS - 1)
                cnt[_pad32((sd & (RANK_ROWS - 1)) * nt + t)] += 1 << (16 * (sd >> _ROW_BITS))
            cuda.syncthreads()
            # exclusive scan of the words in (row, thread) order; both lanes scan at once
            acc = 0
            for q in range(t * RANK_ROWS, (t + 1) * RANK_ROWS):
                acc += cnt[_pad32(q)]
            excl, total = _block_exclusive_scan(part, acc)
            for q in range(t * RANK_ROWS, (t + 1) * RANK_ROWS):
                w = cnt[_pad32(q)]
                cnt[_pad32(q)] = excl
                excl += w
            cuda.syncthreads()
            low_total = total & 0xFFFF  # sub-digits of the high lane come after every low-lane one
            for i in range(lo, hi):
                p = pk_a[_pad32(i)]
                sd = (p >> (SORT_TILE_BITS + sub)) & (RANK_DIGITS - 1)
                lane = sd >> _ROW_BITS
                slot = _pad32((sd & (RANK_ROWS - 1)) * nt + t)
                w = cnt[slot]
                rank = (w >> (16 * lane)) & 0xFFFF
                if lane:
                    rank += low_total
                cnt[slot] = w + (1 << (16 * lane))
                pk_b[_pad32(rank)] = p
            cuda.syncthreads()
            pk_a, pk_b = pk_b, pk_a
            sub += RANK_BITS
        for d in range(t, mask + 1, nt):
            run_start[d] = offsets[d * tiles + tile]
        cuda.syncthreads()
        # run_start[d] -= rank of the tile's first item with digit d (each digit present has one first)
        for r in range(t, m, nt):
            d = pk_a[_pad32(r)] >> SORT_TILE_BITS
            if r == 0 or pk_a[_pad32(r - 1)] >> SORT_TILE_BITS != d:
                run_start[d] -= r
        cuda.syncthreads()
        if write_keys:
            for r in range(t, m, nt):  # consecutive ranks -> consecutive slots within a digit run
                p = pk_a[_pad32(r)]
                keys_out[run_start[p >> SORT_TILE_BITS] + r] = buf[p & (SORT_TILE - 1)]
        for which in range(2):
            mode = v1_mode if which == 0 else v2_mode
            if mode == 2:
                cuda.syncthreads()  # buf still read by the previous array's scatter
                for i in range(t, m, nt):
                    buf[i] = v1[base + i] if which == 0 else v2[base + i]
                cuda.syncthreads()
            if mode != 0:
                for r in range(t, m, nt):
                    p = pk_a[_pad32(r)]
                    d = p >> SORT_TILE_BITS
                    i = p & (SORT_TILE - 1)
                    value = buf[i] if mode == 2 else base + i
                    if which == 0:
                        v1_out[run_start[d] + r] = value
                    else:
                        v2_out[run_start[d] + r] = value
        cuda.syncthreads()  # the next tile overwrites buf, pk_a and run_start


def _pass_bits(num_keys: int) -> list[tuple[int, int]]:
    """``(shift, bits)`` of every pass: the key bits in use, spread evenly over the fewest passes."""
    bits = max(int(num_keys) - 1, 0).bit_length()
    passes = -(-bits // RADIX_BITS)
    if passes == 0:
        return []
    width = -(-bits // passes)
    return [(s, min(width, bits - s)) for s in range(0, bits, width)]


def _radix_sort(keys, num_keys: int, v1, v1_mode: int, v2, v2_mode: int, dtype1, dtype2, launch=None):
    """Sort ``keys`` stably, carrying up to two values: ``(values1, values2)`` in key order. A value's mode
    is 0 (none; ``None`` comes back), 1 (its input position) or 2 (read from the given array). ``launch``:
    ``(blocks, threads)`` for every kernel (at most ``SORT_THREADS`` threads), or sized to the work."""
    n = keys.size
    dummy = cuda.device_array(1, keys.dtype)
    passes = _pass_bits(num_keys)
    tiles = -(-n // SORT_TILE)
    if n == 0 or not passes:  # nothing to reorder
        outs = []
        for values, mode, dtype in ((v1, v1_mode, dtype1), (v2, v2_mode, dtype2)):
            if mode == 0:
                outs.append(None)
            elif mode == 1:
                outs.append(arange(n, dtype))
            else:
                outs.append(cast(values, cuda.device_array(n, dtype)))
        return outs[0], outs[1]
    count_dtype = np.int32 if n < 2**31 else np.int64
    counts = cuda.device_array(RADIX * tiles, count_dtype)
    offsets = cuda.device_array(RADIX * tiles + 1, count_dtype)
    key_bufs = [cuda.device_array(n, keys.dtype) for _ in range(min(2, len(passes) - 1))]
    ping_pong = min(2, len(passes))
    bufs1 = [cuda.device_array(n, dtype1) if v1_mode else dummy for _ in range(ping_pong)]
    bufs2 = [cuda.device_array(n, dtype2) if v2_mode else dummy for _ in range(ping_pong)]
    k_in, a_in, b_in = keys, (v1 if v1_mode == 2 else dummy), (v2 if v2_mode == 2 else dummy)
    launch = launch or grid_blocks(tiles, SORT_THREADS)
    for p, (shift, bits) in enumerate(passes):
        last = p == len(passes) - 1
        used = tiles << bits
        _tile_digit_counts[launch](k_in, shift, bits, counts)
        _exclusive_scan(counts[:used], offsets[:used + 1], launch)
        k_out = dummy if last else key_bufs[p % 2]
        a_out, b_out = bufs1[p % 2], bufs2[p % 2]
        _tile_sort_scatter[launch](k_in, a_in, b_in, v1_mode, v2_mode, not last, shift, bits, offsets,
                                   k_out, a_out, b_out)
        k_in, a_in, b_in = k_out, a_out, b_out
        v1_mode = 2 if v1_mode else 0  # carried from the second pass on
        v2_mode = 2 if v2_mode else 0
    return (a_in if v1_mode else None), (b_in if v2_mode else None)


def sort_permutation(keys, num_keys: int, index_dtype):
    """The stable sorting permutation of integer ``keys`` in ``[0, num_keys)``: ``keys[perm]`` is sorted
    and equal keys keep their input order."""
    perm, _ = _radix_sort(keys, num_keys, None, 1, None, 0, index_dtype, index_dtype)
    return perm


def count_sort(keys, num_keys: int, index_dtype=np.int64):
    """Stable counting sort: ``(indptr, perm)`` as :func:`graphkern.kernels.cpu.sort.count_sort`."""
    indptr = cuda.device_array(int(num_keys) + 1, index_dtype)
    exclusive_scan(histogram(keys, num_keys, np.int64), indptr)
    return indptr, sort_permutation(keys, num_keys, index_dtype)


def coo_to_compressed(rows, cols, eids, num_rows: int):
    """Compress a COO by ``rows`` (stable): ``(indptr, indices, out_eids)``; ``eids=None`` means edge ``i``
    is slot ``i``. The columns and edge ids travel with the sort's keys, so nothing is gathered."""
    return _compress(rows, cols, eids, num_rows, None)


def transpose_compressed(indptr, indices, eids, num_cols: int, col_counts=None):
    """CSR -> CSC or CSC -> CSR with edge ids; within an output row, input row order (stable).
    ``col_counts`` (optional, exact): the entries per column (the output's row lengths), when the caller
    already knows them, as on the CPU."""
    rows = expand_indptr(indptr, cuda.device_array(indices.size, indices.dtype))
    return _compress(indices, rows, eids, num_cols, col_counts)


def _compress(rows, cols, eids, num_rows: int, row_counts):
    """:func:`coo_to_compressed`, with the entries per row given (``row_counts``) or counted."""
    dtype = cols.dtype
    indptr = cuda.device_array(int(num_rows) + 1, dtype)
    exclusive_scan(histogram(rows, num_rows, np.int64) if row_counts is None else row_counts, indptr)
    indices, out_eids = _radix_sort(rows, num_rows, cols, 2, eids, 1 if eids is None else 2, dtype, dtype)
    return indptr, indices, out_eids


@cuda.jit
def _cast(values, out):
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        out[i] = values[i]


def cast(values, out):
    """``out[:] = values`` converting the dtype on the device."""
    if values.size:
        _cast[grid_1d(values.size)](values, out)
    return out
