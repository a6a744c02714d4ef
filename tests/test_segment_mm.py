"""gk.segment_mm and gk.gather_mm against plain NumPy loops: dtypes, index dtypes, empty segments, one
segment, no rows, widths that are not whole vectors, every index form of gather_mm, and hostile input."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

import graphkern as gk
from graphkern.segment import segment_mm_backward_b

# ------------------------------------------------------------------------------------------ references


def segment_mm_reference(a, b, seglen):
    """One matrix product per segment, in segment order."""
    out = np.zeros((a.shape[0], b.shape[2]), dtype=a.dtype)
    start = 0
    for r, length in enumerate(seglen):
        out[start:start + length] = a[start:start + length] @ b[r]
        start += length
    return out


def gather_mm_reference(a, b, idx_a=None, idx_b=None):
    """``a[idx_a[i]] @ b[idx_b[i]]`` row by row; a missing index is the row number itself."""
    rows = len(idx_a) if idx_a is not None else (len(idx_b) if idx_b is not None else a.shape[0])
    out = np.zeros((rows, b.shape[2]), dtype=a.dtype)
    for i in range(rows):
        ia = idx_a[i] if idx_a is not None else i
        ib = idx_b[i] if idx_b is not None else i
        out[i] = a[ia] @ b[ib]
    return out


def segment_grad_b_reference(a, dz, seglen):
    out = np.zeros((len(seglen), a.shape[1], dz.shape[1]), dtype=a.dtype)
    start = 0
    for r, length in enumerate(seglen):
        out[r] = a[start:start + length].T @ dz[start:start + length]
        start += length
    return out


TOL = {np.float32: 1e-4, np.float64: 1e-10}


def _data(shape, dtype, seed):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape).astype(dtype)


# ------------------------------------------------------------------------------------------ segment_mm

SEGLENS = {
    "even": [25, 25, 25, 25],
    "empty_first_middle_last": [0, 7, 0, 0, 130, 1, 0],
    "one_segment": [203],
    "short_segments": [1, 2, 3, 5, 1, 1, 4, 0, 2],
    "random": list(np.random.default_rng(3).integers(0, 90, 11)),
    "all_empty_but_one": [0, 0, 0, 9],
}


@pytest.mark.fast
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", sorted(SEGLENS))
def test_segment_mm_matches_the_per_segment_loop(case, dtype):
    seglen = np.array(SEGLENS[case], dtype=np.int64)
    n = int(seglen.sum())
    for d1, d2 in ((8, 16), (5, 33), (17, 3)):
        a = _data((n, d1), dtype, 1)
        b = _data((seglen.size, d1, d2), dtype, 2)
        got = gk.segment_mm(a, b, seglen)
        assert got.dtype == dtype and got.shape == (n, d2)
        np.testing.assert_allclose(got, segment_mm_reference(a, b, seglen), rtol=TOL[dtype], atol=TOL[dtype])


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64, np.uint16])
def test_segment_lengths_of_any_integer_dtype_list_or_tensor(index_dtype):
    a, b = _data((10, 4), np.float64, 1), _data((3, 4, 2), np.float64, 2)
    seglen = np.array([3, 0, 7], dtype=index_dtype)
    want = segment_mm_reference(a, b, seglen.astype(np.int64))
    np.testing.assert_allclose(gk.segment_mm(a, b, seglen), want, rtol=1e-12)
    np.testing.assert_allclose(gk.segment_mm(a, b, [3, 0, 7]), want, rtol=1e-12)


def test_segment_mm_without_rows_or_columns():
    b = _data((3, 4, 5), np.float32, 0)
    assert gk.segment_mm(np.zeros((0, 4), np.float32), b, [0, 0, 0]).shape == (0, 5)
    out = gk.segment_mm(_data((6, 4), np.float32, 1), np.zeros((3, 4, 0), np.float32), [2, 2, 2])
    assert out.shape == (6, 0)
    # D1 == 0: every product is an empty sum
    np.testing.assert_array_equal(gk.segment_mm(np.zeros((6, 0)), np.zeros((2, 0, 3)), [4, 2]), np.zeros((6, 3)))
    # R == 0 with no rows
    assert gk.segment_mm(np.zeros((0, 2)), np.zeros((0, 2, 3)), []).shape == (0, 3)


def test_segment_mm_backward_b_matches_the_reference():
    seglen = np.array([0, 5, 1, 0, 70, 3])
    a, dz = _data((79, 6), np.float64, 1), _data((79, 19), np.float64, 2)
    np.testing.assert_allclose(segment_mm_backward_b(a, dz, seglen), segment_grad_b_reference(a, dz, seglen),
                               rtol=1e-10, atol=1e-12)


# ------------------------------------------------------------------------------------------ gather_mm

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_gather_mm_every_index_form(dtype, index_dtype):
    rng = np.random.default_rng(5)
    n, r, d1, d2 = 150, 6, 7, 20
    a = _data((n, d1), dtype, 1)
    b = _data((r, d1, d2), dtype, 2)
    idx_b = rng.integers(0, r, n).astype(index_dtype)
    # runs of one type (the register tile) and alternating types (row by row) in the same call
    idx_b[:60] = np.sort(idx_b[:60])
    tol = TOL[dtype]
    np.testing.assert_allclose(gk.gather_mm(a, b, idx_b=idx_b), gather_mm_reference(a, b, idx_b=idx_b),
                               rtol=tol, atol=tol)
    idx_a = rng.integers(0, n, 90).astype(index_dtype)
    idx_b2 = np.repeat(np.arange(r), 15).astype(index_dtype)
    np.testing.assert_allclose(gk.gather_mm(a, b, idx_a=idx_a, idx_b=idx_b2),
                               gather_mm_reference(a, b, idx_a, idx_b2), rtol=tol, atol=tol)
    # idx_a alone: one index per matrix of b
    idx_a6 = rng.integers(0, n, r).astype(index_dtype)
    np.testing.assert_allclose(gk.gather_mm(a, b, idx_a=idx_a6), gather_mm_reference(a, b, idx_a=idx_a6),
                               rtol=tol, atol=tol)
    # neither: one matrix per row
    b_rows = _data((n, d1, d2), dtype, 3)
    np.testing.assert_allclose(gk.gather_mm(a, b_rows), gather_mm_reference(a, b_rows), rtol=tol, atol=tol)


def test_gather_mm_edge_cases():
    b = _data((2, 3, 4), np.float64, 0)
    assert gk.gather_mm(np.zeros((0, 3)), b, idx_b=np.zeros(0, np.int64)).shape == (0, 4)
    a = _data((5, 3), np.float64, 1)
    assert gk.gather_mm(a, b, idx_a=np.zeros(0, np.int32), idx_b=np.zeros(0, np.int32)).shape == (0, 4)
    np.testing.assert_allclose(gk.gather_mm(a, b[:1], idx_b=[0] * 5), a @ b[0], rtol=1e-12)


def test_segment_and_gather_agree_on_sorted_types():
    rng = np.random.default_rng(9)
    types = np.sort(rng.integers(0, 5, 300))
    a, b = _data((300, 24), np.float32, 1), _data((5, 24, 40), np.float32, 2)
    seglen = np.bincount(types, minlength=5)
    np.testing.assert_allclose(gk.gather_mm(a, b, idx_b=types), gk.segment_mm(a, b, seglen), rtol=1e-6, atol=1e-6)


# ------------------------------------------------------------------------------------------ hostile input

A = np.ones((6, 3))
B = np.ones((2, 3, 4))


@pytest.mark.parametrize(("call", "error", "words"), [
    (lambda: gk.segment_mm(A.astype(np.int64), B, [3, 3]), TypeError, ["'a'", "float32 or float64", "int64"]),
    (lambda: gk.segment_mm(A.astype(np.float32), B, [3, 3]), TypeError, ["'b'", "float32", "float64"]),
    (lambda: gk.segment_mm(A.tolist(), B, [3, 3]), TypeError, ["'a'", "NumPy array", "list"]),
    (lambda: gk.segment_mm(A[0], B, [3, 3]), ValueError, ["'a'", "2-D", "(3,)"]),
    (lambda: gk.segment_mm(A, B[0], [3, 3]), ValueError, ["'b'", "3-D", "(3, 4)"]),
    (lambda: gk.segment_mm(A, np.ones((2, 4, 4)), [3, 3]), ValueError, ["'b'", "(R, 3, D2)", "(2, 4, 4)"]),
    (lambda: gk.segment_mm(np.ones((3, 6)).T, B, [3, 3]), ValueError, ["'a'", "C-contiguous", "strides"]),
    (lambda: gk.segment_mm(A, B, [6]), ValueError, ["'seglen_a'", "2 segment lengths", "found 1"]),
    (lambda: gk.segment_mm(A, B, [7, -1]), ValueError, ["'seglen_a'", ">= 0", "-1", "position 1"]),
    (lambda: gk.segment_mm(A, B, [3, 2]), ValueError, ["'seglen_a'", "summing to the 6 rows", "sum 5"]),
    (lambda: gk.segment_mm(A, B, [2**62, 2**62]), ValueError, ["'seglen_a'", "6 rows", str(2**62)]),
    (lambda: gk.segment_mm(A, B, np.array([2**63 - 1, 2], np.uint64)), ValueError, ["'seglen_a'", "6 rows"]),
    (lambda: gk.segment_mm(A, B, [3.0, 3.0]), TypeError, ["'seglen_a'", "integer", "float64"]),
    (lambda: gk.segment_mm(A, B, [[3, 3]]), ValueError, ["'seglen_a'", "1-D", "2-D"]),
    (lambda: gk.gather_mm(A, B, idx_b=[0, 1, 2, 0, 0, 0]), ValueError, ["'idx_b'", "< 2", "found 2", "position 2"]),
    (lambda: gk.gather_mm(A, B, idx_b=[0, -1, 0, 0, 0, 0]), ValueError, ["'idx_b'", ">= 0", "-1", "position 1"]),
    (lambda: gk.gather_mm(A, B, idx_a=[0, 6], idx_b=[0, 1]), ValueError, ["'idx_a'", "< 6", "found 6"]),
    (lambda: gk.gather_mm(A, B, idx_a=[0, 1], idx_b=[0, 1, 1]), ValueError, ["'idx_b'", "length of 'idx_a' (2)", "3"]),
    (lambda: gk.gather_mm(A, B, idx_b=[0, 1]), ValueError, ["'idx_b'", "one index per row of 'a' (6)", "found 2"]),
    (lambda: gk.gather_mm(A, B, idx_a=[0, 1, 2]), ValueError, ["'idx_a'", "one index per matrix of 'b' (2)", "3"]),
    (lambda: gk.gather_mm(A, B), ValueError, ["'b'", "one matrix per row of 'a' (6)", "found 2"]),
    (lambda: gk.gather_mm(A, B, idx_b=np.zeros(6)), TypeError, ["'idx_b'", "integer", "float64"]),
    (lambda: gk.gather_mm(A, B, idx_b=np.zeros(6, bool)), TypeError, ["'idx_b'", "integer", "bool"]),
    (lambda: gk.gather_mm(A, B, idx_b=[0] * 6, backend="gpu"), ValueError, ["'backend'", "gpu"]),
])
def test_bad_input_is_refused_with_its_argument_expectation_and_finding(call, error, words):
    with pytest.raises(error) as info:
        call()
    for word in words:
        assert word in str(info.value), (word, str(info.value))


def test_gather_mm_positional_indices_are_refused():
    with pytest.raises(TypeError):
        gk.gather_mm(A, B, [0, 1], [0, 1])  # keyword-only, as in dgl.ops.gather_mm


def test_kernels_stay_in_bounds_under_numba_boundscheck(bounds_checked_env):
    """Every kernel path (tiles, row remainders, empty segments, masked column tails, gather runs) with
    Numba's bounds checks on, in a fresh process and the bounds-checked cache, where any stray access
    raises IndexError.

    One data dtype: the kernels index in elements, with ``LANES`` and the tile sizes the same for float32
    and float64, so a float32 build indexes exactly as the float64 one does (and would double the
    compile time). float64 is the dtype in which tests/hostile_fuzz.py runs these kernels too, so in a
    test run the two share the bounds-checked builds (one cache for the run). The index dtypes are what
    differ in the indexing: int64 and int32 ids both run, and gather_mm runs with ``idx_b`` only, both
    indices, and ``idx_a`` only."""
    script = textwrap.dedent("""
        import numpy as np
        import graphkern as gk
        from graphkern.segment import segment_mm_backward_b
        rng = np.random.default_rng(0)
        a = rng.random((203, 21))
        b = rng.random((7, 21, 35))
        seglen = np.array([0, 7, 0, 0, 190, 6, 0])
        gk.segment_mm(a, b, seglen)
        idx_b = np.sort(rng.integers(0, 7, 203)); idx_b[::5] = 6
        gk.gather_mm(a, b, idx_b=idx_b)
        gk.gather_mm(a, b, idx_a=rng.integers(0, 203, 77), idx_b=rng.integers(0, 7, 77).astype(np.int32))
        gk.gather_mm(a, b, idx_a=rng.integers(0, 203, 7))
        segment_mm_backward_b(a, rng.random((203, 35)), seglen)
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=bounds_checked_env,
                          timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]
