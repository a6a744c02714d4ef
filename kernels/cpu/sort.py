"""Stable parallel counting sort and prefix scan (CPU).

Every format change in graphkern goes through these kernels: COO -> CSR/CSC, CSR <-> CSC (the transpose
with edge ids, i.e. the reverse graph) and the reverse CSR of a dynamic-graph snapshot. The sort is the
classic three-phase counting sort, parallel over ``T`` contiguous chunks of the input:

1. histogram: chunk ``t`` counts its keys into its own row ``counts[t, :]`` (no atomics, no sharing);
2. scan: ``indptr`` is the exclusive scan of the column sums, and ``counts[t, k]`` becomes the first output
   slot of key ``k`` for chunk ``t`` (``indptr[k]`` plus the counts of the chunks before ``t``);
3. scatter: chunk ``t`` walks its input in order and writes each element to the next slot of its key.

Because chunks are contiguous and in order, and each chunk writes its keys in input order, elements with
equal keys keep their input order: the sort is stable and deterministic whatever the thread count.
Chunks are balanced by element count (for the transpose: by non-zeros, not rows), so a hub row does not
serialise the work.

These functions trust their inputs (``graphkern._validate`` checks them first): keys lie in
``[0, num_keys)`` and ``indptr`` is monotone with ``indptr[-1] == len(indices)``.
"""

from __future__ import annotations

import numpy as np
from numba import get_num_threads, njit, prange

# Below this many elements a single chunk is faster than paying for T histograms.
_MIN_ELEMENTS_PER_CHUNK = 1 << 15


def _num_chunks(num_elements: int, num_keys: int) -> int:
    """How many chunks to split a sort of ``num_elements`` keys in ``[0, num_keys)`` into.

    Each chunk owns a histogram row of ``num_keys`` counters; we keep the total histogram no larger than
    about twice the input so a sort over few elements and many keys does not spend its time zeroing
    counters.
    """
    threads = get_num_threads()
    by_size = max(1, num_elements // _MIN_ELEMENTS_PER_CHUNK)
    by_memory = max(1, (2 * num_elements) // max(num_keys, 1))
    return int(max(1, min(threads, by_size, by_memory)))


@njit(cache=True)
def _even_bounds(n, parts):
    bounds = np.empty(parts + 1, dtype=np.int64)
    for t in range(parts + 1):
        bounds[t] = (n * t) // parts
    return bounds


@njit(cache=True)
def _nnz_balanced_row_bounds(indptr, parts):
    """Row ranges ``[bounds[t], bounds[t+1])`` holding about ``nnz / parts`` non-zeros each."""
    num_rows = indptr.size - 1
    nnz = indptr[num_rows]
    bounds = np.empty(parts + 1, dtype=np.int64)
    bounds[0] = 0
    bounds[parts] = num_rows
    for t in range(1, parts):
        target = (nnz * t) // parts
        # first row whose end passes the target: np.searchsorted(indptr, target, 'right') - 1
        bounds[t] = max(bounds[t - 1], np.searchsorted(indptr, target, side="right") - 1)
    return bounds


@njit(parallel=True, cache=True)
def _exclusive_scan_blocks(values, out, blocks):
    n = values.size
    bounds = np.empty(blocks + 1, dtype=np.int64)
    for b in range(blocks + 1):
        bounds[b] = (n * b) // blocks
    block_sums = np.zeros(blocks + 1, dtype=out.dtype)
    for b in prange(blocks):
        acc = 0
        for i in range(bounds[b], bounds[b + 1]):
            acc += values[i]
        block_sums[b + 1] = acc
    for b in range(blocks):
        block_sums[b + 1] += block_sums[b]
    for b in prange(blocks):
        acc = block_sums[b]
        for i in range(bounds[b], bounds[b + 1]):
            out[i] = acc
            acc += values[i]
    out[n] = block_sums[blocks]


def exclusive_scan(values: np.ndarray, out: np.ndarray) -> np.ndarray:
    """Write the exclusive prefix sum of ``values`` to ``out[:-1]`` and the total to ``out[-1]``.

    ``out`` has ``len(values) + 1`` entries, which is exactly a CSR ``indptr`` built from row counts.
    Two parallel passes over blocks (block sums, then each block scans from its offset) around a short
    serial scan over the block sums.

    Examples
    --------
    >>> import numpy as np
    >>> from graphkern.kernels.cpu.sort import exclusive_scan
    >>> exclusive_scan(np.array([3, 0, 2]), np.empty(4, dtype=np.int64)).tolist()
    [0, 3, 3, 5]
    """
    blocks = max(1, min(get_num_threads() * 4, values.size // 16384))
    _exclusive_scan_blocks(values, out, blocks)
    return out


@njit(parallel=True, cache=True)
def _column_totals(counts, totals):
    num_chunks, num_keys = counts.shape
    for k in prange(num_keys):
        acc = 0
        for t in range(num_chunks):
            acc += counts[t, k]
        totals[k] = acc


@njit(parallel=True, cache=True)
def _offsets_from_counts(counts, starts):
    """In place: ``counts[t, k] <- starts[k] + sum(counts[:t, k])`` (each chunk's first slot per key)."""
    num_chunks, num_keys = counts.shape
    for k in prange(num_keys):
        acc = starts[k]
        for t in range(num_chunks):
            c = counts[t, k]
            counts[t, k] = acc
            acc += c


def _chunk_offsets(counts, indptr):
    """Fill ``indptr`` from per-chunk key counts and turn ``counts`` into per-chunk first output slots."""
    totals = np.empty(counts.shape[1], dtype=indptr.dtype)
    _column_totals(counts, totals)
    exclusive_scan(totals, indptr)
    _offsets_from_counts(counts, indptr)


@njit(parallel=True, cache=True)
def _histogram_chunks(keys, bounds, counts):
    for t in prange(bounds.size - 1):
        for i in range(bounds[t], bounds[t + 1]):
            counts[t, keys[i]] += 1


@njit(parallel=True, cache=True)
def _scatter_perm(keys, bounds, offsets, perm):
    for t in prange(bounds.size - 1):
        for i in range(bounds[t], bounds[t + 1]):
            k = keys[i]
            pos = offsets[t, k]
            offsets[t, k] = pos + 1
            perm[pos] = i


def count_sort(keys: np.ndarray, num_keys: int, index_dtype=np.int64):
    """Stable counting sort of integer ``keys`` in ``[0, num_keys)``.

    Returns ``(indptr, perm)``: ``keys[perm]`` is sorted, equal keys keep their input order, and
    ``indptr[k]:indptr[k+1]`` is the run of key ``k`` in the sorted order (a CSR row pointer).

    Examples
    --------
    >>> import numpy as np
    >>> from graphkern.kernels.cpu.sort import count_sort
    >>> indptr, perm = count_sort(np.array([2, 0, 2, 1], dtype=np.int32), 3)
    >>> indptr.tolist(), perm.tolist()
    ([0, 1, 2, 4], [1, 3, 0, 2])
    """
    n = keys.size
    chunks = _num_chunks(n, num_keys)
    bounds = _even_bounds(n, chunks)
    counts = np.zeros((chunks, num_keys), dtype=index_dtype)
    indptr = np.empty(num_keys + 1, dtype=index_dtype)
    _histogram_chunks(keys, bounds, counts)
    _chunk_offsets(counts, indptr)
    perm = np.empty(n, dtype=index_dtype)
    _scatter_perm(keys, bounds, counts, perm)
    return indptr, perm


@njit(parallel=True, cache=True)
def _scatter_coo(rows, cols, eids, bounds, offsets, out_indices, out_eids):
    for t in prange(bounds.size - 1):
        for i in range(bounds[t], bounds[t + 1]):
            k = rows[i]
            pos = offsets[t, k]
            offsets[t, k] = pos + 1
            out_indices[pos] = cols[i]
            out_eids[pos] = eids[i]


@njit(parallel=True, cache=True)
def _scatter_coo_identity(rows, cols, bounds, offsets, out_indices, out_eids):
    for t in prange(bounds.size - 1):
        for i in range(bounds[t], bounds[t + 1]):
            k = rows[i]
            pos = offsets[t, k]
            offsets[t, k] = pos + 1
            out_indices[pos] = cols[i]
            out_eids[pos] = i


def coo_to_compressed(rows, cols, eids, num_rows: int):
    """Compress a COO edge list by ``rows``: the CSR (rows = sources) or CSC (rows = destinations).

    Returns ``(indptr, indices, out_eids)`` where ``indices[j]`` is the column of slot ``j`` and
    ``out_eids[j]`` the edge id stored there. ``eids=None`` means the COO is in edge-id order (edge ``i``
    has id ``i``). Within a row, edges keep their COO order (stable).

    Examples
    --------
    >>> import numpy as np
    >>> from graphkern.kernels.cpu.sort import coo_to_compressed
    >>> indptr, indices, eids = coo_to_compressed(np.array([1, 0, 1]), np.array([0, 2, 1]), None, 2)
    >>> indptr.tolist(), indices.tolist(), eids.tolist()
    ([0, 1, 3], [2, 0, 1], [1, 0, 2])
    """
    idx_dtype = cols.dtype
    n = rows.size
    chunks = _num_chunks(n, num_rows)
    bounds = _even_bounds(n, chunks)
    counts = np.zeros((chunks, num_rows), dtype=idx_dtype)
    indptr = np.empty(num_rows + 1, dtype=idx_dtype)
    _histogram_chunks(rows, bounds, counts)
    out_indices = np.empty(n, dtype=idx_dtype)
    out_eids = np.empty(n, dtype=idx_dtype)
    if _use_buckets(n, num_rows):
        totals = np.empty(num_rows, dtype=idx_dtype)
        _column_totals(counts, totals)
        exclusive_scan(totals, indptr)
        shift = _bucket_shift(num_rows)
        offsets = _bucket_offsets(counts, indptr, shift)
        del counts
        max_col = int(cols.max()) if n else 0
        tmp_packed = np.empty(n, dtype=_packed_dtype(max_col, shift))
        tmp_eids = np.empty(n, dtype=idx_dtype)
        has_eids = eids is not None
        _scatter_coo_to_buckets(rows, cols, eids if has_eids else tmp_eids, has_eids, bounds, shift, offsets,
                                tmp_packed, tmp_eids)
        _scatter_buckets_to_final(indptr, shift, tmp_packed, tmp_eids, out_indices, out_eids)
        return indptr, out_indices, out_eids
    _chunk_offsets(counts, indptr)
    if eids is None:
        _scatter_coo_identity(rows, cols, bounds, counts, out_indices, out_eids)
    else:
        _scatter_coo(rows, cols, eids, bounds, counts, out_indices, out_eids)
    return indptr, out_indices, out_eids


# Sorts of many elements into many keys go through two passes (most-significant-bits first): a stable
# scatter into about 2**_BUCKET_BITS buckets of consecutive keys, whose write heads stay in cache, then a
# per-bucket scatter whose output region (one bucket's slots) fits in L2. One direct pass into 10**6 keys
# misses cache on nearly every write; measured on a 16M-edge transpose, the two passes were ~2x faster.
_BUCKETED_MIN_ELEMENTS = 1 << 20
_BUCKETED_MIN_KEYS = 1 << 16
_BUCKET_BITS = 10


def _bucket_shift(num_keys: int) -> int:
    return max(0, int(num_keys - 1).bit_length() - _BUCKET_BITS)


def _use_buckets(num_elements: int, num_keys: int) -> bool:
    return num_elements >= _BUCKETED_MIN_ELEMENTS and num_keys >= _BUCKETED_MIN_KEYS


@njit(parallel=True, cache=True)
def _bucket_counts(counts, shift, bucket_counts):
    """Sum per-chunk key counts ``(T, K)`` over each bucket of ``2**shift`` keys into ``(T, B)``."""
    num_chunks, num_keys = counts.shape
    for b in prange(bucket_counts.shape[1]):
        lo = b << shift
        hi = min(num_keys, (b + 1) << shift)
        for t in range(num_chunks):
            acc = 0
            for k in range(lo, hi):
                acc += counts[t, k]
            bucket_counts[t, b] = acc


@njit(parallel=True, cache=True)
def _scatter_buckets_to_final(indptr, shift, tmp_packed, tmp_eids, out_indices, out_eids):
    """Second pass: bucket ``b`` holds exactly the slots ``indptr[lo]:indptr[hi]`` of its keys.

    ``tmp_packed[i] = value << shift | (key - lo)``: the key's offset inside its bucket rides in the low
    bits of the value, so the first pass writes two scratch arrays instead of three.
    """
    num_keys = indptr.size - 1
    num_buckets = (num_keys + (1 << shift) - 1) >> shift
    mask = (1 << shift) - 1
    for b in prange(num_buckets):
        lo = b << shift
        hi = min(num_keys, lo + (1 << shift))
        heads = indptr[lo:hi].copy()
        for i in range(indptr[lo], indptr[hi]):
            packed = tmp_packed[i]
            k = packed & mask
            pos = heads[k]
            heads[k] = pos + 1
            out_indices[pos] = packed >> shift
            out_eids[pos] = tmp_eids[i]


def _bucket_offsets(counts, indptr, shift):
    """Per-(chunk, bucket) first slots of the first pass, from the per-chunk key counts."""
    num_keys = indptr.size - 1
    num_buckets = (num_keys + (1 << shift) - 1) >> shift
    bucket_counts = np.empty((counts.shape[0], num_buckets), dtype=counts.dtype)
    _bucket_counts(counts, shift, bucket_counts)
    starts = np.ascontiguousarray(indptr[: num_keys : 1 << shift][:num_buckets])
    _offsets_from_counts(bucket_counts, starts)
    return bucket_counts


@njit(parallel=True, cache=True)
def _scatter_coo_to_buckets(rows, cols, eids, has_eids, bounds, shift, offsets, tmp_packed, tmp_eids):
    mask = (1 << shift) - 1
    for t in prange(bounds.size - 1):
        for i in range(bounds[t], bounds[t + 1]):
            k = rows[i]
            b = k >> shift
            pos = offsets[t, b]
            offsets[t, b] = pos + 1
            tmp_packed[pos] = (tmp_packed.dtype.type(cols[i]) << shift) | (k & mask)
            tmp_eids[pos] = eids[i] if has_eids else i


@njit(parallel=True, cache=True)
def _scatter_rows_to_buckets(indptr, indices, eids, has_eids, bounds, shift, offsets, tmp_packed, tmp_eids):
    mask = (1 << shift) - 1
    for t in prange(bounds.size - 1):
        for r in range(bounds[t], bounds[t + 1]):
            high = tmp_packed.dtype.type(r) << shift
            for j in range(indptr[r], indptr[r + 1]):
                k = indices[j]
                b = k >> shift
                pos = offsets[t, b]
                offsets[t, b] = pos + 1
                tmp_packed[pos] = high | (k & mask)
                tmp_eids[pos] = eids[j] if has_eids else j


def _packed_dtype(max_value: int, shift: int):
    """Narrowest signed dtype that holds ``max_value << shift | mask``."""
    return np.int32 if (max_value + 1) << shift <= np.iinfo(np.int32).max else np.int64


@njit(parallel=True, cache=True)
def _histogram_rows(indptr, indices, bounds, counts):
    for t in prange(bounds.size - 1):
        for j in range(indptr[bounds[t]], indptr[bounds[t + 1]]):
            counts[t, indices[j]] += 1


@njit(parallel=True, cache=True)
def _scatter_transpose(indptr, indices, eids, bounds, offsets, out_indices, out_eids):
    for t in prange(bounds.size - 1):
        for r in range(bounds[t], bounds[t + 1]):
            for j in range(indptr[r], indptr[r + 1]):
                k = indices[j]
                pos = offsets[t, k]
                offsets[t, k] = pos + 1
                out_indices[pos] = r
                out_eids[pos] = eids[j]


@njit(parallel=True, cache=True)
def _scatter_transpose_identity(indptr, indices, bounds, offsets, out_indices, out_eids):
    for t in prange(bounds.size - 1):
        for r in range(bounds[t], bounds[t + 1]):
            for j in range(indptr[r], indptr[r + 1]):
                k = indices[j]
                pos = offsets[t, k]
                offsets[t, k] = pos + 1
                out_indices[pos] = r
                out_eids[pos] = j


def transpose_compressed(indptr, indices, eids, num_cols: int):
    """Transpose a compressed matrix, carrying edge ids: CSR -> CSC, or CSC -> CSR.

    Returns ``(t_indptr, t_indices, t_eids)``. ``eids=None`` means slot ``j`` holds edge ``j``. Inside each
    output row the entries come in input row order, so the indices of every output row are sorted
    ascending and, for multi-edges, in input slot order: transposing twice gives a CSR whose rows are
    sorted, with parallel edges in their original order.

    Examples
    --------
    >>> import numpy as np
    >>> from graphkern.kernels.cpu.sort import transpose_compressed
    >>> p, i, e = transpose_compressed(np.array([0, 2, 3]), np.array([1, 0, 1]), None, 2)
    >>> p.tolist(), i.tolist(), e.tolist()
    ([0, 1, 3], [0, 0, 1], [1, 0, 2])
    """
    idx_dtype = indices.dtype
    nnz = indices.size
    num_rows = indptr.size - 1
    chunks = min(_num_chunks(nnz, num_cols), max(num_rows, 1))
    bounds = _nnz_balanced_row_bounds(indptr, chunks)
    counts = np.zeros((chunks, num_cols), dtype=idx_dtype)
    t_indptr = np.empty(num_cols + 1, dtype=idx_dtype)
    _histogram_rows(indptr, indices, bounds, counts)
    t_indices = np.empty(nnz, dtype=idx_dtype)
    t_eids = np.empty(nnz, dtype=idx_dtype)
    if _use_buckets(nnz, num_cols):
        totals = np.empty(num_cols, dtype=idx_dtype)
        _column_totals(counts, totals)
        exclusive_scan(totals, t_indptr)
        shift = _bucket_shift(num_cols)
        offsets = _bucket_offsets(counts, t_indptr, shift)
        del counts
        tmp_packed = np.empty(nnz, dtype=_packed_dtype(num_rows, shift))
        tmp_eids = np.empty(nnz, dtype=idx_dtype)
        has_eids = eids is not None
        _scatter_rows_to_buckets(indptr, indices, eids if has_eids else tmp_eids, has_eids, bounds, shift,
                                 offsets, tmp_packed, tmp_eids)
        _scatter_buckets_to_final(t_indptr, shift, tmp_packed, tmp_eids, t_indices, t_eids)
        return t_indptr, t_indices, t_eids
    _chunk_offsets(counts, t_indptr)
    if eids is None:
        _scatter_transpose_identity(indptr, indices, bounds, counts, t_indices, t_eids)
    else:
        _scatter_transpose(indptr, indices, eids, bounds, counts, t_indices, t_eids)
    return t_indptr, t_indices, t_eids


@njit(parallel=True, cache=True)
def expand_indptr(indptr, out):
    """Row id of every slot: ``out[j] = r`` for ``indptr[r] <= j < indptr[r+1]`` (CSR -> COO rows)."""
    num_rows = indptr.size - 1
    for r in prange(num_rows):
        for j in range(indptr[r], indptr[r + 1]):
            out[j] = r
    return out


@njit(parallel=True, cache=True)
def degrees_from_indptr(indptr, out):
    """``out[r] = indptr[r+1] - indptr[r]``."""
    for r in prange(indptr.size - 1):
        out[r] = indptr[r + 1] - indptr[r]
    return out


def histogram(keys: np.ndarray, num_keys: int, dtype=np.int64) -> np.ndarray:
    """Count of every key in ``[0, num_keys)``, in parallel (degrees from a COO)."""
    n = keys.size
    chunks = _num_chunks(n, num_keys)
    bounds = _even_bounds(n, chunks)
    counts = np.zeros((chunks, num_keys), dtype=dtype)
    _histogram_chunks(keys, bounds, counts)
    return counts.sum(axis=0, dtype=dtype) if chunks > 1 else counts[0]


@njit(parallel=True, cache=True)
def scatter_by_eid(values, eids, out):
    """``out[eids[j]] = values[j]``: put slot-ordered values back into edge-id order."""
    for j in prange(eids.size):
        out[eids[j]] = values[j]
    return out


@njit(parallel=True, cache=True)
def mark_unique_sorted_rows(indptr, indices, drop_self_loops, keep):
    """In a CSR with sorted rows, keep the first slot of every distinct (row, col); optionally drop r == c."""
    num_rows = indptr.size - 1
    for r in prange(num_rows):
        prev = -1
        for j in range(indptr[r], indptr[r + 1]):
            c = indices[j]
            keep[j] = c != prev and not (drop_self_loops and c == r)
            prev = c
    return keep
