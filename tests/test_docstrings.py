"""Every docstring example in the package runs and prints what it says."""

import doctest
import importlib
import pkgutil

import pytest

import graphkern


def _modules():
    names = ["graphkern"]
    for info in pkgutil.walk_packages(graphkern.__path__, "graphkern."):
        if ".cuda" in info.name:  # the CUDA twins are exercised under the simulator in tests/cuda
            continue
        names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _modules())
def test_docstring_examples(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE, verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"
