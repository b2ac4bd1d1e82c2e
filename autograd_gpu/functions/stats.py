"""Statistics and reductions beyond the basics: std_mean, var_mean, quantile, nan-reductions, aminmax, cov, corrcoef, distances.

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
Covariance, correlation, distances and ``renorm`` live in ``stats_dist`` (re-exported here).
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from .. import dtypes
from ..autograd.grad_mode import is_grad_enabled
from ..autograd.node import user_stacklevel
from ..ops import movement as M
from ..ops import stats as S
from ..ops.util import normalize_dim, normalize_dims
from ..tensor import Tensor
from .arith import _type_name
from .checks import invalid_arguments
from .linalg import _tensors
from .out import write_out
from .products import method
from .stats_dist import cdist, corrcoef, cov, dist, pdist, renorm, renorm_

__all__: list[str] = ["aminmax", "cdist", "corrcoef", "cov", "dist", "nanmean", "nanquantile",
                      "nansum", "pdist", "quantile", "renorm", "std_mean", "var_mean"]


# ---- moments -----------------------------------------------------------------------------------

def var_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,  # noqa: A002
             correction: Any = None) -> tuple[Tensor, Tensor]:
    """``(var, mean)`` over ``dim`` (all dims when None) in one pass (VarMeanBackward0).

    ``correction`` (or ``unbiased``; 1 by default) is Bessel's: the sum of squares is divided
    by ``N - correction``; at ``N - correction <= 0`` PyTorch's warning, and the variance is
    inf or nan.

    Example:
        >>> var_mean(tensor([1.0, 2.0, 3.0]))
        (tensor(1.), tensor(2.))
    """
    return _var_mean("var_mean", input, dim, unbiased, keepdim, correction)


def std_mean(input: Tensor, dim: Any = None, unbiased: Any = None, keepdim: bool = False, *,  # noqa: A002
             correction: Any = None) -> tuple[Tensor, Tensor]:
    """``(std, mean)`` over ``dim``, as ``var_mean`` (StdMeanBackward0); the gradient where the
    std is 0 is 0, as in PyTorch."""
    return _var_mean("std_mean", input, dim, unbiased, keepdim, correction)


def _var_mean(name: str, input: Tensor, dim: Any, unbiased: Any, keepdim: bool,  # noqa: A002
              correction: Any) -> tuple[Tensor, Tensor]:
    if isinstance(dim, bool):  # NOTE: std_mean(x, False): the unbiased overload
        dim, unbiased = None, dim
    if not isinstance(input, Tensor) or not (dim is None or isinstance(dim, (int, tuple, list))):
        raise invalid_arguments(name, (input,) if dim is None else (input, dim), {})
    if unbiased is not None and correction is not None:
        raise invalid_arguments(name, (input,) if dim is None else (input, dim),
                                {"unbiased": unbiased, "correction": correction})
    if input.dtype.is_complex:
        # NOTE: composed (real variance of the parts, complex mean); PyTorch's node is one
        from .reduce import _var

        v = _var(input, dim, unbiased, keepdim, correction, name == "std_mean")
        return v, input.mean(normalize_dims(dim, input.ndim), keepdim)
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"{name} only support floating point and complex dtypes")
    dims = normalize_dims(dim, input.ndim)
    c = float(correction) if correction is not None else (
        1.0 if unbiased is None or unbiased else 0.0)
    n = 1
    for d in dims:
        n *= input.shape[d]
    if n - c <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=user_stacklevel())
    out = S.VarMean.apply(input, dims=dims, keepdim=keepdim, correction=c,
                          std=name == "std_mean")
    return tuple(out)  # type: ignore[return-value]


# ---- NaN-ignoring reductions -----------------------------------------------------------------

def nansum(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,  # noqa: A002
           out: Tensor | None = None) -> Tensor:
    """Sum over ``dim`` (all dims when None) with NaN counted as 0 (NansumBackward0; the
    gradient at a NaN is 0). Integer and bool inputs sum to int64, as ``sum``.

    Example:
        >>> nansum(tensor([1.0, nan, 2.0]))
        tensor(3.)
    """
    from .reduce import sum as sum_

    _tensors("nansum", False, ("input", input))
    if input.dtype.is_complex:
        raise RuntimeError("nansum on CPU does not support complex inputs")
    x = input
    if out is not None and dtype is None and isinstance(out, Tensor) and \
            input.dtype.is_floating_point:
        dtype = _nansum_out_dtype(input, out)
    if dtype is not None and dtype.is_floating_point and dtype is not x.dtype:
        x = x.to(dtype)
    if x.dtype.is_floating_point:
        result = S.Nansum.apply(x, dims=normalize_dims(dim, x.ndim), keepdim=keepdim)
        if dtype is not None and result.dtype is not dtype:
            result = result.to(dtype)
    else:
        result = sum_(x, dim, keepdim, dtype=dtype)
    return result if out is None else write_out("nansum", result, out, inputs=(input,))


def _nansum_out_dtype(input: Tensor, out: Tensor) -> Any:  # noqa: A002
    """The dtype nansum computes in with ``out=``: the out tensor's, as PyTorch's kernel, which
    has no integer version for a float input."""
    if not out.dtype.is_floating_point:
        raise NotImplementedError(f"\"nansum_{input._device.type}\" not implemented for "
                                  f"'{_type_name(out.dtype)}'")
    return out.dtype


def nanmean(input: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: Any = None,  # noqa: A002
            out: Tensor | None = None) -> Tensor:
    """Mean over ``dim`` of the non-NaN elements: ``nansum / count`` (DivBackward0); nan where
    every element is NaN (or there are none).

    Example:
        >>> nanmean(tensor([1.0, nan, 2.0]))
        tensor(1.5000)
    """
    from .compare import isnan, logical_not
    from .reduce import sum as sum_

    _tensors("nanmean", False, ("input", input))
    if out is not None and not input.dtype.is_floating_point:
        raise RuntimeError("nanmean(): integral types and 'Bool' are not supported for nanmean, "
                           "even for empty tensors.")
    if out is not None and dtype is None and isinstance(out, Tensor):
        dtype = _nansum_out_dtype(input, out)
    if not input.dtype.is_floating_point:
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {_type_name(input.dtype)}")
    if dtype is not None and not dtype.is_floating_point:
        raise RuntimeError("nanmean(): could not infer output dtype. Optional dtype must be "
                           f"either a floating point or complex dtype. Got: {_type_name(dtype)}")
    count = sum_(logical_not(isnan(input)), dim, keepdim)
    result = nansum(input, dim, keepdim, dtype=dtype) / count
    return result if out is None else write_out("nanmean", result, out, inputs=(input,))


# ---- aminmax -----------------------------------------------------------------------------------

def aminmax(input: Tensor, *, dim: Any = None, keepdim: bool = False,  # noqa: A002
            out: Any = None) -> Any:
    """``(min, max)`` over ``dim`` (all elements when None) as ``torch.return_types.aminmax``
    (AminmaxBackward0: ties share the gradient evenly, as amin/amax).

    Example:
        >>> aminmax(tensor([1.0, 3.0, 2.0]))
        torch.return_types.aminmax(
        min=tensor(1.),
        max=tensor(3.))
    """
    from .. import return_types

    _tensors("aminmax", False, ("input", input))
    if dim is not None and (not isinstance(dim, int) or isinstance(dim, bool)):
        raise TypeError(f"aminmax(): argument 'dim' must be int, not {type(dim).__name__}")
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        dims = tuple(range(input.ndim))
    else:
        d = normalize_dim(dim, input.ndim)
        if input.ndim and input.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
        dims = (d,) if input.ndim else ()
    lo, hi = S.Aminmax.apply(input, dims=dims, keepdim=keepdim)
    result = return_types.aminmax(lo, hi)
    return result if out is None else write_out("aminmax", result, out, inputs=(input,),
                                                exact=(True, True))


# ---- quantiles -----------------------------------------------------------------------------------

_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile(input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
             interpolation: str = "linear", out: Tensor | None = None) -> Tensor:
    """The ``q``-th quantiles of ``input`` over ``dim`` (all elements, flattened, when None).

    ``q`` is a number or a 0-d/1-d tensor of ``input``'s dtype, in ``[0, 1]``; a 1-d ``q``
    adds a leading dimension. Between two order statistics the result is interpolated as
    ``interpolation`` says (``'linear'``, ``'lower'``, ``'higher'``, ``'midpoint'``,
    ``'nearest'``, half to even). A NaN in a reduced row makes its quantiles NaN.
    The gradient flows to the one or two order statistics used (ties: the first in sorted
    order, the sort being stable).

    Example:
        >>> quantile(tensor([0.0, 1.0, 2.0, 3.0]), 0.5)
        tensor(1.5000)
    """
    result = _quantile("quantile", input, q, dim, keepdim, interpolation, False, out)
    return result if out is None else _write_quantile("quantile", result, out)


def nanquantile(input: Tensor, q: Any, dim: Any = None, keepdim: bool = False, *,  # noqa: A002
                interpolation: str = "linear", out: Tensor | None = None) -> Tensor:
    """``quantile`` ignoring NaN: the order statistics of each row's non-NaN elements (NaN only
    where a row has no other)."""
    result = _quantile("nanquantile", input, q, dim, keepdim, interpolation, True, out)
    return result if out is None else _write_quantile("nanquantile", result, out)


def _write_quantile(name: str, result: Tensor, out: Any) -> Tensor:
    """``out=`` of the quantiles: PyTorch's copies the result into ``out`` in place, so an
    ``out`` of a result that requires grad records the copy (CopyBackwards) instead of refusing
    autograd."""
    from .inplace_ops import copy_

    if not (is_grad_enabled() and result.requires_grad):
        return write_out(name, result, out)  # type: ignore[no-any-return]
    write_out(name, result.detach(), out)  # NOTE: its checks and resize; the copy is below
    return copy_(out, result)


def _quantile(name: str, input: Tensor, q: Any, dim: Any, keepdim: bool,  # noqa: A002
              interpolation: str, ignore_nan: bool, out: Any = None) -> Tensor:
    # NOTE: PyTorch's order: a number q's range, the interpolation, then the rest; the messages
    # say quantile() for nanquantile too
    if not isinstance(input, Tensor):
        raise invalid_arguments(name, (input, q), {})
    if isinstance(q, (int, float)) and not isinstance(q, bool):
        if not 0 <= q <= 1:
            raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {float(q):g}")
        q_t = None
    elif isinstance(q, Tensor):
        q_t = q
    else:
        raise invalid_arguments(name, (input, q), {})
    if interpolation not in _MODES:
        raise RuntimeError("quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if q_t is not None and q_t.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if q_t is not None and q_t.dtype is not input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if q_t is not None and q_t._device is not input._device:
        raise RuntimeError("quantile() q tensor must be on the same device as the input tensor")
    if isinstance(out, Tensor):
        if out.dtype is not input.dtype:
            raise RuntimeError("quantile() out tensor must be same dtype as the input tensor")
    b = input.backend
    if q_t is not None:
        qs = b.reshape(q_t._data, (-1,))
        if not bool(b.all((qs >= 0) & (qs <= 1))):
            raise RuntimeError("quantile() q values must be in the range [0, 1]")
    else:
        qs = b.full((1,), q, input._data.dtype)
    x = _rows(input, dim, keepdim)
    values = _order_statistics(x, qs, q_t, interpolation, ignore_nan)
    # NOTE: PyTorch's last step is an in-place squeeze (SqueezeBackward4), after moving the
    # quantiles first for a 1-d q
    if q_t is not None and q_t.ndim:
        values = values.unsqueeze(0).transpose(0, -1)
    return M.UnsafeView.apply(values, shape=values.shape[:-1],  # type: ignore[no-any-return]
                              name="SqueezeBackward4")


def _rows(input: Tensor, dim: Any, keepdim: bool) -> Tensor:  # noqa: A002
    """``input`` with the reduced elements along the last dimension: the result's shape (with
    keepdim's ones) plus one dimension of length n, as PyTorch's quantile lays it out."""
    if dim is None:
        return input.reshape((1,) * input.ndim + (-1,) if keepdim else (-1,))
    d = normalize_dim(dim, input.ndim)
    if input.ndim == 0:
        return input.reshape(1)
    if keepdim:
        return input.unsqueeze(-1).transpose(d, -1)
    return input.movedim(d, -1)


def _order_statistics(x: Tensor, qs: Any, q_t: Tensor | None, mode: str,
                      ignore_nan: bool) -> Tensor:
    """The quantiles ``qs`` (a 1-d array) of each row of ``x`` (along its last dim), stacked
    along a new last dim: sorted positions are computed with no gradient (as ops, so that vmap
    batches them), the values gathered from ``x`` (GatherBackward0), then interpolated."""
    from .arith import raw_op
    from .index import gather

    order = raw_op(lambda be, a: be.stable_argsort(a), x)  # NOTE: NaN last, as in PyTorch
    ranks = raw_op(lambda be, a: be.quantile_ranks(a, qs, mode, ignore_nan), x)
    low = gather(x, -1, raw_op(lambda be, o, r: be.take_along_axis(o, r.astype("int64"), -1),
                               order, ranks))
    if mode not in ("linear", "midpoint"):
        return low
    high = gather(x, -1, raw_op(lambda be, o, r: be.take_along_axis(o, be.ceil_int(r), -1),
                                order, ranks))
    if mode == "linear" and q_t is not None and q_t.requires_grad:
        weight = _weight_of_q(x, q_t, ranks, ignore_nan)
    else:
        weight = raw_op(lambda be, r: be.full(r.shape, 0.5, r.dtype) if mode == "midpoint" else
                        r - r.astype("int64").astype(r.dtype), ranks)
    return S.Lerp.apply(low, high, weight)  # type: ignore[no-any-return]


def _weight_of_q(x: Tensor, q: Tensor, ranks: Tensor, ignore_nan: bool) -> Tensor:
    """The linear interpolation's weights as a function of ``q``, which then gets a gradient,
    as in PyTorch: ``q * (n - 1)`` less its integer part (n: the row's non-NaN count for
    nanquantile), constant where PyTorch overwrites the rank (rows with a NaN in quantile,
    all-NaN rows in nanquantile)."""
    from .arith import raw_op

    def scale(be: Any, a: Any) -> Any:
        if ignore_nan:
            return (be.sum(~be.isnan(a), axis=-1, keepdims=True) - 1).astype(a.dtype)
        return be.full(a.shape[:-1] + (1,), a.shape[-1] - 1, a.dtype)

    rank = q.reshape(-1) * raw_op(scale, x)
    if ignore_nan:
        rank = rank.where(~(rank.detach() < 0), 0.0)
    else:
        nan_row = raw_op(lambda be, a: be.any(be.isnan(a), axis=-1, keepdims=True), x)
        rank = rank.where(~nan_row, ranks)
    return rank - raw_op(lambda be, r: r.astype("int64").astype(r.dtype), ranks)


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "aminmax": aminmax, "corrcoef": corrcoef, "cov": cov, "dist": method(dist),
    "nanmean": nanmean, "nanquantile": nanquantile, "nansum": nansum, "quantile": quantile,
    "renorm": renorm, "renorm_": renorm_,
}
