"""``vmap``: a function of one sample, run once on a whole batch."""

from __future__ import annotations

import functools
from typing import Any, Callable

from ..tensor import Tensor
from . import _pytree as tree
from ._batched import LEVELS, BatchedTensor, expose, levels_of

_RANDOMNESS = ("error", "different", "same")


def _name(func: Any) -> str:
    if isinstance(func, functools.partial):
        return f"functools.partial({_name(func.func)}, ...)"
    return getattr(func, "__name__", repr(func))


def vmap(func: Callable[..., Any], in_dims: Any = 0, out_dims: Any = 0,
         randomness: str = "error", *, chunk_size: int | None = None) -> Callable[..., Any]:
    """Vectorize ``func`` over a batch dimension: each op runs once on the whole batch.

    ``vmap(f)(xs)`` equals ``stack([f(x) for x in xs])`` but calls ``f`` once, with tensors
    that look like one sample (``BatchedTensor``); every op applies its batching rule.

    Args:
        func: takes (nested containers of) tensors, returns (containers of) tensors.
        in_dims: the batch dim of each positional argument: an int, None (not batched) or a
            structure matching the arguments. Keyword arguments are not batched.
        out_dims: where the batch dim goes in each output (int, None, or a structure).
        randomness: random ops inside ``func``: ``'error'`` (the default) refuses them,
            ``'different'`` draws per sample, ``'same'`` draws once for the whole batch.
        chunk_size: run the batch in chunks of this many samples (less memory); None runs
            it at once.

    Returns:
        The vectorized function.

    Example:
        >>> vmap(lambda x: (x * x).sum())(arange(6.0).reshape(2, 3))
        tensor([ 5., 50.])
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError("Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size < 1):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        _check_out_dims(func, out_dims)
        flat_args, spec, flat_dims, size = _check_inputs(func, in_dims, args)
        if chunk_size is None or chunk_size >= size:
            return _run(func, flat_args, flat_dims, spec, size, out_dims, randomness, kwargs)
        return _run_chunks(func, flat_args, flat_dims, spec, size, out_dims, randomness,
                           kwargs, chunk_size)

    return wrapped


def _check_out_dims(func: Any, out_dims: Any) -> None:
    """Before ``func`` runs, as torch: every leaf of ``out_dims`` is an int or None."""
    if isinstance(out_dims, int):
        return
    for d in tree.flatten(out_dims)[0]:
        if d is not None and not isinstance(d, int):
            raise ValueError(
                f"vmap({_name(func)}, ..., out_dims={out_dims}): `out_dims` must be an int, None "
                "or a python collection of ints representing where in the outputs the vmapped "
                "dimension should appear.")


def _check_inputs(func: Any, in_dims: Any, args: tuple[Any, ...]) -> tuple[Any, ...]:
    name = _name(func)
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to be int or a "
            "(potentially nested) tuple matching the structure of inputs, got: "
            f"{type(in_dims)}.")
    if not args:
        raise ValueError(
            f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add inputs, or you are "
            "trying to vmap over a function with no inputs. The latter is unsupported.")
    flat_args, spec = tree.flatten(args)
    flat_dims = tree.broadcast(in_dims, spec)
    if flat_dims is None:
        in_spec = tree.flatten(in_dims)[1]
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
            f"structure of `inputs`. in_dims has structure {tree.describe(in_spec)} but inputs "
            f"has structure {tree.describe(spec)}.")
    sizes = []
    for i, (a, d) in enumerate(zip(flat_args, flat_dims)):
        if d is None:
            continue
        if not isinstance(d, int) or isinstance(d, bool):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input "
                "but in_dim must be either an integer dimension or None.")
        if not isinstance(a, Tensor):
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for an input "
                f"but the input is of type {type(a)}. We cannot vmap over non-Tensor arguments, "
                "please use None as the respective in_dim")
        nd = a.ndim
        if not -nd <= d < nd:
            raise ValueError(
                f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} for some input, "
                f"but that input is a Tensor of dimensionality {nd} so expected in_dim to "
                f"satisfy -{nd} <= in_dim < {nd}.")
        flat_dims[i] = d % nd
        sizes.append(a.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError("vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return flat_args, spec, flat_dims, sizes[0]


def _run(func: Any, flat_args: list[Any], flat_dims: list[Any], spec: Any, size: int,
         out_dims: Any, randomness: str, kwargs: dict[str, Any]) -> Any:
    LEVELS.counter += 1
    level = LEVELS.counter
    LEVELS.stack.append((level, size, randomness))
    try:
        batched = [a if d is None else BatchedTensor.wrap(a, d, level)
                   for a, d in zip(flat_args, flat_dims)]
        out = func(*tree.unflatten(batched, spec), **kwargs)
    finally:
        LEVELS.stack.pop()
    return _unwrap(func, out, out_dims, level, size)


def _unwrap(func: Any, out: Any, out_dims: Any, level: int, size: int) -> Any:
    name = _name(func)
    flat, spec = tree.flatten(out)
    dims = _flat_out_dims(out, out_dims, spec)
    if dims is None:
        raise ValueError(
            f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
            f"the structure of `outputs`. out_dims has structure "
            f"{tree.describe(tree.flatten(out_dims)[1])} but outputs has structure "
            f"{tree.describe(spec)}.")
    result = []
    for o, d in zip(flat, dims):
        if d is not None and (not isinstance(d, int) or isinstance(d, bool)):
            raise ValueError(
                f"vmap({name}, ..., out_dims={out_dims}): `out_dims` must be an int, None or a "
                "python collection of ints representing where in the outputs the vmapped "
                "dimension should appear.")
        if d is None:
            if isinstance(o, Tensor) and level in levels_of(o):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 "when out_dim is None")
            result.append(o)
            continue
        if not isinstance(o, Tensor):
            raise ValueError(
                f"vmap({name}, ...): `{name}` must only return Tensors, got type {type(o)}. "
                "Did you mean to set out_dims= to None for output?")
        t = expose(o, level, size)
        nd = t.ndim
        if not -nd <= d < nd:
            raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                             f"{nd - 1}], but got {d})")
        result.append(t.movedim(0, d) if d % nd else t)
    return tree.unflatten(result, spec)


def _flat_out_dims(out: Any, out_dims: Any, spec: Any) -> list[Any] | None:
    """One out_dim per output leaf (None when ``out_dims`` does not fit the outputs)."""
    if isinstance(out, Tensor):
        if out_dims is None or isinstance(out_dims, int):
            return [out_dims]
        return list(out_dims) if isinstance(out_dims, tuple) and len(out_dims) == 1 else None
    return tree.broadcast(out_dims, spec)


def _run_chunks(func: Any, flat_args: list[Any], flat_dims: list[Any], spec: Any, size: int,
                out_dims: Any, randomness: str, kwargs: dict[str, Any], chunk_size: int) -> Any:
    from .. import random
    from ..functions import cat

    starts = range(0, size, chunk_size)
    rng = random.get_rng_state() if randomness == "same" else None
    outs = []
    for s in starts:
        n = min(chunk_size, size - s)
        chunk = [a if d is None else a.narrow(d, s, n) for a, d in zip(flat_args, flat_dims)]
        if rng is not None:
            random.set_rng_state(rng)  # NOTE: 'same' means the same draws in every chunk
        outs.append(_run(func, chunk, flat_dims, spec, n, out_dims, randomness, kwargs))
    out_spec = tree.flatten(outs[0])[1]
    dims = _flat_out_dims(outs[0], out_dims, out_spec)
    assert dims is not None  # NOTE: _unwrap checked it on every chunk
    flats = [tree.flatten(o)[0] for o in outs]
    merged = []
    for k, d in enumerate(dims):
        merged.append(flats[0][k] if d is None else cat([f[k] for f in flats], dim=d))
    return tree.unflatten(merged, out_spec)
