"""The examples run and learn: GCN and GAT on the karate club and a reduced planted partition reach the
accuracy the README states, the Graph500 example validates its searches, and the DGL ports (GAT, GIN,
RGCN, GraphSAGE on blocks) train without DGL installed."""

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("networkx")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

import dgl_gin  # noqa: E402
import dgl_rgcn  # noqa: E402
import dgl_sage_blocks  # noqa: E402
import gat  # noqa: E402
import gcn  # noqa: E402
import graph500_run  # noqa: E402
import port_from_dgl  # noqa: E402

# Measured with seeds 0-2: karate 0.933-0.967 (GAT), 0.967 (GCN); planted 3,000 nodes, 60 epochs:
# 0.915-0.970. A model on the planted features alone reaches about 0.67, so these need the graph.
KARATE_ACCURACY = 0.9
PLANTED_ACCURACY = 0.85


@pytest.mark.parametrize("example", [gcn, gat], ids=["gcn", "gat"])
def test_karate_club(example, capsys):
    acc = example.main(["--dataset", "karate"])
    assert acc >= KARATE_ACCURACY
    printed = capsys.readouterr().out
    assert sum(line.startswith("epoch") for line in printed.splitlines()) == 50  # one line per epoch


@pytest.mark.parametrize("example", [gcn, gat], ids=["gcn", "gat"])
def test_planted_partition_reduced(example):
    acc = example.main(["--dataset", "planted", "--nodes", "3000", "--epochs", "60", "--quiet"])
    assert acc >= PLANTED_ACCURACY


def test_graph500_example(capsys):
    result = graph500_run.main(["--scale", "12", "--roots", "8"])
    assert result["searches"] == 8 and result["harmonic_mean_teps"] > 0
    assert "8 searches validated" in capsys.readouterr().out


def test_port_from_dgl_trains_without_dgl(capsys):
    losses = port_from_dgl.main(["--epochs", "15"])
    printed = capsys.readouterr().out
    assert sum(line.startswith("epoch") for line in printed.splitlines()) == 15
    assert "accuracy on the 30 unlabelled members" in printed
    assert min(losses[-5:]) < losses[0]  # it learns (dropout makes single epochs noisy)


# Measured with seeds 0-2 at these sizes: GIN 0.95-1.0, RGCN 0.71-0.84, GraphSAGE 0.89-0.96 (chance: 0.5,
# 0.25, 0.25); the bounds leave room for another machine's rounding.
@pytest.mark.parametrize(
    ("example", "argv", "accuracy"),
    [
        (dgl_gin, ["--epochs", "4", "--graphs", "200"], 0.8),
        (dgl_rgcn, ["--epochs", "30", "--nodes", "500"], 0.6),
        (dgl_sage_blocks, ["--epochs", "4", "--nodes", "1000", "--no-dgl"], 0.6),
    ],
    ids=["gin", "rgcn", "sage_blocks"],
)
def test_dgl_ports_train_without_dgl(example, argv, accuracy, capsys):
    result = example.main(argv)
    printed = capsys.readouterr().out
    assert sum(line.startswith("epoch") for line in printed.splitlines()) == int(argv[1])
    assert result["losses"][-1] < result["losses"][0]
    assert result["accuracy"] >= accuracy


def test_sage_sampler_numbers_blocks_as_dgl_does():
    """Destinations first among a block's sources, every edge within the fanout, sources of one block the
    destinations of the block before it."""
    import numpy as np

    import graphkern as gk

    rng = np.random.default_rng(0)
    g = gk.Graph.from_coo(rng.integers(0, 50, 400), rng.integers(0, 50, 400), num_nodes=50)
    seeds = np.array([3, 7, 11])
    input_nodes, output_nodes, blocks = dgl_sage_blocks.sample_blocks(g, seeds, [4, 2], rng)
    assert np.array_equal(output_nodes, seeds) and blocks[1].num_dst == 3
    assert blocks[0].num_dst == blocks[1].num_src and blocks[0].num_src == input_nodes.size
    for block in blocks:
        assert block.num_dst <= block.num_src
    assert np.array_equal(input_nodes[:3], seeds)
    assert int(blocks[1].in_degrees().max()) <= 2 and int(blocks[0].in_degrees().max()) <= 4
    src, dst = blocks[1].edges()
    parents = {(int(u), int(v)) for u, v in zip(*g.edges())}
    frontier = input_nodes[: blocks[1].num_src]
    assert all((int(frontier[u]), int(seeds[v])) in parents for u, v in zip(src, dst))
