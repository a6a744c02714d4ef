#!/usr/bin/env python3
"""Check and time every CUDA kernel of graphkern on a real GPU, against the CPU backend, in one run.

Runs from a plain checkout, installed or not (``tools/checkout_import.py``), on a machine with numba,
numba-cuda, numpy and scipy (cupy and torch add the cuSPARSE and torch rows when present):

    python3 tools/gpu_check.py                  # the full check: Graph500 Kronecker scale 22, F = 64, 128
    python3 tools/gpu_check.py --quick          # tiny sizes, every kernel and the hub paths; also runs
                                                # under NUMBA_ENABLE_CUDASIM=1

First it probes the toolchain (driver, device, compiler: one tiny kernel compiled, launched and checked)
and stops with one line if that fails or takes over 30 s. Then every kernel family runs as its own row:
the first call (compilation included), the result checked against the CPU backend or a NumPy reference,
the median of ``--repeats`` timed calls (CUDA events; wall clock in the simulator), the fraction of the
bandwidth floor its bytes imply at the measured device-to-device copy bandwidth, and the target where
one is set. A row that fails says why and the run goes on; each row is printed and flushed as it
finishes and ``--json`` is rewritten after every row. The exit status is 0 when every row ran and agreed,
1 when some row was wrong or raised, 2 when the toolchain probe failed.

``--quick`` lowers the thresholds that send hub rows, long segments and wide windows to their own kernels
(the knobs :data:`QUICK_KNOBS` of graphkern.tuning), so that every kernel of ``graphkern.kernels.cuda``
runs at its tiny sizes (tests/cuda/test_gpu_check.py checks that in the simulator).

Targets (met / not met in the last column): copy_u_sum at F = 64 at least cuSPARSE's csr @ dense on the
same graph; u_dot_v at F = 128 at least 60% of its bandwidth floor; the count sort at least 40% of the
copy bandwidth; the dynamic graph at least 1e8 updates/s at batch 1e6.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
import traceback
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from checkout_import import use_checkout  # noqa: E402

PROBE_TIMEOUT_S = 30
cuda = None  # numba.cuda, imported by the probe (the simulator patches kernels' globals, not closures)


def _add_one(values):
    i = cuda.grid(1)
    if i < values.size:
        values[i] += 1


def _scatter_pairs(values, positions, out_values, out_ids):
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        p = positions[i]
        out_values[p] = values[i]
        out_ids[p] = i


def simulated() -> bool:
    from numba.core import config

    return bool(config.ENABLE_CUDASIM)


# --------------------------------------------------------------------------------------- the probe

def probe_toolchain(timeout: float = PROBE_TIMEOUT_S) -> str:
    """One line describing the toolchain, or SystemExit(2) with one line saying what is missing.

    The probe runs in a thread so that a hung driver or compiler cannot hold the check for more than
    ``timeout`` seconds."""
    result: dict = {}

    def body():
        global cuda
        try:
            import numba
            from numba import cuda as cuda_module

            cuda = cuda_module

            parts = [f"numba {numba.__version__}"]
            try:
                import numba_cuda

                parts.append(f"numba-cuda {numba_cuda.__version__}")
            except ImportError:
                parts.append("numba-cuda not installed (numba's built-in CUDA target)")
            if simulated():
                parts.append("the CUDA simulator (NUMBA_ENABLE_CUDASIM=1)")
            else:
                if not cuda.is_available():
                    raise RuntimeError("no usable CUDA driver or GPU (numba.cuda.is_available() is False)")
                dev = cuda.get_current_device()
                cc = dev.compute_capability
                parts.append(f"{dev.name.decode() if isinstance(dev.name, bytes) else dev.name} sm_{cc[0]}{cc[1]}, "
                             f"{dev.MULTIPROCESSOR_COUNT} SMs")
                try:
                    from numba.cuda.cudadrv.driver import driver

                    v = driver.get_version()
                    parts.append(f"driver CUDA {v[0]}.{v[1]}")
                except Exception:  # noqa: BLE001 - informational only
                    pass
                try:
                    from numba.cuda.cudadrv import nvvm

                    v = nvvm.NVVM().get_version()
                    parts.append(f"NVVM {v[0]}.{v[1]}")
                except Exception as exc:
                    raise RuntimeError(f"NVVM (the CUDA compiler) is not usable: {exc}") from exc

            add_one = cuda.jit(_add_one)
            host = np.arange(1000, dtype=np.float32)
            dev_values = cuda.to_device(host)
            add_one[8, 128](dev_values)
            back = dev_values.copy_to_host()
            if not np.array_equal(back, host + 1):
                raise RuntimeError("a one-line kernel ran but returned wrong values")
            parts.append("a test kernel compiled, ran and agreed")
            result["line"] = "; ".join(parts)
        except BaseException as exc:  # noqa: BLE001 - reported as the one line
            result["error"] = f"{type(exc).__name__}: {exc}".splitlines()[0]

    thread = threading.Thread(target=body, daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        print(f"gpu_check: the CUDA toolchain probe did not finish in {timeout:.0f} s (driver or compiler hung)",
              flush=True)
        os._exit(2)
    if "error" in result:
        print(f"gpu_check: the CUDA toolchain is not usable: {result['error']}", flush=True)
        raise SystemExit(2)
    return result["line"]


# ------------------------------------------------------------------------------------- timing

def time_gpu(fn, repeats: int) -> tuple[float, float]:
    """``(first, median)`` seconds of ``fn()``: the first call (compilation included), then the median of
    ``repeats`` calls measured with CUDA events (the wall clock in the simulator, whose events carry no
    time); the first call's time for both when ``repeats`` is 0. Each call includes graphkern's host work
    (validation, planning, launch), as users pay it."""
    from numba import cuda

    t0 = time.perf_counter()
    fn()
    cuda.synchronize()
    first = time.perf_counter() - t0
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
    return first, statistics.median(times) if times else first


def copy_bandwidth(nbytes: int, repeats: int) -> tuple[float, float]:
    """``(bytes/s, seconds)`` of a device-to-device copy (bytes read plus bytes written)."""
    from numba import cuda

    a = cuda.device_array(max(1, nbytes // 4), np.float32)
    b = cuda.device_array(max(1, nbytes // 4), np.float32)
    _, seconds = time_gpu(lambda: b.copy_to_device(a), repeats)
    return 2 * a.nbytes / seconds, seconds


# ------------------------------------------------------------------------------------- the report

COLUMNS = ["kernel", "size", "agrees", "first_s", "ms", "measure", "of_floor", "peer", "ratio", "target", "status",
           "at_s"]


class Report:
    """Rows printed and flushed as they finish; the JSON file rewritten after each row."""

    def __init__(self, json_path: str | None = None, stream=None):
        self.rows: list[dict] = []
        self.json_path = json_path
        self.stream = stream if stream is not None else sys.stdout
        self.failed = 0
        self.start = time.perf_counter()

    def add(self, kernel, size="", *, agrees=None, first=None, seconds=None, measure="", of_floor=None, peer="",
            ratio="", target="", ok=None, error=""):
        if error:
            status = "error"
        elif agrees is False:
            status = "WRONG"
        elif ok is None:
            status = ""
        else:
            status = "met" if ok else "not met"
        if status in ("error", "WRONG"):
            self.failed += 1
        row = {"kernel": kernel, "size": size,
               "agrees": "" if agrees is None else ("yes" if agrees else "NO"),
               "first_s": "" if first is None else round(first, 3),
               "ms": "" if seconds is None else round(seconds * 1e3, 4),
               "measure": error or measure,
               "of_floor": "" if of_floor is None else f"{of_floor:.0%}",
               "peer": peer, "ratio": ratio, "target": target, "status": status,
               "at_s": round(time.perf_counter() - self.start, 1)}
        self.rows.append(row)
        if len(self.rows) == 1:
            print(" | ".join(COLUMNS), file=self.stream, flush=True)
        print(" | ".join(str(row[c]) for c in COLUMNS), file=self.stream, flush=True)
        if self.json_path:
            tmp = f"{self.json_path}.tmp"
            with open(tmp, "w") as f:
                json.dump(self.rows, f, indent=1)
            os.replace(tmp, self.json_path)
        return row

    def attempt(self, kernel, size, body):
        """Run ``body()`` (which adds its own rows); an exception becomes an error row and the run goes on."""
        try:
            body()
        except Exception as exc:  # noqa: BLE001 - every failure is a row, never the end of the run
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            self.add(kernel, size, error=f"{type(exc).__name__}: {exc}".splitlines()[0][:300])

    def render(self) -> str:
        width = {c: max(len(c), *(len(str(r[c])) for r in self.rows)) if self.rows else len(c) for c in COLUMNS}
        lines = [" | ".join(c.ljust(width[c]) for c in COLUMNS), "-+-".join("-" * width[c] for c in COLUMNS)]
        lines += [" | ".join(str(r[c]).ljust(width[c]) for c in COLUMNS) for r in self.rows]
        return "\n".join(lines)


# ------------------------------------------------------------------------------------- references

def sample_rows(n: int, k: int, rng) -> np.ndarray:
    return np.unique(rng.integers(0, n, min(k, n))) if n else np.zeros(0, np.int64)


def hub_rows(indptr, threshold: int, k: int) -> np.ndarray:
    """Up to ``k`` of the rows with more than ``threshold`` entries (the hub kernels' rows)."""
    degree = np.diff(indptr)
    return np.flatnonzero(degree > threshold)[:k]


def reference_spmm_rows(indptr, indices, x, rows, reduce):
    out = np.zeros((rows.size, x.shape[1]), np.float64)
    for i, v in enumerate(rows):
        nbrs = indices[indptr[v]:indptr[v + 1]]
        if nbrs.size:
            vals = x[nbrs].astype(np.float64)
            out[i] = vals.sum(0) if reduce == "sum" else vals.max(0)
    return out


def close(got, want, rtol=1e-4, atol=1e-3, degree=None) -> bool:
    """float32 agreement; sums of many terms get ``atol`` scaled by sqrt(degree)."""
    if degree is not None:
        atol = atol * np.sqrt(np.maximum(degree, 1))[:, None]
    return bool(np.allclose(got, want, rtol=rtol, atol=atol))


# ------------------------------------------------------------------------------------- the rows

class Check:
    def __init__(self, args, report: Report):
        from numba import cuda

        import graphkern as gk

        self.gk, self.cuda, self.args, self.report = gk, cuda, args, report
        self.rng = np.random.default_rng(0)
        self.bw = None

    def time(self, fn):
        return time_gpu(fn, self.args.repeats)

    def floor(self, nbytes, seconds):
        return None if not self.bw or not seconds else nbytes / self.bw / seconds

    # -- set-up
    def bandwidth(self):
        self.bw, seconds = copy_bandwidth(self.args.copy_bytes, self.args.repeats)
        self.report.add("copy (device to device)", f"{self.args.copy_bytes / 1e6:.0f} MB", seconds=seconds,
                        measure=f"{self.bw / 1e9:.1f} GB/s read+written")

    def build_graph(self):
        gk = self.gk
        t0 = time.perf_counter()
        g = gk.graph.kronecker(self.args.scale)
        if self.args.quick:  # a hub above the lowered thresholds, so the hub kernels run at tiny sizes
            src, dst = g.edges()
            leaves = np.arange(1, g.num_nodes, dtype=src.dtype)
            src = np.concatenate([src, leaves, np.zeros_like(leaves)])
            dst = np.concatenate([dst, np.zeros_like(leaves), leaves])
            g = gk.Graph.from_coo(src, dst, num_nodes=g.num_nodes)
        self.g = g
        self.host_csc = g.csc()
        self.src, self.dst = g.edges()
        self.E = g.num_edges
        self.report.add("graph (host)", f"scale {self.args.scale}", first=time.perf_counter() - t0,
                        measure=f"{g.num_nodes} nodes, {self.E} edges, max in-degree "
                                f"{int(np.diff(self.host_csc.indptr).max(initial=0))}")

    def count_sort(self):
        from graphkern.kernels.cuda import sort as cuda_sort

        cuda = self.cuda
        d_src, d_dst = cuda.to_device(self.src), cuda.to_device(self.dst)
        first, seconds = self.time(lambda: cuda_sort.coo_to_compressed(d_dst, d_src, None, self.g.num_nodes))
        p, i, e = cuda_sort.coo_to_compressed(d_dst, d_src, None, self.g.num_nodes)
        h = self.host_csc
        agrees = (np.array_equal(p.copy_to_host(), h.indptr) and np.array_equal(i.copy_to_host(), h.indices)
                  and np.array_equal(e.copy_to_host(), h.eids))
        moved = 4 * self.E * self.src.itemsize  # keys and values read, indices and edge ids written
        frac = moved / seconds / self.bw
        self.report.add("count sort coo->csc", f"E={self.E}", agrees=agrees, first=first, seconds=seconds,
                        measure=f"{moved / seconds / 1e9:.1f} GB/s", of_floor=frac, ratio=f"{frac:.0%} of copy bw",
                        target=">= 40% of copy bw", ok=frac >= 0.4)
        # What one pass of any sort that moves (value, id) pairs to their final slots costs at least: a
        # scatter through the sorted permutation itself (the same 16 bytes an item as the row above).
        from graphkern.kernels.cuda.launch import grid_1d

        scatter = cuda.jit(_scatter_pairs)
        slots = np.empty(self.E, self.src.dtype)
        slots[h.eids] = np.arange(self.E, dtype=self.src.dtype)  # edge i's slot in the CSC
        d_slots = cuda.to_device(slots)
        out_v, out_e = cuda.device_array_like(d_src), cuda.device_array_like(d_src)
        blocks, threads = grid_1d(self.E, 256)
        first, seconds = self.time(lambda: scatter[blocks, threads](d_src, d_slots, out_v, out_e))
        agrees = np.array_equal(out_v.copy_to_host(), h.indices) and np.array_equal(out_e.copy_to_host(), h.eids)
        frac = moved / seconds / self.bw
        self.report.add("one scatter pass (floor of a sort)", f"E={self.E}", agrees=agrees, first=first,
                        seconds=seconds, measure=f"{moved / seconds / 1e9:.1f} GB/s", of_floor=frac,
                        ratio=f"{frac:.0%} of copy bw")

    def scan_and_checks(self):
        """The multi-tile scan (tile totals scanned first) and the device-input checks of a device CSR: the
        paths a graph built from device arrays takes (at --quick sizes the sort's own scans fit one tile)."""
        from graphkern.kernels.cuda import sort as cuda_sort

        gk, cuda = self.gk, self.cuda
        values = self.rng.integers(0, 100, 3 * cuda_sort.SCAN_TILE + 5)
        d_values = cuda.to_device(values)
        out = cuda.device_array(values.size + 1, np.int64)
        first, seconds = self.time(lambda: cuda_sort.exclusive_scan(d_values, out))
        agrees = np.array_equal(out.copy_to_host(), np.r_[0, np.cumsum(values)])
        # keys of a single value need no radix pass: the permutation is the identity
        indptr, perm = cuda_sort.count_sort(cuda.to_device(np.zeros(values.size, np.int64)), 1)
        agrees = (agrees and np.array_equal(perm.copy_to_host(), np.arange(values.size))
                  and indptr.copy_to_host().tolist() == [0, values.size])
        self.report.add("exclusive scan (several tiles)", f"n={values.size}", agrees=agrees, first=first,
                        seconds=seconds, of_floor=self.floor(16 * values.size, seconds))
        h = self.g.csr()
        d_csr = [cuda.to_device(a) for a in h]
        fn = lambda: gk.Graph.from_csr(*d_csr, num_dst=self.g.num_nodes)
        first, seconds = self.time(fn)
        bad = h.indptr.copy()
        bad[1] = bad[2] + 1  # a descent: the device check must find it
        try:
            gk.Graph.from_csr(cuda.to_device(bad), d_csr[1], d_csr[2], num_dst=self.g.num_nodes)
            refused = False
        except ValueError as exc:
            refused = "non-decreasing" in str(exc)
        agrees = refused and np.array_equal(fn().csr().indices.copy_to_host(), h.indices)
        self.report.add("graph from a device csr (checked on the device)", f"E={self.E}", agrees=agrees, first=first,
                        seconds=seconds, measure="ids in range, indptr monotone, edge ids unique",
                        of_floor=self.floor(3 * self.E * h.indices.itemsize, seconds))

    def device_graph(self):
        gk, cuda = self.gk, self.cuda
        t0 = time.perf_counter()
        dg = gk.Graph.from_coo(cuda.to_device(self.src), cuda.to_device(self.dst), num_nodes=self.g.num_nodes)
        dg.csc()
        dg.csr()
        cuda.synchronize()
        self.dg = dg
        p, i, e = (a.copy_to_host() for a in dg.csr())
        h = self.g.csr()
        agrees = np.array_equal(p, h.indptr) and np.array_equal(i, h.indices) and np.array_equal(e, h.eids)
        self.report.add("graph on the device (csc, csr)", f"E={self.E}", agrees=agrees,
                        first=time.perf_counter() - t0)

    def spmm(self, F):
        gk, cuda, rng = self.gk, self.cuda, self.rng
        indptr, indices, _ = self.host_csc
        degree = np.diff(indptr)
        x = rng.standard_normal((self.g.num_nodes, F)).astype(np.float32)
        dx = cuda.to_device(x)
        rows = np.union1d(sample_rows(self.g.num_nodes, self.args.sample, rng),
                          hub_rows(indptr, self.hub_degree(), 8))
        try:
            import cupy
            import cupyx.scipy.sparse as cusparse
        except Exception:  # noqa: BLE001 - cupy is optional
            cupy = cusparse = None
        for reduce in ("sum", "max"):
            fn = lambda: gk.spmm(self.dg, "copy_lhs", reduce, dx, backend="cuda")
            first, seconds = self.time(fn)
            got = fn().copy_to_host()[rows]
            agrees = close(got, reference_spmm_rows(indptr, indices, x, rows, reduce), degree=degree[rows])
            peer = ratio = target = ""
            met = None
            if reduce == "sum" and cusparse is not None and not simulated():
                a = cusparse.csr_matrix((cupy.ones(self.E, cupy.float32), cupy.asarray(indices),
                                         cupy.asarray(indptr)), shape=(self.g.num_nodes, self.g.num_nodes))
                cx = cupy.asarray(x)
                _, peer_s = self.time(lambda: a @ cx)
                peer, ratio = f"cuSPARSE {peer_s * 1e3:.3f} ms", f"{peer_s / seconds:.2f}x"
                if F == 64:
                    target, met = ">= cuSPARSE", peer_s / seconds >= 1.0
            elif reduce == "sum" and F == 64:
                peer, target = "cupy not available", ">= cuSPARSE"
            floor_bytes = self.E * (F * 4 + indices.itemsize) + self.g.num_nodes * F * 4
            self.report.add(f"copy_u_{reduce}", f"F={F}", agrees=agrees, first=first, seconds=seconds,
                            measure=f"{self.E * F * 4 / seconds / 1e9:.1f} GB/s gathered",
                            of_floor=self.floor(floor_bytes, seconds), peer=peer, ratio=ratio, target=target, ok=met)
        w = rng.standard_normal((self.E, 1)).astype(np.float32)
        dw = cuda.to_device(w)
        fn = lambda: gk.spmm(self.dg, "mul", "sum", dx, dw, backend="cuda")
        first, seconds = self.time(fn)
        got = fn().copy_to_host()
        want = gk.spmm(self.g, "mul", "sum", x, w, backend="cpu")
        self.report.add("u_mul_e_sum w (E,1)", f"F={F}", agrees=close(got[rows], want[rows], degree=degree[rows]),
                        first=first, seconds=seconds,
                        measure=f"{self.E * (F + 1) * 4 / seconds / 1e9:.1f} GB/s gathered",
                        of_floor=self.floor(self.E * (F * 4 + 4 + 2 * indices.itemsize), seconds))
        x16 = cuda.to_device(x.astype(np.float16))
        fn = lambda: gk.spmm(self.dg, "copy_lhs", "sum", x16, backend="cuda")
        first, seconds = self.time(fn)
        got = fn().copy_to_host()[rows].astype(np.float64)
        want = reference_spmm_rows(indptr, indices, x.astype(np.float16).astype(np.float32), rows, "sum")
        self.report.add("copy_u_sum float16", f"F={F}", agrees=close(got, want, rtol=2e-3, atol=2e-2,
                                                                     degree=degree[rows]),
                        first=first, seconds=seconds, measure=f"{self.E * F * 2 / seconds / 1e9:.1f} GB/s gathered")

    def spmm_coo(self, F):
        """The edge-parallel kernel (atomics) on a graph allowed only COO, max with arg outputs."""
        gk, cuda = self.gk, self.cuda
        x = self.rng.standard_normal((self.g.num_nodes, F)).astype(np.float32)
        coo_only = self.dg.formats("coo")
        fn = lambda: gk.spmm(coo_only, "copy_lhs", "max", cuda.to_device(x), return_arg=True, backend="cuda")
        first, seconds = self.time(fn)
        out, arg_u = fn()[:2]
        want, want_arg = gk.spmm(self.g, "copy_lhs", "max", x, return_arg=True, backend="cpu")[:2]
        agrees = close(out.copy_to_host(), want) and np.array_equal(arg_u.copy_to_host(), want_arg)
        self.report.add("copy_u_max coo (atomics, arg)", f"F={F}", agrees=agrees, first=first, seconds=seconds)

    def sddmm(self, F):
        gk, cuda, rng = self.gk, self.cuda, self.rng
        x = rng.standard_normal((self.g.num_nodes, F)).astype(np.float32)
        y = rng.standard_normal((self.g.num_nodes, F)).astype(np.float32)
        dx, dy = cuda.to_device(x), cuda.to_device(y)
        fn = lambda: gk.sddmm(self.dg, "dot", dx, dy, "u", "v", backend="cuda")
        first, seconds = self.time(fn)
        got = fn().copy_to_host()
        sample = rng.integers(0, self.E, min(self.args.sample, self.E))
        ref = np.einsum("ij,ij->i", x[self.src[sample]].astype(np.float64), y[self.dst[sample]].astype(np.float64))
        floor_bytes = self.E * (2 * F * 4 + 4 + 2 * self.src.itemsize)
        frac = self.floor(floor_bytes, seconds)
        self.report.add("u_dot_v", f"F={F}", agrees=close(got[sample, 0], ref, rtol=1e-3, atol=1e-3), first=first,
                        seconds=seconds, measure=f"{floor_bytes / seconds / 1e9:.1f} GB/s", of_floor=frac,
                        target=">= 60% of floor" if F == 128 else "", ok=(frac >= 0.6) if F == 128 else None)
        fn = lambda: gk.sddmm(self.dg, "add", dx, dy, "u", "v", backend="cuda")
        first, seconds = self.time(fn)
        got = fn().copy_to_host()
        ref = x[self.src[sample]] + y[self.dst[sample]]
        floor_bytes = self.E * (3 * F * 4 + 2 * self.src.itemsize)
        self.report.add("u_add_v", f"F={F}", agrees=close(got[sample], ref), first=first, seconds=seconds,
                        of_floor=self.floor(floor_bytes, seconds))

    def edge_softmax(self):
        gk, cuda = self.gk, self.cuda
        indptr, _, eids = self.host_csc
        z_host = self.rng.standard_normal((self.E, 1)).astype(np.float32)
        z = cuda.to_device(z_host)
        fn = lambda: gk.edge_softmax(self.dg, z, backend="cuda")
        first, seconds = self.time(fn)
        out = fn().copy_to_host()[:, 0]
        agrees = True
        rows = np.union1d(sample_rows(self.g.num_nodes, 50, self.rng), hub_rows(indptr, 1000, 4))
        for v in rows:
            ids = eids[indptr[v]:indptr[v + 1]]
            if ids.size:
                ex = np.exp(z_host[ids, 0].astype(np.float64) - z_host[ids, 0].max())
                agrees &= bool(np.allclose(out[ids], ex / ex.sum(), rtol=1e-4, atol=1e-6))
        self.report.add("edge_softmax H=1", f"E={self.E}", agrees=agrees, first=first, seconds=seconds,
                        measure=f"{self.E * 12 / seconds / 1e9:.1f} GB/s",
                        of_floor=self.floor(self.E * (4 + 4 + 2 * eids.itemsize), seconds))

    def bfs(self, algorithm, roots):
        gk, cuda = self.gk, self.cuda
        t0 = time.perf_counter()
        res = gk.bfs(self.dg, int(roots[0]), algorithm=algorithm, backend="cuda")
        cuda.synchronize()
        first = time.perf_counter() - t0
        if not hasattr(self, "bfs_levels"):  # the CPU's levels, once for every algorithm
            self.bfs_levels = gk.bfs(self.g, int(roots[0])).levels
        agrees = np.array_equal(res.levels.copy_to_host(), self.bfs_levels)
        gk.graph500.validate(self.g, int(roots[0]), res.parents.copy_to_host())
        teps = []
        times = []
        for root in roots:
            t0 = time.perf_counter()
            res = gk.bfs(self.dg, int(root), algorithm=algorithm, backend="cuda")
            cuda.synchronize()
            seconds = time.perf_counter() - t0
            times.append(seconds)
            # the graph is symmetric: each undirected input edge is two directed ones here
            traversed = gk.graph500.traversed_edges(self.src, self.dst, res.parents.copy_to_host()) / 2
            teps.append(traversed / seconds)
        hmean = len(teps) / sum(1 / t for t in teps)
        self.report.add(f"bfs {algorithm}", f"{len(roots)} roots", agrees=agrees, first=first,
                        seconds=statistics.median(times),
                        measure=f"{hmean / 1e9:.2f} GTEPS (harmonic mean), levels {len(res.trace)}")

    def bfs_per_phase(self, roots):
        """The search without a cooperative launch: the same phases as separate launches (the path of a
        device or driver that refuses cooperative launches)."""
        gk = self.gk
        with gk.tuned(cuda_bfs_cooperative=0):
            for algorithm in ("direction_optimizing", "spmsv"):
                fn = lambda: gk.bfs(self.dg, int(roots[0]), algorithm=algorithm, backend="cuda")
                first, seconds = self.time(fn)
                res = fn()
                if not hasattr(self, "bfs_levels"):
                    self.bfs_levels = gk.bfs(self.g, int(roots[0])).levels
                gk.graph500.validate(self.g, int(roots[0]), res.parents.copy_to_host())
                self.report.add(f"bfs {algorithm} (per-phase launches)", f"root {int(roots[0])}",
                                agrees=np.array_equal(res.levels.copy_to_host(), self.bfs_levels), first=first,
                                seconds=seconds, measure=f"levels {len(res.trace)}")

    def segment(self):
        """segment_mm, gather_mm and segment_mm's backward (the relational layers' kernels) against the CPU."""
        from graphkern.segment import segment_mm_backward_b

        gk, cuda, rng = self.gk, self.cuda, self.rng
        F = self.args.features[0]
        R = 4
        n = min(self.E, 1 << 20)  # rows, one per edge of a relational layer
        seglen = np.bincount(rng.integers(0, R, n), minlength=R)
        seglen[1] = 0  # an empty segment
        n = int(seglen.sum())
        a = rng.standard_normal((n, F)).astype(np.float32)
        b = rng.standard_normal((R, F, F)).astype(np.float32)
        dz = rng.standard_normal((n, F)).astype(np.float32)
        idx = rng.integers(0, R, n)
        da, db, ddz, didx = (cuda.to_device(v) for v in (a, b, dz, idx))
        rows = [("segment_mm", n, lambda: gk.segment_mm(da, db, seglen, backend="cuda"),
                 lambda: gk.segment_mm(a, b, seglen, backend="cpu")),
                ("gather_mm idx_b", n, lambda: gk.gather_mm(da, db, idx_b=didx, backend="cuda"),
                 lambda: gk.gather_mm(a, b, idx_b=idx, backend="cpu")),
                ("segment_mm_backward_b", n, lambda: segment_mm_backward_b(da, ddz, seglen, backend="cuda"),
                 lambda: segment_mm_backward_b(a, dz, seglen, backend="cpu"))]
        # short segments: the single-pass backward (the long ones above take the chunked one)
        short = np.array([3, 0, 5, 2])
        m = int(short.sum())
        rows.append(("segment_mm_backward_b (short segments)", m,
                     lambda: segment_mm_backward_b(da[:m], ddz[:m], short, backend="cuda"),
                     lambda: segment_mm_backward_b(a[:m], dz[:m], short, backend="cpu")))
        for name, size, on_device, on_host in rows:
            first, seconds = self.time(on_device)
            got = on_device().copy_to_host()
            want = on_host()
            self.report.add(name, f"n={size} F={F} R={R}", agrees=close(got, want, atol=1e-3 * np.sqrt(size)),
                            first=first, seconds=seconds, measure=f"{2 * size * F * F / seconds / 1e9:.1f} GFLOP/s",
                            of_floor=self.floor(4 * (2 * size * F + R * F * F), seconds))

    def dynamic(self):
        gk, cuda, rng, args = self.gk, self.cuda, self.rng, self.args
        n = args.gpma_nodes
        t0 = time.perf_counter()
        dyn = gk.DynamicGraph(n, backend="cuda")
        base = rng.integers(0, n, (2, args.gpma_edges))
        dyn.apply(insert=(base[0], base[1]))
        cuda.synchronize()
        keys = [base[0] * n + base[1]]
        self.report.add("gpma build", f"{args.gpma_edges} edges", first=time.perf_counter() - t0,
                        measure=f"{dyn.num_edges} live edges")
        # the first batch into a filled array compiles what the build did not use: reported on its own
        warm = rng.integers(0, n, (2, 10))
        t0 = time.perf_counter()
        dyn.apply(insert=(warm[0], warm[1]), delete=(base[0][:10], base[1][:10]))
        cuda.synchronize()
        keys = [np.setdiff1d(keys[0], base[0][:10] * n + base[1][:10]), warm[0] * n + warm[1]]
        self.report.add("gpma first small batch", "10+10", first=time.perf_counter() - t0)
        for batch in args.batches:
            ins = rng.integers(0, n, (2, batch))
            t0 = time.perf_counter()
            dyn.apply(insert=(ins[0], ins[1]))
            cuda.synchronize()
            seconds = time.perf_counter() - t0
            keys.append(ins[0] * n + ins[1])
            million = batch == 10 ** 6
            self.report.add("gpma insert (growing)", f"batch {batch}", seconds=seconds,
                            measure=f"{batch / seconds / 1e6:.1f} M updates/s",
                            target=">= 100M/s" if million else "", ok=(batch / seconds >= 1e8) if million else None)
        live = np.unique(np.concatenate(keys))
        batch = args.batches[-1]
        gone = rng.choice(live, min(batch, live.size), replace=False)
        new = rng.integers(0, n, (2, batch))
        t0 = time.perf_counter()
        dyn.apply(insert=(new[0], new[1]), delete=(gone // n, gone % n))
        cuda.synchronize()
        seconds = time.perf_counter() - t0
        live = np.union1d(np.setdiff1d(live, gone), new[0] * n + new[1])
        self.report.add("gpma sliding window", f"batch {batch}+{batch}", seconds=seconds,
                        measure=f"{2 * batch / seconds / 1e6:.1f} M updates/s")
        t0 = time.perf_counter()
        snap = dyn.snapshot()
        cuda.synchronize()
        seconds = time.perf_counter() - t0
        indptr, indices, _ = (a.copy_to_host() if hasattr(a, "copy_to_host") else a for a in snap.csr())
        rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
        agrees = np.array_equal(np.sort(rows * n + indices), live)
        self.report.add("gpma snapshot", f"{snap.num_edges} edges", agrees=agrees, seconds=seconds)
        t0 = time.perf_counter()
        inc = gk.IncrementalBFS(dyn, 0)
        more = rng.integers(0, n, (2, max(1, batch // 10)))
        # deletions too: edges out of the source and a sample of live ones, so that subtrees are cut off,
        # collected and re-attached (every kernel of the update runs)
        out_of_source = live[live // n == 0][:4]
        cut = np.union1d(out_of_source, rng.choice(live, min(live.size, max(1, batch // 10)), replace=False))
        dyn.apply(insert=(more[0], more[1]), delete=(cut // n, cut % n))
        inc.update()
        cuda.synchronize()
        seconds = time.perf_counter() - t0
        levels = inc.levels.copy_to_host() if hasattr(inc.levels, "copy_to_host") else np.asarray(inc.levels)
        ref = gk.bfs(dyn.snapshot(), 0, backend="cuda").levels
        ref = ref.copy_to_host() if hasattr(ref, "copy_to_host") else np.asarray(ref)
        self.report.add("IncrementalBFS (build + one update)", f"{more.shape[1]} inserts, {cut.size} deletes",
                        agrees=np.array_equal(levels, ref), seconds=seconds)

    def torch_rows(self, F):
        """graphkern.torch on CUDA tensors (zero-copy in and out), forward and backward against CPU tensors."""
        try:
            import torch

            import graphkern.torch as gkt
        except Exception as exc:  # noqa: BLE001 - torch is optional
            self.report.add("torch copy_u_sum", measure=f"not available: {exc}")
            return
        if not torch.cuda.is_available():
            self.report.add("torch copy_u_sum", measure="skipped: torch has no CUDA here")
            return
        x_host = torch.from_numpy(self.rng.standard_normal((self.g.num_src, F)).astype(np.float32))
        x_host.requires_grad_(True)
        x_dev = x_host.detach().cuda().requires_grad_(True)
        out_dev = gkt.copy_u_sum(self.g, x_dev)
        out_host = gkt.copy_u_sum(self.g, x_host)
        # float32 sums of up to max-degree terms in two summation orders: atol grows with sqrt(degree)
        forward = out_dev.is_cuda and close(out_dev.detach().cpu().numpy(), out_host.detach().numpy(),
                                            degree=np.diff(self.host_csc.indptr))
        out_dev.sum().backward()
        out_host.sum().backward()
        backward = close(x_dev.grad.cpu().numpy(), x_host.grad.numpy(), degree=np.diff(self.g.csr().indptr))
        first, seconds = self.time(lambda: gkt.copy_u_sum(self.g, x_dev))
        self.report.add("torch copy_u_sum", f"F={F}", agrees=bool(forward and backward), first=first,
                        seconds=seconds, measure="CUDA tensors, no copies" + ("" if forward else "; forward differs")
                        + ("" if backward else "; backward differs"))

    def hub_degree(self) -> int:
        return self.gk.tuning.current().cuda_spmm_hub_degree

    def run(self):
        args, r = self.args, self.report
        only = set(args.only or FAMILIES)
        r.attempt("copy (device to device)", "", self.bandwidth)
        if only & set(FAMILIES[:-1]):
            r.attempt("graph (host)", "", self.build_graph)
        if hasattr(self, "g"):
            if "sort" in only:
                r.attempt("count sort coo->csc", "", self.count_sort)
                r.attempt("exclusive scan (several tiles)", "", self.scan_and_checks)
            r.attempt("graph on the device (csc, csr)", "", self.device_graph)
        if hasattr(self, "dg"):
            for F in args.features:
                if "spmm" in only:
                    r.attempt("spmm", f"F={F}", lambda: self.spmm(F))
                if "sddmm" in only:
                    r.attempt("sddmm", f"F={F}", lambda: self.sddmm(F))
            if "spmm" in only:
                r.attempt("copy_u_max coo (atomics, arg)", "", lambda: self.spmm_coo(min(args.features)))
            if "softmax" in only:
                r.attempt("edge_softmax H=1", "", self.edge_softmax)
            if "bfs" in only:
                roots = self.gk.graph500.search_keys(self.g, args.roots)
                for algorithm in ("direction_optimizing", "top_down", "bottom_up", "spmsv"):
                    r.attempt(f"bfs {algorithm}", "", lambda: self.bfs(algorithm, roots))
                r.attempt("bfs (per-phase launches)", "", lambda: self.bfs_per_phase(roots))
            if "segment" in only:
                r.attempt("segment_mm", "", self.segment)
            if "torch" in only:
                r.attempt("torch copy_u_sum", "", lambda: self.torch_rows(args.features[0]))
        if "gpma" in only:
            r.attempt("gpma", "", self.dynamic)


FAMILIES = ("sort", "spmm", "sddmm", "softmax", "bfs", "segment", "torch", "gpma")  # gpma needs no static graph


# At --quick sizes no row is a hub: these knobs (graphkern.tuning) are lowered so that every hub path and
# the dynamic graph's wide windows run too
QUICK_KNOBS = {
    "cuda_spmm_hub_degree": 16, "cuda_spmm_chunk_edges": 12,
    "cuda_softmax_small_degree": 2, "cuda_softmax_hub_degree": 6, "cuda_softmax_chunk_edges": 16,
    "cuda_bfs_push_group_degree": 3, "cuda_bfs_push_block_degree": 6, "cuda_bfs_push_grid_degree": 12,
    "cuda_bfs_pull_group_degree": 3, "cuda_bfs_pull_grid_degree": 12,
    "cuda_segment_backward_chunk_rows": 64,
    "gpma_small_window": 16, "gpma_wide_window": 64,
}


def quick_knobs() -> dict:
    """The :data:`QUICK_KNOBS` this checkout's graphkern.tuning has (for ``gk.tuned`` around the run)."""
    import dataclasses

    import graphkern

    known = {f.name for f in dataclasses.fields(graphkern.Tuning)}
    return {name: value for name, value in QUICK_KNOBS.items() if name in known}


def parse(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="tiny sizes (seconds on a GPU; runs in the CUDA simulator)")
    p.add_argument("--scale", type=int, default=22)
    p.add_argument("--features", type=int, nargs="+", default=[64, 128])
    p.add_argument("--repeats", type=int, default=20)
    p.add_argument("--roots", type=int, default=8)
    p.add_argument("--sample", type=int, default=2000)
    p.add_argument("--copy-bytes", type=int, default=1 << 30)
    p.add_argument("--gpma-nodes", type=int, default=1 << 22)
    p.add_argument("--gpma-edges", type=int, default=10_000_000)
    p.add_argument("--batches", type=int, nargs="+", default=[10 ** 4, 10 ** 5, 10 ** 6])
    p.add_argument("--only", nargs="+", choices=FAMILIES, help="run only these families (default: all)")
    p.add_argument("--json", help="also write the rows to this file (rewritten after every row)")
    args = p.parse_args(argv)
    if args.quick:
        # one timed call per row and one search key per BFS row: at these sizes a timing says nothing, and
        # the simulator (tests/cuda/test_gpu_check.py) pays for every extra launch; each row still runs its
        # kernels once more after the first call and checks the result
        args.scale, args.features, args.repeats, args.roots, args.sample = 6, [4], 1, 1, 50
        args.copy_bytes, args.gpma_nodes, args.gpma_edges, args.batches = 1 << 12, 64, 200, [10, 40]
        if simulated():
            # every CUDA thread is a Python thread here and a time measures nothing: a graph of scale 5
            # (the added hub still over every lowered threshold) and no timed calls after the first
            args.scale, args.repeats = 5, 0
    return args


def main(argv=None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    t0 = time.perf_counter()
    use_checkout()
    print(f"toolchain: {probe_toolchain()}", flush=True)
    knobs = {}
    if args.quick:
        knobs = quick_knobs()
        print(f"thresholds lowered: {', '.join(f'{name}={value}' for name, value in knobs.items())}", flush=True)
    report = Report(args.json)
    import graphkern

    with graphkern.tuned(**knobs):
        Check(args, report).run()
    print()
    print(report.render())
    verdict = "every row ran and agreed" if not report.failed else f"{report.failed} rows wrong or failed"
    print(f"total {time.perf_counter() - t0:.1f} s; {verdict}", flush=True)
    return 1 if report.failed else 0


if __name__ == "__main__":
    sys.exit(main())
