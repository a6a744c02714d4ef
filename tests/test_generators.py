"""The Graph500 Kronecker generator against the reference's golden values (docs/design.md,
section 'Graph500')."""

import numpy as np
import pytest
from graphkern.kernels.cpu import generate

import graphkern as gk

GOLDEN = {
    # scale: (self-loops, unique undirected non-loop edges, vertices with degree >= 1)
    10: (144, 10_551, 899),
    12: (208, 48_358, 3_353),
    16: (491, 909_598, 46_815),
}


def test_first_edges_at_scale_10():
    src, dst = gk.graph.kronecker_edges(10)
    assert list(zip(src[:5].tolist(), dst[:5].tolist())) == [(299, 797), (684, 861), (185, 385), (428, 328), (490, 200)]
    assert src.dtype == np.int32 and len(src) == 16 * 1024


def test_random_doubles_match_reference():
    d = gk.graph.graph500_random_doubles(3)
    np.testing.assert_allclose(d, [0.41021208282928501, 0.037614701324416445, 0.48451728100111585], rtol=0, atol=1e-16)


@pytest.mark.parametrize("scale", sorted(GOLDEN))
def test_edge_statistics_match_reference(scale):
    loops, unique, touched = GOLDEN[scale]
    src, dst = gk.graph.kronecker_edges(scale)
    assert int(np.count_nonzero(src == dst)) == loops
    lo, hi = np.minimum(src, dst).astype(np.int64), np.maximum(src, dst).astype(np.int64)
    keep = lo != hi
    assert np.unique(lo[keep] * (1 << scale) + hi[keep]).size == unique
    deg = np.bincount(np.concatenate([src[src != dst], dst[src != dst]]), minlength=1 << scale)
    assert int(np.count_nonzero(deg)) == touched
    g = gk.graph.kronecker(scale)
    assert g.num_edges == 2 * unique  # symmetric, simple
    assert np.array_equal(g.in_degrees(), g.out_degrees())


def test_kronecker_multigraph_keeps_every_tuple():
    src, dst = gk.graph.kronecker_edges(10)
    g = gk.graph.kronecker(10, simple=False)
    assert g.num_edges == 2 * len(src) - int(np.count_nonzero(src == dst))


def test_chunked_generation_equals_one_pass():
    src, dst = gk.graph.kronecker_edges(12)
    state = generate.mrg_seed(2, 3)
    from graphkern.graph.generators import _scramble_values

    val0, val1 = _scramble_values(state)
    powers = generate.edge_stride_powers(20)
    part_src = np.empty(1000, np.int32)
    part_dst = np.empty(1000, np.int32)
    generate.kronecker_edges_range(state, powers, 12, val0, val1, 31_000, part_src, part_dst)
    np.testing.assert_array_equal(part_src, src[31_000:32_000])
    np.testing.assert_array_equal(part_dst, dst[31_000:32_000])


def test_seed_and_dtype_arguments():
    a = gk.graph.kronecker_edges(8, seed=(2, 3))
    b = gk.graph.kronecker_edges(8, seed=2)
    c = gk.graph.kronecker_edges(8, seed=5)
    np.testing.assert_array_equal(a[0], b[0])
    assert not np.array_equal(a[0], c[0])
    wide = gk.graph.kronecker_edges(8, dtype=np.int64)
    assert wide[0].dtype == np.int64
    np.testing.assert_array_equal(wide[0], a[0])


def test_uniform_generator():
    src, dst = gk.graph.uniform_edges(1000, 200_000, seed=3)
    assert src.min() >= 0 and src.max() < 1000 and dst.max() < 1000
    again = gk.graph.uniform_edges(1000, 200_000, seed=3)
    np.testing.assert_array_equal(src, again[0])
    counts = np.bincount(src, minlength=1000)
    assert counts.min() > 120 and counts.max() < 290  # mean 200, a few standard deviations
    g = gk.graph.uniform(100, 1000, seed=1)
    assert g.num_edges == 1000 and g.num_nodes == 100


@pytest.mark.parametrize("bad, kind", [(0, ValueError), (41, ValueError), (2.5, TypeError), (True, TypeError)])
def test_bad_scale(bad, kind):
    with pytest.raises(kind, match="argument 'scale'"):
        gk.graph.kronecker_edges(bad)


def test_bad_seed_and_dtype():
    with pytest.raises(ValueError, match="argument 'seed'"):
        gk.graph.kronecker_edges(4, seed=(1, 2, 3))
    with pytest.raises(TypeError, match="argument 'dtype'"):
        gk.graph.kronecker_edges(4, dtype=np.float32)
