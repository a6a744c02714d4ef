"""tests/cuda run under ``NUMBA_ENABLE_CUDASIM=1`` in their own process (tools/run_tests.py sets it), or
unchanged on a real GPU (``PYTHONPATH=tools/from_checkout python -m pytest tests/cuda`` from a checkout).

The simulator runs every CUDA thread as a Python thread, so the cases here are the graph-case registry
cut to simulator size (a few hundred edges, hubs of a few dozen in-edges with a lowered hub threshold).
Every CUDA result is compared with the CPU backend on the same input and with the NumPy references.
"""

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # graph_cases, reference

from numba.core import config as numba_config

SIMULATED = bool(numba_config.ENABLE_CUDASIM)


def _gpu_usable() -> bool:
    from numba import cuda

    try:
        return bool(cuda.is_available())
    except Exception:  # noqa: BLE001 - a broken driver means no GPU here
        return False


if not SIMULATED and not _gpu_usable():
    pytest.skip("tests/cuda need NUMBA_ENABLE_CUDASIM=1 (tools/run_tests.py sets it) or a usable GPU",
                allow_module_level=True)

# The simulator's block manager polls its threads while holding the GIL, and the threads of a block take
# turns at every barrier: how often Python switches threads sets the pace. test_sort_and_graph.py, one run
# after another on the 2-core machine: 45 s of wall time at a 20 us interval, 25 s at 1 ms, 22 s at 0.5 ms.
# Subprocesses that run the simulator (tests/cuda/test_gpu_check.py) start with SUBPROCESS_SETUP below.
SWITCH_INTERVAL = 5e-4

if SIMULATED:
    sys.setswitchinterval(SWITCH_INTERVAL)


def _lock_simulated_shared_arrays():
    """numba-cuda 0.30's simulator makes a block's ``cuda.shared.array`` on first use with a check-then-set
    on a dict and no lock, so two threads of a block can get different arrays (seen here as a hub row's
    partial sums read back as zeros). The same lookup (by the caller's file and line), under a lock; the
    key is read from the caller's frame, not from a whole extracted stack (every simulated thread of a
    block asks for every shared array of its kernel)."""
    import threading

    from numba.cuda.simulator import kernelapi

    if getattr(kernelapi.FakeCUDAShared.array, "_graphkern_locked", False):
        return
    original = kernelapi.FakeCUDAShared.array
    lock = threading.Lock()

    def array(self, shape, dtype, alignment=None):
        if shape == 0 or alignment is not None:
            return original(self, shape, dtype, alignment)  # dynamic shared memory, or its error
        from numba.core import types
        from numba.np import numpy_support

        if isinstance(dtype, types.Type):
            dtype = numpy_support.as_dtype(dtype)
        frame = sys._getframe(1)
        caller = (frame.f_code.co_filename, frame.f_lineno)
        with lock:
            res = self._allocations.get(caller)
            if res is None:
                res = self._allocations[caller] = np.empty(shape, dtype)
        return res

    array._graphkern_locked = True
    kernelapi.FakeCUDAShared.array = array


if SIMULATED:
    _lock_simulated_shared_arrays()

# The first line of a subprocess that runs the simulator: this module, so the subprocess has the suite's
# switch interval and, above all, the shared-array lock (without it, at this interval, two threads of a
# block were seen to get different arrays in a subprocess: a scan read uninitialised memory).
SUBPROCESS_SETUP = (f"import sys; sys.path[:0] = [{str(Path(__file__).resolve().parent)!r}, "
                    f"{str(Path(__file__).resolve().parents[1])!r}]; import conftest")


def small_hub():
    leaves = np.arange(1, 61)
    return (np.concatenate([np.zeros(60, np.int64), leaves[::3]]),
            np.concatenate([leaves, np.zeros(20, np.int64)]), 61)


def small_random():
    rng = np.random.default_rng(7)
    return rng.integers(0, 40, 300), rng.integers(0, 40, 300), 40


def small_cases():
    import graph_cases as gc

    cases = {name: gc.CASES[name] for name in ("empty", "no_edges", "isolated_and_zero_in_degree", "self_loops",
                                                "multi_edges", "bipartite")}
    cases["hub_60"] = small_hub
    cases["random_300"] = small_random
    return cases


CASES = small_cases()


@pytest.fixture
def low_hub_degree():
    """Rows above 16 in-edges go to the block kernels in chunks of 12 edges, so the hub path (several
    chunks per row, a short last one or not) runs on small graphs."""
    import graphkern as gk

    with gk.tuned(cuda_spmm_hub_degree=16, cuda_spmm_chunk_edges=12):
        yield


@pytest.fixture
def low_softmax_degrees():
    """Edge softmax: rows of at most 2 edges share a warp, rows above 6 edges go to the block kernels in
    chunks of 16 edges."""
    import graphkern as gk

    with gk.tuned(cuda_softmax_small_degree=2, cuda_softmax_hub_degree=6, cuda_softmax_chunk_edges=16):
        yield


def degree_ladder(degrees, seed=0):
    """``(src, dst, n)``: destination ``i`` gets ``degrees[i]`` in-edges from random sources, the edges
    shuffled (so the CSC reaches them through a permutation)."""
    rng = np.random.default_rng(seed)
    n = len(degrees)
    dst = np.repeat(np.arange(n), degrees)
    src = rng.integers(0, n, dst.size)
    order = rng.permutation(dst.size)
    return src[order], dst[order], n


# What the CUDA results are compared with: the NumPy references of tests/reference.py, in graphkern's
# output shapes. (Not the CPU backend: its kernels would compile here in shapes and dtypes that the main
# suite, which tests the CPU backend against the same references, does not use.)


def _slots(g):
    """The edges as ``(src, dst, eids)`` in int64 (the COO's, or the CSR's where the graph allows no COO),
    and each edge id's slot in them (-1 for unused ids)."""
    if g.allows_format("coo"):
        src, dst, eids = (np.asarray(a, np.int64) for a in g.coo())
    else:
        indptr, dst, eids = (np.asarray(a, np.int64) for a in g.csr())
        src = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    slot_of_id = np.full(g.num_edge_ids, -1, np.int64)
    slot_of_id[eids] = np.arange(eids.size)
    return src, dst, eids, slot_of_id


def expected_spmm(g, op, reduce, x=None, w=None):
    """``(out, arg_u, arg_e)`` of ``gk.spmm(g, op, reduce, x, w, return_arg=True)`` by the reference: ties
    to the first edge in CSC order, empty rows 0 and -1; ``arg_u`` is None for copy_rhs, ``arg_e`` for
    copy_lhs (as graphkern returns them)."""
    import reference as ref

    src, dst, eids, slot_of_id = _slots(g)
    csc_slots = slot_of_id[np.asarray(g.csc().eids, np.int64)]
    out, arg_u, arg_e = ref.spmm(src, dst, csc_slots, g.num_dst, op, reduce, x, None if w is None else w[eids])
    if eids.size:
        arg_e = np.where(arg_e >= 0, eids[np.maximum(arg_e, 0)], -1)  # slots back to edge ids
    return out, (None if op == "copy_rhs" else arg_u), (None if op == "copy_lhs" else arg_e)


def expected_sddmm(g, op, lhs, rhs, lhs_target="u", rhs_target="v"):
    """``gk.sddmm(g, op, lhs, rhs, lhs_target, rhs_target)`` by the reference: one row per edge id (an
    unused id's row is 0)."""
    import reference as ref

    src, dst, eids, _ = _slots(g)
    by_slot = [None if a is None else (a[eids] if t == "e" else a) for a, t in ((lhs, lhs_target), (rhs, rhs_target))]
    rows = ref.sddmm(src, dst, op, by_slot[0], by_slot[1], lhs_target, rhs_target)
    out = np.zeros((g.num_edge_ids,) + rows.shape[1:], rows.dtype)
    out[eids] = rows
    return out


def expected_edge_softmax(g, logits, norm_by="dst"):
    """``gk.edge_softmax(g, logits, norm_by)`` by the reference (computed in float64)."""
    import reference as ref

    src, dst, eids, _ = _slots(g)
    keys, count = (dst, g.num_dst) if norm_by == "dst" else (src, g.num_src)
    out = np.zeros(logits.shape, np.float64)
    out[eids] = ref.edge_softmax(keys, count, logits[eids])
    return out
