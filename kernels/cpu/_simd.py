"""Explicit SIMD vectors for the CPU kernels: an LLVM ``<W x T>`` value as a Numba type.

Why: a g-SpMM row reduction ``acc += x[u, 0:16]`` over the in-edges of a row is one 512-bit load and add
per edge when the accumulator lives in a vector register. Numba gives no way to say that: it compiles with
LLVM's SLP vectoriser switched off (numba#8705), so sixteen scalar accumulators stay sixteen ``vaddss``,
and an accumulator row in memory puts a store-to-load round trip on every edge. With vector accumulators
(two alternating) copy_u_sum at F = 16 runs markedly faster than with scalar ones (figures in
docs/performance.md, section 'CPU: what the kernels' design choices are worth').

Inside ``@njit`` code (every width ``W`` is a compile-time constant, every index the caller's to keep in
range, exactly as for the arrays' own unchecked indexing):

``vzeros(arr, W)``, ``vfull(arr, value, W)``   vectors of ``arr``'s dtype
``vmask(n, W)``                                 lanes ``0..n-1`` on (a tail of fewer than ``W`` elements)
``vload(arr, row, col, mask)``                  ``arr[row, col:col+W]``, lanes off the mask read as 0 and
                                                touch no memory (a masked load never faults)
``vstore(arr, row, col, vec, mask)``            the lanes on the mask, nothing else
``vsplat(arr, row, col, W)``                    ``arr[row, col]`` in every lane
``a + b``, ``a - b``, ``a * b``, ``a / b``      lane-wise (vectors of one type)
``vmax(acc, val)``, ``vmin(acc, val)``          lane-wise, where NaN in ``val`` never wins
``vgt(a, b)``, ``vlt(a, b)``, ``vselect(m, a, b)``  compare to a mask, pick lanes (arg outputs)
``vsum(vec)``                                   horizontal sum (a fixed tree: deterministic)
``vfloor(vec)``, ``vpow2(n)``                      lane-wise floor, and ``2 ** n`` for whole ``n`` (exp)

Integer lanes (the BFS frontier scan, the GPMA merge): ``vload_at``/``vstore_at`` (1-D spans), ``vgather``,
``vscatter``, ``vcompress_at`` (the lanes on a mask, packed), ``veq``/``vne``/``vlt``/``vgt``, ``vand``,
``vshl``/``vshr``, ``+``, ``viota``, masks by lane range (``vlanes``) and ``mask_and``/``mask_or``, and
``vbits`` to walk a mask's lanes as an integer.

Under ``NUMBA_BOUNDSCHECK=1`` loads and stores check the row and the first and last lane on the mask,
as Numba checks its own indexing, so tests/test_bounds.py covers the vector paths too.
"""

from __future__ import annotations

import operator

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.core.datamodel import PrimitiveModel
from numba.extending import intrinsic, overload, register_model

# One vector is one cache line: 16 float32 or 8 float64 lanes, one AVX-512 register (two AVX2 ones).
VECTOR_BYTES = 64


def lanes(dtype) -> int:
    """Lanes of one vector of ``dtype``."""
    return VECTOR_BYTES // np.dtype(dtype).itemsize


class Vec(types.Type):
    """The Numba type of a ``W``-lane vector of ``dtype`` (float, integer or boolean for masks)."""

    def __init__(self, dtype, width):
        self.dtype = dtype
        self.width = width
        super().__init__(name=f"Vec({dtype} x {width})")


@register_model(Vec)
class _VecModel(PrimitiveModel):
    def __init__(self, dmm, fe_type):
        if isinstance(fe_type.dtype, types.Boolean):
            elt = ir.IntType(1)
        else:
            elt = dmm.lookup(fe_type.dtype).get_value_type()
        super().__init__(dmm, fe_type, ir.VectorType(elt, fe_type.width))


def _literal_width(width):
    return width.literal_value if isinstance(width, types.IntegerLiteral) else None


def _element_pointer(context, builder, aty, arr, row, col):
    ary = context.make_array(aty)(context, builder, arr)
    return ary, cgutils.get_item_pointer(context, builder, aty, ary, [row, col], wraparound=False, boundscheck=False)


def _check_span(context, builder, ary, row, col, mask):
    """Under NUMBA_BOUNDSCHECK: the row, and the first and last column on the mask, are in range."""
    if not context.enable_boundscheck:
        return
    shapes = cgutils.unpack_tuple(builder, ary.shape, 2)
    cgutils.do_boundscheck(context, builder, row, shapes[0], 0)
    width = mask.type.count
    i64 = ir.IntType(64)
    on = builder.zext(builder.bitcast(mask, ir.IntType(width)), i64)
    count = builder.call(cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64]), "llvm.ctpop.i64"),
                         [on])
    with builder.if_then(builder.icmp_signed(">", count, ir.Constant(i64, 0))):
        cgutils.do_boundscheck(context, builder, col, shapes[1], 1)
        last = builder.add(col, builder.sub(count, ir.Constant(i64, 1)))
        cgutils.do_boundscheck(context, builder, last, shapes[1], 1)


def _index(context, builder, value, ty):
    return context.cast(builder, value, ty, types.intp)


@intrinsic
def vzeros(typingctx, arr, width):
    """A vector of zeros of ``arr``'s dtype."""
    W = _literal_width(width)
    if W is None or not isinstance(arr, types.Array):
        return None
    vt = Vec(arr.dtype, W)

    def codegen(context, builder, signature, args):
        return ir.Constant(context.get_value_type(vt), None)

    return vt(arr, width), codegen


@intrinsic
def vfull(typingctx, arr, value, width):
    """``value`` (cast to ``arr``'s dtype, float or integer) in every lane."""
    W = _literal_width(width)
    if W is None or not isinstance(arr, types.Array):
        return None
    vt = Vec(arr.dtype, W)

    def codegen(context, builder, signature, args):
        scalar = context.cast(builder, args[1], signature.args[1], arr.dtype)
        return _broadcast(builder, scalar, W)

    return vt(arr, value, width), codegen


def _broadcast(builder, scalar, W):
    vty = ir.VectorType(scalar.type, W)
    one = builder.insert_element(ir.Constant(vty, ir.Undefined), scalar, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(one, ir.Constant(vty, ir.Undefined), ir.Constant(ir.VectorType(ir.IntType(32), W),
                                                                                  [0] * W))


@intrinsic
def vmask(typingctx, n, width):
    """The mask of lanes ``0 .. n-1`` (all of them for ``n >= W``, none for ``n <= 0``)."""
    W = _literal_width(width)
    if W is None or not isinstance(n, types.Integer):
        return None
    vt = Vec(types.boolean, W)

    def codegen(context, builder, signature, args):
        # clamp to [0, W] in 64 bits, then compare 32-bit lanes (one vector compare on AVX-512)
        i64, i32 = ir.IntType(64), ir.IntType(32)
        count = context.cast(builder, args[0], signature.args[0], types.int64)
        count = builder.select(builder.icmp_signed(">", count, ir.Constant(i64, W)), ir.Constant(i64, W), count)
        count = builder.select(builder.icmp_signed("<", count, ir.Constant(i64, 0)), ir.Constant(i64, 0), count)
        lane_ids = ir.Constant(ir.VectorType(i32, W), list(range(W)))
        return builder.icmp_signed("<", lane_ids, _broadcast(builder, builder.trunc(count, i32), W))

    return vt(n, width), codegen


def _masked_intrinsic(builder, name, ret, arg_types):
    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(ret, arg_types), name)


def _vector_suffix(vty):
    elt = vty.element
    if isinstance(elt, ir.FloatType):
        code = "f32"
    elif isinstance(elt, ir.DoubleType):
        code = "f64"
    else:
        code = f"i{elt.width}"
    return f"v{vty.count}{code}"


@intrinsic
def vload(typingctx, arr, row, col, mask):
    """``arr[row, col:col+W]`` on the mask's lanes, 0 elsewhere (off-mask lanes read no memory)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 2 and isinstance(mask, Vec)):
        return None
    vt = Vec(arr.dtype, mask.width)

    def codegen(context, builder, signature, args):
        aty = signature.args[0]
        r = _index(context, builder, args[1], signature.args[1])
        c = _index(context, builder, args[2], signature.args[2])
        ary, ptr = _element_pointer(context, builder, aty, args[0], r, c)
        _check_span(context, builder, ary, r, c, args[3])
        vty = context.get_value_type(vt)
        fn = _masked_intrinsic(builder, f"llvm.masked.load.{_vector_suffix(vty)}.p0", vty,
                               [ptr.type, ir.IntType(32), args[3].type, vty])
        align = ir.Constant(ir.IntType(32), aty.dtype.bitwidth // 8)
        return builder.call(fn, [ptr, align, args[3], ir.Constant(vty, None)])

    return vt(arr, row, col, mask), codegen


@intrinsic
def vstore(typingctx, arr, row, col, vec, mask):
    """``arr[row, col:col+W] = vec`` on the mask's lanes only."""
    if not (isinstance(arr, types.Array) and arr.ndim == 2 and isinstance(vec, Vec) and isinstance(mask, Vec)):
        return None
    if vec.width != mask.width or vec.dtype != arr.dtype:
        return None

    def codegen(context, builder, signature, args):
        aty = signature.args[0]
        r = _index(context, builder, args[1], signature.args[1])
        c = _index(context, builder, args[2], signature.args[2])
        ary, ptr = _element_pointer(context, builder, aty, args[0], r, c)
        _check_span(context, builder, ary, r, c, args[4])
        vty = args[3].type
        fn = _masked_intrinsic(builder, f"llvm.masked.store.{_vector_suffix(vty)}.p0", ir.VoidType(),
                               [vty, ptr.type, ir.IntType(32), args[4].type])
        builder.call(fn, [args[3], ptr, ir.Constant(ir.IntType(32), aty.dtype.bitwidth // 8), args[4]])
        return context.get_dummy_value()

    return types.void(arr, row, col, vec, mask), codegen


@intrinsic
def vsplat(typingctx, arr, row, col, width):
    """``arr[row, col]`` in every lane (a broadcast operand: a scalar per edge or per head)."""
    W = _literal_width(width)
    if W is None or not (isinstance(arr, types.Array) and arr.ndim == 2):
        return None
    vt = Vec(arr.dtype, W)

    def codegen(context, builder, signature, args):
        aty = signature.args[0]
        r = _index(context, builder, args[1], signature.args[1])
        c = _index(context, builder, args[2], signature.args[2])
        ary, ptr = _element_pointer(context, builder, aty, args[0], r, c)
        if context.enable_boundscheck:
            shapes = cgutils.unpack_tuple(builder, ary.shape, 2)
            cgutils.do_boundscheck(context, builder, r, shapes[0], 0)
            cgutils.do_boundscheck(context, builder, c, shapes[1], 1)
        return _broadcast(builder, builder.load(ptr), W)

    return vt(arr, row, col, width), codegen


def _same_vectors(a, b):
    return isinstance(a, Vec) and a == b


def _binop(name, kind=types.Float):
    """A lane-wise intrinsic: the IR builder's ``name`` on two vectors of one type whose lanes are ``kind``
    (float, integer, or boolean for masks)."""
    @intrinsic
    def impl(typingctx, a, b):
        if not (_same_vectors(a, b) and isinstance(a.dtype, kind)):
            return None

        def codegen(context, builder, signature, args):
            return getattr(builder, name)(args[0], args[1])

        return a(a, b), codegen

    return impl


_vadd = _binop("fadd")
_vsub = _binop("fsub")
_vmul = _binop("fmul")
_vdiv = _binop("fdiv")


def _register_operator(op, fn, int_fn=None):
    @overload(op, inline="always")
    def _ov(a, b):
        if _same_vectors(a, b) and isinstance(a.dtype, types.Float):
            return lambda a, b: fn(a, b)
        if int_fn is not None and _same_vectors(a, b) and isinstance(a.dtype, types.Integer):
            return lambda a, b: int_fn(a, b)


_vadd_int = _binop("add", types.Integer)
_register_operator(operator.add, _vadd, _vadd_int)
_register_operator(operator.sub, _vsub)
_register_operator(operator.mul, _vmul)
_register_operator(operator.truediv, _vdiv)


def _compare(pred):
    """A lane-wise compare to a mask: ordered on floats (NaN compares false), signed on integers."""
    @intrinsic
    def impl(typingctx, a, b):
        if not (_same_vectors(a, b) and isinstance(a.dtype, (types.Float, types.Integer))):
            return None
        mt = Vec(types.boolean, a.width)
        is_float = isinstance(a.dtype, types.Float)

        def codegen(context, builder, signature, args):
            if is_float:
                return builder.fcmp_ordered(pred, args[0], args[1])
            return builder.icmp_signed(pred, args[0], args[1])

        return mt(a, b), codegen

    return impl


vgt = _compare(">")
vgt.__doc__ = "Lanes where ``a > b`` (false where either is NaN)."
vlt = _compare("<")
vlt.__doc__ = "Lanes where ``a < b`` (false where either is NaN)."
veq = _compare("==")
veq.__doc__ = "Lanes where ``a == b`` (false where either is NaN)."
vne = _compare("!=")
vne.__doc__ = "Lanes where ``a != b`` (integer lanes; on floats an ordered compare, false for NaN)."


@intrinsic
def vselect(typingctx, mask, a, b):
    """``a`` on the mask's lanes, ``b`` elsewhere."""
    if not (isinstance(mask, Vec) and isinstance(mask.dtype, types.Boolean) and _same_vectors(a, b)
            and a.width == mask.width):
        return None

    def codegen(context, builder, signature, args):
        return builder.select(args[0], args[1], args[2])

    return a(mask, a, b), codegen


@njit(inline="always")
def vmax(acc, val):
    """Lane-wise ``val if val > acc else acc``: NaN in ``val`` never wins, ties keep ``acc``."""
    return vselect(vgt(val, acc), val, acc)


@njit(inline="always")
def vmin(acc, val):
    """Lane-wise ``val if val < acc else acc``: NaN in ``val`` never wins, ties keep ``acc``."""
    return vselect(vlt(val, acc), val, acc)


@intrinsic
def vfloor(typingctx, vec):
    """Lane-wise ``floor`` of a float vector (one instruction: LLVM's ``llvm.floor``)."""
    if not (isinstance(vec, Vec) and isinstance(vec.dtype, types.Float)):
        return None

    def codegen(context, builder, signature, args):
        vty = args[0].type
        fn = _masked_intrinsic(builder, f"llvm.floor.{_vector_suffix(vty)}", vty, [vty])
        return builder.call(fn, [args[0]])

    return vec(vec), codegen


@intrinsic
def vpow2(typingctx, vec):
    """Lane-wise ``2.0 ** n`` for a float vector of whole numbers ``n`` that are normal exponents (-126 to
    127 for float32, -1022 to 1023 for float64; the caller keeps them there): ``n`` plus the bias, moved
    into the exponent field. The plain-arithmetic replacement of a ``2 ** n`` table gather."""
    if not (isinstance(vec, Vec) and isinstance(vec.dtype, types.Float)):
        return None
    bits, mantissa, bias = (32, 23, 127) if vec.dtype.bitwidth == 32 else (64, 52, 1023)

    def codegen(context, builder, signature, args):
        ity = ir.VectorType(ir.IntType(bits), vec.width)
        n = builder.fptosi(args[0], ity)
        biased = builder.add(n, ir.Constant(ity, [bias] * vec.width))
        field = builder.shl(biased, ir.Constant(ity, [mantissa] * vec.width))
        return builder.bitcast(field, args[0].type)

    return vec(vec), codegen


# An integer vector (arg outputs, ids, shift counts) is the same splat as a float one: ``vint`` names it.
vint = vfull


@intrinsic
def vsum(typingctx, vec):
    """The sum of the lanes by a fixed halving tree (the same order on every call)."""
    if not (isinstance(vec, Vec) and isinstance(vec.dtype, types.Float)) or vec.width & (vec.width - 1):
        return None

    def codegen(context, builder, signature, args):
        v = args[0]
        width = vec.width
        i32 = ir.IntType(32)
        while width > 1:
            half = width // 2
            lo = builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(i32, half), list(range(half))))
            hi = builder.shuffle_vector(v, v, ir.Constant(ir.VectorType(i32, half), list(range(half, width))))
            v = builder.fadd(lo, hi)
            width = half
        return builder.extract_element(v, ir.Constant(i32, 0))

    return vec.dtype(vec), codegen


# ---- integer lanes: 1-D loads, gathers and bit tests (the BFS frontier scan) ----


@intrinsic
def vload_at(typingctx, arr, start, mask):
    """``arr[start:start+W]`` of a 1-D array on the mask's lanes, 0 elsewhere (no memory read there)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(mask, Vec)):
        return None
    vt = Vec(arr.dtype, mask.width)

    def codegen(context, builder, signature, args):
        aty = signature.args[0]
        ary = context.make_array(aty)(context, builder, args[0])
        first = _index(context, builder, args[1], signature.args[1])
        ptr = cgutils.get_item_pointer(context, builder, aty, ary, [first], wraparound=False, boundscheck=False)
        if context.enable_boundscheck:
            _check_lanes(context, builder, ary, first, args[2])
        vty = context.get_value_type(vt)
        fn = _masked_intrinsic(builder, f"llvm.masked.load.{_vector_suffix(vty)}.p0", vty,
                               [ptr.type, ir.IntType(32), args[2].type, vty])
        return builder.call(fn, [ptr, ir.Constant(ir.IntType(32), aty.dtype.bitwidth // 8), args[2],
                                 ir.Constant(vty, None)])

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
    addr = builder.add(_broadcast(builder, builder.ptrtoint(base, i64), W), builder.mul(idx64, size))
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
        fn = _masked_intrinsic(builder, f"llvm.masked.gather.{_vector_suffix(vty)}.v{index.width}p0", vty,
                               [ptrs.type, ir.IntType(32), args[2].type, vty])
        return builder.call(fn, [ptrs, ir.Constant(ir.IntType(32), arr.dtype.bitwidth // 8), args[2],
                                 ir.Constant(vty, None)])

    return vt(arr, index, mask), codegen


vand = _binop("and_", types.Integer)
vand.__doc__ = "Lane-wise bitwise and of two integer vectors."
vshl = _binop("shl", types.Integer)
vshl.__doc__ = "Lane-wise ``a << b`` of two integer vectors (each lane by its own count)."
vshr = _binop("lshr", types.Integer)
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
    W = _literal_width(width)
    if W is None or not (isinstance(lo, types.Integer) and isinstance(hi, types.Integer)):
        return None
    vt = Vec(types.boolean, W)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        low = context.cast(builder, args[0], signature.args[0], types.int64)
        high = context.cast(builder, args[1], signature.args[1], types.int64)
        ids = ir.Constant(ir.VectorType(i64, W), list(range(W)))
        return builder.and_(builder.icmp_signed(">=", ids, _broadcast(builder, low, W)),
                            builder.icmp_signed("<", ids, _broadcast(builder, high, W)))

    return vt(lo, hi, width), codegen


mask_and = _binop("and_", types.Boolean)
mask_and.__doc__ = "Lanes on both masks."
mask_or = _binop("or_", types.Boolean)
mask_or.__doc__ = "Lanes on either mask."


@intrinsic
def viota(typingctx, arr, start, width):
    """``start, start + 1, ..., start + W - 1`` in lanes of ``arr``'s integer dtype."""
    W = _literal_width(width)
    if W is None or not (isinstance(arr, types.Array) and isinstance(arr.dtype, types.Integer)):
        return None
    vt = Vec(arr.dtype, W)

    def codegen(context, builder, signature, args):
        elt = context.get_value_type(arr.dtype)
        first = context.cast(builder, args[1], signature.args[1], arr.dtype)
        return builder.add(_broadcast(builder, first, W), ir.Constant(ir.VectorType(elt, W), list(range(W))))

    return vt(arr, start, width), codegen


def _is_span_store(arr, vec, mask):
    return (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(vec, Vec) and isinstance(mask, Vec)
            and vec.width == mask.width and vec.dtype == arr.dtype)


def _span_pointer(context, builder, aty, arr, start, start_ty):
    ary = context.make_array(aty)(context, builder, arr)
    first = _index(context, builder, start, start_ty)
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
        vty = args[2].type
        fn = _masked_intrinsic(builder, f"llvm.masked.store.{_vector_suffix(vty)}.p0", ir.VoidType(),
                               [vty, ptr.type, ir.IntType(32), args[3].type])
        builder.call(fn, [args[2], ptr, ir.Constant(ir.IntType(32), arr.dtype.bitwidth // 8), args[3]])
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
                                         _broadcast(builder, count, width))
            _check_lanes(context, builder, ary, first, prefix)
        vty = args[2].type
        fn = _masked_intrinsic(builder, f"llvm.masked.compressstore.{_vector_suffix(vty)}", ir.VoidType(),
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
        fn = _masked_intrinsic(builder, f"llvm.masked.scatter.{_vector_suffix(vty)}.v{index.width}p0", ir.VoidType(),
                               [vty, ptrs.type, ir.IntType(32), args[3].type])
        builder.call(fn, [args[2], ptrs, ir.Constant(ir.IntType(32), arr.dtype.bitwidth // 8), args[3]])
        return context.get_dummy_value()

    return types.void(arr, index, vals, mask), codegen
