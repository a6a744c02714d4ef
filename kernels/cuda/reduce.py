"""The small reductions that validate device input (graphkern._cuda's checks): the minimum and maximum of
an array, the first position outside a range, the first descent of a row pointer.

Each is two launches. In the first, every block reduces its grid-stride share in shared memory (a tree,
any block size up to ``REDUCE_THREADS``) and thread 0 writes the block's result to its own slot of a
partials array; in the second, one block reduces the partials the same way and writes the answer. No
atomics: validation meets whatever input a caller passes, and an input whose every id is out of range
would otherwise send one atomic per block to the same address. Only the answer (one or two scalars)
comes back to the host.

CUDA-only: the CPU backend validates host arrays with NumPy (graphkern._validate).
"""

from __future__ import annotations

import numpy as np
from numba import cuda

from .launch import grid_1d

REDUCE_THREADS = 256
_I64_MAX = np.int64(np.iinfo(np.int64).max)
_I64_MIN = np.int64(np.iinfo(np.int64).min)


@cuda.jit(device=True)
def _block_reduce(lo_s, hi_s, lo, hi):
    """Block-wide ``(min of lo, max of hi)`` by a tree in shared memory, for any block size up to
    ``REDUCE_THREADS``; the result is valid in thread 0. Every thread of the block must call it."""
    t = cuda.threadIdx.x
    nt = cuda.blockDim.x
    lo_s[t] = lo
    hi_s[t] = hi
    cuda.syncthreads()
    s = 1
    while s < nt:
        s *= 2
    s //= 2
    while s > 0:
        if t < s and t + s < nt:
            lo_s[t] = min(lo_s[t], lo_s[t + s])
            hi_s[t] = max(hi_s[t], hi_s[t + s])
        cuda.syncthreads()
        s //= 2
    return lo_s[0], hi_s[0]


@cuda.jit
def _min_max(values, partial):
    """``partial[:, block]``: the block's ``(min, max)`` (``(INT64_MAX, INT64_MIN)`` for no items)."""
    lo_s = cuda.shared.array(REDUCE_THREADS, np.int64)
    hi_s = cuda.shared.array(REDUCE_THREADS, np.int64)
    lo = _I64_MAX
    hi = _I64_MIN
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        v = values[i]
        lo = min(lo, v)
        hi = max(hi, v)
    lo, hi = _block_reduce(lo_s, hi_s, lo, hi)
    if cuda.threadIdx.x == 0:
        partial[0, cuda.blockIdx.x] = lo
        partial[1, cuda.blockIdx.x] = hi


@cuda.jit
def _first_where_outside(values, low, high, partial):
    """``partial[0, block]``: the block's first position with a value outside ``[low, high)``."""
    lo_s = cuda.shared.array(REDUCE_THREADS, np.int64)
    hi_s = cuda.shared.array(REDUCE_THREADS, np.int64)
    first = _I64_MAX
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        if values[i] < low or values[i] >= high:
            first = i  # a thread's positions increase, so its first hit is its smallest
            break
    first, _ = _block_reduce(lo_s, hi_s, first, first)
    if cuda.threadIdx.x == 0:
        partial[0, cuda.blockIdx.x] = first


@cuda.jit
def _first_descent(indptr, partial):
    """``partial[0, block]``: the block's first ``i`` with ``indptr[i] > indptr[i + 1]``."""
    lo_s = cuda.shared.array(REDUCE_THREADS, np.int64)
    hi_s = cuda.shared.array(REDUCE_THREADS, np.int64)
    first = _I64_MAX
    for i in range(cuda.grid(1), indptr.size - 1, cuda.gridsize(1)):
        if indptr[i] > indptr[i + 1]:
            first = i
            break
    first, _ = _block_reduce(lo_s, hi_s, first, first)
    if cuda.threadIdx.x == 0:
        partial[0, cuda.blockIdx.x] = first


@cuda.jit
def _finish(partial, result):
    """One block: ``result[0]`` the minimum of ``partial[0]``, ``result[1]`` the maximum of the last row
    (the same row when ``partial`` has one)."""
    lo_s = cuda.shared.array(REDUCE_THREADS, np.int64)
    hi_s = cuda.shared.array(REDUCE_THREADS, np.int64)
    last = partial.shape[0] - 1
    lo = _I64_MAX
    hi = _I64_MIN
    for b in range(cuda.threadIdx.x, partial.shape[1], cuda.blockDim.x):
        lo = min(lo, partial[0, b])
        hi = max(hi, partial[last, b])
    lo, hi = _block_reduce(lo_s, hi_s, lo, hi)
    if cuda.threadIdx.x == 0:
        result[0] = lo
        result[1] = hi


def _reduce_grid(items: int) -> tuple[int, int]:
    """The reductions' launch: their shared arrays hold REDUCE_THREADS slots, so no block is wider, whatever
    shape :func:`.launch.launch_shape` asks for."""
    blocks, threads = grid_1d(items, REDUCE_THREADS)
    return blocks, min(threads, REDUCE_THREADS)


def _reduce(kernel, rows: int, items: int, *args, launch=None) -> tuple[int, int]:
    """``kernel[launch](*args, partial)`` then :func:`_finish` over the partials: ``(min of row 0, max of
    the last row)``. ``launch`` overrides the first launch's shape (tests)."""
    blocks, threads = launch or _reduce_grid(items)
    threads = min(threads, REDUCE_THREADS)
    partial = cuda.device_array((rows, blocks), np.int64)
    kernel[blocks, threads](*args, partial)
    result = cuda.device_array(2, np.int64)
    _finish[1, _reduce_grid(blocks)[1]](partial, result)
    lo, hi = result.copy_to_host()
    return int(lo), int(hi)


def min_max(values, launch=None) -> tuple[int, int]:
    """``(min, max)`` of a non-empty integer device array."""
    return _reduce(_min_max, 2, values.size, values, launch=launch)


def first_outside(values, low: int, high: int, launch=None) -> int:
    """The first position whose value is outside ``[low, high)``, or -1."""
    if values.size == 0:
        return -1
    pos, _ = _reduce(_first_where_outside, 1, values.size, values, low, high, launch=launch)
    return -1 if pos == _I64_MAX else pos


def first_descent(indptr, launch=None) -> int:
    """The first ``i`` with ``indptr[i] > indptr[i+1]``, or -1."""
    if indptr.size < 2:
        return -1
    pos, _ = _reduce(_first_descent, 1, indptr.size, indptr, launch=launch)
    return -1 if pos == _I64_MAX else pos
