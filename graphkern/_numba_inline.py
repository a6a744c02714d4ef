"""Numba's inliner copies a callee's IR in time quadratic in its size; graphkern gives it one copy memo.

graphkern's CPU kernels are built from ``@njit(inline="always")`` helpers (the SIMD operations, the
message and reduction steps of g-SpMM and g-SDDMM), so that the op, the reducer and the layout fold as
constants into one loop. Numba inlines each call site by copying the callee's IR twice
(``InlineWorker.inline_ir``, its inner ``copy_ir``), and it deep-copies the IR one block at a time, each
block with a fresh ``copy.deepcopy`` memo: every block then copies the whole variable scope of the
callee again (a ``Var`` deep-copies its ``Scope``, and the scope holds every variable). The work grows
with blocks times variables, for every call site: profiled on one cache-blocked g-SpMM specialisation,
the ``inline_inlinables`` pass took 10.3 of the 17.7 s that Numba's pipeline spent, nearly all of it in
``copy.deepcopy``.

:func:`install` recompiles ``inline_ir`` from Numba's own source with one memo for all the blocks of a
copy. The copy is the same IR; its blocks share one copy of the scope, as the blocks of the IR they were
copied from do (the per-block copies compared equal, and ``inline_ir`` already treated them as one
scope). Nothing else changes, and the generated machine code is the same (tests/test_numba_inline.py
compares the assembly of kernels compiled both ways). It applies only where Numba's source holds the
exact lines it replaces (Numba 0.62.1 and 0.68.1, the versions checked, do), otherwise Numba runs
unchanged; ``GRAPHKERN_NUMBA_INLINE=numba`` leaves Numba unchanged too. :func:`installed` says which.
Importing the module installs it (``graphkern/__init__.py`` imports it before any kernel module).
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
# the inner function's body sits two levels below the method's
_INDENT = " " * 8

_installed = False


def installed() -> bool:
    """Whether Numba's inliner runs with graphkern's one-memo copy in this process."""
    return _installed


def install() -> bool:
    """Replace ``InlineWorker.inline_ir`` by the same source with one copy memo (idempotent); returns
    :func:`installed`."""
    global _installed
    if _installed or os.environ.get(ENV_VAR, "").strip().lower() == "numba":
        return _installed
    try:
        from numba.core import inline_closurecall
    except ImportError:  # pragma: no cover - numba is a dependency
        return False
    original = inline_closurecall.InlineWorker.inline_ir
    try:
        source = textwrap.dedent(inspect.getsource(original))
    except (OSError, TypeError):  # no source (a frozen install): leave Numba as it is
        return False
    old = textwrap.indent(_PER_BLOCK_COPY, _INDENT)
    if source.count(old) != 1:
        return False  # another Numba: leave it as it is
    source = source.replace(old, textwrap.indent(_ONE_MEMO_COPY, _INDENT))
    namespace: dict = {}
    code = compile(source, inspect.getsourcefile(original) or "<numba inline_ir>", "exec")
    exec(code, inline_closurecall.__dict__, namespace)  # noqa: S102 - Numba's own source, one loop changed
    replacement = namespace["inline_ir"]
    replacement.__doc__ = original.__doc__
    replacement.__wrapped_numba__ = original
    inline_closurecall.InlineWorker.inline_ir = replacement
    _installed = True
    return True


install()
