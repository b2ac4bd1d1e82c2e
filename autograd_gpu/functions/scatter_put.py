"""``index_put`` and the masked ops (``masked_select``, ``masked_scatter``) of the scatter
family; registered through ``functions/scatter.py``. ``index_put`` reads its indices as
``t[indices] = values`` reads its key (``functions/index.py``), with its own checks."""

from __future__ import annotations

import builtins
from typing import Any, Callable

from .. import dtypes
from ..ops import scatter as S
from ..tensor import Tensor
from .checks import arg_position, expect_tensor
from .index import _IndexPut, _key
from .inplace_ops import inplace
from .out import check_out_grad, write_out
from .scatter_index import _expanded, _method, _name, _same_device, _written
from .shape import _broadcast_shapes, expanded_shape

__all__: list[str] = ["index_put", "index_put_", "masked_select", "masked_scatter"]


# ---- index_put -------------------------------------------------------------------------------

def index_put(input: Tensor, indices: Any, values: Tensor,  # noqa: A002
              accumulate: bool = False, *, _method: bool = False) -> Tensor:
    """``input`` with ``values`` written (``accumulate``: added, repeated positions adding up)
    at ``input[indices]``: ``indices`` is a tuple of index tensors (int64/int32 positions, which
    may be negative, or bool masks), read as ``t[indices] = values`` reads its key.

    ``values`` has ``input``'s dtype and broadcasts to the indexed region (with no extra leading
    dimensions, unlike ``t[indices] = values``).

    Returns:
        Tensor of ``input``'s shape and dtype (IndexPutBackward0).

    Example:
        >>> index_put(zeros(3), (tensor([0, 0]),), tensor([1., 2.]), accumulate=True)
        tensor([3., 0., 0.])
    """
    fn = "index_put"
    if not _method:
        expect_tensor(fn, "input", 1, input)
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{fn}(): argument 'indices' (position {arg_position(2, _method)}) must "
                        f"be tuple of Tensors, not {type(indices).__name__}")
    for i, k in enumerate(indices):
        if not isinstance(k, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument "
                            f"{arg_position(1, _method)}, but got {type(k).__name__}")
    expect_tensor(fn, "values", arg_position(3, _method), values)
    _same_device(input, values)
    if builtins.all(k.ndim == 0 and k.dtype is dtypes.bool for k in indices) and (
            accumulate or values.numel() != 1):
        # NOTE: with no index, or only 0-d bools, PyTorch's CPU kernel fails its own assertion
        # (or, for one value, reads a missing tensor): its words, kept.
        raise RuntimeError('ntensor >= 3 INTERNAL ASSERT FAILED at "/__w/pytorch/pytorch/aten/'
                           'src/ATen/native/cpu/IndexKernelUtils.h":8, please report a bug to '
                           'PyTorch. ')
    if not indices:
        raise RuntimeError("sym_strides() called on an undefined Tensor")
    covered = builtins.sum(k.ndim if k.dtype in (dtypes.bool, dtypes.uint8) else 1
                           for k in indices)
    if covered > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim} "
                         f"(got {covered})")
    npkey, _, view = _key(input, tuple(indices))
    if values.dtype is not input.dtype:
        raise RuntimeError("Index put requires the source and destination dtypes match, got "
                           f"{_name(input.dtype)} for the destination and {_name(values.dtype)} "
                           "for the source.")
    b = input.backend
    region = tuple(b.empty_index(view.shape, npkey, input._data.dtype).shape)
    v = tuple(values.shape)
    if len(v) > len(region) or builtins.any(a not in (1, c) for a, c in zip(v[::-1],
                                                                          region[::-1])):
        raise RuntimeError(f"shape mismatch: value tensor of shape [{', '.join(map(str, v))}] "
                           "cannot be broadcast to indexing result of shape "
                           f"[{', '.join(map(str, region))}]")
    empty = b.check_index(view.shape, npkey)
    if view is not input:  # NOTE: a 0-d bool index adds a dimension: write through a view
        out = input.clone()
        inplace(_key(out, tuple(indices))[2], _put_view, npkey, values, empty)
        return out
    if accumulate:
        return S.IndexPutAccumulate.apply(input, values,  # type: ignore[no-any-return]
                                          key=npkey, region=region, empty=empty)
    return _IndexPut.apply(input, values, key=npkey, empty=empty)  # type: ignore[no-any-return]


def _put_view(t: Tensor, npkey: Any, values: Tensor, empty: bool) -> Tensor:
    return _IndexPut.apply(t, values, key=npkey, empty=empty)  # type: ignore[no-any-return]


def index_put_(input: Tensor, indices: Any, values: Tensor,  # noqa: A002
               accumulate: bool = False) -> Tensor:
    """``index_put`` in place. Into a tensor whose elements share memory (an expanded one)
    PyTorch warns, then writes the selected elements."""
    through = None
    if _expanded(input, "index_put_"):
        def select(mask: Any) -> None:
            npkey, _, view = _key(input, tuple(indices))
            if view is input and not input.backend.check_index(input.shape, npkey):
                mask[npkey] = True
        through = _written(input, select)
    return inplace(input, index_put, indices, values, accumulate, _method=True,
                   _through=through)


# ---- masked_select, masked_scatter -----------------------------------------------------------

def masked_select(input: Tensor, mask: Tensor, *, out: Tensor | None = None,  # noqa: A002
                  _method: bool = False) -> Tensor:
    """The elements of ``input`` where the bool ``mask`` is true, ``input`` and ``mask``
    broadcast together, as a 1-d tensor in C order.

    Returns:
        1-d tensor of ``input``'s dtype (MaskedSelectBackward0).

    Example:
        >>> masked_select(tensor([[1, 2], [3, 4]]), tensor([True, False]))
        tensor([1, 3])
    """
    fn = "masked_select"
    if not _method:
        expect_tensor(fn, "input", 1, input)
    expect_tensor(fn, "mask", arg_position(2, _method), mask)
    _same_device(input, mask)
    if out is not None:
        check_out_grad(fn, (input,), out)
    if mask.dtype is not dtypes.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _broadcast_shapes(mask.shape, input.shape)
    if isinstance(out, Tensor) and out.dtype is not input.dtype:
        raise RuntimeError("masked_select(): self and result must have the same scalar type")
    result = S.MaskedSelect.apply(input, mask=mask._data, shape=shape)
    return result if out is None else write_out(fn, result, out, inputs=(input,))


def masked_scatter(input: Tensor, mask: Tensor, source: Tensor, *,  # noqa: A002
                   _method: bool = False, _inplace: bool = False) -> Tensor:
    """``input`` with the leading elements of ``source`` (read flat, in order) written where
    the bool ``mask`` is true; ``input`` and ``mask`` broadcast together (in place, ``mask``
    must broadcast to ``input``). ``source`` needs at least as many elements as ``mask`` has
    true entries.

    Returns:
        Tensor of the broadcast shape and ``input``'s dtype (MaskedScatterBackward0).

    Example:
        >>> masked_scatter(zeros(3), tensor([True, False, True]), tensor([1., 2., 3.]))
        tensor([1., 0., 2.])
    """
    fn = "masked_scatter"
    if not _method:
        expect_tensor(fn, "input", 1, input)
    expect_tensor(fn, "mask", arg_position(2, _method), mask)
    expect_tensor(fn, "source", arg_position(3, _method), source)
    _same_device(input, mask)
    _same_device(input, source)
    if mask.dtype is not dtypes.bool:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with "
                           f"dtype {_name(mask.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but "
                           f"got{_name(input.dtype)} and {_name(source.dtype)}")
    if _inplace:
        shape = _expand_inplace(mask, tuple(input.shape))
    else:
        shape = _broadcast_shapes(mask.shape, input.shape)
    b = mask.backend
    count = int(b.to_host(b.broadcast_to(mask._data, shape).sum()))
    if count > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    return S.MaskedScatter.apply(input, source,  # type: ignore[no-any-return]
                                 mask=mask._data, shape=shape)


def _expand_inplace(mask: Tensor, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``mask``'s shape broadcast to ``shape`` (PyTorch's ``expand_inplace``), or its error,
    which names the mask's type as C++ does (``CPUBoolType``)."""
    if mask.ndim > len(shape):
        kind = "CPU" if mask._device.type == "cpu" else "CUDA"
        raise RuntimeError(
            f"expand({kind}BoolType{{[{', '.join(map(str, mask.shape))}]}}, size=["
            f"{', '.join(map(str, shape))}]): the number of sizes provided ({len(shape)}) must "
            f"be greater or equal to the number of dimensions in the tensor ({mask.ndim})")
    return expanded_shape(mask, shape)


def masked_scatter_(input: Tensor, mask: Tensor, source: Tensor) -> Tensor:  # noqa: A002
    """``masked_scatter`` in place (``mask`` must broadcast to ``input``'s shape)."""
    return inplace(input, masked_scatter, mask, source, _method=True, _inplace=True)


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "index_put": _method(index_put), "index_put_": index_put_,
    "masked_select": _method(masked_select),
    "masked_scatter": _method(masked_scatter), "masked_scatter_": masked_scatter_,
}
