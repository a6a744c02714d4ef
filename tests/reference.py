"""Plain NumPy references, written to be read, not to be fast. Every kernel is checked against these."""

from __future__ import annotations

import numpy as np


def compress(rows, cols, num_rows):
    """CSR of a COO by a stable argsort: (indptr, indices, eids) with eids = original positions."""
    rows = np.asarray(rows, dtype=np.int64)
    cols = np.asarray(cols, dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    counts = np.bincount(rows, minlength=num_rows) if rows.size else np.zeros(num_rows, dtype=np.int64)
    indptr = np.concatenate([[0], np.cumsum(counts)])
    return indptr, cols[order], order


def transpose(indptr, indices, eids, num_cols):
    """Transpose of a compressed matrix, walking rows in order (stable), carrying eids."""
    indptr = np.asarray(indptr, dtype=np.int64)
    rows = np.repeat(np.arange(indptr.size - 1), np.diff(indptr))
    if eids is None:
        eids = np.arange(indices.size)
    t_indptr, t_indices, order = compress(indices, rows, num_cols)
    return t_indptr, t_indices, np.asarray(eids)[order]


def exclusive_scan(values):
    return np.concatenate([[0], np.cumsum(values)])


def simple_edges(src, dst, drop_self_loops=True):
    """Sorted unique (src, dst) pairs, self-loops removed, with the first edge id of each pair."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    seen = {}
    for e, (u, v) in enumerate(zip(src.tolist(), dst.tolist())):
        if drop_self_loops and u == v:
            continue
        seen.setdefault((u, v), e)
    pairs = sorted(seen)
    return (np.array([p[0] for p in pairs], dtype=np.int64), np.array([p[1] for p in pairs], dtype=np.int64),
            np.array([seen[p] for p in pairs], dtype=np.int64))
