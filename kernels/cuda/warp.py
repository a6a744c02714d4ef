"""Reductions across the lanes of a thread group (a power of two of at most 32 lanes in one warp).

On a GPU they are butterfly shuffles: for ``off`` in ``width/2, width/4, ..., 1`` every lane combines its
value with that of lane ``lane ^ off`` (``shfl_xor_sync``), in the value's own type (float32 adds stay
float32). ``group_sum`` adds; ``group_max`` takes the partner's value only when it is greater, so a NaN
never wins a comparison and lanes of a group holding a NaN may end with different values (each lane's
result depends on the path the butterfly takes to it). Sums end equal on every lane: each step adds the
same two values on both partners.

numba-cuda's simulator has no warp primitives. There each lane publishes its value to its group's slots,
the group meets at a barrier of exactly its lanes (the simulator's stand-in for ``syncwarp``), and every
lane replays the same butterfly on the published values with NumPy in the value's dtype, keeping its own
lane's result: the simulator returns, bit for bit and lane by lane, what the hardware returns.

Preconditions (the hardware's, checked by the simulator): the value is an int32, int64, float32 or
float64 (what ``shfl_xor_sync`` moves); ``width`` is 1, 2, 4, 8, 16 or 32; and every lane of the warp
exists and reaches the call (the mask names all 32 lanes), so a kernel calling these needs a block size
that is a multiple of 32 (:data:`.launch.WARP`) and warp-uniform calls (lanes without work pass the
reducer's identity).
"""

from __future__ import annotations

from numba import cuda

from .launch import SIMULATED, WARP

FULL_MASK = 0xFFFFFFFF
WIDTHS = (1, 2, 4, 8, 16, 32)

if SIMULATED:
    import threading

    import numpy as np

    # what shfl_xor_sync can move (numba-cuda types anything else as an error)
    _SHUFFLED = tuple(np.dtype(t) for t in (np.int32, np.int64, np.float32, np.float64))

    class _LaneBarrier:
        """A reusable barrier for the lanes of one group that gives up when the simulator aborts the
        launch (another thread raised): ``threading.Barrier`` would keep the lanes waiting out its
        timeout."""

        def __init__(self, parties):
            self.parties = parties
            self.arrived = 0
            self.generation = 0
            self.cond = threading.Condition()

        def wait(self, me):
            with self.cond:
                generation = self.generation
                self.arrived += 1
                if self.arrived == self.parties:
                    self.arrived = 0
                    self.generation += 1
                    self.cond.notify_all()
                    return
                while generation == self.generation:
                    # woken by notify_all; the timeout only bounds how late an abort is noticed
                    self.cond.wait(0.05)
                    if me.abort:
                        raise RuntimeError("the launch was aborted while a lane group waited at its barrier")

    class _Group:
        """One group's barrier and two sets of slots used alternately, so a lane may publish its next
        value while a slower lane of the group still reads the previous call's slots (it cannot get two
        calls ahead: the barrier of the call in between waits for the slow lane)."""

        def __init__(self, width):
            self.barrier = _LaneBarrier(width)
            self.slots = ([None] * width, [None] * width)
            self.calls = [0] * width

    _groups_lock = threading.Lock()

    def _group(name, val, width):
        """The calling lane's group (made once per launch, under a lock: lanes of a group race to make
        it), its lane index in the group and the dtype the hardware would shuffle ``val`` in."""
        me = threading.current_thread()
        width = int(width)
        if width not in WIDTHS:
            raise ValueError(f"{name}: width must be one of {WIDTHS}, found {width}")
        manager = me._manager
        block = int(np.prod(manager._block_dim))
        if block % WARP:
            raise ValueError(f"{name}: needs whole warps (the shuffle mask names all {WARP} lanes), but the "
                             f"block has {block} threads, not a multiple of {WARP}")
        dtype = np.asarray(val).dtype
        if dtype not in _SHUFFLED:
            raise TypeError(f"{name}: shfl_xor_sync moves int32, int64, float32 or float64 values, found {dtype}")
        # groups live on the launch's block manager, so a launch never meets another launch's lanes
        key = (tuple(me.blockIdx), me.thread_id // width, width)
        with _groups_lock:
            groups = getattr(manager, "_graphkern_groups", None)
            if groups is None:
                groups = manager._graphkern_groups = {}
            group = groups.get(key)
            if group is None:
                group = groups[key] = _Group(width)
        return group, me.thread_id % width, dtype, me

    def _butterfly(name, val, width, combine):
        group, lane, dtype, me = _group(name, val, width)
        slots = group.slots[group.calls[lane] % 2]
        group.calls[lane] += 1
        slots[lane] = val
        group.barrier.wait(me)
        vals = np.array(slots, dtype=dtype)
        index = np.arange(width)
        off = width // 2
        with np.errstate(all="ignore"):  # int sums wrap as on the hardware; NaN compares are the point
            while off > 0:
                vals = combine(vals, vals[index ^ off])
                off //= 2
        return vals[lane]

    def _add(vals, other):
        return vals + other

    def _max(vals, other):
        return np.where(other > vals, other, vals)

    @cuda.jit(device=True)
    def group_sum(val, width):
        return _butterfly("group_sum", val, width, _add)

    @cuda.jit(device=True)
    def group_max(val, width):
        return _butterfly("group_max", val, width, _max)

else:

    @cuda.jit(device=True)
    def group_sum(val, width):
        off = width // 2
        while off > 0:
            val += cuda.shfl_xor_sync(FULL_MASK, val, off)
            off //= 2
        return val

    @cuda.jit(device=True)
    def group_max(val, width):
        off = width // 2
        while off > 0:
            other = cuda.shfl_xor_sync(FULL_MASK, val, off)
            if other > val:
                val = other
            off //= 2
        return val
