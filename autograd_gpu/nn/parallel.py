"""``torch.nn.parallel``'s single-process part: ``DataParallel`` and ``data_parallel``, and the
helpers ``scatter`` and ``gather``.

NOTE: this framework runs a module on one device at a time. ``DataParallel`` keeps PyTorch's
interface, checks and state-dict layout (``module.`` prefixes); with one device id, or none, it
is exactly PyTorch's; with several it runs the whole batch on ``device_ids[0]`` and gathers the
output on ``output_device``: the same outputs and gradients as PyTorch's replicas (BatchNorm's
batch statistics then cover the whole batch, not one chunk per replica). Data-parallel training
across devices and processes is ``DistributedDataParallel``'s job (issue #22).
"""

from __future__ import annotations

from typing import Any, Sequence

from ..device import device as as_device
from ..tensor import Tensor
from .module import Module

__all__ = ["DataParallel", "data_parallel", "gather", "scatter"]


def _device_ids(ids: Sequence[Any] | None) -> list[int]:
    from .. import cuda

    if ids is None:
        return list(range(cuda.device_count())) if cuda.is_available() else []
    return [d if isinstance(d, int) else (as_device(d).index or 0) for d in ids]


def _move(obj: Any, dev: Any) -> Any:
    """Tensors in ``obj`` (nested tuples, lists, dicts) moved to ``dev``."""
    if isinstance(obj, Tensor):
        return obj.to(dev)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):
        return type(obj)(*(_move(o, dev) for o in obj))
    if isinstance(obj, (tuple, list)):
        return type(obj)(_move(o, dev) for o in obj)
    if isinstance(obj, dict):
        return {k: _move(v, dev) for k, v in obj.items()}
    return obj


def scatter(inputs: Any, target_gpus: Sequence[Any], dim: int = 0) -> list[Any]:
    """``inputs``' tensors chunked along ``dim``, chunk ``i`` on ``cuda:target_gpus[i]``; other
    objects repeated (PyTorch's ``scatter``)."""
    ids = _device_ids(target_gpus)

    def split(obj: Any) -> list[Any]:
        if isinstance(obj, Tensor):
            return [c.to(f"cuda:{i}") for c, i in zip(obj.chunk(len(ids), dim), ids)]
        if isinstance(obj, tuple) and obj:
            return [type(obj)(p) for p in zip(*(split(o) for o in obj))]  # type: ignore[call-arg]
        if isinstance(obj, list) and obj:
            return [list(p) for p in zip(*(split(o) for o in obj))]
        if isinstance(obj, dict) and obj:
            parts = [split(v) for v in obj.values()]
            return [dict(zip(obj, p)) for p in zip(*parts)]
        return [obj for _ in ids]

    return split(inputs)


def gather(outputs: Sequence[Any], target_device: Any, dim: int = 0) -> Any:
    """The outputs of several devices concatenated along ``dim`` on ``target_device``
    (``-1`` or ``"cpu"``: the CPU)."""
    from ..functions import cat

    dev = "cpu" if target_device in (-1, "cpu") else (
        f"cuda:{target_device}" if isinstance(target_device, int) else target_device)
    first = outputs[0]
    if isinstance(first, Tensor):
        return cat([o.to(dev) for o in outputs], dim)
    if isinstance(first, dict):
        return {k: gather([o[k] for o in outputs], target_device, dim) for k in first}
    if isinstance(first, (tuple, list)):
        return type(first)(gather(parts, target_device, dim) for parts in zip(*outputs))
    return first


class DataParallel(Module):
    """``module`` behind PyTorch's DataParallel interface (see the module docstring)."""

    def __init__(self, module: Module, device_ids: Sequence[Any] | None = None,
                 output_device: Any = None, dim: int = 0) -> None:
        super().__init__()
        from .. import cuda

        self.module = module
        self.dim = dim
        if not cuda.is_available():  # NOTE: PyTorch ignores the ids without a GPU
            self.device_ids, self.output_device = [], None
            return
        self.device_ids = _device_ids(device_ids)
        # NOTE: an empty list raises IndexError here, as PyTorch's does on a GPU machine
        self.output_device = self.device_ids[0] if output_device is None else (
            output_device if isinstance(output_device, int) else
            (as_device(output_device).index or 0))
        self.src_device_obj = as_device(f"cuda:{self.device_ids[0]}")
        if len(self.device_ids) == 1:
            self.module.to(self.src_device_obj)

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in list(self.module.parameters()) + list(self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError("module must have its parameters and buffers on device "
                                   f"{self.src_device_obj} (device_ids[0]) but found one of "
                                   f"them on device: {t.device}")
        out = self.module(*_move(inputs, self.src_device_obj), **_move(kwargs, self.src_device_obj))
        return _move(out, f"cuda:{self.output_device}")


def data_parallel(module: Module, inputs: Any, device_ids: Sequence[Any] | None = None,
                  output_device: Any = None, dim: int = 0, module_kwargs: Any = None) -> Any:
    """``DataParallel(module, device_ids, output_device, dim)(*inputs, **module_kwargs)``."""
    if not isinstance(inputs, tuple):
        inputs = (inputs,)
    return DataParallel(module, device_ids, output_device, dim)(*inputs, **(module_kwargs or {}))
