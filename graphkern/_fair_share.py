"""Fewer threads for chains of short parallel regions while other processes hold the cores.

A breadth-first search, an edge softmax or a dynamic-graph batch is a chain of parallel regions of a
millisecond or less. Each region ends when its slowest thread arrives. When more threads are runnable than
there are cores, the scheduler sets one of ours aside for a whole time slice, several milliseconds, and
every region it belongs to waits for it: a search slows far more than the share of the machine it lost.
With as many threads as the cores other processes leave free, no region waits for a thread that is not
running. Long regions (g-SpMM, g-SDDMM) keep every thread: there a thread set aside only slows its own
share of the work.

The rule (Linux; elsewhere the thread count is left alone): ``others`` is the kernel's count of runnable
threads (``/proc/loadavg``) less this process's own running threads (``/proc/self/task``). A call that
would use ``threads`` threads uses ``max(1, cores - others)`` of them when ``others + threads > cores``.
The count is refreshed at most every ``fair_share_refresh_s`` seconds (a knob of graphkern.tuning); a
count above 0 is read twice and the smaller kept. ``GRAPHKERN_FAIR_SHARE=0`` turns the rule off.
``graphkern bench --contention`` measures what it changes.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import time
from collections.abc import Iterator

from . import tuning

ENV_VAR = "GRAPHKERN_FAIR_SHARE"

_enabled = os.environ.get(ENV_VAR, "1").strip() != "0" and sys.platform.startswith("linux")
_lock = threading.Lock()
_cached = (-1.0, 0)  # (time.monotonic() of the count, the count)


def threads_beside(others: int, threads: int, cores: int) -> int:
    """How many of ``threads`` threads to use while ``others`` threads of other processes are runnable on
    ``cores`` cores: all of them when they fit, else the cores left free, at least one.

    Examples
    --------
    >>> threads_beside(0, 2, 2), threads_beside(1, 2, 2), threads_beside(5, 8, 8), threads_beside(9, 4, 2)
    (2, 1, 3, 1)
    """
    if others + threads <= cores:
        return threads
    return max(1, min(threads, cores - others))


def _running_threads_of_this_process() -> int:
    running = 0
    try:
        tids = os.listdir("/proc/self/task")
    except OSError:
        return 1
    for tid in tids:
        try:
            with open(f"/proc/self/task/{tid}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # the thread ended meanwhile
            continue
        state = stat[stat.rfind(b")") + 2:stat.rfind(b")") + 3]  # the name may hold spaces and parentheses
        running += state == b"R"
    return max(1, running)  # the thread reading is running


def _reading() -> int:
    """The run queue's runnable threads less this process's running ones."""
    try:
        with open("/proc/loadavg", "rb") as f:
            runnable = int(f.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        runnable = 1
    return 0 if runnable <= 1 else max(0, runnable - _running_threads_of_this_process())


def other_runnable_threads() -> int:
    """Runnable threads of other processes now (0 where the kernel does not say, or when the rule is off)."""
    global _cached
    if not _enabled:
        return 0
    now = time.monotonic()
    stamp, count = _cached
    if now - stamp < tuning.current().fair_share_refresh_s:
        return count
    with _lock:
        count = _reading()
        if count:
            # The two counts of a reading are not taken at one instant: this process's own threads (torch's,
            # BLAS's) that wake or sleep between them read as another process's. A neighbour that holds a
            # core is there in a second reading too; a thread of ours miscounted once seldom is.
            count = min(count, _reading())
        _cached = (now, count)
    return count


@contextlib.contextmanager
def fair_share() -> Iterator[int]:
    """Run the block with the Numba thread count :func:`threads_beside` allows now; yields that count.

    The count is per calling thread (``numba.set_num_threads``) and is restored on exit.
    """
    import numba

    threads = numba.get_num_threads()
    cores = os.cpu_count() or 1
    use = threads if threads <= 1 else threads_beside(other_runnable_threads(), threads, cores)
    if use == threads:
        yield threads
        return
    numba.set_num_threads(use)
    try:
        yield use
    finally:
        numba.set_num_threads(threads)
