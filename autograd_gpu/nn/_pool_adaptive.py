"""Adaptive pooling, power-average (LP) pooling and max unpooling for ``nn.functional`` (gathered by ``_pool.py``):
window tables built on the host, one op from ``ops/pool.py``."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..functions.checks import expect_tensor
from ..ops import pool
from ..tensor import Tensor
from ._pool import avg_pool1d, avg_pool2d, avg_pool3d

__all__ = [
    "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d", "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d", "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool3d", "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d",
    "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
]


# ---- adaptive pooling ------------------------------------------------------------------------

def _adaptive_tables(sizes: tuple[int, ...], outs: tuple[int, ...]) -> list[tuple[Any, Any]]:
    """Per axis ``(idx, valid)``: window ``o`` spans ``[floor(o n / O), ceil((o + 1) n / O))``."""
    tables = []
    for n, o in zip(sizes, outs):
        start = (np.arange(o) * n) // o
        end = -((-(np.arange(o) + 1) * n) // o)
        k = int((end - start).max()) if o else 1
        idx = start.reshape(-1, 1) + np.arange(k)
        valid = idx < end.reshape(-1, 1)
        tables.append((np.minimum(idx, n - 1).astype(np.int64), valid))
    return tables


def _adaptive_sizes(name: str, input: Tensor, n: int, output_size: Any,  # noqa: A002
                    is_max: bool) -> tuple[int, ...]:
    out = [output_size] * n if isinstance(output_size, int) or output_size is None \
        else list(output_size)
    if len(out) != n:
        raise RuntimeError(f"{name}: output_size must be {n}")
    dims = input.dim()
    if dims not in (n + 1, n + 2):
        sep = ": " if is_max else ""
        raise RuntimeError(f"{name}(): Expected {n + 1}D or {n + 2}D tensor, but got{sep}"
                           f"{' ' if not is_max else ''}{list(input.shape)}".replace("  ", " "))
    sizes = tuple(input.shape[-n:])
    outs = tuple(s if o is None else int(o) for o, s in zip(out, sizes))
    if not is_max and min(outs) < 0:
        raise RuntimeError(f"{name}: elements of output_size must be greater than or equal to 0 "
                           f"but received {{{', '.join(map(str, outs))}}}")
    shape = list(input.shape)
    first = 1 if dims == n + 2 else 0
    if (is_max or n == 3) and 0 in shape[first:]:
        bad = shape.index(0, first)
        raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                           f"dimensions, but input has sizes {shape} with dimension {bad} being "
                           "empty")
    return outs


def _adaptive_avg(input: Tensor, n: int, outs: tuple[int, ...]) -> Tensor:  # noqa: A002
    if all(o == 1 for o in outs):  # NOTE: PyTorch's shortcut: a mean (MeanBackward1)
        return input.mean(tuple(range(-n, 0)), keepdim=True)
    sizes = tuple(input.shape[-n:])
    tables = _adaptive_tables(sizes, outs)
    divisor: Any = 1
    for d, (_, valid) in enumerate(tables):
        counts = valid.sum(1)
        divisor = np.multiply.outer(divisor, counts) if d else counts
    taps = tuple((d - n, idx, None, valid) for d, (idx, valid) in enumerate(tables))
    return pool.Taps.apply(input, taps=taps, in_sizes=sizes,  # type: ignore[no-any-return]
                           divisor=divisor, name=f"AdaptiveAvgPool{n}DBackward0")


def _adaptive_max(input: Tensor, n: int, outs: tuple[int, ...]) -> tuple[Tensor, Tensor]:  # noqa: A002
    tables = _adaptive_tables(tuple(input.shape[-n:]), outs)
    return pool.WindowMax.apply(  # type: ignore[no-any-return]
        input, tables=tuple((i[None], v[None]) for i, v in tables),
        name=f"AdaptiveMaxPool{n}DBackward0")


def _one_int(name: str, value: Any) -> Any:
    if isinstance(value, int) or value is None:
        return value
    if len(value) != 1:
        raise RuntimeError(f"{name}() argument 'output_size' should contain one int (got "
                           f"{len(value)})")
    return value[0]


def _check_1d(name: str, input: Tensor) -> None:  # noqa: A002
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for {name})")


def adaptive_avg_pool1d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """The mean over ``output_size`` windows that tile the last dimension: window ``o`` spans
    ``[floor(o L / O), ceil((o + 1) L / O))``. Computed in 2-D and squeezed, as PyTorch."""
    expect_tensor("adaptive_avg_pool1d", "input", 1, input)
    _check_1d("adaptive_avg_pool1d", input)
    o = _one_int("adaptive_avg_pool1d", output_size)
    outs = _adaptive_sizes("adaptive_avg_pool2d", input.unsqueeze(-2), 2, (1, o), False)
    return _adaptive_avg(input.unsqueeze(-2), 2, outs).squeeze(-2)


def adaptive_avg_pool2d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Adaptive mean pooling of the last 2 dimensions (``None`` keeps a size); recorded as
    AdaptiveAvgPool2DBackward0 (a mean, MeanBackward1, for output size 1)."""
    expect_tensor("adaptive_avg_pool2d", "input", 1, input)
    return _adaptive_avg(input, 2, _adaptive_sizes("adaptive_avg_pool2d", input, 2, output_size,
                                                   False))


def adaptive_avg_pool3d(input: Tensor, output_size: Any) -> Tensor:  # noqa: A002
    """Adaptive mean pooling of the last 3 dimensions; AdaptiveAvgPool3DBackward0."""
    expect_tensor("adaptive_avg_pool3d", "input", 1, input)
    return _adaptive_avg(input, 3, _adaptive_sizes("adaptive_avg_pool3d", input, 3, output_size,
                                                   False))


def adaptive_max_pool1d_with_indices(input: Tensor, output_size: Any,  # noqa: A002
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """The maximum over adaptive windows of the last dimension, and its indices."""
    expect_tensor("adaptive_max_pool1d", "input", 1, input)
    _check_1d("adaptive_max_pool1d", input)
    o = _one_int("adaptive_max_pool1d", output_size)
    shape = list(input.shape)
    if 0 in shape[input.dim() - 2:]:
        bad = shape.index(0, input.dim() - 2)
        raise RuntimeError("adaptive_max_pool1d(): Expected input to have non-zero size for "
                           f"non-batch dimensions, but input has sizes {shape} with dimension "
                           f"{bad} being empty")
    outs = _adaptive_sizes("adaptive_max_pool1d", input.unsqueeze(-2), 2, (1, o), True)
    out, idx = _adaptive_max(input.unsqueeze(-2), 2, outs)
    return out.squeeze(-2), idx.squeeze(-2)


def adaptive_max_pool2d_with_indices(input: Tensor, output_size: Any,  # noqa: A002
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """The maximum over adaptive windows of the last 2 dimensions, and its flat indices."""
    expect_tensor("adaptive_max_pool2d", "input", 1, input)
    return _adaptive_max(input, 2, _adaptive_sizes("adaptive_max_pool2d", input, 2,
                                                   output_size, True))


def adaptive_max_pool3d_with_indices(input: Tensor, output_size: Any,  # noqa: A002
                                     return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """The maximum over adaptive windows of the last 3 dimensions, and its flat indices."""
    expect_tensor("adaptive_max_pool3d", "input", 1, input)
    return _adaptive_max(input, 3, _adaptive_sizes("adaptive_max_pool3d", input, 3,
                                                   output_size, True))


def adaptive_max_pool1d(input: Tensor, output_size: Any,  # noqa: A002
                        return_indices: bool = False) -> Any:
    """Adaptive max pooling of the last dimension (AdaptiveMaxPool2DBackward0 under a
    squeeze); ``return_indices`` also returns the indices."""
    out = adaptive_max_pool1d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool2d(input: Tensor, output_size: Any,  # noqa: A002
                        return_indices: bool = False) -> Any:
    """Adaptive max pooling of the last 2 dimensions (AdaptiveMaxPool2DBackward0)."""
    out = adaptive_max_pool2d_with_indices(input, output_size)
    return out if return_indices else out[0]


def adaptive_max_pool3d(input: Tensor, output_size: Any,  # noqa: A002
                        return_indices: bool = False) -> Any:
    """Adaptive max pooling of the last 3 dimensions (AdaptiveMaxPool3DBackward0)."""
    out = adaptive_max_pool3d_with_indices(input, output_size)
    return out if return_indices else out[0]


# ---- power-average pooling ---------------------------------------------------------------------

def _lp(name: str, avg: Any, n: int, input: Tensor, norm_type: float,  # noqa: A002
        kernel_size: Any, stride: Any, ceil_mode: bool) -> Tensor:
    from . import functional as F  # NOTE: late: functional imports this module

    expect_tensor(name, "input", 1, input)
    ks = [kernel_size] * n if isinstance(kernel_size, int) else list(kernel_size)
    numel = 1
    for k in ks:
        numel *= int(k)
    out = avg(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return (out.sign() * F.relu(out.abs())).mul(numel).pow(1.0 / norm_type)  # type: ignore[no-any-return]


def lp_pool1d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """``(sum over each window of x ** p) ** (1 / p)``, as PyTorch computes it: the average pool
    of ``x ** p`` times the window size, to the power ``1 / p`` (negative sums give 0)."""
    return _lp("lp_pool1d", avg_pool1d, 1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """The power-average pool over windows of the last 2 dimensions (see ``lp_pool1d``)."""
    return _lp("lp_pool2d", avg_pool2d, 2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input: Tensor, norm_type: float, kernel_size: Any, stride: Any = None,  # noqa: A002
              ceil_mode: bool = False) -> Tensor:
    """The power-average pool over windows of the last 3 dimensions (see ``lp_pool1d``)."""
    return _lp("lp_pool3d", avg_pool3d, 3, input, norm_type, kernel_size, stride, ceil_mode)


# ---- unpooling -------------------------------------------------------------------------------

def _unpool_size(input: Tensor, kernel: tuple[int, ...], stride: tuple[int, ...],  # noqa: A002
                 pad: tuple[int, ...], output_size: Any) -> list[int]:
    """PyTorch's ``_unpool_output_size``: ``(in - 1) s + k - 2 p``, or a checked ``output_size``."""
    n = len(kernel)
    default = [(input.shape[-n + d] - 1) * stride[d] + kernel[d] - 2 * pad[d] for d in range(n)]
    if output_size is None:
        return default
    out = list(output_size)
    if len(out) == n + 2:
        out = out[2:]
    if len(out) != n:
        raise ValueError(f"output_size should be a sequence containing {n} or {n + 2} elements, "
                         f"but it has a length of '{len(out)}'")
    for d in range(n):
        lo, hi = default[d] - stride[d], default[d] + stride[d]
        if not lo < out[d] < hi:
            raise ValueError(f'invalid output_size "{output_size}" (dim {d} must be between {lo} '
                             f"and {hi})")
    return [int(o) for o in out]


def _unpool(input: Tensor, indices: Tensor, n: int, kernel_size: Any, stride: Any,  # noqa: A002
            padding: Any, output_size: Any) -> Tensor:
    def tup(v: Any) -> tuple[int, ...]:
        return tuple([v] * n) if isinstance(v, int) else tuple(int(x) for x in v)

    kernel = tup(kernel_size)
    stride_, pad = tup(kernel if stride is None else stride), tup(padding)
    sizes = _unpool_size(input, kernel, stride_, pad, output_size)
    if n == 1:
        out = _unpool(input.unsqueeze(-1), indices.unsqueeze(-1), 2, (kernel[0], 1),
                      (stride_[0], 1), (pad[0], 0), sizes + [1])
        return out.squeeze(-1)
    return pool.PlaneScatter.apply(  # type: ignore[no-any-return]
        input, indices=indices._data, n_spatial=n, in_sizes=tuple(sizes),
        name=f"MaxUnpool{n}DBackward0", accumulate=False)


def max_unpool1d(input: Tensor, indices: Tensor, kernel_size: Any,  # noqa: A002
                 stride: Any = None, padding: Any = 0, output_size: Any = None) -> Tensor:
    """The inverse of ``max_pool1d``: each value written at its index of a zero output (other
    positions stay 0). Computed in 2-D and squeezed, as PyTorch."""
    expect_tensor("max_unpool1d", "input", 1, input)
    return _unpool(input, indices, 1, kernel_size, stride, padding, output_size)


def max_unpool2d(input: Tensor, indices: Tensor, kernel_size: Any,  # noqa: A002
                 stride: Any = None, padding: Any = 0, output_size: Any = None) -> Tensor:
    """The inverse of ``max_pool2d`` (MaxUnpool2DBackward0: the gradient gathers at the
    indices)."""
    expect_tensor("max_unpool2d", "input", 1, input)
    return _unpool(input, indices, 2, kernel_size, stride, padding, output_size)


def max_unpool3d(input: Tensor, indices: Tensor, kernel_size: Any,  # noqa: A002
                 stride: Any = None, padding: Any = 0, output_size: Any = None) -> Tensor:
    """The inverse of ``max_pool3d`` (MaxUnpool3DBackward0)."""
    expect_tensor("max_unpool3d", "input", 1, input)
    return _unpool(input, indices, 3, kernel_size, stride, padding, output_size)
