"""The one place that picks a backend's driver package: :func:`driver`.

``graphkern._cpu`` and ``graphkern._cuda`` are twin packages (the same module names, classes, functions
and parameters; tests/test_twins.py compares them). Host code resolves the backend
(:func:`graphkern._config.resolve_backend`, or the backend of a call's plan), asks :func:`driver` for its
package and calls that, with no branch on the device of its own: the sparse kernels
(``driver(plan.backend).sparse.spmm(...)``), BFS (``.bfs``), the segment products (``.segment``), the
format builds of a Graph (``.formats``), the dynamic graph's storage (``.pma``) and the incremental BFS's
state (``.incremental``). The CUDA driver modules are imported only when the CUDA backend is asked for,
so a CPU-only process never loads them (nor ``numba.cuda``).
"""

from __future__ import annotations

from types import ModuleType

from ._config import resolve_backend

__all__ = ["driver", "resolve_driver"]


def driver(backend: str) -> ModuleType:
    """The driver package of the concrete backend ``backend`` (``"cpu"`` or ``"cuda"``), its driver
    modules (``sparse``, ``bfs``, ``segment``, ``formats``, ``pma``, ``incremental``) imported.

    Examples
    --------
    >>> from graphkern._backend import driver
    >>> cpu = driver("cpu")
    >>> cpu.__name__, cpu.pma.PackedStorage.device
    ('graphkern._cpu', 'cpu')
    """
    if backend == "cpu":
        from . import _cpu
        from ._cpu import bfs, formats, incremental, pma, segment, sparse  # noqa: F401 - attributes of the package

        return _cpu
    if backend == "cuda":
        from . import _cuda
        from ._cuda import bfs, formats, incremental, pma, segment, sparse  # noqa: F401 - attributes of the package

        return _cuda
    raise ValueError(f"expected a concrete backend 'cpu' or 'cuda', found {backend!r}")


def resolve_driver(backend: str | None, *arrays) -> ModuleType:
    """The driver package for a call's ``backend=`` argument and inputs (:func:`resolve_backend`: ``auto``
    picks cuda only for data already on a GPU; an unusable cuda raises BackendUnavailableError)."""
    return driver(resolve_backend(backend, *arrays))
