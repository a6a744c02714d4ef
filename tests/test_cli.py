"""The command line: ``graphkern info`` and ``graphkern bench``."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

from graphkern import cli


def test_info(capsys):
    assert cli.main(["info"]) == 0
    assert "numba" in capsys.readouterr().out


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
