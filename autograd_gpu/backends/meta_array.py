"""``MetaArray``: the array of a ``meta`` tensor, a shape, a dtype and strides with no storage.

NumPy's functions and ufuncs dispatch to it (``__array_ufunc__``, ``__array_function__``), so
the CPU backend's code runs on it unchanged and yields results of the right shape and dtype
without computing or allocating anything:

- ufuncs (elementwise ops, comparisons, ``matmul``) broadcast the shapes; ``reduce`` and
  ``accumulate`` reduce or keep them; dtypes come from the ufunc itself on 0-d stand-ins;
- views (``reshape``, ``transpose``, ``broadcast_to``, basic indexing, ...) run on a stand-in
  array with the meta array's strides over a one-element buffer: NumPy computes the view's
  shape and strides and reads nothing;
- other NumPy functions (reductions, ``concatenate``, ``where``, ``einsum``, ...) have their
  shape rule in ``meta_rules.py``.

Anything else, and anything that needs the values (``bool(x)``, ``item()``, ``np.asarray``, a
data-dependent shape such as ``nonzero``), raises ``NotImplementedError`` naming the NumPy
function, never computes on garbage.
"""

from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np
from numpy.lib.mixins import NDArrayOperatorsMixin


class MetaUnsupported(NotImplementedError):
    """An operation that meta tensors cannot run (no values, or no shape rule here)."""


def _unsupported(what: str) -> MetaUnsupported:
    return MetaUnsupported(f"{what} is not supported on the meta device (meta tensors have a "
                           "shape and a dtype but no data)")


def contiguous_strides(shape: tuple[int, ...], itemsize: int) -> tuple[int, ...]:
    out, step = [], itemsize
    for s in reversed(shape):
        out.append(step)
        step *= max(s, 1)
    return tuple(reversed(out))


class _Flags:
    def __init__(self, a: MetaArray) -> None:
        self.c_contiguous = a.strides == contiguous_strides(a.shape, a.itemsize) or a.size <= 1
        rev = contiguous_strides(a.shape[::-1], a.itemsize)[::-1]
        self.f_contiguous = a.strides == rev or a.size <= 1
        self.contiguous = self.c_contiguous
        self.writeable = True
        self.owndata = False


class MetaArray(NDArrayOperatorsMixin):
    """Shape, dtype and byte strides, as an ``ndarray`` reports them; no data."""

    __slots__ = ("shape", "dtype", "strides")
    base = None

    def __init__(self, shape: Any, dtype: Any, strides: Any = None) -> None:
        self.shape = tuple(int(s) for s in shape)
        self.dtype = np.dtype(dtype)
        self.strides = tuple(strides) if strides is not None else \
            contiguous_strides(self.shape, self.dtype.itemsize)

    # ---- what an ndarray reports ----------------------------------------------------------
    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return math.prod(self.shape)

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    @property
    def flags(self) -> _Flags:
        return _Flags(self)

    @property
    def T(self) -> MetaArray:  # noqa: N802
        return self.transpose()

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"

    def __getattr__(self, name: str) -> Any:
        # NOTE: an AttributeError (``hasattr`` probes arrays for Tensor methods), worded as
        # the other refusals.
        raise AttributeError(str(_unsupported(f"ndarray.{name}")))

    # ---- no values ---------------------------------------------------------------------------
    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise _unsupported("reading the values (numpy.asarray)")

    def __bool__(self) -> bool:
        raise _unsupported("bool() (a data-dependent branch)")

    def __float__(self) -> float:
        raise _unsupported("float()")

    def __int__(self) -> int:
        raise _unsupported("int()")

    def __index__(self) -> int:
        raise _unsupported("an index from a meta tensor")

    def item(self, *args: Any) -> Any:
        raise _unsupported("item()")

    def tolist(self) -> Any:
        raise _unsupported("tolist()")

    # ---- methods NumPy code calls on arrays ------------------------------------------------
    def reshape(self, *shape: Any, order: str = "C", copy: Any = None) -> MetaArray:
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _reshape(self, shape, copy)

    def transpose(self, *axes: Any) -> MetaArray:
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return _view(np.transpose, (self, axes or None), {})

    def astype(self, dtype: Any, order: str = "K", casting: str = "unsafe", subok: bool = True,
               copy: bool = True) -> MetaArray:
        return MetaArray(self.shape, dtype)

    def copy(self, order: str = "C") -> MetaArray:
        return MetaArray(self.shape, self.dtype)

    def view(self, dtype: Any = None, type: Any = None) -> MetaArray:  # noqa: A002
        if dtype is None or np.dtype(dtype) == self.dtype:
            return MetaArray(self.shape, self.dtype, self.strides)
        return _view(lambda a: a.view(dtype), (self,), {})

    def ravel(self, order: str = "C") -> MetaArray:
        return _reshape(self, (-1,), None)

    def flatten(self, order: str = "C") -> MetaArray:
        return MetaArray((self.size,), self.dtype)

    def __getitem__(self, key: Any) -> MetaArray:
        return _getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        np.broadcast_shapes(_getitem(self, key).shape, np.shape(value) if not
                            isinstance(value, MetaArray) else value.shape)

    def __iter__(self) -> Any:
        return (self[i] for i in range(len(self)))

    def __array_ufunc__(self, ufunc: Any, method: str, *inputs: Any, **kwargs: Any) -> Any:
        return _ufunc(ufunc, method, inputs, kwargs)

    def __array_function__(self, func: Any, types: Any, args: Any, kwargs: Any) -> Any:
        from .meta_rules import RULES

        rule = RULES.get(getattr(func, "__name__", ""))
        if rule is None:
            raise _unsupported(f"numpy.{getattr(func, '__name__', func)}")
        return rule(func, *args, **kwargs)


def _reductions(name: str) -> Callable[..., Any]:
    def method(self: MetaArray, *args: Any, **kwargs: Any) -> Any:
        return getattr(np, name)(self, *args, **kwargs)

    method.__name__ = name
    return method


for _name in ("sum", "prod", "mean", "max", "min", "any", "all", "std", "var", "argmax",
              "argmin", "cumsum", "cumprod", "clip", "squeeze", "swapaxes", "diagonal"):
    setattr(MetaArray, _name, _reductions(_name))


# ---- stand-ins ---------------------------------------------------------------------------------

def _standin(a: MetaArray) -> np.ndarray:
    """An ndarray with ``a``'s shape, dtype and strides over a one-element buffer. Only view
    functions (which read nothing) may run on it."""
    return np.lib.stride_tricks.as_strided(np.zeros(1, a.dtype), a.shape, a.strides)


def _tiny(x: Any) -> Any:
    """A 0-d zero of ``x``'s dtype (an array stays an array: not a weak scalar)."""
    if isinstance(x, (MetaArray, np.ndarray, np.generic)):
        return np.zeros((), x.dtype)
    return x


def _meta(a: Any) -> MetaArray:
    return MetaArray(a.shape, a.dtype, a.strides)


def _view(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``func`` (a view function) on stand-ins; its view(s) as MetaArrays."""
    args = tuple(_standin(a) if isinstance(a, MetaArray) else
                 [(_standin(x) if isinstance(x, MetaArray) else x) for x in a]
                 if isinstance(a, (list, tuple)) and a and isinstance(a[0], MetaArray) else a
                 for a in args)
    out = func(*args, **kwargs)
    if isinstance(out, (list, tuple)):
        return type(out)(_meta(o) for o in out)
    return _meta(out)


def _reshape(a: MetaArray, shape: tuple[Any, ...], copy: Any) -> MetaArray:
    """A view when the strides allow one, else (unless ``copy=False``) a contiguous array."""
    try:
        return _view(lambda s: s.reshape(shape, copy=False), (a,), {})
    except ValueError:
        if copy is False:
            raise
    except TypeError:  # NOTE: NumPy < 2.1 has no copy argument: contiguous arrays only
        if not a.flags.c_contiguous and copy is False:
            raise ValueError("cannot reshape without a copy") from None
    flat = np.lib.stride_tricks.as_strided(np.zeros(1, a.dtype), (a.size,), (0,))
    return MetaArray(flat.reshape(shape).shape, a.dtype)


def _is_basic(k: Any) -> bool:
    return k is None or k is Ellipsis or isinstance(k, (int, np.integer, slice)) and \
        not isinstance(k, bool)


def _getitem(a: MetaArray, key: Any) -> MetaArray:
    keys = key if isinstance(key, tuple) else (key,)
    if all(_is_basic(k) for k in keys):
        return _view(lambda s: s[key], (a,), {})
    if any(getattr(k, "dtype", None) == np.bool_ for k in keys):
        raise _unsupported("indexing with a mask (a data-dependent shape)")
    # NOTE: index arrays: NumPy's rule on zero-stride stand-ins, the indices all 0 and every read
    # the one element of the stand-in for ``a`` (at least 1 long where indexed); the result's
    # size is allocated (a temporary, dropped at once).
    safe = tuple(np.lib.stride_tricks.as_strided(np.zeros(1, np.intp), k.shape, (0,) * k.ndim)
                 if isinstance(k, (MetaArray, np.ndarray)) else
                 np.zeros(np.shape(k), np.intp) if isinstance(k, list) else k for k in keys)
    shape = tuple(max(s, 1) for s in a.shape)
    zero = np.lib.stride_tricks.as_strided(np.zeros(1, a.dtype), shape, (0,) * a.ndim)
    out = zero[safe].shape
    return MetaArray(out, a.dtype)


# ---- ufuncs ------------------------------------------------------------------------------------

def _shape(x: Any) -> tuple[int, ...]:
    return x.shape if isinstance(x, (MetaArray, np.ndarray)) else np.shape(x)


def _matmul_shape(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    if not a or not b:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    a2 = (1,) + a if len(a) == 1 else a
    b2 = b + (1,) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise ValueError(f"matmul: Input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {b2[-2]} is different from {a2[-1]})")
    out = np.broadcast_shapes(a2[:-2], b2[:-2]) + (a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


def _ufunc(ufunc: Any, method: str, inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    out = kwargs.pop("out", None)
    out = out if out is None or isinstance(out, tuple) else (out,)
    if any(isinstance(o, np.ndarray) for o in out or ()) or \
            any(isinstance(x, np.ndarray) and x.ndim for x in inputs):
        raise _unsupported(f"numpy.{ufunc.__name__} mixing meta and CPU arrays")
    tiny_kw = {k: v for k, v in kwargs.items() if k in ("dtype", "casting", "signature")}
    if method == "__call__":
        if ufunc is np.matmul:
            shape = _matmul_shape(_shape(inputs[0]), _shape(inputs[1]))
            dtypes = (np.result_type(*[_tiny(x) for x in inputs]),)
        elif ufunc.signature:
            shape, dtypes = _gufunc(ufunc, inputs, tiny_kw)
        else:
            shape = np.broadcast_shapes(*[_shape(x) for x in inputs])
            with np.errstate(all="ignore"):
                res = ufunc(*[_tiny(x) for x in inputs], **tiny_kw)
            dtypes = tuple(r.dtype for r in (res if isinstance(res, tuple) else (res,)))
    elif method in ("reduce", "accumulate"):
        x, axis, dtype, keepdims = _reduce_args(inputs, kwargs)
        shape = _reduced(x.shape, axis, keepdims) if method == "reduce" else (
            x.shape if axis is not None else (x.size,))
        with np.errstate(all="ignore"):
            res = getattr(ufunc, method)(np.zeros((1,) * max(x.ndim, 1), x.dtype), axis=0,
                                         dtype=dtype)
        dtypes = (res.dtype,)
    elif method == "at":
        return None
    else:
        raise _unsupported(f"numpy.{ufunc.__name__}.{method}")
    if out is not None:
        return out if len(out) > 1 else out[0]
    results = tuple(MetaArray(shape, d) for d in dtypes)
    return results if len(results) > 1 else results[0]


def _gufunc(ufunc: Any, inputs: tuple[Any, ...], kw: dict[str, Any]) -> tuple[Any, ...]:
    """A generalised ufunc's output shape from its signature (``(n),(n)->()``) and dtype
    from the ufunc on inputs whose core dimensions are 1 long (one output)."""
    ins, outs = ufunc.signature.replace(" ", "").split("->")
    core_in = [[d for d in term.split(",") if d] for term in ins[1:-1].split("),(")]
    core_out = [d for d in outs.strip("()").split(",") if d]
    sizes: dict[str, int] = {}
    batch = []
    for x, dims in zip(inputs, core_in):
        shape = _shape(x)
        if len(shape) < len(dims):
            raise ValueError(f"{ufunc.__name__}: Input operand does not have enough dimensions")
        batch.append(shape[:len(shape) - len(dims)])
        for d, s in zip(dims, shape[len(shape) - len(dims):]):
            if sizes.setdefault(d.rstrip("?"), s) != s:
                raise ValueError(f"{ufunc.__name__}: mismatch in its core dimension {d}")
    with np.errstate(all="ignore"):
        res = ufunc(*[np.zeros((1,) * len(dims), x.dtype) if hasattr(x, "dtype") else x
                      for x, dims in zip(inputs, core_in)], **kw)
    shape = np.broadcast_shapes(*batch) + tuple(sizes[d.rstrip("?")] for d in core_out)
    return shape, (res.dtype,)


def _reduce_args(inputs: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    names = ("axis", "dtype", "out", "keepdims")
    given = dict(zip(names, inputs[1:]))
    given.update(kwargs)
    return inputs[0], given.get("axis", 0), given.get("dtype"), bool(given.get("keepdims"))


def _axes(axis: Any, ndim: int) -> tuple[int, ...]:
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    return tuple(int(a) % max(ndim, 1) for a in axes)


def _reduced(shape: tuple[int, ...], axis: Any, keepdims: bool) -> tuple[int, ...]:
    axes = _axes(axis, len(shape))
    if keepdims:
        return tuple(1 if i in axes else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in axes)
