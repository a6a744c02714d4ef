"""DGL's generated operator names, as data: one table that graphkern.ops (arrays) and graphkern.torch.ops
(differentiable tensors) both bind to their own ``spmm`` and ``sddmm``.

``u_{add,sub,mul,div}_e_{sum,max,min,mean}(g, x, y)``, ``copy_u_{reducer}(g, x)`` and ``copy_e_{reducer}(g, y)``
are g-SpMMs; ``{l}_{add,sub,mul,div,dot}_{r}(g, x, y)`` for every ordered pair of distinct targets in u, v, e, and
``copy_u(g, x)`` / ``copy_v(g, x)`` are g-SDDMMs; ``copy_e(g, x)`` returns ``x`` (edge features are already one
row per edge, and DGL runs no kernel either).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ._validate import named_as

SPMM_BINARY_OPS = ("add", "sub", "mul", "div")
REDUCERS = ("sum", "max", "min", "mean")
SDDMM_BINARY_OPS = ("add", "sub", "mul", "div", "dot")
TARGET_WORDS = {"u": "source nodes", "v": "destination nodes", "e": "edges"}


@dataclass(frozen=True)
class OpName:
    """One generated name: the family it calls, the operator, and what the positional arguments feed.

    ``operands`` is ``"xy"`` for two feature arguments, ``"x"`` when the one argument is the left operand and
    ``"y"`` when it is the right one (``copy_e_sum(g, y)``, ``copy_v(g, x)`` passed as the right operand), and
    ``""`` for ``copy_e``, which returns its argument.
    """

    name: str
    family: str           # "spmm", "sddmm" or "identity"
    op: str
    reduce: str | None    # SpMM only
    lhs_target: str       # SDDMM only ("u" for SpMM, where it carries no meaning)
    rhs_target: str
    operands: str
    doc: str


def _table() -> tuple[OpName, ...]:
    names = []
    for op in SPMM_BINARY_OPS:
        for reduce in REDUCERS:
            names.append(OpName(f"u_{op}_e_{reduce}", "spmm", op, reduce, "u", "e", "xy",
                                f"``out[v] = {reduce} over in-edges (u, e, v) of x[u] {op} y[e]``: "
                                f"``spmm(g, '{op}', '{reduce}', x, y)``."))
    for reduce in REDUCERS:
        names.append(OpName(f"copy_u_{reduce}", "spmm", "copy_lhs", reduce, "u", "e", "x",
                            f"``out[v] = {reduce} over in-edges (u, e, v) of x[u]``: "
                            f"``spmm(g, 'copy_lhs', '{reduce}', x)``."))
        names.append(OpName(f"copy_e_{reduce}", "spmm", "copy_rhs", reduce, "u", "e", "y",
                            f"``out[v] = {reduce} over in-edges (u, e, v) of x[e]``: "
                            f"``spmm(g, 'copy_rhs', '{reduce}', None, x)``."))
    for lt in "uve":
        for rt in "uve":
            if lt == rt:
                continue
            for op in SDDMM_BINARY_OPS:
                names.append(OpName(f"{lt}_{op}_{rt}", "sddmm", op, None, lt, rt, "xy",
                                    f"``out[e] = {op}(x at the {TARGET_WORDS[lt]}, y at the {TARGET_WORDS[rt]})`` "
                                    f"for every edge e: ``sddmm(g, '{op}', x, y, '{lt}', '{rt}')``."))
    names.append(OpName("copy_u", "sddmm", "copy_lhs", None, "u", "v", "x",
                        "``out[e] = x[src(e)]`` for every edge: ``sddmm(g, 'copy_lhs', x, None, 'u')``."))
    names.append(OpName("copy_v", "sddmm", "copy_rhs", None, "u", "v", "y",
                        "``out[e] = x[dst(e)]`` for every edge: ``sddmm(g, 'copy_rhs', None, x, 'u', 'v')``."))
    names.append(OpName("copy_e", "identity", "copy_rhs", None, "u", "e", "",
                        "``x`` itself: edge features are already one row per edge (DGL runs no kernel either)."))
    return tuple(names)


OP_NAMES: tuple[OpName, ...] = _table()


def bind(spec: OpName, spmm: Callable, sddmm: Callable, *, keywords: bool) -> Callable:
    """The function ``spec`` names, calling ``spmm`` or ``sddmm`` with DGL's positional arguments
    (``(g, x, y)``, or ``(g, x)`` for the copies); with ``keywords`` it passes the caller's keyword arguments
    (``backend=``, ``format=``) on, without them it takes none."""
    # errors name x and y, the arguments the caller passed, not spmm's or sddmm's names for them
    names = {"ufeat": "x", "efeat": "y"} if spec.family == "spmm" else {"lhs": "x", "rhs": "y"}
    if spec.operands == "y":  # the one argument is called x, and feeds the right operand
        names = {"efeat": "x"} if spec.family == "spmm" else {"rhs": "x"}

    def run(g, x, y, kwargs):
        if kwargs and not keywords:
            raise TypeError(f"{spec.name}() takes no keyword arguments, found {sorted(kwargs)}")
        with named_as(**names):
            if spec.family == "spmm":
                return spmm(g, spec.op, spec.reduce, x, y, **kwargs)
            return sddmm(g, spec.op, x, y, spec.lhs_target, spec.rhs_target, **kwargs)

    if spec.operands == "xy":
        def func(g, x, y, **kwargs):
            return run(g, x, y, kwargs)
    elif spec.operands == "x":
        def func(g, x, **kwargs):
            return run(g, x, None, kwargs)
    elif spec.operands == "y":
        def func(g, x, **kwargs):
            return run(g, None, x, kwargs)
    else:
        def func(g, x, **kwargs):
            del g, kwargs
            return x
    func.__name__ = func.__qualname__ = spec.name
    func.__doc__ = spec.doc
    return func


def bind_all(namespace: dict, spmm: Callable, sddmm: Callable, *, keywords: bool,
             doc: Callable[[OpName], str] | None = None) -> list[str]:
    """Bind every name of :data:`OP_NAMES` (:func:`bind`) into ``namespace`` (a module's ``globals()``)
    and return the names, for the module's ``__all__``; ``doc`` rewrites a function's docstring from its
    entry."""
    for spec in OP_NAMES:
        func = bind(spec, spmm, sddmm, keywords=keywords)
        if doc is not None:
            func.__doc__ = doc(spec)
        namespace[spec.name] = func
    return [spec.name for spec in OP_NAMES]
