"""Collective validation: every rank checks its own arguments, then one allgather decides for all ranks.

A distributed call that raised on one rank only would leave the other ranks waiting in its next
collective (a hang), or send them mismatched buffers (an MPI abort). So every public entry point of
graphkern.distributed validates in two steps before its first data collective:

1. each rank checks its local arguments in Python and catches what it finds (:func:`local_check`);
2. :func:`agree` allgathers one small tuple per rank: the rank's problem (or None), a short key for each
   argument that must be identical on every rank (sizes, shapes, dtypes, partitions, grid shape, BFS
   source), and an optional small piece of information the call needs anyway (a local count). From the
   same gathered list every rank draws the same conclusion: all raise the same
   :class:`~graphkern.errors.DistributedError`, or all proceed.

The cost is one allgather of O(1)-sized tuples per call (O(P) bytes received per rank): arrays longer
than :data:`SHOWN` entries travel as a digest, not as values.
"""

from __future__ import annotations

import hashlib
import numbers
from collections import Counter

import numpy as np

from .._validate import as_index_array, check_int_scalar, to_host_array, type_name
from ..errors import DistributedError

__all__ = [
    "agree",
    "local_check",
    "key",
    "check_offsets",
    "check_counts",
    "check_shape",
    "check_values",
    "check_vertex",
    "check_grid_shape",
    "SHOWN",
]

# Arrays up to this many entries are compared (and shown in messages) by value; longer ones by digest.
SHOWN = 32
# A rank's message is cut to this many characters so that the allgather stays small whatever the error.
_MESSAGE_LIMIT = 500
# At most this many failing ranks are listed in a message (all of them are in ``DistributedError.ranks``).
_RANKS_LISTED = 8


def key(value):
    """A small picklable stand-in for ``value`` that compares equal across ranks exactly when the values
    do: short arrays as lists, long ones as ``<size dtype, digest>``, dtypes by their description."""
    if isinstance(value, np.ndarray):
        if value.size <= SHOWN:
            return value.tolist()
        digest = hashlib.blake2b(np.ascontiguousarray(value).tobytes(), digest_size=8).hexdigest()
        return f"<{value.size} values of {value.dtype}, digest {digest}>"
    if isinstance(value, np.dtype):
        return value.descr if value.names else value.str
    if isinstance(value, np.generic):
        return value.item()
    return value


def local_check(check, *args, **kwargs):
    """Run this rank's validation ``check(*args, **kwargs)``: ``(its result, None)`` when it passes,
    ``(None, message)`` when it raises. The exception is caught, not raised: it is reported to every rank
    by :func:`agree`, so that no rank leaves the collective call alone."""
    try:
        return check(*args, **kwargs), None
    except Exception as exc:  # any failure here, expected or not, must reach the other ranks
        return None, (str(exc) or type(exc).__name__)[:_MESSAGE_LIMIT]


def _disagreement(same: list) -> dict[int, str]:
    """The ranks whose value of the first argument that differs between ranks is not the most common one
    (ties go to the value of the lowest rank), each with its message; empty when all agree."""
    names: list[str] = []
    for entry in same:
        for name in entry or {}:
            if name not in names:
                names.append(name)
    for name in names:
        values = [(entry or {}).get(name, "<not given>") for entry in same]
        if all(v == values[0] for v in values):
            continue
        # the most common value is taken as the intended one; a list is not hashable, so count its repr
        counts = Counter(repr(v) for v in values)
        best = max(counts.values())
        ref_rank = next(r for r, v in enumerate(values) if counts[repr(v)] == best)
        ref = values[ref_rank]
        return {
            r: f"{name}: expected the same on every rank, found {v!r} on rank {r} and {ref!r} on rank {ref_rank}"
            for r, v in enumerate(values)
            if v != ref
        }
    return {}


def _error(where: str, failed: dict[int, str]) -> DistributedError:
    ranks = sorted(failed)
    first = ranks[0]
    if len(ranks) == 1:
        head = f"rank {first}"
    else:
        listed = ", ".join(str(r) for r in ranks[:_RANKS_LISTED])
        more = f" and {len(ranks) - _RANKS_LISTED} more" if len(ranks) > _RANKS_LISTED else ""
        head = f"ranks {listed}{more} failed; rank {first}"
    return DistributedError(
        f"{where}: {head}: {failed[first]}", ranks=ranks, first_message=failed[first], problems=failed
    )


def agree(comm, where: str, problem: str | None, same: dict | None = None, info=None, combine=None) -> list:
    """Collective, one allgather: raise the same :class:`DistributedError` on every rank when any rank has a
    ``problem`` or the ranks disagree on ``same``; otherwise return every rank's ``info`` (rank order).

    Parameters
    ----------
    comm : communicator
        Every rank of it must call.
    where : str
        The function's name, the start of the message.
    problem : str or None
        What this rank's own check found (see :func:`local_check`).
    same : dict, optional
        ``{description: value}`` for the arguments that must be equal on every rank; values go through
        :func:`key`. Ignored on a rank with a problem (its values may be meaningless).
    info : optional
        A small picklable value the caller needs from every rank (it saves a collective of its own).
    combine : callable, optional
        ``combine(infos)``, run on every rank with the same list once every rank passed: returns None or
        ``(ranks, message)`` for a condition that only the ranks together can check (row counts adding up).
    """
    mine = None if problem else {name: key(v) for name, v in (same or {}).items()}
    entries = comm.allgather((problem, mine, info if not problem else None))
    failed = {r: p for r, (p, _, _) in enumerate(entries) if p}
    if not failed:
        failed = _disagreement([s for _, s, _ in entries])
    infos = [i for _, _, i in entries]
    if not failed and combine is not None:
        found = combine(infos)
        if found is not None:
            ranks, message = found
            failed = {int(r): message for r in ranks}
    if failed:
        raise _error(where, failed)
    return infos


# --------------------------------------------------------------------------- local checks (raise)


def check_shape(name: str, shape) -> tuple[int, int]:
    """A pair of integers >= 0."""
    if not isinstance(shape, (tuple, list)) or len(shape) != 2:
        raise ValueError(f"argument '{name}': expected a pair (rows, columns), found {shape!r}")
    return (check_int_scalar(f"{name}[0]", shape[0], 0), check_int_scalar(f"{name}[1]", shape[1], 0))


def _int_array(name: str, values) -> np.ndarray:
    if values is None:
        raise TypeError(f"argument '{name}': expected an integer array, found None")
    return as_index_array(name, values, np.int64)


def check_offsets(name: str, offsets, parts: int, total: int | None) -> np.ndarray:
    """``parts + 1`` non-decreasing integer offsets from 0 to ``total`` (a contiguous partition), as int64;
    ``total=None`` leaves the last offset to a later check."""
    arr = _int_array(name, offsets)
    if arr.size != parts + 1:
        raise ValueError(f"argument '{name}': expected {parts + 1} offsets ({parts} blocks + 1), found {arr.size}")
    if int(arr[0]) != 0 or (total is not None and int(arr[-1]) != total):
        raise ValueError(
            f"argument '{name}': expected offsets from 0 to {'n' if total is None else total}, found "
            f"{int(arr[0])} to {int(arr[-1])}"
        )
    steps = np.diff(arr)
    if steps.size and int(steps.min()) < 0:
        pos = int(np.argmax(steps < 0))
        raise ValueError(
            f"argument '{name}': expected non-decreasing offsets, found {int(arr[pos])} before "
            f"{int(arr[pos + 1])} at position {pos}"
        )
    return arr


def check_counts(name: str, counts, parts: int, total: int) -> np.ndarray:
    """``parts`` integer counts >= 0 adding up to ``total``; returns their ``parts + 1`` offsets."""
    arr = _int_array(name, counts)
    if arr.size != parts:
        raise ValueError(f"argument '{name}': expected {parts} counts (one per rank), found {arr.size}")
    if arr.size and int(arr.min()) < 0:
        pos = int(np.argmax(arr < 0))
        raise ValueError(f"argument '{name}': expected counts >= 0, found {int(arr[pos])} at position {pos}")
    # each count <= total keeps the sum far from int64 overflow
    if (arr.size and int(arr.max()) > total) or int(arr.sum()) != total:
        raise ValueError(
            f"argument '{name}': expected counts adding up to {total} rows, found "
            f"{arr.tolist() if arr.size <= SHOWN else int(arr.sum())}"
        )
    out = np.zeros(parts + 1, dtype=np.int64)
    np.cumsum(arr, out=out[1:])
    return out


def check_values(name: str, values, size: int) -> np.ndarray | None:
    """None, or a 1-D array of ``size`` values of a fixed-size dtype (numbers or records, not objects)."""
    if values is None:
        return None
    arr = to_host_array(name, values)
    if arr.ndim != 1:
        raise ValueError(
            f"argument '{name}': expected a 1-D array (one value per entry; records for several "
            f"fields), found shape {arr.shape}"
        )
    if arr.dtype.hasobject or arr.dtype.itemsize == 0:
        raise TypeError(f"argument '{name}': expected a fixed-size dtype that travels as bytes, found {arr.dtype}")
    if arr.shape[0] != size:
        raise ValueError(f"argument '{name}': expected {size} values (one per entry), found {arr.shape[0]}")
    return arr


def check_vertex(name: str, value, n: int) -> int:
    """An integer vertex id in ``[0, n)`` (Python or NumPy integer, not bool)."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise TypeError(f"argument '{name}': expected an integer vertex id, found {type_name(value)} {value!r}")
    if not 0 <= int(value) < n:
        raise ValueError(f"argument '{name}': expected a vertex id in [0, {n}), found {int(value)}")
    return int(value)


def check_grid_shape(name: str, grid, size: int) -> tuple[int, int]:
    """A pair ``(pr, pc)`` of integers >= 1 with ``pr * pc == size``."""
    if not isinstance(grid, (tuple, list)) or len(grid) != 2:
        raise ValueError(f"argument '{name}': expected a pair (pr, pc), found {grid!r}")
    pr = check_int_scalar(f"{name}[0]", grid[0], 1)
    pc = check_int_scalar(f"{name}[1]", grid[1], 1)
    if pr * pc != size:
        raise ValueError(f"argument '{name}': expected pr * pc == {size} ranks, found {pr} x {pc}")
    return pr, pc
