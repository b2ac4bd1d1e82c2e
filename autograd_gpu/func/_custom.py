"""``autograd.Function`` under ``vmap``: its ``vmap`` staticmethod, or a generated rule.

``Function.apply`` with an argument batched at some vmap level comes here (``VMAP_APPLY``).
The highest level ``L`` is peeled, as for any op, and either

- the class's ``vmap`` staticmethod runs on the whole-batch values (``info, in_dims, *args``)
  and its ``(output, out_dims)`` is wrapped back at ``L``; or, with ``generate_vmap_rule``,
- a generated Function (``Vmapped<Name>``) is applied to the whole-batch values. Its forward
  wraps them back at ``L`` and runs the user's forward and ``setup_context`` on the batched
  tensors (the batching rules of the ops inside do the work); its outputs are the whole-batch
  results (batch dim 0). Its backward runs the user's backward under a fresh vmap level, on the
  incoming whole-batch gradients and the saved tensors, both wrapped at that level: a
  ``vmap(backward)``. Gradients come back per sample, and are summed over the batch for
  arguments that were not batched.

Either way the autograd graph is recorded on the whole-batch tensors, as for every other op, so
``vmap(grad(f))`` and ``jacrev`` through a custom Function need nothing more.
"""

from __future__ import annotations

import weakref
from typing import Any, NamedTuple

from ..autograd import function as _function
from ..autograd.function import Function
from ..autograd.node import _RAW
from ..tensor import Tensor
from . import _pytree as tree
from ._batched import LEVELS, expose, insert

_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


class VmapInfo(NamedTuple):
    """What a ``vmap`` staticmethod learns about the vmap it runs under."""

    batch_size: int
    randomness: str


def vmap_apply(cls: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``cls.apply(*args, **kwargs)`` with some arguments batched (one level at a time)."""
    if any(isinstance(v, Tensor) for v in tree.flatten(kwargs)[0]):
        raise NotImplementedError(
            "Run vmap on autograd.Function with kwarg-only Tensor args. Please do not pass "
            f"kwarg-only Tensors to autograd.Function. Got: {kwargs}")
    overridden = cls.vmap is not Function.vmap
    if cls.generate_vmap_rule and overridden:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True and "
            "an overridden vmap staticmethod. Please set generate_vmap_rule=False or delete the "
            f"overridden vmap staticmethod to avoid ambiguity. {_DOCS}")
    if not cls.generate_vmap_rule and not overridden:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it does not have vmap support. Please "
            "override and implement the vmap staticmethod or set generate_vmap_rule=True. "
            f"{_DOCS}")
    level = max(a._level for a in args if isinstance(a, Tensor))
    values: list[Any] = []
    in_dims: list[int | None] = []
    size = 0
    for a in args:
        if isinstance(a, Tensor) and a._level == level:
            values.append(a._value)  # type: ignore[attr-defined]
            in_dims.append(a._bdim)  # type: ignore[attr-defined]
            size = a._value.shape[a._bdim]  # type: ignore[attr-defined]
        else:
            values.append(a)
            in_dims.append(None)
    randomness = next((r for lv, _, r in LEVELS.stack if lv == level), "error")
    if overridden:
        return _by_staticmethod(cls, level, VmapInfo(size, randomness), args, values,
                                tuple(in_dims), kwargs)
    spec = _Spec(cls, level, size, randomness, in_dims, kwargs)
    out = _generated(cls).apply(spec, *values)
    if isinstance(out, tuple):
        return tuple(_wrap(o, 0, level) for o in out)
    return _wrap(out, 0, level)


def _wrap(o: Any, bdim: int | None, level: int) -> Any:
    if bdim is None or not isinstance(o, Tensor):
        return o
    return insert(o, level, bdim % o.ndim)


# ---- a vmap staticmethod -----------------------------------------------------------------------

def _by_staticmethod(cls: Any, level: int, info: VmapInfo, args: tuple[Any, ...],
                     values: list[Any], in_dims: tuple[int | None, ...],
                     kwargs: dict[str, Any]) -> Any:
    result = cls.vmap(info, in_dims, *values, **kwargs)
    base = ("Expected the vmap staticmethod to have two returns, an output and out_dims with "
            "pytree structure compatible with the output. ")
    if not isinstance(result, tuple):
        raise RuntimeError(base + f"Got a {type(result)} instead")
    if len(result) != 2:
        raise RuntimeError(base + f"Got {len(result)} returns instead")
    output, out_dims = result
    flat, spec = tree.flatten(output)
    dims = tree.broadcast(out_dims, spec)
    if dims is None:
        raise RuntimeError(
            "The autograd.Function's vmap staticmethod returned an incompatible (output, "
            f"out_dims) tuple. Expected out_dims={out_dims} to be compatible with the structure "
            f"of `output`. out_dims has structure {tree.describe(tree.flatten(out_dims)[1])} "
            f"but output has structure {tree.describe(spec)}. {_DOCS}")
    wrapped = []
    for o, d in zip(flat, dims):
        # NOTE: an argument handed back unchanged comes back as the caller's batched tensor
        # (its identity matters to mark_dirty and to the caller), as in PyTorch.
        same = next((a for a, v in zip(args, values) if v is o and isinstance(o, Tensor)), None)
        wrapped.append(same if same is not None else _wrap(o, d, level))
    return tree.unflatten(wrapped, spec)


# ---- the generated rule ------------------------------------------------------------------------

class _Spec:
    """One call's worth of state, passed to the generated Function as its first (non-tensor)
    argument: what to re-batch, and the batched tensors the user's forward saw."""

    def __init__(self, cls: Any, level: int, size: int, randomness: str,
                 in_dims: list[int | None], kwargs: dict[str, Any]) -> None:
        self.cls, self.level, self.size, self.randomness = cls, level, size, randomness
        self.in_dims, self.kwargs = in_dims, kwargs
        self.args: tuple[Any, ...] = ()
        self.output: Any = None


class _Vmapped(Function):
    """The generated Function: the user's Function on whole-batch tensors (see module notes)."""

    generate_vmap_rule = True  # NOTE: nested vmaps generate a rule for this one in turn

    @staticmethod
    def forward(spec: _Spec, *values: Any) -> Any:  # type: ignore[override]
        args = tuple(v if d is None else insert(v, spec.level, d)
                     for v, d in zip(values, spec.in_dims))
        out = spec.cls.forward(*args, **spec.kwargs)
        spec.args, spec.output = args, out
        if isinstance(out, tuple):
            return tuple(_whole(o, spec) for o in out)
        return _whole(out, spec)

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> None:
        spec = inputs[0]
        user = spec.cls._backward_cls()
        user.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad
                                      for a in spec.args)
        spec.cls.setup_context(user, spec.args, spec.output)
        if user._dirty:
            raise NotImplementedError(
                f"vmap: {spec.cls.__name__} marks an input dirty (in-place); in-place custom "
                "Functions are not supported under vmap in autograd_gpu.")
        batched = spec.output if isinstance(spec.output, tuple) else (spec.output,)
        physical = output if isinstance(output, tuple) else (output,)
        saved, bdims = [], []
        for t in user._custom_to_save:
            p, d = _physical(t, spec, batched, physical)
            saved.append(p)
            bdims.append(d)
        ctx.save_for_backward(*saved)
        ctx.mark_non_differentiable(*[p for b, p in zip(batched, physical)
                                      if any(b is n for n in user._non_differentiable)])
        ctx.set_materialize_grads(user._materialize_grads)
        user._custom_to_save = ()
        ctx._spec, ctx._user, ctx._saved_bdims = spec, user, bdims

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        spec: _Spec = ctx._spec
        user = ctx._user
        LEVELS.counter += 1
        level = LEVELS.counter
        LEVELS.stack.append((level, spec.size, spec.randomness))
        try:
            user._saved = [None if t is None else (_RAW, _at(t, d, level), 0)
                           for t, d in zip(ctx.saved_tensors, ctx._saved_bdims)]
            result = spec.cls.backward(user, *[_at(g, 0, level) for g in grads])
            user._saved = None
        finally:
            LEVELS.stack.pop()
        if not isinstance(result, tuple):
            result = (result,)
        return (None,) + tuple(_reduce(r, a, d, level, spec.size) for r, a, d in
                               zip(result, spec.args, spec.in_dims))


def _whole(o: Any, spec: _Spec) -> Any:
    """A batched output of the user's forward as a whole-batch tensor, batch dim 0
    (an output that is the same for every sample is broadcast)."""
    if not isinstance(o, Tensor):
        return o
    return expose(o, spec.level, spec.size)


def _physical(t: Any, spec: _Spec, batched: tuple[Any, ...],
              physical: tuple[Any, ...]) -> tuple[Any, int | None]:
    """A tensor the user saved, as ``(whole-batch tensor, its batch dim)``; outputs and inputs
    map to the generated Function's own (so they are saved as such, without a cycle)."""
    if t is None:
        return None, None
    for b, p in zip(batched, physical):
        if t is b:
            return p, 0
    if isinstance(t, Tensor) and t._level == spec.level:
        return t._value, t._bdim  # type: ignore[attr-defined]
    return t, None


def _at(t: Any, bdim: int | None, level: int) -> Any:
    return t if t is None or bdim is None else insert(t, level, bdim)


def _reduce(g: Any, arg: Any, in_dim: int | None, level: int, size: int) -> Any:
    """The user's per-sample gradient ``g`` for ``arg`` as the whole-batch gradient of the
    generated Function's input."""
    if g is None or not isinstance(arg, Tensor):
        return g
    if tuple(g.shape) != tuple(arg.shape):
        # NOTE: per sample: a gradient broadcast against the per-sample shape is summed back
        # here, where the batch dim is not in the way (PyTorch's reductify).
        g = g.sum_to_size(tuple(arg.shape))
    g = expose(g, level, size)  # NOTE: a gradient the same for every sample is broadcast
    if in_dim is None:
        return g.sum(0)  # NOTE: an unbatched argument got a gradient from every sample
    return g.movedim(0, in_dim) if in_dim else g


_CLASSES: weakref.WeakKeyDictionary[type, type] = weakref.WeakKeyDictionary()


def _generated(cls: type) -> Any:
    """``Vmapped<Name>``, the generated Function of ``cls`` (its node: ``Vmapped<Name>Backward``)."""
    gen = _CLASSES.get(cls)
    if gen is None:
        gen = _CLASSES[cls] = type(f"Vmapped{cls.__name__}", (_Vmapped,), {})
    return gen


_function.VMAP_APPLY = vmap_apply
