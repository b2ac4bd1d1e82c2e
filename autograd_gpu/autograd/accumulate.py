"""``AccumulateGrad``: the sink of a leaf in the graph, which adds the incoming gradient into the
leaf's ``.grad`` under the leaf's lock."""

from __future__ import annotations

import sys
import threading
from typing import TYPE_CHECKING, Any, Callable

from . import hooks as hook_checks
from . import node
from .node import HookDict, Node, RemovableHandle, add_hook

if TYPE_CHECKING:
    from ..tensor import Tensor


class AccumulateGrad(Node):
    """The sink for a leaf: adds the incoming gradient into ``variable.grad``.

    NOTE: accumulation and the post-accumulate-grad hooks hold the leaf's lock, as in PyTorch,
    so threads running backward into a shared leaf lose no gradient. The lock lives on the leaf's
    version counter, made once per leaf: not on this node, which is made anew with every graph
    (and two threads building graphs at once may each make one for the leaf), and not as a new
    attribute of the tensor (that slowed every op on leaves by a few per cent). It is re-entrant:
    a hook may run backward into its own leaf.
    """

    node_name = "torch::autograd::AccumulateGrad"  # PyTorch's name(); the repr is short
    _is_accumulator = True
    _seq = sys.maxsize  # NOTE: runs as soon as it is ready, as in PyTorch.

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable
        self.backend_device = variable._device
        self.backend = variable._device.backend

    def __repr__(self) -> str:
        return f"<AccumulateGrad object at {hex(id(self))}>"

    # NOTE: a leaf's hooks live on the tensor, not here: the tensor holds this node only weakly
    # (it dies with the graph), and the hooks must outlive any one graph.
    @property
    def _tensor_prehooks(self) -> dict[int, dict[int, Any]] | None:  # type: ignore[override]
        hooks = self.variable._hooks
        return {0: hooks} if hooks else None

    def _register_tensor_prehook(self, output_nr: int, fn: Callable[..., Any]) -> RemovableHandle:
        var = self.variable
        if var._hooks is None:
            var._hooks = HookDict()
        return add_hook(var._hooks, fn)

    def backward(self, grad: Any) -> tuple[()]:  # type: ignore[override]
        raise RuntimeError("AccumulateGrad is run by the engine")

    def accumulate(self, grad: Any, owned: bool, create_graph: bool) -> None:
        var = self.variable
        if grad.dtype is not var.dtype:
            grad = grad.to(var.dtype)
            owned = True
        backend = self.backend
        counter = var._version_counter
        lock = counter.lock if counter is not None else None
        if lock is None:
            with _LOCK_CREATION:  # NOTE: once per leaf; racing threads must make one lock
                counter = var._counter()
                lock = counter.lock
                if lock is None:
                    lock = counter.lock = threading.RLock()
        lock.acquire()
        try:
            token = backend.quiet_fp()  # NOTE: inf + -inf is nan, silently (see Node.apply)
            try:
                old = var._grad
                if (old is not None and not create_graph and not old._requires_grad
                        and not grad._requires_grad and old.shape == grad.shape
                        and backend.owns_writable(old._data)):
                    backend.add(old._data, grad._data, out=old._data)  # the steady state
                else:
                    self._add_to_grad(grad, owned, create_graph)
            finally:
                backend.restore_fp(token)
            if var._post_acc_hooks:
                for hook in tuple(var._post_acc_hooks.values()):
                    hook_checks.check_post_accumulate(hook(var))
        finally:
            lock.release()

    def _add_to_grad(self, grad: Any, owned: bool, create_graph: bool) -> None:
        """``.grad += grad`` (the caller holds the leaf's lock)."""
        var, backend = self.variable, self.backend
        old = var._grad
        if old is None:
            # NOTE: PyTorch's gradient layout contract: a new .grad has the strides of a dense,
            # non-overlapping leaf (so p.grad.view(-1) works where p.view(-1) does), else C order.
            order = _grad_order(backend, var._data)
            g = grad._data
            if create_graph:
                # NOTE: a copy that records CopyBackwards, as PyTorch's: the graph's tensor
                # may be a view or be reused, and zero_grad() must be able to detach_() it.
                new = node.Tensor_._make(backend.empty_in_order(g.shape, g.dtype, order),
                                         var._device)
                var._grad = new.copy_(grad)
            elif (owned and grad._grad_fn is None and backend.owns_writable(g)
                  and _in_order(backend, g, order)):
                var._grad = grad  # NOTE: made by this backward, held by nobody else: taken
            elif owned and grad._grad_fn is None and _in_order(backend, g, order) and \
                    (base := _sole_base(backend, g)) is not None:
                # NOTE: a full-size alias of a buffer only it holds (a weight's gradient made
                # column-major and transposed back): the buffer is taken, as PyTorch's is.
                var._grad = node.Tensor_._make(base, var._device)
            elif order is None and (g.ndim < 2 or g.flags.c_contiguous):
                var._grad = node.Tensor_._make(backend.copy(g), var._device)
            else:
                copy = backend.empty_in_order(g.shape, g.dtype, order)
                copy[...] = g
                var._grad = node.Tensor_._make(copy, var._device)
        elif create_graph or old._requires_grad or grad._requires_grad:
            var._grad = old + grad
        elif backend.owns_writable(old._data) and old.shape == grad.shape:
            backend.add(old._data, grad._data, out=old._data)
        else:  # NOTE: laid out like the old .grad, as PyTorch's in-place sum would leave it
            total = backend.add(old._data, grad._data)
            var._grad = node.Tensor_._make(backend.iter_layout(total, (old._data, grad._data)),
                                           var._device)


def _sole_base(backend: Any, g: Any) -> Any:
    """The buffer ``g`` views when ``g`` covers all of it in its own layout and dtype (a bit
    blend's result views unsigned integers) and nothing but ``g`` holds it (a writable array
    then, which a ``.grad`` may take); else None."""
    base = getattr(g, "base", None)
    if base is None or base.shape != g.shape or base.strides != g.strides \
            or base.dtype != g.dtype or not backend.owns_writable(base):
        return None
    # NOTE: the references are g's, this function's and getrefcount's argument: any more and
    # someone else (another gradient, a saved tensor) shares the buffer, which is then copied.
    return base if sys.getrefcount(base) <= 3 else None


def _grad_order(backend: Any, v: Any) -> list[int] | None:
    """The layout (``backend.like_order``; None: C order) of a new ``.grad`` for a leaf whose
    data is ``v``: ``v``'s own when ``v`` is dense and non-overlapping, else C order."""
    if v.ndim < 2 or v.flags.c_contiguous:
        return None
    order = backend.like_order(v)
    if order is None or not backend.transpose(v, order[::-1]).flags.c_contiguous:
        return None
    return order


def _in_order(backend: Any, g: Any, order: list[int] | None) -> bool:
    """True when ``g`` is laid out in ``order`` (``_grad_order``)."""
    if order is None:
        return g.ndim < 2 or bool(g.flags.c_contiguous)
    return bool(backend.transpose(g, order[::-1]).flags.c_contiguous)


_LOCK_CREATION = threading.Lock()
