"""The ``*_scatter`` ops: ``input`` with one of its views replaced by ``src`` (a new tensor):
``select_scatter``, ``slice_scatter``, ``diagonal_scatter``, ``as_strided_scatter``.

Every backward is linear and written with these same nodes (and ``StridedMove``), so it is
differentiable: the input's gradient is ``grad`` with the view's part zeroed (the op itself,
with a zero ``src``), ``src``'s gradient the view of ``grad``.
"""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node
from .manip import StridedMove


def view_of(x: Any, kind: str, params: tuple[Any, ...], backend: Any) -> Any:
    """The view ``kind`` of ``x`` (an array, writable, or a Tensor): ``"key"`` a basic index
    (ints and slices: select and slice), ``"diagonal"`` (offset, dim1, dim2)."""
    if kind == "key":
        return x[params[0]]
    if hasattr(x, "_data"):
        return x.diagonal(*params)
    return backend.diagonal(x, *params)


class ViewScatter(Node):
    """SelectScatterBackward0, SliceScatterBackward0, DiagonalScatterBackward0: a copy of ``x``
    (laid out as ``clone`` lays it out) with its view ``kind`` (see ``view_of``) set to ``s``
    (already of ``x``'s dtype)."""

    raw_ok = False

    def __init__(self, name: str, kind: str, params: tuple[Any, ...]) -> None:
        self.node_name = name
        self.kind = kind
        self.params = params

    def forward(self, x: Any, s: Any) -> Any:
        from .elementwise import preserve_format_copy  # late: elementwise imports more

        out = preserve_format_copy(self.backend, x)
        view_of(out, self.kind, self.params, self.backend)[...] = s
        self.src_shape = s.shape
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        gx = gs = None
        if self.needs_input_grad[0]:
            gx = ViewScatter.apply(grad, grad.new_zeros(self.src_shape), name=self.node_name,
                                   kind=self.kind, params=self.params)
        if self.needs_input_grad[1]:
            gs = view_of(grad, self.kind, self.params, self.backend).clone()
        return gx, gs


class AsStridedScatter(Node):
    """AsStridedScatterBackward0: ``x`` (of geometry ``src_geo`` = shape, element strides,
    storage offset, in a storage of ``storage`` elements) with the elements of the view of
    geometry ``view_geo`` set to ``s``; the result is C-contiguous.

    NOTE: PyTorch keeps ``x``'s strides (it clones the whole storage); the values agree.
    """

    node_name = "AsStridedScatterBackward0"

    def __init__(self, src_geo: tuple[Any, ...], view_geo: tuple[Any, ...],
                 storage: int) -> None:
        self.src_geo = src_geo
        self.view_geo = view_geo
        self.storage = storage

    def forward(self, x: Any, s: Any) -> Any:
        b = self.backend
        buf = b.zeros((self.storage,), x.dtype)
        where = b.strided_indices(*self.src_geo)
        buf[where] = x
        buf[b.strided_indices(*self.view_geo)] = s
        return buf[where]

    def backward(self, grad: Any) -> tuple[Any, Any]:
        gx = gs = None
        if self.needs_input_grad[0]:
            gx = AsStridedScatter.apply(grad, grad.new_zeros(self.view_geo[0]),
                                        src_geo=self.src_geo, view_geo=self.view_geo,
                                        storage=self.storage)
        if self.needs_input_grad[1]:
            gs = StridedMove.apply(grad, src=self.src_geo, dst=self.view_geo,
                                   storage=self.storage, pre=None, post=None)
        return gx, gs
