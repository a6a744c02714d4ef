"""A plan is data, and ``gk.explain`` predicts exactly what a call runs.

For every kernel path the CPU reaches, ``gk.explain(g, family, **the call's arguments)`` is compared with the
plan the call itself logs (``record.plan`` of its DEBUG record on the 'graphkern' logger), and the formats the
call creates with the plan's ``builds``; explaining builds nothing and caches nothing. Every :class:`Kernel`
member names functions that import.
"""

import logging

import numpy as np
import pytest

import graphkern as gk
from graphkern.dispatch import BuildStep, Kernel, Plan

# the CPU kernel paths of the kernel families; the conversions are checked by test_convert_plans
CONVERSIONS = {Kernel.COO_TO_COMPRESSED, Kernel.TRANSPOSE_COMPRESSED, Kernel.EXPAND_INDPTR}
CALLS = {"spmm": gk.spmm, "sddmm": gk.sddmm, "edge_softmax": gk.edge_softmax, "bfs": gk.bfs}


@pytest.fixture
def blocked_on_small_graphs():
    """The cost model's blocked paths on small graphs: any size qualifies, an 'L2 cache' of 1 KB (blocks
    of a few rows; hubs' rows fit 256 bytes) and the hub split whatever share of the edges the hubs carry."""
    with gk.tuned(blocked_min_edges=0, l2_cache_bytes=1024, hub_min_edge_share=0.0):
        yield


def random_coo(n=300, m=3000, seed=0):
    """A graph from an unsorted COO (edge ids follow the COO; no compressed format created)."""
    rng = np.random.default_rng(seed)
    return gk.Graph.from_coo(rng.integers(0, n, m), rng.integers(0, n, m), num_nodes=n)


def sorted_coo(n=300, m=3000, seed=0):
    """A COO listing each destination's sources in ascending order: the CSC built from it has sorted rows."""
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    order = np.lexsort((dst, src))
    return gk.Graph.from_coo(src[order], dst[order], num_nodes=n)


def dynamic(n=300, m=3000, seed=0):
    rng = np.random.default_rng(seed)
    dg = gk.DynamicGraph(n)
    dg.apply(insert=(rng.integers(0, n, m), rng.integers(0, n, m)))
    return dg


def features(rows, *shape, seed=1):
    return np.random.default_rng(seed).random((rows,) + shape).astype(np.float32)


def state(g):
    """What explaining must leave alone: the created formats, the graph's caches, a snapshot."""
    if isinstance(g, gk.DynamicGraph):
        return ("dynamic", g.cached_snapshot() is not None)
    return (tuple(f for f in ("coo", "csr", "csc") if g.has_format(f)), tuple(g._cache))


def executed_plans(caplog, call):
    """The plans a call logged, with its result."""
    caplog.clear()
    with caplog.at_level(logging.DEBUG, logger="graphkern"):
        result = call()
    return [r.plan for r in caplog.records if hasattr(r, "plan")], result


# (kernel, graph, family, the call's arguments but the graph); the graph and the arrays are made per test
def cases():
    n = 300
    x8, x32 = features(n, 8), features(n, 32)
    w1, wh = features(3000, 1), features(3000, 1, 4, 1)
    return [
        (Kernel.SPMM_CSC_VECTOR, random_coo, "spmm", dict(op="mul", reduce="sum", ufeat=x8, efeat=w1)),
        (Kernel.SPMM_CSC, random_coo, "spmm", dict(op="mul", reduce="max", ufeat=features(n, 2, 1, 3), efeat=wh,
                                                   return_arg=True)),
        (Kernel.SPMM_COO, random_coo, "spmm", dict(op="copy_lhs", reduce="mean", ufeat=x8, format="coo")),
        (Kernel.SPMM_COO, lambda: random_coo().formats(["coo", "csr"]), "spmm",
         dict(op="copy_lhs", reduce="sum", ufeat=x8)),
        (Kernel.SPMM_BLOCKED, random_coo, "spmm", dict(op="copy_lhs", reduce="min", ufeat=x8, format="csr")),
        (Kernel.SPMM_BLOCKED, lambda: gk.graph.kronecker(8), "spmm", dict(op="copy_lhs", reduce="sum", ufeat=x8[:256])),
        (Kernel.SPMM_BLOCKED, sorted_coo, "spmm", dict(op="mul", reduce="sum", ufeat=x8, efeat=w1)),
        (Kernel.SPMM_BLOCKED_HUBS, lambda: gk.graph.kronecker(8), "spmm",
         dict(op="copy_lhs", reduce="sum", ufeat=x32[:256])),
        (Kernel.SPMM_PACKED, dynamic, "spmm", dict(op="copy_lhs", reduce="max", ufeat=x8, format="packed")),
        (Kernel.SDDMM_CSR, random_coo, "sddmm", dict(op="add", lhs=x8, rhs=x8)),  # rows too wide to block
        (Kernel.SDDMM_COO, random_coo, "sddmm", dict(op="add", lhs=x8, rhs=w1[:, :1].repeat(8, 1), lhs_target="v",
                                                     rhs_target="e")),
        (Kernel.SDDMM_COO, random_coo, "sddmm", dict(op="sub", lhs=x8, rhs=x8, format="coo")),
        (Kernel.SDDMM_BLOCKED, random_coo, "sddmm", dict(op="dot", lhs=x32, rhs=x32, lhs_target="u",
                                                         rhs_target="v")),
        (Kernel.SDDMM_PACKED, dynamic, "sddmm", dict(op="mul", lhs=x8, rhs=x8, format="packed")),
        (Kernel.EDGE_SOFTMAX_EDGE_ORDER, random_coo, "edge_softmax", dict(logits=w1[:, 0].copy())),
        (Kernel.EDGE_SOFTMAX_ROWS, lambda: random_coo(m=400), "edge_softmax", dict(logits=w1[:400], norm_by="src")),
        (Kernel.BFS_DIRECTION_OPTIMIZING, random_coo, "bfs", dict(source=0)),
        (Kernel.BFS_DIRECTION_OPTIMIZING, lambda: gk.graph.kronecker(8), "bfs", dict(source=3)),  # in-edges: csr
        (Kernel.BFS_TOP_DOWN, random_coo, "bfs", dict(source=1, algorithm="top_down")),
        (Kernel.BFS_TOP_DOWN, lambda: random_coo().formats(["coo", "csr"]), "bfs", dict(source=2)),
        (Kernel.BFS_BOTTOM_UP, random_coo, "bfs", dict(source=0, algorithm="bottom_up")),
        (Kernel.BFS_SPMSV, random_coo, "bfs", dict(sources=[0, 5], algorithm="spmsv")),
        (Kernel.BFS_MULTI_SOURCE, random_coo, "bfs", dict(sources=list(range(10)))),
        (Kernel.BFS_DIRECTION_OPTIMIZING, random_coo, "bfs", dict(sources=list(range(10)), batch=False)),
        (Kernel.BFS_PACKED_TOP_DOWN, dynamic, "bfs", dict(source=0)),
    ]


CASES = cases()


@pytest.mark.parametrize("case", range(len(CASES)), ids=[f"{c[0].value}-{i}" for i, c in enumerate(CASES)])
def test_explain_predicts_what_the_call_runs(case, caplog, blocked_on_small_graphs):
    kernel, make_graph, family, args = CASES[case]
    g = make_graph()
    before = state(g)
    predicted = gk.explain(g, family, **args)
    assert state(g) == before, "explain built or cached something"
    assert predicted.kernel is kernel, predicted
    plans, _ = executed_plans(caplog, lambda: CALLS[family](g, **args))
    assert plans == [predicted]
    if not isinstance(g, gk.DynamicGraph):
        created = {f for f in ("coo", "csr", "csc") if g.has_format(f)} - set(before[0])
        assert created == {step.format for step in predicted.builds}, predicted


def test_every_cpu_kernel_path_is_checked():
    cpu = {k for k in Kernel if k.backend == "cpu"} - CONVERSIONS
    assert cpu == {c[0] for c in CASES}


@pytest.mark.parametrize("kernel", list(Kernel), ids=[k.value for k in Kernel])
def test_every_kernel_names_functions_that_import(kernel):
    assert kernel.functions and all(callable(f) for f in kernel.functions)
    assert kernel.function is kernel.functions[0]
    assert Kernel(kernel.value) is kernel
    for path, function in zip(kernel.paths, kernel.functions):
        assert path.endswith(":" + function.__name__) and path.startswith(f"kernels.{kernel.backend}.")


@pytest.mark.fast
def test_convert_plans():
    g = random_coo()
    plan = gk.explain(g, "convert", to="csc")
    assert (plan.kernel, plan.builds) == (Kernel.COO_TO_COMPRESSED,
                                          (BuildStep("csc", "coo", Kernel.COO_TO_COMPRESSED),))
    assert not g.has_format("csc")
    g.csc()
    assert gk.explain(g, "convert", to="csr").builds == (BuildStep("csr", "csc", Kernel.TRANSPOSE_COMPRESSED),)
    assert gk.explain(g, "convert", to="csc").kernel is None
    h = gk.Graph.from_csr([0, 1, 2], [1, 0])
    assert gk.explain(h, "convert", to="coo").builds == (BuildStep("coo", "csr", Kernel.EXPAND_INDPTR),)
    assert "builds coo from the csr by expanding indptr" in str(gk.explain(h, "convert", to="coo"))


@pytest.mark.fast
def test_plan_is_data():
    g = random_coo()
    plan = gk.explain(g, "spmm", op="mul", reduce="max", ufeat=features(300, 8), efeat=features(3000, 1),
                      return_arg=True)
    assert isinstance(plan, Plan) and plan.family == "spmm" and plan.backend == "cpu"
    assert (plan.kernel, plan.format) == (Kernel.SPMM_CSC_VECTOR, "csc")
    assert dict(plan.params) == {"op": "mul", "reduce": "max", "arg": True, "pattern": plan.params["pattern"]}
    with pytest.raises(TypeError):
        plan.params["op"] = "add"  # read-only
    text = str(plan)
    assert "kernel=spmm_csc_vector(op=mul, reduce=max, arg=True" in text and "builds csc from the coo" in text
    assert hash(plan) == hash(gk.explain(g, "spmm", op="mul", reduce="max", ufeat=features(300, 8),
                                         efeat=features(3000, 1), return_arg=True))


def test_explain_validates_as_the_call_does():
    g = random_coo()
    for call in (gk.spmm, lambda g, **kw: gk.explain(g, "spmm", **kw)):
        with pytest.raises(ValueError, match="argument 'efeat'"):
            call(g, op="mul", reduce="sum", ufeat=features(300, 8))
        with pytest.raises(ValueError, match="argument 'ufeat'"):
            call(g, op="copy_lhs", reduce="sum", ufeat=features(7, 8))
    with pytest.raises(ValueError, match="argument 'source'"):
        gk.explain(g, "bfs", source=300)
    with pytest.raises(ValueError, match="argument 'family'"):
        gk.explain(g, "nope")


def test_csc_row_order_is_decided_without_building_the_csc(blocked_on_small_graphs, caplog):
    """The blocked SpMM needs CSC rows in source order: from an unsorted COO they are not, so the plan is
    the CSC kernel; read from the COO the CSC would be built from, not from a CSC built to look."""
    g = random_coo()
    x = features(300, 8)
    plan = gk.explain(g, "spmm", op="copy_lhs", reduce="sum", ufeat=x)
    assert plan.kernel is Kernel.SPMM_CSC_VECTOR and not g.has_format("csc")
    plans, out = executed_plans(caplog, lambda: gk.spmm(g, "copy_lhs", "sum", x))
    assert plans == [plan]
    again = gk.explain(g, "spmm", op="copy_lhs", reduce="sum", ufeat=x)  # now read from the built CSC
    assert (again.kernel, again.builds) == (Kernel.SPMM_CSC_VECTOR, ())


def test_dynamic_graph_without_snapshot_is_planned_at_run_time(caplog):
    dg = dynamic()
    x = features(300, 8)
    plan = gk.explain(dg, "spmm", op="copy_lhs", reduce="sum", ufeat=x)
    assert plan.decided_at_run_time and plan.kernel is None and dg.cached_snapshot() is None
    assert "builds the snapshot, then plans on it" in str(plan)
    assert gk.explain(dg, "bfs", source=0, algorithm="bottom_up").decided_at_run_time
    assert dg.cached_snapshot() is None
    plans, _ = executed_plans(caplog, lambda: gk.spmm(dg, "copy_lhs", "sum", x))
    assert dg.cached_snapshot() is not None
    assert [(p.kernel, p.builds) for p in plans] == [(Kernel.SPMM_CSC_VECTOR,
                                                       (BuildStep("csc", "csr", Kernel.TRANSPOSE_COMPRESSED),))]
    plan = gk.explain(dg, "spmm", op="copy_lhs", reduce="sum", ufeat=x)  # the snapshot is current: planned on it
    assert plan == gk.explain(dg.cached_snapshot(), "spmm", op="copy_lhs", reduce="sum", ufeat=x)
    assert executed_plans(caplog, lambda: gk.spmm(dg, "copy_lhs", "sum", x))[0] == [plan]


def test_explain_copies_nothing_to_the_device_and_plans_the_cuda_path(monkeypatch):
    """With backend="cuda" (no GPU needed to plan) explain reads only shapes and dtypes of host arrays."""
    from graphkern import _cuda, _sparse_inputs

    def refuse(*args):
        raise AssertionError("explain copied an array to the device")

    monkeypatch.setattr(_cuda, "to_device", refuse)
    monkeypatch.setattr(_sparse_inputs, "resolve_backend", lambda backend, *arrays: "cuda")
    g = random_coo()
    plan = gk.explain(g, "spmm", op="copy_lhs", reduce="sum", ufeat=features(300, 8), backend="cuda")
    assert (plan.backend, plan.kernel, plan.format) == ("cuda", Kernel.CUDA_SPMM_CSC, "csc")
    assert plan.builds == (BuildStep("csc", "coo", Kernel.CUDA_COO_TO_COMPRESSED),)
    plan = gk.explain(g, "sddmm", op="dot", lhs=features(300, 8), rhs=features(300, 8), backend="cuda")
    assert (plan.kernel, plan.format, plan.builds) == (Kernel.CUDA_SDDMM_EDGES, "coo", ())
    plan = gk.explain(g, "edge_softmax", logits=features(3000, 2), backend="cuda")
    assert (plan.kernel, plan.format) == (Kernel.CUDA_EDGE_SOFTMAX_ROWS, "csc")
