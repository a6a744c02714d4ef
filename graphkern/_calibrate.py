"""Measure the planner's machine-dependent choices on this machine and keep the outcome
(graphkern._calibration says what is measured, where it is kept and how the planner reads it).

``graphkern compile`` runs :func:`calibrate` after compiling, ``graphkern calibrate`` alone.

>>> from graphkern import _calibrate
>>> _calibrate.calibration_scale(512 << 10)
16
"""

from __future__ import annotations

import statistics
import time

from . import _calibration


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


def calibrate(repeats: int = 9, scale: int | None = None) -> dict:
    """Time the candidates of every decision on this machine and keep the outcome (graphkern._calibration);
    returns what was kept. ``scale``: the Kronecker graph's (default :func:`calibration_scale` of this
    machine's L2; a smaller one only for tests, whose features may not outgrow the caches).
    """
    import numpy as np

    from . import _sparse_caches, tuning
    from ._config import use_backend
    from ._validate import INT64_MAX
    from .dispatch import explain
    from .graph import kronecker
    from .sparse import sddmm, spmm

    if isinstance(repeats, bool) or not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"argument 'repeats': expected a positive int, found {repeats!r}")
    if _calibration.path() is None:
        raise ValueError(f"{_calibration.ENV_VAR}=off: there is nowhere to keep a calibration")
    if scale is None:
        scale = calibration_scale(_sparse_caches.cache_bytes())
    elif isinstance(scale, bool) or not isinstance(scale, int) or not 1 <= scale <= 30:
        raise ValueError(f"argument 'scale': expected an int from 1 to 30, found {scale!r}")
    g = kronecker(scale, seed=1)
    rng = np.random.default_rng(0)
    decisions = {}
    # the fixed rules decide while measuring; each candidate forced by the knobs that gate it
    candidates = {"blocked": dict(use_calibration=0, blocked_min_edges=0, hub_min_edge_share=0.0),
                  "plain": dict(use_calibration=0, blocked_min_edges=INT64_MAX)}
    with use_backend("cpu"):
        for decision in _calibration.DECISIONS:
            x = rng.random((g.num_src, _calibration.WIDTHS[decision])).astype(np.float32)
            if decision.startswith("spmm"):
                family, call = "spmm", (lambda x=x: spmm(g, "copy_lhs", "sum", x))
                arguments = dict(op="copy_lhs", reduce="sum", ufeat=x)
            else:
                family, call = "sddmm", (lambda x=x: sddmm(g, "dot", x, x, "u", "v"))
                arguments = dict(op="dot", lhs=x, rhs=x, lhs_target="u", rhs_target="v")
            runs, kernels = {}, {}
            for name, knobs in candidates.items():
                def run(knobs=knobs, call=call):
                    with tuning.tuned(**knobs):
                        call()
                with tuning.tuned(**knobs):
                    kernels[name] = explain(g, family, **arguments).kernel.name
                run()  # compile or load, build the blocks: not timed
                runs[name] = run
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
