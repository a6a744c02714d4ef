"""The examples run and learn: GCN and GAT on the karate club and a reduced planted partition reach the
accuracy the README states, the Graph500 example validates its searches, and the DGL port trains without
DGL installed."""

import sys
from pathlib import Path

import pytest

pytest.importorskip("torch")
pytest.importorskip("networkx")

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
sys.path.insert(0, str(EXAMPLES))

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
