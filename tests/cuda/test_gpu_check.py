"""tools/gpu_check.py at its --quick sizes in the simulator: every check it makes runs and passes."""

import io
import json
import subprocess
import sys
from pathlib import Path

SCRIPT = Path(__file__).resolve().parents[2] / "tools" / "gpu_check.py"


def test_gpu_check_quick_runs_every_kernel(tmp_path):
    out = tmp_path / "table.json"
    proc = subprocess.run([sys.executable, str(SCRIPT), "--quick", "--json", str(out)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = json.loads(out.read_text())
    kernels = {r["kernel"] for r in rows}
    for name in ("copy (device to device)", "count sort coo->csc", "copy_u_sum", "copy_u_max", "u_dot_v",
                 "edge_softmax H=1", "bfs direction_optimizing", "bfs spmsv", "torch copy_u_sum"):
        assert name in kernels, name
    torch_row = next(r for r in rows if r["kernel"] == "torch copy_u_sum")
    assert torch_row["measure"] == "skipped: torch has no CUDA here" or torch_row["ms"] > 0
    assert "kernel" in proc.stdout and "total" in proc.stdout


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
    # two families end to end (the sparse kernels and BFS on the device run in gpu_check --quick above)
    proc = subprocess.run([sys.executable, "-m", "graphkern.cli", "bench", "--backend", "cuda", "--quick", "--scale",
                           "5", "--repeat", "1", "--no-progress", "--family", "convert", "--family", "dynamic"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "backend cuda" in proc.stdout
    for row in ("coo -> csr", "csr -> csc", "stable count sort", "insert batch", "snapshot", "IncrementalBFS"):
        assert row in proc.stdout, row
    assert "MISMATCH" not in proc.stdout
