"""Sorting and selection: sort, topk, kthvalue, median, mode (values and indices; the gradient
goes back to the selected indices), the median of all elements (ties share the gradient), and
the nodes of ops PyTorch records but cannot differentiate (unique, bincount with weights).
Forward on backend arrays (``backends/sort.py``), backward with tensor ops."""

from __future__ import annotations

from typing import Any, Callable

from ..autograd.node import Node
from .util import c_order


class IndexPut(Node):
    """Zeros of ``shape`` with ``src`` put at ``index`` along ``dim`` (indices distinct within
    each slice, as a sort's or a selection's are): the adjoint of ``gather`` at such indices."""

    node_name = "ScatterBackward0"

    def __init__(self, dim: int, index: Any, shape: tuple[int, ...]) -> None:
        self.dim = dim
        self.index = index
        self.shape = shape

    def forward(self, src: Any) -> Any:
        b = self.backend
        out = b.zeros(self.shape, src.dtype)
        if src.size:
            b.put_along_axis(out, self.index, src, self.dim)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        from .movement import Gather

        return (Gather.apply(grad, dim=self.dim, index=self.index),)


class _Select(Node):
    """A selection along ``dim``: ``forward`` returns (values, indices), the indices kept in
    ``self.index`` with ``dim`` present; the gradient lands at those indices."""

    dim: int
    keepdim = True
    shape: tuple[int, ...] = ()
    index: Any = None

    def backward(self, grad: Any, grad_idx: Any = None) -> tuple[Any]:
        if not self.shape:  # a 0-d input: the selection is the element itself
            return (grad.reshape(()),)
        g = grad if self.keepdim else grad.unsqueeze(self.dim)
        return (IndexPut.apply(g, dim=self.dim, index=self.index, shape=self.shape),)


class Sort(_Select):
    """``sort`` along ``dim`` (stable; NaN last ascending, first descending)."""

    def __init__(self, dim: int, descending: bool, stable: bool) -> None:
        self.dim = dim
        self.descending = descending
        self.node_name = "SortBackward1" if stable else "SortBackward0"

    def forward(self, x: Any) -> Any:
        values, idx = self.backend.sort_along(x, self.dim, self.descending)
        self.index, self.shape = idx, x.shape
        return values, idx


class TopK(_Select):
    node_name = "TopkBackward0"

    def __init__(self, k: int, dim: int, largest: bool) -> None:
        self.k = k
        self.dim = dim
        self.largest = largest

    def forward(self, x: Any) -> Any:
        values, idx = self.backend.topk_along(x, self.k, self.dim, self.largest)
        self.index, self.shape = idx, x.shape
        return values, idx


class SelectDim(_Select):
    """One element per slice along ``dim``: ``kthvalue`` (``which="kth"``), ``median`` and
    ``nanmedian`` with a dim, ``mode`` (``which="mode"``)."""

    _NAMES = {"kth": "KthvalueBackward0", "median": "MedianBackward1",
              "nanmedian": "NanmedianBackward1", "mode": "ModeBackward0"}

    def __init__(self, dim: int, keepdim: bool, which: str, k: int = 0) -> None:
        self.dim = dim
        self.keepdim = keepdim
        self.which = which
        self.k = k
        self.node_name = self._NAMES[which]

    def forward(self, x: Any) -> Any:
        b = self.backend
        if self.which == "mode":
            values, idx = b.mode_along(x, self.dim)
        else:
            values, idx = b.select_sorted(x, self.dim, self.which, self.k)
        self.index, self.shape = idx, x.shape
        if not self.keepdim and x.ndim:
            values, idx = b.squeeze(values, axis=self.dim), b.squeeze(idx, axis=self.dim)
        return c_order(b, values), c_order(b, idx)


class MedianAll(Node):
    """The lower median of all elements (``median()``, ``nanmedian()``); as PyTorch's, the
    gradient is shared evenly among the elements equal to it (the NaNs when it is NaN)."""

    def __init__(self, ignore_nan: bool) -> None:
        self.ignore_nan = ignore_nan
        self.node_name = "NanmedianBackward0" if ignore_nan else "MedianBackward0"

    def forward(self, x: Any) -> Any:
        out = self.backend.median_all(x, self.ignore_nan)
        self.save_for_backward(x, out)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        x, out = self.saved_tensors
        hit = (x == out) | (x.isnan() & out.isnan())
        share = hit.sum().to(grad.dtype)
        return ((grad / share).expand(x.shape).where(hit, 0.0),)


class NoDerivative(Node):
    """An op PyTorch records but cannot differentiate (``unique``, ``bincount`` with weights):
    ``fn(backend, *arrays)`` forward; backward raises PyTorch's error ``error(message)``."""

    def __init__(self, fn: Callable[..., Any], name: str, error: type[Exception],
                 message: str) -> None:
        self.fn = fn
        self.node_name = name
        self.error = error
        self.message = message

    def forward(self, *arrays: Any) -> Any:
        return self.fn(self.backend, *arrays)

    def backward(self, *grads: Any) -> Any:
        raise self.error(self.message)


class Compute(Node):
    """``fn(backend, *arrays)`` with no gradient (applied under ``no_grad``): searchsorted,
    histc, isin, ... As a node, it runs on the inputs' device and under ``vmap``."""

    def __init__(self, fn: Callable[..., Any]) -> None:
        self.fn = fn

    def forward(self, *arrays: Any) -> Any:
        return self.fn(self.backend, *arrays)
