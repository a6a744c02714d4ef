"""The run-time knobs of graphkern's host code, in one place: :class:`Tuning`, :func:`current`, :func:`tuned`.

A performance choice the drivers make at run time (when a path pays, how big a block is, how many
partitions a thread gets) belongs here as a field of the frozen dataclass :class:`Tuning`, whose default
is the value graphkern ships with; each field says what it trades, the measurement behind its default
and the command that reproduces it. The host code reads ``current().<knob>`` at call time, and passes
what a compiled kernel needs as an argument: Numba freezes a global read inside compiled code when it compiles (and
``cache=True`` keeps it), and a kernel module never reads configuration.

Change knobs for a block with :func:`tuned` (``gk.tuned``), or for a whole process, before graphkern is
imported, with the environment variable ``GRAPHKERN_TUNING`` (``name=value`` entries separated by
commas). A knob is an int or a float; an int given for a float knob is held as a float.

Only the knobs listed in :class:`Tuning` have moved here so far; the other performance constants still
live in their modules (docs/design.md, section 'Tuning knobs', lists them).

Examples
--------
>>> import graphkern as gk
>>> gk.tuning.current().fair_share_refresh_s
0.05
>>> with gk.tuned(fair_share_refresh_s=1):
...     gk.tuning.current().fair_share_refresh_s
1.0
>>> gk.tuning.current().fair_share_refresh_s
0.05
"""

from __future__ import annotations

import dataclasses
import numbers
import os
import threading
import typing
from dataclasses import dataclass

__all__ = ["Tuning", "current", "tuned", "ENV_VAR"]

ENV_VAR = "GRAPHKERN_TUNING"


@dataclass(frozen=True)
class Tuning:
    """The knobs in force (:func:`current`); change them with :func:`tuned` or ``GRAPHKERN_TUNING``.

    Figures quoted below were measured on the machines named with them; rerun the command given to
    measure on yours (docs/performance.md holds the dated results).
    """

    # ------------------------------------------------------------------------------------- incremental BFS
    incremental_fallback_fraction: float = 0.05
    """``IncrementalBFS.update`` runs a fresh search once more than this fraction of the vertices would be
    re-labelled (the default of ``IncrementalBFS(fallback_fraction=...)``, read when one is constructed):
    past it a fresh search is faster. Measured by ``python tools/dynamic_bench.py``, its IncrementalBFS
    rows."""

    incremental_min_limit: int = 256
    """The fresh-search limit of ``IncrementalBFS.update`` is never below this many vertices: a small
    relabelling costs microseconds either way (no measurement is recorded with the choice)."""

    # ------------------------------------------------------------------- dynamic graph (packed storage)
    gpma_merge_ratio: int = 24
    """A ``DynamicGraph`` batch of at least ``capacity / gpma_merge_ratio`` distinct keys is merged with the
    whole packed array into a fresh layout (``kernels/cpu/gpma_merge.py``) instead of inserted in place: in
    place a key costs a search and a leaf merge, the merge a few ns a slot. The two break even near 5 10^5
    keys into 10M edges (16M slots); on a small graph (131K slots, about 4,500 keys a step) a ratio of 32
    sent the steps to the merge and made them slower (apply plus snapshot 1.03-1.05 ms a step against
    0.95-1.01 ms with 24). Measured by ``python tools/dynamic_bench.py --figures apply seed``
    (docs/performance.md, sections 'CPU: dynamic graph' and 'Further figures behind the source's tuning
    choices'). CPU storage only."""

    gpma_merge_chunks: int = 256
    """Chunks of leaves a whole-array merge of a ``DynamicGraph`` batch is cut into: enough for the threads
    to balance, and each chunk costs a search of the batch (no measurement is recorded with the choice;
    ``python tools/dynamic_bench.py --figures apply`` times the merge). CPU storage only."""

    gpma_parallel_sort_min: int = 1 << 18
    """``DynamicGraph`` batches of at least this many edges are split at a sampled pivot and the two sides
    sorted on two threads (NumPy releases the GIL); below it one sort is cheaper than starting the second
    thread. 10^6 keys sort in 5.6-5.7 ms split at a pivot against 8.9 ms as halves sorted on two threads and
    merged (docs/performance.md, 'Further figures behind the source's tuning choices'; ``python
    tools/dynamic_bench.py --figures apply``); the threshold itself was not measured. CPU storage only."""

    gpma_sort_pivot_sample: int = 1024
    """Keys sampled (evenly spaced) to pick the pivot that splits a big ``DynamicGraph`` batch for its two
    sorting threads: more balances the sides better and costs a bigger sort of the sample (no measurement
    is recorded with the choice). CPU storage only."""

    gpma_split_degrees_min: int = 1 << 16
    """``DynamicGraph`` batches of at least this many effective edges update the out- and in-degrees on two
    threads (``kernels/cpu/gpma.py``, ``add_degrees_split``); below it a parallel region costs more than it
    saves (no measurement is recorded with the choice). CPU storage only."""

    gpma_tombstone_fraction: float = 0.25
    """A ``DynamicGraph`` batch drops the tombstones (deleted edges still holding a slot) once they pass
    this fraction of the live edges (at least 64): fewer compactions against more dead slots for readers
    and searches to skip (no measurement is recorded with the choice)."""

    gpma_batch_bytes_per_edge: int = 96
    """Working memory a ``DynamicGraph`` batch is taken to need per edge (keys, ids, leaves, slots and masks
    of 8 bytes, with sort buffers): a batch whose need passes the free memory of its device is refused
    before anything changes, rather than failing halfway. An estimate from the arrays a batch allocates,
    not a timing."""

    gpma_small_window: int = 512
    """On the GPU, ``DynamicGraph`` windows of at most this many slots are merged by blocks of one warp
    (most of a block of ``launch.BLOCK`` threads would idle on a leaf or two), wider ones by blocks of
    ``launch.BLOCK`` threads. Not tuned yet: ``python3 tools/gpu_check.py``, rows "gpma ...", measures
    it. CUDA storage only."""

    gpma_wide_window: int = 4096
    """On the GPU, ``DynamicGraph`` windows wider than this many slots are merged by grid-wide kernels
    (every thread of the GPU on the few wide windows a level has, a hub's inserts say) rather than by a
    block each. Not tuned yet: ``python3 tools/gpu_check.py``, rows "gpma ...", measures it. CUDA storage
    only."""

    # ----------------------------------------------------------------------------------------- threads
    fair_share_refresh_s: float = 0.05
    """Seconds a count of other runnable threads is reused by the fair-share rule: reading it costs tens
    of microseconds a thread of this process, and a busy neighbour stays busy for far longer than this
    (docs/design.md, section 'Threads on a shared machine'; ``graphkern bench --contention``)."""


_FIELDS = {f.name: f for f in dataclasses.fields(Tuning)}
_TYPES = typing.get_type_hints(Tuning)
_lock = threading.Lock()


def _names() -> str:
    return ", ".join(sorted(_FIELDS))


def _type_name(tp) -> str:
    return tp.__name__


def _checked(name: str, value):
    """``value`` as knob ``name`` holds it (an int for a float knob becomes a float), or ValueError."""
    tp = _TYPES[name]
    ok = False
    if tp is int:
        ok = isinstance(value, numbers.Integral) and not isinstance(value, bool)
        value = int(value) if ok else value
    elif tp is float:
        ok = isinstance(value, numbers.Real) and not isinstance(value, bool)
        value = float(value) if ok else value
    if not ok:
        raise ValueError(f"knob {name!r}: expected {_type_name(_TYPES[name])}, found {value!r} "
                         f"({type(value).__name__})")
    return value


def _changes(changes: dict) -> dict:
    unknown = [name for name in changes if name not in _FIELDS]
    if unknown:
        raise TypeError(f"unknown knob {unknown[0]!r}; the knobs are: {_names()}")
    return {name: _checked(name, value) for name, value in changes.items()}


def _parse(name: str, text: str):
    """The value of knob ``name`` written as ``text`` in ``GRAPHKERN_TUNING``."""
    tp = _TYPES[name]
    if tp is int:
        return int(text, 0)
    if tp is float:
        return float(text)
    raise ValueError(text)  # pragma: no cover - a knob of another type needs its parser here


def from_environment(text: str | None) -> Tuning:
    """The knobs that ``GRAPHKERN_TUNING`` (its value ``text``) asks for: ``name=value`` entries separated by
    commas over the defaults; a bad entry raises ValueError naming the variable, the entry and the knobs.

    Examples
    --------
    >>> from graphkern.tuning import from_environment
    >>> from_environment("fair_share_refresh_s=0.5").fair_share_refresh_s
    0.5
    >>> from_environment("").fair_share_refresh_s
    0.05
    """
    changes = {}
    for entry in (text or "").split(","):
        if not entry.strip():
            continue
        name, sep, value = (part.strip() for part in entry.partition("="))
        if not sep or name not in _FIELDS:
            why = "expected name=value" if not sep else f"unknown knob {name!r}"
            raise ValueError(f"{ENV_VAR}: bad entry {entry.strip()!r} ({why}); the knobs are: {_names()}")
        try:
            changes[name] = _checked(name, _parse(name, value))
        except ValueError:
            raise ValueError(f"{ENV_VAR}: bad entry {entry.strip()!r} (knob {name!r} takes "
                             f"{_type_name(_TYPES[name])}); the knobs are: {_names()}") from None
    return dataclasses.replace(Tuning(), **changes)


_current = from_environment(os.environ.get(ENV_VAR))


def current() -> Tuning:
    """The knobs in force now: the defaults, changed by ``GRAPHKERN_TUNING`` at import and by the
    :func:`tuned` blocks that are open.

    Examples
    --------
    >>> import graphkern as gk
    >>> gk.tuning.current().fair_share_refresh_s
    0.05
    """
    return _current


class tuned:
    """Change knobs for a ``with`` block: ``with gk.tuned(fair_share_refresh_s=0): ...``.

    The knobs are process-wide: the block swaps the module's value and restores it on exit, so every
    thread sees the change while the block is open, and two threads that open blocks at the same time
    restore each other's values in the order they leave. Blocks nest. An unknown knob raises TypeError
    (naming it and the knobs); a value of the wrong type raises ValueError.

    Examples
    --------
    >>> import graphkern as gk
    >>> with gk.tuned(fair_share_refresh_s=0) as knobs:
    ...     knobs.fair_share_refresh_s
    0.0
    >>> gk.tuned(no_such_knob=1)
    Traceback (most recent call last):
    ...
    TypeError: unknown knob 'no_such_knob'; the knobs are: ...
    """

    def __init__(self, **changes):
        self._changes = _changes(changes)
        self._saved: list[Tuning] = []

    def __enter__(self) -> Tuning:
        global _current
        with _lock:
            self._saved.append(_current)
            _current = dataclasses.replace(_current, **self._changes)
            return _current

    def __exit__(self, *exc) -> None:
        global _current
        with _lock:
            _current = self._saved.pop()
