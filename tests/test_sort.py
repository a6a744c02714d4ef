"""The stable parallel count sort and scan against the NumPy references, on every graph case."""

import numpy as np
import pytest
import reference as ref
from graph_cases import CASES
from graphkern.kernels.cpu import sort
from hypothesis import given
from hypothesis import strategies as st

PATHS = ["direct", "bucketed"]


@pytest.fixture(params=PATHS)
def sort_path(request):
    if request.param == "bucketed":
        request.getfixturevalue("force_bucketed_sort")
    return request.param


def _num(n, which):
    return n[which] if isinstance(n, tuple) else n


@pytest.mark.parametrize("case", sorted(CASES))
def test_coo_to_compressed_matches_stable_argsort(case, idtype, sort_path):
    src, dst, n = CASES[case]()
    src, dst = src.astype(idtype), dst.astype(idtype)
    indptr, indices, eids = sort.coo_to_compressed(src, dst, None, _num(n, 0))
    want = ref.compress(src, dst, _num(n, 0))
    assert indptr.dtype == idtype and indices.dtype == idtype and eids.dtype == idtype
    np.testing.assert_array_equal(indptr, want[0])
    np.testing.assert_array_equal(indices, want[1])
    np.testing.assert_array_equal(eids, want[2])


@pytest.mark.parametrize("case", sorted(CASES))
def test_transpose_matches_reference_with_and_without_eids(case, idtype, sort_path):
    src, dst, n = CASES[case]()
    src, dst = src.astype(idtype), dst.astype(idtype)
    indptr, indices, eids = (a.astype(idtype) for a in ref.compress(src, dst, _num(n, 0)))
    for given_eids in (None, eids):
        got = sort.transpose_compressed(indptr, indices, given_eids, _num(n, 1))
        want = ref.transpose(indptr, indices, given_eids, _num(n, 1))
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    # transposing back restores the original sorted-by-row order of edge ids within each row
    t = sort.transpose_compressed(indptr, indices, eids, _num(n, 1))
    back = sort.transpose_compressed(t[0], t[1], t[2], _num(n, 0))
    np.testing.assert_array_equal(back[0], indptr)


def test_transpose_keeps_parallel_edges_in_slot_order(sort_path):
    indptr = np.array([0, 3, 4], dtype=np.int32)
    indices = np.array([1, 1, 0, 1], dtype=np.int32)
    eids = np.array([7, 5, 6, 4], dtype=np.int32)
    p, i, e = sort.transpose_compressed(indptr, indices, eids, 2)
    assert p.tolist() == [0, 1, 4]
    assert i.tolist() == [0, 0, 0, 1]
    assert e.tolist() == [6, 7, 5, 4]


@given(
    keys=st.lists(st.integers(0, 40), max_size=400),
    extra_keys=st.integers(0, 10),
    use_int64=st.booleans(),
    bucketed=st.booleans(),
)
def test_count_sort_and_compress_hypothesis(keys, extra_keys, use_int64, bucketed):
    dtype = np.int64 if use_int64 else np.int32
    keys = np.array(keys, dtype=dtype)
    num_keys = (int(keys.max()) + 1 if keys.size else 0) + extra_keys
    saved = (sort._BUCKETED_MIN_ELEMENTS, sort._BUCKETED_MIN_KEYS, sort._BUCKET_BITS)
    if bucketed:
        sort._BUCKETED_MIN_ELEMENTS, sort._BUCKETED_MIN_KEYS, sort._BUCKET_BITS = 0, 0, 2
    try:
        indptr, perm = sort.count_sort(keys, num_keys, dtype)
        np.testing.assert_array_equal(perm, np.argsort(keys, kind="stable"))
        np.testing.assert_array_equal(indptr, ref.exclusive_scan(np.bincount(keys, minlength=num_keys)))
        vals = (np.arange(keys.size, dtype=dtype) * 7) % 13
        got = sort.coo_to_compressed(keys, vals, None, num_keys)
        want = ref.compress(keys, vals, num_keys)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
    finally:
        sort._BUCKETED_MIN_ELEMENTS, sort._BUCKETED_MIN_KEYS, sort._BUCKET_BITS = saved


@pytest.mark.parametrize("n", [0, 1, 5, 16384, 100_003])
def test_exclusive_scan(n):
    values = np.random.default_rng(n).integers(0, 9, n)
    out = sort.exclusive_scan(values, np.empty(n + 1, dtype=np.int64))
    np.testing.assert_array_equal(out, ref.exclusive_scan(values))


def test_results_do_not_depend_on_thread_count():
    import numba

    rng = np.random.default_rng(11)
    rows = rng.integers(0, 300_000, 1_500_000).astype(np.int32)
    cols = rng.integers(0, 300_000, 1_500_000).astype(np.int32)
    results = []
    before = numba.get_num_threads()
    try:
        for threads in sorted({1, numba.config.NUMBA_NUM_THREADS}):
            numba.set_num_threads(threads)
            results.append(sort.coo_to_compressed(rows, cols, None, 300_000))
    finally:
        numba.set_num_threads(before)
    for a, b in zip(results[0], results[-1]):
        np.testing.assert_array_equal(a, b)
    want = ref.compress(rows, cols, 300_000)
    np.testing.assert_array_equal(results[0][2], want[2])


_KNOWN_COUNTS_SCRIPT = """
import numpy as np, numba
from graphkern.kernels.cpu import sort
import reference as ref
sort._MIN_ELEMENTS_PER_CHUNK = 64
rng = np.random.default_rng(3)
for num_rows, num_cols, m in ((500, 700, 20_000), (3, 2000, 5_000), (2000, 5, 9_000), (40, 40, 0)):
    rows = np.sort(rng.integers(0, num_rows, m)); cols = rng.integers(0, num_cols, m)
    rows[: m // 10] = 0  # a hub row
    indptr, indices, eids = (a.astype(np.int32) for a in ref.compress(rows, cols, num_rows))
    eids = rng.permutation(m).astype(np.int32)[eids]
    counts = np.bincount(cols, minlength=num_cols)
    want = ref.transpose(indptr, indices, eids, num_cols)
    for threads in range(1, numba.config.NUMBA_NUM_THREADS + 1):
        numba.set_num_threads(threads)
        for given in (None, counts):
            got = sort.transpose_compressed(indptr, indices, eids, num_cols, col_counts=given)
            for g, w in zip(got, want):
                np.testing.assert_array_equal(g, w)
print("ok")
"""


@pytest.mark.parametrize("threads", [2, 5])
def test_transpose_with_known_column_counts_at_every_part_count(threads):
    """The packed int32 transpose with the output's row lengths given (the last part fills its runs from
    the end, parts 1..T-2 from the earlier parts' histograms) equals the reference at 1..5 parts."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), PYTHONPATH=str(Path(__file__).parent))
    proc = subprocess.run([sys.executable, "-c", _KNOWN_COUNTS_SCRIPT], env=env, capture_output=True, text=True,
                          timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]


def test_large_sort_uses_and_reuses_scratch():
    rng = np.random.default_rng(5)
    n = sort._BUCKETED_MIN_ELEMENTS
    keys = rng.integers(0, sort._BUCKETED_MIN_KEYS * 2, n).astype(np.int32)
    vals = rng.integers(0, 1000, n).astype(np.int32)
    first = sort.coo_to_compressed(keys, vals, None, sort._BUCKETED_MIN_KEYS * 2)
    assert sort._scratch_free, "the bucketed path should return its scratch block to the pool"
    second = sort.coo_to_compressed(keys, vals, None, sort._BUCKETED_MIN_KEYS * 2)
    for a, b, w in zip(first, second, ref.compress(keys, vals, sort._BUCKETED_MIN_KEYS * 2)):
        np.testing.assert_array_equal(a, w)
        np.testing.assert_array_equal(b, w)
    sort.release_scratch()
    assert not sort._scratch_free


def test_histogram_and_degrees():
    keys = np.array([3, 1, 3, 0], dtype=np.int32)
    np.testing.assert_array_equal(sort.histogram(keys, 5, np.int32), [1, 1, 0, 2, 0])
    indptr = np.array([0, 2, 2, 5])
    np.testing.assert_array_equal(sort.degrees_from_indptr(indptr, np.empty(3, np.int64)), [2, 0, 3])
    np.testing.assert_array_equal(sort.expand_indptr(indptr, np.empty(5, np.int64)), [0, 0, 2, 2, 2])
