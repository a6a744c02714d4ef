"""segment_mm and gather_mm on the cuda backend against the CPU backend and NumPy loops (simulator sizes)."""

import numpy as np
import pytest
from graphkern.kernels.cuda.launch import launch_shape
from numba import cuda

import graphkern as gk
from graphkern.segment import segment_mm_backward_b


def _data(shape, seed, dtype=np.float64):
    return np.random.default_rng(seed).uniform(-1.0, 1.0, shape).astype(dtype)


def _per_segment(a, b, seglen):
    starts = np.concatenate([[0], np.cumsum(seglen)])
    return np.concatenate([a[starts[r]:starts[r + 1]] @ b[r] for r in range(len(seglen))] or [a[:0] @ b[0]])


@pytest.mark.fast
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("seglen", [[0, 3, 0, 6, 1, 0], [10], [0, 0, 4]])
def test_segment_mm_matches_cpu_and_numpy(seglen, dtype):
    seglen = np.array(seglen)
    n = int(seglen.sum())
    a, b = _data((n, 3), 1, dtype), _data((seglen.size, 3, 5), 2, dtype)
    got = gk.segment_mm(a, b, seglen, backend="cuda")
    assert not isinstance(got, np.ndarray) and hasattr(got, "copy_to_host")  # a device array
    got = got.copy_to_host()
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, gk.segment_mm(a, b, seglen), rtol=tol, atol=tol)
    np.testing.assert_allclose(got, _per_segment(a, b, seglen), rtol=tol, atol=tol)


@pytest.mark.parametrize("index_dtype", [np.int32, np.int64])
def test_gather_mm_every_index_form(index_dtype):
    rng = np.random.default_rng(4)
    a, b = _data((9, 4), 1), _data((3, 4, 2), 2)
    idx_b = rng.integers(0, 3, 9).astype(index_dtype)
    idx_a = rng.integers(0, 9, 7).astype(index_dtype)
    idx_b7 = rng.integers(0, 3, 7).astype(index_dtype)
    cases = [dict(idx_b=idx_b), dict(idx_a=idx_a, idx_b=idx_b7), dict(idx_a=idx_a[:3])]
    for kwargs in cases:
        want = gk.gather_mm(a, b, **kwargs)
        np.testing.assert_allclose(gk.gather_mm(a, b, backend="cuda", **kwargs).copy_to_host(), want, rtol=1e-12)
    b9 = _data((9, 4, 2), 3)
    np.testing.assert_allclose(gk.gather_mm(a, b9, backend="cuda").copy_to_host(),
                               np.einsum("ik,ikj->ij", a, b9), rtol=1e-12)


@pytest.mark.fast
def test_device_inputs_and_any_launch_shape():
    a, b = _data((8, 2), 1), _data((2, 2, 3), 2)
    da, db = cuda.to_device(a), cuda.to_device(b)
    idx = cuda.to_device(np.array([1, 0, 0, 1, 1, 1, 0, 0]))
    want = gk.gather_mm(a, b, idx_b=np.array([1, 0, 0, 1, 1, 1, 0, 0]))
    with launch_shape(2, 3):  # grid-stride: any shape gives the same result
        got = gk.gather_mm(da, db, idx_b=idx)  # auto: device inputs run on the device
        seg = gk.segment_mm(da, db, [5, 3])
    np.testing.assert_allclose(got.copy_to_host(), want, rtol=1e-12)
    np.testing.assert_allclose(seg.copy_to_host(), gk.segment_mm(a, b, [5, 3]), rtol=1e-12)


def test_backward_b_and_empty_outputs():
    a, dz = _data((7, 3), 1), _data((7, 2), 2)
    seglen = [0, 4, 3, 0]
    np.testing.assert_allclose(segment_mm_backward_b(a, dz, seglen, backend="cuda").copy_to_host(),
                               segment_mm_backward_b(a, dz, seglen), rtol=1e-12)
    assert gk.segment_mm(np.zeros((0, 3)), np.zeros((2, 3, 4)), [0, 0], backend="cuda").shape == (0, 4)


def test_device_indices_out_of_range_are_refused():
    a, b = _data((4, 2), 1), _data((2, 2, 3), 2)
    with pytest.raises(ValueError, match="argument 'idx_b': expected matrix ids of 'b' < 2, found 5 at position 3"):
        gk.gather_mm(a, b, idx_b=cuda.to_device(np.array([0, 1, 1, 5])), backend="cuda")
    with pytest.raises(ValueError, match="argument 'idx_a'.*>= 0, found -1"):
        gk.gather_mm(a, b, idx_a=cuda.to_device(np.array([0, -1])), idx_b=[0, 1], backend="cuda")
    with pytest.raises(ValueError, match="argument 'seglen_a'.*sum 3"):
        gk.segment_mm(a, b, cuda.to_device(np.array([1, 2])), backend="cuda")


def test_chunk_segments_cuts_every_segment_in_row_order():
    from graphkern.kernels.cuda.segment_mm import chunk_segments

    chunks, first = chunk_segments(np.array([0, 0, 7, 8, 8, 14]), 3)
    np.testing.assert_array_equal(chunks, [[0, 3, 6, 7, 8, 11], [3, 6, 7, 8, 11, 14]])
    np.testing.assert_array_equal(first, [0, 0, 3, 4, 4, 6])
    chunks, first = chunk_segments(np.array([0, 0]), 3)
    assert chunks.shape == (2, 0) and first.tolist() == [0, 0]


@pytest.mark.parametrize("shape", [None, (2, 33), (1, 1)])
@pytest.mark.parametrize("seglen", [[0, 11, 1, 0, 7], [25], [4, 4]])
def test_backward_b_of_long_segments_in_chunks(seglen, shape):
    """Segments longer than the chunk threshold (lowered to 3 rows) are summed in chunks and the chunks
    added in order; segments at or below it take the single pass. Both equal the CPU backend."""
    import contextlib

    seglen = np.array(seglen)
    n = int(seglen.sum())
    a, dz = _data((n, 3), 5), _data((n, 2), 6)
    with launch_shape(*shape) if shape else contextlib.nullcontext(), gk.tuned(cuda_segment_backward_chunk_rows=3):
        got = segment_mm_backward_b(a, dz, seglen, backend="cuda").copy_to_host()
    want = segment_mm_backward_b(a, dz, seglen)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    starts = np.concatenate([[0], np.cumsum(seglen)])
    for r in range(seglen.size):
        np.testing.assert_allclose(got[r], a[starts[r]:starts[r + 1]].T @ dz[starts[r]:starts[r + 1]], atol=1e-12)
