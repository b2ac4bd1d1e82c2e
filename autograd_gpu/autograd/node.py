"""Graph nodes: the backward half of every op, and saved tensors (leaves: accumulate.py).

A ``Node`` is created by ``Node.apply`` when an op runs in grad mode on an input that requires
grad. ``forward`` works on backend arrays; ``backward`` works on Tensors with ordinary tensor ops,
so it records its own graph under ``create_graph=True`` and higher-order gradients come for free.
The graph is acyclic by construction: a node holds its inputs (``next_functions``) and saved
inputs, never its outputs; a saved output is kept as a bare array and re-wrapped on unpack.
"""

from __future__ import annotations

import itertools
import sys
import weakref
from typing import Any, Callable

from . import anomaly
from .grad_mode import STATE

Tensor_: Any = None  # the Tensor class, set by tensor.py (it sits a layer above)
BATCHED_APPLY: Any = None  # func._batched.apply_batched: an input is a vmap BatchedTensor
_seq = itertools.count()
from .saved import (  # noqa: E402,F401  (re-exported: the engine, profiler, functions use them)
    _CONST, _HOOKED, _INFERENCE_SAVE, _INPUT, _OUTPUT, _RAW, RAW, SAVED_HOOKS, SavedTensors,
    _check_version, _type_str, short_name,
)






class HookDict(dict):  # type: ignore[type-arg]
    """The hooks of one kind on one node, by handle id (a dict that handles can weakly refer to)."""

    __slots__ = ("__weakref__",)


class RemovableHandle:
    """Returned by every ``register_*hook``; ``remove()`` unregisters the hook."""

    _ids = itertools.count()

    def __init__(self, hooks: dict[int, Any]) -> None:
        self.id = next(self._ids)
        self._hooks_ref = weakref.ref(hooks)

    def remove(self) -> None:
        hooks = self._hooks_ref()
        if hooks is not None:
            hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def add_hook(hooks: dict[int, Any], fn: Callable[..., Any]) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = fn
    return handle


class VersionCounter:
    """Shared by a tensor and its views; bumped by every in-place op.

    ``where`` remembers the user's file:line of the last bump, so the "modified by an inplace
    operation" error can say which line did it (beyond PyTorch, which cannot). ``lock`` is a
    leaf's gradient lock (see ``AccumulateGrad``), made on its first accumulation.
    """

    __slots__ = ("value", "where", "lock")

    def __init__(self) -> None:
        self.value = 0
        self.where: str | None = None
        self.lock: Any = None

    def bump(self) -> None:
        self.value += 1
        self.where = user_frame()


_PKG_DIR = __file__.rsplit("/", 2)[0]


def user_frame() -> str | None:
    """``file:line`` of the innermost frame outside this package."""
    f: Any = sys._getframe(1)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    return None if f is None else f"{f.f_code.co_filename}:{f.f_lineno}"


def user_stacklevel() -> int:
    """The ``stacklevel`` that makes a warning raised by the caller point at user code."""
    f: Any = sys._getframe(1)
    level = 1
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
        level += 1
    return level


class Node(SavedTensors):
    """A node of the backward graph (``torch.autograd.graph.Node``).

    Subclasses implement ``forward(*arrays)`` (backend arrays in, array or tuple out) and
    ``backward(*grads)`` (Tensors in, a tuple with one entry per input out). They name themselves
    with ``node_name`` (PyTorch's, e.g. ``"MulBackward0"``).
    """

    node_name: str | None = None
    next_functions: tuple[tuple[Node | None, int], ...] = ()
    needs_input_grad: tuple[bool, ...] = ()
    backend: Any = None
    backend_device: Any = None
    _seq = 0
    _n_outputs = 1  # outputs of the forward (the gradients a prehook sees)
    _hooks: dict[int, Any] | None = None
    _prehooks: dict[int, Any] | None = None
    _tensor_prehooks: dict[int, dict[int, Any]] | None = None  # output_nr -> hooks
    _retain_grad: dict[int, Any] | None = None  # output_nr -> weakref to the tensor
    _metadata: dict[str, Any] | None = None
    _stack: Any = None
    _materialize_grads = True
    _is_custom = False
    is_view = False  # outputs share the first input's storage and version counter
    raw_ok = False  # backward also runs on bare arrays (see _call_raw)
    elementwise = False  # the output is laid out as TensorIterator lays it out (see apply)
    _is_accumulator = False

    @property
    def _raw(self) -> bool:
        """True while this node's backward runs on bare arrays in this thread."""
        return RAW.node is self

    # ---- graph introspection (PyTorch's Node API) -------------------------------------------
    def name(self) -> str:
        return self.node_name or type(self).__name__

    def __repr__(self) -> str:
        return f"<{self.name()} object at {hex(id(self))}>"

    @property
    def metadata(self) -> dict[str, Any]:
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    def register_hook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_inputs, grad_outputs)`` runs after this node's backward; it may return new
        ``grad_inputs``."""
        if self._hooks is None:
            self._hooks = HookDict()
        return add_hook(self._hooks, fn)

    def register_prehook(self, fn: Callable[..., Any]) -> RemovableHandle:
        """``fn(grad_outputs)`` runs before this node's backward; it may return new
        ``grad_outputs``."""
        if self._prehooks is None:
            self._prehooks = HookDict()
        return add_hook(self._prehooks, fn)

    def _register_tensor_prehook(self, output_nr: int, fn: Callable[..., Any]) -> RemovableHandle:
        if self._tensor_prehooks is None:
            self._tensor_prehooks = {}
        return add_hook(self._tensor_prehooks.setdefault(output_nr, HookDict()), fn)

    def forward(self, *arrays: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no forward")

    def backward(self, *grads: Any) -> Any:
        raise NotImplementedError(f"{type(self).__name__} has no backward")

    def __call__(self, *grads: Any) -> Any:
        out = self.backward(*grads)
        return out[0] if len(out) == 1 else out

    def _call_backward(self, grads: list[Any]) -> tuple[Any, ...]:
        backend = self.backend
        token = backend.quiet_fp()  # NOTE: silent on inf/nan, as PyTorch (see Node.apply)
        try:
            if self.raw_ok and not STATE.grad_enabled and not STATE.batched_grads:
                return self._call_raw(grads)
            return self.backward(*grads)
        finally:
            backend.restore_fp(token)

    def _call_raw(self, grads: list[Any]) -> tuple[Any, ...]:
        """Backward on bare arrays: when no graph is recorded (no ``create_graph``), ops whose
        formula uses only arithmetic operators and the mode-aware helpers below run the same
        ``backward`` on arrays, skipping a Tensor per intermediate."""
        arrays = [None if g is None else g._data for g in grads]
        state = RAW
        prev, state.node = state.node, self
        try:
            outs = self.backward(*arrays)
        except (ValueError, TypeError, IndexError):
            outs = None
        finally:
            state.node = prev
        if outs is None:
            # NOTE: bare arrays fail with NumPy's message (e.g. a saved_tensors_hooks unpack of
            # the wrong shape); the same formula on Tensors raises PyTorch's.
            return tuple(self.backward(*grads))
        make = Tensor_._make
        dev = self.backend_device
        wrapped: list[Any] = []
        for o in outs:
            if o is None:
                wrapped.append(None)
                continue
            for g in grads:
                if g is not None and o is g._data:  # passed through unchanged: keep its Tensor
                    wrapped.append(g)
                    break
            else:
                wrapped.append(make(o, dev))
        return tuple(wrapped)

    # ---- mode-aware helpers for backward formulas (Tensors, or arrays on the raw path) --------
    def where(self, cond: Any, x: Any, y: Any) -> Any:
        """``x`` where ``cond`` else ``y``."""
        if isinstance(x, Tensor_):
            return x.where(cond, y)
        return self.backend.where(cond, x, y)

    def sum(self, x: Any, dims: Any, keepdim: bool) -> Any:
        if isinstance(x, Tensor_):
            return x.sum(dims, keepdim=keepdim)
        return self.backend.sum(x, axis=dims, keepdims=keepdim)

    def exp(self, x: Any) -> Any:
        return x.exp() if isinstance(x, Tensor_) else self.backend.exp(x)

    def permute(self, x: Any, axes: tuple[int, ...]) -> Any:
        if isinstance(x, Tensor_):
            return x.permute(*axes)
        return self.backend.transpose(x, axes)

    def run(self, cls: Any, x: Any, **params: Any) -> Any:
        """``cls.apply(x, **params)``, or on the raw path its forward on the bare array."""
        if isinstance(x, Tensor_):
            return cls.apply(x, **params)
        node = cls(**params)
        node.backend, node.backend_device = self.backend, self.backend_device
        return node.forward(x)

    def _release(self) -> None:
        # NOTE: a node that saved nothing stays usable, so it can run backward again (PyTorch).
        if self._saved:
            self._saved = None

    # ---- building the graph -------------------------------------------------------------------
    @classmethod
    def apply(cls, *inputs: Any, **params: Any) -> Any:
        """Run ``forward`` on the inputs' arrays and, in grad mode, link a new node into the graph.
        Non-Tensor inputs (Python scalars, None) pass through as constants."""
        node = cls(**params) if params else cls()
        T = Tensor_
        dev: Any = None
        needs = False
        arrays: list[Any] = []
        append = arrays.append
        for t in inputs:
            if t.__class__ is T or isinstance(t, T):
                if t._level:
                    return BATCHED_APPLY(cls, inputs, params)
                append(t._data)
                d = t._device
                if dev is None:
                    dev = d
                elif d is not dev:
                    return _apply_across_devices(cls, inputs, params, dev, d)
                # NOTE: a view may have started requiring grad through its base (grad_fn refreshes).
                if t._requires_grad or (t._view_fn is not None and t.grad_fn is not None):
                    needs = True
            else:
                append(t)
        backend = node.backend = dev._backend or dev.backend
        node.backend_device = dev
        if needs and STATE.grad_enabled:
            # NOTE: one pass gives both the flags forward reads and the graph's edges (made
            # here, before forward, as they only read the inputs); ``_edge`` inline, per op.
            flags: list[bool] = []
            edges: list[tuple[Node | None, int]] = []
            for t in inputs:
                if (t.__class__ is T or isinstance(t, T)) and t._requires_grad:
                    flags.append(True)
                    fn = t._grad_fn if t._view_fn is None else t.grad_fn
                    if fn is not None:
                        edges.append((fn, t._output_nr))
                        continue
                    ref = t._acc_ref
                    acc = ref() if ref is not None else None
                    edges.append((acc if acc is not None else t._grad_accumulator(), 0))
                else:
                    flags.append(False)
                    edges.append(_NO_EDGE)
            node.needs_input_grad = tuple(flags)
        else:
            needs = False
        # NOTE: NumPy warns on inf/nan arithmetic (inf - inf, 1/0, overflow); PyTorch never
        # does, so every op computes with floating-point errors silenced (backward too, in
        # _call_backward). CuPy has no such state.
        token = backend.quiet_fp()
        try:
            out = node.forward(*arrays)
        finally:
            backend.restore_fp(token)
        if node.elementwise and out.ndim > 1:
            # NOTE: C-contiguous inputs (one or two: x, then an array or a scalar) give a
            # C-contiguous result, the common case, checked inline (a call costs more).
            x = arrays[0]
            if not x.flags.c_contiguous or len(arrays) > 1 and (
                    arrays[1].__class__ is x.__class__ and not arrays[1].flags.c_contiguous):
                out = _iter_layout(node, out, arrays)
        make = T._make
        many = type(out) is tuple
        if not needs:
            if not many:
                t = make(out, dev)
                if node.is_view:
                    _link_views(inputs[0], (t,), cls, params, False)
                return t
            outs = tuple([make(o, dev) for o in out])
            if node.is_view:
                _link_views(inputs[0], outs, cls, params, True)
            return outs
        node.next_functions = tuple(edges)
        node._seq = next(_seq)
        named = _NAMED.get((cls, node.node_name))  # NOTE: named_type's lookup, inline
        node.__class__ = named if named is not None else named_type(node)
        if many:
            node._n_outputs = len(out)
            outs = tuple([_wrap_output(o, dev, node, i) for i, o in enumerate(out)])
        else:
            t = make(out, dev)
            if t._data.dtype.kind in "fc":
                t._grad_fn = node
                t._requires_grad = True
            outs = (t,)
        if node.is_view:
            _link_views(inputs[0], outs, cls, params, many)
        if node._to_save:
            node._pack(inputs, arrays, outs, out if many else (out,))
        if anomaly.STATE.enabled:
            anomaly.record_forward(node, outs)
        return outs if many else outs[0]


def _iter_layout(node: Node, out: Any, arrays: list[Any]) -> Any:
    """An elementwise node's output laid out as PyTorch's TensorIterator lays it out over the
    input ``arrays``, one of them not C-contiguous (``backend.iter_layout``)."""
    laid = node.backend.iter_layout(out, arrays)
    if laid is not out and node._to_save:  # NOTE: a saved output is the tensor's data
        node._to_save = tuple([laid if a is out else a for a in node._to_save])
    return laid


def _apply_across_devices(cls: Any, inputs: tuple[Any, ...], params: dict[str, Any], first: Any,
                          other: Any) -> Any:
    """``cls.apply`` on tensors of two devices: as in PyTorch, 0-d CPU tensors (scalars) join an
    op on another device (moved there by a differentiable copy); any other mix is an error."""
    T = Tensor_
    main = {t._device for t in inputs if isinstance(t, T) and (t._device.type != "cpu" or t.ndim)}
    if len(main) != 1 and "meta" in (first.type, other.type):
        raise RuntimeError(f"Tensor on device {other} is not on the expected device {first}!")
    if len(main) != 1:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                           f"devices, {_dev_names(first, other)}!")
    (target,) = main
    moved = [t.to(target) if isinstance(t, T) and t._device is not target else t for t in inputs]
    return cls.apply(*moved, **params)


def _link_views(src: Any, outs: tuple[Any, ...], cls: type, params: dict[str, Any],
                many: bool) -> None:
    """Views share their base's version counter and remember how to be re-derived from it
    (``_view_fn``: the chain of view ops from the base), for in-place ops on views. ``many``:
    the op returns a tuple of views (split, unbind), even a tuple of one."""
    base = src._base if src._base is not None else src
    counter = src._counter()
    # NOTE: a view made in no_grad mode (or of one) cannot be replayed for autograd: in-place ops
    # on it with grad mode on are refused, as in PyTorch.
    differentiable = STATE.grad_enabled and (src._base is None or src._view_fn is not None)
    chain = src._view_fn or ()
    for i, o in enumerate(outs):
        o._version_counter = counter
        o._base = base
        if differentiable:
            o._view_fn = chain + ((cls, params, i if many else None),)
            o._view_version = counter.value


_NAMED: dict[tuple[type, str | None], type] = {}
_NO_EDGE: tuple[None, int] = (None, 0)


def named_type(node: Node) -> type:
    """The class a recorded ``node`` takes on: a subclass of its op class named as PyTorch names
    the node (a ``Mul`` records as ``MulBackward0``, a copy as ``CopyBackwards``), so that
    ``type(grad_fn).__name__`` agrees with ``grad_fn.name()``. Made once per (class, name)."""
    cls = type(node)
    key = (cls, node.node_name)
    named = _NAMED.get(key)
    if named is None:
        name = node.name().rsplit("::", 1)[-1]  # NOTE: torch::autograd::CopyBackwards
        named = cls if name == cls.__name__ else \
            type(name, (cls,), {"__module__": cls.__module__, "__qualname__": name})
        _NAMED[key] = _NAMED[(named, node.node_name)] = named
    return named


def _wrap_output(data: Any, dev: Any, node: Node, i: int) -> Any:
    t = Tensor_._make(data, dev)
    if t._data.dtype.kind in "fc":
        t._grad_fn, t._output_nr, t._requires_grad = node, i, True
    return t


def _edge(t: Any, T: Any) -> tuple[Node | None, int]:
    if not isinstance(t, T) or not t._requires_grad:
        return (None, 0)
    if t.grad_fn is not None:
        return (t.grad_fn, t._output_nr)
    return (t._grad_accumulator(), 0)


def _dev_names(a: Any, b: Any) -> str:
    # PyTorch names the CUDA device first.
    return f"{b} and {a}" if b.type == "cuda" and a.type != "cuda" else f"{a} and {b}"
