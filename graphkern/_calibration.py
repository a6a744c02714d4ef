"""The planner's machine-dependent choices, measured on the machine that runs them.

The cost model of graphkern._sparse_plan takes the cache-blocked g-SpMM when the gathered features
outgrow the L2 cache (destination blocks for output rows of one vector, the hub split for wider rows),
and the blocked g-SDDMM when the destination operand does. Those rules were measured on one machine; on
another of the same family (another L2 and L3, another host) the blocked g-SpMM measured up to 1.7x and
the blocked u_dot_v 1.75x slower than the kernels they replaced. So the choices are timed here, on this
machine, and the planner follows the measurement:

``spmm_one_vector_blocked``
    copy_u_sum, float32, rows of one vector (16 features), the destination blocks against the CSC kernel;
``spmm_hub_split``
    copy_u_sum, float32, rows of four vectors (64 features), the blocks with the hub split against the
    CSC kernel;
``sddmm_blocked_narrow``, ``sddmm_blocked_wide``
    u_dot_v, float32, 16 and 64 features, the g-SDDMM over destination blocks against the CSR (its rule:
    a destination operand that outgrows the L2, a narrow output row); the narrow measurement decides for
    destination rows up to :data:`SDDMM_NARROW_ROW_BYTES`, the wide one above.

Each is timed on a Graph500 Kronecker graph whose 16-feature rows fill eight L2 caches of this machine
(so every candidate is in the regime the rule is for), the candidates alternating, a warm-up each and the
median of the rest. The outcome is kept per machine, beside Numba's cache
(``<cache root>/calibration/<key>.json``, the key a hash of the CPU model, the cache sizes, the cores
this process may use and the graphkern, numba and llvmlite versions): another machine, or an upgrade,
finds no file and plans by the fixed rules until it is measured. ``graphkern compile`` measures once
the kernels are compiled and before it compiles the large-graph paths, so that it compiles the paths the
planner will take here (``graphkern calibrate`` measures alone; the measuring is graphkern._calibrate, this module
only reads and keeps); nothing is measured behind a user's first call, which would cost that call
seconds.

The environment variable ``GRAPHKERN_CALIBRATION`` names another file, or ``off`` to plan by the fixed
rules whatever is stored (the test suite runs with ``off``); the knob ``use_calibration=0``
(``gk.tuned``) does the same for a block. ``gk.explain`` names the measurement behind a plan it changed.

>>> from graphkern import _calibration
>>> _calibration.DECISIONS
('spmm_one_vector_blocked', 'spmm_hub_split', 'sddmm_blocked_narrow', 'sddmm_blocked_wide')
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import platform
from pathlib import Path

ENV_VAR = "GRAPHKERN_CALIBRATION"
DECISIONS = ("spmm_one_vector_blocked", "spmm_hub_split", "sddmm_blocked_narrow", "sddmm_blocked_wide")
# the feature widths each choice is measured at (graphkern._calibrate)
WIDTHS = {"spmm_one_vector_blocked": 16, "spmm_hub_split": 64, "sddmm_blocked_narrow": 16, "sddmm_blocked_wide": 64}
# the g-SDDMM rule's narrow measurement stands for destination rows up to this many bytes, the wide one above
SDDMM_NARROW_ROW_BYTES = 128
FORMAT = 2  # bumped when the stored measurements change meaning

_loaded: dict = {}  # path -> the stored calibration (or None), read once per process


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _cache_size(index: int) -> int:
    try:
        text = Path(f"/sys/devices/system/cpu/cpu0/cache/index{index}/size").read_text().strip().upper()
        return int(text.rstrip("KM")) * {"K": 1 << 10, "M": 1 << 20}.get(text[-1:], 1)
    except (OSError, ValueError):
        return 0


@functools.cache
def _hardware_and_versions() -> tuple:
    """The CPU model, L2 and L3 sizes and the graphkern, numba and llvmlite versions: fixed for the life of
    a process, and read once (each version is a metadata lookup of about a millisecond, and the planner
    reads the calibration at every call that a blocked path could serve)."""
    from importlib.metadata import PackageNotFoundError, version

    def installed(dist):
        try:
            return version(dist)
        except PackageNotFoundError:
            return "none"

    return (_cpu_model(), _cache_size(2), _cache_size(3), installed("graphkern"), installed("numba"),
            installed("llvmlite"))


def machine() -> dict:
    """What a calibration is valid for: the CPU model, its L2 and L3 sizes, the cores this process may use,
    and the versions whose kernels were timed."""
    cpu, l2, l3, graphkern_version, numba_version, llvmlite_version = _hardware_and_versions()
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # macOS, Windows
        cores = os.cpu_count() or 1
    return {"cpu": cpu, "l2_bytes": l2, "l3_bytes": l3, "cores": cores, "graphkern": graphkern_version,
            "numba": numba_version, "llvmlite": llvmlite_version}


def path() -> Path | None:
    """The file this machine's calibration is kept in (None when ``GRAPHKERN_CALIBRATION=off``)."""
    explicit = os.environ.get(ENV_VAR, "").strip()
    if explicit.lower() == "off":
        return None
    if explicit:
        return Path(explicit)
    from ._numba_cache import cache_root

    return cache_root() / "calibration" / f"{_key(json.dumps(machine(), sort_keys=True))}.json"


@functools.lru_cache(maxsize=8)
def _key(description: str) -> str:
    return hashlib.sha256(description.encode()).hexdigest()[:16]


def stored() -> dict | None:
    """The calibration kept for this machine, or None (none measured, ``off``, or a file from another
    format); read once per process and file."""
    where = path()
    if where is None:
        return None
    if where not in _loaded:
        try:
            found = json.loads(where.read_text())
            _loaded[where] = found if found.get("format") == FORMAT else None
        except (OSError, ValueError, AttributeError):
            _loaded[where] = None
    return _loaded[where]


def forget() -> None:
    """Read the kept calibrations again at their next use (a long-lived process whose machine was
    calibrated by another process since)."""
    _loaded.clear()


def choice(decision: str) -> dict | None:
    """The stored measurement of one decision (``plain_ms``, ``blocked_ms``, ``features``, ``kernels``), or
    None where the planner should follow its fixed rule (nothing stored, or the knob
    ``use_calibration`` is 0)."""
    from . import tuning

    if decision not in DECISIONS:
        raise ValueError(f"argument 'decision': expected one of {', '.join(DECISIONS)}, found {decision!r}")
    if not tuning.current().use_calibration:
        return None
    found = stored()
    return None if found is None else found["decisions"].get(decision)


def keep(result: dict) -> Path:
    """Keep a measured calibration (graphkern._calibrate) as this machine's: written whole or not at all (a
    reader never sees half a file); returns the file."""
    where = path()
    if where is None:
        raise ValueError(f"{ENV_VAR}=off: there is nowhere to keep a calibration")
    where.parent.mkdir(parents=True, exist_ok=True)
    temporary = where.with_suffix(".tmp")
    temporary.write_text(json.dumps(result, indent=1))
    temporary.replace(where)
    _loaded[where] = result
    return where
