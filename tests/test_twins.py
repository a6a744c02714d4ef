"""kernels/cpu and kernels/cuda are twins: one module per kernel family on each side, the names the host code
calls on either backend present on both, and the same parameters wherever both define a function of one
name, except where the backends differ by design (listed below with the reason). Read from the source with
``ast``: no GPU, no numba-cuda import.

The host-side input checks are written once, in graphkern._validate, over reductions that graphkern._cuda
runs on the device for device arrays: its checks of the same names and parameters only hand those over.

The same holds for the driver packages graphkern._cpu and graphkern._cuda: the same modules, the same public
classes and functions, and in each class the same methods with the same parameters, so that host code
calls either backend's driver the same way. Across the whole host side (every module of graphkern/ and
graph/), only graphkern._backend imports the driver modules and only graphkern/_cuda/ imports kernels.cuda.
"""

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CPU = ROOT / "kernels" / "cpu"
GPU = ROOT / "kernels" / "cuda"

# kernels/cuda modules with no CPU twin: launch shapes, warp reductions, the reductions that validate
# device input (the CPU validates with NumPy in graphkern._validate)
CUDA_ONLY = {"launch", "warp", "reduce"}

# the names the host code (graph/graph.py, the dynamic graphs, the drivers) reaches on either backend's module
SHARED = {
    "sort": {"exclusive_scan", "histogram", "degrees_from_indptr", "expand_indptr", "scatter_by_eid", "count_sort",
             "coo_to_compressed", "transpose_compressed"},
    "segment_mm": {"segment_mm", "gather_mm", "segment_mm_backward_b"},
    "spmm": {"OPS", "REDUCERS", "spmm_csc_kernel", "spmm_coo_kernel"},
    "sddmm": {"OPS", "target_codes", "sddmm_kernel"},
    "gpma": {"EMPTY", "KEY_NONE", "TOMB", "WALL_LOW", "locate", "spread", "merge_sorted", "contains",
             "classify_inserts", "rebalance_level", "keep_pending"},
    "bfs": {"init_search"},
    "incremental_bfs": {"AFFECTED", "reattach", "seed_insertions"},
    "edge_softmax": set(),
}

# (module, name): why the two functions of that name take different parameters. Each must still differ:
# once the twins agree, the entry goes.
DIFFERENT = {
    ("spmm", "spmm_csc_kernel"): "the GPU compiles per accumulator dtype (float16 features accumulate in "
                                 "float32) and returns the (light, hub, finish) launches of its row split",
    ("spmm", "spmm_coo_kernel"): "the GPU compiles per accumulator dtype and returns (accumulate, pick_args): "
                                 "atomics, then the first edge attaining each max/min",
    ("sddmm", "sddmm_kernel"): "the CPU compiles per source format (it walks CSR/CSC rows or the COO); the GPU "
                               "always walks an edge list and compiles per accumulator dtype",
    ("gpma", "classify_inserts"): "the GPU also marks, in the same pass, which keys take effect and which are new",
    ("gpma", "rebalance_level"): "the CPU merges a window per thread; the GPU a window per block, by rank, "
                                 "through a scratch array",
    ("gpma", "keep_pending"): "the CPU compacts in place; the GPU marks the keys a compaction keeps",
    ("bfs", "init_search"): "the GPU search keeps its queues, counters and level state on the device",
    ("incremental_bfs", "reattach"): "the GPU packs candidates as level << 32 | parent under atomic.min",
    ("incremental_bfs", "seed_insertions"): "the GPU packs candidates as level << 32 | parent under atomic.min",
}


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(), filename=str(path))


def module_names(folder: Path) -> set[str]:
    return {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}


def top_level(path: Path) -> dict[str, ast.AST]:
    """Public top-level names: functions, assignments and imported names."""
    names = {}
    for node in _tree(path).body:
        if isinstance(node, ast.FunctionDef):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node
        elif isinstance(node, ast.ImportFrom):
            for alias in node.names:
                names[alias.asname or alias.name] = node
    return {name: node for name, node in names.items() if not name.startswith("_")}


def parameters(fn: ast.FunctionDef) -> tuple:
    """Names, kinds and defaults (annotations aside: the GPU side takes device arrays)."""
    a = fn.args
    positional = [p.arg for p in a.posonlyargs + a.args]
    defaults = [ast.unparse(d) for d in a.defaults]
    kwonly = [(p.arg, None if d is None else ast.unparse(d)) for p, d in zip(a.kwonlyargs, a.kw_defaults)]
    return (tuple(positional), tuple(defaults), tuple(kwonly), a.vararg and a.vararg.arg, a.kwarg and a.kwarg.arg)


def twin_functions():
    pairs = []
    for name in sorted(module_names(GPU) - CUDA_ONLY):
        cpu, gpu = top_level(CPU / f"{name}.py"), top_level(GPU / f"{name}.py")
        for fn in sorted(set(cpu) & set(gpu)):
            if isinstance(cpu[fn], ast.FunctionDef) and isinstance(gpu[fn], ast.FunctionDef):
                pairs.append((name, fn, cpu[fn], gpu[fn]))
    return pairs


def test_every_cuda_module_has_a_cpu_twin():
    assert module_names(GPU) - CUDA_ONLY <= module_names(CPU), module_names(GPU) - CUDA_ONLY - module_names(CPU)
    assert set(SHARED) == module_names(GPU) - CUDA_ONLY


@pytest.mark.parametrize("module", sorted(SHARED))
def test_the_names_the_host_code_calls_exist_on_both_sides(module):
    cpu, gpu = top_level(CPU / f"{module}.py"), top_level(GPU / f"{module}.py")
    assert SHARED[module] <= set(cpu), SHARED[module] - set(cpu)
    assert SHARED[module] <= set(gpu), SHARED[module] - set(gpu)


def test_functions_of_one_name_take_the_same_parameters():
    pairs = twin_functions()
    assert len(pairs) >= 15, [p[:2] for p in pairs]
    differ = {(m, fn) for m, fn, cpu, gpu in pairs if parameters(cpu) != parameters(gpu)}
    unexplained = sorted(differ - set(DIFFERENT))
    assert not unexplained, [(m, fn, parameters(c), parameters(g)) for m, fn, c, g in pairs if (m, fn) in unexplained]
    # an entry of DIFFERENT that no longer differs (or no longer exists on both sides) is stale
    assert set(DIFFERENT) <= differ, set(DIFFERENT) - differ


def test_locate_is_the_cpu_function_compiled_for_the_device():
    gpu = top_level(GPU / "gpma.py")
    node = gpu["locate"]
    assert isinstance(node, ast.Assign), "kernels/cuda/gpma.py defines its own locate"
    assert "locate.py_func" in ast.unparse(node.value)


def test_device_input_checks_are_the_host_ones_with_device_reductions():
    host = top_level(ROOT / "graphkern" / "_validate.py")
    device = top_level(ROOT / "graphkern" / "_cuda" / "__init__.py")
    for name in ("check_ids_in_range", "check_indptr", "check_permutation"):
        positional, defaults, keyword_only, varargs, varkw = parameters(host[name])
        assert keyword_only == (("reductions", "HOST_REDUCTIONS"),), name
        assert parameters(device[name]) == (positional, defaults, (), varargs, varkw), name
        body = [node for node in device[name].body if not isinstance(getattr(node, "value", None), ast.Constant)]
        assert len(body) == 1, f"graphkern._cuda.{name} does more than call the host check"
        call = ast.unparse(body[0])
        assert call.startswith(f"_validate.{name}(") and "reductions=DEVICE_REDUCTIONS" in call, call


def test_validation_reductions_use_no_atomics():
    """Validation meets arbitrary input: the device reductions combine blocks through per-block partials,
    never through atomics on one address."""
    source = (GPU / "reduce.py").read_text()
    calls = [ast.unparse(n.func) for n in ast.walk(ast.parse(source)) if isinstance(n, ast.Call)]
    assert not [c for c in calls if "atomic" in c], calls


def test_parameters_reads_kinds_and_defaults():
    fn = ast.parse("def f(a, b=1, *args, c, d=None, **kw): pass").body[0]
    assert parameters(fn) == (("a", "b"), ("1",), (("c", None), ("d", "None")), "args", "kw")


# ---------------------------------------------------------------------------------------- driver packages
CPU_DRIVER = ROOT / "graphkern" / "_cpu"
CUDA_DRIVER = ROOT / "graphkern" / "_cuda"
BACKEND = ROOT / "graphkern" / "_backend.py"
# the driver modules and the functions and classes the front ends take from them
FRONT_END_CALLS = {
    "sparse": {"spmm", "sddmm", "edge_softmax"},  # graphkern/sparse.py
    "bfs": {"search", "searches"},  # graphkern/traversal.py
    "segment": {"segment_mm", "gather_mm", "segment_mm_backward_b"},  # graphkern/segment.py
    "formats": {"arange", "expand_indptr", "degrees_from_indptr", "histogram", "scatter_by_eid",
                "coo_to_compressed", "transpose_compressed"},  # graph/graph.py, graph/_formats.py
    "pma": {"PackedStorage"},  # graph/dynamic.py
    "incremental": {"SearchState"},  # graphkern/incremental.py
}
# folder -> the package it installs as (pyproject.toml, [tool.setuptools.package-dir])
INSTALLED_AS = {"graphkern": "graphkern", "kernels": "graphkern.kernels", "graph": "graphkern.graph"}


def driver_modules(folder: Path) -> set[str]:
    """The driver modules of a package (its ``__init__`` aside: graphkern._cuda's holds the device-array
    helpers, which every CUDA path shares, and graphkern._cpu's only a docstring)."""
    return {p.stem for p in folder.glob("*.py") if p.stem != "__init__"}


def defined(path: Path) -> dict[str, ast.AST]:
    """Public classes, functions and assigned names a module defines (imported names aside)."""
    names = {}
    for node in _tree(path).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.Assign):
            names.update((t.id, node) for t in node.targets if isinstance(t, ast.Name))
    return {name: node for name, node in names.items() if not name.startswith("_") or name == "__all__"}


def methods(cls: ast.ClassDef) -> dict[str, ast.FunctionDef]:
    """The public methods (``__init__`` included) and class attributes of a class."""
    found = {}
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and (not node.name.startswith("_") or node.name == "__init__"):
            found[node.name] = node
        elif isinstance(node, ast.Assign):
            found.update((t.id, node) for t in node.targets if isinstance(t, ast.Name) and not t.id.startswith("_"))
    return found


def signature(node: ast.AST) -> tuple:
    """A method's decorators (static, property) and parameters; a class attribute's kind."""
    if isinstance(node, ast.FunctionDef):
        return tuple(ast.unparse(d) for d in node.decorator_list), parameters(node)
    return ("attribute",)


def test_driver_packages_have_the_same_modules():
    cpu, gpu = driver_modules(CPU_DRIVER), driver_modules(CUDA_DRIVER)
    assert cpu == gpu, (cpu ^ gpu)
    assert set(FRONT_END_CALLS) <= cpu, set(FRONT_END_CALLS) - cpu


@pytest.mark.parametrize("module", sorted(FRONT_END_CALLS))
def test_driver_modules_define_what_the_front_ends_call(module):
    for folder in (CPU_DRIVER, CUDA_DRIVER):
        names = defined(folder / f"{module}.py")
        assert FRONT_END_CALLS[module] <= set(names), (folder.name, FRONT_END_CALLS[module] - set(names))


def test_the_backend_imports_every_driver_module():
    """:func:`graphkern._backend.driver` loads each module of both packages, so ``driver(b).<module>``
    never depends on another import having loaded it first."""
    names = imported(BACKEND)
    for pkg in ("_cpu", "_cuda"):
        missing = {m for m in driver_modules(CPU_DRIVER) if f"graphkern.{pkg}.{m}" not in names}
        assert not missing, (pkg, missing)


@pytest.mark.parametrize("module", sorted(driver_modules(CPU_DRIVER)))
def test_driver_modules_define_the_same_names_and_signatures(module):
    cpu, gpu = defined(CPU_DRIVER / f"{module}.py"), defined(CUDA_DRIVER / f"{module}.py")
    assert set(cpu) == set(gpu), set(cpu) ^ set(gpu)
    assert ast.unparse(cpu["__all__"].value) == ast.unparse(gpu["__all__"].value)
    for name in sorted(cpu):
        a, b = cpu[name], gpu[name]
        assert type(a) is type(b), name
        if isinstance(a, ast.FunctionDef):
            assert signature(a) == signature(b), name
        elif isinstance(a, ast.ClassDef):
            ma, mb = methods(a), methods(b)
            assert set(ma) == set(mb), (name, set(ma) ^ set(mb))
            differ = {m: (signature(ma[m]), signature(mb[m])) for m in ma if signature(ma[m]) != signature(mb[m])}
            assert not differ, (name, differ)


def test_driver_classes_are_the_ones_the_host_code_takes():
    """DynamicGraph takes ``pma.PackedStorage`` and IncrementalBFS ``incremental.SearchState`` of the
    driver; each class has the methods they call."""
    for folder in (CPU_DRIVER, CUDA_DRIVER):
        storage = methods(defined(folder / "pma.py")["PackedStorage"])
        assert {"check_batch", "apply", "contains", "edges", "snapshot_formats", "out_degrees", "in_degrees",
                "device"} <= set(storage), folder
        state = methods(defined(folder / "incremental.py")["SearchState"])
        assert {"adopt_search", "split_keys", "concat", "relabel"} <= set(state), folder


def module_name(path: Path) -> tuple[str, bool]:
    """The module a source file installs as, and whether it is a package's ``__init__``."""
    rel = path.relative_to(ROOT)
    parts = [INSTALLED_AS[rel.parts[0]], *rel.with_suffix("").parts[1:]]
    is_init = parts[-1] == "__init__"
    return ".".join(parts[:-1] if is_init else parts), is_init


def imported(path: Path) -> set[str]:
    """Every module (or ``module.name``) a file imports, inside functions too, resolved to absolute names."""
    module, is_init = module_name(path)
    found = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module if is_init else module.rsplit(".", 1)[0]
                for _ in range(node.level - 1):
                    package = package.rsplit(".", 1)[0]
                base = f"{package}.{base}" if base else package
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def host_files():
    """Every module of the host side: graphkern/ (the driver packages among them) and graph/."""
    return sorted([*(ROOT / "graphkern").rglob("*.py"), *(ROOT / "graph").rglob("*.py")])


@pytest.mark.parametrize("path", host_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_kernels_cuda_is_imported_only_by_the_cuda_driver(path):
    """graphkern.dispatch's Kernel names kernel paths as strings ("kernels.cuda.spmm:..."), imported only
    when read: those are no imports of the module."""
    cuda_kernels = sorted(m for m in imported(path) if m.startswith("graphkern.kernels.cuda"))
    if path.parent != CUDA_DRIVER:
        assert not cuda_kernels, cuda_kernels


@pytest.mark.parametrize("path", host_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_driver_modules_are_imported_only_by_the_backend(path):
    """graphkern._backend.driver is the one place that picks a driver; a driver module may use its own
    package's ``__init__`` (graphkern._cuda's device-array helpers) but no driver module."""
    drivers = {f"graphkern.{pkg}.{m}" for pkg in ("_cpu", "_cuda") for m in driver_modules(CPU_DRIVER)}
    reached = sorted(m for m in imported(path) if m in drivers)
    if path != BACKEND:
        assert not reached, reached


def test_the_host_side_is_read_whole():
    """The import checks above see the front ends, the drivers, the graph and the subpackages, and they see
    an import of kernels.cuda that sits in a function."""
    files = {p.relative_to(ROOT).as_posix() for p in host_files()}
    assert {"graphkern/sparse.py", "graphkern/traversal.py", "graphkern/segment.py", "graph/graph.py",
            "graphkern/_cpu/sparse.py", "graphkern/_cuda/bfs.py", "graphkern/torch/__init__.py"} <= files
    assert "graphkern.kernels.cuda.bfs" in imported(CUDA_DRIVER / "bfs.py")


def test_the_import_checks_see_relative_and_nested_imports():
    names = imported(CUDA_DRIVER / "pma.py")
    assert "graphkern.kernels.cuda.gpma" in names  # ``from ..kernels.cuda import gpma as K`` in a method
    assert "graphkern._cuda.pma" in imported(BACKEND)
    assert module_name(ROOT / "graph" / "dynamic.py") == ("graphkern.graph.dynamic", False)
    assert module_name(CUDA_DRIVER / "__init__.py") == ("graphkern._cuda", True)


def test_importing_graphkern_loads_no_cuda_driver():
    """``import graphkern`` (and a CPU DynamicGraph with an IncrementalBFS, a Graph building its formats
    and a search of it) loads neither numba.cuda nor a CUDA driver module: a CPU-only process never pays
    for them."""
    code = ("import sys, graphkern as gk; dg = gk.DynamicGraph(3, backend='cpu'); dg.apply(insert=([0], [1])); "
            "gk.IncrementalBFS(dg, 0); g = gk.Graph.from_coo([0, 1], [1, 2]); g.csc(); g.in_degrees(); "
            "gk.bfs(g, 0, backend='cpu'); "
            "print(sorted(m for m in sys.modules if m == 'numba.cuda' or m.startswith('graphkern._cuda.')))")
    env = {k: v for k, v in os.environ.items() if k != "GRAPHKERN_BACKEND"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["[]"]
