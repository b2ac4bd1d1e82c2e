"""The deprecated device-specific ``GradScaler`` aliases, ``torch.cuda.amp.GradScaler`` and
``torch.cpu.amp.GradScaler``: subclasses that fix the device and warn as PyTorch 2.13 does
(a FutureWarning naming the ``torch.amp.GradScaler(device, ...)`` replacement)."""

from __future__ import annotations

import sys
import types
import warnings

from .grad_scaler import GradScaler as _GradScaler


def _deprecated(device: str) -> type:
    def __init__(self: _GradScaler, init_scale: float = 2.0**16, growth_factor: float = 2.0,
                 backoff_factor: float = 0.5, growth_interval: int = 2000,
                 enabled: bool = True) -> None:
        warnings.warn(f"`torch.{device}.amp.GradScaler(args...)` is deprecated. Please use "
                      f"`torch.amp.GradScaler('{device}', args...)` instead.",
                      FutureWarning, stacklevel=2)
        _GradScaler.__init__(self, device, init_scale=init_scale, growth_factor=growth_factor,
                             backoff_factor=backoff_factor, growth_interval=growth_interval,
                             enabled=enabled)

    doc = (f"``torch.{device}.amp.GradScaler``: deprecated, ``GradScaler('{device}', ...)`` "
           "with a FutureWarning.")
    return type("GradScaler", (_GradScaler,), {"__init__": __init__, "__doc__": doc,
                                               "__module__": f"autograd_gpu.{device}.amp"})


def _namespace(device: str) -> types.ModuleType:
    mod = types.ModuleType(f"autograd_gpu.{device}.amp",
                           f"``torch.{device}.amp``: the deprecated ``GradScaler`` alias.")
    mod.GradScaler = _deprecated(device)  # type: ignore[attr-defined]
    mod.__all__ = ["GradScaler"]  # type: ignore[attr-defined]
    return mod


cuda_amp = _namespace("cuda")
cpu_amp = _namespace("cpu")
# NOTE: entered in sys.modules so that ``import autograd_gpu.cuda.amp`` finds them.
sys.modules.setdefault(cuda_amp.__name__, cuda_amp)
sys.modules.setdefault(cpu_amp.__name__, cpu_amp)
