"""Low-level helpers for the CPU kernels: software prefetch through an LLVM intrinsic.

Gather-heavy kernels (SpMM over CSC reads ``x[indices[j]]`` in random order) are limited by how many
cache misses are in flight, not by arithmetic. Prefetching the rows a few edges ahead makes them
several times faster on graphs whose features outgrow the caches (``python tools/compare_peers.py --family
spmm``), with the summation order unchanged.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

CACHE_LINE = 64


@intrinsic
def prefetch_row(typingctx, arr, row, nbytes):
    """Prefetch ``nbytes`` of row ``row`` of the C-contiguous 2-D ``arr`` into cache (a hint: no fault,
    no bounds effect; the caller keeps ``row`` in range)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 2 and isinstance(row, types.Integer)):
        return None
    sig = types.void(arr, row, nbytes)

    def codegen(context, builder, signature, args):
        aty, rty, nty = signature.args
        ary = context.make_array(aty)(context, builder, args[0])
        idx = context.cast(builder, args[1], rty, types.intp)
        zero = context.get_constant(types.intp, 0)
        ptr = cgutils.get_item_pointer(context, builder, aty, ary, [idx, zero], wraparound=False,
                                       boundscheck=False)
        i8p = ir.IntType(8).as_pointer()
        base = builder.bitcast(ptr, i8p)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, ir.IntType(32), ir.IntType(32), ir.IntType(32)])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        total = context.cast(builder, args[2], nty, types.intp)
        i32 = ir.IntType(32)
        # one prefetch per cache line of the row (a loop the caller's constants usually unroll)
        with cgutils.for_range_slice(builder, zero, total, context.get_constant(types.intp, CACHE_LINE)) as (off, _):
            builder.call(fn, [builder.gep(base, [off]), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def prefetch_elements(typingctx, arr, row, col, count):
    """Prefetch ``count`` elements (a compile-time constant) of the C-contiguous 2-D ``arr`` from
    ``arr[row, col]`` on, one prefetch per cache line, unrolled (a hint, as :func:`prefetch_row`; past the
    row's end it touches the next row's lines, and never faults)."""
    if not (isinstance(arr, types.Array) and arr.ndim == 2 and isinstance(row, types.Integer)
            and isinstance(col, types.Integer) and isinstance(count, types.IntegerLiteral)):
        return None
    sig = types.void(arr, row, col, count)
    nbytes = count.literal_value * arr.dtype.bitwidth // 8

    def codegen(context, builder, signature, args):
        aty, rty, cty, _ = signature.args
        ary = context.make_array(aty)(context, builder, args[0])
        idx = context.cast(builder, args[1], rty, types.intp)
        start = context.cast(builder, args[2], cty, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aty, ary, [idx, start], wraparound=False, boundscheck=False)
        base = builder.bitcast(ptr, ir.IntType(8).as_pointer())
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [base.type, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        for off in range(0, max(nbytes, 1), CACHE_LINE):
            builder.call(fn, [builder.gep(base, [ir.Constant(ir.IntType(64), off)]), ir.Constant(i32, 0),
                              ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return sig, codegen


def _prefetch_item(for_write: bool):
    """``prefetch_item`` and ``prefetch_item_for_write``: llvm.prefetch with rw 0 or 1, locality 3."""
    rw = 1 if for_write else 0

    def typer(typingctx, arr, index):
        if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(index, types.Integer)):
            return None
        sig = types.void(arr, index)

        def codegen(context, builder, signature, args):
            aty, ity = signature.args
            ary = context.make_array(aty)(context, builder, args[0])
            idx = context.cast(builder, args[1], ity, types.intp)
            ptr = cgutils.get_item_pointer(context, builder, aty, ary, [idx], wraparound=False, boundscheck=False)
            i8p = ir.IntType(8).as_pointer()
            i32 = ir.IntType(32)
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32]),
                                                "llvm.prefetch.p0")
            builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, rw), ir.Constant(i32, 3),
                              ir.Constant(i32, 1)])
            return context.get_dummy_value()

        return sig, codegen

    return typer


def prefetch_item(typingctx, arr, index):
    """Prefetch the cache line holding ``arr[index]`` of a 1-D array (a hint: no fault, no bounds effect;
    the caller keeps ``index`` in range)."""
    return _prefetch_item(False)(typingctx, arr, index)


def prefetch_item_for_write(typingctx, arr, index):
    """Prefetch the line of ``arr[index]`` to be written (``prefetchw``: the line arrives owned, so the
    store that follows does not wait for it). A hint, as :func:`prefetch_item`."""
    return _prefetch_item(True)(typingctx, arr, index)


prefetch_item = intrinsic(prefetch_item)
prefetch_item_for_write = intrinsic(prefetch_item_for_write)


@intrinsic
def atomic_cas(typingctx, arr, index, expected, desired):
    """``arr[index] = desired`` if it holds ``expected``; returns the value it held (atomically).

    A compare-and-swap on one element of a 1-D integer array (Numba has no CPU atomics of its own).
    The caller keeps ``index`` in range.
    """
    if not (isinstance(arr, types.Array) and arr.ndim == 1 and isinstance(arr.dtype, types.Integer)):
        return None
    sig = arr.dtype(arr, index, expected, desired)

    def codegen(context, builder, signature, args):
        aty, ity, ety, dty = signature.args
        ary = context.make_array(aty)(context, builder, args[0])
        idx = context.cast(builder, args[1], ity, types.intp)
        ptr = cgutils.get_item_pointer(context, builder, aty, ary, [idx], wraparound=False, boundscheck=False)
        exp = context.cast(builder, args[2], ety, aty.dtype)
        new = context.cast(builder, args[3], dty, aty.dtype)
        pair = builder.cmpxchg(ptr, exp, new, "monotonic", "monotonic")
        return builder.extract_value(pair, 0)

    return sig, codegen


@intrinsic
def popcount(typingctx, value):
    """The number of set bits of a 64-bit integer (one ``popcnt``)."""
    if not (isinstance(value, types.Integer) and value.bitwidth == 64):
        return None
    sig = types.int64(value)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, [i64]), "llvm.ctpop.i64")
        return builder.call(fn, [args[0]])

    return sig, codegen
