"""Numerical calculus on samples: ``trapezoid`` (and its old name ``trapz``),
``cumulative_trapezoid`` and ``gradient`` (second-order central differences inside, first- or
second-order one-sided at the edges, uniform or coordinate spacing), written with tensor ops,
so they are differentiable and run on every device.

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (none here).
"""

from __future__ import annotations

import numbers
from typing import Any, Callable, Sequence

from .. import dtypes
from ..ops.util import normalize_dim
from ..tensor import Tensor
from .checks import expect_tensor

__all__ = ["trapezoid", "trapz", "cumulative_trapezoid", "gradient"]


def _floating(y: Tensor) -> Tensor:
    return y if y.dtype.is_floating_point else y.to(dtypes.get_default_dtype())


def _along(v: Tensor, dim: int, ndim: int) -> Tensor:
    """A 1-D ``v`` shaped to broadcast along ``dim`` of an ``ndim``-d tensor."""
    return v.reshape([-1 if d == dim else 1 for d in range(ndim)])


def _spacing(fn: str, y: Tensor, x: Any, dx: Any, dim: int) -> Any:
    """The widths between samples along ``dim``: a number, or a tensor broadcasting to the
    ``n - 1`` intervals."""
    if x is None:
        return 1 if dx is None else dx
    expect_tensor(fn, "x", 2, x)
    n = y.shape[dim]
    if x.ndim == 1:
        if x.shape[0] != n:
            raise RuntimeError(f"{fn}: There must be one `x` value for each sample point")
        return _along(x[1:] - x[:-1], dim, y.ndim)
    xd = normalize_dim(dim, x.ndim)
    return x.narrow(xd, 1, x.shape[xd] - 1) - x.narrow(xd, 0, x.shape[xd] - 1)


def trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    """The integral of samples ``y`` along ``dim`` by the trapezoidal rule, at unit spacing,
    spacing ``dx`` or sample coordinates ``x`` (1-D, or broadcasting with ``y``)."""
    expect_tensor("trapezoid", "y", 1, y)
    dim = normalize_dim(dim, y.ndim)
    y = _floating(y)
    n = y.shape[dim]
    h = _spacing("trapezoid", y, x, dx, dim)
    if n == 0:
        return (y.narrow(dim, 0, 0) * h).sum(dim)
    mids = (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) / 2
    return (mids * h).sum(dim)


def trapz(y: Tensor, x: Tensor | None = None, *, dx: Any = None, dim: int = -1) -> Tensor:
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y: Tensor, x: Tensor | None = None, *, dx: Any = None,
                         dim: int = -1) -> Tensor:
    """The running trapezoidal integral along ``dim`` (one value fewer than samples)."""
    expect_tensor("cumulative_trapezoid", "y", 1, y)
    dim = normalize_dim(dim, y.ndim)
    y = _floating(y)
    n = y.shape[dim]
    h = _spacing("cumulative_trapezoid", y, x, dx, dim)
    if n == 0:
        return y.narrow(dim, 0, 0) * 1
    mids = (y.narrow(dim, 1, n - 1) + y.narrow(dim, 0, n - 1)) / 2
    from .scan import cumsum  # late: the scan family is imported after this module's users

    return cumsum(mids * h, dim)


def _dims(input: Tensor, dim: Any) -> list[int]:  # noqa: A002
    if dim is None:
        return list(range(input.ndim))
    dims = [dim] if isinstance(dim, int) else list(dim)
    return [normalize_dim(d, input.ndim) for d in dims]


def _one_gradient(y: Tensor, dim: int, h: Any, edge_order: int) -> Tensor:
    """``dy/dx`` along ``dim``: ``h`` a number (uniform spacing) or the 1-D coordinates."""
    from .shape import cat  # late: shape builds on this package

    n = y.shape[dim]

    def at(start: int, length: int) -> Tensor:
        return y.narrow(dim, start, length)

    if isinstance(h, Tensor):
        x = _along(h.to(y.dtype) if not h.dtype.is_floating_point else h, dim, y.ndim)

        def xs(start: int, length: int) -> Tensor:
            return x.narrow(dim, start, length)

        hl, hr = xs(1, n - 2) - xs(0, n - 2), xs(2, n - 2) - xs(1, n - 2)
        inner = (-hr / (hl * (hl + hr)) * at(0, n - 2) + (hr - hl) / (hl * hr) * at(1, n - 2)
                 + hl / (hr * (hl + hr)) * at(2, n - 2))
        if edge_order == 1:
            first = (at(1, 1) - at(0, 1)) / (xs(1, 1) - xs(0, 1))
            last = (at(n - 1, 1) - at(n - 2, 1)) / (xs(n - 1, 1) - xs(n - 2, 1))
        else:
            d1, d2 = xs(1, 1) - xs(0, 1), xs(2, 1) - xs(1, 1)
            first = (-(2 * d1 + d2) / (d1 * (d1 + d2)) * at(0, 1) + (d1 + d2) / (d1 * d2)
                     * at(1, 1) - d1 / (d2 * (d1 + d2)) * at(2, 1))
            d1, d2 = xs(n - 2, 1) - xs(n - 3, 1), xs(n - 1, 1) - xs(n - 2, 1)
            last = (d2 / (d1 * (d1 + d2)) * at(n - 3, 1) - (d1 + d2) / (d1 * d2) * at(n - 2, 1)
                    + (2 * d2 + d1) / (d2 * (d1 + d2)) * at(n - 1, 1))
    else:
        inner = (at(2, n - 2) - at(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (at(1, 1) - at(0, 1)) / h
            last = (at(n - 1, 1) - at(n - 2, 1)) / h
        else:
            first = (-3 * at(0, 1) + 4 * at(1, 1) - at(2, 1)) / (2 * h)
            last = (3 * at(n - 1, 1) - 4 * at(n - 2, 1) + at(n - 3, 1)) / (2 * h)
    return cat([first, inner, last], dim)


def gradient(input: Tensor, *, spacing: Any = 1, dim: Any = None,  # noqa: A002
             edge_order: int = 1) -> tuple[Tensor, ...]:
    """The derivative estimates of ``input`` along each of ``dim`` (all dims by default), with
    ``spacing`` a number, one number per dim, or one coordinate tensor per dim."""
    expect_tensor("gradient", "input", 1, input)
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    dims = _dims(input, dim)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    if isinstance(spacing, (numbers.Number, Tensor)) and not (
            isinstance(spacing, Tensor) and spacing.ndim == 1):
        steps: Sequence[Any] = [spacing.item() if isinstance(spacing, Tensor) else spacing] * \
            len(dims)
    else:
        steps = list(spacing)
        if len(steps) != len(dims):
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or "
                               f"it's spacing and dim arguments to have the same length, but got "
                               f"a spacing argument of length {len(steps)} and a dim argument "
                               f"of length {len(dims)}.")
    y = _floating(input)
    out = []
    for d, h in zip(dims, steps):
        if isinstance(h, Tensor) and h.ndim == 0:
            h = h.item()
        out.append(_one_gradient(y, d, h, edge_order))
    return tuple(out)


TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
