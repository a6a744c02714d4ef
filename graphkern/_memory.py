"""Output arrays on transparent huge pages, recycled.

The sparse kernels gather feature rows at random: at scale 18 (262,144 rows) a float32 feature array of
width 16 spans 4,096 pages of 4 KB, more than the TLB holds, so many gathers also pay a page walk. On
2 MB pages the same array is 9 pages, and copy_u_sum with its input on 2 MB pages runs faster than on
4 KB ones, in one call and in a chain of layers (figures in docs/performance.md, section 'CPU: what the
kernels' design choices are worth'; ``GRAPHKERN_HUGE_PAGES=0`` turns huge pages off to compare).
graphkern cannot move a caller's array, but it can put what it returns there, and in a GNN the output
of one layer is the input of the next.

Large outputs (from the knob ``huge_page_min_bytes`` of :mod:`graphkern.tuning` on) are anonymous memory
maps advised ``MADV_HUGEPAGE`` (Linux; honoured when ``/sys/kernel/mm/transparent_hugepage/enabled`` is
``always`` or ``madvise``), aligned to 2 MB; they are ordinary writable NumPy arrays. When the last
array over a map goes, the map is kept in a small pool (the knobs ``pool_maps`` maps, ``pool_bytes`` in
all) for the next output of the same size, instead of being unmapped (:func:`release_pool` unmaps them).
Why: a freshly faulted huge page is only cheap when the memory behind it is warm. On a virtual machine
the guest reports free 2 MB blocks to the host, which drops them, and the next fault on such a block is
paid again page by page by the host, which can make a call on fresh maps far slower than on reused or 4
KB memory.
Smaller arrays, other platforms, or ``GRAPHKERN_HUGE_PAGES=0`` get plain NumPy arrays.
"""

from __future__ import annotations

import ctypes
import mmap
import os
import threading

import numpy as np

from . import tuning

HUGE_PAGE = 2 << 20  # the hardware's huge page on x86-64 Linux

_ADVICE = getattr(mmap, "MADV_HUGEPAGE", None)
_pool: dict[int, list[mmap.mmap]] = {}  # map size -> freed maps of that size
_pool_lock = threading.Lock()


def _enabled() -> bool:
    return _ADVICE is not None and os.environ.get("GRAPHKERN_HUGE_PAGES", "1") != "0"


class _Mapping:
    """The memory of one map, as NumPy sees it (``__array_interface__``); the arrays over it keep it alive,
    and when the last one goes the map goes back to the pool."""

    def __init__(self, region: mmap.mmap, nbytes: int):
        self.region = region
        view = np.frombuffer(region, dtype=np.uint8)
        address = view.ctypes.data
        del view  # a live export would stop the map from ever closing
        self.start = address + (-address) % HUGE_PAGE
        self.__array_interface__ = {"shape": (nbytes,), "typestr": "|u1", "data": (self.start, False),
                                    "version": 3}

    def __del__(self):
        _release(self.region)


def _release(region: mmap.mmap) -> None:
    """Keep ``region`` for the next output of its size while the pool has room; else unmap it."""
    with _pool_lock:
        held = sum(len(maps) for maps in _pool.values())
        held_bytes = sum(size * len(maps) for size, maps in _pool.items())
        knobs = tuning.current()
        if held < knobs.pool_maps and held_bytes + len(region) <= knobs.pool_bytes:
            _pool.setdefault(len(region), []).append(region)
            return
    region.close()


def release_pool() -> None:
    """Unmap every pooled map now (the pool refills as later outputs are freed)."""
    with _pool_lock:
        maps = [region for regions in _pool.values() for region in regions]
        _pool.clear()
    for region in maps:
        region.close()


def _acquire(size: int):
    """A pooled map of ``size`` bytes (its old contents), or None."""
    with _pool_lock:
        maps = _pool.get(size)
        return maps.pop() if maps else None


def _mapped(nbytes: int, zero: bool):
    """A huge-page advised buffer of ``nbytes`` starting on a 2 MB boundary (zero-filled if ``zero``), or
    None."""
    size = -(-(nbytes + HUGE_PAGE) // HUGE_PAGE) * HUGE_PAGE
    region = _acquire(size)
    reused = region is not None
    if not reused:
        try:
            region = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
            region.madvise(_ADVICE)
        except (OSError, ValueError):
            return None
    mapping = _Mapping(region, nbytes)
    if reused and zero:
        ctypes.memset(mapping.start, 0, nbytes)  # a fresh map is zero already
    return np.asarray(mapping)


def _huge(shape, dtype, zero: bool):
    """An array on huge pages (zero-filled if ``zero``), or None when it is small or huge pages are off or
    unavailable."""
    shape = tuple(int(s) for s in np.atleast_1d(shape))
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < tuning.current().huge_page_min_bytes or not _enabled():
        return None
    buf = _mapped(nbytes, zero)
    return None if buf is None else buf.view(dtype).reshape(shape)


def empty(shape, dtype) -> np.ndarray:
    """``np.empty(shape, dtype)``, on huge pages when large."""
    out = _huge(shape, dtype, zero=False)
    return np.empty(shape, dtype) if out is None else out


def zeros(shape, dtype) -> np.ndarray:
    """``np.zeros(shape, dtype)``, on huge pages when large."""
    out = _huge(shape, dtype, zero=True)
    return np.zeros(shape, dtype) if out is None else out


def full(shape, value, dtype) -> np.ndarray:
    """``np.full(shape, value, dtype)``, on huge pages when large."""
    out = empty(shape, dtype)
    out.fill(value)
    return out
