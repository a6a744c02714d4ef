"""What the sparse kernels derive from a graph and keep on it (``g._cache``), and the machine's L2 size.

Row bounds of the row-parallel kernels (per format and thread count), the destination blocks of the
blocked paths with their parallel groups, the hub sources of the hub split, and where each edge sits in
the blocked kernels' edge order. Blocks, hubs and slots are kept least recently used first, a few per
graph (:func:`_cache_recent`); each is as large as the graph's CSC.
"""

from __future__ import annotations

import numpy as np

from . import tuning
from .kernels.cpu import blocks as _blocks_cpu
from .kernels.cpu.partition import nnz_balanced_row_bounds

# the per-core L2 size in bytes as the system gives it, read on first use (:func:`cache_bytes`)
_probed_l2_bytes = None


def packed_row_bounds(dg) -> np.ndarray:
    """Row bounds of the packed kernels over a DynamicGraph's rows (sources), by live slots and walls."""
    import numba

    return nnz_balanced_row_bounds(dg._row_off, max(1, numba.get_num_threads() * tuning.current().parts_per_thread))


def row_bounds(g, fmt: str, indptr: np.ndarray) -> np.ndarray:
    """Row bounds of the row-parallel kernels over format ``fmt`` (whose ``indptr`` is given), cached per
    format, thread count and parts per thread (the knob ``parts_per_thread``)."""
    import numba

    per_thread = tuning.current().parts_per_thread
    key = ("parts", fmt, numba.get_num_threads(), per_thread)
    parts = g._cache.get(key)
    if parts is None:
        parts = nnz_balanced_row_bounds(indptr, max(1, numba.get_num_threads() * per_thread))
        g._cache[key] = parts
    return parts


def cache_bytes() -> int:
    """Bytes of the per-core L2 cache to plan for: the knob ``l2_cache_bytes`` when it is set (above 0),
    else this machine's, read from the system once (1 MB when the system does not say)."""
    global _probed_l2_bytes
    override = tuning.current().l2_cache_bytes
    if override > 0:
        return override
    if _probed_l2_bytes is None:
        size = 1 << 20
        try:
            with open("/sys/devices/system/cpu/cpu0/cache/index2/size") as fh:
                text = fh.read().strip().upper()
            scale = {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
            size = int(text.rstrip("KM")) * scale
        except (OSError, ValueError):
            pass
        _probed_l2_bytes = size
    return _probed_l2_bytes


def block_height(out_row_bytes: int) -> int:
    """Destination rows of one block: a power of two, at most half the L2 cache of output rows (each a
    whole number of cache lines)."""
    line = 64
    row = max(line, -(-int(out_row_bytes) // line) * line)
    return 1 << _blocks_cpu.block_shift(max(8, (cache_bytes() // 2) // row))


def dst_blocks(g, base: str, rows_per_block: int, hub_rows: int = 0):
    """The destination blocks of ``g`` (:func:`kernels.cpu.blocks.destination_blocks`) from the ``base``
    format, with their parallel groups, cached on the graph.

    Returns ``(bounds, block_ptr, groups, src, dst, eid, hubs)``. With ``hub_rows`` (the CSC only), the
    edges from the hubs of :func:`hub_sources` are split off first
    (:func:`kernels.cpu.blocks.split_hub_edges`) and ``hubs`` is ``(hub_ids, hub_indptr, hub_src,
    hub_eids)``; the blocks hold the other edges, and the groups balance both. Else ``hubs`` is None.
    """
    import numba

    threads = numba.get_num_threads()
    per_thread = tuning.current().parts_per_thread
    split = bool(hub_rows)
    key = ("dst_blocks", base, split, rows_per_block, hub_rows, threads, per_thread)
    blocks = _cached_recent(g, key)
    if blocks is None:
        indptr, indices, eids = g._raw(base)
        eids = None if g.eids_are_identity(base) else eids
        hubs = None
        parts = max(1, threads * per_thread)
        if split:
            hub_ids, _ = hub_sources(g, hub_rows)
            hub_indptr, hub_src, hub_eids, indptr, indices, eids = _blocks_cpu.split_hub_edges(
                indptr, indices, eids, g.num_src, hub_ids)
            hubs = (hub_ids, hub_indptr, hub_src, hub_eids)
        bounds, block_ptr, src, dst, eid = _blocks_cpu.destination_blocks(
            indptr, indices, eids, g.num_src, g.num_dst, rows_per_block, by_destination=base == "csc")
        if split:  # a block's work: its own edges and its rows' hub edges
            groups = nnz_balanced_row_bounds(block_ptr + hubs[1][bounds], parts)
        else:
            groups = nnz_balanced_row_bounds(block_ptr, parts)
        blocks = (bounds, block_ptr, groups, src, dst, eid, hubs)
        _cache_recent(g, ("dst_blocks", base, split), key, blocks)
    return blocks


def _cached_recent(g, key):
    """The graph's cached entry ``key`` (None if absent), marked as the most recently used."""
    found = g._cache.pop(key, None)
    if found is not None:
        g._cache[key] = found
    return found


def _cache_recent(g, prefix: tuple, key, value) -> None:
    """Cache ``value`` at ``key``, dropping the least recently used entries whose key starts with
    ``prefix`` beyond the knob ``block_sets_kept`` (the cache keeps insertion order; :func:`_cached_recent`
    moves hits last). The keys are listed from a copy: another thread may add one meanwhile."""
    keep = max(1, tuning.current().block_sets_kept)
    others = [k for k in list(g._cache) if k[:len(prefix)] == prefix and k != key]
    for stale in others[:max(0, len(others) - (keep - 1))]:
        g._cache.pop(stale, None)
    g._cache[key] = value


def hub_capacity(row_bytes: int) -> int:
    """How many hub rows of ``row_bytes`` fit the hubs' share of the L2 cache (the knob ``hub_l2_share``;
    the split itself runs when they carry enough of the edges: graphkern._sparse_plan)."""
    return int(cache_bytes() * tuning.current().hub_l2_share) // max(1, int(row_bytes))


def hub_sources(g, hub_rows: int, remember: bool = True):
    """The at most ``hub_rows`` sources of highest out-degree (ties to the lower id; sources without
    edges left out), sorted, and the share of the edges they carry; cached on the graph when ``remember``
    (a plan only reads: ``remember=False``)."""
    key = ("spmm_hubs", hub_rows)
    found = _cached_recent(g, key) if remember else g._cache.get(key)
    if found is None:
        degrees = g.out_degrees()
        count = min(max(int(hub_rows), 0), g.num_src)
        top = np.argsort(-degrees.astype(np.int64), kind="stable")[:count]
        hub_ids = np.sort(top[degrees[top] > 0]).astype(g.idtype)
        share = float(degrees[hub_ids].sum(dtype=np.int64)) / max(g.num_edges, 1)
        found = (hub_ids, share)
        if remember:
            _cache_recent(g, ("spmm_hubs",), key, found)
    return found


def block_slots(g, base: str, rows_per_block: int, eid: np.ndarray, hubs=None, hub_rows: int = 0) -> np.ndarray:
    """Where each edge id sits in the edge order of the blocked kernel over :func:`dst_blocks` (-1 for
    unused ids), cached: the hub edges first when ``hubs``, then the blocks' edges."""
    split = hubs is not None
    key = ("dst_block_slots", base, split, rows_per_block, hub_rows)
    slots = _cached_recent(g, key)
    if slots is None:
        order = np.concatenate([hubs[3], eid]) if split else eid
        slots = _blocks_cpu.edge_slots(order, g.num_edge_ids, np.empty(g.num_edge_ids, eid.dtype))  # slots < E fit
        _cache_recent(g, ("dst_block_slots", base, split), key, slots)
    return slots
