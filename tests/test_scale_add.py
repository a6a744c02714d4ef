"""kernels.cpu.scale_add against NumPy: ``out = scale * x[:rows] + out`` in the dtype, bit for bit."""

import numpy as np
import pytest
from graphkern.kernels.cpu.scale_add import BLOCK_ROWS, add_scaled_rows


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize(("rows", "extra", "width"), [(0, 0, 4), (1, 0, 1), (5, 3, 17), (BLOCK_ROWS + 3, 0, 16),
                                                      (2 * BLOCK_ROWS + 1, 7, 64), (40, 0, 33)])
def test_add_scaled_rows_matches_numpy(dtype, rows, extra, width):
    rng = np.random.default_rng(rows + width)
    x = rng.standard_normal((rows + extra, width)).astype(dtype)
    out = rng.standard_normal((rows, width)).astype(dtype)
    scale = np.array([[1.3]], dtype=dtype)
    # NumPy rounds the product to the dtype, then the sum: the kernel must do the same (no fused multiply-add)
    expected = scale[0, 0] * x[:rows] + out
    before = x.copy()
    add_scaled_rows(out, x, scale)
    assert out.dtype == dtype
    np.testing.assert_array_equal(out, expected)
    np.testing.assert_array_equal(x, before)  # x is only read
