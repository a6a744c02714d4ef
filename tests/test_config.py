"""Backend selection, show_config and the dispatcher's explain."""

import os
import subprocess
import sys

import pytest

import graphkern as gk
from graphkern.dispatch import Kernel


@pytest.mark.fast
def test_set_and_use_backend():
    assert gk.get_backend() == "auto"
    gk.set_backend("cpu")
    try:
        assert gk.get_backend() == "cpu"
        with gk.use_backend("auto"):
            assert gk.get_backend() == "auto"
            with gk.use_backend("cpu"):
                assert gk.get_backend() == "cpu"
            assert gk.get_backend() == "auto"
    finally:
        gk.set_backend("auto")


def test_bad_backend_names_list_the_valid_ones():
    with pytest.raises(ValueError, match="expected one of auto, cpu, cuda, found 'gpu'"):
        gk.set_backend("gpu")
    with pytest.raises(ValueError, match="found 'tpu'"):
        with gk.use_backend("tpu"):
            pass
    with pytest.raises(TypeError):
        gk.set_backend(3)
    with pytest.raises(ValueError, match="argument 'backend'"):
        gk.resolve_backend("fpga")


def test_environment_variable_is_validated_at_import():
    env = dict(os.environ, GRAPHKERN_BACKEND="gpu")
    proc = subprocess.run([sys.executable, "-c", "import graphkern"], env=env, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "environment variable GRAPHKERN_BACKEND: expected one of auto, cpu, cuda, found 'gpu'" in proc.stderr
    env["GRAPHKERN_BACKEND"] = "CPU"
    proc = subprocess.run([sys.executable, "-c", "import graphkern as gk; print(gk.get_backend())"], env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0 and proc.stdout.strip() == "cpu"


@pytest.mark.fast
def test_auto_resolves_to_cpu_for_host_data_and_cuda_without_gpu_says_why():
    assert gk.resolve_backend(None) == "cpu"
    ok, why = gk._config.cuda_status()
    if ok:
        pytest.skip(f"a CUDA device is usable here ({why})")
    with pytest.raises(gk.BackendUnavailableError, match="backend 'cuda' is not usable: "):
        gk.resolve_backend("cuda")


@pytest.mark.fast
def test_show_config_prints_versions(capsys):
    info = gk.show_config()
    out = capsys.readouterr().out
    for key in ("numba", "numpy", "backend", "numba_threads", "cuda"):
        assert key in info and key in out


def test_explain_says_how_a_format_is_built():
    g = gk.Graph.from_coo([0, 1], [1, 0])
    plan = gk.explain(g, "convert", to="csc")
    assert (plan.backend, plan.format, plan.kernel) == ("cpu", "csc", Kernel.COO_TO_COMPRESSED)
    assert "count sort" in str(plan)
    g.csr()
    assert gk.explain(g, "convert", to="csc").kernel is Kernel.TRANSPOSE_COMPRESSED
    g.csc()
    plan = gk.explain(g, "convert", to="csc")
    assert (plan.kernel, plan.builds) == (None, ()) and "kernel=none; uses the created csc" in str(plan)
    with pytest.raises(ValueError, match="argument 'family'"):
        gk.explain(g, "nope")


def test_select_format_follows_dgl_rules():
    from graphkern.dispatch import select_format

    g = gk.Graph.from_coo([0, 1], [1, 0])
    assert select_format(g, "csc", ("coo", "csc"))[0] == "csc"  # preferred and allowed: built on demand
    only_coo = g.formats("coo")
    assert select_format(only_coo, "csc", ("coo", "csc"))[0] == "coo"  # fall back to the created one
    with pytest.raises(ValueError, match="the kernel needs one of"):
        select_format(only_coo, "csc", ("csc",))
    picked, reasons = select_format(g, "csc", ("coo", "csc"), cost_model=lambda g, c: "coo")
    assert picked == "coo" and "cost model" in reasons[0]


@pytest.mark.parametrize("name", ["transpose", "gather_to_root_transpose", "bfs_1d", "bfs_2d"])
def test_distributed_layer_refuses_the_cuda_backend(name):
    """The MPI layer has no GPU path: under the cuda backend it says so instead of running on the CPU."""
    pytest.importorskip("mpi4py")
    from graphkern import distributed as gkd
    from graphkern.errors import BackendUnavailableError

    func = getattr(gkd, name)
    args = (None, 0) if name.startswith("bfs") else (None,)
    with gk.use_backend("cuda"), pytest.raises(BackendUnavailableError, match=f"distributed.{name}: .*no cuda path"):
        func(*args)


@pytest.mark.parametrize("bad", [1, 1.5, None, b"cpu", ["cpu"]], ids=repr)
def test_a_backend_that_is_not_a_str_is_a_type_error_naming_it(bad):
    import graphkern as gk

    g = gk.Graph.from_coo([0], [1], num_nodes=2)
    if bad is not None:  # None means "the current default" for the functions
        with pytest.raises(TypeError, match=r"argument 'backend'.*auto, cpu, cuda.*found " + type(bad).__name__):
            gk.bfs(g, 0, backend=bad)
        with pytest.raises(TypeError, match="argument 'backend'"):
            gk.DynamicGraph(3, backend=bad)
    with pytest.raises(TypeError, match="auto, cpu, cuda"):
        gk.set_backend(bad)
    with pytest.raises(TypeError, match="auto, cpu, cuda"):
        with gk.use_backend(bad):
            pass
