"""Conversions: ``to`` (device and dtype) and the minimal ``untyped_storage()``."""

from __future__ import annotations

from typing import Any

from .. import dtypes
from ..autograd.grad_mode import STATE
from ..backends.composite import inverse_perm
from ..ops import elementwise as E
from ..tensor import Tensor
from .arith import clone
from .view_writes import _link_node


# ---- conversion ------------------------------------------------------------------------------

def to(t: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``to(device)``, ``to(dtype)``, ``to(device, dtype)``, ``to(other)``; returns ``t`` itself
    when nothing changes."""
    dev = kwargs.pop("device", None)
    dt = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    for a in args:
        if isinstance(a, dtypes.dtype):
            dt = a
        elif isinstance(a, Tensor):
            dev, dt = a._device, a.dtype
        elif a is not None:
            dev = a
    from ..device import as_device

    target_dev = as_device(dev) if dev is not None else t._device
    out = t
    if target_dev is not t._device:
        out = _ToDevice.apply(out, target=target_dev)
    if dt is not None and dt is not out.dtype:
        if out.dtype.is_complex and not dt.is_complex:
            import warnings

            from ..autograd.node import user_stacklevel

            warnings.warn("Casting complex values to real discards the imaginary part",
                          UserWarning, stacklevel=user_stacklevel())
        out = E.ToCopy.apply(out, dtype=dt.name)
    if copy and out is t:
        out = clone(t)
    return out


class _ToDevice(E._Unary):
    node_name = "ToCopyBackward0"

    def __init__(self, target: Any) -> None:
        self.target = target

    def forward(self, x: Any) -> Any:
        raise NotImplementedError

    @classmethod
    def apply(cls, x: Any, target: Any = None) -> Any:  # type: ignore[override]
        src_dev = x._device
        # NOTE: the copy keeps x's layout (preserve_format): moved in x's own order
        order = x.backend.like_order(x._data)
        outer = order[::-1] if order is not None else None
        src = x._data if outer is None else x.backend.transpose(x._data, outer)
        # NOTE: to meta, only the shape and dtype go (no copy); from meta, to_host refuses.
        host = src if target.type == "meta" else x.backend.to_host(src)
        data = target.backend.from_host(host)
        if outer is not None:
            data = target.backend.transpose(data, inverse_perm(outer))
        out = Tensor._make(data, target)
        if STATE.grad_enabled and x._requires_grad:
            node = _link_node(cls(target=src_dev), x, target)
            out.grad_fn, out._output_nr, out._requires_grad = node, 0, True
        return out

    def grad_of(self, grad: Any) -> Any:
        return grad.to(self.target)


class Storage:
    """The minimal ``untyped_storage()``: identity and size of a tensor's memory."""

    def __init__(self, t: Tensor) -> None:
        base = t._data
        while getattr(base, "base", None) is not None:
            base = base.base
        self._base = base

    def data_ptr(self) -> int:
        iface = getattr(self._base, "__cuda_array_interface__", None)
        if iface is None:
            iface = self._base.__array_interface__
        return int(iface["data"][0])

    def nbytes(self) -> int:
        return int(self._base.nbytes)

    def size(self) -> int:
        return int(self._base.nbytes)
