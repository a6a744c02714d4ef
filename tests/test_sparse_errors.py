"""Every documented input error of spmm/sddmm/edge_softmax: raised before compiled code, nothing written."""

import numpy as np
import pytest

import graphkern as gk
from graphkern.dispatch import Kernel


@pytest.fixture
def g():
    return gk.Graph.from_coo([0, 1, 2], [1, 2, 0])


@pytest.mark.fast
def test_unknown_names_list_the_valid_ones(g):
    x = np.ones((3, 2))
    valid = "'add', 'sub', 'mul', 'div', 'copy_lhs', 'copy_rhs'"
    with pytest.raises(ValueError, match=f"argument 'op': expected one of {valid}, found 'pow'"):
        gk.spmm(g, "pow", "sum", x, x)
    with pytest.raises(ValueError, match="argument 'reduce': expected one of 'sum', 'max', 'min', 'mean', found"):
        gk.spmm(g, "copy_lhs", "prod", x)
    with pytest.raises(ValueError, match="argument 'lhs_target'"):
        gk.sddmm(g, "add", x, x, "w", "v")
    with pytest.raises(ValueError, match="argument 'op'.*'dot'"):
        gk.sddmm(g, "matmul", x, x)
    with pytest.raises(ValueError, match="argument 'norm_by'"):
        gk.edge_softmax(g, np.ones(3), norm_by="both")


def test_dtype_mismatch_and_unsupported_dtypes(g):
    with pytest.raises(TypeError, match="expected the same dtype, found float32 and float64"):
        gk.spmm(g, "mul", "sum", np.ones((3, 2), np.float32), np.ones((3, 1)))
    with pytest.raises(TypeError, match="argument 'ufeat': expected float32 or float64, found int64"):
        gk.spmm(g, "copy_lhs", "sum", np.ones((3, 2), np.int64))
    with pytest.raises(TypeError, match="float16 runs on the cuda backend only"):
        gk.spmm(g, "copy_lhs", "sum", np.ones((3, 2), np.float16))
    with pytest.raises(TypeError, match="expected the same dtype"):
        gk.sddmm(g, "add", np.ones((3, 2), np.float32), np.ones((3, 2)))


def test_wrong_leading_dimension(g):
    with pytest.raises(ValueError, match=r"'ufeat': expected 3 rows \(one per source node\), found shape \(4, 2\)"):
        gk.spmm(g, "copy_lhs", "sum", np.ones((4, 2)))
    with pytest.raises(ValueError, match=r"argument 'efeat': expected 3 rows \(one per edge\)"):
        gk.spmm(g, "mul", "sum", np.ones((3, 2)), np.ones((5, 1)))
    with pytest.raises(ValueError, match=r"argument 'rhs': expected 3 rows \(one per edge\)"):
        gk.sddmm(g, "add", np.ones((3, 2)), np.ones((2, 2)), "u", "e")
    with pytest.raises(ValueError, match=r"argument 'logits': expected 3 rows"):
        gk.edge_softmax(g, np.ones(4))


def test_shapes_that_do_not_broadcast(g):
    with pytest.raises(ValueError, match=r"feature shapes \(3,\) and \(2,\) do not broadcast"):
        gk.spmm(g, "add", "sum", np.ones((3, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError, match="'dot' needs equal last dimensions"):
        gk.sddmm(g, "dot", np.ones((3, 4)), np.ones((3, 5)))


def test_non_contiguous_arrays(g):
    x = np.ones((3, 4))[:, ::2]
    with pytest.raises(ValueError, match="argument 'ufeat': expected a C-contiguous array.*np.ascontiguousarray"):
        gk.spmm(g, "copy_lhs", "sum", x)
    with pytest.raises(ValueError, match="argument 'lhs': expected a C-contiguous array"):
        gk.sddmm(g, "copy_lhs", x, None)


def test_missing_operands(g):
    x = np.ones((3, 2))
    with pytest.raises(ValueError, match="argument 'efeat': op 'mul' needs edge features, found None"):
        gk.spmm(g, "mul", "sum", x)
    with pytest.raises(ValueError, match="argument 'ufeat': op 'add' needs source-node features"):
        gk.spmm(g, "add", "sum", None, x)
    with pytest.raises(ValueError, match="argument 'rhs': op 'dot' needs it"):
        gk.sddmm(g, "dot", x, None)


def test_return_arg_only_for_max_and_min(g):
    with pytest.raises(ValueError, match="arg outputs exist for max and min, found reduce='sum'"):
        gk.spmm(g, "copy_lhs", "sum", np.ones((3, 1)), return_arg=True)


def test_not_a_graph_or_not_an_array(g):
    with pytest.raises(TypeError, match="argument 'g': expected a graphkern Graph"):
        gk.spmm("graph", "copy_lhs", "sum", np.ones((3, 1)))
    with pytest.raises(TypeError, match="argument 'ufeat': expected a NumPy array, found list"):
        gk.spmm(g, "copy_lhs", "sum", [[1.0], [2.0], [3.0]])


def test_disallowed_format(g):
    only_coo = g.formats("coo")
    with pytest.raises(ValueError, match="argument 'format': the graph does not allow 'csc'"):
        gk.spmm(only_coo, "copy_lhs", "sum", np.ones((3, 1)), format="csc")
    with pytest.raises(ValueError, match="argument 'format'"):
        gk.spmm(g, "copy_lhs", "sum", np.ones((3, 1)), format="dense")
    with pytest.raises(ValueError, match="needs the csc format"):
        gk.edge_softmax(only_coo, np.ones(3))


def test_cuda_without_a_gpu_says_why(g):
    ok, _ = gk._config.cuda_status()
    if ok:
        pytest.skip("a CUDA device is usable here")
    with pytest.raises(gk.BackendUnavailableError, match="backend 'cuda' is not usable"):
        gk.spmm(g, "copy_lhs", "sum", np.ones((3, 1)), backend="cuda")


def test_explain_spmm_and_sddmm(g):
    x, w = np.ones((g.num_src, 2)), np.ones((g.num_edges, 1))
    plan = gk.explain(g, "spmm", op="mul", reduce="max", ufeat=x, efeat=w, return_arg=True)
    assert plan.format == "csc" and plan.kernel is Kernel.SPMM_CSC_VECTOR and plan.params["arg"]
    assert [step.kernel for step in plan.builds] == [Kernel.COO_TO_COMPRESSED] and "count sort" in str(plan)
    plan = gk.explain(g, "sddmm", op="dot", lhs=x, rhs=x, lhs_target="u", rhs_target="v")
    assert plan.format == "csr"
    assert gk.explain(g.formats("coo"), "spmm", op="copy_lhs", reduce="sum", ufeat=x).format == "coo"
