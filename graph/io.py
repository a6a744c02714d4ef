"""Readers and writers: SNAP/CSV edge lists (parsed in parallel), Matrix Market, and ``.npz`` files."""

from __future__ import annotations

import re
import zipfile
import zlib

import numpy as np

from .._validate import check_bool, check_int_scalar, type_name
from . import _edgelist_text as _text
from ._base import GraphBase

__all__ = ["read_edgelist", "read_mtx", "save", "load"]

PROGRESS_MIN_BYTES = _text.PROGRESS_MIN_BYTES


def read_edgelist(path, *, relabel: bool = False, undirected: bool = False, num_nodes=None, idtype=None,
                  data_names=None, progress=None):
    """Read a SNAP-style edge list (or a CSV of edges) into a :class:`~graphkern.Graph`.

    The format is strict, and every problem is a ``ValueError`` naming the file, the 1-based line
    number and (truncated) the offending text:

    * lines whose first non-blank character is ``#`` or ``%`` are comments; blank lines are skipped;
    * fields are separated by runs of spaces, tabs, commas or semicolons;
    * a header line is allowed only as the first non-comment line and only when none of its fields is
      numeric; its names label the value columns;
    * every other line is ``src dst`` followed by as many values as the first data line has: a line of
      text, a missing or extra column, an id that is not an integer or is ``>= 2**63`` is refused;
    * ids are non-negative integers (``12.0`` is read as 12); negative ids are refused unless
      ``relabel=True`` compacts them; ids ``>= num_nodes`` are refused when ``num_nodes`` is given;
    * values are parsed bit-identical to Python's ``float()`` of their text (exponents, any number of
      digits, subnormals, ``inf``/``nan`` spellings that ``float()`` accepts).

    Every value column becomes ``g.edata[name]`` (indexed by edge id, int64 when every value is
    integral, else float64), named by the header, by ``data_names``, or ``"weight"`` for a single third
    column (``"col2"``, ``"col3"``, ... otherwise).

    Parameters
    ----------
    path : str or os.PathLike
    relabel : bool
        Map the ids that occur to ``0..n-1`` in ascending order (for non-contiguous ids); the original
        id of node ``i`` is ``g.ndata["orig_id"][i]``. Without it, ids are used as they are.
    undirected : bool
        Each line is an undirected edge: add the reverse of every non-loop edge too (edge ``E + i`` is
        the reverse of edge ``i``'s line, in line order).
    num_nodes : int, optional
        Node count (default: largest id + 1).
    idtype : numpy dtype, optional
        Id dtype of the graph (see :meth:`~graphkern.Graph.from_coo`).
    data_names : sequence of str, optional
        Names of the value columns (overrides the header).
    progress : bool, optional
        Progress bar for reading; by default for files above ~200 MB.

    Returns
    -------
    Graph

    Raises
    ------
    ValueError
        On any malformed line (with its number and text), an id overflow, or ids out of range.

    Examples
    --------
    >>> import graphkern as gk, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "g.txt")
    >>> _ = open(path, "w").write("# a comment\\n0\\t1\\t0.5\\n1\\t2\\t2.5\\n")
    >>> g = gk.graph.read_edgelist(path)
    >>> g.num_edges, g.edata["weight"].tolist()
    (2, [0.5, 2.5])
    >>> _ = open(path, "w").write("0 1\\nx7 12\\n")
    >>> gk.graph.read_edgelist(path)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: argument 'path': line 2 of ...: 'x7 12'
    """
    from .graph import Graph

    path = _text.file_path(path)
    relabel, undirected = check_bool("relabel", relabel), check_bool("undirected", undirected)
    if num_nodes is not None:
        num_nodes = check_int_scalar("num_nodes", num_nodes, low=0)
    buf = _text.read_bytes(path, progress)
    ids, extra, header, num_extra = _text.parse(path, buf)
    num_lines = ids.shape[0]
    src, dst = ids[:, 0], ids[:, 1]
    node_ids = None
    if relabel:
        node_ids, inverse = np.unique(np.concatenate([src, dst]), return_inverse=True)
        src, dst = inverse[:num_lines], inverse[num_lines:]
        if num_nodes is None:
            num_nodes = node_ids.size
    names = _extra_names(header, num_extra, data_names)
    columns = {name: _narrow(extra[:, i]) for i, name in enumerate(names)}
    if undirected:
        back = src != dst
        src, dst = np.concatenate([src, dst[back]]), np.concatenate([dst, src[back]])
        columns = {k: np.concatenate([v, v[back]]) for k, v in columns.items()}
    if num_nodes is not None and src.size and max(int(src.max()), int(dst.max())) >= num_nodes:
        # refused here, by the reader's own arguments: from_coo would name its 'src' or 'dst'
        raise ValueError(f"argument 'num_nodes': expected node ids below num_nodes={num_nodes}, found id "
                         f"{max(int(src.max()), int(dst.max()))} in {path!r}")
    g = Graph.from_coo(src, dst, num_nodes=num_nodes, idtype=idtype)
    g.edata.update(columns)
    if node_ids is not None:
        g.ndata["orig_id"] = node_ids
    return g


def _extra_names(header, num_extra, data_names):
    if data_names is not None:
        names = list(data_names) if isinstance(data_names, (list, tuple)) else None
        if names is None or not all(isinstance(n, str) for n in names):
            raise TypeError(f"argument 'data_names': expected a list of names (str), found {data_names!r}")
        if len(names) != num_extra:
            raise ValueError(f"argument 'data_names': expected {num_extra} names, found {len(names)}")
        return names
    if header is not None and len(header) == num_extra + 2:
        return header[2:]
    if num_extra == 1:
        return ["weight"]
    return [f"col{i + 2}" for i in range(num_extra)]


def _narrow(column: np.ndarray) -> np.ndarray:
    if column.size and np.all(np.isfinite(column)) and np.all(column == np.round(column)) \
            and np.abs(column).max() < 2**53:
        return column.astype(np.int64)
    return column


_MTX_FIELDS = {"pattern": 2, "integer": 3, "real": 3, "double": 3, "complex": 4}
_INTEGER_TEXT = re.compile(rb"[+-]?[0-9]+")


def _check_mtx_entries(path: str) -> str | None:
    """Refuse what ``scipy.io.mmread`` would read inexactly, by line: an entry line with more or fewer
    fields than the header's field declares (a pattern file's values were ignored) and, in an integer
    file, a value that is not an integer (``1.5`` was truncated to 1). Returns the declared field of a
    coordinate file (None for other files, which scipy's own checks and messages cover)."""
    with _text.open_input(path) as fh:
        header = fh.readline().split()
        if len(header) < 4 or header[0].lower() != b"%%matrixmarket" or header[2].lower() != b"coordinate":
            return None
        field = header[3].lower().decode("ascii", "replace")
        fields = _MTX_FIELDS.get(field)
        if fields is None:
            return None
        size_seen = False
        for number, line in enumerate(fh, start=2):
            tokens = line.split()
            if not tokens or tokens[0].startswith(b"%"):
                continue
            if not size_seen:  # "rows cols entries"
                size_seen = True
                continue
            if len(tokens) != fields:
                raise ValueError(f"argument 'path': line {number} of {path!r}: expected {fields} fields in a "
                                 f"{field} matrix, found {len(tokens)}")
            if field == "integer" and not _INTEGER_TEXT.fullmatch(tokens[2]):
                raise ValueError(f"argument 'path': line {number} of {path!r}: expected an integer value in an "
                                 f"integer matrix, found {tokens[2].decode('ascii', 'replace')!r}")
    return field


def read_mtx(path, *, idtype=None, edge_data: str | None = "weight"):
    """Read a Matrix Market file (through ``scipy.io.mmread``): an edge per stored non-zero.

    A symmetric matrix yields both directions; values go to ``g.edata[edge_data]`` unless the file is a
    pattern matrix or ``edge_data`` is None. Values are read as the header's field declares them, or the
    file is refused by line: an integer file holding ``1.5``, a pattern file with values, an entry with a
    missing field. Every entry of a coordinate file is an edge, numbered row by row in file order within
    a row: an explicit zero is an edge of value 0, an entry given twice two parallel edges (not their
    sum). A dense (``array``) file has an edge per non-zero. Any other problem SciPy finds (an index out
    of range, a value past int64, a missing banner, too few or too many entries) is a ``ValueError``
    naming the file and SciPy's reason (with its line where SciPy gives one).
    """
    import scipy.io
    import scipy.sparse as sp

    from .graph import Graph

    path = _text.file_path(path)
    if _check_mtx_entries(path) == "pattern":  # refuses a path that is not a readable file, by name
        edge_data = None  # a pattern stores no values (scipy would hand over ones)
    try:
        matrix = scipy.io.mmread(path)
    except (ValueError, OverflowError) as exc:  # SciPy names the line, not the file; OverflowError: past int64
        raise ValueError(f"argument 'path': {path!r} is refused as a Matrix Market file: {exc}") from None
    if not sp.issparse(matrix):  # a dense file: its zeros are not entries
        return Graph.from_scipy(sp.csr_array(matrix), idtype=idtype, edge_data=edge_data)
    # the entries as the file lists them: Graph.from_scipy would drop an explicit zero, and a CSR
    # conversion would sum an entry given twice
    coo = sp.coo_array(matrix)
    rows, cols, values = np.asarray(coo.row), np.asarray(coo.col), np.asarray(coo.data)
    order = np.argsort(rows, kind="stable")
    num_rows, num_cols = coo.shape
    g = Graph.from_coo(rows[order], cols[order], num_nodes=num_rows if num_rows == num_cols else coo.shape,
                       idtype=idtype)
    if edge_data is not None:
        g.edata[edge_data] = np.ascontiguousarray(values[order])
    return g


def save(g, path) -> None:
    """Save a graph (edges in edge-id order, node counts, ``edata``/``ndata``) to a ``.npz`` file.

    The file is written at ``path`` exactly as given (no ``.npz`` is appended, unlike ``numpy.savez``), so
    ``load(path)`` reads back what ``save(g, path)`` wrote whatever the name. Only numeric arrays are
    stored, so :func:`load` reads it back with ``allow_pickle=False``.

    Examples
    --------
    >>> import graphkern as gk, tempfile, os
    >>> path = os.path.join(tempfile.mkdtemp(), "g.npz")
    >>> gk.graph.save(gk.Graph.from_coo([0, 1], [1, 0]), path)
    >>> gk.graph.load(path).num_edges
    2
    """
    if not isinstance(g, GraphBase):
        raise TypeError(f"argument 'g': expected a graphkern Graph, found {type_name(g)}")
    src, dst = g.edges()
    arrays = {
        "src": src, "dst": dst,
        "shape": np.array([g.num_src, g.num_dst, int(g.is_block)], dtype=np.int64),
    }
    if g.num_edge_ids != g.num_edges:  # unused ids: keep each edge's id and the id space
        arrays["eids"] = np.sort(g.coo().eids)
        arrays["num_edge_ids"] = np.array([g.num_edge_ids], dtype=np.int64)
    for prefix, table in (("edata:", g.edata), ("ndata:", g.ndata)):
        for name, value in table.items():
            value = np.asarray(value)
            if value.dtype.hasobject:
                raise TypeError(f"argument 'g': {prefix}{name} holds Python objects, which .npz stores "
                                "only by pickling")
            arrays[prefix + name] = value
    with open(_text.file_path(path), "wb") as out:  # a file object: numpy.savez appends .npz to a name
        np.savez(out, **arrays)


def _stored_vector(path, key: str, values: np.ndarray, length: int) -> np.ndarray:
    if values.shape != (length,):
        raise ValueError(f"argument 'path': expected {key!r} of shape ({length},) in {path!r}, found shape "
                         f"{values.shape}")
    return values


def _stored_count(path, key: str, value) -> int:
    """A stored count: an integer (an integral float is fine) from 0 to int64's maximum."""
    value = value.item() if isinstance(value, np.generic) else value
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= np.iinfo(np.int64).max:
        raise ValueError(f"argument 'path': expected {key!r} to hold counts (integers >= 0) in {path!r}, found "
                         f"{value!r}")
    return value


# what numpy.load and reading a member raise on a missing, truncated or corrupt file (ValueError: not
# an archive, or a member whose header does not parse)
_UNREADABLE = (OSError, EOFError, ValueError, zipfile.BadZipFile, zlib.error)


def load(path, *, idtype=None):
    """Load a graph written by :func:`save` (no pickle is ever read).

    A file that is missing, not an ``.npz`` archive, truncated or corrupt is refused with a ValueError
    naming ``path`` and what went wrong; so is an archive without graphkern's arrays."""
    from .graph import Graph

    path = _text.file_path(path)
    try:
        with open(path, "rb") as fh:  # our handle: numpy.load leaves its own open when the zip is corrupt
            archive = np.load(fh, allow_pickle=False)
            single = not isinstance(archive, np.lib.npyio.NpzFile)
            if not single:
                with archive:  # every member read here: a truncated or corrupt one fails now, by name
                    data = {key: archive[key] for key in archive.files}
    except _UNREADABLE as exc:
        raise ValueError(f"argument 'path': expected an .npz file written by graphkern.graph.save, found "
                         f"{path!r} unreadable ({type(exc).__name__}: {exc})") from exc
    if single:
        raise ValueError(f"argument 'path': expected an .npz archive written by graphkern.graph.save, found a "
                         f"single array in {path!r}")
    missing = [key for key in ("src", "dst", "shape") if key not in data]
    if missing:
        raise ValueError(f"argument 'path': expected the arrays src, dst and shape in {path!r}, found "
                         f"{sorted(data)} (missing {', '.join(missing)})")
    num_src, num_dst, is_block = (_stored_count(path, "shape", x) for x in _stored_vector(path, "shape",
                                                                                        data["shape"], 3))
    num_nodes = (num_src, num_dst) if is_block else num_src
    if not is_block and num_src != num_dst:
        raise ValueError(f"argument 'path': {path!r} stores a square graph of {num_src} x {num_dst} nodes")
    eids = data.get("eids")
    space = None
    if "num_edge_ids" in data:
        space = _stored_count(path, "num_edge_ids", _stored_vector(path, "num_edge_ids", data["num_edge_ids"], 1)[0])
    g = Graph.from_coo(data["src"], data["dst"], num_nodes=num_nodes, idtype=idtype, eids=eids, num_edge_ids=space)
    for key, value in data.items():
        if key.startswith("edata:"):
            g.edata[key[6:]] = value
        elif key.startswith("ndata:"):
            g.ndata[key[6:]] = value
    return g
