"""Compiled kernels load from Numba's on-disk cache in a new process (cold start matters).

A kernel built by a factory is a closure; Numba keys its cache on the closure's cell contents, so a cell
holding another compiled function (rather than a constant) changes the key in every process and the
kernel compiles again each time, silently, and every first call in a process pays seconds of compilation
instead of a cache load. Here one script runs twice on a fresh cache directory, the second time with another
thread count, and the second run must save nothing to the cache: everything it ran was loaded.

What matters for the cache key is what a factory's closure holds, not which constants it holds, so one
kernel of each kind stands for its family: the blocked g-SpMM (``_spmm_blocked_kernel``) with and without
the hub split, the blocked g-SDDMM factory, and the module-level edge softmax kernels. Every other
(op, reducer, width) specialisation of those factories closes over the same kinds of values (scalars and
tuples from ``kernel_constants``) and would only add compile time.
"""

import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent("""
    import numpy as np
    import graphkern as gk

    rng = np.random.default_rng(0)
    src = rng.integers(0, 300, 3000)
    dst = rng.integers(0, 300, 3000)
    order = np.argsort(src, kind="stable")
    g = gk.Graph.from_coo(src[order], dst[order], num_nodes=300)
    x8 = rng.random((300, 8)).astype(np.float32)
    x40 = rng.random((300, 40)).astype(np.float32)
    w = rng.random((3000, 1)).astype(np.float32)
    kernels = set()
    for x in (x8, x40):  # narrow rows: the blocks; wider ones: the blocks with the hub split
        kernels.add(gk.explain(g, "spmm", op="copy_lhs", reduce="sum", ufeat=x).kernel.value)
        gk.spmm(g, "copy_lhs", "sum", x)
    gk.sddmm(g, "dot", x8, x8)
    gk.edge_softmax(g, w)
    assert kernels == {"spmm_blocked", "spmm_blocked_hubs"}, kernels
    print("ok")
""")


# the blocked path on a small graph (an 'L2' of 1 KB, no edge-count floor) and its hub split
SMALL_GRAPH_BLOCKS = "blocked_min_edges=0,l2_cache_bytes=1024,hub_min_edge_share=0"


def test_kernels_load_from_the_cache_in_a_new_process(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"), NUMBA_DEBUG_CACHE="1",
               GRAPHKERN_TUNING=SMALL_GRAPH_BLOCKS)
    first = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stdout[-2000:] + first.stderr[-4000:]
    assert "data saved" in first.stdout  # the first run compiled and wrote the cache
    second = subprocess.run([sys.executable, "-c", SCRIPT], env=dict(env, NUMBA_NUM_THREADS="1"),
                            capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stdout[-2000:] + second.stderr[-4000:]
    recompiled = [line for line in second.stdout.splitlines() if "data saved" in line]
    assert not recompiled, "\n".join(recompiled)


# one small cached kernel (the degree count): where the cache goes is the same for every kernel, and a
# search on a generated graph would compile a dozen for these checks alone
SMALL = "import graphkern as gk; print(gk.Graph.from_coo([0, 1], [1, 2]).in_degrees()[2])"


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


@pytest.fixture(scope="module")
def installed_prefix(tmp_path_factory):
    """graphkern pip-installed with ``--target`` into a prefix, once for the tests here that need an installed
    copy: each works on a copy of it (:func:`_copy_of`), which it may make read-only or edit."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    prefix = tmp_path_factory.mktemp("installed") / "prefix"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation",
                          "--target", str(prefix), str(root)], capture_output=True, text=True, timeout=600)
    assert pip.returncode == 0, pip.stdout[-2000:] + pip.stderr[-2000:]
    return prefix


def _copy_of(prefix, tmp_path):
    import shutil

    copy = tmp_path / "prefix"
    shutil.copytree(prefix, copy, symlinks=True)
    return copy


def _saved_and_loaded(stdout):
    saved = [line for line in stdout.splitlines() if "data saved" in line]
    loaded = [line for line in stdout.splitlines() if "data loaded" in line]
    return saved, loaded


def test_an_install_into_a_read_only_prefix_caches_per_user_and_the_next_process_loads(installed_prefix, tmp_path):
    """pip installs graphkern into a prefix that is then made read-only (a system or shared install): the
    first process compiles into the per-user folder, the second loads everything from there."""
    import stat

    prefix = _copy_of(installed_prefix, tmp_path)
    for path in [prefix, *prefix.rglob("*")]:
        path.chmod(path.stat().st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "GRAPHKERN_CACHE_DIR", "PYTHONPATH")}
    env.update(PYTHONPATH=str(prefix), XDG_CACHE_HOME=str(tmp_path / "home-cache"), NUMBA_DEBUG_CACHE="1")
    script = f"import graphkern as gk; assert gk.__file__.startswith({str(prefix)!r}), gk.__file__; " + SMALL[24:]
    try:
        runs = [subprocess.run([sys.executable, "-c", script], env=env, cwd=tmp_path, capture_output=True,
                               text=True, timeout=600) for _ in range(2)]
        for run in runs:
            assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
        first_saved, _ = _saved_and_loaded(runs[0].stdout)
        second_saved, second_loaded = _saved_and_loaded(runs[1].stdout)
        assert first_saved, "the first process compiled nothing into the cache"
        assert not second_saved, "\n".join(second_saved)
        assert second_loaded
        assert _cache_files(tmp_path / "home-cache" / "graphkern" / "numba")
        assert not [p for p in prefix.rglob("*") if p.suffix in (".nbi", ".nbc")]
    finally:
        for path in [prefix, *prefix.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)


def test_graphkern_compile_fills_the_cache_that_a_later_process_loads(tmp_path):
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"), NUMBA_DEBUG_CACHE="1")
    compiled = subprocess.run([sys.executable, "-m", "graphkern.cli", "compile", "--family", "edge_softmax",
                               "--family", "bfs", "--no-progress"], env=env, capture_output=True, text=True,
                              timeout=900)
    assert compiled.returncode == 0, compiled.stdout[-2000:] + compiled.stderr[-3000:]
    rows = {line.split()[0]: line.split()[1:] for line in compiled.stdout.splitlines() if line.strip()}
    assert int(rows["edge_softmax"][1]) > 0 and int(rows["bfs"][1]) > 0  # new cache entries
    assert str(tmp_path / "cache") in compiled.stdout
    user = textwrap.dedent("""
        import numpy as np
        import graphkern as gk
        rng = np.random.default_rng(7)
        g = gk.Graph.from_coo(rng.integers(0, 900, 20000), rng.integers(0, 900, 20000), num_nodes=900)
        gk.edge_softmax(g, rng.standard_normal((g.num_edges, 2, 1)).astype(np.float32))
        gk.bfs(gk.graph.kronecker(9), 3)
    """)
    run = subprocess.run([sys.executable, "-c", user], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-3000:]
    saved, loaded = _saved_and_loaded(run.stdout)
    assert not saved, "\n".join(saved)
    assert loaded


@pytest.mark.fast
def test_precompile_refuses_unknown_choices():
    from graphkern.precompile import precompile

    with pytest.raises(ValueError, match="argument 'dtypes'.*found 'float16'"):
        precompile(dtypes=["float16"], progress=False)
    with pytest.raises(ValueError, match="argument 'families'"):
        precompile(families=["nope"], progress=False)
    with pytest.raises(ValueError, match="argument 'ops'"):
        precompile(ops="some", progress=False)
    for jobs in (0, 1.5, True):
        with pytest.raises(ValueError, match="argument 'jobs': expected a positive int or None"):
            precompile(jobs=jobs, progress=False)


def test_a_checkout_and_an_installed_copy_of_the_same_source_share_entries_and_a_changed_helper_does_not(
        installed_prefix, tmp_path):
    """The cache is keyed by content and by the place in the package, not by the absolute path: a wheel
    installed elsewhere loads what the checkout compiled (CI installs graphkern twice, and pays once).
    An edit to a module that a kernel's file imports (here the partitioner that the degree count's file,
    the count sort, imports) makes a new entry: the compiled kernel froze that module's functions."""
    from pathlib import Path

    prefix = _copy_of(installed_prefix, tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR", "PYTHONPATH")}
    env.update(GRAPHKERN_CACHE_DIR=str(tmp_path / "cache"), NUMBA_DEBUG_CACHE="1")

    def run(pythonpath, where):
        script = f"import graphkern as gk; assert gk.__file__.startswith({where!r}), gk.__file__; " + SMALL[24:]
        proc = subprocess.run([sys.executable, "-c", script], env=dict(env, PYTHONPATH=pythonpath), cwd=tmp_path,
                              capture_output=True, text=True, timeout=600)
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-3000:]
        return _saved_and_loaded(proc.stdout)

    import graphkern

    checkout = str(Path(graphkern.__file__).resolve().parent)
    saved, _ = run("", checkout)
    assert saved, "the checkout compiled nothing into the cache"
    saved, loaded = run(str(prefix), str(prefix))
    assert loaded and not saved, "\n".join(saved)

    helper = prefix / "graphkern" / "kernels" / "cpu" / "partition.py"
    helper.write_text(helper.read_text() + "\n# an edit\n")
    saved, _ = run(str(prefix), str(prefix))
    assert any("sort." in line for line in saved), "a kernel whose helper module changed was not recompiled"
