#!/usr/bin/env python3
"""The planner's g-SpMM path against every candidate path, on a grid of graphs, widths and dtypes.

Used by ``tools/compare_peers.py --family planner`` (the ``planner`` family). For each Graph500 Kronecker
scale, feature dtype, id dtype and feature width, copy_u_sum runs four ways in one rotation (a warm-up
each, then the median of ``--repeat`` calls):

- ``planned``: as ``gk.spmm`` plans it on this machine (the calibration ``graphkern compile`` kept, if
  any; ``GRAPHKERN_CALIBRATION=off`` plans by the fixed rules);
- ``csc``: the CSC kernel (the blocked paths refused: ``blocked_min_edges`` past any graph);
- ``blocked``: destination blocks without the hub split, where the rules allow blocks at all;
- ``hubs``: destination blocks with the hub split, where the rules allow it.

A cell's check is ``ok`` when the planned path is within 10% of the fastest candidate, else ``SLOW``; the
ratio columns are candidate time / planned time (below 0.91: a candidate was more than 10% faster). The
``GRAPHKERN_TUNING`` variable (``l2_cache_bytes=...``) plans as a machine with other caches would, on this
one.
"""

from __future__ import annotations

import numpy as np

FAMILY = "planner"
EXPECTED = {"csc": "SPMM_CSC_VECTOR", "blocked": "SPMM_BLOCKED", "hubs": "SPMM_BLOCKED_HUBS"}
CANDIDATES = {
    "csc": dict(blocked_min_edges=(1 << 63) - 1),
    "blocked": dict(blocked_min_edges=0, hub_min_edge_share=1.0),
    "hubs": dict(blocked_min_edges=0, hub_min_edge_share=0.0),
}


def add_arguments(parser) -> None:
    """The ``planner`` family's options, on ``tools/compare_peers.py``'s parser."""
    group = parser.add_argument_group("planner family (the planned g-SpMM path against every candidate)")
    group.add_argument("--planner-scales", type=int, nargs="+", default=[14, 16, 18],
                       help="planner: Kronecker scales")
    group.add_argument("--planner-features", type=int, nargs="+", default=[1, 4, 16, 32, 64, 128, 256],
                       help="planner: feature widths")
    group.add_argument("--planner-dtypes", nargs="+", choices=["float32", "float64"], default=["float32", "float64"])
    group.add_argument("--planner-idtypes", nargs="+", choices=["int32", "int64"], default=["int32", "int64"])


def run_family(args, result_cls, round_robin) -> list:
    """The ``planner`` family: one ``result_cls`` row per cell, the candidates as its peers
    (``round_robin``: compare_peers.py's, medians of callables called in turn)."""
    import graphkern as gk
    from graphkern.tuning import tuned

    print(f"# planner: copy_u_sum, planned path against each candidate (ratio = candidate / planned; check ok when "
          f"the planned path is within 10% of the fastest), Kronecker scales {args.planner_scales}")
    results = []
    for scale in args.planner_scales:
        for idtype in args.planner_idtypes:
            g = gk.graph.kronecker(scale, idtype=idtype, progress=False)
            g.csc()
            rng = np.random.default_rng(scale)
            for dtype in args.planner_dtypes:
                for features in args.planner_features:
                    x = rng.random((g.num_src, features)).astype(dtype)
                    want = gk.spmm(g, "copy_lhs", "sum", x)
                    kernels = {"planned": gk.explain(g, "spmm", "copy_lhs", "sum", x).kernel.name}
                    funcs = {"planned": lambda: gk.spmm(g, "copy_lhs", "sum", x)}
                    for name, knobs in CANDIDATES.items():
                        with tuned(**knobs, use_calibration=0):
                            kernel = gk.explain(g, "spmm", "copy_lhs", "sum", x).kernel.name
                        if kernel != EXPECTED[name] and not (name == "csc" and kernel == "SPMM_CSC"):
                            continue  # the rules allow no such path for this cell (fits the L2, one vector, ...)
                        kernels[name] = kernel

                        def run(knobs=knobs):
                            with tuned(**knobs, use_calibration=0):
                                return gk.spmm(g, "copy_lhs", "sum", x)

                        np.testing.assert_allclose(run(), want, rtol=1e-4 if dtype == "float32" else 1e-10)
                        funcs[name] = run
                    times = round_robin(funcs, args.repeat)
                    planned = times.pop("planned")
                    check = "ok" if planned <= 1.1 * min(times.values()) else "SLOW"
                    results.append(result_cls(FAMILY, f"copy_u_sum s{scale} {dtype} {idtype} -> {kernels['planned']}",
                                              features, planned, times, check, extra={"kernels": kernels}))
    return results
