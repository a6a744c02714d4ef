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

from numba import njit, prange

# Rows at most this long are sorted by insertion (no call, no recursion); longer ones by numpy's sort.
_INSERTION_SORT_MAX = 32


@njit(parallel=True, cache=True)
def count_symmetric(src, dst, bounds, degree, tuples_from):
    """``degree[x]``: non-loop tuples touching ``x`` (as either end); ``tuples_from[x]``: those with ``src == x``.

    Part ``t`` owns vertices ``[bounds[t], bounds[t + 1])`` and writes only their counters.
    """
    for t in prange(bounds.size - 1):
        lo = bounds[t]
        hi = bounds[t + 1]
        for x in range(lo, hi):
            degree[x] = 0
            tuples_from[x] = 0
        for i in range(src.size):
            u = src[i]
            v = dst[i]
            if u == v:
                continue
            if lo <= u < hi:
                degree[u] += 1
                tuples_from[u] += 1
            if lo <= v < hi:
                degree[v] += 1


@njit(parallel=True, cache=True)
def fill_symmetric(src, dst, bounds, indptr, cursor, indices):
    """Write ``v`` into row ``u`` and ``u`` into row ``v`` for every non-loop tuple; ``cursor[x]`` starts at
    row ``x``'s first slot and ends past its last. Part ``t`` owns rows ``[bounds[t], bounds[t + 1])``.

    The ownership test keeps every row index in range, and a full row takes no more: even tuples changed
    since they were counted (another thread writing the caller's array) cannot move a write out of bounds.
    """
    for t in prange(bounds.size - 1):
        lo = bounds[t]
        hi = bounds[t + 1]
        for i in range(src.size):
            u = src[i]
            v = dst[i]
            if u == v:
                continue
            if lo <= u < hi and cursor[u] < indptr[u + 1]:
                indices[cursor[u]] = v
                cursor[u] += 1
            if lo <= v < hi and cursor[v] < indptr[v + 1]:
                indices[cursor[v]] = u
                cursor[v] += 1


@njit(inline="always")
def _insertion_sort(a, lo, hi):
    for j in range(lo + 1, hi):
        value = a[j]
        k = j - 1
        while k >= lo and a[k] > value:
            a[k + 1] = a[k]
            k -= 1
        a[k + 1] = value


@njit(parallel=True, cache=True)
def sort_unique_rows(indptr, row_end, indices, bounds, unique_count):
    """Sort every row ``indices[indptr[r]:row_end[r]]`` in place and move its distinct values to the row's
    front; ``unique_count[r]`` says how many there are. Part ``t`` takes rows ``[bounds[t], bounds[t + 1])``
    (balanced by nnz). Slots past ``row_end[r]`` (none, unless the tuples changed while being read) are never
    read, so no uninitialised value reaches the result."""
    for t in prange(bounds.size - 1):
        for r in range(bounds[t], bounds[t + 1]):
            lo = indptr[r]
            hi = row_end[r]
            if hi - lo <= _INSERTION_SORT_MAX:
                _insertion_sort(indices, lo, hi)
            else:
                indices[lo:hi].sort()
            kept = lo
            for j in range(lo, hi):
                if j == lo or indices[j] != indices[kept - 1]:
                    indices[kept] = indices[j]
                    kept += 1
            unique_count[r] = kept - lo


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
