"""In-place ops and the machinery that records them.

``inplace`` runs the out-of-place function and writes the result into the tensor's storage; with
autograd involved, the tensor takes the new node as its ``grad_fn``, and for a view the base is
rewired through CopySlices while the view is re-derived from it (AsStridedBackward0).
"""

from __future__ import annotations

import builtins
from typing import Any, Callable, Sequence

from .. import dtypes
from ..autograd.grad_mode import STATE, no_grad
from ..autograd.node import Node, _edge, named_type, short_name
from ..autograd.node import _seq as _node_seq
from ..ops import elementwise as E
from ..ops import movement as M
from ..device import device
from ..tensor import Tensor
from .arith import (
    _check_sub, _is_scalar, _type_name, add, as_tensor_like, batched, check_alpha, clamp, div,
    mul, sub,
)
from .shape import _broadcast_shapes


_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def _write_error(e: ValueError) -> RuntimeError:
    """PyTorch's error for a failed write into a tensor's storage (NumPy raised ``e``)."""
    if "read-only" in str(e):
        return RuntimeError(_OVERLAP)
    return RuntimeError(str(e))


def _check_overlap(t: Tensor) -> None:
    """PyTorch's refusal to write into a tensor whose elements share memory (a dim of stride 0
    and size > 1: a broadcast view).

    NOTE: NumPy's broadcast views are read-only, so the write itself would fail; CuPy's are
    writable and would race silently.
    """
    a = t._data
    if 0 in a.strides and a.size and any(
            st == 0 and n > 1 for st, n in zip(a.strides, a.shape)):
        raise RuntimeError(_OVERLAP)


def _shape_error(dst: Sequence[int], src: Sequence[int]) -> RuntimeError:
    """PyTorch's error for a write whose source shape ``src`` does not broadcast to ``dst``: the
    size mismatch, or, when the two broadcast together to a larger shape, that shape."""
    try:
        shape = _broadcast_shapes(dst, src)
    except RuntimeError as e:
        return e
    return RuntimeError(
        f"output with shape {list(dst)} doesn't match the broadcast shape {list(shape)}"
    )


def _broadcast_into(backend: Any, src: Any, shape: tuple[int, ...]) -> Any:
    """Array ``src`` broadcast to ``shape``, a write's destination, or ``_shape_error``."""
    try:
        return backend.broadcast_to(src, shape)
    except ValueError:
        raise _shape_error(shape, src.shape) from None


# ---- in-place ops ----------------------------------------------------------------------------

_INPLACE_INFERENCE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed.You can make a clone "
    "to get a normal tensor before doing inplace update.See https://github.com/pytorch/rfcs/pull/17 "
    "for more details."
)


def _check_inplace_target(t: Tensor) -> None:
    if t._is_inference and not STATE.inference:
        raise RuntimeError(_INPLACE_INFERENCE)
    if STATE.grad_enabled and t._base is not None and t._view_fn is None and t._base._requires_grad:
        raise RuntimeError(_NO_GRAD_VIEW)
    if STATE.grad_enabled and t._requires_grad and t.grad_fn is None:
        if t._base is not None:
            raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")
        raise RuntimeError("a leaf Variable that requires grad is being used in an in-place operation.")
    if STATE.grad_enabled and t._base is not None and t._base._requires_grad and t._base.grad_fn is None:
        raise RuntimeError("a view of a leaf Variable that requires grad is being used in an in-place operation.")


def _can_cast(src: dtypes.dtype, dst: dtypes.dtype) -> bool:
    return src.category <= dst.category


def _cast_error(src: dtypes.dtype, dst: dtypes.dtype) -> RuntimeError:
    return RuntimeError(
        f"result type {_type_name(src)} can't be cast to the desired output type {_type_name(dst)}"
    )


def inplace(t: Tensor, fn: Callable[..., Tensor], *args: Any, **kwargs: Any) -> Tensor:
    """Run ``fn(t, *args)`` and write the result into ``t``'s storage.

    With autograd involved, ``t`` then takes the new node as its ``grad_fn``; a view's base is
    rewired through CopySlices. Saved copies keep gradients exact even though ``t`` is
    overwritten.
    """
    if t._level or batched(*args):
        return _batched_inplace(t, fn, *args, **kwargs)
    _check_inplace_target(t)
    recording = STATE.grad_enabled and (
        t._requires_grad or builtins.any(isinstance(a, Tensor) and a._requires_grad for a in args)
        or (t._base is not None and t._base._requires_grad)
    )
    if not recording:
        with no_grad():
            result = fn(t, *args, **kwargs)
        _write(t, result)
        return t
    if t._base is not None:
        _check_view_target(t)
    old = _alias(t)
    result = fn(old, *args, **kwargs)
    if not _can_cast(result.dtype, t.dtype):
        raise _cast_error(result.dtype, t.dtype)
    if result.dtype is not t.dtype:
        result = result.to(t.dtype)
    node = result.grad_fn
    if node is not None:
        node._own_saved_input(old)
    if t._base is not None:
        _rebase_view(t, result)
    else:
        _write(t, result)
        _set_grad_fn(t, node, result._output_nr, result._requires_grad)
    if node is not None and result.shape == t.shape:
        node._saved_output_is(result._data, t)
    return t


def _batched_inplace(t: Tensor, fn: Callable[..., Tensor], *args: Any, **kwargs: Any) -> Tensor:
    """An in-place op under ``vmap``: the out-of-place result, written into the physical
    tensor under ``t``'s wrappers. A result batched where ``t`` is not cannot fit (torch's
    refusal)."""
    from ..func._batched import levels_of, map_physical

    src = t
    if STATE.grad_enabled and (t._requires_grad or builtins.any(
            isinstance(a, Tensor) and a._requires_grad for a in args)):
        # NOTE: backward may read the old value, which the write below overwrites: the op
        # reads a copy (recorded, so gradients still reach the old value).
        src = map_physical(t, lambda p: p.clone())
    result = fn(src, *args, **kwargs)
    extra = set(levels_of(result)) - set(levels_of(t))
    if extra:
        name = getattr(fn, "__name__", "the operator")
        raise RuntimeError(
            "vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
            "Tensor `other` in extra_args that has more elements than `self`. This happened due "
            "to `other` being vmapped over but `self` not being vmapped over at level "
            f"{max(extra)}. Please try to use out-of-place operators instead of {name}. If said "
            "operator is being called inside the PyTorch framework, please file a bug report "
            "instead.")
    if not _can_cast(result.dtype, t.dtype):
        raise _cast_error(result.dtype, t.dtype)
    write_batched(t, result if result.dtype is t.dtype else result.to(t.dtype))
    return t


def write_batched(t: Tensor, value: Tensor) -> None:
    """Copy ``value`` (batched at some of ``t``'s levels) into ``t``: level by level, down to
    its plain tensor, where an ordinary (recorded) ``copy_`` happens."""
    from ..func._batched import expose

    if not t._level:
        copy_(t, value)
        return
    inner, bdim = t._value, t._bdim  # type: ignore[attr-defined]
    v = expose(value, t._level, inner.shape[bdim])
    write_batched(inner, v.movedim(0, bdim) if bdim else v)


def _alias(t: Tensor) -> Tensor:
    """A stand-in for ``t`` before an in-place op: same storage and graph position."""
    a = Tensor._make(t._data, t._device)
    a.grad_fn, a._output_nr, a._requires_grad = t.grad_fn, t._output_nr, t._requires_grad
    if t.grad_fn is None and t._requires_grad:
        a._acc_ref = t._acc_ref
    return a


def _write(t: Tensor, result: Tensor) -> None:
    if not _can_cast(result.dtype, t.dtype):
        raise _cast_error(result.dtype, t.dtype)
    _check_overlap(t)
    src = result._data
    if result.shape != t.shape:
        src = _broadcast_into(t.backend, src, t._data.shape)
    _copy_into(t, src)


def _copy_into(t: Tensor, src: Any) -> None:
    """Array ``src`` (of ``t``'s shape) written into ``t``'s storage, converted to its dtype."""
    b = t.backend
    token = b.quiet_fp()  # NOTE: a float too large for the dtype becomes inf silently, as PyTorch
    try:
        b.copyto(t._data, src, casting="unsafe")
    except ValueError as e:
        raise _write_error(e) from None
    finally:
        b.restore_fp(token)
    t._counter().bump()


_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your "
    "code by moving both the view and the inplace either both inside the no_grad block (if you "
    "don't want the inplace to be tracked) or both outside (if you want the inplace to be "
    "tracked)."
)


def _check_view_target(view: Tensor) -> None:
    """PyTorch's refusals for recorded in-place ops on views it cannot replay."""
    chain = view._view_fn
    if chain is None:
        raise RuntimeError(_NO_GRAD_VIEW)
    # NOTE: a view of one of several views (split, unbind) is refused too, by the name of the
    # op that made it, as in PyTorch.
    if any(i is not None for _, _, i in chain):
        cls, params, i = chain[-1]
        name = short_name(params.get("name") or cls.node_name or cls.__name__)
        raise RuntimeError(
            f"Output {i or 0} of {name} is a view and is being modified inplace. This view is the "
            "output of a function that returns multiple views. Such functions do not allow the "
            "output views to be modified inplace. You should replace the inplace operation by an "
            "out-of-place one."
        )


def _rebase_view(view: Tensor, result: Tensor) -> None:
    """In-place op on a view whose base is in the graph: the base's new grad_fn is CopySlices,
    and the view is re-derived from the new base."""
    base = view._base
    assert base is not None and view._view_fn is not None
    old_base = _alias(base)
    _write(view, result)
    new = _CopySlices.apply(old_base, result, chain=view._view_fn)
    _set_grad_fn(base, new.grad_fn, 0, new._requires_grad)
    refresh_view_grad_fn(view)


def refresh_view_grad_fn(view: Tensor) -> None:
    """Give ``view`` a grad_fn derived from its base's current one: one AsStridedBackward0 node
    (PyTorch's name) whose backward scatters the gradient into the base's shape."""
    base = view._base
    assert base is not None and view._view_fn is not None
    view._view_version = view._counter().value
    if not base._requires_grad:
        return
    node = _AsStridedView(view._view_fn, tuple(base.shape), _layout(base._data))
    _set_grad_fn(view, _link_node(node, base, base._device), 0, True)


def _link_node(node: Node, input: Tensor, dev: device) -> Node:  # noqa: A002
    """Wire ``node``, built outside ``Node.apply``, into the graph as the one-input node after
    ``input``, its gradients living on ``dev``."""
    node.backend, node.backend_device = dev.backend, dev
    node.needs_input_grad = (True,)
    node.next_functions = (_edge(input, Tensor),)
    node._seq = next(_node_seq)
    node.__class__ = named_type(node)
    return node


def _set_grad_fn(t: Tensor, fn: Any, output_nr: int, requires_grad: bool) -> None:
    """Point ``t`` at a new node after an in-place op; ``retain_grad`` follows it (hooks stay
    with the old node and see the gradient of the old value, as in PyTorch)."""
    old = t._grad_fn
    if old is not None and old._retain_grad:
        ref = old._retain_grad.get(t._output_nr)
        if ref is not None and ref() is t:
            del old._retain_grad[t._output_nr]
            if fn is not None:
                if fn._retain_grad is None:
                    fn._retain_grad = {}
                fn._retain_grad[output_nr] = ref
    t._grad_fn, t._output_nr, t._requires_grad = fn, output_nr, requires_grad


class _ViewNode(Node):
    """A node that knows how a view is derived from its base: the ``chain`` of view ops, the
    base's shape and its ``order`` (``_layout``)."""

    def __init__(self, chain: tuple[Any, ...], base_shape: tuple[int, ...],
                 order: tuple[int, ...]) -> None:
        self.chain = chain
        self.base_shape = base_shape
        self.order = order


class _AsStridedView(_ViewNode):
    """A view re-derived from its base after an in-place op (AsStridedBackward0)."""

    node_name = "AsStridedBackward0"

    def backward(self, grad: Any) -> tuple[Any]:
        return (_ViewScatter.apply(grad, chain=self.chain, base_shape=self.base_shape,
                                   order=self.order),)


class _ViewScatter(_ViewNode):
    """Zeros of the base's shape with ``grad`` in the view's region; backward reads the region."""

    node_name = "AsStridedBackwardBackward0"

    def forward(self, grad: Any) -> Any:
        out = _scratch(self.backend, self.base_shape, self.order, 0, grad.dtype)
        _replay_array(self, out, self.chain)[...] = grad
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        return (replay_view(grad, self.chain),)


def replay_view(base: Tensor, chain: tuple[Any, ...]) -> Tensor:
    """The values of the view that ``chain`` derives from ``base`` (tensor ops: recorded).

    NOTE: ``base`` is a gradient, whose strides need not be the base tensor's: ``view`` steps
    replay as ``reshape`` (a copy where the strides forbid a view). The values are PyTorch's,
    whose CopySlices first copies the gradient into the base's strides.
    """
    out: Any = base
    for cls, params, i in chain:
        if cls is M.Reshape:
            out = out.reshape(params["shape"])
        else:
            out = cls.apply(out, **params) if params else cls.apply(out)
        if i is not None:
            out = out[i]
    return out


def _layout(a: Any) -> tuple[int, ...]:
    """The dims of array ``a`` from the largest stride to the smallest (``0, 1, ...`` for C
    order): with it, ``_scratch`` makes arrays on which the base's view chain replays."""
    strides = a.strides
    return tuple(sorted(range(a.ndim), key=lambda d: -strides[d]))


def _scratch(backend: Any, shape: tuple[int, ...], order: tuple[int, ...], value: Any,
             dtype: Any) -> Any:
    """A new dense array of ``shape`` filled with ``value``, its dims laid out in memory in
    ``order``.

    NOTE: a view chain is replayed on it as on the base (``view`` needs compatible strides:
    ``x.t().clone().t().view(-1)`` is a view of an F-ordered base, and would fail on C order).
    """
    if order == tuple(range(len(order))):
        return backend.full(shape, value, dtype)
    arr = backend.full(tuple(shape[d] for d in order), value, dtype)
    return backend.transpose(arr, tuple(order.index(d) for d in range(len(order))))


def _replay_array(node: Node, arr: Any, chain: tuple[Any, ...]) -> Any:
    """The view of array ``arr`` that ``chain`` derives (``arr`` has the base's layout, so every
    step is a view: writes through it land in ``arr``)."""
    for cls, params, i in chain:
        n = cls(**params) if params else cls()
        n.backend = node.backend
        out = n.forward(arr)
        if not n.is_view:  # NOTE: a copy would swallow the writes made through it
            raise RuntimeError(f"internal error: {n.name()} copied while replaying a view chain")
        arr = out[i] if i is not None else out
    return arr


class _CopySlices(Node):
    """The base of a view after an in-place op on the view: ``base`` with ``result`` in the view's
    region. Backward: the region's gradient goes to ``result``, the rest to the old base."""

    node_name = "torch::autograd::CopySlices"

    def __init__(self, chain: tuple[Any, ...]) -> None:
        self.chain = chain

    def __repr__(self) -> str:
        return f"<CopySlices object at {hex(id(self))}>"

    def forward(self, base: Any, result: Any) -> Any:
        # NOTE: the write already happened (the view shares the base's storage); the output
        # is the base's own storage, so other views stay valid.
        self.shape = base.shape
        self.order = _layout(base)
        return base

    def backward(self, grad: Any) -> tuple[Any, Any]:
        gb = gr = None
        if self.needs_input_grad[0]:
            mask = _scratch(self.backend, self.shape, self.order, 1, grad._data.dtype)
            _replay_array(self, mask, self.chain)[...] = 0
            gb = grad * self.wrap(mask)
        if self.needs_input_grad[1]:
            gr = replay_view(grad, self.chain)
        return gb, gr


def _fast_inplace(t: Tensor, ufunc: str, other: Any, alpha: Any = 1) -> Tensor | None:
    """In-place arithmetic without autograd straight into ``t``'s storage (the optimizer path)."""
    if STATE.grad_enabled and (t._requires_grad or (isinstance(other, Tensor) and other._requires_grad)):
        return None
    if t._level or isinstance(other, Tensor) and other._level:
        return None
    if t._base is not None and t._base._requires_grad and STATE.grad_enabled:
        return None
    _check_inplace_target(t)
    _check_overlap(t)
    b = t.backend
    if isinstance(other, Tensor):
        if other._device is not t._device:
            raise RuntimeError(
                "Expected all tensors to be on the same device, but found at least two devices, "
                f"{t._device} and {other._device}!"
            )
        o = other._data
        odt = other.dtype
        if other.ndim == 0 and t.ndim > 0:
            odt = odt if odt.category > t.dtype.category else t.dtype
    elif _is_scalar(other):
        o = other
        odt = dtypes.scalar_type(other)
    else:
        return None
    res = dtypes.promote_types(t.dtype, odt) if isinstance(other, Tensor) else \
        (t.dtype if odt.category <= t.dtype.category else odt)
    if ufunc == "true_divide" and not res.is_floating_point:
        res = dtypes.get_default_dtype()
    if not _can_cast(res, t.dtype):
        raise _cast_error(res, t.dtype)
    if alpha != 1 or type(alpha) is not int:
        check_alpha(res, alpha)
    token = b.quiet_fp()  # NOTE: silent on inf/nan, as PyTorch (see Node.apply)
    try:
        if alpha != 1:
            o = b.multiply(o, alpha)
        getattr(b, ufunc)(t._data, o, out=t._data, casting="unsafe")
    except ValueError as e:
        if "broadcast" in str(e):
            raise _shape_error(t.shape, getattr(o, "shape", ())) from None
        raise _write_error(e) from None
    finally:
        b.restore_fp(token)
    t._counter().bump()
    return t


def add_(t: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    out = _fast_inplace(t, "add", other, alpha)
    return inplace(t, add, other, alpha=alpha) if out is None else out


def sub_(t: Tensor, other: Any, *, alpha: Any = 1) -> Tensor:
    _check_sub(t, other)
    out = _fast_inplace(t, "subtract", other, alpha)
    return inplace(t, sub, other, alpha=alpha) if out is None else out


def mul_(t: Tensor, other: Any) -> Tensor:
    out = _fast_inplace(t, "multiply", other)
    return inplace(t, mul, other) if out is None else out


def div_(t: Tensor, other: Any) -> Tensor:
    out = _fast_inplace(t, "true_divide", other)
    return inplace(t, div, other) if out is None else out


def clamp_(t: Tensor, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
    return inplace(t, clamp, min, max)


class _Fill(E._Unary):
    """``fill_``/``zero_`` recorded: the old values get no gradient."""

    def __init__(self, value: Any, name: str) -> None:
        self.value = value
        self.node_name = name

    def forward(self, x: Any) -> Any:
        return self.backend.full(x.shape, self.value, x.dtype)

    def grad_of(self, grad: Any) -> Any:
        return grad * 0


def zero_(t: Tensor) -> Tensor:
    return fill_(t, 0, name="ZeroBackward0")


def fill_(t: Tensor, value: Any, name: str = "FillBackward0") -> Tensor:
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(
                f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions."
            )
        return copy_(t, value.expand(t.shape) if t.ndim else value)
    if t._level:
        return _batched_inplace(t, lambda x: _Fill.apply(x, value=value, name=name))
    if not STATE.grad_enabled or not (t._requires_grad or (t._base is not None and t._base._requires_grad)):
        _check_inplace_target(t)
        try:
            t._data[...] = value
        except ValueError as e:
            raise _write_error(e) from None
        t._counter().bump()
        return t
    return inplace(t, lambda x: _Fill.apply(x, value=value, name=name if name != "FillBackward0" else "FillBackward2"))


class _CopyFrom(Node):
    """``dst.copy_(src)`` recorded: the gradient goes to ``src`` (summed to its shape)."""

    node_name = "torch::autograd::CopyBackwards"

    def __repr__(self) -> str:
        return f"<CopyBackwards object at {hex(id(self))}>"

    def forward(self, dst: Any, src: Any) -> Any:
        self.src_shape = src.shape
        self.src_dtype = src.dtype
        return _broadcast_into(self.backend, src, dst.shape).astype(dst.dtype)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        gd = grad * 0 if self.needs_input_grad[0] else None
        gs = None
        if self.needs_input_grad[1]:
            gs = grad.sum_to_size(self.src_shape).to(dtypes.from_name(self.src_dtype.name))
        return gd, gs


def copy_(t: Tensor, src: Any) -> Tensor:
    """Copy ``src`` (broadcast, converted) into ``t``."""
    if not isinstance(src, Tensor):
        src = as_tensor_like(src, t)
    if src._device is not t._device:
        src = src.to(t._device)
    if t._level or src._level:
        return _batched_inplace(t, lambda x, s: s.expand(x.shape), src)
    recording = STATE.grad_enabled and (src._requires_grad or t._requires_grad or
                                         (t._base is not None and t._base._requires_grad))
    if not recording:
        _check_inplace_target(t)
        _check_overlap(t)
        _copy_into(t, _broadcast_into(t.backend, src._data, t._data.shape))
        return t
    return inplace(t, lambda x, s: _CopyFrom.apply(x, s), src)


def uniform_(t: Tensor, a: float = 0.0, b: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill ``t`` with samples from the uniform distribution on ``[a, b)``."""
    from ..random import uniform_array  # NOTE: not at the top: random imports creation, a cycle

    return _sample_into(t, lambda: uniform_array(t, a, b, generator))


def normal_(t: Tensor, mean: float = 0.0, std: float = 1.0, *, generator: Any = None) -> Tensor:
    """Fill ``t`` with samples from the normal distribution N(mean, std**2)."""
    from ..random import normal_array

    return _sample_into(t, lambda: normal_array(t, mean, std, generator))


def _sample_into(t: Tensor, sample: Callable[[], Any]) -> Tensor:
    with no_grad():
        values = sample()
        if isinstance(values, Tensor):  # NOTE: under vmap (see random.sample_like)
            _batched_inplace(t, lambda x, v: v.expand(x.shape), values)
            return t
        t._data[...] = values
    t._counter().bump()
    return t
