"""Pooling for ``nn.functional``: argument checks with PyTorch's messages, output sizes, then one
op (``max_pool2d``/``avg_pool2d`` from ``ops/conv.py``; the N-d, adaptive and fractional pools from
``ops/pool.py`` with window tables built here on the host, in NumPy)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..functions.checks import expect_tensor
from ..ops import conv, pool
from ..tensor import Tensor

__all__ = [
    "avg_pool1d", "avg_pool2d", "avg_pool3d", "max_pool1d", "max_pool1d_with_indices",
    "max_pool2d", "max_pool2d_with_indices", "max_pool3d", "max_pool3d_with_indices",
]

Pair = tuple[int, int]


# ---- pooling -------------------------------------------------------------------------------

def _pool_pair(value: Any, message: str, default: Any = None) -> Pair:
    if default is not None and (value is None or (not isinstance(value, int) and not value)):
        value = default
    vals = [value] * 2 if isinstance(value, int) else [int(v) for v in value]
    if len(vals) == 1:
        vals = vals * 2
    if len(vals) != 2:
        raise RuntimeError(message)
    return vals[0], vals[1]


def _pool_out(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooling output size: with ``ceil_mode`` the last window must start inside the
    input or its left padding."""
    span = n + 2 * p - d * (k - 1) - 1
    out = (span + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _plain(*args: Any) -> bool:
    """Whether every argument is None, an int or a tuple of ints (exactly: no bool or float)."""
    for a in args:
        if a is not None and type(a) is not int and not (
                type(a) is tuple and all(type(v) is int for v in a)):
            return False
    return True


# NOTE: argument layouts that passed the checks, and their geometry: a training loop pools
# with the same ones every step (bounded: cleared when full; nodes never change a geometry).
_CHECKED: dict[tuple[Any, ...], dict[str, Any]] = {}
_CHECKED_MAX = 256


def _pool_geometry(name: str, input: Tensor, kernel_size: Any, stride: Any,  # noqa: A002
                   padding: Any, dilation: Any, ceil_mode: bool) -> dict[str, Any]:
    """PyTorch's checks of a 2-D pooling's arguments, then the node's window geometry."""
    if not (_plain(kernel_size, stride, padding, dilation) and type(ceil_mode) is bool):
        return _checked_geometry(name, input, kernel_size, stride, padding, dilation, ceil_mode)
    key = (name, tuple(input.shape), kernel_size, stride, padding, dilation, ceil_mode)
    geometry = _CHECKED.get(key)
    if geometry is None:
        geometry = _checked_geometry(name, input, kernel_size, stride, padding, dilation,
                                     ceil_mode)
        if len(_CHECKED) >= _CHECKED_MAX:
            _CHECKED.clear()
        _CHECKED[key] = geometry
    return geometry


def _checked_geometry(name: str, input: Tensor, kernel_size: Any, stride: Any,  # noqa: A002
                      padding: Any, dilation: Any, ceil_mode: bool) -> dict[str, Any]:
    kernel = _pool_pair(kernel_size, f"{name}: kernel_size must either be a single int, or a "
                        "tuple of two ints")
    stride_ = _pool_pair(stride, f"{name}: stride must either be omitted, a single int, or a "
                         "tuple of two ints", default=kernel)
    pad = _pool_pair(padding, f"{name}: padding must either be a single int, or a tuple of two "
                     "ints")
    dil = _pool_pair(dilation, f"{name}: dilation must be either a single int, or a tuple of two "
                     "ints")
    if min(kernel) <= 0:
        raise RuntimeError(f"kernel size should be greater than zero, but got kH: {kernel[0]} "
                           f"kW: {kernel[1]}")
    if min(stride_) <= 0:
        raise RuntimeError("stride should not be zero")
    if min(dil) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got dilationH: {dil[0]} "
                           f"dilationW: {dil[1]}")
    if min(pad) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(pad)}")
    for d in (0, 1):
        if pad[d] > ((kernel[d] - 1) * dil[d] + 1) // 2:
            raise RuntimeError(
                "pad should be at most half of effective kernel size, but got "
                f"pad={pad[d]}, kernel_size={kernel[d]} and dilation={dil[d]}"
            )
    if pad[0] > kernel[0] // 2 or pad[1] > kernel[1] // 2:
        raise RuntimeError(
            "pad should be smaller than or equal to half of kernel size, but got "
            f"padW = {pad[1]}, padH = {pad[0]}, kW = {kernel[1]}, kH = {kernel[0]}"
        )
    if name == "avg_pool2d" and input.dim() < 3:
        d = max(input.dim(), 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-d}, {d - 1}], "
                         "but got -3)")
    if input.dim() not in (3, 4) or any(s == 0 for s in input.shape[-3:]):
        if name == "max_pool2d" and input.dim() not in (3, 4):
            raise RuntimeError("non-empty 3D or 4D (batch mode) tensor expected for input")
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(input.shape)}")
    c, h, w = input.shape[-3:]
    out_hw = tuple(_pool_out(n, kernel[d], stride_[d], pad[d], dil[d], ceil_mode)
                   for d, n in enumerate((h, w)))
    if min(out_hw) < 1:
        raise RuntimeError(f"Given input size: ({c}x{h}x{w}). Calculated output size: "
                           f"({c}x{out_hw[0]}x{out_hw[1]}). Output size is too small")
    return {"kernel": kernel, "stride": stride_, "dilation": dil, "pad": pad, "in_hw": (h, w),
            "out_hw": out_hw, "unbatched": input.dim() == 3}


def max_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """The maximum over each ``kernel_size`` window (padding counts as ``-inf``).

    The gradient goes to the element that was picked (the first maximum of the window, in
    row-major order). Recorded as MaxPool2DWithIndicesBackward0.

    Args:
        input: ``(N, C, H, W)`` or ``(C, H, W)``.
        kernel_size, stride (default: ``kernel_size``), padding (at most half the dilated
            kernel), dilation: int or pair.
        ceil_mode: round the output size up (the last window must start inside the input or
            its left padding).
        return_indices: also return the int64 flat indices ``h * W + w`` of the maxima.

    Example:
        >>> max_pool2d(arange(16.0).reshape(1, 4, 4), 2)
        tensor([[[ 5.,  7.],
                 [13., 15.]]])
    """
    expect_tensor("max_pool2d_with_indices" if return_indices else "max_pool2d", "input", 1,
                  input)
    geometry = _pool_geometry("max_pool2d", input, kernel_size, stride, padding, dilation,
                              ceil_mode)
    out, indices = conv.MaxPool2d.apply(input, **geometry)
    return (out, indices) if return_indices else out


def avg_pool2d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean over each ``kernel_size`` window (zero padding).

    The divisor is the window's size clipped to the padded input (``count_include_pad``), the
    count of its elements inside the input (otherwise), or ``divisor_override``. Recorded as
    AvgPool2DBackward0.

    Example:
        >>> avg_pool2d(arange(16.0).reshape(1, 4, 4), 2)
        tensor([[[ 2.5000,  4.5000],
                 [10.5000, 12.5000]]])
    """
    expect_tensor("avg_pool2d", "input", 1, input)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    geometry = _pool_geometry("avg_pool2d", input, kernel_size, stride, padding, 1, ceil_mode)
    return conv.AvgPool2d.apply(input, count_include_pad=count_include_pad,
                                divisor_override=divisor_override, **geometry)


# ---- N-d pooling (1-D goes through 2-D, as in PyTorch: a Squeeze node on top) --------------------

def _ints(value: Any, n: int, name: str, what: str, default: Any = None) -> tuple[int, ...]:
    if default is not None and (value is None or (not isinstance(value, int) and not value)):
        value = default
    vals = [value] * n if isinstance(value, int) else [int(v) for v in value]
    if len(vals) == 1:
        vals = vals * n
    if len(vals) != n:
        raise RuntimeError(f"{name}: {what} must either be a single int, or a tuple of {_NUM[n]} "
                           "ints")
    return tuple(vals)


_NUM = {1: "one", 2: "two", 3: "three"}
_AXES = {1: ("W",), 2: ("H", "W"), 3: ("T", "H", "W")}


def _window_tables(sizes: tuple[int, ...], outs: tuple[int, ...], kernel: tuple[int, ...],
                   stride: tuple[int, ...], pad: tuple[int, ...], dil: tuple[int, ...]
                   ) -> list[tuple[Any, Any]]:
    """Per axis ``(idx, valid)`` of shape ``(O, K)``: window ``o`` reads ``o s - p + j d``."""
    tables = []
    for n, o, k, s, p, d in zip(sizes, outs, kernel, stride, pad, dil):
        idx = np.arange(o).reshape(-1, 1) * s - p + np.arange(k) * d
        valid = (idx >= 0) & (idx < n)
        tables.append((np.clip(idx, 0, max(n - 1, 0)).astype(np.int64), valid))
    return tables


def _nd_pool_checks(name: str, input: Tensor, n: int, kernel_size: Any,  # noqa: A002
                    stride: Any, padding: Any, dilation: Any, ceil_mode: bool
                    ) -> tuple[tuple[int, ...], ...]:
    """PyTorch's 3-D pooling checks; returns ``kernel, stride, pad, dilation, sizes, outs``."""
    what = "kernel_size must be a single int, or" if name == "avg_pool3d" else None
    if what is not None and not isinstance(kernel_size, int) and len(kernel_size) not in (1, n):
        raise RuntimeError(f"{name}: kernel_size must be a single int, or a tuple of three ints")
    kernel = _ints(kernel_size, n, name, "kernel_size")
    stride_ = _ints(stride, n, name, "stride", default=kernel)
    pad = _ints(padding, n, name, "padding")
    dil = _ints(dilation, n, name, "dilation")
    if input.dim() not in (n + 1, n + 2):
        raise RuntimeError(f"non-empty {n + 1}D or {n + 2}D (batch mode) tensor expected for "
                           "input")
    if min(stride_) <= 0:
        raise RuntimeError("stride should not be zero")
    if min(kernel) <= 0:
        raise RuntimeError("kernel size should be greater than zero, but got " + " ".join(
            f"k{a}: {k}" for a, k in zip(_AXES[n], kernel)))
    if min(dil) <= 0:
        raise RuntimeError("dilation should be greater than zero, but got " + " ".join(
            f"dilation{a}: {d}" for a, d in zip(_AXES[n], dil)))
    for k, p, d in zip(kernel, pad, dil):
        if p > ((k - 1) * d + 1) // 2:
            raise RuntimeError("pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    shape = list(input.shape)
    if 0 in shape[-n - 1 + (input.dim() == n + 1):] and input.dim() == n + 2 or 0 in shape[1:]:
        kind = "max_pool3d_with_indices_out_cpu_template()" if name == "max_pool3d" else \
            f"{name}()"
        bad = next(i for i, s in enumerate(shape[1:]) if s == 0) if input.dim() == n + 2 else 0
        raise RuntimeError(f"{kind}: Expected input's non-batch dimensions to have positive "
                           f"length, but input has a shape of {shape} and non-batch dimension "
                           f"{bad} has length zero!")
    sizes = tuple(shape[-n:])
    if name == "avg_pool3d" and any(s + 2 * p < k for s, p, k in zip(sizes, pad, kernel)):
        raise RuntimeError(
            "input image (" + " ".join(f"{a}: {s}" for a, s in zip(_AXES[n], sizes)) + ") smaller "
            "than kernel size (" + " ".join(f"k{a}: {k}" for a, k in zip(_AXES[n], kernel)) + ")")
    outs = tuple(_pool_out(s, k, st, p, d, ceil_mode)
                 for s, k, st, p, d in zip(sizes, kernel, stride_, pad, dil))
    if min(outs) < 1:
        c = shape[-n - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, [c, *sizes]))}). Calculated "
                           f"output size: ({'x'.join(map(str, [c, *outs]))}). Output size is too "
                           "small")
    return kernel, stride_, pad, dil, sizes, outs


def _max_pool_nd(name: str, input: Tensor, n: int, kernel_size: Any, stride: Any,  # noqa: A002
                 padding: Any, dilation: Any, ceil_mode: bool) -> tuple[Tensor, Tensor]:
    kernel, stride_, pad, dil, sizes, outs = _nd_pool_checks(
        name, input, n, kernel_size, stride, padding, dilation, ceil_mode)
    tables = _window_tables(sizes, outs, kernel, stride_, pad, dil)
    return pool.WindowMax.apply(  # type: ignore[no-any-return]
        input, tables=tuple((i[None], v[None]) for i, v in tables),
        name=f"MaxPool{n}DWithIndicesBackward0")


def max_pool3d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """The maximum over each ``kernel_size`` window of the last 3 dimensions (padding never
    wins); ``return_indices`` adds the int64 flat indices ``(t * H + h) * W + w``. Recorded as
    MaxPool3DWithIndicesBackward0 (the gradient goes to the first maximum of each window)."""
    expect_tensor("max_pool3d", "input", 1, input)
    out, idx = _max_pool_nd("max_pool3d", input, 3, kernel_size, stride, padding, dilation,
                            ceil_mode)
    return (out, idx) if return_indices else out


def max_pool1d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
               return_indices: bool = False) -> Any:
    """``max_pool2d`` over the last dimension (a height-1 window), squeezed back: PyTorch's
    checks for the 1-D form."""
    expect_tensor("max_pool1d", "input", 1, input)
    if input.dim() not in (2, 3) or 0 in input.shape[1:] and input.dim() == 3 or \
            0 in input.shape and input.dim() == 2:
        raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    vals = {}
    for what, v, default in (("kernel_size", kernel_size, None), ("stride", stride, kernel_size),
                             ("padding", padding, None), ("dilation", dilation, None)):
        if default is not None and (v is None or (not isinstance(v, int) and not v)):
            v = default
        v = [v] if isinstance(v, int) else list(v)
        if len(v) != 1:
            raise RuntimeError(f"max_pool1d() {what} must be an int, list of ints or tuple of "
                               f"ints of size 1 but got size {len(v)}")
        vals[what] = int(v[0])
    k, s, p, d = vals["kernel_size"], vals["stride"], vals["padding"], vals["dilation"]
    for what, v in (("kernel_size", k), ("stride", s), ("dilation", d)):
        if v <= 0:
            raise RuntimeError(f"max_pool1d() {what} must be greater than zero, but got {v}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError("max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    length = input.shape[-1]
    o = _pool_out(length, k, s, p, d, ceil_mode)
    if o < 1:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {o}")
    geometry = {"kernel": (1, k), "stride": (1, s), "dilation": (1, d), "pad": (0, p),
                "in_hw": (1, length), "out_hw": (1, o), "unbatched": input.dim() == 2}
    out, idx = conv.MaxPool2d.apply(input.unsqueeze(-2), **geometry)
    out, idx = out.squeeze(-2), idx.squeeze(-2)
    return (out, idx) if return_indices else out


def avg_pool1d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, ceil_mode: bool = False,
               count_include_pad: bool = True) -> Tensor:
    """``avg_pool2d`` over the last dimension (a height-1 window), squeezed back."""
    expect_tensor("avg_pool1d", "input", 1, input)
    if input.dim() not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.dim()}-dimensional "
                           "tensor for argument #1 'self' (while checking arguments for "
                           "avg_pool1d)")
    args = []
    for what, v in (("kernel_size", kernel_size), ("stride", stride), ("padding", padding)):
        if v is None or isinstance(v, int):
            args.append(v)
            continue
        if len(v) != 1 and not (what == "stride" and len(v) == 0):
            raise RuntimeError(f"avg_pool1d() argument '{what}' should contain one int (got "
                               f"{len(v)})")
        args.append(int(v[0]) if len(v) else None)
    k, s, p = args
    out = avg_pool2d(input.unsqueeze(-2), (1, k), (1, k if s is None else s), (0, p),
                     ceil_mode, count_include_pad)
    return out.squeeze(-2)


def avg_pool3d(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
               padding: Any = 0, ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: int | None = None) -> Tensor:
    """The mean over each ``kernel_size`` window of the last 3 dimensions (zero padding), with
    ``avg_pool2d``'s divisor rules. Recorded as AvgPool3DBackward0."""
    expect_tensor("avg_pool3d", "input", 1, input)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    kernel, stride_, pad, dil, sizes, outs = _nd_pool_checks(
        "avg_pool3d", input, 3, kernel_size, stride, padding, 1, ceil_mode)
    tables = _window_tables(sizes, outs, kernel, stride_, pad, dil)
    divisor: Any = 1
    for d, (n, o, k, s, p) in enumerate(zip(sizes, outs, kernel, stride_, pad)):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if not count_include_pad:
            start, end = np.maximum(start, 0), np.minimum(end, n)
        divisor = np.multiply.outer(divisor, end - start) if d else end - start
    if divisor_override:
        divisor = np.full(outs, divisor_override)
    taps = tuple((d - 3, idx, None, valid) for d, (idx, valid) in enumerate(tables))
    return pool.Taps.apply(input, taps=taps, in_sizes=sizes,  # type: ignore[no-any-return]
                           divisor=divisor, name="AvgPool3DBackward0")


def max_pool1d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool1d`` returning ``(values, indices)``."""
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode,  # type: ignore[no-any-return]
                      return_indices=True)


def max_pool2d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool2d`` returning ``(values, indices)``."""
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode,  # type: ignore[no-any-return]
                      return_indices=True)


def max_pool3d_with_indices(input: Tensor, kernel_size: Any, stride: Any = None,  # noqa: A002
                            padding: Any = 0, dilation: Any = 1, ceil_mode: bool = False,
                            return_indices: bool = False) -> tuple[Tensor, Tensor]:
    """``max_pool3d`` returning ``(values, indices)``."""
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode,  # type: ignore[no-any-return]
                      return_indices=True)


# ---- the rest of the family (imported last: it builds on the pools above) ------------------------
from . import _pool_adaptive, _pool_fractional  # noqa: E402
from ._pool_adaptive import *  # noqa: E402,F401,F403
from ._pool_fractional import *  # noqa: E402,F401,F403

__all__ += _pool_adaptive.__all__ + _pool_fractional.__all__
