"""Unsigned integer lane arithmetic for the explicit vectors of ``_simd.py`` (the Graph500 generator).

The Kronecker generator advances many independent random streams in lockstep; each step is a product of
31-bit numbers reduced modulo ``2**31 - 1``, a remainder by 10000 and a few compares. Written on
``_simd.Vec`` values these compile to whole-register instructions: a product of two vectors whose lanes
were widened from 32 bits (``vwiden``) is one ``pmuludq`` per four lanes, a remainder by a splat
constant becomes a multiply-high sequence, and ``vbitreverse`` a byte shuffle. Inside ``@njit`` code:

``vor(a, b)``, ``vxor(a, b)``, ``vsub(a, b)``, ``vmul(a, b)``   lane-wise, wrapping (integer vectors)
``vurem(a, b)``                             unsigned remainder (``b`` a splat: a constant divisor)
``vumin(a, b)``                             unsigned minimum
``vult(a, b)``                              unsigned ``a < b``, to a mask
``vwiden(a)``, ``vnarrow(a)``               uint32 lanes zero-extended to uint64, uint64 truncated to uint32
``vbitreverse(a)``                          the bits of every lane in reverse order
``mask_not(m)``, ``mask_any(m)``            the other lanes; whether any lane is on
``vlane(a, i)``                             lane ``i`` (a compile-time constant or not) as a scalar
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from ._simd_type import Vec, lanewise, same_vectors

vor = lanewise("or_", types.Integer)
vor.__doc__ = "Lane-wise bitwise or of two integer vectors."
vxor = lanewise("xor", types.Integer)
vxor.__doc__ = "Lane-wise bitwise exclusive or of two integer vectors."
vsub = lanewise("sub", types.Integer)
vsub.__doc__ = "Lane-wise ``a - b`` of two integer vectors, wrapping."
vmul = lanewise("mul", types.Integer)
vmul.__doc__ = "Lane-wise ``a * b`` of two integer vectors, wrapping (the low half of the product)."
vurem = lanewise("urem", types.Integer)
vurem.__doc__ = "Lane-wise unsigned ``a % b`` (every lane of ``b`` non-zero; a splat compiles to a multiply)."


@intrinsic
def vult(typingctx, a, b):
    """Lanes where ``a < b`` as unsigned integers."""
    if not (same_vectors(a, b) and isinstance(a.dtype, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        return builder.icmp_unsigned("<", args[0], args[1])

    return Vec(types.boolean, a.width)(a, b), codegen


@intrinsic
def vumin(typingctx, a, b):
    """Lane-wise unsigned minimum of two integer vectors."""
    if not (same_vectors(a, b) and isinstance(a.dtype, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        return builder.select(builder.icmp_unsigned("<", args[0], args[1]), args[0], args[1])

    return a(a, b), codegen


@intrinsic
def vwiden(typingctx, a):
    """uint32 lanes zero-extended to uint64 (a product of two widened vectors is one unsigned 32x32->64
    multiply per lane)."""
    if not (isinstance(a, Vec) and a.dtype == types.uint32):
        return None

    def codegen(context, builder, signature, args):
        return builder.zext(args[0], ir.VectorType(ir.IntType(64), a.width))

    return Vec(types.uint64, a.width)(a), codegen


@intrinsic
def vnarrow(typingctx, a):
    """uint64 lanes truncated to their low 32 bits (uint32 lanes)."""
    if not (isinstance(a, Vec) and a.dtype == types.uint64):
        return None

    def codegen(context, builder, signature, args):
        return builder.trunc(args[0], ir.VectorType(ir.IntType(32), a.width))

    return Vec(types.uint32, a.width)(a), codegen


@intrinsic
def vbitreverse(typingctx, a):
    """Lane-wise bit reversal of an integer vector (LLVM's ``llvm.bitreverse``)."""
    if not (isinstance(a, Vec) and isinstance(a.dtype, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        vty = args[0].type
        name = f"llvm.bitreverse.v{vty.count}i{vty.element.width}"
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vty, [vty]), name)
        return builder.call(fn, [args[0]])

    return a(a), codegen


@intrinsic
def mask_not(typingctx, m):
    """The lanes off the mask."""
    if not (isinstance(m, Vec) and isinstance(m.dtype, types.Boolean)):
        return None

    def codegen(context, builder, signature, args):
        return builder.not_(args[0])

    return m(m), codegen


@intrinsic
def mask_any(typingctx, m):
    """Whether any lane of the mask is on."""
    if not (isinstance(m, Vec) and isinstance(m.dtype, types.Boolean)):
        return None

    def codegen(context, builder, signature, args):
        bits = builder.bitcast(args[0], ir.IntType(m.width))
        return builder.icmp_unsigned("!=", bits, ir.Constant(ir.IntType(m.width), 0))

    return types.boolean(m), codegen


@intrinsic
def vlane(typingctx, a, index):
    """Lane ``index`` of the vector as a scalar (the caller keeps ``index`` below the width)."""
    if not (isinstance(a, Vec) and isinstance(index, types.Integer)):
        return None

    def codegen(context, builder, signature, args):
        idx = context.cast(builder, args[1], signature.args[1], types.int32)
        return builder.extract_element(args[0], idx)

    return a.dtype(a, index), codegen
