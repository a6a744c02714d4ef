"""Backend selection: ``GRAPHKERN_BACKEND``, :func:`set_backend`, :func:`use_backend` and ``backend=``.

The environment variable is read once at import and validated (a bad value raises, listing the valid
names: a silent fallback would hide a typo). The per-call ``backend=`` argument beats the context manager,
which beats :func:`set_backend`, which beats the environment. ``numba.cuda`` is imported only when the
CUDA backend is asked about, so ``NUMBA_ENABLE_CUDASIM`` may be set any time before that.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
import threading
from collections.abc import Iterator

from .errors import BackendUnavailableError

BACKENDS = ("auto", "cpu", "cuda")
ENV_VAR = "GRAPHKERN_BACKEND"


def _parse_backend(value: str, source: str) -> str:
    if not isinstance(value, str):  # value.strip() would raise an AttributeError that names no argument
        raise TypeError(f"{source}: expected one of {', '.join(BACKENDS)} (a str), found {type(value).__name__} "
                        f"{value!r}")
    name = value.strip().lower()
    if name not in BACKENDS:
        raise ValueError(f"{source}: expected one of {', '.join(BACKENDS)}, found {value!r}")
    return name


_default_backend = _parse_backend(os.environ.get(ENV_VAR, "auto"), f"environment variable {ENV_VAR}")
_scoped_backend: contextvars.ContextVar[str | None] = contextvars.ContextVar("graphkern_backend", default=None)


def set_backend(name: str) -> None:
    """Set the process-wide default backend: ``"auto"``, ``"cpu"`` or ``"cuda"``.

    Examples
    --------
    >>> import graphkern as gk
    >>> gk.set_backend("cpu"); gk.get_backend()
    'cpu'
    >>> gk.set_backend("auto")
    """
    global _default_backend
    _default_backend = _parse_backend(name, "argument 'name'")


def get_backend() -> str:
    """The backend in force here: the innermost :func:`use_backend`, else :func:`set_backend`/the env."""
    scoped = _scoped_backend.get()
    return scoped if scoped is not None else _default_backend


@contextlib.contextmanager
def use_backend(name: str) -> Iterator[str]:
    """Context manager: run the block with ``name`` as the backend (thread- and task-local).

    Examples
    --------
    >>> import graphkern as gk
    >>> with gk.use_backend("cpu"):
    ...     gk.get_backend()
    'cpu'
    """
    token = _scoped_backend.set(_parse_backend(name, "argument 'name'"))
    try:
        yield name
    finally:
        _scoped_backend.reset(token)


# a cold first compilation takes a few seconds; a driver or compiler that has not answered in a minute is hung
_PROBE_TIMEOUT_S = 60.0
_INSTALL = "pip install 'graphkern[cuda]'"


def cuda_status() -> tuple[bool, str]:
    """Whether the CUDA backend is usable, and a one-line reason: what is missing, or what was found.

    The first call (without the simulator) compiles a tiny kernel, runs it on the GPU and checks its
    result, in a thread it waits for at most ``_PROBE_TIMEOUT_S`` seconds so that a hung driver cannot hang
    the caller; the answer is cached for the process. With ``NUMBA_ENABLE_CUDASIM=1`` the simulator counts
    as usable and nothing is probed.

    Returns
    -------
    tuple of (bool, str)
        ``(True, "GPU <name> ...")`` or ``(True, "the CUDA simulator ...")`` when usable, else ``(False,
        why)`` naming one of: numba-cuda not installed, no driver or GPU, the compiler (NVVM) missing, the
        numpy release numba-cuda cannot compile with, a probe that failed, hung or computed wrong values.
    """
    try:
        from numba import cuda  # noqa: F401 - numba-cuda's target when installed, else numba's built-in one
    except Exception as exc:  # pragma: no cover - depends on the installation
        return False, f"numba.cuda cannot be imported ({_first_line(exc)}); {_INSTALL}"
    from numba.core import config as numba_config

    if numba_config.ENABLE_CUDASIM:
        return True, "the CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
    return _probe()


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[0] if text else ''}".rstrip(": ")


def _numba_cuda_version() -> str | None:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("numba-cuda")
    except PackageNotFoundError:
        return None


_PROBE_LOCK = threading.Lock()


def _probe() -> tuple[bool, str]:
    """The cached answer of :func:`cuda_status` on the real target (one probe per process, even when
    several threads ask first at once)."""
    with _PROBE_LOCK:
        return _probe_once()


@functools.cache
def _probe_once() -> tuple[bool, str]:
    if _numba_cuda_version() is None:
        return False, f"numba-cuda is not installed (numba's own numba.cuda is not supported); {_INSTALL}"
    result: dict = {}
    thread = threading.Thread(target=_run_probe, args=(result,), name="graphkern-cuda-probe", daemon=True)
    thread.start()
    thread.join(_PROBE_TIMEOUT_S)
    if thread.is_alive():
        return False, (f"the CUDA probe (compile and run a tiny kernel) did not finish in {_PROBE_TIMEOUT_S:g} s: "
                       "the driver or the compiler hangs")
    return result.get("status", (False, "the CUDA probe stopped without an answer"))


_probe.cache_clear = _probe_once.cache_clear  # a fresh probe (tests)


def _compile_probe():
    """The probe kernel, ``out[i] = 3 * i + 1`` in a grid-stride loop, compiled for the current GPU (a seam
    for tests)."""
    from numba import cuda

    def probe(out):
        i = cuda.grid(1)
        while i < out.size:
            out[i] = 3 * i + 1
            i += cuda.gridsize(1)

    return cuda.jit("void(int64[::1])")(probe)


def _launch_probe(kernel):
    """The probe's output after one launch on the current GPU (a seam for tests)."""
    import numpy as np
    from numba import cuda

    out = cuda.to_device(np.zeros(100, np.int64))
    kernel[2, 32](out)
    cuda.synchronize()
    return out.copy_to_host()


def _compile_failure(exc: BaseException) -> str:
    """One line naming why the probe kernel did not compile."""
    import numpy as np

    text = f"{type(exc).__name__} {exc}"
    if "row_stack" in text:
        return (f"numba-cuda {_numba_cuda_version()} cannot compile with numpy {np.__version__} (it registers "
                "np.row_stack, which numpy 2.5 removed): install numpy<2.5, as the 'cuda' extra requires")
    if "nvvm" in text.lower():
        return (f"the CUDA compiler (NVVM) is missing or unusable ({_first_line(exc)}); {_INSTALL} brings it "
                "(numba-cuda[cu13]), or point CUDA_HOME at a CUDA toolkit")
    return f"a test kernel did not compile ({_first_line(exc)})"


def _run_probe(result: dict) -> None:
    """Fill ``result["status"]``; runs in the probe thread."""
    try:
        from numba import cuda

        if not cuda.is_available():
            why = "numba.cuda.is_available() is False"
            try:
                from numba.cuda.cudadrv.driver import driver

                if driver.initialization_error:
                    why = str(driver.initialization_error).strip().splitlines()[0]
            except Exception:  # noqa: BLE001 - the reason is a courtesy
                pass
            result["status"] = False, f"no usable CUDA driver or GPU was found ({why})"
            return
        device = cuda.get_current_device()
        name = device.name.decode() if isinstance(device.name, bytes) else str(device.name)
        cc = "sm_{}{}".format(*device.compute_capability)
    except Exception as exc:  # noqa: BLE001 - driver errors vary
        result["status"] = False, f"the CUDA driver failed to initialise ({_first_line(exc)})"
        return
    try:
        kernel = _compile_probe()
    except Exception as exc:  # noqa: BLE001 - classified into one line
        result["status"] = False, _compile_failure(exc)
        return
    try:
        got = _launch_probe(kernel)
    except Exception as exc:  # noqa: BLE001 - launch errors vary
        result["status"] = False, f"a test kernel compiled but did not run on GPU {name} ({_first_line(exc)})"
        return
    import numpy as np

    expected = 3 * np.arange(100, dtype=np.int64) + 1
    if not np.array_equal(got, expected):
        bad = int(np.flatnonzero(got != expected)[0])
        result["status"] = False, (f"a test kernel ran on GPU {name} but computed wrong values (element {bad}: "
                                   f"{int(got[bad])}, expected {int(expected[bad])})")
        return
    result["status"] = True, f"GPU {name} ({cc}); a test kernel compiled, ran and agreed"


def resolve_backend(backend: str | None, *arrays) -> str:
    """The concrete backend (``"cpu"`` or ``"cuda"``) for a call.

    ``auto`` picks cuda only when an input already lives on a GPU (a device array or a graph on the GPU), so
    host data never takes a round trip it did not ask for. An explicit cuda without a usable GPU raises
    :class:`BackendUnavailableError` saying why.
    """
    from ._validate import is_device_array

    name = get_backend() if backend is None else _parse_backend(backend, "argument 'backend'")
    if name == "auto":
        # a graph (or dynamic graph) whose arrays live on the GPU counts as device data
        on_device = any(is_device_array(a) or getattr(a, "_device", None) == "cuda" for a in arrays if a is not None)
        if not on_device:
            return "cpu"
        name = "cuda"
    if name == "cuda":
        ok, why = cuda_status()
        if not ok:
            raise BackendUnavailableError(f"backend 'cuda' is not usable: {why}")
    return name
