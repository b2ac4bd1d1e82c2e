"""Batched tensors: what a function sees under ``vmap``.

A ``BatchedTensor`` is one sample of ``_value``, a tensor that holds the whole batch in dimension
``_bdim``, at vmap level ``_level`` (functorch's design). ``_value`` may itself be batched at a
lower (outer) level, so nested vmaps make a chain of wrappers, highest level outermost. Its
``shape`` is the per-sample (logical) shape: everything above the ops layer works unchanged.

Every op reaches ``Node.apply``; an input batched at level ``L`` sends the call here, where the
op's batching rule (``_rules``) runs it once on the values of level ``L`` (one level peeled) and
wraps the result. Peeling all levels reaches plain tensors, so the autograd graph is recorded on
the physical (whole-batch) arrays: its backward needs no batching rules. Gradients of a batched
output w.r.t. a batched input are then exactly the per-sample gradients (samples never mix);
``func.grad`` lifts unbatched arguments to every active level first, so that holds for them too.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from ..autograd import api as _api
from ..autograd import node as _node
from ..autograd.grad_mode import STATE
from ..tensor import Tensor

_new = object.__new__


class _Levels(threading.local):
    """The active vmap levels, innermost last: ``(level, batch size, randomness)``."""

    stack: list[tuple[int, int, str]]
    no_lift: set[int]  # levels func transforms do not lift their inputs to (jacfwd's basis)
    counter = 0

    def __init__(self) -> None:
        self.stack = []
        self.no_lift = set()


LEVELS = _Levels()


class _Logical:
    """``BatchedTensor._data``: the per-sample shape and dtype, and nothing to compute with.

    NOTE: code that reads a tensor's array directly (instead of going through an op) gets a
    clear error here rather than a silently wrong, whole-batch answer.
    """

    __slots__ = ("shape", "dtype")

    def __init__(self, shape: tuple[int, ...], dtype: Any) -> None:
        self.shape = shape
        self.dtype = dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        n = 1
        for s in self.shape:
            n *= s
        return n

    @property
    def itemsize(self) -> int:
        return int(self.dtype.itemsize)

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(_no_rule(f"reads `.{name}` of a batched tensor's array"))

    def __array__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(_no_rule("converts a batched tensor to an array"))

    __array_ufunc__ = None  # NumPy then refuses to compute with it


def _no_rule(what: str) -> str:
    return (f"vmap: an operation {what}, which has no batching rule in autograd_gpu. Move it "
            "out of the vmapped function, or write it with other tensor operations.")


class BatchedTensor(Tensor):
    """A tensor inside ``vmap``: one sample of ``_value`` (batched in dim ``_bdim``)."""

    _value: Tensor
    _bdim: int

    @staticmethod
    def wrap(value: Tensor, bdim: int, level: int) -> BatchedTensor:
        t = _new(BatchedTensor)
        shape = value.shape
        t._value, t._bdim, t._level = value, bdim, level
        t._data = _Logical(tuple(shape[:bdim]) + tuple(shape[bdim + 1:]), value._data.dtype)
        t._device = value._device
        return t

    # ---- autograd state lives on the physical tensor --------------------------------------
    @property  # type: ignore[override]
    def _requires_grad(self) -> bool:
        return self._value._requires_grad

    @_requires_grad.setter
    def _requires_grad(self, value: bool) -> None:
        self._value._requires_grad = value

    @property  # type: ignore[override]
    def _grad_fn(self) -> Any:
        return self._value.grad_fn

    @_grad_fn.setter
    def _grad_fn(self, fn: Any) -> None:
        raise RuntimeError("vmap: cannot set grad_fn of a batched tensor")

    @property  # type: ignore[override]
    def _output_nr(self) -> int:
        return self._value._output_nr

    @_output_nr.setter
    def _output_nr(self, nr: int) -> None:
        raise RuntimeError("vmap: cannot set the output number of a batched tensor")

    @property  # type: ignore[override]
    def _version_counter(self) -> Any:
        return self._value._counter()

    @_version_counter.setter
    def _version_counter(self, counter: Any) -> None:
        self._value._version_counter = counter

    def _counter(self) -> Any:
        return self._value._counter()

    def detach(self) -> Tensor:
        return BatchedTensor.wrap(self._value.detach(), self._bdim, self._level)

    def backward(self, *args: Any, **kwargs: Any) -> None:
        raise RuntimeError(
            "backward() called inside a functorch transform. This is not supported, please use "
            "functorch.grad or functorch.vjp instead or call backward() outside of functorch "
            "transforms.")

    # ---- data-dependent Python control flow cannot be batched --------------------------------
    def item(self) -> Any:
        raise RuntimeError(
            "vmap: It looks like you're calling .item() on a Tensor. We don't support vmap over "
            "calling .item() on a Tensor, please try to rewrite what you're doing with other "
            "operations. If error is occurring somewhere inside PyTorch internals, please file a "
            "bug report.")

    def _data_dependent(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent control "
            "flow. We don't support that yet, please shout over at "
            "https://github.com/pytorch/functorch/issues/257 .")

    # NOTE: as in torch, float()/int() read one value (the .item() error); bool() branches.
    __float__ = __int__ = __index__ = item  # type: ignore[assignment]
    __bool__ = _data_dependent  # type: ignore[assignment]
    tolist = _data_dependent  # type: ignore[assignment]

    def numpy(self, *, force: bool = False) -> Any:
        raise RuntimeError(_no_rule("converts a batched tensor to NumPy (numpy())"))

    def __repr__(self) -> str:
        inner = repr(self._value).replace("\n", "\n    ")
        return f"BatchedTensor(lvl={self._level}, bdim={self._bdim}, value=\n    {inner}\n)"


# ---- moving between levels ---------------------------------------------------------------------

def levels_of(t: Any) -> list[int]:
    """The levels ``t`` is batched at, outermost (highest) first."""
    out = []
    while isinstance(t, Tensor) and t._level:
        out.append(t._level)
        t = t._value  # type: ignore[attr-defined]
    return out


def front(x: Tensor, bdim: int) -> Tensor:
    """``x`` with dimension ``bdim`` moved to the front (a view)."""
    if bdim == 0:
        return x
    order = [bdim] + [d for d in range(x.ndim) if d != bdim]
    return x.permute(*order)


def peel(t: Any, level: int) -> tuple[Any, int | None]:
    """``(value, bdim)`` if ``t`` is batched at ``level`` on the outside, else ``(t, None)``."""
    if isinstance(t, Tensor) and t._level == level:
        return t._value, t._bdim  # type: ignore[attr-defined]
    return t, None


def expose(t: Tensor, level: int, size: int) -> Tensor:
    """``t`` without its ``level`` wrapper, that level's batch dimension now logical dim 0
    (broadcast to ``size`` when ``t`` is not batched there). Higher levels stay wrapped."""
    if t._level > level:
        v = expose(t._value, level, size)  # type: ignore[attr-defined]
        return BatchedTensor.wrap(v, t._bdim + 1, t._level)  # type: ignore[attr-defined]
    if t._level == level:
        return front(t._value, t._bdim)  # type: ignore[attr-defined]
    return t.unsqueeze(0).expand(size, *t.shape)


def insert(t: Tensor, level: int, dim: int) -> Tensor:
    """Wrap ``t``'s logical dim ``dim`` as the batch dim of ``level``, under any higher levels."""
    if t._level > level:
        b = t._bdim  # type: ignore[attr-defined]
        d = dim if dim < b else dim + 1
        v = insert(t._value, level, d)  # type: ignore[attr-defined]
        return BatchedTensor.wrap(v, b if b < d else b - 1, t._level)
    return BatchedTensor.wrap(t, dim, level)


def chain(t: Tensor) -> tuple[Tensor, list[tuple[int, int]]]:
    """The innermost plain tensor and the ``(level, bdim)`` wraps that rebuild ``t`` from it,
    innermost first (``insert`` them in that order)."""
    wraps = []
    while t._level:
        wraps.append((t._level, t._bdim))  # type: ignore[attr-defined]
        t = t._value  # type: ignore[attr-defined]
    wraps.reverse()
    return t, wraps


def rewrap(t: Tensor, wraps: list[tuple[int, int]]) -> Tensor:
    for level, bdim in wraps:
        t = insert(t, level, bdim)
    return t


def level_size(level: int) -> int:
    for lv, size, _ in LEVELS.stack:
        if lv == level:
            return size
    raise RuntimeError(f"vmap: level {level} is no longer active")


def lift(t: Tensor) -> Tensor:
    """``t`` batched at every active level (broadcast where it was not): a per-sample copy."""
    for level, size, _ in LEVELS.stack:
        if level not in levels_of(t) and level not in LEVELS.no_lift:
            t = insert(t.unsqueeze(0).expand(size, *t.shape), level, 0)
    return t


def map_physical(t: Tensor, fn: Callable[[Tensor], Tensor]) -> Tensor:
    """``fn`` applied to the plain tensor under all of ``t``'s wrappers, wrapped back."""
    inner, wraps = chain(t)
    return rewrap(fn(inner), wraps)


# ---- ops ---------------------------------------------------------------------------------------

RULES: dict[type, Callable[..., Any]] = {}
FALLBACKS: dict[str, int] = {}  # op name -> calls that used the per-sample loop (tests read it)


def apply_batched(cls: Any, inputs: tuple[Any, ...], params: dict[str, Any]) -> Any:
    """``cls.apply(*inputs, **params)`` with some inputs batched: one level at a time."""
    level = max(t._level for t in inputs if isinstance(t, Tensor))
    args: list[Any] = []
    bdims: list[int | None] = []
    size = -1
    for t in inputs:
        v, bd = peel(t, level)
        args.append(v)
        bdims.append(bd)
        if bd is not None:
            size = v.shape[bd]
    rule = _rule_for(cls)
    if rule is None:
        out, out_bdims = loop_fallback(cls, params, args, bdims, size)
    else:
        out, out_bdims = rule(cls, params, args, bdims, size)
    if type(out) is tuple:
        return tuple(_wrap_out(o, b, level) for o, b in zip(out, out_bdims))
    return _wrap_out(out, out_bdims, level)


def _wrap_out(o: Any, bdim: Any, level: int) -> Any:
    if bdim is None or not isinstance(o, Tensor):
        return o
    return BatchedTensor.wrap(o, bdim, level)


def _rule_for(cls: type) -> Callable[..., Any] | None:
    for k in cls.__mro__:
        r = RULES.get(k)
        if r is not None:
            return r
    return None


def rule(*classes: type) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register ``fn(cls, params, args, bdims, size) -> (out, out_bdims)`` as the batching rule
    of ``classes`` (and their subclasses)."""

    def register(fn: Callable[..., Any]) -> Callable[..., Any]:
        for c in classes:
            RULES[c] = fn
        return fn

    return register


def loop_fallback(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
                  size: int) -> tuple[Any, Any]:
    """An op without a batching rule: run it per sample and stack (slow, but right)."""
    name = getattr(cls, "node_name", None) or cls.__name__
    FALLBACKS[name] = FALLBACKS.get(name, 0) + 1
    from ..functions import stack

    results = []
    for i in range(size):
        sample = [a.select(bd, i) if bd is not None else a for a, bd in zip(args, bdims)]
        results.append(cls.apply(*sample, **params))
    if type(results[0]) is tuple:
        outs = tuple(stack([r[k] for r in results]) for k in range(len(results[0])))
        return outs, (0,) * len(outs)
    return stack(results), 0


# ---- autograd.grad on batched tensors ---------------------------------------------------------

def grad_batched(outs: tuple[Any, ...], ins: tuple[Any, ...], gos: tuple[Any, ...],
                 call: Callable[..., Any]) -> tuple[Any, ...]:
    """``autograd.grad`` where outputs or inputs are batched: differentiate their plain
    (whole-batch) tensors, whose graph holds every sample side by side; grad_outputs batched at
    other levels flow through backward as batched gradients."""
    peeled = set()
    for t in outs + ins:
        peeled.update(levels_of(t))
    plain_outs = [chain(o)[0] for o in outs]
    plain_ins = []
    in_wraps = []
    out_levels = set()
    for o in outs:
        out_levels.update(levels_of(o))
    for i, t in enumerate(ins):
        p, wraps = chain(t)
        missing = out_levels - set(levels_of(t))
        if missing:
            raise RuntimeError(
                f"vmap: autograd.grad of an output batched at a vmap level where input {i} is not "
                "batched would sum over that batch. Use autograd_gpu.func.grad or func.vjp inside "
                "vmap: they give per-sample gradients.")
        plain_ins.append(p)
        in_wraps.append(wraps)
    plain_gos = []
    batched_grads = False
    for i, (o, g) in enumerate(zip(outs, gos)):
        if g is None:
            p = plain_outs[i]
            if o._level and o._requires_grad:
                if o.numel() != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                from ..creation import ones_like

                g = ones_like(p)  # NOTE: the implicit 1 of every sample's scalar output
            plain_gos.append(g)
            continue
        extra = peeled.intersection(levels_of(g)) - set(levels_of(o))
        if extra:
            raise RuntimeError(
                f"vmap: grad_outputs[{i}] is batched at a vmap level where outputs[{i}] is not; "
                "compute the output inside that vmap.")
        g = _to_layout(g, o)
        batched_grads = batched_grads or bool(g._level)
        plain_gos.append(g)
    prev = STATE.batched_grads
    STATE.batched_grads = prev or batched_grads
    try:
        result = call(tuple(plain_outs), tuple(plain_ins), tuple(plain_gos))
    finally:
        STATE.batched_grads = prev
    return tuple(None if r is None else rewrap(r, w) for r, w in zip(result, in_wraps))


def _to_layout(g: Tensor, o: Tensor) -> Tensor:
    """``g`` (the gradient of batched output ``o``; batched at some of ``o``'s levels, maybe at
    others too) as a tensor shaped like ``o``'s plain tensor: each of ``o``'s levels exposed at
    its dimension there. Levels of ``g`` alone stay wrapped (batched gradients)."""
    t: Any = o
    while t._level:
        level, bdim = t._level, t._bdim
        t = t._value
        g = expose(g, level, int(t.shape[bdim]))
        if bdim:
            g = g.movedim(0, bdim)
    return g


def _install() -> None:
    _node.BATCHED_APPLY = apply_batched
    _api.BATCHED_GRAD = grad_batched
