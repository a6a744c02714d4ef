"""g-SDDMM on the GPU over the edge list: ``out[e] = op(L[e], R[e])`` with each operand row taken from
the source, the destination or the edge itself.

Elementwise ops run one thread per (edge, output element). ``dot`` runs a group of lanes per edge, the
group as wide as the reduced axis needs (a power of two up to a warp: 4 lanes for 4-wide vectors, 32
for 64-wide), each lane summing a strided slice of the axis and the group finishing with a butterfly
reduction (:mod:`.warp`: shuffles on a GPU, shared memory in the simulator). DGL reduces with shuffles
only from 32-wide features on (research/dgl-kernels.md 5.4); narrower ones waste most of its warp.
Accumulation is float32 for float16/float32 inputs, float64 for float64.
"""

from __future__ import annotations

import functools

import numba
from numba import cuda

from ..cpu.sddmm import OPS, target_codes  # noqa: F401  (the same names on both backends)
from .launch import BLOCK, WARP
from .warp import group_sum

_OP_CODE = {"add": 0, "sub": 1, "mul": 2, "div": 3, "copy_lhs": 4, "copy_rhs": 5, "dot": 6}


def group_width(reduce_size: int) -> int:
    """Lanes per edge for ``dot``: the smallest power of two covering the axis, at most a warp."""
    width = 1
    while width < min(int(reduce_size), WARP):
        width *= 2
    return width


@functools.cache
def sddmm_kernel(op: str, pattern: tuple, acc: str):
    """``kernel(src, dst, eids, has_eids, L, R, lt, rt, B, D, RS, width, loff, roff, out)`` for one op and
    broadcast pattern; targets are runtime codes (:func:`target_codes`)."""
    OP = _OP_CODE[op]
    USE_L = op != "copy_rhs"
    USE_R = op != "copy_lhs"
    LA, LB, RA, RB, GENERAL = pattern
    ACC = numba.float64 if acc == "float64" else numba.float32

    @cuda.jit(device=True)
    def offsets(k, B, loff, roff):
        a = k // B
        b = k - a * B
        la = 0 if LA == 0 else (1 if LA == 1 else B)
        ra = 0 if RA == 0 else (1 if RA == 1 else B)
        if GENERAL:
            return loff[k], roff[k]
        return a * la + b * LB, a * ra + b * RB

    @cuda.jit(device=True)
    def pick(target, u, v, e):
        if target == 0:
            return u
        if target == 1:
            return v
        return e

    if OP == 6:

        @cuda.jit
        def kernel(src, dst, eids, has_eids, L, R, lt, rt, B, D, RS, width, loff, roff, out):
            scratch = cuda.shared.array(BLOCK, numba.float64)
            lane = cuda.threadIdx.x % WARP
            warp = cuda.grid(1) // WARP
            warps = cuda.gridsize(1) // WARP
            groups = WARP // width
            sub = lane % width
            E = src.size
            # the loop is warp-uniform (its bounds depend on the warp only): every lane reaches every
            # reduction, lanes of a group without an edge carry zeros
            for base in range(warp * groups, E, warps * groups):
                i = base + lane // width
                valid = i < E
                u = src[i] if valid else 0
                v = dst[i] if valid else 0
                e = (eids[i] if has_eids else i) if valid else 0
                li = pick(lt, u, v, e)
                ri = pick(rt, u, v, e)
                for k in range(D):
                    lo, ro = offsets(k, B, loff, roff)
                    part = ACC(0)
                    if valid:
                        for t in range(sub, RS, width):
                            part += ACC(L[li, lo * RS + t]) * ACC(R[ri, ro * RS + t])
                    total = group_sum(part, scratch, width)
                    if valid and sub == 0:
                        out[e, k] = total

    else:

        @cuda.jit
        def kernel(src, dst, eids, has_eids, L, R, lt, rt, B, D, RS, width, loff, roff, out):
            E = src.size
            for idx in range(cuda.grid(1), E * D, cuda.gridsize(1)):
                i = idx // D
                k = idx - i * D
                e = eids[i] if has_eids else i
                lo, ro = offsets(k, B, loff, roff)
                lhs = ACC(L[pick(lt, src[i], dst[i], e), lo]) if USE_L else ACC(0)
                rhs = ACC(R[pick(rt, src[i], dst[i], e), ro]) if USE_R else ACC(0)
                if OP == 0:
                    val = lhs + rhs
                elif OP == 1:
                    val = lhs - rhs
                elif OP == 2:
                    val = lhs * rhs
                elif OP == 3:
                    val = lhs / rhs
                elif OP == 4:
                    val = lhs
                else:
                    val = rhs
                out[e, k] = val

    return kernel
