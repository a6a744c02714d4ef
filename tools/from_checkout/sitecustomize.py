"""With ``PYTHONPATH=tools/from_checkout``, every Python process imports graphkern from this checkout
(see tools/checkout_import.py), installed or not."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
try:
    from checkout_import import use_checkout

    use_checkout()
finally:
    sys.path.pop(0)
