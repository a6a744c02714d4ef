"""The planners of the sparse kernels: which format and which compiled kernel a call runs, and why.

Each registers with graphkern.dispatch (``plan``/``gk.explain``) and only reads the graph and the sizes
of the call's arrays: nothing here builds a format or runs a kernel. The cost model's rules for the
cache-blocked paths (destination blocks, the hub split, the blocked SDDMM) and the edge-order softmax
are measured; each says by which command.
"""

from __future__ import annotations

from . import _sparse_caches as _caches
from . import tuning
from ._sparse_inputs import graph_of, is_packed
from ._validate import check_choice
from .dispatch import Plan, csc_rows_sorted, how_to_build, register_planner, select_format
from .kernels.cpu import edge_softmax as _softmax_cpu


def _packed_plan(family: str, backend: str, kernel: str) -> Plan:
    return Plan(family, backend, "packed", kernel, None,
                ("format='packed' was asked for: the kernel walks the DynamicGraph's packed memory array (rows "
                 "by source; walls, gaps and tombstones skipped) without a snapshot",))


# ------------------------------------------------------------------------------------------------ spmm

# The rules' thresholds are knobs (graphkern.tuning): blocked_min_edges, edge_rows_to_blocks_max_bytes,
# hub_min_edge_share, sddmm_blocked_max_row_bytes; each is read when a call is planned.


def _hub_split(g, op, reduce, with_arg, ufeat_bytes, edge_row_bytes, out_chunks):
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
    hub_ids, share = _caches.hub_sources(g, hub_rows)
    if share < knobs.hub_min_edge_share:
        return None
    return (f"hub split: the {hub_ids.size} sources of highest out-degree carry {share:.0%} of the edges; "
            f"their rows are copied together into the L2 and each row reduces its edges from them first")


def _use_blocked(g, op, with_arg, ufeat_bytes, edge_row_bytes, out_chunks, hub_split=False):
    """Why the blocked path runs instead of the CSC kernel, or None (the cost model's measured rule).

    The blocked path (``spmm_blocked_*``) walks each destination block's edges in source order, adding
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
    if not csc_rows_sorted(g):
        return None
    what = "ufeat" if gathers_x else "edge rows behind the csc's edge ids"
    size = f"{l2 >> 10} KB" if l2 >= 1024 else f"{l2} bytes"
    return (f"{what} outgrow the L2 cache ({size}) and an output row is one vector: destination "
            f"blocks of the csc in source order, output rows in the cache")


@register_planner("spmm")
def _plan_spmm(g, backend, op="copy_lhs", reduce="sum", format=None, return_arg=False, edge_row_bytes=None,
               ufeat_bytes=None, out_chunks=None):
    g = graph_of(g, format)
    if is_packed(g):
        return _packed_plan("spmm", backend, f"spmm_packed_{op}_{reduce}")
    supported = ("csc", "coo", "csr")
    arg = "_arg" if return_arg and reduce in ("max", "min") else ""
    if format is not None:
        check_choice("format", format, supported)
        if not g.allows_format(format):
            raise ValueError(f"argument 'format': the graph does not allow {format!r} (allowed formats: "
                             f"{g.formats()})")
        if format == "csr":
            if backend == "cuda":
                raise ValueError("argument 'format': the cuda backend runs spmm on the 'csc' or the 'coo'; "
                                 "found 'csr'")
            return Plan("spmm", backend, "csr", f"spmm_blocked_{op}_{reduce}{arg}", how_to_build(g, "csr"),
                        ("format='csr' was asked for: destination blocks of the csr, in source order",))
        fmt, reasons = format, [f"format={format!r} was asked for"]
    else:
        with_arg = return_arg and reduce in ("max", "min")
        hubs = (_hub_split(g, op, reduce, with_arg, ufeat_bytes, edge_row_bytes, out_chunks) if backend == "cpu"
                else None)
        why = (_use_blocked(g, op, with_arg, ufeat_bytes, edge_row_bytes, out_chunks, hubs is not None)
               if backend == "cpu" else None)
        if why is not None:
            kernel = f"spmm_blocked_hubs_{op}_{reduce}" if hubs else f"spmm_blocked_{op}_{reduce}{arg}"
            return Plan("spmm", backend, "csc", kernel, how_to_build(g, "csc"), (why,) + ((hubs,) if hubs else ()))
        fmt, reasons = select_format(g, "csc", ("csc", "coo"))
    return Plan("spmm", backend, fmt, f"spmm_{fmt}_{op}_{reduce}{arg}", how_to_build(g, fmt), tuple(reasons))


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


@register_planner("sddmm")
def _plan_sddmm(g, backend, op="dot", lhs_target="u", rhs_target="v", format=None, lhs_bytes=None, rhs_bytes=None,
                out_row_bytes=None):
    g = graph_of(g, format)
    if is_packed(g):
        return _packed_plan("sddmm", backend, f"sddmm_packed_{lhs_target}_{op}_{rhs_target}")
    if backend == "cpu" and format is None:
        why = _sddmm_blocked(g, op, lhs_target, rhs_target, lhs_bytes, rhs_bytes, out_row_bytes)
        if why is not None:
            return Plan("sddmm", backend, "csc", f"sddmm_blocked_{lhs_target}_{op}_{rhs_target}",
                        how_to_build(g, "csc"), (why,))
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
        return Plan("sddmm", backend, fmt, f"sddmm_coo_{lhs_target}_{op}_{rhs_target}", how_to_build(g, fmt),
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
    return Plan("sddmm", backend, fmt, f"sddmm_{fmt}_{lhs_target}_{op}_{rhs_target}", how_to_build(g, fmt),
                tuple(reasons))


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

@register_planner("edge_softmax")
def _plan_edge_softmax(g, backend, norm_by="dst"):
    """Rows of the CSC (CSR for norm_by="src") when they hold edges in edge-id order; otherwise, on a
    graph whose edge ids follow another created format and whose average degree is at least
    EDGE_ORDER_CHUNKS, the edge-order kernel.

    On a graph whose edge ids follow the CSR, the CSC reaches the logits through a permutation, and the
    edge-order kernel is several times faster than the row kernel, faster again when all logits lie
    within its one-shift range (``python tools/compare_peers.py --family spmm``, the edge softmax rows).
    """
    g = graph_of(g)  # a DynamicGraph runs as its snapshot
    fmt = "csc" if norm_by == "dst" else "csr"
    num_nodes = g.num_dst if norm_by == "dst" else g.num_src
    order_fmt = next((f for f in ("coo", "csr" if norm_by == "dst" else "csc") if g.eids_are_identity(f)), None)
    dense_enough = g.num_edges >= _softmax_cpu.EDGE_ORDER_CHUNKS * max(num_nodes, 1)
    if backend == "cpu" and not g.eids_are_identity(fmt) and order_fmt is not None and dense_enough:
        return Plan("edge_softmax", backend, order_fmt, "edge_softmax_edge_order", None,
                    (f"edge ids follow the {order_fmt}: stream edges in id order, reduce into per-node arrays",))
    if not g.allows_format(fmt):
        raise ValueError(f"argument 'g': edge_softmax(norm_by={norm_by!r}) needs the {fmt} format, which this "
                         f"graph does not allow ({g.formats()})")
    return Plan("edge_softmax", backend, fmt, f"edge_softmax_{fmt}", how_to_build(g, fmt),
                (f"normalising over {'in' if norm_by == 'dst' else 'out'}-edges needs rows by {norm_by}",))
