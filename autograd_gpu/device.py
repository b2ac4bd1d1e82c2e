"""Devices: ``device('cpu')``, ``device('cuda')``, ``device('cuda:1')``.

A device names where a tensor's storage lives and so which backend computes on it. Device objects
are interned, so ``a.device is b.device`` is a cheap same-device test on the hot path.
"""

from __future__ import annotations

from typing import Any

_DEVICE_TYPES = ("cpu", "cuda")


class device:  # noqa: N801  (PyTorch's name)
    """Where a tensor lives: ``device('cpu')``, ``device('cuda', 0)`` or ``device('cuda:0')``."""

    __slots__ = ("type", "index", "_backend")
    _cache: dict[tuple[str, int | None], device] = {}

    type: str
    index: int | None

    def __new__(cls, type: str | device, index: int | None = None) -> device:  # noqa: A002
        if isinstance(type, device):
            return type
        if not isinstance(type, str):
            raise TypeError(f"device() received an invalid combination of arguments - got ({type!r})")
        kind, _, idx = type.partition(":")
        if kind not in _DEVICE_TYPES:
            raise RuntimeError(
                "Expected one of cpu, cuda device type at start of device string: " + type
            )
        if idx:
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index was "
                                   "passed explicitly: " + type)
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type}'")
            index = int(idx)
        if kind == "cpu":
            index = None if index in (None, 0, -1) else index
        key = (kind, index)
        dev = cls._cache.get(key)
        if dev is None:
            dev = object.__new__(cls)
            object.__setattr__(dev, "type", kind)
            object.__setattr__(dev, "index", index)
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
        if isinstance(other, str):
            other = device(other)
        if not isinstance(other, device):
            return NotImplemented
        return self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __reduce__(self) -> tuple[Any, ...]:
        return (device, (str(self),))

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


def as_device(d: str | device | int | None) -> device:
    """Normalise a user's device argument; ``None`` means CPU, an int means that CUDA device."""
    if d is None:
        return CPU
    if isinstance(d, device):
        return _with_index(d)
    if isinstance(d, int):
        return device("cuda", d)
    return _with_index(device(d))


def _with_index(d: device) -> device:
    # NOTE: 'cuda' without an index means the current CUDA device, as in PyTorch.
    if d.type == "cuda" and d.index is None:
        from .backends import current_cuda_device

        return device("cuda", current_cuda_device())
    return d
