"""The dropout family of ``nn.functional`` beyond ``dropout``: channel-wise dropout
(``dropout1d``/``2d``/``3d``) and the SELU-preserving ``alpha_dropout`` and
``feature_alpha_dropout``.

Masks are drawn from autograd_gpu's generator (reproducible under ``manual_seed``, not PyTorch's
numbers). As PyTorch: the identity out of training, for ``p == 0`` and for empty inputs; ``p == 1``
multiplies by zero (NaN stays NaN).
"""

from __future__ import annotations

import math
import warnings

from .. import dtypes
from ..random import rand
from ..functions.checks import expect_tensor
from ..tensor import Tensor

__all__ = ["alpha_dropout", "dropout1d", "dropout2d", "dropout3d", "feature_alpha_dropout"]

# NOTE: SELU's alpha * scale: alpha dropout sets dropped units to -ALPHA (SELU's negative
# saturation) and then rescales so that the mean and variance stay 0 and 1.
_ALPHA = 1.7580993408473766


# NOTE: dropout1d/2d/3d read input.dim() first (a non-tensor raises AttributeError), the others
# type-check their input, as in PyTorch.
def _check_p(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _dropout(input: Tensor, p: float, training: bool, inplace: bool,  # noqa: A002
             feature: bool, alpha: bool, batched: bool = True) -> Tensor:
    """PyTorch's ``_dropout_impl``: ``x * mask / (1 - p)`` (or the alpha variant
    ``x * a * mask + alpha * a * (mask - 1 + p)``), the mask drawn per element or, with
    ``feature``, per sample and channel (the first two dimensions; the first only when not
    ``batched``, as PyTorch's unsqueezed unbatched input)."""
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        zero = input.new_zeros(())
        return input.mul_(zero) if inplace else input * zero
    lead = 2 if batched else 1
    if feature and input.dim() + (not batched) < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if not input.dtype.is_floating_point:
        raise RuntimeError("result type Float can't be cast to the desired output type "
                           f"{dtypes.scalar_type_name(input.dtype)}")
    shape = tuple(input.shape[:lead]) + (1,) * (input.dim() - lead) if feature else \
        tuple(input.shape)
    if input.device.type == "cuda" and not (feature or alpha or inplace):
        # NOTE: PyTorch's fused CUDA dropout (native_dropout): a bool mask from float32
        # uniforms, one node that keeps only the mask
        from ..ops.nn_ops import NativeDropout

        keep = rand(shape, device=input.device) < 1 - p
        return NativeDropout.apply(input, keep, scale=1.0 / (1 - p))
    # NOTE: PyTorch's draw (``bernoulli_(1 - p)`` of a new tensor: ``uniform64 < 1 - p`` per
    # element), so a seed gives PyTorch's masks; ``rand`` batches under vmap by the level's
    # randomness
    u = rand(shape, dtype=dtypes.float64, device=input.device)
    keep = (u < 1 - p).to(input.dtype)
    if not alpha:
        noise = keep.div_(1 - p)
        return input.mul_(noise) if inplace else input * noise
    a = 1.0 / math.sqrt((_ALPHA * _ALPHA * p + 1) * (1 - p))
    shift = (keep - 1).mul_(_ALPHA * a).add_(_ALPHA * a * p)
    noise = keep.mul_(a)
    return input.mul_(noise).add_(shift) if inplace else input * noise + shift


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` inputs with probability ``p`` and
    scale the rest by ``1 / (1 - p)``, in training.

    Raises:
        ValueError: ``p`` outside ``[0, 1]``.
        RuntimeError: an input of another rank.
    """
    _check_p(p)
    if input.dim() not in (2, 3):
        raise RuntimeError(
            f"dropout1d: Expected 2D or 3D input, but received a {input.dim()}D input. Note "
            "that dropout1d exists to provide channel-wise dropout on inputs with 1 spatial "
            "dimension, a channel dimension, and an optional batch dimension (i.e. 2D or 3D "
            "inputs)."
        )
    return _dropout(input, p, training, inplace, True, False, batched=input.dim() == 3)


def _rank_warning(name: str, ndim: int, spatial: int) -> None:
    ranks = f"{spatial + 1}D or {spatial + 2}D"
    warnings.warn(
        f"{name}: Received a {ndim}-D input to {name}, which is deprecated and will result in "
        f"an error in a future release. To retain the behavior and silence this warning, please "
        f"use dropout instead. Note that {name} exists to provide channel-wise dropout on inputs "
        f"with {spatial} spatial dimensions, a channel dimension, and an optional batch "
        f"dimension (i.e. {ranks} inputs).", UserWarning, stacklevel=3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, H, W)`` inputs with probability ``p`` and scale the rest
    by ``1 / (1 - p)``, in training.

    As PyTorch: other ranks warn (deprecated); a 3-D input is read as ``(N, C, L)`` (channel-wise
    1-D dropout, with a warning), not as an unbatched ``(C, H, W)``.
    """
    _check_p(p)
    ndim = input.dim()
    if ndim not in (3, 4):
        _rank_warning("dropout2d", ndim, 2)
    if ndim == 3:
        warnings.warn(
            "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
            "dropout behavior is desired - input is interpreted as shape (N, C, L), where C is "
            "the channel dim. This behavior will change in a future release to interpret the "
            "input as one without a batch dimension, i.e. shape (C, H, W). To maintain the 1D "
            "channel-wise dropout behavior, please switch to using dropout1d instead.",
            UserWarning, stacklevel=2)
    return _dropout(input, p, training, inplace, True, False)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs with probability
    ``p`` and scale the rest by ``1 / (1 - p)``, in training. Other ranks warn (deprecated); as
    PyTorch, any rank but 5 is read as unbatched."""
    _check_p(p)
    ndim = input.dim()
    if ndim not in (4, 5):
        _rank_warning("dropout3d", ndim, 3)
    return _dropout(input, p, training, inplace, True, False, batched=ndim == 5)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                  inplace: bool = False) -> Tensor:
    """Dropout for SELU networks: dropped elements become ``-alpha'`` (SELU's saturation value)
    and an affine map restores zero mean and unit variance, per element. Note PyTorch's default
    ``training=False``."""
    _check_p(p)
    expect_tensor("alpha_dropout", "input", 1, input)
    return _dropout(input, p, training, inplace, False, True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                          inplace: bool = False) -> Tensor:
    """``alpha_dropout`` of whole channels (dimension 1) of ``(N, C, *)`` inputs."""
    _check_p(p)
    expect_tensor("feature_alpha_dropout", "input", 1, input)
    return _dropout(input, p, training, inplace, True, True)
