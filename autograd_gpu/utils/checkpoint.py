"""Activation checkpointing (``torch.utils.checkpoint.checkpoint``): trade compute for memory.

``checkpoint(fn, *args, use_reentrant=False)`` runs ``fn`` keeping none of the tensors its ops
save for backward, only ``fn``'s inputs; backward runs ``fn`` again to get them back.

- Non-reentrant (``use_reentrant=False``, recommended): ``fn`` runs under
  ``saved_tensors_hooks`` whose pack hook keeps a numbered placeholder. The first unpack in
  backward replays ``fn`` on the saved inputs (grad mode on, the RNG state of the first run) under
  hooks that collect the tensors saved, in the same order, and then stops (``early_stop``).
  Works with ``autograd.grad``, ``retain_graph``, double backward, kwargs and any outputs.
- Reentrant (``use_reentrant=True``): a custom ``Function`` that runs ``fn`` under ``no_grad``
  and in its backward replays it with grad mode on and calls ``autograd.backward`` on the
  result; tensors only, ``.backward()`` only.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Callable, ContextManager

from .. import random as _random
from ..autograd import function as _function
from ..autograd.api import backward as _backward
from ..autograd.grad_mode import STATE, enable_grad
from ..autograd.graph import saved_tensors_hooks
from ..creation import zeros
from ..device import CPU
from ..tensor import Tensor

__all__ = ["CheckpointError", "CheckpointPlan", "auto_checkpoint", "checkpoint",
           "checkpoint_sequential", "noop_context_fn"]


class CheckpointError(RuntimeError):
    """The recomputation in backward did not save what the first forward saved."""


def noop_context_fn() -> tuple[ContextManager[Any], ContextManager[Any]]:
    """The default ``context_fn``: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Callable[[], tuple[ContextManager[Any], ContextManager[Any]]] = (
                   noop_context_fn),
               determinism_check: str = "default", debug: bool = False, early_stop: bool = True,
               **kwargs: Any) -> Any:
    """``function(*args, **kwargs)``, keeping only its inputs for backward and recomputing the
    rest during backward.

    The gradients equal those of the plain call exactly: with ``preserve_rng_state=True`` (a
    keyword, the default) the replay sees the random state of the first run, so dropout draws
    the same mask.

    Args:
        function: the computation; any Tensor/non-Tensor arguments and outputs.
        *args: its positional arguments.
        use_reentrant: pass it explicitly (``False`` is recommended); ``None`` warns as PyTorch
            does and means ``True``.
        context_fn: returns two context managers, entered around the forward and around the
            recomputation (non-reentrant only).
        determinism_check: ``"default"`` compares the shapes, dtypes and devices of the
            recomputed tensors with the first run's; ``"none"`` does not.
        debug: accepted for PyTorch compatibility (no operator trace is kept).
        early_stop: stop the recomputation once every saved tensor is back.
        **kwargs: ``preserve_rng_state`` (default True), then ``function``'s keyword arguments
            (non-reentrant only).

    Returns:
        What ``function`` returns.

    Raises:
        ValueError: keyword arguments, ``context_fn`` or ``debug`` with ``use_reentrant=True``;
            an unknown ``determinism_check``.
        CheckpointError: (in backward) the recomputation saved other tensors than the forward.

    Example:
        >>> x = tensor([1.0, 2.0], requires_grad=True)
        >>> y = checkpoint(lambda a: (a * a).sin(), x, use_reentrant=False)
        >>> y.sum().backward()
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
            "details on the differences between the two variants.",
            stacklevel=2,
        )
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError(
                "Passing `context_fn` or `debug` is only supported when use_reentrant=False."
            )
        if STATE.grad_enabled and not any(
            isinstance(a, Tensor) and a.requires_grad for a in args
        ):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=2)
        return _CheckpointFunction.apply(function, preserve, *args)
    if determinism_check not in ("default", "none"):
        raise ValueError("determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    forward_ctx, recompute_ctx = context_fn()
    if not STATE.grad_enabled:  # nothing is saved, nothing will be recomputed
        with forward_ctx:
            return function(*args, **kwargs)
    frame = _Frame(function, args, kwargs, preserve, recompute_ctx,
                   determinism_check == "default", early_stop)
    with forward_ctx, saved_tensors_hooks(frame.pack, _unpack):
        return function(*args, **kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Any,  # noqa: A002
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Run ``functions`` (a ``Sequential`` or a list of modules or functions) one after another
    on ``input``, in ``segments`` chunks of ``len(functions) // segments``: every chunk but the
    last under ``checkpoint`` (only its input kept for backward), the last one (with the
    remainder) plainly, as PyTorch's.

    Args:
        use_reentrant: as ``checkpoint``'s (``None`` warns and means ``True``).
        **kwargs: ``preserve_rng_state`` only (default True).

    Example:
        >>> model = nn.Sequential(*[nn.Linear(8, 8) for _ in range(4)])
        >>> out = checkpoint_sequential(model, 2, randn(3, 8), use_reentrant=False)
    """
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
            "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not "
            "passed. use_reentrant=False is recommended, but if you need to preserve the current "
            "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
            "the differences between the two variants.", stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    from ..nn import Sequential

    if isinstance(functions, Sequential):
        functions = list(functions.children())
    size = len(functions) // segments
    end = 0
    for start in range(0, size * (segments - 1), size):
        end = start + size
        input = checkpoint(_chain, functions[start:end], input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return _chain(functions[end:], input)


def _chain(functions: list[Any], x: Any) -> Any:
    """``functions`` applied one after another to ``x``."""
    for f in functions:
        x = f(x)
    return x


# ---- RNG state ----------------------------------------------------------------------------------

def _stash_rng(args: tuple[Any, ...]) -> list[tuple[Any, Any]]:
    """The default generators' states: the CPU's and those of the devices of Tensor ``args``
    (reading a CUDA generator's state leaves its stream as it was: see ``CupyGenerator``)."""
    devices = [CPU]
    for a in args:
        if isinstance(a, Tensor) and a._device not in devices:
            devices.append(a._device)
    return [(dev, _rng_get(_random.default_generator(dev))) for dev in devices]


def _rng_get(gen: Any) -> Any:
    """``gen``'s state, to give back to ``_rng_set`` (a compiled step records the pair)."""
    return gen.get_state()


def _rng_set(gen: Any, state: Any) -> None:
    gen.set_state(state)


@contextlib.contextmanager
def _rng_replay(states: list[tuple[Any, Any]] | None) -> Any:
    """Run the body with the stashed RNG states, then restore the current ones."""
    if states is None:
        yield
        return
    gens = [(_random.default_generator(dev), state) for dev, state in states]
    current = [_rng_get(g) for g, _ in gens]
    for g, state in gens:
        _rng_set(g, state)
    try:
        yield
    finally:
        for (g, _), state in zip(gens, current):
            _rng_set(g, state)


# ---- non-reentrant ------------------------------------------------------------------------------

class _Holder:
    """What a checkpointed forward keeps per saved tensor: its number in saving order."""

    __slots__ = ("frame", "index")

    def __init__(self, frame: _Frame, index: int) -> None:
        self.frame = frame
        self.index = index


class _StopRecomputation(Exception):
    pass


class _Frame:
    """One ``checkpoint`` call: ``fn``, its inputs (saved by ``_SaveInputs`` so the user's own
    saved-tensor hooks see them), the RNG states and the tensors recomputed in backward."""

    def __init__(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any],
                 preserve: bool, recompute_ctx: ContextManager[Any], check: bool,
                 early_stop: bool) -> None:
        self.fn = fn
        self.kwargs = kwargs
        self.recompute_ctx = recompute_ctx
        self.check = check
        self.early_stop = early_stop
        self.rng = _stash_rng(args) if preserve else None
        self.tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.args = [None if isinstance(a, Tensor) else a for a in args]
        # NOTE: a grad-requiring dummy makes the saver record a node even when no input needs
        # grad (the parameters inside fn may); the node's output is never used.
        dummy = zeros(0, requires_grad=True)
        out = _SaveInputs.apply(dummy, *[args[i] for i in self.tensor_pos])
        self.saver = out.grad_fn
        self.meta: list[tuple[Any, ...]] = []
        self.recomputed: dict[int, Tensor] = {}

    def pack(self, t: Tensor) -> _Holder:
        self.meta.append((tuple(t.shape), t.dtype, t._device))
        return _Holder(self, len(self.meta) - 1)

    def get(self, index: int) -> Tensor:
        if index not in self.recomputed:
            self.recompute()
        return self.recomputed.pop(index)

    def recompute(self) -> None:
        args = list(self.args)
        for i, t in zip(self.tensor_pos, self.saver.saved_tensors):
            args[i] = t
        n = len(self.meta)
        got: list[Tensor] = []

        def pack(t: Tensor) -> None:
            if len(got) < n:
                got.append(t.detach())
            if self.early_stop and len(got) == n:
                raise _StopRecomputation
            return None

        with _rng_replay(self.rng), enable_grad(), self.recompute_ctx, \
                saved_tensors_hooks(pack, _unpack_recomputed):
            try:
                self.fn(*args, **self.kwargs)
            except _StopRecomputation:
                pass
        if len(got) != n:
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                f"original forward and recomputation.\nNumber of tensors saved during forward: {n}"
                f"\nNumber of tensors saved during recomputation: {len(got)}."
            )
        if self.check:
            self._check_metadata(got)
        self.recomputed = dict(enumerate(got))

    def _check_metadata(self, got: list[Tensor]) -> None:
        lines = []
        for i, (t, (shape, dtype, dev)) in enumerate(zip(got, self.meta)):
            now = (tuple(t.shape), t.dtype, t._device)
            if now != (shape, dtype, dev):
                lines.append(
                    f"tensor at position {i}:\nsaved metadata: {{'shape': {shape}, 'dtype': "
                    f"{dtype}, 'device': {dev}}}\nrecomputed metadata: {{'shape': {now[0]}, "
                    f"'dtype': {now[1]}, 'device': {now[2]}}}"
                )
        if lines:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                "different metadata than during the forward pass.\n" + "\n".join(lines)
            )


def _unpack(holder: _Holder) -> Tensor:
    return holder.frame.get(holder.index)


def _unpack_recomputed(_: Any) -> Any:
    raise RuntimeError("torch.utils.checkpoint: unpack is being triggered for a tensor that was "
                       "saved during recomputation; the recomputed graph is not differentiable")


class _SaveInputs(_function.Function):
    """Saves ``checkpoint``'s Tensor inputs (through any active saved-tensor hooks)."""

    @staticmethod
    def forward(ctx: Any, dummy: Tensor, *tensors: Tensor) -> Tensor:  # type: ignore[override]
        ctx.save_for_backward(*tensors)
        return dummy.detach()

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        raise RuntimeError("checkpoint's input saver is never differentiated")


# ---- reentrant ----------------------------------------------------------------------------------

class _CheckpointFunction(_function.Function):
    """``use_reentrant=True``: ``fn`` runs without a graph; backward replays it and backpropagates
    through the replay with a nested ``autograd.backward``."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve: bool,  # type: ignore[override]
                *args: Any) -> Any:
        ctx.run_function = run_function
        ctx.rng = _stash_rng(args) if preserve else None
        ctx.tensor_pos = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[args[i] for i in ctx.tensor_pos])
        return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        # TODO(lead): PyTorch refuses reentrant checkpoint under autograd.grad / backward(inputs=)
        # ("incompatible with .grad()"); the engine does not expose which one is running yet.
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_pos, ctx.saved_tensors):
            d = t.detach()
            d._requires_grad = t.requires_grad
            inputs[i] = d
        with _rng_replay(ctx.rng), enable_grad():
            outputs = ctx.run_function(*inputs)
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        pairs = [(o, g) for o, g in zip(outputs, grads)
                 if isinstance(o, Tensor) and o.requires_grad]
        if not pairs:
            raise RuntimeError(
                "none of output has requires_grad=True, this checkpoint() is not necessary"
            )
        _backward([o for o, _ in pairs], [g for _, g in pairs])
        return (None, None) + tuple(
            inputs[i].grad if isinstance(inputs[i], Tensor) else None for i in range(len(inputs))
        )


from ._auto_checkpoint import CheckpointPlan, auto_checkpoint  # noqa: E402  (it uses checkpoint)
