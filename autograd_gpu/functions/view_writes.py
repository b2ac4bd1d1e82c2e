"""Writes into a tensor's storage and the graph surgery they need on views.

``_write`` puts an op's result into a tensor (checked: dtype, shape, elements sharing memory);
for a view whose base is in the graph, ``_rebase_view`` gives the base a CopySlices node and
re-derives the view from it (AsStridedBackward0), replaying the chain of view ops that made it.
The in-place ops themselves (``add_``, ``fill_``, ``copy_``, ...) live in ``inplace_ops``.
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any, Sequence

from .. import dtypes
from ..autograd.node import Node, _edge, named_type, short_name, user_stacklevel
from ..autograd.node import _seq as _node_seq
from ..ops import movement as M
from ..device import device
from ..tensor import Tensor
from .arith import _type_name
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
    and size > 1: a broadcast view), as its in-place ops, ``copy_`` and sampling do.

    NOTE: ``fill_``/``zero_`` write through such a tensor (every element gets the value), and
    ``masked_fill_``/``index_put_`` warn and write the selected elements (``overlaps``).
    """
    if overlaps(t._data):
        raise RuntimeError(_OVERLAP)


def overlaps(a: Any) -> bool:
    """Whether several elements of array ``a`` share one memory location (PyTorch's
    ``has_internal_overlap`` is YES: a dim of stride 0 and size > 1)."""
    return 0 in a.strides and a.size > 1 and builtins.any(
        st == 0 and n > 1 for st, n in zip(a.strides, a.shape))


def warn_expanded(op: str) -> None:
    """PyTorch's deprecation warning for ``op`` (``index_put_``, ``masked_fill_``) writing into
    a tensor whose elements share memory; it still writes the selected elements."""
    kind = "tensor[indices] = tensor" if op == "index_put_" else "tensor[mask] = scalar"
    warnings.warn(f"Use of {op} on expanded tensors is deprecated. Please clone() the tensor "
                  "before performing this operation. This also applies to advanced indexing "
                  f"e.g. {kind}", UserWarning, stacklevel=user_stacklevel())


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


def _can_cast(src: dtypes.dtype, dst: dtypes.dtype) -> bool:
    return src.category <= dst.category


def _cast_error(src: dtypes.dtype, dst: dtypes.dtype) -> RuntimeError:
    return RuntimeError(
        f"result type {_type_name(src)} can't be cast to the desired output type {_type_name(dst)}"
    )


def _alias(t: Tensor) -> Tensor:
    """A stand-in for ``t`` before an in-place op: same storage and graph position."""
    a = Tensor._make(t._data, t._device)
    a.grad_fn, a._output_nr, a._requires_grad = t.grad_fn, t._output_nr, t._requires_grad
    if t.grad_fn is None and t._requires_grad:
        a._acc_ref = t._acc_ref
    return a


def _write(t: Tensor, result: Tensor, through: Any = None) -> None:
    if not _can_cast(result.dtype, t.dtype):
        raise _cast_error(result.dtype, t.dtype)
    if through is None:
        _check_overlap(t)
    src = result._data
    if result.shape != t.shape:
        src = _broadcast_into(t.backend, src, t._data.shape)
    masked = through is not None and through is not True and overlaps(t._data)
    _copy_into(t, src, through if masked else None)


def _copy_into(t: Tensor, src: Any, where: Any = None) -> None:
    """Array ``src`` (of ``t``'s shape) written into ``t``'s storage, converted to its dtype
    (only where the bool array ``where`` is true, if given)."""
    b = t.backend
    token = b.quiet_fp()  # NOTE: a float too large for the dtype becomes inf silently, as PyTorch
    try:
        if where is None:
            b.copyto(t._data, src, casting="unsafe")
        else:
            b.copyto(t._data, src, casting="unsafe", where=where)
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


def _rebase_view(view: Tensor, result: Tensor, through: Any = None) -> None:
    """In-place op on a view whose base is in the graph: the base's new grad_fn is CopySlices,
    and the view is re-derived from the new base."""
    base = view._base
    assert base is not None and view._view_fn is not None
    old_base = _alias(base)
    _write(view, result, through)
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
        b = self.backend
        out = _scratch(b, self.base_shape, self.order, 0, grad.dtype)
        region = _replay_array(self, out, self.chain)
        if not overlaps(region):
            region[...] = grad
            return out
        # NOTE: a view through an expand (x.expand(2, 3)[:, 0]) sees one base element several
        # times: its gradients add up there (an assignment would keep only the last).
        n = 1
        for d in self.base_shape:
            n *= d
        flat = _scratch(b, self.base_shape, self.order, 0, "int64")
        flat[...] = b.reshape(b.arange(0, n, 1, "int64"), self.base_shape)
        sums = b.zeros((n,), grad.dtype)
        b.index_add(sums, b.reshape(_replay_array(self, flat, self.chain), (-1,)),
                    b.reshape(grad, (-1,)))
        out[...] = b.reshape(sums, self.base_shape)
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
    inner_first = None if order == tuple(range(len(order))) else list(order[::-1])
    return backend.empty_in_order(shape, dtype, inner_first,
                                  lambda s, d: backend.full(s, value, d))


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
            cplx = grad.dtype.is_complex
            mask = _scratch(self.backend, self.shape, self.order, 1 + 1j if cplx else 1,
                            grad._data.dtype)
            region = _replay_array(self, mask, self.chain)
            if overlaps(region):  # NOTE: PyTorch copies the gradient into the view's region
                raise RuntimeError(_OVERLAP)
            region[...] = 0
            if cplx:
                # NOTE: a real view (``z.real``) covers half of each element: the mask keeps
                # the real and imaginary parts apart (1 + 1j, a zero where the view wrote).
                gb = grad.real * self.wrap(mask.real.copy()) + \
                    grad.imag * self.wrap(mask.imag.copy()) * 1j
            else:
                gb = grad * self.wrap(mask)
        if self.needs_input_grad[1]:
            gr = replay_view(grad, self.chain)
        return gb, gr
