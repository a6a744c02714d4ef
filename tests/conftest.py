import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import settings

# plans by the fixed rules, whatever calibration `graphkern compile` kept on this machine (subprocesses
# inherit it); tests/test_calibration.py points the variable at files of its own
os.environ["GRAPHKERN_CALIBRATION"] = "off"

settings.register_profile("graphkern", deadline=None, max_examples=60, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "graphkern"))


@pytest.fixture(scope="session")
def bounds_checked_env(tmp_path_factory):
    """The environment of a subprocess that runs kernels under ``NUMBA_BOUNDSCHECK=1``: bounds-checked
    machine code differs from the normal build, so it goes to a Numba cache of its own, one for the whole
    test run and shared by the test workers (they share the base temporary folder's parent), so each
    kernel is compiled with checks once, not once per test that runs it."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    return dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(root / "numba-boundscheck-cache"))


@pytest.fixture
def run_bounds_checked(bounds_checked_env):
    """``run(script, tuning=None)``: run ``script`` in a subprocess under bounds checks (the environment of
    :func:`bounds_checked_env`, and ``GRAPHKERN_TUNING=tuning`` when given), where an out-of-bounds access
    in compiled code raises IndexError; assert that it exits cleanly and prints "ok" last."""

    def run(script: str, tuning: str | None = None) -> None:
        env = dict(bounds_checked_env, **({"GRAPHKERN_TUNING": tuning} if tuning else {}))
        proc = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True,
                              timeout=1500)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
        assert proc.stdout.strip().endswith("ok")

    return run


@pytest.fixture(params=[np.int32, np.int64], ids=["int32", "int64"])
def idtype(request):
    return np.dtype(request.param)


@pytest.fixture
def force_bucketed_sort(monkeypatch):
    """Send small sorts down the two-pass (bucketed) path so it is tested on every graph case."""
    from graphkern.kernels.cpu import sort

    monkeypatch.setattr(sort, "_BUCKETED_MIN_ELEMENTS", 0)
    monkeypatch.setattr(sort, "_BUCKETED_MIN_KEYS", 0)
    monkeypatch.setattr(sort, "_BUCKET_BITS", 3)
