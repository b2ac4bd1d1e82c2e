"""Writes and reads at index positions: ``scatter``, ``scatter_add``, ``scatter_reduce``,
``take``, ``take_along_dim``, ``put`` here; ``index_add``/``index_copy``/``index_fill``/
``index_reduce`` in ``scatter_index``, ``index_put``, ``masked_select`` and ``masked_scatter`` in
``scatter_put`` (registered through this module's ``__all__`` and ``TENSOR_METHODS``).

Every index is checked as PyTorch checks it, in PyTorch's order (argument types, ``dim``, index
dtype, dtypes, shapes, then each value), with PyTorch's exception type and words: a bad index
never reaches NumPy or CuPy (which would wrap a negative entry around, or name the axis in their
own words). ``__all__`` lists the ``torch.*`` names; ``TENSOR_METHODS`` the ``Tensor`` methods
(name -> function taking the tensor first), installed by ``functions/__init__``.
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
from . import scatter_index as SI
from . import scatter_put as SP
from .checks import arg_position, checked_scalar, expect_tensor, invalid_arguments
from .index import _dim_arg, check_gather_values, gather
from .inplace_ops import inplace
from .out import check_out_grad, write_out
from .scatter_index import _method, _same_device
from .scatter_index import index_add, index_copy, index_fill, index_reduce  # noqa: F401
from .scatter_put import index_put, index_put_, masked_scatter, masked_select  # noqa: F401
from .shape import _broadcast_shapes

__all__: list[str] = ["scatter", "scatter_add", "scatter_reduce", "take", "take_along_dim",
                      "put", *SI.__all__, *SP.__all__]

_REDUCE_ERROR = "reduce argument must be either sum, prod, mean, amax or amin, got {}"
_LEGACY_WARNING = (
    "The reduce argument of torch.scatter with Tensor src is deprecated and will be removed in a "
    "future PyTorch release. Use torch.scatter_reduce instead for more reduction options.")


def _size(t: Tensor, k: int) -> int:
    """``t.size(k)`` where a 0-d tensor counts as one element along any dimension (PyTorch's
    ``ensure_nonempty_size``)."""
    if not t.ndim:
        return 1
    if k >= t.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-t.ndim}, "
                         f"{t.ndim - 1}], but got {k})")
    return int(t.shape[k])


def check_scatter(input: Tensor, d: int, index: Tensor, src: Tensor | None) -> None:  # noqa: A002
    """PyTorch's refusals of a ``scatter``/``scatter_add``/``scatter_reduce`` index by dtype
    and shape (``src``: the source tensor, None for a number), in PyTorch's order. Of an empty
    index PyTorch checks nothing (not even the dtype); ``src``'s dtype still counts."""
    if index.numel() and index.dtype is not dtypes.int64 and index.dtype is not dtypes.int32:
        raise RuntimeError("scatter(): Expected dtype int32/int64 for index")
    if src is not None and src.dtype is not input.dtype:
        raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
    if not index.numel():
        return
    nd = builtins.max(input.ndim, 1)
    if builtins.max(index.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as self tensor")
    wrong = builtins.any(k != d and _size(index, k) > _size(input, k) for k in range(nd))
    if not wrong and src is not None:
        wrong = builtins.any(_size(index, k) > _size(src, k) for k in range(nd))
    if wrong:
        text = (f"Expected index {list(index.shape)} to be no larger than self "
                f"{list(input.shape)} apart from dimension {d}")
        if src is not None:
            text += f" and to be no larger size than src {list(src.shape)}"
        raise RuntimeError(text)
    if src is not None and builtins.max(src.ndim, 1) != nd:
        raise RuntimeError("Index tensor must have the same number of dimensions as src tensor")


def _scatter_index(input: Tensor, d: int,  # noqa: A002
                   index: Tensor) -> tuple[Tensor, S.Check | None]:
    """``index`` and the check of its values (run by the node: PyTorch's error for an entry
    outside ``[0, input.size(d))``); an empty one as an int64 index of the right rank and no
    check (PyTorch reads nothing of it, whatever its dtype and rank)."""
    if not index.numel():
        if index.dtype is dtypes.int64 and builtins.max(index.ndim, 1) == builtins.max(
                input.ndim, 1):
            return index, None
        shape = (0,) * builtins.max(input.ndim, 1)
        return Tensor._make(input.backend.zeros(shape, "int64"), input._device), None
    n = input.shape[d] if input.ndim else 1
    return index, lambda b, idx: check_gather_values(b, idx, n, d)


def _number(value: Any) -> bool:
    return isinstance(value, (bool, int, float)) or (
        hasattr(value, "dtype") and not isinstance(value, Tensor) and getattr(value, "ndim", 1)
        == 0)


# ---- scatter, scatter_add, scatter_reduce ---------------------------------------------------

def scatter(input: Tensor, dim: int, index: Tensor, src: Any = None, *,  # noqa: A002
            value: Any = None, reduce: str | None = None, out: Tensor | None = None,
            _method: bool = False) -> Tensor:
    """``input`` with the values of ``src`` (or the number ``value``) written at ``index`` along
    ``dim``: for 2-d tensors and ``dim == 0``, ``out[index[i][j]][j] = src[i][j]``.

    ``index`` (int64 or int32) has ``input``'s number of dimensions and may be smaller than
    ``input`` outside ``dim`` and than ``src`` everywhere (only its positions are written);
    entries lie in ``[0, input.size(dim))`` (negative ones are refused, as in PyTorch).
    Positions written twice take one of the values (which one is unspecified, as in
    PyTorch). ``reduce`` ("add" or "multiply", deprecated in PyTorch for a tensor ``src``)
    combines instead of writing; that form has no gradient, as in PyTorch.

    Args:
        input: tensor of any shape and dtype.
        dim: the dimension to scatter along.
        index: int64/int32 positions along ``dim``.
        src: tensor of ``input``'s dtype, or a number (also accepted as ``value=``).

    Returns:
        Tensor of ``input``'s shape and dtype (ScatterBackward0; ScatterBackward1 for a number).

    Example:
        >>> scatter(zeros(2, 3), 0, tensor([[1, 0, 1]]), ones(2, 3))
        tensor([[0., 1., 0.],
                [1., 0., 1.]])
    """
    arg = value if src is None else src
    args = (dim, index, arg) if _method else (input, dim, index, arg)
    if (not isinstance(input, Tensor) or not isinstance(index, Tensor)
            or isinstance(dim, bool) or not (isinstance(dim, int) or isinstance(dim, Tensor))
            or not (isinstance(arg, Tensor) or _number(arg))
            or (reduce is not None and not isinstance(reduce, str))):
        kwargs = {k: v for k, v in (("reduce", reduce), ("out", out)) if v is not None}
        raise invalid_arguments("scatter", args, kwargs)
    dim = _dim_arg("scatter", dim, bool(_method))
    if out is not None:
        check_out_grad("scatter", (input, arg), out)
    result = _scatter(input, dim, index, arg, reduce)
    return result if out is None else write_out("scatter", result, out, inputs=(input, arg),
                                                exact=(True,))


def _scatter(input: Tensor, dim: int, index: Tensor, arg: Any,  # noqa: A002
             reduce: str | None) -> Tensor:
    _same_device(input, index)
    d = normalize_dim(dim, input.ndim)
    src = arg if isinstance(arg, Tensor) else None
    if src is not None:
        _same_device(input, src)
    check_scatter(input, d, index, src)
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    index, check = _scatter_index(input, d, index)
    op = {None: "set", "add": "sum", "multiply": "prod"}[reduce]
    if src is not None:
        if reduce is not None and "scatter_reduce_arg" not in _WARNED_ONCE:
            _WARNED_ONCE.add("scatter_reduce_arg")  # NOTE: PyTorch's TORCH_WARN_ONCE
            warnings.warn(_LEGACY_WARNING, UserWarning, stacklevel=user_stacklevel())
        return S.Scatter.apply(input, index, src, dim=d, reduce=op,  # type: ignore[no-any-return]
                               name="ScatterBackward0", legacy=reduce is not None, check=check)
    number = checked_scalar(arg, input.dtype)
    return S.ScatterFill.apply(input, index, dim=d, value=number,  # type: ignore[no-any-return]
                               reduce=op, legacy=reduce is not None, check=check)


def scatter_(input: Tensor, dim: int, index: Tensor, src: Any = None, *,  # noqa: A002
             value: Any = None, reduce: str | None = None) -> Tensor:
    """``scatter`` in place (``input.scatter_(dim, index, src)``)."""
    arg = value if src is None else src
    if (not isinstance(index, Tensor) or isinstance(dim, bool)
            or not isinstance(dim, (int, Tensor)) or not (isinstance(arg, Tensor) or _number(arg))):
        kwargs = {"reduce": reduce} if reduce is not None else {}
        raise invalid_arguments("scatter_", (dim, index, arg), kwargs)
    return inplace(input, scatter, dim, index, src, value=value, reduce=reduce,
                   _method=True)


def _scatter_args(fn: str, input: Tensor, dim: Any, index: Any, src: Any,  # noqa: A002
                  method: bool) -> tuple[int, Tensor]:
    """The argument checks of PyTorch's parser for ``(input, dim, index, src)``."""
    return SI._index_args(fn, input, dim, index, src, method, name="src")


def scatter_add(input: Tensor, dim: int, index: Tensor, src: Tensor, *,  # noqa: A002
                out: Tensor | None = None, _method: bool = False) -> Tensor:
    """``input`` with the values of ``src`` added at ``index`` along ``dim``; positions sent
    several values get their sum: for 2-d tensors and ``dim == 0``,
    ``out[index[i][j]][j] += src[i][j]``. Index rules as ``scatter``'s.

    Returns:
        Tensor of ``input``'s shape and dtype (ScatterAddBackward0).

    Example:
        >>> scatter_add(zeros(3), 0, tensor([0, 0, 2]), tensor([1., 2., 3.]))
        tensor([3., 0., 3.])
    """
    d, index = _scatter_args("scatter_add", input, dim, index, src, _method)
    if out is not None:
        check_out_grad("scatter_add", (input, src), out)
    check_scatter(input, d, index, src)
    index, check = _scatter_index(input, d, index)
    result = S.Scatter.apply(input, index, src, dim=d, reduce="sum", name="ScatterAddBackward0",
                             check=check)
    return result if out is None else write_out("scatter_add", result, out, inputs=(input, src),
                                                exact=(True,))


def scatter_add_(input: Tensor, dim: int, index: Tensor, src: Tensor) -> Tensor:  # noqa: A002
    """``scatter_add`` in place."""
    return inplace(input, scatter_add, dim, index, src, _method=True)


def scatter_reduce(input: Tensor, dim: int, index: Tensor, src: Tensor,  # noqa: A002
                   reduce: str, *, include_self: bool = True, out: Tensor | None = None,
                   _method: bool = False) -> Tensor:
    """``input`` with the values of ``src`` reduced into it at ``index`` along ``dim``:
    ``reduce`` is "sum", "prod", "mean", "amax" or "amin"; ``include_self`` says whether
    ``input``'s own value at a position that gets values takes part (positions that get none
    keep theirs). An integer mean rounds down. Index rules as ``scatter``'s.

    Gradients as PyTorch's: amax/amin share the gradient evenly among the values equal to the
    result (``input``'s own counts even when ``include_self`` is False); prod leaves a zero out
    of the product it divides.

    Returns:
        Tensor of ``input``'s shape and dtype (ScatterReduceBackward0).

    Example:
        >>> scatter_reduce(tensor([1., 2.]), 0, tensor([0, 0, 1]), tensor([5., 3., 4.]), "amax")
        tensor([5., 4.])
    """
    d, index = _scatter_args("scatter_reduce", input, dim, index, src, _method)
    if not isinstance(reduce, str):
        raise TypeError(f"scatter_reduce(): argument 'reduce' (position "
                        f"{arg_position(5, _method)}) must be str, not {type(reduce).__name__}")
    if out is not None:
        check_out_grad("scatter_reduce", (input, src), out)
    check_scatter(input, d, index, src)
    # NOTE: PyTorch also takes "max"/"min" for amax/amin, but its backward refuses them.
    op = {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if op not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(_REDUCE_ERROR.format(reduce))
    if op == "mean" and input.dtype is dtypes.bool:
        kernel = "scatter_gather_tensor_cpu_reduce_mean" if index.numel() else "div_floor_cpu"
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")
    index, check = _scatter_index(input, d, index)
    result = S.Scatter.apply(input, index, src, dim=d, reduce=op, name="ScatterReduceBackward0",
                             include_self=bool(include_self),
                             grad_error=None if op == reduce else reduce, check=check)
    return result if out is None else write_out("scatter_reduce", result, out,
                                                inputs=(input, src), exact=(True,))


def scatter_reduce_(input: Tensor, dim: int, index: Tensor, src: Tensor,  # noqa: A002
                    reduce: str, *, include_self: bool = True) -> Tensor:
    """``scatter_reduce`` in place."""
    return inplace(input, scatter_reduce, dim, index, src, reduce, include_self=include_self,
                   _method=True)


# ---- take, put, take_along_dim ---------------------------------------------------------------

def _long_index(fn: str, index: Tensor) -> None:
    if index.dtype is not dtypes.int64:
        raise RuntimeError(f"{fn}(): Expected a long tensor for index, but got "
                           f"{dtypes.scalar_type_name(index.dtype)}")


def _flat_check(n: int) -> S.Check:
    """The check of a ``take``/``put`` index: PyTorch's IndexError for a position outside
    ``[-n, n)``."""
    def check(b: Any, index: Any) -> None:
        bad = b.out_of_range(index, -n, n)
        if bad is not None:
            raise IndexError(f"out of range: tried to access index {bad} on a tensor of {n} "
                             "elements.")

    return check


def take(input: Tensor, index: Tensor, *, out: Tensor | None = None,  # noqa: A002
         _method: bool = False) -> Tensor:
    """``input`` read as a 1-d tensor at ``index``: a result of ``index``'s shape. Positions lie
    in ``[-n, n)`` (``n = input.numel()``); negative ones count from the end.

    Returns:
        Tensor of ``index``'s shape and ``input``'s dtype (TakeBackward0).

    Example:
        >>> take(tensor([[1, 2], [3, 4]]), tensor([0, -1]))
        tensor([1, 4])
    """
    if not _method:
        expect_tensor("take", "input", 1, input)
    expect_tensor("take", "index", arg_position(2, _method), index)
    _same_device(input, index)
    if out is not None:
        check_out_grad("take", (input,), out)
    _long_index("take", index)
    n = input.numel()
    if not n and index.numel():
        raise IndexError("take(): tried to take from an empty tensor")
    if isinstance(out, Tensor) and out.dtype is not input.dtype:
        raise RuntimeError("take(): self and out expected to have the same dtype, but got "
                           f"self.dtype = {dtypes.scalar_type_name(input.dtype)} and "
                           f"out.dtype = {dtypes.scalar_type_name(out.dtype)}")
    result = S.Take.apply(input, index, check=_flat_check(n))
    return result if out is None else write_out("take", result, out, inputs=(input,))


def put(input: Tensor, index: Tensor, source: Tensor, accumulate: bool = False, *,  # noqa: A002
        _method: bool = False) -> Tensor:
    """``input`` read as a 1-d tensor with ``source`` (read flat, as many elements as
    ``index``) written at ``index`` (``accumulate``: added, repeated positions adding up).
    Positions lie in ``[-n, n)``; negative ones count from the end.

    Returns:
        Tensor of ``input``'s shape and dtype (PutBackward0).

    Example:
        >>> put(zeros(2, 2), tensor([0, -1]), tensor([1., 2.]))
        tensor([[1., 0.],
                [0., 2.]])
    """
    if not _method:
        expect_tensor("put", "input", 1, input)
    expect_tensor("put", "index", arg_position(2, _method), index)
    expect_tensor("put", "source", arg_position(3, _method), source)
    _same_device(input, index)
    _same_device(input, source)
    _long_index("put_", index)
    if source.dtype is not input.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {dtypes.scalar_type_name(input.dtype)} and "
                           f"source.dtype = {dtypes.scalar_type_name(source.dtype)}")
    if source.numel() != index.numel():
        raise IndexError("put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, "
                         f"index.numel() = {index.numel()}")
    n = input.numel()
    if not n and index.numel():
        raise IndexError("put_(): Tried to put elements into an empty tensor")
    return S.Scatter.apply(input, index, source, dim=0,  # type: ignore[no-any-return]
                           reduce="sum" if accumulate else "set", name="PutBackward0",
                           flat=True, check=_flat_check(n), wrap_n=n)


def put_(input: Tensor, index: Tensor, source: Tensor,  # noqa: A002
         accumulate: bool = False) -> Tensor:
    """``put`` in place."""
    return inplace(input, put, index, source, accumulate, _method=True)


def take_along_dim(input: Tensor, indices: Tensor, dim: int | None = None, *,  # noqa: A002
                   out: Tensor | None = None, _method: bool = False) -> Tensor:
    """The values of ``input`` at ``indices`` along ``dim``, ``input`` and ``indices``
    broadcast against each other outside ``dim`` (NumPy's ``take_along_axis``); ``dim=None``
    reads both flat (both must be contiguous then, as in PyTorch, which views them).

    NOTE: as PyTorch (2.13) does, an entry along ``dim`` is taken modulo ``input.size(dim)``
    (Python's ``%``: -1 is the last position, and so is ``size - 1 + size``); with
    ``dim=None`` the flat positions must lie in ``[0, numel)``.

    Returns:
        Tensor of the broadcast shape (GatherBackward0).

    Example:
        >>> take_along_dim(tensor([[10, 30, 20]]), tensor([[0, 2]]), 1)
        tensor([[10, 20]])
    """
    fn = "take_along_dim"
    if not _method:
        expect_tensor(fn, "input", 1, input)
    expect_tensor(fn, "indices", arg_position(2, _method), indices)
    _same_device(input, indices)
    if out is not None:
        check_out_grad(fn, (input,), out)
    if dim is None:
        # NOTE: views, as PyTorch's: a non-contiguous input or index is refused (its words)
        result = gather(input.view(-1), 0, indices.view(-1))
    else:
        dim = _dim_arg(fn, dim, _method)
        if indices.dtype is not dtypes.int64:
            raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                               f"{dtypes.scalar_type_name(indices.dtype)}")
        if input.ndim != indices.ndim:
            raise RuntimeError(
                "torch.take_along_dim(): input and indices should have the same number of "
                f"dimensions, but got {input.ndim} dimensions for input, and {indices.ndim} "
                "dimensions for indices")
        if not input.ndim:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = normalize_dim(dim, input.ndim)
        n = input.shape[d]
        shape = list(input.shape)
        shape[d] = indices.shape[d]
        shape = list(_broadcast_shapes(shape, indices.shape))
        idx = indices.expand(shape)
        shape[d] = n
        result = gather(input.expand(shape), d, idx.remainder(n))
    return result if out is None else write_out(fn, result, out, inputs=(input,),
                                                exact=(True,))


# ---- Tensor methods --------------------------------------------------------------------------

TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "scatter": _method(scatter), "scatter_": scatter_,
    "scatter_add": _method(scatter_add), "scatter_add_": scatter_add_,
    "scatter_reduce": _method(scatter_reduce), "scatter_reduce_": scatter_reduce_,
    "take": _method(take), "put": _method(put), "put_": put_,
    "take_along_dim": _method(take_along_dim),
    **SI.TENSOR_METHODS, **SP.TENSOR_METHODS,
}
