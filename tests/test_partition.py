"""The row partitioner of every row-parallel kernel, against a plain reference."""

import numpy as np
import pytest
from graphkern.kernels.cpu.partition import nnz_balanced_row_bounds


def reference_bounds(indptr, parts):
    """Range ``t`` starts at the last row whose first non-zero is at or before non-zero ``nnz * t // parts``
    (never before the previous range's start); the last range ends at the row count."""
    indptr = [int(v) for v in indptr]
    rows, nnz = len(indptr) - 1, indptr[-1]
    bounds = [0]
    for t in range(1, parts):
        target = nnz * t // parts
        last_start = max(r for r in range(rows + 1) if indptr[r] <= target)
        bounds.append(max(bounds[-1], last_start))
    bounds.append(rows)
    return bounds


def _indptr(lengths, dtype=np.int64):
    indptr = np.zeros(len(lengths) + 1, dtype=dtype)
    np.cumsum(lengths, out=indptr[1:])
    return indptr


CASES = {
    "no rows": [],
    "no edges": [0, 0, 0, 0],
    "one row": [7],
    "a hub first": [1000, 1, 1, 1, 1, 1],
    "a hub last": [1, 1, 1, 1, 1, 1000],
    "a hub in the middle and empty rows": [0, 3, 0, 500, 0, 0, 2, 9],
    "uniform": [4] * 50,
    "power law": list(np.random.default_rng(0).zipf(1.8, 300).clip(max=5000)),
}


@pytest.mark.parametrize("name", sorted(CASES))
@pytest.mark.parametrize("parts", [1, 2, 3, 8, 64])
@pytest.mark.parametrize("dtype", [np.int32, np.int64])
def test_bounds_equal_the_reference(name, parts, dtype):
    indptr = _indptr(CASES[name], dtype)
    got = nnz_balanced_row_bounds(indptr, parts)
    assert got.dtype == np.int64
    assert got.tolist() == reference_bounds(indptr, parts)


@pytest.mark.parametrize("seed", range(5))
def test_ranges_cover_the_rows_and_balance_the_edges(seed):
    rng = np.random.default_rng(seed)
    lengths = rng.zipf(1.6, int(rng.integers(1, 2000))).clip(max=10_000)
    indptr = _indptr(lengths)
    parts = int(rng.integers(1, 40))
    bounds = nnz_balanced_row_bounds(indptr, parts)
    assert bounds[0] == 0 and bounds[-1] == lengths.size and bounds.size == parts + 1
    assert np.all(np.diff(bounds) >= 0)
    # each range holds at most its share plus one row (the one that straddles its end)
    nnz_per_range = indptr[bounds[1:]] - indptr[bounds[:-1]]
    assert nnz_per_range.sum() == indptr[-1]
    assert np.all(nnz_per_range <= -(-indptr[-1] // parts) + lengths.max())
