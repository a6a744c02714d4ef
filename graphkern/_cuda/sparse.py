"""The CUDA runs of :func:`graphkern.spmm`, :func:`graphkern.sddmm` and :func:`graphkern.edge_softmax`.

graphkern.sparse validates every input and plans the call; each function here takes that validated,
planned call (the graph, the plan and the prepared operands) when the backend is cuda, with the twin
parameters of ``graphkern._cpu.sparse``'s. It puts the graph's formats on the device once (a host graph
keeps its device twin in its cache, :func:`graphkern._cuda.device_graph`), adopts device feature arrays
without copies (host ones were copied once by the checks), keeps broadcast offset tables on the device
between calls, and returns device arrays of one row per destination (spmm) or per edge id (sddmm),
``(rows, D)``: the front end gives them the call's shape.
"""

from __future__ import annotations

import numpy as np

from .. import _cuda, tuning
from ..dispatch import Kernel

__all__ = ["spmm", "sddmm", "edge_softmax"]

_OFFSET_TABLES: dict = {}  # (bytes of a broadcast offset table) -> its device copy
_DUMMIES: dict = {}


def _accumulator(dtype) -> str:
    """float16 and float32 accumulate in float32, float64 in float64."""
    return "float64" if np.dtype(dtype) == np.float64 else "float32"


def _rows_view(arr, rows: int):
    """A ``(rows, features)`` view of a contiguous device feature array."""
    width = int(np.prod(arr.shape[1:])) if arr.ndim > 1 else 1
    return arr.reshape(rows, width) if rows else _dummy(arr.dtype, width)


def _dummy(dtype, width=1):
    key = (np.dtype(dtype).str, width)
    if key not in _DUMMIES:
        _DUMMIES[key] = _cuda.zeros((1, width), dtype)
    return _DUMMIES[key]


def _offset_table(bcast, side: str):
    table = bcast.lhs_offsets if side == "lhs" else bcast.rhs_offsets
    if table is None:
        table = np.zeros(1, np.int64)
    key = table.tobytes()
    if key not in _OFFSET_TABLES:
        _OFFSET_TABLES[key] = _cuda.to_device("offsets", np.ascontiguousarray(table, dtype=np.int64))
    return _OFFSET_TABLES[key]


def _hub_chunks(dg, fmt: str, hub_degree: int, chunk_edges: int):
    """``(chunks, count)``: the rows above ``hub_degree`` cut into chunks (:func:`kernels.cuda.spmm.chunk_rows`),
    on the device, made once per graph and thresholds."""
    from ..kernels.cuda.spmm import chunk_rows

    key = ("cuda_hub_chunks", fmt, hub_degree, chunk_edges)
    chunks = dg._cache.get(key)
    if chunks is None:
        indptr = _cuda.to_host(dg._raw(fmt)[0])
        table = chunk_rows(indptr, np.flatnonzero(np.diff(indptr) > hub_degree), chunk_edges)
        count = int(table.shape[1])
        chunks = _cuda.to_device("rows", table if count else np.zeros((5, 1), np.int64)), count
        dg._cache[key] = chunks
    return chunks


def spmm(g, the_plan, op, reduce, x, w, bcast, with_arg):
    """``(out, arg_u, arg_e)`` as device arrays of shape ``(num_dst, D)``; ``x``/``w`` device or None."""
    from ..kernels.cuda import spmm as K
    from ..kernels.cuda.launch import grid_1d, grid_warps

    dg = _cuda.device_graph(g)
    dtype = (x if x is not None else w).dtype
    D = bcast.out_len
    out = _cuda.zeros((g.num_dst, D), dtype)
    idt = g.idtype
    arg_u = _cuda.full((g.num_dst, D), -1, idt) if with_arg and op != "copy_rhs" else None
    arg_e = _cuda.full((g.num_dst, D), -1, idt) if with_arg and op != "copy_lhs" else None
    if not g.num_edges or not D:
        return out, arg_u, arg_e
    x2 = _rows_view(x, g.num_src) if x is not None else _dummy(dtype)
    w2 = _rows_view(w, g.num_edge_ids) if w is not None else _dummy(dtype)
    loff, roff = _offset_table(bcast, "lhs"), _offset_table(bcast, "rhs")
    au = arg_u if arg_u is not None else _dummy(idt)
    ae = arg_e if arg_e is not None else _dummy(idt)
    acc = _accumulator(dtype)
    if the_plan.kernel is Kernel.CUDA_SPMM_CSC:
        indptr, indices, eids = dg._raw("csc")
        has_eids = not dg.eids_are_identity("csc")
        eids = eids if has_eids else indices
        light, hub, finish = K.spmm_csc_kernel(op, reduce, bcast.pattern, acc)
        knobs = tuning.current()
        hub_degree = knobs.cuda_spmm_hub_degree
        width = K.row_width(D)
        light[grid_warps(-(-g.num_dst // (K.WARP // width)))](indptr, indices, eids, has_eids, x2, w2, bcast.B, D,
                                                              loff, roff, hub_degree, out, au, ae, with_arg, width)
        chunks, num_chunks = _hub_chunks(dg, "csc", hub_degree, knobs.cuda_spmm_chunk_edges)
        if num_chunks:
            from ..kernels.cuda.launch import grid_blocks

            part_val = _cuda.empty((num_chunks, D), np.float64 if acc == "float64" else np.float32)
            if reduce in ("sum", "mean"):  # no winners to carry
                part_u = part_e = _dummy(np.int64)
            else:
                part_u = _cuda.empty((num_chunks, D), np.int64)
                part_e = _cuda.empty((num_chunks, D), np.int64)
            shape = grid_blocks(num_chunks, K.HUB_BLOCK)
            hub[shape](chunks, indices, eids, has_eids, x2, w2, bcast.B, D, loff, roff, part_val, part_u, part_e)
            finish[shape](chunks, D, part_val, part_u, part_e, out, au, ae, with_arg)
        return out, arg_u, arg_e
    src, dst, eids = dg._raw("coo")
    has_eids = not dg.eids_are_identity("coo")
    eids = eids if has_eids else src
    acc_dtype = np.float64 if acc == "float64" else np.float32
    is_sum = reduce in ("sum", "mean")
    identity = 0.0 if is_sum else (-np.inf if reduce == "max" else np.inf)
    acc_out = _cuda.full((g.num_dst, D), identity, acc_dtype)
    accumulate, pick_args = K.spmm_coo_kernel(op, reduce, bcast.pattern, acc)
    shape = grid_1d(g.num_edges * D)
    accumulate[shape](src, dst, eids, has_eids, x2, w2, bcast.B, D, loff, roff, acc_out)
    pos = _dummy(np.int64)
    if with_arg:
        pos = _cuda.full((g.num_dst, D), g.num_edges, np.int64)
        pick_args[shape](src, dst, eids, has_eids, x2, w2, bcast.B, D, loff, roff, acc_out, pos)
    degrees = dg.in_degrees()
    K.finish_coo[grid_1d(g.num_dst * D)](acc_out, pos, src, eids, has_eids, degrees, reduce == "mean", is_sum,
                                         arg_u is not None, arg_e is not None, out, au, ae)
    return out, arg_u, arg_e


def _edge_list(dg, fmt: str):
    """``(src, dst, eids, has_eids)`` on the device: the COO, or a compressed format expanded once."""
    if fmt == "coo":
        src, dst, eids = dg._raw("coo")
        return src, dst, eids, not dg.eids_are_identity("coo")
    key = ("cuda_expanded", fmt)
    if key not in dg._cache:
        from ..kernels.cuda.sort import expand_indptr

        indptr, indices, eids = dg._raw(fmt)
        rows = expand_indptr(indptr, _cuda.empty(indices.size, indices.dtype))
        dg._cache[key] = (rows, indices) if fmt == "csr" else (indices, rows)
    src, dst = dg._cache[key]
    eids = dg._raw(fmt)[2]
    return src, dst, eids, not dg.eids_are_identity(fmt)


def sddmm(g, the_plan, op, L, R, lhs_target, rhs_target, bcast):
    """``out`` ``(num_edge_ids, D)`` on the device (unused edge ids hold 0)."""
    from ..kernels.cuda import sddmm as K
    from ..kernels.cuda.launch import grid_warps

    dg = _cuda.device_graph(g)
    dtype = (L if L is not None else R).dtype
    D = bcast.out_len
    out = (_cuda.empty if g.num_edge_ids == g.num_edges else _cuda.zeros)((g.num_edge_ids, D), dtype)
    if not g.num_edges or not D:
        return out
    rows = {"u": g.num_src, "v": g.num_dst, "e": g.num_edge_ids}
    L2 = _rows_view(L, rows[lhs_target]) if L is not None else _dummy(dtype)
    R2 = _rows_view(R, rows[rhs_target]) if R is not None else _dummy(dtype)
    lt, rt = K.target_codes(lhs_target if L is not None else "u", rhs_target if R is not None else "u")
    src, dst, eids, has_eids = _edge_list(dg, the_plan.format)
    kernel = K.sddmm_kernel(op, bcast.pattern, _accumulator(dtype))
    width = K.group_width(bcast.reduce_size) if op == "dot" else K.element_width(D)
    shape = grid_warps(-(-g.num_edges // (K.WARP // width)))
    kernel[shape](src, dst, eids if has_eids else src, has_eids, L2, R2, lt, rt, bcast.B, D, bcast.reduce_size,
                  width, _offset_table(bcast, "lhs"), _offset_table(bcast, "rhs"), out)
    return out


def _softmax_rows(dg, fmt: str):
    """The rows of ``fmt`` by degree class (:func:`kernels.cuda.edge_softmax.classify_rows`): the short and
    the medium rows, and the chunks of the long ones, each as ``(device array, count)``; made once per
    graph and thresholds (the knobs ``cuda_softmax_*``)."""
    from ..kernels.cuda import edge_softmax as K

    knobs = tuning.current()
    limits = (knobs.cuda_softmax_small_degree, knobs.cuda_softmax_hub_degree, knobs.cuda_softmax_chunk_edges)
    key = ("cuda_softmax_rows", fmt) + limits
    lists = dg._cache.get(key)
    if lists is None:
        small, medium, chunks = K.classify_rows(_cuda.to_host(dg._raw(fmt)[0]), *limits)
        lists = tuple((_cuda.to_device("rows", rows if rows.size else np.zeros(1, np.int64)), int(rows.size))
                      for rows in (small, medium))
        lists += ((_cuda.to_device("rows", chunks if chunks.size else np.zeros((4, 1), np.int64)),
                   int(chunks.shape[1])),)
        dg._cache[key] = lists
    return lists


def edge_softmax(g, the_plan, z):
    """Softmax of ``z`` (device, ``(num_edge_ids, ...)``) over each row of the plan's format."""
    from ..kernels.cuda import edge_softmax as K
    from ..kernels.cuda.launch import grid_blocks, grid_warps

    dg = _cuda.device_graph(g)
    if not g.num_edge_ids:
        return _cuda.empty(z.shape, z.dtype)
    z2 = _rows_view(z, g.num_edge_ids)
    out = (_cuda.empty if g.num_edge_ids == g.num_edges else _cuda.zeros)(z2.shape, z.dtype)
    if g.num_edges and z2.shape[1]:
        indptr, _, eids = dg._raw(the_plan.format)
        has_eids = not dg.eids_are_identity(the_plan.format)
        eids = eids if has_eids else indptr
        acc = _accumulator(z.dtype)
        (small, n_small), (medium, n_medium), (chunks, n_chunks) = _softmax_rows(dg, the_plan.format)
        rows = K.rows_kernel(acc)
        if n_small:
            groups_per_warp = K.WARP // K.SMALL_WIDTH
            rows[grid_warps(-(-n_small // groups_per_warp))](small, indptr, eids, has_eids, z2, out, K.SMALL_WIDTH)
        if n_medium:
            rows[grid_warps(n_medium)](medium, indptr, eids, has_eids, z2, out, K.WARP)
        if n_chunks:
            partial, finish = K.hub_kernels(acc)
            chunk_max = _cuda.empty((n_chunks, z2.shape[1]), np.float64 if acc == "float64" else np.float32)
            chunk_sum = _cuda.empty(chunk_max.shape, chunk_max.dtype)
            shape = grid_blocks(n_chunks, K.HUB_BLOCK)
            partial[shape](chunks, eids, has_eids, z2, chunk_max, chunk_sum)
            finish[shape](chunks, eids, has_eids, z2, chunk_max, chunk_sum, out)
    return out.reshape(*z.shape)
