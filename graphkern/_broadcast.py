"""Feature broadcasting for g-SpMM and g-SDDMM, reduced to at most two strided loop levels.

DGL pads the shorter feature shape after axis 0, broadcasts by NumPy rules, and then has every kernel look
up two offset tables per output element (docs/design.md, section 'Broadcasting'). Almost every shape that occurs in
practice is simpler than that: equal shapes, a scalar per edge ``(E, 1)``, a scalar per head ``(E, H, 1)``
against ``(N, H, F)``, or the mirror images. Those collapse to an output of ``A x B`` elements where each
operand's element for output ``(a, b)`` is at ``a * stride_a + b * stride_b`` with ``stride_b`` in {0, 1}
and ``stride_a`` in {0, 1, B}. The kernels get these strides as compile-time constants (so the inner loop
over ``b`` is a plain contiguous or broadcast load that LLVM vectorises). Only shapes that need three or
more alternating broadcast groups fall back to offset tables.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

# stride codes for the outer (a) level: the operand's element offset grows by 0, 1 or B per step of a
STRIDE_ZERO, STRIDE_ONE, STRIDE_B = 0, 1, 2


@dataclass(frozen=True)
class Broadcast:
    """How output element ``k = a * B + b`` maps to an element of each operand's (flattened) row."""

    out_shape: tuple  # feature shape of the output (for dot: with the reduced axis as 1)
    A: int
    B: int
    lhs_a: int  # STRIDE_* code
    lhs_b: int  # 0 or 1
    rhs_a: int
    rhs_b: int
    reduce_size: int = 1  # dot: length of the reduced last axis; each offset unit is a vector of it
    lhs_offsets: np.ndarray | None = None  # general case: element offset of output k in each operand
    rhs_offsets: np.ndarray | None = None

    @property
    def general(self) -> bool:
        return self.lhs_offsets is not None

    @property
    def out_len(self) -> int:
        return self.A * self.B

    @property
    def pattern(self) -> tuple:
        """The compile-time part: what a kernel is specialised on."""
        return (self.lhs_a, self.lhs_b, self.rhs_a, self.rhs_b, self.general)


def pad_shapes(lshape: tuple, rshape: tuple) -> tuple[tuple, tuple]:
    """DGL's ``reshape_lhs_rhs``: pad the shorter feature shape with 1s in front (after axis 0)."""
    if len(lshape) < len(rshape):
        lshape = (1,) * (len(rshape) - len(lshape)) + tuple(lshape)
    elif len(rshape) < len(lshape):
        rshape = (1,) * (len(lshape) - len(rshape)) + tuple(rshape)
    return tuple(lshape), tuple(rshape)


def _broadcast_shape(lshape, rshape, lname, rname):
    try:
        return tuple(np.broadcast_shapes(lshape, rshape))
    except ValueError:
        raise ValueError(
            f"arguments '{lname}' and '{rname}': feature shapes {lshape} and {rshape} do not broadcast "
            f"(after padding the shorter one after axis 0)"
        ) from None


def analyse(op: str, lshape: tuple, rshape: tuple, lname: str = "lhs", rname: str = "rhs") -> Broadcast:
    """The broadcast descriptor of a binary op on feature shapes ``lshape`` and ``rshape`` (axis 0 dropped).

    ``copy_lhs``/``copy_rhs`` use only one operand. ``dot`` reduces over the last axis, which must be
    equal in both; its output keeps that axis with length 1, as DGL's does.

    Examples
    --------
    >>> from graphkern._broadcast import analyse
    >>> b = analyse("mul", (4, 8), (4, 1))      # multi-head aggregation: per-head scalar edge weight
    >>> (b.A, b.B, b.lhs_a, b.lhs_b, b.rhs_a, b.rhs_b, b.general)
    (4, 8, 2, 1, 1, 0, False)
    >>> analyse("add", (2, 1, 3), (1, 4, 1)).general
    True
    """
    if op == "copy_lhs":
        n = int(np.prod(lshape, dtype=np.int64))
        return Broadcast(tuple(lshape), 1, n, STRIDE_ZERO, 1, STRIDE_ZERO, 0)
    if op == "copy_rhs":
        n = int(np.prod(rshape, dtype=np.int64))
        return Broadcast(tuple(rshape), 1, n, STRIDE_ZERO, 0, STRIDE_ZERO, 1)
    lshape, rshape = pad_shapes(lshape, rshape)
    reduce_size = 1
    if op == "dot":
        if not lshape or not rshape or lshape[-1] != rshape[-1]:
            raise ValueError(
                f"arguments '{lname}' and '{rname}': 'dot' needs equal last dimensions, found shapes "
                f"{lshape} and {rshape}"
            )
        reduce_size = lshape[-1]
        lshape, rshape = lshape[:-1], rshape[:-1]
    out = _broadcast_shape(lshape, rshape, lname, rname)
    out_shape = out + ((1,) if op == "dot" else ())
    # classify every output axis of length > 1 by which operands span it, and merge runs of a class
    groups: list[list] = []  # [lhs_full, rhs_full, size]
    for i, size in enumerate(out):
        if size == 1:
            continue
        cls = (lshape[i] == size, rshape[i] == size)
        if groups and groups[-1][0] == cls[0] and groups[-1][1] == cls[1]:
            groups[-1][2] *= size
        else:
            groups.append([cls[0], cls[1], size])
    if len(groups) <= 2:
        if len(groups) < 2:
            groups = [[False, False, 1]] * (2 - len(groups)) + groups
        (l_a, r_a, A), (l_b, r_b, B) = groups

        def outer(full_a, full_b):
            if not full_a:
                return STRIDE_ZERO
            return STRIDE_B if full_b else STRIDE_ONE

        return Broadcast(out_shape, A, B, outer(l_a, l_b), int(l_b), outer(r_a, r_b), int(r_b), reduce_size)
    # general: DGL-style offset tables, one entry per output element
    idx = np.indices(out).reshape(len(out), -1) if out else np.zeros((0, 1), dtype=np.int64)

    def offsets(shape):
        strides = np.ones(len(shape), dtype=np.int64)
        for i in range(len(shape) - 2, -1, -1):
            strides[i] = strides[i + 1] * shape[i + 1]
        coords = np.where(np.array(shape)[:, None] == 1, 0, idx)
        return np.ascontiguousarray((coords * strides[:, None]).sum(axis=0), dtype=np.int64)

    D = int(np.prod(out, dtype=np.int64))
    return Broadcast(out_shape, 1, D, STRIDE_ZERO, 1, STRIDE_ZERO, 1, reduce_size, offsets(lshape), offsets(rshape))
