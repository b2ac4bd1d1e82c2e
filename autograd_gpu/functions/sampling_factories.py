"""``rand``, ``randn``, ``randint``, ``randperm`` (with PyTorch's ``out=``), ``rand_like`` and
``randn_like`` with PyTorch's remaining argument rules, over the factories of ``random.py``: ``randint`` checks its range as
``random_`` does (float dtypes too: the dtype must hold ``high - 1``, with PyTorch's precision
warning past ``2**digits``), ``randperm`` refuses the ``n`` a float dtype cannot count to, and a
``generator=`` that is not one gets PyTorch's message.
"""

from __future__ import annotations

import builtins
import operator
from typing import Any

from .. import dtypes
from ..autograd.grad_mode import STATE
from .. import creation as C
from ..device import as_device
from ..tensor import Tensor
from . import sampling_inplace as SI
from .sampling_inplace import rnd
from .checks import invalid_arguments
from .out import check_out_grad, resize_, write_out

_PERM_MAX = {"float16": ("2049", "Half"), "float32": ("2^24+1", "Float"),
             "float64": ("2^53+1", "Double")}


def _check_generator(fn: str, args: tuple[Any, ...], generator: Any) -> None:
    if generator is not None and not isinstance(generator, rnd().Generator):
        raise invalid_arguments(fn, args, {"generator": generator})


def _out_dtype(fn: str, args: tuple[Any, ...], dtype: Any, out: Any) -> Any:
    """The dtype a factory computes in with ``out=``: ``dtype`` (which must match ``out``'s)
    or ``out``'s."""
    if not isinstance(out, Tensor):
        raise invalid_arguments(fn, args, {"out": out})
    dtypes.check_dtype(fn, dtype)
    if dtype is not None and dtype is not out.dtype:
        raise RuntimeError(f"dtype {dtypes.scalar_type_name(dtype)} does not match dtype of out "
                           f"parameter ({dtypes.scalar_type_name(out.dtype)})")
    return out.dtype


def _write(fn: str, result: Tensor, out: Tensor) -> Tensor:
    if STATE.grad_enabled and out._requires_grad:
        raise RuntimeError(f"aten::{fn}(): functions with out=... arguments don't support "
                           "automatic differentiation, but one of the arguments requires grad.")
    return write_quiet(fn, result.detach(), out)


def write_quiet(fn: str, result: Tensor, out: Any, inputs: tuple[Any, ...] = ()) -> Any:
    """``write_out`` for the samplers PyTorch resizes ``out`` for without its deprecation
    warning (``multinomial``, ``bernoulli``, ``normal(mean, std, size)`` and the factories)."""
    check_out_grad(fn, inputs, out)
    if isinstance(out, Tensor) and tuple(out.shape) != tuple(result.shape) and \
            out._device is result._device:
        resize_(out, tuple(result.shape))
    return write_out(fn, result, out, inputs=inputs)


def rand(*size: Any, out: Any = None, generator: Any = None, dtype: Any = None,
         **kwargs: Any) -> Tensor:
    """Uniform samples in ``[0, 1)``: ``rand(2, 3)`` or ``rand((2, 3))``; float dtypes only
    (``random.rand``, with ``out=``)."""
    _check_generator("rand", size, generator)
    if out is None:
        return rnd().rand(*size, generator=generator, dtype=dtype, **kwargs)
    dt = _out_dtype("rand", size, dtype, out)
    kwargs.setdefault("device", out._device)
    return _write("rand", rnd().rand(*size, generator=generator, dtype=dt, **kwargs), out)


def randn(*size: Any, out: Any = None, generator: Any = None, dtype: Any = None,
          **kwargs: Any) -> Tensor:
    """Standard normal samples: ``randn(2, 3)`` or ``randn((2, 3))``; float dtypes only
    (``random.randn``, with ``out=``)."""
    _check_generator("randn", size, generator)
    if out is None:
        return rnd().randn(*size, generator=generator, dtype=dtype, **kwargs)
    dt = _out_dtype("randn", size, dtype, out)
    kwargs.setdefault("device", out._device)
    return _write("randn", rnd().randn(*size, generator=generator, dtype=dt, **kwargs), out)


def rand_like(input: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:  # noqa: A002
    """``rand`` in ``input``'s shape and layout (and its dtype and device unless given):
    ``random.rand_like`` with PyTorch's refusals of extra positional arguments and of a
    ``generator=`` that is not one."""
    if args or (generator is not None and not isinstance(generator, rnd().Generator)):
        raise invalid_arguments("rand_like", (input,) + args,
                                {**kwargs, **({"generator": generator} if generator is not None
                                              else {})})
    return rnd().rand_like(input, generator=generator, **kwargs)


def randn_like(input: Tensor, *args: Any, generator: Any = None, **kwargs: Any) -> Tensor:  # noqa: A002
    """``randn`` in ``input``'s shape and layout (see ``rand_like``)."""
    if args or (generator is not None and not isinstance(generator, rnd().Generator)):
        raise invalid_arguments("randn_like", (input,) + args,
                                {**kwargs, **({"generator": generator} if generator is not None
                                              else {})})
    return rnd().randn_like(input, generator=generator, **kwargs)


def randint(*args: Any, out: Any = None, generator: Any = None, dtype: Any = None,
            device: Any = None, requires_grad: bool = False, **kwargs: Any) -> Tensor:
    """Integers uniform in ``[low, high)``: ``randint(high, size)`` or
    ``randint(low, high, size)`` (``size`` a tuple), int64 unless ``dtype`` (or ``out``) says
    otherwise; the range is checked as ``random_`` checks it.

    Example:
        >>> randint(3, 4, (2,))
        tensor([3, 3])
    """
    given = {k: v for k, v in kwargs.items() if k in ("low", "high", "size")}
    extra = {k: v for k, v in kwargs.items() if k not in given}
    pos = list(args)
    size = given.get("size")
    if size is None and pos and isinstance(pos[-1], (tuple, list)):
        size = pos.pop()
    if "low" in given and (pos or "high" not in given):
        raise invalid_arguments("randint", args, given)
    vals = pos + [given[k] for k in ("low", "high") if k in given]
    if size is None:
        if len(vals) == 2:
            raise TypeError(f"randint(): argument 'size' (position 2) must be tuple of ints, "
                            f"not {type(vals[1]).__name__}")
        raise invalid_arguments("randint", args, given)
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"randint(): argument 'size' must be tuple of ints, not "
                        f"{type(size).__name__}")
    if len(vals) not in (1, 2) or not builtins.all(SI.int_like(v) for v in vals) or \
            not builtins.all(SI.int_like(s) or _index(s) for s in size):
        raise invalid_arguments("randint", args, given)
    ints = [SI.as_int64(v) for v in vals]
    lo, to = (0, ints[0]) if len(ints) == 1 else (ints[0], ints[1])
    shape = C.parse_size("randint", (size,), extra)
    _check_generator("randint", args, generator)
    dt = _out_dtype("randint", args, dtype, out) if out is not None else dtype
    dtypes.check_dtype("randint", dt)
    dt = dt or dtypes.int64
    lo, hi = SI.random_range(lo, to, dt)
    dev = as_device(device if device is not None or out is None else out._device)
    gen = rnd()._gen_for(dev, generator)
    if requires_grad and dt.category < 2:
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    result = rnd()._factory(lambda s: dev.backend.random_ints(gen, lo, hi, s, dt.name), shape,
                            dev, requires_grad)
    return result if out is None else _write("randint", result, out)


def _index(s: Any) -> bool:
    try:
        operator.index(s)
    except TypeError:
        return False
    return not isinstance(s, bool)


def randperm(n: Any, *, out: Any = None, generator: Any = None, dtype: Any = None,
             **kwargs: Any) -> Tensor:
    """A random permutation of ``0 .. n-1`` (int64 unless ``dtype``, or ``out``, says
    otherwise; a float dtype must count to ``n`` exactly)."""
    _check_generator("randperm", (n,), generator)
    dt = _out_dtype("randperm", (n,), dtype, out) if out is not None else dtype
    dtypes.check_dtype("randperm", dt)
    if dt is not None and dt.is_floating_point:
        count = SI.as_int64(n.item() if isinstance(n, Tensor) else n) if SI.int_like(n) else 0
        top, name = _PERM_MAX[dt.name]
        if count > (1 << SI._DIGITS[dt.name]) + 1:
            raise RuntimeError(f"n cannot be greater than {top} for {name} type.")
    if out is not None:
        kwargs.setdefault("device", out._device)
    result = rnd().randperm(n, generator=generator, dtype=dt, **kwargs)
    return result if out is None else _write("randperm", result, out)
