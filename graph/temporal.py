"""Discrete-time dynamic graphs: STGraph-style sliding-window snapshots of a timestamped edge list, and a
:class:`TemporalGraph` that steps through them forward and backward on a :class:`~graphkern.DynamicGraph`.

The snapshots follow STGraph's preprocessing (docs/design.md, section 'Temporal snapshots'): with the edges in
time order, a window of ``base`` consecutive temporal edges moves by ``step`` edges (``int(base *
percent_change / 200)`` when given as a percentage) per time step; snapshot ``t`` is the *set* of edges in
window ``t``. Step ``t`` is the difference: the edges of snapshot ``t`` not in ``t - 1`` are added, those of
``t - 1`` not in ``t`` deleted. An edge occurring several times in a window is one edge; it leaves the
snapshot when its last occurrence leaves the window. All of this is array code (a count per distinct edge).

Examples
--------
>>> import numpy as np
>>> from graphkern.graph import temporal
>>> src, dst = np.array([0, 1, 2, 0, 3]), np.array([1, 2, 3, 1, 0])
>>> d = temporal.sliding_window_diffs(src, dst, base=3, step=1)
>>> d.num_steps, d.initial[0].tolist(), d.initial[1].tolist()
(3, [0, 1, 2], [1, 2, 3])
>>> [(a.tolist(), b.tolist()) for a, b, _, _ in d.steps]  # added edges per step (src, dst)
[([], []), ([3], [0])]
>>> [(a.tolist(), b.tolist()) for _, _, a, b in d.steps]  # deleted edges per step
[([], []), ([1], [2])]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import as_index_array, check_bool, check_ids_in_range, check_int_scalar, check_real_scalar, read_only
from ._edgelist_text import file_path, open_input

__all__ = ["read_temporal_edges", "sliding_window_diffs", "TemporalDiffs", "TemporalGraph"]

# node ids are int64 and not negative
_ID_BOUND = int(np.iinfo(np.int64).max)


def read_temporal_edges(path, *, relabel: bool = True):
    """Read a timestamped edge list: SNAP's ``src dst t`` (whitespace, ``#`` comments) or a CSV whose
    header names source, target and time columns (``soc-sign-bitcoinalpha.csv``: source,target,rating,time).

    Returns ``(src, dst, t, num_nodes)`` sorted by time (stably, so equal times keep file order). With
    ``relabel`` the node ids become ``0 .. num_nodes-1`` in order of first appearance, as STGraph does.

    Examples
    --------
    >>> import io, graphkern as gk
    >>> f = io.StringIO("source,target,rating,time\\n7,1,10,30\\n430,7,2,20\\n")
    >>> src, dst, t, n = gk.graph.temporal.read_temporal_edges(f)
    >>> src.tolist(), dst.tolist(), t.tolist(), n
    ([0, 1], [1, 2], [20, 30], 3)
    """
    relabel = check_bool("relabel", relabel)
    text, name = _temporal_text(path)
    first, _, rest = text.partition("\n")
    if "," in first:
        header = [h.strip().lower() for h in first.split(",")]
        if not header[0].lstrip("-").isdigit():
            cols = {column: i for i, column in enumerate(header)}
            try:
                idx = [cols.get("source", cols.get("src")), cols.get("target", cols.get("dst")), cols["time"]]
            except KeyError as exc:
                raise ValueError(f"argument 'path': line 1 of {name}: a CSV header needs source, target and time "
                                 f"columns, found {header}") from exc
            data = _integer_table(rest, name, 2, ",")
        else:
            idx = [0, 1, 3 if len(header) > 3 else 2]
            data = _integer_table(text, name, 1, ",")
        src, dst, t = data[:, idx[0]], data[:, idx[1]], data[:, idx[2]]
    else:
        data = _integer_table(text, name, 1, None)
        if data.shape[1] < 3:
            raise ValueError(f"argument 'path': expected 'src dst t' per line of {name}, found {data.shape[1]} "
                             f"columns")
        src, dst, t = data[:, 0], data[:, 1], data[:, 2]
    order = np.argsort(t, kind="stable")
    src, dst, t = src[order], dst[order], t[order]
    if relabel:
        ids, first_seen = np.unique(np.stack([src, dst], axis=1).ravel(), return_index=True)
        rank = np.empty(ids.size, np.int64)
        rank[np.argsort(first_seen, kind="stable")] = np.arange(ids.size)
        src = rank[np.searchsorted(ids, src)]
        dst = rank[np.searchsorted(ids, dst)]
        num_nodes = int(ids.size)
    else:
        if src.size and min(int(src.min()), int(dst.min())) < 0:
            raise ValueError("argument 'path': negative node ids; read with relabel=True")
        num_nodes = int(max(src.max(), dst.max())) + 1 if src.size else 0
    return src, dst, t, num_nodes


def _temporal_text(path) -> tuple[str, str]:
    """The text of a temporal edge list (a path or an open file) without a UTF-8 byte-order mark, and how
    messages name it; bytes that are not UTF-8 are refused by line."""
    if hasattr(path, "read"):
        name = repr(getattr(path, "name", "the file object"))
        try:
            data = path.read()
        except UnicodeDecodeError as exc:  # a text handle hides where its bytes lie: no line to name
            raise ValueError(f"argument 'path': {name} is not UTF-8 text ({exc.reason})") from None
        if isinstance(data, str):
            return data.removeprefix("\ufeff"), name
    else:
        name = repr(file_path(path))
        with open_input(path, "rb") as fh:
            data = fh.read()
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8"), name
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"argument 'path': line {line} of {name}: expected UTF-8 text, found byte "
                         f"0x{data[exc.start]:02x} ({exc.reason})") from None


def _integer_table(text: str, name: str, first_line: int, delimiter) -> np.ndarray:
    """The integer fields of ``text`` (lines from number ``first_line`` of file ``name``; ``#`` comments
    unless comma-separated), one row a line; a line NumPy refuses is found again here and named."""
    comments = None if delimiter == "," else "#"
    try:
        return np.loadtxt(text.splitlines(), delimiter=delimiter, dtype=np.int64, comments=comments, ndmin=2)
    except ValueError as exc:
        # NumPy counts rows, not lines, and names no file: walk the lines to the first bad one
        width = None
        for number, line in enumerate(text.splitlines(), start=first_line):
            body = line.split("#", 1)[0] if comments else line
            fields = body.split(delimiter)
            if not body.strip():
                continue
            width = len(fields) if width is None else width
            try:
                [int(f) for f in fields]
                ok = len(fields) == width
            except ValueError:
                ok = False
            if not ok:
                raise ValueError(f"argument 'path': line {number} of {name}: expected {width} integer fields as "
                                 f"on the first data line, found {line[:80]!r}") from None
        raise ValueError(f"argument 'path': {name}: {exc}") from None


@dataclass
class TemporalDiffs:
    """Snapshot 0 as ``initial = (src, dst)`` and, for each later step, ``(add_src, add_dst, del_src,
    del_dst)``; all edges distinct and sorted by ``(src, dst)``."""

    initial: tuple[np.ndarray, np.ndarray]
    steps: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]]

    @property
    def num_steps(self) -> int:
        """Snapshots, the initial one included."""
        return 1 + len(self.steps)


def sliding_window_diffs(src, dst, *, base: int, step: int | None = None, percent_change: float | None = None,
                         num_steps: int | None = None) -> TemporalDiffs:
    """STGraph's sliding-window snapshots of a time-ordered edge list, as differences between steps.

    Parameters
    ----------
    src, dst : array_like of int
        The temporal edges in time order (see :func:`read_temporal_edges`).
    base : int
        Temporal edges per window.
    step, percent_change : int or float
        How far the window moves per time step: ``step`` edges, or STGraph's ``int(base * p / 200)``.
    num_steps : int, optional
        Snapshots to produce (default: as many as fit, the last window ending at the last edge).
    """
    src = as_index_array("src", src, np.int64)
    dst = as_index_array("dst", dst, np.int64)
    if src.size != dst.size:
        raise ValueError(f"arguments 'src' and 'dst': expected equal lengths, found {src.size} and {dst.size}")
    base = check_int_scalar("base", base, low=1, high=max(src.size, 1))
    check_ids_in_range("src", src, _ID_BOUND)
    check_ids_in_range("dst", dst, _ID_BOUND)
    if (step is None) == (percent_change is None):
        raise ValueError("arguments 'step' and 'percent_change': give exactly one of them")
    if step is not None:
        delta = check_int_scalar("step", step, low=1)
    else:
        p = check_real_scalar("percent_change", percent_change, low=0, low_open=True)
        delta = int(base * p / 200)
        if delta < 1:
            raise ValueError(f"argument 'percent_change': the window would not move (int(base * p / 200) = "
                             f"int({base} * {p} / 200) = {delta}); expected p >= {200 / base:g} for base={base}")
    fit = 1 + (src.size - base) // delta
    T = fit if num_steps is None else min(check_int_scalar("num_steps", num_steps, low=1), fit)
    width = max(int(dst.max()) + 1 if dst.size else 1, 1)
    top = int(src.max()) if src.size else 0
    if (top + 1) * width - 1 <= _ID_BOUND:  # Python ints: the check itself cannot overflow
        # one int64 key per edge, src * width + dst: the fast path, exact while the largest key fits
        uniq, ids = np.unique(src * np.int64(width) + dst, return_inverse=True)

        def split(k):
            return k // width, k % width
    else:
        # ids too large to share one int64 key (src * width would wrap and swap source and destination):
        # the distinct (src, dst) rows themselves, in the same (src, dst) order
        uniq, ids = np.unique(np.stack([src, dst], axis=1), axis=0, return_inverse=True)

        def split(k):
            return np.ascontiguousarray(k[:, 0]), np.ascontiguousarray(k[:, 1])
    ids = ids.reshape(-1)
    counts = np.bincount(ids[:base], minlength=uniq.shape[0])

    initial = split(uniq[counts > 0])
    steps = []
    for t in range(1, T):
        leave = ids[(t - 1) * delta:t * delta]
        enter = ids[base + (t - 1) * delta:base + t * delta]
        touched = np.unique(np.concatenate([leave, enter]))
        before = counts[touched] > 0
        np.subtract.at(counts, leave, 1)
        np.add.at(counts, enter, 1)
        after = counts[touched] > 0
        add = split(uniq[touched[after & ~before]])
        dele = split(uniq[touched[before & ~after]])
        steps.append((add[0], add[1], dele[0], dele[1]))
    return TemporalDiffs(initial, steps)


class TemporalGraph:
    """A discrete-time dynamic graph on a :class:`~graphkern.DynamicGraph`: snapshot ``t`` of a
    :class:`TemporalDiffs`, moved one step at a time, forward for the forward pass of a temporal GNN and
    backward for backpropagation through time.

    ``forward()`` applies step ``t + 1`` (its deletions, then its additions); ``backward()`` undoes step
    ``t`` (deletes what it added, re-inserts what it deleted). Both return the new snapshot as a
    :class:`~graphkern.Graph` whose edge ids are the dynamic graph's stable ids: an edge keeps its id
    while it stays in the window, so per-edge state carries over between neighbouring steps. After a
    ``backward()`` the same edge set is back, but a re-inserted edge gets a fresh id (ids of deleted
    edges may have been reused meanwhile).

    Examples
    --------
    >>> import numpy as np, graphkern as gk
    >>> tg = gk.graph.temporal.TemporalGraph(np.array([0, 1, 2, 0]), np.array([1, 2, 0, 2]), 3, base=2, step=1)
    >>> tg.num_steps, tg.time, tg.snapshot().num_edges
    (3, 0, 2)
    >>> tg.forward().edges()[0].tolist(), tg.time    # (2, 0) took the id (0, 1) freed
    ([2, 1], 1)
    >>> tg.backward().num_edges, tg.time
    (2, 0)
    """

    def __init__(self, src, dst, num_nodes: int, *, base: int, step: int | None = None,
                 percent_change: float | None = None, num_steps: int | None = None, backend=None):
        from .dynamic import DynamicGraph

        n = DynamicGraph._check_nodes(num_nodes)
        src = as_index_array("src", src, np.int64)
        dst = as_index_array("dst", dst, np.int64)
        # every id, not only the first window's: a later step must not fail half-way through a batch
        check_ids_in_range("src", src, n)
        check_ids_in_range("dst", dst, n)
        # kept writable and private: forward() and backward() apply these arrays (the ``diffs`` handed
        # out are read-only views of them)
        self._diffs = sliding_window_diffs(src, dst, base=base, step=step, percent_change=percent_change,
                                           num_steps=num_steps)
        self.graph = DynamicGraph(num_nodes, backend=backend)
        self.graph.apply(insert=self._diffs.initial)
        self._t = 0

    @classmethod
    def from_file(cls, path, **kwargs) -> "TemporalGraph":
        """Read ``path`` with :func:`read_temporal_edges` (relabelled) and build the windows."""
        src, dst, _, n = read_temporal_edges(path)
        backend = kwargs.pop("backend", None)
        return cls(src, dst, n, backend=backend, **kwargs)

    @property
    def diffs(self) -> TemporalDiffs:
        """The steps this graph moves through, as read-only views: the graph applies these arrays on
        every :meth:`forward` and :meth:`backward`, so a write into one would change its later steps."""
        d = self._diffs
        return TemporalDiffs(tuple(read_only(a) for a in d.initial),
                             [tuple(read_only(a) for a in step) for step in d.steps])

    @property
    def num_steps(self) -> int:
        return self._diffs.num_steps

    @property
    def time(self) -> int:
        """The current step, ``0 .. num_steps - 1``."""
        return self._t

    def snapshot(self, *, csc: bool = False):
        """The current step's :class:`~graphkern.Graph` (``csc=True``: with its CSC built now)."""
        return self.graph.snapshot(csc=csc)

    def forward(self, *, csc: bool = False):
        """Move to step ``t + 1`` and return its snapshot."""
        if self._t + 1 >= self.num_steps:
            raise IndexError(f"TemporalGraph.forward: already at the last step ({self._t})")
        add_s, add_d, del_s, del_d = self._diffs.steps[self._t]
        self.graph.apply(insert=(add_s, add_d), delete=(del_s, del_d))
        self._t += 1
        return self.snapshot(csc=csc)

    def backward(self, *, csc: bool = False):
        """Move back to step ``t - 1`` and return its snapshot."""
        if self._t == 0:
            raise IndexError("TemporalGraph.backward: already at step 0")
        add_s, add_d, del_s, del_d = self._diffs.steps[self._t - 1]
        self.graph.apply(insert=(del_s, del_d), delete=(add_s, add_d))
        self._t -= 1
        return self.snapshot(csc=csc)

    def seek(self, t: int):
        """Step forward or backward to ``t`` and return its snapshot."""
        t = check_int_scalar("t", t, low=0, high=self.num_steps - 1)
        while self._t < t:
            self.forward()
        while self._t > t:
            self.backward()
        return self.snapshot()
