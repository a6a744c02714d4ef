"""Device arrays from other libraries (CuPy, torch) are adopted without a copy, and without a host-side wait
where CUDA already orders their stream before graphkern's launches."""

import numpy as np
import pytest
from numba import cuda

from graphkern import _cuda


class Exported:
    """An object exporting device memory through ``__cuda_array_interface__`` on a given stream."""

    def __init__(self, array, stream):
        self._array = array
        self.__cuda_array_interface__ = dict(array.__cuda_array_interface__, stream=stream) \
            if hasattr(array, "__cuda_array_interface__") else {"stream": stream}


@pytest.mark.parametrize("stream, waits", [(None, False), (1, False), (2, True), (12345, True)])
def test_adopt_waits_only_for_streams_cuda_does_not_order(monkeypatch, stream, waits):
    base = cuda.to_device(np.arange(5, dtype=np.int32))
    calls = []

    def as_cuda_array(obj, sync=True):
        calls.append(sync)
        return base

    monkeypatch.setattr(cuda, "as_cuda_array", as_cuda_array, raising=False)  # the simulator has none
    assert _cuda.adopt(Exported(base, stream)) is base
    assert calls == [waits]


def test_numba_device_arrays_are_taken_as_they_are(monkeypatch):
    base = cuda.to_device(np.arange(3, dtype=np.float32))
    monkeypatch.setattr(cuda, "as_cuda_array", lambda *a, **k: pytest.fail("re-imported a numba array"),
                        raising=False)
    assert _cuda.adopt(base) is base
