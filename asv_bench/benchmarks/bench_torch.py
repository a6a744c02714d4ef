"""The PyTorch layer: a GraphConv and a GATConv training step (forward and backward) on the Kronecker graph."""

import numpy as np

import graphkern as gk


class TorchLayers:
    params = [[16], [64]]
    param_names = ["scale", "features"]
    timeout = 900

    def setup(self, scale, features):
        try:
            import torch

            import graphkern.torch as gkt
        except ImportError as exc:  # asv skips the benchmark
            raise NotImplementedError(f"torch is not installed: {exc}") from exc
        self.torch = torch
        src, dst = gk.graph.kronecker(scale, progress=False).edges()
        n = 1 << scale
        loops = np.arange(n)
        self.g = gk.Graph.from_coo(np.r_[src, loops], np.r_[dst, loops], num_nodes=n)
        torch.manual_seed(0)
        self.x = torch.randn(n, features)
        self.gcn = gkt.GraphConv(features, features)
        self.gat = gkt.GATConv(features, features // 4, num_heads=4)
        # compile every kernel the steps use, and check the forward against a dense-free reference
        out = self.gcn(self.g, self.x)
        degrees = torch.from_numpy(self.g.in_degrees().astype(np.int64)).clamp(min=1).float()
        norm_src = degrees.pow(-0.5).unsqueeze(1)
        ref = gk.ops.copy_u_sum(self.g, (self.x * norm_src).numpy())
        ref = torch.from_numpy(ref) @ self.gcn.weight * norm_src + self.gcn.bias
        if not torch.allclose(out, ref, rtol=1e-3, atol=1e-3):
            raise AssertionError("GraphConv differs from its formula")
        self.time_gcn_step(scale, features)
        self.time_gat_step(scale, features)

    def time_gcn_step(self, scale, features):
        self.gcn.zero_grad()
        self.gcn(self.g, self.x).square().mean().backward()

    def time_gat_step(self, scale, features):
        self.gat.zero_grad()
        self.gat(self.g, self.x).square().mean().backward()
