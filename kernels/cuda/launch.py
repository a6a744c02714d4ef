"""Launch shapes for the CUDA kernels, and whether they run in numba-cuda's simulator.

Every kernel walks its items with a grid-stride loop, so any grid is correct within these rules:

* :func:`grid_1d` kernels (a thread per item) take any shape: any number of blocks, any block size from
  one thread up.
* :func:`grid_warps` kernels (a warp per row or per group of edges) and :func:`grid_blocks` kernels (a
  block per hub row) need whole warps: a block size that is a multiple of :data:`WARP`, because their
  lanes meet in warp shuffles whose mask names all 32 lanes (:mod:`.warp`) and they number warps by
  ``thread // WARP``; and no more threads than the kernel's own block constant (:data:`BLOCK` for most,
  the hub kernels' ``HUB_BLOCK``), the size of their per-block shared scratch.

The shape is only a performance choice. On a GPU the grid covers the work (capped at ``_MAX_BLOCKS``); in
the simulator, where each CUDA thread is a Python thread, one block does everything, which keeps the
simulated tests fast. No helper returns an empty grid: at least one block of at least one thread, so an
empty input is a launch that finds no work, never an invalid launch.

:func:`launch_shape` overrides the shape for the code under it (the tests run the public API on odd
shapes with it); each helper adjusts the requested shape to its rules.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

from numba.core import config

# numba decides: NUMBA_ENABLE_CUDASIM is read as an integer, any non-zero value turns the simulator on
SIMULATED = bool(config.ENABLE_CUDASIM)
WARP = 32
# threads per block; kernels that use a shared scratch of one slot per thread size it by BLOCK
BLOCK = 128
_SIM_THREADS = 64
_MAX_BLOCKS = 65_535

_override: contextvars.ContextVar[tuple[int, int] | None] = contextvars.ContextVar("graphkern_launch_shape",
                                                                                   default=None)


@contextlib.contextmanager
def launch_shape(blocks: int, threads: int) -> Iterator[tuple[int, int]]:
    """Launch every kernel under the block with about ``blocks`` blocks of ``threads`` threads.

    :func:`grid_1d` uses the shape as given; :func:`grid_warps` and :func:`grid_blocks` round ``threads``
    up to a whole number of warps and cap it at :data:`BLOCK` (their rules, in the module docstring).
    Meant for tests: results must not depend on the shape.

    Parameters
    ----------
    blocks : int
        Blocks in the grid, at least 1.
    threads : int
        Threads per block, at least 1.

    Yields
    ------
    tuple of int
        ``(blocks, threads)`` as given.
    """
    blocks, threads = int(blocks), int(threads)
    if blocks < 1 or threads < 1:
        raise ValueError(f"a launch needs at least one block of one thread, found ({blocks}, {threads})")
    token = _override.set((blocks, threads))
    try:
        yield blocks, threads
    finally:
        _override.reset(token)


def _whole_warps(blocks: int, threads: int) -> tuple[int, int]:
    return blocks, min(BLOCK, -(-threads // WARP) * WARP)


def grid_1d(items: int, block: int = BLOCK) -> tuple[int, int]:
    """``(blocks, threads)`` for one thread per item."""
    shape = _override.get()
    if shape is not None:
        return shape
    if SIMULATED:
        return 1, min(_SIM_THREADS, block)
    return max(1, min(_MAX_BLOCKS, -(-int(items) // block))), block


def grid_warps(groups: int, block: int = BLOCK) -> tuple[int, int]:
    """``(blocks, threads)`` for one warp per group (a row, an edge block, ...); whole warps."""
    shape = _override.get()
    if shape is not None:
        return _whole_warps(*shape)
    if SIMULATED:
        return 1, min(_SIM_THREADS, block)
    per_block = block // WARP
    return max(1, min(_MAX_BLOCKS, -(-int(groups) // per_block))), block


def grid_blocks(groups: int, block: int = BLOCK) -> tuple[int, int]:
    """``(blocks, threads)`` for one block per group (hub rows); whole warps."""
    shape = _override.get()
    if shape is not None:
        return _whole_warps(*shape)
    if SIMULATED:
        return 1, min(_SIM_THREADS, block)
    return max(1, min(_MAX_BLOCKS, int(groups))), block
