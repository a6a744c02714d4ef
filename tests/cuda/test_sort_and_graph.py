"""The GPU count sort and device graphs: slot-for-slot equal to the CPU formats, device input validated."""

import numpy as np
import pytest
from conftest import CASES
from graphkern.kernels.cuda import sort as cuda_sort
from numba import cuda

import graphkern as gk


@pytest.mark.parametrize("case", sorted(CASES))
def test_formats_on_the_device_equal_the_cpu(case):
    # alternate the id dtype over the cases (both are covered; each case costs simulated sorts)
    idtype = np.dtype(np.int32 if sorted(CASES).index(case) % 2 else np.int64)
    src, dst, n = CASES[case]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)
    d = gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype).to("cuda")
    assert d.device == "cuda" and d.idtype == idtype
    for fmt in ("csc", "csr"):
        for host, dev in zip(getattr(g, fmt)(), getattr(d, fmt)()):
            np.testing.assert_array_equal(dev.copy_to_host(), host)
    np.testing.assert_array_equal(d.in_degrees().copy_to_host(), g.in_degrees())
    np.testing.assert_array_equal(d.out_degrees().copy_to_host(), g.out_degrees())
    back = d.to("cpu")
    np.testing.assert_array_equal(back.csr().indices, g.csr().indices)


@pytest.mark.fast
def test_transpose_and_coo_from_compressed_on_the_device():
    src, dst, n = CASES["random_300"]()
    g = gk.Graph.from_coo(src, dst, num_nodes=n)
    indptr, indices, eids = g.csr()
    d = gk.Graph.from_csr(cuda.to_device(indptr), cuda.to_device(indices), num_dst=n)
    host = gk.Graph.from_csr(indptr, indices, num_dst=n)
    for a, b in zip(d.csc(), host.csc()):
        np.testing.assert_array_equal(a.copy_to_host(), b)
    for a, b in zip(d.coo(), host.coo()):
        np.testing.assert_array_equal(a.copy_to_host(), b)
    for a, b in zip(d.edges(), host.edges()):
        np.testing.assert_array_equal(a.copy_to_host(), b)


# (600, 5000): far more keys than items, most counts zero, the counts' scan over several tiles (sorts of
# three passes, past 2**16 keys: tests/cuda/test_sort_kernels.py)
@pytest.mark.fast
@pytest.mark.parametrize("n,keys", [(0, 3), (1, 1), (50, 2), (700, 300), (600, 5000)])
def test_count_sort_is_stable(n, keys):
    rng = np.random.default_rng(n)
    k = rng.integers(0, keys, n).astype(np.int32)
    indptr, perm = cuda_sort.count_sort(cuda.to_device(k), keys)
    np.testing.assert_array_equal(perm.copy_to_host(), np.argsort(k, kind="stable"))
    counts = np.bincount(k, minlength=keys)
    np.testing.assert_array_equal(indptr.copy_to_host(), np.concatenate([[0], np.cumsum(counts)]))


@pytest.mark.parametrize("n", [0, 1, 64, 65, 5000])
def test_exclusive_scan(n):
    v = np.random.default_rng(n).integers(0, 9, n)
    out = cuda_sort.exclusive_scan(cuda.to_device(v), cuda.device_array(n + 1, np.int64))
    np.testing.assert_array_equal(out.copy_to_host(), np.concatenate([[0], np.cumsum(v)]))


def test_device_input_is_validated_before_use():
    src = cuda.to_device(np.array([0, 1, 2]))
    with pytest.raises(ValueError, match="argument 'dst': expected node ids < 3, found 5 at position 1"):
        gk.Graph.from_coo(src, cuda.to_device(np.array([1, 5, 0])), num_nodes=3)
    with pytest.raises(ValueError, match="argument 'dst': expected node ids < 3, found 5 at position 1"):
        gk.Graph.from_coo(src, cuda.to_device(np.array([1, 5, -1])), num_nodes=3)  # the host names the same
    with pytest.raises(ValueError, match="argument 'src': expected node ids >= 0, found -1"):
        gk.Graph.from_coo(cuda.to_device(np.array([0, -1])), cuda.to_device(np.array([1, 1])))
    with pytest.raises(ValueError, match="equal lengths"):
        gk.Graph.from_coo(src, cuda.to_device(np.array([1, 1])))
    with pytest.raises(TypeError, match="int32 or int64 device array, found dtype float64"):
        gk.Graph.from_coo(cuda.to_device(np.array([0.0])), cuda.to_device(np.array([1.0])))
    with pytest.raises(ValueError, match="non-decreasing indptr, found indptr\\[1\\] = 2 > indptr\\[2\\] = 1"):
        gk.Graph.from_csr(cuda.to_device(np.array([0, 2, 1, 3])), cuda.to_device(np.array([0, 1, 2])))
    with pytest.raises(ValueError, match="unique edge ids"):
        gk.Graph.from_coo(src, src, eids=cuda.to_device(np.array([0, 0, 1])))
    with pytest.raises(TypeError, match="expected a device array like the other"):
        gk.Graph.from_coo(src, np.array([0, 1, 2]))


def test_device_graph_refuses_host_only_methods_and_the_cpu_backend():
    d = gk.Graph.from_coo([0, 1], [1, 0]).to("cuda")
    with pytest.raises(ValueError, match="call g.to\\('cpu'\\) first"):
        d.to_scipy()
    with pytest.raises(ValueError, match="the cpu backend works on a graph in host memory"):
        gk.spmm(d, "copy_lhs", "sum", np.ones((2, 1), np.float32), backend="cpu")
    with pytest.raises(ValueError, match="argument 'device'"):
        d.to("tpu")


@pytest.mark.fast
def test_auto_backend_follows_the_data():
    g = gk.Graph.from_coo([0, 1], [1, 0])
    x = np.ones((2, 3), np.float32)
    assert gk.resolve_backend(None, g, x) == "cpu"
    assert gk.resolve_backend(None, g.to("cuda")) == "cuda"
    assert gk.resolve_backend(None, cuda.to_device(x)) == "cuda"
    out = gk.spmm(g.to("cuda"), "copy_lhs", "sum", x)  # auto: the graph is on the device
    np.testing.assert_array_equal(out.copy_to_host(), gk.spmm(g, "copy_lhs", "sum", x))
