"""PyTorch autograd for the generalized sparse kernels, and GNN layers built on them.

The package holds ``autograd`` (the differentiable spmm, sddmm and edge_softmax), ``ops`` (DGL's generated
names over them) and ``nn`` (the layers); everything public is also importable from here.

``import graphkern.torch as gkt`` needs torch (``pip install "graphkern[torch]"``); nothing else in graphkern
imports torch. The functions take and return tensors; CPU tensors reach the compiled kernels as NumPy views
of the same memory, CUDA tensors as numba device arrays viewing the same device memory (through
``__cuda_array_interface__``; no copy in, no copy out), so the cuda backend runs them and the results
are CUDA tensors on the same device. Gradients follow DGL's rules (docs/design.md, section 'Autograd'):

- ``sub`` and ``div`` become ``add(x, -y)`` and ``mul(x, 1 / y)`` before autograd, as in DGL, so only
  add, mul, dot and the copies need backward rules;
- the backward of an SpMM runs on the reverse graph (cached on the forward graph), sums for add/copy,
  ``mul`` with the other operand, and for max/min scatters the gradient to the arg outputs (a destination
  without in-edges, arg -1, passes no gradient anywhere);
- gradients of broadcast operands are summed over the broadcast axes.

>>> import torch, graphkern as gk, graphkern.torch as gkt
>>> g = gk.Graph.from_coo([0, 1, 2], [1, 2, 0])
>>> x = torch.ones(3, 4, dtype=torch.float64, requires_grad=True)
>>> gkt.copy_u_sum(g, x).sum().backward()
>>> x.grad[:, 0].tolist()
[1.0, 1.0, 1.0]
"""

from __future__ import annotations

from . import nn, ops
from .autograd import edge_softmax, sddmm, spmm
from .nn import *  # noqa: F403  (every layer of graphkern.torch.nn, also at this level)
from .nn import GATConv, GraphConv, SAGEConv
from .ops import *  # noqa: F403  (DGL's generated names, also at the top level as before)
from .segment import gather_mm, segment_mm, segment_reduce, segment_softmax  # noqa: F401  (also in ops.__all__)

__all__ = ["spmm", "sddmm", "edge_softmax", "GraphConv", "GATConv", "SAGEConv", "ops", "nn", *ops.__all__]
__all__ += [name for name in nn.__all__ if name not in __all__]
