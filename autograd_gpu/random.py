"""Random number generation: ``Generator``, ``manual_seed`` and the samplers factories use.

Streams are reproducible for a given seed, but they are not PyTorch's streams: the same seed
gives different numbers than ``torch.manual_seed`` (PyTorch's CPU generator is not public API).
"""

from __future__ import annotations

from typing import Any

from .device import CPU, as_device, device


class Generator:
    """A seeded random stream for one device (``torch.Generator``)."""

    def __init__(self, device: str | device = "cpu") -> None:  # noqa: A002
        self.device = as_device(device) if device != "cuda" else as_device(device)
        self._seed = 67280421310721
        self._gen = self.device.backend.new_generator(self._seed)

    def manual_seed(self, seed: int) -> Generator:
        self._seed = int(seed)
        self._gen = self.device.backend.new_generator(self._seed & 0xFFFF_FFFF_FFFF_FFFF)
        return self

    def seed(self) -> int:
        import secrets

        self.manual_seed(secrets.randbits(63))
        return self._seed

    def initial_seed(self) -> int:
        return self._seed

    def get_state(self) -> Any:
        return self._gen.bit_generator.state

    def set_state(self, state: Any) -> Generator:
        self._gen.bit_generator.state = state
        return self


_default: dict[device, Generator] = {}


def default_generator(dev: device = CPU) -> Generator:
    gen = _default.get(dev)
    if gen is None:
        gen = _default[dev] = Generator(dev)
    return gen


def manual_seed(seed: int) -> Generator:
    """Seed the default generator of every device in use (CPU always)."""
    for dev, gen in _default.items():
        if dev is not CPU:
            gen.manual_seed(seed)
    return default_generator(CPU).manual_seed(seed)


def seed() -> int:
    return default_generator(CPU).seed()


def initial_seed() -> int:
    return default_generator(CPU).initial_seed()


def get_rng_state() -> Any:
    return default_generator(CPU).get_state()


def set_rng_state(state: Any) -> None:
    default_generator(CPU).set_state(state)


def _gen_for(dev: device, generator: Generator | None) -> Any:
    g = generator if generator is not None else default_generator(dev)
    if g.device != dev:
        raise RuntimeError(
            f"Expected a '{dev.type}' device type for generator but found '{g.device.type}'"
        )
    return g._gen


def uniform_array(t: Any, a: float, b: float, generator: Generator | None) -> Any:
    be = t.backend
    u = be.random(_gen_for(t._device, generator), t._data.shape, t._data.dtype.name)
    return u * (b - a) + a if (a, b) != (0.0, 1.0) else u


def normal_array(t: Any, mean: float, std: float, generator: Generator | None) -> Any:
    be = t.backend
    z = be.standard_normal(_gen_for(t._device, generator), t._data.shape, t._data.dtype.name)
    return z * std + mean if (mean, std) != (0.0, 1.0) else z
