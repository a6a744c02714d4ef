"""DGL's generated operator names over :func:`graphkern.spmm` and :func:`graphkern.sddmm`.

g-SpMM: ``u_{add,sub,mul,div}_e_{sum,max,min,mean}(g, x, y)``, ``copy_u_{reducer}(g, x)`` and
``copy_e_{reducer}(g, y)``. g-SDDMM: ``{l}_{add,sub,mul,div,dot}_{r}(g, x, y)`` for every ordered pair of
distinct targets in u, v, e; ``copy_u(g, x)`` and ``copy_v(g, x)`` (one value per edge) and ``copy_e(g, x)``
(returns ``x``). Every function takes the keyword arguments of the function it wraps.

>>> import numpy as np, graphkern as gk
>>> g = gk.Graph.from_coo([0, 1], [1, 1])
>>> gk.ops.u_mul_e_sum(g, np.array([[1.0], [2.0]]), np.array([[3.0], [4.0]])).ravel().tolist()
[0.0, 11.0]
"""

from __future__ import annotations

from ._op_names import bind_all
from .sparse import sddmm, spmm

__all__: list[str] = bind_all(globals(), spmm, sddmm, keywords=True)
