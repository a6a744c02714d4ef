"""The command line: ``graphkern info`` and ``graphkern bench``."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from graphkern import cli


@pytest.mark.fast
def test_info(capsys):
    assert cli.main(["info"]) == 0
    assert "numba" in capsys.readouterr().out


@pytest.mark.fast
def test_bench_small_table(capsys):
    # one family here (the JSON test below runs them all)
    assert cli.main(["bench", "--scale", "10", "--repeat", "1", "--no-progress", "--family", "convert"]) == 0
    out = capsys.readouterr().out
    assert "csr -> csc (with eids)" in out and "scipy csr.tocsc" in out
    assert "MISMATCH" not in out


def test_bench_json(capsys):
    assert cli.main(["bench", "--scale", "9", "--repeat", "1", "--json", "--no-progress"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["scale"] == 9
    names = [r["name"] for r in payload["rows"]]
    assert "coo -> csr (with eids)" in names
    assert all(r["check"] in ("ok", "equal", "golden", "valid") for r in payload["rows"])
    assert {r["family"] for r in payload["rows"]} == {"generate", "convert", "spmm", "bfs", "dynamic"}


def test_console_script_is_installed():
    exe = shutil.which("graphkern", path=str(Path(sys.executable).parent)) or shutil.which("graphkern")
    assert exe is not None
    proc = subprocess.run([exe, "bench", "--quick", "--scale", "8", "--repeat", "1", "--no-progress"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "graphkern bench: Graph500 Kronecker scale 8" in proc.stdout


def test_bad_arguments_exit_non_zero():
    proc = subprocess.run([sys.executable, "-m", "graphkern.cli", "bench", "--scale", "0"], capture_output=True,
                          text=True)
    assert proc.returncode == 2 and "expected a positive integer" in proc.stderr


def test_busy_without_contention_is_an_error(capsys):
    assert cli.main(["bench", "--busy", "1"]) == 2
    assert "go with --contention" in capsys.readouterr().err


def _busy_children() -> list[int]:
    """Pids of the busy processes this process started that are still alive (from /proc's command lines)."""
    import os

    from graphkern._contention import BUSY_MARKER

    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if BUSY_MARKER.encode() in argv and str(os.getpid()).encode() in argv and state != "Z":
            found.append(int(entry.name))
    return found


def test_bench_contention_every_family_and_no_busy_process_left(capsys):
    assert cli.main(["bench", "--contention", "--quick", "--busy", "1", "--scale", "10", "--repeat", "2",
                     "--no-progress"]) == 0
    out = capsys.readouterr().out
    for kernel in ("copy_u_sum", "u_dot_v", "edge_softmax", "bfs kron 10", "bfs shuffled grid 200x200",
                   "insert new batch"):
        assert kernel in out
    assert "median/quiet" in out and "met" in out
    assert _busy_children() == []
    try:
        import torch  # noqa: F401
    except ImportError:
        return
    assert "beside torch, one process" in out and "torch Linear(64, 64) forward+backward" in out


def test_bench_contention_json(capsys):
    assert cli.main(["bench", "--contention", "--quick", "--busy", "1", "--scale", "9", "--repeat", "1", "--json",
                     "--no-progress"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["busy"] == 1 and payload["targets"] == {"median_ratio": 2.5, "worst_ratio": 4.0}
    assert [r["family"] for r in payload["rows"]] == ["spmm", "sddmm", "edge_softmax", "bfs", "bfs", "dynamic"]
    assert all(r["contended_worst_s"] >= r["contended_median_s"] > 0 for r in payload["rows"])
    torch_rows = payload["beside_torch"]
    if torch_rows is not None:  # torch installed: both ops timed alone and interleaved
        assert [r["name"].split()[0] for r in torch_rows] == ["torch", "copy_u_sum"]
        assert all(r["alone_median_s"] > 0 and r["interleaved_median_s"] > 0 for r in torch_rows)


def test_busy_processes_stop_when_the_block_raises():
    import pytest

    from graphkern._contention import busy_processes

    with pytest.raises(KeyboardInterrupt):
        with busy_processes(2) as procs:
            assert len(_busy_children()) == 2
            raise KeyboardInterrupt
    assert all(p.returncode is not None for p in procs)
    assert _busy_children() == []
    with pytest.raises(ValueError, match="busy_kind"):
        with busy_processes(1, "perl"):
            pass


def test_bench_contention_ctrl_c_stops_the_busy_processes(monkeypatch):
    """A real SIGINT while the busy processes run: the KeyboardInterrupt leaves none of them behind."""
    import os
    import signal
    import time

    import pytest

    from graphkern import _contention

    seen = []
    real_times = _contention._times

    def interrupted(call, repeat):
        if seen:  # the second timing is the first contended one
            seen.append(len(_busy_children()))
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the interrupt arrives here
        seen.append(-1)
        return real_times(call, repeat)

    monkeypatch.setattr(_contention, "_times", interrupted)
    # Python's own Ctrl-C handler, whatever an earlier test in this worker process left installed
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        with pytest.raises(KeyboardInterrupt):
            _contention.run_contention(9, repeat=1, quick=True, busy=2, progress=False)
    finally:
        signal.signal(signal.SIGINT, previous)
    assert seen[1] == 2
    assert _busy_children() == []


def test_busy_processes_beside_torch():
    import pytest

    pytest.importorskip("torch")
    from graphkern._contention import busy_processes

    with busy_processes(1, "torch") as procs:
        assert procs[0].poll() is None  # it said ready: torch is imported and the matmul loop runs
    assert procs[0].returncode is not None and _busy_children() == []


def test_calibrate_and_compile_print_and_keep_the_calibration(capsys, monkeypatch, tmp_path):
    """``graphkern calibrate`` measures and prints where it kept the outcome; ``graphkern compile`` passes
    ``--no-calibrate`` on and prints the calibration it measured (the measuring and compiling themselves:
    tests/test_calibration.py; here the command line's wiring, with both stubbed)."""
    from graphkern import _calibrate, _calibration, precompile

    monkeypatch.setenv(_calibration.ENV_VAR, str(tmp_path / "calibration.json"))
    result = {"machine": {"cpu": "a test CPU"}, "graph": "a test graph", "repeats": 2, "measured": "now",
              "decisions": {"spmm_hub_split": {"features": 64, "plain_ms": 2.0, "blocked_ms": 1.0,
                                               "kernels": {"blocked": "SPMM_BLOCKED_HUBS", "plain": "SPMM_CSC"}}}}
    asked = []
    monkeypatch.setattr(_calibrate, "calibrate", lambda repeats: asked.append(repeats) or result)
    assert cli.main(["calibrate", "--repeats", "2"]) == 0
    out = capsys.readouterr().out
    assert asked == [2] and "spmm_hub_split" in out and "SPMM_BLOCKED_HUBS" in out
    assert str(tmp_path / "calibration.json") in out

    calls = []

    def fake_precompile(**kwargs):
        calls.append(kwargs["calibrate"])
        report = precompile.PrecompileReport(tmp_path, jobs=1)
        report.calibration = result if kwargs["calibrate"] else None
        return report

    monkeypatch.setattr(precompile, "precompile", fake_precompile)
    assert cli.main(["compile", "--no-progress", "--family", "spmm"]) == 0
    assert "spmm_hub_split" in capsys.readouterr().out
    assert cli.main(["compile", "--no-progress", "--family", "spmm", "--no-calibrate"]) == 0
    assert "spmm_hub_split" not in capsys.readouterr().out
    assert calls == [True, False]
