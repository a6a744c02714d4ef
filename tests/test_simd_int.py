"""The unsigned integer lane helpers (kernels/cpu/_simd_int.py) against NumPy."""

import numpy as np
from graphkern.kernels.cpu._simd import vfull, vload_at, vmask
from graphkern.kernels.cpu._simd_int import (
    mask_any,
    mask_not,
    vbitreverse,
    vlane,
    vmul,
    vnarrow,
    vor,
    vsub,
    vult,
    vumin,
    vurem,
    vwiden,
    vxor,
)
from numba import njit

W = 8


@njit
def _lanes(a, b, divisor, out32, out64, flags):
    on = vmask(W, W)
    x = vload_at(a, 0, on)
    y = vload_at(b, 0, on)
    wide = vmul(vwiden(x), vwiden(y))
    results = (vor(x, y), vxor(x, y), vsub(x, y), vmul(x, y), vurem(x, vfull(a, divisor, W)), vumin(x, y),
               vbitreverse(x), vnarrow(wide))
    r0, r1, r2, r3, r4, r5, r6, r7 = results
    for lane in range(W):
        out32[0, lane] = vlane(r0, lane)
        out32[1, lane] = vlane(r1, lane)
        out32[2, lane] = vlane(r2, lane)
        out32[3, lane] = vlane(r3, lane)
        out32[4, lane] = vlane(r4, lane)
        out32[5, lane] = vlane(r5, lane)
        out32[6, lane] = vlane(r6, lane)
        out32[7, lane] = vlane(r7, lane)
        out64[lane] = vlane(wide, lane)
    below = vult(x, y)
    flags[0] = mask_any(below)
    flags[1] = mask_any(mask_not(below))
    return flags


def test_unsigned_lane_arithmetic_equals_numpy():
    rng = np.random.default_rng(5)
    a = rng.integers(0, 1 << 32, W, dtype=np.uint64).astype(np.uint32)
    b = rng.integers(0, 1 << 32, W, dtype=np.uint64).astype(np.uint32)
    a[0], b[0] = 0xFFFFFFFF, 1  # unsigned: the top bit is a value, not a sign
    out32 = np.empty((8, W), np.uint32)
    out64 = np.empty(W, np.uint64)
    flags = _lanes(a, b, 10000, out32, out64, np.empty(2, np.bool_))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(out32[0], a | b)
        np.testing.assert_array_equal(out32[1], a ^ b)
        np.testing.assert_array_equal(out32[2], a - b)
        np.testing.assert_array_equal(out32[3], a * b)
    np.testing.assert_array_equal(out32[4], a % 10000)
    np.testing.assert_array_equal(out32[5], np.minimum(a, b))
    reversed_bits = [int(f"{int(x):032b}"[::-1], 2) for x in a]
    np.testing.assert_array_equal(out32[6], reversed_bits)
    product = a.astype(np.uint64) * b.astype(np.uint64)
    np.testing.assert_array_equal(out64, product)
    np.testing.assert_array_equal(out32[7], product.astype(np.uint32))
    assert flags[0] == bool(np.any(a < b)) and flags[1] == bool(np.any(a >= b))
