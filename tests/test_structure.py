"""The shape of the source tree: module sizes and the import graph between graphkern's own modules.

Imports run one way: no module reaches itself again through the imports of the modules it imports, counting
the imports inside functions too (a late import hides a cycle from Python, not from the reader).

Read from the source files (ast), not from an import: the three folders that install as graphkern
(graphkern/, kernels/ as graphkern.kernels, graph/ as graphkern.graph, see pyproject.toml) are walked
as they are in the checkout.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# folder -> the package it installs as
PACKAGES = {"graphkern": "graphkern", "kernels": "graphkern.kernels", "graph": "graphkern.graph"}
MAX_LINES = 600
# Modules still past MAX_LINES, each being split; an entry goes once its module is within the limit
# (test_pending_lists_are_current says when).
PENDING_SPLITS = set()


def _modules() -> dict:
    """Module name -> (path relative to the root, whether it is a package's __init__)."""
    found = {}
    for folder, package in PACKAGES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            is_init = parts[-1] == "__init__"
            if is_init:
                parts = parts[:-1]
            found[".".join([package, *parts])] = (path.relative_to(ROOT).as_posix(), is_init)
    return found


MODULES = _modules()


def _targets(module: str, is_init: bool, node) -> list:
    """The graphkern modules one import statement names (a name that is not a module counts as its
    module's import). Implicit imports of parent packages are left out: every module would otherwise
    reach graphkern/__init__, which imports nearly everything."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names if alias.name in MODULES]
    if node.level:
        base = module if is_init else module.rsplit(".", 1)[0]
        for _ in range(node.level - 1):
            base = base.rsplit(".", 1)[0]
        base = f"{base}.{node.module}" if node.module else base
    else:
        base = node.module or ""
    targets = []
    for alias in node.names:
        if f"{base}.{alias.name}" in MODULES:
            targets.append(f"{base}.{alias.name}")
        elif base in MODULES:
            targets.append(base)
    return targets


def _is_type_checking(node) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and getattr(test, "id", getattr(test, "attr", None)) == "TYPE_CHECKING"


def _import_graph() -> tuple[dict, dict]:
    """``(module_level, in_functions)``: for each module, the modules it imports when it is imported, and
    the ones its functions import when they run."""
    module_level, in_functions = {}, {}
    for module, (path, is_init) in MODULES.items():
        _collect_imports(module, is_init, ast.parse((ROOT / path).read_text(encoding="utf-8")), module_level,
                         in_functions)
    return module_level, in_functions


def _collect_imports(module: str, is_init: bool, tree, module_level: dict, in_functions: dict,
                     inside_function: bool = False) -> None:
    """Add the graphkern modules that ``tree`` (a module's syntax) imports to ``module_level`` or, for the
    imports inside a function, a method or a lambda at any depth, to ``in_functions``."""
    for child in ast.iter_child_nodes(tree):
        if _is_type_checking(child):
            continue
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            graph = in_functions if inside_function else module_level
            graph.setdefault(module, set()).update(t for t in _targets(module, is_init, child) if t != module)
        _collect_imports(module, is_init, child, module_level, in_functions,
                         inside_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))


def _cycles(graph: dict) -> list:
    """The strongly connected components of more than one module (each holds a cycle), as frozensets."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def connect(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return found


def _line_count(path: str) -> int:
    return len((ROOT / path).read_text(encoding="utf-8").splitlines())


def test_modules_are_at_most_600_lines():
    too_long = {path: _line_count(path) for path, _ in MODULES.values()
                if path not in PENDING_SPLITS and _line_count(path) > MAX_LINES}
    assert not too_long, f"modules past {MAX_LINES} lines (split them by job): {too_long}"


def test_module_level_imports_have_no_cycle():
    module_level, _ = _import_graph()
    assert not _cycles(module_level), [sorted(c) for c in _cycles(module_level)]


def _all_imports() -> dict:
    """Module -> every module it imports, at module level or inside its functions."""
    module_level, in_functions = _import_graph()
    return {m: module_level.get(m, set()) | in_functions.get(m, set()) for m in set(module_level) | set(in_functions)}


def test_imports_in_functions_close_no_cycle():
    cycles = [sorted(c) for c in _cycles(_all_imports())]
    assert not cycles, f"import cycles through imports inside functions: {cycles}"


def test_pending_lists_are_current():
    """Each exception still holds: a module split below the limit leaves the list."""
    for path in PENDING_SPLITS:
        assert (ROOT / path).exists(), f"{path} is gone: remove it from PENDING_SPLITS"
        assert _line_count(path) > MAX_LINES, f"{path} is within {MAX_LINES} lines: remove it from PENDING_SPLITS"


def test_the_cycle_finder_finds_cycles_through_imports_in_functions():
    """The checks above can fail: a late import back to an importer is a cycle, a one-way chain is not."""
    module_level, in_functions = _import_graph()
    assert module_level["graphkern.graph.graph"] >= {"graphkern.graph.transform", "graphkern.graph.convert"}
    back = {**_all_imports(), "graphkern.graph.transform": {"graphkern.graph.graph"}}
    assert [c for c in _cycles(back) if {"graphkern.graph.graph", "graphkern.graph.transform"} <= c]
    assert _cycles({"a": {"b"}, "b": {"c"}}) == []
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [frozenset("abc")]
    late = ast.parse("class C:\n    def f(self):\n        from .graph import Graph\n")
    at_import, in_functions = {}, {}
    _collect_imports("graphkern.graph.transform", False, late, at_import, in_functions)
    assert (at_import, in_functions) == ({}, {"graphkern.graph.transform": {"graphkern.graph.graph"}})


@pytest.mark.parametrize("module, is_init, source, expected", [
    ("graphkern.sparse", False, "from . import _cuda", ["graphkern._cuda"]),
    ("graphkern.sparse", False, "from .kernels.cpu import spmm as _spmm", ["graphkern.kernels.cpu.spmm"]),
    ("graphkern.sparse", False, "from ._validate import check_choice", ["graphkern._validate"]),
    ("graphkern.sparse", False, "import graphkern.sparse", []),
    ("graphkern.sparse", False, "import numpy as np", []),
    ("graphkern.kernels.cpu.sort", False, "from .partition import nnz_balanced_row_bounds",
     ["graphkern.kernels.cpu.partition"]),
    ("graphkern.graph.dynamic", False, "from .. import _memory", ["graphkern._memory"]),
    ("graphkern.graph", True, "from . import temporal, interop", ["graphkern.graph.temporal",
                                                               "graphkern.graph.interop"]),
    ("graphkern.graph", True, "from .graph import Graph", ["graphkern.graph.graph"]),
])
def test_import_targets_resolve_as_python_does(module, is_init, source, expected):
    """The resolver the checks above rely on (a module importing itself is left out later)."""
    targets = _targets(module, is_init, ast.parse(source).body[0])
    assert [t for t in targets if t != module] == expected
