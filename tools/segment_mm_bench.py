"""Time graphkern's segment_mm (register-tiled and plain CPU kernels) against NumPy's per-segment matmul.

One process, the same inputs, medians of several runs and their ratios (the figures that count on a shared
machine). Usage: ``python tools/segment_mm_bench.py [--n 131072] [--d 64] [--r 8] [--dtype float32]``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def segment_mm_plain(a, b, offsets, out):
    """The plain loop: the accumulator row in memory, the inner loop over columns left to LLVM's vectoriser;
    the baseline that the register tile of graphkern.kernels.cpu.segment_mm is measured against."""
    n = a.shape[0]
    for i in prange(n):
        r = np.searchsorted(offsets, i, side="right") - 1
        for j in range(out.shape[1]):
            out[i, j] = 0
        for k in range(a.shape[1]):
            aik = a[i, k]
            for j in range(out.shape[1]):
                out[i, j] += aik * b[r, k, j]


def _median_seconds(fn, repeats: int) -> float:
    fn()  # warm-up: compilation and first touch
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 17)
    parser.add_argument("--d", type=int, default=64)
    parser.add_argument("--r", type=int, default=8)
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args(argv)

    from graphkern.kernels.cpu import segment_mm as kern

    import graphkern as gk

    rng = np.random.default_rng(0)
    dtype = np.dtype(args.dtype)
    a = rng.standard_normal((args.n, args.d)).astype(dtype)
    b = rng.standard_normal((args.r, args.d, args.d)).astype(dtype)
    seglen = np.full(args.r, args.n // args.r, np.int64)
    seglen[-1] += args.n - seglen.sum()
    offsets = np.r_[0, np.cumsum(seglen)].astype(np.int64)
    out = np.empty((args.n, args.d), dtype)

    def numpy_loop():
        return np.concatenate([a[offsets[r]:offsets[r + 1]] @ b[r] for r in range(args.r)])

    expected = numpy_loop()
    np.testing.assert_allclose(gk.segment_mm(a, b, seglen), expected, rtol=1e-3, atol=1e-3)
    t_np = _median_seconds(numpy_loop, args.repeats)
    t_tile = _median_seconds(lambda: kern.segment_mm(a, b, offsets, out), args.repeats)
    t_naive = _median_seconds(lambda: segment_mm_plain(a, b, offsets, out), args.repeats)
    t_front = _median_seconds(lambda: gk.segment_mm(a, b, seglen), args.repeats)
    flops = 2.0 * args.n * args.d * args.d
    print(f"N={args.n} D={args.d} R={args.r} {dtype}, medians of {args.repeats}")
    for name, t in (("numpy per-segment @", t_np), ("kernel, register tile", t_tile),
                    ("kernel, plain loop", t_naive), ("gk.segment_mm (front end)", t_front)):
        print(f"{name:28s} {t * 1e3:8.2f} ms  {flops / t / 1e9:6.1f} GFLOP/s  numpy/this = {t_np / t:5.2f}")


if __name__ == "__main__":
    main()
