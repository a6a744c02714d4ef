"""The fast tier reaches every public entry point and every kernel family, on the CPU, under the CUDA
simulator and under MPI.

``python tools/run_tests.py --fast`` runs the tests marked ``@pytest.mark.fast`` (a few minutes with a warm
Numba cache): one test a family, each against its NumPy/SciPy reference as in the full suite. This test
reads the marked tests (and the module-level helpers and fixtures they use) and fails when a public name
is missing from all of them, so a new entry point has to join the tier. The public names come from the
modules' ``__all__`` and the public methods of the classes users build, not from a list kept here.
"""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import graphkern as gk

pytestmark = pytest.mark.fast

TESTS = Path(__file__).resolve().parent


def _is_fast_mark(node: ast.expr) -> bool:
    """``pytest.mark.fast`` anywhere in a decorator (also on one ``pytest.param`` of a parametrization,
    and in a list assigned to ``pytestmark``)."""
    return any(isinstance(sub, ast.Attribute) and sub.attr == "fast" and isinstance(sub.value, ast.Attribute)
               and sub.value.attr == "mark" for sub in ast.walk(node))


def _names_used(node: ast.AST, helpers: dict, seen: set[str]) -> set[str]:
    """Identifiers, attribute names, argument names and string constants in ``node``, and in the module's
    helper functions and fixtures that it names (transitively)."""
    names = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name):
            names.add(sub.id)
        elif isinstance(sub, ast.Attribute):
            names.add(sub.attr)
        elif isinstance(sub, ast.arg):
            names.add(sub.arg)
        elif isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            names.update(sub.value.replace(".", " ").replace("(", " ").split())
    for name in sorted(names & helpers.keys() - seen):
        seen.add(name)
        names |= _names_used(helpers[name], helpers, seen)
    return names


def fast_tier_names(folder: Path) -> tuple[int, set[str]]:
    """The number of fast tests in ``folder``'s test files and every name they use."""
    count, names = 0, set()
    conftest = folder / "conftest.py"
    fixtures = {f.name: f for f in ast.walk(ast.parse(conftest.read_text(encoding="utf-8")))
                if isinstance(f, ast.FunctionDef)} if conftest.exists() else {}
    for path in sorted(folder.glob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        module_fast = any(isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "pytestmark"
                                                               for t in node.targets) and _is_fast_mark(node.value)
                          for node in tree.body)
        functions = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)]
        helpers = {**fixtures, **{f.name: f for f in functions if not f.name.startswith("test_")}}
        for node in functions:
            if node.name.startswith("test_") and (module_fast or any(_is_fast_mark(d) for d in node.decorator_list)):
                count += 1
                names |= _names_used(node, helpers, set())
    return count, names


def _public_methods(cls) -> set[str]:
    return {name for name, member in inspect.getmembers(cls) if not name.startswith("_")
            and (callable(member) or isinstance(member, (classmethod, staticmethod)))}


def _entry_points(module, names) -> set[str]:
    """The names a user calls or builds: not constants, submodules, exception classes (raised, tested by
    the error tests) or the records calls return (``BFSResult``, the ``CSR`` tuple)."""
    kept = set()
    for name in names:
        obj = getattr(module, name)
        if not callable(obj) or inspect.ismodule(obj):
            continue
        if inspect.isclass(obj) and (issubclass(obj, (BaseException, tuple)) or name.endswith("Result")):
            continue
        kept.add(name)
    return kept


def _cpu_entry_points() -> dict[str, set[str]]:
    import graphkern.graph500
    import graphkern.torch
    import graphkern.torch.ops

    torch_names = set(graphkern.torch.__all__) - set(graphkern.torch.ops.__all__)
    return {
        "graphkern": _entry_points(gk, gk.__all__),
        "graphkern.graph": _entry_points(gk.graph, gk.graph.__all__),
        "graphkern.graph500": _entry_points(graphkern.graph500, graphkern.graph500.__all__),
        "graphkern.torch (layers and autograd ops; one DGL-named op stands for the generated ones)":
            _entry_points(graphkern.torch, torch_names) | {"copy_u_sum"},
        "Graph": _public_methods(gk.Graph),
        "DynamicGraph": _public_methods(gk.DynamicGraph),
        "IncrementalBFS": _public_methods(gk.IncrementalBFS),
        "the command line (graphkern SUBCOMMAND)": {"info", "bench", "compile", "graph500"},
    }


# the CUDA backend's entry points: every family it runs, the device graph and the torch path
CUDA_ENTRY_POINTS = {"spmm", "sddmm", "edge_softmax", "bfs", "segment_mm", "gather_mm", "DynamicGraph",
                     "IncrementalBFS", "to", "csc", "csr", "GraphConv", "GATConv"}


def _missing(required: dict[str, set[str]], used: set[str]) -> list[str]:
    return [f"{where}: {', '.join(sorted(names - used))}" for where, names in required.items() if names - used]


def test_the_fast_tier_reaches_every_public_entry_point_on_the_cpu():
    count, used = fast_tier_names(TESTS)
    assert count >= 20, f"only {count} fast tests in tests/"
    missing = _missing(_cpu_entry_points(), used)
    assert not missing, "public names no fast test uses (mark a test that calls them @pytest.mark.fast):\n" + \
        "\n".join(missing)


def test_the_fast_tier_reaches_every_cuda_family_under_the_simulator():
    count, used = fast_tier_names(TESTS / "cuda")
    assert count >= 5, f"only {count} fast tests in tests/cuda"
    missing = _missing({"the CUDA backend": CUDA_ENTRY_POINTS}, used)
    assert not missing, "\n".join(missing)


def test_the_fast_tier_reaches_every_distributed_entry_point_under_mpi():
    # read, not imported: importing mpi4py's MPI here would start MPI inside a test worker
    source = Path(gk.__file__).resolve().parent / "distributed" / "__init__.py"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    public = next(ast.literal_eval(node.value) for node in tree.body if isinstance(node, ast.Assign)
                  and any(getattr(t, "id", "") == "__all__" for t in node.targets))
    public = {name for name in public if not name.endswith(("Error", "Result"))}  # raised, returned
    count, used = fast_tier_names(TESTS / "mpi")
    assert count >= 2, f"only {count} fast tests in tests/mpi"
    missing = _missing({"graphkern.distributed": public}, used)
    assert not missing, "\n".join(missing)
