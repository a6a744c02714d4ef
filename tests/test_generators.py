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


@pytest.mark.fast
def test_first_edges_at_scale_10():
    src, dst = gk.graph.kronecker_edges(10)
    assert list(zip(src[:5].tolist(), dst[:5].tolist())) == [(299, 797), (684, 861), (185, 385), (428, 328), (490, 200)]
    assert src.dtype == np.int32 and len(src) == 16 * 1024


@pytest.mark.fast
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


@pytest.mark.fast
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


# --- the compiled generator against a plain-Python transcription of the reference's make_one_edge --------

def _bitreverse64(x):
    return int(f"{x:064b}"[::-1], 2)


def _reference_scramble(v, scale, val0, val1):
    mask = (1 << 64) - 1
    x = (v + val0 + val1) & mask
    x = (x * (val0 | 0x4519840211493211)) & mask
    x = _bitreverse64(x) >> (64 - scale)
    x = (x * (val1 | 0x3050852102C843A5)) & mask
    return _bitreverse64(x) >> (64 - scale)


def reference_edge(scale, ei, seed=(2, 3)):
    """Edge ``ei`` of the Graph500 stream in Python integers: ``(src, dst, whether a draw was rejected)``."""
    from graphkern.graph.generators import _scramble_values

    state = generate.mrg_seed(*seed)
    val0, val1 = (int(v) for v in _scramble_values(state))
    z = [int(v) for v in generate.skip_state(state, ei << 64)]
    p = generate.MRG_MODULUS

    def draw():
        new = (generate.MRG_X * z[0] + generate.MRG_Y * z[4]) % p
        z[1:] = z[:4]
        z[0] = new
        return new

    n, s, t, rejected = 1 << scale, 0, 0, False
    while n > 1:
        v = draw()
        while v < p % 10000:
            rejected = True
            v = draw()
        q = v % 10000
        so, to = (0, 1) if q < 1900 else (1, 0) if q < 3800 else (0, 0) if q < 9500 else (1, 1)
        if s == t and so > to:
            so, to = to, so
        n //= 2
        s += n * so
        t += n * to
    return _reference_scramble(s, scale, val0, val1), _reference_scramble(t, scale, val0, val1), rejected


def _compiled_edges(scale, first, count):
    from graphkern.graph.generators import _scramble_values

    state = generate.mrg_seed(2, 3)
    val0, val1 = _scramble_values(state)
    powers = generate.edge_stride_powers((first + count).bit_length())
    src = np.empty(count, np.int64)
    dst = np.empty(count, np.int64)
    generate.kronecker_edges_range(state, powers, scale, val0, val1, first, src, dst)
    return src, dst


# 21 edges: two groups of eight lanes and a tail of five; scale 31 is the widest the lanes take, 33 runs
# the scalar path
@pytest.mark.parametrize("scale, first", [(1, 0), (10, 0), (22, 123_456_789), (31, 5 << 33), (33, 77)])
def test_edges_equal_the_python_reference(scale, first):
    src, dst = _compiled_edges(scale, first, 21)
    want = [reference_edge(scale, first + k)[:2] for k in range(21)]
    assert list(zip(src.tolist(), dst.tolist())) == want


# edges of the scale 22 stream where a draw falls in the rejected range and takes an extra MRG step
REJECTED_AT_SCALE_22 = (49_556, 138_800, 152_390)


@pytest.mark.parametrize("edge", REJECTED_AT_SCALE_22)
def test_a_rejected_draw_is_drawn_again(edge):
    first = edge - 11  # the edge sits inside a group of lanes, neither first nor last
    src, dst = _compiled_edges(22, first, 24)
    s, t, rejected = reference_edge(22, edge)
    assert rejected
    assert (int(src[11]), int(dst[11])) == (s, t)
    assert [reference_edge(22, first + k)[:2] for k in (10, 12)] == [(int(src[10]), int(dst[10])),
                                                                     (int(src[12]), int(dst[12]))]
