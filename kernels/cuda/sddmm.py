"""g-SDDMM on the GPU over the edge list: ``out[e] = op(L[e], R[e])`` with each operand row taken from
the source, the destination or the edge itself.

Elementwise ops run a group of lanes per edge (the output row rounded up to a power of two, at most a
warp), each lane on a fixed set of output elements whose operand offsets it computes once, outside its
loop over the edges: no division per element.

``dot`` runs a group of lanes per edge (:func:`group_width`: 8 lanes for 64- and 128-wide vectors, so a
warp works on four edges at once; 4 lanes for 4-wide vectors, at most 32), each lane summing a strided
slice of the axis into four partial sums (four pairs of loads in flight) and the group finishing with a
butterfly reduction (:mod:`.warp`: shuffles on a GPU, the same butterfly replayed in the simulator). Accumulation is
float32 for float16/float32 inputs, float64 for float64.
"""

from __future__ import annotations

import functools

import numba
from numba import cuda

from ..cpu.sddmm import OPS, target_codes  # noqa: F401  (the same names on both backends)
from .launch import WARP
from .warp import group_sum

_OP_CODE = {"add": 0, "sub": 1, "mul": 2, "div": 3, "copy_lhs": 4, "copy_rhs": 5, "dot": 6}


# dot: a lane sums up to this many elements of the reduced axis, so wide vectors take fewer lanes per edge
# (more edges per warp, fewer shuffle rounds); `python3 tools/gpu_check.py`, row "u_dot_v", measures it
DOT_ELEMS_PER_LANE = 16
# ... but at least this many lanes while the axis has them: 8 float32 lanes read a whole 32-byte sector
DOT_MIN_WIDTH = 8


def _pow2_at_least(n: int) -> int:
    width = 1
    while width < n:
        width *= 2
    return width


def group_width(reduce_size: int) -> int:
    """Lanes per edge for ``dot``: enough for ``DOT_ELEMS_PER_LANE`` elements each, at least
    ``DOT_MIN_WIDTH`` (at most the axis rounded up to a power of two), at most a warp."""
    rs = int(reduce_size)
    width = max(_pow2_at_least(-(-rs // DOT_ELEMS_PER_LANE)), min(DOT_MIN_WIDTH, _pow2_at_least(rs)))
    return min(width, WARP)


def element_width(out_len: int) -> int:
    """Lanes per edge for the elementwise ops: the output row rounded up to a power of two, at most a
    warp (each lane keeps its output elements, and so their operand offsets, for every edge)."""
    return min(_pow2_at_least(int(out_len)), WARP)


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
                    lb = lo * RS
                    rb = ro * RS
                    # four partial sums: four independent pairs of loads in flight per lane
                    p0 = ACC(0)
                    p1 = ACC(0)
                    p2 = ACC(0)
                    p3 = ACC(0)
                    if valid:
                        t = sub
                        while t + 3 * width < RS:
                            p0 += ACC(L[li, lb + t]) * ACC(R[ri, rb + t])
                            p1 += ACC(L[li, lb + t + width]) * ACC(R[ri, rb + t + width])
                            p2 += ACC(L[li, lb + t + 2 * width]) * ACC(R[ri, rb + t + 2 * width])
                            p3 += ACC(L[li, lb + t + 3 * width]) * ACC(R[ri, rb + t + 3 * width])
                            t += 4 * width
                        while t < RS:
                            p0 += ACC(L[li, lb + t]) * ACC(R[ri, rb + t])
                            t += width
                    total = group_sum((p0 + p1) + (p2 + p3), width)
                    if valid and sub == 0:
                        out[e, k] = total

    else:

        @cuda.jit
        def kernel(src, dst, eids, has_eids, L, R, lt, rt, B, D, RS, width, loff, roff, out):
            # a group of `width` lanes per edge, lane `sub` on output elements sub, sub + width, ...: each
            # thread finds its elements' operand offsets once and then walks the edges
            E = src.size
            tid = cuda.grid(1)
            sub = tid % width
            first = tid // width
            groups = cuda.gridsize(1) // width
            for k in range(sub, D, width):
                lo, ro = offsets(k, B, loff, roff)
                for i in range(first, E, groups):
                    e = eids[i] if has_eids else i
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
