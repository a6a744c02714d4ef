"""Reductions across the lanes of a thread group (a power of two of at most 32 lanes in one warp).

On a GPU they are butterfly shuffles (``shfl_xor_sync``). numba-cuda's simulator has no warp
primitives, so there each lane writes its value to a shared-memory scratch of one slot per thread, the
group meets at a barrier of its own lanes (the simulator's stand-in for ``syncwarp``), and every lane
reads the group's slots in lane order. Either way every lane of a group ends with the group's result.

Callers keep the calls warp-uniform: all 32 lanes of a warp reach each call (lanes without work pass
the reducer's identity), because ``shfl_xor_sync`` names the full warp in its mask.
"""

from __future__ import annotations

from numba import cuda

from .launch import SIMULATED

FULL_MASK = 0xFFFFFFFF

if SIMULATED:
    import threading

    _barriers: dict = {}
    _barriers_lock = threading.Lock()

    def _group_barrier(width):
        """A barrier for the calling thread's group: the simulator's stand-in for ``syncwarp`` (a full
        ``syncthreads`` would make the simulator poll every thread of the block at each step)."""
        me = threading.current_thread()
        key = (tuple(me.blockIdx), me.thread_id // width, width)
        with _barriers_lock:
            barrier = _barriers.get(key)
            if barrier is None:
                barrier = _barriers[key] = threading.Barrier(width, timeout=120)
        return barrier

    @cuda.jit(device=True)
    def group_sum(val, scratch, width):
        tid = cuda.threadIdx.x
        base = tid - tid % width
        barrier = _group_barrier(width)
        scratch[tid] = val
        barrier.wait()
        total = scratch[base]
        for i in range(base + 1, base + width):
            total += scratch[i]
        barrier.wait()  # nobody overwrites the scratch before every lane has read it
        return type(val)(total)

    @cuda.jit(device=True)
    def group_max(val, scratch, width):
        tid = cuda.threadIdx.x
        base = tid - tid % width
        barrier = _group_barrier(width)
        scratch[tid] = val
        barrier.wait()
        best = scratch[base]
        for i in range(base + 1, base + width):
            if scratch[i] > best:
                best = scratch[i]
        barrier.wait()
        return type(val)(best)

else:

    @cuda.jit(device=True)
    def group_sum(val, scratch, width):
        off = width // 2
        while off > 0:
            val += cuda.shfl_xor_sync(FULL_MASK, val, off)
            off //= 2
        return val

    @cuda.jit(device=True)
    def group_max(val, scratch, width):
        off = width // 2
        while off > 0:
            other = cuda.shfl_xor_sync(FULL_MASK, val, off)
            if other > val:
                val = other
            off //= 2
        return val
