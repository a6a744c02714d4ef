"""Row partitions for the row-parallel kernels: contiguous row ranges of about equal non-zeros.

Every kernel that is parallel over the rows of a compressed matrix (the CSC rows of g-SpMM, the CSR rows
of g-SDDMM and of edge softmax, the chunks of the count sort and of the transpose, the destination blocks
of the blocked SpMM, the rows of a packed dynamic graph, the pulls of a search) splits its rows here. Ranges
of equal row counts load-imbalance power-law graphs, where one hub row carries as many edges as
thousands of others; ranges of equal non-zeros do not, and a row is never split, so each row is still
reduced by one thread in its own order (sums stay deterministic).
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["nnz_balanced_row_bounds"]


@njit(cache=True)
def nnz_balanced_row_bounds(indptr, parts):
    """Bounds of ``parts`` contiguous row ranges holding about ``nnz / parts`` non-zeros each.

    Range ``t`` is rows ``bounds[t]:bounds[t + 1]``: it starts at the row that holds non-zero number
    ``nnz * t // parts`` (the last row starting at or before it), so a row heavier than a share takes
    the share's range and leaves the next ranges empty. ``bounds`` is int64, non-decreasing, with
    ``parts + 1`` entries from 0 to the row count. ``indptr`` is monotone from 0 (any integer dtype) and
    ``parts`` at least 1; both are trusted.

    Examples
    --------
    >>> import numpy as np
    >>> from graphkern.kernels.cpu.partition import nnz_balanced_row_bounds
    >>> nnz_balanced_row_bounds(np.array([0, 6, 7, 8, 9, 10, 12]), 2).tolist()   # row 0 is half the edges
    [0, 1, 6]
    """
    num_rows = indptr.size - 1
    nnz = indptr[num_rows]
    bounds = np.empty(parts + 1, dtype=np.int64)
    bounds[0] = 0
    bounds[parts] = num_rows
    for t in range(1, parts):
        target = (nnz * t) // parts
        bounds[t] = max(bounds[t - 1], np.searchsorted(indptr, target, side="right") - 1)
    return bounds
