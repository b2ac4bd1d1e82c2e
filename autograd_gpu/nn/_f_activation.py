"""Activation functions of ``nn.functional`` beyond those in ``functional.py``: the hard and
shrinking ones, ``mish``, ``selu``/``celu``, ``prelu``/``rrelu``, ``glu``, ``logsigmoid``,
``threshold``, ``softmin``, ``gumbel_softmax`` and the in-place forms PyTorch has
(``relu_``, ``hardtanh_``, ``selu_``, ``celu_``, ``rrelu_``, ``threshold_``).

Each records the node PyTorch records (``HardtanhBackward0``, ``CeluBackward1``, ...); the
in-place forms that PyTorch differentiates from their output save the output (``...Backward1``).
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..functions import inplace as _inplace
from ..functions.checks import expect_tensor
from ..functions.sampling_inplace import exponential_, uniform_
from ..ops import nn_activation as A
from ..ops.util import normalize_dim
from ..tensor import Tensor
from .functional import _softmax_dim

__all__ = [
    "celu", "celu_", "glu", "gumbel_softmax", "hardshrink", "hardsigmoid", "hardswish",
    "hardtanh", "hardtanh_", "logsigmoid", "mish", "prelu", "relu6", "relu_", "rrelu", "rrelu_",
    "selu", "selu_", "softmin", "softshrink", "softsign", "tanhshrink", "threshold",
    "threshold_",
]

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _float_only(kernel: str, input: Tensor) -> None:  # noqa: A002
    """PyTorch's dispatch error for a kernel defined on floating types only.

    NOTE: PyTorch names the CPU kernel (``"mish_cpu"``); the CUDA one says ``_cuda``. We say
    ``_cpu`` on every device, so that the messages compare with the CPU oracle."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(input.dtype)}'")


# ---- relu6 / hardtanh ------------------------------------------------------------------------

def relu_(input: Tensor) -> Tensor:  # noqa: A002
    """``relu`` in place."""
    expect_tensor("relu_", "input", 1, input)
    return input.relu_()


def hardtanh(input: Tensor, min_val: float = -1.0, max_val: float = 1.0,  # noqa: A002
             inplace: bool = False) -> Tensor:
    """``clamp(x, min_val, max_val)``; the gradient is 1 strictly between the bounds.

    Raises:
        ValueError: ``min_val > max_val``.
    """
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        return hardtanh_(input, min_val, max_val)
    expect_tensor("hardtanh", "input", 1, input)
    return A.Hardtanh.apply(input, lo=min_val, hi=max_val)  # type: ignore[no-any-return]


def _hardtanh(input: Tensor, lo: float, hi: float) -> Tensor:  # noqa: A002
    return A.Hardtanh.apply(input, lo=lo, hi=hi)  # type: ignore[no-any-return]


def hardtanh_(input: Tensor, min_val: float = -1.0, max_val: float = 1.0) -> Tensor:  # noqa: A002
    """``hardtanh`` in place (recorded as HardtanhBackward0, as in PyTorch)."""
    expect_tensor("hardtanh_", "input", 1, input)
    return _inplace(input, _hardtanh, min_val, max_val)


def relu6(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``min(max(x, 0), 6)``: ``hardtanh(x, 0, 6)`` (HardtanhBackward0, as in PyTorch)."""
    return hardtanh(input, 0.0, 6.0, inplace)


# ---- hardsigmoid / hardswish / mish / logsigmoid ------------------------------------------------

def _unary(name: str, kernel: str, node: Any, input: Tensor, inplace: bool,  # noqa: A002
           **params: Any) -> Tensor:
    expect_tensor(name + ("_" if inplace else ""), "input", 1, input)
    _float_only(kernel, input)
    if inplace:
        return _inplace(input, lambda x: node.apply(x, **params))
    return node.apply(input, **params)  # type: ignore[no-any-return]


def hardsigmoid(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``min(max(x + 3, 0), 6) / 6``; gradient ``1/6`` on ``(-3, 3)``, else 0."""
    return _unary("hardsigmoid", "hardsigmoid_cpu", A.Hardsigmoid, input, inplace)


def hardswish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * min(max(x + 3, 0), 6) / 6``."""
    return _unary("hardswish", "hardswish_cpu", A.Hardswish, input, inplace)


def mish(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * tanh(softplus(x))``."""
    return _unary("mish", "mish_cpu", A.Mish, input, inplace)


def logsigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """``log(sigmoid(x))``, computed as ``min(x, 0) - log1p(exp(-|x|))`` (never overflows)."""
    return _unary("log_sigmoid", "log_sigmoid_cpu", A.LogSigmoid, input, False)


def softsign(input: Tensor) -> Tensor:  # noqa: A002
    """``x / (1 + |x|)`` (a composite: DivBackward0, as in PyTorch)."""
    return input / (input.abs() + 1)


def tanhshrink(input: Tensor) -> Tensor:  # noqa: A002
    """``x - tanh(x)`` (a composite: SubBackward0, as in PyTorch)."""
    return input - input.tanh()


# ---- selu / celu -----------------------------------------------------------------------------

def _elu(input: Tensor, result: bool, alpha: float, scale: float, input_scale: float,  # noqa: A002
         name: str) -> Tensor:
    node = A.EluScaledResult if result else A.EluScaled
    # NOTE: celu's derivative in PyTorch divides by alpha rounded to float32.
    grad_scale = 1.0 / float(np.float32(alpha)) if name.startswith("Celu") else input_scale
    return node.apply(input, alpha=alpha, scale=scale, input_scale=input_scale,  # type: ignore[no-any-return]
                      name=name, grad_input_scale=grad_scale)


def selu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``scale * elu(x, alpha)`` with PyTorch's constants (EluBackward0; in place EluBackward1)."""
    if inplace:
        return selu_(input)
    expect_tensor("selu", "input", 1, input)
    _float_only("elu_cpu", input)
    return _elu(input, False, SELU_ALPHA, SELU_SCALE, 1.0, "EluBackward0")


def selu_(input: Tensor) -> Tensor:  # noqa: A002
    """``selu`` in place (EluBackward1, which differentiates from the output)."""
    expect_tensor("selu_", "input", 1, input)
    _float_only("elu_cpu", input)
    return _inplace(input, _elu, True, SELU_ALPHA, SELU_SCALE, 1.0, "EluBackward1")


def _celu_alpha(alpha: float) -> None:
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")


def celu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`` (CeluBackward0).

    Raises:
        RuntimeError: ``alpha == 0``.
    """
    if inplace:
        return celu_(input, alpha)
    expect_tensor("celu", "input", 1, input)
    _celu_alpha(alpha)
    _float_only("elu_cpu", input)
    return _elu(input, False, alpha, 1.0, 1.0 / alpha, "CeluBackward0")


def celu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """``celu`` in place (CeluBackward1, which differentiates from the output)."""
    expect_tensor("celu_", "input", 1, input)
    _celu_alpha(alpha)
    _float_only("elu_cpu", input)
    return _inplace(input, _elu, True, alpha, 1.0, 1.0 / alpha, "CeluBackward1")


# ---- prelu / rrelu ---------------------------------------------------------------------------

def prelu(input: Tensor, weight: Tensor) -> Tensor:  # noqa: A002
    """``x`` where ``x > 0``, else ``weight * x``; ``weight`` holds one slope, or one per
    channel (dim 1 of the input) (PreluKernelBackward0).

    Raises:
        RuntimeError: ``weight`` of more than one dimension, or a count that is neither 1 nor
            the channel count.
    """
    expect_tensor("prelu", "input", 1, input)
    expect_tensor("prelu", "weight", 2, weight)
    if weight.dim() > 1:
        raise RuntimeError("prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.dim()}")
    channels = input.shape[1] if input.dim() >= 2 else 1
    n = weight.numel()
    if n != 1 and n != channels:
        raise RuntimeError("Mismatch of parameter numbers and input channel size. Found parameter "
                           f"numbers = {n} and channel size = {channels}.")
    return A.PreluKernel.apply(input, weight)  # type: ignore[no-any-return]


def _rrelu_noise(input: Tensor, lower: float, upper: float, training: bool) -> Any:  # noqa: A002
    """The slope of each element: 1 where ``x > 0``; elsewhere drawn from ``U(lower, upper)`` on
    our generator (training) or their mean (eval)."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    with no_grad():
        x = input.detach()
        if training:
            slopes = uniform_(x.new_empty(tuple(x.shape)), lower, upper)
        else:
            slopes = x.new_full(tuple(x.shape), (lower + upper) / 2)
        return slopes.masked_fill(x > 0, 1.0)._data


def rrelu(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
          training: bool = False, inplace: bool = False) -> Tensor:
    """Randomised leaky relu: negative inputs scaled by a slope drawn from ``U(lower, upper)``
    per element in training, by ``(lower + upper) / 2`` otherwise (RreluWithNoiseBackward0)."""
    if inplace:
        return rrelu_(input, lower, upper, training)
    expect_tensor("rrelu", "input", 1, input)
    _float_only("rrelu_with_noise_out_cpu", input)
    noise = _rrelu_noise(input, lower, upper, training)
    return A.RreluWithNoise.apply(input, noise=noise)  # type: ignore[no-any-return]


def rrelu_(input: Tensor, lower: float = 1.0 / 8, upper: float = 1.0 / 3,  # noqa: A002
           training: bool = False) -> Tensor:
    """``rrelu`` in place (RreluWithNoiseBackward1)."""
    expect_tensor("rrelu_", "input", 1, input)
    _float_only("rrelu_with_noise_out_cpu", input)
    noise = _rrelu_noise(input, lower, upper, training)
    return _inplace(input, lambda x: A.RreluWithNoiseResult.apply(x, noise=noise))


# ---- glu / shrink / threshold ----------------------------------------------------------------

def glu(input: Tensor, dim: int = -1) -> Tensor:  # noqa: A002
    """``a * sigmoid(b)`` with ``a, b`` the first and second halves of ``input`` along ``dim``.

    Raises:
        RuntimeError: a 0-d input, or an odd size along ``dim``.
    """
    expect_tensor("glu", "input", 1, input)
    if input.dim() == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = normalize_dim(dim, input.dim())
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    _float_only("glu_cpu", input)
    return A.Glu.apply(input, dim=d)  # type: ignore[no-any-return]


def _lambda_range(input: Tensor, lambd: float) -> None:  # noqa: A002
    if lambd < 0:
        top = {"float16": "65504", "float32": "3.40282e+38"}.get(input.dtype.name, "1.79769e+308")
        raise RuntimeError(f"lambda must be in range [0, {top}] for input dtype "
                           f"{dtypes.scalar_type_name(input.dtype)}, but found {lambd:g}")


def softshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    Raises:
        RuntimeError: ``lambd < 0``.
    """
    expect_tensor("softshrink", "input", 1, input)
    _float_only("softshrink_check", input)
    _lambda_range(input, lambd)
    return A.Softshrink.apply(input, lambd=lambd)  # type: ignore[no-any-return]


def hardshrink(input: Tensor, lambd: float = 0.5) -> Tensor:  # noqa: A002
    """``x`` outside ``[-lambd, lambd]``, else 0."""
    expect_tensor("hardshrink", "input", 1, input)
    _float_only("hardshrink_cpu", input)
    return A.Hardshrink.apply(input, lambd=lambd)  # type: ignore[no-any-return]


def threshold(input: Tensor, threshold: float, value: float,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """``value`` where ``x <= threshold``, else ``x`` (ThresholdBackward0; in place
    ThresholdBackward1, whose mask comes from the output, as PyTorch's)."""
    if inplace:
        return threshold_(input, threshold, value)
    expect_tensor("threshold", "input", 1, input)
    return A.Threshold.apply(input, threshold=threshold, value=value)  # type: ignore[no-any-return]


def threshold_(input: Tensor, threshold: float, value: float) -> Tensor:  # noqa: A002
    """``threshold`` in place."""
    expect_tensor("threshold_", "input", 1, input)
    return _inplace(input, lambda x: A.ThresholdResult.apply(x, threshold=threshold, value=value))


# ---- softmin / gumbel_softmax ----------------------------------------------------------------

def softmin(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype: Any = None) -> Tensor:
    """``softmax(-x, dim)`` (an implicit dim is deprecated, as in PyTorch)."""
    if dim is None:
        dim = _softmax_dim("softmin", input.dim(), _stacklevel)
    return (-input).softmax(dim, dtype=dtype)


def gumbel_softmax(logits: Tensor, tau: float = 1, hard: bool = False, eps: float = 1e-10,
                   dim: int = -1) -> Tensor:
    """``softmax((logits + g) / tau, dim)`` with ``g`` Gumbel(0, 1) noise drawn on our generator
    (``-log(Exp(1))``). ``hard=True`` returns the one-hot of the argmax with the soft sample's
    gradient (straight-through: ``y_hard - y_soft.detach() + y_soft``)."""
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    with no_grad():
        gumbels = -exponential_(logits.new_empty(tuple(logits.shape))).log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = logits.new_zeros(tuple(logits.shape)).scatter_(dim, index, 1.0)  # type: ignore[attr-defined]
    return y_hard - y_soft.detach() + y_soft
