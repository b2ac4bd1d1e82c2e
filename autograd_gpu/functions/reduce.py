"""Reductions (sum, mean, var, max, norm, ...) and the softmax family."""

from __future__ import annotations

import builtins
from typing import Any

from .. import dtypes
from ..autograd.node import Node
from ..ops import fused
from ..ops import reduce as R
from ..ops.util import c_order, normalize_dim, normalize_dims
from ..tensor import Tensor
from .arith import _float_input, _type_name, maximum, minimum, raw_reduce


# ---- reductions ------------------------------------------------------------------------------

_ALL_DIMS = [tuple(range(n)) for n in range(8)]  # every dim of an n-d tensor

def sum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A001,A002
    """Sum over ``dim`` (all dims when None): SumBackward0 / SumBackward1."""
    if dim is None and dtype is None and input.dtype.category > 1:
        # NOTE: the common call (x.sum() of a float tensor), without the general argument work
        n = input._data.ndim
        return R.Sum.apply(input, dims=_ALL_DIMS[n] if n < 8 else tuple(range(n)),
                           keepdim=keepdim, name="SumBackward0", dtype=None)
    name = "SumBackward0" if dim is None else "SumBackward1"
    out_dtype = None
    if dtype is not None:
        out_dtype = dtype.name
    elif input.dtype.category < 2:
        out_dtype = "int64"  # NOTE: integer and bool sums are int64, as in PyTorch
    return R.Sum.apply(input, dims=normalize_dims(dim, input.ndim), keepdim=keepdim, name=name,
                       dtype=out_dtype)


def sum_to_size(input: Tensor, *size: Any) -> Tensor:  # noqa: A002
    """Sum ``input`` down to ``size`` (the inverse of broadcasting)."""
    shape = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], int) else tuple(size)
    if input.shape == shape:
        return input
    lead = input.ndim - len(shape)
    if lead < 0:
        raise RuntimeError(f"size {{{', '.join(map(str, shape))}}} is not expandable to size "
                           f"{{{', '.join(map(str, input.shape))}}}.")
    dims = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and input.shape[lead + i] != 1
    )
    out = R.Sum.apply(input, dims=dims, keepdim=True, name="SumBackward1", dtype=None) if dims else input
    return out.reshape(shape) if out.shape != shape else out


def mean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """Mean over ``dim``: MeanBackward0 (all) / MeanBackward1."""
    input = _float_input_of(input, dtype, "mean(): could not infer output dtype. Input dtype must "
                            "be either a floating point or complex dtype. Got: ")
    return R.Mean.apply(input, dims=normalize_dims(dim, input.ndim), keepdim=keepdim,
                        name="MeanBackward0" if dim is None else "MeanBackward1")


def _float_input_of(input: Tensor, dtype: Any, error: str) -> Tensor:  # noqa: A002
    """``input`` cast to ``dtype`` when one is given; PyTorch's RuntimeError, ``error`` followed
    by the dtype's name, when that is not a floating dtype."""
    if dtype is not None:
        input = input.to(dtype)
    if input.dtype.category < 2:
        raise RuntimeError(error + _type_name(input.dtype))
    return input


def _correction(unbiased: Any, correction: Any) -> float:
    if correction is not None:
        return float(correction)
    return 1.0 if unbiased is None or unbiased else 0.0


def var(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,  # noqa: A002
        correction: Any = None) -> Tensor:
    """Variance over ``dim`` with Bessel's ``correction`` (1 by default)."""
    return _var(input, dim, unbiased, keepdim, correction, std=False)


def _var(input: Tensor, dim: Any, unbiased: Any, keepdim: bool, correction: Any,  # noqa: A002
         std: bool) -> Tensor:
    """``var`` or ``std``; ``var(x, False)`` passes ``unbiased`` where ``dim`` stands."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if input.dtype.is_complex:
        # NOTE: the variance of complex values is that of the real parts plus that of the
        # imaginary parts (a real result), as in PyTorch.
        v = _var(input.real, dim, unbiased, keepdim, correction, False) + \
            _var(input.imag, dim, unbiased, keepdim, correction, False)
        return v.sqrt() if std else v
    if not input.dtype.is_floating_point:
        raise RuntimeError("std and var only support floating point and complex dtypes")
    dims = normalize_dims(dim, input.ndim)
    c = _correction(unbiased, correction)
    n = 1
    for d in dims:
        n *= input.shape[d]
    if n - c <= 0:
        import warnings

        warnings.warn(
            f"{'std' if std else 'var'}(): degrees of freedom is <= 0. Correction should be "
            "strictly less than the reduction factor (input numel divided by output numel).",
            UserWarning, stacklevel=3,
        )
    return R.Var.apply(input, dims=dims, keepdim=keepdim, correction=c, std=std)


def std(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,  # noqa: A002
        correction: Any = None) -> Tensor:
    """Standard deviation over ``dim`` with Bessel's ``correction`` (1 by default)."""
    return _var(input, dim, unbiased, keepdim, correction, std=True)


def prod(input: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype: Any = None) -> Tensor:  # noqa: A002
    if dtype is not None:
        input = input.to(dtype)
    elif input.dtype.category < 2:
        input = input.to(dtypes.int64)  # NOTE: integer and bool products are int64, as in PyTorch
    name = "ProdBackward0" if dim is None else "ProdBackward1"
    return R.Prod.apply(input, dims=normalize_dims(dim, input.ndim), keepdim=keepdim, name=name)


def _max_min(input: Tensor, dim: Any, keepdim: bool, is_max: bool) -> Any:  # noqa: A002
    if isinstance(dim, Tensor):
        return maximum(input, dim) if is_max else minimum(input, dim)
    name = "max" if is_max else "min"
    if input.dtype.is_complex:  # NOTE: complex numbers have no order
        if dim is None:
            raise NotImplementedError(f"\"{name}_all\" not implemented for "
                                      f"'{_type_name(input.dtype)}'")
        raise RuntimeError(f"{name}(): does not support complex input")
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError(
                f"{'max' if is_max else 'min'}(): Expected reduction dim to be specified for "
                "input.numel() == 0. Specify the reduction dim with the 'dim' argument."
            )
        name = "MaxBackward1" if is_max else "MinBackward1"
        return R.MaxMin.apply(input, dims=normalize_dims(None, input.ndim), keepdim=False,
                              is_max=is_max, name=name)
    from .. import return_types

    d = normalize_dim(dim, input.ndim)
    values, indices = R.MaxMinDim.apply(input, dim=d, keepdim=keepdim, is_max=is_max)
    return (return_types.max if is_max else return_types.min)(values, indices)


def max(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001,A002
    """The largest element; with ``dim``, ``(values, indices)``; with a tensor, ``maximum``."""
    return _max_min(input, dim, keepdim, True)


def min(input: Tensor, dim: Any = None, keepdim: bool = False) -> Any:  # noqa: A001,A002
    """The smallest element; with ``dim``, ``(values, indices)``; with a tensor, ``minimum``."""
    return _max_min(input, dim, keepdim, False)


def amax(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:  # noqa: A002
    """Max over ``dim`` (all when empty); ties share the gradient evenly."""
    _unordered("max_values", input)
    return R.MaxMin.apply(input, dims=_nonempty_dims("amax", input, dim), keepdim=keepdim,
                          is_max=True, name="AmaxBackward0")


def amin(input: Tensor, dim: Any = (), keepdim: bool = False) -> Tensor:  # noqa: A002
    """Min over ``dim`` (all when empty); ties share the gradient evenly."""
    _unordered("min_values", input)
    return R.MaxMin.apply(input, dims=_nonempty_dims("amin", input, dim), keepdim=keepdim,
                          is_max=False, name="AminBackward0")


def _unordered(kernel: str, input: Tensor) -> None:  # noqa: A002
    """PyTorch's error for an order-based kernel on complex input."""
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"{kernel}_{input._device.type}\" not implemented for "
                                  f"'{_type_name(input.dtype)}'")


def _nonempty_dims(name: str, input: Tensor, dim: Any) -> tuple[int, ...]:  # noqa: A002
    """``dim`` normalised; PyTorch's errors when a reduced dim of an empty ``input`` has size 0
    (an empty input may still be reduced over its non-empty dims)."""
    dims = normalize_dims(dim, input.ndim)
    if input.numel() == 0:
        if dim is None or (not isinstance(dim, int) and len(dim) == 0):
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               "input.numel() == 0. Specify the reduction dim with the 'dim' "
                               "argument.")
        for d in sorted(dims):
            if input.shape[d] == 0:
                raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    return dims


def argmax(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    return _arg(input, dim, keepdim, "argmax")


def argmin(input: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:  # noqa: A002
    return _arg(input, dim, keepdim, "argmin")


def _arg(input: Tensor, dim: int | None, keepdim: bool, name: str) -> Tensor:  # noqa: A002
    if input.dtype is dtypes.bool:
        raise RuntimeError(f"{name}(): does not support bool input")
    if input.dtype.is_complex:
        raise RuntimeError(f"{name}(): does not support complex input")
    b = input.backend
    if input._level:
        flat = dim is None
        x = input.reshape(-1) if flat else input
        d = 0 if dim is None else normalize_dim(dim, input.ndim)
        out_t = raw_reduce(lambda be, a, dims, keep: getattr(be, name)(
            a, axis=dims[0], keepdims=keep).astype("int64", copy=False), x, (d,),
            keepdim and not flat)
        return out_t.reshape((1,) * input.ndim) if flat and keepdim else out_t
    if dim is None:
        out = getattr(b, name)(input._data.reshape(-1))
        if keepdim:
            out = b.asarray(out).reshape((1,) * input.ndim)
    else:
        out = getattr(b, name)(input._data, axis=normalize_dim(dim, input.ndim), keepdims=keepdim)
    return Tensor._make(c_order(b, b.asarray(out).astype("int64", copy=False)), input._device)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False) -> Tensor:  # noqa: A002
    """``log(sum(exp(input), dim))``, computed stably."""
    return R.LogSumExp.apply(_float_input(input), dims=normalize_dims(dim, input.ndim), keepdim=keepdim)


def norm(input: Tensor, p: Any = "fro", dim: Any = None, keepdim: bool = False, dtype: Any = None) -> Tensor:  # noqa: A002
    """Vector p-norm (2 by default, ``'fro'`` too) over ``dim`` or all elements."""
    if p == "fro" and dim is not None and not isinstance(dim, int) and len(dim) > 2:
        # NOTE: PyTorch sends 'fro' over more than two dims to matrix_norm, which refuses.
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got {' '.join(map(str, dim))}")
    if p == "fro" or p is None:
        p = 2
    if isinstance(p, str):
        raise RuntimeError(f"norm: unsupported p={p!r} in this version; use a number or 'fro'")
    input = _float_input_of(input, dtype, "linalg.vector_norm: Expected a floating point or "
                            "complex tensor as input. Got ")
    if input.dtype.is_complex:  # NOTE: the norm of the magnitudes (a real result)
        input = input.abs()
    return R.Norm.apply(input, dims=normalize_dims(dim, input.ndim), keepdim=keepdim, p=float(p))


def any(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001,A002
    """True where any element over ``dim`` (all dims when None) is nonzero."""
    return _bool_reduce("any", input, dim, keepdim)


def all(input: Tensor, dim: Any = None, keepdim: bool = False) -> Tensor:  # noqa: A001,A002
    """True where every element over ``dim`` (all dims when None) is nonzero."""
    return _bool_reduce("all", input, dim, keepdim)


def _bool_reduce(name: str, input: Tensor, dim: Any, keepdim: bool) -> Tensor:  # noqa: A002
    axis = None if dim is None else normalize_dims(dim, input.ndim)
    if input._level:
        dims = tuple(range(input.ndim)) if axis is None else axis
        return raw_reduce(lambda be, a, ds, keep: getattr(be, name)(a, axis=ds, keepdims=keep),
                          input, dims, keepdim)
    out = getattr(input.backend, name)(input._data, axis=axis, keepdims=keepdim)
    return Tensor._make(c_order(input.backend, out), input._device)


def softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:  # noqa: A002
    """``exp(x) / sum(exp(x), dim)``, with the max subtracted first for stability."""
    return _softmax(fused.Softmax, "softmax", input, dim, dtype)


def log_softmax(input: Tensor, dim: int, dtype: Any = None) -> Tensor:  # noqa: A002
    """``x - logsumexp(x, dim)``, stable for large inputs."""
    return _softmax(fused.LogSoftmax, "log_softmax", input, dim, dtype)


def _softmax(op: type[Node], name: str, input: Tensor, dim: int, dtype: Any) -> Tensor:  # noqa: A002
    """``op`` over ``dim`` after the optional cast to ``dtype``; PyTorch's error for an integer
    input names the kernel it would have run."""
    if dtype is not None:
        input = input.to(dtype)
    d = normalize_dim(dim, input.ndim)
    if not input.dtype.is_floating_point:
        kernel = f"{name}_lastdim_kernel_impl" if d == builtins.max(input.ndim - 1, 0) else \
            f"{name}_kernel_impl"
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{_type_name(input.dtype)}'"
        )
    return op.apply(input, dim=d)
