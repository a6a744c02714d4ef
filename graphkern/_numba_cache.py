"""Where Numba caches graphkern's compiled kernels: a per-user directory, never inside the package.

Numba's default writes ``__pycache__/*.nbi/*.nbc`` next to a module's source whenever that folder is
writable, which for a package installed into a virtual environment means inside site-packages. Those
files outlive ``pip uninstall`` (pip removes only what it installed), and the folders left behind become
namespace packages that shadow a later editable install of the same name. graphkern therefore puts a
locator of its own in front of Numba's in-tree one, for graphkern's own source files only:

- ``NUMBA_CACHE_DIR``, when set, wins (Numba's own locator, which stays first);
- otherwise ``$GRAPHKERN_CACHE_DIR`` or the platform's per-user cache folder (``$XDG_CACHE_HOME`` or
  ``~/.cache`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows), under
  ``graphkern/numba/``, one subfolder per source folder (Numba's own hashing of the folder path, so two
  checkouts or environments never share entries);
- where that folder cannot be written, Numba's remaining locators decide, as for any other package.

:func:`install` must run before the first ``@njit(cache=True)`` decorator of graphkern is evaluated (the
locator is chosen when the decorator runs): importing this module runs it, and ``graphkern/__init__.py``
imports it before anything else.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ENV_VAR = "GRAPHKERN_CACHE_DIR"
# graphkern's three source folders (graphkern/, kernels/, graph/) share this parent in a checkout; in an
# installed package they all live under graphkern/
_PACKAGE_DIR = Path(__file__).resolve().parent
_SOURCE_ROOTS = (_PACKAGE_DIR, _PACKAGE_DIR.parent / "kernels", _PACKAGE_DIR.parent / "graph")


def cache_root() -> Path:
    """The folder graphkern's kernels are cached under (``NUMBA_CACHE_DIR`` aside)."""
    explicit = os.environ.get(ENV_VAR)
    if explicit:
        return Path(explicit)
    if sys.platform == "win32":
        base = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        base = Path.home() / "Library" / "Caches"
    else:
        base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "graphkern" / "numba"


def is_graphkern_source(py_file: str) -> bool:
    path = Path(py_file).resolve()
    return any(path.is_relative_to(root) for root in _SOURCE_ROOTS)


def _locator_class():
    from numba.core import caching

    base = getattr(caching, "UserWideCacheLocator", None) or caching._UserWideCacheLocator

    class GraphkernCacheLocator(base):
        """Numba's user-wide locator, rooted at :func:`cache_root`, for graphkern's own files only."""

        def __init__(self, py_func, py_file):
            super().__init__(py_func, py_file)
            self._cache_path = str(cache_root() / self.get_suitable_cache_subpath(py_file))

        @classmethod
        def from_function(cls, py_func, py_file):
            if not is_graphkern_source(py_file):
                return None
            return super().from_function(py_func, py_file)

    return GraphkernCacheLocator


def _impl_classes():
    """Numba's cache implementations that hold a locator list (names differ between Numba versions)."""
    from numba.core import caching

    # graphkern's CUDA kernels are compiled per process (no cache=True), and numba.cuda must not be
    # imported before the simulator switch has had its chance: only the CPU target's list is changed
    return [getattr(caching, name) for name in ("CacheImpl", "_CacheImpl") if hasattr(caching, name)]


_installed = None


def install() -> None:
    """Put graphkern's locator right after Numba's ``NUMBA_CACHE_DIR`` locator (idempotent)."""
    global _installed
    if _installed is None:
        _installed = _locator_class()
    for impl in {id(c): c for c in _impl_classes()}.values():
        classes = impl.__dict__.get("_locator_classes")
        if classes is None or any(getattr(c, "__name__", "") == "GraphkernCacheLocator" for c in classes):
            continue
        impl._locator_classes = [classes[0], _installed, *classes[1:]]


install()
