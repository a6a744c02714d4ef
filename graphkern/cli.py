"""The ``graphkern`` command: ``info``, ``bench``, ``compile``, ``calibrate`` and ``graph500``."""

from __future__ import annotations

import argparse
import sys


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, found {text}")
    return value


def _nonnegative_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"expected an integer >= 0, found {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="graphkern", description="Graph kernels compiled by Numba.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="versions, backend, threads and CUDA device (gk.show_config())")
    bench = sub.add_parser("bench", help="generate a Graph500 graph, run, check and time every kernel family")
    bench.add_argument("--scale", type=_positive_int, default=None,
                       help="log2 of the number of vertices (default 20; 16 with --quick)")
    bench.add_argument("--edgefactor", type=_positive_int, default=16)
    bench.add_argument("--quick", action="store_true", help="a small graph and fewer repeats (seconds)")
    bench.add_argument("--repeat", type=_positive_int, default=None, help="timed calls per kernel (default 5)")
    bench.add_argument("--threads", type=_positive_int, default=None, help="Numba threads (default: all)")
    bench.add_argument("--backend", default=None, choices=["cpu", "cuda"],
                       help="where the kernels run (default: GRAPHKERN_BACKEND, cpu under auto)")
    bench.add_argument("--family", action="append", help="run only this family (repeatable)")
    bench.add_argument("--json", action="store_true", help="print JSON instead of the table")
    bench.add_argument("--no-progress", action="store_true", help="no progress bar")
    bench.add_argument("--contention", action="store_true",
                       help="time each kernel family quiet, then beside busy processes, and print the slowdown")
    bench.add_argument("--busy", type=_nonnegative_int, default=None,
                       help="--contention: busy processes (default: half the cores, at least 1)")
    bench.add_argument("--busy-kind", default=None, choices=["python", "numpy", "torch"],
                       help="--contention: what the busy processes run (default python; torch: a 1-thread matmul "
                            "loop)")
    comp = sub.add_parser("compile", help="compile every kernel a model will run into the on-disk cache, once "
                                          "after installing or upgrading (first calls then load in milliseconds)")
    comp.add_argument("--dtype", action="append", choices=["float32", "float64"],
                      help="feature dtype (repeatable; default float32)")
    comp.add_argument("--idtype", action="append", choices=["int32", "int64"],
                      help="graph id dtype (repeatable; default int32, what graphs under 2**31 edges use)")
    comp.add_argument("--family", action="append", choices=["spmm", "sddmm", "edge_softmax", "bfs", "dynamic", "torch"],
                      help="only this kernel family (repeatable; default all, torch when installed)")
    comp.add_argument("--all-ops", action="store_true",
                      help="every g-SpMM/g-SDDMM op, reducer and target pair, not only those GNN layers use")
    comp.add_argument("--jobs", type=_positive_int, default=None,
                      help="processes compiling at once (default: one a core; Numba compiles on one thread)")
    comp.add_argument("--no-progress", action="store_true", help="no progress bar")
    comp.add_argument("--no-calibrate", action="store_true",
                      help="do not time the planner's machine-dependent choices (graphkern calibrate); the large-graph "
                           "paths then follow the calibration kept already, if any")
    calib = sub.add_parser("calibrate", help="time the planner's machine-dependent choices on this machine and "
                                             "keep the outcome (graphkern compile does this too)")
    calib.add_argument("--repeats", type=_positive_int, default=9, help="timed runs of each candidate (median)")
    g500 = sub.add_parser("graph500", help="the Graph500 BFS benchmark: build, search, validate, TEPS statistics")
    g500.add_argument("--scale", type=_positive_int, required=True)
    g500.add_argument("--edgefactor", type=_positive_int, default=16)
    g500.add_argument("--roots", type=_positive_int, default=64, help="search keys (default 64)")
    g500.add_argument("--algorithm", default="auto",
                      choices=["auto", "direction_optimizing", "top_down", "bottom_up", "spmsv"])
    g500.add_argument("--threads", type=_positive_int, default=None)
    g500.add_argument("--backend", default=None, choices=["cpu", "cuda"],
                      help="where the searches run (default: GRAPHKERN_BACKEND, cpu under auto)")
    g500.add_argument("--no-validate", action="store_true", help="skip validation (not a valid Graph500 run)")
    g500.add_argument("--no-progress", action="store_true")
    g500.add_argument("--distributed", action="store_true",
                      help="2-D BFS over MPI: run under mpiexec -n P (needs mpi4py)")
    g500.add_argument("--grid", default=None, help="--distributed: PRxPC (default: the most square for P)")
    return parser


def _run_calibrate(repeats: int) -> int:
    from . import _calibrate, _calibration

    if _calibration.path() is None:
        print(f"not calibrated: {_calibration.ENV_VAR}=off", file=sys.stderr)
        return 0
    _print_calibration(_calibrate.calibrate(repeats))
    return 0


def _print_calibration(result: dict) -> None:
    from . import _calibrate, _calibration

    print(_calibrate.table(result))
    print(f"kept in {_calibration.path()}")


def _graph500_distributed(args) -> int:
    try:
        from mpi4py import MPI
    except ImportError:
        print("graphkern graph500 --distributed needs mpi4py: pip install 'graphkern[mpi]'", file=sys.stderr)
        return 1
    import os

    import numba

    from . import graph500
    from .distributed import graph500 as dist_graph500

    if args.threads is None:  # ranks on one machine share its cores
        local = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_size()
        numba.set_num_threads(max(1, min(numba.config.NUMBA_NUM_THREADS, (os.cpu_count() or 1) // local)))
    grid = None
    if args.grid:
        try:
            grid = tuple(int(x) for x in args.grid.lower().split("x"))
        except ValueError:
            print(f"argument --grid: expected PRxPC, found {args.grid!r}", file=sys.stderr)
            return 2
    result = dist_graph500.run(args.scale, args.edgefactor, num_roots=args.roots, grid=grid,
                               validate_results=not args.no_validate, progress=not args.no_progress)
    if result is not None:
        print(graph500.format_output(result))
    return 0


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "info":
        from ._info import show_config

        show_config()
        return 0
    if args.command == "bench":
        if not args.contention and (args.busy is not None or args.busy_kind is not None):
            print("graphkern bench: --busy and --busy-kind go with --contention", file=sys.stderr)
            return 2
        import numba

        from .bench import run_bench

        if args.threads is not None:
            numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
        scale = args.scale if args.scale is not None else (16 if args.quick else 20)
        default_repeat = (5, 10) if args.contention else (3, 5)  # the contended worst needs more calls
        repeat = args.repeat if args.repeat is not None else default_repeat[0 if args.quick else 1]
        from ._config import get_backend

        backend = args.backend or ("cuda" if get_backend() == "cuda" else "cpu")
        if backend == "cuda":
            from ._cuda import require_cuda

            require_cuda()  # says why before a graph is generated
        if args.contention:
            from ._contention import run_contention

            try:
                run_contention(scale, edgefactor=args.edgefactor, repeat=repeat, quick=args.quick, backend=backend,
                               busy=args.busy, busy_kind=args.busy_kind or "python", progress=not args.no_progress,
                               as_json=args.json)
            except ValueError as exc:
                print(f"graphkern bench --contention: {exc}", file=sys.stderr)
                return 2
            return 0
        try:
            run_bench(scale, edgefactor=args.edgefactor, repeat=repeat, quick=args.quick, backend=backend,
                      families=args.family, progress=not args.no_progress, as_json=args.json)
        except RuntimeError as exc:
            print(exc, file=sys.stderr)
            return 1
        return 0
    if args.command == "compile":
        from . import _calibration
        from .precompile import precompile

        report = precompile(dtypes=args.dtype or ("float32",), idtypes=args.idtype or ("int32",),
                            families=args.family, ops="all" if args.all_ops else "common",
                            progress=not args.no_progress, jobs=args.jobs, calibrate=not args.no_calibrate)
        print(report.table())
        if report.calibration is not None:
            _print_calibration(report.calibration)
        elif not args.no_calibrate and _calibration.path() is None:
            print(f"not calibrated: {_calibration.ENV_VAR}=off", file=sys.stderr)
        return 0
    if args.command == "calibrate":
        return _run_calibrate(args.repeats)
    if args.command == "graph500":
        import numba

        from . import graph500

        if args.threads is not None:
            numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
        if args.distributed:
            return _graph500_distributed(args)
        result = graph500.run(args.scale, args.edgefactor, num_roots=args.roots, algorithm=args.algorithm,
                              validate_results=not args.no_validate, progress=not args.no_progress,
                              backend=args.backend)
        print(graph500.format_output(result))
        return 0
    return 2  # pragma: no cover - argparse rejects unknown commands first


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
