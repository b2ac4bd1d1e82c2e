"""Custom differentiable functions: ``autograd.Function`` with static ``forward``/``backward``.

Each subclass ``F`` gets a node class ``FBackward`` (its instances are the ``ctx`` that
``forward`` and ``backward`` receive), as in PyTorch.

Under the ``func`` transforms a Function must use the ``setup_context`` style (``forward``
without ``ctx``), as in PyTorch. ``grad``/``vjp``/``jacrev`` go through its ``backward``; so do
``jvp``/``jacfwd``, which are double-vjp here: a ``jvp`` staticmethod is never used. Under
``vmap`` it needs a ``vmap`` staticmethod or ``generate_vmap_rule = True``; that part lives in
``func._custom`` (installed as ``VMAP_APPLY``: this layer never imports ``func``).
"""

from __future__ import annotations

import functools
import warnings
from typing import Any, Callable

from .grad_mode import STATE, no_grad
from .node import _INPUT, _OUTPUT, Node, _edge, _seq
from . import node as _node, anomaly

VMAP_APPLY: Any = None  # func._custom.vmap_apply: a Function applied to vmap-batched tensors


class FunctionCtx:
    """Marker base for ``ctx`` objects (the node itself plays that role)."""


class BackwardCFunction(Node, FunctionCtx):
    """The node a custom ``Function`` records; also the ``ctx`` of its forward and backward."""

    _forward_cls: Any = None
    _is_custom = True
    _dirty: tuple[Any, ...] = ()
    _non_differentiable: tuple[Any, ...] = ()
    _custom_to_save: tuple[Any, ...] = ()
    _tensor_pos: tuple[int, ...] = ()
    _in_meta: tuple[Any, ...] = ()
    _out_meta: tuple[Any, ...] = ()

    def save_for_backward(self, *tensors: Any) -> None:
        for t in tensors:
            if t is not None and not isinstance(t, _node.Tensor_):
                raise TypeError(
                    "save_for_backward can only save variables, but argument "
                    f"{tensors.index(t)} is of type {type(t).__name__}"
                )
        self._custom_to_save = tensors

    def save_for_forward(self, *tensors: Any) -> None:
        self._saved_for_forward = tensors

    def mark_dirty(self, *tensors: Any) -> None:
        self._dirty = tensors

    def mark_non_differentiable(self, *tensors: Any) -> None:
        self._non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        self._materialize_grads = value

    def _call_backward(self, grads: list[Any]) -> tuple[Any, ...]:
        meta = self._out_meta
        grads = list(grads) + [None] * (len(meta) - len(grads))
        if self._materialize_grads:
            for i, g in enumerate(grads):
                if g is None:
                    shape, dt, dev = meta[i]
                    grads[i] = _node.Tensor_._make(dev.backend.zeros(shape, dt), dev)
        out = self._forward_cls.backward(self, *grads)
        if not isinstance(out, tuple):
            out = (out,)
        n = len(self._in_meta)
        if len(out) != n:
            if len(out) > n and all(g is None for g in out[n:]):
                out = out[:n]
            else:
                raise RuntimeError(
                    f"function {self.name()} returned an incorrect number of gradients "
                    f"(expected {n}, got {len(out)})"
                )
        # NOTE: one gradient per forward argument comes back; only the Tensor arguments have
        # edges (next_functions), as in PyTorch.
        grads_in = [self._validate(i, g) for i, g in enumerate(out)]
        return tuple(grads_in[i] for i in self._tensor_pos)

    def _validate(self, i: int, g: Any) -> Any:
        meta = self._in_meta[i]
        if g is None:
            return None
        if meta is None:
            if isinstance(g, _node.Tensor_):
                raise RuntimeError(
                    f"function {self.name()} returned a gradient different than None at position "
                    f"{i + 1}, but the corresponding forward input was not a Variable"
                )
            return None
        if not isinstance(g, _node.Tensor_):
            raise TypeError(f"function {self.name()} returned a non-Tensor gradient at index {i}")
        shape, dtype, dev = meta
        if tuple(g.shape) != shape:
            if not _expandable(shape, tuple(g.shape)):
                raise RuntimeError(
                    f"Function {self.name()} returned an invalid gradient at index {i} - got "
                    f"[{', '.join(map(str, g.shape))}] but expected shape compatible with "
                    f"[{', '.join(map(str, shape))}]"
                )
            g = g.sum_to_size(shape)
        if g.dtype is not dtype:
            g = g.to(dtype)
        if g._device is not dev:
            raise RuntimeError(
                f"Function {self.name()} returned an invalid gradient at index {i} - expected "
                f"device {dev} but got {g._device}"
            )
        return g

    def backward(self, *grads: Any) -> Any:  # type: ignore[override]
        return self._forward_cls.backward(self, *grads)


def _expandable(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """True when ``shape`` broadcasts to ``target``."""
    if len(shape) > len(target):
        return False
    for a, b in zip(reversed(shape), reversed(target)):
        if a != b and a != 1:
            return False
    return True


class Function:
    """Base class for differentiable operations with a hand-written backward.

    Example:
        >>> class Double(Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         return x * 2
        ...     @staticmethod
        ...     def backward(ctx, grad):
        ...         return grad * 2
        >>> Double.apply(tensor([1.0], requires_grad=True)).grad_fn.name()
        'DoubleBackward'
    """

    _backward_cls: type[BackwardCFunction]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__name__ + "Backward"
        cls._backward_cls = type(name, (BackwardCFunction,), {"_forward_cls": cls, "node_name": name})

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        warnings.warn(
            f"{type(self)} should not be instantiated. Methods on autograd functions are all "
            "static, so you should invoke them on the class itself. Instantiating an autograd "
            "function will raise an error in a future version of PyTorch.",
            DeprecationWarning,
            stacklevel=2,
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please use "
            "new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)"
        )

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function."
        )

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple[Any, ...], output: Any) -> Any:
        return _NO_SETUP

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD."
        )

    vjp = backward

    @staticmethod
    def jvp(ctx: Any, *grad_inputs: Any) -> Any:
        """Forward-mode formula. NOTE: unused here: ``func.jvp``/``jacfwd`` are double-vjp and
        go through ``backward``; kept so code written for PyTorch imports unchanged."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        T = _node.Tensor_
        tensors = [a for a in args if isinstance(a, T)]
        uses_setup = cls.setup_context is not Function.setup_context
        batched = any(t._level for t in tensors)
        if batched or STATE.func_depth:
            if not uses_setup:
                raise RuntimeError(_NEEDS_SETUP_CONTEXT)
            if batched:
                return VMAP_APPLY(cls, args, kwargs)
        ctx = cls._backward_cls()
        needs = STATE.grad_enabled and any(t.requires_grad for t in tensors)
        ctx.needs_input_grad = tuple(isinstance(a, T) and a._requires_grad for a in args)
        with no_grad():
            if uses_setup:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        single = not isinstance(out, tuple)
        outs = (out,) if single else out
        dirty = ctx._dirty
        for t in dirty:
            from ..functions import _check_inplace_target

            if STATE.grad_enabled and t._requires_grad and t.grad_fn is None and t._base is None:
                raise RuntimeError(
                    "a leaf Variable that requires grad has been used in an in-place operation."
                )
            _check_inplace_target(t)
            t._counter().bump()
        if not needs:
            return out
        if tensors:
            ctx.backend_device = tensors[0]._device
            ctx.backend = ctx.backend_device.backend
        ctx._tensor_pos = tuple(i for i, a in enumerate(args) if isinstance(a, T))
        ctx.next_functions = tuple(_edge(args[i], T) for i in ctx._tensor_pos)
        ctx._in_meta = tuple(
            (tuple(a.shape), a.dtype, a._device) if isinstance(a, T) else None for a in args
        )
        ctx._seq = next(_seq)
        wrapped = []
        meta = []
        for i, o in enumerate(outs):
            if not isinstance(o, T):
                wrapped.append(o)
                meta.append(((), "float32", _node.Tensor_ and tensors[0]._device))
                continue
            meta.append((tuple(o.shape), o._data.dtype, o._device))
            is_dirty = any(o is d for d in dirty)
            # NOTE: checked before aliasing below: an input returned as-is and marked
            # non-differentiable must come back without grad (the alias is a new object).
            non_diff = any(o is n for n in ctx._non_differentiable)
            if not is_dirty and any(o is a for a in args):
                # NOTE: an input returned as-is comes back as a new alias
                o = o.detach() if non_diff else o.view_as(o)
            if non_diff or not o.dtype.is_floating_point:
                wrapped.append(o)
                continue
            o.grad_fn, o._output_nr, o._requires_grad = ctx, i, True
            wrapped.append(o)
        ctx._out_meta = tuple(meta)
        ctx._n_outputs = len(meta)
        _pack_custom(ctx, args, wrapped)
        if anomaly.STATE.enabled:
            anomaly.record_forward(ctx, tuple(w for w in wrapped if isinstance(w, T)))
        return wrapped[0] if single else tuple(wrapped)

    generate_vmap_rule = False

    @staticmethod
    def vmap(info: Any, in_dims: Any, *args: Any) -> Any:
        """The Function under ``vmap``: override it, or set ``generate_vmap_rule = True``.

        It receives ``info`` (``info.batch_size``, ``info.randomness``), ``in_dims`` (per
        argument: its batch dim, or None) and the arguments as whole-batch tensors; it returns
        ``(output, out_dims)``, ``out_dims`` shaped like ``output``. It usually calls
        ``apply`` again on the whole-batch tensors, so ``backward`` still applies.
        """
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap staticmethod "
            "or set generate_vmap_rule=True."
        )


_NO_SETUP = object()
_NEEDS_SETUP_CONTEXT = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
    "...), it must override the setup_context staticmethod. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html"
)


def _pack_custom(ctx: BackwardCFunction, args: tuple[Any, ...], outs: list[Any]) -> None:
    entries: list[Any] = []
    for t in ctx._custom_to_save:
        if t is None:
            entries.append(None)
            continue
        for i, o in enumerate(outs):
            if o is t and o.grad_fn is ctx:
                counter = o._counter()
                entries.append((_OUTPUT, (o._data, i, counter, True), counter.value))
                break
        else:
            if t._is_inference:
                raise RuntimeError(_node._INFERENCE_SAVE)
            entries.append((_INPUT, t, t._counter().value))
    if _node.SAVED_HOOKS.stack:  # NOTE: saved_tensors_hooks apply to ctx.save_for_backward too
        entries = ctx._pack_hooked(entries, outs)
    ctx._saved = entries
    ctx._custom_to_save = ()


class _OnceDifferentiableBackward(Node):
    node_name = "OnceDifferentiableBackward"

    def backward(self, *grads: Any) -> Any:
        raise RuntimeError(
            "trying to differentiate twice a function that was marked with @once_differentiable"
        )


def once_differentiable(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorate a ``backward`` that is not itself differentiable: it runs without recording,
    and differentiating its result again raises an error instead of a wrong answer."""

    @functools.wraps(fn)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        with no_grad():
            out = fn(ctx, *grads)
        if not STATE.grad_enabled:
            return out
        T = _node.Tensor_
        requires = any(isinstance(g, T) and g._requires_grad for g in grads)
        if not requires:
            return out
        node = _OnceDifferentiableBackward()
        node.next_functions = tuple(_edge(g, T) for g in grads)
        node._seq = next(_seq)
        outs = out if isinstance(out, tuple) else (out,)
        for i, o in enumerate(outs):
            if isinstance(o, T) and o.dtype.is_floating_point:
                o.grad_fn, o._output_nr, o._requires_grad = node, i, True
        return out

    return wrapper
