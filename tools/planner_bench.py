#!/usr/bin/env python3
"""The planner's path against every candidate path, on a grid of graphs, widths and dtypes.

Used by ``tools/compare_peers.py --family planner`` (the ``planner`` family). For each Graph500 Kronecker
scale, feature dtype, id dtype and feature width, each measured op runs every way the planner could run
it, in one rotation (a warm-up each, then the median of ``--repeat`` calls):

- ``planned``: as graphkern plans it on this machine (the calibration ``graphkern compile`` kept, if
  any; ``GRAPHKERN_CALIBRATION=off`` plans by the fixed rules);
- copy_u_sum (g-SpMM): ``csc``, the CSC kernel (the blocked paths refused: ``blocked_min_edges`` past any
  graph); ``blocked``, destination blocks without the hub split, where the rules allow blocks at all;
  ``hubs``, destination blocks with the hub split, where the rules allow it;
- u_dot_v (g-SDDMM): ``csr``, the kernel over the CSR; ``blocked``, destination blocks, where the rules
  allow them.

A cell's check is ``ok`` when the planned path is within 10% of the fastest candidate, else ``SLOW``; the
ratio columns are candidate time / planned time (below 0.91: a candidate was more than 10% faster). The
``GRAPHKERN_TUNING`` variable (``l2_cache_bytes=...``) plans as a machine with other caches would, on this
one.
"""

from __future__ import annotations

import numpy as np

FAMILY = "planner"
_NEVER = (1 << 63) - 1  # an edge count no graph reaches: the blocked paths are never taken


def _copy_u_sum(gk, g, x):
    return gk.spmm(g, "copy_lhs", "sum", x)


def _u_dot_v(gk, g, x):
    return gk.sddmm(g, "dot", x, x, "u", "v")


# per op: the kernel family, the call, its explain arguments and each candidate's knobs and kernel(s)
OPS = {
    "copy_u_sum": dict(
        family="spmm", call=_copy_u_sum, explain=lambda x: dict(op="copy_lhs", reduce="sum", ufeat=x),
        candidates={
            "csc": (dict(blocked_min_edges=_NEVER), ("SPMM_CSC_VECTOR", "SPMM_CSC")),
            "blocked": (dict(blocked_min_edges=0, hub_min_edge_share=1.0), ("SPMM_BLOCKED",)),
            "hubs": (dict(blocked_min_edges=0, hub_min_edge_share=0.0), ("SPMM_BLOCKED_HUBS",)),
        }),
    "u_dot_v": dict(
        family="sddmm", call=_u_dot_v, explain=lambda x: dict(op="dot", lhs=x, rhs=x, lhs_target="u", rhs_target="v"),
        candidates={
            "csr": (dict(blocked_min_edges=_NEVER), ("SDDMM_CSR", "SDDMM_COO")),
            "blocked": (dict(blocked_min_edges=0), ("SDDMM_BLOCKED",)),
        }),
}


def add_arguments(parser) -> None:
    """The ``planner`` family's options, on ``tools/compare_peers.py``'s parser."""
    group = parser.add_argument_group("planner family (the planned g-SpMM and g-SDDMM paths against every candidate)")
    group.add_argument("--planner-scales", type=int, nargs="+", default=[14, 16, 18],
                       help="planner: Kronecker scales")
    group.add_argument("--planner-features", type=int, nargs="+", default=[1, 4, 16, 32, 64, 128, 256],
                       help="planner: feature widths")
    group.add_argument("--planner-dtypes", nargs="+", choices=["float32", "float64"], default=["float32", "float64"])
    group.add_argument("--planner-idtypes", nargs="+", choices=["int32", "int64"], default=["int32", "int64"])
    group.add_argument("--planner-ops", nargs="+", choices=list(OPS), default=list(OPS),
                       help="planner: the ops measured (copy_u_sum: g-SpMM's paths, u_dot_v: g-SDDMM's)")


def run_family(args, result_cls, round_robin) -> list:
    """The ``planner`` family: one ``result_cls`` row per cell, the candidates as its peers
    (``round_robin``: compare_peers.py's, medians of callables called in turn)."""
    import graphkern as gk
    from graphkern.tuning import tuned

    print(f"# planner: {', '.join(args.planner_ops)}, planned path against each candidate (ratio = candidate / "
          f"planned; check ok when the planned path is within 10% of the fastest), Kronecker scales "
          f"{args.planner_scales}")
    results = []
    for scale in args.planner_scales:
        for idtype in args.planner_idtypes:
            g = gk.graph.kronecker(scale, idtype=idtype, progress=False)
            g.csc()
            rng = np.random.default_rng(scale)
            for dtype in args.planner_dtypes:
                for features in args.planner_features:
                    x = rng.random((g.num_src, features)).astype(dtype)
                    for name in args.planner_ops:
                        results.append(_cell(gk, tuned, g, x, name, scale, idtype, args.repeat, result_cls,
                                             round_robin))
    return results


def _cell(gk, tuned, g, x, name, scale, idtype, repeat, result_cls, round_robin):
    """One cell: the planned call and each candidate the rules allow, checked against the planned result,
    timed in one rotation."""
    op = OPS[name]
    call, arguments = op["call"], op["explain"](x)
    want = call(gk, g, x)
    kernels = {"planned": gk.explain(g, op["family"], **arguments).kernel.name}
    funcs = {"planned": lambda: call(gk, g, x)}
    for candidate, (knobs, expected) in op["candidates"].items():
        with tuned(**knobs, use_calibration=0):
            kernel = gk.explain(g, op["family"], **arguments).kernel.name
        if kernel not in expected:
            continue  # the rules allow no such path for this cell (fits the L2, one vector, ...)
        kernels[candidate] = kernel

        def run(knobs=knobs):
            with tuned(**knobs, use_calibration=0):
                return call(gk, g, x)

        np.testing.assert_allclose(run(), want, rtol=1e-4 if x.dtype == np.float32 else 1e-10)
        funcs[candidate] = run
    times = round_robin(funcs, repeat)
    planned = times.pop("planned")
    check = "ok" if planned <= 1.1 * min(times.values()) else "SLOW"
    return result_cls(FAMILY, f"{name} s{scale} {x.dtype} {idtype} -> {kernels['planned']}", x.shape[1], planned,
                      times, check, extra={"kernels": kernels})
