"""``interpolate`` and the deprecated ``upsample*`` for ``nn.functional``.

Every mode but 'area' is separable: along each spatial axis an output position is a weighted
sum of a few input positions, a table built here on the host in NumPy (in the precision PyTorch
computes it: ``float32`` source indices for float32 input, float64 for float64; 'nearest' always
in float32, as PyTorch does), then one ``ops/pool.py: Taps`` node. 'area' is adaptive average
pooling, as in PyTorch.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np

from ..functions.checks import expect_tensor
from ..ops.pool import Taps
from ..tensor import Tensor
from ._pool_adaptive import adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d

__all__ = ["interpolate", "upsample", "upsample_bilinear", "upsample_nearest"]

# NOTE: PyTorch 2.13 lists a "lanczos" mode in its messages; it is not implemented here.
_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
_RANK = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3}
_NAME = {"nearest": "UpsampleNearest{}DBackward0", "nearest-exact":
         "UpsampleNearestExact{}DBackward0", "linear": "UpsampleLinear1DBackward0",
         "bilinear": "UpsampleBilinear2DBackward0", "bicubic": "UpsampleBicubic2DBackward0",
         "trilinear": "UpsampleTrilinear3DBackward0"}


def _scale(n: int, o: int, align_corners: bool, scale: float | None, ft: Any) -> Any:
    """PyTorch's ``area_pixel_compute_scale``: input step per output step."""
    if align_corners:
        return ft((n - 1) / (o - 1)) if o > 1 else ft(0)
    return ft(1.0 / scale) if scale is not None and scale > 0 else ft(n) / ft(o)


def _nearest(n: int, o: int, scale: float | None, exact: bool) -> tuple[Any, None]:
    dst = np.arange(o, dtype=np.float32)
    if not exact and o == n:
        src = np.arange(o)
    elif not exact and o == 2 * n:
        src = np.arange(o) >> 1
    else:
        s = np.float32(1.0 / scale) if scale is not None and scale > 0 else \
            np.float32(n) / np.float32(o)
        src = np.floor((dst + np.float32(0.5)) * s if exact else dst * s).astype(np.int64)
        src = np.minimum(src, n - 1)
    return src.reshape(-1, 1).astype(np.int64), None


def _guard(real: Any, n: int) -> tuple[Any, Any]:
    idx = np.minimum(np.floor(real).astype(np.int64), n - 1)
    return idx, np.clip(real - idx, 0, 1).astype(real.dtype)


def _linear(n: int, o: int, align_corners: bool, scale: float | None, ft: Any
            ) -> tuple[Any, Any]:
    s = _scale(n, o, align_corners, scale, ft)
    dst = np.arange(o, dtype=ft)
    real = s * dst if align_corners else np.maximum(s * (dst + ft(0.5)) - ft(0.5), ft(0))
    i0, lam = _guard(real, n)
    i1 = i0 + (i0 < n - 1)
    return np.stack([i0, i1], 1), np.stack([ft(1) - lam, lam], 1)


def _cubic(n: int, o: int, align_corners: bool, scale: float | None, ft: Any
           ) -> tuple[Any, Any]:
    s = _scale(n, o, align_corners, scale, ft)
    dst = np.arange(o, dtype=ft)
    real = s * dst if align_corners else s * (dst + ft(0.5)) - ft(0.5)
    i0, t = _guard(real, n)
    a = ft(-0.75)

    def near(x: Any) -> Any:  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x: Any) -> Any:  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a

    w = np.stack([far(t + 1), near(t), near(1 - t), far(2 - t)], 1).astype(ft)
    idx = np.clip(i0.reshape(-1, 1) - 1 + np.arange(4), 0, n - 1)
    return idx, w


def _antialias(n: int, o: int, align_corners: bool, scale: float | None, ft: Any,
               cubic: bool) -> tuple[Any, Any, Any]:
    """PIL-style resampling (``antialias=True``): a triangle (bilinear) or Keys ``a = -0.5``
    (bicubic) filter stretched by the downscale factor, weights normalised per output."""
    s = float(_scale(n, o, align_corners, scale, ft))
    size = 4 if cubic else 2
    support = size / 2 * s if s >= 1 else size / 2
    inv = 1 / s if s >= 1 else 1.0
    center = s * (np.arange(o) + 0.5)
    lo = np.maximum((center - support + 0.5).astype(np.int64), 0)
    hi = np.minimum((center + support + 0.5).astype(np.int64), n)
    taps = int((hi - lo).max()) if o else 1
    idx = lo.reshape(-1, 1) + np.arange(taps)
    x = np.abs((idx - center.reshape(-1, 1) + 0.5) * inv)
    if cubic:
        a = -0.5
        w = np.where(x < 1, ((a + 2) * x - (a + 3)) * x * x + 1,
                     np.where(x < 2, ((a * x - 5 * a) * x + 8 * a) * x - 4 * a, 0.0))
    else:
        w = np.maximum(1 - x, 0.0)
    valid = idx < hi.reshape(-1, 1)
    w = np.where(valid, w, 0.0)
    total = w.sum(1, keepdims=True)
    w = w / np.where(total == 0, 1, total)
    return np.minimum(idx, n - 1).astype(np.int64), w.astype(ft), valid


def _resample(input: Tensor, mode: str, outs: list[int],  # noqa: A002
              scales: list[float] | None, align_corners: bool, antialias: bool) -> Tensor:
    k = len(outs)
    sizes = tuple(input.shape[-k:])
    if min(sizes) <= 0 or min(outs) <= 0:
        axes = ("D", "H", "W")[3 - k:]
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input ("
            + ", ".join(f"{a}: {s}" for a, s in zip(axes, sizes))
            + (") and output (" if k == 1 else ") output (")
            + ", ".join(f"{a}: {s}" for a, s in zip(axes, outs)) + ")")
    ft = np.float64 if str(input.dtype) == "torch.float64" else np.float32
    taps = []
    for d, (n, o) in enumerate(zip(sizes, outs)):
        scale = None if scales is None else scales[d]
        valid = None
        if mode in ("nearest", "nearest-exact"):
            idx, w = _nearest(n, o, scale, mode == "nearest-exact")
        elif antialias:
            idx, w, valid = _antialias(n, o, align_corners, scale, ft, mode == "bicubic")
        elif mode == "bicubic":
            idx, w = _cubic(n, o, align_corners, scale, ft)
        else:
            idx, w = _linear(n, o, align_corners, scale, ft)
        taps.append((d - k, idx, w, valid))
    name = _NAME[mode].format(k)
    if antialias:
        name = name.replace("2DBackward0", "2DAaBackward0")
    return Taps.apply(input, taps=tuple(taps), in_sizes=sizes,  # type: ignore[no-any-return]
                      name=name)


def interpolate(input: Tensor, size: Any = None, scale_factor: Any = None,  # noqa: A002
                mode: str = "nearest", align_corners: bool | None = None,
                recompute_scale_factor: bool | None = None, antialias: bool = False) -> Tensor:
    """Resample the spatial dimensions of an ``(N, C, *spatial)`` input to ``size`` or
    ``floor(size * scale_factor)``.

    Modes: 'nearest' (``floor(o * in / out)``, PyTorch's float32 rule), 'nearest-exact'
    (``floor((o + 0.5) * in / out)``), 'linear'/'bilinear'/'trilinear' (separable linear
    interpolation), 'bicubic' (Keys' cubic, ``a = -0.75``, edges clamped), 'area' (adaptive
    average pooling). With ``align_corners`` the corner pixels' centres line up; otherwise pixel
    areas do (and a given ``scale_factor`` is the step unless ``recompute_scale_factor``).
    ``antialias`` (bilinear/bicubic, 4-D) widens the filter when downsampling, as PIL does.
    Recorded as PyTorch's Upsample*Backward0 nodes.

    Example:
        >>> interpolate(tensor([[[1.0, 2.0]]]), scale_factor=2)
        tensor([[[1., 1., 2., 2.]]])
    """
    expect_tensor("interpolate", "input", 1, input)
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating modes: "
                             "linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.dim() - 2
    scales: list[float] | None = None
    outs: list[int] | None = None
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    "Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {list(input.shape[2:])} and output size of "
                    f"{size}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and "
                    "output size in (o1, o2, ...,oK) format.")
            outs = [int(s) for s in size]
        else:
            outs = [int(size)] * dim
    elif scale_factor is not None:
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    "Input and scale_factor must have the same number of spatial dimensions, but "
                    f"got input with spatial dimensions of {list(input.shape[2:])} and "
                    f"scale_factor of shape {scale_factor}. Please provide input tensor in (N, C, "
                    "d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and outs is None:
        recompute_scale_factor = True
    if scales is not None:
        outs = [math.floor(float(input.shape[i + 2]) * scales[i]) for i in range(dim)]
        if recompute_scale_factor:
            scales = None
    assert outs is not None
    if antialias and not (mode in ("bilinear", "bicubic") and input.dim() == 4):
        raise ValueError("Anti-alias option is restricted to bilinear, bicubic, and lanczos modes "
                         "and requires a 4-D tensor as input")
    if input.dim() in (3, 4, 5):
        if mode in ("nearest", "nearest-exact"):
            return _resample(input, mode, outs, scales, False, False)
        if mode == "area":
            pool = (adaptive_avg_pool1d, adaptive_avg_pool2d, adaptive_avg_pool3d)[dim - 1]
            return pool(input, outs if dim > 1 else outs[0])  # type: ignore[operator]
        if mode in _RANK:
            if _RANK[mode] == dim:
                return _resample(input, mode, outs, scales, bool(align_corners), antialias)
            if mode != "bicubic":
                raise NotImplementedError(f"Got {input.dim()}D input, but {mode} mode needs "
                                          f"{_RANK[mode] + 2}D input")
    raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported (got "
                              f"{input.dim()}D) for the modes: {_MODES} (got {mode})")


def upsample(input: Tensor, size: Any = None, scale_factor: Any = None,  # noqa: A002
             mode: str = "nearest", align_corners: bool | None = None) -> Tensor:
    """Deprecated: ``interpolate`` (warns, as PyTorch)."""
    warnings.warn("nn.functional.upsample is deprecated. Use nn.functional.interpolate instead.",
                  stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: Tensor, size: Any = None,  # noqa: A002
                     scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(mode='nearest')`` (warns, as PyTorch)."""
    warnings.warn("nn.functional.upsample_nearest is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input: Tensor, size: Any = None,  # noqa: A002
                      scale_factor: Any = None) -> Tensor:
    """Deprecated: ``interpolate(mode='bilinear', align_corners=True)`` (warns, as PyTorch)."""
    warnings.warn("nn.functional.upsample_bilinear is deprecated. Use nn.functional.interpolate "
                  "instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# ---- the rest of the family (grid sampling) ----------------------------------------------------
from . import _grid  # noqa: E402
from ._grid import *  # noqa: E402,F401,F403

__all__ += _grid.__all__
