"""The generalized sparse kernels: :func:`spmm`, :func:`sddmm` and :func:`edge_softmax` (DGL semantics).

``spmm(g, op, reduce, ufeat, efeat)``: ``out[v] = reduce over edges (u, e, v) of op(ufeat[u], efeat[e])``.
``sddmm(g, op, lhs, rhs, lhs_target, rhs_target)``: ``out[e] = op(L[e], R[e])``, each operand taken from the
source (``"u"``), destination (``"v"``) or edge (``"e"``) of edge ``e``.
``edge_softmax(g, logits)``: softmax of edge logits over the in-edges of each destination.

Where DGL is inconsistent graphkern chooses (docs/design.md, section 'Semantics of the sparse
kernels'): a destination without in-edges gets
0 for every reducer and arg outputs -1; max/min ties go to the first edge in CSC order on every path;
sums over a row are deterministic; NaN never wins a max/min. Edge features are always indexed by edge id.
Inputs are validated first, once, before any compiled code runs (graphkern._sparse_inputs); the planners
(graphkern._sparse_plan) pick the format and the kernel, and the data derived from a graph for them is
kept on it (graphkern._sparse_caches). The ``sparse`` module of the backend's driver runs the plan
(``graphkern._cpu.sparse`` or ``graphkern._cuda.sparse``, picked by :func:`graphkern._backend.driver`).
"""

from __future__ import annotations

from ._backend import driver
from ._sparse_inputs import graph_of
from ._sparse_plan import TARGETS, edge_softmax_call, sddmm_call, spmm_call
from .graph.dynamic import holding_graph_lock
from .kernels.cpu import sddmm as _sddmm_cpu
from .kernels.cpu import spmm as _spmm_cpu

__all__ = ["spmm", "sddmm", "edge_softmax", "SPMM_OPS", "SPMM_REDUCERS", "SDDMM_OPS", "TARGETS"]

SPMM_OPS = _spmm_cpu.OPS
SPMM_REDUCERS = _spmm_cpu.REDUCERS
SDDMM_OPS = _sddmm_cpu.OPS
# graphkern.torch resolves a kernel's graph argument (Graph or DynamicGraph) as the kernels do
_graph_of = graph_of


# ------------------------------------------------------------------------------------------------ spmm

@holding_graph_lock  # a DynamicGraph: no batch rewrites its arrays or snapshot mid-call
def spmm(g, op: str, reduce: str, ufeat=None, efeat=None, *, return_arg: bool = False, backend=None,
         format=None):
    """Generalized sparse-dense matrix multiplication (message passing with a reducer).

    ``out[v] = reduce over in-edges (u, e, v) of op(ufeat[u], efeat[e])``.

    Parameters
    ----------
    g : Graph
    op : {"add", "sub", "mul", "div", "copy_lhs", "copy_rhs"}
        ``copy_lhs`` reads only ``ufeat`` (DGL's copy_u), ``copy_rhs`` only ``efeat`` (copy_e); the
        other operand is ignored, whatever it is, as DGL ignores it.
    reduce : {"sum", "max", "min", "mean"}
        ``mean`` is the sum divided by the in-degree; a destination without in-edges gets 0.
    ufeat : ndarray, shape (num_src, ...)
    efeat : ndarray, shape (num_edge_ids, ...), indexed by edge id (num_edge_ids == num_edges unless the
        graph leaves edge ids unused)
        Feature shapes broadcast by NumPy rules after padding the shorter one after axis 0 (DGL's rule),
        so ``(N, D)`` with ``(E, 1)`` is a scalar weight per edge and ``(N, H, F)`` with ``(E, H, 1)`` a
        weight per edge and head. A 1-D array is one scalar per row; the output is then 1-D too.
    return_arg : bool
        For max/min, also return ``(arg_u, arg_e)``: the source node and the edge id that won each output
        element (-1 for a destination without in-edges; None for an operand the op does not read).
    backend : {None, "auto", "cpu", "cuda"}
    format : {None, "csc", "coo", "csr", "packed"}
        Force a path: ``"csc"`` destination-parallel, ``"coo"`` edge-parallel, ``"csr"`` the edges of
        the CSR in destination blocks sized to the L2 cache, in source order (ties go to the lowest
        source), ``"packed"`` straight over a DynamicGraph's packed arrays. By default a measured cost
        model picks (``gk.explain`` says which and why): the CSC kernel, or the same blocks built from
        the CSC when the gathered rows outgrow the L2 cache, an output row is one vector and the CSC
        rows are in source order (results equal the CSC kernel's bit for bit), and the COO when the CSC
        is not allowed; a DynamicGraph runs on its snapshot (built once per change, then reused).
        On a skewed graph, rows of several vectors may also split off the edges of the sources of
        highest out-degree (the hub split; not with arg outputs): each row then reduces its hub edges
        first and the rest after, both in source order, so a sum is deterministic and equals the CSC
        kernel's within rounding, not bit for bit; max and min give the CSC's values (a zero may differ
        in sign).

    Returns
    -------
    out : ndarray, shape (num_dst, ...) — or ``(out, arg_u, arg_e)`` with ``return_arg``.

    Examples
    --------
    >>> import numpy as np, graphkern as gk
    >>> g = gk.Graph.from_coo([0, 1, 2], [2, 2, 0], num_nodes=3)
    >>> x = np.array([[1.0], [2.0], [4.0]])
    >>> gk.spmm(g, "copy_lhs", "sum", x).ravel().tolist()
    [4.0, 0.0, 3.0]
    >>> out, arg_u, _ = gk.spmm(g, "copy_lhs", "max", x, return_arg=True)
    >>> out.ravel().tolist(), arg_u.ravel().tolist()
    ([4.0, 0.0, 2.0], [2, -1, 1])
    """
    g, _, x, w, bcast, with_arg, the_plan = spmm_call(g, op, reduce, ufeat, efeat, return_arg, backend, format)
    out, arg_u, arg_e = driver(the_plan.backend).sparse.spmm(g, the_plan, op, reduce, x, w, bcast, with_arg)
    squeeze = (x is None or x.ndim == 1) and (w is None or w.ndim == 1)
    shape = (g.num_dst,) if squeeze else (g.num_dst,) + bcast.out_shape
    out = out.reshape(*shape)
    if with_arg:
        return out, *(a.reshape(*shape) if a is not None else None for a in (arg_u, arg_e))
    return out


# ----------------------------------------------------------------------------------------------- sddmm


@holding_graph_lock  # a DynamicGraph: no batch rewrites its arrays or snapshot mid-call
def sddmm(g, op: str, lhs, rhs, lhs_target: str = "u", rhs_target: str = "v", *, backend=None, format=None):
    """Generalized sampled dense-dense matrix multiplication: one value per edge.

    ``out[e] = op(L[e], R[e])`` where ``L[e]`` is ``lhs[src(e)]``, ``lhs[dst(e)]`` or ``lhs[e]`` for
    ``lhs_target`` ``"u"``, ``"v"`` or ``"e"`` (``R`` likewise). ``dot`` reduces the last axis (which must
    be equal; the output keeps it with length 1); ``copy_lhs``/``copy_rhs`` read one operand and ignore the
    other, as DGL does. Broadcasting
    as in :func:`spmm`. The output is indexed by edge id.

    Examples
    --------
    >>> import numpy as np, graphkern as gk
    >>> g = gk.Graph.from_coo([0, 1], [1, 0])
    >>> x = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> gk.sddmm(g, "dot", x, x, "u", "v").ravel().tolist()
    [11.0, 11.0]
    """
    g, _, L, R, bcast, the_plan = sddmm_call(g, op, lhs, rhs, lhs_target, rhs_target, backend, format)
    out = driver(the_plan.backend).sparse.sddmm(g, the_plan, op, L, R, lhs_target, rhs_target, bcast)
    squeeze = (L is None or L.ndim == 1) and (R is None or R.ndim == 1) and op != "dot"
    return out.reshape(*((g.num_edge_ids,) if squeeze else (g.num_edge_ids,) + bcast.out_shape))


# ---------------------------------------------------------------------------------------- edge softmax

@holding_graph_lock  # a DynamicGraph: no batch rewrites its arrays or snapshot mid-call
def edge_softmax(g, logits, norm_by: str = "dst", *, backend=None):
    """Softmax of edge logits over the in-edges of each destination (``norm_by="dst"``) or the
    out-edges of each source (``"src"``), one fused pass per row, for every head at once.

    ``logits`` has shape ``(E,)``, ``(E, H)`` or ``(E, H, 1)`` and is indexed by edge id; the result has
    the same shape. Rows are computed stably (the row maximum is subtracted before ``exp``).

    Examples
    --------
    >>> import numpy as np, graphkern as gk
    >>> g = gk.Graph.from_coo([0, 1, 2], [2, 2, 0])
    >>> a = gk.edge_softmax(g, np.log(np.array([1.0, 3.0, 5.0])))
    >>> np.round(a, 3).tolist()
    [0.25, 0.75, 1.0]
    """
    g, _, z, the_plan = edge_softmax_call(g, logits, norm_by, backend)  # a DynamicGraph: its snapshot
    return driver(the_plan.backend).sparse.edge_softmax(g, the_plan, z)
