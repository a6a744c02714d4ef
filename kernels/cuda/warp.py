"""Reductions across the lanes of a thread group (a power of two of at most 32 lanes in one warp).

On a GPU they are butterfly shuffles (``shfl_xor_sync``; ``scratch`` is unused). numba-cuda's
simulator has no warp primitives, so there each lane writes its value to a slot of memory its group
shares, the group meets at a barrier of its own lanes (the simulator's stand-in for ``syncwarp``), and
every lane reads the group's slots in lane order. Either way every lane of a group ends with the
group's result.

Callers keep the calls warp-uniform: all 32 lanes of a warp reach each call (lanes without work pass
the reducer's identity), because ``shfl_xor_sync`` names the full warp in its mask.
"""

from __future__ import annotations

from numba import cuda

from .launch import SIMULATED

FULL_MASK = 0xFFFFFFFF

if SIMULATED:
    import threading

    import numpy as np

    _groups: dict = {}
    _groups_lock = threading.Lock()

    def _group(width):
        """The calling thread's group: a barrier of its lanes (the simulator's stand-in for ``syncwarp``)
        and the group's slots of scratch memory. They are made under a lock: the simulator's own
        ``cuda.shared.array`` creates a block's array on first use without one, so two threads racing
        there can end up with different arrays."""
        me = threading.current_thread()
        key = (tuple(me.blockIdx), me.thread_id // width, width)
        with _groups_lock:
            group = _groups.get(key)
            if group is None:
                group = _groups[key] = (threading.Barrier(width, timeout=300), np.zeros(width, np.float64))
        return group, me.thread_id % width

    @cuda.jit(device=True)
    def group_sum(val, scratch, width):
        (barrier, slots), lane = _group(width)
        slots[lane] = val
        barrier.wait()
        total = slots[0]
        for i in range(1, width):
            total += slots[i]
        barrier.wait()  # nobody overwrites a slot before every lane has read them all
        return type(val)(total)

    @cuda.jit(device=True)
    def group_max(val, scratch, width):
        (barrier, slots), lane = _group(width)
        slots[lane] = val
        barrier.wait()
        best = slots[0]
        for i in range(1, width):
            if slots[i] > best:
                best = slots[i]
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
