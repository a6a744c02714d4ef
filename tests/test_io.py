"""Readers and writers: SNAP text, CSV with a header, Matrix Market, .npz round trips."""

import io
import os

import numpy as np
import pytest
import scipy.io
import scipy.sparse as sp
from graph_cases import BITCOIN, FACEBOOK

import graphkern as gk


def _write(tmp_path, text, name="g.txt"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.fast
def test_snap_text_with_comments_tabs_and_weights(tmp_path):
    path = _write(tmp_path, "# Directed graph\n# FromNodeId\tToNodeId\n0\t1\t0.5\n1 2 2e1\n\n2,0,-3\n")
    g = gk.graph.read_edgelist(path)
    assert g.num_nodes == 3
    assert g.edges()[0].tolist() == [0, 1, 2] and g.edges()[1].tolist() == [1, 2, 0]
    np.testing.assert_array_equal(g.edata["weight"], [0.5, 20.0, -3.0])


def test_relabel_and_undirected(tmp_path):
    path = _write(tmp_path, "10 30\n30 7\n7 7\n")
    g = gk.graph.read_edgelist(path, relabel=True, undirected=True)
    assert g.num_nodes == 3 and g.ndata["orig_id"].tolist() == [7, 10, 30]
    assert g.num_edges == 5  # the self-loop once
    src, dst = g.edges()
    assert (src[:3].tolist(), dst[:3].tolist()) == ([1, 2, 0], [2, 0, 0])


@pytest.mark.parametrize("text, line", [
    ("0 1\n1\n", 2), ("0 1\n1 2 3\n", 2), ("0 1\n1.5 2\n", 2), ("0 1\nx y\n2 z\n", 2)])
def test_malformed_lines_name_the_line(tmp_path, text, line):
    path = _write(tmp_path, text)
    with pytest.raises(ValueError, match=f"line {line} of"):
        gk.graph.read_edgelist(path)


def test_negative_ids_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="argument 'src'"):
        gk.graph.read_edgelist(_write(tmp_path, "0 1\n-1 2\n"))


def test_empty_file(tmp_path):
    g = gk.graph.read_edgelist(_write(tmp_path, "# nothing\n"))
    assert g.num_edges == 0 and g.num_src == 0


def test_many_chunks_parse_like_numpy(tmp_path):
    rng = np.random.default_rng(0)
    edges = rng.integers(0, 10**6, (300_000, 2))
    weights = rng.random(300_000).round(4)
    path = tmp_path / "big.txt"
    with open(path, "w") as fh:
        fh.write("# header\n")
        for (u, v), w in zip(edges.tolist(), weights.tolist()):
            fh.write(f"{u}\t{v}\t{w}\n")
    g = gk.graph.read_edgelist(path, num_nodes=10**6)
    src, dst = g.edges()
    np.testing.assert_array_equal(src, edges[:, 0])
    np.testing.assert_array_equal(dst, edges[:, 1])
    np.testing.assert_allclose(g.edata["weight"], weights, rtol=1e-12)


def test_facebook_real_graph():
    if not FACEBOOK.exists():
        pytest.skip("the real-world data files are not available (GRAPHKERN_TEST_DATA)")
    g = gk.graph.read_edgelist(FACEBOOK, undirected=True)
    assert g.num_nodes == 4039 and g.num_edges == 2 * 88234
    data = np.loadtxt(FACEBOOK, dtype=np.int64)
    np.testing.assert_array_equal(g.edges()[0][:88234], data[:, 0])


def test_bitcoin_csv_with_header_and_sparse_ids():
    if not BITCOIN.exists():
        pytest.skip("the real-world data files are not available (GRAPHKERN_TEST_DATA)")
    g = gk.graph.read_edgelist(BITCOIN, relabel=True)
    assert g.num_edges == 24186 and g.num_nodes == 3783
    assert g.ndata["orig_id"].max() == 7604
    assert set(g.edata) == {"rating", "time"}
    assert g.edata["rating"].dtype == np.int64 and g.edata["time"].dtype == np.int64
    assert g.edata["rating"].min() >= -10 and g.edata["rating"].max() <= 10
    raw = np.loadtxt(BITCOIN, delimiter=",", skiprows=1, dtype=np.int64)
    np.testing.assert_array_equal(g.ndata["orig_id"][g.edges()[0]], raw[:, 0])
    np.testing.assert_array_equal(g.edata["time"], raw[:, 3])


@pytest.mark.fast
def test_matrix_market(tmp_path):
    A = sp.random(20, 20, density=0.2, random_state=0, format="coo")
    path = tmp_path / "a.mtx"
    scipy.io.mmwrite(path, A)
    g = gk.graph.read_mtx(path)
    assert abs(g.to_scipy(data=g.edata["weight"]).astype(np.float64) - A.tocsr()).max() < 1e-12


MTX_HEADER = "%%MatrixMarket matrix coordinate {field} general\n% a comment\n3 3 2\n"


@pytest.mark.parametrize("field, entries, message", [
    ("integer", "1 2 5\n2 3 1.5\n", "line 5 of .*: expected an integer value in an integer matrix, found '1.5'"),
    ("integer", "1 2 5\n2 3 2e3\n", "found '2e3'"),
    ("pattern", "1 2\n2 3 7\n", "line 5 of .*: expected 2 fields in a pattern matrix, found 3"),
    ("real", "1 2 0.5\n2 3\n", "expected 3 fields in a real matrix, found 2"),
])
def test_matrix_market_values_are_read_as_declared_or_refused_by_line(tmp_path, field, entries, message):
    path = tmp_path / "m.mtx"
    path.write_text(MTX_HEADER.format(field=field) + entries)
    with pytest.raises(ValueError, match=message):
        gk.graph.read_mtx(path)


def test_matrix_market_exact_values(tmp_path):
    path = tmp_path / "m.mtx"
    path.write_text(MTX_HEADER.format(field="integer") + "1 2 -5\n2 3 7\n")
    g = gk.graph.read_mtx(path)
    assert g.edata["weight"].tolist() == [-5, 7] and g.edges()[0].tolist() == [0, 1]
    path.write_text(MTX_HEADER.format(field="real") + "1 2 0.1\n3 1 1e-300\n")
    assert gk.graph.read_mtx(path).edata["weight"].tolist() == [0.1, 1e-300]  # bit-exact
    path.write_text(MTX_HEADER.format(field="pattern") + "1 2\n2 3\n")
    g = gk.graph.read_mtx(path)
    assert "weight" not in g.edata and g.edges()[1].tolist() == [1, 2]


def test_matrix_market_entries_are_edges_as_the_file_lists_them(tmp_path):
    """An explicit zero is an edge of value 0 and an entry given twice is two parallel edges: a CSR
    conversion once summed the repeated entry into one edge and Graph.from_scipy dropped the zero."""
    path = tmp_path / "m.mtx"
    path.write_text(MTX_HEADER.replace("3 3 2", "3 3 4").format(field="real") + "2 1 0\n1 2 0.5\n1 2 0.25\n3 3 1\n")
    g = gk.graph.read_mtx(path)
    src, dst = g.edges()
    assert (src.tolist(), dst.tolist()) == ([0, 0, 1, 2], [1, 1, 0, 2])  # row by row, file order in a row
    assert g.edata["weight"].tolist() == [0.5, 0.25, 0.0, 1.0]
    path.write_text("%%MatrixMarket matrix coordinate integer general\n2 3 1\n2 3 -4\n")
    g = gk.graph.read_mtx(path)  # a rectangular matrix is a bipartite graph
    assert (g.num_src, g.num_dst, g.edges()[1].tolist(), g.edata["weight"].tolist()) == (2, 3, [2], [-4])


@pytest.mark.parametrize("text, reason", [
    ("%%MatrixMarket matrix coordinate integer general\n3 3 1\n1 2 9223372036854775808\n",
     "Line 3: Integer out of range"),  # SciPy's OverflowError, once let through
    ("%%MatrixMarket matrix coordinate real general\n3 3 1\n4 1 1.5\n", "Line 3: Row index out of bounds"),
    ("%%MatrixMarket matrix coordinate real general\n3 3 3\n1 1 1.5\n", "Truncated file"),
    ("3 3 1\n1 1 1.5\n", "Missing banner"),
    ("\ufeff%%MatrixMarket matrix coordinate real general\n3 3 1\n1 1 1\n", "Missing banner"),
])
def test_matrix_market_files_scipy_refuses_are_value_errors_naming_the_file(tmp_path, text, reason):
    path = tmp_path / "m.mtx"
    path.write_text(text)
    with pytest.raises(ValueError, match=f"argument 'path': '{path}' is refused as a Matrix Market file: .*{reason}"):
        gk.graph.read_mtx(path)


def test_save_load_round_trip(tmp_path):
    g = gk.Graph.from_coo([0, 2, 1], [1, 0, 0], num_nodes=(3, 2))
    g.edata["w"] = np.array([1.5, 2.5, 3.5])
    g.ndata["x"] = np.arange(3)
    path = tmp_path / "g.npz"
    gk.graph.save(g, path)
    h = gk.graph.load(path)
    assert (h.num_src, h.num_dst, h.is_block) == (3, 2, True)
    np.testing.assert_array_equal(h.edges()[0], [0, 2, 1])
    np.testing.assert_array_equal(h.edata["w"], g.edata["w"])
    np.testing.assert_array_equal(h.ndata["x"], g.ndata["x"])


@pytest.mark.parametrize("name", ["g.npz", "g", "g.graph", "dir.npz/g"])
def test_save_then_load_of_the_same_path_whatever_its_name(tmp_path, name):
    """save writes at the path as given (numpy.savez would append .npz to 'g' and load('g') would fail)."""
    g = gk.Graph.from_coo([0, 2, 1], [1, 0, 0], num_nodes=3)
    path = tmp_path / name
    path.parent.mkdir(exist_ok=True)
    gk.graph.save(g, path)
    assert path.is_file() and not (tmp_path / (name + ".npz")).exists()
    np.testing.assert_array_equal(gk.graph.load(path).edges()[0], [0, 2, 1])
    np.testing.assert_array_equal(gk.graph.load(str(path)).edges()[1], [1, 0, 0])


def test_an_edge_list_with_a_utf8_byte_order_mark(tmp_path):
    path = tmp_path / "bom.txt"
    path.write_bytes(b"\xef\xbb\xbf0 1\n1 2\n")
    g = gk.graph.read_edgelist(path)
    np.testing.assert_array_equal(g.edges()[0], [0, 1])
    path.write_bytes(b"\xef\xbb\xbfsrc,dst\n0,1\n")  # a CSV header after the mark
    np.testing.assert_array_equal(gk.graph.read_edgelist(path).edges()[1], [1])
    path.write_bytes(b"0 1\n\xef\xbb\xbf1 2\n")  # a mark inside the file is not a mark: refused by line
    with pytest.raises(ValueError, match="line 2 of"):
        gk.graph.read_edgelist(path)


def test_save_refuses_object_arrays(tmp_path):
    g = gk.Graph.from_coo([0], [1])
    g.ndata["names"] = np.array(["a", {"b": 1}], dtype=object)
    with pytest.raises(TypeError, match="pickling"):
        gk.graph.save(g, tmp_path / "g.npz")


def _path_as(kind: str, path):
    return {"str": str(path), "Path": path, "bytes": os.fsencode(path)}[kind]


def _write_edgelist(g, path):
    src, dst = g.edges()
    with open(path, "w") as f:
        f.writelines(f"{u}\t{v}\t{w!r}\n" for u, v, w in zip(src.tolist(), dst.tolist(), g.edata["weight"].tolist()))


def _write_mtx(g, path):
    with open(path, "wb") as f:  # a file object: scipy.io.mmwrite appends .mtx to a name without it
        scipy.io.mmwrite(f, g.to_scipy("coo", data=g.edata["weight"]))


READERS = {  # format -> (write g at a path, read it back)
    "npz": (gk.graph.save, gk.graph.load),
    "edge list": (_write_edgelist, gk.graph.read_edgelist),
    "mtx": (_write_mtx, gk.graph.read_mtx),
}


@pytest.mark.parametrize("fmt", sorted(READERS))
@pytest.mark.parametrize("kind", ["str", "Path", "bytes"])
@pytest.mark.parametrize("name", ["g", "g.npz", "g.txt", "g.mtx"])
def test_every_reader_gives_back_the_graph_written_whatever_the_path_type(tmp_path, fmt, kind, name):
    """save/load, an edge list and a Matrix Market file: written at a path given as str, pathlib.Path or
    bytes, with or without (or with another format's) suffix, read back as the same graph (edges in
    id order, node count, edge weights)."""
    g = gk.Graph.from_coo([0, 2, 1, 3], [1, 0, 3, 2], num_nodes=4)
    g.edata["weight"] = np.array([0.5, 1.25, -2.0, 3.0])
    write, read = READERS[fmt]
    path = _path_as(kind, tmp_path / name)
    write(g, path)
    h = read(path)
    assert (h.num_src, h.num_dst, h.num_edges) == (g.num_src, g.num_dst, g.num_edges)
    # Matrix Market stores entries, not edge ids: from_scipy numbers them in CSR order
    canonical = (lambda x: _by_endpoints(x)) if fmt == "mtx" else (lambda x: (*x.edges(), x.edata["weight"]))
    for got, want in zip(canonical(h), canonical(g)):
        np.testing.assert_array_equal(got, want)


def _by_endpoints(g):
    src, dst = g.edges()
    order = np.lexsort((dst, src))
    return src[order], dst[order], g.edata["weight"][order]


def test_save_and_load_take_paths_not_file_objects(tmp_path):
    """A file object is refused by name (save writes, and load reads, the file at a path); the
    temporal reader is the one reader that also takes an open text file."""
    g = gk.Graph.from_coo([0, 1], [1, 0])
    with open(tmp_path / "g.npz", "wb") as f, pytest.raises(TypeError, match="argument 'path'"):
        gk.graph.save(g, f)
    with pytest.raises(TypeError, match="argument 'path'"):
        gk.graph.load(io.BytesIO(b""))
    src, dst, t, n = gk.graph.temporal.read_temporal_edges(io.StringIO("0 1 5\n1 0 6\n"))
    assert (src.tolist(), dst.tolist(), t.tolist(), n) == ([0, 1], [1, 0], [5, 6], 2)
