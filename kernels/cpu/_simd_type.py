"""The vector type under kernels/cpu/_simd.py: an LLVM ``<W x T>`` value as a Numba type, and the IR
helpers every vector intrinsic shares (literal widths, splats, masked LLVM intrinsics, lane-wise ops)."""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.core.datamodel import PrimitiveModel
from numba.extending import intrinsic, register_model

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


def literal_width(width):
    """The width a vector intrinsic was given, when it is a compile-time literal (else None: no match)."""
    return width.literal_value if isinstance(width, types.IntegerLiteral) else None


def as_intp(context, builder, value, ty):
    """An integer argument of type ``ty`` as an index (``intp``)."""
    return context.cast(builder, value, ty, types.intp)


def splat(builder, scalar, W):
    """``scalar`` in each of ``W`` lanes."""
    vty = ir.VectorType(scalar.type, W)
    one = builder.insert_element(ir.Constant(vty, ir.Undefined), scalar, ir.Constant(ir.IntType(32), 0))
    return builder.shuffle_vector(one, ir.Constant(vty, ir.Undefined), ir.Constant(ir.VectorType(ir.IntType(32), W),
                                                                                  [0] * W))


def llvm_function(builder, name, ret, arg_types):
    """The LLVM intrinsic ``name`` (declared in the module on first use)."""
    return cgutils.get_or_insert_function(builder.module, ir.FunctionType(ret, arg_types), name)


def vector_suffix(vty):
    """The type suffix of an overloaded LLVM intrinsic for vector type ``vty`` (``v16f32``, ``v8i64``)."""
    elt = vty.element
    if isinstance(elt, ir.FloatType):
        code = "f32"
    elif isinstance(elt, ir.DoubleType):
        code = "f64"
    else:
        code = f"i{elt.width}"
    return f"v{vty.count}{code}"


def same_vectors(a, b):
    """Whether two Numba types are the same vector type."""
    return isinstance(a, Vec) and a == b


def lanewise(name, kind=types.Float):
    """A lane-wise intrinsic: the IR builder's ``name`` on two vectors of one type whose lanes are ``kind``
    (float, integer, or boolean for masks)."""
    @intrinsic
    def impl(typingctx, a, b):
        if not (same_vectors(a, b) and isinstance(a.dtype, kind)):
            return None

        def codegen(context, builder, signature, args):
            return getattr(builder, name)(args[0], args[1])

        return a(a, b), codegen

    return impl
