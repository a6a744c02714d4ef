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

import threading

import numpy as np
from numba import get_num_threads, njit, prange

from .partition import nnz_balanced_row_bounds

# Below this many elements a single chunk is faster than paying for T histograms.
_MIN_ELEMENTS_PER_CHUNK = 1 << 15


def _num_chunks(num_elements: int, num_keys: int) -> int:
    """How many chunks to split a direct (one-pass) sort of ``num_elements`` keys in ``[0, num_keys)`` into.

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
    """Fill ``indptr`` from per-chunk key counts and turn ``counts`` into per-chunk write heads."""
    totals = np.empty(counts.shape[1], dtype=indptr.dtype)
    _column_totals(counts, totals)
    exclusive_scan(totals, indptr)
    _offsets_from_counts(counts, indptr)


# --- scratch memory ----------------------------------------------------------------------------------
# The two-pass sort needs two scratch arrays as large as the input. Fresh multi-megabyte arrays cost a
# page fault per page on first touch (a large share of a big transpose; `graphkern bench`), so
# the sort keeps one scratch block per thread of control and reuses it. Only blocks up to
# _SCRATCH_KEEP_BYTES are kept; release_scratch() frees them.
_SCRATCH_KEEP_BYTES = 1 << 30
_scratch_lock = threading.Lock()
_scratch_free: list[np.ndarray] = []


def _take_scratch(nbytes: int) -> np.ndarray:
    with _scratch_lock:
        for i, block in enumerate(_scratch_free):
            if block.size >= nbytes:
                return _scratch_free.pop(i)
    return np.empty(nbytes, dtype=np.uint8)


def _give_scratch(block: np.ndarray) -> None:
    if block.size > _SCRATCH_KEEP_BYTES:
        return
    with _scratch_lock:
        _scratch_free.append(block)
        _scratch_free.sort(key=lambda b: b.size)
        while len(_scratch_free) > 2:  # keep the two largest: one per concurrent sort is plenty
            _scratch_free.pop(0)


def release_scratch() -> None:
    """Free the scratch memory the sorts keep for reuse."""
    with _scratch_lock:
        _scratch_free.clear()


# --- element sources ------------------------------------------------------------------------------------
# A COO source yields (key = keys[i], value = vals[i], eid = eids[i] or i); a compressed source yields
# (key = indices[j], value = its row r, eid = eids[j] or j). ``shift`` > 0 counts buckets of 2**shift keys.

@njit(parallel=True, cache=True)
def _histogram_coo(keys, bounds, shift, counts):
    for t in prange(bounds.size - 1):
        for i in range(bounds[t], bounds[t + 1]):
            counts[t, keys[i] >> shift] += 1


@njit(parallel=True, cache=True)
def _histogram_rows(indptr, indices, bounds, shift, counts):
    for t in prange(bounds.size - 1):
        for j in range(indptr[bounds[t]], indptr[bounds[t + 1]]):
            counts[t, indices[j] >> shift] += 1


@njit(parallel=True, cache=True)
def _scatter_coo(keys, vals, eids, has_eids, bounds, heads, out_vals, out_eids):
    for t in prange(bounds.size - 1):
        for i in range(bounds[t], bounds[t + 1]):
            k = keys[i]
            pos = heads[t, k]
            heads[t, k] = pos + 1
            out_vals[pos] = vals[i]
            out_eids[pos] = eids[i] if has_eids else i


@njit(parallel=True, cache=True)
def _scatter_rows(indptr, indices, eids, has_eids, bounds, heads, out_vals, out_eids):
    for t in prange(bounds.size - 1):
        for r in range(bounds[t], bounds[t + 1]):
            for j in range(indptr[r], indptr[r + 1]):
                k = indices[j]
                pos = heads[t, k]
                heads[t, k] = pos + 1
                out_vals[pos] = r
                out_eids[pos] = eids[j] if has_eids else j


@njit(parallel=True, cache=True)
def _scatter_rows_packed(indptr, indices, eids, has_eids, bounds, heads, tails, last_backward, pairs):
    """:func:`_scatter_rows` writing ``row << 32 | eid`` as one int64 per element: a random write misses cache
    once instead of twice (the unpacking pass is sequential and cheap). With ``last_backward`` the last part
    needs no histogram: it walks its rows and slots from the end and fills each key's run from the end
    (``tails`` are the runs' ends), meeting the forward parts exactly because the key counts are known; the
    order within a run stays the input's."""
    parts = bounds.size - 1
    for t in prange(parts):
        if last_backward and t == parts - 1:
            for r in range(bounds[t + 1] - 1, bounds[t] - 1, -1):
                hi = np.int64(r) << 32
                for j in range(indptr[r + 1] - 1, indptr[r] - 1, -1):
                    k = indices[j]
                    pos = tails[k] - 1
                    tails[k] = pos
                    pairs[pos] = hi | np.int64(eids[j] if has_eids else j)
        else:
            for r in range(bounds[t], bounds[t + 1]):
                hi = np.int64(r) << 32
                for j in range(indptr[r], indptr[r + 1]):
                    k = indices[j]
                    pos = heads[t, k]
                    heads[t, k] = pos + 1
                    pairs[pos] = hi | np.int64(eids[j] if has_eids else j)


@njit(parallel=True, cache=True)
def _unpack_pairs(pairs, out_vals, out_eids):
    low = np.int64(0xFFFFFFFF)
    for i in prange(pairs.size):
        x = pairs[i]
        out_vals[i] = x >> 32
        out_eids[i] = x & low


def _transpose_packed(indptr, indices, eids, num_keys, key_counts, idx_dtype):
    """Direct one-pass transpose of an int32 compressed matrix through packed pairs. ``key_counts`` (the
    output's row lengths, when the caller knows them: a DynamicGraph's in-degrees) replace the histogram
    of the last part; only parts 1..T-2 still need the earlier parts' counts."""
    n = indices.size
    has_eids = eids is not None
    num_rows = indptr.size - 1
    threads = max(1, min(get_num_threads(), n // _MIN_ELEMENTS_PER_CHUNK, num_rows))
    out_indptr = np.empty(num_keys + 1, dtype=idx_dtype)
    if key_counts is not None:
        parts = threads if threads <= 2 else min(threads, max(2, (2 * n) // max(num_keys, 1)))
        bounds = nnz_balanced_row_bounds(indptr, parts)
        exclusive_scan(key_counts, out_indptr)
        heads = np.empty((max(parts - 1, 1), num_keys), dtype=idx_dtype)
        heads[0] = out_indptr[:-1]
        if parts > 2:
            counts = np.zeros((parts, num_keys), dtype=idx_dtype)
            _histogram_rows(indptr, indices, bounds[: parts - 1], 0, counts)  # parts 0 .. T-3
            for t in range(1, parts - 1):
                heads[t] = heads[t - 1] + counts[t - 1]
        tails = out_indptr[1:].copy()
        last_backward = parts >= 2
    else:
        parts = min(_num_chunks(n, num_keys), max(num_rows, 1))
        bounds = nnz_balanced_row_bounds(indptr, parts)
        heads = np.zeros((parts, num_keys), dtype=idx_dtype)
        _histogram_rows(indptr, indices, bounds, 0, heads)
        _chunk_offsets(heads, out_indptr)
        tails = out_indptr[:1]
        last_backward = False
    scratch = _take_scratch(n * 8)
    pairs = scratch[: n * 8].view(np.int64)
    _scatter_rows_packed(indptr, indices, eids if has_eids else indices, has_eids, bounds, heads, tails,
                         last_backward, pairs)
    out_vals = np.empty(n, dtype=idx_dtype)
    out_eids = np.empty(n, dtype=idx_dtype)
    _unpack_pairs(pairs, out_vals, out_eids)
    _give_scratch(scratch)
    return out_indptr, out_vals, out_eids


# Sorts of many elements into many keys go through two passes (most-significant bits first): a stable
# scatter into about 2**_BUCKET_BITS buckets of consecutive keys, whose write heads stay in cache, then a
# sort inside each bucket, whose output region (one bucket's slots) fits in L2. One direct pass into 10**6
# keys misses cache on nearly every write, so the two passes are faster (`graphkern bench`, the
# conversions and the bare count sort).
_BUCKETED_MIN_ELEMENTS = 1 << 20
_BUCKETED_MIN_KEYS = 1 << 17
_BUCKET_BITS = 10


def _bucket_shift(num_keys: int) -> int:
    return max(0, int(num_keys - 1).bit_length() - _BUCKET_BITS)


def _use_buckets(num_elements: int, num_keys: int) -> bool:
    return num_elements >= _BUCKETED_MIN_ELEMENTS and num_keys >= _BUCKETED_MIN_KEYS


def _packed_dtype(max_value: int, shift: int):
    """Narrowest signed dtype that holds ``max_value << shift | (2**shift - 1)``."""
    return np.int32 if (max_value + 1) << shift <= np.iinfo(np.int32).max else np.int64


@njit(parallel=True, cache=True)
def _scatter_coo_to_buckets(keys, vals, eids, has_eids, bounds, shift, heads, tmp_packed, tmp_eids):
    mask = (1 << shift) - 1
    for t in prange(bounds.size - 1):
        for i in range(bounds[t], bounds[t + 1]):
            k = keys[i]
            b = k >> shift
            pos = heads[t, b]
            heads[t, b] = pos + 1
            tmp_packed[pos] = (tmp_packed.dtype.type(vals[i]) << shift) | (k & mask)
            tmp_eids[pos] = eids[i] if has_eids else i


@njit(parallel=True, cache=True)
def _scatter_rows_to_buckets(indptr, indices, eids, has_eids, bounds, shift, heads, tmp_packed, tmp_eids):
    mask = (1 << shift) - 1
    for t in prange(bounds.size - 1):
        for r in range(bounds[t], bounds[t + 1]):
            high = tmp_packed.dtype.type(r) << shift
            for j in range(indptr[r], indptr[r + 1]):
                k = indices[j]
                b = k >> shift
                pos = heads[t, b]
                heads[t, b] = pos + 1
                tmp_packed[pos] = high | (k & mask)
                tmp_eids[pos] = eids[j] if has_eids else j


@njit(parallel=True, cache=True)
def _sort_within_buckets(bucket_starts, shift, num_keys, tmp_packed, tmp_eids, indptr, out_vals, out_eids):
    """Second pass: bucket ``b`` is the slots ``bucket_starts[b]:bucket_starts[b+1]``; sort it by key.

    ``tmp_packed[i] = value << shift | (key - lo)``: the key's offset inside its bucket rides in the low
    bits of the value, so the first pass writes two scratch arrays instead of three. The bucket's key
    counts (its part of ``indptr``) are computed here while the bucket is in cache, instead of by a
    histogram over all keys up front.
    """
    mask = (1 << shift) - 1
    for b in prange(bucket_starts.size - 1):
        lo = b << shift
        width = min(num_keys, lo + (1 << shift)) - lo
        start = bucket_starts[b]
        end = bucket_starts[b + 1]
        heads = np.zeros(width, dtype=indptr.dtype)
        for i in range(start, end):
            heads[tmp_packed[i] & mask] += 1
        acc = start
        for k in range(width):
            c = heads[k]
            heads[k] = acc
            indptr[lo + k] = acc
            acc += c
        for i in range(start, end):
            packed = tmp_packed[i]
            k = packed & mask
            pos = heads[k]
            heads[k] = pos + 1
            out_vals[pos] = packed >> shift
            out_eids[pos] = tmp_eids[i]
    indptr[num_keys] = bucket_starts[bucket_starts.size - 1]


def _bucket_heads(counts, idx_dtype):
    """First-pass write heads per (chunk, bucket) and the bucket starts, from per-chunk bucket counts."""
    starts = np.zeros(counts.shape[1] + 1, dtype=idx_dtype)
    np.cumsum(counts.sum(axis=0), dtype=idx_dtype, out=starts[1:])
    heads = np.empty_like(counts)
    acc = starts[:-1].copy()
    for t in range(counts.shape[0]):  # one vector op per thread
        heads[t] = acc
        acc += counts[t]
    return heads, starts


def _compress(source_is_rows, a, b, eids, num_keys, max_value, idx_dtype):
    """Shared driver: sort the elements of a COO (``a`` keys, ``b`` values) or of a compressed matrix
    (``a`` indptr, ``b`` indices) by key; returns ``(indptr, values, eids)``."""
    n = b.size
    has_eids = eids is not None
    out_vals = np.empty(n, dtype=idx_dtype)
    out_eids = np.empty(n, dtype=idx_dtype)
    if _use_buckets(n, num_keys):
        chunks = get_num_threads()
        shift = _bucket_shift(num_keys)
        num_buckets = ((num_keys - 1) >> shift) + 1
        counts = np.zeros((chunks, num_buckets), dtype=idx_dtype)
        packed_dtype = np.dtype(_packed_dtype(max_value, shift))
        eid_bytes = n * np.dtype(idx_dtype).itemsize
        scratch = _take_scratch(n * packed_dtype.itemsize + eid_bytes)
        tmp_eids = scratch[:eid_bytes].view(idx_dtype)
        tmp_packed = scratch[eid_bytes : eid_bytes + n * packed_dtype.itemsize].view(packed_dtype)
        eids_in = eids if has_eids else tmp_eids
        if source_is_rows:
            bounds = nnz_balanced_row_bounds(a, chunks)
            _histogram_rows(a, b, bounds, shift, counts)
            heads, starts = _bucket_heads(counts, idx_dtype)
            _scatter_rows_to_buckets(a, b, eids_in, has_eids, bounds, shift, heads, tmp_packed, tmp_eids)
        else:
            bounds = _even_bounds(n, chunks)
            _histogram_coo(a, bounds, shift, counts)
            heads, starts = _bucket_heads(counts, idx_dtype)
            _scatter_coo_to_buckets(a, b, eids_in, has_eids, bounds, shift, heads, tmp_packed, tmp_eids)
        indptr = np.empty(num_keys + 1, dtype=idx_dtype)
        _sort_within_buckets(starts, shift, num_keys, tmp_packed, tmp_eids, indptr, out_vals, out_eids)
        _give_scratch(scratch)
        return indptr, out_vals, out_eids
    chunks = _num_chunks(n, num_keys)
    if source_is_rows:
        chunks = min(chunks, max(a.size - 1, 1))
    counts = np.zeros((chunks, num_keys), dtype=idx_dtype)
    indptr = np.empty(num_keys + 1, dtype=idx_dtype)
    eids_in = eids if has_eids else out_eids
    if source_is_rows:
        bounds = nnz_balanced_row_bounds(a, chunks)
        _histogram_rows(a, b, bounds, 0, counts)
        _chunk_offsets(counts, indptr)
        _scatter_rows(a, b, eids_in, has_eids, bounds, counts, out_vals, out_eids)
    else:
        bounds = _even_bounds(n, chunks)
        _histogram_coo(a, bounds, 0, counts)
        _chunk_offsets(counts, indptr)
        _scatter_coo(a, b, eids_in, has_eids, bounds, counts, out_vals, out_eids)
    return indptr, out_vals, out_eids


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
    max_col = int(cols.max()) if cols.size else 0
    return _compress(False, rows, cols, eids, int(num_rows), max_col, cols.dtype)


def transpose_compressed(indptr, indices, eids, num_cols: int, col_counts=None):
    """Transpose a compressed matrix, carrying edge ids: CSR -> CSC, or CSC -> CSR.

    Returns ``(t_indptr, t_indices, t_eids)``. ``eids=None`` means slot ``j`` holds edge ``j``. Inside each
    output row the entries come in input row order, so the indices of every output row are sorted
    ascending and, for multi-edges, in input slot order: transposing twice gives a CSR whose rows are
    sorted, with parallel edges in their original order. ``col_counts`` (optional) are the entries per
    column (the output's row lengths) when the caller already knows them; they must be exact.

    Examples
    --------
    >>> import numpy as np
    >>> from graphkern.kernels.cpu.sort import transpose_compressed
    >>> p, i, e = transpose_compressed(np.array([0, 2, 3]), np.array([1, 0, 1]), None, 2)
    >>> p.tolist(), i.tolist(), e.tolist()
    ([0, 1, 3], [0, 0, 1], [1, 0, 2])
    """
    num_cols = int(num_cols)
    if (indices.dtype == np.int32 and (eids is None or eids.dtype == np.int32)
            and not _use_buckets(indices.size, num_cols)):
        # int32 rows and ids pack into one int64 per element
        return _transpose_packed(indptr, indices, eids, num_cols, col_counts, indices.dtype)
    return _compress(True, indptr, indices, eids, num_cols, max(indptr.size - 2, 0), indices.dtype)


@njit(parallel=True, cache=True)
def _scatter_perm(keys, bounds, heads, perm):
    for t in prange(bounds.size - 1):
        for i in range(bounds[t], bounds[t + 1]):
            k = keys[i]
            pos = heads[t, k]
            heads[t, k] = pos + 1
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
    _histogram_coo(keys, bounds, 0, counts)
    _chunk_offsets(counts, indptr)
    perm = np.empty(n, dtype=index_dtype)
    _scatter_perm(keys, bounds, counts, perm)
    return indptr, perm


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
    _histogram_coo(keys, bounds, 0, counts)
    return counts.sum(axis=0, dtype=dtype) if chunks > 1 else counts[0]


@njit(parallel=True, cache=True)
def scatter_by_eid(values, eids, out):
    """``out[eids[j]] = values[j]``: put slot-ordered values back into edge-id order."""
    for j in prange(eids.size):
        out[eids[j]] = values[j]
    return out


@njit(parallel=True, cache=True)
def rows_are_sorted(indptr, indices):
    """True when every row's indices are non-decreasing."""
    unsorted = 0
    for r in prange(indptr.size - 1):
        for j in range(indptr[r] + 1, indptr[r + 1]):
            if indices[j] < indices[j - 1]:
                unsorted += 1
                break
    return unsorted == 0


@njit(cache=True)
def stable_rows_sorted(rows, cols, num_rows):
    """True when compressing ``(rows, cols)`` by ``rows`` with the stable count sort
    (:func:`coo_to_compressed`) gives rows whose indices are non-decreasing: each row's ``cols`` come in
    ascending order in the input. One serial pass (a planner asks before the compressed format exists)."""
    last = np.full(num_rows, -1, dtype=np.int64)
    for j in range(rows.size):
        r = rows[j]
        c = np.int64(cols[j])
        if c < last[r]:
            return False
        last[r] = c
    return True


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
