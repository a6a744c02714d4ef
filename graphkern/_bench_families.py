"""The sections of ``graphkern bench``, one function per kernel family (see :mod:`graphkern.bench`)."""

from __future__ import annotations

import numpy as np

from .bench import BenchContext, Row, bench_family, time_pair


@bench_family("convert")
def bench_conversions(ctx: BenchContext) -> list[Row]:
    """COO -> CSR (Graph500 kernel 1's core), CSR -> CSC with edge ids, and the bare stable count sort."""
    import scipy.sparse as sp

    from .kernels.cpu import sort

    n = 1 << ctx.scale
    src, dst = ctx.src, ctx.dst
    num_edges = src.size
    rows = []

    # COO -> CSR. SciPy's tocsr also sums duplicates; the check compares with a stable argsort instead.
    ours = lambda: sort.coo_to_compressed(src, dst, None, n)  # noqa: E731
    ones = np.ones(num_edges, dtype=np.float32)
    peer = lambda: sp.coo_array((ones, (src, dst)), shape=(n, n)).tocsr()  # noqa: E731
    indptr, indices, eids = ours()
    order = np.argsort(src, kind="stable")
    check = "equal" if (np.array_equal(eids, order) and np.array_equal(indices, dst[order])
                        and np.array_equal(indptr, np.searchsorted(src[order], np.arange(n + 1)))) else "MISMATCH"
    t_ours, t_peer = time_pair(ours, peer, ctx.repeat)
    rows.append(Row("convert", "coo -> csr (with eids)", t_ours, "scipy coo.tocsr", t_peer, num_edges,
                    "edges/s", check))

    # CSR -> CSC carrying edge ids: the reverse graph. SciPy's tocsc with data = edge ids does the same.
    csr = sp.csr_array((eids, indices, indptr), shape=(n, n))
    ours = lambda: sort.transpose_compressed(indptr, indices, eids, n)  # noqa: E731
    peer = csr.tocsc
    t_indptr, t_indices, t_eids = ours()
    ref = peer()
    check = "equal" if (np.array_equal(t_indptr, ref.indptr) and np.array_equal(t_indices, ref.indices)
                        and np.array_equal(t_eids, ref.data)) else "MISMATCH"
    t_ours, t_peer = time_pair(ours, peer, ctx.repeat)
    rows.append(Row("convert", "csr -> csc (with eids)", t_ours, "scipy csr.tocsc", t_peer, num_edges,
                    "edges/s", check))

    # The stable count sort by itself, against NumPy's stable (radix) argsort.
    ours = lambda: sort.count_sort(dst, n, np.int32 if num_edges < 2**31 else np.int64)  # noqa: E731
    peer = lambda: np.argsort(dst, kind="stable")  # noqa: E731
    _, perm = ours()
    check = "equal" if np.array_equal(perm, peer()) else "MISMATCH"
    t_ours, t_peer = time_pair(ours, peer, ctx.repeat)
    rows.append(Row("convert", "stable count sort (perm)", t_ours, "numpy argsort stable", t_peer, num_edges,
                    "edges/s", check))
    ctx.cache["csr"] = (indptr, indices, eids)
    return rows
