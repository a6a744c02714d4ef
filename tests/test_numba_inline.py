"""graphkern's one-memo copy in Numba's inliner (graphkern/_numba_inline.py) changes compile time only.

The same kernels are compiled in two fresh processes, one with Numba's own inliner
(``GRAPHKERN_NUMBA_INLINE=numba``) and one with graphkern's, each into a cache of its own, and the
assembly of every graphkern kernel compiled must be the same (process-specific addresses in the names of
parfor functions aside). The kernel is the one that inlines most: a cache-blocked g-SpMM specialisation,
whose compile the one-memo copy was made for. Its helpers nest ``inline="always"`` calls three and four
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
    asm = {}
    for obj in gc.get_objects():
        if isinstance(obj, CPUDispatcher) and obj.py_func.__module__.startswith("graphkern.kernels.cpu"):
            for sig in obj.signatures:
                asm[obj.py_func.__module__ + "." + obj.py_func.__qualname__ + str(sig)] = obj.inspect_asm(sig)
    print(json.dumps({"installed": _numba_inline.installed(), "asm": asm}))
""")


def _compile(tmp_path, name, **env):
    run_env = {k: v for k, v in os.environ.items() if k != "GRAPHKERN_NUMBA_INLINE"}
    run_env.update(NUMBA_CACHE_DIR=str(tmp_path / name), **env)
    proc = subprocess.run([sys.executable, "-c", SCRIPT], env=run_env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_kernels_compile_to_the_same_machine_code_with_the_one_memo_copy(tmp_path):
    numba_own = _compile(tmp_path, "numba", GRAPHKERN_NUMBA_INLINE="numba")
    graphkerns = _compile(tmp_path, "graphkern")
    assert not numba_own["installed"]
    assert graphkerns["installed"], "the numba in this environment no longer has the lines the patch replaces"
    assert any("spmm_blocked" in name for name in graphkerns["asm"])
    assert numba_own["asm"].keys() == graphkerns["asm"].keys()

    def normal(text):  # parfor functions are named after an address of the compiling process
        return re.sub(r"0x[0-9a-f]{6,}", "ADDRESS", text)

    differ = [name for name in graphkerns["asm"] if normal(graphkerns["asm"][name]) != normal(numba_own["asm"][name])]
    assert not differ, differ


def test_install_is_idempotent_and_says_so():
    from numba.core import inline_closurecall

    from graphkern import _numba_inline

    first = inline_closurecall.InlineWorker.inline_ir
    assert _numba_inline.install() == _numba_inline.installed()
    assert inline_closurecall.InlineWorker.inline_ir is first
