"""Sorting and searching: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, and
(from ``sort_search``) unique, unique_consecutive, searchsorted, bucketize, histc, bincount,
count_nonzero, isin.

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.

Every sort is stable: among equal values (and among NaNs) the first occurrence comes first,
descending too. So where PyTorch leaves the order of ties to its algorithm (``stable=False``,
``topk``, ``kthvalue``, ``median`` with a dim), the result is one PyTorch may give (the one
its CPU kernels give on short inputs), always the same one.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import dtypes, return_types
from ..autograd.grad_mode import no_grad
from ..dtypes import scalar_type_name
from ..ops import sort as S
from ..ops.util import normalize_dim
from ..tensor import Tensor
from . import sort_hist, sort_search
from .sort_hist import histogram, histogramdd
from .sort_search import (
    bincount, bucketize, count_nonzero, histc, isin, searchsorted, unique, unique_consecutive,
)

__all__: list[str] = [
    "argsort", "bincount", "bucketize", "count_nonzero", "histc", "histogram", "histogramdd",
    "isin", "kthvalue", "median",
    "mode", "msort", "nanmedian", "searchsorted", "sort", "topk", "unique", "unique_consecutive",
]


def _not_implemented(kernel: str, d: dtypes.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(d)}\'')


def _int_arg(fn: str, name: str, position: int, value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{name}' (position {position}) must be int, not "
                        f"{type(value).__name__}")
    return value


def _out(fn: str, input: Tensor, out: Any, run: Callable[[], Any],  # noqa: A002
         check: Callable[[Any], None] | None = None) -> Any:
    """``run()`` or, with ``out``, its (values, indices) written into ``out``."""
    if out is None:
        return run()
    from .checks import invalid_arguments
    from .out import check_out_grad, write_out

    if not isinstance(out, (tuple, list)):
        raise invalid_arguments(fn, (input,), {"out": out})
    check_out_grad(fn, (input,), out)
    if check is not None and isinstance(out, (tuple, list)) and len(out) == 2:
        check(out)
    return write_out(fn, run(), out, exact=(True, True))


# ---- sorting -------------------------------------------------------------------------------------

def sort(input: Tensor, dim: int = -1, descending: bool = False, *,  # noqa: A002
         stable: bool | None = None, out: Any = None) -> Any:
    """Sort along ``dim``: ``(values, indices)`` with ``values == input.gather(dim, indices)``.

    Stable whatever ``stable`` says (it only names the node ``SortBackward1``, as PyTorch);
    NaN sorts last ascending and first descending. The gradient goes back to the indices.

    Args:
        input: tensor of any shape and dtype (bool too).
        dim: the dimension to sort.
        descending: largest first.
        stable: keep equal elements in their order (always done here).
        out: optional ``(values, indices)`` tensors to write into.

    Returns:
        ``torch.return_types.sort(values, indices)``, laid out like ``input``.

    Example:
        >>> sort(tensor([3., 1., 2.]))
        torch.return_types.sort(
        values=tensor([1., 2., 3.]),
        indices=tensor([1, 2, 0]))
    """
    d = normalize_dim(dim, input.ndim)
    _no_complex_sort("Sort", input)

    def run() -> Any:
        return return_types.sort(S.Sort.apply(input, dim=d, descending=bool(descending),
                                              stable=bool(stable)))

    return _out("sort", input, out, run)


def _no_complex_sort(what: str, input: Tensor) -> None:  # noqa: A002
    if input.dtype.is_complex:
        dev = "CPU" if input._device.type == "cpu" else "CUDA"
        raise RuntimeError(f" {what} does not support complex dtypes on {dev}")


def argsort(input: Tensor, dim: int = -1, descending: bool = False, *,  # noqa: A002
            stable: bool = False) -> Tensor:
    """The indices ``sort`` returns (stable, NaN last ascending)."""
    d = normalize_dim(dim, input.ndim)
    _no_complex_sort("Sort", input)
    with no_grad():
        return S.Compute.apply(  # type: ignore[no-any-return]
            input, fn=lambda b, x: b.sort_along(x, d, bool(descending))[1])


def msort(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """``sort(input, 0).values``: sorted along the first dimension."""
    if out is None:
        return sort(input, 0).values  # type: ignore[no-any-return]
    from .out import check_out_grad, write_out

    check_out_grad("msort", (input,), out)
    return write_out("msort", sort(input, 0).values, out, exact=(True,))  # type: ignore[no-any-return]


# ---- selection -----------------------------------------------------------------------------------

def topk(input: Tensor, k: int, dim: int = -1, largest: bool = True,  # noqa: A002
         sorted: bool = True, *, out: Any = None) -> Any:  # noqa: A002
    """The ``k`` largest (``largest=False``: smallest) elements along ``dim`` and their indices.

    Always sorted (``sorted=False`` lets PyTorch return any order; this is one). NaN counts
    as larger than any number; equal values come in order of position. The gradient goes to
    the indices.

    Example:
        >>> topk(tensor([1., 4., 2., 4.]), 2)
        torch.return_types.topk(
        values=tensor([4., 4.]),
        indices=tensor([1, 3]))
    """
    k = _int_arg("topk", "k", 2, k)
    d = normalize_dim(dim, input.ndim)
    if input.dtype is dtypes.bool:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    _no_complex_sort("topk", input)
    size = input.shape[d] if input.ndim else 1
    if not 0 <= k <= size:
        raise RuntimeError("selected index k out of range")

    def run() -> Any:
        return return_types.topk(S.TopK.apply(input, k=k, dim=d, largest=bool(largest)))

    return _out("topk", input, out, run)


def _nonempty_dim(fn: str, input: Tensor, d: int) -> None:  # noqa: A002
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{fn}(): Expected reduction dim {d} to have non-zero size.")


def kthvalue(input: Tensor, k: int, dim: int = -1, keepdim: bool = False, *,  # noqa: A002
             out: Any = None) -> Any:
    """The ``k``-th smallest element along ``dim`` (``k`` from 1) and its index; NaN is larger
    than any number. The gradient goes to the index."""
    k = _int_arg("kthvalue", "k", 2, k)
    d = normalize_dim(dim, input.ndim)
    if input.dtype is dtypes.bool or input.dtype.is_complex:
        raise _not_implemented("kthvalue_cpu", input.dtype)
    _nonempty_dim("kthvalue", input, d)
    size = input.shape[d] if input.ndim else 1
    if not 1 <= k <= size:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")

    def check(out: Any) -> None:
        if isinstance(out[0], Tensor) and out[0].dtype is not input.dtype:
            raise RuntimeError("output values must be of same type as input")
        if isinstance(out[1], Tensor) and out[1].dtype is not dtypes.int64:
            raise RuntimeError("output indices must be of scalar type Long")

    def run() -> Any:
        return return_types.kthvalue(S.SelectDim.apply(input, dim=d, keepdim=bool(keepdim),
                                                       which="kth", k=k))

    return _out("kthvalue", input, out, run, check)


def median(input: Tensor, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
           out: Any = None) -> Any:
    """The lower median (the ``(n - 1) // 2``-th smallest) of all elements, NaN if any is NaN;
    with ``dim``, per slice with its index (the first NaN's where a slice has one).

    Without ``dim`` the gradient is shared among the elements equal to the median, as in
    PyTorch; with ``dim`` it goes to the index.

    Example:
        >>> median(tensor([4., 1., 3., 2.]))
        tensor(2.)
    """
    return _median("median", input, dim, keepdim, out)


def nanmedian(input: Tensor, dim: int | None = None, keepdim: bool = False, *,  # noqa: A002
              out: Any = None) -> Any:
    """``median`` ignoring NaNs (NaN only where every element is NaN)."""
    return _median("nanmedian", input, dim, keepdim, out)


def _median(fn: str, input: Tensor, dim: Any, keepdim: bool, out: Any) -> Any:  # noqa: A002
    ignore_nan = fn == "nanmedian"
    if input.dtype.is_complex:
        raise _not_implemented("median_cpu" if dim is None else "median_out", input.dtype)
    if dim is None:
        if input.dtype is dtypes.bool:
            raise _not_implemented("median_cpu", input.dtype)
        if out is not None:
            raise TypeError(f'{fn}() missing 1 required positional arguments: "dim"')
        if input.numel() == 0 and not input.dtype.is_floating_point:
            lo, _ = dtypes.int_bounds(input.dtype)  # NOTE: PyTorch's NaN cast to an integer
            return Tensor._make(input.backend.full((), lo, input.dtype.name), input._device)
        return S.MedianAll.apply(input, ignore_nan=ignore_nan)
    d = normalize_dim(dim, input.ndim)
    if input.dtype is dtypes.bool:
        raise _not_implemented(f"{fn}_out" if fn == "median" else "median_out", input.dtype)
    _nonempty_dim(fn, input, d)
    rtype = return_types.nanmedian if ignore_nan else return_types.median

    def check(out: Any) -> None:
        v, i = out
        if isinstance(v, Tensor) and v.dtype is not input.dtype:
            raise RuntimeError(
                "Expected tensor for 'values' to have the same type as tensor for argument #2 "
                f"'self'; but type {_tensor_type(v)} does not equal {_tensor_type(input)} "
                "(while checking arguments for median)")
        if isinstance(i, Tensor) and i.dtype is not dtypes.int64:
            raise RuntimeError(
                "Expected tensor for argument #1 'indices' to have scalar type Long; but got "
                f"{_tensor_type(i)} instead (while checking arguments for median)")

    def run() -> Any:
        return rtype(S.SelectDim.apply(input, dim=d, keepdim=bool(keepdim), which=fn))

    return _out(fn, input, out, run, check)


def _tensor_type(t: Tensor) -> str:
    prefix = "torch.cuda." if t.device.type == "cuda" else "torch."
    return f"{prefix}{scalar_type_name(t.dtype)}Tensor"


def mode(input: Tensor, dim: int = -1, keepdim: bool = False, *,  # noqa: A002
         out: Any = None) -> Any:
    """The most frequent value along ``dim`` and the index of its last occurrence; among equally
    frequent values the smallest (each NaN counts alone). The gradient goes to the index.

    Example:
        >>> mode(tensor([3., 1., 3., 1., 2.]))
        torch.return_types.mode(
        values=tensor(1.),
        indices=tensor(3))
    """
    d = normalize_dim(dim, input.ndim)
    _nonempty_dim("mode", input, d)

    def check(out: Any) -> None:
        for t, want, what in ((out[0], input.dtype, "values"), (out[1], dtypes.int64, "indices")):
            if isinstance(t, Tensor) and t.dtype is not want:
                raise RuntimeError(f"expected scalar type '{scalar_type_name(want)}' but got "
                                   f"'{scalar_type_name(t.dtype)}' for {what} output")

    def run() -> Any:
        return return_types.mode(S.SelectDim.apply(input, dim=d, keepdim=bool(keepdim),
                                                   which="mode"))

    return _out("mode", input, out, run, check)


# ---- Tensor methods ------------------------------------------------------------------------------

def _sort_method(self: Tensor, dim: int = -1, descending: bool = False, *,
                 stable: bool | None = None) -> Any:
    return sort(self, dim, descending, stable=stable)


def _argsort_method(self: Tensor, dim: int = -1, descending: bool = False, *,
                    stable: bool = False) -> Tensor:
    return argsort(self, dim, descending, stable=stable)


def _topk_method(self: Tensor, k: int, dim: int = -1, largest: bool = True,
                 sorted: bool = True) -> Any:  # noqa: A002
    return topk(self, k, dim, largest, sorted)


def _kthvalue_method(self: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Any:
    return kthvalue(self, k, dim, keepdim)


def _median_method(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    return median(self, dim, keepdim)


def _nanmedian_method(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
    return nanmedian(self, dim, keepdim)


def _mode_method(self: Tensor, dim: int = -1, keepdim: bool = False) -> Any:
    return mode(self, dim, keepdim)


def _msort_method(self: Tensor) -> Tensor:
    return msort(self)


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "sort": _sort_method,
    "argsort": _argsort_method,
    "msort": _msort_method,
    "topk": _topk_method,
    "kthvalue": _kthvalue_method,
    "median": _median_method,
    "nanmedian": _nanmedian_method,
    "mode": _mode_method,
    **sort_search.TENSOR_METHODS,
    **sort_hist.TENSOR_METHODS,
}
