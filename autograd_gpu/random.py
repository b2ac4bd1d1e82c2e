"""Random numbers: ``Generator``, ``manual_seed`` and the random factories (``rand``, ``randn``,
``randint``, ``randperm`` and their ``*_like`` forms).

On the CPU the streams are PyTorch's: after the same ``manual_seed``, ``rand``, ``randn``,
``randint``, ``randperm``, ``uniform_``/``normal_`` (so every default initialisation),
``bernoulli`` and ``dropout`` give torch's numbers (``backends/torch_rng.py`` says how, and what
is not reproduced). CUDA streams are CuPy's, reproducible but not PyTorch's (Philox). Shapes,
dtypes, ranges and error messages follow PyTorch.
"""

from __future__ import annotations

import builtins
import secrets
from typing import Any

from . import dtypes
from .creation import finish, like_layout, parse_size
from .device import CPU, as_device, device
from .tensor import Tensor

_DEFAULT_SEED = 67280421310721
_MASK64 = (1 << 64) - 1


class Generator:
    """A seeded random stream for one device (``torch.Generator``).

    Example:
        >>> g = Generator().manual_seed(0)
        >>> a = rand(3, generator=g)
        >>> b = rand(3, generator=Generator().manual_seed(0))
        >>> bool((a == b).all())
        True
    """

    def __init__(self, device: str | device = "cpu") -> None:  # noqa: A002
        self.device = as_device(device)
        self._seed = _DEFAULT_SEED
        self._gen = self.device.backend.new_generator(self._seed)

    def manual_seed(self, seed: int) -> Generator:
        """Restart the stream from ``seed`` (negative seeds wrap to 64 bits, as in PyTorch)."""
        seed = int(seed)
        if not -(1 << 63) <= seed <= _MASK64:
            raise RuntimeError(f"Overflow when unpacking long long: {seed}")
        self._seed = seed & _MASK64
        self._gen = self.device.backend.new_generator(self._seed)
        return self

    def seed(self) -> int:
        """Reseed from a non-deterministic source and return the new seed."""
        self.manual_seed(secrets.randbits(63))
        return self._seed

    def initial_seed(self) -> int:
        """The seed the current stream started from."""
        return self._seed

    def get_state(self) -> Any:
        """A snapshot of the stream; ``set_state`` with it replays the same numbers."""
        return self._gen.bit_generator.state

    def set_state(self, state: Any) -> Generator:
        self._gen.bit_generator.state = state
        return self


_default: dict[device, Generator] = {}
_last_seed: list[int | None] = [None]  # the latest manual_seed, for devices first used later


def default_generator(dev: device = CPU) -> Generator:
    """The generator factories use on ``dev`` when none is passed."""
    gen = _default.get(dev)
    if gen is None:
        gen = _default[dev] = Generator(dev)
        if dev is CPU:
            # NOTE: PyTorch seeds its default CPU generator non-deterministically at start-up;
            # manual_seed makes runs reproducible.
            gen.seed()
        elif _last_seed[0] is not None:
            # NOTE: manual_seed before a device's first use seeds it too (PyTorch queues the
            # CUDA seeding until CUDA starts).
            gen.manual_seed(_last_seed[0])
    return gen


def manual_seed(seed: int) -> Generator:
    """Seed the default generator of every device, those first used later included; returns
    the CPU one."""
    out = default_generator(CPU).manual_seed(seed)
    _last_seed[0] = int(seed)
    for dev, gen in _default.items():
        if dev is not CPU:
            gen.manual_seed(seed)
    return out


def seed() -> int:
    """Reseed the default CPU generator non-deterministically and return the seed."""
    return default_generator(CPU).seed()


def initial_seed() -> int:
    """The seed of the default CPU generator."""
    return default_generator(CPU).initial_seed()


def get_rng_state() -> Any:
    """The state of the default CPU generator."""
    return default_generator(CPU).get_state()


def set_rng_state(state: Any) -> None:
    """Restore the default CPU generator to ``state`` (from ``get_rng_state``)."""
    default_generator(CPU).set_state(state)


def _gen_for(dev: device, generator: Generator | None) -> Any:
    g = generator if generator is not None else default_generator(dev)
    if not isinstance(g, Generator):
        raise TypeError(f"expected a Generator, got {type(g).__name__}")
    if g.device != dev:
        raise RuntimeError(
            f"Expected a '{dev.type}' device type for generator but found '{g.device.type}'"
        )
    return g._gen


# ---- under vmap ---------------------------------------------------------------------------

_RANDOM_ERROR = (
    "vmap: called random operation while in randomness error mode. Please either use the 'same' "
    "or 'different' randomness flags on vmap or perform the randomness operation out of vmap")


def vmap_draw(draw: Any, shape: tuple[int, ...]) -> Any:
    """``draw(shape)`` (an array) under the active vmap levels, or None outside vmap.

    Each level's ``randomness`` applies: 'error' refuses, 'same' draws once for all its
    samples, 'different' draws one sample each (a leading dim, wrapped as that level's batch).
    Returns ``(array, levels)``: the draw and the 'different' levels of its leading dims.
    """
    from .func._batched import LEVELS  # NOTE: not at the top: func sits above this layer

    if not LEVELS.stack:
        return None
    if builtins.any(mode == "error" for _, _, mode in LEVELS.stack):
        raise RuntimeError(_RANDOM_ERROR)
    levels = [(level, size) for level, size, mode in LEVELS.stack if mode == "different"]
    return draw(tuple(size for _, size in levels) + tuple(shape)), [lv for lv, _ in levels]


def _wrap_levels(t: Tensor, levels: list[int]) -> Tensor:
    """``t`` with its leading dims wrapped as the batch dims of ``levels`` (outermost first)."""
    from .func._batched import BatchedTensor

    for level in levels:
        t = BatchedTensor.wrap(t, 0, level)
    return t


def _factory(draw: Any, shape: tuple[int, ...], dev: device, requires_grad: bool) -> Tensor:
    """A random factory's tensor: ``draw(shape)``, one per sample under vmap where asked."""
    under = vmap_draw(draw, shape)
    if under is None:
        return finish(draw(shape), dev, requires_grad)
    data, levels = under
    return _wrap_levels(finish(data, dev, requires_grad), levels)


def sample_like(t: Any, draw: Any) -> Any:
    """For ``uniform_``/``normal_`` on ``t`` under vmap: a tensor of ``draw(shape)`` samples
    (batched per the levels' randomness), or None outside vmap."""
    under = vmap_draw(draw, tuple(t.shape))
    if under is None:
        return None
    data, levels = under
    return _wrap_levels(Tensor._make(data, t._device), levels)


# ---- random factories -----------------------------------------------------------------------

def _float_dtype(dtype: Any, kernel: str, fn: str) -> dtypes.dtype:
    dtypes.check_dtype(fn, dtype)
    dt = dtype or dtypes.get_default_dtype()
    if dt.category < 2:
        raise NotImplementedError(
            f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(dt)}'")
    return dt


def rand(*size: Any, generator: Generator | None = None, dtype: dtypes.dtype | None = None,
         device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """Uniform samples in ``[0, 1)``: ``rand(2, 3)`` or ``rand((2, 3))``; float dtypes, and
    complex ones (real and imaginary parts each uniform in ``[0, 1)``)."""
    shape = parse_size("rand", size, kwargs)
    dt = _float_dtype(dtype, "check_uniform_bounds", "rand")
    dev = as_device(device)
    gen = _gen_for(dev, generator)
    draw = _complex_draw(lambda s, name: dev.backend.random(gen, s, name), dt, 1.0)
    return _factory(draw, shape, dev, requires_grad)


def randn(*size: Any, generator: Generator | None = None, dtype: dtypes.dtype | None = None,
          device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """Standard normal samples: ``randn(2, 3)`` or ``randn((2, 3))``; float dtypes, and complex
    ones (real and imaginary parts each normal with variance 1/2, as in PyTorch)."""
    shape = parse_size("randn", size, kwargs)
    dt = _float_dtype(dtype, "normal_kernel_cpu", "randn")
    dev = as_device(device)
    gen = _gen_for(dev, generator)
    draw = _complex_draw(lambda s, name: dev.backend.standard_normal(gen, s, name), dt, 0.5 ** 0.5)
    return _factory(draw, shape, dev, requires_grad)


def _complex_draw(draw: Any, dt: dtypes.dtype, scale: float) -> Any:
    """``draw(shape, dtype_name)`` for ``dt``; for a complex ``dt``, pairs of real draws
    (scaled by ``scale``) as the real and imaginary parts."""
    if not dt.is_complex:
        return lambda s: draw(s, dt.name)

    def pairs(s: tuple[int, ...]) -> Any:
        parts = draw(tuple(s) + (2,), dt.to_real().name)
        if scale != 1.0:
            parts *= scale
        return parts.view(dt.name)[..., 0]

    return pairs


def rand_like(input: Tensor, *, generator: Generator | None = None,  # noqa: A002
              dtype: dtypes.dtype | None = None, device: Any = None, requires_grad: bool = False,
              memory_format: Any = None) -> Tensor:
    """``rand`` with the shape of ``input`` (and its dtype and device unless given)."""
    return like_layout(input, lambda s: rand(s, generator=generator, dtype=dtype or input.dtype,
                                             device=device or input._device,
                                             requires_grad=requires_grad))


def randn_like(input: Tensor, *, generator: Generator | None = None,  # noqa: A002
               dtype: dtypes.dtype | None = None, device: Any = None, requires_grad: bool = False,
               memory_format: Any = None) -> Tensor:
    """``randn`` with the shape of ``input`` (and its dtype and device unless given)."""
    return like_layout(input, lambda s: randn(s, generator=generator, dtype=dtype or input.dtype,
                                              device=device or input._device,
                                              requires_grad=requires_grad))


def _int_arg(x: Any) -> Any:
    if isinstance(x, Tensor) or (hasattr(x, "item") and not isinstance(x, (int, float))):
        x = x.item()
    return x


def randint(*args: Any, size: Any = None, generator: Generator | None = None,
            dtype: dtypes.dtype | None = None, device: Any = None, requires_grad: bool = False,
            **kwargs: Any) -> Tensor:
    """Integers uniform in ``[low, high)``: ``randint(high, size)`` or ``randint(low, high, size)``
    (``size`` a tuple); int64 unless ``dtype`` says otherwise.

    Example:
        >>> randint(3, 10, (2, 2)).dtype
        torch.int64
    """
    low = kwargs.pop("low", None)
    high = kwargs.pop("high", None)
    pos = list(args)
    if size is None and pos and isinstance(pos[-1], (tuple, list)):
        size = pos.pop()
    given = [a for a in (low, high) if a is not None]
    vals = pos + given
    if size is None:
        if len(vals) == 2:
            raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, not "
                            f"{type(vals[1]).__name__}")
        raise TypeError(f"randint() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in args)}), but expected one of:")
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    vals = [_int_arg(v) for v in vals]
    if len(vals) == 1:
        vals = [0] + vals
    if len(vals) != 2 or not builtins.all(isinstance(v, int) for v in vals):
        raise TypeError(f"randint() received an invalid combination of arguments - got "
                        f"({', '.join(type(a).__name__ for a in vals + [size])}), but expected "
                        "one of:")
    lo, hi = vals
    for v in vals:
        if not -(1 << 63) <= v < (1 << 63):
            raise ValueError("Overflow when unpacking long long")
    shape = parse_size("randint", (size,), kwargs)
    dtypes.check_dtype("randint", dtype)
    dt = dtype or dtypes.int64
    if lo >= hi:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} >= to={hi}")
    if not dt.is_floating_point:
        bmin, bmax = dtypes.int_bounds(dt)
        if lo < bmin:
            raise RuntimeError(f"from is out of bounds for {dtypes.c_type_name(dt)}")
        if hi - 1 > bmax:
            raise RuntimeError(f"to - 1 is out of bounds for {dtypes.c_type_name(dt)}")
    dev = as_device(device)
    gen = _gen_for(dev, generator)
    return _factory(lambda s: dev.backend.integers(gen, lo, hi, s, "int64").astype(
        dt.name, copy=False), shape, dev, requires_grad)


def randperm(n: int, *, generator: Generator | None = None, dtype: dtypes.dtype | None = None,
             device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype`` says otherwise)."""
    n = _int_arg(n)
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not {type(n).__name__}")
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    dtypes.check_dtype("randperm", dtype)
    dt = dtype or dtypes.int64
    if dt is dtypes.bool:
        raise NotImplementedError("\"randperm\" not implemented for 'Bool'")
    if not dt.is_floating_point and n - 1 > dtypes.int_bounds(dt)[1]:
        raise RuntimeError(f"value cannot be converted to type {dt.name}_t without overflow")
    dev = as_device(device)
    data = dev.backend.permutation(_gen_for(dev, generator), n)
    return finish(data.astype(dt.name), dev, requires_grad)
