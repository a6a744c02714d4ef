"""tools/compare_peers.py and tools/asv_run.py run as users run them: the comparison checks results,
times graphkern and whatever peers are installed, skips the others by name, and plots."""

import importlib.util
import json
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


def test_compare_peers_planner_family_times_every_candidate(compare_peers, capsys):
    """The planner family on a graph whose features outgrow a tiny L2: every candidate of copy_u_sum (CSC,
    blocks, hub split) and u_dot_v (CSR, blocks) is planned, checked against the planned result and timed."""
    import graphkern as gk

    with gk.tuned(l2_cache_bytes=4096, blocked_min_edges=0):  # what GRAPHKERN_TUNING sets for a whole run
        code = compare_peers.main(["--family", "planner", "--planner-scales", "9", "--planner-features", "16",
                                   "64", "--planner-dtypes", "float32", "--planner-idtypes", "int32", "--repeat", "1"])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    rows = [line.split() for line in out.out.splitlines() if line.startswith("planner ")]
    by_op = {}
    for row in rows:
        by_op.setdefault(row[1], set()).add(row[row.index("ms") + 1])  # the candidate named after the time
    assert by_op == {"copy_u_sum": {"csc", "blocked", "hubs"}, "u_dot_v": {"csr", "blocked"}}


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
    assert figures == {"apply", "consecutive_inserts", "sliding_window", "snapshot", "seed_step", "incremental_bfs",
                       "packed_kernel"}
    assert all(r["levels_equal"] for r in rows if r["figure"] == "incremental_bfs")
    assert (tmp_path / "dynamic_updates.png").stat().st_size > 0
    assert "IncrementalBFS" in capsys.readouterr().out


def test_dynamic_bench_stream_figures_and_targets_quick(tmp_path, capsys):
    """Consecutive new batches, the sliding window and the snapshot at --quick sizes, with their targets."""
    dynamic_bench = _load("dynamic_bench")
    out = tmp_path / "rows.json"
    assert dynamic_bench.main(["--quick", "--figures", "consecutive", "window", "snapshot", "--json", str(out)]) == 0
    import json

    rows = json.loads(out.read_text())
    # every batch of the stream is new, and the window deletes exactly as many edges as it inserts
    consecutive = [r for r in rows if r["figure"] == "consecutive_inserts"]
    assert len(consecutive) == 1 and consecutive[0]["updates"] == consecutive[0]["batch"] * consecutive[0]["batches"]
    window = [r for r in rows if r["figure"] == "sliding_window"]
    assert [r["nodes"] for r in window] == [1 << 13, 1 << 14]
    assert all(r["updates"] == 2 * r["batch"] * r["batches"] for r in window)
    assert all(isinstance(r["met"], bool) for r in rows)
    targets = capsys.readouterr().out.split("targets", 1)[1]
    for line in ("consecutive_inserts", "sliding_window", "snapshot csr+csc", ">= 5 M/s", ">= 8 M/s", "<= 20 ms"):
        assert line in targets


# --- the gap family (GAP's bfs is not part of the repository: a stand-in script plays its part) -------------

GAP_SAMPLE = """Read Time:           0.51250
Build Time:          0.20031
Graph has 4096 nodes and 61234 undirected edges for degree: 14
Trial Time:          0.00310
Trial Time:          0.00122
Trial Time:          0.00118
Average Time:        0.00183
"""

# prints what GAP's bfs prints for -sf FILE (the simple undirected graph's counts) or -g SCALE
FAKE_GAP_BFS = """#!{python}
import sys
import numpy as np
args = sys.argv[1:]
trials = int(args[args.index("-n") + 1])
if "-sf" in args:
    e = np.loadtxt(args[args.index("-sf") + 1], dtype=np.int64, ndmin=2)
    pairs = np.unique(np.sort(e[e[:, 0] != e[:, 1]], axis=1), axis=0)
    print("Read Time:           0.01000")
    print("Build Time:          0.00500")
    print(f"Graph has {{int(e.max()) + 1}} nodes and {{len(pairs)}} undirected edges for degree: 3")
else:
    print("Generate Time:       0.02000")
    print("Build Time:          0.00400")
    print("Graph has 64 nodes and 700 undirected edges for degree: 10")
for _ in range(trials):
    print("Trial Time:          0.00100")
print("Average Time:        0.00100")
"""


@pytest.fixture(scope="module")
def gap_peer():
    return _load("gap_peer")


def test_gap_family_is_skipped_without_a_binary(compare_peers, capsys):
    code = compare_peers.main(["--family", "gap"])
    out = capsys.readouterr()
    assert code == 0
    assert out.err.count("family skipped: gap (needs --gap-bfs PATH") == 1
    assert "\ngap " not in out.out


def test_gap_family_refuses_a_missing_binary(compare_peers, tmp_path):
    with pytest.raises(SystemExit, match="argument --gap-bfs: expected an executable"):
        compare_peers.main(["--family", "gap", "--gap-bfs", str(tmp_path / "nothing")])


def test_gap_output_is_parsed(gap_peer):
    run = gap_peer.parse_gap_output(GAP_SAMPLE)
    assert run["read_s"] == 0.5125 and run["build_s"] == 0.20031 and run["generate_s"] is None
    assert run["trials_s"] == [0.0031, 0.00122, 0.00118] and run["average_s"] == 0.00183
    assert (run["nodes"], run["edges"], run["undirected"]) == (4096, 61234, True)
    generated = gap_peer.parse_gap_output("Generate Time:       1.5e-02\nBuild Time: 0.3\n"
                                          "Graph has 8 nodes and 9 directed edges for degree: 1\n")
    assert generated["generate_s"] == 0.015 and generated["undirected"] is False and generated["trials_s"] == []


def test_gap_edge_list_round_trip(gap_peer, tmp_path):
    """graphkern reads back exactly the tuples written, in order: loops, repeats and every digit count."""
    import numpy as np

    import graphkern as gk

    rng = np.random.default_rng(3)
    src = np.concatenate([[0, 9, 10, 99, 100, 5, 5], rng.integers(0, 10**12, 500)])
    dst = np.concatenate([[0, 10, 9, 100, 99, 5, 5], rng.integers(0, 10**12, 500)])
    path = tmp_path / "g.el"
    gap_peer.write_edgelist(path, src, dst)
    assert path.read_bytes().startswith(b"0 0\n9 10\n10 9\n99 100\n")
    got_src, got_dst = gk.graph.read_edgelist(path, relabel=True).edges()
    ids = gk.graph.read_edgelist(path, relabel=True).ndata["orig_id"]
    assert np.array_equal(ids[got_src], src) and np.array_equal(ids[got_dst], dst)
    small = tmp_path / "small.el"
    a, b = gap_peer.shuffled_grid_edges(4)
    gap_peer.write_edgelist(small, a, b)
    g_src, g_dst = gk.graph.read_edgelist(small).edges()
    assert np.array_equal(g_src, a) and np.array_equal(g_dst, b)
    with pytest.raises(ValueError, match="non-negative"):
        gap_peer.write_edgelist(small, [-1], [0])


def test_gap_family_with_a_stand_in_binary(compare_peers, gap_peer, capsys, tmp_path):
    """The whole family on tiny graphs, with a script that prints GAP's lines: both sides read one file,
    graphkern's trees are validated, the graph counts agree, and the figures reach the table and JSON."""
    import json
    import stat

    fake = tmp_path / "bfs"
    fake.write_text(FAKE_GAP_BFS.format(python=sys.executable))
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    code = compare_peers.main(["--family", "gap", "--gap-bfs", str(fake), "--gap-scale", "6", "--grid-side", "8",
                               "--roots", "2", "--gap-graphs", "kronecker", "grid", "--gap-graph500", "6",
                               "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert "MISMATCH" not in out.out and "OMP_NUM_THREADS=" in out.out
    for row in ("kronecker 6: as called", "kronecker 6: warm", "grid 8x8: as called", "graph500 6: build"):
        assert row in out.out, row
    saved = json.loads((tmp_path / "r.json").read_text())["results"]
    grid = next(r["extra"] for r in saved if r["kernel"] == "grid 8x8: as called")
    assert grid["same_graph"] and grid["valid"] and grid["undirected_edges"] == 2 * 8 * 7
    assert grid["edges_per_root"] == [2 * 8 * 7] * 2  # the grid is connected: every search reaches it all
    assert grid["warmup_root"] not in grid["roots"] and len(grid["gap"]["trials_s"]) == 2
    assert grid["ratio"] == pytest.approx(grid["graphkern"]["hmean_teps"] / grid["gap"]["hmean_teps"])


# --- the dgl family (GNN training steps against DGL; the main environment has no dgl) -----------------------

def test_dgl_family_is_skipped_without_dgl(compare_peers, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "dgl", None)  # `import dgl` raises ImportError, installed or not
    code = compare_peers.main(["--family", "dgl", "--peers", ""])
    out = capsys.readouterr()
    assert code == 0
    assert out.err.count("family skipped: dgl (not importable") == 1
    assert "\ndgl " not in out.out


def test_dgl_models_family_is_skipped_without_dgl(compare_peers, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "dgl", None)
    code = compare_peers.main(["--family", "dgl-models", "--peers", ""])
    out = capsys.readouterr()
    assert code == 0
    assert out.err.count("family skipped: dgl-models (dgl not importable") == 1
    assert "\ndgl-models " not in out.out


def test_dgl_models_first_step_runs_without_dgl(capsys, monkeypatch):
    """The new-process mode of tools/dgl_models.py: graphkern's model alone needs no DGL (GIN here)."""
    monkeypatch.setitem(sys.modules, "dgl", None)
    assert _load("dgl_models").main(["--first-step", "gin", "--lib", "graphkern"]) == 0
    row = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert row["model"] == "gin" and row["first_s"] > 0 and row["loss"] > 0


def test_dgl_family_on_small_graphs(compare_peers, capsys, tmp_path):
    pytest.importorskip("dgl")
    edges = tmp_path / "ring.txt"
    edges.write_text("# a ring of 40 nodes with chords\n" + "".join(f"{i} {(i + 1) % 40}\n{i} {(i * 7) % 40}\n"
                                                                   for i in range(40)))
    code = compare_peers.main(["--family", "dgl", "--peers", "", "--repeat", "1", "--dgl-graph", str(edges),
                               "kronecker", "--dgl-scale", "7", "--dgl-features", "8", "--dgl-hidden", "16",
                               "--dgl-classes", "4", "--json", str(tmp_path / "r.json")])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert "MISMATCH" not in out.out
    import json

    rows = json.loads((tmp_path / "r.json").read_text())["results"]
    assert sorted(r["kernel"] for r in rows) == sorted(f"{graph}: {model}" for graph in ("ring.txt", "kronecker 7")
                                                       for model in ("gcn", "gat", "gin", "rgcn"))
    for row in rows:
        assert row["family"] == "dgl" and row["check"] == "ok"
        assert row["extra"]["target"] == (2.0 if row["kernel"].endswith("gat") else 1.0)
        assert row["extra"]["forward_rel_diff"] <= 1e-4
        assert all(ratio > 0 for ratio in row["ratios"].values())


# ------------------------------------------------------------------------- tools/dgl_ops_tests.py

@pytest.fixture(scope="module")
def dgl_ops_tests():
    return _load("dgl_ops_tests")


def _write_dgl_test_tree(root: Path, tool) -> None:
    """Stand-ins for the files the tool takes from DGL: its test files and one file per helper folder."""
    for rel in (*tool.TEST_FILES, *(f"{folder}/__init__.py" for folder in tool.HELPERS)):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"# {rel}\n")


def test_dgl_ops_tests_extracts_from_a_checkout_and_a_bare_git_dir(dgl_ops_tests, tmp_path):
    import subprocess

    checkout = tmp_path / "dgl"
    _write_dgl_test_tree(checkout, dgl_ops_tests)
    files = dgl_ops_tests.extract(checkout, tmp_path / "from_checkout")
    assert [f.read_text() for f in files] == [f"# {rel}\n" for rel in dgl_ops_tests.TEST_FILES]
    assert (tmp_path / "from_checkout" / "tests/backend/__init__.py").is_file()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"]
    subprocess.run([*git, "init", "-q", str(checkout)], check=True)
    subprocess.run([*git, "-C", str(checkout), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(checkout), "commit", "-qm", "tests"], check=True)
    subprocess.run([*git, "clone", "-q", "--bare", str(checkout), str(tmp_path / "dgl.git")], check=True)
    files = dgl_ops_tests.extract(tmp_path / "dgl.git", tmp_path / "from_git")
    assert [f.read_text() for f in files] == [f"# {rel}\n" for rel in dgl_ops_tests.TEST_FILES]
    with pytest.raises(SystemExit, match="expected a DGL checkout"):
        dgl_ops_tests.extract(tmp_path / "from_git" / "tests" / "utils", tmp_path / "nowhere")


def test_dgl_ops_tests_shim_converts_the_graph_and_restores_dgl_ops(dgl_ops_tests, monkeypatch):
    """The shim on a stand-in ``dgl.ops``: graph functions get Graph.from_dgl's graph, the others are
    graphkern's own, names graphkern lacks stay DGL's, and everything is put back afterwards."""
    import types

    torch = pytest.importorskip("torch")
    import graphkern.torch as gkt

    class FakeDGLGraph:  # what Graph.from_dgl reads (it is duck-typed)
        canonical_etypes = [("_N", "_E", "_N")]
        idtype = torch.int64
        is_block = False

        def edges(self, order="eid", etype=None):
            return torch.tensor([0, 1]), torch.tensor([1, 1])

        def num_src_nodes(self):
            return 2

        num_dst_nodes = num_src_nodes

        def formats(self):
            return {"created": ["coo"], "not created": []}

    dgl, ops = types.ModuleType("dgl"), types.ModuleType("dgl.ops")
    dgl.ops = ops
    originals = {name: object() for name in ("copy_u_sum", "segment_mm", "use_libxsmm")}
    vars(ops).update(originals)
    monkeypatch.setitem(sys.modules, "dgl", dgl)
    monkeypatch.setitem(sys.modules, "dgl.ops", ops)
    shim = dgl_ops_tests.GraphkernShim()
    shim.pytest_configure(None)
    assert ops.segment_mm is gkt.ops.segment_mm and ops.use_libxsmm is originals["use_libxsmm"]
    assert ops.copy_u_sum(FakeDGLGraph(), torch.ones(2, 1)).ravel().tolist() == [0.0, 2.0]
    shim.pytest_unconfigure(None)
    assert all(getattr(ops, name) is value for name, value in originals.items())
