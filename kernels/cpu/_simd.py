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
``vload(arr, row, col, mask)``                  ``arr[row, col:col+W]``, lanes off the mask read as 0 (no
                                                element outside the array is read)
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

from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic, overload

# the integer lanes live in a module of their own; they are part of this module's set
from ._simd_lanes import (  # noqa: F401
    mask_and,
    mask_or,
    vand,
    vbits,
    vcompress_at,
    vgather,
    viota,
    vlanes,
    vload_at,
    vscatter,
    vshl,
    vshr,
    vstore_at,
    vzero_lanes,
)
from ._simd_type import (  # noqa: F401  (VECTOR_BYTES, lanes: the vector layout, read here by the kernels)
    VECTOR_BYTES,
    Vec,
    array_end,
    as_intp,
    lanes,
    lanewise,
    literal_width,
    llvm_function,
    masked_load,
    masked_store,
    same_vectors,
    splat,
    vector_suffix,
)


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


@intrinsic
def vzeros(typingctx, arr, width):
    """A vector of zeros of ``arr``'s dtype."""
    W = literal_width(width)
    if W is None or not isinstance(arr, types.Array):
        return None
    vt = Vec(arr.dtype, W)

    def codegen(context, builder, signature, args):
        return ir.Constant(context.get_value_type(vt), None)

    return vt(arr, width), codegen


@intrinsic
def vfull(typingctx, arr, value, width):
    """``value`` (cast to ``arr``'s dtype, float or integer) in every lane."""
    W = literal_width(width)
    if W is None or not isinstance(arr, types.Array):
        return None
    vt = Vec(arr.dtype, W)

    def codegen(context, builder, signature, args):
        scalar = context.cast(builder, args[1], signature.args[1], arr.dtype)
        return splat(builder, scalar, W)

    return vt(arr, value, width), codegen


@intrinsic
def vmask(typingctx, n, width):
    """The mask of lanes ``0 .. n-1`` (all of them for ``n >= W``, none for ``n <= 0``)."""
    W = literal_width(width)
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
        return builder.icmp_signed("<", lane_ids, splat(builder, builder.trunc(count, i32), W))

    return vt(n, width), codegen


@intrinsic
def vload(typingctx, arr, row, col, mask):
    """``arr[row, col:col+W]`` on the mask's lanes, 0 elsewhere (off-mask lanes read no memory)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 2 and isinstance(mask, Vec)):
        return None
    vt = Vec(arr.dtype, mask.width)

    def codegen(context, builder, signature, args):
        aty = signature.args[0]
        r = as_intp(context, builder, args[1], signature.args[1])
        c = as_intp(context, builder, args[2], signature.args[2])
        ary, ptr = _element_pointer(context, builder, aty, args[0], r, c)
        _check_span(context, builder, ary, r, c, args[3])
        vty = context.get_value_type(vt)
        return masked_load(builder, ptr, args[3], vty, aty.dtype.bitwidth // 8, array_end(context, builder, aty, ary))

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
        r = as_intp(context, builder, args[1], signature.args[1])
        c = as_intp(context, builder, args[2], signature.args[2])
        ary, ptr = _element_pointer(context, builder, aty, args[0], r, c)
        _check_span(context, builder, ary, r, c, args[4])
        masked_store(builder, args[3], ptr, args[4], aty.dtype.bitwidth // 8)
        return context.get_dummy_value()

    return types.void(arr, row, col, vec, mask), codegen


@intrinsic
def vsplat(typingctx, arr, row, col, width):
    """``arr[row, col]`` in every lane (a broadcast operand: a scalar per edge or per head)."""
    W = literal_width(width)
    if W is None or not (isinstance(arr, types.Array) and arr.ndim == 2):
        return None
    vt = Vec(arr.dtype, W)

    def codegen(context, builder, signature, args):
        aty = signature.args[0]
        r = as_intp(context, builder, args[1], signature.args[1])
        c = as_intp(context, builder, args[2], signature.args[2])
        ary, ptr = _element_pointer(context, builder, aty, args[0], r, c)
        if context.enable_boundscheck:
            shapes = cgutils.unpack_tuple(builder, ary.shape, 2)
            cgutils.do_boundscheck(context, builder, r, shapes[0], 0)
            cgutils.do_boundscheck(context, builder, c, shapes[1], 1)
        return splat(builder, builder.load(ptr), W)

    return vt(arr, row, col, width), codegen


_vadd = lanewise("fadd")
_vsub = lanewise("fsub")
_vmul = lanewise("fmul")
_vdiv = lanewise("fdiv")


def _register_operator(op, fn, int_fn=None):
    @overload(op, inline="always")
    def _ov(a, b):
        if same_vectors(a, b) and isinstance(a.dtype, types.Float):
            return lambda a, b: fn(a, b)
        if int_fn is not None and same_vectors(a, b) and isinstance(a.dtype, types.Integer):
            return lambda a, b: int_fn(a, b)


_vadd_int = lanewise("add", types.Integer)
_register_operator(operator.add, _vadd, _vadd_int)
_register_operator(operator.sub, _vsub)
_register_operator(operator.mul, _vmul)
_register_operator(operator.truediv, _vdiv)


def _compare(pred):
    """A lane-wise compare to a mask: ordered on floats (NaN compares false), signed on integers."""
    @intrinsic
    def impl(typingctx, a, b):
        if not (same_vectors(a, b) and isinstance(a.dtype, (types.Float, types.Integer))):
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
    if not (isinstance(mask, Vec) and isinstance(mask.dtype, types.Boolean) and same_vectors(a, b)
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
        fn = llvm_function(builder, f"llvm.floor.{vector_suffix(vty)}", vty, [vty])
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


