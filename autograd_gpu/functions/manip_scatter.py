"""The ``*_scatter`` functions: a copy of ``input`` with one of its views replaced by ``src``
(``select_scatter``, ``slice_scatter``, ``diagonal_scatter``, ``as_strided_scatter``), the
out-of-place forms of writing through a view; and ``as_strided_``. Part of the manip family
(``functions/manip.py``).

``src`` must have the view's shape exactly (no broadcasting) and is cast to ``input``'s dtype,
as in PyTorch; gradients flow to both (``src``'s in its own dtype).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..ops import manip_scatter as P
from ..ops.util import normalize_dim
from ..tensor import Tensor
from .manip import int_arg
from .manip_views import _check_strided, _storage_offset, _storage_size, as_strided, diagonal

__all__ = ["select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_scatter",
           "as_strided_"]


def _tensors(fn: str, input: Any, src: Any, method: bool) -> None:  # noqa: A002
    for name, pos, v in (("input", 1, input), ("src", 2, src)):
        if not isinstance(v, Tensor) and not (method and name == "input"):
            raise TypeError(f"{fn}(): argument '{name}' (position {pos - method}) must be "
                            f"Tensor, not {type(v).__name__}")


def _fit(input: Tensor, src: Tensor, shape: tuple[int, ...]) -> Tensor:  # noqa: A002
    """``src`` checked against the view's ``shape`` and cast to ``input``'s dtype."""
    if tuple(src.shape) != tuple(shape):
        raise RuntimeError("expected src to have a size equal to the slice of self. src size = "
                           f"{list(src.shape)}, slice size = {list(shape)}")
    return src if src.dtype is input.dtype else src.to(input.dtype)


def _scatter(input: Tensor, src: Tensor, name: str, kind: str,  # noqa: A002
             params: tuple[Any, ...], view: Tensor) -> Tensor:
    src = _fit(input, src, tuple(view.shape))
    return P.ViewScatter.apply(input, src, name=name, kind=kind, params=params)


def select_scatter(input: Tensor, src: Tensor, dim: int, index: int,  # noqa: A002
                   *, _method: bool = False) -> Tensor:
    """A copy of ``input`` with ``input.select(dim, index)`` replaced by ``src``
    (SelectScatterBackward0).

    Example:
        >>> select_scatter(zeros(2, 2), ones(2), 0, 0)
        tensor([[1., 1.],
                [0., 0.]])
    """
    _tensors("select_scatter", input, src, _method)
    dim = int_arg("select_scatter", "dim", 3 - _method, dim)
    index = int_arg("select_scatter", "index", 4 - _method, index)
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, input.ndim)
    if not -input.shape[d] <= index < input.shape[d]:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    view = input.detach().select(d, index)
    key = (slice(None),) * d + (index + input.shape[d] if index < 0 else index,)
    return _scatter(input, src, "SelectScatterBackward0", "key", (key,), view)


def slice_scatter(input: Tensor, src: Tensor, dim: int = 0, start: int | None = None,  # noqa: A002
                  end: int | None = None, step: int = 1, *, _method: bool = False) -> Tensor:
    """A copy of ``input`` with its slice ``start:end:step`` along ``dim`` replaced by ``src``
    (SliceScatterBackward0).

    Example:
        >>> slice_scatter(zeros(4), ones(2), start=1, step=2)
        tensor([0., 1., 0., 1.])
    """
    _tensors("slice_scatter", input, src, _method)
    dim = int_arg("slice_scatter", "dim", 3 - _method, dim)
    step = int_arg("slice_scatter", "step", 6 - _method, step)
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = normalize_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    key = (slice(None),) * d + (slice(start, end, step),)
    return _scatter(input, src, "SliceScatterBackward0", "key", (key,), input.detach()[key])


def diagonal_scatter(input: Tensor, src: Tensor, offset: int = 0, dim1: int = 0,  # noqa: A002
                     dim2: int = 1, *, _method: bool = False) -> Tensor:
    """A copy of ``input`` with ``input.diagonal(offset, dim1, dim2)`` replaced by ``src``
    (DiagonalScatterBackward0).

    Example:
        >>> diagonal_scatter(zeros(2, 2), ones(2))
        tensor([[1., 0.],
                [0., 1.]])
    """
    _tensors("diagonal_scatter", input, src, _method)
    view = diagonal(input.detach(), offset, dim1, dim2)  # NOTE: diagonal's checks and messages
    params = (offset, normalize_dim(dim1, input.ndim), normalize_dim(dim2, input.ndim))
    return _scatter(input, src, "DiagonalScatterBackward0", "diagonal", params, view)


def as_strided_scatter(input: Tensor, src: Tensor, size: Sequence[int],  # noqa: A002
                       stride: Sequence[int], storage_offset: int | None = None,
                       *, _method: bool = False) -> Tensor:
    """A copy of ``input`` (of its whole storage, as PyTorch's) with the elements of
    ``input.as_strided(size, stride, storage_offset)`` replaced by ``src``
    (AsStridedScatterBackward0). ``input``'s gradient is ``grad`` with the view's elements
    zeroed, ``src``'s the view of ``grad``.

    NOTE: PyTorch refuses a non-contiguous ``input`` that requires grad (an internal assert);
    here its gradient is computed in the same geometry.

    Example:
        >>> as_strided_scatter(zeros(4), ones(2), (2,), (2,))
        tensor([1., 0., 1., 0.])
    """
    _tensors("as_strided_scatter", input, src, _method)
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    shape, strides = tuple(input.shape), tuple(input.stride())
    if any(s == 0 and n > 1 for n, s in zip(shape, strides)):
        # NOTE: elements sharing memory: PyTorch clones into a fresh contiguous storage
        here, storage = 0, input.numel()
        strides = tuple(input.new_empty(shape).stride())
    else:
        here, storage = _storage_offset(input), _storage_size(input)
    offset = _check_strided(input, size, stride, storage_offset, here, storage)
    if any(s == 0 and n > 1 for n, s in zip(size, stride)):
        raise RuntimeError("unsupported operation: more than one element of the written-to "
                           "tensor refers to a single memory location. Please clone() the "
                           "tensor before performing the operation.")
    src = _fit(input, src, size)
    return P.AsStridedScatter.apply(input, src, src_geo=(shape, strides, here),
                                    view_geo=(size, stride, offset), storage=storage)


def as_strided_(input: Tensor, size: Sequence[int], stride: Sequence[int],  # noqa: A002
                storage_offset: int | None = None) -> Tensor:
    """``input`` itself, given the geometry of ``input.as_strided(size, stride,
    storage_offset)`` (same storage; AsStridedBackward1 when recorded; bumps the version, as
    PyTorch's metadata changes do)."""
    from .aliases import view_inplace  # late: aliases gathers many families

    return view_inplace(input, lambda t: as_strided(t, size, stride, storage_offset),
                        "AsStridedBackward1")


def _method(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def method(t: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return fn(t, *args, _method=True, **kwargs)

    method.__name__ = method.__qualname__ = fn.__name__
    return method


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "select_scatter": _method(select_scatter), "slice_scatter": _method(slice_scatter),
    "diagonal_scatter": _method(diagonal_scatter),
    "as_strided_scatter": _method(as_strided_scatter), "as_strided_": as_strided_,
}
