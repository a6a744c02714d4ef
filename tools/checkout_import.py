"""Import graphkern from a source checkout that was never installed.

The distribution maps three folders into one package (``graphkern/``, ``kernels/`` as
``graphkern.kernels``, ``graph/`` as ``graphkern.graph``; see ``[tool.setuptools.package-dir]`` in
pyproject.toml), so a plain ``sys.path`` entry cannot import a checkout. :func:`use_checkout` puts a
finder first on ``sys.meta_path`` that maps exactly those three names to their folders; every other
module, subpackages included, is found the usual way. Tools that must run on a machine where graphkern
cannot be installed (``tools/gpu_check.py`` on a GPU machine without network) call it, and
``tools/from_checkout/`` holds a ``sitecustomize`` that does the same for any process started with
``PYTHONPATH=tools/from_checkout`` (``pytest tests/cuda`` on a GPU, for example).
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"graphkern": "graphkern", "graphkern.kernels": "kernels", "graphkern.graph": "graph"}


class CheckoutFinder(importlib.abc.MetaPathFinder):
    """Finds ``graphkern``, ``graphkern.kernels`` and ``graphkern.graph`` in the checkout at ``root``."""

    def __init__(self, root: Path):
        self.root = Path(root)

    def find_spec(self, name, path=None, target=None):
        folder = FOLDERS.get(name)
        if folder is None:
            return None
        init = self.root / folder / "__init__.py"
        return importlib.util.spec_from_file_location(name, init, submodule_search_locations=[str(init.parent)])


def use_checkout(root: Path = ROOT) -> bool:
    """Make ``import graphkern`` load the checkout at ``root``; False (and nothing changed) when graphkern
    was imported already or the finder is in place."""
    if "graphkern" in sys.modules or any(isinstance(f, CheckoutFinder) for f in sys.meta_path):
        return False
    sys.meta_path.insert(0, CheckoutFinder(root))
    return True
