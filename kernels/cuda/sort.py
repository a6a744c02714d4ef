"""Sorting and scanning on the GPU: the stable count sort behind every format change, prefix scans,
histograms, and the small reductions that validate device input.

The count sort is an LSD radix sort of a permutation, 8 bits a pass, over only the bits the keys use.
Each pass splits the input into chunks of ``CHUNK`` items, one thread each: the thread counts its digits,
a prefix scan over the ``(digit, chunk)`` table gives every chunk its start per digit, and the thread
scatters its items in input order. Equal keys therefore keep their input order (the sort is stable and
deterministic, unlike an atomic-decrement scatter such as STGraph's, research/gpma.md), which is what
makes the CSR, CSC and reverse CSR with edge ids equal to the CPU backend's, slot for slot.

Same function names as :mod:`graphkern.kernels.cpu.sort`; arguments are device arrays.
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .launch import grid_1d

RADIX_BITS = 8
RADIX = 1 << RADIX_BITS
CHUNK = 256  # items per thread in a radix pass
SCAN_CHUNK = 64  # items per thread in a scan pass


# ------------------------------------------------------------------------------------------ scans

@cuda.jit
def _serial_scan(values, out):
    if cuda.grid(1) == 0:
        run = 0
        for i in range(values.size):
            out[i] = run
            run += values[i]
        out[values.size] = run


@cuda.jit
def _chunk_totals(values, totals):
    n = values.size
    for c in range(cuda.grid(1), totals.size, cuda.gridsize(1)):
        acc = 0
        for i in range(c * SCAN_CHUNK, min(n, (c + 1) * SCAN_CHUNK)):
            acc += values[i]
        totals[c] = acc


@cuda.jit
def _chunk_scan(values, offsets, out):
    n = values.size
    chunks = offsets.size - 1
    for c in range(cuda.grid(1), chunks, cuda.gridsize(1)):
        run = offsets[c]
        for i in range(c * SCAN_CHUNK, min(n, (c + 1) * SCAN_CHUNK)):
            out[i] = run
            run += values[i]
        if c == chunks - 1:
            out[n] = run


def exclusive_scan(values, out):
    """Exclusive prefix sum of ``values`` into ``out[:-1]``, the total into ``out[-1]`` (a CSR indptr
    from row counts). Reduce-then-scan over chunks, recursively over the chunk totals."""
    n = values.size
    if n <= SCAN_CHUNK:
        _serial_scan[1, 1](values, out)
        return out
    chunks = -(-n // SCAN_CHUNK)
    totals = cuda.device_array(chunks, np.int64)
    _chunk_totals[grid_1d(chunks)](values, totals)
    offsets = exclusive_scan(totals, cuda.device_array(chunks + 1, np.int64))
    _chunk_scan[grid_1d(chunks)](values, offsets, out)
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


@cuda.jit
def _gather(values, perm, out):
    for j in range(cuda.grid(1), perm.size, cuda.gridsize(1)):
        out[j] = values[perm[j]]


def gather(values, perm, out):
    """``out[j] = values[perm[j]]``."""
    if perm.size:
        _gather[grid_1d(perm.size)](values, perm, out)
    return out


# ------------------------------------------------------------------------------ validation reductions

@cuda.jit
def _min_max(values, result):
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        cuda.atomic.min(result, 0, values[i])
        cuda.atomic.max(result, 1, values[i])


def min_max(values) -> tuple[int, int]:
    """``(min, max)`` of a non-empty integer device array; only two scalars come back to the host."""
    result = cuda.to_device(np.array([np.iinfo(np.int64).max, np.iinfo(np.int64).min], dtype=np.int64))
    _min_max[grid_1d(values.size)](values, result)
    lo, hi = result.copy_to_host()
    return int(lo), int(hi)


@cuda.jit
def _first_where_outside(values, low, high, result):
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        if values[i] < low or values[i] >= high:
            cuda.atomic.min(result, 0, i)


@cuda.jit
def _first_descent(indptr, result):
    for i in range(cuda.grid(1), indptr.size - 1, cuda.gridsize(1)):
        if indptr[i] > indptr[i + 1]:
            cuda.atomic.min(result, 0, i)


def first_outside(values, low: int, high: int) -> int:
    """The first position whose value is outside ``[low, high)``, or -1."""
    result = cuda.to_device(np.array([values.size], dtype=np.int64))
    _first_where_outside[grid_1d(values.size)](values, low, high, result)
    pos = int(result.copy_to_host()[0])
    return -1 if pos == values.size else pos


def first_descent(indptr) -> int:
    """The first ``i`` with ``indptr[i] > indptr[i+1]``, or -1."""
    result = cuda.to_device(np.array([indptr.size], dtype=np.int64))
    if indptr.size > 1:
        _first_descent[grid_1d(indptr.size)](indptr, result)
    pos = int(result.copy_to_host()[0])
    return -1 if pos == indptr.size else pos


# ------------------------------------------------------------------------------------ the count sort

@cuda.jit
def _digit_counts(keys, perm, use_perm, shift, counts):
    n = keys.size
    chunks = counts.size // RADIX
    local = cuda.local.array(RADIX, np.int64)
    for c in range(cuda.grid(1), chunks, cuda.gridsize(1)):
        for d in range(RADIX):
            local[d] = 0
        for i in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            k = keys[perm[i]] if use_perm else keys[i]
            local[(k >> shift) & (RADIX - 1)] += 1
        for d in range(RADIX):
            counts[d * chunks + c] = local[d]


@cuda.jit
def _digit_scatter(keys, perm, use_perm, shift, offsets, perm_out):
    n = keys.size
    chunks = (offsets.size - 1) // RADIX
    local = cuda.local.array(RADIX, np.int64)
    for c in range(cuda.grid(1), chunks, cuda.gridsize(1)):
        for d in range(RADIX):
            local[d] = offsets[d * chunks + c]
        for i in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            src = perm[i] if use_perm else i
            d = (keys[src] >> shift) & (RADIX - 1)
            perm_out[local[d]] = src
            local[d] += 1


def sort_permutation(keys, num_keys: int, index_dtype):
    """The stable sorting permutation of integer ``keys`` in ``[0, num_keys)``: ``keys[perm]`` is sorted
    and equal keys keep their input order."""
    n = keys.size
    bits = max(int(num_keys) - 1, 0).bit_length()
    passes = -(-bits // RADIX_BITS)
    if n == 0 or passes == 0:
        return arange(n, index_dtype)
    chunks = -(-n // CHUNK)
    counts = cuda.device_array(RADIX * chunks, np.int64)
    offsets = cuda.device_array(RADIX * chunks + 1, np.int64)
    perm = cuda.device_array(n, index_dtype)
    other = cuda.device_array(n, index_dtype)
    blocks, threads = grid_1d(chunks)
    for p in range(passes):
        shift = p * RADIX_BITS
        _digit_counts[blocks, threads](keys, perm, p > 0, shift, counts)
        exclusive_scan(counts, offsets)
        _digit_scatter[blocks, threads](keys, perm, p > 0, shift, offsets, other)
        perm, other = other, perm
    return perm


def count_sort(keys, num_keys: int, index_dtype=np.int64):
    """Stable counting sort: ``(indptr, perm)`` as :func:`graphkern.kernels.cpu.sort.count_sort`."""
    indptr = cuda.device_array(int(num_keys) + 1, index_dtype)
    exclusive_scan(histogram(keys, num_keys, np.int64), indptr)
    return indptr, sort_permutation(keys, num_keys, index_dtype)


def coo_to_compressed(rows, cols, eids, num_rows: int):
    """Compress a COO by ``rows`` (stable): ``(indptr, indices, out_eids)``; ``eids=None`` means edge ``i``
    is slot ``i``."""
    dtype = cols.dtype
    indptr, perm = count_sort(rows, num_rows, dtype)
    indices = gather(cols, perm, cuda.device_array(cols.size, dtype))
    out_eids = perm if eids is None else gather(eids, perm, cuda.device_array(cols.size, dtype))
    return indptr, indices, out_eids


def transpose_compressed(indptr, indices, eids, num_cols: int):
    """CSR -> CSC or CSC -> CSR with edge ids; within an output row, input row order (stable)."""
    rows = expand_indptr(indptr, cuda.device_array(indices.size, indices.dtype))
    return coo_to_compressed(indices, rows, eids, num_cols)


@cuda.jit
def _cast(values, out):
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        out[i] = values[i]


def cast(values, out):
    """``out[:] = values`` converting the dtype on the device."""
    if values.size:
        _cast[grid_1d(values.size)](values, out)
    return out
