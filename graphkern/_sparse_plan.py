"""The planners of the sparse kernels: which format and which compiled kernel a call runs, and why.

One function per family (:func:`spmm_call`, :func:`sddmm_call`, :func:`edge_softmax_call`) validates the
call's own arguments and plans it; graphkern.sparse runs what it returns, and ``gk.explain`` returns its
plan (registered with graphkern.dispatch), so the two cannot disagree. A planner only reads the graph and
the shapes of the call's arrays: nothing here builds a format or runs a kernel, and when explaining
nothing is cached either. The cost model's rules for the cache-blocked paths (destination blocks, the hub
split, the blocked SDDMM) and the edge-order softmax are measured; each says by which command.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from . import _broadcast, _calibration, tuning
from . import _sparse_caches as _caches
from ._sparse_inputs import (
    check_spmm,
    edge_word,
    feature,
    feature_shape,
    graph_planned,
    is_packed,
    operand,
    operands_read,
    where,
)
from ._validate import check_bool, check_choice
from .dispatch import Kernel, Plan, builds, csc_rows_sorted, log_plan, register_explainer, select_format
from .kernels.cpu import edge_softmax as _softmax_cpu
from .kernels.cpu import spmm as _spmm_cpu

TARGETS = ("u", "v", "e")


def _packed_plan(family: str, backend: str, kernel: Kernel, params: dict) -> Plan:
    return Plan(family, backend, kernel, "packed", (), params,
                ("format='packed' was asked for: the kernel walks the DynamicGraph's packed memory array (rows "
                 "by source; walls, gaps and tombstones skipped) without a snapshot",))


def snapshot_plan(family: str, backend: str) -> Plan:
    """The plan of a call on a DynamicGraph without a current snapshot, explained without building it."""
    return Plan(family, backend, None, "snapshot", (), {},
                ("a DynamicGraph without a current snapshot: the call builds the snapshot (CSR with the stable "
                 "edge ids), then plans on it as on a Graph",))


def _run_or_explain(the_plan: Plan, explaining: bool) -> Plan:
    return the_plan if explaining else log_plan(the_plan)


# ------------------------------------------------------------------------------------------------ spmm

# The rules' thresholds are knobs (graphkern.tuning): blocked_min_edges, edge_rows_to_blocks_max_bytes,
# hub_min_edge_share, sddmm_blocked_max_row_bytes; each is read when a call is planned.


def _hub_split(g, op, reduce, with_arg, ufeat_bytes, edge_row_bytes, out_chunks, remember=True):
    """Why the blocked sums split off the hub sources' edges, or None (see
    :func:`graphkern._sparse_caches.dst_blocks`).

    Every reducer of an op that reads x, without arg outputs, over output rows of several vector chunks
    and a pattern without offset tables, when the sources of highest out-degree whose rows fit a
    quarter of the L2 carry a tenth of the edges or more (arg outputs would need each row's ties
    resolved across the two parts). Rows of one vector keep the blocks alone (the split measured
    slightly slower there). An op that also reads edge rows needs them narrow: the hub edges run in CSC
    order, so the edge rows are first permuted into it, a random scatter several times dearer than the
    reorder into block order alone, which pays from F = 32 on, not at F = 8 and 16. Measured by
    ``python tools/compare_peers.py --family spmm --features 8 16 32 64`` (figures in
    docs/performance.md, section 'CPU: what the kernels' design choices are worth').
    """
    if (op == "copy_rhs" or with_arg or (out_chunks or 0) < 2 or ufeat_bytes is None
            or g.num_edges == 0 or g.num_src == 0):
        return None
    knobs = tuning.current()
    if op != "copy_lhs" and (edge_row_bytes is None or edge_row_bytes > knobs.edge_rows_to_blocks_max_bytes):
        return None
    hub_rows = _caches.hub_capacity(ufeat_bytes // g.num_src)
    if hub_rows < 1:
        return None
    hub_ids, share = _caches.hub_sources(g, hub_rows, remember)
    if share < knobs.hub_min_edge_share:
        return None
    return (f"hub split: the {hub_ids.size} sources of highest out-degree carry {share:.0%} of the edges; "
            f"their rows are copied together into the L2 and each row reduces its edges from them first")


def _use_blocked(g, op, with_arg, ufeat_bytes, edge_row_bytes, out_chunks, hub_split=False, remember=True):
    """Why the blocked path runs instead of the CSC kernel, or None (the cost model's measured rule).

    The blocked path (``Kernel.SPMM_BLOCKED``) walks each destination block's edges in source order, adding
    into output rows held in the L2 cache. Against the CSC vector kernel it is faster for one-vector
    rows (F = 1 to 16, float32 and float64) on graphs whose gathered rows outgrow the L2: copy_u_sum,
    copy_u_max, copy_e_sum and u_mul_e_sum with w (E, 1) (edge ids in source order, so w streams). Not
    taken: rows of two or more vector chunks without the hub split (x is re-read for twice the blocks),
    arg outputs (an extra read-modify-write per edge), gathered arrays that fit the L2 (the CSC's
    gathers hit it), and CSC rows not in source order (results then would not be the CSC's bit for
    bit). The blocks cost a stable transpose and a count sort, once per graph.

    With the hub split (``hub_split``, :func:`_hub_split`) rows of several vector chunks take the blocks
    too, faster than the CSC kernel from F = 32 to 256. Measured by ``python tools/compare_peers.py
    --family spmm --features 16 64 256`` (figures in docs/performance.md, section 'CPU: what the
    kernels' design choices are worth').
    """
    if (with_arg or (out_chunks != 1 and not hub_split) or g.num_edges < max(1, tuning.current().blocked_min_edges)
            or not g.allows_format("csc")):
        return None
    l2 = _caches.cache_bytes()
    gathers_x = op != "copy_rhs" and ufeat_bytes is not None and ufeat_bytes > l2
    # behind the CSC's permutation edge rows are gathered; in source order they stream
    csc_permutes = not (g.has_format("csc") and g.eids_are_identity("csc"))
    gathers_w = (op != "copy_lhs" and edge_row_bytes is not None and g.num_edges * edge_row_bytes > l2
                 and csc_permutes)
    if not (gathers_x or gathers_w):
        return None
    if not csc_rows_sorted(g, remember):
        return None
    what = "ufeat" if gathers_x else "edge rows behind the csc's edge ids"
    size = f"{l2 >> 10} KB" if l2 >= 1024 else f"{l2} bytes"
    return (f"{what} outgrow the L2 cache ({size}) and an output row is one vector: destination "
            f"blocks of the csc in source order, output rows in the cache")


def _measured_on_this_machine(decision):
    """``(blocked_faster, why)`` for a blocked path the fixed rules chose: whether this machine's
    calibration (graphkern._calibration) found it faster than the plain kernel (True where none is
    stored), and the sentence that says so (None without a calibration)."""
    measured = _calibration.choice(decision)
    if measured is None:
        return True, None
    faster = measured["blocked_ms"] <= measured["plain_ms"]
    plain = "the csr" if decision.startswith("sddmm") else "the csc kernel"
    op = "u_dot_v" if decision.startswith("sddmm") else "copy_u_sum"
    return faster, (f"calibrated on this machine ({measured['features']} features, {op}): the blocked path "
                    f"{measured['blocked_ms']:.2f} ms against {plain}'s {measured['plain_ms']:.2f} ms, so "
                    f"{'the blocked path' if faster else plain} runs (graphkern calibrate; "
                    f"gk.tuned(use_calibration=0) plans by the rules alone)")


class SpmmCall(NamedTuple):
    """A validated, planned spmm call: the graph it runs on (None when explaining a call that builds a
    DynamicGraph's snapshot first), the backend, the checked operands, their broadcast and the plan."""

    g: object
    on_device: bool
    x: object
    w: object
    bcast: _broadcast.Broadcast
    with_arg: bool
    plan: Plan


def spmm_call(g, op, reduce, ufeat=None, efeat=None, return_arg=False, backend=None, format=None, *,
              explaining=False) -> SpmmCall:
    """Validate the arguments of :func:`graphkern.spmm` and plan the call (logged unless ``explaining``)."""
    run_on = graph_planned(g, format, explaining)
    target = g if run_on is None else run_on
    ufeat, efeat = operands_read(op, ufeat, efeat)  # an ignored operand does not pick the backend either
    on_device = where(target, backend, ufeat, efeat)
    x, w, bcast = check_spmm(target, op, reduce, ufeat, efeat, on_device, to_device=not explaining)
    with_arg = check_bool("return_arg", return_arg) and reduce in ("max", "min")
    if return_arg and not with_arg:
        raise ValueError(f"argument 'return_arg': arg outputs exist for max and min, found reduce={reduce!r}")
    concrete = "cuda" if on_device else "cpu"
    if run_on is None:
        the_plan = snapshot_plan("spmm", concrete)
    else:
        the_plan = _plan_spmm(run_on, concrete, op, reduce, with_arg, format, x, w, bcast, not explaining)
    return SpmmCall(run_on, on_device, x, w, bcast, with_arg, _run_or_explain(the_plan, explaining))


@register_explainer("spmm")
def _explain_spmm(g, op, reduce, ufeat=None, efeat=None, *, return_arg=False, backend=None, format=None) -> Plan:
    return spmm_call(g, op, reduce, ufeat, efeat, return_arg, backend, format, explaining=True).plan


def _plan_spmm(g, backend, op, reduce, with_arg, format, x, w, bcast, remember) -> Plan:
    params = {"op": op, "reduce": reduce, "arg": with_arg, "pattern": bcast.pattern}
    if is_packed(g):
        return _packed_plan("spmm", backend, Kernel.SPMM_PACKED, params)
    supported = ("csc", "coo", "csr")
    if format is not None:
        check_choice("format", format, supported)
        if not g.allows_format(format):
            raise ValueError(f"argument 'format': the graph does not allow {format!r} (allowed formats: "
                             f"{g.formats()})")
        if format == "csr":
            if backend == "cuda":
                raise ValueError("argument 'format': the cuda backend runs spmm on the 'csc' or the 'coo'; "
                                 "found 'csr'")
            return Plan("spmm", backend, Kernel.SPMM_BLOCKED, "csr", builds(g, "csr"), params,
                        ("format='csr' was asked for: destination blocks of the csr, in source order",))
        fmt, reasons = format, [f"format={format!r} was asked for"]
    else:
        hubs = why = None
        if backend == "cpu":
            # the sizes the cost model weighs: gathered bytes of x, bytes of an edge row, vectors per output row
            ufeat_bytes = None if x is None else x.nbytes
            edge_row_bytes = None if w is None else int(np.prod(w.shape[1:])) * np.dtype(w.dtype).itemsize
            out_chunks = 0 if bcast.general else _spmm_cpu.vector_chunks(bcast.A, bcast.B)
            hubs = _hub_split(g, op, reduce, with_arg, ufeat_bytes, edge_row_bytes, out_chunks, remember)
            why = _use_blocked(g, op, with_arg, ufeat_bytes, edge_row_bytes, out_chunks, hubs is not None, remember)
        measured = None
        if why is not None and op != "copy_rhs":  # measured on gathers of x; copy_e gathers edge rows
            faster, measured = _measured_on_this_machine("spmm_hub_split" if hubs else "spmm_one_vector_blocked")
            if not faster:
                why = hubs = None
        if why is not None:
            kernel = Kernel.SPMM_BLOCKED_HUBS if hubs else Kernel.SPMM_BLOCKED
            reasons = (why,) + ((hubs,) if hubs else ()) + ((measured,) if measured else ())
            return Plan("spmm", backend, kernel, "csc", builds(g, "csc"), params, reasons)
        fmt, reasons = select_format(g, "csc", ("csc", "coo"))
        reasons = list(reasons) + ([measured] if measured else [])
    if backend == "cuda":
        kernel = Kernel.CUDA_SPMM_CSC if fmt == "csc" else Kernel.CUDA_SPMM_COO
    elif fmt == "csc":
        kernel = Kernel.SPMM_CSC if bcast.general else Kernel.SPMM_CSC_VECTOR
    else:
        kernel = Kernel.SPMM_COO
    return Plan("spmm", backend, kernel, fmt, builds(g, fmt, backend=backend), params, tuple(reasons))


# ----------------------------------------------------------------------------------------------- sddmm



def _sddmm_blocked(g, op, lhs_target, rhs_target, lhs_bytes, rhs_bytes, out_row_bytes):
    """Why the SDDMM runs over destination blocks, or None (the cost model's measured rule): operands from
    u and v only, a destination-side operand that outgrows the L2 cache, narrow output rows (``dot``'s one
    value per head). u_dot_v on the blocks is several times faster than on the CSR at F = 16 and still
    faster at F = 64 (``python tools/compare_peers.py --family spmm``)."""
    targets = ([lhs_target] if op != "copy_rhs" else []) + ([rhs_target] if op != "copy_lhs" else [])
    knobs = tuning.current()
    if ("e" in targets or "v" not in targets or out_row_bytes is None
            or out_row_bytes > knobs.sddmm_blocked_max_row_bytes):
        return None
    if g.num_edges < max(1, knobs.blocked_min_edges) or not g.allows_format("csc"):
        return None
    v_bytes = max((b or 0) for t, b in ((lhs_target, lhs_bytes), (rhs_target, rhs_bytes)) if t == "v")
    l2 = _caches.cache_bytes()
    if v_bytes <= l2:
        return None
    return ("the destination operand outgrows the L2 cache: destination blocks of the csc in source order "
            "(destination rows in the cache), then the values moved to edge-id order")


class SddmmCall(NamedTuple):
    """A validated, planned sddmm call (see :class:`SpmmCall`): the operands ``L``, ``R`` (None when the op
    does not read one) and their broadcast."""

    g: object
    on_device: bool
    L: object
    R: object
    bcast: _broadcast.Broadcast
    plan: Plan


def sddmm_call(g, op, lhs, rhs, lhs_target="u", rhs_target="v", backend=None, format=None, *,
               explaining=False) -> SddmmCall:
    """Validate the arguments of :func:`graphkern.sddmm` and plan the call (logged unless ``explaining``)."""
    from .kernels.cpu.sddmm import OPS

    run_on = graph_planned(g, format, explaining)
    target = g if run_on is None else run_on
    check_choice("op", op, OPS)
    check_choice("lhs_target", lhs_target, TARGETS)
    check_choice("rhs_target", rhs_target, TARGETS)
    lhs, rhs = operands_read(op, lhs, rhs)  # an ignored operand does not pick the backend either
    on_device = where(target, backend, lhs, rhs)
    uses_l, uses_r = op != "copy_rhs", op != "copy_lhs"
    if uses_l and lhs is None:
        raise ValueError(f"argument 'lhs': op '{op}' needs it, found None")
    if uses_r and rhs is None:
        raise ValueError(f"argument 'rhs': op '{op}' needs it, found None")
    L = operand("lhs", lhs, lhs_target, target, on_device, not explaining) if uses_l else None
    R = operand("rhs", rhs, rhs_target, target, on_device, not explaining) if uses_r else None
    if L is not None and R is not None and L.dtype != R.dtype:
        raise TypeError(f"arguments 'lhs' and 'rhs': expected the same dtype, found {L.dtype} and {R.dtype}")
    bcast = _broadcast.analyse(op, feature_shape(L) if L is not None else (),
                               feature_shape(R) if R is not None else (), "lhs", "rhs")
    concrete = "cuda" if on_device else "cpu"
    if run_on is None:
        the_plan = snapshot_plan("sddmm", concrete)
    else:
        the_plan = _plan_sddmm(run_on, concrete, op, lhs_target, rhs_target, format, L, R, bcast)
    return SddmmCall(run_on, on_device, L, R, bcast, _run_or_explain(the_plan, explaining))


@register_explainer("sddmm")
def _explain_sddmm(g, op, lhs, rhs, lhs_target="u", rhs_target="v", *, backend=None, format=None) -> Plan:
    return sddmm_call(g, op, lhs, rhs, lhs_target, rhs_target, backend, format, explaining=True).plan


def _plan_sddmm(g, backend, op, lhs_target, rhs_target, format, L, R, bcast) -> Plan:
    params = {"op": op, "lhs_target": lhs_target, "rhs_target": rhs_target, "pattern": bcast.pattern}
    if is_packed(g):
        return _packed_plan("sddmm", backend, Kernel.SDDMM_PACKED, params)
    measured = None  # this machine's calibration of the blocked rule, when it decided
    if backend == "cpu" and format is None:
        out_row_bytes = bcast.out_len * np.dtype((L if L is not None else R).dtype).itemsize
        why = _sddmm_blocked(g, op, lhs_target, rhs_target, None if L is None else L.nbytes,
                             None if R is None else R.nbytes, out_row_bytes)
        if why is not None:
            v_operand = next(a for a, t in ((L, lhs_target), (R, rhs_target)) if t == "v" and a is not None)
            narrow = v_operand.nbytes // max(g.num_dst, 1) <= _calibration.SDDMM_NARROW_ROW_BYTES
            faster, measured = _measured_on_this_machine("sddmm_blocked_narrow" if narrow else "sddmm_blocked_wide")
            if not faster:
                why = None
        if why is not None:
            return Plan("sddmm", backend, Kernel.SDDMM_BLOCKED, "csc", builds(g, "csc"), params,
                        (why,) + ((measured,) if measured else ()))
    supported = ("coo", "csr")
    if backend == "cuda":
        # the GPU kernel walks an edge list: the COO, or a compressed format expanded once and cached
        if format is not None:
            check_choice("format", format, ("coo", "csr", "csc"))
            if not g.allows_format(format):
                raise ValueError(f"argument 'format': the graph does not allow {format!r} (allowed formats: "
                                 f"{g.formats()})")
            fmt, reasons = format, [f"format={format!r} was asked for"]
        else:
            fmt, reasons = select_format(g, "coo", ("coo", "csr", "csc"))
        return Plan("sddmm", backend, Kernel.CUDA_SDDMM_EDGES, fmt, builds(g, fmt, backend=backend), params,
                    tuple(reasons) + (("edge-parallel over the edge list (the compressed rows expanded once)"
                                       if fmt != "coo" else "edge-parallel over the edge list"),))
    if format is not None:
        check_choice("format", format, supported)
        if not g.allows_format(format):
            raise ValueError(f"argument 'format': the graph does not allow {format!r} (allowed formats: "
                             f"{g.formats()})")
        fmt, reasons = format, [f"format={format!r} was asked for"]
    else:
        fmt, reasons = select_format(g, "csr", supported, _sddmm_cost_model, op=op, lhs_target=lhs_target,
                                     rhs_target=rhs_target)
        reasons = list(reasons) + ([measured] if measured else [])
    kernel = Kernel.SDDMM_CSR if fmt == "csr" else Kernel.SDDMM_COO
    return Plan("sddmm", backend, kernel, fmt, builds(g, fmt), params, tuple(reasons))


def _sddmm_cost_model(g, candidates, op, lhs_target, rhs_target):
    """CSR (source-parallel) keeps ``x[u]`` hot across a row; COO writes ``out`` in edge-id order.

    Measured (scale-18 Kronecker, F = 16 and 64, 2 threads): when the COO is in edge-id order and no
    operand is a source row, COO is as fast and needs no conversion; otherwise CSR order wins because
    each source row is loaded once for all its out-edges. Among created formats the model prefers the
    one whose eids are the identity (sequential output writes).
    """
    reads_u = "u" in (lhs_target, rhs_target)
    if "csr" in candidates and (reads_u or not g.has_format("coo")):
        return "csr"
    if "coo" in candidates and g.has_format("coo"):
        return "coo"
    return None


# ---------------------------------------------------------------------------------------- edge softmax

class EdgeSoftmaxCall(NamedTuple):
    """A validated, planned edge_softmax call (see :class:`SpmmCall`)."""

    g: object
    on_device: bool
    z: object
    plan: Plan


def edge_softmax_call(g, logits, norm_by="dst", backend=None, *, explaining=False) -> EdgeSoftmaxCall:
    """Validate the arguments of :func:`graphkern.edge_softmax` and plan the call (logged unless
    ``explaining``)."""
    run_on = graph_planned(g, None, explaining)  # a DynamicGraph runs as its snapshot
    target = g if run_on is None else run_on
    check_choice("norm_by", norm_by, ("dst", "src"))
    on_device = where(target, backend, logits)
    z = feature("logits", logits, target.num_edge_ids, edge_word(target), on_device, not explaining)
    concrete = "cuda" if on_device else "cpu"
    if run_on is None:
        the_plan = snapshot_plan("edge_softmax", concrete)
    else:
        the_plan = _plan_edge_softmax(run_on, concrete, norm_by)
    return EdgeSoftmaxCall(run_on, on_device, z, _run_or_explain(the_plan, explaining))


@register_explainer("edge_softmax")
def _explain_edge_softmax(g, logits, norm_by="dst", *, backend=None) -> Plan:
    return edge_softmax_call(g, logits, norm_by, backend, explaining=True).plan


def _plan_edge_softmax(g, backend, norm_by):
    """Rows of the CSC (CSR for norm_by="src") when they hold edges in edge-id order; otherwise, on a
    graph whose edge ids follow another created format and whose average degree is at least
    EDGE_ORDER_CHUNKS, the edge-order kernel, over that format's keys.

    On a graph whose edge ids follow the CSR, the CSC reaches the logits through a permutation, and the
    edge-order kernel is several times faster than the row kernel, faster again when all logits lie
    within its one-shift range (``python tools/compare_peers.py --family spmm``, the edge softmax rows).
    """
    params = {"norm_by": norm_by}
    fmt = "csc" if norm_by == "dst" else "csr"
    num_nodes = g.num_dst if norm_by == "dst" else g.num_src
    order_fmt = next((f for f in ("coo", "csr" if norm_by == "dst" else "csc") if g.eids_are_identity(f)), None)
    dense_enough = g.num_edges >= _softmax_cpu.EDGE_ORDER_CHUNKS * max(num_nodes, 1)
    if backend == "cpu" and not g.eids_are_identity(fmt) and order_fmt is not None and dense_enough:
        return Plan("edge_softmax", backend, Kernel.EDGE_SOFTMAX_EDGE_ORDER, order_fmt, (), params,
                    (f"edge ids follow the {order_fmt}: stream edges in id order, reduce into per-node arrays",))
    if not g.allows_format(fmt):
        raise ValueError(f"argument 'g': edge_softmax(norm_by={norm_by!r}) needs the {fmt} format, which this "
                         f"graph does not allow ({g.formats()})")
    kernel = Kernel.CUDA_EDGE_SOFTMAX_ROWS if backend == "cuda" else Kernel.EDGE_SOFTMAX_ROWS
    return Plan("edge_softmax", backend, kernel, fmt, builds(g, fmt, backend=backend), params,
                (f"normalising over {'in' if norm_by == 'dst' else 'out'}-edges needs rows by {norm_by}",))
