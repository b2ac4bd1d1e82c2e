"""Fractional max pooling for ``nn.functional`` (gathered by ``_pool.py``): pseudo-random window
starts from one sample in ``[0, 1)`` per plane and axis (PyTorch's interval rule), then one
``ops/pool.py: WindowMax`` node with a window table per plane."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..autograd.grad_mode import no_grad
from ..creation import arange
from ..dtypes import scalar_type_name
from ..functions.checks import expect_tensor
from ..functions.pointwise_unary import trunc
from ..functions.shape import cat
from ..ops import pool
from ..random import rand
from ..tensor import Tensor

__all__ = [
    "fractional_max_pool2d", "fractional_max_pool2d_with_indices", "fractional_max_pool3d",
    "fractional_max_pool3d_with_indices",
]

_AXES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _starts(sample: Tensor, n: int, o: int, k: int) -> Tensor:
    """PyTorch's ``generate_intervals`` for samples ``u`` ``(P,)``: window ``i < o - 1`` starts at
    ``int((i + u) a) - int(u a)`` with ``a = (n - k) / (o - 1)`` (in the samples' dtype), the
    last at ``n - k``. Returns ``(P, o)`` int64."""
    p = sample.shape[0]
    last = sample.new_full((p, min(o, 1)), n - k).long()
    if o <= 1:
        return last
    ft = np.float32 if sample.dtype.itemsize == 4 else np.float64
    alpha = float(ft(n - k) / ft(o - 1))
    i = arange(o - 1, dtype=sample.dtype, device=sample.device)
    u = sample.reshape(p, 1)
    head = trunc((i + u) * alpha).long() - trunc(u * alpha).long()
    return cat([head, last], 1)


def _fractional(name: str, nd: int, input: Tensor, kernel_size: Any,  # noqa: A002
                output_size: Any, output_ratio: Any, samples: Tensor | None
                ) -> tuple[Tensor, Tensor]:
    expect_tensor(f"fractional_max_pool{nd}d", "input", 1, input)
    if output_size is None and output_ratio is None:
        raise ValueError(f"fractional_max_pool{nd}d requires specifying either an output_size or "
                         "an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError("fractional_max_pool2d requires output_ratio to either be a single "
                             "Int or tuple of Ints.")
        ratio = [output_ratio] * nd if not isinstance(output_ratio, (tuple, list)) \
            else list(output_ratio)
        output_size = [int(input.size(d - nd) * ratio[d]) for d in range(nd)]
    if samples is None:
        n_batch = 1 if input.dim() == nd + 1 else input.size(0)
        samples = rand(n_batch, input.size(-nd - 1), nd, dtype=input.dtype, device=input.device)
    what = "Ints" if nd == 2 else "three Ints"
    kernel = [kernel_size] * nd if isinstance(kernel_size, int) else list(kernel_size)
    outs = [output_size] * nd if isinstance(output_size, int) else list(output_size)
    if len(kernel) != nd:
        raise RuntimeError(f"{name}: kernel_size must either be a single Int or tuple of {what}")
    if len(outs) != nd:
        raise RuntimeError(f"{name}: output_size must either be a single Int or tuple of {what}")
    where = f"{name}()" if nd == 2 else f"{name}_out()"
    shape = list(input.shape)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{where}: Expected {nd + 1}D or {nd + 2}D tensor, but got: {shape}")
    for i in range(1, input.dim()):
        if shape[i] <= 0:
            raise RuntimeError(f"{where}: Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{shape} with dimension {i} being empty.")
    sizes = shape[-nd:]
    for axis, s, o, k in zip(_AXES[nd], sizes, outs, kernel):
        if o + k - 1 > s:
            raise RuntimeError(f"{where}: pool {axis} {k} too large relative to input {axis} {s}")
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    batch = shape[0] if input.dim() == nd + 2 else 1
    planes = shape[-nd - 1]
    if samples.shape[0] < batch:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != planes:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.shape[2]}.")
    if not input.is_floating_point():
        raise NotImplementedError(f'"fractional_max_pool{nd}d_out_frame" not implemented for '
                                  f"'{scalar_type_name(input.dtype)}'")
    if min(outs) < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(outs)}: "
                           f"{shape[:-nd] + outs}")
    tables = []
    with no_grad():
        u = samples.detach()[:batch].reshape(batch * planes, nd)
        # NOTE: per plane, sample 0 drives the width in 2-D (then height) but the time axis in
        # 3-D (then height, width), as PyTorch's kernels read them.
        order = (1, 0) if nd == 2 else (0, 1, 2)
        for d in range(nd):
            start = _starts(u[:, order[d]].contiguous(), sizes[d], outs[d], kernel[d])
            idx = start.unsqueeze(-1) + arange(kernel[d], device=input.device)
            ok = (idx >= 0) & (idx < sizes[d])
            tables.append((idx.clamp(0, sizes[d] - 1)._data, ok._data))
    return pool.WindowMax.apply(  # type: ignore[no-any-return]
        input, tables=tuple(tables), name=f"FractionalMaxPool{nd}DBackward0")


def fractional_max_pool2d_with_indices(input: Tensor, kernel_size: Any,  # noqa: A002
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None
                                       ) -> tuple[Tensor, Tensor]:
    """Fractional max pooling of the last 2 dimensions, returning ``(values, indices)``.

    Each plane pools ``kernel_size`` windows whose starts step by about ``(in - k) / (out - 1)``,
    offset by that plane's ``_random_samples`` ``(N, C, 2)`` (width's sample first; drawn from
    the default generator when not given). ``output_ratio`` gives ``int(in * ratio)`` outputs.
    Recorded as FractionalMaxPool2DBackward0 (the gradient goes to each window's first
    maximum).

    NOTE: a window holding several NaNs picks the first here, the last in PyTorch.
    """
    return _fractional("fractional_max_pool2d", 2, input, kernel_size, output_size,
                       output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input: Tensor, kernel_size: Any,  # noqa: A002
                                       output_size: Any = None, output_ratio: Any = None,
                                       return_indices: bool = False,
                                       _random_samples: Tensor | None = None
                                       ) -> tuple[Tensor, Tensor]:
    """Fractional max pooling of the last 3 dimensions, returning ``(values, indices)``
    (``_random_samples`` ``(N, C, 3)``, time's sample first); FractionalMaxPool3DBackward0."""
    return _fractional("fractional_max_pool3d", 3, input, kernel_size, output_size,
                       output_ratio, _random_samples)


def fractional_max_pool2d(input: Tensor, kernel_size: Any, output_size: Any = None,  # noqa: A002
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """``fractional_max_pool2d_with_indices``, the indices only with ``return_indices``.

    Example:
        >>> fractional_max_pool2d(arange(16.0).reshape(1, 4, 4), 2, output_size=1)
        tensor([[[15.]]])
    """
    out = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                             _random_samples=_random_samples)
    return out if return_indices else out[0]


def fractional_max_pool3d(input: Tensor, kernel_size: Any, output_size: Any = None,  # noqa: A002
                          output_ratio: Any = None, return_indices: bool = False,
                          _random_samples: Tensor | None = None) -> Any:
    """``fractional_max_pool3d_with_indices``, the indices only with ``return_indices``."""
    out = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                             _random_samples=_random_samples)
    return out if return_indices else out[0]
