"""Devices: ``device('cpu')``, ``device('cuda')``, ``device('cuda:1')``.

A device names where a tensor's storage lives and so which backend computes on it. Device objects
are interned, so ``a.device is b.device`` is a cheap same-device test on the hot path.
"""

from __future__ import annotations

import re
from typing import Any

# NOTE: PyTorch parses every type it knows; cpu, cuda and meta (shape and dtype, no storage)
# can hold tensors here (as_device).
_KNOWN_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")
_TENSOR_TYPES = ("cpu", "cuda", "meta")
_DEVICE_RE = re.compile(r"([a-zA-Z_]+)(?::([1-9][0-9]*|0))?")
_UNSET: Any = object()


def _parse(spec: str) -> tuple[str, int | None]:
    if not spec:
        raise RuntimeError("Device string must not be empty")
    m = _DEVICE_RE.fullmatch(spec)
    if m is None:
        raise RuntimeError(f"Invalid device string: '{spec}'")
    kind, idx = m.group(1), m.group(2)
    if kind not in _KNOWN_TYPES:
        raise RuntimeError(f"Expected one of {', '.join(_KNOWN_TYPES)} device type at start of "
                           f"device string: {spec}")
    return kind, None if idx is None else int(idx)


class device:  # noqa: N801  (PyTorch's name)
    """Where a tensor lives: ``device('cpu')``, ``device('cuda', 0)`` or ``device('cuda:0')``.

    As in PyTorch, a device equals only another device with the same type and index
    (``device('cuda') != device('cuda:0')``, and ``device('cpu') == 'cpu'`` is False).

    Example:
        >>> device('cuda:1')
        device(type='cuda', index=1)
    """

    __slots__ = ("type", "index", "_backend")
    _cache: dict[tuple[str, int | None], device] = {}

    type: str
    index: int | None
    _backend: Any

    def __new__(cls, type: Any, index: Any = _UNSET) -> device:  # noqa: A002
        if isinstance(type, device):
            return type
        if isinstance(type, int) and not isinstance(type, bool):
            return _accelerator(type)
        if not isinstance(type, str):
            raise TypeError("device() received an invalid combination of arguments - got "
                            f"({_type_name(type)}), but expected one of:\n * (torch.device device)\n"
                            " * (str type, int index = -1)")
        kind, idx = _parse(type)
        if idx is not None and index is not _UNSET:
            # NOTE: even index=None counts as passed here, as in PyTorch.
            raise RuntimeError("type (string) must not include an index because index was "
                               "passed explicitly: " + type)
        if index is not _UNSET and index is not None:
            if not isinstance(index, int) or isinstance(index, bool):
                raise TypeError("device(): argument 'index' (position 2) must be int, not "
                                + _type_name(index))
            if index < 0:
                raise RuntimeError("Device index must not be negative")
            idx = index
        key = (kind, idx)
        dev = cls._cache.get(key)
        if dev is None:
            dev = object.__new__(cls)
            object.__setattr__(dev, "type", kind)
            object.__setattr__(dev, "index", idx)
            object.__setattr__(dev, "_backend", None)
            cls._cache[key] = dev
        return dev

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("device objects are immutable")

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self) -> tuple[Any, ...]:
        return (device, (self.type,) if self.index is None else (self.type, self.index))

    def __enter__(self) -> device:
        """``with device('meta'):`` makes this the default device of factories in the block."""
        _STACK.append(_DEFAULT[0])
        # NOTE: resolved when a tensor is made (PyTorch enters a 'cuda' block without CUDA and
        # fails at the first factory).
        _DEFAULT[0] = None if self.type == "cpu" else self
        return self

    def __exit__(self, *exc: object) -> None:
        _DEFAULT[0] = _STACK.pop()

    @property
    def backend(self) -> Any:
        """The array backend for this device (NumPy for CPU, CuPy for CUDA; loaded on first use)."""
        b = self._backend
        if b is None:
            from .backends import get_backend

            b = get_backend(self)
            object.__setattr__(self, "_backend", b)
        return b


CPU = device("cpu")
META = device("meta")
_DEFAULT: list[device | None] = [None]  # set_default_device's choice (None: the CPU)
_STACK: list[device | None] = []  # the defaults that ``with device(...)`` blocks replaced


def default_device() -> device:
    """The device of factory results made without ``device=`` (``torch.get_default_device``)."""
    d = _DEFAULT[0]
    return CPU if d is None else d


def set_default(d: str | device | int | None) -> None:
    """``torch.set_default_device``: None or the CPU restore the default."""
    _DEFAULT[0] = None if d is None else as_device(d)
    if _DEFAULT[0] is CPU:
        _DEFAULT[0] = None


def as_device(d: str | device | int | None) -> device:
    """Normalise a user's device argument to where a tensor can live.

    ``None`` means the default device (the CPU unless ``set_default_device`` chose another);
    an int means that CUDA device; every CPU index means the CPU (tensors report
    ``device(type='cpu')``, as in PyTorch); ``'cuda'`` means the current CUDA device.
    """
    if d is None:
        d = _DEFAULT[0]
        if d is None:
            return CPU
    dev = d if isinstance(d, device) else device(d)
    if dev.type == "cpu":
        return CPU
    if dev.type not in _TENSOR_TYPES:
        raise RuntimeError(f"autograd_gpu tensors live on 'cpu', 'cuda' or 'meta' devices only, "
                           f"not '{dev}'")
    if dev.type == "meta":
        return META
    if dev.index is None:
        # NOTE: 'cuda' without an index means the current CUDA device, as in PyTorch.
        from .backends import current_cuda_device

        return device("cuda", current_cuda_device())
    return dev


def _accelerator(index: int) -> device:
    """``device(1)``: that index on the accelerator (CUDA), which must be present."""
    if index < 0:
        raise RuntimeError("Device index must not be negative")
    from .backends import cuda_support

    if not cuda_support.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return device("cuda", index)


def _type_name(x: Any) -> str:
    return "NoneType" if x is None else type(x).__name__
