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


def spmm(src, dst, csc_eids, num_dst, op, reduce, x=None, w=None):
    """out[v] = reduce over in-edges of op(x[src[e]], w[e]); edges taken in CSC order (``csc_eids``).

    Returns (out, arg_u, arg_e): empty rows give 0 and -1; ties go to the first edge in CSC order.
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
    by_dst = {}
    for e in np.asarray(csc_eids, np.int64).tolist():
        by_dst.setdefault(int(dst[e]), []).append(e)
    for v, edges in by_dst.items():
        m = msg[edges]
        if reduce in ("sum", "mean"):
            out[v] = m.sum(axis=0) / (len(edges) if reduce == "mean" else 1)
        else:
            pick = np.argmax(m, axis=0) if reduce == "max" else np.argmin(m, axis=0)  # first occurrence
            out[v] = np.take_along_axis(m, pick[None], axis=0)[0]
            arg_e[v] = np.asarray(edges)[pick]
            arg_u[v] = src[np.asarray(edges)[pick]]
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
    order = np.argsort(dst, kind="stable")
    bounds = np.searchsorted(dst[order], np.arange(num_dst + 1))
    for v in range(num_dst):
        rows = order[bounds[v]:bounds[v + 1]]
        if rows.size:
            ex = np.exp(z[rows] - z[rows].max(axis=0))
            out[rows] = ex / ex.sum(axis=0)
    return out.reshape(logits.shape)
