"""The asv suite imports and its benchmarks are well formed (``asv check --python=same``)."""

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ASV_DIR = Path(__file__).resolve().parents[1] / "asv_bench"


def test_asv_check():
    asv = shutil.which("asv", path=str(Path(sys.executable).parent))
    if asv is None:
        pytest.skip("asv is not installed (pip install -e '.[test]')")
    proc = subprocess.run([asv, "check", "--python=same"], cwd=ASV_DIR, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
