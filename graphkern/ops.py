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

from .sparse import sddmm, spmm

_SPMM_BINARY = ("add", "sub", "mul", "div")
_REDUCERS = ("sum", "max", "min", "mean")
_TARGET_WORDS = {"u": "source nodes", "v": "destination nodes", "e": "edges"}
__all__: list[str] = []


def _make_spmm(op, reduce):
    def func(g, x, y, **kwargs):
        return spmm(g, op, reduce, x, y, **kwargs)

    func.__doc__ = (f"``out[v] = {reduce} over in-edges (u, e, v) of x[u] {op} y[e]``: "
                    f"``spmm(g, '{op}', '{reduce}', x, y)``.")
    return func


def _make_copy(kind, reduce):
    if kind == "u":
        def func(g, x, **kwargs):
            return spmm(g, "copy_lhs", reduce, x, None, **kwargs)
        what, call = "x[u]", f"spmm(g, 'copy_lhs', '{reduce}', x)"
    else:
        def func(g, x, **kwargs):
            return spmm(g, "copy_rhs", reduce, None, x, **kwargs)
        what, call = "x[e]", f"spmm(g, 'copy_rhs', '{reduce}', None, x)"
    func.__doc__ = f"``out[v] = {reduce} over in-edges (u, e, v) of {what}``: ``{call}``."
    return func


def _make_sddmm(lhs_target, op, rhs_target):
    def func(g, x, y, **kwargs):
        return sddmm(g, op, x, y, lhs_target, rhs_target, **kwargs)

    func.__doc__ = (f"``out[e] = {op}(x at the {_TARGET_WORDS[lhs_target]}, y at the {_TARGET_WORDS[rhs_target]})`` "
                    f"for every edge e: ``sddmm(g, '{op}', x, y, '{lhs_target}', '{rhs_target}')``.")
    return func


for _op in _SPMM_BINARY:
    for _r in _REDUCERS:
        _name = f"u_{_op}_e_{_r}"
        globals()[_name] = _make_spmm(_op, _r)
        globals()[_name].__name__ = _name
        __all__.append(_name)
for _kind in ("u", "e"):
    for _r in _REDUCERS:
        _name = f"copy_{_kind}_{_r}"
        globals()[_name] = _make_copy(_kind, _r)
        globals()[_name].__name__ = _name
        __all__.append(_name)
for _l in ("u", "v", "e"):
    for _rt in ("u", "v", "e"):
        if _l == _rt:
            continue
        for _op in ("add", "sub", "mul", "div", "dot"):
            _name = f"{_l}_{_op}_{_rt}"
            globals()[_name] = _make_sddmm(_l, _op, _rt)
            globals()[_name].__name__ = _name
            __all__.append(_name)


def copy_u(g, x, **kwargs):
    """``out[e] = x[src(e)]`` for every edge: ``sddmm(g, 'copy_lhs', x, None, 'u')``."""
    return sddmm(g, "copy_lhs", x, None, "u", "v", **kwargs)


def copy_v(g, x, **kwargs):
    """``out[e] = x[dst(e)]`` for every edge: ``sddmm(g, 'copy_rhs', None, x, 'u', 'v')``."""
    return sddmm(g, "copy_rhs", None, x, "u", "v", **kwargs)


def copy_e(g, x, **kwargs):
    """``x`` itself: edge features are already one row per edge (DGL runs no kernel either)."""
    del g, kwargs
    return x


__all__ += ["copy_u", "copy_v", "copy_e"]
del _op, _r, _kind, _l, _rt, _name
