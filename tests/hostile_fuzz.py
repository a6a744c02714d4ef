"""Random bad and edge-case input to every entry point that reaches compiled code (run by test_hostile_fuzz.py).

Run as a script under ``NUMBA_BOUNDSCHECK=1``, where a compiled out-of-bounds access raises IndexError
instead of corrupting memory. Each entry point either gives the reference's answer or refuses the input
with a ValueError or TypeError that names an argument (``argument 'x'`` or the parameter's name); any other
exception (IndexError, ZeroDivisionError, AttributeError, KeyError, an unpacking error ...) fails, as does
a change to the caller's arrays. The number of examples per property is the script's first argument.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import scipy.sparse as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphkern as gk

EXAMPLES = int(sys.argv[1]) if len(sys.argv) > 1 else 40
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
                    suppress_health_check=list(HealthCheck))

# ids: in range, negative, past the nodes, past int32 and int64's edges, as floats, bools, objects
ID_VALUES = st.one_of(st.integers(0, 12), st.integers(-3, -1), st.integers(13, 40),
                      st.sampled_from([2**31 - 1, 2**31, 2**32 + 1, 2**63 - 1]))
ID_DTYPES = st.sampled_from(["int8", "int32", "int64", "uint32", "uint64", "float64", "bool", "object"])
COUNTS = st.one_of(st.none(), st.integers(-2, 15), st.sampled_from([2**64, 1.5, 2.0, float("nan"), "3"]))


def refused(exc: BaseException) -> bool:
    """A clear refusal: ValueError/TypeError (or graphkern's own errors) whose message names what is wrong."""
    if not isinstance(exc, (ValueError, TypeError, gk.GraphkernError, OverflowError)):
        return False
    text = str(exc)
    return ("argument" in text or "expected" in text or "found" in text) and len(text) > 20


def ids_array(draw, size):
    values = draw(st.lists(ID_VALUES, min_size=size, max_size=size))
    dtype = draw(ID_DTYPES)
    try:
        return np.array(values, dtype=dtype)
    except (OverflowError, ValueError):
        return np.array(values, dtype=object)


@st.composite
def coo_input(draw):
    size = draw(st.integers(0, 30))
    src = ids_array(draw, size)
    dst = ids_array(draw, draw(st.sampled_from([size, size, size, max(size - 1, 0), size + 1])))
    return src, dst, draw(COUNTS)


def reference_ok(src, dst, num_nodes):
    """Would a careful reader accept this COO: integer ids in [0, n), equal lengths, n a count?"""
    if src.shape != dst.shape or src.dtype.kind not in "iu" or dst.dtype.kind not in "iu":
        return False
    if num_nodes is not None and (not isinstance(num_nodes, int) or isinstance(num_nodes, bool)):
        return False
    ids = [int(v) for v in src.tolist() + dst.tolist()]
    top = max(ids, default=-1) + 1
    n = top if num_nodes is None else num_nodes
    return min(ids, default=0) >= 0 and 0 <= n < 2**31 and top <= n


def check_kernels(g, src, dst, n):
    """The kernels on a graph the constructor accepted, against NumPy."""
    x = np.arange(n * 3, dtype=np.float64).reshape(n, 3)
    want = np.zeros((n, 3))
    np.add.at(want, dst, x[src])
    assert np.allclose(gk.spmm(g, "copy_lhs", "sum", x), want)
    assert np.allclose(gk.sddmm(g, "add", x, x)[:, 0], x[src, 0] + x[dst, 0])
    gk.edge_softmax(g, np.ones((g.num_edges, 1)))
    if n:
        levels = gk.bfs(g, 0).levels
        assert levels[0] == 0
        reached = sp.csgraph.breadth_first_order(sp.csr_matrix((np.ones(src.size), (src, dst)), shape=(n, n)), 0,
                                                 return_predecessors=False)
        assert set(np.flatnonzero(levels >= 0).tolist()) == set(reached.tolist())


@SETTINGS
@given(coo_input())
def test_from_coo(args):
    src, dst, num_nodes = args
    before = (src.copy(), dst.copy())
    try:
        g = gk.Graph.from_coo(src, dst, num_nodes=num_nodes)
    except Exception as exc:  # noqa: BLE001 - the property is the kind of exception
        assert refused(exc), repr(exc)
        assert not reference_ok(src, dst, num_nodes), f"valid input refused: {exc}"
    else:
        assert reference_ok(src, dst, num_nodes), "invalid input accepted"
        src[...] = 0 if src.size else src  # the caller changes its arrays: the graph must not see it
        dst[...] = 0 if dst.size else dst
        check_kernels(g, before[0].astype(np.int64), before[1].astype(np.int64), g.num_nodes)
    finally:
        src[...], dst[...] = before


@st.composite
def csr_input(draw):
    rows = draw(st.integers(0, 8))
    counts = draw(st.lists(st.integers(-1, 4), min_size=rows, max_size=rows))
    indptr = np.concatenate([[draw(st.sampled_from([0, 0, 0, 1, -1]))], np.cumsum(counts)]).astype(
        draw(st.sampled_from(["int64", "int32", "float64", "uint8"])))
    if draw(st.booleans()) and indptr.size:
        indptr = indptr[:-1]
    nnz = max(int(indptr[-1]) if indptr.size else 0, 0) + draw(st.sampled_from([0, 0, 0, 1, -1]))
    indices = ids_array(draw, max(nnz, 0))
    return indptr, indices, draw(COUNTS)


@SETTINGS
@given(csr_input())
def test_from_csr(args):
    indptr, indices, num_dst = args
    before = (indptr.copy(), indices.copy())
    try:
        g = gk.Graph.from_csr(indptr, indices, num_dst=num_dst)
    except Exception as exc:  # noqa: BLE001
        assert refused(exc), repr(exc)
    else:
        indices[...] = 0 if indices.size else indices
        src, dst = g.edges()[:2]
        assert np.array_equal(np.repeat(np.arange(before[0].size - 1), np.diff(before[0].astype(np.int64))), src)
        assert np.array_equal(before[1].astype(np.int64), dst)
        if g.num_src == g.num_dst:
            check_kernels(g, src.astype(np.int64), dst.astype(np.int64), g.num_nodes)
    finally:
        indptr[...], indices[...] = before


LINES = st.one_of(
    st.tuples(st.integers(0, 20), st.integers(0, 20)).map(lambda t: f"{t[0]} {t[1]}"),
    st.tuples(st.integers(0, 20), st.integers(0, 20), st.floats(allow_nan=False, allow_infinity=False)).map(
        lambda t: f"{t[0]} {t[1]} {t[2]!r}"),
    st.sampled_from(["", "# comment", "x7 12", "1", "1 2 3 4 5", "-1 2", str(2**64 + 5) + " 1", "1\t2", "1 2 ",
                     " 3 4", "1 2 x", "99999999999999999999999 1", "1e3 2", "0x1 2", "1 2 nan", "\r"]),
)


@SETTINGS
@given(st.lists(LINES, max_size=12), st.sampled_from(["\n", "\r\n"]), st.booleans())
def test_read_edgelist(lines, newline, final_newline):
    text = newline.join(lines) + (newline if final_newline else "")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "edges.txt"
        path.write_bytes(text.encode())
        try:
            g = gk.graph.read_edgelist(path)
        except Exception as exc:  # noqa: BLE001
            assert refused(exc) or isinstance(exc, ValueError) and "line" in str(exc), repr(exc)
        else:
            rows = [ln.split() for ln in text.replace("\r", "").split("\n") if ln.strip() and not ln.startswith("#")]
            assert g.num_edges == len(rows)
            src, dst = g.edges()[:2]
            assert [int(r[0]) for r in rows] == src.tolist() and [int(r[1]) for r in rows] == dst.tolist()


@SETTINGS
@given(st.dictionaries(st.sampled_from(["src", "dst", "indptr", "indices", "eids", "shape", "format", "num_edge_ids",
                                        "formats", "version", "junk"]),
                       st.sampled_from([np.array([0, 1]), np.array([2.5, 1]), np.array([]), np.array([-1, 0]),
                                        np.array(["a"]), np.array([3, 3, 3]), np.array(7), np.array([2**40, 1])]),
                       max_size=8))
def test_load(arrays):
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "g.npz"
        np.savez(path, **arrays)
        try:
            g = gk.graph.load(path)
        except Exception as exc:  # noqa: BLE001
            assert refused(exc), repr(exc)
        else:
            src, dst = g.edges()[:2]
            if g.num_src == g.num_dst:
                check_kernels(g, src.astype(np.int64), dst.astype(np.int64), g.num_nodes)


@SETTINGS
@given(st.integers(1, 12), st.data())
def test_graph500_validate(n, data):
    rng = np.random.default_rng(n)
    src, dst = rng.integers(0, n, 3 * n), rng.integers(0, n, 3 * n)
    g = gk.Graph.from_coo(np.concatenate([src, dst]), np.concatenate([dst, src]), num_nodes=n)
    source = data.draw(st.integers(-2, n + 1))
    parents = np.array(data.draw(st.lists(st.integers(-2, n + 1), min_size=n, max_size=n)), dtype=np.int64)
    if data.draw(st.booleans()) and 0 <= source < n:
        parents = gk.bfs(g, source).parents.astype(np.int64)
    try:
        gk.graph500.validate(g, source, parents)
    except gk.Graph500ValidationError:
        pass  # a wrong tree, told as such
    except Exception as exc:  # noqa: BLE001
        assert refused(exc), repr(exc)
    else:
        assert 0 <= source < n, "an out-of-range source validated"
        assert np.array_equal(parents >= 0, gk.bfs(g, source).levels >= 0)


BATCH = st.lists(st.tuples(ID_VALUES, ID_VALUES), max_size=20)


@SETTINGS
@given(st.integers(0, 14), st.lists(st.tuples(BATCH, BATCH), max_size=4))
def test_dynamic_graph(num_nodes, batches):
    dg = gk.DynamicGraph(num_nodes)
    live = set()
    for ins, dele in batches:
        ins_src, ins_dst = (np.array([a for a, _ in ins], np.int64), np.array([b for _, b in ins], np.int64))
        del_src, del_dst = (np.array([a for a, _ in dele], np.int64), np.array([b for _, b in dele], np.int64))
        try:
            dg.apply(insert=(ins_src, ins_dst), delete=(del_src, del_dst))
        except Exception as exc:  # noqa: BLE001
            assert refused(exc), repr(exc)
            bad = [v for pair in ins + dele for v in pair if not 0 <= v < num_nodes]
            assert bad, f"valid batch refused: {exc}"
        else:
            live -= set(zip(del_src.tolist(), del_dst.tolist()))
            live |= set(zip(ins_src.tolist(), ins_dst.tolist()))
        s, d = dg.edges()[:2]
        assert set(zip(s.tolist(), d.tolist())) == live
    if num_nodes:
        gk.bfs(dg, 0)
        gk.graph500.search_keys(dg.snapshot(), 4) if dg.num_edges else None


FEATURE_DTYPES = st.sampled_from(["float32", "float64", "float16", "int64", "bool", "object", "complex128"])


@st.composite
def feature_array(draw, rows):
    """Node or edge features: the right number of rows or one off, zero or several columns, odd dtypes,
    NaN and infinities, non-contiguous views."""
    n = draw(st.sampled_from([rows, rows, rows, rows + 1, max(rows - 1, 0), 0]))
    shape = (n,) + tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 7 - 3
    if values.size and draw(st.booleans()):
        values.flat[0] = draw(st.sampled_from([np.nan, np.inf, -np.inf, 1e300]))
    try:
        arr = values.astype(draw(FEATURE_DTYPES))
    except (ValueError, TypeError):
        arr = values
    if arr.ndim == 2 and arr.shape[1] > 1 and draw(st.booleans()):
        arr = arr[:, ::-1]  # a view with a negative stride
    return arr


@SETTINGS
@given(st.integers(0, 10), st.data())
def test_kernel_arguments(n, data):
    rng = np.random.default_rng(n)
    e = 3 * n
    src, dst = rng.integers(0, max(n, 1), e), rng.integers(0, max(n, 1), e)
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    op = data.draw(st.sampled_from(["add", "sub", "mul", "div", "copy_lhs", "copy_rhs", "dot", "pow", 3]))
    reduce = data.draw(st.sampled_from(["sum", "max", "min", "mean", "prod", None]))
    ufeat, efeat = data.draw(feature_array(n)), data.draw(feature_array(e))
    lhs, rhs = data.draw(feature_array(n)), data.draw(feature_array(n))
    kept = [a.copy() for a in (ufeat, efeat, lhs, rhs)]
    calls = [lambda: gk.spmm(g, op, reduce, ufeat, efeat), lambda: gk.sddmm(g, op, lhs, rhs),
             lambda: gk.edge_softmax(g, efeat)]
    for call in calls:
        try:
            out = call()
        except Exception as exc:  # noqa: BLE001
            assert refused(exc), repr(exc)
        else:
            assert isinstance(out, np.ndarray) and out.shape[0] in (n, e)
    for a, b in zip((ufeat, efeat, lhs, rhs), kept):
        same = ([repr(v) for v in a.ravel()] == [repr(v) for v in b.ravel()] if a.dtype == object
                else a.tobytes() == b.tobytes())
        assert same and a.shape == b.shape, "a kernel changed its input"
    # the valid form of the same call gives NumPy's answer
    x = rng.random((n, 2))
    want = np.zeros((n, 2))
    np.add.at(want, dst, x[src])
    assert np.allclose(gk.spmm(g, "copy_lhs", "sum", x), want)


@st.composite
def dense_array(draw, shape):
    """A dense operand of segment_mm/gather_mm: usually of ``shape``, else an axis more or less or one off;
    odd dtypes, NaN, non-contiguous views."""
    shape = list(shape)
    change = draw(st.sampled_from(["none", "none", "none", "axis", "drop", "add"]))
    if change == "axis" and shape:
        at = draw(st.integers(0, len(shape) - 1))
        shape[at] = max(0, shape[at] + draw(st.sampled_from([-1, 1])))
    elif change == "drop" and shape:
        shape.pop()
    elif change == "add":
        shape.append(2)
    values = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape) % 5 - 2
    if values.size and draw(st.booleans()):
        values.flat[0] = np.nan
    try:
        arr = values.astype(draw(st.one_of(st.just("float64"), st.just("float32"), FEATURE_DTYPES)))
    except (ValueError, TypeError):
        arr = values
    if arr.ndim >= 2 and arr.shape[-1] > 1 and draw(st.integers(0, 4)) == 0:
        arr = arr[..., ::-1]
    return arr


def typed_ids(draw, size, bound):
    """Ids for an axis of ``bound``: in range with int32/int64 half the time, else anything ids_array makes."""
    if draw(st.booleans()):
        values = draw(st.lists(st.integers(0, max(bound - 1, 0)), min_size=size, max_size=size))
        return np.array(values, dtype=draw(st.sampled_from(["int32", "int64"])))
    return ids_array(draw, size)


@SETTINGS
@given(st.integers(0, 9), st.integers(0, 4), st.integers(0, 5), st.integers(0, 3), st.data())
def test_typed_matmul(n, d1, d2, r, data):
    a, b = data.draw(dense_array((n, d1))), data.draw(dense_array((r, d1, d2)))
    if data.draw(st.booleans()) and r:  # lengths that add up, some of them 0
        cuts = np.sort(data.draw(st.lists(st.integers(0, n), min_size=r - 1, max_size=r - 1)))
        seglen = np.diff(np.r_[0, cuts, n]).astype(data.draw(st.sampled_from(["int32", "int64", "uint8"])))
    else:
        seglen = ids_array(data.draw, data.draw(st.sampled_from([r, r, max(r - 1, 0), r + 1])))
    k = data.draw(st.sampled_from([n, r, n + 1, 0]))
    idx_a = data.draw(st.one_of(st.none(), st.just(k).map(lambda m: typed_ids(data.draw, m, n))))
    idx_b = data.draw(st.one_of(st.none(), st.just(k).map(lambda m: typed_ids(data.draw, m, r))))
    kept = [None if v is None else v.copy() for v in (a, b, seglen, idx_a, idx_b)]
    try:
        out = gk.segment_mm(a, b, seglen)
    except Exception as exc:  # noqa: BLE001
        assert refused(exc), repr(exc)
    else:
        starts = np.r_[0, np.cumsum(seglen.astype(np.int64))]
        want = np.concatenate([a[starts[r]:starts[r + 1]] @ b[r] for r in range(b.shape[0])] or
                              [np.zeros((0, b.shape[2]), a.dtype)])
        assert out.shape == want.shape and np.allclose(out, want, equal_nan=True)
    try:
        out = gk.gather_mm(a, b, idx_a=idx_a, idx_b=idx_b)
    except Exception as exc:  # noqa: BLE001
        assert refused(exc), repr(exc)
    else:
        rows = a if idx_a is None else a[idx_a.astype(np.int64)]
        mats = b if idx_b is None else b[idx_b.astype(np.int64)]
        want = np.einsum("ik,ikj->ij", rows, mats)
        assert out.shape == want.shape and np.allclose(out, want, equal_nan=True)
    for given_arr, before in zip((a, b, seglen, idx_a, idx_b), kept):
        if before is not None:
            same = ([repr(v) for v in given_arr.ravel()] == [repr(v) for v in before.ravel()]
                    if given_arr.dtype == object else given_arr.tobytes() == before.tobytes())
            assert same, "a typed matmul changed its input"


def main() -> int:
    tests = [test_from_coo, test_from_csr, test_read_edgelist, test_load, test_graph500_validate, test_dynamic_graph,
             test_kernel_arguments, test_typed_matmul]
    failed = 0
    for test in tests:
        try:
            test()
            print(f"{test.__name__}: ok", flush=True)
        except Exception as exc:  # noqa: BLE001
            failed += 1
            print(f"{test.__name__}: FAILED\n{type(exc).__name__}: {exc}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
