"""``gk.show_config()`` / ``graphkern info``: versions, backend, threads, CUDA device or why not."""

from __future__ import annotations

import os
import platform
import sys
from importlib.metadata import PackageNotFoundError, version


def _version(dist: str) -> str:
    try:
        return version(dist)
    except PackageNotFoundError:
        return "not installed"


def config_dict() -> dict:
    """Everything :func:`show_config` prints, as a dict (for ``graphkern bench --json`` and bug reports)."""
    import numba

    from . import _numba_cache, _numba_inline
    from ._config import cuda_status, get_backend

    info = {
        "graphkern": _version("graphkern"),
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
    }
    for dist in ("numpy", "scipy", "numba", "llvmlite", "numba-cuda", "mpi4py", "tqdm"):
        info[dist] = _version(dist)
    info["backend"] = get_backend()
    info["numba_threads"] = numba.get_num_threads()
    info["numba_threading_layer"] = _threading_layer()
    info["numba_cache_dir"] = os.environ.get("NUMBA_CACHE_DIR") or str(_numba_cache.cache_root())
    changes = _numba_inline.installed_changes()
    info["numba_compile_changes"] = ", ".join(changes) if changes else "none (numba's own)"
    if os.environ.get("GRAPHKERN_SKIP_CUDA_PROBE") == "1":
        info["cuda"] = "not probed (GRAPHKERN_SKIP_CUDA_PROBE=1)"
    else:
        ok, why = cuda_status()
        info["cuda"] = ("usable: " if ok else "not usable: ") + why
    return info


def _threading_layer() -> str:
    import numba

    try:
        return numba.threading_layer()
    except ValueError:
        return "not started yet (first parallel call picks it)"


def show_config(file=None) -> dict:
    """Print versions, the backend, Numba's threads and the CUDA device (or why there is none).

    Returns the same information as a dict.

    Examples
    --------
    >>> import io, graphkern as gk
    >>> info = gk.show_config(file=io.StringIO())
    >>> sorted(info)[:3]
    ['backend', 'cpu_count', 'cuda']
    """
    info = config_dict()
    width = max(len(k) for k in info)
    for key, value in info.items():
        print(f"{key:<{width}} : {value}", file=file or sys.stdout)
    return info
