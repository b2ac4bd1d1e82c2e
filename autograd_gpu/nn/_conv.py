"""Convolutions for ``nn.functional``: ``conv1d/2d/3d``, ``conv_transpose1d/2d/3d``, ``unfold``
and ``fold``. Argument checks with PyTorch's messages and output sizes here, then one op from
``ops/conv.py`` (the same N-d code for every spatial rank)."""

from __future__ import annotations

from typing import Any

from ..dtypes import float32, scalar_type_name
from ..functions.checks import invalid_arguments
from ..ops import conv
from ..tensor import Tensor
from ._fold import fold, unfold

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "fold", "unfold"]

Sizes = tuple[int, ...]
_AXES = {1: ("width",), 2: ("height", "width"), 3: ("depth", "height", "width")}


def _listed(value: Any, dims: int) -> list[int]:
    """An int repeated ``dims`` times (``F.convNd`` expands it so), or a sequence as a list."""
    return [int(value)] * dims if isinstance(value, int) else [int(v) for v in value]


def _expand(vals: list[int], name: str, k: int) -> Sizes:
    """One value per spatial dimension of the weight: a single value is repeated, any other
    length than ``k`` is PyTorch's error."""
    if len(vals) == 1:
        return tuple(vals * k)
    if len(vals) != k:
        raise RuntimeError(
            f"expected {name} to be a single integer value or a list of {k} values to match "
            f"the convolution dimensions, but got {name}={vals}"
        )
    return tuple(vals)


def _same_padding(kernel: Sizes, dilation: Sizes) -> tuple[Sizes, Sizes]:
    """'same': ``dilation * (k - 1)`` in all, half each side; the odd one goes after (PyTorch,
    which warns once that it copies the input then; ours pads in the window copy anyway, so
    it stays silent)."""
    totals = [d * (k - 1) for d, k in zip(dilation, kernel)]
    lo = tuple(t // 2 for t in totals)
    return lo, tuple(t - a for t, a in zip(totals, lo))


def _per_axis(name: str, vals: Sizes, fill: int = 1, sep: str = " ") -> str:
    """``name_height: 1 name_width: 2``; a 1-D convolution is a 2-D one of height 1, whose
    value is ``fill``."""
    axes = _AXES[max(len(vals), 2)]
    vals = (fill,) * (len(axes) - len(vals)) + tuple(vals)
    return sep.join(f"{name}_{a}: {v}" for a, v in zip(axes, vals))


def _ints(*args: Any) -> bool:
    """Whether every argument is an int or a tuple of ints (exactly: no bool, float or str)."""
    for a in args:
        if type(a) is not int and not (type(a) is tuple and all(type(v) is int for v in a)):
            return False
    return True


# NOTE: argument layouts that passed the checks, and their node parameters: a training loop
# calls each layer with the same ones every step (bounded: cleared when full).
_CHECKED: dict[tuple[Any, ...], tuple[dict[str, Any], bool]] = {}
_CHECKED_MAX = 256


def _convolution(fn: str, dims: int, input: Tensor, weight: Tensor,  # noqa: A002
                 bias: Tensor | None, stride: Any, padding: Any, dilation: Any, groups: int,
                 transposed: bool = False, output_padding: Any = 0) -> Tensor:
    """The checks and output sizes of every convolution, then one ``Convolution`` node."""
    if not (isinstance(input, Tensor) and isinstance(weight, Tensor)
            and (bias is None or isinstance(bias, Tensor))):
        raise invalid_arguments(fn, (input, weight) + (() if bias is None else (bias,)), {})
    key = hit = None
    if _ints(stride, padding, dilation, groups, output_padding) and type(transposed) is bool:
        key = (fn, tuple(input.shape), input.dtype, tuple(weight.shape), weight.dtype,
               None if bias is None else (tuple(bias.shape), bias.dtype), stride, padding,
               dilation, groups, transposed, output_padding)
        hit = _CHECKED.get(key)
    if hit is None:
        hit = _checked(fn, dims, input, weight, bias, stride, padding, dilation, groups,
                       transposed, output_padding)
        if key is not None:
            if len(_CHECKED) >= _CHECKED_MAX:
                _CHECKED.clear()
            _CHECKED[key] = hit
    params, unbatched = hit
    result = conv.Convolution.apply(input.unsqueeze(0) if unbatched else input, weight, bias,
                                    **params)
    return result.squeeze(0) if unbatched else result


def _checked(fn: str, dims: int, input: Tensor, weight: Tensor,  # noqa: A002
             bias: Tensor | None, stride: Any, padding: Any, dilation: Any, groups: int,
             transposed: bool, output_padding: Any) -> tuple[dict[str, Any], bool]:
    """PyTorch's checks of a convolution's arguments, then the node's parameters and whether
    the input is unbatched."""
    if transposed and isinstance(padding, str):
        raise TypeError(f"{fn}(): argument 'padding' must be tuple of ints, not str")
    if input.dim() not in (dims + 1, dims + 2):
        raise RuntimeError(f"Expected {dims + 1}D (unbatched) or {dims + 2}D (batched) input to "
                           f"{fn}, but got input of size: {list(input.shape)}")
    unbatched = input.dim() == dims + 1
    x = input.unsqueeze(0) if unbatched else input
    k = weight.dim() - 2
    stride_ = _expand(_listed(stride, dims), "stride", k)
    if isinstance(padding, str):
        pad_list = None
        if padding not in ("valid", "same"):
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        pad_list = _expand(_listed(padding, dims), "padding", k)
    dilation_ = _expand(_listed(dilation, dims), "dilation", k)
    out_pad = _expand(_listed(output_padding, dims), "output_padding", k) if transposed else \
        (0,) * k
    if x.dim() != weight.dim():
        raise RuntimeError(
            f"Expected {weight.dim()}-dimensional input for {weight.dim()}-dimensional weight "
            f"{list(weight.shape)}, but got {x.dim()}-dimensional input of size "
            f"{list(x.shape)} instead"
        )
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    kernel = tuple(weight.shape[2:])
    if pad_list is None:
        if padding == "same" and any(s != 1 for s in stride_):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        lo, hi = _same_padding(kernel, dilation_) if padding == "same" else ((0,) * k,) * 2
    else:
        lo = hi = pad_list
    if min(lo + hi) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(out_pad) < 0:
        raise RuntimeError("negative output_padding is not supported")
    if min(stride_) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation_) < 0:
        raise RuntimeError("dilation should be greater than zero")
    _check_weight(x, weight, bias, groups, transposed, stride_, dilation_)
    if min(dilation_) == 0:
        raise _zero_dilation(x, dilation_, transposed)
    sizes = tuple(x.shape[2:])
    if transposed:
        if any(p >= s and p >= d for p, s, d in zip(out_pad, stride_, dilation_)):
            raise RuntimeError(
                "output padding must be smaller than either stride or dilation, but got "
                + " ".join((_per_axis("output_padding", out_pad, 0), _per_axis("stride", stride_),
                            _per_axis("dilation", dilation_))))
        out = tuple((n - 1) * s - 2 * p + d * (kk - 1) + op + 1 for n, s, p, d, kk, op in
                    zip(sizes, stride_, lo, dilation_, kernel, out_pad))
        if min(out) <= 0:
            pre = (1,) * (dims == 1)
            raise RuntimeError(
                f"Given input size per channel: ({' x '.join(map(str, pre + sizes))}). "
                f"Calculated output size per channel: ({' x '.join(map(str, pre + out))}). "
                "Output size is too small")
        return {"groups": groups, "transposed": True, "kernel": kernel, "stride": stride_,
                "dilation": dilation_, "pad": lo, "in_hw": out, "out_hw": sizes}, unbatched
    padded = tuple(n + a + b for n, a, b in zip(sizes, lo, hi))
    eff = tuple((kk - 1) * d + 1 for kk, d in zip(kernel, dilation_))
    if any(p < e for p, e in zip(padded, eff)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, eff))}). Kernel size can't be greater "
            "than actual input size")
    out = tuple((p - e) // s + 1 for p, e, s in zip(padded, eff, stride_))
    return {"groups": groups, "kernel": kernel, "stride": stride_, "dilation": dilation_,
            "pad": lo, "in_hw": sizes, "out_hw": out}, unbatched


def _check_weight(x: Tensor, weight: Tensor, bias: Tensor | None, groups: int,
                  transposed: bool, stride: Sizes, dilation: Sizes) -> None:
    """PyTorch's checks of the weight against the groups, the input's channels and the bias,
    then of the dtypes."""
    w_size = list(weight.shape)
    if weight.shape[0] < 1:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least 1 at "
                           f"dimension 0, but got weight of size {w_size} instead")
    if weight.shape[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{w_size}] instead")
    if transposed:
        if x.shape[1] != weight.shape[0]:
            raise RuntimeError(
                f"Given transposed=1, weight of size {w_size}, expected input{list(x.shape)} to "
                f"have {weight.shape[0]} channels, but got {x.shape[1]} channels instead")
        n_out, pre = weight.shape[1] * groups, "Given transposed=1, weight"
    else:
        if x.shape[1] != weight.shape[1] * groups:
            raise RuntimeError(
                f"Given groups={groups}, weight of size {w_size}, expected input{list(x.shape)} "
                f"to have {weight.shape[1] * groups} channels, but got {x.shape[1]} channels "
                "instead")
        n_out, pre = weight.shape[0], "Given weight"
    if bias is not None and (bias.dim() != 1 or bias.shape[0] != n_out):
        raise RuntimeError(
            f"{pre} of size {w_size}, expected bias to be 1-dimensional with {n_out} elements, "
            f"but got bias of size {list(bias.shape)} instead")
    if x.dtype is not weight.dtype:
        raise _dtype_error(x, weight, stride, dilation, groups, transposed)
    if bias is not None and bias.dtype is not x.dtype:
        names = [_SCALAR_NAMES.get(str(t.dtype)[6:], str(t.dtype)[6:]) for t in (x, bias)]
        raise RuntimeError(f"Input type ({names[0]}) and bias type ({names[1]}) should be the "
                           "same")


def _zero_dilation(x: Tensor, dilation: Sizes, transposed: bool) -> RuntimeError:
    """A zero dilation: each CPU kernel PyTorch may pick words it in its own way (float32: oneDNN's)."""
    if transposed:
        return RuntimeError("dilation should be greater than zero, but got "
                            + _per_axis("dilation", dilation, 1, ", "))
    if x.dtype is float32 or x.device.type != "cpu":
        return RuntimeError("non-positive dilation is not supported")
    listed = [1] * (len(dilation) == 1) + list(dilation)
    return RuntimeError(f"dilation should be greater than zero, but got {listed}")


_SCALAR_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half"}


def _dtype_error(x: Tensor, weight: Tensor, stride: Sizes, dilation: Sizes, groups: int,
                 transposed: bool) -> RuntimeError:
    """PyTorch's error for an input and a weight of different dtypes, which depends on the
    backend it picks: MKLDNN's check (a float32 CPU input, as PyTorch's ``use_mkldnn`` chooses
    for one thread), the generic one otherwise, or CUDA's."""
    if x.device.type != "cpu":
        return RuntimeError(f"Input type ({x.type()}) and weight type ({weight.type()}) should "
                            "be the same")
    n, kh, kw = x.shape[0], weight.shape[-2], weight.shape[-1]
    strided = any(s != 1 for s in stride) or any(d != 1 for d in dilation)
    mkldnn = x.dtype is float32 and (transposed or (
        (strided or n >= 16 or (kh, kw) != (1, 1)) and (
            groups > 1 or (kh > 3 and kw > 3) or n > 1 or x.numel() > 20480)))
    if mkldnn:
        return RuntimeError(f"Input type ({x.type()}) and weight type ({weight.type()}) should "
                            "be the same or input should be a MKLDNN tensor and weight is a dense "
                            "tensor")
    return RuntimeError(f"expected scalar type {scalar_type_name(x.dtype)} but found "
                        f"{scalar_type_name(weight.dtype)}")


_CONV_DOC = """{d}-D cross-correlation of ``input`` with ``weight`` (PyTorch's ``conv{d}d``).

    ``out[n, o, t] = bias[o] + sum_{{c, i}} weight[o, c, i] * input_padded[n, g * C/groups + c,
    stride * t + dilation * i]`` (``t``, ``i``: {d}-D positions) where ``g`` is the group of
    output channel ``o``. Computed as one batched matmul of the weight with the input's windows
    (im2col); recorded as ConvolutionBackward0.

    Args:
        input: ``(N, C, *spatial)`` or unbatched ``(C, *spatial)``, {d} spatial dimensions.
        weight: ``(O, C / groups, *kernel)``.
        bias: ``(O,)`` or None.
        stride, dilation: int or {d} ints. padding: int, {d} ints, 'valid' or 'same' (stride 1).
        groups: ``C`` and ``O`` are split into this many independent groups.

    Returns:
        ``(N, O, *out)`` with ``out = (size + 2 padding - dilation (k - 1) - 1) // stride + 1``.
    """

_CONV_T_DOC = """{d}-D transposed convolution (PyTorch's ``conv_transpose{d}d``): the gradient
    of ``conv{d}d`` with respect to its input, ``weight (C_in, C_out / groups, *kernel)`` scattering
    each input element's window into the output (col2im of one batched matmul); recorded as
    ConvolutionBackward0.

    Args:
        input: ``(N, C_in, *spatial)`` or unbatched ``(C_in, *spatial)``.
        stride, padding, output_padding, dilation: int or {d} ints; ``output_padding`` (smaller
        than the stride or the dilation) lengthens the output on the trailing side.

    Returns:
        ``(N, C_out, *out)`` with ``out = (size - 1) stride - 2 padding + dilation (k - 1) +
        output_padding + 1``.
    """


def conv1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    return _convolution("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    return _convolution("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
           stride: Any = 1, padding: Any = 0, dilation: Any = 1, groups: int = 1) -> Tensor:
    return _convolution("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    return _convolution("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation,
                        groups, True, output_padding)


def conv_transpose2d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    return _convolution("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation,
                        groups, True, output_padding)


def conv_transpose3d(input: Tensor, weight: Tensor, bias: Tensor | None = None,  # noqa: A002
                     stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
                     groups: int = 1, dilation: Any = 1) -> Tensor:
    return _convolution("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation,
                        groups, True, output_padding)


for _d, _fn in enumerate((conv1d, conv2d, conv3d), 1):
    _fn.__doc__ = _CONV_DOC.format(d=_d)
for _d, _fnt in enumerate((conv_transpose1d, conv_transpose2d, conv_transpose3d), 1):
    _fnt.__doc__ = _CONV_T_DOC.format(d=_d)
del _d, _fn, _fnt
