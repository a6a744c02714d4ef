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


def _host_has_avx512() -> bool:
    try:
        from llvmlite import binding

        return bool(binding.get_host_cpu_features().get("avx512f", False))
    except Exception:  # a host whose features LLVM cannot list: the portable store
        return False


# AVX-512 loads and stores a masked vector in one instruction. Without it (AVX2), LLVM's masked load and
# store become VMASKMOV, which some x86 cores run far slower than a plain access (AMD Zen: a g-SDDMM
# reading one value per operand row with a 16-lane masked load ran six times slower than with scalar
# loads); elsewhere they are scalarised anyway. Compiled code is cached per host CPU, so the choice is
# made per machine.
NATIVE_MASKED_ACCESS = _host_has_avx512()


def _each_lane_on(builder, mask, body) -> None:
    """Emit ``body(lane)`` (``lane`` an i32) for each lane on in ``mask``, lowest first: a loop over the set
    bits, as many iterations as lanes on (a prefix mask of one lane is one iteration)."""
    W = mask.type.count
    iw = ir.IntType(W)
    bits_slot = cgutils.alloca_once(builder, iw)
    builder.store(builder.bitcast(mask, iw), bits_slot)
    cttz = llvm_function(builder, f"llvm.cttz.i{W}", iw, [iw, ir.IntType(1)])
    test = builder.append_basic_block("lanes_test")
    step = builder.append_basic_block("lanes_step")
    done = builder.append_basic_block("lanes_done")
    builder.branch(test)
    builder.position_at_end(test)
    bits = builder.load(bits_slot)
    builder.cbranch(builder.icmp_unsigned("!=", bits, ir.Constant(iw, 0)), step, done)
    builder.position_at_end(step)
    lane = builder.call(cttz, [bits, ir.Constant(ir.IntType(1), 1)])
    lane = builder.zext(lane, ir.IntType(32)) if W < 32 else builder.trunc(lane, ir.IntType(32)) if W > 32 else lane
    body(lane)
    builder.store(builder.and_(bits, builder.sub(bits, ir.Constant(iw, 1))), bits_slot)
    builder.branch(test)
    builder.position_at_end(done)


def array_end(context, builder, aty, ary):
    """The address one past the last element of a C-ordered row array (rows may be strided, elements
    within a row contiguous): where a load spanning past the data would leave the array."""
    i64 = ir.IntType(64)
    shapes = cgutils.unpack_tuple(builder, ary.shape, aty.ndim)
    strides = cgutils.unpack_tuple(builder, ary.strides, aty.ndim)
    end = builder.ptrtoint(ary.data, i64)
    for dim in range(aty.ndim - 1):
        end = builder.add(end, builder.mul(builder.sub(shapes[dim], ir.Constant(i64, 1)), strides[dim]))
    return builder.add(end, builder.mul(shapes[-1], ir.Constant(i64, aty.dtype.bitwidth // 8)))


def masked_load(builder, ptr, mask, vty, align: int, end):
    """The lanes of a ``vty`` vector at ``ptr`` that are on in ``mask`` (an ``<W x i1>``), 0 elsewhere;
    ``end`` is :func:`array_end` of the array. On AVX-512: LLVM's masked load. Else: when the whole
    vector lies within the array (every row but the array's last few elements), one plain load with the
    lanes off the mask zeroed; past that, one scalar load per lane on, so no byte outside the array is
    read."""
    if NATIVE_MASKED_ACCESS:
        fn = llvm_function(builder, f"llvm.masked.load.{vector_suffix(vty)}.p0", vty,
                           [ptr.type, ir.IntType(32), mask.type, vty])
        return builder.call(fn, [ptr, ir.Constant(ir.IntType(32), align), mask, ir.Constant(vty, None)])
    i64 = ir.IntType(64)
    span_end = builder.add(builder.ptrtoint(ptr, i64), ir.Constant(i64, vty.count * align))
    slot = cgutils.alloca_once(builder, vty)
    with builder.if_else(builder.icmp_unsigned("<=", span_end, end), likely=True) as (inside, last):
        with inside:
            value = builder.load(builder.bitcast(ptr, vty.as_pointer()))
            value.align = align
            builder.store(builder.select(mask, value, ir.Constant(vty, None)), slot)
        with last:
            builder.store(ir.Constant(vty, None), slot)

            def load_lane(lane):
                value = builder.load(builder.gep(ptr, [lane]))
                value.align = align
                builder.store(builder.insert_element(builder.load(slot), value, lane), slot)

            _each_lane_on(builder, mask, load_lane)
    return builder.load(slot)


def _store_halves(builder, vec, ptr, mask, align: int) -> None:
    """Store the lanes on in ``mask``: a run of lanes all on is one plain store of that run, found by
    halving (a 16-lane mask of 8 lanes on is one 8-lane store), a run of lanes all off no store."""
    W = vec.type.count
    iw = ir.IntType(W)
    bits = builder.bitcast(mask, iw)
    if W == 1:
        with builder.if_then(builder.icmp_unsigned("!=", bits, ir.Constant(iw, 0))):
            builder.store(builder.extract_element(vec, ir.Constant(ir.IntType(32), 0)), ptr).align = align
        return
    all_on = builder.icmp_unsigned("==", bits, ir.Constant(iw, (1 << W) - 1))
    with builder.if_else(all_on, likely=True) as (whole, part):
        with whole:
            builder.store(vec, builder.bitcast(ptr, vec.type.as_pointer())).align = align
        with part:
            with builder.if_then(builder.icmp_unsigned("!=", bits, ir.Constant(iw, 0))):
                half = W // 2
                undef = ir.Constant(vec.type, ir.Undefined)
                undef_mask = ir.Constant(mask.type, ir.Undefined)
                i32 = ir.IntType(32)
                for first, count in ((0, half), (half, W - half)):
                    lanes = ir.Constant(ir.VectorType(i32, count), list(range(first, first + count)))
                    _store_halves(builder, builder.shuffle_vector(vec, undef, lanes),
                                  builder.gep(ptr, [ir.Constant(i32, first)]),
                                  builder.shuffle_vector(mask, undef_mask, lanes), align)


def masked_store(builder, vec, ptr, mask, align: int) -> None:
    """Store the lanes of ``vec`` that are on in ``mask`` (an ``<W x i1>``) at ``ptr`` (the first lane's
    element pointer), touching no other element. A full mask is one plain vector store; a partial one
    is LLVM's masked store on AVX-512, else plain stores of the runs of lanes on (:func:`_store_halves`)."""
    vty = vec.type
    if NATIVE_MASKED_ACCESS:
        fn = llvm_function(builder, f"llvm.masked.store.{vector_suffix(vty)}.p0", ir.VoidType(),
                           [vty, ptr.type, ir.IntType(32), mask.type])
        builder.call(fn, [vec, ptr, ir.Constant(ir.IntType(32), align), mask])
        return
    _store_halves(builder, vec, ptr, mask, align)


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
