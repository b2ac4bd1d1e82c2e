"""Activation modules: thin wrappers of ``nn.functional``, with PyTorch's reprs."""

from __future__ import annotations

import warnings
from typing import Any

from ..creation import empty
from ..tensor import Tensor
from . import functional as F
from . import init as _init
from .adaptive import AdaptiveLogSoftmaxWithLoss
from .module import Module
from .parameter import Parameter

# NOTE: AdaptiveLogSoftmaxWithLoss lives in adaptive.py (PyTorch's nn.modules.adaptive) and is
# listed here because nn gathers a fixed list of family modules.
__all__ = [
    "AdaptiveLogSoftmaxWithLoss", "CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid",
    "Hardswish", "Hardtanh", "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "PReLU", "ReLU", "ReLU6", "RReLU", "SELU",
    "Sigmoid", "SiLU", "Softmax", "Softmax2d", "Softmin", "Softplus", "Softshrink", "Softsign",
    "Tanh", "Tanhshrink", "Threshold",
]

class _Inplace(Module):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class ReLU(_Inplace):
    """``max(x, 0)``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.relu(input, inplace=self.inplace)


class SiLU(_Inplace):
    """``x * sigmoid(x)``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.silu(input, inplace=self.inplace)


class LeakyReLU(Module):
    """``x`` for ``x > 0``, else ``negative_slope * x``."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope, self.inplace = negative_slope, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace else "")


class ELU(Module):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class GELU(Module):
    """``x * Phi(x)``, exact (``approximate='none'``) or with the tanh approximation."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class Softplus(Module):
    """``log(1 + exp(beta x)) / beta`` (linear above ``threshold``)."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Sigmoid(Module):
    """``1 / (1 + exp(-x))``."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.sigmoid()


class Tanh(Module):
    """Hyperbolic tangent."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return input.tanh()


class Softmax(Module):
    """Softmax along ``dim`` (an implicit dim is deprecated, as in PyTorch)."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """Log-softmax along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


def _inplace_str(inplace: bool) -> str:
    return ", inplace=True" if inplace else ""


class Hardtanh(Module):
    """``clamp(x, min_val, max_val)``; ``min_value``/``max_value`` are deprecated spellings."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: float | None = None, max_value: float | None = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val, self.max_val, self.inplace = min_val, max_val, inplace
        assert self.max_val > self.min_val  # NOTE: PyTorch's check, an AssertionError

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + _inplace_str(self.inplace)


class ReLU6(Hardtanh):
    """``min(max(x, 0), 6)``."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""


class _InplaceSilent(Module):
    """An activation with ``inplace`` that its repr does not show (as PyTorch's)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace


class Hardsigmoid(_InplaceSilent):
    """``min(max(x + 3, 0), 6) / 6``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardsigmoid(input, self.inplace)


class Hardswish(_InplaceSilent):
    """``x * min(max(x + 3, 0), 6) / 6``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardswish(input, self.inplace)


class Mish(_Inplace):
    """``x * tanh(softplus(x))``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.mish(input, self.inplace)


class SELU(_Inplace):
    """``scale * elu(x, alpha)`` with PyTorch's self-normalising constants."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.selu(input, self.inplace)


class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + _inplace_str(self.inplace)


class PReLU(Module):
    """``x`` for ``x > 0``, else ``weight * x``: one learnt slope, or one per channel
    (``num_parameters``), all initialised to ``init``."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25, device: Any = None,
                 dtype: Any = None) -> None:
        self.num_parameters = num_parameters
        super().__init__()
        self.init = init
        self.weight = Parameter(empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _init.constant_(self.weight, self.init)

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.prelu(input, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomised leaky relu: slopes drawn from ``U(lower, upper)`` in training (on our
    generator), their mean in eval."""

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower, self.upper, self.inplace = lower, upper, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + _inplace_str(self.inplace)


class GLU(Module):
    """``a * sigmoid(b)`` with ``a, b`` the halves of the input along ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class _Plain(Module):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()


class LogSigmoid(_Plain):
    """``log(sigmoid(x))``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.logsigmoid(input)


class Softsign(_Plain):
    """``x / (1 + |x|)``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softsign(input)


class Tanhshrink(_Plain):
    """``x - tanh(x)``."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.tanhshrink(input)


class Softshrink(Module):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    """``x`` outside ``[-lambd, lambd]``, else 0."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.hardshrink(input, self.lambd)


class Threshold(Module):
    """``value`` where ``x <= threshold``, else ``x``."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value, self.inplace = threshold, value, inplace

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + _inplace_str(self.inplace)


class Softmin(Module):
    """``softmax(-x)`` along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        return F.softmin(input, self.dim, _stacklevel=5)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax2d(_Plain):
    """Softmax over the channels (dim -3) of a ``(N, C, H, W)`` or ``(C, H, W)`` input."""

    def forward(self, input: Tensor) -> Tensor:  # noqa: A002
        if input.dim() not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.dim()}D "
                             "instead")
        return F.softmax(input, -3, _stacklevel=5)
