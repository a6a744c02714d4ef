"""The edge-list text reader: strict lines, exact ids, values bit-identical to float(), any bytes."""

import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import graphkern as gk


def _write(tmp_path, text, name="g.txt"):
    path = tmp_path / name
    (path.write_bytes if isinstance(text, bytes) else path.write_text)(text)
    return path


def _bits(values):
    return [struct.pack("<d", float(v)) for v in values]


@pytest.mark.parametrize("text, line, shown", [
    ("just some words\nmore words here\n", 2, "more words here"),
    ("0 1\nx7 12\n2 3\n", 2, "x7 12"),
    ("# c\n0 1\n\n2 3 4\n", 4, "2 3 4"),
    ("0 1 1.5\n2 3\n", 2, "2 3"),
    (f"0 1\n{2**64 + 5} 3\n", 2, str(2**64 + 5)),
    (f"0 1\n3 {10**22}\n", 2, str(10**22)),
    (f"0 {2**63}\n", 1, str(2**63)),
    ("src dst\n0 1\nsrc dst\n", 3, "src dst"),
    ("0 1 2.5\n1 2 2.5x\n", 2, "2.5x"),
    ("0 1\n" + "9" * 200 + "\n", 2, "9" * 60 + "..."),
])
def test_bad_lines_are_refused_with_number_and_text(tmp_path, text, line, shown):
    path = _write(tmp_path, text)
    with pytest.raises(ValueError, match=f"line {line} of") as info:
        gk.graph.read_edgelist(path)
    assert str(path) in str(info.value) and shown in str(info.value)


def test_a_utf8_byte_order_mark_is_not_part_of_the_first_line(tmp_path):
    for first in ("", "# a comment\n", "src dst w\n"):
        text = "\ufeff" + first + "0 1 0.5\n1 2 2.5\n"
        g = gk.graph.read_edgelist(_write(tmp_path, text.encode("utf-8")))
        assert g.edges()[0].tolist() == [0, 1] and g.edges()[1].tolist() == [1, 2]
        assert list(g.edata.values())[0].tolist() == [0.5, 2.5]


def test_header_only_first_and_only_if_not_numeric(tmp_path):
    g = gk.graph.read_edgelist(_write(tmp_path, "# c\n\nsrc,dst,w\n0,1,0.5\n"))
    assert g.edata["w"].tolist() == [0.5]
    with pytest.raises(ValueError, match="line 1 of"):
        gk.graph.read_edgelist(_write(tmp_path, "src dst 3\n0 1 0.5\n"))


def test_largest_int64_id_is_accepted_with_relabel(tmp_path):
    g = gk.graph.read_edgelist(_write(tmp_path, f"{2**63 - 1} 0\n"), relabel=True)
    assert g.ndata["orig_id"].tolist() == [0, 2**63 - 1]


def test_negative_ids_are_compacted_by_relabel(tmp_path):
    g = gk.graph.read_edgelist(_write(tmp_path, "-5 3\n3 -5\n"), relabel=True)
    assert g.ndata["orig_id"].tolist() == [-5, 3] and g.edges()[0].tolist() == [0, 1]


def test_ids_at_or_beyond_num_nodes_are_refused(tmp_path):
    with pytest.raises(ValueError):
        gk.graph.read_edgelist(_write(tmp_path, "0 1\n1 4\n"), num_nodes=4)


@pytest.mark.parametrize("token", [
    "0.3", "-0.7", "6.02214076e23", "1e-320", "4.9e-324", "2.2250738585072011e-308", "1.7976931348623157e308",
    "1e309", "-1e400", "0.1e-400", "inf", "-Infinity", "nan", "NaN", "+.5", "5.", "123456789012345678901234567",
    "9007199254740993", "0.000000000000000000000000000001", "1E22", "1e23", "-0.0", "1_0",
])
def test_known_values_match_float(tmp_path, token):
    g = gk.graph.read_edgelist(_write(tmp_path, f"0 1 {token}\n0 1 0.5\n"))
    assert _bits(g.edata["weight"][:1]) == _bits([float(token)])


_decimal = st.builds(
    lambda sign, ip, fp, dot, e: f"{sign}{ip}{'.' if dot else ''}{fp if dot else ''}{e}",
    st.sampled_from(["", "-", "+"]),
    st.text("0123456789", min_size=1, max_size=28),
    st.text("0123456789", min_size=0, max_size=28),
    st.booleans(),
    st.one_of(st.just(""), st.builds(lambda c, x: f"{c}{x}", st.sampled_from(["e", "E"]),
                                     st.integers(-350, 350))),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tokens=st.lists(_decimal, min_size=1, max_size=20))
def test_random_decimals_are_bit_identical_to_float(tmp_path, tokens):
    text = "".join(f"{i} {i + 1} {t}\n" for i, t in enumerate(tokens)) + "0 0 0.5\n"  # keep float64
    g = gk.graph.read_edgelist(_write(tmp_path, text))
    got = g.edata["weight"][: len(tokens)]
    assert _bits(got) == _bits([float(t) for t in tokens])


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(max_size=300) | st.text("0123456789 \t,;#%\n\r-+.eEx", max_size=300).map(str.encode))
def test_any_bytes_parse_or_are_refused(tmp_path, data):
    path = _write(tmp_path, data)
    try:
        g = gk.graph.read_edgelist(path, relabel=True)
    except ValueError:
        return
    assert g.num_edges >= 0


def test_chunked_parse_matches_float(tmp_path):
    rng = np.random.default_rng(1)
    n = 200_000
    w = [repr(float(x)) for x in rng.standard_normal(n) * 10.0 ** rng.integers(-30, 30, n)]
    path = tmp_path / "big.txt"
    path.write_text("".join(f"{i} {i % 7} {t}\n" for i, t in enumerate(w)))
    g = gk.graph.read_edgelist(path, progress=False)
    np.testing.assert_array_equal(g.edata["weight"].view(np.uint64),
                                  np.array([float(t) for t in w]).view(np.uint64))


def test_eisel_lemire_range_matches_float(tmp_path):
    # up to 19 significant digits with exponents beyond Clinger's +-22: the compiled Eisel-Lemire step,
    # plus the subnormal and overflow edges it hands to float()
    rng = np.random.default_rng(5)
    digits = rng.integers(1, 20, 60_000)
    mant = ["".join(map(str, rng.integers(0, 10, d))) for d in digits]
    exps = rng.integers(-345, 313, 60_000)
    toks = [f"{m}e{e}" if i % 2 else f"{m[:1]}.{m[1:]}e{e}" for i, (m, e) in enumerate(zip(mant, exps))]
    toks += [str(int(x)) for x in rng.integers(2**53, 2**63, 5_000, dtype=np.int64)]
    path = tmp_path / "el.txt"
    path.write_text("".join(f"0 1 {t}\n" for t in toks) + "0 1 0.5\n")
    got = gk.graph.read_edgelist(path).edata["weight"][: len(toks)]
    np.testing.assert_array_equal(got.view(np.uint64), np.array([float(t) for t in toks]).view(np.uint64))
