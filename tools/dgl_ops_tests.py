#!/usr/bin/env python3
"""Run DGL's own operator tests against ``graphkern.torch.ops`` and print the counts.

DGL's ``tests/python/common/ops/test_ops.py`` and ``test_edge_softmax.py`` (with their helpers
``tests/utils`` and ``tests/backend``) are taken from a DGL checkout, or from a bare git directory
(``git archive`` of ``--rev``), into a temporary directory, and run there by pytest in this process with a
plugin that first replaces the names the tests call in ``dgl.ops`` (``gspmm``, ``gsddmm``,
``edge_softmax``, ``copy_u_sum``, ``u_mul_e_sum``, ... ``segment_mm``, ``gather_mm``,
``segment_reduce``, ``segment_softmax``) with ``graphkern.torch.ops``' functions of the same name. A
function that takes a graph gets ``Graph.from_dgl(graph)`` in its place; every other argument is passed
as the test gave it, and the tests' assertions, tolerances and parametrization are DGL's. Only the
``dgl.ops`` namespace is changed: the references the tests compute with DGL's message passing
(``update_all`` and ``apply_edges`` with Python functions) still run in DGL.

Needs an environment with ``dgl`` (2.1 was used), ``torch``, ``pytest``, ``networkx`` and graphkern
installed; ``DGLBACKEND`` is set to ``pytorch`` unless it is set already. DGL 2.1 with a newer torch
warns that its tensor adapter or GraphBolt cannot load; the operators these tests call still work
(docs/interop.md, section 'DGL's operator tests').

Usage::

    python tools/dgl_ops_tests.py /path/to/dgl                 # a checkout (its tests/ folder is read)
    python tools/dgl_ops_tests.py /path/to/dgl.git --rev v2.1.0  # a bare git directory
    python tools/dgl_ops_tests.py /path/to/dgl --dgl           # the same tests on DGL itself, no shim
    python tools/dgl_ops_tests.py /path/to/dgl -- -k edge_softmax -x   # after --: pytest's own options

The last line printed is ``graphkern: N passed, N failed, N skipped, N errors`` (``dgl:`` with
``--dgl``); the exit status is pytest's.
"""

from __future__ import annotations

import argparse
import functools
import io
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

TEST_FILES = ("tests/python/common/ops/test_ops.py", "tests/python/common/ops/test_edge_softmax.py")
HELPERS = ("tests/utils", "tests/backend")
# graphkern.torch.ops' names that take no graph: passed to graphkern unchanged
GRAPHLESS = frozenset({"segment_mm", "gather_mm", "segment_reduce", "segment_softmax"})
OUTCOMES = ("passed", "failed", "skipped", "error")


def extract(source: Path, dest: Path, rev: str = "HEAD") -> list[Path]:
    """Copy the two test files and their helpers from ``source`` into ``dest``; return the test files.

    ``source`` is a checkout (a folder with ``tests/``) or a bare git directory (read at ``rev``).
    """
    wanted = TEST_FILES + HELPERS
    if (source / "tests").is_dir():
        import shutil

        for rel in wanted:
            origin, target = source / rel, dest / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if origin.is_dir():
                shutil.copytree(origin, target, ignore=shutil.ignore_patterns("__pycache__"))
            elif origin.is_file():
                shutil.copyfile(origin, target)
            else:
                raise SystemExit(f"{source} has no {rel}: expected a DGL checkout")
    elif (source / "HEAD").is_file() and (source / "objects").is_dir():
        proc = subprocess.run(["git", f"--git-dir={source}", "archive", "--format=tar", rev, *wanted],
                              capture_output=True)
        if proc.returncode != 0:
            raise SystemExit(f"git archive of {rev} in {source} failed: {proc.stderr.decode().strip()}")
        with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as archive:
            archive.extractall(dest, filter="data")
    else:
        raise SystemExit(f"{source}: expected a DGL checkout (with tests/) or a bare git directory")
    return [dest / rel for rel in TEST_FILES]


def _on_converted_graph(function):
    """``function`` called with ``Graph.from_dgl(graph)`` for its first argument, the rest unchanged."""
    from graphkern import Graph

    @functools.wraps(function)
    def call(graph, *args, **kwargs):
        return function(Graph.from_dgl(graph), *args, **kwargs)

    return call


class GraphkernShim:
    """pytest plugin: ``dgl.ops``' names replaced by graphkern's before the test modules import them."""

    def __init__(self) -> None:
        self.replaced: dict[str, object] = {}

    def pytest_configure(self, config) -> None:
        import dgl.ops

        import graphkern.torch.ops as gk_ops

        names = [name for name in (*gk_ops.__all__, "edge_softmax") if hasattr(dgl.ops, name)]
        for name in names:
            ours = getattr(gk_ops, name)
            self.replaced[name] = getattr(dgl.ops, name)
            setattr(dgl.ops, name, ours if name in GRAPHLESS else _on_converted_graph(ours))

    def pytest_unconfigure(self, config) -> None:
        import dgl.ops

        for name, original in self.replaced.items():
            setattr(dgl.ops, name, original)

    def pytest_report_header(self, config) -> str:
        return f"graphkern shim: dgl.ops.{{{', '.join(sorted(self.replaced))}}} -> graphkern.torch.ops"


class Tally:
    """pytest plugin: the outcome counts of pytest's own summary line, kept for the caller."""

    def __init__(self) -> None:
        self.counts = dict.fromkeys(OUTCOMES, 0)

    def pytest_terminal_summary(self, terminalreporter) -> None:
        for outcome in OUTCOMES:
            # pytest's stats also hold reports of passing setup/teardown phases under "": not counted
            self.counts[outcome] = sum(1 for report in terminalreporter.stats.get(outcome, ())
                                       if getattr(report, "when", "call") in ("call", "setup", "teardown"))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=Path, help="a DGL checkout or a bare git directory of DGL")
    parser.add_argument("--rev", default="HEAD", help="revision to read from a bare git directory (default HEAD)")
    parser.add_argument("--dgl", action="store_true", help="run the tests on DGL itself (no shim)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="extract into this folder and keep it (default: a temporary folder)")
    parser.epilog = "Arguments after -- go to pytest as they are."
    argv = list(sys.argv[1:] if argv is None else argv)
    # split by hand: argparse would take pytest's options for its own, or refuse them after an option
    split = argv.index("--") if "--" in argv else len(argv)
    args = parser.parse_args(argv[:split])
    pytest_args = argv[split + 1:]

    os.environ.setdefault("DGLBACKEND", "pytorch")
    import pytest

    with tempfile.TemporaryDirectory(prefix="dgl_ops_tests_") as scratch:
        root = args.keep if args.keep is not None else Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        files = extract(args.source.resolve(), root, args.rev)
        # an empty ini file of its own: neither this project's pytest options nor DGL's apply
        ini = root / "pytest.ini"
        ini.write_text("[pytest]\n")
        sys.path.insert(0, str(root / "tests"))  # the tests import `backend` and `utils` from there
        tally = Tally()
        plugins = [tally] if args.dgl else [GraphkernShim(), tally]
        status = pytest.main(["-c", str(ini), "--rootdir", str(root), "-p", "no:cacheprovider", "-q",
                              *map(str, files), *pytest_args], plugins=plugins)
    who = "dgl" if args.dgl else "graphkern"
    print(f"{who}: " + ", ".join(f"{tally.counts[o]} {o if o != 'error' else 'errors'}" for o in OUTCOMES))
    return int(status)


if __name__ == "__main__":
    sys.exit(main())
