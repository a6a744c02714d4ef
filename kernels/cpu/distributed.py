"""Record packing for the distributed transpose (graphkern.distributed.transpose).

A record is ``2 + W`` int64 words: the new row, the new column, and the value's bytes as ``W`` words
(zero-padded to a multiple of 8 bytes), so one contiguous MPI datatype carries every value dtype.

The sender groups its entries by destination rank with a stable two-pass bucket sort over row chunks
(``destination_counts`` then ``pack_by_destination``); the receiver takes the new rows out of the
records (``record_fields``) and puts the records in new-row order with graphkern's stable count sort.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

# Up to this many ranks the owner is a branch-free count of the offsets <= v: the owner of consecutive
# entries changes at random, and a binary search's mispredicted branches cost more than the compares.
_LINEAR_OWNER_RANKS = 64


@njit(cache=True)
def _owner(offsets, v):
    """The rank whose block ``offsets[r] <= v < offsets[r+1]`` holds ``v``."""
    if offsets.size <= _LINEAR_OWNER_RANKS + 1:
        d = 0
        for r in range(1, offsets.size - 1):
            d += v >= offsets[r]
        return d
    lo, hi = 0, offsets.size - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if offsets[mid] <= v:
            lo = mid
        else:
            hi = mid
    return lo


@njit(parallel=True, cache=True)
def destination_counts(indptr, indices, offsets, row_bounds, counts):
    """``counts[t, d]``: the entries of row chunk ``t`` whose column belongs to rank ``d``."""
    for t in prange(row_bounds.size - 1):
        for k in range(indptr[row_bounds[t]], indptr[row_bounds[t + 1]]):
            counts[t, _owner(offsets, indices[k])] += 1


@njit(parallel=True, cache=True)
def pack_by_destination(indptr, indices, words, offsets, row_bounds, heads, first_row, out):
    """Write each entry as the record ``(column, first_row + row, value words)`` at its destination's
    next slot; ``heads[t, d]`` is chunk ``t``'s first slot for rank ``d`` (stable: input order kept)."""
    num_words = words.shape[1]
    for t in prange(row_bounds.size - 1):
        for r in range(row_bounds[t], row_bounds[t + 1]):
            for k in range(indptr[r], indptr[r + 1]):
                v = indices[k]
                d = _owner(offsets, v)
                pos = heads[t, d]
                heads[t, d] = pos + 1
                out[pos, 0] = v
                out[pos, 1] = first_row + r
                for w in range(num_words):
                    out[pos, 2 + w] = words[k, w]


@njit(parallel=True, cache=True)
def record_fields(records, first, rows_out, cols_out, words_out):
    """Split received records into contiguous local new rows (``records[k, 0] - first``), new columns
    and value words, in one parallel pass."""
    num_words = words_out.shape[1]
    for k in prange(records.shape[0]):
        rows_out[k] = records[k, 0] - first
        cols_out[k] = records[k, 1]
        for w in range(num_words):
            words_out[k, w] = records[k, 2 + w]


def value_words(values) -> np.ndarray:
    """A ``(n, W)`` int64 view (or padded copy) of the bytes of ``values``; ``(0, 0)`` for no values."""
    if values is None:
        return np.zeros((0, 0), dtype=np.int64)
    n, size = values.shape[0], values.dtype.itemsize
    if size % 8 == 0 and values.flags.c_contiguous:
        return values.view(np.int64).reshape(n, size // 8)
    padded = np.zeros((n, -(-size // 8) * 8), dtype=np.uint8)
    padded[:, :size] = np.ascontiguousarray(values).view(np.uint8).reshape(n, size)
    return padded.view(np.int64)


def words_to_values(words: np.ndarray, dtype) -> np.ndarray:
    """The inverse of :func:`value_words`."""
    dtype = np.dtype(dtype)
    n = words.shape[0]
    if n == 0:
        return np.zeros(0, dtype=dtype)
    if dtype.itemsize % 8 == 0:
        return words.reshape(-1).view(dtype)
    raw = np.ascontiguousarray(words.view(np.uint8).reshape(n, -1)[:, :dtype.itemsize])
    return raw.reshape(-1).view(dtype)


@njit(parallel=True, cache=True)
def record_bucket_counts(records, first, bounds, shift, counts):
    """``counts[t, b]``: chunk ``t``'s records whose local new row falls in bucket ``b`` (row >> shift)."""
    for t in prange(bounds.size - 1):
        for k in range(bounds[t], bounds[t + 1]):
            counts[t, (records[k, 0] - first) >> shift] += 1


@njit(parallel=True, cache=True)
def scatter_records_to_buckets(records, first, bounds, shift, heads, carry_word, tmp_packed, tmp_eids):
    """First pass of the receiver's two-pass sort, straight from the records: each record's column and
    in-bucket row offset packed into one word (graphkern.kernels.cpu.sort's layout), and beside it its
    value word (``carry_word``) or its record index."""
    mask = (1 << shift) - 1
    for t in prange(bounds.size - 1):
        for k in range(bounds[t], bounds[t + 1]):
            row = records[k, 0] - first
            b = row >> shift
            pos = heads[t, b]
            heads[t, b] = pos + 1
            tmp_packed[pos] = (tmp_packed.dtype.type(records[k, 1]) << shift) | (row & mask)
            tmp_eids[pos] = records[k, 2] if carry_word else k
