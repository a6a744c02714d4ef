"""What the CPU and the CUDA packed storages of a DynamicGraph share: the layout of the packed memory array
for a number of elements (docs/design.md, section 'Dynamic graph (GPMA)') and the host-side checks of a
batch of edges. Both drivers (``graphkern._cpu.pma`` and ``graphkern._cuda.pma``) import it; it imports
neither.
"""

from __future__ import annotations

import numpy as np

from . import tuning
from ._validate import as_index_array, check_ids_in_range, type_name

# GPMA's density bounds: leaves up to 0.92 full, the root up to 0.84 (linear in between)
LEAF_UPPER, ROOT_UPPER = 0.92, 0.84


def _fls(x: int) -> int:
    return int(x).bit_length()


def layout(m: int):
    """Capacity, leaf size, height and per-level upper bounds for ``m`` elements: the smallest
    power-of-two capacity whose root bound (after each level's bound is clamped to twice the one below)
    holds them.

    Examples
    --------
    >>> from graphkern._packed_layout import layout
    >>> cap, leaf, height, upper = layout(100)
    >>> cap, leaf, height, upper.tolist()
    (128, 8, 4, [7, 14, 28, 55, 107])
    """
    cap = 4
    while True:
        leaf = 1 << (_fls(_fls(cap)) - 1)
        # every leaf must hold an element after a rebuild (leaf separators are then sorted)
        while cap // leaf > max(m, 1) and leaf < cap:
            leaf <<= 1
        height = _fls(cap // leaf) - 1
        upper = np.empty(height + 1, dtype=np.int64)
        for i in range(height + 1):
            density = ROOT_UPPER + (LEAF_UPPER - ROOT_UPPER) * ((height - i) / height if height else 0.0)
            upper[i] = int(density * (leaf << i))
            if i:
                upper[i] = min(upper[i], 2 * upper[i - 1])
        if upper[height] >= m:
            return cap, leaf, height, upper
        cap <<= 1


def host_batch(name: str, pair, num_nodes: int, free_memory, device: str):
    """``(src, dst)`` int64 host arrays of the batch ``pair`` (empty for None), checked: a pair of equal
    lengths, node ids below ``num_nodes``, and working memory (about ``gpma_batch_bytes_per_edge`` bytes
    an edge, graphkern.tuning) within the free bytes of ``device`` that ``free_memory()`` gives (None:
    unknown, then nothing is refused).

    Examples
    --------
    >>> from graphkern._packed_layout import host_batch
    >>> [a.tolist() for a in host_batch("insert", ([0, 2], [1, 1]), 3, lambda: None, "cpu")]
    [[0, 2], [1, 1]]
    """
    if pair is None:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    if not isinstance(pair, (tuple, list)) or len(pair) != 2:
        raise TypeError(f"argument '{name}': expected a pair (src, dst), found {type_name(pair)}")
    src = as_index_array(f"{name}[0]", pair[0], np.int64)
    dst = as_index_array(f"{name}[1]", pair[1], np.int64)
    check_pair_lengths(name, src, dst)
    check_ids_in_range(f"{name}[0]", src, num_nodes)
    check_ids_in_range(f"{name}[1]", dst, num_nodes)
    # refused before anything is allocated or changed
    need = src.size * tuning.current().gpma_batch_bytes_per_edge
    free_bytes = free_memory() if need else None
    if free_bytes is not None and need > free_bytes:
        raise MemoryError(f"argument '{name}': a batch of {src.size} edges needs about {need / 2**30:.1f} GiB of "
                          f"working memory on {device}, which has {free_bytes / 2**30:.1f} GiB free; split it")
    return src, dst


def check_pair_lengths(name: str, src, dst) -> None:
    """ValueError unless the batch's ``src`` and ``dst`` (host or device arrays) are of one length."""
    if src.size != dst.size:
        raise ValueError(f"argument '{name}': expected src and dst of equal lengths, found {src.size} and "
                         f"{dst.size}")


class PackedShape:
    """What both packed storages derive from their layout (``cap``, ``leaf``, ``height``, ``upper``) and
    counts (``num_nodes`` walls, ``live`` edges, ``tombs`` tombstones): the base of each ``PackedStorage``."""

    @property
    def num_leaves(self) -> int:
        return self.cap // self.leaf

    def root_overflows(self, more: int = 0) -> bool:
        """Whether the occupied slots (walls, live edges, tombstones) and ``more`` pass the root's bound."""
        return self.num_nodes + self.live + self.tombs + more > int(self.upper[self.height])
