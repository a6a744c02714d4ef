"""Text parsing compiled for the CPU: whitespace/comma separated edge lists, in parallel chunks.

A line is data when its first non-blank character is a digit, a sign or a decimal point; lines starting
with '#' or '%' are comments and any other line (a CSV header, say) is skipped. Fields are separated by
any run of spaces, tabs, commas or semicolons.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

_NEWLINE = 10
_CR = 13


@njit(inline="always")
def _is_sep(c):
    return c == 32 or c == 9 or c == 44 or c == 59 or c == _CR


@njit(inline="always")
def _starts_number(c):
    return (48 <= c <= 57) or c == 45 or c == 43 or c == 46


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
    while i < end and (buf[i] == 32 or buf[i] == 9):
        i += 1
    return i < end and _starts_number(buf[i])


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
    neg = False
    if buf[i] == 45:
        neg = True
        i += 1
    elif buf[i] == 43:
        i += 1
    v = 0
    ok = False
    while i < end and 48 <= buf[i] <= 57:
        v = v * 10 + (buf[i] - 48)
        i += 1
        ok = True
    # a value like "12.0" is still an integer id; a fractional one is rejected by the caller
    frac = False
    if i < end and buf[i] == 46:
        i += 1
        while i < end and 48 <= buf[i] <= 57:
            if buf[i] != 48:
                frac = True
            i += 1
    return (-v if neg else v), i, ok and not frac


@njit(inline="always")
def _parse_float(buf, i, end):
    neg = False
    if buf[i] == 45:
        neg = True
        i += 1
    elif buf[i] == 43:
        i += 1
    v = 0.0
    ok = False
    while i < end and 48 <= buf[i] <= 57:
        v = v * 10.0 + (buf[i] - 48)
        i += 1
        ok = True
    if i < end and buf[i] == 46:
        i += 1
        scale = 0.1
        while i < end and 48 <= buf[i] <= 57:
            v += (buf[i] - 48) * scale
            scale *= 0.1
            i += 1
            ok = True
    if ok and i < end and (buf[i] == 101 or buf[i] == 69):
        j = i + 1
        eneg = False
        if j < end and (buf[j] == 45 or buf[j] == 43):
            eneg = buf[j] == 45
            j += 1
        e = 0
        got = False
        while j < end and 48 <= buf[j] <= 57:
            e = e * 10 + (buf[j] - 48)
            j += 1
            got = True
        if got:
            v = v * 10.0 ** (-e if eneg else e)
            i = j
    return (-v if neg else v), i, ok


@njit(parallel=True, cache=True)
def parse_edge_lines(buf, bounds, offsets, ids, extra, bad_line):
    """Parse every data line into two integer ids and ``extra.shape[1]`` floats.

    ``bad_line[t]`` gets the byte offset of the first malformed line of chunk ``t`` (or -1): too few or too many
    fields, or an id that is not an integer.
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
                for f in range(2 + num_extra):
                    while j < line_end and (_is_sep(buf[j])):
                        j += 1
                    if j >= line_end or not _starts_number(buf[j]):
                        ok = False
                        break
                    if f < 2:
                        v, j, good = _parse_int(buf, j, line_end)
                        ids[row, f] = v
                    else:
                        x, j, good = _parse_float(buf, j, line_end)
                        extra[row, f - 2] = x
                    if not good:
                        ok = False
                        break
                if ok:  # nothing but separators may follow the last field
                    while j < line_end and _is_sep(buf[j]):
                        j += 1
                    ok = j >= line_end
                if not ok and bad_line[t] < 0:
                    bad_line[t] = line_start
                row += 1
            i = line_end + 1
