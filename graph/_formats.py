"""The three index formats of a :class:`~graphkern.graph.Graph`: their names and named tuples, the check of
a ``formats`` argument, and how a graph builds one format from another (one stable count sort, on the
device the formats live on) and reads degrees from whichever it has."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..kernels.cpu import sort as host_sort

__all__ = ["COO", "CSR", "CSC", "FORMATS", "normalise_formats", "build_format", "degrees", "sorted_csr"]

FORMATS = ("coo", "csr", "csc")


class COO(NamedTuple):
    """Edge list: slot ``j`` is the edge ``src[j] -> dst[j]`` with id ``eids[j]``."""

    src: np.ndarray
    dst: np.ndarray
    eids: np.ndarray


class CSR(NamedTuple):
    """Compressed rows: the out-edges of row ``r`` are slots ``indptr[r]:indptr[r+1]``."""

    indptr: np.ndarray
    indices: np.ndarray
    eids: np.ndarray


class CSC(NamedTuple):
    """Compressed columns: the in-edges of destination ``v`` are slots ``indptr[v]:indptr[v+1]``."""

    indptr: np.ndarray
    indices: np.ndarray
    eids: np.ndarray


def normalise_formats(formats) -> frozenset:
    """The formats a graph may build: all for None or ``"any"``, else the named ones (checked)."""
    if formats is None or (isinstance(formats, str) and formats == "any"):
        return frozenset(FORMATS)
    if isinstance(formats, str):
        formats = [formats]
    if not isinstance(formats, (list, tuple, set, frozenset)) or not all(isinstance(f, str) for f in formats):
        raise TypeError(f"argument 'formats': expected a format name or a list of them (from {list(FORMATS)}), "
                        f"found {formats!r}")
    chosen = frozenset(formats)
    bad = sorted(f for f in chosen if f not in FORMATS)
    if bad or not chosen:
        raise ValueError(f"argument 'formats': expected a non-empty subset of {list(FORMATS)}, found {list(formats)}")
    return chosen


def build_format(g, name: str) -> None:
    """Add format ``name`` to ``g._formats`` from one it has (``g._identity`` too when its slots stay
    edge ids); ``g`` checked that ``name`` is allowed and missing."""
    f = g._formats
    steps = g._format_steps()
    if name == "coo":
        if "csr" in f:
            indptr, indices, eids = f["csr"]
            rows = steps.expand_indptr(indptr, indices.size, g._idtype)
            f["coo"] = (rows, indices, eids)
            if "csr" in g._identity:
                g._identity.add("coo")
        else:
            indptr, indices, eids = f["csc"]
            cols = steps.expand_indptr(indptr, indices.size, g._idtype)
            f["coo"] = (indices, cols, eids)
            if "csc" in g._identity:
                g._identity.add("coo")
        return
    rows_are_src = name == "csr"
    num_rows = g._num_src if rows_are_src else g._num_dst
    other = "csc" if rows_are_src else "csr"
    if other in f:
        indptr, indices, eids = f[other]
        f[name] = steps.transpose_compressed(indptr, indices, eids, num_rows)
    else:
        src, dst, eids = f["coo"]
        keys, vals = (src, dst) if rows_are_src else (dst, src)
        f[name] = steps.coo_to_compressed(keys, vals, eids, num_rows)


def degrees(g, compressed: str, coo_column: int, count: int) -> np.ndarray:
    """The row lengths of format ``compressed`` of ``g``: from its row pointer, else counted from the COO
    column ``coo_column`` or the other compressed format's indices."""
    steps = g._format_steps()
    if compressed in g._formats:
        return steps.degrees_from_indptr(g._formats[compressed][0], count, g._idtype)
    if "coo" in g._formats:
        return steps.histogram(g._formats["coo"][coo_column], count, g._idtype)
    other = "csc" if compressed == "csr" else "csr"
    return steps.histogram(g._formats[other][1], count, g._idtype)


def sorted_csr(g) -> CSR:
    """See :meth:`Graph.sorted_csr` (``g`` is in host memory)."""
    if "csc" in g._formats or "csc" in g._allowed:
        indptr, indices, eids = g._raw("csc")
    elif "coo" in g._formats:
        src, dst, coo_eids = g._formats["coo"]
        indptr, indices, eids = host_sort.coo_to_compressed(dst, src, coo_eids, g._num_dst)
    else:
        csr_indptr, csr_indices, csr_eids = g._formats["csr"]
        indptr, indices, eids = host_sort.transpose_compressed(csr_indptr, csr_indices, csr_eids, g._num_dst)
    return CSR(*host_sort.transpose_compressed(indptr, indices, eids, g._num_src))
