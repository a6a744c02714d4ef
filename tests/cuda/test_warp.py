"""group_sum / group_max (kernels/cuda/warp.py) against a NumPy model of the hardware's butterfly.

On a GPU the reductions are ``shfl_xor_sync`` butterflies in the value's own type; the simulator replays
the same butterfly. Both are compared with :func:`butterfly` below, lane by lane and bit for bit, with
float values chosen so that adding a group in lane order gives a different float32 (float64) result than
the butterfly's pairing: a reduction that summed in lane order, or in a wider type, fails here. The tests
run unchanged on a real GPU.
"""

import numpy as np
import pytest
from conftest import SIMULATED
from graphkern.kernels.cuda.warp import WIDTHS, group_max, group_sum
from numba import cuda

# (blocks, threads per block): one warp, one block of several warps, several blocks of one warp each,
# several blocks of several warps
SHAPES = [(1, 32), (1, 64), (3, 32), (2, 64)]


def butterfly(group: np.ndarray, op: str) -> np.ndarray:
    """Every lane's value after the shuffle butterfly of one group, in ``group``'s dtype.

    At each step (offsets ``width/2, ..., 1``) lane ``i`` reads lane ``i ^ off``'s value from before the
    step; ``sum`` adds it, ``max`` takes it only when it is greater (so a NaN never wins a comparison)."""
    vals = group.copy()
    width = len(vals)
    off = width // 2
    while off > 0:
        new = vals.copy()
        for lane in range(width):
            other = vals[lane ^ off]
            if op == "sum":
                new[lane] = vals[lane] + other  # NumPy scalars: float32 + float32 rounds to float32
            elif other > vals[lane]:
                new[lane] = other
        vals = new
        off //= 2
    return vals


def model(values: np.ndarray, op: str) -> np.ndarray:
    """``butterfly`` over every group of every width: ``values`` and the result are ``(len(WIDTHS), n)``."""
    out = np.empty_like(values)
    for j, width in enumerate(WIDTHS):
        for start in range(0, values.shape[1], width):
            with np.errstate(all="ignore"):
                out[j, start:start + width] = butterfly(values[j, start:start + width], op)
    return out


@cuda.jit
def _sum_kernel(values, widths, out):
    i = cuda.grid(1)
    for j in range(widths.size):  # every thread reaches every call: the calls stay warp-uniform
        out[j, i] = group_sum(values[j, i], widths[j])


@cuda.jit
def _max_kernel(values, widths, out):
    i = cuda.grid(1)
    for j in range(widths.size):
        out[j, i] = group_max(values[j, i], widths[j])


def run(op: str, values: np.ndarray, shape) -> np.ndarray:
    """The kernel's result: one thread per column of ``values``, launched as ``shape``."""
    blocks, threads = shape
    assert values.shape[1] == blocks * threads
    out = cuda.device_array(values.shape, values.dtype)
    kernel = _sum_kernel if op == "sum" else _max_kernel
    kernel[blocks, threads](cuda.to_device(values), cuda.to_device(np.array(WIDTHS, np.int64)), out)
    return out.copy_to_host()


def cancelling_values(dtype, n: int, seed: int) -> np.ndarray:
    """Large values that cancel mixed with small ones the large ones absorb, ``(len(WIDTHS), n)``.

    The first group of each width is ``big, 1, -big, 1, ...``: in lane order every 1 after a ``big`` is
    absorbed (the sum is 1), the butterfly pairs the bigs first (the sum is width / 2). The other groups
    are random draws of the same kinds of values."""
    rng = np.random.default_rng(seed)
    big = 1e8 if np.dtype(dtype) == np.float32 else 1e17
    kinds = rng.integers(0, 3, (len(WIDTHS), n))
    vals = np.where(kinds == 0, big, np.where(kinds == 1, -big, rng.integers(1, 4, (len(WIDTHS), n))))
    vals = vals * rng.choice([1.0, 0.75, 1.25], (len(WIDTHS), n))
    for j, width in enumerate(WIDTHS):
        vals[j, :width] = np.resize([big, 1, -big, 1], width)
    return vals.astype(dtype)


def lane_order(values: np.ndarray, width: int, dtype) -> np.ndarray:
    """Each group's sum in lane order, in ``dtype`` (what the butterfly must NOT match everywhere)."""
    sums = []
    for start in range(0, values.size, width):
        total = values[start]
        for v in values[start + 1:start + width]:
            total = dtype(total + v)
        sums.append(total)
    return np.array(sums, dtype)


@pytest.mark.fast
@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_float_sum_follows_the_butterfly_bit_for_bit(dtype, shape):
    values = cancelling_values(dtype, shape[0] * shape[1], seed=shape[0] * 100 + shape[1])
    expected = model(values, "sum")
    # the data tells the two orders apart, so a lane-order (or wider) sum cannot pass by luck
    for j, width in enumerate(WIDTHS[2:], start=2):
        assert expected[j, 0] != lane_order(values[j], width, dtype)[0], width
    got = run("sum", values, shape)
    assert got.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(got.view(np.uint64 if dtype == np.float64 else np.uint32),
                                  expected.view(np.uint64 if dtype == np.float64 else np.uint32))


@pytest.mark.parametrize("shape", SHAPES[1:3], ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_int_sum_and_max(dtype, shape):
    rng = np.random.default_rng(3)
    values = rng.integers(-1000, 1000, (len(WIDTHS), shape[0] * shape[1])).astype(dtype)
    for op in ("sum", "max"):
        got = run(op, values, shape)
        np.testing.assert_array_equal(got, model(values, op))
        assert got.dtype == np.dtype(dtype)
    # and the obvious reading of a group reduction, for the widest groups
    np.testing.assert_array_equal(run("sum", values, shape)[-1], np.repeat(values[-1].reshape(-1, 32).sum(1), 32))


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: f"{s[0]}x{s[1]}")
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_with_nan_is_per_lane(dtype, shape):
    rng = np.random.default_rng(11)
    n = shape[0] * shape[1]
    values = rng.normal(size=(len(WIDTHS), n)).astype(dtype)
    values[rng.random((len(WIDTHS), n)) < 0.15] = np.nan
    values[:, 5] = np.nan  # at least one NaN in the first group of every width above 4
    values[:, 4] = -np.inf
    expected = model(values, "max")
    # the case discriminates: some group of 32 ends with lanes that disagree (NaN on some, a number on others)
    last = expected[-1].reshape(-1, 32)
    assert any(np.isnan(g).any() and not np.isnan(g).all() for g in last)
    got = run("max", values, shape)
    np.testing.assert_array_equal(got, expected)  # NaN positions must match too


def test_float32_max_without_nan_is_the_group_max():
    values = cancelling_values(np.float32, 64, seed=5)
    got = run("max", values, (1, 64))
    for j, width in enumerate(WIDTHS):
        np.testing.assert_array_equal(got[j], np.repeat(values[j].reshape(-1, width).max(1), width))


@pytest.mark.skipif(not SIMULATED, reason="the simulator's checks of the hardware's preconditions")
class TestSimulatorPreconditions:
    def test_block_of_partial_warps_is_refused(self):
        values = np.ones((len(WIDTHS), 40), np.float32)
        with pytest.raises(ValueError, match="needs whole warps"):
            run("sum", values, (1, 40))

    def test_width_must_be_a_power_of_two_up_to_32(self):
        @cuda.jit
        def kernel(out):
            i = cuda.grid(1)
            out[i] = group_sum(out[i], 3)

        with pytest.raises(ValueError, match="width must be one of"):
            kernel[1, 32](cuda.to_device(np.ones(32, np.float32)))

    def test_unshuffleable_dtype_is_refused(self):
        @cuda.jit
        def kernel(out):
            i = cuda.grid(1)
            out[i] = group_sum(out[i], 32)

        with pytest.raises(TypeError, match="shfl_xor_sync moves"):
            kernel[1, 32](cuda.to_device(np.ones(32, np.float16)))

    def test_an_aborted_launch_does_not_leave_lanes_for_the_next(self):
        @cuda.jit
        def kernel(out):
            i = cuda.grid(1)
            if i == 0:
                raise ValueError("lane 0 fails")
            out[i] = group_sum(out[i], 32)

        with pytest.raises(ValueError, match="lane 0 fails"):
            kernel[1, 32](cuda.to_device(np.ones(32, np.float32)))
        # the lanes left waiting belong to the aborted launch; a new launch has its own groups
        values = cancelling_values(np.float32, 32, seed=1)
        np.testing.assert_array_equal(run("sum", values, (1, 32)), model(values, "sum"))
