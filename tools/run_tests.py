#!/usr/bin/env python3
"""Run every test graphkern has: pytest on tests/, tests/cuda under the CUDA simulator, tests/mpi under mpiexec.

The CUDA simulator is process-wide (NUMBA_ENABLE_CUDASIM must be set before numba.cuda is imported), so
tests/cuda runs in its own process; tests/mpi runs under ``mpiexec -n N`` for each rank count it needs.
A folder without tests is reported and skipped; the main suite finding no tests is a failure. The last
line is a combined ``tests: N passed, N failed`` count.

The main and simulator suites run at the same time, each on one pytest-xdist worker per core (at most
four), a test file to a worker: a cold run spends most of its time compiling or simulating threads, both
single-threaded, so the cores stay busy until both suites end (the simulator's output is shown when it
ends). ``GRAPHKERN_TEST_WORKERS=1`` runs each suite in one process. MPI runs after them.

Options (the rest go to pytest):

``--fast``
    the fast tier for every edit: the tests marked ``fast`` in each suite, MPI at 2 ranks only (a few
    minutes with a warm Numba cache; tests/test_fast_tier.py checks that it reaches every public entry
    point and kernel family).
``--profile DIR``
    also measure compilation (tools/compile_profile.py): time and specialisations per test file and per
    kernel module, printed at the end.

Each suite's wall time is printed before the final count.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
MPI_RANKS = (1, 2, 3, 4, 6)


def _has_tests(folder: Path) -> bool:
    return folder.is_dir() and any(folder.glob("test_*.py"))


def _counts(junit: Path) -> tuple[int, int, int]:
    if not junit.exists():
        return 0, 0, 0
    root = ET.parse(junit).getroot()
    suites = [root] if root.tag == "testsuite" else list(root)
    tests = sum(int(s.get("tests", 0)) for s in suites)
    bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
    skipped = sum(int(s.get("skipped", 0)) for s in suites)
    return tests - bad - skipped, bad, skipped


def _workers() -> list[str]:
    """pytest-xdist's arguments for a parallel run, or none (one core, or xdist missing)."""
    try:
        import xdist  # noqa: F401
    except ImportError:
        return []
    count = int(os.environ.get("GRAPHKERN_TEST_WORKERS", min(4, os.cpu_count() or 1)))
    return ["-n", str(count), "--dist", "loadfile"] if count > 1 else []


_STEP_TIMES: list[tuple[str, float]] = []


def _start_pytest(args, env=None, prefix=(), junit=None, log=None):
    """Start pytest (the caller waits): output to this terminal, or to the file ``log``."""
    # Run from tests/ so that the source folder graphkern/ in the repository root never shadows the
    # installed package (its graph/ and kernels/ subpackages live in other folders until installed).
    cmd = [*prefix, sys.executable, "-m", "pytest", "-p", "no:cacheprovider", f"--junitxml={junit}", *args]
    print("+", " ".join(str(c) for c in cmd) + (f"  (output in {log}, shown when it ends)" if log else ""),
          flush=True)
    env = dict(os.environ if env is None else env)
    # Two workers with Numba's OpenMP pools share the cores; idle OpenMP threads that spin keep the other
    # worker's threads waiting at every parallel region (test_bfs on two workers runs markedly faster with
    # passive waits; most of its time is the 10^5 one-level kernels of the long path).
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    out = open(log, "w") if log else None  # noqa: SIM115 (closed by _wait)
    started = time.perf_counter()
    process = subprocess.Popen(cmd, env=env, cwd=TESTS, stdout=out, stderr=subprocess.STDOUT if out else None)
    return process, out, started


def _wait(label, run) -> int:
    """Wait for a run of :func:`_start_pytest`, keep its wall time under ``label``, show its log."""
    process, out, started = run
    code = process.wait()
    _STEP_TIMES.append((label, time.perf_counter() - started))
    if out is not None:
        out.close()
        print(Path(out.name).read_text(), end="", flush=True)
    return code


def _pytest(label, args, env=None, prefix=(), junit=None):
    return _wait(label, _start_pytest(args, env, prefix, junit))


def _take_option(args: list[str], name: str) -> str | None:
    """Remove ``name VALUE`` from ``args`` and return VALUE (None when absent)."""
    if name not in args:
        return None
    at = args.index(name)
    value = args[at + 1]
    del args[at:at + 2]
    return value


def main(argv: list[str]) -> int:
    extra = argv[1:]
    fast = "--fast" in extra
    mpi_ranks = MPI_RANKS
    if fast:
        # the fast tier: the tests marked `fast` (every public entry point and kernel family once; checked
        # by tests/test_fast_tier.py), MPI at 2 ranks
        extra = ["-m", "fast", *[a for a in extra if a != "--fast"]]
        mpi_ranks = (2,)
    profile = _take_option(extra, "--profile")
    if profile is not None:
        # tools/compile_profile.py: compile time and specialisations per test file and per kernel module
        os.environ["GRAPHKERN_COMPILE_PROFILE"] = str(Path(profile).resolve())
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "tools"), os.environ.get("PYTHONPATH")]))
        extra = ["-p", "compile_profile", *extra]
    tmp = Path(tempfile.mkdtemp(prefix="graphkern-tests-"))
    totals = [0, 0, 0]
    failed_runs = []

    # The simulator suite runs beside the main suite, each on its own workers: most of either is single-
    # threaded (compiling, simulated threads), and while one suite's last files finish on one worker the
    # other suite keeps the second core busy. Its output is shown when it ends.
    cuda = TESTS / "cuda"
    cuda_run = None
    if _has_tests(cuda):
        cuda_run = _start_pytest([*_workers(), str(cuda), *extra], env=dict(os.environ, NUMBA_ENABLE_CUDASIM="1"),
                                 junit=tmp / "cuda.xml", log=tmp / "cuda.log")
    else:
        print("note: tests/cuda holds no tests yet; nothing to run under NUMBA_ENABLE_CUDASIM=1", flush=True)

    junit = tmp / "main.xml"
    code = _pytest("main suite", [*_workers(), str(TESTS), *extra], junit=junit)
    if code == 5:
        print("error: the main suite collected no tests", flush=True)
        failed_runs.append("main (no tests)")
    elif code != 0:
        failed_runs.append("main")
    for i, v in enumerate(_counts(junit)):
        totals[i] += v

    if cuda_run is not None:
        print("(waiting for the simulator suite)", flush=True)
        if _wait("simulator suite", cuda_run) != 0:
            failed_runs.append("cuda (simulator)")
        for i, v in enumerate(_counts(tmp / "cuda.xml")):
            totals[i] += v

    mpi = TESTS / "mpi"
    if _has_tests(mpi):
        search = str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", "")
        mpiexec = shutil.which("mpiexec", path=search)
        if mpiexec is None:
            print("error: tests/mpi has tests but mpiexec is not installed (pip install mpich)", flush=True)
            failed_runs.append("mpi (no mpiexec)")
        else:
            for ranks in mpi_ranks:
                junit = tmp / f"mpi{ranks}.xml"
                env = dict(os.environ, GRAPHKERN_MPI_JUNIT=str(junit))
                prefix = (mpiexec, "-n", str(ranks))
                # only rank 0 writes the junit file (tests/mpi/conftest.py combines results across ranks)
                code = _pytest(f"mpi -n {ranks}", [str(mpi), "-x", *extra], env=env, prefix=prefix,
                               junit=f"{junit}.rank")
                if code != 0:
                    failed_runs.append(f"mpi -n {ranks}")
                for i, v in enumerate(_counts(Path(f"{junit}.rank"))):
                    totals[i] += v
    else:
        print("note: tests/mpi holds no tests yet; nothing to run under mpiexec", flush=True)

    passed, failed, skipped = totals
    for label, seconds in _STEP_TIMES:
        print(f"time: {label:16} {seconds:7.0f} s", flush=True)
    if profile is not None:
        sys.path.insert(0, str(ROOT / "tools"))
        import compile_profile

        print(compile_profile.report(Path(profile)), flush=True)
    if failed_runs:
        print("failed runs: " + ", ".join(failed_runs), flush=True)
        failed = max(failed, 1)
    print(f"tests: {passed} passed, {failed} failed, {skipped} skipped", flush=True)
    return 1 if failed_runs else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
