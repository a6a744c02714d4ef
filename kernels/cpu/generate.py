"""Graph generators compiled for the CPU: the Graph500 Kronecker generator, bit for bit.

The Graph500 reference (``generator/graph_generator.c``, ``splittable_mrg.c``) draws every edge from its
own substream of an order-5 multiple recursive generator (MRG, modulus ``p = 2**31 - 1``): edge ``ei``
starts from ``A**(ei * 2**64) @ seed`` where ``A`` is the generator's 5x5 transition matrix. Edges are
therefore independent and the generator is embarrassingly parallel. We split the edges into chunks; a chunk
jumps to its first edge with the binary powers of ``B = A**(2**64)`` and then advances one edge at a time by
a single multiplication with ``B``.

All arithmetic mod ``p`` reduces after every product: five products of 31-bit numbers overflow 64 bits.
The vertex-label scramble uses wrapping ``uint64`` arithmetic, as the C code does.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from ._simd import mask_and, mask_or, vand, veq, vfull, vload, vlt, vmask, vselect, vshr
from ._simd_int import mask_any, mask_not, vbitreverse, vlane, vmul, vnarrow, vor, vsub, vumin, vurem, vwiden

MRG_MODULUS = (1 << 31) - 1
MRG_X = 107374182
MRG_Y = 104480
# Graph500 initiator A=0.57, B=0.19, C=0.19 (D=0.05) as integer thresholds out of 10000.
_INITIATOR_DENOMINATOR = 10000
# Reject draws below this so that ``value % 10000`` is unbiased: (2**31 - 1) % 10000.
_BERNOULLI_REJECT_BELOW = MRG_MODULUS % _INITIATOR_DENOMINATOR
_SCRAMBLE_MULT0 = np.uint64(0x4519840211493211)
_SCRAMBLE_MULT1 = np.uint64(0x3050852102C843A5)
EDGES_PER_CHUNK = 1 << 12


# --- exact host-side matrix powers (Python integers; only a few hundred 5x5 products) -------------------

def _transition_matrix():
    a = [[0] * 5 for _ in range(5)]
    a[0][0] = MRG_X
    a[0][4] = MRG_Y
    for i in range(1, 5):
        a[i][i - 1] = 1
    return a


def _matmul_mod(a, b):
    return [[sum(a[i][k] * b[k][j] for k in range(5)) % MRG_MODULUS for j in range(5)] for i in range(5)]


def mrg_matrix_power(exponent: int):
    """``A**exponent mod p`` as a list of lists (exact, any size of exponent)."""
    result = [[int(i == j) for j in range(5)] for i in range(5)]
    base = _transition_matrix()
    while exponent:
        if exponent & 1:
            result = _matmul_mod(result, base)
        base = _matmul_mod(base, base)
        exponent >>= 1
    return result


def mrg_seed(userseed1: int, userseed2: int) -> np.ndarray:
    """The reference's ``make_mrg_seed``: five state words in ``[1, p)`` from two 64-bit seeds."""
    s1 = userseed1 & ((1 << 64) - 1)
    s2 = userseed2 & ((1 << 64) - 1)
    mask30 = 0x3FFFFFFF
    return np.array(
        [
            (s1 & mask30) + 1,
            ((s1 >> 30) & mask30) + 1,
            (s2 & mask30) + 1,
            ((s2 >> 30) & mask30) + 1,
            ((s2 >> 60) << 4) + (s1 >> 60) + 1,
        ],
        dtype=np.int64,
    )


def edge_stride_powers(bits: int = 64) -> np.ndarray:
    """``(bits, 5, 5)`` table of ``B**(2**k)`` with ``B = A**(2**64)``, the jump from one edge to the next."""
    out = np.empty((bits, 5, 5), dtype=np.int64)
    power = mrg_matrix_power(1 << 64)
    for k in range(bits):
        out[k] = np.array(power, dtype=np.int64)
        power = _matmul_mod(power, power)
    return out


def skip_state(state: np.ndarray, exponent: int) -> np.ndarray:
    """``A**exponent @ state`` (host side, exact)."""
    m = mrg_matrix_power(exponent)
    z = [int(v) for v in state]
    return np.array([sum(m[i][k] * z[k] for k in range(5)) % MRG_MODULUS for i in range(5)], dtype=np.int64)


# --- compiled pieces -----------------------------------------------------------------------------------

@njit(inline="always")
def _mod_p(x):
    # x < 2**63; p = 2**31 - 1 is a Mersenne prime, so x mod p folds the high bits onto the low ones.
    x = (x & MRG_MODULUS) + (x >> 31)
    x = (x & MRG_MODULUS) + (x >> 31)
    return x - MRG_MODULUS if x >= MRG_MODULUS else x


@njit(inline="always")
def _matvec_mod(m, z, out):
    for i in range(5):
        acc = 0
        for k in range(5):
            acc += _mod_p(m[i, k] * z[k])
        out[i] = _mod_p(acc)


@njit(inline="always")
def _mrg_next(z):
    """Advance the state one step and return the new first word (the reference's ``mrg_get_uint_orig``)."""
    new = _mod_p(MRG_X * z[0] + MRG_Y * z[4])
    z[4] = z[3]
    z[3] = z[2]
    z[2] = z[1]
    z[1] = z[0]
    z[0] = new
    return new


@njit(inline="always")
def _bitreverse64(v):
    v = ((v >> np.uint64(1)) & np.uint64(0x5555555555555555)) | ((v & np.uint64(0x5555555555555555)) << np.uint64(1))
    v = ((v >> np.uint64(2)) & np.uint64(0x3333333333333333)) | ((v & np.uint64(0x3333333333333333)) << np.uint64(2))
    v = ((v >> np.uint64(4)) & np.uint64(0x0F0F0F0F0F0F0F0F)) | ((v & np.uint64(0x0F0F0F0F0F0F0F0F)) << np.uint64(4))
    v = ((v >> np.uint64(8)) & np.uint64(0x00FF00FF00FF00FF)) | ((v & np.uint64(0x00FF00FF00FF00FF)) << np.uint64(8))
    v = ((v >> np.uint64(16)) & np.uint64(0x0000FFFF0000FFFF)) | ((v & np.uint64(0x0000FFFF0000FFFF)) << np.uint64(16))
    v = (v >> np.uint64(32)) | (v << np.uint64(32))
    return v


@njit(inline="always")
def _scramble(v, scale, val0, val1):
    """The reference's vertex-label bijection on ``[0, 2**scale)``."""
    shift = np.uint64(64 - scale)
    x = np.uint64(v) + val0 + val1
    x = x * (val0 | _SCRAMBLE_MULT0)
    x = _bitreverse64(x) >> shift
    x = x * (val1 | _SCRAMBLE_MULT1)
    x = _bitreverse64(x) >> shift
    return x


@njit(inline="always")
def _one_edge(z, scale):
    """Draw one edge's (unscrambled) endpoints from state ``z``: one initiator quadrant per bit."""
    n = np.int64(1) << scale
    base_src = np.int64(0)
    base_tgt = np.int64(0)
    while n > 1:
        v = _mrg_next(z)
        while v < _BERNOULLI_REJECT_BELOW:
            v = _mrg_next(z)
        v = v % _INITIATOR_DENOMINATOR
        # quadrant order in the reference: B (0,1), C (1,0), A (0,0), D (1,1)
        if v < 1900:
            so, to = 0, 1
        elif v < 3800:
            so, to = 1, 0
        elif v < 9500:
            so, to = 0, 0
        else:
            so, to = 1, 1
        if base_src == base_tgt and so > to:  # clip-and-flip: stay in the upper triangle
            so, to = to, so
        n //= 2
        base_src += n * so
        base_tgt += n * to
    return base_src, base_tgt


# Edges drawn side by side: the draws of one edge form a chain of dependent MRG steps (each waits for
# the multiply and folds of the one before), so one edge at a time leaves the core mostly idle. Four
# independent edges (_lane_edges is written for exactly four) advance in lockstep and overlap their chains;
# the quadrant choice is branch-free, since its outcome is random. The generation time is the
# graph_generation line of `graphkern graph500 --scale 20`.
LANES = 4


@njit(inline="always")
def _lane_level(z, n, base_src, base_tgt):
    """One level of one lane: the MRG step (state ``z`` kept as a tuple, newest first, so it stays in
    registers), the quadrant chosen branch-free and clip-and-flip on the diagonal. Returns the new state,
    the new bases and whether the draw fell in the rejected range."""
    v = _mod_p(MRG_X * z[0] + MRG_Y * z[4])
    rejected = v < _BERNOULLI_REJECT_BELOW
    q = v % _INITIATOR_DENOMINATOR
    # quadrants B (0,1) below 1900, C (1,0) below 3800, A (0,0) below 9500, D (1,1) above
    so = np.int64((q >= 1900) & (q < 3800)) | np.int64(q >= 9500)
    to = np.int64(q < 1900) | np.int64(q >= 9500)
    flip = np.int64(base_src == base_tgt) & so & (1 - to)
    return ((v, z[0], z[1], z[2], z[3]), base_src + n * (so & (1 - flip)), base_tgt + n * (to | flip), rejected)


@njit(cache=True)  # a call per four edges; inlined, its tuples trip the parallel loop's array analysis
def _lane_edges(lanes, scale, base_src, base_tgt):
    """The unscrambled endpoints of ``LANES`` (4) edges drawn side by side from the states ``lanes[l]``
    (not changed). Returns False when a draw fell in the rejected range, where an edge takes extra steps:
    the caller then draws these edges again one at a time."""
    za = (lanes[0, 0], lanes[0, 1], lanes[0, 2], lanes[0, 3], lanes[0, 4])
    zb = (lanes[1, 0], lanes[1, 1], lanes[1, 2], lanes[1, 3], lanes[1, 4])
    zc = (lanes[2, 0], lanes[2, 1], lanes[2, 2], lanes[2, 3], lanes[2, 4])
    zd = (lanes[3, 0], lanes[3, 1], lanes[3, 2], lanes[3, 3], lanes[3, 4])
    sa = ta = sb = tb = sc = tc = sd = td = np.int64(0)
    n = np.int64(1) << scale
    rejected = False
    while n > 1:
        n //= 2
        za, sa, ta, ra = _lane_level(za, n, sa, ta)
        zb, sb, tb, rb = _lane_level(zb, n, sb, tb)
        zc, sc, tc, rc = _lane_level(zc, n, sc, tc)
        zd, sd, td, rd = _lane_level(zd, n, sd, td)
        rejected |= ra | rb | rc | rd
    base_src[0], base_src[1], base_src[2], base_src[3] = sa, sb, sc, sd
    base_tgt[0], base_tgt[1], base_tgt[2], base_tgt[3] = ta, tb, tc, td
    return not rejected


def kronecker_edges_range(seed_state, stride_powers, scale, val0, val1, first_edge, src, dst):
    """Edges ``first_edge .. first_edge + len(src)`` of the Graph500 stream, written to ``src``/``dst``.

    ``stride_powers`` holds ``B**(2**k)`` for every bit of ``first_edge + len(src)``, and at least
    ``B**VECTOR_LANES``."""
    if stride_powers.shape[0] <= _LOG2_VECTOR_LANES:
        stride_powers = edge_stride_powers(_LOG2_VECTOR_LANES + 1)
    if scale <= VECTOR_MAX_SCALE:
        kronecker_range_vector(seed_state, stride_powers, scale, val0, val1, first_edge, src, dst)
    else:
        kronecker_range_lanes(seed_state, stride_powers, scale, val0, val1, first_edge, src, dst)


@njit(parallel=True, cache=True)
def kronecker_range_lanes(seed_state, stride_powers, scale, val0, val1, first_edge, src, dst):
    """:func:`kronecker_edges_range` for any scale, four edges side by side in scalar registers."""
    num = src.size
    num_chunks = (num + EDGES_PER_CHUNK - 1) // EDGES_PER_CHUNK
    for c in prange(num_chunks):
        lo = c * EDGES_PER_CHUNK
        hi = min(num, lo + EDGES_PER_CHUNK)
        chunk_state = seed_state.copy()
        tmp = np.empty(5, dtype=np.int64)
        ei = first_edge + lo
        bit = 0
        while ei > 0:  # jump to this chunk's first edge: B**ei = prod of B**(2**bit) over set bits
            if ei & 1:
                _matvec_mod(stride_powers[bit], chunk_state, tmp)
                chunk_state[:] = tmp
            ei >>= 1
            bit += 1
        # lane l starts at edge lo + l and strides by LANES edges (B**LANES = stride_powers[2])
        lanes = np.empty((LANES, 5), dtype=np.int64)
        lanes[0] = chunk_state
        for lane in range(1, LANES):
            _matvec_mod(stride_powers[0], lanes[lane - 1], lanes[lane])
        base_src = np.empty(LANES, dtype=np.int64)
        base_tgt = np.empty(LANES, dtype=np.int64)
        edge_state = np.empty(5, dtype=np.int64)
        i = lo
        while i + LANES <= hi:
            if not _lane_edges(lanes, scale, base_src, base_tgt):
                for lane in range(LANES):
                    edge_state[:] = lanes[lane]
                    base_src[lane], base_tgt[lane] = _one_edge(edge_state, scale)
            for lane in range(LANES):
                src[i + lane] = _scramble(base_src[lane], scale, val0, val1)
                dst[i + lane] = _scramble(base_tgt[lane], scale, val0, val1)
                _matvec_mod(stride_powers[2], lanes[lane], tmp)
                lanes[lane] = tmp
            i += LANES
        chunk_state[:] = lanes[0]  # the state of edge i
        for tail in range(i, hi):
            edge_state[:] = chunk_state
            s, t = _one_edge(edge_state, scale)
            src[tail] = _scramble(s, scale, val0, val1)
            dst[tail] = _scramble(t, scale, val0, val1)
            _matvec_mod(stride_powers[0], chunk_state, tmp)
            chunk_state[:] = tmp


# --- the same stream, eight edges per vector ----------------------------------------------------------
#
# Every vertex id below 2**31 fits a 32-bit lane, and so does an MRG state word, so eight edges advance
# in one 256-bit register each step: the MRG product is an unsigned 32x32->64 multiply per lane, the
# remainder by 10000 a multiply-high, the quadrant choice three compares. Only the low ``scale`` bits of
# the scramble's products reach its bit reversals, so the scramble runs in 32-bit lanes too (wrapping
# products keep their low bits exact). The generation time is the graph_generation line of
# `graphkern graph500 --scale 22`.
VECTOR_LANES = 8
VECTOR_MAX_SCALE = 31
_LOG2_VECTOR_LANES = 3


@njit(inline="always")
def _fold(x, p64, s31):
    # x mod p up to a few multiples of p: 2**31 = 1 (mod p) moves the bits above 31 onto the low ones
    return vand(x, p64) + vshr(x, s31)


@njit(inline="always")
def _reduce_narrow(x, p64, s31, p32):
    """A uint64 vector below ``2**62`` to its uint32 residues mod p: one fold leaves less than ``2p``, the
    unsigned minimum with ``r - p`` (which wraps above ``r`` when ``r < p``) takes off the last ``p``."""
    r = vnarrow(_fold(x, p64, s31))
    return vumin(r, vsub(r, p32))


@njit(inline="always")
def _matrow(m, i, w0, w1, w2, w3, w4, ref64, p64, s31, p32):
    """Row ``i`` of ``m @ z`` mod p for widened state words ``w0..w4`` (each folded product is below
    ``2**32``, so their sum stays below ``2**35`` and one more fold and the minimum finish it)."""
    acc = _fold(vmul(vfull(ref64, m[i, 0], VECTOR_LANES), w0), p64, s31)
    acc = acc + _fold(vmul(vfull(ref64, m[i, 1], VECTOR_LANES), w1), p64, s31)
    acc = acc + _fold(vmul(vfull(ref64, m[i, 2], VECTOR_LANES), w2), p64, s31)
    acc = acc + _fold(vmul(vfull(ref64, m[i, 3], VECTOR_LANES), w3), p64, s31)
    acc = acc + _fold(vmul(vfull(ref64, m[i, 4], VECTOR_LANES), w4), p64, s31)
    return _reduce_narrow(acc, p64, s31, p32)


@njit(inline="always")
def _scramble_lanes(v, c0, m0, m1, shift):
    """:func:`_scramble` on 32-bit lanes (``scale <= 32``): ``bitreverse64(x) >> (64 - scale)`` is the
    low ``scale`` bits of ``x`` reversed, and those depend only on the low 32 bits of the sums and
    products before it."""
    x = vmul(v + c0, m0)
    x = vshr(vbitreverse(x), shift)
    x = vmul(x, m1)
    return vshr(vbitreverse(x), shift)


@njit(cache=True)  # one call per chunk: a plain loop, out of the parallel loop's array analysis
def _vector_chunk(lanes, step, scale, val0, val1, src, dst, lo, hi):
    """Edges ``lo ..`` (groups of ``VECTOR_LANES`` below ``hi``) from the lane states ``lanes[k, l]``
    (word ``k`` of edge ``lo + l``; advanced past the last group); ``step`` is ``B**VECTOR_LANES``.
    Returns the first edge not written. A group where any draw fell in the rejected range (about one in
    70,000 groups at scale 22) is drawn again by the scalar code."""
    ref64 = np.empty(1, dtype=np.uint64)
    ref32 = np.empty(1, dtype=np.uint32)
    everyone = vmask(VECTOR_LANES, VECTOR_LANES)
    p64 = vfull(ref64, MRG_MODULUS, VECTOR_LANES)
    s31 = vfull(ref64, 31, VECTOR_LANES)
    p32 = vfull(ref32, MRG_MODULUS, VECTOR_LANES)
    mx = vfull(ref64, MRG_X, VECTOR_LANES)
    my = vfull(ref64, MRG_Y, VECTOR_LANES)
    reject = vfull(ref32, _BERNOULLI_REJECT_BELOW, VECTOR_LANES)
    denominator = vfull(ref32, _INITIATOR_DENOMINATOR, VECTOR_LANES)
    t_b = vfull(ref32, 1900, VECTOR_LANES)
    t_c = vfull(ref32, 3800, VECTOR_LANES)
    t_a = vfull(ref32, 9500, VECTOR_LANES)
    zero = vfull(ref32, 0, VECTOR_LANES)
    one = vfull(ref32, 1, VECTOR_LANES)
    low32 = np.uint64(0xFFFFFFFF)
    c0 = vfull(ref32, (val0 + val1) & low32, VECTOR_LANES)
    m0 = vfull(ref32, (val0 | _SCRAMBLE_MULT0) & low32, VECTOR_LANES)
    m1 = vfull(ref32, (val1 | _SCRAMBLE_MULT1) & low32, VECTOR_LANES)
    shift = vfull(ref32, 32 - scale, VECTOR_LANES)
    top = vfull(ref32, np.uint32(1) << np.uint32(scale - 1), VECTOR_LANES)
    z0 = vload(lanes, 0, 0, everyone)
    z1 = vload(lanes, 1, 0, everyone)
    z2 = vload(lanes, 2, 0, everyone)
    z3 = vload(lanes, 3, 0, everyone)
    z4 = vload(lanes, 4, 0, everyone)
    edge_state = np.empty(5, dtype=np.int64)
    i = lo
    while i + VECTOR_LANES <= hi:
        a0, a1, a2, a3, a4 = z0, z1, z2, z3, z4
        bs = zero
        bt = zero
        bit = top
        rejected = vlt(zero, zero)
        for _ in range(scale):
            v = _reduce_narrow(vmul(mx, vwiden(a0)) + vmul(my, vwiden(a4)), p64, s31, p32)
            a4, a3, a2, a1, a0 = a3, a2, a1, a0, v
            rejected = mask_or(rejected, vlt(v, reject))
            q = vurem(v, denominator)
            # quadrants B (0,1) below 1900, C (1,0) below 3800, A (0,0) below 9500, D (1,1) above;
            # C on the diagonal flips to B (clip-and-flip)
            in_b = vlt(q, t_b)
            in_c = mask_and(mask_not(in_b), vlt(q, t_c))
            in_d = mask_not(vlt(q, t_a))
            diagonal = veq(bs, bt)
            bs = vor(bs, vselect(mask_or(mask_and(in_c, mask_not(diagonal)), in_d), bit, zero))
            bt = vor(bt, vselect(mask_or(mask_or(in_b, in_d), mask_and(in_c, diagonal)), bit, zero))
            bit = vshr(bit, one)
        if mask_any(rejected):
            for lane in range(VECTOR_LANES):
                edge_state[0] = vlane(z0, lane)
                edge_state[1] = vlane(z1, lane)
                edge_state[2] = vlane(z2, lane)
                edge_state[3] = vlane(z3, lane)
                edge_state[4] = vlane(z4, lane)
                s, t = _one_edge(edge_state, scale)
                src[i + lane] = _scramble(s, scale, val0, val1)
                dst[i + lane] = _scramble(t, scale, val0, val1)
        else:
            xs = _scramble_lanes(bs, c0, m0, m1, shift)
            xt = _scramble_lanes(bt, c0, m0, m1, shift)
            for lane in range(VECTOR_LANES):
                src[i + lane] = vlane(xs, lane)
                dst[i + lane] = vlane(xt, lane)
        w0, w1, w2, w3, w4 = vwiden(z0), vwiden(z1), vwiden(z2), vwiden(z3), vwiden(z4)
        z0 = _matrow(step, 0, w0, w1, w2, w3, w4, ref64, p64, s31, p32)
        z1 = _matrow(step, 1, w0, w1, w2, w3, w4, ref64, p64, s31, p32)
        z2 = _matrow(step, 2, w0, w1, w2, w3, w4, ref64, p64, s31, p32)
        z3 = _matrow(step, 3, w0, w1, w2, w3, w4, ref64, p64, s31, p32)
        z4 = _matrow(step, 4, w0, w1, w2, w3, w4, ref64, p64, s31, p32)
        i += VECTOR_LANES
    lanes[0, 0] = vlane(z0, 0)  # lane 0 now holds the state of edge i
    lanes[1, 0] = vlane(z1, 0)
    lanes[2, 0] = vlane(z2, 0)
    lanes[3, 0] = vlane(z3, 0)
    lanes[4, 0] = vlane(z4, 0)
    return i


@njit(parallel=True, cache=True)
def kronecker_range_vector(seed_state, stride_powers, scale, val0, val1, first_edge, src, dst):
    """:func:`kronecker_edges_range` for ``scale <= VECTOR_MAX_SCALE``, ``VECTOR_LANES`` edges per vector."""
    num = src.size
    num_chunks = (num + EDGES_PER_CHUNK - 1) // EDGES_PER_CHUNK
    for c in prange(num_chunks):
        lo = c * EDGES_PER_CHUNK
        hi = min(num, lo + EDGES_PER_CHUNK)
        chunk_state = seed_state.copy()
        tmp = np.empty(5, dtype=np.int64)
        ei = first_edge + lo
        bit = 0
        while ei > 0:  # jump to this chunk's first edge: B**ei = prod of B**(2**bit) over set bits
            if ei & 1:
                _matvec_mod(stride_powers[bit], chunk_state, tmp)
                chunk_state[:] = tmp
            ei >>= 1
            bit += 1
        # lane l starts at edge lo + l; a group steps every lane by VECTOR_LANES edges
        lanes = np.empty((5, VECTOR_LANES), dtype=np.uint32)
        lane_state = chunk_state.copy()
        for lane in range(VECTOR_LANES):
            for k in range(5):
                lanes[k, lane] = lane_state[k]
            _matvec_mod(stride_powers[0], lane_state, tmp)
            lane_state[:] = tmp
        i = _vector_chunk(lanes, stride_powers[_LOG2_VECTOR_LANES], scale, val0, val1, src, dst, lo, hi)
        for k in range(5):
            chunk_state[k] = lanes[k, 0]  # the state of edge i
        edge_state = np.empty(5, dtype=np.int64)
        for tail in range(i, hi):
            edge_state[:] = chunk_state
            s, t = _one_edge(edge_state, scale)
            src[tail] = _scramble(s, scale, val0, val1)
            dst[tail] = _scramble(t, scale, val0, val1)
            _matvec_mod(stride_powers[0], chunk_state, tmp)
            chunk_state[:] = tmp


@njit(cache=True)
def mrg_doubles(state, count, out):
    """The reference's ``mrg_get_double_orig`` ``count`` times from ``state`` (advanced in place)."""
    for i in range(count):
        a = _mrg_next(state)
        b = _mrg_next(state)
        out[i] = a * 0.000000000465661287524579692 + b * 0.0000000000000000002168404346990492787
    return out


@njit(parallel=True, cache=True)
def uniform_edges(seeds, num_nodes, src, dst):
    """Uniform random endpoints: a splitmix64 stream per chunk of 2**16 edges (deterministic per seed)."""
    num = src.size
    chunk = 1 << 16
    num_chunks = (num + chunk - 1) // chunk
    for c in prange(num_chunks):
        x = seeds[c]
        for i in range(c * chunk, min(num, (c + 1) * chunk)):
            x = x + np.uint64(0x9E3779B97F4A7C15)
            z = x
            z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
            z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
            z = z ^ (z >> np.uint64(31))
            # two 32-bit halves -> two endpoints by multiply-shift (no modulo bias worth noting at 32 bits)
            src[i] = (z >> np.uint64(32)) * np.uint64(num_nodes) >> np.uint64(32)
            dst[i] = (z & np.uint64(0xFFFFFFFF)) * np.uint64(num_nodes) >> np.uint64(32)
