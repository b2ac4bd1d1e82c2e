"""Misuse catalogue: the sort family (sort, argsort, msort, topk, kthvalue, median, nanmedian,
mode, unique, unique_consecutive, searchsorted, bucketize, histc, bincount, count_nonzero,
isin): PyTorch's exception type and first sentence for bad dims, k, dtypes, shapes, ``out=``
tensors and ``side``/``sorter`` arguments, and the values of the legal corner cases next to
them (0-d and empty inputs, k = 0, scalars)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import catch
from tests.misuse._catalogue import Case, catalogue_test


def _x(T: Any, dev: str, dtype: str = "float32", grad: bool = False) -> Any:
    return T.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], dtype=getattr(T, dtype),
                    device=dev).requires_grad_(grad)


def _v(T: Any, dev: str, data: Any, dtype: str | None = None) -> Any:
    return T.tensor(data, device=dev, dtype=None if dtype is None else getattr(T, dtype))


def _z(T: Any, dev: str, *shape: int, dtype: str = "float32") -> Any:
    return T.zeros(*shape, dtype=getattr(T, dtype), device=dev)


SORT: dict[str, Case] = {
    "sort_dim_out_of_range": lambda T, d: T.sort(_x(T, d), 2),
    "sort_0d_dim1": lambda T, d: T.sort(_v(T, d, 3.0), 1),
    "sort_0d": lambda T, d: T.sort(_v(T, d, 3.0)),
    "sort_empty": lambda T, d: T.sort(_z(T, d, 0, 3), 0),
    "sort_bool": lambda T, d: T.sort(_v(T, d, [True, False, True])),
    "sort_out_values_dtype": lambda T, d: T.sort(_x(T, d, "int64"), out=(
        _z(T, d, 2, 3), _z(T, d, 2, 3, dtype="int64"))),
    "sort_out_indices_dtype": lambda T, d: T.sort(_x(T, d), out=(
        _z(T, d, 2, 3), _z(T, d, 2, 3, dtype="int32"))),
    "sort_out_requires_grad": lambda T, d: T.sort(_x(T, d, grad=True), out=(
        _z(T, d, 2, 3), _z(T, d, 2, 3, dtype="int64"))),
    "sort_out_not_tuple": lambda T, d: T.sort(_x(T, d), out=_z(T, d, 2, 3)),
    "argsort_bool": lambda T, d: T.argsort(_v(T, d, [True, False])),
    "argsort_dim": lambda T, d: T.argsort(_x(T, d), -3),
    "msort_0d": lambda T, d: T.msort(_v(T, d, 3.0)),
    "msort_out_dtype": lambda T, d: T.msort(_x(T, d, "int64"), out=_z(T, d, 2, 3)),
    "msort_out_ok": lambda T, d: T.msort(_x(T, d, "int64"), out=_z(T, d, 2, 3, dtype="int64")),
}

SELECT: dict[str, Case] = {
    "topk_k_too_large": lambda T, d: T.topk(_x(T, d), 4),
    "topk_k_negative": lambda T, d: T.topk(_x(T, d), -1),
    "topk_k_zero": lambda T, d: T.topk(_x(T, d), 0),
    "topk_k_float": lambda T, d: T.topk(_x(T, d), 1.5),
    "topk_0d": lambda T, d: T.topk(_v(T, d, 1.0), 1),
    "topk_0d_k0": lambda T, d: T.topk(_v(T, d, 1.0), 0),
    "topk_0d_k2": lambda T, d: T.topk(_v(T, d, 1.0), 2),
    "topk_bool": lambda T, d: T.topk(_v(T, d, [True, False]), 1),
    "topk_dim": lambda T, d: T.topk(_x(T, d), 1, dim=2),
    "topk_empty_rows": lambda T, d: T.topk(_z(T, d, 0, 3), 2),
    "topk_empty_dim": lambda T, d: T.topk(_z(T, d, 0, 3), 2, dim=0),
    "topk_out_dtype": lambda T, d: T.topk(_x(T, d, "int64"), 2, out=(
        _z(T, d, 2, 2), _z(T, d, 2, 2, dtype="int64"))),
    "kthvalue_k_too_large": lambda T, d: T.kthvalue(_x(T, d), 4),
    "kthvalue_k_zero": lambda T, d: T.kthvalue(_x(T, d), 0),
    "kthvalue_k_dim0": lambda T, d: T.kthvalue(_x(T, d), 3, 0),
    "kthvalue_k_float": lambda T, d: T.kthvalue(_x(T, d), 1.5),
    "kthvalue_bool": lambda T, d: T.kthvalue(_v(T, d, [True, False]), 1),
    "kthvalue_0d": lambda T, d: T.kthvalue(_v(T, d, 1.0), 1, keepdim=True),
    "kthvalue_empty": lambda T, d: T.kthvalue(_z(T, d, 0), 1),
    "kthvalue_empty_rows": lambda T, d: T.kthvalue(_z(T, d, 0, 2), 1),
    "kthvalue_empty_dim0": lambda T, d: T.kthvalue(_z(T, d, 0, 2), 1, 0),
    "kthvalue_out_values": lambda T, d: T.kthvalue(_x(T, d, "int64"), 2, out=(
        _z(T, d, 2), _z(T, d, 2, dtype="int64"))),
    "kthvalue_out_indices": lambda T, d: T.kthvalue(_x(T, d), 2, out=(
        _z(T, d, 2), _z(T, d, 2, dtype="int32"))),
    "median_empty": lambda T, d: T.median(_z(T, d, 0)),
    "median_empty_dim": lambda T, d: T.median(_z(T, d, 0, 2), 0),
    "median_empty_rows": lambda T, d: T.median(_z(T, d, 0, 2), 1),
    "median_bool": lambda T, d: T.median(_v(T, d, [True, False])),
    "median_bool_dim": lambda T, d: T.median(_v(T, d, [True, False]), 0),
    "median_int": lambda T, d: T.median(_v(T, d, [3, 1, 2])),
    "median_0d_dim": lambda T, d: T.median(_v(T, d, 3.0), 0),
    "median_dim_out_of_range": lambda T, d: T.median(_x(T, d), 2),
    "median_out_no_dim": lambda T, d: T.median(_x(T, d), out=_z(T, d, 1)),
    "nanmedian_empty": lambda T, d: T.nanmedian(_z(T, d, 0)),
    "nanmedian_int": lambda T, d: T.nanmedian(_v(T, d, [1, 2, 3])),
    "nanmedian_bool": lambda T, d: T.nanmedian(_v(T, d, [True])),
    "mode_empty": lambda T, d: T.mode(_z(T, d, 0)),
    "mode_empty_dim": lambda T, d: T.mode(_z(T, d, 0, 2), 0),
    "mode_empty_rows": lambda T, d: T.mode(_z(T, d, 0, 2), 1),
    "mode_0d": lambda T, d: T.mode(_v(T, d, 3.0)),
    "mode_bool": lambda T, d: T.mode(_v(T, d, [True, False, False])),
    "mode_out_values": lambda T, d: T.mode(_x(T, d, "int64"), 0, out=(
        _z(T, d, 3), _z(T, d, 3, dtype="int64"))),
    "mode_out_indices": lambda T, d: T.mode(_x(T, d, "int64"), 0, out=(
        _z(T, d, 3, dtype="int64"), _z(T, d, 3, dtype="int32"))),
}

UNIQUE: dict[str, Case] = {
    "unique_dim_out_of_range": lambda T, d: T.unique(_x(T, d), dim=2),
    "unique_0d_dim": lambda T, d: T.unique(_v(T, d, 3), dim=0),
    "unique_0d": lambda T, d: T.unique(_v(T, d, 5), return_inverse=True),
    "unique_consecutive_0d": lambda T, d: T.unique_consecutive(_v(T, d, 3), return_inverse=True),
    "unique_consecutive_0d_dim": lambda T, d: T.unique_consecutive(_v(T, d, 3), dim=0),
    "unique_zero_size_other_dim": lambda T, d: T.unique(_z(T, d, 2, 0), dim=0),
    "unique_consecutive_zero_size": lambda T, d: T.unique_consecutive(_z(T, d, 2, 0), dim=0),
    "unique_bool_dim": lambda T, d: T.unique(_v(T, d, [True, False, True]), dim=0,
                                            return_inverse=True),
}

SEARCH: dict[str, Case] = {
    "searchsorted_side_bad": lambda T, d: T.searchsorted(_v(T, d, [1, 3]), _v(T, d, [2]),
                                                         side="middle"),
    "searchsorted_side_opposite": lambda T, d: T.searchsorted(
        _v(T, d, [1, 3]), _v(T, d, [2]), side="left", right=True),
    "searchsorted_side_right_right": lambda T, d: T.searchsorted(
        _v(T, d, [1, 3]), _v(T, d, [3]), side="right", right=True),
    "searchsorted_0d_boundaries": lambda T, d: T.searchsorted(_v(T, d, 1), _v(T, d, [2])),
    "searchsorted_shape_mismatch": lambda T, d: T.searchsorted(_v(T, d, [[1, 3]]), _v(T, d, [2])),
    "searchsorted_shape_mismatch_rows": lambda T, d: T.searchsorted(
        _v(T, d, [[1, 3], [2, 4]]), _v(T, d, [[2], [3], [4]])),
    "searchsorted_sorter_size": lambda T, d: T.searchsorted(
        _v(T, d, [1, 3]), _v(T, d, [2]), sorter=_v(T, d, [0])),
    "searchsorted_sorter_range": lambda T, d: T.searchsorted(
        _v(T, d, [1, 3]), _v(T, d, [2]), sorter=_v(T, d, [0, 5])),
    "searchsorted_sorter_float": lambda T, d: T.searchsorted(
        _v(T, d, [1, 3]), _v(T, d, [2]), sorter=_v(T, d, [0.0, 1.0])),
    "searchsorted_bool": lambda T, d: T.searchsorted(_v(T, d, [True, False]), _v(T, d, [True])),
    "searchsorted_out_int32_flag": lambda T, d: T.searchsorted(
        _v(T, d, [1, 3]), _v(T, d, [2]), out=_z(T, d, 1, dtype="int32")),
    "searchsorted_out_float": lambda T, d: T.searchsorted(
        _v(T, d, [1, 3]), _v(T, d, [2]), out=_z(T, d, 1)),
    "searchsorted_out_long_int32": lambda T, d: T.searchsorted(
        _v(T, d, [1, 3]), _v(T, d, [2]), out_int32=True, out=_z(T, d, 1, dtype="int64")),
    "searchsorted_scalar": lambda T, d: T.searchsorted(_v(T, d, [1, 3]), 2.5),
    "searchsorted_scalar_int32": lambda T, d: T.searchsorted(_v(T, d, [1.0, 3.0]), 3.0,
                                                             out_int32=True),
    "searchsorted_empty": lambda T, d: T.searchsorted(_v(T, d, []), _v(T, d, [2.0])),
    "bucketize_2d": lambda T, d: T.bucketize(_v(T, d, [2.0]), _v(T, d, [[1.0, 3.0]])),
    "bucketize_scalar": lambda T, d: T.bucketize(2, _v(T, d, [1.0, 3.0]), out_int32=True),
    "bucketize_0d": lambda T, d: T.bucketize(_v(T, d, 2), _v(T, d, [1.0, 3.0])),
    "bucketize_out": lambda T, d: T.bucketize(_v(T, d, [2]), _v(T, d, [1, 3]),
                                              out=_z(T, d, 3, dtype="int64")),
}

COUNT: dict[str, Case] = {
    "histc_int": lambda T, d: T.histc(_v(T, d, [1, 2]), bins=3),
    "histc_bins_zero": lambda T, d: T.histc(_v(T, d, [1.0, 2.0]), bins=0),
    "histc_min_gt_max": lambda T, d: T.histc(_v(T, d, [1.0, 2.0]), bins=3, min=3, max=1),
    "histc_inf_range": lambda T, d: T.histc(_v(T, d, [1.0, 2.0, float("inf")]), bins=3),
    "histc_inf_min": lambda T, d: T.histc(_v(T, d, [1.0, 2.0]), bins=3, min=float("-inf"),
                                          max=1),
    "histc_out_dtype": lambda T, d: T.histc(_v(T, d, [1.0, 2.0]), bins=2,
                                            out=_z(T, d, 2, dtype="float64")),
    "histc_requires_grad": lambda T, d: T.histc(_x(T, d, "float64", grad=True), bins=3),
    "bincount_bool": lambda T, d: T.bincount(_v(T, d, [True, False])),
    "bincount_float": lambda T, d: T.bincount(_v(T, d, [1.0, 2.0])),
    "bincount_negative": lambda T, d: T.bincount(_v(T, d, [-1, 2])),
    "bincount_2d": lambda T, d: T.bincount(_v(T, d, [[1, 2]])),
    "bincount_0d": lambda T, d: T.bincount(_v(T, d, 1)),
    "bincount_minlength": lambda T, d: T.bincount(_v(T, d, [1, 2]), minlength=-1),
    "bincount_weights_len": lambda T, d: T.bincount(_v(T, d, [1, 2]), weights=_v(T, d, [1.0])),
    "bincount_empty_minlength": lambda T, d: T.bincount(_z(T, d, 0, dtype="int64"), minlength=3),
    "count_nonzero_repeated": lambda T, d: T.count_nonzero(_x(T, d), dim=(0, 0)),
    "count_nonzero_dim": lambda T, d: T.count_nonzero(_x(T, d), dim=2),
    "count_nonzero_0d": lambda T, d: T.count_nonzero(_v(T, d, 3.0), dim=0),
    "count_nonzero_bool": lambda T, d: T.count_nonzero(_v(T, d, [True, False, True])),
    "isin_bool": lambda T, d: T.isin(_v(T, d, [True, False]), _v(T, d, [1])),
    "isin_two_scalars": lambda T, d: T.isin(2, 3),
    "isin_out_dtype": lambda T, d: T.isin(_v(T, d, [1, 3]), _v(T, d, [2]), out=_z(T, d, 2)),
    "isin_out_ok": lambda T, d: T.isin(_v(T, d, [1, 3]), _v(T, d, [3]),
                                       out=_z(T, d, 2, dtype="bool")),
    "isin_0d": lambda T, d: T.isin(_v(T, d, 2), _v(T, d, [1, 2])),
    "isin_requires_grad": lambda T, d: T.isin(_x(T, d, grad=True), _v(T, d, [2.0])),
}

# NOTE: messages naming tensor types (``torch.FloatTensor``): PyTorch says
# ``torch.cuda.FloatTensor`` on CUDA, as we do; compared with that prefix dropped.
TYPED: dict[str, Case] = {
    "median_out_values": lambda T, d: T.median(_x(T, d, "int64"), 0, out=(
        _z(T, d, 3), _z(T, d, 3, dtype="int64"))),
    "median_out_indices": lambda T, d: T.median(_x(T, d), 0, out=(
        _z(T, d, 3), _z(T, d, 3, dtype="int32"))),
    "nanmedian_out_values": lambda T, d: T.nanmedian(_x(T, d, "int64"), 0, out=(
        _z(T, d, 3), _z(T, d, 3, dtype="int64"))),
}

test_misuse = catalogue_test({**SORT, **SELECT, **UNIQUE, **SEARCH, **COUNT})


@pytest.mark.parametrize("name", sorted(TYPED))
def test_typed_messages(device: str, name: str) -> None:
    theirs = catch(lambda: TYPED[name](torch, "cpu"))
    ours = catch(lambda: TYPED[name](ag, device))
    assert type(ours) is type(theirs)
    assert str(ours).replace("torch.cuda.", "torch.") == str(theirs)
