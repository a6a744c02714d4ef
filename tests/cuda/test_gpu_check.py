"""tools/gpu_check.py at its --quick sizes in the simulator: every check it makes runs and passes."""

import io
import json
import subprocess
import sys
from pathlib import Path

from conftest import SUBPROCESS_SETUP

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "gpu_check.py"


# Runs tools/gpu_check.py --quick in the simulator with every kernel launch recorded (the simulator's kernel
# class is wrapped before the tool imports anything), then writes the launched kernels' names.
RECORDING_RUN = f"""
{SUBPROCESS_SETUP}  # the suite's switch interval and shared-array lock (conftest.py)
import json, sys
from numba.cuda.simulator.kernel import FakeCUDAKernel

launched = set()
launch = FakeCUDAKernel.__call__


def recording_call(self, *args):
    if not self._device:
        launched.add(self.fn.__module__ + ":" + self.fn.__qualname__)
    return launch(self, *args)


FakeCUDAKernel.__call__ = recording_call
sys.path.insert(0, sys.argv[1])
import gpu_check

status = gpu_check.main(sys.argv[3:])
with open(sys.argv[2], "w") as f:
    json.dump(sorted(launched), f)
sys.exit(status)
"""


def cuda_kernels() -> set[str]:
    """``module:qualname`` of every kernel in graphkern/kernels/cuda, read from the source: functions under
    ``@cuda.jit`` (without ``device=True``) or ``@block_jit(...)``, at module level or made by a factory."""
    import ast

    found = set()
    for path in sorted((SCRIPT.parents[1] / "kernels" / "cuda").glob("*.py")):
        module = f"graphkern.kernels.cuda.{path.stem}"

        def visit(node, prefix):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.FunctionDef):
                    for dec in child.decorator_list:
                        text = ast.unparse(dec)
                        if (text == "cuda.jit" or text.startswith("block_jit(")
                                or (text.startswith("cuda.jit(") and "device=True" not in text)):
                            found.add(f"{module}:{prefix}{child.name}")
                    visit(child, f"{prefix}{child.name}.<locals>.")
                elif not isinstance(child, ast.ClassDef):
                    visit(child, prefix)

        visit(ast.parse(path.read_text()), "")
    return found


def test_cuda_kernels_reads_the_source():
    kernels = cuda_kernels()
    assert "graphkern.kernels.cuda.spmm:spmm_csc_kernel.<locals>.hub" in kernels  # @block_jit
    assert "graphkern.kernels.cuda.bfs:search_levels" in kernels
    assert not any(k.endswith(":locate") or k.endswith("._fill_slot") for k in kernels)  # device functions
    assert len(kernels) >= 60


# kernels --quick does not reach yet in the simulator: the degrees of a compressed format and the edge-id
# scatter of a device graph's edge list. Each must still be unreached: reaching one means taking it off this
# list. (IncrementalBFS's candidate commit and relaxation are reached: at the simulator's scale 5 the
# IncrementalBFS row's one update gets to a candidate round, which at scale 6, --quick on a GPU, it does not.)
KNOWN_UNREACHED = {"graphkern.kernels.cuda.sort:_degrees", "graphkern.kernels.cuda.sort:_scatter_by_eid"}


def test_gpu_check_quick_runs_and_reaches_every_kernel(tmp_path):
    out = tmp_path / "table.json"
    launched_path = tmp_path / "launched.json"
    proc = subprocess.run([sys.executable, "-c", RECORDING_RUN, str(SCRIPT.parent), str(launched_path), "--quick",
                           "--json", str(out)], capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = json.loads(out.read_text())
    kernels = {r["kernel"] for r in rows}
    for name in ("copy (device to device)", "count sort coo->csc", "exclusive scan (several tiles)", "copy_u_sum",
                 "copy_u_max", "u_dot_v", "edge_softmax H=1", "bfs direction_optimizing", "bfs spmsv",
                 "bfs direction_optimizing (per-phase launches)", "segment_mm", "gather_mm idx_b",
                 "segment_mm_backward_b", "torch copy_u_sum", "IncrementalBFS (build + one update)"):
        assert name in kernels, name
    assert all(r["status"] not in ("error", "WRONG") for r in rows), rows
    torch_row = next(r for r in rows if r["kernel"] == "torch copy_u_sum")
    assert torch_row["measure"] == "skipped: torch has no CUDA here" or torch_row["ms"] > 0
    assert "kernel" in proc.stdout and "total" in proc.stdout
    unreached = cuda_kernels() - set(json.loads(launched_path.read_text()))
    assert unreached == KNOWN_UNREACHED, sorted(unreached ^ KNOWN_UNREACHED)


def _gpu_check_module():
    sys.path.insert(0, str(SCRIPT.parent))
    import gpu_check

    return gpu_check


def test_report_renders_targets_and_rewrites_json_after_every_row(tmp_path):
    gpu_check = _gpu_check_module()
    out = tmp_path / "rows.json"
    report = gpu_check.Report(str(out), stream=io.StringIO())
    report.add("u_dot_v", "F=128", agrees=True, seconds=0.002, measure="1 GB/s", of_floor=0.5,
               target=">= 60% of floor", ok=False)
    assert [r["kernel"] for r in json.loads(out.read_text())] == ["u_dot_v"]
    report.add("copy_u_sum", "F=64", agrees=False, seconds=0.001)
    rows = json.loads(out.read_text())
    assert [r["status"] for r in rows] == ["not met", "WRONG"]
    text = report.render()
    assert "not met" in text and "u_dot_v" in text and "2.0" in text and "50%" in text
    assert report.failed == 1


def test_a_failing_row_is_reported_and_the_run_goes_on(tmp_path):
    gpu_check = _gpu_check_module()
    stream = io.StringIO()
    report = gpu_check.Report(None, stream=stream)

    def broken():
        raise RuntimeError("launch failed")

    report.attempt("bfs top_down", "8 roots", broken)
    report.add("bfs spmsv", "8 roots", agrees=True, seconds=0.01)
    assert [r["status"] for r in report.rows] == ["error", ""]
    assert "RuntimeError: launch failed" in stream.getvalue()
    assert report.failed == 1


def test_graphkern_bench_runs_on_the_cuda_backend():
    """The main job with --backend cuda: every family runs on the device and checks against its reference."""
    # two families end to end (the sparse kernels and BFS on the device run in gpu_check --quick above), on
    # a Kronecker graph of scale 4 (16 nodes, 256 generated edges): every row's path at the least cost in
    # the simulator
    # `python -m graphkern.cli`, with this suite's switch interval and shared-array lock (conftest.py)
    as_module = (f"{SUBPROCESS_SETUP}; import runpy; "
                 "runpy.run_module('graphkern.cli', run_name='__main__', alter_sys=True)")
    proc = subprocess.run([sys.executable, "-c", as_module, "bench", "--backend", "cuda", "--quick", "--scale",
                           "4", "--repeat", "1", "--no-progress", "--family", "convert", "--family", "dynamic"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "backend cuda" in proc.stdout
    for row in ("coo -> csr", "csr -> csc", "stable count sort", "insert batch", "snapshot", "IncrementalBFS"):
        assert row in proc.stdout, row
    assert "MISMATCH" not in proc.stdout
