"""graphkern.torch under a torch stream of its own: numba's default stream (where graphkern launches) and
torch's stream are ordered by events on the device, both ways, and the host never waits. The boundary
functions run against stand-ins for torch's current stream and numba's streams and events that record
what is asked of them (and fail on any host synchronisation), so this runs without a GPU."""

from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")

from graphkern.torch import _tensors  # noqa: E402


class Stream:
    def __init__(self, name, log):
        self.name, self.log = name, log

    def synchronize(self):
        raise AssertionError(f"the host waited for the {self.name} stream")


class Event:
    def __init__(self, log):
        self.log = log

    def record(self, stream):
        self.log.append(("record on", stream.name))

    def wait(self, stream):
        self.log.append(("wait on", stream.name))

    def synchronize(self):
        raise AssertionError("the host waited for an event")


def _fakes(monkeypatch, handle):
    from numba import cuda

    log, adopted = [], []
    torch_stream = SimpleNamespace(cuda_stream=handle, synchronize=lambda: log.append("host wait"))
    default = Stream("default", log)
    monkeypatch.setattr(torch.cuda, "current_stream", lambda device=None: torch_stream)
    monkeypatch.setattr(cuda, "external_stream", lambda h: Stream(f"torch {h}", log), raising=False)
    monkeypatch.setattr(cuda, "default_stream", lambda: default, raising=False)
    monkeypatch.setattr(cuda, "event", lambda timing=True: Event(log), raising=False)
    monkeypatch.setattr(cuda, "get_current_device", lambda: SimpleNamespace(id=0), raising=False)
    monkeypatch.setattr(_tensors._cuda, "require_cuda", lambda: None)
    monkeypatch.setattr(_tensors._cuda, "adopt", lambda t, ordered=False: adopted.append(ordered) or "view")
    monkeypatch.setattr(torch, "as_tensor", lambda a, device=None: ("tensor", a, str(device)))
    return log, adopted


def test_inputs_on_a_torch_stream_are_waited_for_on_the_device(monkeypatch):
    log, adopted = _fakes(monkeypatch, 7)
    tensor = SimpleNamespace(device=SimpleNamespace(index=0, type="cuda"))
    assert _tensors._device_view(tensor) == "view"
    assert log == [("record on", "torch 7"), ("wait on", "default")]
    assert adopted == [True]  # adopted without numba's host-side stream synchronisation


def test_results_reach_the_torch_stream_after_graphkerns_work(monkeypatch):
    log, _ = _fakes(monkeypatch, 7)
    assert _tensors._tensor_from_device("result") == ("tensor", "result", "cuda:0")
    assert log == [("record on", "default"), ("wait on", "torch 7")]


def test_on_torchs_default_stream_nothing_is_ordered(monkeypatch):
    """torch's default stream is CUDA's legacy default stream, which numba's default stream already
    follows: no events."""
    log, adopted = _fakes(monkeypatch, 0)
    tensor = SimpleNamespace(device=SimpleNamespace(index=None, type="cuda"))
    assert _tensors._device_view(tensor) == "view"
    assert _tensors._tensor_from_device("result")[0] == "tensor"
    assert log == []
