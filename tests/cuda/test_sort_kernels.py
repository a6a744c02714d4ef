"""The CUDA count sort, scans and validation reductions against NumPy, at the tile boundaries of the
block-cooperative kernels and under odd launch shapes (one block, blocks not a multiple of 32, more tiles
than blocks)."""

import numpy as np
import pytest
from graphkern.kernels.cuda import reduce as cuda_reduce
from graphkern.kernels.cuda import sort as cuda_sort
from numba import cuda

T = cuda_sort.SORT_TILE
S = cuda_sort.SCAN_TILE


def _keys(n, num_keys, dtype, seed=0):
    return np.random.default_rng(seed).integers(0, num_keys, n).astype(dtype)


@pytest.mark.parametrize("n,num_keys", [(0, 5), (1, 1), (1, 7), (T - 1, 2**8), (T, 2**8 + 1), (T + 1, 2**16 + 1),
                                        (3 * T + 5, 2**8), (T + 1, 1), (T + 1, 2)])
def test_sort_permutation_is_numpys_stable_argsort(n, num_keys):
    k = _keys(n, num_keys, np.int32, n)
    perm = cuda_sort.sort_permutation(cuda.to_device(k), num_keys, np.int32)
    assert perm.dtype == np.int32
    np.testing.assert_array_equal(perm.copy_to_host(), np.argsort(k, kind="stable"))


@pytest.mark.parametrize("what", ["all_equal", "all_distinct", "descending"])
def test_sort_permutation_equal_and_distinct_keys(what):
    n = T + 3
    k = {"all_equal": np.full(n, 5), "all_distinct": np.random.default_rng(1).permutation(n),
         "descending": np.arange(n)[::-1] // 3}[what].astype(np.int64)
    perm = cuda_sort.sort_permutation(cuda.to_device(k), n, np.int64)
    assert perm.dtype == np.int64
    np.testing.assert_array_equal(perm.copy_to_host(), np.argsort(k, kind="stable"))


# every pair of key and index dtypes, with and without edge ids twice each (dtypes and edge ids meet in
# different kernels: the sort's keys, the carried columns, the carried or generated ids)
@pytest.mark.parametrize("kdtype,idtype,with_eids", [(np.int32, np.int32, False), (np.int64, np.int64, True),
                                                     (np.int32, np.int64, True), (np.int64, np.int32, False)])
def test_coo_to_compressed_carries_columns_and_edge_ids(kdtype, idtype, with_eids):
    n, num_rows = T + 77, 300
    rows = _keys(n, num_rows, kdtype, 3)
    cols = _keys(n, 1000, idtype, 4)
    eids = np.random.default_rng(5).permutation(n).astype(idtype)
    indptr, indices, out_eids = cuda_sort.coo_to_compressed(
        cuda.to_device(rows), cuda.to_device(cols), cuda.to_device(eids) if with_eids else None, num_rows)
    order = np.argsort(rows, kind="stable")
    assert indptr.dtype == indices.dtype == out_eids.dtype == idtype
    np.testing.assert_array_equal(indptr.copy_to_host(), np.r_[0, np.cumsum(np.bincount(rows, minlength=num_rows))])
    np.testing.assert_array_equal(indices.copy_to_host(), cols[order])
    np.testing.assert_array_equal(out_eids.copy_to_host(), eids[order] if with_eids else order)


@pytest.mark.parametrize("num_rows", [0, 1])
def test_coo_to_compressed_without_key_bits_copies(num_rows):
    rows = np.zeros(5 if num_rows else 0, np.int32)
    cols = np.arange(len(rows), dtype=np.int32)[::-1].copy()
    d_cols = cuda.to_device(cols)
    indptr, indices, eids = cuda_sort.coo_to_compressed(cuda.to_device(rows), d_cols, None, num_rows)
    np.testing.assert_array_equal(indptr.copy_to_host(), [0, len(rows)][:num_rows + 1])
    np.testing.assert_array_equal(indices.copy_to_host(), cols)
    np.testing.assert_array_equal(eids.copy_to_host(), np.arange(len(rows)))


@pytest.mark.parametrize("launch", [(3, 37), (1, 1), (2, 64), (5, 33)])
def test_sort_under_odd_launch_shapes(launch):
    n, num_keys = 2 * T + 9, 2**8 + 1  # two passes, three tiles: more tiles than blocks for most shapes
    k = _keys(n, num_keys, np.int32, 11)
    v = _keys(n, 50, np.int64, 12)
    perm, carried = cuda_sort._radix_sort(cuda.to_device(k), num_keys, None, 1, cuda.to_device(v), 2,
                                          np.int32, np.int64, launch=launch)
    order = np.argsort(k, kind="stable")
    np.testing.assert_array_equal(perm.copy_to_host(), order)
    np.testing.assert_array_equal(carried.copy_to_host(), v[order])


# each size once, the dtypes alternating (both reach the one-tile and the several-tile scans)
@pytest.mark.parametrize("n,dtype", [(0, np.int32), (1, np.int64), (S - 1, np.int32), (S, np.int64),
                                     (S + 1, np.int32), (3 * S + 2, np.int64)])
def test_exclusive_scan_is_cumsum(n, dtype):
    v = np.random.default_rng(n).integers(0, 9, n).astype(dtype)
    out = cuda_sort.exclusive_scan(cuda.to_device(v), cuda.device_array(n + 1, dtype))
    np.testing.assert_array_equal(out.copy_to_host(), np.r_[0, np.cumsum(v)])


@pytest.mark.parametrize("launch", [(3, 37), (1, 1), (2, 64)])
def test_exclusive_scan_under_odd_launch_shapes(launch):
    n = 2 * S + 3
    v = np.random.default_rng(2).integers(0, 1000, n)
    out = cuda_sort._exclusive_scan(cuda.to_device(v), cuda.device_array(n + 1, np.int64), launch)
    np.testing.assert_array_equal(out.copy_to_host(), np.r_[0, np.cumsum(v)])


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_min_max(dtype):
    v = np.random.default_rng(3).integers(-50, 50, 777).astype(dtype)
    assert cuda_reduce.min_max(cuda.to_device(v)) == (int(v.min()), int(v.max()))
    assert cuda_reduce.min_max(cuda.to_device(np.array([7], dtype))) == (7, 7)
    big = np.array([np.iinfo(dtype).max, np.iinfo(dtype).min, 0], dtype)
    assert cuda_reduce.min_max(cuda.to_device(big)) == (int(big.min()), int(big.max()))


@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_first_outside_is_the_first_position(dtype):
    v = np.zeros(700, dtype)
    d = cuda.to_device(v)
    assert cuda_reduce.first_outside(d, 0, 1) == -1
    assert cuda_reduce.first_outside(cuda.to_device(v[:0]), 0, 1) == -1
    for bad in ([699], [3, 650], [64, 65, 600], [0, 1, 2]):
        w = v.copy()
        w[bad] = [-1, 5, 1][: len(bad)] if len(bad) < 3 else [1, -2, 9]
        assert cuda_reduce.first_outside(cuda.to_device(w), 0, 1) == bad[0]


def test_first_descent_is_the_first_position():
    indptr = np.arange(500, dtype=np.int64) * 2
    assert cuda_reduce.first_descent(cuda.to_device(indptr)) == -1
    assert cuda_reduce.first_descent(cuda.to_device(indptr[:1])) == -1
    w = indptr.copy()
    w[[130, 400]] = [0, 0]  # descents at 129 -> 130 and 399 -> 400
    assert cuda_reduce.first_descent(cuda.to_device(w)) == 129
    w = indptr.copy()
    w[1] = -1
    assert cuda_reduce.first_descent(cuda.to_device(w)) == 0


@pytest.mark.parametrize("launch", [(3, 37), (1, 1), (2, 64), (7, 32)])
def test_reductions_under_odd_launch_shapes(launch):
    """Several blocks, each with its own partial (a block past the items leaves the identity), then one
    block over the partials."""
    v = np.random.default_rng(4).integers(0, 100, 300)
    v[[77, 200]] = [-4, 1000]
    d = cuda.to_device(v)
    assert cuda_reduce.min_max(d, launch=launch) == (-4, 1000)
    assert cuda_reduce.first_outside(d, 0, 100, launch=launch) == 77
    assert cuda_reduce.first_outside(d, -4, 1001, launch=launch) == -1
    indptr = np.sort(v)
    indptr[[150, 151]] = indptr[[151, 150]] + [1, 0]  # 150 > 151 unless equal before: made strictly larger
    want = int(np.argmax(indptr[:-1] > indptr[1:]))
    assert cuda_reduce.first_descent(cuda.to_device(indptr), launch=launch) == want
    assert cuda_reduce.first_descent(cuda.to_device(np.sort(v)), launch=launch) == -1


def test_every_value_out_of_range_gives_position_zero():
    """The input that would send one atomic per block to one address, were the blocks to combine by atomics:
    every block has a hit; the first position still wins."""
    v = np.full(1000, -3, np.int64)
    assert cuda_reduce.first_outside(cuda.to_device(v), 0, 10, launch=(9, 32)) == 0
    assert cuda_reduce.first_descent(cuda.to_device(np.arange(1000)[::-1].copy()), launch=(9, 32)) == 0
