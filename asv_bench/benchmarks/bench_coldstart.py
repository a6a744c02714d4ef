"""Cold start: a fresh interpreter importing graphkern and making its first call (Numba cache on disk)."""


class ColdStart:
    timeout = 600
    # one sample per measurement: the point is the first call, which a repeat would warm
    repeat = 3
    number = 1

    def timeraw_import(self):
        return "import graphkern"

    def timeraw_import_and_first_spmm(self):
        return """
import numpy as np
import graphkern as gk
g = gk.Graph.from_coo(np.arange(1000) % 97, np.arange(1000) % 89, num_nodes=100)
gk.ops.copy_u_sum(g, np.ones((100, 16), dtype=np.float32))
"""

    def timeraw_import_and_first_bfs(self):
        return """
import graphkern as gk
g = gk.graph.kronecker(10, progress=False)
gk.bfs(g, 0)
"""
