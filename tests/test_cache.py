"""Compiled kernels load from Numba's on-disk cache in a new process (cold start matters).

A kernel built by a factory is a closure; Numba keys its cache on the closure's cell contents, so a cell
holding another compiled function (rather than a constant) changes the key in every process and the
kernel compiles again each time, silently, and every first call in a process pays seconds of compilation
instead of a cache load. Here one script runs twice on a fresh cache directory, the second time with another
thread count, and the second run must save nothing to the cache: everything it ran was loaded.
"""

import os
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent("""
    import numpy as np
    import graphkern as gk
    import graphkern.sparse as sparse

    sparse._BLOCKED_MIN_EDGES, sparse._L2_BYTES = 0, 1024   # the blocked path on a small graph
    sparse._HUB_MIN_EDGE_SHARE = 0                          # and its hub split
    rng = np.random.default_rng(0)
    src = rng.integers(0, 300, 3000)
    dst = rng.integers(0, 300, 3000)
    order = np.argsort(src, kind="stable")
    g = gk.Graph.from_coo(src[order], dst[order], num_nodes=300)
    x8 = rng.random((300, 8)).astype(np.float32)
    x40 = rng.random((300, 40)).astype(np.float32)
    w = rng.random((3000, 1)).astype(np.float32)
    kernels = set()
    for op, reduce, x, e in (("copy_lhs", "sum", x8, None), ("copy_lhs", "sum", x40, None),
                             ("mul", "max", x40, w), ("mul", "mean", x8, w)):
        kernels.add(gk.explain(g, "spmm", op=op, reduce=reduce, ufeat_bytes=x.nbytes,
                               edge_row_bytes=None if e is None else 4, out_chunks=-(-x.shape[1] // 16)).kernel)
        gk.spmm(g, op, reduce, x, e)
    gk.spmm(g, "copy_lhs", "max", x8, return_arg=True)
    gk.sddmm(g, "dot", x8, x8)
    gk.edge_softmax(g, w)
    assert {"spmm_blocked_copy_lhs_sum", "spmm_blocked_hubs_copy_lhs_sum", "spmm_blocked_hubs_mul_max"} <= kernels
    print("ok")
""")


def test_kernels_load_from_the_cache_in_a_new_process(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"), NUMBA_DEBUG_CACHE="1")
    first = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-4000:]
    assert "data saved" in first.stdout  # the first run compiled and wrote the cache
    second = subprocess.run([sys.executable, "-c", SCRIPT], env=dict(env, NUMBA_NUM_THREADS="1"),
                            capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-4000:]
    recompiled = [line for line in second.stdout.splitlines() if "data saved" in line]
    assert not recompiled, "\n".join(recompiled)


SMALL = "import graphkern as gk; print(gk.bfs(gk.graph.kronecker(5), 0).levels[0])"


def _cache_files(folder):
    return sorted(p for p in folder.rglob("*.nbi")) if folder.exists() else []


def _package_cache_files_since(start):
    import graphkern

    roots = [os.path.dirname(graphkern.__file__), os.path.dirname(graphkern.kernels.__file__)]
    found = []
    for root in roots:
        for dirpath, _, files in os.walk(root):
            found += [os.path.join(dirpath, f) for f in files
                      if f.endswith((".nbi", ".nbc")) and os.path.getmtime(os.path.join(dirpath, f)) >= start]
    return found


def test_kernels_are_cached_per_user_never_inside_the_package(tmp_path):
    import time

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env["GRAPHKERN_CACHE_DIR"] = str(tmp_path / "user-cache")
    start = time.time() - 1
    proc = subprocess.run([sys.executable, "-c", SMALL], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _cache_files(tmp_path / "user-cache"), "nothing was cached in the per-user folder"
    assert not _package_cache_files_since(start)


def test_numba_cache_dir_wins(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"), GRAPHKERN_CACHE_DIR=str(tmp_path / "user"))
    proc = subprocess.run([sys.executable, "-c", SMALL], env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert _cache_files(tmp_path / "numba")
    assert not _cache_files(tmp_path / "user")


def test_the_cache_folder_follows_the_platform_convention(monkeypatch, tmp_path):
    from graphkern import _numba_cache

    monkeypatch.delenv("GRAPHKERN_CACHE_DIR", raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    if sys.platform.startswith("linux"):
        assert _numba_cache.cache_root() == tmp_path / "graphkern" / "numba"
    monkeypatch.setenv("GRAPHKERN_CACHE_DIR", str(tmp_path / "mine"))
    assert _numba_cache.cache_root() == tmp_path / "mine"
    assert _numba_cache.is_graphkern_source(_numba_cache.__file__)
    assert not _numba_cache.is_graphkern_source(os.__file__)
