"""Text parsing compiled for the CPU: whitespace/comma separated edge lists, in parallel chunks.

Every line that is not blank and does not start with '#' or '%' (after blanks) is a data line; the
caller skips an optional header line by starting the first chunk after it. Fields are separated by any
run of spaces, tabs, carriage returns, commas or semicolons. Ids must be integers that fit in int64 (an
overflow is a malformed line). Values are parsed exactly when Clinger's fast path applies (at most 19
significant digits, mantissa <= 2**53 and a decimal exponent of at most 22 in magnitude: one correctly
rounded multiply or divide by an exact power of ten); any other token is flagged and its byte offset
stored in its slot so the caller converts it with Python's ``float()``, which makes every value
bit-identical to ``float()`` of its text.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit, prange
from numba.cpython.unsafe.numbers import leading_zeros

_NEWLINE = 10
_CR = 13
_INT64_MAX = np.int64(2**63 - 1)
# exact powers of ten (every one up to 1e22 is representable without rounding)
_POW10 = np.array([10.0**k for k in range(23)], dtype=np.float64)


def _pow5_128():
    """128-bit truncated 5**q for q in -342..308, normalized so the top bit is set (high, low words).

    For q < 0 it is 2**b // 5**-q + 1 (rounded up), as the Eisel-Lemire algorithm requires.
    """
    rows = []
    for q in range(-342, 309):
        if q < 0:
            p5 = 5 ** -q
            z = p5.bit_length()
            b = z + 127 if q >= -27 else 2 * z + 128
            c = 2**b // p5 + 1
            while c >= 1 << 128:
                c //= 2
        else:
            c = 5**q
            while c < 1 << 127:
                c *= 2
            while c >= 1 << 128:
                c //= 2
        rows.append((c >> 64, c & ((1 << 64) - 1)))
    return np.array(rows, dtype=np.uint64)


_POW5 = _pow5_128()
_U32 = np.uint64(32)
_MASK32 = np.uint64(0xFFFFFFFF)


@njit(inline="always")
def _mul128(a, b):
    """(low, high) 64-bit words of the 128-bit product of two uint64."""
    a_lo = a & _MASK32
    a_hi = a >> _U32
    b_lo = b & _MASK32
    b_hi = b >> _U32
    p0 = a_lo * b_lo
    p1 = a_lo * b_hi
    p2 = a_hi * b_lo
    p3 = a_hi * b_hi
    mid = (p0 >> _U32) + (p1 & _MASK32) + (p2 & _MASK32)
    lo = (p0 & _MASK32) | (mid << _U32)
    hi = p3 + (p1 >> _U32) + (p2 >> _U32) + (mid >> _U32)
    return lo, hi


@njit(inline="always")
def _eisel_lemire(w, q):
    """(value, ok) of w * 10**q for a non-zero exact mantissa w; not ok when it cannot decide or the
    result is subnormal or out of range (the caller then uses float())."""
    if q < -325 or q > 308:
        return 0.0, False
    lz = np.int64(leading_zeros(w))  # one instruction (w is non-zero)
    w = w << np.uint64(lz)
    hi_t = _POW5[q + 342, 0]
    lo_t = _POW5[q + 342, 1]
    lower, upper = _mul128(w, hi_t)
    full = np.uint64(0x1FF)
    if (upper & full) == full and lower + w < lower:
        product_low, product_middle2 = _mul128(w, lo_t)
        product_middle = lower + product_middle2
        if product_middle < lower:
            upper = upper + np.uint64(1)
        if product_middle + np.uint64(1) == np.uint64(0) and (upper & full) == full \
                and product_low + w < product_low:
            return 0.0, False
        lower = product_middle
    upperbit = upper >> np.uint64(63)
    mantissa = upper >> (upperbit + np.uint64(9))
    lz += 1 - np.int64(upperbit)
    if lower == np.uint64(0) and (upper & full) == np.uint64(0) and (mantissa & np.uint64(3)) == np.uint64(1):
        return 0.0, False
    mantissa = mantissa + (mantissa & np.uint64(1))
    mantissa = mantissa >> np.uint64(1)
    if mantissa >= np.uint64(1 << 53):
        mantissa = np.uint64(1 << 52)
        lz -= 1
    real_exponent = (((152170 + 65536) * q) >> 16) + 1024 + 63 - lz
    if real_exponent < 1 or real_exponent > 2046:
        return 0.0, False
    # mantissa holds the 53 significant bits (implicit one included): exact in a double, and ldexp
    # by the binary exponent is exact for normal results
    return math.ldexp(np.float64(mantissa), real_exponent - 1023 - 52), True


@njit(inline="always")
def _is_sep(c):
    return c == 32 or c == 9 or c == 44 or c == 59 or c == _CR


@njit(cache=True)
def chunk_bounds(buf, parts):
    """Split ``buf`` into ``parts`` ranges that each end just after a newline (or at the end)."""
    n = buf.size
    bounds = np.empty(parts + 1, dtype=np.int64)
    bounds[0] = 0
    for t in range(1, parts):
        pos = max(bounds[t - 1], (n * t) // parts)
        while 0 < pos < n and buf[pos - 1] != _NEWLINE:
            pos += 1
        bounds[t] = pos
    bounds[parts] = n
    return bounds


@njit(inline="always")
def _line_is_data(buf, i, end):
    while i < end and (buf[i] == 32 or buf[i] == 9 or buf[i] == _CR):
        i += 1
    return i < end and buf[i] != 35 and buf[i] != 37


@njit(parallel=True, cache=True)
def count_data_lines(buf, bounds, counts):
    for t in prange(bounds.size - 1):
        i = bounds[t]
        end = bounds[t + 1]
        c = 0
        while i < end:
            line_end = i
            while line_end < end and buf[line_end] != _NEWLINE:
                line_end += 1
            if _line_is_data(buf, i, line_end):
                c += 1
            i = line_end + 1
        counts[t] = c


@njit(inline="always")
def _parse_int(buf, i, end):
    """(value, next index, ok); not ok on no digits, a fractional part or a value beyond int64."""
    neg = False
    if buf[i] == 45:
        neg = True
        i += 1
    elif buf[i] == 43:
        i += 1
    v = np.int64(0)
    ok = False
    overflow = False
    while i < end and 48 <= buf[i] <= 57:
        d = np.int64(buf[i] - 48)
        if v > (_INT64_MAX - d) // 10:
            overflow = True
        else:
            v = v * 10 + d
        i += 1
        ok = True
    # a value like "12.0" is still an integer id; a fractional one is rejected
    frac = False
    if i < end and buf[i] == 46:
        i += 1
        while i < end and 48 <= buf[i] <= 57:
            if buf[i] != 48:
                frac = True
            i += 1
    return (-v if neg else v), i, ok and not frac and not overflow


@njit(inline="always")
def _parse_float(buf, i, end):
    """(value, next index, exact): exact is False when the token needs Python's float()."""
    start = i
    neg = False
    if i < end and buf[i] == 45:
        neg = True
        i += 1
    elif i < end and buf[i] == 43:
        i += 1
    m = np.uint64(0)
    sig = 0          # significant digits taken into m
    dropped = False  # a non-zero digit beyond 19 significant ones
    exp10 = 0
    got = False
    while i < end and 48 <= buf[i] <= 57:
        d = buf[i] - 48
        got = True
        if sig < 19:
            if m != 0 or d != 0:
                m = m * np.uint64(10) + np.uint64(d)
                sig += 1
        else:
            exp10 += 1
            if d != 0:
                dropped = True
        i += 1
    if i < end and buf[i] == 46:
        i += 1
        while i < end and 48 <= buf[i] <= 57:
            d = buf[i] - 48
            got = True
            if sig < 19:
                if m != 0 or d != 0:
                    m = m * np.uint64(10) + np.uint64(d)
                    sig += 1
                exp10 -= 1
            elif d != 0:
                dropped = True
            i += 1
    exact = got
    if got and i < end and (buf[i] == 101 or buf[i] == 69):
        j = i + 1
        eneg = False
        if j < end and (buf[j] == 45 or buf[j] == 43):
            eneg = buf[j] == 45
            j += 1
        e = 0
        edig = False
        while j < end and 48 <= buf[j] <= 57:
            if e < 100000:
                e = e * 10 + (buf[j] - 48)
            j += 1
            edig = True
        if not edig:
            exact = False
        exp10 += -e if eneg else e
        i = j
    # the token must end at a separator or the end of the line, else float() decides
    if i < end and not _is_sep(buf[i]):
        exact = False
    if exact and dropped:
        exact = False
    if exact and m != 0 and (m > np.uint64(2**53) or exp10 > 22 or exp10 < -22):
        v, exact = _eisel_lemire(m, exp10)
        if exact:
            return (-v if neg else v), i, True
    if not exact:
        while i < end and not _is_sep(buf[i]):
            i += 1
        return np.float64(start), i, False
    v = np.float64(m)
    if m != 0:
        if exp10 > 0:
            v = v * _POW10[exp10]
        elif exp10 < 0:
            v = v / _POW10[-exp10]
    return (-v if neg else v), i, True


@njit(parallel=True, cache=True)
def parse_edge_lines(buf, bounds, offsets, ids, extra, slow, bad_line):
    """Parse every data line into two integer ids and ``extra.shape[1]`` floats.

    ``bad_line[t]`` gets the byte offset of the first malformed line of chunk ``t`` (or -1): too few or too
    many fields, or an id that is not an integer within int64. ``slow[row, k]`` is 1 when value ``k`` of the
    row was not settled here; ``extra[row, k]`` then holds the token's byte offset.
    """
    num_extra = extra.shape[1]
    for t in prange(bounds.size - 1):
        i = bounds[t]
        end = bounds[t + 1]
        row = offsets[t]
        bad_line[t] = -1
        while i < end:
            line_start = i
            line_end = i
            while line_end < end and buf[line_end] != _NEWLINE:
                line_end += 1
            if _line_is_data(buf, i, line_end):
                j = i
                ok = True
                for f in range(num_extra):
                    slow[row, f] = 0
                for f in range(2 + num_extra):
                    while j < line_end and (_is_sep(buf[j])):
                        j += 1
                    if j >= line_end:
                        ok = False
                        break
                    if f < 2:
                        v, j, good = _parse_int(buf, j, line_end)
                        ids[row, f] = v
                        if not good:
                            ok = False
                            break
                    else:
                        x, j, good = _parse_float(buf, j, line_end)
                        extra[row, f - 2] = x
                        if not good:
                            slow[row, f - 2] = 1
                if ok:  # nothing but separators may follow the last field
                    while j < line_end and _is_sep(buf[j]):
                        j += 1
                    ok = j >= line_end
                if not ok and bad_line[t] < 0:
                    bad_line[t] = line_start
                row += 1
            i = line_end + 1
