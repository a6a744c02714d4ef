"""Edge softmax on the CPU: one fused pass per row (max, exp-sum, normalise), every head at once.

Rows are the CSC (normalise over the in-edges of a destination) or the CSR (over the out-edges of a
source), split into nnz-balanced parts. A row's logits are gathered once into a per-thread buffer (the
only random reads), max and exp-sum run on the buffer in cache, and the results are scattered once to
their edge ids, instead of three gathers and two scatters.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(parallel=True, cache=True)
def edge_softmax_rows(indptr, eids, has_eids, parts, logits, out):
    """``out[e, h] = exp(logits[e, h] - m) / sum`` over the edges ``e`` of each row, per head ``h``."""
    H = logits.shape[1]
    for p in prange(parts.size - 1):
        cap = 64
        buf = np.empty((cap, H), dtype=logits.dtype)
        row_max = np.empty(H, dtype=logits.dtype)
        row_sum = np.empty(H, dtype=logits.dtype)
        for v in range(parts[p], parts[p + 1]):
            start = indptr[v]
            deg = indptr[v + 1] - start
            if deg == 0:
                continue
            if deg > cap:
                cap = 2 * deg
                buf = np.empty((cap, H), dtype=logits.dtype)
            for h in range(H):
                row_max[h] = -np.inf
                row_sum[h] = 0
            for i in range(deg):
                e = eids[start + i] if has_eids else start + i
                for h in range(H):
                    val = logits[e, h]
                    buf[i, h] = val
                    if val > row_max[h]:
                        row_max[h] = val
            for i in range(deg):
                for h in range(H):
                    ex = np.exp(buf[i, h] - row_max[h])
                    buf[i, h] = ex
                    row_sum[h] += ex
            for h in range(H):
                row_sum[h] = 1.0 / row_sum[h]
            for i in range(deg):
                e = eids[start + i] if has_eids else start + i
                for h in range(H):
                    out[e, h] = buf[i, h] * row_sum[h]
