"""The in-place samplers of ``Tensor`` (``uniform_``, ``normal_``, ``exponential_``,
``geometric_``, ``cauchy_``, ``log_normal_``, ``random_``, ``bernoulli_``) and the argument
rules the sampling family shares (``generator=``, float parameters, ``random_``'s ranges).

Each sampler checks its parameters as PyTorch does (same exception type and first sentence),
then overwrites the tensor through ``inplace`` with a ``Sample`` node: with autograd involved
the tensor takes PyTorch's node (``ExponentialBackward0``, ...) and the old values get a zero
gradient. Under ``vmap`` the draw follows the level's ``randomness`` (``random.sample_like``).
The numbers come from the tensor's device stream (``random.py``), not PyTorch's.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..autograd.node import user_stacklevel
from ..ops.sampling import Sample
from ..tensor import Tensor
from .checks import invalid_arguments
from .inplace_ops import _batched_inplace, inplace

_REQUIRED = object()
_FLOAT_MAX = {"float16": 65504.0, "float32": 3.4028234663852886e38,
              "float64": 1.7976931348623157e308}
_DIGITS = {"float16": 11, "float32": 24, "float64": 53}
_INT64_MIN, _INT64_MAX = -(1 << 63), (1 << 63) - 1


# ---- argument rules ----------------------------------------------------------------------------

def rnd() -> Any:
    """``autograd_gpu.random`` (imported late: it imports ``creation``, which imports the
    functions)."""
    from .. import random

    return random


def fmt(x: float) -> str:
    """A number as PyTorch's messages print it (C++ streams: ``-1``, ``1.5``, ``1e-05``,
    ``nan``)."""
    return format(x, "g")


def generator_of(dev: Any, generator: Any, bad: Callable[[], Exception]) -> Any:
    """The backend stream of ``generator`` (or of ``dev``'s default one); ``bad()`` is raised
    when ``generator`` is not a Generator (PyTorch's message for the calling function)."""
    if generator is not None and not isinstance(generator, rnd().Generator):
        raise bad()
    return rnd()._gen_for(dev, generator)


def float_arg(fn: str, name: str, value: Any, position: int | None) -> float:
    """A ``float`` parameter as PyTorch's argument parser reads it: a real number (bools and
    ints too) or a 0-d tensor; anything else is its ``TypeError``."""
    if isinstance(value, Tensor) and value.ndim == 0 and not value.is_complex():
        value = value.item()
    elif not isinstance(value, (int, float, complex)) and hasattr(value, "item") and \
            getattr(value, "ndim", 1) == 0:
        value = value.item()  # a NumPy scalar
    if isinstance(value, (int, float)):
        return float(value)
    where = f" (position {position})" if position else ""
    raise TypeError(f"{fn}(): argument '{name}'{where} must be float, not {type(value).__name__}")


def int_like(value: Any) -> bool:
    """Whether PyTorch's parser takes ``value`` as an ``int`` argument: an int (not a bool), a
    NumPy integer or a 0-d integer tensor."""
    if isinstance(value, Tensor):
        return value.ndim == 0 and value.dtype.category == 1
    if isinstance(value, bool):
        return False
    return isinstance(value, int) or (hasattr(value, "dtype") and getattr(value, "ndim", 1) == 0
                                      and getattr(value.dtype, "kind", "") in "iu")


def as_int64(value: Any) -> int:
    v = int(value.item() if hasattr(value, "item") else value)
    if not _INT64_MIN <= v <= _INT64_MAX:
        raise ValueError("Overflow when unpacking long long")
    return v


def parse(fn: str, args: tuple[Any, ...], kwargs: dict[str, Any],
          spec: tuple[tuple[str, Any], ...]) -> dict[str, tuple[Any, int | None]]:
    """``{name: (value, position or None)}`` from a method's arguments (after ``self``) by
    ``spec`` (``(name, default)`` pairs, ``_REQUIRED`` for none), with PyTorch's TypeErrors."""
    if len(args) > len(spec):
        n = len(spec)
        takes = f"from 0 to {n} positional arguments" if spec[0][1] is not _REQUIRED else \
            f"{n} positional argument{'s' if n > 1 else ''}"
        raise TypeError(f"{fn}() takes {takes} but {len(args)} were given")
    out: dict[str, tuple[Any, int | None]] = {}
    for i, (name, default) in enumerate(spec):
        if i < len(args):
            out[name] = (args[i], i + 1)
        elif name in kwargs:
            out[name] = (kwargs.pop(name), None)
        elif default is _REQUIRED:
            raise TypeError(f'{fn}() missing 1 required positional arguments: "{name}"')
        else:
            out[name] = (default, None)
    for k in kwargs:
        raise TypeError(f"{fn}() got an unexpected keyword argument '{k}'")
    return out


def floats(fn: str, args: tuple[Any, ...], kwargs: dict[str, Any],
           spec: tuple[tuple[str, Any], ...]) -> list[float]:
    return [float_arg(fn, name, v, pos) for name, (v, pos) in parse(fn, args, kwargs,
                                                                      spec).items()]


def not_implemented(kernel: str, dt: dtypes.dtype) -> NotImplementedError:
    return NotImplementedError(f"\"{kernel}\" not implemented for '{dtypes.scalar_type_name(dt)}'")


def float_only(kernel: str, dt: dtypes.dtype) -> None:
    if not dt.is_floating_point:
        raise not_implemented(kernel, dt)


# ---- random_'s ranges (PyTorch's DistributionTemplates) ----------------------------------------

def _warn_bounds(v: int, name: str, dt: dtypes.dtype) -> None:
    d = _DIGITS[dt.name]
    if v < -(1 << d) or v > (1 << d):
        warnings.warn(f"{name} is out of bounds [-(2^{d}), 2^{d}]. Due to precision limitations "
                      f"{dtypes.c_type_name(dt)} can support discrete uniform distribution only "
                      "within this range. This warning will become an error in version 1.7 "
                      "release, please fix the code in advance", UserWarning,
                      stacklevel=user_stacklevel())


def check_in_range(lo: int, hi: int, dt: dtypes.dtype) -> None:
    """``random_``'s bounds check of ``[lo, hi]``: an integer dtype must hold both ends; a float
    dtype must too, and warns past ``2**digits`` (where it cannot hold every integer)."""
    if dt.is_floating_point:
        bmin, bmax = -_FLOAT_MAX[dt.name], _FLOAT_MAX[dt.name]
    else:
        bmin, bmax = dtypes.int_bounds(dt)
    for v, name in ((lo, "from"), (hi, "to - 1")):
        if not bmin <= v <= bmax:
            raise RuntimeError(f"{name} is out of bounds for {dtypes.c_type_name(dt)}")
    if dt.is_floating_point:
        _warn_bounds(lo, "from", dt)
        _warn_bounds(hi, "to - 1", dt)


def random_range(lo: int | None, to: int | None, dt: dtypes.dtype) -> tuple[int, int]:
    """The inclusive range ``[lo, hi]`` of ``random_(lo, to)`` on dtype ``dt``: ``lo=None`` is
    the default range (``[0, 2**digits]`` for floats, ``[0, max]`` for integers, ``[0, 1]`` for
    bool); ``to=None`` runs to that top end; checks as PyTorch's."""
    top = (1 << _DIGITS[dt.name]) if dt.is_floating_point else dtypes.int_bounds(dt)[1]
    if lo is None:
        return 0, top
    if to is not None:
        if lo >= to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={lo} "
                               f">= to={to}")
        check_in_range(lo, to - 1, dt)
        return lo, to - 1
    if lo == _INT64_MIN:
        return _INT64_MIN, _INT64_MAX  # NOTE: every 64-bit value, unchecked (PyTorch's too)
    if dt.is_floating_point and lo >= top:
        raise RuntimeError("random_ expects 'from' casted to dtype to be less than or equal to "
                           f"'to_inc' casted to dtype, but got from={lo} > to_inc={top}")
    check_in_range(lo, top, dt)
    return lo, top


# ---- under vmap --------------------------------------------------------------------------------

_SAME_BATCHED = ("Vmap does not currently support same randomness with a batched tensor input. "
                 "Please file an issue with functorch")


def vmap_rules(tensors: Any) -> list[Tensor]:
    """The tensor inputs of a sampler under ``vmap``, per the levels' ``randomness``: 'error'
    refuses; 'same' refuses an input batched at its level (PyTorch's limits); 'different' gives
    each sample its own draw: the sampler runs per sample (``vmap``'s loop), so inputs batched
    at no level are first expanded over the 'different' levels. Outside vmap: ``tensors``."""
    from ..func._batched import LEVELS, levels_of  # NOTE: late: func sits above this layer

    tensors = list(tensors)
    if not LEVELS.stack:
        return tensors
    if any(mode == "error" for _, _, mode in LEVELS.stack):
        raise RuntimeError(rnd()._RANDOM_ERROR)
    batched = {lv for t in tensors for lv in levels_of(t)}
    if any(mode == "same" and lv in batched for lv, _, mode in LEVELS.stack):
        raise RuntimeError(_SAME_BATCHED)
    different = [(lv, size) for lv, size, mode in LEVELS.stack if mode == "different"]
    if batched or not different or not tensors:
        return tensors
    sizes = tuple(size for _, size in different)
    first = tensors[0]
    lifted = first.expand(sizes + tuple(first.shape))
    tensors[0] = rnd()._wrap_levels(lifted, [lv for lv, _ in different])
    return tensors


# ---- the samplers ------------------------------------------------------------------------------

def refill(t: Tensor, draw: Callable[..., Any], name: str, *params: Tensor) -> Tensor:
    """Overwrite ``t`` with ``draw(backend, shape, dtype, *param_arrays)``, recorded as node
    ``name`` (its inputs: ``t``'s old values, then ``params``)."""
    if not params:
        values = rnd().sample_like(t, lambda s: draw(t.backend, s, t._data.dtype.name))
        if values is not None:  # NOTE: under vmap (see random.sample_like)
            with no_grad():
                _batched_inplace(t, lambda x, v: v.expand(x.shape), values)
            return t

    params = tuple(vmap_rules(params)) if params else ()

    def run(x: Tensor, *ps: Tensor) -> Tensor:
        return Sample.apply(x, *ps, draw=lambda be, a, *pa: draw(be, a.shape, a.dtype.name, *pa),
                            name=name)

    return inplace(t, run, *params)


def uniform_(t: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
    """Fill ``t`` (a float tensor) with samples uniform in ``[from, to)`` (defaults 0 and 1)."""
    lo, hi = floats("uniform_", args, kwargs, (("from", 0.0), ("to", 1.0)))
    dt = t.dtype
    float_only("check_uniform_bounds", dt)
    bound = _FLOAT_MAX[dt.name]
    for v, name in ((lo, "from"), (hi, "to")):
        if not -bound <= v <= bound:
            raise RuntimeError(f"{name} is out of bounds for {dtypes.c_type_name(dt)}")
    if lo > hi:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={fmt(lo)} > to={fmt(hi)}")
    if hi - lo > bound:
        raise RuntimeError(f"uniform_ expects to-from <= std::numeric_limits<"
                           f"{dtypes.scalar_type_name(dt)}>::max(), but found to={fmt(hi)} and "
                           f"from={fmt(lo)} which result in to-from to exceed the limit")
    gen = generator_of(t._device, generator, lambda: _bad_gen("uniform_", generator))
    return refill(t, lambda be, s, d: be.uniform(gen, s, lo, hi, d), "UniformBackward0")


def normal_(t: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
    """Fill ``t`` (a float tensor) with samples of N(mean, std**2) (defaults 0 and 1)."""
    mean, std = floats("normal_", args, kwargs, (("mean", 0.0), ("std", 1.0)))
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {fmt(std)}")
    float_only("normal_kernel_cpu", t.dtype)
    gen = generator_of(t._device, generator, lambda: _bad_gen("normal_", generator))
    return refill(t, lambda be, s, d: be.normal(gen, mean, std, s, d), "NormalBackward0")


def exponential_(t: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
    """Fill ``t`` (a float tensor) with samples of the exponential distribution of rate
    ``lambd`` (density ``lambd * exp(-lambd * x)``, default rate 1)."""
    (lambd,) = floats("exponential_", args, kwargs, (("lambd", 1.0),))
    if not lambd > 0.0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={fmt(lambd)}")
    if not t.dtype.is_floating_point:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           "dtype must be a floating point but you specified "
                           f"{dtypes.scalar_type_name(t.dtype)}")
    gen = generator_of(t._device, generator, lambda: _bad_gen("exponential_", generator))
    return refill(t, lambda be, s, d: be.exponential(gen, s, lambd, d), "ExponentialBackward0")


def geometric_(t: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
    """Fill ``t`` with the number of Bernoulli(``p``) trials up to the first success
    (``P(k) = (1 - p)**(k - 1) * p``, ``k = 1, 2, ...``); any dtype but bool.

    NOTE: counts an integer dtype cannot hold (``p`` near 0) saturate at its largest value;
    PyTorch's conversion is undefined there.
    """
    (p,) = floats("geometric_", args, kwargs, (("p", _REQUIRED),))
    if not 0.0 < p < 1.0:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={fmt(p)}")
    dt = t.dtype
    if dt is dtypes.bool:
        raise not_implemented("geometric_cpu", dt)
    hi = None if dt.is_floating_point else float(dtypes.int_bounds(dt)[1])
    gen = generator_of(t._device, generator, lambda: _bad_gen("geometric_", generator))
    return refill(t, lambda be, s, d: be.geometric(gen, s, p, d, hi), "GeometricBackward0")


def cauchy_(t: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
    """Fill ``t`` (a float tensor) with Cauchy samples (density
    ``sigma / (pi * (sigma**2 + (x - median)**2))``, defaults 0 and 1)."""
    median, sigma = floats("cauchy_", args, kwargs, (("median", 0.0), ("sigma", 1.0)))
    if not sigma > 0.0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={fmt(sigma)}")
    if not t.dtype.is_floating_point:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. dtype "
                           f"must be a floating point but you specified {dtypes.c_type_name(t.dtype)}")
    gen = generator_of(t._device, generator, lambda: _bad_gen("cauchy_", generator))
    return refill(t, lambda be, s, d: be.cauchy(gen, s, median, sigma, d), "CauchyBackward0")


def log_normal_(t: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
    """Fill ``t`` (a float tensor) with ``exp(N(mean, std**2))`` samples (defaults 1 and 2, as
    PyTorch's)."""
    mean, std = floats("log_normal_", args, kwargs, (("mean", 1.0), ("std", 2.0)))
    if not std > 0.0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={fmt(std)}")
    float_only("log_normal_cpu", t.dtype)
    gen = generator_of(t._device, generator, lambda: _bad_gen("log_normal_", generator))
    return refill(t, lambda be, s, d: be.log_normal(gen, s, mean, std, d), "LogNormalBackward0")


def random_(t: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
    """Fill ``t`` with integers uniform in ``[from, to - 1]``: ``random_()`` (the dtype's range:
    ``[0, 2**mantissa_digits]`` for floats, ``[0, max]`` for integers), ``random_(to)``,
    ``random_(from, to)`` (``to=None``: up to that top end). Keywords ``from``/``to``."""
    def bad() -> TypeError:
        given = dict(kwargs)
        if generator is not None:
            given["generator"] = generator
        return invalid_arguments("random_", args, given)

    if len(args) > 2:
        raise TypeError(f"random_() takes 2 positional arguments but {len(args)} were given")
    if set(kwargs) - {"from", "to"}:
        raise bad()
    vals = list(args)
    if "from" in kwargs:
        if vals or "to" not in kwargs:
            raise bad()
        vals = [kwargs["from"], kwargs["to"]]
    elif "to" in kwargs:
        vals.append(kwargs["to"])
    if len(vals) == 1:
        vals = [0, vals[0]] if int_like(vals[0]) else [None]
    if vals and (not int_like(vals[0]) or not (vals[1] is None or int_like(vals[1]))):
        raise bad()
    gen = generator_of(t._device, generator, bad)
    if vals:
        lo, hi = random_range(as_int64(vals[0]), None if vals[1] is None else as_int64(vals[1]),
                              t.dtype)
        name = "RandomBackward1" if len(args) + len(kwargs) == 1 else "RandomBackward0"
    else:
        lo, hi = random_range(None, None, t.dtype)
        name = "RandomBackward2"
    return refill(t, lambda be, s, d: be.random_ints(gen, lo, hi, s, d), name)


def bernoulli_(t: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
    """Fill ``t`` with 1 with probability ``p`` (a float, default 0.5, or a float tensor
    broadcasting to ``t``'s shape), else 0; any dtype."""
    def bad() -> TypeError:
        given = dict(kwargs)
        if generator is not None:
            given["generator"] = generator
        return invalid_arguments("bernoulli_", args, given)

    if len(args) > 1 or set(kwargs) - {"p"} or (args and kwargs):
        raise bad()
    p = args[0] if args else kwargs.get("p", 0.5)
    if isinstance(p, Tensor):
        gen = generator_of(t._device, generator, bad)
        if not p.dtype.is_floating_point:
            raise not_implemented("bernoulli_tensor_cpu_p_", p.dtype)
        p = p.expand(t.shape)
        return refill(t, lambda be, s, d, pa: be.bernoulli(gen, probabilities(be, pa), d),
                      "BernoulliBackward1", p)
    if not isinstance(p, (int, float)) or isinstance(p, complex):
        raise bad()
    gen = generator_of(t._device, generator, bad)
    p = float(p)
    if not 0.0 <= p <= 1.0:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={fmt(p)}")
    return refill(t, lambda be, s, d: be.bernoulli_scalar(gen, s, p, d), "BernoulliBackward2")


def probabilities(be: Any, p: Any) -> Any:
    """The probability array ``p`` (``bernoulli``), checked as PyTorch does: every value in
    ``[0, 1]``."""
    if be.any_true(~((p >= 0) & (p <= 1))):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    return p


def _bad_gen(fn: str, generator: Any) -> TypeError:
    return TypeError(f"{fn}(): argument 'generator' must be torch.Generator, not "
                     f"{type(generator).__name__}")
