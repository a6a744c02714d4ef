"""The explicit-vector helpers of the CPU kernels (kernels/cpu/_simd.py) and huge-page outputs."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from graphkern.kernels.cpu._simd import (
    lanes,
    mask_and,
    mask_or,
    vand,
    vbits,
    vcompress_at,
    veq,
    vfloor,
    vfull,
    vgather,
    vgt,
    vint,
    viota,
    vlanes,
    vload,
    vload_at,
    vlt,
    vmask,
    vmax,
    vmin,
    vne,
    vpow2,
    vscatter,
    vselect,
    vshl,
    vshr,
    vsplat,
    vstore,
    vstore_at,
    vsum,
    vzero_lanes,
    vzeros,
)
from numba import njit

import graphkern as gk
from graphkern import _memory


@njit
def _lanewise(x, out, n, row):
    m = vmask(n, 16)
    a = vload(x, row, 1, m)
    b = vsplat(x, 0, 0, 16)
    vstore(out, 0, 0, a + b, m)
    vstore(out, 1, 0, a - b, m)
    vstore(out, 2, 0, a * b, m)
    vstore(out, 3, 0, a / b, m)
    vstore(out, 4, 0, vmax(vfull(x, 2.5, 16), a), m)
    vstore(out, 5, 0, vmin(vzeros(x, 16), a - vfull(x, 3.0, 16)), m)
    return vsum(a)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 5, 16, 40])
def test_masked_loads_stores_and_lanewise_ops(dtype, n):
    x = (np.arange(3 * 21, dtype=dtype).reshape(3, 21) - 10) / 4
    x[0, 0] = 2.0
    out = np.full((6, 20), -7.0, dtype=dtype)
    total = _lanewise(x, out, n, 2)
    k = min(n, 16)
    a = x[2, 1:1 + k]
    want = [a + 2, a - 2, a * 2, a / 2, np.maximum(a, 2.5), np.minimum(0, a - 3)]
    for row, expected in enumerate(want):
        np.testing.assert_array_equal(out[row, :k], expected)
        assert (out[row, k:] == -7.0).all()  # lanes off the mask are never written
    np.testing.assert_allclose(total, a.sum(), rtol=1e-6)


@njit
def _load_store_at(x, row, col, n, out):
    m = vmask(n, 16)
    vstore(out, 0, 0, vload(x, row, col, m), m)


@pytest.mark.parametrize("n", [1, 3, 9, 16])
def test_partial_loads_at_the_end_of_an_array_and_of_a_strided_view(n):
    """A partial vector at the last elements of an array (where a whole vector would run past its data,
    and on CPUs without AVX-512 lane-by-lane loads take over) and in a view whose rows are narrower than
    their stride: the lanes on the mask are the array's, the others 0, and stores touch only the mask."""
    wide = np.arange(4 * 40, dtype=np.float32).reshape(4, 40)
    for x in (wide, wide[:, :10], wide[1:3, 5:21], np.ascontiguousarray(wide[:, :5])):
        rows, cols = x.shape
        k = min(n, cols)
        for row, col in ((rows - 1, cols - k), (0, 0), (rows - 1, 0)):
            out = np.full((1, 20), -7.0, np.float32)
            _load_store_at(x, row, col, k, out)
            np.testing.assert_array_equal(out[0, :k], x[row, col:col + k])
            assert (out[0, k:] == -7.0).all()


@njit
def _select_lanes(a, b, out):
    m = vmask(16, 16)
    wins = vgt(vload(a, 0, 0, m), vload(b, 0, 0, m))
    vstore(out, 0, 0, vload(a, 0, 0, wins), wins)


def test_loads_and_stores_on_a_mask_with_gaps():
    a = np.array([[5, 1, 5, 1, 1, 5, 5, 1, 1, 1, 1, 1, 1, 1, 1, 5]], np.float32)
    b = np.full((1, 16), 3.0, np.float32)
    out = np.full((1, 16), -7.0, np.float32)
    _select_lanes(a, b, out)
    np.testing.assert_array_equal(out[0], np.where(a[0] > 3, a[0], -7.0))


@njit
def _extremes(vals, acc_in, ids):
    m = vmask(16, 16)
    v = vload(vals, 0, 0, m)
    acc = vload(acc_in, 0, 0, m)
    wins = vgt(v, acc)
    best = vselect(wins, vint(ids, 7, 16), vint(ids, -1, 16))
    loses = vlt(v, acc)
    worst = vselect(loses, vint(ids, 3, 16), vint(ids, -1, 16))
    out = np.empty((3, 16), vals.dtype)
    vstore(out, 0, 0, vmax(acc, v), m)
    vstore(out, 1, 0, vmin(acc, v), m)
    arg = np.empty((2, 16), ids.dtype)
    vstore(arg, 0, 0, best, m)
    vstore(arg, 1, 0, worst, m)
    return out, arg


def test_nan_never_wins_and_ties_keep_the_accumulator():
    vals = np.array([[1, 5, np.nan, 2, -np.inf, np.inf, 3, 3] * 2], dtype=np.float32)
    acc = np.array([[2, 2, 2, 2, 0, 0, 3, np.nan] * 2], dtype=np.float32)
    out, arg = _extremes(vals, acc, np.zeros(1, np.int64))
    np.testing.assert_array_equal(out[0, :8], [2, 5, 2, 2, 0, np.inf, 3, np.nan])
    np.testing.assert_array_equal(out[1, :8], [1, 2, 2, 2, -np.inf, 0, 3, np.nan])
    np.testing.assert_array_equal(arg[0, :8], [-1, 7, -1, -1, -1, 7, -1, -1])
    np.testing.assert_array_equal(arg[1, :8], [3, -1, -1, -1, 3, -1, -1, -1])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_floor_and_powers_of_two(dtype):
    W = lanes(dtype)

    @njit
    def run(x, out_floor, out_pow):
        for i in range(0, x.size, W):
            m = vmask(x.size - i, W)
            vstore_at(out_floor, i, vfloor(vload_at(x, i, m)), m)
            vstore_at(out_pow, i, vpow2(vfloor(vload_at(x, i, m))), m)

    low, high = (-126, 127) if dtype == np.float32 else (-1022, 1023)
    x = np.concatenate([np.linspace(low, high + 0.9, 997), [-0.5, 0.5, -1.0, 0.0]]).astype(dtype)
    out_floor, out_pow = np.empty_like(x), np.empty_like(x)
    run(x, out_floor, out_pow)
    np.testing.assert_array_equal(out_floor, np.floor(x))
    np.testing.assert_array_equal(out_pow, np.ldexp(dtype(1), np.floor(x).astype(np.int64)).astype(dtype))


def test_vector_exp_matches_the_scalar_one():
    from graphkern.kernels.cpu._fastmath import POW2, fast_exp, vexp32_finite
    from graphkern.kernels.cpu.edge_softmax import exp_span32

    @njit
    def run(x, vec, scalar):
        for i in range(0, x.size, 16):
            m = vmask(x.size - i, 16)
            vstore_at(vec, i, vexp32_finite(vload_at(x, i, m), x), m)
        for i in range(x.size):
            scalar[i] = fast_exp(x[i], POW2)

    x = np.linspace(-87, 87, 100_003).astype(np.float32)
    vec, scalar = np.empty_like(x), np.empty_like(x)
    run(x, vec, scalar)
    want = np.exp(x.astype(np.float64))
    assert np.max(np.abs(vec - want) / want) < 5e-7
    np.testing.assert_allclose(vec, scalar, rtol=5e-7)

    @njit
    def span(x, out, start, stop, shift):
        return exp_span32(x, out, start, stop, shift, np.float32(-80), np.float32(8))

    out = np.full_like(x, -1)
    assert span(x, out, 0, x.size, np.float32(10)) != 0  # -97 .. 77: both ends outside the range
    inside = np.linspace(-70, 7, 1001).astype(np.float32)
    out = np.full(1003, -1, np.float32)
    assert span(np.concatenate([inside, [np.nan, 9]]).astype(np.float32), out, 0, 1001, np.float32(0)) == 0
    np.testing.assert_allclose(out[:1001], np.exp(inside.astype(np.float64)), rtol=5e-7)
    assert (out[1001:] == -1).all()  # nothing past the span is written
    for odd in (np.nan, np.inf, -np.inf, 8.5, -81.0):
        values = np.zeros(20, np.float32)
        values[17] = odd
        assert span(values, np.empty_like(values), 0, 20, np.float32(0)) == 1 << 1  # lane 1 of the second vector


def test_lanes_per_vector():
    assert lanes(np.float32) == 16 and lanes(np.float64) == 8


def _run_bounds_checked(script, cache_dir):
    """Run ``script`` in a subprocess under NUMBA_BOUNDSCHECK=1; it prints "checked" when every call it
    expects to fail raised IndexError."""
    env = dict(os.environ, NUMBA_BOUNDSCHECK="1", NUMBA_CACHE_DIR=str(cache_dir))
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0 and "checked" in done.stdout, done.stderr


def test_vector_loads_are_bounds_checked_under_numba_boundscheck(tmp_path):
    script = textwrap.dedent("""
        import numpy as np
        from numba import njit
        from graphkern.kernels.cpu._simd import vload, vmask, vstore
        from graphkern.kernels.cpu._simd import vsum
        @njit
        def load(x, row, col, n):
            return vsum(vload(x, row, col, vmask(n, 16)))
        @njit
        def store(x, row, col, n):
            m = vmask(n, 16)
            vstore(x, row, col, vload(x, 0, 0, m), m)
        x = np.zeros((2, 20), np.float32)
        load(x, 1, 4, 16); store(x, 1, 4, 16); load(x, 1, 19, 0)  # in range, or no lane on the mask
        for call in (lambda: load(x, 2, 0, 1), lambda: load(x, 0, 5, 16), lambda: store(x, 1, 10, 11)):
            try:
                call()
            except IndexError:
                continue
            raise SystemExit("no IndexError")
        print("checked")
    """)
    _run_bounds_checked(script, tmp_path)


def _min_bytes() -> int:
    """The size from which outputs go on huge-page maps (the knob huge_page_min_bytes)."""
    return gk.tuning.current().huge_page_min_bytes


def test_large_outputs_are_zeroed_huge_page_aligned_and_writable():
    shape = (_min_bytes() // 4 + 5,)
    out = _memory.zeros(shape, np.float32)
    assert out.shape == shape and out.dtype == np.float32 and not out.any()
    out[:] = 1.5
    assert out.sum() == 1.5 * shape[0]
    if _memory._ADVICE is not None:
        assert out.ctypes.data % _memory.HUGE_PAGE == 0
    filled = _memory.full((3, _min_bytes() // 8), -1, np.int64)
    assert filled.shape == (3, _min_bytes() // 8) and (filled == -1).all()
    small = _memory.empty((4, 4), np.float64)
    assert isinstance(small, np.ndarray) and small.shape == (4, 4) and small.flags.owndata


def test_freed_outputs_are_reused_and_zeroed_again(monkeypatch):
    if _memory._ADVICE is None or not _memory._enabled():
        pytest.skip("no huge-page maps on this platform")
    monkeypatch.setattr(_memory, "_pool", {})
    shape = (_min_bytes() // 4 + 5,)
    out = _memory.zeros(shape, np.float32)
    view = out[::2]
    address = out.ctypes.data
    out[:] = 7
    del out
    assert _memory._pool == {}  # a view still holds the map
    del view
    assert sum(len(maps) for maps in _memory._pool.values()) == 1
    again = _memory.zeros(shape, np.float32)
    assert again.ctypes.data == address and not again.any()  # the same memory, zero-filled again
    assert _memory._pool[next(iter(_memory._pool))] == []
    again[:] = 3
    del again
    kept = _memory.empty(shape, np.float32)  # empty() reuses without a fill
    assert kept.ctypes.data == address and kept.flags.writeable


def test_the_pool_holds_a_bounded_number_of_maps(monkeypatch):
    if _memory._ADVICE is None or not _memory._enabled():
        pytest.skip("no huge-page maps on this platform")
    monkeypatch.setattr(_memory, "_pool", {})  # an empty pool (state, not a knob)
    with gk.tuned(pool_maps=2):
        arrays = [_memory.zeros((_min_bytes(),), np.uint8) for _ in range(4)]
        del arrays
    assert sum(len(maps) for maps in _memory._pool.values()) == 2
    _memory.release_pool()
    assert _memory._pool == {}


def test_huge_pages_can_be_switched_off(monkeypatch):
    monkeypatch.setenv("GRAPHKERN_HUGE_PAGES", "0")
    assert _memory.zeros((_min_bytes(),), np.uint8).flags.owndata


def test_spmm_outputs_from_huge_pages_feed_the_next_call():
    g = gk.graph.kronecker(12)
    x = np.random.default_rng(0).random((g.num_src, 512), dtype=np.float32)  # 8 MB: a mapped output
    h = gk.ops.copy_u_sum(g, x)
    h2 = gk.ops.copy_u_sum(g, h)
    A = g.reverse().to_scipy("csr").astype(np.float64)
    np.testing.assert_allclose(h2, A @ (A @ x.astype(np.float64)), rtol=1e-4)


@njit
def _bit_scan(ids, words, n):
    m = vmask(n, 16)
    v = vload_at(ids, 0, m)
    got = vgather(words, vshr(v, vint(ids, 5, 16)), m)
    bit = vshl(vint(ids, 1, 16), vand(v, vint(ids, 31, 16)))
    return vbits(vzero_lanes(vand(got, bit), m)), vbits(m)


@pytest.mark.parametrize("n", [0, 3, 16])
def test_gathered_bit_tests_find_the_clear_bits(n):
    rng = np.random.default_rng(n)
    ids = rng.integers(0, 640, 16).astype(np.int32)
    words = rng.integers(0, 2**31, 20).astype(np.int32)
    clear, on = _bit_scan(ids, words, n)
    want = sum(1 << i for i in range(min(n, 16)) if not (words[ids[i] >> 5] >> (ids[i] & 31)) & 1)
    assert clear == want and on == (1 << min(n, 16)) - 1


def test_gathers_are_bounds_checked_under_numba_boundscheck(tmp_path):
    script = textwrap.dedent("""
        import numpy as np
        from numba import njit
        from graphkern.kernels.cpu._simd import vbits, vgather, vload_at, vmask, vzero_lanes
        @njit
        def scan(ids, words, start, n):
            m = vmask(n, 16)
            return vbits(vzero_lanes(vgather(words, vload_at(ids, start, m), m), m))
        ids = np.arange(20, dtype=np.int32); words = np.zeros(20, np.int32)
        scan(ids, words, 4, 16); scan(ids, words, 19, 1)
        for start, n in ((5, 16), (0, 17)):        # past the ids; a gathered index past the words
            try:
                scan(ids, words if n == 16 else words[:10], start, n)
            except IndexError:
                continue
            raise SystemExit("no IndexError")
        print("checked")
    """)
    _run_bounds_checked(script, tmp_path)


@njit
def _merge_ops(keys, lo, hi, drop, packed, stored, table):
    """The integer-lane helpers the GPMA merge uses, on one 8-lane vector of int64 keys."""
    on = vlanes(lo, hi, 8)
    v = vload_at(keys, 0, on)
    keep = mask_and(on, vne(v, vint(keys, drop, 8)))
    vcompress_at(packed, 1, v, keep)
    vstore_at(stored, 2, v + vint(keys, 100, 8), mask_or(keep, veq(v, vint(keys, drop, 8))))
    vscatter(table, vand(v, vint(keys, 15, 8)), viota(table, 1000, 8), keep)
    return vbits(keep), vbits(on)


@pytest.mark.parametrize("lo, hi", [(0, 8), (2, 6), (-3, 3), (5, 20), (4, 4)])
def test_lane_ranges_compress_store_and_scatter(lo, hi):
    keys = np.array([5, 9, 7, 9, 1, 12, 9, 3], dtype=np.int64)
    packed = np.full(10, -1, np.int64)
    stored = np.full(11, -1, np.int64)
    table = np.full(16, -1, np.int64)
    keep, on = _merge_ops(keys, lo, hi, 9, packed, stored, table)
    lanes_on = [i for i in range(8) if lo <= i < hi]
    kept = [i for i in lanes_on if keys[i] != 9]
    assert on == sum(1 << i for i in lanes_on) and keep == sum(1 << i for i in kept)
    want_packed = np.full(10, -1, np.int64)
    want_packed[1:1 + len(kept)] = keys[kept]                       # in lane order, from the start
    np.testing.assert_array_equal(packed, want_packed)
    want_stored = np.full(11, -1, np.int64)
    want_stored[[2 + i for i in lanes_on]] = keys[lanes_on] + 100   # only the lanes on the mask
    np.testing.assert_array_equal(stored, want_stored)
    want_table = np.full(16, -1, np.int64)
    for i in kept:                                                  # later lanes win, as in lane order
        want_table[keys[i] & 15] = 1000 + i
    np.testing.assert_array_equal(table, want_table)


def test_stores_compress_and_scatter_are_bounds_checked_under_numba_boundscheck(tmp_path):
    script = textwrap.dedent("""
        import numpy as np
        from numba import njit
        from graphkern.kernels.cpu._simd import vcompress_at, viota, vint, vlanes, vload_at, vscatter, vstore_at
        @njit
        def store(x, start, lo, hi):
            vstore_at(x, start, vint(x, 1, 8), vlanes(lo, hi, 8))
        @njit
        def compress(x, start, lo, hi):
            vcompress_at(x, start, vint(x, 1, 8), vlanes(lo, hi, 8))
        @njit
        def scatter(x, first, lo, hi):
            vscatter(x, viota(x, first, 8), vint(x, 1, 8), vlanes(lo, hi, 8))
        x = np.zeros(10, np.int64)
        store(x, -3, 3, 8); store(x, 5, 0, 5); compress(x, 7, 2, 5); scatter(x, 4, 0, 6)  # lanes in range
        for call in (lambda: store(x, -3, 2, 8), lambda: store(x, 5, 0, 6), lambda: compress(x, 8, 0, 3),
                     lambda: scatter(x, 4, 0, 7)):
            try:
                call()
            except IndexError:
                continue
            raise SystemExit("no IndexError")
        print("checked")
    """)
    _run_bounds_checked(script, tmp_path)
