"""A pytest plugin that measures what a test run spends compiling: ``-p compile_profile`` (tools/ on the path).

Numba fires a ``numba:compile`` event around every compilation that the disk cache could not answer (a
cache load fires none), nested when one compiled function compiles another. The plugin sums the wall time of
the outermost events and counts every event (one per specialisation: a function and its argument types),
and charges both to the test file and to the module of the compiled function. Each process writes
``$GRAPHKERN_COMPILE_PROFILE/<worker>.json`` when its pytest run ends; ``tools/run_tests.py --profile DIR``
sets the variable, loads the plugin, and prints the combined table (``python tools/compile_profile.py DIR``
prints it again).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

ENV_VAR = "GRAPHKERN_COMPILE_PROFILE"


def _closure_constants(dispatcher) -> str:
    values = []
    for cell in getattr(dispatcher.py_func, "__closure__", None) or ():
        try:
            value = cell.cell_contents
        except ValueError:  # an empty cell
            continue
        if not callable(value):
            values.append(repr(value))
    return "(" + ", ".join(values) + ")"


class _CompileTimer:
    def __init__(self):
        self.depth = 0
        self.started = 0.0
        self.current_file = "(outside tests)"
        self.by_file = defaultdict(lambda: {"compile_s": 0.0, "specialisations": 0, "test_s": 0.0})
        self.by_module = defaultdict(lambda: {"compile_s": 0.0, "specialisations": 0})
        self.specialisations = set()

    def on_start(self, event):
        dispatcher = event.data["dispatcher"]
        module = getattr(dispatcher.py_func, "__module__", "?")
        name = getattr(dispatcher.py_func, "__qualname__", "?")
        # a factory's kernels share a name and differ in the constants they close over (op, reducer, ...)
        self.specialisations.add((module, name, str(event.data.get("args")) + _closure_constants(dispatcher)))
        self.by_file[self.current_file]["specialisations"] += 1
        self.by_module[module]["specialisations"] += 1
        if self.depth == 0:
            self.started = time.perf_counter()
            self.outer_module = module
        self.depth += 1

    def on_end(self, event):
        self.depth -= 1
        if self.depth == 0:
            spent = time.perf_counter() - self.started
            self.by_file[self.current_file]["compile_s"] += spent
            self.by_module[self.outer_module]["compile_s"] += spent


_timer = _CompileTimer()


def pytest_configure(config):
    from numba.core import event

    class Listener(event.Listener):
        def on_start(self, ev):
            _timer.on_start(ev)

        def on_end(self, ev):
            _timer.on_end(ev)

    event.register("numba:compile", Listener())


def pytest_runtest_logstart(nodeid, location):
    _timer.current_file = nodeid.split("::")[0]


def pytest_runtest_logreport(report):
    if getattr(report, "node", None) is not None:
        return  # xdist's controller hears every worker's reports again: the workers count them
    _timer.by_file[report.nodeid.split("::")[0]]["test_s"] += report.duration


def pytest_sessionfinish(session):
    folder = Path(os.environ.get(ENV_VAR, "."))
    folder.mkdir(parents=True, exist_ok=True)
    worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
    tag = Path(os.environ.get("GRAPHKERN_PROFILE_TAG", "")).name
    data = {"by_file": dict(_timer.by_file), "by_module": dict(_timer.by_module),
            "specialisations": sorted(_timer.specialisations)}
    (folder / f"{tag}{worker}-{os.getpid()}.json").write_text(json.dumps(data))


def combine(folder: Path) -> dict:
    by_file = defaultdict(lambda: defaultdict(float))
    by_module = defaultdict(lambda: defaultdict(float))
    specialisations = set()
    for path in sorted(folder.glob("*.json")):
        data = json.loads(path.read_text())
        for table, into in ((data["by_file"], by_file), (data["by_module"], by_module)):
            for key, row in table.items():
                for field, value in row.items():
                    into[key][field] += value
        specialisations.update(tuple(s) for s in data["specialisations"])
    return {"by_file": by_file, "by_module": by_module, "specialisations": specialisations}


def report(folder: Path, top: int = 20) -> str:
    data = combine(folder)
    lines = []
    files = sorted(data["by_file"].items(), key=lambda kv: -kv[1]["test_s"])
    total_test = sum(r["test_s"] for _, r in files)
    total_compile = sum(r["compile_s"] for _, r in files)
    lines.append(f"worker-seconds in tests {total_test:.0f}, of which compiling {total_compile:.0f} "
                 f"({100 * total_compile / max(total_test, 1e-9):.0f}%); distinct specialisations compiled "
                 f"{len(data['specialisations'])}")
    lines.append(f"{'test file':48} {'test s':>8} {'compile s':>10} {'compiles':>9}")
    for name, row in files[:top]:
        lines.append(f"{name:48} {row['test_s']:8.0f} {row['compile_s']:10.0f} {int(row['specialisations']):9d}")
    lines.append("")
    lines.append(f"{'module compiled':48} {'compile s':>10} {'compiles':>9}")
    for name, row in sorted(data["by_module"].items(), key=lambda kv: -kv[1]["compile_s"]):
        lines.append(f"{name:48} {row['compile_s']:10.0f} {int(row['specialisations']):9d}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report(Path(sys.argv[1]), top=int(sys.argv[2]) if len(sys.argv) > 2 else 20))
