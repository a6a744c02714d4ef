"""Every CUDA kernel compiles to PTX for sm_90, and (where ptxas is installed) fits its resource budgets.

The simulator runs kernels as Python, so a kernel that NVVM cannot compile, or one that spills registers
on a GPU, passes every simulated test. Here, without a GPU, NVVM compiles:

* every kernel of every specialising factory in ``graphkern.kernels.cuda`` (a ``functools.cache``'d
  function returning a kernel or a tuple of kernels: ``spmm_csc_kernel(op, reduce, pattern, acc)``,
  ``sddmm_kernel(op, pattern, acc)``, ...), its arguments drawn from the values the CUDA drivers pass:
  the module's ``OPS``/``REDUCERS``, the broadcast patterns :func:`graphkern._broadcast.analyse` produces,
  both accumulators, with the data dtypes each accumulator serves (float16/float32 and float64) and both
  index dtypes. By default a covering subset: every value of every dimension;
  ``GRAPHKERN_PTX_ALL=1`` compiles the full cross product (3,687 cases, hours of CPU);
* every module-level kernel, once, with int64 arrays and scalars.

Kernels and factories are discovered from the modules, and argument types are read from each kernel's
parameter names (a few roles: feature data, accumulators, index arrays) and from how its source uses a
parameter (subscripted: an array, with as many dimensions as its subscripts; otherwise a scalar).

With ptxas (``-arch=sm_90 -v``): no spill stores or loads, at most ``MAX_REGISTERS`` registers per
thread (so a block of 512 threads can be resident) and at most ``MAX_STATIC_SHARED`` bytes of static shared
memory (what every GPU grants without opting in to more). And no kernel carries line information
(``.loc`` directives): graphkern never asks for ``lineinfo`` or ``debug``.
"""

from __future__ import annotations

import ast
import functools
import importlib
import inspect
import itertools
import os
import pkgutil
import re
import shutil
import subprocess
import textwrap
import types as pytypes
from pathlib import Path

import numpy as np
import pytest

numba_config = pytest.importorskip("numba.core.config")
if numba_config.ENABLE_CUDASIM:
    pytest.skip("PTX compilation needs numba-cuda's real target (NUMBA_ENABLE_CUDASIM is on)",
                allow_module_level=True)

cuda = pytest.importorskip("numba.cuda")

CC = (9, 0)
MAX_REGISTERS = 128
MAX_STATIC_SHARED = 48 * 1024
FULL = os.environ.get("GRAPHKERN_PTX_ALL") == "1"

# (data dtype, accumulator) pairs the drivers pair up (graphkern._cuda.sparse._accumulator)
DATA = {"float32": ("float16", "float32"), "float64": ("float64",)}
IDTYPES = ("int32", "int64")
# parameter roles by name, for the factories' kernels
FEATURES = {"x", "w", "L", "R", "logits", "out"}
ACCUMULATED = {"acc_out"}
INDEXED = {"indptr", "indices", "eids", "src", "dst", "arg_u", "arg_e"}
FLAGS_PREFIXES = ("has_", "with_", "is_", "use_")
# the PTX directives of line information (``.loc`` must not match ``.local``)
LINE_INFO = re.compile(r"^\s*\.(loc|file)\s", re.M)


def _compile_ptx_works() -> str | None:
    """None, or why NVVM cannot compile here."""

    def probe(out):
        out[0] = 1

    try:
        cuda.compile_ptx(probe, "void(int64[::1])", cc=CC)
    except Exception as exc:  # noqa: BLE001 - any failure means no compiler here
        return f"numba.cuda.compile_ptx does not work here ({type(exc).__name__}: {str(exc).splitlines()[0]})"
    return None


_WHY_NOT = _compile_ptx_works()
if _WHY_NOT:
    pytest.skip(_WHY_NOT, allow_module_level=True)


def find_ptxas() -> str | None:
    """ptxas from PATH, ``CUDA_HOME``/``CUDA_PATH``, /usr/local/cuda or the nvidia-cuda-nvcc wheel."""
    found = shutil.which("ptxas")
    if found:
        return found
    roots = [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]
    try:
        import nvidia

        roots += [str(Path(p) / sub) for p in nvidia.__path__ for sub in ("cuda_nvcc", "cu13", "cu12")]
    except ImportError:
        pass
    for root in filter(None, roots):
        candidate = Path(root) / "bin" / "ptxas"
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


PTXAS = find_ptxas()


@pytest.fixture(scope="module", autouse=True)
def device_functions_for_sm90():
    """Device functions compile for the current device's compute capability; without a GPU there is none,
    so they are compiled for sm_90 like the kernels."""
    import numba.cuda.dispatcher as dispatcher_module

    if cuda.is_available():
        yield
        return
    original = dispatcher_module.get_current_device
    dispatcher_module.get_current_device = lambda: pytypes.SimpleNamespace(compute_capability=CC)
    try:
        yield
    finally:
        dispatcher_module.get_current_device = original


# ------------------------------------------------------------------------------------------ discovery

def kernel_modules():
    import graphkern.kernels.cuda as package

    return [importlib.import_module(f"{package.__name__}.{m.name}") for m in pkgutil.iter_modules(package.__path__)]


def is_kernel(obj) -> bool:
    """A ``@cuda.jit`` kernel (not a device function)."""
    return hasattr(obj, "py_func") and hasattr(obj, "targetoptions") and not obj.targetoptions.get("device")


def factories(module):
    # private factories (a leading underscore) make device functions for the public ones, compiled with them
    return [(name, obj) for name, obj in vars(module).items()
            if callable(obj) and hasattr(obj, "cache_info") and getattr(obj, "__module__", None) == module.__name__
            and not name.startswith("_")]


def module_kernels(module):
    return [(name, obj) for name, obj in vars(module).items()
            if is_kernel(obj) and getattr(obj.py_func, "__module__", None) == module.__name__]


@functools.cache
def broadcast_patterns(dot: bool) -> tuple:
    """Every pattern :func:`graphkern._broadcast.analyse` gives for feature shapes of up to three axes."""
    from graphkern._broadcast import analyse

    shapes = [(), (1,), (4,), (2, 1), (2, 3), (1, 3), (2, 1, 3), (1, 2, 1), (2, 2, 3), (2, 2, 1), (2, 1, 1)]
    seen = {}
    for lshape, rshape in itertools.product(shapes, shapes):
        try:
            pattern = analyse("dot" if dot else "mul", lshape, rshape).pattern
        except ValueError:
            continue
        seen.setdefault(pattern, None)
    return tuple(seen)


def factory_choices(module, factory) -> dict:
    """The values each factory parameter takes in the drivers."""
    choices = {}
    for name in inspect.signature(factory).parameters:
        if name == "op":
            choices[name] = tuple(module.OPS)
        elif name == "reduce":
            choices[name] = tuple(module.REDUCERS)
        elif name == "pattern":
            choices[name] = None  # depends on the op (dot has its own patterns)
        elif name == "acc":
            choices[name] = tuple(DATA)
        else:
            raise AssertionError(f"{module.__name__}.{factory.__name__}: no values known for parameter {name!r}")
    return choices


def factory_calls(module, factory):
    """``(kwargs, dtype, idtype)`` to compile: a covering subset, or every combination with FULL."""
    choices = factory_choices(module, factory)
    ops = choices.get("op", (None,))
    reducers = choices.get("reduce", (None,))
    accs = choices.get("acc", ("float32",))

    def row(op, reduce, pattern, acc, dtype, idtype):
        given = {"op": op, "reduce": reduce, "pattern": pattern, "acc": acc}
        return {name: given[name] for name in choices}, dtype, idtype

    def patterns(op):
        return broadcast_patterns(op == "dot") if "pattern" in choices else (None,)

    if FULL:
        return [row(op, reduce, pattern, acc, dtype, idtype)
                for op in ops for reduce in reducers for pattern in patterns(op) for acc in accs
                for dtype in DATA[acc] for idtype in IDTYPES]
    # Every value of every dimension at least once, the dimensions cycling out of step: each op, each
    # reducer, each broadcast pattern (counted separately for dot, which has its own) and each data dtype
    # and index dtype. An op, a reducer and a pattern each pick their own branch of the kernel body (the
    # factories fold them as constants), so one row per value compiles every branch; pairs of values
    # would compile the same branches again. The (data, index) dtype combinations start with the widest
    # (float64 with int64 ids, the most registers); any three rows meet every data dtype and any two
    # every index dtype, and a factory of six rows or more meets all six combinations.
    data = sorted(((dtype, acc) for acc in accs for dtype in DATA[acc]), key=lambda d: d[0] != "float64")
    idtypes = sorted(IDTYPES, reverse=True)  # int64 first
    combos = [(data[i % len(data)], idtypes[i % len(idtypes)]) for i in range(len(data) * len(idtypes))]
    n = max(len(ops), len(reducers), len(data), len(idtypes), max(len(patterns(op)) for op in ops))
    rows = []
    seen = {}
    for i in range(n):
        op, reduce = ops[i % len(ops)], reducers[i % len(reducers)]
        pats = patterns(op)
        c = seen[op == "dot"] = seen.get(op == "dot", -1) + 1
        (dtype, acc), idtype = combos[i % len(combos)]
        rows.append(row(op, reduce, pats[c % len(pats)], acc, dtype, idtype))
    if "dot" in ops:  # the one sddmm kernel with warp shuffles, at every pattern of its own
        for j, pattern in enumerate(patterns("dot")):
            (dtype, acc), idtype = combos[j % len(combos)]
            rows.append(row("dot", reducers[0], pattern, acc, dtype, idtype))
    return rows


# ------------------------------------------------------------------------------------------ signatures

def _callee(py_func, node: ast.Call):
    """The Python function of a device function ``node`` calls, if it is one (a global or closure name)."""
    if not isinstance(node.func, ast.Name):
        return None
    names = inspect.getclosurevars(py_func)
    target = names.nonlocals.get(node.func.id, names.globals.get(node.func.id))
    return getattr(target, "py_func", None)


@functools.cache
def parameter_shapes(py_func) -> dict:
    """For each parameter: the number of dimensions it is used with (0: a scalar), following it into the
    device functions it is passed to."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(py_func)))
    fn = next(node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef))
    params = [a.arg for a in fn.args.args]
    dims = dict.fromkeys(params, 0)

    def use(name, ndim):
        if name in dims:
            dims[name] = max(dims[name], ndim)

    for node in ast.walk(fn):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
            index = node.slice
            use(node.value.id, len(index.elts) if isinstance(index, ast.Tuple) else 1)
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.attr in ("size", "shape"):
            use(node.value.id, 1)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute) and node.value.attr == "shape":
            if isinstance(node.value.value, ast.Name) and isinstance(node.targets[0], ast.Tuple):
                use(node.value.value.id, len(node.targets[0].elts))
        elif isinstance(node, ast.Call):
            func = ast.unparse(node.func)
            if func.startswith("cuda.atomic.") and len(node.args) > 1 and isinstance(node.args[0], ast.Name):
                # cuda.atomic.add(arr, (i, k), v): the index tuple gives the dimensions
                index = node.args[1]
                use(node.args[0].id, len(index.elts) if isinstance(index, ast.Tuple) else 1)
                continue
            callee = _callee(py_func, node)
            if callee is not None:
                inner = list(parameter_shapes(callee).values())
                for arg, ndim in zip(node.args, inner):
                    if isinstance(arg, ast.Name):
                        use(arg.id, ndim)
    return dims


def signature(kernel, dtype="int64", idtype="int64", acc="int64"):
    from numba.cuda import types

    out = []
    for name, ndim in parameter_shapes(kernel.py_func).items():
        if ndim == 0:
            out.append(types.boolean if name.startswith(FLAGS_PREFIXES) else types.int64)
            continue
        if name in FEATURES:
            elem = dtype
        elif name in ACCUMULATED:
            elem = acc
        elif name in INDEXED:
            elem = idtype
        else:
            elem = "int64"
        out.append(types.Array(getattr(types, elem), ndim, "C"))
    return tuple(out)


def compile_options(kernel) -> dict:
    """The kernel's own jit options that compile_ptx understands (so a kernel asking for lineinfo shows it)."""
    accepted = inspect.signature(cuda.compile_ptx).parameters
    return {k: v for k, v in kernel.targetoptions.items() if k in accepted and k not in ("device",)}


def compile_cases():
    cases = []
    for module in kernel_modules():
        short = module.__name__.rsplit(".", 1)[1]
        for fname, factory in factories(module):
            for kw, dtype, idtype in factory_calls(module, factory):
                label = ",".join(f"{v}" for v in kw.values())
                cases.append(pytest.param(("factory", module.__name__, fname, tuple(kw.items()), dtype, idtype),
                                          id=f"{short}.{fname}[{label}]-{dtype}-{idtype}"))
        for kname, _ in module_kernels(module):
            cases.append(pytest.param(("kernel", module.__name__, kname, (), "int64", "int64"),
                                      id=f"{short}.{kname}"))
    return cases


def kernels_of(case):
    kind, module_name, name, kw, dtype, idtype = case
    module = importlib.import_module(module_name)
    if kind == "kernel":
        return [(name, getattr(module, name))], "int64", "int64", "int64"
    made = getattr(module, name)(**dict(kw))
    made = made if isinstance(made, tuple) else (made,)
    acc = dict(kw).get("acc", "float32")
    return [(k.py_func.__name__, k) for k in made if is_kernel(k)], dtype, idtype, acc


# ------------------------------------------------------------------------------------------ ptxas

_RESOURCES = re.compile(r"Used (\d+) registers.*?(?:, (\d+) bytes smem)?(?:,|$)", re.M)


def ptxas_report(ptx: str, tmp_path) -> dict:
    """Registers, static shared memory, stack frame and spills of the one entry in ``ptx``."""
    src = tmp_path / "kernel.ptx"
    src.write_text(ptx)
    # a kernel calling into the device runtime (grid sync) is assembled as relocatable code, to be linked
    # with libcudadevrt as numba-cuda does at load time
    relocatable = ["-c"] if ".extern .func" in ptx else []
    proc = subprocess.run([PTXAS, f"-arch=sm_{CC[0]}{CC[1]}", "-v", *relocatable, str(src), "-o",
                           str(tmp_path / "kernel.cubin")],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    text = proc.stdout + proc.stderr
    regs = re.search(r"Used (\d+) registers", text)
    smem = re.search(r"(\d+) bytes smem", text)
    frame = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", text)
    assert regs and frame, text
    return {"registers": int(regs.group(1)), "smem": int(smem.group(1)) if smem else 0,
            "stack": int(frame.group(1)), "spill_stores": int(frame.group(2)), "spill_loads": int(frame.group(3))}


# ------------------------------------------------------------------------------------------ the tests

def test_discovery_finds_the_drivers_factories_and_kernels():
    found = {(m.__name__.rsplit(".", 1)[1], n) for m in kernel_modules() for n, _ in factories(m)}
    for expected in [("spmm", "spmm_csc_kernel"), ("spmm", "spmm_coo_kernel"), ("sddmm", "sddmm_kernel"),
                     ("edge_softmax", "rows_kernel"), ("edge_softmax", "hub_kernels")]:
        assert expected in found, found
    assert sum(len(module_kernels(m)) for m in kernel_modules()) >= 20
    # the covering subset meets every value of every dimension
    from graphkern.kernels.cuda import spmm

    calls = factory_calls(spmm, spmm.spmm_csc_kernel)
    assert {kw["op"] for kw, _, _ in calls} == set(spmm.OPS)
    assert {kw["reduce"] for kw, _, _ in calls} == set(spmm.REDUCERS)
    assert {kw["pattern"] for kw, _, _ in calls} == set(broadcast_patterns(False))
    assert {(d, i) for _, d, i in calls} == set(itertools.product(("float16", "float32", "float64"), IDTYPES))


@pytest.mark.parametrize("case", compile_cases())
def test_kernel_compiles_for_sm90_within_budget(case, tmp_path):
    made, dtype, idtype, acc = kernels_of(case)
    assert made, case
    for name, kernel in made:
        sig = signature(kernel, dtype, idtype, acc)
        ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=CC, **compile_options(kernel))
        assert not LINE_INFO.search(ptx), f"{name} carries line information"
        if PTXAS is None:
            continue
        report = ptxas_report(ptx, tmp_path)
        assert report["spill_stores"] == 0 and report["spill_loads"] == 0, (name, report)
        assert report["registers"] <= MAX_REGISTERS, (name, report)
        assert report["smem"] <= MAX_STATIC_SHARED, (name, report)


def test_ptxas_is_found_or_its_absence_is_said():
    if PTXAS is None:
        pytest.skip("ptxas is not installed (PATH, CUDA_HOME, /usr/local/cuda, nvidia-cuda-nvcc): the resource "
                    "budgets are not checked, only compilation to PTX")
    proc = subprocess.run([PTXAS, "--version"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0


def test_no_kernel_asks_for_line_information_or_debug():
    for module in kernel_modules():
        for name, kernel in module_kernels(module):
            assert not kernel.targetoptions.get("lineinfo") and not kernel.targetoptions.get("debug"), name
    assert not numba_config.CUDA_DEBUGINFO_DEFAULT, "NUMBA_CUDA_DEBUGINFO is set in this environment"


def test_parameter_shapes_reads_the_source():
    def kernel(a, b, n, flag, c, d):
        N, D = c.shape
        for i in range(a.size):
            b[i, 0] = a[i] + n
        cuda.atomic.add(d, (0, 1), 1)

    assert parameter_shapes(kernel) == {"a": 1, "b": 2, "n": 0, "flag": 0, "c": 2, "d": 2}
    np.testing.assert_equal(len(signature(pytypes.SimpleNamespace(py_func=kernel))), 6)
    assert LINE_INFO.search("\t.loc\t1 12 3\n") and not LINE_INFO.search("\t.local .align 8 .b8 x[16];\n")
