"""Random sampling: multinomial, bernoulli, normal, poisson, randint_like and the in-place samplers of Tensor.

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.

Draws come from the device's stream (``random.py``: ``manual_seed``, ``Generator``), so a seed
reproduces them on every device; they are not PyTorch's numbers (its CPU generator is not
public API), but the distributions, shapes, dtypes, layouts and errors are PyTorch's. The
in-place samplers (``x.exponential_()``, ...) live in ``sampling_inplace``; ``sampling_factories``
gives ``random.py``'s ``rand``/``randn``/``randint``/``randperm`` PyTorch's ``out=`` and its
remaining argument rules (these names shadow ``random.py``'s in ``autograd_gpu``).
"""

from __future__ import annotations

from typing import Any, Callable

from .. import dtypes
from ..autograd.grad_mode import no_grad
from .. import creation as C
from ..device import as_device
from ..ops.sampling import Sample, SampleNoDerivative
from ..tensor import Tensor
from . import sampling_factories as SF
from . import sampling_inplace as SI
from .sampling_inplace import rnd
from .checks import expect_tensor, invalid_arguments
from .out import write_out
from .shape import _broadcast_shapes, broadcast_shapes

__all__: list[str] = ["multinomial", "bernoulli", "binomial", "normal", "poisson", "randint_like",
                      "rand", "randn", "randint", "randperm", "rand_like", "randn_like"]

_REQUIRED = SI._REQUIRED
_MAX_CATEGORIES = 1 << 24


# ---- multinomial -------------------------------------------------------------------------------

def multinomial(input: Tensor, num_samples: Any = _REQUIRED, replacement: Any = False, *,  # noqa: A002
                generator: Any = None, out: Any = None, _method: bool = False) -> Tensor:
    """``num_samples`` category indices drawn from each row of ``input`` (1-D: one distribution;
    2-D: one per row), each in proportion to its weight (non-negative, finite, not all zero).

    Without ``replacement`` a row's indices are distinct (the first drawn first); a category of
    weight 0 is drawn only once the positive ones are used up, as in PyTorch.

    Returns:
        int64 tensor of shape ``(num_samples,)`` or ``(rows, num_samples)``; no gradient.

    Example:
        >>> multinomial(tensor([0.0, 1.0, 0.0]), 2, replacement=True)
        tensor([1, 1])
    """
    shift = 1 if _method else 0
    expect_tensor("multinomial", "input", 1, input)
    if num_samples is _REQUIRED:
        raise TypeError('multinomial() missing 1 required positional arguments: "num_samples"')
    n = _int_param("multinomial", "num_samples", 2 - shift, num_samples)
    if not isinstance(replacement, bool) and not _is_np_bool(replacement):
        raise TypeError(f"multinomial(): argument 'replacement' (position {3 - shift}) must be "
                        f"bool, not {type(replacement).__name__}")
    replacement = bool(replacement)
    gen = SI.generator_of(input._device, generator, lambda: SI._bad_gen("multinomial", generator))
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError("multinomial only supports floating-point dtypes for input, got: "
                           f"{dtypes.scalar_type_name(input.dtype)}")
    if out is not None and isinstance(out, Tensor) and out.dtype is not dtypes.int64:
        raise RuntimeError(f"multinomial expects Long tensor out, got: "
                           f"{dtypes.scalar_type_name(out.dtype)}")
    if n <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    k = input.shape[-1]
    if not replacement and n > k:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    if k > _MAX_CATEGORIES:
        raise RuntimeError("number of categories cannot exceed 2^24")
    shape = (n,) if input.ndim == 1 else (input.shape[0], n)

    def draw(be: Any, p: Any) -> Any:
        rows = 1 if p.ndim == 1 else p.shape[0]
        if rows and not k:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        if not rows:
            return be.zeros(shape, "int64")
        p = be.reshape(p, (rows, k))
        if be.any_true(~(p >= 0) | be.xp.isinf(p)):
            raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
        if be.any_true(~(be.widen_exact(p).sum(axis=1) > 0)):
            raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
        return be.reshape(be.multinomial(gen, p, n, replacement), shape)

    (input,) = SI.vmap_rules((input,))
    with no_grad():
        result = Sample.apply(input, draw=draw, name="MultinomialBackward0")
    return result if out is None else SF.write_quiet("multinomial", result, out)


def _is_np_bool(x: Any) -> bool:
    return type(x).__name__ == "bool_" and hasattr(x, "item")


def _int_param(fn: str, name: str, position: int, value: Any) -> int:
    """An ``int`` argument as PyTorch's parser reads it (a one-element integer tensor too)."""
    if isinstance(value, Tensor) and value.numel() == 1 and value.dtype.category == 1:
        return SI.as_int64(value.item())
    if SI.int_like(value) and not isinstance(value, Tensor):
        return SI.as_int64(value)
    raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be int, not "
                    f"{type(value).__name__}")


def _multinomial_method(t: Tensor, num_samples: Any = _REQUIRED, replacement: Any = False, *,
                        generator: Any = None) -> Tensor:
    return multinomial(t, num_samples, replacement, generator=generator, _method=True)


# ---- bernoulli ---------------------------------------------------------------------------------

def bernoulli(input: Tensor, *args: Any, generator: Any = None, out: Any = None,  # noqa: A002
              _method: bool = False, **kwargs: Any) -> Tensor:
    """1 with probability ``input`` (a float tensor of probabilities in ``[0, 1]``), else 0;
    or, given ``p`` (a float), 1 with probability ``p`` in ``input``'s shape.

    The result has ``input``'s dtype (``out``'s with ``out=``) and shape, C-contiguous. With
    autograd ``bernoulli(input)`` records ``BernoulliBackward0`` (``input`` gets a zero
    gradient); ``bernoulli(input, p)`` has no derivative (backward raises), as in PyTorch.

    Example:
        >>> bernoulli(tensor([0.0, 1.0]))
        tensor([0., 1.])
    """
    fn = "bernoulli"
    pos = args if _method else (input,) + args

    def bad() -> TypeError:
        given = dict(kwargs)
        for k, v in (("out", out), ("generator", generator)):
            if v is not None:
                given[k] = v
        return invalid_arguments(fn, pos, given)

    if not _method:
        expect_tensor(fn, "input", 1, input)
    if len(args) > 1 or set(kwargs) - {"p"} or (args and kwargs):
        raise bad()
    gen = SI.generator_of(input._device, generator, bad)
    if args or kwargs:
        p = args[0] if args else kwargs["p"]
        if isinstance(p, Tensor) or not isinstance(p, (int, float)) or out is not None:
            raise bad()
        p = float(p)
        if not 0.0 <= p <= 1.0:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={SI.fmt(p)}")
        (input,) = SI.vmap_rules((input,))
        return SampleNoDerivative.apply(
            input, draw=lambda be, x: be.bernoulli_scalar(gen, x.shape, p, x.dtype.name),
            op="bernoulli")
    if not input.dtype.is_floating_point:
        raise SI.not_implemented("bernoulli_tensor_cpu_p_", input.dtype)
    dt = (out.dtype if isinstance(out, Tensor) else input.dtype).name
    (input,) = SI.vmap_rules((input,))
    result = Sample.apply(input, draw=lambda be, p: be.bernoulli(gen, SI.probabilities(be, p), dt),
                          name="BernoulliBackward0")
    return result if out is None else SF.write_quiet(fn, result, out, inputs=(input,))


def _bernoulli_method(t: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:
    return bernoulli(t, *args, generator=generator, _method=True, **kwargs)


# ---- normal ------------------------------------------------------------------------------------

_FACTORY_KW = ("dtype", "layout", "device", "pin_memory", "requires_grad")


def normal(*args: Any, generator: Any = None, out: Any = None, **kwargs: Any) -> Tensor:
    """Samples of N(mean, std**2), in PyTorch's four forms:

    - ``normal(mean, std)``, both tensors: one sample per element of their broadcast shape,
      in ``mean``'s dtype;
    - ``normal(mean, std=1.0)``, ``mean`` a tensor: ``mean``'s shape and dtype;
    - ``normal(mean, std)``, ``mean`` a number, ``std`` a tensor: ``std``'s shape and dtype;
    - ``normal(mean, std, size)``, both numbers: a new tensor (``dtype=``, ``device=``,
      ``requires_grad=`` as the factories).

    ``std`` must be non-negative. With autograd the tensor forms record PyTorch's
    ``NormalBackward1/2/3``: ``mean`` and ``std`` get zero gradients (PyTorch's formula: the
    draw is not reparametrised).

    Example:
        >>> normal(2.0, 0.0, (2,))
        tensor([2., 2.])
    """
    def bad() -> TypeError:
        given = dict(kwargs)
        for k, v in (("out", out), ("generator", generator)):
            if v is not None:
                given[k] = v
        return invalid_arguments("normal", args, given)

    names = ("mean", "std", "size")
    if len(args) > 3:
        raise bad()
    vals = dict(zip(names, args))
    for k in names[len(args):]:
        if k in kwargs:
            vals[k] = kwargs[k]
    extra = set(kwargs) - set(names) - set(_FACTORY_KW)
    if extra or set(kwargs) & set(names[:len(args)]):
        raise bad()
    if "mean" not in vals:
        raise TypeError('normal() missing 1 required positional arguments: "mean"')
    mean: Any = vals["mean"]
    std: Any = vals.get("std", 1.0 if isinstance(mean, Tensor) else None)
    factory = {k: kwargs[k] for k in _FACTORY_KW if k in kwargs}
    if isinstance(mean, Tensor) or isinstance(std, Tensor):
        if "size" in vals or factory or not (_number(mean) or isinstance(mean, Tensor)) or \
                not (_number(std) or isinstance(std, Tensor)):
            raise bad()
        return _normal_tensors(mean, std, SI.generator_of(_device_of(mean, std), generator, bad),
                               out)
    if not (_number(mean) and _number(std)) or "size" not in vals or \
            not isinstance(vals["size"], (tuple, list)):
        raise bad()
    dtypes.check_dtype("normal", factory.get("dtype"))
    mean, std = float(mean), float(std)
    shape = C.parse_size("normal", (vals["size"],), {})
    if not std >= 0.0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {SI.fmt(std)}")
    dt = factory.get("dtype") or (out.dtype if isinstance(out, Tensor) else
                                  dtypes.get_default_dtype())
    SI.float_only("normal_kernel_cpu", dt)
    device = factory.get("device")
    dev = as_device(device if device is not None or not isinstance(out, Tensor) else out._device)
    gen = SI.generator_of(dev, generator, bad)
    if out is not None and isinstance(out, Tensor) and "dtype" in factory and \
            out.dtype is not dt:
        raise RuntimeError(f"dtype {dtypes.scalar_type_name(dt)} does not match dtype of out "
                           f"parameter ({dtypes.scalar_type_name(out.dtype)})")
    result = rnd()._factory(lambda s: dev.backend.normal(gen, mean, std, s, dt.name), shape,
                            dev, bool(factory.get("requires_grad", False)))
    return result if out is None else SF.write_quiet("normal", result, out)


def _number(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, complex)


def _device_of(mean: Any, std: Any) -> Any:
    """The device a draw of ``normal(mean, std)`` happens on: a 0-d CPU tensor joins the other
    tensor's device, as in every op."""
    tensors = [t for t in (mean, std) if isinstance(t, Tensor)]
    main = [t for t in tensors if t.ndim or t._device.type != "cpu"]
    return (main or tensors)[0]._device


def _normal_tensors(mean: Any, std: Any, gen: Any, out: Any) -> Tensor:
    checked = False
    if isinstance(std, Tensor) and not std._level:
        with no_grad():
            if std.backend.any_true(~(std._data >= 0)):
                raise RuntimeError("normal expects all elements of std >= 0.0")
        checked = True
    elif not isinstance(std, Tensor):
        std = float(std)
        if not std >= 0.0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {SI.fmt(std)}")
    if isinstance(mean, Tensor) and isinstance(std, Tensor):
        broadcast_shapes(mean.shape, std.shape)  # NOTE: PyTorch's error where they do not fit
        own, name = mean, "NormalBackward3"
    elif isinstance(mean, Tensor):
        own, name = mean, "NormalBackward1"
    else:
        own, name = std, "NormalBackward2"
        mean = float(mean)
    dt = out.dtype if isinstance(out, Tensor) else own.dtype
    SI.float_only("normal_kernel_cpu", dt)
    # NOTE: with out=, PyTorch draws into out and adds the mean: the shapes broadcast
    into = tuple(out.shape) if name == "NormalBackward1" and isinstance(out, Tensor) else ()
    if into:
        _broadcast_shapes(mean.shape, into)
    tensors = SI.vmap_rules([t for t in (mean, std) if isinstance(t, Tensor)])
    m, s = mean, std

    def draw(be: Any, *arrays: Any) -> Any:
        it = iter(arrays)
        mu = next(it) if isinstance(m, Tensor) else m
        sd = next(it) if isinstance(s, Tensor) else s
        if isinstance(s, Tensor) and not checked and be.any_true(~(sd >= 0)):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        full = _broadcast_shapes(getattr(mu, "shape", ()), getattr(sd, "shape", ()), into)
        return be.normal(gen, mu, sd, full, dt.name)

    result = Sample.apply(*tensors, draw=draw, name=name)
    return result if out is None else write_out("normal", result, out, inputs=tensors)


# ---- poisson -----------------------------------------------------------------------------------

def poisson(input: Tensor, generator: Any = None) -> Tensor:  # noqa: A002
    """Poisson counts, one per element of ``input`` (rates: a non-negative float tensor), in
    ``input``'s dtype and shape. With autograd ``input`` gets a zero gradient
    (``PoissonBackward0``, as PyTorch).

    NOTE: rates from 1e15 up draw from the normal approximation (exact to far below one count
    in a million there); an infinite rate gives inf (PyTorch's result there is undefined).

    Example:
        >>> poisson(tensor([0.0, 0.0]))
        tensor([0., 0.])
    """
    expect_tensor("poisson", "input", 1, input)
    gen = SI.generator_of(input._device, generator, lambda: SI._bad_gen("poisson", generator))
    SI.float_only("poisson_cpu", input.dtype)

    def draw(be: Any, lam: Any) -> Any:
        if be.any_true(~(lam >= 0)):
            raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
        return be.poisson(gen, lam, lam.dtype.name)

    (input,) = SI.vmap_rules((input,))
    return Sample.apply(input, draw=draw, name="PoissonBackward0")


def binomial(count: Tensor, prob: Tensor, generator: Any = None) -> Tensor:
    """Samples of Binomial(``count``, ``prob``): the successes in ``count`` trials of
    probability ``prob`` (float tensors of one dtype, broadcast together), in that dtype. With
    autograd the result records PyTorch's node that refuses backward.

    NOTE: outside the domain (a negative count, ``prob`` outside [0, 1]) PyTorch's result is
    undefined; here it is NaN.

    Example:
        >>> binomial(tensor([0.0, 4.0]), tensor([0.5, 1.0]))
        tensor([0., 4.])
    """
    expect_tensor("binomial", "count", 1, count)
    expect_tensor("binomial", "prob", 2, prob)
    gen = SI.generator_of(count._device, generator, lambda: SI._bad_gen("binomial", generator))
    if not count.dtype.is_floating_point:
        raise ValueError("binomial only supports floating-point dtypes for count, got: "
                         f"{dtypes.scalar_type_name(count.dtype)}")
    SI.float_only("binomial_cpu", count.dtype)
    if count.dtype is dtypes.float16:
        raise SI.not_implemented("binomial_cpu", count.dtype)
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {dtypes.scalar_type_name(prob.dtype)} but expected "
                           f"{dtypes.scalar_type_name(count.dtype)}")
    from .manip_join import broadcast_tensors  # late: the manip family builds on more

    count, prob = broadcast_tensors(count, prob)

    def draw(be: Any, n: Any, p: Any) -> Any:
        return be.binomial(gen, n, p, n.dtype.name)

    count, prob = SI.vmap_rules((count, prob))
    return SampleNoDerivative.apply(count, prob, draw=draw, op="binomial")  # type: ignore[no-any-return]


# ---- randint_like ------------------------------------------------------------------------------

def randint_like(input: Tensor, *args: Any, dtype: Any = None, layout: Any = None,  # noqa: A002
                 device: Any = None, requires_grad: bool = False, memory_format: Any = None,
                 generator: Any = None, pin_memory: Any = None, **kwargs: Any) -> Tensor:
    """Integers uniform in ``[low, high)`` (``low`` 0 unless given) in ``input``'s shape and
    layout, and its dtype and device unless ``dtype``/``device`` say otherwise: PyTorch's
    ``random_(low, high)`` on an ``empty_like``, its range checks included.

    Example:
        >>> randint_like(zeros(2), 1, 2)
        tensor([1., 1.])
    """
    def bad() -> TypeError:
        given = dict(kwargs)
        if generator is not None:
            given["generator"] = generator
        return invalid_arguments("randint_like", (input,) + args, given)

    expect_tensor("randint_like", "input", 1, input)
    vals = list(args)
    if len(vals) > 2 or set(kwargs) - {"low", "high"}:
        raise bad()
    if "low" in kwargs:
        if vals or "high" not in kwargs:
            raise bad()
        vals = [kwargs["low"], kwargs["high"]]
    elif "high" in kwargs:
        vals.append(kwargs["high"])
    if not vals:
        raise bad()
    for v in vals:
        if isinstance(v, Tensor) and v.ndim:
            raise RuntimeError(f"{'high' if v is vals[-1] else 'low'} must be a scalar tensor "
                               "and on CPU")
        if not SI.int_like(v):
            raise bad()
    lo, to = (0, SI.as_int64(vals[0])) if len(vals) == 1 else (SI.as_int64(vals[0]),
                                                               SI.as_int64(vals[1]))
    dtypes.check_dtype("randint_like", dtype)
    dt = dtype or input.dtype
    dev = as_device(device) if device is not None else input._device
    gen = SI.generator_of(dev, generator, bad)
    lo, hi = SI.random_range(lo, to, dt)
    return C.like_layout(input, lambda s: rnd()._factory(
        lambda shape: dev.backend.random_ints(gen, lo, hi, shape, dt.name), s, dev,
        requires_grad))


# ---- exports -----------------------------------------------------------------------------------

rand, randn, randint, randperm = SF.rand, SF.randn, SF.randint, SF.randperm
rand_like, randn_like = SF.rand_like, SF.randn_like

TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "multinomial": _multinomial_method,
    "bernoulli": _bernoulli_method,
    "bernoulli_": SI.bernoulli_,
    "uniform_": SI.uniform_,
    "normal_": SI.normal_,
    "exponential_": SI.exponential_,
    "geometric_": SI.geometric_,
    "cauchy_": SI.cauchy_,
    "log_normal_": SI.log_normal_,
    "random_": SI.random_,
}
