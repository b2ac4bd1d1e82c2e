"""The sort family's searching and counting half: unique, unique_consecutive, searchsorted,
bucketize, histc, bincount, count_nonzero, isin. Registered through ``functions/sort.py``'s
``__all__`` and ``TENSOR_METHODS``. None of them has a gradient; ``unique`` and ``bincount``
with weights record PyTorch's node that refuses backward, as PyTorch does."""

from __future__ import annotations

import math
from typing import Any, Callable

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..dtypes import c_type_name, scalar_type_name
from ..ops import sort as S
from ..ops.util import normalize_dim, normalize_dims
from ..tensor import Tensor


def _not_implemented(kernel: str, d: dtypes.dtype) -> NotImplementedError:
    return NotImplementedError(f'"{kernel}" not implemented for \'{scalar_type_name(d)}\'')


def _compute(fn: Callable[..., Any], *inputs: Any) -> Any:
    with no_grad():
        return S.Compute.apply(*inputs, fn=fn)


def _write(fn: str, result: Tensor, out: Any, inputs: tuple[Any, ...], exact: bool) -> Any:
    if out is None:
        return result
    from .out import write_out

    return write_out(fn, result, out, inputs=inputs, exact=(exact,))


# ---- unique --------------------------------------------------------------------------------------

def unique(input: Tensor, sorted: bool = True, return_inverse: bool = False,  # noqa: A002
           return_counts: bool = False, dim: int | None = None) -> Any:
    """The distinct elements (``dim``: distinct slices along ``dim``) in ascending order, with
    optionally the index of each input element's value among them (``inverse``) and how often
    each occurs (``counts``). NaNs are never equal, so each stays apart, as in PyTorch. Always
    sorted (PyTorch's CPU sorts with ``sorted=False`` too).

    Example:
        >>> unique(tensor([3, 1, 3]), return_counts=True)
        (tensor([1, 3]), tensor([1, 2]))
    """
    return _unique(input, True, return_inverse, return_counts, dim,
                   "UniqueDimBackward0" if dim is not None else "Unique2Backward0",
                   "unique_dim" if dim is not None else "_unique2")


def unique_consecutive(input: Tensor, return_inverse: bool = False,  # noqa: A002
                       return_counts: bool = False, dim: int | None = None) -> Any:
    """``unique`` merging only runs of equal consecutive elements (or slices), in input order.

    Example:
        >>> unique_consecutive(tensor([1, 1, 2, 1]))
        tensor([1, 2, 1])
    """
    return _unique(input, False, return_inverse, return_counts, dim,
                   "UniqueConsecutiveBackward0", "unique_consecutive")


def _unique(input: Tensor, sort: bool, return_inverse: bool, return_counts: bool,  # noqa: A002
            dim: Any, node_name: str, op: str) -> Any:
    if input.dtype.is_complex:
        raise NotImplementedError(f"\"{'unique' if dim is None else 'unique_dim'}\" not "
                                  f"implemented for '{dtypes.scalar_type_name(input.dtype)}'")
    if dim is None:
        def fn(b: Any, x: Any) -> Any:
            flat = x.reshape(-1)
            first, inverse, counts = b.unique_rows(flat.reshape(-1, 1), sort)
            return flat[first], inverse.reshape(x.shape), counts
    else:
        if input.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        d = normalize_dim(dim, input.ndim)
        if input.numel() == 0 and input.shape[d] != 0:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")

        def fn(b: Any, x: Any) -> Any:
            rest = 1
            for i, s in enumerate(x.shape):
                rest *= 1 if i == d else s
            rows = b.xp.moveaxis(x, d, 0).reshape(x.shape[d], rest)
            first, inverse, counts = b.unique_rows(rows, sort)
            return b.c_contiguous(b.xp.take(x, first, axis=d)), inverse, counts

    values, inverse, counts = S.NoDerivative.apply(
        input, fn=fn, name=node_name, error=NotImplementedError,
        message=f"the derivative for '{op}' is not implemented.")
    if not return_inverse and not return_counts:
        return values
    return (values,) + ((inverse,) if return_inverse else ()) + ((counts,) if return_counts else ())


# ---- searching -----------------------------------------------------------------------------------

def _as_tensor(value: Any, like: Tensor) -> Tensor:
    """A Python number as a 0-d tensor on ``like``'s device (PyTorch's Scalar overloads)."""
    from ..creation import tensor

    return value if isinstance(value, Tensor) else tensor(value, device=like.device)


def _common(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """``a`` and ``b`` cast to their promoted dtype (searchsorted and isin compare in it)."""
    d = dtypes.promote_types(a.dtype, b.dtype)
    return (a if a.dtype is d else a.to(d)), (b if b.dtype is d else b.to(d))


def _shape_text(t: Tensor) -> str:
    return f"[{', '.join(map(str, t.shape))}]"


def searchsorted(sorted_sequence: Tensor, input: Any, *, out_int32: bool = False,  # noqa: A002
                 right: bool = False, side: str | None = None, sorter: Tensor | None = None,
                 out: Tensor | None = None) -> Tensor:
    """For each value of ``input``, the index where it would go in ``sorted_sequence``'s last
    dimension to keep it sorted: before equal elements, or after them with ``right=True`` /
    ``side="right"``. ``sorted_sequence`` is 1-D, or shares all but its last dimension with
    ``input``; ``sorter`` (int64) sorts an unsorted sequence. NaN compares as PyTorch's
    bisection does (past everything). int64 indices (int32 with ``out_int32``).

    Example:
        >>> searchsorted(tensor([1, 3, 5]), tensor([3, 6]))
        tensor([1, 3])
    """
    fn = "torch.searchsorted()"
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{fn}: side can only be 'left' or 'right' but got {side}")
        if side == "left" and right:
            raise RuntimeError(f"{fn}: side and right can't be set to opposites, got side of "
                               "left while right was True")
        right = side == "right"
    seq = sorted_sequence
    values = _as_tensor(input, seq)
    if seq.ndim == 0:
        raise RuntimeError(f"{fn}: boundaries tensor should have positive dimension, but got 0 "
                           "dimension")
    if seq.ndim != 1 and (values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]):
        raise RuntimeError(f"{fn}: boundaries tensor should be 1 dimension or the first N-1 "
                           "dimensions of boundaries tensor and input value tensor must match, "
                           f"but we got boundaries tensor {_shape_text(seq)} and input value "
                           f"tensor {_shape_text(values)}")
    if sorter is not None:
        if sorter.dtype is not dtypes.int64:
            raise RuntimeError(f"{fn}: sorter must be a tensor of long dtype but got dtype "
                               f"{scalar_type_name(sorter.dtype)}")
        if sorter.shape != seq.shape:
            raise RuntimeError(f"{fn}: boundary and sorter must have the same size, but got "
                               f"boundary tensor {_shape_text(seq)}and got sorter tensor "
                               f"{_shape_text(sorter)}")
        if sorter.numel() and not bool(((sorter >= 0) & (sorter < seq.shape[-1])).all()):
            raise RuntimeError(f"{fn}: sorter index out of range")
    if out is not None and isinstance(out, Tensor):
        want = dtypes.int32 if out_int32 else dtypes.int64
        if out.dtype is not want:
            raise RuntimeError(f"{fn}: output tensor's dtype is wrong, it can only be Int(int32) "
                               "or Long(int64) depending on whether out_int32 flag is True, but "
                               f"we got output tensor's dtype {scalar_type_name(out.dtype)} and "
                               f"out_int32 flag is {bool(out_int32)}")
    return _search(seq, values, bool(right), sorter, out_int32, "searchsorted_out_cpu", out)


def _search(seq: Tensor, values: Tensor, right: bool, sorter: Tensor | None, out_int32: bool,
            kernel: str, out: Any) -> Tensor:
    if dtypes.bool in (seq.dtype, values.dtype):
        raise _not_implemented(kernel, dtypes.bool)
    seq, values = _common(seq, values)
    name = "int32" if out_int32 else "int64"

    def fn(b: Any, s: Any, v: Any, *rest: Any) -> Any:
        idx = b.searchsorted_rows(s, v, right, rest[0] if rest else None)
        return b.c_contiguous(idx.astype(name, copy=False))

    result = _compute(fn, seq, values, *(() if sorter is None else (sorter,)))
    return _write("searchsorted", result, out, (), True)  # type: ignore[no-any-return]


def bucketize(input: Any, boundaries: Tensor, *, out_int32: bool = False,  # noqa: A002
              right: bool = False, out: Tensor | None = None) -> Tensor:
    """The bucket of each of ``input``'s values among the sorted 1-D ``boundaries``:
    ``searchsorted(boundaries, input, right=right)``."""
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim({boundaries.ndim})")
    values = _as_tensor(input, boundaries)
    return _search(boundaries, values, bool(right), None, out_int32, "bucketize_cpu", out)


def isin(elements: Any, test_elements: Any, *, assume_unique: bool = False,
         invert: bool = False, out: Tensor | None = None) -> Tensor:
    """Whether each of ``elements`` is among ``test_elements`` (either may be a number);
    compared in their promoted dtype; NaN is in nothing. ``invert``: whether it is not.
    ``assume_unique`` is accepted (the result is exact either way)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        from .checks import invalid_arguments

        raise invalid_arguments("isin", (elements, test_elements), {})
    like = elements if isinstance(elements, Tensor) else test_elements
    a, t = _as_tensor(elements, like), _as_tensor(test_elements, like)
    for x in (a, t):
        if x.dtype is dtypes.bool:
            raise RuntimeError("Unsupported input type encountered for isin(): Bool")
    a, t = _common(a, t)
    result = _compute(lambda b, x, y: b.c_contiguous(b.isin(x, y, invert=bool(invert))), a, t)
    return _write("isin", result, out, (), True)  # type: ignore[no-any-return]


# ---- counting ------------------------------------------------------------------------------------

def _edge_text(v: float) -> str:
    """A double as C++'s ostream prints it (``%g``: ``1``, ``2.5``, ``inf``, ``nan``)."""
    if math.isnan(v):
        return "-nan" if math.copysign(1.0, v) < 0 else "nan"
    return f"{v:g}"


def histc(input: Tensor, bins: int = 100, min: float = 0, max: float = 0, *,  # noqa: A002
          out: Tensor | None = None) -> Tensor:
    """A histogram of ``bins`` equal-width bins over ``[min, max]`` (the data's range when
    ``min == max``; widened by 1 each way when that is a single value). Elements outside the
    range and NaNs are not counted; ``max`` falls in the last bin. Float inputs only; the
    counts have ``input``'s dtype and no gradient.

    Example:
        >>> histc(tensor([1., 2., 1.]), bins=4, min=0, max=3)
        tensor([0., 2., 1., 0.])
    """
    if not input.dtype.is_floating_point:
        raise _not_implemented("histogram_cpu", input.dtype)
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension 0")
    lo, hi = float(min), float(max)
    if lo == hi and input.numel():
        with no_grad():
            lo, hi = float(input.min().item()), float(input.max().item())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if math.isinf(lo) or math.isinf(hi) or math.isnan(lo) or math.isnan(hi):
        raise RuntimeError(f"torch.histc: range of [{_edge_text(lo)}, {_edge_text(hi)}] is not "
                           "finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    if out is not None and isinstance(out, Tensor) and out.dtype is not input.dtype:
        raise RuntimeError("torch.histogram: input tensor and hist tensor should have the same "
                           f"dtype, but got input {c_type_name(input.dtype)} and hist "
                           f"{c_type_name(out.dtype)}")
    result = _compute(lambda b, x: b.histc(x, int(bins), lo, hi), input)
    return _write("histc", result, out, (), False)  # type: ignore[no-any-return]


def bincount(input: Tensor, weights: Tensor | None = None, minlength: int = 0) -> Tensor:  # noqa: A002
    """How often each value ``0 .. max(input)`` occurs in the non-negative integer 1-D
    ``input`` (at least ``minlength`` counts), int64; with ``weights``, their sums per value
    (float32 for float32 weights, else float64).

    Example:
        >>> bincount(tensor([1, 3, 1]))
        tensor([0, 2, 0, 1])
    """
    if input.dtype.is_floating_point or input.dtype is dtypes.bool:
        raise _not_implemented("bincount_cpu", input.dtype)
    # NOTE: the sign compared as a tensor, one bool read back (a compiled step's guard holds
    # from batch to batch, where the least value changes)
    if input.ndim != 1 or (input.numel() and bool(input._data.min() < 0)):
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if weights is None:
        return _compute(lambda b, x: b.bincount(x, None, minlength), input)  # type: ignore[no-any-return]
    name = "float32" if weights.dtype is dtypes.float32 else "float64"

    def fn(b: Any, x: Any, w: Any) -> Any:
        return b.bincount(x, w, minlength).astype(name, copy=False)

    return S.NoDerivative.apply(  # type: ignore[no-any-return]
        input, weights, fn=fn, name="torch::autograd::NotImplemented", error=RuntimeError,
        message="derivative for aten::bincount is not implemented")


def count_nonzero(input: Tensor, dim: Any = None) -> Tensor:  # noqa: A002
    """The number of nonzero elements (NaN counts) over ``dim`` (an int or a tuple; all when
    None), int64."""
    dims = normalize_dims(dim, input.ndim)
    return _compute(lambda b, x: b.count_nonzero(x, dims), input)  # type: ignore[no-any-return]


def _count_nonzero_method(self: Tensor, *dims: Any, dim: Any = None) -> Tensor:
    if len(dims) == 1:
        return count_nonzero(self, dims[0])
    return count_nonzero(self, dims if dims else dim)


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "unique": unique,
    "unique_consecutive": unique_consecutive,
    "bincount": bincount,
    "histc": histc,
    "count_nonzero": _count_nonzero_method,
}
