"""tools/compare_peers.py and tools/asv_run.py run as users run them: the comparison checks results,
times graphkern and whatever peers are installed, skips the others by name, and plots."""

import importlib.util
import sys
from pathlib import Path

import pytest

TOOLS = Path(__file__).resolve().parents[1] / "tools"


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_tool_{name}", TOOLS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is built
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def compare_peers():
    return _load("compare_peers")


def test_compare_peers_every_family_on_a_small_graph(compare_peers, capsys, tmp_path):
    code = compare_peers.main(["--scale", "10", "--convert-scale", "10", "--bfs-scale", "10", "--roots", "2",
                               "--repeat", "1", "--features", "8", "--plot", str(tmp_path), "--json",
                               str(tmp_path / "r.json")])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    for kernel in ("coo -> csr", "csr -> csc", "copy_u_sum", "u_mul_e_sum", "copy_u_max", "u_dot_v",
                   "edge_softmax", "direction_optimizing", "top_down", "spmsv", "bottom_up"):
        assert kernel in out.out, kernel
    assert "scipy" in out.out and "MISMATCH" not in out.out
    for name, package in compare_peers.PEERS.items():
        installed = importlib.util.find_spec(name) is not None
        assert (f"peer skipped: {package}" in out.err) != installed, name
    if importlib.util.find_spec("matplotlib") is not None:
        assert sorted(p.name for p in tmp_path.glob("*.png")) == ["compare_bfs.png", "compare_convert.png",
                                                                 "compare_spmm.png"]
    else:
        assert "plot skipped: matplotlib" in out.err
    assert (tmp_path / "r.json").stat().st_size > 0


def test_compare_peers_named_peers_only(compare_peers, capsys):
    code = compare_peers.main(["--family", "spmm", "--scale", "9", "--repeat", "1", "--features", "4",
                               "--peers", "torch"])
    out = capsys.readouterr()
    assert code == 0
    assert "peer skipped: python-graphblas (not asked for)" in out.err
    assert "graphblas plus_times" not in out.out


def test_compare_peers_pairs_graphkern_with_each_peer(compare_peers):
    """Each peer is alternated with graphkern on its own, and its ratio uses graphkern's time from that
    pairing (no timing is asserted: only the call order and the arithmetic)."""
    calls = []
    peers = {"a": lambda: calls.append("a"), "b": lambda: calls.append("b")}
    ours_all, medians, by_peer = compare_peers.paired_round_robin(lambda: calls.append("gk"), peers, 3)
    assert calls == ["gk", "a"] * 4 + ["gk", "b"] * 4  # a warm-up, then three alternations, per peer
    assert set(medians) == set(by_peer) == {"a", "b"}
    r = compare_peers.Result("spmm", "k", 16, 0.002, {"a": 0.003, "b": 0.004}, graphkern_by_peer={"a": 0.0015})
    assert r.ratios() == {"a": 2.0, "b": 2.0}
    table = compare_peers.format_table([r])
    assert "1.50 ms" in table and "2.00 ms" in table and table.count("2.00x") == 2
    alone, none, _ = compare_peers.paired_round_robin(lambda: calls.append("gk"), {}, 2)
    assert none == {} and calls[-3:] == ["gk"] * 3


def test_compare_peers_unknown_peer_is_an_error(compare_peers, capsys):
    with pytest.raises(SystemExit):
        compare_peers.main(["--peers", "cugraph"])
    assert "expected names among" in capsys.readouterr().err


def test_asv_run_builds_the_usual_commands(capsys):
    asv_run = _load("asv_run")
    if importlib.util.find_spec("asv") is None:
        pytest.skip("asv is not installed")
    assert asv_run.main(["--dry-run", "--quick", "-b", "SpMM"]) == 0
    printed = capsys.readouterr().out
    assert "asv machine --yes" in printed
    assert "run --python=same --set-commit-hash" in printed and "--quick" in printed and "-b SpMM" in printed
    assert asv_run.main(["--dry-run", "--compare", "main", "HEAD", "--publish"]) == 0
    printed = capsys.readouterr().out
    assert "continuous --factor 1.1 main HEAD" in printed and "asv publish" in printed


def test_tools_run_as_scripts():
    import subprocess

    proc = subprocess.run([sys.executable, str(TOOLS / "compare_peers.py"), "--help"], capture_output=True, text=True)
    assert proc.returncode == 0 and "--family" in proc.stdout


def test_dynamic_bench_every_figure_quick(tmp_path, capsys):
    """tools/dynamic_bench.py at its --quick sizes: every figure runs, IncrementalBFS levels are equal to a
    fresh search's, and the plot is written."""
    pytest.importorskip("matplotlib")
    dynamic_bench = _load("dynamic_bench")
    out = tmp_path / "rows.json"
    assert dynamic_bench.main(["--quick", "--plot", str(tmp_path), "--json", str(out)]) == 0
    import json

    rows = json.loads(out.read_text())
    figures = {r["figure"] for r in rows}
    assert figures == {"apply", "snapshot", "seed_step", "incremental_bfs", "packed_kernel"}
    assert all(r["levels_equal"] for r in rows if r["figure"] == "incremental_bfs")
    assert (tmp_path / "dynamic_updates.png").stat().st_size > 0
    assert "IncrementalBFS" in capsys.readouterr().out
