"""The dispatcher reports every choice through the standard logging module, at DEBUG, on 'graphkern'."""

import logging

import numpy as np

import graphkern as gk


def test_dispatcher_choices_are_logged_at_debug(caplog):
    g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0])
    x = np.ones((3, 2))
    with caplog.at_level(logging.DEBUG, logger="graphkern"):
        gk.ops.copy_u_sum(g, x)
        gk.ops.u_dot_v(g, x, x)
        gk.bfs(g, 0)
    records = [r for r in caplog.records if r.name == "graphkern" and r.levelno == logging.DEBUG]
    messages = "\n".join(r.getMessage() for r in records)
    for family in ("spmm:", "sddmm:", "bfs:"):
        assert family in messages, messages
    assert "backend=cpu" in messages and "kernel=" in messages


def test_nothing_is_logged_above_debug(caplog):
    g = gk.Graph.from_coo([0, 1], [1, 0])
    with caplog.at_level(logging.INFO, logger="graphkern"):
        gk.ops.copy_u_sum(g, np.ones((2, 1)))
    assert not [r for r in caplog.records if r.name == "graphkern"]
