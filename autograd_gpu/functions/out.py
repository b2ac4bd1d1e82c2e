"""``out=``: a function's result written into tensors the caller gives, as PyTorch does, and
``Tensor.resize_``.

Every function with PyTorch's ``out=`` argument computes its result as usual, then calls
``write_out``:

- grad mode on and an input (or ``out``) requiring grad: PyTorch's refusal (``out=`` results
  are not differentiable);
- ``out`` must be a tensor (a tuple of them for several results) on the result's device, of a
  dtype the result can be cast to (``result type Float can't be cast to the desired output type
  Long``), or exactly the result's dtype where PyTorch says so (``exact``: index outputs);
- an ``out`` of another shape is resized (with PyTorch's deprecation warning when it had
  elements); one of the right shape keeps its strides; the values are written into its storage
  and its version counter moves, as for an in-place op.
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable, Sequence

from ..autograd.grad_mode import STATE
from ..autograd.node import user_stacklevel
from ..dtypes import c_type_name, scalar_type_name
from ..tensor import Tensor
from .view_writes import _can_cast, _cast_error, _check_overlap, _copy_into

__all__: list[str] = []

_RESIZED = (
    "An output with one or more elements was resized since it had shape {old}, which does not "
    "match the required output shape {new}. This behavior is deprecated, and in a future PyTorch "
    "release outputs will not be resized unless they have zero elements. You can explicitly reuse "
    "an out tensor t by resizing it, inplace, to zero elements with t.resize_(0)."
)


def check_out_grad(fn: str, inputs: Sequence[Any], out: Any) -> None:
    """PyTorch's refusal of ``out=`` when the result would need a gradient: grad mode is on and
    one of ``inputs`` (tensors or anything else) or of the ``out`` tensors requires grad."""
    if not STATE.grad_enabled:
        return
    outs = out if isinstance(out, (tuple, list)) else (out,)
    for t in (*inputs, *outs):
        if isinstance(t, Tensor) and t._requires_grad:
            raise RuntimeError(f"{fn}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires "
                               "grad.")


def write_out(fn: str, result: Any, out: Any, inputs: Sequence[Any] = (),
              exact: Sequence[bool] = (), cast_any: bool = False) -> Any:
    """Write ``result`` (a tensor, or a tuple of them) into ``out`` (a tensor, or a tuple or list
    of as many) and return ``out`` (as a tuple of the result's type for several results).
    ``inputs``: the function's tensor arguments (for the autograd check). ``exact[i]``: result
    ``i`` must have ``out[i]``'s dtype exactly (PyTorch's index outputs). ``cast_any``: any
    dtype takes the values (``sum``/``prod`` cast floats to an integer out)."""
    check_out_grad(fn, inputs, out)
    if isinstance(result, tuple):
        if not isinstance(out, (tuple, list)) or len(out) != len(result):
            raise TypeError(f"{fn}(): argument 'out' must be tuple of Tensors, not "
                            f"{type(out).__name__}")
        for i, (r, o) in enumerate(zip(result, out)):
            _write_one(fn, r, o, i < len(exact) and exact[i], cast_any)
        return type(result)(tuple(out)) if type(result) is not tuple else tuple(out)
    _write_one(fn, result, out, bool(exact and exact[0]), cast_any)
    return out


def _write_one(fn: str, r: Tensor, o: Any, exact: bool, cast_any: bool = False) -> None:
    if not isinstance(o, Tensor):
        raise TypeError(f"{fn}(): argument 'out' must be Tensor, not {type(o).__name__}")
    if o._device is not r._device:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                           f"two devices, {r._device} and {o._device}!")
    if exact and o.dtype is not r.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {c_type_name(r.dtype)}, but got "
                           f"{c_type_name(o.dtype)} instead")
    if not cast_any and not _can_cast(r.dtype, o.dtype):
        raise _cast_error(r.dtype, o.dtype)
    if tuple(o.shape) != tuple(r.shape):
        if o.numel():
            warnings.warn(_RESIZED.format(old=list(o.shape), new=list(r.shape)), UserWarning,
                          stacklevel=user_stacklevel())
        resize_(o, tuple(r.shape))
    else:
        _check_overlap(o)
    _copy_into(o, r._data)


def resize_(t: Tensor, *size: Any) -> Tensor:
    """``t`` resized in place to ``size`` (C-contiguous), as ``Tensor.resize_``: its storage is
    kept where it is contiguous and holds enough elements (the first ones keep their values),
    else ``t`` gets new storage with the old values first. Elements past the old ones hold
    arbitrary values."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        shape = tuple(size[0])
        for i, s in enumerate(shape):
            if not isinstance(s, int) or isinstance(s, bool):
                raise TypeError("resize_(): argument 'size' failed to unpack the object at pos "
                                f"{i + 1} with error \"type must be tuple of ints,but got "
                                f"{type(s).__name__}\"")
    else:
        shape = tuple(size)
        for s in shape:
            if not isinstance(s, int) or isinstance(s, bool):
                raise TypeError("resize_(): argument 'size' (position 1) must be tuple of ints, "
                                f"not {type(s).__name__}")
    if any(s < 0 for s in shape):
        raise RuntimeError("numel: integer multiplication overflow")  # NOTE: PyTorch's words
    if t._requires_grad and STATE.grad_enabled:
        raise RuntimeError("cannot resize variables that require grad")
    if tuple(t.shape) == shape and (t.ndim < 2 or t._data.flags.c_contiguous):
        return t
    b, old = t.backend, t._data
    n = 1
    for s in shape:
        n *= s
    if old.flags.c_contiguous and old.size >= n:
        t._data = b.reshape(b.reshape(old, (-1,))[:n], shape)
    else:
        new = b.empty((n,), old.dtype)
        keep = min(n, old.size)
        if keep:
            new[:keep] = b.reshape(old, (-1,))[:keep]
        t._data = Tensor._make(b.reshape(new, shape), t._device)._data  # NOTE: counted
    t._counter().bump()
    return t


# ---- out= around a function (out_variants.py and the op families) -------------------------

Check = Callable[[Any, Any, tuple[Any, ...]], None]


def _tensors(args: tuple[Any, ...], kwargs: dict[str, Any]) -> list[Any]:
    out: list[Any] = []
    for a in (*args, *kwargs.values()):
        if isinstance(a, (list, tuple)):
            out.extend(a)
        else:
            out.append(a)
    return out


def with_out(fn: Callable[..., Any], name: str, exact: bool = False,
             check: Check | None = None, cast_any: bool = False) -> Callable[..., Any]:
    """``fn`` taking PyTorch's ``out=`` keyword (see the module docstring)."""

    @functools.wraps(fn)
    def run(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        if out is None:
            return fn(*args, **kwargs)
        if cast_any and isinstance(out, Tensor) and kwargs.get("dtype") is None:
            kwargs["dtype"] = out.dtype  # NOTE: sum/prod accumulate in the out tensor's dtype
        result = fn(*args, **kwargs)
        # NOTE: refused only where a gradient could flow: PyTorch lets comparisons, argmax and
        # other integer or boolean results take out= from inputs that require grad.
        if any(r.dtype.category >= 2 for r in (result if isinstance(result, tuple)
                                               else (result,))):
            check_out_grad(name, _tensors(args, kwargs), out)
        if check is not None:
            check(result, out, args)
        n = len(result) if isinstance(result, tuple) else 1
        return write_out(name, result, out, exact=(exact,) * n, cast_any=cast_any)

    return run


def _outs(out: Any) -> tuple[Any, ...]:
    return tuple(out) if isinstance(out, (tuple, list)) else (out,)


def found_dtype(result: Any, out: Any, args: tuple[Any, ...]) -> None:
    """A ``with_out`` check: ``out`` must have the result's dtype, refused as PyTorch's unary
    ops refuse it (``Found dtype Double but expected Float``)."""
    r = result[0] if isinstance(result, tuple) else result
    o = _outs(out)[0]
    if isinstance(o, Tensor) and o.dtype is not r.dtype:
        raise RuntimeError(f"Found dtype {scalar_type_name(o.dtype)} but expected "
                           f"{scalar_type_name(r.dtype)}")
