"""The planner follows this machine's calibration (graphkern/_calibration.py) where one is kept.

The planning tests use stored calibrations written here (what ``graphkern calibrate`` keeps, with the
times chosen), on a small graph with the cache knobs lowered so that the fixed rules pick the blocked
paths; one test measures for real, on a small graph, and checks what is kept.
"""

import json

import numpy as np
import pytest

import graphkern as gk
from graphkern import _calibrate, _calibration
from graphkern import precompile as precompile_module
from graphkern.dispatch import Kernel
from graphkern.precompile import _CompileCounter

LARGE_GRAPH_PATHS = dict(l2_cache_bytes=4096, blocked_min_edges=0, hub_min_edge_share=0.0)


@pytest.fixture
def kept(tmp_path, monkeypatch):
    """``keep(one_vector=(plain_ms, blocked_ms), hub_split=..., sddmm_narrow=..., sddmm_wide=...)``: a stored
    calibration with those times (a decision left out is not stored), which the planner then reads."""
    where = tmp_path / "calibration.json"
    monkeypatch.setenv(_calibration.ENV_VAR, str(where))

    def keep(one_vector=None, hub_split=None, sddmm_narrow=None, sddmm_wide=None):
        decisions = {name: {"features": features, "plain_ms": times[0], "blocked_ms": times[1]}
                     for name, features, times in (("spmm_one_vector_blocked", 16, one_vector),
                                                   ("spmm_hub_split", 64, hub_split),
                                                   ("sddmm_blocked_narrow", 16, sddmm_narrow),
                                                   ("sddmm_blocked_wide", 64, sddmm_wide)) if times}
        where.write_text(json.dumps({"format": _calibration.FORMAT, "machine": _calibration.machine(),
                                     "measured": "2026-12-07 12:00:00", "graph": "a test's", "repeats": 1,
                                     "decisions": decisions}))
        _calibration._loaded.pop(where, None)

    return keep


def _graph_and_features():
    rng = np.random.default_rng(0)
    src = np.concatenate([rng.integers(0, 300, 3000), np.zeros(1500, np.int64)])  # node 0 is a hub
    dst = rng.integers(0, 300, src.size)
    order = np.argsort(src, kind="stable")  # the CSC's rows in source order: the blocks qualify
    g = gk.Graph.from_coo(src[order], dst[order], num_nodes=300)
    return g, {F: rng.random((300, F)).astype(np.float32) for F in (16, 64)}


def _kernel(g, x):
    with gk.tuned(**LARGE_GRAPH_PATHS):
        plan = gk.explain(g, "spmm", "copy_lhs", "sum", x)
        return plan, gk.spmm(g, "copy_lhs", "sum", x)


def test_without_a_calibration_the_fixed_rules_decide(monkeypatch):
    monkeypatch.setenv(_calibration.ENV_VAR, "off")
    g, xs = _graph_and_features()
    assert _kernel(g, xs[16])[0].kernel is Kernel.SPMM_BLOCKED
    assert _kernel(g, xs[64])[0].kernel is Kernel.SPMM_BLOCKED_HUBS
    assert _calibration.stored() is None and _calibration.path() is None


def test_a_blocked_path_measured_slower_here_gives_way_to_the_csc_kernel(kept):
    g, xs = _graph_and_features()
    want = {F: _kernel(g, x)[1] for F, x in xs.items()}  # nothing stored yet: the blocked paths
    kept(one_vector=(1.0, 1.6), hub_split=(2.0, 1.5))
    plan, out = _kernel(g, xs[16])
    assert plan.kernel is Kernel.SPMM_CSC_VECTOR
    assert any("1.60 ms against the csc kernel's 1.00 ms, so the csc kernel runs" in r for r in plan.reasons)
    np.testing.assert_array_equal(out, want[16])  # sources in order: the same sums bit for bit
    plan, out = _kernel(g, xs[64])
    assert plan.kernel is Kernel.SPMM_BLOCKED_HUBS
    assert any("so the blocked path runs" in r for r in plan.reasons)
    np.testing.assert_allclose(out, want[64], rtol=1e-5)
    kept(one_vector=(1.0, 0.5), hub_split=(1.0, 3.0))
    assert _kernel(g, xs[16])[0].kernel is Kernel.SPMM_BLOCKED
    assert _kernel(g, xs[64])[0].kernel is Kernel.SPMM_CSC_VECTOR
    with gk.tuned(use_calibration=0):  # the knob: the rules alone, whatever is kept
        assert _kernel(g, xs[64])[0].kernel is Kernel.SPMM_BLOCKED_HUBS


def test_the_blocked_sddmm_follows_the_measurement_of_its_row_width(kept):
    g, xs = _graph_and_features()

    def plan(F):
        with gk.tuned(**LARGE_GRAPH_PATHS):
            return gk.explain(g, "sddmm", "dot", xs[F], xs[F], "u", "v")

    want = {F: gk.sddmm(g, "dot", xs[F], xs[F], "u", "v") for F in xs}
    assert plan(16).kernel is Kernel.SDDMM_BLOCKED and plan(64).kernel is Kernel.SDDMM_BLOCKED  # the rules
    kept(sddmm_narrow=(1.0, 0.5), sddmm_wide=(1.0, 1.75))  # 16 float32 features are 64 bytes: narrow
    assert plan(16).kernel is Kernel.SDDMM_BLOCKED
    wide = plan(64)
    assert wide.kernel is Kernel.SDDMM_CSR
    assert any("1.75 ms against the csr's 1.00 ms, so the csr runs" in r for r in wide.reasons)
    with gk.tuned(**LARGE_GRAPH_PATHS):
        np.testing.assert_allclose(gk.sddmm(g, "dot", xs[64], xs[64], "u", "v"), want[64], rtol=1e-5)
    kept(sddmm_narrow=(1.0, 2.0), sddmm_wide=(1.0, 0.5))
    assert plan(16).kernel is Kernel.SDDMM_CSR and plan(64).kernel is Kernel.SDDMM_BLOCKED


def test_copy_e_keeps_the_fixed_rule(kept):
    # the calibration times gathers of x; copy_e's blocked path is about edge rows
    kept(one_vector=(1.0, 9.0), hub_split=(1.0, 9.0))
    g, _ = _graph_and_features()
    w = np.random.default_rng(1).random((g.num_edges, 16)).astype(np.float32)
    with gk.tuned(**LARGE_GRAPH_PATHS):
        plan = gk.explain(g, "spmm", "copy_rhs", "sum", None, w)
    assert not any("calibrated" in r for r in plan.reasons)


def test_a_file_of_another_format_or_a_broken_one_is_not_followed(kept, tmp_path):
    kept(one_vector=(1.0, 9.0), hub_split=(1.0, 9.0))
    where = _calibration.path()
    where.write_text(where.read_text().replace(f'"format": {_calibration.FORMAT}', '"format": 999'))
    _calibration._loaded.clear()
    assert _calibration.stored() is None
    where.write_text("{ not json")
    _calibration._loaded.clear()
    assert _calibration.stored() is None and _calibration.choice("spmm_hub_split") is None
    with pytest.raises(ValueError, match="argument 'decision'"):
        _calibration.choice("spmm_anything")


def test_calibrate_measures_and_keeps_the_outcome(tmp_path, monkeypatch):
    where = tmp_path / "deep" / "calibration.json"
    monkeypatch.setenv(_calibration.ENV_VAR, str(where))
    assert _calibrate.compile_candidates() == 2 * len(_calibration.DECISIONS)
    with gk.tuned(l2_cache_bytes=1 << 16), _CompileCounter() as counter:  # features outgrow a small L2
        result = _calibrate.calibrate(repeats=2, scale=12)
    # graphkern compile compiles the candidates in a worker first: the timing process loads them all
    assert counter.compiled == 0
    kept = json.loads(where.read_text())
    assert kept == json.loads(json.dumps(result))
    assert set(kept["decisions"]) == set(_calibration.DECISIONS)
    for decision in kept["decisions"].values():
        assert decision["plain_ms"] > 0 and decision["blocked_ms"] > 0
    assert kept["decisions"]["spmm_one_vector_blocked"]["kernels"] == {"blocked": "SPMM_BLOCKED",
                                                                        "plain": "SPMM_CSC_VECTOR"}
    assert kept["decisions"]["spmm_hub_split"]["kernels"] == {"blocked": "SPMM_BLOCKED_HUBS",
                                                               "plain": "SPMM_CSC_VECTOR"}
    for name in ("sddmm_blocked_narrow", "sddmm_blocked_wide"):
        assert kept["decisions"][name]["kernels"] == {"blocked": "SDDMM_BLOCKED", "plain": "SDDMM_CSR"}
    assert kept["machine"] == _calibration.machine() and "scale 12" in kept["graph"]
    assert _calibration.stored() == result
    table = _calibrate.table(result)
    assert all(name in table for name in _calibration.DECISIONS)
    # where the features fit the caches there is no blocked path to time: nothing kept, the rules decide
    assert _calibrate.calibrate(repeats=1, scale=8)["decisions"] == {}
    with pytest.raises(ValueError, match="argument 'repeats'"):
        _calibrate.calibrate(repeats=0)
    with pytest.raises(ValueError, match="argument 'scale'"):
        _calibrate.calibrate(scale=40)
    monkeypatch.setenv(_calibration.ENV_VAR, "off")
    with pytest.raises(ValueError, match="off"):
        _calibrate.calibrate()


def test_the_default_file_is_per_machine_beside_numbas_cache(monkeypatch, tmp_path):
    monkeypatch.delenv(_calibration.ENV_VAR)
    monkeypatch.setenv("GRAPHKERN_CACHE_DIR", str(tmp_path))
    where = _calibration.path()
    assert where.parent == tmp_path / "calibration" and where.suffix == ".json"
    assert _calibration.stored() is None  # nothing measured in this cache


def test_use_calibration_is_a_checked_knob():
    with pytest.raises(ValueError, match="use_calibration"):
        with gk.tuned(use_calibration=2):
            pass


def test_compile_measures_between_what_the_calibration_decides_and_the_rest(tmp_path, monkeypatch):
    """``precompile(calibrate=True)``: the candidates' group runs first, the measurement once every group
    that does not depend on it has run, and the large-graph paths of the sparse families after it (each
    group reading the calibration as it is then); without ``calibrate`` nothing is measured."""
    monkeypatch.setenv(_calibration.ENV_VAR, str(tmp_path / "calibration.json"))
    events = []
    monkeypatch.setattr(precompile_module, "_run_group", lambda group: events.append(group[:4]) or (1, 0, 0.0))
    measured = {"decisions": {}}
    monkeypatch.setattr(_calibrate, "calibrate", lambda repeats: events.append(("measure", repeats)) or measured)
    report = precompile_module.precompile(families=["spmm", "bfs"], jobs=1, progress=False, calibrate=True,
                                          calibrate_repeats=3)
    assert report.calibration is measured
    assert events[0] == ("calibration", None, "int32", True)
    position = events.index(("measure", 3))
    assert events[position + 1:] == [("spmm", "float32", "int32", True)]
    assert set(events[1:position]) == {("spmm", "float32", "int32", False), ("bfs", None, "int32", False)}
    assert [f.family for f in report.families] == ["calibration", "spmm", "bfs"]
    events.clear()
    assert precompile_module.precompile(families=["spmm"], jobs=1, progress=False).calibration is None
    assert ("measure", 9) not in events and all(group[0] != "calibration" for group in events)
    monkeypatch.setenv(_calibration.ENV_VAR, "off")  # nowhere to keep one: compiled, not measured
    assert precompile_module.precompile(families=["spmm"], jobs=1, progress=False, calibrate=True).calibration is None
    with pytest.raises(TypeError, match="calibrate"):
        precompile_module.precompile(families=["spmm"], progress=False, calibrate="yes")
    with pytest.raises(ValueError, match="calibrate_repeats"):
        precompile_module.precompile(families=["spmm"], progress=False, calibrate_repeats=0)
