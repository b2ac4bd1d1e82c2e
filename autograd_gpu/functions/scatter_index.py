"""The scatter family's ops along one dimension with a 1-d index (``index_add``,
``index_copy``, ``index_fill``, ``index_reduce``); registered through ``functions/scatter.py``.

They run ``ops/scatter.py``'s ``Scatter``/``ScatterFill`` with the index standing for itself
expanded along the dimension to the source's shape. Each op checks its arguments as PyTorch
does, in PyTorch's order and words, which differ from op to op (see each function).
"""

from __future__ import annotations

import builtins
import warnings
from typing import Any, Callable

from .. import dtypes
from ..autograd.node import user_stacklevel
from ..ops import scatter as S
from ..ops.util import normalize_dim
from ..tensor import _WARNED_ONCE, Tensor
from .checks import arg_position, checked_scalar, expect_tensor, invalid_arguments
from .index import _dim_arg, _index_arg, check_gather_values
from .inplace_ops import inplace
from .out import check_out_grad, write_out
from .view_writes import overlaps, warn_expanded

__all__: list[str] = ["index_add", "index_copy", "index_fill", "index_reduce"]

_name = dtypes.scalar_type_name


def _same_device(input: Tensor, other: Tensor) -> None:  # noqa: A002
    if other._device is not input._device:
        raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                           f"two devices, {input._device} and {other._device}!")


def _index_args(fn: str, input: Tensor, dim: Any, index: Any, source: Any,  # noqa: A002
                method: bool, name: str = "source") -> tuple[int, Tensor]:
    """PyTorch's parser checks for ``(input, dim, index, <name>)`` (``source`` for the index_*
    ops, ``src`` for scatter), then ``dim``'s range."""
    if not method:
        expect_tensor(fn, "input", 1, input)
    dim = _dim_arg(fn, dim, method)
    index = _index_arg(fn, index, input, method)
    expect_tensor(fn, name, arg_position(4, method), source)
    _same_device(input, source)
    return normalize_dim(dim, input.ndim), index


def _check_index_func(fn: str, input: Tensor, d: int, index: Tensor,  # noqa: A002
                      source: Tensor) -> None:
    """The checks ``index_add`` and ``index_reduce`` share (``fn``: their in-place names)."""
    if index.ndim > 1:
        raise IndexError(f"{fn}(): Index is supposed to be a vector, but got dim: {index.ndim} "
                         f"with type: {_name(index.dtype)} and size: {list(index.shape)}")
    if index.dtype is not dtypes.int64 and index.dtype is not dtypes.int32:
        raise RuntimeError(f"{fn}(): Expected dtype int32/int64 for index but got: "
                           f"{_name(index.dtype)}")
    if input.dtype is not source.dtype:
        raise RuntimeError(f"{fn}(): self ({_name(input.dtype)}) and source "
                           f"({_name(source.dtype)}) must have the same scalar type")
    n = source.shape[d] if source.ndim else 1
    if index.numel() != n:
        raise RuntimeError(f"{fn}(): Number of indices ({index.numel()}) should be equal to "
                           f"source.size(dim): ({n}), for dim: {d}")
    if source.ndim != input.ndim or builtins.any(
            k != d and a != b for k, (a, b) in enumerate(zip(input.shape, source.shape))):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(input.shape)} "
                           f"source.shape = {list(source.shape)}")


def _self_range(n: int) -> S.Check:
    """PyTorch's IndexError for an ``index_add``/``index_reduce`` position outside
    ``[0, n)``."""
    def check(b: Any, idx: Any) -> None:
        if b.out_of_range(idx, 0, n) is not None:
            raise IndexError("index out of range in self")

    return check


def _restrided_storage(fn: str, input: Tensor, d: int, n: int) -> None:  # noqa: A002
    """PyTorch's ``setStorage`` error: ``index_copy``/``index_fill`` view an empty ``input``
    with ``n`` (> 0) positions along ``d`` (stride 0), which needs storage it lacks."""
    if input.numel() or not n or not input.ndim:
        return
    sizes = list(input.shape)
    sizes[d] = n
    if 0 in sizes:
        return
    strides = [0] * input.ndim
    step = 1
    for k in range(input.ndim - 1, -1, -1):
        strides[k] = step
        step *= builtins.max(input.shape[k], 1)
    strides[d] = 0
    item = input._data.dtype.itemsize
    need = (builtins.sum((s - 1) * st for s, st in zip(sizes, strides)) + 1) * item
    raise RuntimeError(f"setStorage: sizes {sizes}, strides {strides}, storage offset 0, and "
                       f"itemsize {item} requiring a storage size of {need} are out of bounds "
                       "for storage of size 0")


# ---- index_add, index_copy, index_reduce, index_fill -----------------------------------------

def index_add(input: Tensor, dim: int, index: Tensor, source: Tensor, *,  # noqa: A002
              alpha: Any = 1, out: Tensor | None = None, _method: bool = False) -> Tensor:
    """``input`` with ``alpha * source`` added at the positions ``index`` along ``dim``
    (repeated positions add up): ``out[:, index[i]] += alpha * source[:, i]`` for ``dim == 1``.

    Args:
        input: tensor of any shape.
        dim: the dimension to add along.
        index: 1-d (or 0-d) int64/int32 positions in ``[0, input.size(dim))``.
        source: ``input``'s dtype and shape, but ``index.numel()`` along ``dim``.
        alpha: a number ``input``'s dtype holds (an integer dtype takes its integer part).

    Returns:
        Tensor of ``input``'s shape and dtype (IndexAddBackward0).

    Example:
        >>> index_add(zeros(3), 0, tensor([0, 0, 2]), tensor([1., 2., 3.]))
        tensor([3., 0., 3.])
    """
    d, index = _index_args("index_add", input, dim, index, source, _method)
    if out is not None:
        check_out_grad("index_add", (input, source), out)
    _check_index_func("index_add_", input, d, index, source)
    alpha = checked_scalar(alpha, input.dtype)
    n = input.shape[d] if input.ndim else 1
    check: S.Check | None = None
    if input.numel() or input.ndim <= 1:  # NOTE: PyTorch skips an empty input of 2+ dims
        if input.ndim > 1 and index.dtype is dtypes.int64 and d in (0, input.ndim - 1):
            # NOTE: PyTorch's CPU kernel takes this path (and its words) for the first and last
            # dimensions of a tensor of two or more with an int64 index.
            def check(b: Any, idx: Any) -> None:
                check_gather_values(b, idx, n, d)
        else:
            check = _self_range(n)
    result = S.Scatter.apply(input, index, source, dim=d, reduce="sum",
                             name="IndexAddBackward0", alpha=alpha, check=check, expand=True)
    return result if out is None else write_out("index_add", result, out,
                                                inputs=(input, source), exact=(True,))


def index_copy(input: Tensor, dim: int, index: Tensor, source: Tensor, *,  # noqa: A002
               out: Tensor | None = None, _method: bool = False) -> Tensor:
    """``input`` with the slices of ``source`` written at the positions ``index`` along
    ``dim``: ``out[:, index[i]] = source[:, i]`` for ``dim == 1`` (a position written twice
    takes one of its values, as in PyTorch).

    Args:
        index: 1-d (or 0-d) int64 positions in ``[0, input.size(dim))``.
        source: ``input``'s dtype and shape, but ``index.numel()`` along ``dim`` (a 0-d
            ``source`` with one index writes one value).

    Returns:
        Tensor of ``input``'s shape and dtype (IndexCopyBackward0).

    Example:
        >>> index_copy(zeros(3), 0, tensor([2, 0]), tensor([1., 2.]))
        tensor([2., 0., 1.])
    """
    fn = "index_copy_"
    d, index = _index_args("index_copy", input, dim, index, source, _method)
    if out is not None:
        check_out_grad("index_copy", (input, source), out)
    if index.ndim > 1:
        raise IndexError(f"{fn}(): Index should have dimension 1 or 0 (got {index.ndim})")
    k = index.numel()
    if not source.ndim and k != 1:
        raise IndexError(f"{fn}(): When source is scalar, index should have one element "
                         f"(got {k})")
    if source.ndim and input.ndim and source.ndim != input.ndim:
        raise IndexError(f"{fn}(): When source and destination are not scalars, their "
                         f"dimensionality must match. Source dimensionality ({source.ndim}), "
                         f"destination dimensionality ({input.ndim})")
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"{fn}(): Expected a long tensor for index, but got "
                           f"{_name(index.dtype)}")
    if input.dtype is not source.dtype:
        raise RuntimeError(f"{fn}(): self and source expected to have the same dtype, but got "
                           f"(self) {_name(input.dtype)} and (source) {_name(source.dtype)}")
    mine = [s for i, s in enumerate(input.shape) if i != d]
    theirs = [s for i, s in enumerate(source.shape) if i != d]
    if mine != theirs:
        raise RuntimeError(
            f"{fn}(): Source/destination tensor must have same slice shapes. Destination slice "
            f"shape: {' '.join(map(str, mine))} at dimension {d} and source slice shape: "
            f"{' '.join(map(str, theirs))} at dimension 0.")
    if source.ndim and k != source.shape[d]:
        raise IndexError(f"{fn}(): Number of indices ({k}) should be equal to source.size(dim) "
                         f"({source.shape[d]})")
    _restrided_storage(fn, input, d, k)
    n = input.shape[d] if input.ndim else 1

    def check(b: Any, idx: Any) -> None:
        bad = b.out_of_range(idx, 0, n)
        if bad is not None:
            raise IndexError(f"{fn}(): index {bad} is out of bounds for dimension {d} with "
                             f"size {n}")

    result = S.Scatter.apply(input, index, source, dim=d, reduce="set",
                             name="IndexCopyBackward0", check=check if input.numel() else None,
                             expand=True)
    return result if out is None else write_out("index_copy", result, out,
                                                inputs=(input, source), exact=(True,))


def index_reduce(input: Tensor, dim: int, index: Tensor, source: Tensor,  # noqa: A002
                 reduce: str, *, include_self: bool = True, out: Tensor | None = None,
                 _method: bool = False) -> Tensor:
    """``input`` with the slices of ``source`` reduced into it at the positions ``index`` along
    ``dim``: ``reduce`` is "prod", "mean", "amax" or "amin"; ``include_self``, gradients and
    integer means as ``scatter_reduce``'s. PyTorch calls it beta and warns once.

    Returns:
        Tensor of ``input``'s shape and dtype (IndexReduceBackward0).

    Example:
        >>> index_reduce(ones(2), 0, tensor([0, 0]), tensor([2., 3.]), "prod")
        tensor([6., 1.])
    """
    if "index_reduce" not in _WARNED_ONCE:
        _WARNED_ONCE.add("index_reduce")  # NOTE: PyTorch's TORCH_WARN_ONCE
        warnings.warn("index_reduce() is in beta and the API may change at any time.",
                      UserWarning, stacklevel=user_stacklevel())
    d, index = _index_args("index_reduce", input, dim, index, source, _method)
    if out is not None:
        check_out_grad("index_reduce", (input, source), out)
    _check_index_func("index_reduce_", input, d, index, source)
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError("index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if input.dtype is dtypes.bool:
        raise NotImplementedError("\"index_func_\" not implemented for 'Bool'")
    n = input.shape[d] if input.ndim else 1
    if index.numel() and input.ndim > 1 and not n:
        raise IndexError(f"select(): index 0 out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    result = S.Scatter.apply(input, index, source, dim=d, reduce=reduce,
                             name="IndexReduceBackward0", include_self=bool(include_self),
                             check=_self_range(n), expand=True)
    return result if out is None else write_out("index_reduce", result, out,
                                                inputs=(input, source), exact=(True,))


def _number(value: Any) -> bool:
    return isinstance(value, (bool, int, float, complex))


def index_fill(input: Tensor, dim: int, index: Tensor, value: Any, *,  # noqa: A002
               _method: bool = False) -> Tensor:
    """``input`` with ``value`` written at every position ``index`` selects along ``dim``.
    Positions lie in ``[-n, n)`` (negative ones count from the end, as in PyTorch).

    Args:
        index: 1-d (or 0-d) int64 positions.
        value: a number, or a 0-d tensor (which then takes a gradient: the sum of the
            gradient over the filled positions).

    Returns:
        Tensor of ``input``'s shape and dtype (IndexFillBackward0; IndexFillBackward1 for a
        tensor value).

    Example:
        >>> index_fill(zeros(2, 3), 1, tensor([0, -1]), 5.)
        tensor([[5., 0., 5.],
                [5., 0., 5.]])
    """
    fn = "index_fill_"
    if (not isinstance(input, Tensor) or not isinstance(index, Tensor)
            or isinstance(dim, bool) or not isinstance(dim, (int, Tensor))
            or not (isinstance(value, Tensor) or _number(value))):
        args = (dim, index, value) if _method else (input, dim, index, value)
        raise invalid_arguments("index_fill", args, {})
    dim = _dim_arg("index_fill", dim, _method)
    _same_device(input, index)
    d = normalize_dim(dim, input.ndim)
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if index.dtype is not dtypes.int64:
        raise IndexError(f"{fn}(): Expected dtype int64 for index.")
    v = value if isinstance(value, Tensor) else None
    if v is not None:
        _same_device(input, v)
        if v.ndim:
            raise RuntimeError(f"{fn} only supports a 0-dimensional value tensor, but got tensor "
                               f"with {v.ndim} dimension(s).")
        number = checked_scalar(v.item(), input.dtype) if v.dtype is not input.dtype else None
    elif isinstance(value, complex) and not input.dtype.is_complex:
        raise RuntimeError(f"{fn}(): Converting complex Scalar to non-complex type is not "
                           "supported")
    else:
        number = checked_scalar(value, input.dtype)
    _restrided_storage(fn, input, d, index.numel())
    n = input.shape[d] if input.ndim else 1

    def check(b: Any, idx: Any) -> None:
        bad = b.out_of_range(idx, -n, n)
        if bad is not None:
            raise IndexError(f"index {bad} is out of bounds for dimension {d} with size {n}")

    kw = {"dim": d, "value": number, "preserve": True, "wrap_n": n, "expand": True,
          "check": check if input.numel() else None}
    if v is None:
        return S.ScatterFill.apply(input, index,  # type: ignore[no-any-return]
                                   name="IndexFillBackward0", **kw)
    return S.ScatterFill.apply(input, index, v,  # type: ignore[no-any-return]
                               name="IndexFillBackward1", **kw)


def index_fill_(input: Tensor, dim: int, index: Tensor, value: Any) -> Tensor:  # noqa: A002
    """``index_fill`` in place (into an expanded tensor: PyTorch's warning, then the write)."""
    through = None
    if _expanded(input, "index_fill_"):
        def select(mask: Any) -> None:
            d = normalize_dim(dim, input.ndim)
            n = input.shape[d] if input.ndim else 1
            idx = input.backend.wrap_negative(index._data.reshape(-1), n)
            mask[(slice(None),) * d + (idx,)] = True
        through = _written(input, select)
    return inplace(input, index_fill, dim, index, value, _method=True, _through=through)


def _expanded(input: Any, op: str) -> bool:  # noqa: A002
    """Whether ``input``'s elements share memory; if so, PyTorch's warning for ``op``."""
    if not isinstance(input, Tensor) or input._level or not overlaps(input._data):
        return False
    warn_expanded(op)
    return True


def _written(input: Tensor, select: Callable[[Any], None]) -> Any:  # noqa: A002
    """The bool array of the positions ``select`` marks, or None when the arguments are bad
    (the op then raises its error)."""
    mask = input.backend.zeros(input.shape, "bool")
    try:
        select(mask)
    except Exception:  # noqa: BLE001
        return None
    return mask


# ---- Tensor methods --------------------------------------------------------------------------

def _method(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return fn(self, *args, _method=True, **kwargs)

    method.__name__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


def _inplace_method(fn: Callable[..., Tensor]) -> Callable[..., Tensor]:
    def method(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        return inplace(self, fn, *args, _method=True, **kwargs)

    method.__name__ = fn.__name__ + "_"
    method.__doc__ = f"``{fn.__name__}`` in place."
    return method


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "index_add": _method(index_add), "index_add_": _inplace_method(index_add),
    "index_copy": _method(index_copy), "index_copy_": _inplace_method(index_copy),
    "index_fill": _method(index_fill), "index_fill_": index_fill_,
    "index_reduce": _method(index_reduce), "index_reduce_": _inplace_method(index_reduce),
}
