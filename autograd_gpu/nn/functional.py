"""``torch.nn.functional``: layers and losses as functions of tensors.

Most are compositions of tensor ops; the activations and losses that PyTorch records as one node
(``GeluBackward0``, ``NllLossBackward0``, ...) are ops in ``ops/nn_ops.py``. Either way the
gradients, and gradients of gradients, come from autograd.
"""

from __future__ import annotations

import warnings
from typing import Any, Sequence

from ..creation import arange
from ..dtypes import int64
from ..functions import addmm
from ..functions import inplace as _inplace
from ..functions.checks import expect_tensor
from ..ops import nn_ops
from ..tensor import Tensor
from ._f_dropout import _dropout

__all__ = [
    "dropout", "elu", "elu_", "gelu", "leaky_relu", "leaky_relu_", "linear", "log_softmax",
    "one_hot", "pad", "relu", "sigmoid", "silu", "softmax", "softplus", "tanh",
]


# ---- linear --------------------------------------------------------------------------------

def linear(input: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input @ weight.T + bias``.

    A 2-D input with a bias is one ``addmm`` (AddmmBackward0, as in PyTorch); other inputs are
    folded to 2-D, multiplied, and viewed back to ``(*input.shape[:-1], out_features)``.

    Args:
        input: ``(*, in_features)``.
        weight: ``(out_features, in_features)``.
        bias: ``(out_features,)`` or None.

    Returns:
        ``(*, out_features)``.

    Example:
        >>> linear(ones(2, 3), ones(4, 3), zeros(4)).shape
        torch.Size([2, 4])
    """
    expect_tensor("linear", "input", 1, input)
    expect_tensor("linear", "weight", 2, weight)
    expect_tensor("linear", "bias", 3, bias, optional=True)
    w_t = weight.t()
    if input.dim() == 2:
        return input.mm(w_t) if bias is None else addmm(bias, input, w_t)
    if bias is None:
        return input.matmul(w_t)
    lead = tuple(input.shape[:-1])
    out = addmm(bias, input.reshape(-1, input.shape[-1]), w_t)
    return out.view(*lead, out.shape[-1])


# ---- activations ---------------------------------------------------------------------------

def relu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``max(x, 0)`` element-wise; the gradient at 0 is 0, as in PyTorch."""
    expect_tensor("relu_" if inplace else "relu", "input", 1, input)
    return input.relu_() if inplace else input.relu()


def leaky_relu(input: Tensor, negative_slope: float = 0.01,  # noqa: A002
               inplace: bool = False) -> Tensor:
    """``x`` where ``x > 0``, else ``negative_slope * x``.

    Example:
        >>> leaky_relu(tensor([-2.0, 3.0]), 0.1)
        tensor([-0.2000,  3.0000])
    """
    if inplace:
        return leaky_relu_(input, negative_slope)
    expect_tensor("leaky_relu", "input", 1, input)
    return nn_ops.LeakyRelu.apply(input, negative_slope=negative_slope)


def leaky_relu_(input: Tensor, negative_slope: float = 0.01) -> Tensor:  # noqa: A002
    """``leaky_relu`` in place (LeakyReluBackward1, which saves the result: a later in-place
    write to ``input`` makes backward refuse; a negative slope is refused in backward)."""
    expect_tensor("leaky_relu_", "input", 1, input)
    return _inplace(input, _leaky_relu_result, negative_slope)


def _leaky_relu_result(input: Tensor, negative_slope: float) -> Tensor:  # noqa: A002
    return nn_ops.LeakyReluResult.apply(input, negative_slope=negative_slope)  # type: ignore[no-any-return]


def gelu(input: Tensor, approximate: str = "none") -> Tensor:  # noqa: A002
    """``x * Phi(x)`` with ``Phi`` the standard normal CDF (``approximate='none'``), or
    ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`` (``approximate='tanh'``)."""
    expect_tensor("gelu", "input", 1, input)
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    return nn_ops.Gelu.apply(input, approximate=approximate)


def silu(input: Tensor, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x * sigmoid(x)`` (also called swish)."""
    expect_tensor("silu_" if inplace else "silu", "input", 1, input)
    if inplace:
        return _inplace(input, silu)
    return nn_ops.Silu.apply(input)


def elu(input: Tensor, alpha: float = 1.0, inplace: bool = False) -> Tensor:  # noqa: A002
    """``x`` where ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    if inplace:
        return elu_(input, alpha)
    expect_tensor("elu", "input", 1, input)
    return nn_ops.Elu.apply(input, alpha=alpha)


def elu_(input: Tensor, alpha: float = 1.0) -> Tensor:  # noqa: A002
    """``elu`` in place (EluBackward1, which saves the result: a later in-place write to
    ``input`` makes backward refuse; a negative ``alpha`` is refused in backward)."""
    expect_tensor("elu_", "input", 1, input)
    return _inplace(input, _elu_result, alpha)


def _elu_result(input: Tensor, alpha: float) -> Tensor:  # noqa: A002
    return nn_ops.EluResult.apply(input, alpha=alpha)  # type: ignore[no-any-return]


def softplus(input: Tensor, beta: float = 1.0, threshold: float = 20.0) -> Tensor:  # noqa: A002
    """``log(1 + exp(beta x)) / beta``, and ``x`` itself where ``beta x > threshold``.

    Computed as ``(max(bx, 0) + log1p(exp(-|bx|))) / beta``, which never overflows.
    """
    expect_tensor("softplus", "input", 1, input)
    return nn_ops.Softplus.apply(input, beta=beta, threshold=threshold)


def sigmoid(input: Tensor) -> Tensor:  # noqa: A002
    """``1 / (1 + exp(-x))`` element-wise."""
    return input.sigmoid()


def tanh(input: Tensor) -> Tensor:  # noqa: A002
    """Hyperbolic tangent element-wise."""
    return input.tanh()


def _softmax_dim(name: str, ndim: int, stacklevel: int) -> int:
    warnings.warn(
        f"Implicit dimension choice for {name} has been deprecated. Change the call to include "
        "dim=X as an argument.",
        UserWarning,
        stacklevel=stacklevel,
    )
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
            dtype: Any = None) -> Tensor:
    """``exp(x) / exp(x).sum(dim)``, computed stably (the max is subtracted first)."""
    if dim is None:
        dim = _softmax_dim("softmax", input.dim(), _stacklevel)
    return input.softmax(dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int | None = None, _stacklevel: int = 3,  # noqa: A002
                dtype: Any = None) -> Tensor:
    """``x - logsumexp(x, dim)``, computed stably."""
    if dim is None:
        dim = _softmax_dim("log_softmax", input.dim(), _stacklevel)
    return input.log_softmax(dim, dtype=dtype)


# ---- dropout -------------------------------------------------------------------------------

def dropout(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
            inplace: bool = False) -> Tensor:
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``, in
    training; the identity otherwise (and for ``p == 0``).

    Raises:
        ValueError: ``p`` outside ``[0, 1]``.
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    expect_tensor("dropout_" if inplace else "dropout", "input", 1, input)
    return _dropout(input, p, training, inplace, feature=False, alpha=False)


# ---- one_hot and pad -----------------------------------------------------------------------

def one_hot(tensor: Tensor, num_classes: int = -1) -> Tensor:
    """Class indices (int64, any shape) to one-hot vectors of length ``num_classes`` in a new
    last dimension (int64). ``num_classes=-1`` means ``max + 1``."""
    expect_tensor("one_hot", "input", 1, tensor)
    if tensor.dtype is not int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if num_classes == -1:
        if tensor.numel() == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(tensor.max()) + 1
    if tensor.numel():
        # NOTE: compared as arrays, one bool read back: a compiled step's replay checks that
        # bool, which holds from batch to batch, where the extremes change
        d = tensor._data
        too_big, negative = d.max() >= num_classes, d.min() < 0
        if bool(too_big | negative):
            if bool(too_big):
                raise RuntimeError("Class values must be smaller than num_classes.")
            raise RuntimeError("Class values must be non-negative.")
    classes = arange(num_classes, device=tensor.device)
    return (tensor.unsqueeze(-1) == classes).long()


def pad(input: Tensor, pad: Sequence[int], mode: str = "constant",  # noqa: A002
        value: float | None = None) -> Tensor:
    """Pad the last ``len(pad) // 2`` dimensions with ``value``: ``pad = (left_last,
    right_last, left_second_last, ...)``; negative amounts crop.

    ``mode`` 'reflect', 'replicate' and 'circular' pad 1 to 3 trailing dimensions of a batched
    or unbatched input by mirroring, repeating the edge, or wrapping (``padding.pad_modes``).
    """
    expect_tensor("pad", "input", 1, input)
    if mode not in ("constant", "reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if mode != "constant":
        if value is not None and value != 0:
            raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
        from .padding import pad_modes  # NOTE: late: padding.py imports this module

        return pad_modes(input, pad, mode)
    if len(pad) // 2 > input.dim():
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {input.dim()}"
        )
    return nn_ops.ConstantPadNd.apply(input, pad=tuple(int(p) for p in pad),
                                      value=0 if value is None else value)


# ---- the families: one module each, listing its names in __all__ (imported last, so that they
# may build on the functions above) -------------------------------------------------------------
from . import _attention, _conv, _f_activation, _f_dropout, _f_misc, _losses, _losses2  # noqa: E402
from . import _normalization, _pool, _vision  # noqa: E402
from ._attention import *  # noqa: E402,F401,F403
from ._conv import *  # noqa: E402,F401,F403
from ._f_activation import *  # noqa: E402,F401,F403
from ._f_dropout import *  # noqa: E402,F401,F403
from ._f_misc import *  # noqa: E402,F401,F403
from ._losses import *  # noqa: E402,F401,F403
from ._losses2 import *  # noqa: E402,F401,F403
from ._normalization import *  # noqa: E402,F401,F403
from ._pool import *  # noqa: E402,F401,F403
from ._vision import *  # noqa: E402,F401,F403

FAMILIES = (_attention, _conv, _f_activation, _f_dropout, _f_misc, _losses, _losses2,
            _normalization, _pool, _vision)
for _family in FAMILIES:
    __all__ += _family.__all__
