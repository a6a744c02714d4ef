"""The dispatcher: which backend, which sparse format and which compiled kernel run a call.

Format selection follows DGL's ``SelectFormat`` (docs/design.md, section 'Format selection'): use the
preferred format if it is allowed and created; build it if it is allowed but not created (and cache it on the
graph); otherwise fall back to a created format the kernel supports. Where DGL has a TODO, a kernel family may
register a cost model that picks among the formats it supports for the given graph and parameters.

Every choice is visible: :func:`explain` returns the :class:`Plan` a call would use without running it,
and each planned call logs its plan at DEBUG level on the ``graphkern`` logger.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from ._config import resolve_backend
from ._validate import check_choice

logger = logging.getLogger("graphkern")

FORMAT_ORDER = ("coo", "csc", "csr")  # DGL's Decode order when several formats qualify


@dataclass(frozen=True)
class Plan:
    """What a call will do: the backend, the format (and whether it must be built) and the kernel."""

    family: str
    backend: str
    format: str
    kernel: str
    build: str | None = None
    reasons: tuple[str, ...] = field(default_factory=tuple)

    def __str__(self) -> str:
        if self.format == "packed":
            build = "; runs on the live packed arrays"
        else:
            build = f"; builds {self.format} {self.build}" if self.build else f"; uses the created {self.format}"
        why = "".join(f"\n  - {r}" for r in self.reasons)
        return f"{self.family}: backend={self.backend}, format={self.format}, kernel={self.kernel}{build}{why}"


def how_to_build(g, fmt: str) -> str | None:
    """How ``g`` would build ``fmt`` now (None when it is created already)."""
    if g.has_format(fmt):
        return None
    if fmt == "coo":
        source = "csr" if g.has_format("csr") else "csc"
        return f"from the {source} by expanding indptr"
    other = "csc" if fmt == "csr" else "csr"
    if g.has_format(other):
        return f"from the {other} by a stable parallel count sort (transpose with edge ids)"
    return "from the coo by a stable parallel count sort"


def csc_rows_sorted(g) -> bool:
    """Whether the CSC lists each row's sources in ascending order (checked once per graph, cached): the
    BFS pull step and the blocked SpMM both ask."""
    flag = g._cache.get("csc_rows_sorted")
    if flag is None:
        from .kernels.cpu.sort import rows_are_sorted

        indptr, indices, _ = g._raw("csc")
        flag = g._cache["csc_rows_sorted"] = bool(rows_are_sorted(indptr, indices))
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


# family name -> planner(g, backend, **params) -> Plan
_PLANNERS: dict[str, Callable[..., Plan]] = {}


def register_planner(family: str):
    """Decorator: ``planner(g, backend, **params) -> Plan`` for one kernel family."""

    def wrap(func):
        _PLANNERS[family] = func
        return func

    return wrap


def plan(g, family: str, backend: str | None = None, arrays=(), **params) -> Plan:
    """Plan one call of ``family`` on ``g`` and log the plan at DEBUG level."""
    check_choice("family", family, sorted(_PLANNERS))
    concrete = resolve_backend(backend, *arrays)
    result = _PLANNERS[family](g, concrete, **params)
    logger.debug("%s", result)
    return result


def explain(g, family: str, *, backend: str | None = None, **params) -> Plan:
    """The plan a call of ``family`` would use on ``g``, without running it.

    Families: ``"convert"`` (``to="csr" | "csc" | "coo"``) and the kernel families as they register
    (``"spmm"``, ``"sddmm"``, ``"bfs"``, ...). ``str(plan)`` reads as a sentence.

    Examples
    --------
    >>> import graphkern as gk
    >>> g = gk.Graph.from_coo([0, 1], [1, 2])
    >>> print(gk.explain(g, "convert", to="csc"))  # doctest: +NORMALIZE_WHITESPACE
    convert: backend=cpu, format=csc, kernel=coo_to_compressed; builds csc from the coo by a stable parallel
    count sort
      - csc is the preferred format and is allowed
    """
    check_choice("family", family, sorted(_PLANNERS))
    return _PLANNERS[family](g, resolve_backend(backend), **params)


@register_planner("convert")
def _plan_convert(g, backend: str, to: str = "csc") -> Plan:
    check_choice("to", to, ("coo", "csr", "csc"))
    fmt, reasons = select_format(g, to, (to,))
    build = how_to_build(g, fmt)
    if build is None:
        kernel = "none"
    elif "expanding" in build:
        kernel = "expand_indptr"
    elif "transpose" in build:
        kernel = "transpose_compressed"
    else:
        kernel = "coo_to_compressed"
    return Plan("convert", backend, fmt, kernel, build, tuple(reasons))
