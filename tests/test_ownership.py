"""One ownership rule (graphkern._validate.private) at every boundary where graphkern keeps a caller's
memory past the call: whatever the array protocol accepts, the caller may change its buffer afterwards
and the results stay those of the untouched original.

Each case builds with an input of every kind, overwrites the caller's buffer with ids that are valid
for no edge or node (the value a changed id would send a compiled kernel out of bounds with), then
compares the kernels' results with those of a build from untouched NumPy copies. The distributed
matrices are covered under MPI (tests/mpi/test_transpose.py, tests/mpi/test_bfs.py).

The other half of the rule: every array graphkern hands out is a read-only view or a copy, and a
read-only array handed back in is taken without compiling a read-only kernel specialisation.
docs/ownership.md lists the boundaries and accessors and which test reaches each."""

import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphkern as gk

torch = pytest.importorskip("torch")

import test_api_sweep  # (its table of every layer's well-formed arguments; needs torch)

SRC = np.array([0, 1, 2, 3, 3, 1], np.int64)
DST = np.array([1, 2, 0, 0, 2, 2], np.int64)
N = 4


def as_kind(kind: str, values: np.ndarray):
    """``values`` handed over as ``kind``, and a function that overwrites every element of it in place."""
    if kind == "list":
        obj = values.tolist()
        return obj, lambda v: obj.__setitem__(slice(None), [v] * len(obj))
    if kind == "numpy":
        obj = values.copy()
    elif kind == "numpy int32":
        obj = values.astype(np.int32)
    elif kind == "numpy slice":  # a view of a larger array
        base = np.zeros(2 * values.size, np.int64)
        base[::2] = values
        obj = base[::2]
    elif kind == "torch":
        obj = torch.from_numpy(values.copy())
    elif kind == "torch int32":
        obj = torch.from_numpy(values.astype(np.int32))
    elif kind == "array.array":
        obj = array.array("q", values.tolist())
    elif kind == "memoryview":
        obj = memoryview(values.copy())
    else:
        raise AssertionError(kind)

    def overwrite(v):
        if isinstance(obj, torch.Tensor):
            obj.fill_(v)
        elif isinstance(obj, array.array):
            obj[:] = array.array("q", [v] * len(obj))
        else:
            np.asarray(obj)[...] = v
    return obj, overwrite


KINDS = ["list", "numpy", "numpy int32", "numpy slice", "torch", "torch int32", "array.array", "memoryview"]


def _results(g):
    x = np.arange(g.num_src * 2, dtype=np.float64).reshape(g.num_src, 2)
    return (gk.spmm(g, "copy_lhs", "sum", x), gk.spmm(g, "copy_lhs", "max", x), gk.bfs(g, 0).levels,
            g.in_degrees(), g.csr().indices)


def _same(g, want):
    for got, ref in zip(_results(g), _results(want)):
        np.testing.assert_array_equal(got, ref)


def _csr(src, dst, n):
    order = np.argsort(src, kind="stable")
    indptr = np.concatenate([[0], np.cumsum(np.bincount(src, minlength=n))])
    return indptr, dst[order]


BOUNDARIES = ["from_coo src", "from_coo dst", "from_coo eids", "from_csr indptr", "from_csr indices",
              "from_csc indices"]


@settings(max_examples=40, deadline=None)
@given(kind=st.sampled_from(KINDS), boundary=st.sampled_from(BOUNDARIES),
       value=st.sampled_from([2**31 - 1, -1, 10**6, 0]))
def test_a_graph_keeps_no_buffer_its_caller_can_change(kind, boundary, value):
    want = gk.Graph.from_coo(SRC.copy(), DST.copy(), num_nodes=N)
    indptr, indices = _csr(SRC, DST, N)
    if boundary.startswith("from_coo"):
        arrays = {"src": SRC, "dst": DST, "eids": np.arange(SRC.size)[::-1].copy()}
        name = boundary.split()[1]
        given_obj, overwrite = as_kind(kind, arrays[name])
        arrays[name] = given_obj
        g = gk.Graph.from_coo(arrays["src"], arrays["dst"], num_nodes=N, eids=arrays["eids"])
        if name == "eids":
            want = gk.Graph.from_coo(SRC.copy(), DST.copy(), num_nodes=N, eids=np.arange(SRC.size)[::-1].copy())
    elif boundary == "from_csr indptr":
        given_obj, overwrite = as_kind(kind, indptr)
        g = gk.Graph.from_csr(given_obj, indices.copy())
    elif boundary == "from_csr indices":
        given_obj, overwrite = as_kind(kind, indices)
        g = gk.Graph.from_csr(indptr.copy(), given_obj)
    else:  # the CSC of the reversed graph is the CSR of this one
        given_obj, overwrite = as_kind(kind, indices)
        g = gk.Graph.from_csc(indptr.copy(), given_obj).reverse()
    overwrite(value)
    _same(g, want)


def _segment_reference(a, b, lengths):
    out = []
    start = 0
    for r, n in enumerate(lengths):
        out.append(a[start:start + n] @ b[r])
        start += n
    return torch.cat(out)


@pytest.mark.parametrize("kind", ["list", "numpy", "numpy slice", "torch", "array.array", "memoryview"])
def test_autograd_keeps_no_buffer_its_caller_can_change(kind):
    """segment_mm's seglen, gather_mm's index arrays and RelGraphConv's etypes are read again in backward."""
    import graphkern.torch as gkt

    a = torch.rand(5, 3, dtype=torch.float64, requires_grad=True)
    b = torch.rand(2, 3, 4, dtype=torch.float64, requires_grad=True)
    lengths = np.array([2, 3], np.int64)
    seglen, overwrite = as_kind(kind, lengths)
    out = gkt.segment_mm(a, b, seglen)
    overwrite(10**6)  # a backward reading it would run past the rows
    out.sum().backward()
    a2, b2 = a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    _segment_reference(a2, b2, [2, 3]).sum().backward()
    torch.testing.assert_close(a.grad, a2.grad)
    torch.testing.assert_close(b.grad, b2.grad)

    if kind in ("list", "array.array", "memoryview"):
        return  # gather_mm and RelGraphConv take tensors or arrays (checked above for the kinds they take)
    a.grad = b.grad = None
    idx = np.array([1, 0, 1, 1, 0], np.int64)
    idx_b, overwrite = as_kind(kind, idx)
    out = gkt.gather_mm(a, b, idx_b=idx_b)
    overwrite(7)
    out.sum().backward()
    a3, b3 = a.detach().clone().requires_grad_(), b.detach().clone().requires_grad_()
    torch.einsum("ij,ijk->ik", a3, b3[torch.from_numpy(idx)]).sum().backward()
    torch.testing.assert_close(a.grad, a3.grad)
    torch.testing.assert_close(b.grad, b3.grad)

    g = gk.Graph.from_coo(SRC, DST, num_nodes=N)
    types = np.array([0, 1, 1, 0, 1, 0], np.int64)
    etypes, overwrite = as_kind(kind, types)
    torch.manual_seed(0)
    layer = gkt.RelGraphConv(3, 2, 2).double()
    twin = gkt.RelGraphConv(3, 2, 2).double()
    twin.load_state_dict(layer.state_dict())
    x = torch.rand(N, 3, dtype=torch.float64)
    out = layer(g, x, etypes)
    overwrite(1)
    out.sum().backward()
    twin(g, x, torch.from_numpy(types)).sum().backward()
    for p, q in zip(layer.parameters(), twin.parameters()):
        torch.testing.assert_close(p.grad, q.grad)


# --------------------------------------------------------------------------- what graphkern hands out


def _handed_out_arrays(accessor: str):
    """``(arrays, check)``: what ``accessor`` hands out, and a function that asserts the object it came from
    still gives the results of an untouched twin."""
    g = gk.Graph.from_coo(SRC.copy(), DST.copy(), num_nodes=N)
    want = gk.Graph.from_coo(SRC.copy(), DST.copy(), num_nodes=N)
    check = lambda: _same(g, want)  # noqa: E731
    if accessor.startswith("graph "):
        name = accessor.split(maxsplit=1)[1]
        out = {"coo": g.coo, "csr": g.csr, "csc": g.csc, "edges": g.edges, "in_degrees": g.in_degrees,
               "out_degrees": g.out_degrees, "sorted_csr": g.sorted_csr, "to_edge_index": g.to_edge_index,
               "batch_num_nodes": g.batch_num_nodes, "batch_num_edges": g.batch_num_edges,
               "reverse().csr": lambda: g.reverse().csr(), "formats('coo').coo": lambda: g.formats("coo").coo(),
               "simple kept": lambda: g.simple(return_eids=True)[1],
               "node_subgraph parents": lambda: (lambda s: (s.parent_nids, s.parent_eids))(g.node_subgraph([0, 1]))
               }[name]()
        return out, check
    if accessor.startswith("to_scipy"):
        m = g.to_scipy(accessor.split()[1])
        return [getattr(m, k) for k in ("indptr", "indices", "row", "col", "data") if hasattr(m, k)], check
    if accessor.startswith("dynamic"):
        dg = gk.DynamicGraph(N)
        dg.apply(insert=(SRC, DST))
        twin = gk.DynamicGraph(N)
        twin.apply(insert=(SRC, DST))
        name = accessor.split(maxsplit=1)[1]
        out = {"edges": dg.edges, "in_degrees": dg.in_degrees, "out_degrees": dg.out_degrees,
               "contains": lambda: dg.contains(SRC, DST), "snapshot().csr": lambda: dg.snapshot().csr(),
               "snapshot().edges": lambda: dg.snapshot().edges()}[name]()

        def check_dynamic():
            for a, b in zip(dg.edges(), twin.edges()):
                np.testing.assert_array_equal(a, b)
            _same(dg.snapshot(), twin.snapshot())
        return out, check_dynamic
    if accessor == "temporal diffs":
        tg = gk.graph.temporal.TemporalGraph(SRC, DST, N, base=3, step=1)
        twin = gk.graph.temporal.TemporalGraph(SRC, DST, N, base=3, step=1)
        d = tg.diffs

        def check_temporal():
            for t in range(tg.num_steps):
                _same(tg.seek(t), twin.seek(t))
        return [*d.initial, *(a for step in d.steps for a in step)], check_temporal
    if accessor.startswith("incremental"):
        dg = gk.DynamicGraph(N)
        dg.apply(insert=(SRC, DST))
        inc = gk.IncrementalBFS(dg, 0)

        def check_incremental():
            dg.apply(delete=([0], [1]))
            inc.update()
            np.testing.assert_array_equal(inc.levels, gk.bfs(dg.snapshot(), 0).levels)
        return (inc.levels, inc.parents), check_incremental
    if accessor == "bfs result":
        res = gk.bfs(g, 0)
        return (res.parents, res.levels), check
    raise AssertionError(accessor)


ACCESSORS = ([f"graph {n}" for n in ("coo", "csr", "csc", "edges", "in_degrees", "out_degrees", "sorted_csr",
                                     "to_edge_index", "batch_num_nodes", "batch_num_edges", "reverse().csr",
                                     "formats('coo').coo", "simple kept", "node_subgraph parents")]
             + ["to_scipy csr", "to_scipy csc", "to_scipy coo"]
             + [f"dynamic {n}" for n in ("edges", "in_degrees", "out_degrees", "contains", "snapshot().csr",
                                         "snapshot().edges")]
             + ["temporal diffs", "incremental BFS", "bfs result"])


@pytest.mark.parametrize("accessor", ACCESSORS)
@settings(max_examples=3, deadline=None)
@given(value=st.sampled_from([2**31 - 1, -1, 10**6]))
def test_what_graphkern_hands_out_is_read_only_or_a_copy(accessor, value):
    """An array handed out is a read-only view (a write raises numpy's own error) or a copy (a write
    leaves the results of the object it came from unchanged)."""
    arrays, check = _handed_out_arrays(accessor)
    for arr in [arrays] if isinstance(arrays, np.ndarray) else arrays:
        assert isinstance(arr, np.ndarray), (accessor, type(arr))
        if not arr.flags.writeable:
            with pytest.raises(ValueError, match="read-only"):
                arr[...] = value
        elif arr.size:
            arr[...] = value if arr.dtype.kind in "iuf" and np.can_cast(np.min_scalar_type(value), arr.dtype) else 1
    check()


def test_read_only_arrays_handed_back_in_are_taken_without_a_second_specialisation():
    """What graphkern hands out comes back as input: constructors and features copy a read-only array
    into a writable one (Numba would compile a read-only specialisation of every kernel it reaches),
    and take a writable feature array as it is (no copy on the usual path)."""
    from graphkern._sparse_inputs import feature

    g = gk.Graph.from_coo(SRC.copy(), DST.copy(), num_nodes=N)
    for rebuilt in (gk.Graph.from_csr(*g.csr()), gk.Graph.from_coo(*g.edges(), num_nodes=N),
                    gk.Graph.from_csc(*g.csc()).reverse().reverse()):
        for arr in rebuilt._raw("csr"):
            assert arr is None or arr.flags.writeable
        _same(rebuilt.reverse().reverse() if rebuilt.num_src == N else rebuilt, g)
    x = np.arange(2 * N, dtype=np.float64).reshape(N, 2)
    assert feature("ufeat", x, N, "node") is x
    frozen = x.view()
    frozen.flags.writeable = False
    taken = feature("ufeat", frozen, N, "node")
    assert taken.flags.writeable and np.array_equal(taken, x)
    np.testing.assert_array_equal(gk.spmm(g, "copy_lhs", "sum", frozen), gk.spmm(g, "copy_lhs", "sum", x))


# --------------------------------------------------------------------------- the other boundaries


def _scipy_csr(which: str, obj):
    """A SciPy CSR matrix of the test graph whose ``which`` array is ``obj`` (SciPy keeps it uncopied)."""
    import scipy.sparse as sp

    indptr, indices = _csr(SRC, DST, N)
    arrays = {"indptr": indptr, "indices": indices, "data": np.arange(1.0, SRC.size + 1)}
    arrays[which] = obj
    return sp.csr_array((arrays["data"], arrays["indices"], arrays["indptr"]), shape=(N, N))


def _dynamic_results(dg):
    return (*dg.edges(), *_results(dg.snapshot()))


def _temporal_results(tg):
    # the edges of every step (the kernels on a snapshot are covered by _dynamic_results)
    return [a for t in range(tg.num_steps) for a in tg.seek(t).csr()]


# boundary -> (kinds it takes, build(obj) from the caller's object, results(built)); each builds from
# SRC/DST (or what they give), and one of its inputs is the caller's object of the kind drawn
OTHER_BOUNDARIES = {
    "from_edge_index": (["numpy", "numpy slice", "torch", "list"],
                        lambda o: gk.Graph.from_edge_index(o, num_nodes=N), _results),
    "from_pyg edge_index": (["numpy", "torch"],
                            lambda o: gk.Graph.from_pyg(__import__("types").SimpleNamespace(edge_index=o, num_nodes=N)),
                            _results),
    "from_scipy indptr": (["scipy"], lambda o: gk.Graph.from_scipy(_scipy_csr("indptr", o)), _results),
    "from_scipy indices": (["scipy"], lambda o: gk.Graph.from_scipy(_scipy_csr("indices", o)), _results),
    "from_scipy edge_data": (["scipy"], lambda o: gk.Graph.from_scipy(_scipy_csr("data", o), edge_data="w"),
                             lambda g: (g.edata["w"],)),
    "DynamicGraph.apply insert": (KINDS, lambda o: _applied(o), _dynamic_results),
    "TemporalGraph src": (KINDS, lambda o: gk.graph.temporal.TemporalGraph(o, DST.copy(), N, base=3, step=1),
                          _temporal_results),
}


def _applied(src):
    dg = gk.DynamicGraph(N)
    dg.apply(insert=(src, DST.copy()))
    return dg


def _boundary_input(boundary: str, kind: str):
    """The caller's object for ``boundary`` in ``kind``, its untouched NumPy twin, and its overwrite."""
    if boundary in ("from_edge_index", "from_pyg edge_index"):
        values = np.stack([SRC, DST])
        if kind == "numpy slice":
            base = np.zeros((2, 2 * SRC.size), np.int64)
            base[:, ::2] = values
            obj = base[:, ::2]
        else:
            obj = {"numpy": values.copy, "torch": lambda: torch.from_numpy(values.copy()),
                   "list": values.tolist}[kind]()
        if kind == "list":
            return obj, values, lambda v: obj.__setitem__(slice(None), [[v] * SRC.size] * 2)
        return obj, values, lambda v: (obj.fill_(v) if isinstance(obj, torch.Tensor) else obj.__setitem__(..., v))
    if boundary.startswith("from_scipy"):
        which = boundary.split()[1]
        indptr, indices = _csr(SRC, DST, N)
        twin = {"indptr": indptr, "indices": indices, "data": np.arange(1.0, SRC.size + 1)}[which.replace("edge_", "")]
        obj = twin.copy()
        return obj, twin, lambda v: obj.__setitem__(..., v)
    obj, overwrite = as_kind(kind, SRC)
    return obj, SRC.copy(), overwrite


@pytest.mark.parametrize(("boundary", "kind"), [(b, k) for b, (kinds, _, _) in sorted(OTHER_BOUNDARIES.items())
                                                 for k in kinds])
@settings(max_examples=2, deadline=None)
@given(value=st.sampled_from([2**31 - 1, -1, 10**6]))
def test_no_boundary_keeps_a_buffer_its_caller_can_change(boundary, kind, value):
    """Every other constructor that keeps memory (interop, SciPy, dynamic and temporal graphs), with every
    kind of input it takes: the caller overwrites what it passed, and the results are still those of
    the untouched original."""
    _, build, results = OTHER_BOUNDARIES[boundary]
    obj, twin, overwrite = _boundary_input(boundary, kind)
    built, want = build(obj), build(twin)
    overwrite(value)
    for got, ref in zip(results(built), results(want)):
        np.testing.assert_array_equal(got, ref)


def test_sgconv_cached_features_are_not_the_callers():
    """SGConv(k=0, cached=True) keeps the features of its first call; the caller's tensor changed in
    place afterwards does not change what the layer computes."""
    import graphkern.torch as gkt

    g = gk.Graph.from_coo(SRC, DST, num_nodes=N)
    torch.manual_seed(0)
    layer = gkt.SGConv(3, 2, k=0, cached=True, allow_zero_in_degree=True).double()
    x = torch.rand(N, 3, dtype=torch.float64)
    first = layer(g, x).detach().clone()
    x.fill_(1e6)
    torch.testing.assert_close(layer(g, x), first)


def _read_only_specialisations() -> list:
    """The compiled CPU kernels with a read-only array among the types of one of their specialisations."""
    import importlib
    import pkgutil

    import graphkern.kernels.cpu as kernels
    from numba.core import types

    found = []
    for info in pkgutil.walk_packages(kernels.__path__, "graphkern.kernels.cpu."):
        for name, obj in vars(importlib.import_module(info.name)).items():
            for sig in getattr(obj, "signatures", None) or ():
                if any(isinstance(t, types.Array) and not t.mutable for t in sig):
                    found.append(f"{info.name}.{name}{sig}")
    return found


def test_what_graphkern_hands_out_and_gets_back_reaches_no_kernel_read_only():
    """Accessors hand out read-only views, and graphkern's own code calls them too (transforms, the
    Graph500 check, temporal steps, conversions); none of it may hand a kernel a read-only array, which
    would compile a second specialisation of it. Feeds every handed-out array back in where it fits,
    then reads the specialisations Numba has made in this process."""
    import graphkern.torch as gkt

    g = gk.Graph.from_coo(SRC, DST, num_nodes=N)
    frozen = np.ones((N, 2))
    frozen.flags.writeable = False
    for h in (gk.Graph.from_csr(*g.csr()), gk.Graph.from_coo(*g.edges(), num_nodes=N), g.reverse().reverse()):
        gk.spmm(h, "copy_lhs", "sum", frozen)
        gk.spmm(h, "copy_lhs", "max", frozen)
        gk.bfs(h, 0)
    u = gk.graph.undirected(*g.edges(), N)
    gk.graph500.validate(u, 0, gk.bfs(u, 0).parents)
    g.node_subgraph([0, 1, 2]).csr()
    g.to_scipy().sort_indices()
    dg = gk.DynamicGraph(N)
    dg.apply(insert=g.edges())
    inc = gk.IncrementalBFS(dg, 0)
    dg.apply(delete=([0], [1]))
    inc.update()
    gk.graph500.validate(dg.snapshot(), 0, inc.parents, inc.levels, directed=True)
    tg = gk.graph.temporal.TemporalGraph(SRC, DST, N, base=3, step=1)
    tg.forward()
    tg.backward()
    gk.DynamicGraph(N).apply(insert=tg.diffs.initial)
    a = torch.rand(3, 2, dtype=torch.float64)
    b = torch.rand(2, 2, 2, dtype=torch.float64)
    index = np.array([0, 1, 1])
    index.flags.writeable = False
    gkt.gather_mm(a, b, idx_b=index)
    etypes = np.array([0, 1, 1, 0, 1, 0])
    etypes.flags.writeable = False
    gkt.RelGraphConv(2, 2, 2).double()(g, torch.rand(N, 2, dtype=torch.float64), etypes)
    assert _read_only_specialisations() == []


def _layer_inputs(fwd):
    """Fresh copies of a layer's forward arguments: float tensors requiring gradients, arrays copied."""
    fresh = {}
    for name, value in fwd.items():
        if isinstance(value, torch.Tensor):
            value = value.detach().clone()
            value.requires_grad_(value.is_floating_point())
        elif isinstance(value, np.ndarray):
            value = value.copy()
        fresh[name] = value
    return fresh


def _gradients(layer, inputs):
    """The gradients of the layer's parameters and of the inputs that require them, after a backward."""
    return [p.grad.clone() for p in layer.parameters() if p.grad is not None] + [
        v.grad.clone() for v in inputs.values() if isinstance(v, torch.Tensor) and v.grad is not None]


@pytest.mark.parametrize("name", sorted(test_api_sweep._layers()[0]))
def test_no_layer_keeps_a_buffer_its_caller_changes_before_backward(name):
    """Every layer of graphkern.torch.nn, the class closed: after a forward pass the caller writes into
    every tensor and array it passed (features, edge weights, edge and node types). The backward pass then
    either computes the gradients of the untouched forward, or refuses as torch refuses a saved tensor
    changed in place (its version counter). The arrays (types as NumPy arrays) have no version counter:
    what backward needs of them is graphkern's own copy. (A tensor written through a NumPy view of its
    memory is past any torch layer's contract: torch.nn.Linear computes other gradients then too.)"""
    layers, nn = test_api_sweep._layers()
    ctor, fwd = layers[name]
    torch.manual_seed(0)
    layer = getattr(nn, name)(**ctor).double()
    inputs = _layer_inputs(fwd)
    layer(**inputs).sum().backward()
    want = _gradients(layer, inputs)
    for change_tensors in (True, False):
        layer.zero_grad()
        inputs = _layer_inputs(fwd)
        out = layer(**inputs)
        for value in inputs.values():  # the caller reuses its buffers before calling backward
            if isinstance(value, torch.Tensor) and change_tensors:
                with torch.no_grad():
                    value.fill_(7)
            elif isinstance(value, np.ndarray):  # every type id moved to another valid one
                value[...] = (value + 1) % (value.max() + 1)
        try:
            out.sum().backward()
        except RuntimeError as exc:
            assert change_tensors and "modified by an inplace operation" in str(exc), exc
            continue
        got = _gradients(layer, inputs)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            torch.testing.assert_close(g, w)
