"""Measure the planner's machine-dependent choices on this machine and keep the outcome
(graphkern._calibration says what is measured, where it is kept and how the planner reads it).

``graphkern compile`` compiles the candidates in a worker (:func:`compile_candidates`), measures them with
:func:`calibrate` while nothing else runs, then compiles the large-graph paths the outcome chose;
``graphkern calibrate`` measures alone.

>>> from graphkern import _calibrate
>>> _calibrate.calibration_scale(512 << 10)
16
"""

from __future__ import annotations

import statistics
import time

from . import _calibration
from ._validate import INT64_MAX


def _median_ms(run, repeats: int) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def calibration_scale(l2_bytes: int) -> int:
    """The Kronecker scale whose 16-feature float32 rows fill eight L2 caches of ``l2_bytes`` (scale 13
    to 18)."""
    nodes = 8 * max(l2_bytes, 1 << 16) // 64
    return min(18, max(13, (nodes - 1).bit_length()))


# the fixed rules decide while measuring; each candidate forced by the knobs that gate it
CANDIDATE_KNOBS = {"blocked": dict(use_calibration=0, blocked_min_edges=0, hub_min_edge_share=0.0),
                   "plain": dict(use_calibration=0, blocked_min_edges=INT64_MAX)}


def _candidates(g):
    """Per decision ``(decision, family, explain arguments, {candidate: callable})``: the call each decision
    is measured with (copy_u_sum or u_dot_v at its width, float32), run under each candidate's knobs."""
    import numpy as np

    from . import tuning
    from .sparse import sddmm, spmm

    rng = np.random.default_rng(0)
    for decision in _calibration.DECISIONS:
        x = rng.random((g.num_src, _calibration.WIDTHS[decision])).astype(np.float32)
        if decision.startswith("spmm"):
            family, call = "spmm", (lambda x=x: spmm(g, "copy_lhs", "sum", x))
            arguments = dict(op="copy_lhs", reduce="sum", ufeat=x)
        else:
            family, call = "sddmm", (lambda x=x: sddmm(g, "dot", x, x, "u", "v"))
            arguments = dict(op="dot", lhs=x, rhs=x, lhs_target="u", rhs_target="v")

        def runner(knobs, call=call):
            def run():
                with tuning.tuned(**knobs):
                    call()
            return run

        yield decision, family, arguments, {name: runner(knobs) for name, knobs in CANDIDATE_KNOBS.items()}


def compile_candidates(scale: int = 10) -> int:
    """Run every candidate :func:`calibrate` times once, on a small Kronecker graph planned as one that
    outgrows the caches, so that their kernels are compiled (``graphkern compile`` does this in a worker
    beside the other families, and then measures with the kernels loaded); returns the calls made."""
    from . import tuning
    from ._config import use_backend
    from .graph import kronecker

    g = kronecker(scale, seed=1, progress=False)
    calls = 0
    with use_backend("cpu"), tuning.tuned(l2_cache_bytes=4096):
        for _, _, _, runs in _candidates(g):
            for run in runs.values():
                run()
                calls += 1
    return calls


def calibrate(repeats: int = 9, scale: int | None = None) -> dict:
    """Time the candidates of every decision on this machine and keep the outcome (graphkern._calibration);
    returns what was kept. ``scale``: the Kronecker graph's (default :func:`calibration_scale` of this
    machine's L2; a smaller one only for tests, whose features may not outgrow the caches).
    """
    from . import _sparse_caches, tuning
    from ._config import use_backend
    from .dispatch import explain
    from .graph import kronecker

    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"argument 'repeats': expected a positive int, found {repeats!r}")
    if _calibration.path() is None:
        raise ValueError(f"{_calibration.ENV_VAR}=off: there is nowhere to keep a calibration")
    if scale is None:
        scale = calibration_scale(_sparse_caches.cache_bytes())
    elif isinstance(scale, bool) or not isinstance(scale, int) or not 1 <= scale <= 30:
        raise ValueError(f"argument 'scale': expected an int from 1 to 30, found {scale!r}")
    g = kronecker(scale, seed=1)
    decisions = {}
    with use_backend("cpu"):
        for decision, family, arguments, runs in _candidates(g):
            kernels = {}
            for name, run in runs.items():
                with tuning.tuned(**CANDIDATE_KNOBS[name]):
                    kernels[name] = explain(g, family, **arguments).kernel.name
                run()  # compile or load, build the blocks: not timed
            if "BLOCKED" not in kernels["blocked"]:
                continue  # the features fit the caches here: no blocked path to measure, the rules decide
            times = {name: [] for name in runs}
            for _ in range(repeats):  # alternating, so a busy moment hits both
                for name, run in runs.items():
                    times[name].append(_median_ms(run, 1))
            decisions[decision] = {"features": _calibration.WIDTHS[decision],
                                   "plain_ms": statistics.median(times["plain"]),
                                   "blocked_ms": statistics.median(times["blocked"]), "kernels": kernels}
    result = {"format": _calibration.FORMAT, "machine": _calibration.machine(),
              "measured": time.strftime("%Y-%m-%d %H:%M:%S"),
              "graph": f"kronecker scale {scale}, {g.num_edges} edges, float32, copy_u_sum and u_dot_v",
              "repeats": repeats, "decisions": decisions}
    _calibration.keep(result)
    return result


def table(result: dict) -> str:
    """A calibration as an aligned text table: per decision, the two times and the path the planner takes."""
    lines = [f"calibration of {result['machine']['cpu']} ({result['graph']}, median of {result['repeats']}), "
             f"measured {result['measured']}",
             f"{'decision':<24}{'features':>9}{'plain ms':>10}{'blocked ms':>12}  planner takes"]
    for name, d in result["decisions"].items():
        takes = d["kernels"]["blocked"] if d["blocked_ms"] <= d["plain_ms"] else d["kernels"]["plain"]
        lines.append(f"{name:<24}{d['features']:>9}{d['plain_ms']:>10.2f}{d['blocked_ms']:>12.2f}  {takes}")
    return "\n".join(lines)
