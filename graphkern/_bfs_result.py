"""The result of a breadth-first search, shared by the cpu and cuda drivers and the batched searches."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ._cuda import to_host

__all__ = ["BFSResult"]


@dataclass
class BFSResult:
    """The result of one search. ``parents[source] == source``; -1 marks unreached vertices."""

    parents: np.ndarray
    levels: np.ndarray
    source: int
    algorithm: str
    # the levels as run: (level, step, ...) tuples, and runs of serial levels kept as arrays until read
    _steps: list = field(default_factory=list, repr=False)

    @property
    def trace(self) -> list:
        """One ``(level, step, frontier size before the step, vertices found, seconds)`` tuple per level.
        Levels run back to back on one thread (``step == "top_down_serial"``) share their run's time
        evenly."""
        if any(isinstance(s, _SerialLevels) for s in self._steps):
            expanded = []
            for s in self._steps:
                if isinstance(s, _SerialLevels):
                    expanded += s.tuples()
                else:
                    expanded.append(s)
            self._steps = expanded
        return self._steps

    @property
    def num_reached(self) -> int:
        return int(np.count_nonzero(to_host(self.parents) >= 0))

    @property
    def depth(self) -> int:
        return int(to_host(self.levels).max()) if self.levels.size else 0


@dataclass(frozen=True)
class _SerialLevels:
    """Consecutive levels one call of :func:`top_down_serial_levels` ran: the first level's number, its
    frontier size, the vertices each level found and the seconds of the whole run. Kept as an array so a
    search of 10^5 levels does not build 10^5 tuples unless its trace is read."""

    first_level: int
    first_frontier: int
    found: np.ndarray
    seconds: float

    def tuples(self) -> list:
        found = self.found.tolist()
        each = self.seconds / max(len(found), 1)
        before = [self.first_frontier] + found[:-1]
        return [(self.first_level + i, "top_down_serial", before[i], found[i], each) for i in range(len(found))]
