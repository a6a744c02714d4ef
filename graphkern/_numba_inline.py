"""Three of Numba's compile-time hot spots that graphkern's kernels hit, removed without changing the code
Numba generates.

graphkern's CPU kernels are built from ``@njit(inline="always")`` helpers (the SIMD operations, the
message and reduction steps of g-SpMM and g-SDDMM), so that the op, the reducer and the layout fold as
constants into one loop. A kernel inlines dozens of call sites, and a process that compiles many
specialisations (``graphkern compile``, the tests) inlines the same helpers again in every one. Profiled
on cache-blocked g-SpMM specialisations, three parts of Numba's pipeline did work that changed nothing:

``inline_ir``, one copy memo
    Numba inlines each call site by copying the callee's IR twice (``InlineWorker.inline_ir``, its inner
    ``copy_ir``), and it deep-copies the IR one block at a time, each block with a fresh ``copy.deepcopy``
    memo: every block then copies the whole variable scope of the callee again (a ``Var`` deep-copies its
    ``Scope``, and the scope holds every variable). The work grows with blocks times variables, for every
    call site: on one blocked g-SpMM specialisation the ``inline_inlinables`` pass took 10.3 of the 17.7 s
    of Numba's pipeline, nearly all of it in ``copy.deepcopy``. graphkern's copy uses one memo for all the
    blocks of a copy: the same IR, whose blocks share one copy of the scope, as the blocks of the IR they
    were copied from do (``inline_ir`` already treated them as one scope).
``inline_function``, the callee's untyped IR once per process
    For every call site, Numba runs the untyped half of its pipeline (bytecode, IR, its own inlining, dead
    branches) on the callee's Python function again, and ``inline_ir`` then copies that IR before it
    changes anything ("Always copy the callee IR, it gets mutated"). graphkern keeps the IR the untyped
    passes produced, per function and compiler flags, and hands the same one to ``inline_ir`` at the next
    call site, which copies it as before. The flags change that the untyped run makes on the caller's
    flags (SSA off) is made on a cache hit too.
``copy_propagate``, the fixed point's snapshot
    The copy propagation of the parfor passes iterates its data-flow equations to a fixed point and
    deep-copies the per-block sets of copies at each step, to compare with the next. The sets hold pairs
    of variable names (strings), and the loop replaces them, never changes them in place: a copy of each
    set is the same snapshot without walking every string through ``copy.deepcopy``.

:func:`install` recompiles each function from Numba's own source with those lines replaced. Nothing else
changes, and the generated machine code is the same (tests/test_numba_inline.py compares the assembly of
kernels compiled both ways). A change applies only where Numba's source holds the exact lines it replaces
(Numba 0.62.1 and 0.68.1, the versions checked, do); otherwise that function of Numba runs unchanged.
``GRAPHKERN_NUMBA_INLINE=numba`` leaves Numba unchanged altogether. :func:`installed` and
:func:`installed_changes` say what applies. Importing the module installs it (``graphkern/__init__.py``
imports it before any kernel module).
"""

from __future__ import annotations

import inspect
import os
import textwrap

ENV_VAR = "GRAPHKERN_NUMBA_INLINE"

_PER_BLOCK_COPY = """\
for block_label, block in the_ir.blocks.items():
    new_block = copy.deepcopy(the_ir.blocks[block_label])
    kernel_copy.blocks[block_label] = new_block
"""
_ONE_MEMO_COPY = """\
memo = {}  # graphkern: one memo for the whole copy (graphkern/_numba_inline.py)
for block_label, block in the_ir.blocks.items():
    new_block = copy.deepcopy(the_ir.blocks[block_label], memo)
    kernel_copy.blocks[block_label] = new_block
"""
_UNTYPED_PASSES_EACH_CALL = """\
callee_ir = self.run_untyped_passes(function)
"""
_UNTYPED_PASSES_ONCE = """\
callee_ir = _graphkern_untyped_ir(self, function)  # graphkern: once per function (graphkern/_numba_inline.py)
"""
_DEEP_SNAPSHOT = "new_point = copy.deepcopy(out_copies)\n"
_SET_SNAPSHOT = "new_point = {label: set(copies) for label, copies in out_copies.items()}  # graphkern\n"

_installed: list[str] = []
# (callee function, target, the caller's compiler flags and locals) -> the callee's untyped IR. Numba's own
# ``inline_ir`` copies the IR before it changes anything, so one IR serves every call site.
_untyped_ir_cache: dict = {}


def installed() -> bool:
    """Whether Numba's inliner runs with graphkern's one-memo copy in this process."""
    return "inline_ir" in _installed


def installed_changes() -> tuple[str, ...]:
    """The Numba functions that run with graphkern's change in this process (see the module's text)."""
    return tuple(_installed)


def _graphkern_untyped_ir(worker, function):
    """``worker.run_untyped_passes(function)``, run once per function and flags in this process."""
    worker.flags.enable_ssa = False  # what run_untyped_passes does to the caller's flags, hit or miss
    # the target (CPU or CUDA: its contexts, flags and pipeline) and the caller's type annotations are all
    # the untyped run reads besides the function
    key = (function, worker.typingctx, worker.targetctx, type(worker.flags), worker.flags.get_mangle_string(),
           type(worker.pipeline), frozenset((worker.locals or {}).items()))
    callee_ir = _untyped_ir_cache.get(key)
    if callee_ir is None:
        callee_ir = _untyped_ir_cache[key] = worker.run_untyped_passes(function)
    return callee_ir


def _replace(owner, name: str, changes, *, rebind=()) -> bool:
    """Recompile ``owner.<name>`` from Numba's source, in its module's namespace, with each ``(old, new,
    times)`` change made: the whole lines ``old`` (dedented) must occur exactly ``times`` times, each at its
    own indent, and become ``new`` at that indent. False, and Numba unchanged, where the source differs.
    ``rebind``: modules that imported the function by name and get the replacement too."""
    original = getattr(owner, name)
    try:
        lines = textwrap.dedent(inspect.getsource(original)).splitlines(keepends=True)
    except (OSError, TypeError):  # no source (a frozen install): leave Numba as it is
        return False
    for old, new, times in changes:
        old_lines = old.splitlines(keepends=True)
        found = []
        for i in range(len(lines) - len(old_lines) + 1):
            indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
            if lines[i:i + len(old_lines)] == textwrap.indent(old, indent).splitlines(keepends=True):
                found.append((i, indent))
        if len(found) != times:
            return False  # another Numba: leave it as it is
        for i, indent in reversed(found):
            lines[i:i + len(old_lines)] = textwrap.indent(new, indent).splitlines(keepends=True)
    module = inspect.getmodule(original)
    namespace: dict = {}
    code = compile("".join(lines), inspect.getsourcefile(original) or f"<numba {name}>", "exec")
    exec(code, module.__dict__, namespace)  # noqa: S102 - Numba's own source, the lines above changed
    replacement = namespace[name]
    replacement.__doc__ = original.__doc__
    replacement.__wrapped_numba__ = original
    setattr(owner, name, replacement)
    for importer in rebind:
        if getattr(importer, name, None) is original:
            setattr(importer, name, replacement)
    return True


def install() -> bool:
    """Install the changes the module describes (idempotent); returns :func:`installed`."""
    if _installed or os.environ.get(ENV_VAR, "").strip().lower() == "numba":
        return installed()
    try:
        from numba.core import inline_closurecall, ir_utils
        from numba.parfors import parfor
    except ImportError:  # pragma: no cover - numba is a dependency
        return False
    worker = inline_closurecall.InlineWorker
    if _replace(worker, "inline_ir", [(_PER_BLOCK_COPY, _ONE_MEMO_COPY, 1)]):
        _installed.append("inline_ir")
    inline_closurecall._graphkern_untyped_ir = _graphkern_untyped_ir
    if _replace(worker, "inline_function", [(_UNTYPED_PASSES_EACH_CALL, _UNTYPED_PASSES_ONCE, 1)]):
        _installed.append("inline_function")
    # the snapshot is taken twice: before the loop and at the end of each step
    if _replace(ir_utils, "copy_propagate", [(_DEEP_SNAPSHOT, _SET_SNAPSHOT, 2)], rebind=(parfor,)):
        _installed.append("copy_propagate")
    return installed()


install()
