"""The edge-list text reader behind :func:`graphkern.graph.read_edgelist`.

The file is read into one byte buffer; Python finds the optional header line, the compiled kernels
(:mod:`graphkern.kernels.cpu.parse`) count and parse the data lines in parallel chunks split at
newlines, and the few values the compiled code cannot settle exactly are converted here with
``float()``, so every value is bit-identical to ``float()`` of its text.
"""

from __future__ import annotations

import contextlib
import os

import numpy as np

from ..kernels.cpu import parse as _parse

# Files above this size (about 10**7 edge lines) are read with a progress bar.
PROGRESS_MIN_BYTES = 200 << 20
_READ_BLOCK = 64 << 20
_SHOW = 60  # characters of an offending line quoted in an error
_SEPS = b" \t\r,;"


def file_path(path) -> str:
    """``path`` (str, bytes or os.PathLike) as a str, or a TypeError naming the argument (os.fspath's own
    names no argument). A str because not every library a reader hands it to takes bytes (scipy.io)."""
    try:
        name = os.fsdecode(os.fspath(path))
    except TypeError as exc:
        raise TypeError(f"argument 'path': expected a str or os.PathLike, found {type(path).__name__}") from exc
    if "\0" in name:  # open() refuses it without naming the argument
        raise ValueError(f"argument 'path': expected a file name, found {name!r} (holds a NUL character)")
    return name


@contextlib.contextmanager
def open_input(path, mode: str = "rb", **kwargs):
    """``open(path, mode)`` for a reader: a file that is missing, a folder or unreadable is refused with a
    ValueError naming ``path`` and the OS's reason (as :func:`graphkern.graph.load` does), so every
    problem with a reader's input is a ValueError; a ``path`` that is not path-like is a TypeError."""
    name = file_path(path)
    try:
        fh = open(name, mode, **kwargs)  # noqa: SIM115 - closed below, after the reader is done
    except OSError as exc:
        raise ValueError(f"argument 'path': expected a readable file, found {name!r} unreadable "
                         f"({type(exc).__name__}: {exc.strerror or exc})") from exc
    with fh:
        yield fh


def read_bytes(path, progress) -> np.ndarray:
    with open_input(path) as fh:
        size = os.fstat(fh.fileno()).st_size
        if progress is None:
            progress = size >= PROGRESS_MIN_BYTES
        buf = np.empty(size, dtype=np.uint8)
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=size, desc=f"reading {os.path.basename(path)}", unit="B", unit_scale=True,
                       leave=False)
        view = memoryview(buf)
        pos = 0
        while pos < size:
            got = fh.readinto(view[pos : pos + _READ_BLOCK])
            if not got:
                break
            pos += got
            if bar is not None:
                bar.update(got)
    if bar is not None:
        bar.close()
    # a UTF-8 byte-order mark (written by some Windows editors) is not part of the first line's text
    start = 3 if pos >= 3 and bytes(buf[:3]) == b"\xef\xbb\xbf" else 0
    return buf[start:pos]


def _fields(line: bytes) -> list[bytes]:
    for sep in _SEPS[1:]:
        line = line.replace(bytes([sep]), b" ")
    return line.split()


def _is_number(field: bytes) -> bool:
    try:
        float(field)
    except ValueError:
        return False
    return True


def _line_text(buf: np.ndarray, at: int) -> str:
    end = at
    stop = min(buf.size, at + 4 * _SHOW)
    while end < stop and buf[end] != 10:
        end += 1
    text = bytes(buf[at:end]).decode("utf-8", errors="replace").rstrip("\r")
    return text if len(text) <= _SHOW else text[:_SHOW] + "..."


def _line_number(buf: np.ndarray, at: int) -> int:
    return int(np.count_nonzero(buf[:at] == 10)) + 1


def _line_end(buf: np.ndarray, pos: int) -> int:
    step = 1 << 12
    while True:
        stop = min(buf.size, pos + step)
        hits = np.flatnonzero(buf[pos:stop] == 10)
        if hits.size:
            return pos + int(hits[0])
        if stop == buf.size:
            return buf.size
        step *= 4


def first_data_line(buf: np.ndarray):
    """(offset of the first data line, its number of fields, header names or None, where data starts).

    The first non-blank, non-comment line is a header when none of its fields is numeric (``float()``
    accepts none of them); it is then skipped and the next such line fixes the field count.
    """
    header = None
    data_start = 0
    pos = 0
    while pos < buf.size:
        end = _line_end(buf, pos)
        line = bytes(buf[pos:end]).strip(b" \t\r")
        if line and line[:1] not in (b"#", b"%"):
            fields = _fields(line)
            if header is None and not any(_is_number(f) for f in fields):
                header = [f.decode("utf-8", errors="replace") for f in fields]
                data_start = pos = end + 1
                continue
            return pos, len(fields), header, data_start
        pos = end + 1
    return buf.size, 2, header, min(data_start, buf.size)


def parse(path, buf: np.ndarray):
    """(ids (E, 2) int64, values (E, k) float64, header or None, number of value columns)."""
    at, num_fields, header, data_start = first_data_line(buf)
    if num_fields < 2:
        raise ValueError(f"argument 'path': line {_line_number(buf, at)} of {path} has fewer than two "
                         f"columns (source, destination): {_line_text(buf, at)!r}")
    num_extra = num_fields - 2
    parts = max(1, min(os.cpu_count() or 1, buf.size >> 20))
    bounds = _parse.chunk_bounds(buf, parts)
    bounds = np.maximum(bounds, min(data_start, buf.size))
    bounds[-1] = buf.size
    counts = np.empty(parts, dtype=np.int64)
    _parse.count_data_lines(buf, bounds, counts)
    offsets = np.zeros(parts + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    num_lines = int(offsets[-1])
    ids = np.empty((num_lines, 2), dtype=np.int64)
    extra = np.empty((num_lines, num_extra), dtype=np.float64)
    slow = np.empty((num_lines, num_extra), dtype=np.uint8)
    bad = np.empty(parts, dtype=np.int64)
    _parse.parse_edge_lines(buf, bounds, offsets, ids, extra, slow, bad)
    if (bad >= 0).any():
        at = int(bad[bad >= 0].min())
        raise ValueError(
            f"argument 'path': line {_line_number(buf, at)} of {path} is not 'src dst' followed by "
            f"{num_extra} value(s) (ids: non-negative integers below 2**63, as on the first data line): "
            f"{_line_text(buf, at)!r}")
    if num_extra:
        _settle(path, buf, extra, slow)
    return ids, extra, header, num_extra


def _settle(path, buf, extra, slow) -> None:
    """Convert the values the compiled parser left to ``float()`` (their slot holds the byte offset)."""
    for row, k in np.argwhere(slow).tolist():
        at = int(extra[row, k])
        end = at
        while end < buf.size and int(buf[end]) not in _SEPS and buf[end] != 10:
            end += 1
        token = bytes(buf[at:end])
        try:
            extra[row, k] = float(token.decode("ascii"))
        except (UnicodeDecodeError, ValueError):
            line_start = int(bytes(buf[:at]).rfind(b"\n")) + 1
            raise ValueError(
                f"argument 'path': line {_line_number(buf, at)} of {path}: value {k + 1} is not a number "
                f"Python's float() accepts: {_line_text(buf, line_start)!r}") from None
