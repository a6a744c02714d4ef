"""Backend selection: ``GRAPHKERN_BACKEND``, :func:`set_backend`, :func:`use_backend` and ``backend=``.

The environment variable is read once at import and validated (a bad value raises, listing the valid
names: a silent fallback would hide a typo). The per-call ``backend=`` argument beats the context manager,
which beats :func:`set_backend`, which beats the environment. ``numba.cuda`` is imported only when the
CUDA backend is asked about, so ``NUMBA_ENABLE_CUDASIM`` may be set any time before that.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
from collections.abc import Iterator

from .errors import BackendUnavailableError

BACKENDS = ("auto", "cpu", "cuda")
ENV_VAR = "GRAPHKERN_BACKEND"


def _parse_backend(value: str, source: str) -> str:
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
    _default_backend = _parse_backend(name, "argument 'name'") if isinstance(name, str) else _bad(name)


def _bad(name):
    raise TypeError(f"argument 'name': expected a backend name (str), found {type(name).__name__}")


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
    if not isinstance(name, str):
        _bad(name)
    token = _scoped_backend.set(_parse_backend(name, "argument 'name'"))
    try:
        yield name
    finally:
        _scoped_backend.reset(token)


def cuda_status() -> tuple[bool, str]:
    """Whether a CUDA device (or the simulator) is usable, and if not, why."""
    try:
        from numba import cuda  # numba-cuda's target when installed, else numba's deprecated built-in one
    except Exception as exc:  # pragma: no cover - depends on the installation
        return False, f"numba.cuda cannot be imported ({exc}); install the 'cuda' extra (numba-cuda)"
    from numba.core import config as numba_config

    if numba_config.ENABLE_CUDASIM:
        return True, "the CUDA simulator (NUMBA_ENABLE_CUDASIM=1)"
    try:
        if not cuda.is_available():
            return False, "no usable CUDA driver or GPU was found (numba.cuda.is_available() is False)"
        return True, f"GPU {cuda.get_current_device().name}"
    except Exception as exc:  # pragma: no cover - driver errors vary
        return False, f"the CUDA driver failed to initialise ({exc})"


def resolve_backend(backend: str | None, *arrays) -> str:
    """The concrete backend (``"cpu"`` or ``"cuda"``) for a call.

    ``auto`` picks cuda only when an input already lives on a GPU (a device array or a graph on the GPU), so
    host data never takes a round trip it did not ask for. An explicit cuda without a usable GPU raises
    :class:`BackendUnavailableError` saying why.
    """
    from ._cuda import is_device_array

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
