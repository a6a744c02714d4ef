"""Launch shapes for the CUDA kernels, and whether they run in numba-cuda's simulator.

Every kernel walks its items with a grid-stride loop, so any grid is correct. On a GPU the grid covers
the work (capped at a few waves of the device); in the simulator, where each CUDA thread is a Python
thread, one block does everything, which keeps the simulated tests fast.
"""

from __future__ import annotations

from numba.core import config

# numba decides: NUMBA_ENABLE_CUDASIM is read as an integer, any non-zero value turns the simulator on
SIMULATED = bool(config.ENABLE_CUDASIM)
WARP = 32
# threads per block; kernels that use a shared scratch of one slot per thread size it by BLOCK
BLOCK = 128
_SIM_THREADS = 64
_MAX_BLOCKS = 65_535


def grid_1d(items: int, block: int = BLOCK) -> tuple[int, int]:
    """``(blocks, threads)`` for one thread per item."""
    if SIMULATED:
        return 1, min(_SIM_THREADS, block)
    return max(1, min(_MAX_BLOCKS, -(-int(items) // block))), block


def grid_warps(groups: int, block: int = BLOCK) -> tuple[int, int]:
    """``(blocks, threads)`` for one warp per group (a row, an edge block, ...)."""
    if SIMULATED:
        return 1, min(_SIM_THREADS, block)
    per_block = block // WARP
    return max(1, min(_MAX_BLOCKS, -(-int(groups) // per_block))), block


def grid_blocks(groups: int, block: int = BLOCK) -> tuple[int, int]:
    """``(blocks, threads)`` for one block per group (hub rows)."""
    if SIMULATED:
        return 1, min(_SIM_THREADS, block)
    return max(1, min(_MAX_BLOCKS, int(groups))), block
