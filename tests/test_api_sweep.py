"""Every public entry point, each argument in turn replaced by a malformed value: the call raises
``ValueError`` or ``TypeError`` whose message names the argument, or one of graphkern's own errors
(graphkern.errors), or it runs; nothing else (no ``IndexError``, ``AttributeError``, ``OverflowError``,
``KeyError``, no Numba typing error, no crash).

The sweep is cheap because validation comes before compiled code: a malformed call compiles nothing.
Each entry point takes its well-formed arguments on the small graph below, in the one dtype pair
(int32 ids, float64 features) the other tests compile anyway; a malformed value that happens to be
accepted (``None`` for an optional argument) runs a kernel already compiled.
"""

import numpy as np
import pytest

import graphkern as gk
from graphkern.errors import GraphkernError

torch = pytest.importorskip("torch")

SRC = np.array([0, 1, 2, 3, 3, 1], np.int64)
DST = np.array([1, 2, 0, 0, 2, 2], np.int64)
N, E = 4, 6
OK = (ValueError, TypeError, GraphkernError)


class _Opaque:
    """An object no argument accepts (no array protocol, not a number, not a path)."""


# values no argument of the public API accepts as such; some stand where an optional value may go
# (None), and some are valid values of a different argument (a count, an id, a list)
MALFORMED = {
    "None": None, "str": "abc", "float": 1.5, "nan": float("nan"), "inf": float("inf"), "-1": -1, "2**70": 2**70,
    "bool": True, "object": _Opaque(), "dict": {"a": 1}, "empty list": [], "ids [-1, 5]": [-1, 5],
    "ids [10**9]": [10**9], "float array": np.array([0.5]), "2-D int array": np.array([[1, 2]]),
    "str array": np.array(["x"]), "complex": 1j, "bytes": b"\x00",
}


def _entered(context):
    """Enter and leave ``context`` (a malformed argument is refused on entering, or on making it)."""
    with context:
        pass


def _set_then_restore(name):
    before = gk.get_backend()
    try:
        gk.set_backend(name)
    finally:
        gk.set_backend(before)


def _nx_path():
    nx = pytest.importorskip("networkx")
    return nx.path_graph(3)


def _graph():
    return gk.Graph.from_coo(SRC, DST, num_nodes=N)


def _x(rows=N, cols=2):
    return np.arange(rows * cols, dtype=np.float64).reshape(rows, cols)


def _dynamic():
    dg = gk.DynamicGraph(N)
    dg.apply(insert=(SRC, DST))
    return dg


def _tensor(rows, cols=2):
    return torch.arange(rows * cols, dtype=torch.float64).reshape(rows, cols)


# name -> (function, its well-formed keyword arguments); each is called once per (argument, malformed value)
ENTRY_POINTS = {
    "Graph.from_coo": (gk.Graph.from_coo, dict(src=SRC, dst=DST, num_nodes=N, idtype=None, formats=None,
                                                eids=np.arange(E), num_edge_ids=E)),
    "Graph.from_csr": (gk.Graph.from_csr, dict(indptr=np.array([0, 1, 3, 4, 6]), indices=np.array([1, 2, 2, 0, 0, 2]),
                                                eids=None, num_dst=N, idtype=None, formats=None, num_edge_ids=None)),
    "Graph.from_csc": (gk.Graph.from_csc, dict(indptr=np.array([0, 2, 3, 6, 6]), indices=np.array([2, 3, 0, 1, 3, 1]),
                                                eids=None, num_src=N, idtype=None, formats=None, num_edge_ids=None)),
    "Graph.from_edge_index": (gk.Graph.from_edge_index, dict(edge_index=np.stack([SRC, DST]), num_nodes=N)),
    "Graph.from_scipy": (gk.Graph.from_scipy, dict(matrix=_graph().to_scipy(), idtype=None, edge_data="w")),
    "Graph.from_networkx": (gk.Graph.from_networkx, dict(nx_graph=_nx_path(), edge_attrs=())),
    "Graph.formats": (lambda formats: _graph().formats(formats), dict(formats="csr")),
    "Graph.to": (lambda device: _graph().to(device), dict(device="cpu")),
    "Graph.to_scipy": (lambda fmt, data: _graph().to_scipy(fmt, data), dict(fmt="csr", data=np.ones(E))),
    "Graph.node_subgraph": (lambda nodes: _graph().node_subgraph(nodes), dict(nodes=[0, 1])),
    "Graph.in_subgraph": (lambda nodes: _graph().in_subgraph(nodes), dict(nodes=[0, 1])),
    "Graph.batch_num_nodes": (lambda side: _graph().batch_num_nodes(side), dict(side=None)),
    "Graph.has_format": (lambda name: _graph().has_format(name), dict(name="csr")),
    "Graph.simple": (lambda return_eids: _graph().simple(return_eids=return_eids), dict(return_eids=False)),
    "gk.batch": (gk.batch, dict(graphs=[_graph(), _graph()])),
    "gk.unbatch": (gk.unbatch, dict(g=_graph())),
    "gk.spmm": (gk.spmm, dict(g=_graph(), op="copy_lhs", reduce="sum", ufeat=_x(), efeat=None, return_arg=False,
                              backend=None, format=None)),
    "gk.sddmm": (gk.sddmm, dict(g=_graph(), op="dot", lhs=_x(), rhs=_x(), lhs_target="u", rhs_target="v",
                                backend=None, format=None)),
    "gk.edge_softmax": (gk.edge_softmax, dict(g=_graph(), logits=_x(E, 1), norm_by="dst")),
    "gk.ops.u_mul_e_sum": (gk.ops.u_mul_e_sum, dict(g=_graph(), x=_x(), y=_x(E))),
    "gk.ops.copy_u_max": (gk.ops.copy_u_max, dict(g=_graph(), x=_x())),
    "gk.ops.u_dot_v": (gk.ops.u_dot_v, dict(g=_graph(), x=_x(), y=_x())),
    "gk.bfs": (gk.bfs, dict(g=_graph(), source=0, algorithm="auto", backend=None, alpha=14.0, beta=24.0)),
    "gk.bfs sources": (lambda g, sources: gk.bfs(g, sources=sources), dict(g=_graph(), sources=[0, 1])),
    "gk.explain": (lambda g, family, source: gk.explain(g, family, source=source),
                   dict(g=_graph(), family="bfs", source=0)),
    "gk.gather_mm": (gk.gather_mm, dict(a=_x(3, 2), b=np.ones((2, 2, 2)), idx_a=None, idx_b=np.array([0, 1, 1]))),
    "gk.segment_mm": (gk.segment_mm, dict(a=_x(3, 2), b=np.ones((2, 2, 2)), seglen_a=np.array([1, 2]))),
    "gk.set_backend": (lambda name: _set_then_restore(name), dict(name="cpu")),
    "gk.use_backend": (lambda name: _entered(gk.use_backend(name)), dict(name="cpu")),
    "gk.tuned": (lambda incremental_fallback_fraction: _entered(gk.tuned(
        incremental_fallback_fraction=incremental_fallback_fraction)), dict(incremental_fallback_fraction=0.5)),
    "gk.graph500.validate": (gk.graph500.validate, dict(g=gk.graph.undirected(SRC, DST, N), source=0,
                                                        parents=np.array([0, 0, 0, 0]), levels=None, directed=False)),
    "gk.graph500.search_keys": (gk.graph500.search_keys, dict(g=_graph(), num_keys=2, seed=2)),
    "DynamicGraph": (gk.DynamicGraph, dict(num_nodes=N, backend=None)),
    "DynamicGraph.apply": (lambda insert, delete: _dynamic().apply(insert=insert, delete=delete),
                           dict(insert=(SRC, DST), delete=([0], [1]))),
    "DynamicGraph.contains": (lambda src, dst: _dynamic().contains(src, dst), dict(src=SRC, dst=DST)),
    "DynamicGraph.snapshot": (lambda csc: _dynamic().snapshot(csc=csc), dict(csc=False)),
    "IncrementalBFS": (lambda source, fallback_fraction: gk.IncrementalBFS(_dynamic(), source,
                                                                           fallback_fraction=fallback_fraction),
                       dict(source=0, fallback_fraction=0.5)),
    "graph.kronecker_edges": (gk.graph.kronecker_edges, dict(scale=2, edgefactor=2, seed=1)),
    "graph.kronecker": (gk.graph.kronecker, dict(scale=2, edgefactor=2, seed=1)),
    "graph.uniform": (gk.graph.uniform, dict(num_nodes=N, num_edges=E, seed=0, idtype=None)),
    "graph.undirected": (gk.graph.undirected, dict(src=SRC, dst=DST, num_nodes=N)),
    "graph.graph500_random_doubles": (gk.graph.graph500_random_doubles, dict(count=3, seed=1, position=0)),
    "graph.read_edgelist": (lambda path, relabel, undirected, num_nodes, idtype, data_names: gk.graph.read_edgelist(
        path, relabel=relabel, undirected=undirected, num_nodes=num_nodes, idtype=idtype, data_names=data_names),
        dict(path="g.txt", relabel=False, undirected=False, num_nodes=None, idtype=None, data_names=None)),
    "graph.read_mtx": (gk.graph.read_mtx, dict(path="g.mtx", idtype=None, edge_data="weight")),
    "graph.save": (gk.graph.save, dict(g=_graph(), path="out.npz")),
    "graph.load": (gk.graph.load, dict(path="g.npz", idtype=None)),
    "temporal.sliding_window_diffs": (gk.graph.temporal.sliding_window_diffs,
                                      dict(src=SRC, dst=DST, base=3, step=1, percent_change=None, num_steps=None)),
    "temporal.TemporalGraph": (gk.graph.temporal.TemporalGraph, dict(src=SRC, dst=DST, num_nodes=N, base=3, step=1)),
    "temporal.read_temporal_edges": (gk.graph.temporal.read_temporal_edges, dict(path="t.txt", relabel=True)),
}


@pytest.fixture
def in_folder_with_inputs(tmp_path, monkeypatch):
    """The test runs in a temporary folder holding the readers' well-formed inputs (the relative names
    above), so a malformed path such as ``"abc"`` names nothing and ``save`` writes nothing elsewhere."""
    (tmp_path / "g.txt").write_text("0 1\n1 2\n")
    (tmp_path / "t.txt").write_text("0 1 5\n1 2 6\n")
    (tmp_path / "g.mtx").write_text("%%MatrixMarket matrix coordinate pattern general\n3 3 2\n1 2\n2 3\n")
    gk.graph.save(_graph(), tmp_path / "g.npz")
    monkeypatch.chdir(tmp_path)


def _torch_entry_points():
    import graphkern.torch as gkt

    g = _graph()
    return {
        "torch.ops.gspmm": (gkt.ops.gspmm, dict(g=g, op="copy_lhs", reduce_op="sum", lhs_data=_tensor(N),
                                               rhs_data=None)),
        "torch.ops.gsddmm": (gkt.ops.gsddmm, dict(g=g, op="dot", lhs_data=_tensor(N), rhs_data=_tensor(N))),
        "torch.ops.edge_softmax": (gkt.ops.edge_softmax, dict(graph=g, logits=_tensor(E, 1), eids=np.arange(E),
                                                             norm_by="dst")),
        "torch.ops.copy_u_sum": (gkt.ops.copy_u_sum, dict(g=g, x=_tensor(N))),
        "torch.segment_reduce": (gkt.segment_reduce, dict(seglen=np.array([2, 2]), value=_tensor(N),
                                                          reducer="sum")),
        "torch.segment_softmax": (gkt.segment_softmax, dict(seglen=np.array([2, 2]), value=_tensor(N))),
        "torch.gather_mm": (gkt.gather_mm, dict(a=_tensor(3), b=torch.ones(2, 2, 2, dtype=torch.float64),
                                                idx_b=np.array([0, 1, 1]))),
        "torch.segment_mm": (gkt.segment_mm, dict(a=_tensor(3), b=torch.ones(2, 2, 2, dtype=torch.float64),
                                                  seglen_a=np.array([1, 2]))),
        "torch.GraphConv": (lambda graph, feat: gkt.GraphConv(2, 2, allow_zero_in_degree=True).double()(graph, feat),
                            dict(graph=g, feat=_tensor(N))),
        "torch.RelGraphConv": (lambda g, feat, etypes: gkt.RelGraphConv(2, 2, 2).double()(g, feat, etypes),
                               dict(g=g, feat=_tensor(N), etypes=np.array([0, 1, 1, 0, 1, 0]))),
    }


def _layers():
    """Every layer of graphkern.torch.nn: its well-formed constructor and forward arguments (double
    precision, on the small graph; edge weights and types where the layer takes them)."""
    from graphkern.torch import nn

    g = _graph()
    w = torch.ones(E, dtype=torch.float64)
    fwd = dict(graph=g, feat=_tensor(N), edge_weight=w)
    heads = dict(feat_drop=0.0, attn_drop=0.0, negative_slope=0.2, residual=False, activation=None,
                 allow_zero_in_degree=True, bias=True)
    return {
        "GraphConv": (dict(in_feats=2, out_feats=2, norm="both", weight=True, bias=True, activation=None,
                           allow_zero_in_degree=True), dict(fwd, weight=None)),
        "GATConv": (dict(in_feats=2, out_feats=2, num_heads=2, **heads), dict(fwd, get_attention=False)),
        "SAGEConv": (dict(in_feats=2, out_feats=2, aggregator_type="mean", feat_drop=0.0, bias=True, norm=None,
                          activation=None), fwd),
        "GINConv": (dict(apply_func=None, aggregator_type="sum", init_eps=0, learn_eps=False, activation=None), fwd),
        "SGConv": (dict(in_feats=2, out_feats=2, k=1, cached=False, bias=True, norm=None, allow_zero_in_degree=True),
                   fwd),
        "APPNPConv": (dict(k=2, alpha=0.1, edge_drop=0.0), fwd),
        "TAGConv": (dict(in_feats=2, out_feats=2, k=2, bias=True, activation=None), fwd),
        "ChebConv": (dict(in_feats=2, out_feats=2, k=2, activation=torch.relu, bias=True),
                     dict(graph=g, feat=_tensor(N), lambda_max=[2.0])),
        "GATv2Conv": (dict(in_feats=2, out_feats=2, num_heads=2, share_weights=False, **heads),
                      dict(graph=g, feat=_tensor(N), get_attention=False)),
        "EdgeConv": (dict(in_feat=2, out_feat=2, batch_norm=False, allow_zero_in_degree=True),
                     dict(g=g, feat=_tensor(N))),
        "RelGraphConv": (dict(in_feat=2, out_feat=2, num_rels=2, regularizer=None, num_bases=None, bias=True,
                              activation=None, self_loop=True, dropout=0.0, layer_norm=False),
                         dict(g=g, feat=_tensor(N), etypes=np.array([0, 1, 1, 0, 1, 0]), norm=None, presorted=False)),
        "TypedLinear": (dict(in_size=2, out_size=2, num_types=2, regularizer=None, num_bases=None),
                        dict(x=_tensor(N), x_type=np.array([0, 1, 1, 0]), sorted_by_type=False)),
        "SumPooling": ({}, dict(graph=g, feat=_tensor(N))),
        "AvgPooling": ({}, dict(graph=g, feat=_tensor(N))),
        "MaxPooling": ({}, dict(graph=g, feat=_tensor(N))),
        "EdgeWeightNorm": (dict(norm="both", eps=0.0), dict(graph=g, edge_weight=w)),
    }, nn


def test_the_sweep_reaches_every_layer():
    layers, nn = _layers()
    assert sorted(layers) == sorted(nn.__all__)


@pytest.mark.parametrize("part", ["constructor", "forward"])
@pytest.mark.parametrize("layer", sorted(_layers()[0]) if torch else [])
def test_malformed_arguments_of_the_layers(layer, part):
    """Each layer's constructor arguments (the layer built and run) and its forward arguments (graph,
    features, edge weights or types, flags), each replaced in turn by each malformed value."""
    layers, nn = _layers()
    ctor, fwd = layers[layer]
    cls = getattr(nn, layer)
    if part == "constructor":
        unexpected = _sweep(layer, lambda **kw: cls(**kw).double()(**fwd), ctor)
    else:
        unexpected = _sweep(layer, lambda **kw: cls(**ctor).double()(**kw), fwd)
    assert not unexpected, "\n".join(f"{layer} {part}({arg}={label}): {exc}" for arg, label, exc in unexpected)


def _sweep(name, fn, good):
    """The (argument, malformed value, exception) triples of the calls that raised something else."""
    fn(**good)  # well formed: runs (else every malformed call below would fail for another reason)
    unexpected = []
    for arg in good:
        for label, bad in MALFORMED.items():
            kwargs = dict(good, **{arg: bad})
            try:
                fn(**kwargs)
            except GraphkernError:
                pass
            except (ValueError, TypeError) as exc:
                # the message names the argument, so it alone says what to fix; None where an optional
                # value may stand may instead make another argument wrong, which the message names
                if arg not in str(exc) and not (bad is None and "argument '" in str(exc)):
                    unexpected.append((arg, label, f"{type(exc).__name__} not naming {arg!r}: {exc}"))
            except Exception as exc:  # noqa: BLE001 - what the sweep looks for
                unexpected.append((arg, label, f"{type(exc).__name__}: {exc}"))
    return unexpected


@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_malformed_arguments_raise_value_or_type_errors(name, in_folder_with_inputs):
    fn, good = ENTRY_POINTS[name]
    unexpected = _sweep(name, fn, good)
    assert not unexpected, "\n".join(f"{name}({arg}={label}): {exc}" for arg, label, exc in unexpected)


def test_malformed_arguments_of_the_torch_functions():
    unexpected = [f"{name}({arg}={label}): {exc}" for name, (fn, good) in _torch_entry_points().items()
                  for arg, label, exc in _sweep(name, fn, good)]
    assert not unexpected, "\n".join(unexpected)
