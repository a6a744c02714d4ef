"""The common base of the distributed matrices: arrays kept privately, handed out read-only.

:class:`~graphkern.distributed.DistCSR`, :class:`~graphkern.distributed.XCSR` and
:class:`~graphkern.distributed.Block2D` keep each array in a private attribute (``_indptr``...), which the
distributed kernels read, and hand it out under its public name as a read-only view
(:func:`graphkern._validate.read_only_field`): a caller writing into ``A.indices`` would change ids that
were checked once, and the next kernel would index past its arrays. Freezing the arrays themselves would
make Numba compile a second, read-only specialisation of every kernel that reads them.
"""

from __future__ import annotations

import numpy as np

from .._validate import private


def kept(arr):
    """What a directly built object keeps of a caller's array: memory of its own (None stays None)."""
    return None if arr is None else private(np.asarray(arr), arr)


class Held:
    """Base class: ``FIELDS`` in constructor order, those in ``ARRAYS`` kept as ``_<name>``.

    The public constructor of a subclass passes the caller's arrays through :func:`kept`; graphkern's
    own constructors build with :meth:`_own`, which keeps the arrays they have just made as they are.
    """

    FIELDS: tuple[str, ...] = ()
    ARRAYS: frozenset[str] = frozenset()

    def _set(self, *values):
        # trailing fields left out (XCSR's cell_counts, Block2D's values) are None
        values = values + (None,) * (len(self.FIELDS) - len(values))
        for name, value in zip(self.FIELDS, values, strict=True):
            self.__dict__["_" + name if name in self.ARRAYS else name] = value
        return self

    @classmethod
    def _own(cls, *values):
        """An object holding ``values`` as they are: arrays graphkern has just made, which no caller holds."""
        return cls.__new__(cls)._set(*values)
