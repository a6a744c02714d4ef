"""Destination blocks and the hub split: the edge layouts of the cache-blocked SpMM and SDDMM (CPU).

:func:`destination_blocks` groups a compressed matrix's edges by blocks of destination rows, in source
order within a block; :func:`split_hub_edges` takes the edges of the sources of highest out-degree out
of a CSC first; :func:`edge_slots` and :func:`edge_rows_to_blocks` put edge rows in the blocked kernels'
edge order. The kernels that walk these layouts are in kernels/cpu/spmm_blocked.py and sddmm.py.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .partition import nnz_balanced_row_bounds


def block_shift(rows_per_block: int) -> int:
    """log2 of the block height: the largest power of two at most ``rows_per_block`` (a block is found by
    a shift)."""
    return max(0, int(rows_per_block).bit_length() - 1)


@njit(parallel=True, cache=True)
def scatter_rows_to_blocks(indptr, indices, eids, has_eids, bounds, shift, heads, src, dst, eid):
    """Write slot ``j`` of row ``r`` of a CSR (in row order, each chunk of rows ``bounds[t]:bounds[t+1]``
    from its own heads) to ``heads[t, indices[j] >> shift]``: ``src = r``, ``dst = indices[j]``, ``eid``.
    Stable: a block receives its edges in CSR order."""
    for t in prange(bounds.size - 1):
        for r in range(bounds[t], bounds[t + 1]):
            for j in range(indptr[r], indptr[r + 1]):
                v = indices[j]
                b = v >> shift
                pos = heads[t, b]
                heads[t, b] = pos + 1
                src[pos] = r
                dst[pos] = v
                eid[pos] = eids[j] if has_eids else j


def destination_blocks(indptr, indices, eids, num_src: int, num_dst: int, rows_per_block: int, by_destination: bool):
    """The edges of a compressed matrix grouped in destination blocks, in source order within a block.

    ``(indptr, indices, eids)`` is the CSC when ``by_destination`` (rows are destinations, ``indices``
    sources), else the CSR; ``eids`` None means the slot is the edge id. Blocks are ``2**shift`` rows
    (:func:`block_shift` of ``rows_per_block``). Returns ``(block_rows, block_ptr, src, dst, eid)``:
    block ``b`` covers destinations ``block_rows[b]:block_rows[b+1]`` and holds the slots
    ``block_ptr[b]:block_ptr[b+1]`` of the three edge arrays, ordered by (block, source, slot in the
    input). A CSC is first transposed (stable, so its order remains within a source); then one stable
    count sort by block, as every format change does.
    """
    from .sort import _chunk_offsets, _histogram_rows, _num_chunks, transpose_compressed

    if by_destination:
        indptr, indices, eids = transpose_compressed(indptr, indices, eids, num_src)
    idx = indices.dtype
    E = int(indices.size)
    shift = block_shift(rows_per_block)
    blocks = max(1, (num_dst + (1 << shift) - 1) >> shift)
    block_rows = np.minimum(np.arange(blocks + 1, dtype=np.int64) << shift, num_dst)
    chunks = _num_chunks(E, blocks)
    bounds = nnz_balanced_row_bounds(indptr, chunks)
    counts = np.zeros((bounds.size - 1, blocks), dtype=np.int64)
    _histogram_rows(indptr, indices, bounds, shift, counts)
    block_ptr = np.empty(blocks + 1, dtype=np.int64)
    _chunk_offsets(counts, block_ptr)
    src = np.empty(E, idx)
    dst = np.empty(E, idx)
    eid = np.empty(E, idx if eids is None else eids.dtype)
    has_eids = eids is not None
    scatter_rows_to_blocks(indptr, indices, eids if has_eids else indices, has_eids, bounds, shift, counts, src, dst,
                           eid)
    return block_rows, block_ptr, src, dst, eid


@njit(parallel=True, cache=True)
def count_hub_edges(indptr, indices, hub_local, counts):
    """``counts[r]``: the slots of row ``r`` whose source is a hub (``hub_local[source] >= 0``)."""
    for r in prange(indptr.size - 1):
        c = 0
        for j in range(indptr[r], indptr[r + 1]):
            if hub_local[indices[j]] >= 0:
                c += 1
        counts[r] = c


@njit(parallel=True, cache=True)
def scatter_hub_edges(indptr, indices, eids, has_eids, hub_local, hub_indptr, rest_indptr, hub_src, hub_eids,
                      rest_indices, rest_eids):
    """Each row's slots in order, the hubs' to ``hub_src`` (as hub numbers) and ``hub_eids``, the others to
    ``rest_indices`` and ``rest_eids``, at the rows' offsets in ``hub_indptr`` and ``rest_indptr``."""
    for r in prange(indptr.size - 1):
        h = hub_indptr[r]
        o = rest_indptr[r]
        for j in range(indptr[r], indptr[r + 1]):
            u = indices[j]
            e = eids[j] if has_eids else j
            k = hub_local[u]
            if k >= 0:
                hub_src[h] = k
                hub_eids[h] = e
                h += 1
            else:
                rest_indices[o] = u
                rest_eids[o] = e
                o += 1


def split_hub_edges(indptr, indices, eids, num_src: int, hubs):
    """A CSC split in two by source: the edges from ``hubs`` (sorted source ids) and the rest.

    Returns ``(hub_indptr, hub_src, hub_eids, rest_indptr, rest_indices, rest_eids)``: two CSCs over the
    same rows, each keeping the input's order within a row; ``hub_src`` holds hub numbers (the position
    in ``hubs``), so that a kernel gathers from the hubs' rows copied together (``x[hubs]``). ``eids``
    None means the slot is the edge id.

    Why: in a skewed graph a few sources carry most edges (Graph500 Kronecker scale 18: the top 8,192 of
    262,144, 63%). Their feature rows fit the L2 cache, so their edges can be summed per destination in
    registers, while the blocked kernel streams the other edges in source order.
    """
    idx = indices.dtype
    rows = indptr.size - 1
    hub_local = np.full(max(num_src, 1), -1, idx)
    hub_local[hubs] = np.arange(hubs.size, dtype=idx)
    counts = np.empty(rows, np.int64)
    count_hub_edges(indptr, indices, hub_local, counts)
    hub_indptr = np.zeros(rows + 1, np.int64)
    np.cumsum(counts, out=hub_indptr[1:])
    rest_indptr = indptr.astype(np.int64) - hub_indptr
    H = int(hub_indptr[-1])
    E = int(indices.size)
    eid_dtype = idx if eids is None else eids.dtype
    hub_src = np.empty(H, idx)
    hub_eids = np.empty(H, eid_dtype)
    rest_indices = np.empty(E - H, idx)
    rest_eids = np.empty(E - H, eid_dtype)
    scatter_hub_edges(indptr, indices, eids if eids is not None else indices, eids is not None, hub_local,
                      hub_indptr, rest_indptr, hub_src, hub_eids, rest_indices, rest_eids)
    return hub_indptr, hub_src, hub_eids, rest_indptr, rest_indices, rest_eids


@njit(parallel=True, cache=True)
def edge_slots(eids, num_edge_ids, slots):
    """``slots[eids[j]] = j``; ids no slot holds get -1 (a graph whose id space exceeds its edges)."""
    for e in prange(num_edge_ids):
        slots[e] = -1
    for j in prange(eids.size):
        slots[eids[j]] = j
    return slots


@njit(parallel=True, cache=True)
def edge_rows_to_blocks(slots, rows, out):
    """``out[slots[e]] = rows[e]`` for every edge id with a slot: edge rows, read in id order, written in
    the blocked kernel's edge order (one write stream per block; the hub edges, when split off, first in
    CSC order), so that the kernel reads them as one stream instead of through the ids, where each block
    fetches nearly every line of narrow rows again."""
    E, D = rows.shape
    if D == 1:  # flat: the common scalar weight per edge
        flat_rows = rows.ravel()
        flat_out = out.ravel()
        for e in prange(E):
            s = slots[e]
            if s >= 0:
                flat_out[s] = flat_rows[e]
        return out
    for e in prange(E):
        s = slots[e]
        if s >= 0:
            for k in range(D):
                out[s, k] = rows[e, k]
    return out
