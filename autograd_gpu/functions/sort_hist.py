"""``histogram`` and ``histogramdd``: counts (or summed weights, or densities) of values in
bins given by a count (equal bins over a range) or by their edges. Registered through
``functions/sort.py``. No gradient: with an input that requires grad, the results record
PyTorch's node that refuses backward.

NOTE: PyTorch has these on the CPU only; here they run on CUDA too (the default range reads
the data's min and max back to the host, as ``histc`` does).
"""

from __future__ import annotations

import builtins
import math
from typing import Any, Callable, Sequence

from .. import return_types
from ..autograd.grad_mode import STATE, no_grad
from ..dtypes import c_type_name, scalar_type_name
from ..ops import sort as S
from ..tensor import Tensor
from .checks import invalid_arguments

_DD = "torch.histogramdd"


def _edges(x: Tensor, bins: Sequence[Any], range: Sequence[float] | None) -> list[Tensor]:  # noqa: A002
    """The bin edges of each of the ``D`` dims of the points ``x`` (N, D), as PyTorch makes
    them: given, or ``linspace`` over the range (default: the data's; a single value widened
    by 0.5 each way; no data: [0, 1])."""
    from ..creation_fill import linspace

    D = x.shape[1]
    for d, b in enumerate(bins):
        if isinstance(b, Tensor):
            if b.dtype is not x.dtype:
                raise RuntimeError(f"{_DD}: input tensor and bins tensors should have the same "
                                   f"dtype, but got input with dtype {c_type_name(x.dtype)} and "
                                   f"bins for dimension {d} with dtype {c_type_name(b.dtype)}")
            if b.ndim != 1:
                raise RuntimeError(f"{_DD}: bins tensor should have one dimension, but got "
                                   f"{b.ndim} dimensions in the bins tensor for dimension {d}")
            if not b.numel():
                raise RuntimeError(f"{_DD}: bins tensor should have at least 1 element, but got "
                                   f"0 elements in the bins tensor for dimension {d}")
        if (b.numel() - 1 if isinstance(b, Tensor) else b) <= 0:
            count = b.numel() - 1 if isinstance(b, Tensor) else b
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {count} for "
                               f"dimension {d}")
    if range is not None and len(range) != 2 * D:
        raise RuntimeError(f"{_DD}: for a {D}-dimensional histogram range should have {2 * D} "
                           f"elements, but got {len(range)}")
    out = []
    lows = highs = None
    for d, b in enumerate(bins):
        if isinstance(b, Tensor):
            out.append(b.detach())
            continue
        if range is not None:
            lo, hi = float(range[2 * d]), float(range[2 * d + 1])
        elif x.shape[0]:
            if lows is None:
                with no_grad():  # NOTE: one read-back of every dim's min and max
                    lows, highs = x.amin(0).tolist(), x.amax(0).tolist()
            lo, hi = lows[d], highs[d]  # type: ignore[index]
        else:
            lo, hi = 0.0, 1.0
        if lo > hi:
            raise RuntimeError(f"{_DD}: min should not exceed max, but got min {lo:g} max "
                               f"{hi:g} for dimension {d}")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"{_DD}: dimension {d}'s range [{lo:g}, {hi:g}] is not finite")
        out.append(linspace(lo, hi, int(b) + 1, dtype=x.dtype, device=x.device))
    return out


def _histdd(x: Tensor, bins: list[Any], range: Sequence[float] | None,  # noqa: A002
            weight: Tensor | None, density: bool, name: str) -> tuple[Tensor, list[Tensor]]:
    """Counts of the points ``x`` (N, D) in the bins; ``name`` the kernel PyTorch names in the
    backward error."""
    if not x.dtype.is_floating_point:
        raise NotImplementedError(f'"histogramdd" not implemented for '
                                  f"'{scalar_type_name(x.dtype)}'")
    if weight is not None:
        if weight.dtype is not x.dtype:
            raise RuntimeError(f"{_DD}: if weight tensor is provided, input tensor and weight "
                               f"tensor should have the same dtype, but got input("
                               f"{c_type_name(x.dtype)}), and weight({c_type_name(weight.dtype)})")
        if tuple(weight.shape) != tuple(x.shape[:-1]):
            raise RuntimeError(f"{_DD}: if weight tensor is provided it should have the same "
                               "shape as the input tensor excluding its innermost dimension, but "
                               f"got input with shape {list(x.shape)} and weight with shape "
                               f"{list(weight.shape)}")
    edges = _edges(x, bins, range)
    D = len(edges)

    def fn(b: Any, xs: Any, w: Any, *es: Any) -> Any:
        return (b.histogramdd(xs, list(es), w),) + tuple(b.copy(e) for e in es)

    args = (x, weight, *edges)
    if STATE.grad_enabled and (x.requires_grad or (weight is not None and weight.requires_grad)):
        outs = S.NoDerivative.apply(*args, fn=fn, name="torch::autograd::NotImplemented",
                                    error=RuntimeError,
                                    message=f"derivative for aten::{name} is not implemented")
    else:
        with no_grad():
            outs = S.Compute.apply(*args, fn=fn)
    hist, out_edges = outs[0], list(outs[1:])
    if density:
        with no_grad():
            # NOTE: PyTorch's order: the total first, then each dim's bin widths
            hist = hist / hist.sum()
            for d in builtins.range(D):
                shape = [1] * D
                shape[d] = out_edges[d].shape[0] - 1
                hist = hist / out_edges[d].diff().reshape(shape)
        if outs[0].requires_grad:
            hist = S.NoDerivative.apply(hist, fn=lambda b, h: b.copy(h),
                                        name="torch::autograd::NotImplemented",
                                        error=RuntimeError,
                                        message=f"derivative for aten::{name} is not implemented")
    return hist, out_edges


def histogram(input: Tensor, bins: Any, *, range: Sequence[float] | None = None,  # noqa: A002
              weight: Tensor | None = None, density: bool = False,
              out: Any = None) -> Any:
    """A histogram of the values of ``input`` (flattened; float dtypes): ``bins`` equal bins
    over ``range`` (default: the data's min and max), or the bins between the increasing edges
    of a 1-D tensor ``bins``. A value on the last edge counts in the last bin; values outside
    and NaNs are not counted. ``weight`` (``input``'s dtype and number of elements): sums of
    weights instead of counts; ``density``: divided by the total and the bin widths.

    Returns:
        ``torch.return_types.histogram(hist, bin_edges)``, both of ``input``'s dtype.

    Example:
        >>> histogram(tensor([1., 2., 1.]), bins=2, range=(0., 2.))
        torch.return_types.histogram(
        hist=tensor([0., 3.]),
        bin_edges=tensor([0., 1., 2.]))
    """
    if not isinstance(bins, Tensor) and (not isinstance(bins, int) or isinstance(bins, bool)):
        raise invalid_arguments("histogram", (input, bins), {})
    if out is not None and isinstance(out, (tuple, list)) and isinstance(out[0], Tensor) \
            and out[0].dtype is not input.dtype:
        raise RuntimeError("torch.histogram: input tensor and hist tensor should have the same "
                           f"dtype, but got input {c_type_name(input.dtype)} and hist "
                           f"{c_type_name(out[0].dtype)}")
    if weight is not None and weight.numel() == input.numel():
        weight = weight.reshape(-1)
    hist, edges = _histdd(input.reshape(-1, 1), [bins], range, weight, density,
                          "histogram")
    result = return_types.histogram(hist, edges[0])
    if out is None:
        return result
    from .out import write_out

    write_out("histogram", result, out)
    return return_types.histogram(out[0], out[1])


def histogramdd(input: Tensor, bins: Any, *, range: Sequence[float] | None = None,  # noqa: A002
                weight: Tensor | None = None, density: bool = False) -> Any:
    """A ``D``-dimensional histogram of the points in ``input``'s last dim (size ``D``; the
    other dims hold the points): ``bins`` an int (that many equal bins in every dim), ``D``
    ints or ``D`` 1-D tensors of edges; ``range`` ``[min0, max0, min1, max1, ...]``;
    ``weight`` (one per point) and ``density`` as ``histogram``'s.

    Returns:
        ``torch.return_types.histogramdd(hist, bin_edges)``, ``hist`` of one dim per input
        dim, ``bin_edges`` a tuple of their edges.

    Example:
        >>> histogramdd(tensor([[0., 0.], [1., 1.]]), bins=[2, 1]).hist
        tensor([[1.],
                [1.]])
    """
    if isinstance(bins, int) and not isinstance(bins, bool):
        bins = [bins] * (input.shape[-1] if input.ndim else 1)
    elif not isinstance(bins, (list, tuple)):
        raise invalid_arguments("histogramdd", (input, bins), {})
    if input.ndim < 2:
        raise RuntimeError(f"{_DD}: input tensor should have at least 2 dimensions")
    if len(bins) != input.shape[-1]:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    if weight is not None and tuple(weight.shape) == tuple(input.shape[:-1]):
        weight = weight.reshape(-1)
    points = input.reshape(-1, input.shape[-1])
    if weight is not None and weight.dtype is input.dtype and weight.ndim != 1:
        raise RuntimeError(f"{_DD}: if weight tensor is provided it should have the same "
                           "shape as the input tensor excluding its innermost dimension, but "
                           f"got input with shape {list(input.shape)} and weight with shape "
                           f"{list(weight.shape)}")
    hist, edges = _histdd(points, list(bins), range, weight, density, "_histogramdd_from_bin_cts"
                          if not isinstance(bins[0], Tensor) else "_histogramdd_from_bin_tensors")
    return return_types.histogramdd(hist, tuple(edges))


def _histogram_method(self: Tensor, bins: Any, *, range: Sequence[float] | None = None,  # noqa: A002
                      weight: Tensor | None = None, density: bool = False) -> Any:
    return histogram(self, bins, range=range, weight=weight, density=density)


TENSOR_METHODS: dict[str, Callable[..., Any]] = {"histogram": _histogram_method}
