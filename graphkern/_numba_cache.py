"""Where Numba caches graphkern's compiled kernels: a per-user directory, never inside the package.

Numba's default writes ``__pycache__/*.nbi/*.nbc`` next to a module's source whenever that folder is
writable, which for a package installed into a virtual environment means inside site-packages. Those
files outlive ``pip uninstall`` (pip removes only what it installed), and the folders left behind become
namespace packages that shadow a later editable install of the same name. graphkern therefore puts a
locator of its own in front of Numba's in-tree one, for graphkern's own source files only:

- ``NUMBA_CACHE_DIR``, when set, wins (Numba's own locator, which stays first);
- otherwise ``$GRAPHKERN_CACHE_DIR`` or the platform's per-user cache folder (``$XDG_CACHE_HOME`` or
  ``~/.cache`` on Linux, ``~/Library/Caches`` on macOS, ``%LOCALAPPDATA%`` on Windows), under
  ``graphkern/numba/``, in a folder per Numba and llvmlite version and, below it, per source folder
  within the package (``kernels/cpu``, not the absolute path);
- where that folder cannot be written, Numba's remaining locators decide, as for any other package.

Entries are keyed by content, not by place: a checkout, an editable install and a wheel installed into a
virtual environment, holding the same source, share one set of entries (a CI run that installs graphkern
twice compiles each kernel once; ``graphkern compile`` in one environment serves the next). The stamp
that decides whether an entry is fresh is a hash of the function's source file *and of every graphkern
module that file imports, transitively*: a compiled function freezes the helpers it calls (``_simd``'s
vector operations, another kernel) and the module constants it reads, and Numba alone re-checks only the
function's own file. The same hash, shortened, is part of the entry's file name, so two versions of the
source (two branches, two installs) keep entries side by side instead of overwriting each other's.

:func:`install` must run before the first ``@njit(cache=True)`` decorator of graphkern is evaluated (the
locator is chosen when the decorator runs): importing this module runs it, and ``graphkern/__init__.py``
imports it before anything else.
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from functools import cache
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


def _package_path(py_file: str) -> Path:
    """A source file's path inside the installed package (``kernels/cpu/spmm.py``), the same for a
    checkout (where kernels/ and graph/ sit beside graphkern/) and an install (where they are inside)."""
    path = Path(py_file).resolve()
    if path.is_relative_to(_PACKAGE_DIR):
        return path.relative_to(_PACKAGE_DIR)
    return path.relative_to(_PACKAGE_DIR.parent)


def _module_file(parts: list[str]) -> Path | None:
    """The source file of module ``graphkern.<parts>`` (a package's ``__init__.py``), or None."""
    bases = [_PACKAGE_DIR]
    if parts and parts[0] in ("kernels", "graph"):
        bases.append(_PACKAGE_DIR.parent)  # a checkout
    for base in bases:
        for candidate in (base.joinpath(*parts).with_suffix(".py"), base.joinpath(*parts, "__init__.py")):
            if parts and candidate.is_file():
                return candidate
        if not parts and (base / "__init__.py").is_file():
            return base / "__init__.py"
    return None


# ``from .x import a``, ``from .. import a, b``, ``from graphkern.kernels.cpu import sort`` (also indented,
# inside functions); ``import graphkern.x``. Parenthesised name lists may span lines.
_FROM_IMPORT = re.compile(r"^[ \t]*from[ \t]+(\.+[\w.]*|graphkern(?:\.[\w.]+)?)[ \t]+import[ \t]+(\([^)]*\)|[^\n#]+)",
                          re.MULTILINE)
_PLAIN_IMPORT = re.compile(r"^[ \t]*import[ \t]+(graphkern[\w.]*)", re.MULTILINE)


@cache
def _imported_files(py_file: Path) -> tuple[Path, ...]:
    """The graphkern source files that ``py_file`` imports directly."""
    rel = _package_path(str(py_file))
    package = list(rel.parent.parts)  # a module's package; for __init__.py, the package itself
    text = py_file.read_text(encoding="utf-8")
    found = []
    for source, names in _FROM_IMPORT.findall(text):
        if source.startswith("."):
            dots = len(source) - len(source.lstrip("."))
            base = package[: len(package) - (dots - 1)] if dots - 1 <= len(package) else []
            parts = base + [p for p in source.lstrip(".").split(".") if p]
        else:
            parts = source.split(".")[1:]
        found.append(_module_file(parts))
        for name in re.findall(r"\b(\w+)\b(?:[ \t]+as[ \t]+\w+)?", names.strip("()")):
            if name != "as":
                found.append(_module_file([*parts, name]))  # ``from . import _simd``: a module, if one
    for source in _PLAIN_IMPORT.findall(text):
        found.append(_module_file(source.split(".")[1:]))
    return tuple(sorted({f.resolve() for f in found if f is not None} - {py_file}))


@cache
def source_stamp(py_file: str) -> str:
    """A hash of ``py_file`` and of every graphkern module it imports, transitively, with their paths in
    the package: what a compiled function of that file can depend on."""
    start = Path(py_file).resolve()
    seen, todo = {start}, [start]
    while todo:
        for dependency in _imported_files(todo.pop()):
            if dependency not in seen:
                seen.add(dependency)
                todo.append(dependency)
    digest = hashlib.sha256()
    for path in sorted(seen, key=_package_path):
        digest.update(str(_package_path(str(path)).as_posix()).encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _versions_folder() -> str:
    import llvmlite
    import numba

    return f"numba-{numba.__version__}-llvmlite-{llvmlite.__version__}"


def _locator_class():
    from numba.core import caching

    base = getattr(caching, "UserWideCacheLocator", None) or caching._UserWideCacheLocator

    class GraphkernCacheLocator(base):
        """Numba's user-wide locator, rooted at :func:`cache_root`, for graphkern's own files only, keyed
        by the source's content and its place in the package (see the module's docstring)."""

        def __init__(self, py_func, py_file):
            super().__init__(py_func, py_file)
            self._cache_path = str(cache_root() / self.get_suitable_cache_subpath(py_file))
            self._stamp = source_stamp(str(Path(py_file).resolve()))

        @classmethod
        def get_suitable_cache_subpath(cls, py_file):
            return str(Path(_versions_folder(), *_package_path(py_file).parent.parts))

        def get_source_stamp(self):
            return self._stamp

        def get_disambiguator(self):
            return f"{super().get_disambiguator()}-{self._stamp[:12]}"

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
