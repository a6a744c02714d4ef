"""The tuning module: knobs by name (gk.tuned), their checks, GRAPHKERN_TUNING, and that a knob changes what
the code it governs does."""

import ast
import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import graphkern as gk
from graphkern import _fair_share, tuning


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
    with pytest.raises(ValueError, match="knob 'fair_share_refresh_s': expected float"):
        gk.tuned(fair_share_refresh_s=value)


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
                       ("fair_share_refresh_s=soon", "knob 'fair_share_refresh_s' takes float")):
        with pytest.raises(ValueError) as info:
            tuning.from_environment(f"fair_share_refresh_s=1,{entry}")
        message = str(info.value)
        assert message.startswith(f"GRAPHKERN_TUNING: bad entry {entry!r}") and why in message
        assert "the knobs are: fair_share_refresh_s" in message


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
    assert "the knobs are: fair_share_refresh_s" in bad.stderr


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
