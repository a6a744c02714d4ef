#!/usr/bin/env python3
"""How close the CUDA count sort comes to what a scatter can do: on a GPU, time a device-to-device copy,
a plain random scatter of ``E`` (int32 value, int32 id) pairs through a random permutation (one pass,
not stable: the least any sort that moves pairs must pay), and ``coo_to_compressed`` on ``E`` skewed keys.
Every row counts 16 bytes an item (two int32 read, two written) and gives its share of the copy
bandwidth, the same accounting as the row "count sort coo->csc" of ``tools/gpu_check.py``:

    python3 tools/sort_floor.py                   # E = 2**27, 2**22 keys, the hubs of a power law
    python3 tools/sort_floor.py --edges 1000000   # smaller
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkout_import import use_checkout  # noqa: E402

cuda = None  # numba.cuda, imported in main (the simulator patches kernels' globals, not closures)


def _copy(a, b):
    for i in range(cuda.grid(1), a.size, cuda.gridsize(1)):
        b[i] = a[i]


def _scatter(values, perm, out_values, out_ids):
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        j = perm[i]
        out_values[j] = values[i]
        out_ids[j] = i


def _time(fn, repeats: int) -> float:
    """Median seconds of ``fn()`` after one warm-up call: CUDA events (the wall clock in the simulator)."""
    from numba.core import config

    fn()
    cuda.synchronize()
    times = []
    for _ in range(repeats):
        if config.ENABLE_CUDASIM:
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
            continue
        start, stop = cuda.event(), cuda.event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return statistics.median(times)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edges", type=int, default=2**27)
    parser.add_argument("--nodes", type=int, default=2**22)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    use_checkout()
    global cuda
    from graphkern.kernels.cuda import sort as cuda_sort
    from numba import cuda

    copy, scatter = cuda.jit(_copy), cuda.jit(_scatter)

    E, n = args.edges, args.nodes
    rng = np.random.default_rng(0)
    # skewed keys: a few hubs hold a large share of the edges, as in a Kronecker graph's in-degrees
    keys = np.minimum((n * rng.random(E) ** 4).astype(np.int64), n - 1).astype(np.int32)
    values = rng.integers(0, n, E, dtype=np.int32)
    perm = rng.permutation(E).astype(np.int32)
    d_keys, d_values, d_perm = cuda.to_device(keys), cuda.to_device(values), cuda.to_device(perm)
    out_a, out_b = cuda.device_array(E, np.int32), cuda.device_array(E, np.int32)
    grid = (min(65_535, -(-E // 256)), 256)

    moved = 16 * E
    t_copy = _time(lambda: copy[grid](d_values, out_a), args.repeats)
    bw = 2 * 4 * E / t_copy
    print(f"copy (device to device)  {t_copy * 1e3:8.2f} ms  {bw / 1e9:7.1f} GB/s read+written", flush=True)
    t = _time(lambda: scatter[grid](d_values, d_perm, out_a, out_b), args.repeats)
    print(f"random scatter of pairs  {t * 1e3:8.2f} ms  {moved / t / 1e9:7.1f} GB/s  {moved / t / bw:6.1%} of copy bw",
          flush=True)
    t = _time(lambda: cuda_sort.coo_to_compressed(d_keys, d_values, None, n), args.repeats)
    print(f"coo_to_compressed        {t * 1e3:8.2f} ms  {moved / t / 1e9:7.1f} GB/s  {moved / t / bw:6.1%} of copy bw",
          flush=True)
    t = _time(lambda: cuda_sort.count_sort(d_keys, n, np.int32), args.repeats)
    print(f"count_sort (perm only)   {t * 1e3:8.2f} ms", flush=True)
    indptr, indices, eids = cuda_sort.coo_to_compressed(d_keys, d_values, None, n)
    order = np.argsort(keys, kind="stable")
    ok = (np.array_equal(eids.copy_to_host(), order) and np.array_equal(indices.copy_to_host(), values[order])
          and np.array_equal(indptr.copy_to_host(), np.concatenate([[0], np.cumsum(np.bincount(keys, minlength=n))])))
    print(f"coo_to_compressed equals numpy's stable argsort: {ok}", flush=True)
    for name in ("_tile_digit_counts", "_tile_sort_scatter", "_tile_scan"):
        kernel = getattr(cuda_sort, name)
        for compiled in kernel.overloads.values():
            try:
                print(f"{name}: {compiled.regs_per_thread} registers, {compiled.shared_mem_per_block} B shared, "
                      f"{compiled.local_mem_per_thread} B local a thread", flush=True)
            except AttributeError:  # the simulator's kernels carry no resource usage
                pass
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
