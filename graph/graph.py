"""The :class:`Graph`: one directed (multi)graph or bipartite block, in up to three sparse formats.

A graph holds an edge set with stable edge ids ``0 .. E-1`` and any of three index formats, each built on
first use from one that exists and cached:

``coo``  ``(src, dst, eids)``: edge list; slot ``j`` is the edge with id ``eids[j]``.
``csr``  ``(indptr, indices, eids)``: rows are sources, ``indices`` are destinations (out-edges).
``csc``  ``(indptr, indices, eids)``: rows are destinations, ``indices`` are sources (in-edges).

Every format change is one stable parallel counting sort (:mod:`graphkern.kernels.cpu.sort`), so within a
row edges keep the order they had in the format they came from, and ``eids`` always maps a slot back to
the edge id, so edge features indexed by edge id work with every format. Multi-edges and self-loops are
kept; :meth:`Graph.simple` drops them on request.
"""


from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from .._backend import driver
from .._validate import check_bool, check_choice, is_device_array, read_only, to_host_array
from ..kernels.cpu import sort as _sort
from . import _construct, convert, interop, transform
from . import _formats as _fmt  # (Graph.__init__ has an argument named _formats)
from ._base import GraphBase
from ._formats import COO, CSC, CSR, FORMATS, normalise_formats

__all__ = ["Graph", "COO", "CSR", "CSC", "FORMATS"]


class Graph(GraphBase):
    """A directed graph (or bipartite block) with stable edge ids and lazily built sparse formats.

    Build one with :meth:`from_coo`, :meth:`from_csr`, :meth:`from_csc`, :meth:`from_scipy`,
    :meth:`from_networkx` or :meth:`from_edge_index`; never through the constructor.

    A graph never keeps a buffer its caller can still change: the constructors copy ``src``, ``dst``,
    ``indptr``, ``indices`` and ``eids`` when the validated array would share memory with the caller's
    (an array already in the graph's id dtype); a conversion to that dtype is the copy otherwise. A
    change the caller makes after construction therefore never reaches a compiled kernel, which trusts
    the ids it was given (``python tools/ownership_cost.py`` measures what the copy costs). Nor does it
    hand out one it relies on: :meth:`coo`, :meth:`csr`, :meth:`csc` and :meth:`edges` give read-only
    views (writing into one raises numpy's "assignment destination is read-only"), and the degrees,
    :meth:`sorted_csr` and the conversions (:meth:`to_scipy`, :meth:`to_edge_index`, ...) give copies.

    Examples
    --------
    >>> import numpy as np, graphkern as gk
    >>> g = gk.Graph.from_coo(np.array([0, 0, 2]), np.array([1, 2, 1]), num_nodes=3)
    >>> g.num_edges, g.in_degrees().tolist()
    (3, [0, 2, 1])
    >>> g.csc().indices.tolist(), g.csc().eids.tolist()
    ([0, 2, 0], [0, 2, 1])
    """

    __slots__ = ("_num_src", "_num_dst", "_num_edges", "_num_edge_ids", "_idtype", "_allowed", "_formats",
                 "_identity", "_is_block", "edata", "ndata", "_cache", "_device", "_symmetric", "_batch",
                 "parent_nids", "parent_eids", "_types", "__weakref__")

    def __init__(self, *, _num_src, _num_dst, _num_edges, _idtype, _allowed, _formats, _identity, _is_block,
                 _num_edge_ids=None, _device="cpu", _symmetric=False):
        self._num_src = int(_num_src)
        self._num_dst = int(_num_dst)
        self._num_edges = int(_num_edges)
        # the edge-id space: ids are distinct and below it; more than num_edges leaves unused ids (a
        # dynamic graph's snapshot keeps its stable ids, and edge features stay sized by the space)
        self._num_edge_ids = self._num_edges if _num_edge_ids is None else int(_num_edge_ids)
        self._idtype = np.dtype(_idtype)
        self._allowed = frozenset(_allowed)
        # name -> (a, b, eids or None); eids None means slot j holds edge j (only then is it in _identity)
        self._formats: dict[str, tuple] = dict(_formats)
        self._identity = set(_identity)
        self._is_block = bool(_is_block)
        self.edata: dict[str, np.ndarray] = {}
        self.ndata: dict[str, np.ndarray] = {}
        # derived data kernels reuse between calls (row partitions, ...); keyed by the kernel family
        self._cache: dict = {}
        # "cpu": the formats are NumPy arrays; "cuda": numba device arrays, built by the CUDA sort kernels
        self._device = _device
        # the edge set equals its reverse (u -> v exactly when v -> u, as often): the CSR's arrays are
        # then also the in-edge adjacency, and a search pulls through them without building a CSC
        self._symmetric = bool(_symmetric)
        # the parts of a batched graph (graph/transform.py BatchInfo); None for a graph not batched
        self._batch = None
        # a subgraph's parent node and edge ids (int64, read-only): DGL's ndata[dgl.NID] / edata[dgl.EID]
        self.parent_nids = None
        self.parent_eids = None
        # a graph converted from a DGL heterograph: its node and edge types (graph/interop.py GraphTypes)
        self._types = None
        self._restrict_to_allowed()

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_coo(cls, src, dst, num_nodes=None, *, idtype=None, formats=None, eids=None,
                 num_edge_ids=None) -> "Graph":
        """A graph from an edge list: edge ``i`` is ``src[i] -> dst[i]`` and has id ``i``.

        Parameters
        ----------
        src, dst : array_like of int
            Endpoints, equal lengths. Any integer dtype; they are converted to ``idtype``.
        num_nodes : int or (int, int), optional
            Node count, or ``(num_src, num_dst)`` for a bipartite block. Default: ``max id + 1``.
        idtype : {None, 'int32', 'int64'}
            Id dtype; by default int32 when every id and the edge count fit.
        formats : str or list of str, optional
            The formats that may be built (default all of ``coo``, ``csr``, ``csc``).
        eids : array_like of int, optional
            The id of each edge (default: its position).
        num_edge_ids : int, optional
            The edge-id space: ids are distinct and below it. Default: the number of edges (ids are a
            permutation). A larger space leaves ids unused: edge features then have ``num_edge_ids`` rows
            and SDDMM and edge softmax outputs are 0 at the unused ids.

        Examples
        --------
        >>> import graphkern as gk
        >>> g = gk.Graph.from_coo([0, 1], [1, 2], num_nodes=(2, 3))
        >>> g.num_src, g.num_dst, g.idtype
        (2, 3, dtype('int32'))
        """
        return _construct.from_coo(cls, src, dst, num_nodes, idtype, formats, eids, num_edge_ids)

    @classmethod
    def _symmetric_csr(cls, indptr: np.ndarray, indices: np.ndarray) -> "Graph":
        """A graph on arrays made here (nothing to copy or validate) whose CSR rows are sorted and whose
        edge set is symmetric; edge ids are CSR positions."""
        return _construct.symmetric_csr(cls, indptr, indices)

    @classmethod
    def _from_compressed(cls, kind, indptr, indices, eids, num_other, idtype, formats, other_name,
                         num_edge_ids=None) -> "Graph":
        """A graph from a CSR or CSC (``kind``), validated; see graph/_construct.py."""
        return _construct.from_compressed(cls, kind, indptr, indices, eids, num_other, idtype, formats, other_name,
                                          num_edge_ids)

    @classmethod
    def from_csr(cls, indptr, indices, eids=None, num_dst=None, *, idtype=None, formats=None,
                 num_edge_ids=None) -> "Graph":
        """A graph from its out-edge CSR: row ``r``'s destinations are ``indices[indptr[r]:indptr[r+1]]``.

        ``eids[j]`` is the edge id of slot ``j`` (a permutation of ``0..E-1``, or distinct ids below
        ``num_edge_ids`` when that is given, see :meth:`from_coo`; default: the slot itself).
        ``num_dst`` defaults to the number of rows (a square graph).

        Examples
        --------
        >>> import graphkern as gk
        >>> g = gk.Graph.from_csr([0, 2, 3], [0, 1, 0])
        >>> g.out_degrees().tolist(), g.edges()[1].tolist()
        ([2, 1], [0, 1, 0])
        """
        return cls._from_compressed("csr", indptr, indices, eids, num_dst, idtype, formats, "num_dst", num_edge_ids)

    @classmethod
    def from_csc(cls, indptr, indices, eids=None, num_src=None, *, idtype=None, formats=None,
                 num_edge_ids=None) -> "Graph":
        """A graph from its in-edge CSC: destination ``v``'s sources are ``indices[indptr[v]:indptr[v+1]]``.

        Examples
        --------
        >>> import graphkern as gk
        >>> g = gk.Graph.from_csc([0, 0, 2], [0, 1])
        >>> g.edges()[0].tolist(), g.edges()[1].tolist()
        ([0, 1], [1, 1])
        """
        return cls._from_compressed("csc", indptr, indices, eids, num_src, idtype, formats, "num_src", num_edge_ids)

    @classmethod
    def from_scipy(cls, matrix, *, idtype=None, formats=None, edge_data: str | None = None) -> "Graph":
        """An edge ``i -> j`` per stored non-zero ``A[i, j]``, ids in CSR order; see
        :func:`graphkern.graph.convert.from_scipy`."""
        return convert.from_scipy(cls, matrix, idtype=idtype, formats=formats, edge_data=edge_data)

    @classmethod
    def from_edge_index(cls, edge_index, num_nodes=None, *, idtype=None, formats=None) -> "Graph":
        """A graph from a PyG-style ``(2, E)`` edge index: row 0 sources, row 1 destinations.

        Examples
        --------
        >>> import numpy as np, graphkern as gk
        >>> gk.Graph.from_edge_index(np.array([[0, 1], [1, 2]])).num_dst
        3
        """
        ei = to_host_array("edge_index", edge_index)
        if ei.ndim != 2 or ei.shape[0] != 2:
            raise ValueError(f"argument 'edge_index': expected shape (2, E), found {ei.shape}")
        return cls.from_coo(ei[0], ei[1], num_nodes=num_nodes, idtype=idtype, formats=formats)

    @classmethod
    def from_networkx(cls, nx_graph, *, edge_attrs: Iterable[str] = (), idtype=None, formats=None) -> "Graph":
        """A graph from a networkx graph (undirected edges both ways); see
        :func:`graphkern.graph.convert.from_networkx`."""
        return convert.from_networkx(cls, nx_graph, edge_attrs=edge_attrs, idtype=idtype, formats=formats)

    # ------------------------------------------------------------------ properties

    @property
    def num_src(self) -> int:
        """Number of source nodes (rows of the adjacency matrix)."""
        return self._num_src

    @property
    def num_dst(self) -> int:
        """Number of destination nodes (columns of the adjacency matrix)."""
        return self._num_dst

    @property
    def num_nodes(self) -> int:
        """Number of nodes of a square graph (a bipartite block has ``num_src`` and ``num_dst``)."""
        if self._num_src != self._num_dst:
            raise ValueError(f"num_nodes: this block has {self._num_src} source and {self._num_dst} destination nodes")
        return self._num_src

    @property
    def num_edge_ids(self) -> int:
        """The edge-id space: every edge id is below it (equal to ``num_edges`` unless ids were left
        unused, see :meth:`from_coo`). Edge feature arrays have this many rows."""
        return self._num_edge_ids

    @property
    def num_edges(self) -> int:
        """Number of edges, multi-edges and self-loops included."""
        return self._num_edges

    @property
    def idtype(self) -> np.dtype:
        """Dtype of node and edge ids in every format (int32 or int64)."""
        return self._idtype

    @property
    def is_block(self) -> bool:
        """True for a bipartite block built with ``num_nodes=(num_src, num_dst)``."""
        return self._is_block

    def __repr__(self) -> str:
        created = ", ".join(sorted(self._formats))
        where = "" if self._device == "cpu" else f", device={self._device!r}"
        return (f"Graph(num_src={self._num_src}, num_dst={self._num_dst}, num_edges={self._num_edges}, "
                f"idtype={self._idtype}, formats=[{created}]{where})")

    # ------------------------------------------------------------------ formats

    def formats(self, formats=None):
        """Without arguments, the formats created and not yet created (as DGL reports them).

        With a format name or list, a graph sharing this one's arrays that may only use those formats
        (one of them is built now if none exists).

        Examples
        --------
        >>> import graphkern as gk
        >>> g = gk.Graph.from_coo([0], [1])
        >>> g.formats()
        {'created': ['coo'], 'not created': ['csr', 'csc']}
        >>> g.formats("csc").formats()
        {'created': ['csc'], 'not created': []}
        """
        if formats is None:
            created = [f for f in FORMATS if f in self._formats]
            return {"created": created, "not created": [f for f in FORMATS if f in self._allowed and f not in created]}
        allowed = normalise_formats(formats)
        have = [f for f in FORMATS if f in allowed and f in self._formats]
        if not have:
            target = next(f for f in ("csc", "csr", "coo") if f in allowed)
            self._build(target)
        return self._clone(allowed=allowed)

    @property
    def types(self) -> interop.GraphTypes | None:
        """The node and edge types of a graph converted from a DGL heterograph (``Graph.from_dgl``), as a
        :class:`~graphkern.graph.interop.GraphTypes`; None for any other graph. Kept by :meth:`to` and
        :meth:`formats`; the transforms return graphs without types.

        Examples
        --------
        >>> import graphkern as gk
        >>> gk.Graph.from_coo([0], [1]).types is None
        True
        """
        return self._types

    @property
    def device(self) -> str:
        """Where the formats live: ``"cpu"`` (NumPy arrays) or ``"cuda"`` (device arrays)."""
        return self._device

    def to(self, device: str) -> "Graph":
        """This graph with its created formats (and ``edata``/``ndata`` arrays) on ``device``.

        ``"cuda"`` copies NumPy arrays to the GPU once; ``"cpu"`` copies device arrays back. Formats built
        later are built where the graph lives (on the GPU by the CUDA count sort). A graph already on
        ``device`` is returned as it is.

        Examples
        --------
        >>> import graphkern as gk
        >>> g = gk.Graph.from_coo([0, 1], [1, 0])
        >>> g.to("cpu") is g, g.device
        (True, 'cpu')
        """
        from .. import _cuda

        check_choice("device", device, ("cpu", "cuda"))
        if device == self._device:
            return self
        if device == "cuda":
            _cuda.require_cuda()
            move = lambda arr: None if arr is None else _cuda.to_device("format", arr)  # noqa: E731
        else:
            move = lambda arr: None if arr is None else _cuda.to_host(arr)  # noqa: E731
        formats = {name: tuple(move(x) for x in arrays) for name, arrays in self._formats.items()}
        g = Graph(_num_src=self._num_src, _num_dst=self._num_dst, _num_edges=self._num_edges,
                  _num_edge_ids=self._num_edge_ids, _idtype=self._idtype, _allowed=self._allowed,
                  _formats=formats, _identity=self._identity, _is_block=self._is_block, _device=device,
                  _symmetric=self._symmetric)
        movable = lambda v: isinstance(v, np.ndarray) or is_device_array(v)  # noqa: E731
        g.edata = {k: move(v) if movable(v) else v for k, v in self.edata.items()}
        g.ndata = {k: move(v) if movable(v) else v for k, v in self.ndata.items()}
        g._batch, g.parent_nids, g.parent_eids = self._batch, self.parent_nids, self.parent_eids
        g._types = self._types
        return g

    def _format_steps(self):
        """The ``formats`` driver module of the device the formats live on (``graphkern._cpu.formats`` or
        ``graphkern._cuda.formats``: the same functions, each allocating its outputs on that device)."""
        return driver(self._device).formats

    def _require_host(self, what: str) -> None:
        if self._device != "cpu":
            raise ValueError(f"{what} works on a graph in host memory; this one is on {self._device}: "
                             f"call g.to('cpu') first")

    def _clone(self, *, allowed=None) -> "Graph":
        g = Graph(_num_src=self._num_src, _num_dst=self._num_dst, _num_edges=self._num_edges,
                  _num_edge_ids=self._num_edge_ids, _device=self._device,
                  _idtype=self._idtype, _allowed=self._allowed if allowed is None else allowed,
                  _formats=self._formats, _identity=self._identity, _is_block=self._is_block,
                  _symmetric=self._symmetric)
        g.edata = dict(self.edata)
        g.ndata = dict(self.ndata)
        g._batch, g.parent_nids, g.parent_eids = self._batch, self.parent_nids, self.parent_eids
        g._types = self._types
        return g

    def _restrict_to_allowed(self):
        for name in list(self._formats):
            if name not in self._allowed:
                if not any(f in self._formats for f in self._allowed):
                    # build an allowed format from this one before dropping it
                    self._build(next(f for f in ("csc", "csr", "coo") if f in self._allowed), allow_any=True)
                del self._formats[name]
                self._identity.discard(name)

    def has_format(self, name: str) -> bool:
        """Whether ``name`` is created already (no work needed to use it)."""
        return check_choice("name", name, FORMATS) in self._formats

    def allows_format(self, name: str) -> bool:
        """Whether ``name`` may be built for this graph."""
        return check_choice("name", name, FORMATS) in self._allowed

    def _raw(self, name: str) -> tuple:
        """``(a, b, eids_or_None)`` of a format, building it if needed; ``None`` eids mean identity."""
        if name not in self._formats:
            self._build(name)
        return self._formats[name]

    def _build(self, name: str, allow_any: bool = False) -> None:
        if name in self._formats:
            return
        if not allow_any and name not in self._allowed:
            raise ValueError(
                f"format '{name}' is not allowed for this graph (allowed: {sorted(self._allowed)}); "
                f"call g.formats([...]) to allow it"
            )
        _fmt.build_format(self, name)

    def _eids_or_arange(self, name: str) -> np.ndarray:
        a, b, eids = self._raw(name)
        if eids is None:
            eids = self._format_steps().arange(self._num_edges, self._idtype)
            self._formats[name] = (a, b, eids)
            # the arange is still the identity; kernels may keep skipping the indirection
        return eids

    def _handed_out(self, name: str) -> tuple:
        """Format ``name`` as read-only views (see :func:`graphkern._validate.read_only`): the graph's own
        arrays stay writable for the kernels, the caller's views refuse writes."""
        a, b, _ = self._raw(name)
        return tuple(read_only(x) for x in (a, b, self._eids_or_arange(name)))

    def coo(self) -> COO:
        """The edge list ``(src, dst, eids)``, built if needed; read-only views of the graph's arrays.

        Examples
        --------
        >>> import graphkern as gk
        >>> src = gk.Graph.from_coo([0, 1], [1, 0]).coo().src
        >>> src.flags.writeable    # src[0] = 5 raises: the graph relies on this memory
        False
        """
        return COO(*self._handed_out("coo"))

    def csr(self) -> CSR:
        """The out-edge CSR ``(indptr, indices, eids)``, built if needed; read-only views of the graph's
        arrays (copy one to change it: ``g.csr().indices.copy()``)."""
        return CSR(*self._handed_out("csr"))

    def csc(self) -> CSC:
        """The in-edge CSC ``(indptr, indices, eids)``, built if needed; read-only views of the graph's
        arrays."""
        return CSC(*self._handed_out("csc"))

    def eids_are_identity(self, name: str) -> bool:
        """True when slot ``j`` of format ``name`` holds edge ``j`` (kernels skip the indirection)."""
        return name in self._identity

    def _in_adjacency_format(self) -> str:
        """The format :meth:`_in_adjacency` reads: the CSC, or on a symmetric graph the CSR."""
        return "csr" if self._symmetric and "csr" in self._allowed else "csc"

    def _in_adjacency(self) -> tuple:
        """``(indptr, indices)`` listing each destination's sources: the CSC's, or on a symmetric graph the
        CSR's own arrays (the same lists, with no CSC built). For searches, which need no edge ids."""
        indptr, indices, _ = self._raw(self._in_adjacency_format())
        return indptr, indices

    # ------------------------------------------------------------------ queries and transforms

    def in_degrees(self) -> np.ndarray:
        """Number of in-edges of every destination node (multi-edges counted)."""
        return _fmt.degrees(self, "csc", 1, self._num_dst)

    def out_degrees(self) -> np.ndarray:
        """Number of out-edges of every source node (multi-edges counted)."""
        return _fmt.degrees(self, "csr", 0, self._num_src)

    def edges(self) -> tuple[np.ndarray, np.ndarray]:
        """``(src, dst)`` ordered by edge id: ``src[e] -> dst[e]`` is edge ``e`` (with unused ids, see
        :attr:`num_edge_ids`, the edges in ascending id order). Read-only: they may be the graph's own
        arrays."""
        return tuple(read_only(x) for x in self._edges_by_id())

    def _edges_by_id(self) -> tuple:
        """:meth:`edges`, writable (the graph's own arrays where its slots are edge ids)."""
        name = next((f for f in ("coo", "csr", "csc") if f in self._identity), None)
        if name == "coo":
            src, dst, _ = self._formats["coo"]
            return src, dst
        src, dst, eids = self._raw("coo")
        if name is not None or eids is None:
            return src, dst
        if self._num_edge_ids != self._num_edges:
            self._require_host("edges() with unused edge ids")
            order = np.argsort(eids, kind="stable")
            return src[order], dst[order]
        steps = self._format_steps()
        return steps.scatter_by_eid(src, eids), steps.scatter_by_eid(dst, eids)

    def reverse(self) -> "Graph":
        """The transposed graph (every edge ``u -> v`` becomes ``v -> u``) with the same edge ids.

        No data is copied: the CSC of this graph is the CSR of the reverse and vice versa.

        Examples
        --------
        >>> import graphkern as gk
        >>> r = gk.Graph.from_coo([0, 0], [1, 2]).reverse()
        >>> r.out_degrees().tolist()
        [0, 1, 1]
        """
        swap = {"coo": "coo", "csr": "csc", "csc": "csr"}
        formats = {}
        for name, (a, b, eids) in self._formats.items():
            formats[swap[name]] = (b, a, eids) if name == "coo" else (a, b, eids)
        g = Graph(_num_src=self._num_dst, _num_dst=self._num_src, _num_edges=self._num_edges,
                  _num_edge_ids=self._num_edge_ids,
                  _idtype=self._idtype, _allowed={swap[f] for f in self._allowed}, _formats=formats,
                  _identity={swap[f] for f in self._identity}, _is_block=self._is_block, _device=self._device,
                  _symmetric=self._symmetric)
        g.edata = dict(self.edata)
        g._batch = None if self._batch is None else self._batch.reversed()
        g.parent_eids = self.parent_eids
        return g

    def simple(self, *, return_eids: bool = False):
        """A copy without self-loops and parallel edges (the first edge id of each pair is kept).

        The result's edges are numbered in CSR order with sorted destinations. With ``return_eids=True``
        also returns, for each new edge, the id it had here (to carry edge data over).

        Examples
        --------
        >>> import graphkern as gk
        >>> g = gk.Graph.from_coo([0, 0, 1, 1], [1, 1, 1, 0])
        >>> s, kept = g.simple(return_eids=True)
        >>> s.edges()[0].tolist(), s.edges()[1].tolist(), kept.tolist()
        ([0, 1], [1, 0], [0, 3])
        """
        self._require_host("simple()")
        return_eids = check_bool("return_eids", return_eids)
        indptr, indices, eids = self.sorted_csr()
        keep = _sort.mark_unique_sorted_rows(indptr, indices, not self._is_block, np.empty(indices.size, np.bool_))
        kept_before = np.zeros(indices.size + 1, dtype=np.int64)
        np.cumsum(keep, out=kept_before[1:])
        new_indptr = kept_before[indptr].astype(self._idtype)
        g = Graph(_num_src=self._num_src, _num_dst=self._num_dst, _num_edges=int(kept_before[-1]),
                  _idtype=self._idtype, _allowed=self._allowed | {"csr"},
                  _formats={"csr": (new_indptr, indices[keep], None)}, _identity={"csr"},
                  _is_block=self._is_block, _symmetric=self._symmetric)
        g._cache["sorted_csr"] = CSR(*g._formats["csr"])  # rows stay sorted: the validator's binary search reuses them
        g.ndata = dict(self.ndata)
        return (g, eids[keep]) if return_eids else g

    def sorted_csr(self) -> CSR:
        """A CSR whose rows list destinations in ascending order (parallel edges in edge-id order).

        Two stable count sorts, to CSC and back; the graph's own CSR is not changed.
        """
        self._require_host("sorted_csr()")
        return _fmt.sorted_csr(self)

    def to_scipy(self, fmt: str = "csr", data=None):
        """The adjacency as a ``scipy.sparse`` array; see :func:`graphkern.graph.convert.to_scipy`."""
        return convert.to_scipy(self, fmt, data)

    def to_networkx(self):
        """A ``networkx.MultiDiGraph`` with an ``id`` per edge; see :func:`graphkern.graph.convert.to_networkx`."""
        return convert.to_networkx(self)

    # ------------------------------------------------------------------ transforms and interop
    # thin wrappers: the implementations and their examples are in graph/transform.py and graph/interop.py

    def add_self_loop(self) -> "Graph":
        """One self-loop per node appended after the edges; see :func:`graphkern.graph.transform.add_self_loop`."""
        return transform.add_self_loop(self)

    def remove_self_loop(self, *, return_eids: bool = False):
        """Self-loops dropped, edge ids compacted; see :func:`graphkern.graph.transform.remove_self_loop`."""
        return transform.remove_self_loop(self, return_eids=return_eids)

    def node_subgraph(self, nodes) -> "Graph":
        """The subgraph induced by ``nodes``; see :func:`graphkern.graph.transform.node_subgraph`."""
        return transform.node_subgraph(self, nodes)

    def in_subgraph(self, nodes) -> "Graph":
        """All nodes, the in-edges of ``nodes``; see :func:`graphkern.graph.transform.in_subgraph`."""
        return transform.in_subgraph(self, nodes)

    def batch_num_nodes(self, side: str | None = None) -> np.ndarray:
        """Node counts per part (int64); see :func:`graphkern.graph.transform.batch_num_nodes`."""
        return transform.batch_num_nodes(self, side)

    def batch_num_edges(self) -> np.ndarray:
        """Edge counts per part (int64); see :func:`graphkern.graph.transform.batch_num_edges`."""
        return transform.batch_num_edges(self)

    @property
    def batch_size(self) -> int:
        """Number of graphs batched into this one (1 for a graph not batched)."""
        return 1 if self._batch is None else len(self._batch.is_block)

    def to_edge_index(self) -> np.ndarray:
        """PyG's ``(2, E)`` int64 edge index in edge-id order; see :func:`graphkern.graph.interop.to_edge_index`."""
        return interop.to_edge_index(self)

    @classmethod
    def from_dgl(cls, dg, *, idtype=None, formats=None) -> "Graph":
        """A graph from a DGL graph or block, edge ids kept; see :func:`graphkern.graph.interop.from_dgl`."""
        return interop.from_dgl(cls, dg, idtype=idtype, formats=formats)

    def to_dgl(self):
        """A ``dgl.graph`` (or block) with the same edge ids; see :func:`graphkern.graph.interop.to_dgl`."""
        return interop.to_dgl(self)

    @classmethod
    def from_pyg(cls, data, *, num_nodes=None, idtype=None, formats=None) -> "Graph":
        """A graph from a PyG ``Data`` (duck-typed); see :func:`graphkern.graph.interop.from_pyg`."""
        return interop.from_pyg(cls, data, num_nodes=num_nodes, idtype=idtype, formats=formats)

    def to_pyg(self):
        """A ``torch_geometric.data.Data``; see :func:`graphkern.graph.interop.to_pyg`."""
        return interop.to_pyg(self)
