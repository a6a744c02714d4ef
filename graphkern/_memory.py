"""Output arrays on transparent huge pages.

The sparse kernels gather feature rows at random: at scale 18 (262,144 rows) a float32 feature array of
width 16 spans 4,096 pages of 4 KB, more than the TLB holds, so many gathers also pay a page walk. On
2 MB pages the same array is 9 pages. Measured on the scale-18 Kronecker graph, 2 threads, copy_u_sum
with its input on 2 MB pages against 4 KB ones: 17.8 vs 22.5 ms at F = 16, 46 vs 59 ms at F = 64.
graphkern cannot move a caller's array, but it can put what it returns there, and in a GNN the output
of one layer is the input of the next.

Large outputs (:data:`MIN_BYTES` and up) are anonymous memory maps advised ``MADV_HUGEPAGE`` (Linux;
honoured when ``/sys/kernel/mm/transparent_hugepage/enabled`` is ``always`` or ``madvise``), aligned to
2 MB; they are ordinary writable NumPy arrays whose memory is returned when the last view goes. Smaller
arrays, other platforms, or ``GRAPHKERN_HUGE_PAGES=0`` get plain NumPy arrays.
"""

from __future__ import annotations

import mmap
import os

import numpy as np

HUGE_PAGE = 2 << 20
# Below this an output spans few pages, and NumPy's allocator reuses freed memory without new faults.
MIN_BYTES = 4 << 20

_ADVICE = getattr(mmap, "MADV_HUGEPAGE", None)


def _enabled() -> bool:
    return _ADVICE is not None and os.environ.get("GRAPHKERN_HUGE_PAGES", "1") != "0"


def _mapped(nbytes: int):
    """A zero-filled, huge-page advised buffer of ``nbytes`` starting on a 2 MB boundary, or None."""
    try:
        region = mmap.mmap(-1, nbytes + HUGE_PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
        region.madvise(_ADVICE)
    except (OSError, ValueError):
        return None
    raw = np.frombuffer(region, dtype=np.uint8)  # the array keeps the map alive; unmapped with it
    start = (-raw.ctypes.data) % HUGE_PAGE
    return raw[start:start + nbytes]


def _huge(shape, dtype):
    """A zero-filled array on huge pages, or None when it is small or huge pages are off or unavailable."""
    shape = tuple(int(s) for s in np.atleast_1d(shape))
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if nbytes < MIN_BYTES or not _enabled():
        return None
    buf = _mapped(nbytes)
    return None if buf is None else buf.view(dtype).reshape(shape)


def empty(shape, dtype) -> np.ndarray:
    """``np.empty(shape, dtype)``, on huge pages when large (then zero-filled, as a fresh map is)."""
    out = _huge(shape, dtype)
    return np.empty(shape, dtype) if out is None else out


def zeros(shape, dtype) -> np.ndarray:
    """``np.zeros(shape, dtype)``, on huge pages when large."""
    out = _huge(shape, dtype)
    return np.zeros(shape, dtype) if out is None else out


def full(shape, value, dtype) -> np.ndarray:
    """``np.full(shape, value, dtype)``, on huge pages when large."""
    out = empty(shape, dtype)
    out.fill(value)
    return out
