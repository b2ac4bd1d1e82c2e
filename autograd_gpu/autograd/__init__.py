"""``autograd_gpu.autograd``: the engine's public face, with PyTorch's names."""

from __future__ import annotations

from . import graph
from .anomaly import detect_anomaly, is_anomaly_check_nan_enabled, is_anomaly_enabled, set_detect_anomaly
from .api import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .variable import Variable

__all__ = [
    "Function", "FunctionCtx", "GradcheckError", "backward", "detect_anomaly", "enable_grad",
    "grad", "gradcheck", "gradgradcheck", "graph", "inference_mode", "is_anomaly_check_nan_enabled",
    "is_anomaly_enabled", "is_grad_enabled", "is_inference_mode_enabled", "no_grad",
    "once_differentiable", "set_detect_anomaly", "set_grad_enabled", "Variable",
]
