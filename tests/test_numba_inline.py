"""graphkern's changes to Numba's compile-time hot spots (graphkern/_numba_inline.py: the inliner's one-memo
copy, the callee's untyped IR kept per function, the copy propagation's snapshot) change compile time only.

The same kernels are compiled in two fresh processes, one with Numba unchanged
(``GRAPHKERN_NUMBA_INLINE=numba``) and one with graphkern's changes, each into a cache of its own, and the
assembly of every graphkern kernel compiled must be the same (process-specific addresses in the names of
parfor functions aside). The kernels are the ones that inline most: two cache-blocked g-SpMM
specialisations, whose compile the changes were made for; the second inlines the same helpers as the
first, so it runs on the untyped IR kept from the first (and the first on the IR kept from its own
earlier call sites). Its helpers nest ``inline="always"`` calls three and four
deep (``blocked_edges``, ``blocked_edge_chunk``, ``vector_message``, ``operand_vector`` and the SIMD
loads; ``accumulate_edge``, ``message``, ``apply_op``), with constant arguments that fold after the copy:
every kind of inlining that the g-SDDMM kernels do (``_edge``, ``_pick``, ``apply_op``, the same SIMD
helpers), which therefore add compile time and no case. The format build's count sort, compiled on the
way, is compared too.
"""

import json
import os
import re
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import gc, json, sys
    import numpy as np
    import graphkern as gk
    from graphkern import _numba_inline
    from numba.core.registry import CPUDispatcher

    rng = np.random.default_rng(0)
    g = gk.Graph.from_coo(np.sort(rng.integers(0, 400, 4000)), rng.integers(0, 400, 4000), num_nodes=400)
    x = rng.random((400, 16)).astype(np.float32)
    w = rng.random((4000, 1)).astype(np.float32)
    with gk.tuned(l2_cache_bytes=4096, blocked_min_edges=0, hub_min_edge_share=1.0):
        assert gk.explain(g, "spmm", op="mul", reduce="max", ufeat=x, efeat=w).kernel.name == "SPMM_BLOCKED"
        gk.spmm(g, "mul", "max", x, w)
        gk.spmm(g, "mul", "sum", x, w)
    asm = {}  # name -> the assembly of every function of that name (the SIMD operators share one)
    for obj in gc.get_objects():
        if isinstance(obj, CPUDispatcher) and obj.py_func.__module__.startswith("graphkern.kernels.cpu"):
            for sig in obj.signatures:
                name = obj.py_func.__module__ + "." + obj.py_func.__qualname__ + str(sig)
                asm.setdefault(name, []).append(obj.inspect_asm(sig))
    print(json.dumps({"installed": _numba_inline.installed_changes(), "asm": asm}))
""")


def _compile(tmp_path, name, **env):
    run_env = {k: v for k, v in os.environ.items() if k != "GRAPHKERN_NUMBA_INLINE"}
    run_env.update(NUMBA_CACHE_DIR=str(tmp_path / name), **env)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=run_env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_kernels_compile_to_the_same_machine_code_with_graphkerns_changes(tmp_path):
    numba_own = _compile(tmp_path, "numba", GRAPHKERN_NUMBA_INLINE="numba")
    graphkerns = _compile(tmp_path, "graphkern")
    assert numba_own["installed"] == []
    # each change applies: the numba in this environment still has the lines each one replaces
    assert graphkerns["installed"] == ["inline_ir", "inline_function", "copy_propagate"]
    assert any("spmm_blocked" in name for name in graphkerns["asm"])
    assert numba_own["asm"].keys() == graphkerns["asm"].keys()

    def normal(texts):
        # parfor functions are named after an address of the compiling process, and every mangled name
        # carries the number of the Numba function object it was made from ("B3v97"): how many a process
        # made before differs, the code does not
        return sorted(re.sub(r"B\d+v\d+", "Bv", re.sub(r"0x[0-9a-f]{6,}", "ADDRESS", text)) for text in texts)

    differ = [name for name in graphkerns["asm"] if normal(graphkerns["asm"][name]) != normal(numba_own["asm"][name])]
    assert not differ, differ


def test_install_is_idempotent_and_says_so():
    from numba.core import inline_closurecall, ir_utils

    from graphkern import _numba_inline

    first = inline_closurecall.InlineWorker.inline_ir, inline_closurecall.InlineWorker.inline_function
    propagate = ir_utils.copy_propagate
    changes = _numba_inline.installed_changes()
    assert _numba_inline.install() == _numba_inline.installed()
    assert (inline_closurecall.InlineWorker.inline_ir, inline_closurecall.InlineWorker.inline_function) == first
    assert ir_utils.copy_propagate is propagate
    assert _numba_inline.installed_changes() == changes
