#!/usr/bin/env python3
"""Check and time every CUDA kernel of graphkern on a real GPU, against the CPU backend, in one run.

For a machine with an NVIDIA GPU (an H200 in this project), under 8 minutes at the default sizes:
Graph500 Kronecker scale 22, F = 64 and 128, a dynamic graph of 10M edges with batches of 1e4..1e6.
Each kernel runs once to compile, is checked against the CPU backend (or a NumPy reference) on sampled
rows, and is timed with CUDA events: the median of ``--repeats`` runs. Where it applies, cuSPARSE
(``cupyx.scipy.sparse`` csr @ dense) runs on the same graph and features. The device's copy bandwidth
is measured first (a device-to-device copy), and every memory-bound kernel is reported against the
floor its bytes imply at that bandwidth. One table is printed at the end (``--json`` writes it too).

    python tools/gpu_check.py                  # the full check (a GPU)
    python tools/gpu_check.py --quick          # tiny sizes; also runs under NUMBA_ENABLE_CUDASIM=1

Targets on an H200 (the CUDA issue): copy_u_sum at F=64 at least cuSPARSE's csr @ dense; u_dot_v at
F=128 at least 60% of its bandwidth floor; the count sort at least 40% of copy bandwidth; GPMA at least
100M updates/s at batch 1e6. The table's last column says met / not met for each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

import numpy as np


def _cuda():
    from numba import cuda

    return cuda


def simulated() -> bool:
    return os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"


def time_gpu(fn, repeats: int) -> float:
    """Median seconds of ``fn()`` over ``repeats`` runs, after one warm-up (CUDA events on a GPU; the
    simulator's events carry no time, so there the wall clock)."""
    cuda = _cuda()
    fn()
    cuda.synchronize()
    times = []
    for _ in range(repeats):
        if simulated():
            t0 = time.perf_counter()
            fn()
            times.append(time.perf_counter() - t0)
            continue
        start, stop = cuda.event(), cuda.event()
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) / 1e3)
    return statistics.median(times)


def copy_bandwidth(nbytes: int, repeats: int) -> float:
    """Device-to-device copy bandwidth in bytes/s (bytes read plus bytes written)."""
    cuda = _cuda()
    a = cuda.device_array(nbytes // 4, np.float32)
    b = cuda.device_array(nbytes // 4, np.float32)
    seconds = time_gpu(lambda: b.copy_to_device(a), repeats)
    return 2 * a.nbytes / seconds


def sample_rows(n: int, k: int, rng) -> np.ndarray:
    return np.unique(rng.integers(0, n, min(k, n))) if n else np.zeros(0, np.int64)


def reference_spmm_rows(indptr, indices, x, rows, reduce):
    out = np.zeros((rows.size, x.shape[1]), np.float64)
    for i, v in enumerate(rows):
        nbrs = indices[indptr[v]:indptr[v + 1]]
        if nbrs.size:
            vals = x[nbrs].astype(np.float64)
            out[i] = vals.sum(0) if reduce == "sum" else vals.max(0)
    return out


class Table:
    def __init__(self):
        self.rows = []

    def add(self, kernel, size, seconds, measure, peer="", ratio="", target="", ok=None):
        self.rows.append({"kernel": kernel, "size": size, "ms": round(seconds * 1e3, 4), "measure": measure,
                          "peer": peer, "ratio": ratio, "target": target,
                          "status": "" if ok is None else ("met" if ok else "not met")})

    def render(self) -> str:
        cols = ["kernel", "size", "ms", "measure", "peer", "ratio", "target", "status"]
        width = {c: max(len(c), *(len(str(r[c])) for r in self.rows)) if self.rows else len(c) for c in cols}
        lines = [" | ".join(c.ljust(width[c]) for c in cols), "-+-".join("-" * width[c] for c in cols)]
        lines += [" | ".join(str(r[c]).ljust(width[c]) for c in cols) for r in self.rows]
        return "\n".join(lines)


def check(name: str, ok: bool, detail: str = "") -> None:
    if not ok:
        raise AssertionError(f"{name}: the CUDA result differs from the CPU reference {detail}")


def run(args) -> Table:
    from graphkern.kernels.cuda import sort as cuda_sort

    import graphkern as gk

    cuda = _cuda()
    rng = np.random.default_rng(0)
    table = Table()
    ok, why = gk._config.cuda_status()
    if not ok:
        raise SystemExit(f"gpu_check: no usable CUDA device: {why}")
    print(f"device: {why}", flush=True)
    bw = copy_bandwidth(args.copy_bytes, args.repeats)
    table.add("copy (device to device)", f"{args.copy_bytes / 1e6:.0f} MB", 2 * args.copy_bytes / bw,
              f"{bw / 1e9:.1f} GB/s")

    t0 = time.perf_counter()
    g = gk.graph.kronecker(args.scale)
    print(f"kronecker scale {args.scale}: {g.num_nodes} nodes, {g.num_edges} edges ({time.perf_counter() - t0:.1f} s)",
          flush=True)
    indptr, indices, _ = g.csc()
    src, dst = g.edges()
    d_src, d_dst = cuda.to_device(src), cuda.to_device(dst)
    E = g.num_edges

    # the stable count sort: COO -> CSC on the device, slot for slot equal to the CPU's
    dg = gk.Graph.from_coo(d_src, d_dst, num_nodes=g.num_nodes)
    seconds = time_gpu(lambda: cuda_sort.coo_to_compressed(d_dst, d_src, None, g.num_nodes), args.repeats)
    p, i, e = cuda_sort.coo_to_compressed(d_dst, d_src, None, g.num_nodes)
    host_csc = gk.Graph.from_coo(src, dst, num_nodes=g.num_nodes).csc()
    check("count sort", np.array_equal(p.copy_to_host(), host_csc.indptr)
          and np.array_equal(i.copy_to_host(), host_csc.indices) and np.array_equal(e.copy_to_host(), host_csc.eids))
    moved = 4 * E * src.itemsize  # read keys and values, write indices and edge ids
    frac = moved / seconds / bw
    table.add("count sort coo->csc", f"E={E}", seconds, f"{moved / seconds / 1e9:.1f} GB/s",
              ratio=f"{frac:.0%} of copy bw", target=">= 40% of copy bw", ok=frac >= 0.4)
    dg = dg.formats(["coo", "csc", "csr"])
    dg.csc()
    dg.csr()

    try:
        import cupy
        import cupyx.scipy.sparse as cusparse
    except Exception:  # pragma: no cover - cupy is optional
        cupy = cusparse = None

    rows = sample_rows(g.num_nodes, args.sample, rng)
    for F in args.features:
        x = rng.standard_normal((g.num_nodes, F)).astype(np.float32)
        dx = cuda.to_device(x)
        for reduce in ("sum", "max"):
            fn = lambda: gk.spmm(dg, "copy_lhs", reduce, dx, backend="cuda")  # noqa: E731
            seconds = time_gpu(fn, args.repeats)
            got = fn().copy_to_host()[rows]
            check(f"copy_u_{reduce} F={F}", np.allclose(got, reference_spmm_rows(indptr, indices, x, rows, reduce),
                                                        rtol=1e-4, atol=1e-3))
            peer = ratio = target = ""
            met = None
            if reduce == "sum" and cusparse is not None:
                a = cusparse.csr_matrix((cupy.ones(E, cupy.float32), cupy.asarray(indices), cupy.asarray(indptr)),
                                        shape=(g.num_nodes, g.num_nodes))
                cx = cupy.asarray(x)
                peer_s = time_gpu(lambda: a @ cx, args.repeats)
                peer, ratio = f"cuSPARSE {peer_s * 1e3:.3f} ms", f"{peer_s / seconds:.2f}x"
                if F == 64:
                    target, met = ">= cuSPARSE", peer_s / seconds >= 1.0
            elif reduce == "sum" and F == 64:
                peer, target = "cupy not installed", ">= cuSPARSE"
            gathered = E * F * 4
            table.add(f"copy_u_{reduce}", f"F={F}", seconds, f"{gathered / seconds / 1e9:.1f} GB/s gathered",
                      peer, ratio, target, met)
        w = rng.standard_normal((E, 1)).astype(np.float32)
        dw = cuda.to_device(w)
        seconds = time_gpu(lambda: gk.spmm(dg, "mul", "sum", dx, dw, backend="cuda"), args.repeats)
        table.add("u_mul_e_sum w (E,1)", f"F={F}", seconds, f"{E * (F + 1) * 4 / seconds / 1e9:.1f} GB/s gathered")
        y = rng.standard_normal((g.num_nodes, F)).astype(np.float32)
        dy = cuda.to_device(y)
        fn = lambda: gk.sddmm(dg, "dot", dx, dy, "u", "v", backend="cuda")  # noqa: E731
        seconds = time_gpu(fn, args.repeats)
        got = fn().copy_to_host()
        sample = rng.integers(0, E, min(args.sample, E))
        ref = np.einsum("ij,ij->i", x[src[sample]].astype(np.float64), y[dst[sample]].astype(np.float64))
        check(f"u_dot_v F={F}", np.allclose(got[sample, 0], ref, rtol=1e-3, atol=1e-3))
        floor_bytes = E * (2 * F * 4 + 4 + 2 * src.itemsize)
        frac = floor_bytes / bw / seconds
        table.add("u_dot_v", f"F={F}", seconds, f"{floor_bytes / seconds / 1e9:.1f} GB/s",
                  ratio=f"{frac:.0%} of floor", target=">= 60% of floor" if F == 128 else "",
                  ok=(frac >= 0.6) if F == 128 else None)
        x16 = cuda.to_device(x.astype(np.float16))
        seconds = time_gpu(lambda: gk.spmm(dg, "copy_lhs", "sum", x16, backend="cuda"), args.repeats)
        table.add("copy_u_sum float16", f"F={F}", seconds, f"{E * F * 2 / seconds / 1e9:.1f} GB/s gathered")

    z = cuda.to_device(rng.standard_normal((E, 1)).astype(np.float32))
    fn = lambda: gk.edge_softmax(dg, z, backend="cuda")  # noqa: E731
    seconds = time_gpu(fn, args.repeats)
    out = fn().copy_to_host()[:, 0]
    zh = z.copy_to_host()[:, 0]
    for v in rows[:50]:
        ids = host_csc.eids[indptr[v]:indptr[v + 1]]
        if ids.size:
            ex = np.exp(zh[ids] - zh[ids].max())
            check("edge_softmax", np.allclose(out[ids], ex / ex.sum(), rtol=1e-4, atol=1e-6))
    table.add("edge_softmax H=1", f"E={E}", seconds, f"{E * 12 / seconds / 1e9:.1f} GB/s")

    roots = gk.graph500.search_keys(g, args.roots) if hasattr(gk.graph500, "search_keys") else [0]
    for algorithm in ("direction_optimizing", "top_down", "spmsv"):
        times = []
        for root in roots:
            t0 = time.perf_counter()
            res = gk.bfs(dg, int(root), algorithm=algorithm, backend="cuda")
            cuda.synchronize()
            times.append(time.perf_counter() - t0)
        ref = gk.bfs(g, int(roots[0]))
        res = gk.bfs(dg, int(roots[0]), algorithm=algorithm, backend="cuda")
        check(f"bfs {algorithm}", np.array_equal(res.levels.copy_to_host(), ref.levels))
        gk.graph500.validate(g, int(roots[0]), res.parents.copy_to_host())
        seconds = statistics.median(times)
        table.add(f"bfs {algorithm}", f"{len(roots)} roots", seconds, f"{E / 2 / seconds / 1e9:.2f} GTEPS")

    gpma_check(table, args, rng)
    torch_check(table, g, args, rng)
    return table


def torch_check(table: Table, g, args, rng) -> None:
    """graphkern.torch on CUDA tensors (zero-copy in and out): copy_u_sum forward and backward against the
    same calls on CPU tensors, timed with CUDA events. Skipped (a row says why) without a CUDA torch."""
    try:
        import torch

        import graphkern.torch as gkt
    except Exception as exc:  # pragma: no cover - torch is optional
        table.add("torch copy_u_sum", "-", 0.0, f"not available: {exc}")
        return
    if not torch.cuda.is_available():
        table.add("torch copy_u_sum", "-", 0.0, "skipped: torch has no CUDA here")
        return
    F = args.features[0]
    x_host = torch.from_numpy(rng.standard_normal((g.num_src, F)).astype(np.float32)).requires_grad_(True)
    x_dev = x_host.detach().cuda().requires_grad_(True)
    out_dev = gkt.copy_u_sum(g, x_dev)
    out_host = gkt.copy_u_sum(g, x_host)
    check("torch copy_u_sum", out_dev.is_cuda and torch.allclose(out_dev.cpu(), out_host, rtol=1e-4, atol=1e-3))
    out_dev.sum().backward()
    out_host.sum().backward()
    check("torch copy_u_sum backward", torch.allclose(x_dev.grad.cpu(), x_host.grad, rtol=1e-4, atol=1e-3))
    seconds = time_gpu(lambda: gkt.copy_u_sum(g, x_dev), args.repeats)
    table.add("torch copy_u_sum", f"F={F}", seconds, "CUDA tensors, no copies")


def gpma_check(table: Table, args, rng) -> None:
    """Updates per second of DynamicGraph(backend="cuda") against batch size, checked against the CPU."""
    import graphkern as gk

    try:
        dyn = gk.DynamicGraph(args.gpma_nodes, backend="cuda")
    except Exception as exc:
        table.add("gpma", "-", 0.0, f"not available: {exc}")
        return
    n = args.gpma_nodes
    base = rng.integers(0, n, (2, args.gpma_edges))
    dyn.apply(insert=(base[0], base[1]))
    for batch in args.batches:
        ins = rng.integers(0, n, (2, batch))
        t0 = time.perf_counter()
        dyn.apply(insert=(ins[0], ins[1]))
        _cuda().synchronize()
        seconds = time.perf_counter() - t0
        met = (batch / seconds >= 1e8) if batch == 10 ** 6 else None
        table.add("gpma insert", f"batch {batch}", seconds, f"{batch / seconds / 1e6:.1f} M updates/s",
                  target=">= 100M/s" if batch == 10 ** 6 else "", ok=met)
    snap = dyn.snapshot()
    check("gpma", snap.num_edges == dyn.num_edges)


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes (seconds; works in the CUDA simulator)")
    p.add_argument("--scale", type=int, default=22)
    p.add_argument("--features", type=int, nargs="+", default=[64, 128])
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--roots", type=int, default=8)
    p.add_argument("--sample", type=int, default=2000)
    p.add_argument("--copy-bytes", type=int, default=1 << 30)
    p.add_argument("--gpma-nodes", type=int, default=1 << 22)
    p.add_argument("--gpma-edges", type=int, default=10_000_000)
    p.add_argument("--batches", type=int, nargs="+", default=[10 ** 4, 10 ** 5, 10 ** 6])
    p.add_argument("--json", help="also write the table to this file")
    args = p.parse_args(argv)
    if args.quick:
        args.scale, args.features, args.repeats, args.roots, args.sample = 6, [4], 2, 2, 50
        args.copy_bytes, args.gpma_nodes, args.gpma_edges, args.batches = 1 << 12, 64, 200, [10, 40]
    return args


def main(argv=None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    t0 = time.perf_counter()
    table = run(args)
    print(table.render())
    print(f"total {time.perf_counter() - t0:.1f} s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(table.rows, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
