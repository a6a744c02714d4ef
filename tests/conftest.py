import os

import numpy as np
import pytest
from hypothesis import settings

settings.register_profile("graphkern", deadline=None, max_examples=60, derandomize=True)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "graphkern"))


@pytest.fixture(params=[np.int32, np.int64], ids=["int32", "int64"])
def idtype(request):
    return np.dtype(request.param)


@pytest.fixture
def force_bucketed_sort(monkeypatch):
    """Send small sorts down the two-pass (bucketed) path so it is tested on every graph case."""
    from graphkern.kernels.cpu import sort

    monkeypatch.setattr(sort, "_BUCKETED_MIN_ELEMENTS", 0)
    monkeypatch.setattr(sort, "_BUCKETED_MIN_KEYS", 0)
    monkeypatch.setattr(sort, "_BUCKET_BITS", 3)
