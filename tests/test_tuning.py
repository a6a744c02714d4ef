"""The tuning module: knobs by name (gk.tuned), their checks, GRAPHKERN_TUNING, and that a knob changes what
the code it governs does."""

import ast
import dataclasses
import os
import subprocess
import sys
import time
import types
from pathlib import Path

import numpy as np
import pytest

import graphkern as gk
from graphkern import _fair_share, _memory, _sparse_caches, tuning
from graphkern._bfs_result import _SerialLevels
from graphkern.dispatch import Kernel


@pytest.mark.fast
def test_defaults_are_in_force_and_every_knob_is_documented():
    if os.environ.get(tuning.ENV_VAR):
        pytest.skip(f"{tuning.ENV_VAR} is set in this environment")
    assert gk.tuning.current() == gk.Tuning()
    assert gk.Tuning().fair_share_refresh_s == 0.05
    # each field is followed by its docstring (what it trades, the measurement behind it)
    tree = ast.parse(Path(tuning.__file__).read_text())
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tuning")
    documented = {stmt.target.id for stmt, nxt in zip(cls.body, cls.body[1:])
                  if isinstance(stmt, ast.AnnAssign) and isinstance(nxt, ast.Expr)
                  and isinstance(nxt.value, ast.Constant) and isinstance(nxt.value.value, str)}
    assert documented == {f.name for f in dataclasses.fields(gk.Tuning)}


def test_an_unknown_knob_raises_type_error_naming_it_and_the_knobs():
    with pytest.raises(TypeError, match="unknown knob 'fair_share_refresh'") as info:
        gk.tuned(fair_share_refresh=0)  # checked when the block is made, before it is entered
    assert "fair_share_refresh_s" in str(info.value)
    assert gk.tuning.current() == tuning.from_environment(os.environ.get(tuning.ENV_VAR))


@pytest.mark.parametrize("value", ["0.1", True, None, [0.1], 1j])
def test_a_value_of_the_wrong_type_raises_value_error(value):
    with pytest.raises(ValueError, match="knob 'fair_share_refresh_s': expected a finite float of at least 0"):
        gk.tuned(fair_share_refresh_s=value)


def _outside(name):
    """Values just outside knob ``name``'s declared range, and the range's ends (which are accepted)."""
    low, high = tuning._range(name)
    step = 1 if tuning._TYPES[name] is int else 1e-9
    outside = [low - step] + ([high + step] if high is not None else [float("inf")])
    if tuning._TYPES[name] is float:
        outside.append(float("nan"))
    return outside, [low] + ([high] if high is not None else [])


@pytest.mark.fast
def test_every_knob_declares_a_range_and_refuses_values_outside_it_everywhere():
    """From gk.tuned, GRAPHKERN_TUNING and Tuning(...) alike, with the knob, its range and the value."""
    for field in dataclasses.fields(gk.Tuning):
        name = field.name
        assert set(field.metadata) == {"low", "high"}, name  # declared with tuning.knob(...)
        low, high = tuning._range(name)
        assert low <= field.default and (high is None or field.default <= high), name
        outside, ends = _outside(name)
        for value in outside:
            with pytest.raises(ValueError, match=rf"knob '{name}': expected (an int|a finite float) "):
                gk.tuned(**{name: value})
            with pytest.raises(ValueError, match=rf"knob '{name}': expected"):
                gk.Tuning(**{name: value})
            entry = f"{name}={value!r}"
            with pytest.raises(ValueError, match=rf"GRAPHKERN_TUNING: bad entry '{entry}' \(knob '{name}' takes"):
                tuning.from_environment(entry)
        for value in ends:
            with gk.tuned(**{name: value}) as knobs:
                assert getattr(knobs, name) == value
            assert getattr(tuning.from_environment(f"{name}={value!r}"), name) == value
    assert gk.tuning.current() == tuning.from_environment(os.environ.get(tuning.ENV_VAR))


def _what_the_knobs_govern(g, x, w) -> dict:
    """Results of the CPU paths the knobs govern, on ``g``: searches (one source and batched), sparse
    kernels, and a dynamic graph with an incremental search through two batches."""
    src, dst, _ = g.coo()
    dg = gk.DynamicGraph(g.num_src)
    dg.apply(insert=(src, dst))
    inc = gk.IncrementalBFS(dg, 0)
    dg.apply(delete=(src[:50], dst[:50]))
    inc.update()
    snapshot = dg.snapshot().coo()
    return {"bfs": gk.bfs(g, 0).levels.copy(),
            "batched bfs": np.stack([r.levels for r in gk.bfs(g, sources=np.arange(10))]),
            "u_mul_e_sum": gk.ops.u_mul_e_sum(g, x, w), "copy_u_max": gk.ops.copy_u_max(g, x),
            "u_dot_v": gk.ops.u_dot_v(g, x, x), "edge_softmax": gk.edge_softmax(g, w),
            "dynamic edges": np.sort(snapshot[0] * g.num_src + snapshot[1]), "incremental": inc.levels.copy()}


def test_every_knob_at_either_end_of_its_range_gives_the_same_results():
    """A value a knob accepts is one the code it governs can run: at its lowest and its highest (an
    unbounded float knob: 1e300) every CPU path gives the defaults' results. Knobs that size an allocation
    (parts_per_thread, bfs_serial_levels_per_call) once accepted the largest int64 and failed in NumPy's
    allocator; gpma_batch_bytes_per_edge refused every batch; incremental_fallback_fraction=0 was taken by
    the knob and refused by IncrementalBFS."""
    g = gk.graph.kronecker(7, edgefactor=4, seed=0)
    rng = np.random.default_rng(0)
    x = rng.random((g.num_src, 4)).astype(np.float32)
    w = rng.random((g.num_edges, 1)).astype(np.float32)
    expected = _what_the_knobs_govern(g, x, w)
    for field in dataclasses.fields(gk.Tuning):
        low, high = tuning._range(field.name)
        for value in (low, 1e300 if high is None else high):
            with gk.tuned(**{field.name: value}):
                found = _what_the_knobs_govern(g, x, w)
            for what, result in expected.items():
                np.testing.assert_allclose(found[what], result, rtol=1e-5, err_msg=f"{field.name}={value}: {what}")


def test_a_merge_cut_into_no_chunks_is_refused_before_the_graph_changes():
    """gpma_merge_chunks=0 once made DynamicGraph.apply insert nothing and report it as done."""
    with pytest.raises(ValueError, match="knob 'gpma_merge_chunks': expected an int from 1 to"):
        gk.tuned(gpma_merge_chunks=0)


def test_values_are_held_as_the_knob_types():
    with gk.tuned(fair_share_refresh_s=2) as knobs:
        assert knobs is gk.tuning.current()
        assert knobs.fair_share_refresh_s == 2.0 and type(knobs.fair_share_refresh_s) is float
    with gk.tuned(fair_share_refresh_s=np.float32(0.5)):
        assert type(gk.tuning.current().fair_share_refresh_s) is float


def test_blocks_nest_and_restore_even_on_error():
    before = gk.tuning.current()
    with gk.tuned(fair_share_refresh_s=1.0):
        with gk.tuned(fair_share_refresh_s=2.0):
            assert gk.tuning.current().fair_share_refresh_s == 2.0
        assert gk.tuning.current().fair_share_refresh_s == 1.0
        with pytest.raises(RuntimeError):
            with gk.tuned(fair_share_refresh_s=7.0):
                raise RuntimeError("inside")
        assert gk.tuning.current().fair_share_refresh_s == 1.0
    assert gk.tuning.current() is before
    with pytest.raises(dataclasses.FrozenInstanceError):
        gk.tuning.current().fair_share_refresh_s = 1.0


def test_environment_text_is_parsed_by_knob_type():
    assert tuning.from_environment(" fair_share_refresh_s=0.25 ,").fair_share_refresh_s == 0.25
    assert tuning.from_environment("fair_share_refresh_s=2").fair_share_refresh_s == 2.0
    assert tuning.from_environment(None) == gk.Tuning() == tuning.from_environment(" ")
    for entry, why in (("nope=1", "unknown knob 'nope'"), ("fair_share_refresh_s", "expected name=value"),
                       ("fair_share_refresh_s=soon", "knob 'fair_share_refresh_s' takes a finite float")):
        with pytest.raises(ValueError) as info:
            tuning.from_environment(f"fair_share_refresh_s=1,{entry}")
        message = str(info.value)
        assert message.startswith(f"GRAPHKERN_TUNING: bad entry {entry!r}") and why in message
        assert "fair_share_refresh_s" in message.partition("the knobs are: ")[2]


def _run(code: str, value: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, GRAPHKERN_TUNING=value)
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)


def test_environment_variable_is_read_at_import_in_a_new_process():
    code = "import graphkern as gk; print(gk.tuning.current().fair_share_refresh_s)"
    good = _run(code, "fair_share_refresh_s=0.5")
    assert good.returncode == 0, good.stderr[-2000:]
    assert good.stdout.split() == ["0.5"]
    bad = _run(code, "fair_share_refresh_s=0.5,refresh=1")
    assert bad.returncode != 0
    assert "GRAPHKERN_TUNING: bad entry 'refresh=1' (unknown knob 'refresh')" in bad.stderr
    assert "fair_share_refresh_s" in bad.stderr.partition("the knobs are: ")[2]


@pytest.mark.skipif(not _fair_share._enabled, reason="the fair-share rule is off here (GRAPHKERN_FAIR_SHARE=0 or "
                                                     "not Linux)")
def test_refresh_knob_decides_whether_the_thread_count_is_read_again(monkeypatch):
    stamp = time.monotonic()
    monkeypatch.setattr(_fair_share, "_cached", (stamp, 12345))  # a count just taken (not a knob: the cache)
    with gk.tuned(fair_share_refresh_s=3600.0):
        assert _fair_share.other_runnable_threads() == 12345  # reused
        assert _fair_share._cached == (stamp, 12345)
    with gk.tuned(fair_share_refresh_s=0.0):
        count = _fair_share.other_runnable_threads()  # read again from /proc
    assert _fair_share._cached[0] >= stamp and _fair_share._cached[1] == count != 12345


def test_incremental_knobs_decide_when_an_update_searches_afresh():
    n = 100
    chain = np.arange(n - 1)

    def full_search_after_cutting_the_chain(**knobs):
        dg = gk.DynamicGraph(n)
        dg.apply(insert=(chain, chain + 1))
        with gk.tuned(**knobs):
            inc = gk.IncrementalBFS(dg, 0)  # the fallback fraction is read here
        dg.apply(delete=([0], [1]))  # 99 vertices below 1 are relabelled
        with gk.tuned(**knobs):
            report = inc.update()
        assert inc.levels[1:].tolist() == [-1] * (n - 1)
        return report["full_search"]

    assert not full_search_after_cutting_the_chain()  # 99 relabelled: under the limit of 256 vertices
    assert full_search_after_cutting_the_chain(incremental_min_limit=1)  # limit max(0.05 * 100, 1) = 5
    assert not full_search_after_cutting_the_chain(incremental_min_limit=1, incremental_fallback_fraction=1.0)


# ------------------------------------------------------------------------------ sparse kernels (CPU)

def _source_ordered(scale: int):
    """A Kronecker graph whose edges are listed by source, so the CSC's rows are in source order (what the
    blocked paths need)."""
    src, dst = gk.graph.kronecker(scale).edges()
    order = np.argsort(src, kind="stable")
    return gk.Graph.from_coo(src[order], dst[order], num_nodes=1 << scale)


def test_l2_and_edge_floor_knobs_decide_the_blocked_spmm():
    g = _source_ordered(8)  # 256 vertices, about 4,000 edges: under the floor, x in any real L2
    x = np.ones((g.num_src, 16), np.float32)

    def kernel(**knobs):
        with gk.tuned(**knobs):
            return gk.explain(g, "spmm", op="copy_lhs", reduce="sum", ufeat=x).kernel

    assert kernel() is Kernel.SPMM_CSC_VECTOR
    assert kernel(l2_cache_bytes=8) is Kernel.SPMM_CSC_VECTOR  # still under the edge floor
    assert kernel(l2_cache_bytes=8, blocked_min_edges=0) is Kernel.SPMM_BLOCKED
    assert kernel(l2_cache_bytes=x.nbytes, blocked_min_edges=0) is Kernel.SPMM_CSC_VECTOR  # x fits the 'L2'
    with gk.tuned(l2_cache_bytes=12345):
        assert _sparse_caches.cache_bytes() == 12345
    with gk.tuned(l2_cache_bytes=0):
        assert _sparse_caches.cache_bytes() >= 1024  # the machine's, as the system gives it


def test_hub_knobs_decide_the_hub_split():
    g = gk.graph.kronecker(12)
    x = np.ones((g.num_src, 32), np.float32)  # F = 32 float32: two vector chunks

    def kernel(op="copy_lhs", edge_row_floats=None, **knobs):
        w = None if edge_row_floats is None else np.ones((g.num_edges, edge_row_floats), np.float32)
        with gk.tuned(blocked_min_edges=0, l2_cache_bytes=64 << 10, **knobs):
            return gk.explain(g, "spmm", op=op, reduce="sum", ufeat=x, efeat=w).kernel

    assert kernel() is Kernel.SPMM_BLOCKED_HUBS
    assert kernel(hub_min_edge_share=0.9) is Kernel.SPMM_CSC_VECTOR  # the hubs carry too few edges
    assert kernel(hub_l2_share=1e-9) is Kernel.SPMM_CSC_VECTOR  # no hub row fits its share of the L2
    with gk.tuned(l2_cache_bytes=64 << 10, hub_l2_share=0.5):
        assert _sparse_caches.hub_capacity(128) == 256
    # edge rows of 128 bytes are too wide to be permuted for the split, unless the knob says otherwise
    assert kernel("mul", 32) is Kernel.SPMM_CSC_VECTOR
    assert kernel("mul", 32, edge_rows_to_blocks_max_bytes=128) is Kernel.SPMM_BLOCKED_HUBS


def test_sddmm_row_bytes_knob_decides_the_blocked_sddmm():
    g = _source_ordered(8)

    def kernel(out_row_bytes, **knobs):
        # u_add_v writes rows as wide as its operands' (float32)
        x = np.ones((g.num_src, out_row_bytes // 4), np.float32)
        with gk.tuned(blocked_min_edges=0, l2_cache_bytes=64, **knobs):
            return gk.explain(g, "sddmm", op="add", lhs=x, rhs=x, lhs_target="u", rhs_target="v").kernel

    assert kernel(16) is Kernel.SDDMM_BLOCKED
    assert kernel(32) is Kernel.SDDMM_CSR
    assert kernel(32, sddmm_blocked_max_row_bytes=32) is Kernel.SDDMM_BLOCKED


def test_min_blocks_knob_decides_whether_edge_rows_are_put_in_block_order():
    g = _source_ordered(8)
    rng = np.random.default_rng(0)
    x = rng.random((g.num_src, 4), dtype=np.float32)
    w = rng.random((g.num_edges, 1), dtype=np.float32)
    results = {}
    for min_blocks in (1, 10**9):
        g._cache.clear()
        with gk.tuned(blocked_min_edges=0, l2_cache_bytes=1024, edge_rows_to_blocks_min_blocks=min_blocks):
            assert gk.explain(g, "spmm", op="mul", reduce="sum", ufeat=x, efeat=w).kernel is Kernel.SPMM_BLOCKED
            results[min_blocks] = gk.spmm(g, "mul", "sum", x, w)
        reordered = any(key[0] == "dst_block_slots" for key in g._cache)
        assert reordered == (min_blocks == 1)
    np.testing.assert_array_equal(results[1], results[10**9])


def test_parts_per_thread_knob_sets_the_row_bounds():
    import numba

    g = _source_ordered(8)
    indptr = g.csc().indptr
    threads = numba.get_num_threads()
    for per_thread in (1, 3):
        with gk.tuned(parts_per_thread=per_thread):
            bounds = _sparse_caches.row_bounds(g, "csc", indptr)
        assert bounds.size - 1 == threads * per_thread  # 256 rows: enough for every part


def test_block_sets_kept_knob_bounds_the_cached_block_sets():
    holder = types.SimpleNamespace(_cache={})
    for kept in (1, 2):
        holder._cache.clear()
        with gk.tuned(block_sets_kept=kept):
            for height in (8, 16, 32):
                _sparse_caches._cache_recent(holder, ("dst_blocks",), ("dst_blocks", height), height)
        assert sorted(holder._cache.values()) == ([32] if kept == 1 else [16, 32])


# ------------------------------------------------------------------------------------------ BFS (CPU)

def _path(n: int):
    return gk.graph.undirected(np.arange(n - 1), np.arange(1, n), n)


def test_batch_knob_decides_whether_sources_run_batched():
    g = gk.graph.kronecker(8)
    assert "multi_source" not in {r.algorithm for r in gk.bfs(g, sources=[0, 1])}
    with gk.tuned(bfs_batch_min_sources=2):
        batched = gk.bfs(g, sources=[0, 1])
    assert {r.algorithm for r in batched} == {"multi_source"}
    for r, source in zip(batched, (0, 1)):
        np.testing.assert_array_equal(r.levels, gk.bfs(g, source).levels)


def test_push_knob_decides_the_batched_levels_direction():
    g = gk.graph.kronecker(8)

    def modes(push_below):
        with gk.tuned(bfs_multi_push_below=push_below):
            return {step[1] for step in gk.bfs(g, sources=list(range(8)), batch=True)[0].trace}

    assert modes(10**9) == {"pull"}  # no frontier has under num_edges / 10**9 out-edges
    assert "push" in modes(1)


def test_serial_knobs_decide_how_small_levels_run(monkeypatch):
    from graphkern.kernels.cpu import bfs_serial

    g = _path(200)
    runs = lambda r: sum(isinstance(s, _SerialLevels) for s in r._steps)  # noqa: E731
    assert runs(gk.bfs(g, 0)) == 1  # 199 one-vertex levels, one serial call
    with gk.tuned(bfs_serial_levels_per_call=50):
        assert runs(gk.bfs(g, 0)) == 4  # at most 50 levels a call
    with gk.tuned(bfs_serial_level_edges=0):
        r = gk.bfs(g, 0)
    assert runs(r) == 0 and {step[1] for step in r.trace} == {"top_down"}  # every level a parallel step
    recorded = []
    for name in ("record_serial_levels", "record_serial_levels_one_thread"):
        real = getattr(bfs_serial, name)
        monkeypatch.setattr(bfs_serial, name, lambda *a, real=real, name=name: recorded.append(name) or real(*a))
    gk.bfs(g, 0)
    with gk.tuned(bfs_parallel_record_from=1):
        gk.bfs(g, 0)
    assert recorded == ["record_serial_levels_one_thread", "record_serial_levels"]


def test_top_down_knobs_decide_the_step_a_level_runs(monkeypatch):
    from graphkern.kernels.cpu import bfs as bfs_kernels

    g = _path(200)  # every level's frontier has at most two out-edges
    want = gk.bfs(g, 0, algorithm="top_down").levels
    calls = []
    for name in ("top_down_step_slots", "top_down_step_private", "top_down_step"):
        real = getattr(bfs_kernels, name)

        def spy(*args, real=real, name=name):
            stale = name == "top_down_step" and not np.shares_memory(args[8], args[9])  # gathers `before`
            calls.append(name + (" (map before the level)" if stale else ""))
            return real(*args)

        monkeypatch.setattr(bfs_kernels, name, spy)

    def steps(**knobs):
        calls.clear()
        with gk.tuned(bfs_serial_level_edges=0, **knobs):
            np.testing.assert_array_equal(gk.bfs(g, 0, algorithm="top_down").levels, want)
        return set(calls)

    assert steps() == {"top_down_step_slots"}  # every level under n / 16 out-edges
    assert steps(bfs_slots_below=10**9) == {"top_down_step_private"}
    shared = dict(bfs_slots_below=10**9, bfs_private_maps_max_bytes=0)
    # the live map while vertices can still be claimed (the last level, with none left, takes the map before it)
    assert "top_down_step" in steps(**shared, bfs_stale_gather_edges_per_claim=1 << 60)
    assert steps(**shared, bfs_stale_gather_edges_per_claim=0) == {"top_down_step (map before the level)"}


def test_skew_knob_decides_whether_the_hub_index_is_built():
    from graphkern._cpu import bfs as cpu_bfs

    indptr = _path(50).csr().indptr  # degrees 1 and 2: not skewed
    assert not cpu_bfs._degrees_skewed(indptr)
    with gk.tuned(bfs_hub_min_skew=1):
        assert cpu_bfs._degrees_skewed(indptr)


# ---------------------------------------------------------------------------------- output memory

@pytest.mark.skipif(not _memory._enabled(), reason="no huge-page maps on this platform (or GRAPHKERN_HUGE_PAGES=0)")
def test_memory_knobs_decide_what_goes_on_huge_pages_and_what_the_pool_keeps(monkeypatch):
    monkeypatch.setattr(_memory, "_pool", {})  # an empty pool (state, not a knob)
    assert _memory.zeros(1 << 16, np.uint8).flags.owndata  # 64 KB: a plain NumPy array
    with gk.tuned(huge_page_min_bytes=1 << 16):
        mapped = _memory.zeros(1 << 16, np.uint8)
        assert not mapped.flags.owndata  # over a map
        with gk.tuned(pool_bytes=0):
            del mapped  # no room in the pool: unmapped
        assert _memory._pool == {}
        mapped = _memory.zeros(1 << 16, np.uint8)
        del mapped
    assert sum(len(maps) for maps in _memory._pool.values()) == 1
    _memory.release_pool()
def test_dynamic_graph_knobs_decide_merges_and_compactions():
    """gpma_merge_ratio sends a small batch through the whole-array merge (which drops every tombstone) or
    leaves it in place; gpma_tombstone_fraction decides when deletions compact the array."""
    rng = np.random.default_rng(4)
    n = 200
    base = rng.integers(0, n, (2, 3000))
    fresh = np.stack([np.arange(n), (np.arange(n) + 1) % n])[:, :150]

    def tombstones_after(**knobs):
        dg = gk.DynamicGraph(n)
        dg.apply(insert=(base[0], base[1]))
        with gk.tuned(**knobs):
            dg.apply(delete=(base[0][:500], base[1][:500]))
            dg.apply(insert=(fresh[0], fresh[1]))
        return dg._storage.tombs

    assert tombstones_after(gpma_merge_ratio=1) > 0  # in place: tombstones stay until a compaction
    assert tombstones_after(gpma_merge_ratio=1 << 40) == 0  # merged: the new layout has none
    assert tombstones_after(gpma_merge_ratio=1, gpma_tombstone_fraction=0.0) == 0  # compacted at once
