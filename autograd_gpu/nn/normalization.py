"""The normalisation modules: ``LayerNorm``, ``GroupNorm``, ``RMSNorm``, the batch and instance
norms, ``LocalResponseNorm`` and ``CrossMapLRN2d``."""

from __future__ import annotations

import warnings
from typing import Any

from ..creation import arange, empty, ones, tensor, zeros
from ..dtypes import int64
from ..tensor import Tensor
from . import init
from ._normalization import (_channel_window_sum, batch_norm, group_norm, instance_norm,
                             layer_norm, local_response_norm, rms_norm)
from .module import Module
from .parameter import Parameter

__all__ = ["BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "CrossMapLRN2d", "GroupNorm",
           "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "LayerNorm", "LocalResponseNorm",
           "RMSNorm", "SyncBatchNorm"]


def _affine_parameters(m: Module, shape: tuple[int, ...], affine: bool, bias: bool,
                       device: Any, dtype: Any) -> None:
    """``weight`` (and ``bias`` unless ``bias=False``) of ``shape`` when ``affine``; else both
    registered as None (PyTorch's names either way)."""
    m.register_parameter("weight", Parameter(empty(*shape, device=device, dtype=dtype))
                         if affine else None)
    m.register_parameter("bias", Parameter(empty(*shape, device=device, dtype=dtype))
                         if affine and bias else None)


def _reset_affine(m: Module) -> None:
    """Ones for ``weight``, zeros for ``bias``, where they exist."""
    if m.weight is not None:
        init.ones_(m.weight)
    if m.bias is not None:
        init.zeros_(m.bias)


class LayerNorm(Module):
    """``(x - mean) / sqrt(var + eps) * weight + bias`` over the trailing ``normalized_shape``.

    ``weight`` starts at ones and ``bias`` at zeros (both absent with
    ``elementwise_affine=False``; ``bias=False`` drops the bias only).

    Example:
        >>> LayerNorm(4)(randn(2, 4)).shape
        torch.Size([2, 4])
    """

    def __init__(self, normalized_shape: Any, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class _BatchNorm(Module):
    """Shared by ``BatchNorm1d`` and ``BatchNorm2d``: parameters ``weight`` (ones) and ``bias``
    (zeros) when ``affine``; buffers ``running_mean`` (zeros), ``running_var`` (ones) and
    ``num_batches_tracked`` (int64) when ``track_running_stats``.

    In training, normalises with the batch statistics and updates the running ones with
    ``momentum`` (``None``: the cumulative average, factor ``1 / num_batches_tracked``); in eval
    mode, normalises with the running statistics (or the batch ones if none are tracked).
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = Parameter(empty(num_features, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(empty(num_features, device=device, dtype=dtype))
            else:
                self.register_parameter("bias", None)
        else:
            self.register_parameter("weight", None)
            self.register_parameter("bias", None)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, device=device, dtype=dtype))
            self.register_buffer("running_var", ones(num_features, device=device, dtype=dtype))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=int64, device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            self.running_mean.zero_()
            self.running_var.fill_(1)
            self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        if self.affine:
            init.ones_(self.weight)
            if self.bias is not None:
                init.zeros_(self.bias)

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        raise NotImplementedError

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        self._check_input_dim(input)
        factor: Any = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            self.num_batches_tracked.add_(1)
            if self.momentum is None:
                # NOTE: the counter itself: ``NativeBatchNorm`` takes 1 / count on the device
                # (PyTorch's ``1.0 / float(num_batches_tracked)``, the same value) rather than
                # reading it back to Python (a sync on CUDA; in a compiled step, a value that
                # changes every call)
                factor = self.num_batches_tracked
        # NOTE: eval mode without running statistics normalises with the batch ones.
        bn_training = self.training or (self.running_mean is None and self.running_var is None)
        use_running = not self.training or self.track_running_stats
        return batch_norm(input, self.running_mean if use_running else None,
                          self.running_var if use_running else None, self.weight, self.bias,
                          bn_training, factor, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class BatchNorm1d(_BatchNorm):
    """Batch normalisation of ``(N, C)`` or ``(N, C, L)`` inputs, per channel ``C``."""

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.dim()}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch normalisation of ``(N, C, H, W)`` inputs, per channel ``C``."""

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() != 4:
            raise ValueError(f"expected 4D input (got {input.dim()}D input)")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation of ``(N, C, D, H, W)`` inputs, per channel ``C``."""

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation of ``(N, C, *)`` inputs synchronised across processes.

    autograd_gpu has no process groups: as PyTorch without an initialised process group (or with
    one process), it normalises exactly as ``BatchNorm`` with this process's batch.
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True,
                 process_group: Any = None, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    @classmethod
    def convert_sync_batchnorm(cls, module: Module, process_group: Any = None) -> Module:
        """``module`` with every batch norm in it (itself included) replaced by a
        ``SyncBatchNorm`` sharing its parameters and buffers."""
        out = module
        if isinstance(module, _BatchNorm):
            out = cls(module.num_features, module.eps, module.momentum, module.affine,
                      module.track_running_stats, process_group,
                      bias=module.bias is not None)
            if module.affine:
                out.weight = module.weight
                out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


class _InstanceNorm(_BatchNorm):
    """Shared by the instance norms: as ``_BatchNorm`` (same parameters, buffers and repr) with
    PyTorch's defaults ``affine=False``, ``track_running_stats=False``; statistics per sample and
    channel. ``num_batches_tracked`` is never advanced, and ``momentum=None`` means 0 (the running
    statistics stay put), as in PyTorch."""

    _no_batch_dim = 0

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device: Any = None,
                 dtype: Any = None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device, dtype,
                         bias=bias)

    def _load_from_state_dict(self, state_dict: dict[str, Any], prefix: str, assign: bool,
                              missing: list[str], unexpected: list[str],
                              errors: list[str]) -> None:
        # NOTE: PyTorch refuses running statistics for an instance norm that does not track them
        # when the state_dict carries no version (pre-0.4 checkpoints, and plain dicts); our
        # loader passes no metadata, so every such state_dict is treated as version-less.
        if not self.track_running_stats:
            keys = [prefix + n for n in ("running_mean", "running_var") if prefix + n in state_dict]
            if keys:
                klass = type(self).__name__
                names = " and ".join(f'"{k}"' for k in keys)
                errors.append(
                    f"Unexpected running stats buffer(s) {names} for {klass} with "
                    "track_running_stats=False. If state_dict is a checkpoint saved before "
                    f"0.4.0, this may be expected because {klass} does not track running stats "
                    "by default since 0.4.0. Please remove these keys from state_dict. If the "
                    "running stats are actually needed, instead set track_running_stats=True in "
                    f"{klass} to enable them. See the documentation of {klass} for details.")
                for key in keys:
                    state_dict.pop(key)
        super()._load_from_state_dict(state_dict, prefix, assign, missing, unexpected, errors)

    def _check_input_dim(self, input: Tensor) -> None:  # noqa: A002
        dims = (self._no_batch_dim, self._no_batch_dim + 1)
        if input.dim() not in dims:
            raise ValueError(f"expected {dims[0]}D or {dims[1]}D input (got {input.dim()}D "
                             "input)")

    def _apply_instance_norm(self, input: Tensor) -> Tensor:  # noqa: A002
        return instance_norm(input, self.running_mean, self.running_var, self.weight, self.bias,
                             self.training or not self.track_running_stats,
                             0.0 if self.momentum is None else self.momentum, self.eps)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        self._check_input_dim(input)
        feature_dim = input.dim() - self._no_batch_dim
        if input.size(feature_dim) != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.size(feature_dim)}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is "
                          "not used because affine=False", stacklevel=2)
        if input.dim() == self._no_batch_dim:
            return self._apply_instance_norm(input.unsqueeze(0)).squeeze(0)
        return self._apply_instance_norm(input)


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of ``(N, C, L)`` or ``(C, L)`` inputs."""

    _no_batch_dim = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of ``(N, C, H, W)`` or ``(C, H, W)`` inputs."""

    _no_batch_dim = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` inputs."""

    _no_batch_dim = 4


class GroupNorm(Module):
    """Group normalisation: the ``num_channels`` channels split into ``num_groups`` groups, each
    normalised per sample; ``weight`` (ones) and ``bias`` (zeros) per channel when ``affine``.

    Raises:
        ValueError: ``num_channels`` not divisible by ``num_groups``.
    """

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        _affine_parameters(self, (num_channels,), affine, bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class RMSNorm(Module):
    """``x / sqrt(mean(x**2) + eps) * weight`` over the trailing ``normalized_shape``;
    ``weight`` starts at ones (absent with ``elementwise_affine=False``); ``eps=None`` means the
    machine epsilon of the computing dtype."""

    def __init__(self, normalized_shape: Any, eps: float | None = None,
                 elementwise_affine: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(*self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x: Tensor) -> Tensor:
        return rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """``local_response_norm`` over neighbouring channels (see there)."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class CrossMapLRN2d(Module):
    """The legacy cross-channel LRN of ``(N, C, H, W)`` inputs:
    ``x * (k + alpha / size * s) ** -beta`` with ``s`` the sum of squares over the channels
    ``[c - p + 1, c + p - 1]``, ``p = int((size - 1) / 2 + 1)`` (and channel 0 for every
    ``c >= p``, as PyTorch computes it).
    """

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1) -> None:
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        # NOTE: the values are PyTorch's, quirk included: its running sum never drops channel 0,
        # so every channel c >= p also counts x[:, 0] ** 2. PyTorch's hand-written backward is not
        # the derivative of that forward (its gradcheck fails; it raises for size=1); ours is
        # (composed of tensor ops: gradcheck and double backward hold), so gradients differ.
        p = int((self.size - 1) / 2 + 1)
        sq = input * input
        scale = _channel_window_sum(sq, p - 1, p - 1, 2 * p - 1)
        late = (arange(input.shape[1], device=input.device) >= p).view(-1, 1, 1)
        scale = scale + sq[:, :1] * late.to(sq.dtype)
        return input * (scale * (self.alpha / self.size) + self.k).pow(-self.beta)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
