"""Temporal snapshots: the sliding-window differences against a set model, the readers, and a
TemporalGraph stepping forward and backward (the real bitcoin-alpha file when it is available)."""

import io

import numpy as np
import pytest
from graph_cases import BITCOIN

import graphkern as gk

temporal = gk.graph.temporal


def _window_set(src, dst, lo, hi):
    return set(zip(src[lo:hi].tolist(), dst[lo:hi].tolist()))


def _as_set(s, d):
    return set(zip(s.tolist(), d.tolist()))


@pytest.mark.fast
@pytest.mark.parametrize("base,step", [(10, 1), (40, 7), (100, 100), (5, 3)])
def test_diffs_equal_the_set_model(base, step):
    rng = np.random.default_rng(base + step)
    src, dst = rng.integers(0, 9, 400), rng.integers(0, 9, 400)  # many repeats inside a window
    d = temporal.sliding_window_diffs(src, dst, base=base, step=step)
    assert d.num_steps == 1 + (400 - base) // step
    current = _as_set(*d.initial)
    assert current == _window_set(src, dst, 0, base)
    for t, (a_s, a_d, d_s, d_d) in enumerate(d.steps, start=1):
        window = _window_set(src, dst, t * step, base + t * step)
        assert _as_set(a_s, a_d) == window - current
        assert _as_set(d_s, d_d) == current - window
        current = window


def test_percent_change_is_stgraphs_formula_and_bad_arguments():
    src = np.arange(1000) % 50
    d = temporal.sliding_window_diffs(src, src[::-1].copy(), base=400, percent_change=10, num_steps=5)
    assert d.num_steps == 5  # the window moves int(400 * 10 / 200) = 20 edges a step
    with pytest.raises(ValueError, match="exactly one"):
        temporal.sliding_window_diffs(src, src, base=10)
    with pytest.raises(ValueError, match="would not move"):
        temporal.sliding_window_diffs(src, src, base=10, percent_change=1)
    with pytest.raises(ValueError, match="argument 'base'"):
        temporal.sliding_window_diffs(src, src, base=5000, step=1)


def test_temporal_reader_reads_a_byte_order_mark_and_refuses_other_bytes_by_line(tmp_path):
    """Bytes that are not UTF-8 once escaped as UnicodeDecodeError, and bad fields as NumPy's message
    counting rows without the file; both are ValueErrors naming the file and line."""
    path = tmp_path / "t.txt"
    path.write_bytes("\ufeff0 1 5\n1 2 6\n".encode("utf-8"))
    src, dst, t, n = temporal.read_temporal_edges(path, relabel=False)
    assert (src.tolist(), dst.tolist(), t.tolist(), n) == ([0, 1], [1, 2], [5, 6], 3)
    # byte 10 of range(256) ends line 2
    for data, line, reason in ((b"0 1 5\n" + bytes(range(256)), 3, "expected UTF-8 text, found byte 0x80"),
                               (b"# c\n0 1 5\n1 2 \xe9\n", 3, "expected UTF-8 text, found byte 0xe9"),
                               (b"0 1 5\n1 2 6.5\n", 2, "expected 3 integer fields as on the first data line"),
                               (b"0 1 5\n\n1 2\n", 3, "expected 3 integer fields"),
                               (b"source,target,time\n0,1,5\n1,x,6\n", 3, "expected 3 integer fields")):
        path.write_bytes(data)
        with pytest.raises(ValueError, match=f"argument 'path': line {line} of '{path}': {reason}"):
            temporal.read_temporal_edges(path)
    with open(path, "w", encoding="latin-1") as fh:
        fh.write("0 1 5\n1 2 \xe9\n")
    with open(path, encoding="utf-8") as fh, pytest.raises(ValueError, match=f"'{path}' is not UTF-8 text"):
        temporal.read_temporal_edges(fh)


def test_snap_reader_and_relabelling():
    f = io.StringIO("# a comment\n10 20 5\n20 30 1\n10 30 3\n")
    src, dst, t, n = temporal.read_temporal_edges(f)
    assert t.tolist() == [1, 3, 5] and n == 3
    # first appearance in time order: 20 -> 0, 30 -> 1, 10 -> 2
    assert src.tolist() == [0, 2, 2] and dst.tolist() == [1, 1, 0]
    src, dst, t, n = temporal.read_temporal_edges(io.StringIO("1 2 0\n2 3 1\n"), relabel=False)
    assert n == 4 and src.tolist() == [1, 2]


@pytest.mark.parametrize("backend", ["cpu"])
def test_temporal_graph_forward_backward_seek(backend):
    rng = np.random.default_rng(5)
    src, dst = rng.integers(0, 30, 600), rng.integers(0, 30, 600)
    tg = temporal.TemporalGraph(src, dst, 30, base=120, step=40, backend=backend)
    snapshots = [_as_set(*tg.snapshot().edges())]
    while tg.time + 1 < tg.num_steps:
        g = tg.forward(csc=tg.time % 2 == 0)
        assert _as_set(*g.edges()) == _window_set(src, dst, tg.time * 40, 120 + tg.time * 40)
        host = g.to("cpu")
        csc = host.csc()
        cols = np.repeat(np.arange(30), np.diff(csc.indptr))
        assert set(zip(csc.indices.tolist(), cols.tolist())) == _as_set(*host.edges())
        assert g.num_edge_ids == tg.graph.max_edge_id
        snapshots.append(_as_set(*g.edges()))
    with pytest.raises(IndexError):
        tg.forward()
    while tg.time > 0:
        assert _as_set(*tg.backward().edges()) == snapshots[tg.time]
    with pytest.raises(IndexError):
        tg.backward()
    assert _as_set(*tg.seek(3).edges()) == snapshots[3] and tg.time == 3


def test_edge_ids_stay_while_an_edge_stays_in_the_window():
    src = np.array([0, 1, 2, 3, 4, 5])
    dst = np.array([1, 2, 3, 4, 5, 0])
    tg = temporal.TemporalGraph(src, dst, 6, base=3, step=1)
    before = dict(zip(zip(*[a.tolist() for a in tg.snapshot().edges()]), range(3)))
    g = tg.forward()
    csr = g.csr()
    ids = {(int(u), int(v)): int(e) for u, v, e in zip(np.repeat(np.arange(6), np.diff(csr.indptr)), csr.indices,
                                                       csr.eids)}
    assert ids[(1, 2)] == before[(1, 2)] and ids[(2, 3)] == before[(2, 3)]


@pytest.mark.skipif(not BITCOIN.exists(), reason="soc-sign-bitcoinalpha.csv is not available (GRAPHKERN_TEST_DATA)")
def test_bitcoin_alpha():
    src, dst, t, n = temporal.read_temporal_edges(BITCOIN)
    assert src.size == 24186 and n == 3783 and np.all(np.diff(t) >= 0)
    assert max(src.max(), dst.max()) == n - 1
    tg = temporal.TemporalGraph.from_file(BITCOIN, base=5000, percent_change=10)  # 250 edges a step
    assert tg.num_steps == 1 + (24186 - 5000) // 250
    seen = [tg.snapshot().num_edges]
    for _ in range(20):
        g = tg.forward()
        assert _as_set(*g.edges()) == _window_set(src, dst, tg.time * 250, 5000 + tg.time * 250)
        seen.append(g.num_edges)
    for _ in range(20):
        tg.backward()
    assert tg.snapshot().num_edges == seen[0]
    assert gk.bfs(tg.snapshot(), 0).num_reached >= 1


@pytest.mark.parametrize("offset", [2**32 - 3, 2**40, 2**62])
def test_diffs_with_large_node_ids_keep_source_and_destination(offset):
    """Ids near and past 2**32: src * width + dst no longer fits an int64 key and used to wrap, swapping
    sources and destinations. Every step still equals the set model, edges sorted by (src, dst)."""
    rng = np.random.default_rng(offset % 97)
    src = offset + rng.integers(0, 6, 300)
    dst = rng.integers(0, 6, 300) + np.where(rng.random(300) < 0.5, offset, 0)
    base, step = 30, 4
    d = temporal.sliding_window_diffs(src, dst, base=base, step=step)
    current = _as_set(*d.initial)
    assert current == _window_set(src, dst, 0, base)
    keys = list(zip(*(a.tolist() for a in d.initial)))
    assert keys == sorted(keys)
    for t, (a_s, a_d, d_s, d_d) in enumerate(d.steps, start=1):
        window = _window_set(src, dst, t * step, base + t * step)
        assert _as_set(a_s, a_d) == window - current
        assert _as_set(d_s, d_d) == current - window
        assert a_s.dtype == np.int64 and a_s.flags.c_contiguous
        current = window


@pytest.mark.parametrize("bad,error,match", [
    (float("nan"), ValueError, "finite"),
    (float("inf"), ValueError, "finite"),
    (-10, ValueError, "> 0"),
    (0, ValueError, "> 0"),
    (True, TypeError, "real number"),
    ("10", TypeError, "real number"),
    (None, ValueError, "exactly one"),
])
def test_percent_change_is_validated(bad, error, match):
    src = np.arange(100) % 7
    with pytest.raises(error, match=match) as info:
        temporal.sliding_window_diffs(src, src, base=40, percent_change=bad)
    if bad is not None:
        assert "percent_change" in str(info.value)
    with pytest.raises(error, match=match):
        temporal.TemporalGraph(src, src, 7, base=40, percent_change=bad)
    d = temporal.sliding_window_diffs(src, src, base=40, percent_change=np.float32(10))
    assert d.num_steps == 1 + 60 // 2


def test_negative_or_out_of_range_ids_are_refused():
    with pytest.raises(ValueError, match="argument 'src'.*>= 0"):
        temporal.sliding_window_diffs(np.array([0, -1, 2]), np.array([1, 2, 0]), base=2, step=1)
    with pytest.raises(ValueError, match="argument 'dst'.*< 5"):
        # an id past num_nodes in a late step: refused before any step runs
        temporal.TemporalGraph(np.array([0, 1, 2, 3]), np.array([1, 2, 3, 9]), 5, base=2, step=1)
