"""read_edgelist against pandas.read_csv's C engine on one generated edge list, side by side.

Usage: python tools/reader_bench.py [lines=10_000_000] [repeats=3]. Writes /tmp/reader_bench_{2,3}.txt
(without and with a weight column), times both readers on each (median of ``repeats`` runs after a
warm-up that compiles the kernels), and prints the medians, the ratio, numba's threads and the load.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numba
import numpy as np
import pandas as pd

import graphkern as gk


def _generate(path, lines, weighted, fmt="%.6g"):
    if os.path.exists(path) and os.path.getsize(path) > 0:
        return
    rng = np.random.default_rng(0)
    with open(path, "w") as fh:
        fh.write("# FromNodeId\tToNodeId\n")
        step = 1_000_000
        for lo in range(0, lines, step):
            k = min(step, lines - lo)
            u = rng.integers(0, 4_000_000, k).astype(str)
            v = rng.integers(0, 4_000_000, k).astype(str)
            if weighted:
                w = np.char.mod(fmt, rng.random(k) * 100)
                rows = np.char.add(np.char.add(np.char.add(np.char.add(u, " "), v), " "), w)
            else:
                rows = np.char.add(np.char.add(u, " "), v)
            fh.write("\n".join(rows.tolist()))
            fh.write("\n")


def _time(fn, repeats):
    fn()  # warm-up: compiles graphkern's kernels, fills the page cache
    out = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main() -> None:
    lines = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000_000
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    print(f"threads={numba.get_num_threads()} cpus={os.cpu_count()} load={os.getloadavg()}")
    for weighted, fmt in ((False, ""), (True, "%.6g"), (True, "%.17g")):
        path = f"/tmp/reader_bench_{3 if weighted else 2}_{fmt[2:-1] or 0}_{lines}.txt"
        _generate(path, lines, weighted, fmt)
        dtype = {0: np.int64, 1: np.int64, 2: np.float64} if weighted else {0: np.int64, 1: np.int64}
        t_gk = _time(lambda: gk.graph.read_edgelist(path, num_nodes=4_000_000, progress=False), repeats)
        t_pd = _time(lambda: pd.read_csv(path, sep=" ", header=None, comment="#", dtype=dtype, engine="c"),
                     repeats)
        size = os.path.getsize(path) / 2**20
        print(f"{'with ' + fmt if weighted else 'without'} weight: {lines} lines, {size:.0f} MiB: "
              f"graphkern {t_gk:.3f} s, pandas {t_pd:.3f} s, graphkern/pandas = {t_gk / t_pd:.2f} "
              f"(load after: {os.getloadavg()})", flush=True)


if __name__ == "__main__":
    main()
