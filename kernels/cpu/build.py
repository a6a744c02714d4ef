"""Building a simple symmetric CSR straight from an edge list, in little more memory than the result.

The general path (COO -> two count sorts -> duplicate marking -> compaction) keeps several edge-sized
temporaries alive at once; for the Graph500 graph (every tuple ``(u, v)`` stands for ``u -> v`` and
``v -> u``, self-loops and duplicates dropped) that is five times the memory of the graph itself. Here the
tuples are read in place and written once into the rows that will hold them:

1. count: each part owns a range of vertices and scans every tuple, counting the endpoints it owns (no
   atomics and no per-thread histograms, so memory stays O(n) whatever the thread count; a scan is a
   sequential read, cheap next to the random writes it replaces);
2. fill: the same ownership scan with ranges balanced by degree writes each endpoint into its row;
3. sort and deduplicate every row in place, in parallel over nnz-balanced row ranges;
4. close the gaps left by duplicates with one forward copy (each row moves left, never onto data not yet
   moved, so the copy needs no second buffer).

Rows come out sorted, so the result is also the sorted CSR that Graph500 validation searches in.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._intrinsics import prefetch_item_for_write

# Rows at most this long are sorted by insertion (no call, no recursion); longer ones by numpy's sort.
_INSERTION_SORT_MAX = 32
# Rows this long or longer are radix sorted: two passes over the row (digits of 11 bits at scale 22) beat
# the comparison sort already at 64 ids. Measured on the scale 20 Kronecker rows (48% of the tuple ends lie
# in rows of 33 to 1023), one thread, thresholds alternated in one process: the sort phase 1.48x faster at
# 64 than at 1024, 1.41x at 128, 1.29x at 48.
RADIX_SORT_MIN = 64
# The count and fill scans are a chain of random read-modify-writes (a counter or a row cursor per
# tuple end, then the slot the cursor names): the counter or cursor of the tuple this many places ahead
# is fetched early, and the slot half as far ahead, whose cursor has arrived by then. The build time is
# the construction_time line of `graphkern graph500 --scale 22`.
COUNTER_AHEAD = 32
SLOT_AHEAD = 16


@njit(parallel=True, cache=True)
def count_symmetric(src, dst, bounds, counts):
    """``counts[x, 0]``: non-loop tuples touching ``x`` (as either end); ``counts[x, 1]``: those with
    ``src == x`` (one row holds both, so each tuple end costs one cache line).

    Part ``t`` owns vertices ``[bounds[t], bounds[t + 1])`` and writes only their counters.
    """
    num = src.size
    for t in prange(bounds.size - 1):
        lo = bounds[t]
        hi = bounds[t + 1]
        for x in range(lo, hi):
            counts[x, 0] = 0
            counts[x, 1] = 0
        for i in range(num):
            if i + COUNTER_AHEAD < num:
                a = src[i + COUNTER_AHEAD]
                b = dst[i + COUNTER_AHEAD]
                if lo <= a < hi:
                    prefetch_item_for_write(counts[a], 0)
                if lo <= b < hi:
                    prefetch_item_for_write(counts[b], 0)
            u = src[i]
            v = dst[i]
            if u == v:
                continue
            if lo <= u < hi:
                counts[u, 0] += 1
                counts[u, 1] += 1
            if lo <= v < hi:
                counts[v, 0] += 1


@njit(parallel=True, cache=True)
def fill_symmetric(src, dst, bounds, cursor_end, indices):
    """Write ``v`` into row ``u`` and ``u`` into row ``v`` for every non-loop tuple; ``cursor_end[x, 0]``
    starts at row ``x``'s first slot and ends past its last written one, ``cursor_end[x, 1]`` is the row's
    end (both in one row of the array, so each tuple end costs one bookkeeping cache line). Part ``t``
    owns rows ``[bounds[t], bounds[t + 1])``.

    The ownership test keeps every row index in range, and a full row takes no more: even tuples changed
    since they were counted (another thread writing the caller's array) cannot move a write out of bounds.
    """
    for t in prange(bounds.size - 1):
        lo = bounds[t]
        hi = bounds[t + 1]
        num = src.size
        for i in range(num):
            if i + COUNTER_AHEAD < num:
                a = src[i + COUNTER_AHEAD]
                b = dst[i + COUNTER_AHEAD]
                if lo <= a < hi:
                    prefetch_item_for_write(cursor_end[a], 0)
                if lo <= b < hi:
                    prefetch_item_for_write(cursor_end[b], 0)
            if i + SLOT_AHEAD < num:
                a = src[i + SLOT_AHEAD]
                b = dst[i + SLOT_AHEAD]
                if lo <= a < hi and cursor_end[a, 0] < indices.size:
                    prefetch_item_for_write(indices, cursor_end[a, 0])
                if lo <= b < hi and cursor_end[b, 0] < indices.size:
                    prefetch_item_for_write(indices, cursor_end[b, 0])
            u = src[i]
            v = dst[i]
            if u == v:
                continue
            if lo <= u < hi:
                slot = cursor_end[u, 0]
                if slot < cursor_end[u, 1]:
                    indices[slot] = v
                    cursor_end[u, 0] = slot + 1
            if lo <= v < hi:
                slot = cursor_end[v, 0]
                if slot < cursor_end[v, 1]:
                    indices[slot] = u
                    cursor_end[v, 0] = slot + 1


@njit(inline="always")
def _insertion_sort(a, lo, hi):
    for j in range(lo + 1, hi):
        value = a[j]
        k = j - 1
        while k >= lo and a[k] > value:
            a[k + 1] = a[k]
            k -= 1
        a[k + 1] = value


@njit(inline="always")
def _radix_sort(a, lo, hi, scratch, counts, digit_bits, passes):
    """LSD radix sort of ``a[lo:hi]`` (non-negative ids) in ``passes`` counting passes of ``digit_bits``,
    ping-ponging with ``scratch``; the result ends in ``a``."""
    length = hi - lo
    mask = (1 << digit_bits) - 1
    in_a = True
    for p in range(passes):
        shift = p * digit_bits
        counts[:] = 0
        for j in range(length):
            x = a[lo + j] if in_a else scratch[j]
            counts[(x >> shift) & mask] += 1
        total = 0
        for d in range(mask + 1):
            c = counts[d]
            counts[d] = total
            total += c
        for j in range(length):
            x = a[lo + j] if in_a else scratch[j]
            d = (x >> shift) & mask
            if in_a:
                scratch[counts[d]] = x
            else:
                a[lo + counts[d]] = x
            counts[d] += 1
        in_a = not in_a
    if not in_a:
        for j in range(length):
            a[lo + j] = scratch[j]


@njit(parallel=True, cache=True)
def sort_unique_rows(indptr, row_end, indices, bounds, unique_count, digit_bits, passes):
    """Sort every row ``indices[indptr[r]:row_end[r]]`` in place and move its distinct values to the row's
    front; ``unique_count[r]`` says how many there are. Part ``t`` takes rows ``[bounds[t], bounds[t + 1])``
    (balanced by nnz). Slots past ``row_end[r]`` (none, unless the tuples changed while being read) are never
    read, so no uninitialised value reaches the result.

    Short rows are sorted by insertion, long ones (``RADIX_SORT_MIN`` and more, which hold most
    of a power-law graph's edges) by an LSD radix sort over ids below ``2**(digit_bits * passes)``, the rest
    by numpy's sort."""
    for t in prange(bounds.size - 1):
        longest = 0
        for r in range(bounds[t], bounds[t + 1]):
            longest = max(longest, row_end[r] - indptr[r])
        scratch = np.empty(longest if longest >= RADIX_SORT_MIN else 0, dtype=indices.dtype)
        counts = np.empty(1 << digit_bits, dtype=np.int64)
        for r in range(bounds[t], bounds[t + 1]):
            lo = indptr[r]
            hi = row_end[r]
            if hi - lo <= _INSERTION_SORT_MAX:
                _insertion_sort(indices, lo, hi)
            elif hi - lo >= RADIX_SORT_MIN:
                _radix_sort(indices, lo, hi, scratch, counts, digit_bits, passes)
            else:
                indices[lo:hi].sort()
            kept = lo
            for j in range(lo, hi):
                if j == lo or indices[j] != indices[kept - 1]:
                    indices[kept] = indices[j]
                    kept += 1
            unique_count[r] = kept - lo


def radix_digits(num_values: int) -> tuple[int, int]:
    """``(digit_bits, passes)`` for ids below ``num_values``: as few passes as digits of at most 13 bits
    allow (a pass's counters then stay within 64 KiB, in the core's cache)."""
    key_bits = max(1, int(num_values - 1).bit_length())
    passes = -(-key_bits // 13)
    return -(-key_bits // passes), passes


@njit(cache=True)
def compact_rows(indptr, unique_count, indices, new_indptr):
    """Move each row's distinct prefix to ``new_indptr[r]`` (left of or at its old start; rows move in
    order, so a row only overwrites slots already moved or dropped) and fill ``new_indptr``."""
    num_rows = indptr.size - 1
    new_indptr[0] = 0
    for r in range(num_rows):
        start = new_indptr[r]
        old = indptr[r]
        count = unique_count[r]
        if start != old:
            for j in range(count):
                indices[start + j] = indices[old + j]
        new_indptr[r + 1] = start + count
    return new_indptr
