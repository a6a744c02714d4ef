#!/usr/bin/env python3
"""The usual asv runs in one command (run from anywhere; asv must be installed: the test extra has it).

    python tools/asv_run.py                 # every benchmark against the installed graphkern, results saved
    python tools/asv_run.py --quick -b SpMM # one sample each, a regex of benchmarks
    python tools/asv_run.py --history 5     # the last 5 commits of main, each in its own virtualenv
    python tools/asv_run.py --compare main HEAD   # asv continuous: regressions between two commits
    python tools/asv_run.py --publish       # then build the HTML report in asv_bench/html (asv preview)

Threads and backend are pinned by asv_bench/asv.conf.json (NUMBA_NUM_THREADS=2, GRAPHKERN_BACKEND=cpu).
Against the installed environment asv saves nothing unless given a commit hash, so this passes HEAD's.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

ASV_DIR = Path(__file__).resolve().parents[1] / "asv_bench"


def _asv() -> str:
    exe = shutil.which("asv", path=str(Path(sys.executable).parent)) or shutil.which("asv")
    if exe is None:
        sys.exit("asv is not installed: pip install -e '.[test]' (or pip install asv)")
    return exe


def commands(args) -> list[list[str]]:
    asv = _asv()
    bench = ["-b", args.bench] if args.bench else []
    quick = ["--quick"] if args.quick else []
    runs = [[asv, "machine", "--yes"]]
    if args.compare:
        runs.append([asv, "continuous", "--factor", str(args.factor), *bench, *quick, *args.compare])
    elif args.history:
        runs.append([asv, "run", "--skip-existing-successful", *bench, *quick, f"HEAD~{args.history}..HEAD"])
    else:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ASV_DIR, capture_output=True, text=True,
                              check=True).stdout.strip()
        runs.append([asv, "run", "--python=same", "--set-commit-hash", head, "--show-stderr", *bench, *quick])
    if args.publish:
        runs.append([asv, "publish"])
    return runs


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one sample per benchmark (smoke run)")
    parser.add_argument("-b", "--bench", default=None, help="regex of the benchmarks to run")
    parser.add_argument("--history", type=int, default=None, metavar="N", help="benchmark the last N commits")
    parser.add_argument("--compare", nargs=2, default=None, metavar=("BASE", "NEW"), help="asv continuous")
    parser.add_argument("--factor", type=float, default=1.1, help="--compare: the ratio that counts as a change")
    parser.add_argument("--publish", action="store_true", help="build the HTML report afterwards")
    parser.add_argument("--dry-run", action="store_true", help="print the asv commands without running them")
    args = parser.parse_args(argv)
    for cmd in commands(args):
        print("+", " ".join(cmd), flush=True)
        if not args.dry_run:
            code = subprocess.run(cmd, cwd=ASV_DIR).returncode
            if code:
                return code
    return 0


if __name__ == "__main__":
    sys.exit(main())
