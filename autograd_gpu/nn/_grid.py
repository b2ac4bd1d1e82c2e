"""``grid_sample`` and ``affine_grid`` for ``nn.functional`` (gathered by ``_vision.py``).

``grid_sample`` is a composition of tensor ops: source coordinates per axis (``ops/grid.py:
GridCoord``, PyTorch's unnormalising and padding rules with their slopes), then for each of the
1 (nearest), 2^d (bilinear/trilinear) or 16 (bicubic) corner taps a gather of the input at the
tap's flat index times the tap's weight (a polynomial in the coordinate's fractional part). It
runs as one ``Recompute`` node named as PyTorch's (GridSampler2DBackward0 /
GridSampler3DBackward0), whose backward differentiates the composition again, so gradients
w.r.t. input and grid, and double backward, follow. ``affine_grid`` is a base grid of
``linspace(-1, 1)`` coordinates times ``theta``, as one AffineGridGeneratorBackward0 node.
"""

from __future__ import annotations

import warnings
from typing import Any

from ..autograd.grad_mode import no_grad
from ..creation import linspace
from ..dtypes import scalar_type_name
from ..functions.checks import expect_tensor
from ..functions.pointwise_unary import round as rint
from ..functions.shape import stack
from ..ops.grid import GridCoord
from ..ops.recompute import Recompute
from ..tensor import Tensor

__all__ = ["affine_grid", "grid_sample"]

_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to align_corners=False "
                  "since 1.3.0. Please specify align_corners=True if the old behavior is desired. "
                  "See the documentation of grid_sample for details.")
_A = -0.75  # NOTE: the cubic convolution constant PyTorch uses (OpenCV's; PIL has -0.5)


def _cubic_weights(t: Tensor) -> list[Tensor]:
    """Keys' cubic weights of the taps at ``-1, 0, 1, 2`` for fractional part ``t``."""
    def near(x: Tensor) -> Tensor:  # |x| <= 1
        return ((_A + 2) * x - (_A + 3)) * x * x + 1

    def far(x: Tensor) -> Tensor:  # 1 < |x| < 2
        return ((_A * x - 5 * _A) * x + 8 * _A) * x - 4 * _A

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _taps(coord: Tensor, n: int, mode: str, padding: str, align: bool, generic: bool
          ) -> list[tuple[Tensor, Tensor | None]]:
    """Per axis the taps ``(index (N, *out) int64, weight or None)``; an index outside
    ``[0, n)`` reads 0 (the gather clamps it and masks the value)."""
    if mode == "nearest":
        return [(rint(coord.detach()).long(), None)]
    base = coord.detach().floor()
    t = coord - base
    if mode == "bilinear":
        i0 = base.long()
        return [(i0, 1 - t), (i0 + 1, t)]
    out: list[tuple[Tensor, Tensor | None]] = []
    for j, w in enumerate(_cubic_weights(t)):
        pos = base + (j - 1)
        if padding != "zeros":  # NOTE: bicubic pads each tap's position, not the coordinate
            with no_grad():
                pos = GridCoord.apply(pos, size=n, padding=padding, align_corners=align,
                                      generic=generic, unnormalize=False)
        out.append((pos.long(), w))
    return out


def _sample(x: Tensor, grid: Tensor, mode: str, padding: str, align: bool) -> Tensor:
    nd = grid.shape[-1]
    n, c, sizes = x.shape[0], x.shape[1], tuple(x.shape[2:])
    out_sp = tuple(grid.shape[1:-1])
    m = 1
    for s in out_sp:
        m *= s
    per_axis = []
    for d in range(nd):  # NOTE: grid[..., 0] is x (the last axis), grid[..., 1] y, ...
        g = grid[..., nd - 1 - d]
        coord = GridCoord.apply(g, size=sizes[d], padding="zeros" if mode == "bicubic" else
                                padding, align_corners=align, generic=nd == 3)
        per_axis.append(_taps(coord, sizes[d], mode, padding, align, nd == 3))
    numel = 1
    for s in sizes:
        numel *= s
    flat = x.reshape(n, c, numel)
    total: Tensor | None = None
    combos: list[list[tuple[Tensor, Tensor | None]]] = [[]]
    for taps in per_axis:  # NOTE: a loop over the 1, 4, 8 or 16 corner taps, not positions
        combos = [prev + [tap] for prev in combos for tap in taps]
    for combo in combos:
        index: Any = 0
        valid: Any = True
        weight: Any = None
        for d, (idx, w) in enumerate(combo):
            ok = (idx >= 0) & (idx < sizes[d])
            valid = ok if valid is True else valid & ok
            index = index * sizes[d] + idx.clamp(0, sizes[d] - 1)
            if w is not None:
                weight = w if weight is None else weight * w
        index = index.reshape(n, 1, m).expand(n, c, m)
        vals = flat.gather(2, index).where(valid.reshape(n, 1, m), 0.0)
        term = vals if weight is None else vals * weight.reshape(n, 1, m)
        total = term if total is None else total + term
    assert total is not None
    return total.reshape((n, c) + out_sp)


def _check(input: Tensor, grid: Tensor, mode: str) -> None:  # noqa: A002
    """PyTorch's ``check_grid_sampler_common`` and the 2-D/3-D checks, in its order."""
    if input.device != grid.device:
        raise RuntimeError("grid_sampler(): expected input and grid to be on same device, but "
                           f"input is on {input.device} and grid is on {grid.device}")
    ins, gs = list(input.shape), list(grid.shape)
    if ins[0] != gs[0]:
        raise RuntimeError("grid_sampler(): expected grid and input to have same batch size, but "
                           f"got input with sizes {ins} and grid with sizes {gs}")
    if gs[-1] != len(ins) - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {len(ins) - 2} in last "
                           f"dimension, but got grid with sizes {gs}")
    for i in range(2, len(ins)):
        if ins[i] <= 0:
            raise RuntimeError("grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {ins} with dimension {i} being "
                               "empty")
    rank = 4 if len(ins) == 4 else 5
    if len(ins) != rank or len(gs) != rank:
        raise RuntimeError(f"grid_sampler(): expected {rank}D input and grid with same number of "
                           f"dimensions, but got input with sizes {ins} and grid with sizes {gs}")
    if rank == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dtype != grid.dtype:
        raise RuntimeError(f"expected scalar type {scalar_type_name(input.dtype)} but found "
                           f"{scalar_type_name(grid.dtype)}")
    if not input.is_floating_point() or input.is_complex():
        # NOTE: the CPU kernels' names on every device (the messages the oracle gives)
        kernel = "grid_sampler_2d_cpu_kernel_impl" if rank == 4 else "grid_sampler3d_cpu"
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{scalar_type_name(input.dtype)}'")


def grid_sample(input: Tensor, grid: Tensor, mode: str = "bilinear",  # noqa: A002
                padding_mode: str = "zeros", align_corners: bool | None = None) -> Tensor:
    """Sample ``input`` ``(N, C, H, W)`` (or ``(N, C, D, H, W)``) at the normalised positions
    ``grid`` ``(N, H_out, W_out, 2)`` (or ``(..., 3)``), ``-1`` and ``1`` being the outer edges
    of the corner pixels (their centres with ``align_corners``).

    Modes: 'bilinear' (trilinear for 5-D), 'nearest' (round half to even), 'bicubic' (4-D only;
    Keys' cubic with ``a = -0.75``). Positions outside the input read 0 ('zeros'), the nearest
    border pixel ('border') or the input mirrored at its borders ('reflection'). The gradient
    w.r.t. ``grid`` is 0 for 'nearest' and where a position was clipped to a border; recorded as
    GridSampler2DBackward0 / GridSampler3DBackward0 (double backward works). ``align_corners``
    None warns and means False, as in PyTorch.

    Returns:
        ``(N, C, H_out, W_out)`` (or ``(N, C, D_out, H_out, W_out)``).

    Example:
        >>> grid_sample(arange(4.0).reshape(1, 1, 2, 2), zeros(1, 1, 1, 2), align_corners=False)
        tensor([[[[1.5000]]]])
    """
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise ValueError("nn.functional.grid_sample(): expected mode to be 'bilinear', 'nearest' "
                         f"or 'bicubic', but got: '{mode}'")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise ValueError("nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    expect_tensor("grid_sampler", "input", 1, input)
    expect_tensor("grid_sampler", "grid", 2, grid)
    _check(input, grid, mode)
    name = f"GridSampler{input.dim() - 2}DBackward0"
    align = bool(align_corners)

    def run(x: Tensor, g: Tensor) -> Tensor:
        return _sample(x, g, mode, padding_mode, align)

    return Recompute.apply(input, grid, fn=run, name=name)  # type: ignore[no-any-return]


def _base_axis(theta: Tensor, steps: int, align: bool) -> Tensor:
    """PyTorch's ``linspace_from_neg_one``: ``steps`` points over ``[-1, 1]``, pulled in to
    the pixel centres (``* (steps - 1) / steps``) without ``align_corners``; 0 for one step."""
    if steps <= 1:
        return theta.new_zeros((1,))
    r = linspace(-1, 1, steps, dtype=theta.dtype, device=theta.device)
    return r if align else r * (steps - 1) / steps


def affine_grid(theta: Tensor, size: Any, align_corners: bool | None = None) -> Tensor:
    """The sampling grid of the affine maps ``theta`` ``(N, 2, 3)`` (or ``(N, 3, 4)``) for an
    output of ``size`` ``(N, C, H, W)`` (or ``(N, C, D, H, W)``): ``grid[n, h, w] =
    theta[n] @ (x_w, y_h, 1)`` with ``x, y`` evenly spaced over ``[-1, 1]`` (pixel centres
    unless ``align_corners``). Recorded as AffineGridGeneratorBackward0.

    Example:
        >>> affine_grid(tensor([[[1.0, 0, 0], [0, 1, 0]]]), (1, 1, 1, 2), align_corners=False)
        tensor([[[[-0.5000,  0.0000],
                  [ 0.5000,  0.0000]]]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got {theta.dtype}")
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = list(size[-2:])
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {theta.shape}.")
        spatial = list(size[-3:])
    else:
        raise NotImplementedError("affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size grids "
                      "when align_corners=True. This is not an intended use case of affine_grid. "
                      "See the documentation of affine_grid for details.", stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    n = int(size[0])
    if theta.shape[0] != n:
        k = len(spatial) + 1
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {k}] but got: [{theta.shape[0]}, {k}].")
    align = bool(align_corners)
    k = len(spatial)
    numel = 1
    for s in spatial:
        numel *= int(s)

    def build(th: Tensor) -> Tensor:
        # base[..., j] is the coordinate of axis k-1-j (x first), then a column of ones
        cols = []
        for j in range(k):
            ax = k - 1 - j
            r = _base_axis(th, int(spatial[ax]), align)
            shape = [1] * k
            shape[ax] = -1
            cols.append(r.reshape(shape).expand(*spatial))
        cols.append(th.new_ones(tuple(spatial)))
        base = stack(cols, -1).reshape(1, numel, k + 1).expand(n, numel, k + 1)
        return base.bmm(th.transpose(1, 2)).reshape(n, *spatial, k)

    return Recompute.apply(theta, fn=build,  # type: ignore[no-any-return]
                           name="AffineGridGeneratorBackward0")
