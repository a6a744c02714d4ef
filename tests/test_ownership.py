"""One ownership rule (graphkern._validate.private) at every boundary where graphkern keeps a caller's
memory past the call: whatever the array protocol accepts, the caller may change its buffer afterwards
and the results stay those of the untouched original.

Each case builds with an input of every kind, overwrites the caller's buffer with ids that are valid
for no edge or node (the value a changed id would send a compiled kernel out of bounds with), then
compares the kernels' results with those of a build from untouched NumPy copies. The distributed
matrices are covered under MPI (tests/mpi/test_transpose.py)."""

import array

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import graphkern as gk

torch = pytest.importorskip("torch")

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
