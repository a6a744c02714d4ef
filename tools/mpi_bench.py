#!/usr/bin/env python3
"""Distributed figures under mpiexec: the transpose against the serial count sort and a gather-to-root
transpose, and the 2-D BFS with TEPS and bytes per level. Run it once per rank count:

    mpiexec -n 1 python tools/mpi_bench.py transpose --scale 20     # P = 1, plus the serial count sort
    mpiexec -n 2 python tools/mpi_bench.py transpose --scale 20
    mpiexec -n 4 python tools/mpi_bench.py bfs --scale 18 --roots 8 # a 2x2 grid (6 ranks: 2x3)

Rank 0 prints one JSON line per figure (``--json FILE`` appends them to FILE too). Times are the
slowest rank's, medians over ``--repeat`` runs; bytes are what each rank sends (CountingComm), the
self-block included.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np


def _emit(comm, record, path):
    if comm.Get_rank() == 0:
        line = json.dumps(record)
        print(line, flush=True)
        if path:
            with open(path, "a") as fh:
                fh.write(line + "\n")


def _timed(comm, func, repeat):
    """Median over ``repeat`` calls of the slowest rank's time (a barrier before each call). ``comm`` is the
    plain communicator, so that the timing's own collectives are not counted."""
    from mpi4py import MPI

    times, result = [], None
    for _ in range(repeat):
        comm.Barrier()
        t0 = time.perf_counter()
        result = func()
        mine = time.perf_counter() - t0
        times.append(comm.allreduce(mine, op=MPI.MAX))
    return float(np.median(times)), result


def _serial_on_root(world, indptr, indices, eids, n, repeat):
    """The serial count-sort transpose (CSR -> CSC with edge ids) on rank 0 with every core's threads,
    in this same run; the other ranks sleep meanwhile instead of spinning in a barrier."""
    import numba
    from graphkern.kernels.cpu import sort

    seconds = None
    if world.Get_rank() == 0:
        threads = numba.get_num_threads()
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        sort.transpose_compressed(indptr, indices, eids, n)
        times = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            sort.transpose_compressed(indptr, indices, eids, n)
            times.append(time.perf_counter() - t0)
        seconds = float(np.median(times))
        numba.set_num_threads(threads)
    request = world.Ibarrier()
    while not request.Test():
        time.sleep(0.001)
    return seconds


def bench_transpose(args, world):
    from graphkern.kernels.cpu import sort

    import graphkern as gk
    from graphkern.distributed import CountingComm, DistCSR, gather_to_root_transpose, transpose

    comm = CountingComm(world)
    n = 1 << args.scale
    if comm.rank == 0:
        src, dst = gk.graph.kronecker_edges(args.scale, progress=False)
        indptr, indices, eids = sort.coo_to_compressed(src, dst, None, n)  # the directed multigraph's CSR
        indptr, indices, eids = indptr.astype(np.int64), indices.astype(np.int64), eids.astype(np.int64)
    else:
        indptr = indices = eids = None
    A = DistCSR.scatter(indptr, indices, eids, comm)  # values: the edge ids, as in the serial benchmark
    record = {"figure": "transpose", "scale": args.scale, "ranks": comm.size, "nnz": int(16 << args.scale)}
    record["serial_count_sort_s"] = _serial_on_root(world, indptr, indices, eids, n, args.repeat)
    transpose(A)  # warm-up (compiles the count sort on every rank)
    comm.reset()
    t, T = _timed(world, lambda: transpose(A), args.repeat)
    stats = {k: [v[0] // args.repeat, v[1] // args.repeat] for k, v in comm.snapshot().items()}
    sent = comm.allgather(sum(v[1] for v in stats.values()))
    record.update(transpose_s=t, collectives=stats, bytes_sent_per_rank=sent)
    comm.reset()
    t_root, B = _timed(world, lambda: gather_to_root_transpose(A), args.repeat)
    stats_root = {k: [v[0] // args.repeat, v[1] // args.repeat] for k, v in comm.snapshot().items()}
    record.update(gather_to_root_s=t_root, gather_to_root_collectives=stats_root,
                  gather_to_root_bytes_per_rank=comm.allgather(sum(v[1] for v in stats_root.values())))
    ok = np.array_equal(T.indices, B.indices) and np.array_equal(T.values, B.values)
    record["results_equal"] = bool(comm.allreduce(int(ok)) == comm.size)
    _emit(world, record, args.json)


def bench_bfs(args, world):
    import graphkern as gk
    from graphkern.distributed import Block2D, CountingComm, Grid2D, bfs_2d

    comm = CountingComm(world)
    pr, pc = (int(x) for x in args.grid.split("x")) if args.grid else Grid2D.factor(comm.size)
    grid = Grid2D(comm, pr, pc)
    n = 1 << args.scale
    src, dst = gk.graph.kronecker_edges(args.scale, progress=False)  # the same edges on every rank
    keep = src != dst
    s, d = np.r_[src[keep], dst[keep]], np.r_[dst[keep], src[keep]]
    mine = slice(comm.rank, None, comm.size)
    t0 = time.perf_counter()
    block = Block2D.from_edges(grid, s[mine], d[mine], n)
    construction = comm.allreduce(time.perf_counter() - t0, op=__import__("mpi4py").MPI.MAX)
    g = None
    if comm.rank == 0:
        g = gk.Graph.from_coo(s, d, num_nodes=n).simple()
        keys = gk.graph500.search_keys(g, args.roots)
    else:
        keys = None
    keys = comm.bcast(None if keys is None else keys.tolist())
    bfs_2d(block, keys[0])  # warm-up
    times, teps, traces = [], [], []
    for key in keys:
        grid.reset_stats()
        seconds, res = _timed(world, lambda key=key: bfs_2d(block, key), 1)
        got = res.gather()
        if comm.rank == 0:
            parents, levels = got
            gk.graph500.validate(g, key, parents, levels)
            edges = gk.graph500.traversed_edges(src, dst, parents)
            times.append(seconds)
            teps.append(edges / seconds)
        traces.append(comm.allgather([t[2] for t in res.trace]))
    if comm.rank == 0:
        teps_arr = np.array(teps)
        per_level = np.array(traces[0]).sum(axis=0).tolist()  # bytes all ranks sent, per level, first key
        record = {"figure": "bfs_2d", "scale": args.scale, "ranks": comm.size, "grid": f"{pr}x{pc}",
                  "roots": len(keys), "validated": True, "construction_s": construction,
                  "median_time_s": float(np.median(times)),
                  "harmonic_mean_TEPS": float(len(teps) / np.sum(1 / teps_arr)),
                  "bytes_per_level_first_key": per_level,
                  "bytes_per_search_median": float(np.median([np.sum(t) for t in traces]))}
        _emit(world, record, args.json)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("figure", choices=["transpose", "bfs"])
    parser.add_argument("--scale", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--roots", type=int, default=8)
    parser.add_argument("--grid", default=None, help="bfs: PRxPC (default: the most square)")
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    # one Numba thread per core: ranks on one machine share its cores
    import os

    import numba

    local = world.Split_type(MPI.COMM_TYPE_SHARED).Get_size()
    numba.set_num_threads(max(1, min(numba.config.NUMBA_NUM_THREADS, (os.cpu_count() or 1) // local)))
    if args.figure == "transpose":
        bench_transpose(args, world)
    else:
        bench_bfs(args, world)
    return 0


if __name__ == "__main__":
    sys.exit(main())
