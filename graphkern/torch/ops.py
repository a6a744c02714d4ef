"""DGL's generated operator names (``u_mul_e_sum``, ``copy_u_max``, ``u_dot_v``, ...) over the differentiable
:func:`graphkern.torch.spmm` and :func:`graphkern.torch.sddmm`, as ``dgl.ops`` has them.

>>> import torch, graphkern as gk, graphkern.torch as gkt
>>> g = gk.Graph.from_coo([0, 1], [1, 1])
>>> gkt.ops.u_mul_e_sum(g, torch.tensor([[1.0], [2.0]]), torch.tensor([[3.0], [4.0]])).ravel().tolist()
[0.0, 11.0]
"""

from __future__ import annotations

from .._op_names import OP_NAMES, bind
from .autograd import sddmm, spmm

__all__: list[str] = []
for _spec in OP_NAMES:
    globals()[_spec.name] = bind(_spec, spmm, sddmm, keywords=False)
    globals()[_spec.name].__doc__ = f"Differentiable ``graphkern.ops.{_spec.name}``: {_spec.doc}"
    __all__.append(_spec.name)
del _spec
