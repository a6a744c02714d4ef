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


# --------------------------------------------------------------------------- g-SpMM / g-SDDMM references

def _pad(a_shape, b_shape):
    if len(a_shape) < len(b_shape):
        a_shape = (1,) * (len(b_shape) - len(a_shape)) + tuple(a_shape)
    if len(b_shape) < len(a_shape):
        b_shape = (1,) * (len(a_shape) - len(b_shape)) + tuple(b_shape)
    return a_shape, b_shape


def binary(op, lhs, rhs):
    """``op`` on per-edge operand rows ``lhs`` (E, ...) and ``rhs`` (E, ...) with DGL's padding rule."""
    if op == "copy_lhs":
        return lhs
    if op == "copy_rhs":
        return rhs
    ls, rs = _pad(lhs.shape[1:], rhs.shape[1:])
    lhs = lhs.reshape((lhs.shape[0],) + ls)
    rhs = rhs.reshape((rhs.shape[0],) + rs)
    if op == "add":
        return lhs + rhs
    if op == "sub":
        return lhs - rhs
    if op == "mul":
        return lhs * rhs
    if op == "div":
        return lhs / rhs
    if op == "dot":
        return (lhs * rhs).sum(axis=-1, keepdims=True)
    raise ValueError(op)


def _runs(keys):
    """Where each run of equal values starts in ``keys`` (grouped), and how long each run is."""
    if keys.size == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.concatenate([[True], keys[1:] != keys[:-1]]))
    return starts, np.diff(np.concatenate([starts, [keys.size]]))


def spmm(src, dst, csc_eids, num_dst, op, reduce, x=None, w=None):
    """out[v] = reduce over in-edges of op(x[src[e]], w[e]); edges taken in CSC order (``csc_eids``).

    Returns (out, arg_u, arg_e): empty rows give 0 and -1; ties go to the first edge in CSC order (as
    ``np.argmax`` picks), and a NaN message wins its row. The CSC order groups the edges by destination,
    so each destination's edges are one run and every reduction is a ``reduceat`` over the runs.
    """
    src = np.asarray(src, np.int64)
    dst = np.asarray(dst, np.int64)
    E = src.size
    lhs = x[src] if x is not None else None
    msg = binary(op, lhs, w) if lhs is not None and w is not None else (lhs if w is None else w)
    if msg is None:
        raise ValueError("no operand")
    msg = msg.reshape((E,) + msg.shape[1:]) if E else msg
    out_shape = (num_dst,) + msg.shape[1:]
    out = np.zeros(out_shape, dtype=msg.dtype)
    arg_u = np.full(out_shape, -1, dtype=np.int64)
    arg_e = np.full(out_shape, -1, dtype=np.int64)
    edges = np.asarray(csc_eids, np.int64)
    if edges.size == 0:
        return out, arg_u, arg_e
    m = msg[edges]                                     # messages in CSC order
    starts, counts = _runs(dst[edges])
    rows = dst[edges][starts]                          # the destination of each run
    per_edge = np.repeat(np.arange(starts.size), counts)
    if reduce in ("sum", "mean"):
        total = np.add.reduceat(m, starts, axis=0)
        if reduce == "mean":
            total = total / counts.reshape((-1,) + (1,) * (m.ndim - 1))
        out[rows] = total
        return out, arg_u, arg_e
    best = (np.maximum if reduce == "max" else np.minimum).reduceat(m, starts, axis=0)
    hit = (m == best[per_edge]) | (np.isnan(m) & np.isnan(best[per_edge]))
    position = np.arange(E).reshape((-1,) + (1,) * (m.ndim - 1))
    first = np.minimum.reduceat(np.where(hit, position, E), starts, axis=0)   # first hit of each run
    out[rows] = best
    arg_e[rows] = edges[first]
    arg_u[rows] = src[edges[first]]
    return out, arg_u, arg_e


def sddmm(src, dst, op, lhs, rhs, lhs_target, rhs_target):
    """out[e] = op(L[e], R[e]) with L/R rows picked by target u (src), v (dst) or e (edge)."""
    src = np.asarray(src, np.int64)
    dst = np.asarray(dst, np.int64)
    pick = {"u": src, "v": dst, "e": np.arange(src.size)}
    L = lhs[pick[lhs_target]] if lhs is not None else None
    R = rhs[pick[rhs_target]] if rhs is not None else None
    if op == "copy_lhs":
        return L
    if op == "copy_rhs":
        return R
    return binary(op, L, R)


def edge_softmax(dst, num_dst, logits):
    """Softmax of logits over the edges sharing a destination, per head."""
    dst = np.asarray(dst, np.int64)
    z = logits.reshape(logits.shape[0], int(np.prod(logits.shape[1:]))).astype(np.float64)
    out = np.empty_like(z)
    if z.shape[0]:
        order = np.argsort(dst, kind="stable")         # each destination's edges, one run
        starts, counts = _runs(dst[order])
        shifted = z[order] - np.repeat(np.maximum.reduceat(z[order], starts, axis=0), counts, axis=0)
        ex = np.exp(shifted)
        out[order] = ex / np.repeat(np.add.reduceat(ex, starts, axis=0), counts, axis=0)
    return out.reshape(logits.shape)
