"""Scans along a dimension: cumsum, cumprod, cummax, cummin, logcumsumexp.

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import dtypes, return_types
from ..dtypes import c_type_name, scalar_type_name
from ..ops import scan as S
from ..ops.util import normalize_dim
from ..tensor import Tensor

__all__: list[str] = ["cummax", "cummin", "cumprod", "cumsum", "logcumsumexp"]

_REQUIRED: Any = object()  # ``dim`` has no default, as in PyTorch (its own missing-argument text)


def _dim(fn: str, input: Tensor, dim: Any) -> int:  # noqa: A002
    """``dim`` normalised, with PyTorch's errors for a missing or non-integer one."""
    if dim is _REQUIRED:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "dim"')
    if not isinstance(dim, int) or isinstance(dim, bool):
        raise TypeError(f"{fn}(): argument 'dim' must be int, not {type(dim).__name__}")
    return normalize_dim(dim, input.ndim)


def _not_implemented(kernel: str, d: dtypes.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(d)}\'')


def _scan_dtype(fn: str, input: Tensor, dtype: Any, out: Any) -> dtypes.dtype:  # noqa: A002
    """The dtype ``cumsum``/``cumprod`` compute in: ``dtype``, else ``out``'s, else the input's
    (int64 for integers and bool, as PyTorch); bool is refused."""
    if dtype is not None:
        if out is not None and isinstance(out, Tensor) and out.dtype is not dtype:
            raise RuntimeError(f"Expected out tensor to have dtype {c_type_name(dtype)}, but got "
                               f"{c_type_name(out.dtype)} instead")
        d = dtype
    elif out is not None and isinstance(out, Tensor):
        d = out.dtype
    else:
        d = input.dtype if input.dtype.category >= 2 else dtypes.int64
    if d is dtypes.bool:
        raise _not_implemented(f"{fn}_out_cpu", d)
    return d


def cumsum(input: Tensor, dim: Any = _REQUIRED, *, dtype: Any = None,  # noqa: A002
           out: Tensor | None = None) -> Tensor:
    """Cumulative sum along ``dim``: ``out[i] = input[0] + ... + input[i]``.

    Integer and bool inputs sum in int64 unless ``dtype`` says otherwise; float32 and float16
    accumulate in a wider type on the CPU, as PyTorch's CPU kernel does. The gradient is the
    reversed cumulative sum of the incoming gradient.

    Args:
        input: tensor of any shape (0-d counts as 1-d).
        dim: the dimension to scan.
        dtype: the dtype to compute in (the input is cast first).
        out: optional tensor to write the result into.

    Returns:
        Tensor of ``input``'s shape, C-contiguous.

    Example:
        >>> cumsum(tensor([1, 2, 3]), 0)
        tensor([1, 3, 6])
    """
    d = _dim("cumsum", input, dim)
    return _cum(S.Cumsum, "cumsum", input, d, _scan_dtype("cumsum", input, dtype, out), out)


def cumprod(input: Tensor, dim: Any = _REQUIRED, *, dtype: Any = None,  # noqa: A002
            out: Tensor | None = None) -> Tensor:
    """Cumulative product along ``dim``: ``out[i] = input[0] * ... * input[i]``.

    The gradient is exact where the input holds zeros (PyTorch's formula: no division by 0),
    and differentiable again.

    Args:
        input: tensor of any shape.
        dim: the dimension to scan.
        dtype: the dtype to compute in (integers and bool default to int64).
        out: optional tensor to write the result into.

    Returns:
        Tensor of ``input``'s shape, C-contiguous.

    Example:
        >>> cumprod(tensor([1., 2., 3.]), 0)
        tensor([1., 2., 6.])
    """
    d = _dim("cumprod", input, dim)
    return _cum(S.Cumprod, "cumprod", input, d, _scan_dtype("cumprod", input, dtype, out), out)


def _cum(op: Any, fn: str, input: Tensor, dim: int, d: dtypes.dtype, out: Any) -> Tensor:  # noqa: A002
    name = None if d is input.dtype else d.name
    if out is None:
        return op.apply(input, dim=dim, dtype=name)  # type: ignore[no-any-return]
    from .out import check_out_grad, write_out

    check_out_grad(fn, (input,), out)
    return write_out(fn, op.apply(input, dim=dim, dtype=name), out)  # type: ignore[no-any-return]


def _cumsum_(self: Tensor, dim: Any = _REQUIRED, *, dtype: Any = None) -> Tensor:
    return _scan_(cumsum, "cumsum", self, dim, dtype)


def _cumprod_(self: Tensor, dim: Any = _REQUIRED, *, dtype: Any = None) -> Tensor:
    return _scan_(cumprod, "cumprod", self, dim, dtype)


def _scan_(fn: Callable[..., Tensor], name: str, t: Tensor, dim: Any, dtype: Any) -> Tensor:
    """``t.cumsum_(dim)`` / ``t.cumprod_(dim)``: the scan in ``t``'s own dtype, written back."""
    from .inplace_ops import inplace

    _dim(f"{name}_", t, dim)
    if dtype is not None and dtype is not t.dtype:
        raise RuntimeError(f"Bad in-place call: input tensor dtype {c_type_name(t.dtype)} and "
                           f"output tensor dtype {c_type_name(dtype)} should match")
    return inplace(t, fn, dim, dtype=t.dtype)


def cummax(input: Tensor, dim: Any = _REQUIRED, *, out: Any = None) -> Any:  # noqa: A002
    """The running maximum along ``dim`` and where it was found: ``(values, indices)``.

    Ties take the last occurrence; a NaN is the maximum from where it appears on (the last NaN
    gives the index), as in PyTorch. The gradient goes to the indices (and adds up there).

    Example:
        >>> cummax(tensor([1., 3., 2., 3.]), 0)
        torch.return_types.cummax(
        values=tensor([1., 3., 3., 3.]),
        indices=tensor([0, 1, 1, 3]))
    """
    return _cummaxmin(input, dim, out, True)


def cummin(input: Tensor, dim: Any = _REQUIRED, *, out: Any = None) -> Any:  # noqa: A002
    """The running minimum along ``dim`` and where it was found: ``(values, indices)``.

    Ties take the last occurrence; NaN propagates, as in ``cummax``.
    """
    return _cummaxmin(input, dim, out, False)


def _cummaxmin(input: Tensor, dim: Any, out: Any, is_max: bool) -> Any:  # noqa: A002
    name = "cummax" if is_max else "cummin"
    d = _dim(name, input, dim)
    rtype = return_types.cummax if is_max else return_types.cummin
    if out is None:
        return rtype(S.CumMaxMin.apply(input, dim=d, is_max=is_max))
    from .out import check_out_grad, write_out

    check_out_grad(name, (input,), out)
    if isinstance(out, (tuple, list)) and len(out) == 2:
        _expect_dtype(out[0], input.dtype)
        _expect_dtype(out[1], dtypes.int64)
    result = rtype(S.CumMaxMin.apply(input, dim=d, is_max=is_max))
    return write_out(name, result, out, exact=(True, True))


def _expect_dtype(t: Any, d: dtypes.dtype) -> None:
    """PyTorch's check of an ``out=`` tensor's scalar type (``cummax``, ``logcumsumexp``)."""
    if isinstance(t, Tensor) and t.dtype is not d:
        raise RuntimeError(f"expected scalar_type {scalar_type_name(d)} but found "
                           f"{scalar_type_name(t.dtype)}")


def logcumsumexp(input: Tensor, dim: Any = _REQUIRED, *,  # noqa: A002
                 out: Tensor | None = None) -> Tensor:
    """``log(cumsum(exp(input), dim))``, computed stably (a running ``logaddexp``).

    Float inputs only, as in PyTorch. The gradient is PyTorch's stable formula and
    differentiable again.

    Example:
        >>> logcumsumexp(tensor([0., 0.]), 0)
        tensor([0.0000, 0.6931])
    """
    d = _dim("logcumsumexp", input, dim)
    if not input.dtype.is_floating_point:
        raise _not_implemented("logcumsumexp_out_cpu", input.dtype)
    if out is None:
        return S.LogCumSumExp.apply(input, dim=d)  # type: ignore[no-any-return]
    from .out import check_out_grad, write_out

    check_out_grad("logcumsumexp", (input,), out)
    _expect_dtype(out, input.dtype)
    return write_out("logcumsumexp", S.LogCumSumExp.apply(input, dim=d), out)  # type: ignore[no-any-return]


def _method(fn: Callable[..., Any]) -> Callable[..., Any]:
    """``fn`` as a Tensor method (no ``out=``)."""

    def method(self: Tensor, dim: Any = _REQUIRED, **kwargs: Any) -> Any:
        return fn(self, dim, **kwargs)

    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "cumsum": _method(cumsum),
    "cumprod": _method(cumprod),
    "cummax": _method(cummax),
    "cummin": _method(cummin),
    "logcumsumexp": _method(logcumsumexp),
    "cumsum_": _cumsum_,
    "cumprod_": _cumprod_,
}
