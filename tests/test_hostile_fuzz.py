"""Random bad and edge-case input (hypothesis) to the constructors, readers, loaders, the Graph500
validator, the DynamicGraph and the kernels, with Numba's bounds checks on: never a crash, an
out-of-bounds access, a wrong answer, an unclear error or a change to the caller's arrays.

The properties live in hostile_fuzz.py and run in a subprocess, since ``NUMBA_BOUNDSCHECK`` must be set
before Numba compiles anything (and the checked kernels go to a cache of their own).
"""

import subprocess
import sys
from pathlib import Path

EXAMPLES = 60  # per property, derandomized: the same inputs in every run


def test_hostile_input_under_bounds_checks(tmp_path, bounds_checked_env):
    script = Path(__file__).with_name("hostile_fuzz.py")
    run = subprocess.run([sys.executable, str(script), str(EXAMPLES)], env=bounds_checked_env, capture_output=True,
                         text=True, timeout=1500, cwd=tmp_path)
    assert run.returncode == 0, run.stdout[-6000:] + run.stderr[-4000:]
    assert run.stdout.count(": ok") == 8, run.stdout
