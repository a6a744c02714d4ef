"""cuda_status(): one line naming what the CUDA backend lacks, each failure simulated by monkeypatching.

The probe compiles and runs a tiny kernel once per process; its steps are replaced here, so the tests run
the same with or without a GPU.
"""

import threading
import types

import numpy as np
import pytest

import graphkern as gk
from graphkern import _config

cuda = pytest.importorskip("numba.cuda")
PROBE = _config._probe  # the cached function (a test replaces the module attribute)


@pytest.fixture(autouse=True)
def fresh_probe(monkeypatch):
    """Each test probes anew (the answer is cached per process) and leaves no cached answer behind."""
    from numba.core import config

    monkeypatch.setattr(config, "ENABLE_CUDASIM", 0)
    PROBE.cache_clear()
    yield
    PROBE.cache_clear()


@pytest.fixture
def fake_gpu(monkeypatch):
    """A driver that finds one sm_90 GPU; the probe's compile and launch steps still need replacing."""
    device = types.SimpleNamespace(name=b"Fake H200", compute_capability=(9, 0))
    monkeypatch.setattr(cuda, "is_available", lambda: True)
    monkeypatch.setattr(cuda, "get_current_device", lambda: device)
    monkeypatch.setattr(_config, "_compile_probe", lambda: "kernel")
    monkeypatch.setattr(_config, "_launch_probe", lambda kernel: 3 * np.arange(100, dtype=np.int64) + 1)


def status():
    ok, why = _config.cuda_status()
    assert "\n" not in why
    return ok, why


def test_the_simulator_is_usable_without_a_probe(monkeypatch):
    from numba.core import config

    monkeypatch.setattr(config, "ENABLE_CUDASIM", 1)
    monkeypatch.setattr(_config, "_probe", lambda: pytest.fail("the simulator needs no probe"))
    assert _config.cuda_status() == (True, "the CUDA simulator (NUMBA_ENABLE_CUDASIM=1)")


def test_numba_cuda_not_installed(monkeypatch):
    monkeypatch.setattr(_config, "_numba_cuda_version", lambda: None)
    ok, why = status()
    assert not ok and why.startswith("numba-cuda is not installed") and "graphkern[cuda]" in why


def test_no_driver_or_gpu(monkeypatch):
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    ok, why = status()
    assert not ok and why.startswith("no usable CUDA driver or GPU was found (")


def test_a_usable_gpu(fake_gpu):
    assert status() == (True, "GPU Fake H200 (sm_90); a test kernel compiled, ran and agreed")


def test_the_compiler_missing(fake_gpu, monkeypatch):
    from numba.cuda.cudadrv.error import NvvmSupportError

    def missing():
        raise NvvmSupportError("libNVVM cannot be found. Do `conda install cudatoolkit`:\nlibnvvm.so: no such file")

    monkeypatch.setattr(_config, "_compile_probe", missing)
    ok, why = status()
    assert not ok and why.startswith("the CUDA compiler (NVVM) is missing or unusable (NvvmSupportError: libNVVM")
    assert "graphkern[cuda]" in why


def test_numpy_too_new_for_numba_cuda(fake_gpu, monkeypatch):
    def incompatible():
        raise AttributeError("module 'numpy' has no attribute 'row_stack'")

    monkeypatch.setattr(_config, "_compile_probe", incompatible)
    ok, why = status()
    assert not ok and "cannot compile with numpy" in why and "numpy<2.5" in why


def test_another_compile_failure(fake_gpu, monkeypatch):
    def broken():
        raise RuntimeError("nvJitLink failed")

    monkeypatch.setattr(_config, "_compile_probe", broken)
    assert status() == (False, "a test kernel did not compile (RuntimeError: nvJitLink failed)")


def test_a_launch_failure(fake_gpu, monkeypatch):
    def failing(kernel):
        raise RuntimeError("CUDA_ERROR_LAUNCH_FAILED")

    monkeypatch.setattr(_config, "_launch_probe", failing)
    ok, why = status()
    assert not ok and why.startswith("a test kernel compiled but did not run on GPU Fake H200")


def test_wrong_values(fake_gpu, monkeypatch):
    monkeypatch.setattr(_config, "_launch_probe", lambda kernel: np.zeros(100, np.int64))
    ok, why = status()
    assert not ok and why == ("a test kernel ran on GPU Fake H200 but computed wrong values (element 0: 0, "
                              "expected 1)")


def test_a_driver_error(monkeypatch):
    monkeypatch.setattr(cuda, "is_available", lambda: True)

    def broken():
        raise RuntimeError("CUDA_ERROR_NO_DEVICE")

    monkeypatch.setattr(cuda, "get_current_device", broken)
    assert status() == (False, "the CUDA driver failed to initialise (RuntimeError: CUDA_ERROR_NO_DEVICE)")


def test_a_hung_probe_is_abandoned(fake_gpu, monkeypatch):
    release = threading.Event()
    monkeypatch.setattr(_config, "_PROBE_TIMEOUT_S", 0.2)
    monkeypatch.setattr(_config, "_compile_probe", lambda: release.wait(30))
    try:
        ok, why = status()
    finally:
        release.set()  # the abandoned probe thread ends
    assert not ok and why == ("the CUDA probe (compile and run a tiny kernel) did not finish in 0.2 s: the driver "
                              "or the compiler hangs")


def test_the_answer_is_cached(fake_gpu, monkeypatch):
    calls = []
    monkeypatch.setattr(_config, "_compile_probe", lambda: calls.append(1) or "kernel")
    assert status()[0] and status()[0]
    assert len(calls) == 1


def test_resolve_backend_and_show_config_say_why(monkeypatch):
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    with pytest.raises(gk.BackendUnavailableError, match=r"backend 'cuda' is not usable: no usable CUDA driver"):
        gk.resolve_backend("cuda")
    monkeypatch.delenv("GRAPHKERN_SKIP_CUDA_PROBE", raising=False)
    assert gk._info.config_dict()["cuda"].startswith("not usable: no usable CUDA driver or GPU")
