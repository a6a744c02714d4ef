"""The dispatcher: which backend, which sparse format and which compiled kernel run a call.

Format selection follows DGL's ``SelectFormat`` (docs/design.md, section 'Format selection'): use the
preferred format if it is allowed and created; build it if it is allowed but not created (and cache it on the
graph); otherwise fall back to a created format the kernel supports. Where DGL has a TODO, a kernel family may
register a cost model that picks among the formats it supports for the given graph and parameters.

A plan is data (docs/design.md, section 'Plans'): a :class:`Plan` names the compiled entry point as a
:class:`Kernel` member, the formats the call builds as :class:`BuildStep` values and the kernel's
specialisation in ``params``; the callers run what it names. Every choice is visible: :func:`explain` takes
a call's own arguments and returns the plan the call would run, without running or building anything, and
each call logs the plan it runs at DEBUG level on the ``graphkern`` logger, the record carrying it as
``record.plan``.
"""

from __future__ import annotations

import enum
import importlib
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ._config import resolve_backend
from ._validate import check_choice

logger = logging.getLogger("graphkern")

FORMAT_ORDER = ("coo", "csc", "csr")  # DGL's Decode order when several formats qualify


class Kernel(enum.Enum):
    """The compiled entry points a plan can name: one member per path the host drivers run.

    A member's value is its name in a plan's text; :attr:`functions` are the functions (or kernel
    factories) in ``graphkern.kernels`` that the path calls, imported on first use, so that planning never
    imports ``numba.cuda``. What a factory is specialised on (op, reducer, broadcast pattern, ...) is in
    the plan's ``params``, not in the member.
    """

    # cpu, g-SpMM
    SPMM_CSC = ("spmm_csc", "kernels.cpu.spmm:spmm_csc_kernel")  # general broadcast: offset tables
    SPMM_CSC_VECTOR = ("spmm_csc_vector", "kernels.cpu.spmm:spmm_csc_vector_kernel")
    SPMM_COO = ("spmm_coo", "kernels.cpu.spmm:spmm_coo_kernel")
    SPMM_BLOCKED = ("spmm_blocked", "kernels.cpu.spmm_blocked:spmm_blocked_kernel")
    SPMM_BLOCKED_HUBS = ("spmm_blocked_hubs", "kernels.cpu.spmm_blocked:spmm_blocked_kernel")
    SPMM_PACKED = ("spmm_packed", "kernels.cpu.spmm:spmm_packed_kernel")
    # cpu, g-SDDMM
    SDDMM_CSR = ("sddmm_csr", "kernels.cpu.sddmm:sddmm_kernel")
    SDDMM_COO = ("sddmm_coo", "kernels.cpu.sddmm:sddmm_kernel")
    SDDMM_BLOCKED = ("sddmm_blocked", "kernels.cpu.sddmm:sddmm_blocked_kernel")
    SDDMM_PACKED = ("sddmm_packed", "kernels.cpu.sddmm:sddmm_packed_kernel")
    # cpu, edge softmax
    EDGE_SOFTMAX_ROWS = ("edge_softmax_rows", "kernels.cpu.edge_softmax:edge_softmax_rows")
    EDGE_SOFTMAX_EDGE_ORDER = ("edge_softmax_edge_order", "kernels.cpu.edge_softmax:edge_softmax_edge_order")
    # cpu, BFS: the level steps each algorithm runs
    BFS_TOP_DOWN = ("bfs_top_down", "kernels.cpu.bfs:top_down_step", "kernels.cpu.bfs:top_down_step_private",
                    "kernels.cpu.bfs_serial:top_down_serial_levels")
    BFS_BOTTOM_UP = ("bfs_bottom_up", "kernels.cpu.bfs:bottom_up_step")
    BFS_DIRECTION_OPTIMIZING = ("bfs_direction_optimizing", "kernels.cpu.bfs:top_down_step",
                                "kernels.cpu.bfs:top_down_step_private",
                                "kernels.cpu.bfs_serial:top_down_serial_levels", "kernels.cpu.bfs:bottom_up_step")
    BFS_SPMSV = ("bfs_spmsv", "kernels.cpu.bfs:spmsv_push_step", "kernels.cpu.bfs:spmsv_pull_step",
                 "kernels.cpu.bfs:spmsv_pull_step_sorted")
    BFS_MULTI_SOURCE = ("bfs_multi_source", "kernels.cpu.bfs_multi:msbfs_push_level",
                        "kernels.cpu.bfs_multi:msbfs_pull_level")
    BFS_PACKED_TOP_DOWN = ("bfs_packed_top_down", "kernels.cpu.bfs:packed_top_down_step")
    # cpu, format conversions
    COO_TO_COMPRESSED = ("coo_to_compressed", "kernels.cpu.sort:coo_to_compressed")
    TRANSPOSE_COMPRESSED = ("transpose_compressed", "kernels.cpu.sort:transpose_compressed")
    EXPAND_INDPTR = ("expand_indptr", "kernels.cpu.sort:expand_indptr")
    # cuda
    CUDA_SPMM_CSC = ("cuda_spmm_csc", "kernels.cuda.spmm:spmm_csc_kernel")
    CUDA_SPMM_COO = ("cuda_spmm_coo", "kernels.cuda.spmm:spmm_coo_kernel")
    CUDA_SDDMM_EDGES = ("cuda_sddmm_edges", "kernels.cuda.sddmm:sddmm_kernel")
    CUDA_EDGE_SOFTMAX_ROWS = ("cuda_edge_softmax_rows", "kernels.cuda.edge_softmax:rows_kernel",
                              "kernels.cuda.edge_softmax:hub_kernels")
    CUDA_BFS = ("cuda_bfs", "kernels.cuda.bfs:search_levels", "kernels.cuda.bfs:step_kernel")
    CUDA_COO_TO_COMPRESSED = ("cuda_coo_to_compressed", "kernels.cuda.sort:coo_to_compressed")
    CUDA_TRANSPOSE_COMPRESSED = ("cuda_transpose_compressed", "kernels.cuda.sort:transpose_compressed")
    CUDA_EXPAND_INDPTR = ("cuda_expand_indptr", "kernels.cuda.sort:expand_indptr")

    def __new__(cls, label: str, *paths: str):
        member = object.__new__(cls)
        member._value_ = label
        member.paths = paths
        return member

    @property
    def functions(self) -> tuple:
        """The functions of ``graphkern.kernels`` this path runs (imported now)."""
        found = []
        for path in self.paths:
            module, name = path.split(":")
            found.append(getattr(importlib.import_module(f".{module}", __package__), name))
        return tuple(found)

    @property
    def function(self):
        """The path's main entry point (the first of :attr:`functions`)."""
        return self.functions[0]

    @property
    def backend(self) -> str:
        return "cuda" if self.name.startswith("CUDA_") else "cpu"


# format conversions by backend: (from the coo, from the other compressed format, compressed to coo)
_CONVERSIONS = {
    "cpu": (Kernel.COO_TO_COMPRESSED, Kernel.TRANSPOSE_COMPRESSED, Kernel.EXPAND_INDPTR),
    "cuda": (Kernel.CUDA_COO_TO_COMPRESSED, Kernel.CUDA_TRANSPOSE_COMPRESSED, Kernel.CUDA_EXPAND_INDPTR),
}


@dataclass(frozen=True)
class BuildStep:
    """One format a call builds (and caches on the graph): ``format`` from ``source`` by ``kernel``."""

    format: str
    source: str
    kernel: Kernel

    def __str__(self) -> str:
        if self.kernel in (Kernel.EXPAND_INDPTR, Kernel.CUDA_EXPAND_INDPTR):
            return f"{self.format} from the {self.source} by expanding indptr"
        if self.kernel in (Kernel.TRANSPOSE_COMPRESSED, Kernel.CUDA_TRANSPOSE_COMPRESSED):
            return f"{self.format} from the {self.source} by a stable parallel count sort (transpose with edge ids)"
        return f"{self.format} from the {self.source} by a stable parallel count sort"


@dataclass(frozen=True)
class Plan:
    """What a call runs: the backend, the format, the compiled :class:`Kernel`, the formats it builds first,
    the kernel's specialisation (``params``: op, reducer, broadcast pattern, ...) and the reasons.

    ``kernel`` is None when the call runs no kernel of its own: a ``"convert"`` of a format that is created
    already, or a kernel called on a DynamicGraph without a current snapshot (``format == "snapshot"``):
    the call builds the snapshot first and plans on it (:attr:`decided_at_run_time`).
    ``str(plan)`` reads as a sentence.
    """

    family: str
    backend: str
    kernel: Kernel | None
    format: str
    builds: tuple[BuildStep, ...] = ()
    params: Mapping[str, object] = field(default_factory=dict, hash=False)
    reasons: tuple[str, ...] = ()

    def __post_init__(self):
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))

    @property
    def decided_at_run_time(self) -> bool:
        """Whether the kernel is chosen by the call, on a snapshot the call builds (see the class)."""
        return self.format == "snapshot"

    def __str__(self) -> str:
        if self.format == "packed":
            build = "; runs on the live packed arrays"
        elif self.decided_at_run_time:
            build = "; builds the snapshot, then plans on it"
        elif self.builds:
            build = "; builds " + "; builds ".join(str(b) for b in self.builds)
        else:
            build = f"; uses the created {self.format}"
        kernel = "none" if self.kernel is None else self.kernel.value
        params = ", ".join(f"{k}={v}" for k, v in self.params.items())
        why = "".join(f"\n  - {r}" for r in self.reasons)
        return (f"{self.family}: backend={self.backend}, format={self.format}, kernel={kernel}"
                f"{f'({params})' if params else ''}{build}{why}")


def _holder(g, backend: str):
    """The graph whose formats a call on ``backend`` uses: a host graph run on the GPU uses its device
    twin (graphkern._cuda.device_graph), a copy of the host graph's formats made on first use."""
    if backend == "cuda" and getattr(g, "device", "cpu") != "cuda":
        return g._cache.get("cuda_twin", g)
    return g


def how_to_build(g, fmt: str, backend: str = "cpu", built_before: tuple[str, ...] = ()) -> BuildStep | None:
    """How a call on ``backend`` would build ``fmt`` of ``g`` now (None when it is created already), after
    building ``built_before``; the same choice as :func:`graphkern.graph._formats.build_format`."""
    holder = _holder(g, backend)

    def has(name):
        return name in built_before or holder.has_format(name)

    if has(fmt):
        return None
    from_coo, transpose, expand = _CONVERSIONS[backend]
    if fmt == "coo":
        return BuildStep("coo", "csr" if has("csr") else "csc", expand)
    other = "csc" if fmt == "csr" else "csr"
    if has(other):
        return BuildStep(fmt, other, transpose)
    return BuildStep(fmt, "coo", from_coo)


def builds(g, *formats: str, backend: str = "cpu") -> tuple[BuildStep, ...]:
    """The build steps of ``formats``, built in this order (each may be built from one built before it)."""
    steps = []
    for fmt in formats:
        step = how_to_build(g, fmt, backend, tuple(s.format for s in steps))
        if step is not None:
            steps.append(step)
    return tuple(steps)


def log_plan(the_plan: Plan) -> Plan:
    """Log the plan a call runs at DEBUG level (the record carries it as ``record.plan``); returns it."""
    logger.debug("%s", the_plan, extra={"plan": the_plan})
    return the_plan


def csc_rows_sorted(g, remember: bool = True) -> bool:
    """Whether the CSC lists each row's sources in ascending order (the blocked SpMM's results equal the CSC
    kernel's bit for bit only then). Decided without building the CSC: a CSC built from the CSR (a stable
    transpose) always is; one built from the COO (a stable count sort) is when each destination's sources
    come in ascending order in the COO. Kept on the graph when ``remember`` (a plan only reads: ``remember=False``)."""
    flag = g._cache.get("csc_rows_sorted")
    if flag is None:
        from .kernels.cpu.sort import rows_are_sorted, stable_rows_sorted

        if g.has_format("csc"):
            indptr, indices, _ = g._raw("csc")
            flag = bool(rows_are_sorted(indptr, indices))
        elif g.has_format("csr"):
            flag = True
        else:
            src, dst, _ = g._raw("coo")
            flag = bool(stable_rows_sorted(dst, src, g.num_dst))
        if remember:
            g._cache["csc_rows_sorted"] = flag
    return flag


def kept_in_degrees(g):
    """``g.in_degrees()``, computed once per graph and kept (a Graph's edges never change): the blocked
    SpMM reads the degrees on every call, and computing them is a parallel pass, and a thread launch, of
    its own. The kept array is only read; callers that hand degrees out call ``g.in_degrees()``."""
    found = g._cache.get("kept_in_degrees")
    if found is None:
        found = g._cache["kept_in_degrees"] = g.in_degrees()
    return found


def select_format(g, preferred: str, supported: tuple[str, ...], cost_model: Callable | None = None,
                  **params) -> tuple[str, list[str]]:
    """The format a kernel family runs on, with the reasons for the choice.

    ``supported`` lists the formats the family has kernels for; ``cost_model(g, candidates, **params)``,
    when given, returns one of ``candidates`` (the allowed, supported formats) or None to defer to the
    DGL rule.
    """
    candidates = [f for f in FORMAT_ORDER if f in supported and g.allows_format(f)]
    created = [f for f in FORMAT_ORDER if f in supported and g.has_format(f)]
    reasons: list[str] = []
    if cost_model is not None and candidates:
        choice = cost_model(g, candidates, **params)
        if choice is not None:
            reasons.append(f"cost model picked {choice} among {candidates}")
            return choice, reasons
    if g.allows_format(preferred):
        reasons.append(f"{preferred} is the preferred format and is allowed")
        return preferred, reasons
    if created:
        reasons.append(f"{preferred} is not allowed; {created[0]} is created and supported")
        return created[0], reasons
    if candidates:
        reasons.append(f"{preferred} is not allowed; building the allowed {candidates[0]}")
        return candidates[0], reasons
    raise ValueError(
        f"argument 'g': this graph allows formats {g.formats()} but the kernel needs one of {list(supported)}; "
        f"call g.formats([...]) to allow one"
    )


# family name -> explainer: the family's call signature (without running it) -> Plan
_EXPLAINERS: dict[str, Callable[..., Plan]] = {}


def register_explainer(family: str):
    """Decorator: ``explainer(g, *the call's arguments) -> Plan`` for one kernel family. It validates the
    arguments as the call does and plans by the same function, building and caching nothing."""

    def wrap(func):
        _EXPLAINERS[family] = func
        return func

    return wrap


def explain(g, family: str, /, *args, **kwargs) -> Plan:
    """The plan a call of ``family`` on ``g`` with these arguments would run, without running it.

    Pass the call's own arguments: ``explain(g, "spmm", op="mul", reduce="sum", ufeat=x, efeat=w)``
    plans ``spmm(g, "mul", "sum", x, w)``; likewise ``"sddmm"`` (op, lhs, rhs, lhs_target, rhs_target,
    format), ``"edge_softmax"`` (logits, norm_by), ``"bfs"`` (source or sources, algorithm, batch) and
    ``"convert"`` (``to="csr" | "csc" | "coo"``: how ``g`` would build a format); ``backend=`` as in the
    call. The arguments are validated as the call validates them, and the plan is the one the call logs
    (``record.plan`` of its DEBUG record on the ``graphkern`` logger). Nothing is built or cached: where
    the graph lacks a format the plan reads what it would be built from, and on a DynamicGraph without a
    current snapshot the kernel is chosen by the call, on the snapshot it builds
    (:attr:`Plan.decided_at_run_time`).

    Examples
    --------
    >>> import numpy as np, graphkern as gk
    >>> g = gk.Graph.from_coo([0, 1], [1, 2])
    >>> print(gk.explain(g, "convert", to="csc"))  # doctest: +NORMALIZE_WHITESPACE
    convert: backend=cpu, format=csc, kernel=coo_to_compressed; builds csc from the coo by a stable parallel
    count sort
      - csc is the preferred format and is allowed
    >>> plan = gk.explain(g, "spmm", op="copy_lhs", reduce="sum", ufeat=np.ones((3, 4)))
    >>> plan.kernel, plan.format, plan.params["reduce"]
    (<Kernel.SPMM_CSC_VECTOR: 'spmm_csc_vector'>, 'csc', 'sum')
    >>> g.has_format("csc")   # explain built nothing
    False
    """
    check_choice("family", family, sorted(_EXPLAINERS))
    return _EXPLAINERS[family](g, *args, **kwargs)


@register_explainer("convert")
def _explain_convert(g, to: str = "csc", *, backend: str | None = None) -> Plan:
    check_choice("to", to, ("coo", "csr", "csc"))
    concrete = resolve_backend(backend)
    fmt, reasons = select_format(g, to, (to,))
    steps = builds(g, fmt, backend="cuda" if getattr(g, "device", "cpu") == "cuda" else "cpu")
    return Plan("convert", concrete, steps[0].kernel if steps else None, fmt, steps, {}, tuple(reasons))
