"""Shape rules of the NumPy functions the CPU backend calls, for ``MetaArray`` (see
``meta_array.py``): each takes the NumPy function and its arguments and returns MetaArrays of
the result's shape and dtype, computing nothing. ``RULES`` maps a function's name to its rule;
a function without one is refused by ``MetaArray.__array_function__``."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .meta_array import MetaArray, _reduced, _reshape, _shape, _tiny, _unsupported, _view
from .meta_array import _matmul_shape


def _reduction(func: Any, a: Any, axis: Any = None, dtype: Any = None, out: Any = None,
               keepdims: Any = False, **kwargs: Any) -> Any:
    keep = bool(keepdims) if keepdims is not np._NoValue else False  # type: ignore[attr-defined]
    tiny_kw = {k: v for k, v in kwargs.items() if k in ("ddof", "correction")}
    if dtype is not None:
        tiny_kw["dtype"] = dtype
    with np.errstate(all="ignore"):
        res = func(np.zeros((1,) * max(a.ndim, 1), a.dtype), **tiny_kw)
    return out if out is not None else MetaArray(_reduced(a.shape, axis, keep), res.dtype)


def _arg_reduction(func: Any, a: Any, axis: Any = None, out: Any = None,
                   keepdims: Any = False) -> Any:
    shape = _reduced(a.shape, axis, bool(keepdims)) if axis is not None else \
        ((1,) * a.ndim if keepdims else ())
    return out if out is not None else MetaArray(shape, np.intp)


def _same_shape(func: Any, a: Any, *args: Any, **kwargs: Any) -> Any:
    """Functions whose result has the input's shape (``axis=None`` flattens, as NumPy)."""
    flattens = func.__name__ in ("cumsum", "cumprod", "sort", "argsort")
    default = None if func.__name__ in ("cumsum", "cumprod") else -1
    axis = kwargs.get("axis", args[0] if args and flattens else default)
    tiny_kw = {k: v for k, v in kwargs.items() if k == "dtype"}
    with np.errstate(all="ignore"):
        res = func(np.zeros((1,) * max(a.ndim, 1), a.dtype), **tiny_kw)
    return MetaArray((a.size,) if axis is None and flattens else a.shape, res.dtype)


def _where(func: Any, cond: Any, x: Any = None, y: Any = None) -> Any:
    if x is None:
        raise _unsupported("numpy.where(cond) (a data-dependent shape)")
    return MetaArray(np.broadcast_shapes(_shape(cond), _shape(x), _shape(y)),
                     np.result_type(_tiny(x), _tiny(y)))


def _clip(func: Any, a: Any, a_min: Any = None, a_max: Any = None, out: Any = None,
          **kwargs: Any) -> Any:
    shape = np.broadcast_shapes(*[_shape(v) for v in (a, a_min, a_max) if v is not None])
    res = np.clip(_tiny(a), *[None if v is None else _tiny(v) for v in (a_min, a_max)])
    return out if out is not None else MetaArray(shape, res.dtype)


def _join(func: Any, arrays: Any, axis: Any = 0, out: Any = None, **kwargs: Any) -> Any:
    """``concatenate`` / ``stack``: the joined shape (the ops have checked the parts agree)."""
    shapes = [_shape(a) for a in arrays]
    dt = kwargs.get("dtype") or np.result_type(*[_tiny(a) for a in arrays])
    first = shapes[0]
    if func.__name__ == "stack":
        ax = int(axis) % (len(first) + 1)
        full = first[:ax] + (len(shapes),) + first[ax:]
    else:
        ax = int(axis) % len(first)
        full = first[:ax] + (sum(s[ax] for s in shapes),) + first[ax + 1:]
    return out if out is not None else MetaArray(full, dt)


def _copyto(func: Any, dst: Any, src: Any, **kwargs: Any) -> None:
    np.broadcast_shapes(_shape(src), dst.shape)


def _like(func: Any, a: Any, *args: Any, dtype: Any = None, shape: Any = None,
          **kwargs: Any) -> MetaArray:
    if func.__name__ == "full_like" and args:
        dtype = dtype if dtype is not None else (args[1] if len(args) > 1 else None)
    return MetaArray(a.shape if shape is None else shape, a.dtype if dtype is None else dtype)


def _dot(func: Any, a: Any, b: Any, out: Any = None) -> Any:
    sa, sb = _shape(a), _shape(b)
    if not sa or not sb:
        shape = sa or sb
    elif len(sb) == 1:
        shape = _matmul_shape(sa, sb)
    else:
        shape = sa[:-1] + sb[:-2] + sb[-1:]
    return MetaArray(shape, np.result_type(_tiny(a), _tiny(b)))


def _einsum(func: Any, subscripts: Any, *operands: Any, **kwargs: Any) -> Any:
    if not isinstance(subscripts, str) or "..." in subscripts:
        raise _unsupported("numpy.einsum with this equation")
    spec = subscripts.replace(" ", "")
    ins, _, res = spec.partition("->")
    terms = ins.split(",")
    sizes: dict[str, int] = {}
    for term, op in zip(terms, operands):
        for c, s in zip(term, op.shape):
            sizes[c] = max(sizes.get(c, 1), s)
    if "->" not in spec:
        res = "".join(sorted(c for c in sizes if ins.count(c) == 1))
    dt = kwargs.get("dtype") or np.result_type(*[_tiny(o) for o in operands])
    return MetaArray(tuple(sizes[c] for c in res), dt)


def _result_type(func: Any, *args: Any) -> Any:
    return np.result_type(*[a.dtype if isinstance(a, MetaArray) else a for a in args])


def _shares(func: Any, a: Any, b: Any, **kwargs: Any) -> bool:
    return False


def _take_along(func: Any, a: Any, indices: Any, axis: Any = None) -> MetaArray:
    return MetaArray(_shape(indices), a.dtype)


def _views(func: Any, *args: Any, **kwargs: Any) -> Any:
    return _view(func, args, kwargs)


def _np_reshape(func: Any, a: Any, *args: Any, **kwargs: Any) -> Any:
    shape = args[0] if args else kwargs.get("shape", kwargs.get("newshape"))
    return _reshape(a, tuple(shape) if isinstance(shape, (tuple, list)) else (shape,),
                    kwargs.get("copy"))


def _contiguous(func: Any, a: Any, dtype: Any = None, **kwargs: Any) -> MetaArray:
    return MetaArray(a.shape, a.dtype if dtype is None else dtype)


def _shape_of(func: Any, a: Any) -> Any:
    return a.shape if func.__name__ == "shape" else a.ndim


RULES: dict[str, Callable[..., Any]] = {
    **{n: _reduction for n in ("sum", "prod", "mean", "max", "min", "amax", "amin", "any",
                               "all", "std", "var", "nansum", "nanmean", "nanmax", "nanmin")},
    **{n: _arg_reduction for n in ("argmax", "argmin")},
    **{n: _same_shape for n in ("cumsum", "cumprod", "sort", "argsort", "tril", "triu", "flip",
                                "roll", "nan_to_num", "round", "around", "negative", "positive")},
    "partition": lambda f, a, *args, **kw: MetaArray(a.shape, a.dtype),
    "argpartition": lambda f, a, *args, **kw: MetaArray(a.shape, np.intp),
    **{n: _views for n in ("transpose", "swapaxes", "moveaxis", "expand_dims", "squeeze",
                           "broadcast_to", "broadcast_arrays", "diagonal", "split",
                           "array_split", "atleast_1d", "atleast_2d", "atleast_3d")},
    **{n: _like for n in ("empty_like", "zeros_like", "ones_like", "full_like")},
    **{n: _contiguous for n in ("ascontiguousarray", "copy")},
    **{n: _shape_of for n in ("shape", "ndim")},
    "reshape": _np_reshape, "ravel": lambda f, a, order="C": _reshape(a, (-1,), None),
    "where": _where, "clip": _clip, "concatenate": _join, "stack": _join, "copyto": _copyto,
    "dot": _dot, "einsum": _einsum, "result_type": _result_type, "shares_memory": _shares,
    "may_share_memory": _shares, "take_along_axis": _take_along,
}
