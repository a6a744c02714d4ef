"""The public CUDA API on odd launch shapes (kernels/cuda/launch.py's ``launch_shape``) against the NumPy
references (tests/cuda/conftest.py's expected_*) and, for the count sort and BFS, the CPU backend.

Every kernel walks its items with a grid-stride loop, so the shape must not change a result: blocks that
are not a multiple of 32 threads, one-thread blocks, fewer blocks than a GPU has SMs. Warp and block
kernels get the shape rounded to whole warps (the rule in launch.py); the first tests pin that rule. Empty
inputs launch nothing invalid: no helper asks for a grid with no blocks or no threads.
"""

import numpy as np
import pytest
from conftest import CASES, SIMULATED, expected_edge_softmax, expected_sddmm, expected_spmm
from graphkern.kernels.cpu import sort as cpu_sort
from graphkern.kernels.cuda import sort as cuda_sort
from graphkern.kernels.cuda.launch import BLOCK, WARP, grid_1d, grid_blocks, grid_warps, launch_shape
from numba import cuda

import graphkern as gk

# (blocks, threads): one thread in all; one-thread blocks; blocks of a warp and a half (warp kernels: two
# warps); an odd number of odd blocks; one full block. All are fewer blocks than an H100/H200 has SMs.
SHAPES = [(1, 1), (4, 1), (2, 48), (3, 33), (1, BLOCK)]
IDS = [f"{b}x{t}" for b, t in SHAPES]


@pytest.fixture(params=SHAPES, ids=IDS)
def shape(request):
    with launch_shape(*request.param):
        yield request.param


@pytest.fixture(autouse=True)
def no_empty_grids(monkeypatch):
    """Every launch has at least one block of one thread (the driver refuses an empty grid; the simulator
    would run nothing silently, so it is checked here)."""
    if not SIMULATED:
        yield
        return
    from numba.cuda.simulator.kernel import FakeCUDAKernel

    original = FakeCUDAKernel.__getitem__
    seen = []

    def getitem(self, configuration):
        seen.append(tuple(configuration[:2]))
        return original(self, configuration)

    monkeypatch.setattr(FakeCUDAKernel, "__getitem__", getitem)
    yield
    for blocks, threads in seen:
        for dims in (blocks, threads):
            dims = dims if isinstance(dims, tuple) else (dims,)
            assert all(int(d) >= 1 for d in dims), seen


def test_the_shape_rules():
    with launch_shape(2, 48):
        assert grid_1d(10**6) == (2, 48)
        assert grid_warps(10**6) == (2, 2 * WARP)  # whole warps
        assert grid_blocks(7) == (2, 2 * WARP)
    with launch_shape(1, 1):
        assert grid_1d(0) == (1, 1) and grid_warps(0) == (1, WARP) and grid_blocks(0) == (1, WARP)
    with launch_shape(3, 4 * BLOCK):
        assert grid_warps(5) == (3, BLOCK)  # the shared scratch holds BLOCK slots
        assert grid_1d(5) == (3, 4 * BLOCK)
    for bad in [(0, 32), (1, 0)]:
        with pytest.raises(ValueError, match="at least one block of one thread"):
            with launch_shape(*bad):
                pass
    # without an override no helper returns an empty grid, however little work there is
    for helper in (grid_1d, grid_warps, grid_blocks):
        blocks, threads = helper(0)
        assert blocks >= 1 and threads >= 1


def _graph(case, idtype=None):
    src, dst, n = CASES[case]()
    return gk.Graph.from_coo(src, dst, num_nodes=n, idtype=idtype)


def _host(arr):
    return arr.copy_to_host() if hasattr(arr, "copy_to_host") else np.asarray(arr)


@pytest.mark.parametrize("fmt", ["csc", "coo"])
def test_spmm(shape, fmt, low_hub_degree):
    g = _graph("hub_60")
    rng = np.random.default_rng(1)
    x = rng.uniform(0.5, 2.0, (g.num_src, 3)).astype(np.float32)
    w = rng.uniform(0.5, 2.0, (g.num_edges, 3)).astype(np.float32)
    got = gk.spmm(g, "mul", "sum", x, w, backend="cuda", format=fmt)
    np.testing.assert_allclose(_host(got), expected_spmm(g, "mul", "sum", x, w)[0], rtol=1e-5)
    got = gk.spmm(g, "add", "max", x, w, return_arg=True, backend="cuda", format=fmt)
    for a, b in zip(got, expected_spmm(g, "add", "max", x, w)):  # a max of float32 sums: exact
        np.testing.assert_array_equal(_host(a), b)


def test_sddmm_and_edge_softmax(shape):
    # 150 random edges on 20 nodes: the degrees of random_300 (7.5 a row on average) at half its edges,
    # so rows short enough for the softmax's groups of lanes and rows for whole warps, both ways
    rng = np.random.default_rng(2)
    g = gk.Graph.from_coo(rng.integers(0, 20, 150), rng.integers(0, 20, 150), num_nodes=20)
    small = gk.tuning.current().cuda_softmax_small_degree
    for degrees in (g.in_degrees(), g.out_degrees()):
        assert (degrees <= small).any() and (degrees > small).any()
    for width in (3, 40):  # groups of 4 lanes and whole warps
        x = rng.normal(size=(g.num_src, width))
        y = rng.normal(size=(g.num_dst, width))
        got = gk.sddmm(g, "dot", x, y, "u", "v", backend="cuda")
        np.testing.assert_allclose(_host(got), expected_sddmm(g, "dot", x, y, "u", "v"), rtol=1e-12, atol=1e-12)
    x = rng.normal(size=(g.num_src, 2))
    got = gk.sddmm(g, "add", x, x, "u", "v", backend="cuda")
    np.testing.assert_array_equal(_host(got), expected_sddmm(g, "add", x, x, "u", "v"))
    z = rng.normal(size=(g.num_edges, 2)).astype(np.float32)
    for norm_by in ("dst", "src"):
        got = gk.edge_softmax(g, z, norm_by, backend="cuda")
        np.testing.assert_allclose(_host(got), expected_edge_softmax(g, z, norm_by), rtol=1e-5, atol=1e-7)


# each shape with two algorithms that push and pull between them (direction_optimizing does both), each
# algorithm under two or three shapes: the four share the phases' kernels
SHAPE_ALGORITHMS = [((1, 1), "direction_optimizing"), ((1, 1), "bottom_up"), ((4, 1), "top_down"), ((4, 1), "spmsv"),
                    ((2, 48), "direction_optimizing"), ((2, 48), "spmsv"), ((3, 33), "top_down"),
                    ((3, 33), "bottom_up"), ((1, BLOCK), "direction_optimizing"), ((1, BLOCK), "spmsv")]


@pytest.mark.parametrize("shape,algorithm", SHAPE_ALGORITHMS, indirect=["shape"],
                         ids=[f"{b}x{t}-{a}" for (b, t), a in SHAPE_ALGORITHMS])
def test_bfs(shape, algorithm):
    g = _graph("random_300")
    res = gk.bfs(g, 0, algorithm=algorithm, backend="cuda")
    want = gk.bfs(g, 0, algorithm=algorithm)
    np.testing.assert_array_equal(_host(res.levels), want.levels)
    gk.graph500.validate(g, 0, res.parents, res.levels, directed=True)


# the id types alternate over the shapes (the sort and the formats take either in one code path)
SHAPE_IDTYPES = [(shape, np.dtype(np.int32 if i % 2 else np.int64)) for i, shape in enumerate(SHAPES)]


@pytest.mark.parametrize("shape,idtype", SHAPE_IDTYPES, indirect=["shape"],
                         ids=[f"{b}x{t}-{d}" for (b, t), d in SHAPE_IDTYPES])
def test_count_sort_and_device_formats(shape, idtype):
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 300, 600)  # one tile and one scan tile (the multi-tile paths: test_sort_kernels.py)
    indptr, perm = cuda_sort.count_sort(cuda.to_device(keys), 300, idtype)
    want_indptr, want_perm = cpu_sort.count_sort(keys, 300, idtype)
    np.testing.assert_array_equal(_host(indptr), want_indptr)
    np.testing.assert_array_equal(_host(perm), want_perm)
    g = _graph("random_300", idtype)
    d = _graph("random_300", idtype).to("cuda")
    for fmt in ("csr", "csc"):
        for host, dev in zip(getattr(g, fmt)(), getattr(d, fmt)()):
            np.testing.assert_array_equal(_host(dev), host)


@pytest.mark.parametrize("case", ["empty", "no_edges"])
def test_empty_inputs(shape, case):
    g = _graph(case)
    x = np.ones((g.num_src, 2), np.float32)
    w = np.ones((g.num_edges, 2), np.float32)
    for fmt in ("csc", "coo"):
        got = gk.spmm(g, "mul", "max", x, w, return_arg=True, backend="cuda", format=fmt)
        for a, b in zip(got, expected_spmm(g, "mul", "max", x, w)):
            np.testing.assert_array_equal(_host(a), b)
    got = gk.sddmm(g, "dot", x, x, "u", "u", backend="cuda")
    np.testing.assert_array_equal(_host(got), expected_sddmm(g, "dot", x, x, "u", "u"))
    z = np.ones((g.num_edges, 2), np.float32)
    np.testing.assert_array_equal(_host(gk.edge_softmax(g, z, backend="cuda")), expected_edge_softmax(g, z))
    if g.num_src:
        res = gk.bfs(g, 0, backend="cuda")
        np.testing.assert_array_equal(_host(res.levels), gk.bfs(g, 0).levels)
    indptr, perm = cuda_sort.count_sort(cuda.to_device(np.zeros(0, np.int64)), 4)
    np.testing.assert_array_equal(_host(indptr), np.zeros(5, np.int64))
    assert _host(perm).size == 0
