"""kernels/cpu and kernels/cuda are twins: one module per kernel family on each side, the names the host code
calls on either backend present on both, and the same parameters wherever both define a function of one
name, except where the backends differ by design (listed below with the reason). Read from the source with
``ast``: no GPU, no numba-cuda import.

The host-side input checks are written once, in graphkern._validate, over reductions that graphkern._cuda
runs on the device for device arrays: its checks of the same names and parameters only hand those over.
"""

import ast
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
    host, device = top_level(ROOT / "graphkern" / "_validate.py"), top_level(ROOT / "graphkern" / "_cuda.py")
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
