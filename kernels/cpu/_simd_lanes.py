"""Integer lanes of the explicit SIMD vectors (kernels/cpu/_simd.py documents the whole set): 1-D loads and
stores, gathers, scatters, compress-stores, masks by lane range and bit tests, for the BFS frontier scan
and the GPMA merge. Under ``NUMBA_BOUNDSCHECK=1`` every lane on the mask is checked as Numba checks its
own indexing."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ._simd_type import (
    Vec,
    array_end,
    as_intp,
    lanewise,
    literal_width,
    llvm_function,
    masked_load,
    masked_store,
    splat,
    vector_suffix,
)


@intrinsic
def vload_at(typingctx, arr, start, mask):
    """``arr[start:start+W]`` of a 1-D array on the mask's lanes, 0 elsewhere (no memory read there)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(mask, Vec)):
        return None
    vt = Vec(arr.dtype, mask.width)

    def codegen(context, builder, signature, args):
        aty = signature.args[0]
        ary = context.make_array(aty)(context, builder, args[0])
        first = as_intp(context, builder, args[1], signature.args[1])
        ptr = cgutils.get_item_pointer(context, builder, aty, ary, [first], wraparound=False, boundscheck=False)
        if context.enable_boundscheck:
            _check_lanes(context, builder, ary, first, args[2])
        vty = context.get_value_type(vt)
        return masked_load(builder, ptr, args[2], vty, aty.dtype.bitwidth // 8, array_end(context, builder, aty, ary))

    return vt(arr, start, mask), codegen


def _check_lanes(context, builder, ary, first, mask):
    """Under NUMBA_BOUNDSCHECK: the lowest and the highest lane on the mask of a 1-D span are in range
    (any mask, not only a prefix: the merge kernels write lanes ``lo .. hi-1`` of a leaf)."""
    (size,) = cgutils.unpack_tuple(builder, ary.shape, 1)
    width = mask.type.count
    i64 = ir.IntType(64)
    on = builder.zext(builder.bitcast(mask, ir.IntType(width)), i64)
    flag = ir.Constant(ir.IntType(1), 1)
    count_fn = ir.FunctionType(i64, [i64, ir.IntType(1)])
    with builder.if_then(builder.icmp_unsigned("!=", on, ir.Constant(i64, 0))):
        low = builder.call(cgutils.get_or_insert_function(builder.module, count_fn, "llvm.cttz.i64"), [on, flag])
        lead = builder.call(cgutils.get_or_insert_function(builder.module, count_fn, "llvm.ctlz.i64"), [on, flag])
        high = builder.sub(ir.Constant(i64, 63), lead)
        cgutils.do_boundscheck(context, builder, builder.add(first, low), size, 0)
        cgutils.do_boundscheck(context, builder, builder.add(first, high), size, 0)


def _lane_pointers(context, builder, aty, arr, index, index_ty, mask):
    """A vector of pointers to ``arr[index[i]]`` (a 1-D array), each lane on the mask bounds-checked under
    NUMBA_BOUNDSCHECK; the lane addresses are integers first (llvmlite's gep takes no vector index)."""
    ary = context.make_array(aty)(context, builder, arr)
    W = index_ty.width
    i64 = ir.IntType(64)
    base = builder.bitcast(ary.data, context.get_value_type(aty.dtype).as_pointer())
    idx64 = builder.sext(index, ir.VectorType(i64, W)) if index_ty.dtype.bitwidth < 64 else index
    if context.enable_boundscheck:
        (size,) = cgutils.unpack_tuple(builder, ary.shape, 1)
        for lane in range(W):
            on = builder.extract_element(mask, ir.Constant(ir.IntType(32), lane))
            with builder.if_then(on):
                cgutils.do_boundscheck(context, builder, builder.extract_element(
                    idx64, ir.Constant(ir.IntType(32), lane)), size, 0)
    size = ir.Constant(ir.VectorType(i64, W), [aty.dtype.bitwidth // 8] * W)
    addr = builder.add(splat(builder, builder.ptrtoint(base, i64), W), builder.mul(idx64, size))
    return builder.inttoptr(addr, ir.VectorType(base.type, W))


def _is_lane_index(arr, index, mask):
    return (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(index, Vec)
            and isinstance(index.dtype, types.Integer) and isinstance(mask, Vec) and mask.width == index.width)


@intrinsic
def vgather(typingctx, arr, index, mask):
    """``arr[index[i]]`` for each lane ``i`` on the mask, 0 elsewhere (a hardware gather where there is one;
    off-mask lanes read no memory). The caller keeps the indices on the mask in range."""
    if not _is_lane_index(arr, index, mask):
        return None
    vt = Vec(arr.dtype, index.width)

    def codegen(context, builder, signature, args):
        ptrs = _lane_pointers(context, builder, signature.args[0], args[0], args[1], index, args[2])
        vty = ir.VectorType(context.get_value_type(arr.dtype), index.width)
        fn = llvm_function(builder, f"llvm.masked.gather.{vector_suffix(vty)}.v{index.width}p0", vty,
                               [ptrs.type, ir.IntType(32), args[2].type, vty])
        return builder.call(fn, [ptrs, ir.Constant(ir.IntType(32), arr.dtype.bitwidth // 8), args[2],
                                 ir.Constant(vty, None)])

    return vt(arr, index, mask), codegen


vand = lanewise("and_", types.Integer)
vand.__doc__ = "Lane-wise bitwise and of two integer vectors."
vshl = lanewise("shl", types.Integer)
vshl.__doc__ = "Lane-wise ``a << b`` of two integer vectors (each lane by its own count)."
vshr = lanewise("lshr", types.Integer)
vshr.__doc__ = "Lane-wise logical ``a >> b`` of two integer vectors (each lane by its own count)."


@intrinsic
def vzero_lanes(typingctx, vec, mask):
    """The lanes on ``mask`` where the integer ``vec`` is 0."""
    if not (isinstance(vec, Vec) and isinstance(vec.dtype, types.Integer) and isinstance(mask, Vec)
            and mask.width == vec.width):
        return None

    def codegen(context, builder, signature, args):
        zero = ir.Constant(args[0].type, None)
        return builder.and_(builder.icmp_unsigned("==", args[0], zero), args[1])

    return mask(vec, mask), codegen


@intrinsic
def vbits(typingctx, mask):
    """The mask as an integer: bit ``i`` set for lane ``i`` on (iterate the rare set lanes with it)."""
    if not (isinstance(mask, Vec) and isinstance(mask.dtype, types.Boolean)):
        return None

    def codegen(context, builder, signature, args):
        return builder.zext(builder.bitcast(args[0], ir.IntType(mask.width)), ir.IntType(64))

    return types.int64(mask), codegen


# ---- masks by lane range, 1-D stores, compress and scatter (the GPMA merge, kernels/cpu/gpma.py) ----


@intrinsic
def vlanes(typingctx, lo, hi, width):
    """The mask of lanes ``i`` with ``lo <= i < hi`` (either bound may lie outside ``0 .. W``)."""
    W = literal_width(width)
    if W is None or not (isinstance(lo, types.Integer) and isinstance(hi, types.Integer)):
        return None
    vt = Vec(types.boolean, W)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        low = context.cast(builder, args[0], signature.args[0], types.int64)
        high = context.cast(builder, args[1], signature.args[1], types.int64)
        ids = ir.Constant(ir.VectorType(i64, W), list(range(W)))
        return builder.and_(builder.icmp_signed(">=", ids, splat(builder, low, W)),
                            builder.icmp_signed("<", ids, splat(builder, high, W)))

    return vt(lo, hi, width), codegen


mask_and = lanewise("and_", types.Boolean)
mask_and.__doc__ = "Lanes on both masks."
mask_or = lanewise("or_", types.Boolean)
mask_or.__doc__ = "Lanes on either mask."


@intrinsic
def viota(typingctx, arr, start, width):
    """``start, start + 1, ..., start + W - 1`` in lanes of ``arr``'s integer dtype."""
    W = literal_width(width)
    if W is None or not (isinstance(arr, types.Array) and isinstance(arr.dtype, types.Integer)):
        return None
    vt = Vec(arr.dtype, W)

    def codegen(context, builder, signature, args):
        elt = context.get_value_type(arr.dtype)
        first = context.cast(builder, args[1], signature.args[1], arr.dtype)
        return builder.add(splat(builder, first, W), ir.Constant(ir.VectorType(elt, W), list(range(W))))

    return vt(arr, start, width), codegen


def _is_span_store(arr, vec, mask):
    return (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(vec, Vec) and isinstance(mask, Vec)
            and vec.width == mask.width and vec.dtype == arr.dtype)


def _span_pointer(context, builder, aty, arr, start, start_ty):
    ary = context.make_array(aty)(context, builder, arr)
    first = as_intp(context, builder, start, start_ty)
    return ary, first, cgutils.get_item_pointer(context, builder, aty, ary, [first], wraparound=False,
                                                boundscheck=False)


@intrinsic
def vstore_at(typingctx, arr, start, vec, mask):
    """``arr[start:start+W] = vec`` of a 1-D array on the mask's lanes only (others untouched)."""
    if not _is_span_store(arr, vec, mask):
        return None

    def codegen(context, builder, signature, args):
        ary, first, ptr = _span_pointer(context, builder, signature.args[0], args[0], args[1], signature.args[1])
        if context.enable_boundscheck:
            _check_lanes(context, builder, ary, first, args[3])
        masked_store(builder, args[2], ptr, args[3], arr.dtype.bitwidth // 8)
        return context.get_dummy_value()

    return types.void(arr, start, vec, mask), codegen


@intrinsic
def vcompress_at(typingctx, arr, start, vec, mask):
    """The lanes of ``vec`` on the mask, in lane order, to ``arr[start:start+n]`` (``n`` lanes on; one
    ``vpcompress`` on AVX-512). The caller adds ``n`` (``popcount(vbits(mask))``) to its count."""
    if not _is_span_store(arr, vec, mask):
        return None

    def codegen(context, builder, signature, args):
        ary, first, ptr = _span_pointer(context, builder, signature.args[0], args[0], args[1], signature.args[1])
        if context.enable_boundscheck:
            # the n written elements are a prefix of the span, whatever lanes the mask has on
            width = mask.width
            i64 = ir.IntType(64)
            on = builder.zext(builder.bitcast(args[3], ir.IntType(width)), i64)
            count = builder.call(cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64]),
                                                                "llvm.ctpop.i64"), [on])
            prefix = builder.icmp_signed("<", ir.Constant(ir.VectorType(i64, width), list(range(width))),
                                         splat(builder, count, width))
            _check_lanes(context, builder, ary, first, prefix)
        vty = args[2].type
        fn = llvm_function(builder, f"llvm.masked.compressstore.{vector_suffix(vty)}", ir.VoidType(),
                               [vty, ptr.type, args[3].type])
        builder.call(fn, [args[2], ptr, args[3]])
        return context.get_dummy_value()

    return types.void(arr, start, vec, mask), codegen


@intrinsic
def vscatter(typingctx, arr, index, vals, mask):
    """``arr[index[i]] = vals[i]`` for each lane ``i`` on the mask, in lane order (a hardware scatter where
    there is one). The caller keeps the indices on the mask in range."""
    if not (_is_lane_index(arr, index, mask) and isinstance(vals, Vec) and vals.dtype == arr.dtype
            and vals.width == index.width):
        return None

    def codegen(context, builder, signature, args):
        ptrs = _lane_pointers(context, builder, signature.args[0], args[0], args[1], index, args[3])
        vty = args[2].type
        fn = llvm_function(builder, f"llvm.masked.scatter.{vector_suffix(vty)}.v{index.width}p0", ir.VoidType(),
                               [vty, ptrs.type, ir.IntType(32), args[3].type])
        builder.call(fn, [args[2], ptrs, ir.Constant(ir.IntType(32), arr.dtype.bitwidth // 8), args[3]])
        return context.get_dummy_value()

    return types.void(arr, index, vals, mask), codegen
