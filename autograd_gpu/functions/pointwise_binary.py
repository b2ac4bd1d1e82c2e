"""Pointwise binary and ternary functions: ``atan2``/``arctan2``, ``hypot``, ``logaddexp``,
``logaddexp2``, ``xlogy``, ``copysign``, ``heaviside``, ``fmod``, ``fmax``, ``fmin``,
``nextafter``, ``ldexp``, ``clamp_min``, ``clamp_max``, ``lerp``, ``addcmul``, ``addcdiv``,
with PyTorch's argument rules (which sides may be Python numbers), type promotion, ``out=`` and
in-place forms."""

from __future__ import annotations

import math
import numbers
from typing import Any

from .. import dtypes
from ..ops import pointwise_binary as B
from ..tensor import Tensor
from .arith import _binary, _is_scalar, _promote, _type_name, as_tensor_like
from .checks import arg_position, checked_scalar, invalid_arguments
from .inplace_ops import inplace
from .out import check_out_grad
from .pointwise_unary import _kernel_error, exact_out, finish


def _tensors(fn: str, method: bool, *args: tuple[str, Any]) -> None:
    """PyTorch's TypeError for the first argument of ``fn`` that is not a tensor."""
    for position, (name, value) in enumerate(args, 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' (position "
                            f"{arg_position(position, method)}) must be Tensor, not "
                            f"{type(value).__name__}")


def _floated(a: Any, b: Any) -> tuple[Any, Any]:
    """``a`` and ``b`` (a tensor and a tensor or number, either way round) in their promoted
    dtype, integer and bool results made the default float dtype."""
    if isinstance(a, Tensor):
        a, b = _promote(a, b)
        t = a
    else:
        b, a = _promote(b, a)
        t = b
    if t.dtype.is_floating_point:
        return a, b
    f = dtypes.get_default_dtype()
    return (a.to(f) if isinstance(a, Tensor) else a), (b.to(f) if isinstance(b, Tensor) else b)


def _two_tensors(fn: str, cls: type, input: Any, other: Any, method: bool,  # noqa: A002
                 out: Tensor | None, floats: bool = False, only_floats: bool = False,
                 name: str = "other", exact: str | None = None, **params: Any) -> Tensor:
    """A function of two tensors: promoted (made float with ``floats``; refused unless float
    with ``only_floats``: PyTorch has no integer kernel), then ``cls``. ``exact``: the
    refusal of an ``out`` of another dtype."""
    _tensors(fn, method, ("input", input), (name, other))
    if out is not None:
        check_out_grad(fn, (input, other), out)
    a, b = _floated(input, other) if floats else _promote(input, other)
    if only_floats and not a.dtype.is_floating_point:
        raise _kernel_error(f"{fn}_cpu", a)
    if out is not None and exact is not None:
        exact_out(out, a.dtype, exact)
    return finish(fn, _binary(cls, a, b, **params), out, (input, other))


def atan2(input: Tensor, other: Tensor, *, out: Tensor | None = None,  # noqa: A002
          _method: bool = False) -> Tensor:
    """The angle of the point ``(other, input)``, in ``[-pi, pi]`` (``arctan2``)."""
    return _two_tensors("atan2", B.Atan2, input, other, _method, out, floats=True)


def arctan2(input: Tensor, other: Tensor, *, out: Tensor | None = None,  # noqa: A002
            _method: bool = False) -> Tensor:
    """Alias of ``atan2``."""
    return _two_tensors("arctan2", B.Atan2, input, other, _method, out, floats=True)


def hypot(input: Tensor, other: Tensor, *, out: Tensor | None = None,  # noqa: A002
          _method: bool = False) -> Tensor:
    """``sqrt(input**2 + other**2)`` without overflow; float tensors only."""
    return _two_tensors("hypot", B.Hypot, input, other, _method, out, only_floats=True)


def logaddexp(input: Tensor, other: Tensor, *, out: Tensor | None = None,  # noqa: A002
              _method: bool = False) -> Tensor:
    """``log(exp(input) + exp(other))`` without overflow; float tensors only."""
    return _two_tensors("logaddexp", B.Logaddexp, input, other, _method, out, only_floats=True)


def logaddexp2(input: Tensor, other: Tensor, *, out: Tensor | None = None,  # noqa: A002
               _method: bool = False) -> Tensor:
    """``log2(2**input + 2**other)``; float tensors only."""
    return _two_tensors("logaddexp2", B.Logaddexp2, input, other, _method, out,
                        only_floats=True)


def nextafter(input: Tensor, other: Tensor, *, out: Tensor | None = None,  # noqa: A002
              _method: bool = False) -> Tensor:
    """The next representable number after ``input`` toward ``other``; float tensors only."""
    return _two_tensors("nextafter", B.Nextafter, input, other, _method, out, only_floats=True)


def fmax(input: Tensor, other: Tensor, *, out: Tensor | None = None,  # noqa: A002
         _method: bool = False) -> Tensor:
    """Elementwise maximum ignoring nan (nan only where both are nan)."""
    return _two_tensors("fmax", B.Fmax, input, other, _method, out)


def fmin(input: Tensor, other: Tensor, *, out: Tensor | None = None,  # noqa: A002
         _method: bool = False) -> Tensor:
    """Elementwise minimum ignoring nan."""
    return _two_tensors("fmin", B.Fmin, input, other, _method, out)


def ldexp(input: Tensor, other: Tensor, *, out: Tensor | None = None,  # noqa: A002
          _method: bool = False) -> Tensor:
    """``input * 2 ** other`` in the promoted float dtype."""
    _tensors("ldexp", _method, ("input", input), ("other", other))
    if input.dtype.is_floating_point and other.dtype is dtypes.bool:
        raise _kernel_error("ldexp_cpu_exp", other) if input._device.type == "cpu" else \
            NotImplementedError("\"ldexp_cuda_exp\" not implemented for 'Bool'")
    if isinstance(out, Tensor) and not out.dtype.is_floating_point:
        raise RuntimeError(f"ldexp can't be cast to the desired output type "
                           f"{_type_name(out.dtype)}")
    return _two_tensors("ldexp", B.Ldexp, input, other, _method, out, floats=True)


def ldexp_(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """In-place ``ldexp``: ``input`` must hold a float result."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"ldexp can't be cast to the desired output type "
                           f"{_type_name(input.dtype)}")
    return inplace(input, ldexp, other)


def heaviside(input: Tensor, values: Tensor, *, out: Tensor | None = None,  # noqa: A002
              _method: bool = False) -> Tensor:
    """The step function: 0 below 0, 1 above, ``values`` at 0 (same dtypes only). PyTorch
    records a node without a derivative."""
    _tensors("heaviside", _method, ("input", input), ("values", values))
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")
    return _two_tensors("heaviside", B.Heaviside, input, values, _method, out, name="values",
                        exact="heaviside is not yet implemented for tensors with different "
                        "dtypes.")


def _tensor_and_number(fn: str, input: Any, other: Any, method: bool) -> None:  # noqa: A002
    """PyTorch's "invalid combination" TypeError unless ``input`` is a tensor and ``other`` a
    tensor or a real number."""
    if not isinstance(input, Tensor) or not (isinstance(other, Tensor) or _is_scalar(other)):
        raise invalid_arguments(fn, (other,) if method else (input, other), {})


def copysign(input: Tensor, other: Any, *, out: Tensor | None = None,  # noqa: A002
             _method: bool = False) -> Tensor:
    """``|input|`` with the sign of ``other`` (a tensor or a number), in the promoted float
    dtype. The gradient of ``other`` is 0."""
    _tensor_and_number("copysign", input, other, _method)
    if out is not None:
        check_out_grad("copysign", (input, other), out)
    a, b = _floated(input, other)
    name = "CopysignBackward0" if isinstance(other, Tensor) else "CopysignBackward1"
    return finish("copysign", _binary(B.Copysign, a, b, name=name), out, (input, other))


def fmod(input: Tensor, other: Any, *, out: Tensor | None = None,  # noqa: A002
         _method: bool = False) -> Tensor:
    """C's ``fmod``: the remainder of ``input / other`` with the sign of ``input``. Integer
    division by zero raises PyTorch's ``RuntimeError: ZeroDivisionError``."""
    _tensor_and_number("fmod", input, other, _method)
    if out is not None:
        check_out_grad("fmod", (input, other), out)
    a, b = _promote(input, other)
    if a.dtype is dtypes.bool or a.dtype.is_complex:
        raise _kernel_error("fmod_cpu", a)
    name = "FmodBackward1" if isinstance(other, Tensor) else "FmodBackward0"
    return finish("fmod", _binary(B.Fmod, a, b, name=name), out, (input, other))


def xlogy(input: Any, other: Any, *, out: Tensor | None = None,  # noqa: A002
          _method: bool = False) -> Tensor:
    """``input * log(other)``, 0 where ``input == 0`` unless ``other`` is nan; either may be a
    number (not both)."""
    return xlog("xlogy", "Xlogy", False, input, other, out, _method)


def xlog(fn: str, node: str, log1p: bool, input: Any, other: Any,  # noqa: A002
         out: Tensor | None, method: bool) -> Tensor:
    """``xlogy`` (``log1p``: ``xlog1py``); ``node``: the node name's stem."""
    if not (isinstance(input, Tensor) or isinstance(other, Tensor)) or \
            not all(isinstance(v, Tensor) or _is_scalar(v) for v in (input, other)):
        raise invalid_arguments(fn, (other,) if method else (input, other), {})
    if out is not None:
        check_out_grad(fn, (input, other), out)
    index = 1 if not isinstance(input, Tensor) else 2 if not isinstance(other, Tensor) else 0
    a, b = _floated(input, other)
    if index == 1:  # NOTE: a number first rides along as a 0-d tensor (no gradient)
        a = as_tensor_like(a, b).to(b.dtype)
    return finish(fn, _binary(B.Xlogy, a, b, name=f"{node}Backward{index}", log1p=log1p),
                  out, (input, other))


# ---- clamp_min / clamp_max -------------------------------------------------------------------

def clamp_min(input: Tensor, min: Any, *, out: Tensor | None = None,  # noqa: A001,A002
              _method: bool = False) -> Tensor:
    """``max(input, min)``, nan propagating; ``min`` a tensor (broadcast, promoted) or a
    number (checked against the result dtype, as ``clamp``)."""
    return _clamp_one("clamp_min", False, input, min, out, _method)


def clamp_max(input: Tensor, max: Any, *, out: Tensor | None = None,  # noqa: A001,A002
              _method: bool = False) -> Tensor:
    """``min(input, max)``, nan propagating."""
    return _clamp_one("clamp_max", True, input, max, out, _method)


def _clamp_one(fn: str, upper: bool, input: Any, bound: Any,  # noqa: A002
               out: Tensor | None, method: bool) -> Tensor:
    from .unary import clamp_dtype

    _tensor_and_number(fn, input, bound, method)
    if out is not None:
        check_out_grad(fn, (input, bound), out)
    stem = "ClampMax" if upper else "ClampMin"
    if isinstance(bound, Tensor):
        a, b = _promote(input, bound)
        return finish(fn, _binary(B.ClampMin, a, b, upper=upper, name=f"{stem}Backward1"), out,
                      (input, bound))
    if input.dtype is dtypes.bool and isinstance(bound, bool):
        raise _kernel_error(f"{fn}_scalar_cpu", input)
    d = clamp_dtype(input.dtype, bound, None)
    x = input.to(d) if d is not input.dtype else input
    value = checked_scalar(bound, d)
    return finish(fn, B.ClampMin.apply(x, value, upper=upper, name=f"{stem}Backward0"), out,
                  (input,))


def _clamp_one_(fn: str, t: Tensor, bound: Any) -> Tensor:
    from .unary import clamp_dtype

    if not isinstance(bound, Tensor) and _is_scalar(bound):
        d = clamp_dtype(t.dtype, bound, None)
        if d is not t.dtype:  # NOTE: PyTorch's clamp_ names the C type here
            raise RuntimeError(f"result type {_type_name(d)} can't be cast to the desired "
                               f"output type {dtypes.c_type_name(t.dtype)}")
    elif not isinstance(bound, Tensor):
        raise invalid_arguments(fn + "_", (bound,), {})
    return inplace(t, clamp_min if fn == "clamp_min" else clamp_max, bound)


def clamp_min_(input: Tensor, min: Any) -> Tensor:  # noqa: A001,A002
    """In-place ``clamp_min``."""
    return _clamp_one_("clamp_min", input, min)


def clamp_max_(input: Tensor, max: Any) -> Tensor:  # noqa: A001,A002
    """In-place ``clamp_max``."""
    return _clamp_one_("clamp_max", input, max)


# ---- ternary ---------------------------------------------------------------------------------

def lerp(input: Tensor, end: Tensor, weight: Any, *, out: Tensor | None = None,  # noqa: A002
         _method: bool = False) -> Tensor:
    """``input + weight * (end - input)`` (computed from whichever end is nearer, as
    PyTorch); ``weight`` a number or a tensor, all broadcast together. ``end`` and a tensor
    ``weight`` must have ``input``'s dtype.

    Example:
        >>> lerp(tensor([0.0, 1.0]), tensor([10.0, 11.0]), 0.25)
        tensor([2.5000, 3.5000])
    """
    if not isinstance(input, Tensor) or not isinstance(end, Tensor) or \
            not (isinstance(weight, Tensor) or _is_scalar(weight)):
        raise invalid_arguments("lerp", (end, weight) if _method else (input, end, weight), {})
    if out is not None:
        check_out_grad("lerp", (input, end, weight), out)
        if isinstance(weight, Tensor):
            exact_out(out, input.dtype)
    if isinstance(weight, Tensor) and weight.ndim == 0 and weight.dtype is not input.dtype:
        weight = weight.to(input.dtype)  # NOTE: PyTorch checks a 0-d weight's dtype not
    for name, t in (("end", end), ("weight", weight)):
        if isinstance(t, Tensor) and t.dtype is not input.dtype:
            raise RuntimeError(f"expected dtype {dtypes.c_type_name(input.dtype)} for `{name}` "
                               f"but got dtype {dtypes.c_type_name(t.dtype)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"lerp_kernel_{'tensor' if isinstance(weight, Tensor) else 'scalar'}\" not "
            f"implemented for '{_type_name(input.dtype)}'")
    inputs = (input, end, weight) if isinstance(weight, Tensor) else (input, end)
    params = {} if isinstance(weight, Tensor) else {"weight": float(weight)}
    try:
        result = B.Lerp.apply(*inputs, **params)
    except ValueError as e:
        raise _ternary_shapes(*inputs) from e
    return finish("lerp", result, out, (input, end, weight))


def _ternary_shapes(*ts: Tensor) -> RuntimeError:
    """PyTorch's broadcast error for the first pair of ``ts`` that does not broadcast."""
    from .arith import _broadcast_error
    from .shape import _broadcast_shapes

    shape: tuple[int, ...] = ()
    for t in ts:
        try:
            shape = _broadcast_shapes(shape, tuple(t.shape))
        except RuntimeError:
            return _broadcast_error(_Shaped(shape), t)
    return RuntimeError("shapes are not broadcastable")


class _Shaped:
    def __init__(self, shape: tuple[int, ...]) -> None:
        self.shape = shape


def addcmul(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1,  # noqa: A002
            out: Tensor | None = None, _method: bool = False) -> Tensor:
    """``input + value * tensor1 * tensor2``, all broadcast and promoted together."""
    return _addc("addcmul", False, input, tensor1, tensor2, value, out, _method)


def addcdiv(input: Tensor, tensor1: Tensor, tensor2: Tensor, *, value: Any = 1,  # noqa: A002
            out: Tensor | None = None, _method: bool = False) -> Tensor:
    """``input + value * tensor1 / tensor2``; two integer (or bool) ``tensor1``/``tensor2``
    are refused, as PyTorch."""
    return _addc("addcdiv", True, input, tensor1, tensor2, value, out, _method)


_ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for integer "
    "inputs and as (input + value * tensor1 / tensor2) for float inputs. The future addcdiv "
    "behavior is just the latter implementation: (input + value * tensor1 / tensor2), for all "
    "dtypes."
)


def _addc(fn: str, div: bool, input: Any, t1: Any, t2: Any, value: Any,  # noqa: A002
          out: Tensor | None, method: bool) -> Tensor:
    _tensors(fn, method, ("input", input), ("tensor1", t1), ("tensor2", t2))
    if isinstance(value, Tensor) and value.ndim == 0:
        value = value.item()
    if not isinstance(value, numbers.Real):
        raise TypeError(f"{fn}(): argument 'value' must be Number, not {type(value).__name__}")
    if out is not None:
        check_out_grad(fn, (input, t1, t2), out)
    if div and not t1.dtype.is_floating_point and not t2.dtype.is_floating_point:
        raise RuntimeError(_ADDCDIV_INT)
    ts = (input, t1, t2)
    d = dtypes.result_type([t.dtype for t in ts if t.ndim], [t.dtype for t in ts if not t.ndim],
                           [])
    if d is dtypes.bool:
        raise _kernel_error(f"{fn}_cpu_out", input)
    if d.category < 2:
        value = checked_scalar(math.trunc(value), d)  # NOTE: PyTorch truncates a float value
    x, a, b = (t.to(d) if t.dtype is not d else t for t in ts)
    try:
        result = B.Addcmul.apply(x, a, b, value=value, div=div)
    except ValueError as e:
        raise _ternary_shapes(x, a, b) from e
    return finish(fn, result, out, ts)

