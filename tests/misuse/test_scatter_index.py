"""Misuse catalogue, the scatter family's second half: ``index_add``, ``index_copy``,
``index_reduce`` (each with its own words and exception types in PyTorch), ``index_fill``,
``index_put``, ``masked_select`` and ``masked_scatter``, with their in-place forms (their
gradients: ``test_scatter``). Same rules as ``test_scatter``: every bad index raises PyTorch's
error, every legal corner gives PyTorch's values.
"""

from __future__ import annotations

from typing import Any

from tests.misuse._catalogue import Case, catalogue_test
from tests.misuse.test_scatter import _f, _i, _m, _message, _x, pytestmark  # noqa: F401


def _ia(T: Any, dev: str, shape: tuple[int, ...], dim: int, index: Any, sshape: Any,
        fn: str = "index_add", idtype: str = "int64", sdtype: str | None = None,
        *args: Any, **kw: Any) -> Any:
    x = T.tensor(1.0, device=dev) if shape == () else _x(T, dev, *shape)
    src = T.tensor(5.0, device=dev) if sshape == () else _x(T, dev, *sshape) + 10
    if sdtype:
        src = src.to(getattr(T, sdtype))
    return getattr(T, fn)(x, dim, _i(T, dev, index, idtype), src, *args, **kw)


def _index_ops(fn: str, *extra: Any) -> dict[str, Case]:
    """The cases ``index_add``, ``index_copy`` and ``index_reduce`` share (each with its own
    words and exception types in PyTorch)."""
    def case(shape: Any, dim: int, index: Any, sshape: Any, idtype: str = "int64",
             sdtype: str | None = None) -> Case:
        return lambda T, dev: _ia(T, dev, shape, dim, index, sshape, fn, idtype, sdtype, *extra)

    return {f"{fn}_{k}": v for k, v in {
        "basic": case((3, 4), 0, [0, 2], (2, 4)),
        "dim1": case((3, 4), 1, [3, 1], (3, 2)),
        "neg_dim": case((3, 4), -1, [3, 1], (3, 2)),
        "3d_middle": case((2, 3, 4), 1, [2, 0], (2, 2, 4)),
        "1d": case((4,), 0, [3, 1, 2], (3,)),
        "int32_index": case((3, 4), 0, [0, 2], (2, 4), "int32"),
        "int16_index": case((3, 4), 0, [0, 2], (2, 4), "int16"),
        "float_index": case((3, 4), 0, [0, 2], (2, 4), "float32"),
        "2d_index": case((3, 4), 0, [[0, 2]], (2, 4)),
        "0d_index": case((3, 4), 0, 1, (1, 4)),
        "0d_index_1d_source": case((3, 4), 0, 1, (4,)),
        "source_dtype": case((3, 4), 0, [0, 2], (2, 4), "int64", "float64"),
        "source_shape": case((3, 4), 0, [0, 2], (2, 5)),
        "source_more_dims": case((3, 4), 0, [0, 2], (2, 4, 1)),
        "source_fewer_dims": case((3, 4), 0, [0, 2], (8,)),
        "too_many_indices": case((3, 4), 0, [0, 2, 1], (2, 4)),
        "0d_source": case((3, 4), 0, [0], ()),
        "0d_source_1d_self": case((3,), 0, [1], ()),
        "0d_self": case((), 0, [0], ()),
        "0d_self_neg_dim": case((), -1, [0], ()),
        "0d_self_1d_source": case((), 0, [0], (1,)),
        "0d_self_out_of_range": case((), 0, [1], ()),
        "0d_self_two_indices": case((), 0, [0, 0], (2,)),
        "dim_too_large": case((3, 4), 2, [0, 2], (2, 4)),
        "empty_index": case((3, 4), 0, [], (0, 4)),
        "empty_index_bad_source": case((3, 4), 0, [], (0, 5)),
        "out_of_range": case((3, 4), 0, [0, 3], (2, 4)),
        "out_of_range_dim1": case((3, 4), 1, [4], (3, 1)),
        "out_of_range_3d_middle": case((3, 4, 2), 1, [5], (3, 1, 2)),
        "out_of_range_3d_last": case((3, 4, 2), 2, [5], (3, 4, 1)),
        "out_of_range_int32": case((3, 4), 0, [7], (1, 4), "int32"),
        "out_of_range_1d": case((3,), 0, [0, 5, 7], (3,)),
        "negative": case((3, 4), 0, [0, -1], (2, 4)),
        "negative_1d": case((3,), 0, [-1], (1,)),
        "empty_self_dim0": case((0, 3), 0, [0], (1, 3)),
        "empty_self_dim1": case((0, 3), 1, [5], (0, 1)),
        "empty_self_dim1_ok": case((0, 3), 1, [1], (0, 1)),
        "empty_other_dim": case((3, 0), 0, [5], (1, 0)),
        "empty_self_3d": case((2, 0, 3), 1, [0], (2, 1, 3)),
        "empty_self_1d": case((0,), 0, [0], (1,)),
    }.items()}


def _int_op(T: Any, dev: str, fn: str, dtype: str, *extra: Any) -> Any:
    x = T.tensor([1, 2, 3], dtype=getattr(T, dtype), device=dev)
    src = T.tensor([1, 1, 0], dtype=getattr(T, dtype), device=dev)
    return getattr(T, fn)(x, 0, _i(T, dev, [1, 1, 2]), src, *extra)


def _ir_case(reduce: str, include_self: bool) -> Case:
    return lambda T, dev: T.index_reduce(
        _x(T, dev, 3, 2) - 2, 0, _i(T, dev, [0, 2, 0, 0]), _x(T, dev, 4, 2) - 4, reduce,
        include_self=include_self)


INDEX_OPS: dict[str, Case] = {
    **_index_ops("index_add"), **_index_ops("index_copy"), **_index_ops("index_reduce", "prod"),
    "index_add_duplicates": lambda T, dev: _ia(T, dev, (3, 4), 0, [0, 0, 0], (3, 4)),
    "index_add_alpha": lambda T, dev: T.index_add(
        _x(T, dev, 3, 4), 0, _i(T, dev, [0, 2]), T.ones(2, 4, device=dev), alpha=2.5),
    "index_add_alpha_int_truncates": lambda T, dev: T.index_add(
        _x(T, dev, 3, dtype="int64"), 0, _i(T, dev, [0, 2]), _i(T, dev, [1, 1]), alpha=-2.7),
    "index_add_alpha_bool": lambda T, dev: T.index_add(
        _m(T, dev, [True, False]), 0, _i(T, dev, [0, 1]), _m(T, dev, [True, False]), alpha=2),
    "index_add_alpha_overflows": lambda T, dev: T.index_add(
        _x(T, dev, 3, dtype="int8"), 0, _i(T, dev, [0]), _x(T, dev, 1, dtype="int8"),
        alpha=1000),
    "index_add_bool_out_of_range": lambda T, dev: T.index_add(
        T.zeros(3, 2, dtype=T.bool, device=dev), 0, _i(T, dev, [5]),
        T.ones(1, 2, dtype=T.bool, device=dev)),
    "index_add_transposed_out_of_range": lambda T, dev: T.index_add(
        T.zeros(2, 3, device=dev).t(), 1, _i(T, dev, [5]), T.ones(3, 1, device=dev)),
    "index_add_int8_wraps": lambda T, dev: _int_op(T, dev, "index_add", "int8"),
    "index_add_out": lambda T, dev: T.index_add(
        _x(T, dev, 3), 0, _i(T, dev, [1, 1]), _x(T, dev, 2), alpha=2,
        out=T.empty(3, device=dev)),
    "index_add_method_inplace": lambda T, dev: _x(T, dev, 3).index_add_(
        0, _i(T, dev, [1, 1]), _x(T, dev, 2), alpha=-1),
    "index_add_number_source": lambda T, dev: T.index_add(_x(T, dev, 3), 0, _i(T, dev, [1]), 1.0),
    "index_add_index_list": lambda T, dev: T.index_add(_x(T, dev, 3), 0, [1], _x(T, dev, 1)),
    "index_add_method_dim_str": lambda T, dev: _x(T, dev, 3).index_add(
        "a", _i(T, dev, [1]), _x(T, dev, 1)),
    "index_copy_0d_source_two_indices": lambda T, dev: T.index_copy(
        _x(T, dev, 3), 0, _i(T, dev, [0, 1]), T.tensor(1.0, device=dev)),
    "index_copy_slice_shapes_3d": lambda T, dev: T.index_copy(
        _x(T, dev, 3, 4, 2), 1, _i(T, dev, [0]), T.ones(3, 1, 5, device=dev)),
    "index_copy_out_of_range_first_reported": lambda T, dev: T.index_copy(
        _x(T, dev, 3), 0, _i(T, dev, [0, 5, 7]), _x(T, dev, 3)),
    "index_copy_empty_self_two_indices": lambda T, dev: T.index_copy(
        T.zeros(0, 3, dtype=T.float64, device=dev), 0, _i(T, dev, [0, 0]),
        T.ones(2, 3, dtype=T.float64, device=dev)),
    "index_copy_int": lambda T, dev: T.index_copy(
        _x(T, dev, 3, dtype="int64"), 0, _i(T, dev, [2, 0]), _i(T, dev, [7, 8])),
    "index_copy_out": lambda T, dev: T.index_copy(
        _x(T, dev, 3), 0, _i(T, dev, [2]), _f(T, dev, [9.0]), out=T.empty(3, device=dev)),
    "index_copy_inplace": lambda T, dev: _x(T, dev, 2, 3).index_copy_(
        1, _i(T, dev, [2, 0]), T.ones(2, 2, device=dev)),
    **{f"index_reduce_{r}_{s}": _ir_case(r, s)
       for r in ("prod", "mean", "amax", "amin") for s in (True, False)},
    "index_reduce_mean_int_floor": lambda T, dev: T.index_reduce(
        _i(T, dev, [1, 2, 3]), 0, _i(T, dev, [1, 1]), _i(T, dev, [-3, -4]), "mean",
        include_self=False),
    "index_reduce_mean_uint8": lambda T, dev: T.index_reduce(
        _i(T, dev, [1, 2, 3], "uint8"), 0, _i(T, dev, [1, 1]), _i(T, dev, [250, 251], "uint8"),
        "mean"),
    "index_reduce_amax_nan": lambda T, dev: T.index_reduce(
        T.zeros(3, device=dev), 0, _i(T, dev, [0, 0, 1]), _f(T, dev, [2, float("nan"), 3]),
        "amax"),
    "index_reduce_int8_amax": lambda T, dev: _int_op(T, dev, "index_reduce", "int8", "amax"),
    "index_reduce_half_prod": lambda T, dev: _int_op(T, dev, "index_reduce", "float16", "prod"),
    "index_reduce_sum_refused": lambda T, dev: _ia(T, dev, (3,), 0, [0], (1,), "index_reduce",
                                                   "int64", None, "sum"),
    "index_reduce_bool": lambda T, dev: T.index_reduce(
        T.zeros(3, dtype=T.bool, device=dev), 0, _i(T, dev, [0]),
        T.ones(1, dtype=T.bool, device=dev), "mean"),
    "index_reduce_bool_empty_index": lambda T, dev: T.index_reduce(
        T.zeros(3, dtype=T.bool, device=dev), 0, T.zeros(0, dtype=T.int64, device=dev),
        T.ones(0, dtype=T.bool, device=dev), "prod"),
    "index_reduce_bool_bad_reduce": lambda T, dev: T.index_reduce(
        T.zeros(3, dtype=T.bool, device=dev), 0, _i(T, dev, [0]),
        T.ones(1, dtype=T.bool, device=dev), "sum"),
    "index_reduce_inplace": lambda T, dev: _x(T, dev, 3).index_reduce_(
        0, _i(T, dev, [1, 1]), _f(T, dev, [4.0, 6.0]), "mean", include_self=False),
    "index_reduce_out": lambda T, dev: T.index_reduce(
        _x(T, dev, 3), 0, _i(T, dev, [1, 1]), _f(T, dev, [4.0, 6.0]), "amin",
        out=T.empty(3, device=dev)),
}


def _fill(T: Any, dev: str, shape: tuple[int, ...], dim: int, index: Any, value: Any = -1.0,
          idtype: str = "int64", dtype: str = "float32") -> Any:
    x = T.tensor(3.0, device=dev) if shape == () else _x(T, dev, *shape, dtype=dtype)
    return T.index_fill(x, dim, _i(T, dev, index, idtype), value)


INDEX_FILL: dict[str, Case] = {
    "index_fill_basic": lambda T, dev: _fill(T, dev, (3, 4), 1, [0, 2]),
    "index_fill_repeats": lambda T, dev: _fill(T, dev, (3, 4), 1, [0, 0]),
    "index_fill_negative": lambda T, dev: _fill(T, dev, (3, 4), 1, [0, -1]),
    "index_fill_0d_index": lambda T, dev: _fill(T, dev, (3, 4), 0, 2),
    "index_fill_3d": lambda T, dev: _fill(T, dev, (2, 3, 4), 1, [2, -3]),
    "index_fill_0d_self": lambda T, dev: _fill(T, dev, (), 0, [0], 1.0),
    "index_fill_0d_self_negative": lambda T, dev: _fill(T, dev, (), 0, [-1], 1.0),
    "index_fill_empty_index": lambda T, dev: _fill(T, dev, (3, 4), 0, []),
    "index_fill_tensor_value": lambda T, dev: _fill(T, dev, (3, 4), 1, [1],
                                                    T.tensor(-1.0, device=dev)),
    "index_fill_tensor_value_float64": lambda T, dev: _fill(
        T, dev, (3, 4), 1, [1], T.tensor(-1.5, dtype=T.float64, device=dev)),
    "index_fill_tensor_value_into_int": lambda T, dev: _fill(
        T, dev, (3,), 0, [1], T.tensor(2.7, device=dev), dtype="int64"),
    "index_fill_float_into_int": lambda T, dev: _fill(T, dev, (3,), 0, [1], 2.7, dtype="int64"),
    "index_fill_bool_value": lambda T, dev: _fill(T, dev, (3,), 0, [1], True),
    "index_fill_empty_self_other_dim": lambda T, dev: T.index_fill(
        T.zeros(0, 3, device=dev), 1, _i(T, dev, [5]), 1.0),
    "index_fill_empty_dim_other_empty": lambda T, dev: T.index_fill(
        T.zeros(3, 0, device=dev), 0, _i(T, dev, [5]), 1.0),
    "index_fill_method": lambda T, dev: _x(T, dev, 2, 3).index_fill(-1, _i(T, dev, [2]), 4),
    "index_fill_inplace": lambda T, dev: _x(T, dev, 2, 3).index_fill_(0, _i(T, dev, [1]), 4),
    # refused
    "index_fill_out_of_range": lambda T, dev: _fill(T, dev, (3, 4), 1, [0, 4]),
    "index_fill_negative_out_of_range": lambda T, dev: _fill(T, dev, (3, 4), 1, [0, -5]),
    "index_fill_0d_self_out_of_range": lambda T, dev: _fill(T, dev, (), 0, [1], 1.0),
    "index_fill_0d_self_dim1": lambda T, dev: _fill(T, dev, (), 1, [0], 1.0),
    "index_fill_int32_index": lambda T, dev: _fill(T, dev, (3, 4), 1, [0], idtype="int32"),
    "index_fill_float_index": lambda T, dev: _fill(T, dev, (3, 4), 1, [0.0], idtype="float32"),
    "index_fill_2d_index": lambda T, dev: _fill(T, dev, (3, 4), 1, [[0]]),
    "index_fill_1d_value": lambda T, dev: _fill(T, dev, (3, 4), 1, [1],
                                                T.tensor([-1.0], device=dev)),
    "index_fill_value_overflows": lambda T, dev: _fill(T, dev, (3,), 0, [1], 300, dtype="int8"),
    "index_fill_tensor_value_overflows": lambda T, dev: _fill(
        T, dev, (3,), 0, [1], T.tensor(300, device=dev), dtype="int8"),
    "index_fill_complex_value": lambda T, dev: _fill(T, dev, (3,), 0, [1], 1j),
    "index_fill_value_str": lambda T, dev: _fill(T, dev, (3,), 0, [1], "a"),
    "index_fill_value_none": lambda T, dev: _fill(T, dev, (3,), 0, [1], None),
    "index_fill_dim_too_large": lambda T, dev: _fill(T, dev, (3, 4), 2, [0]),
    "index_fill_empty_self": lambda T, dev: T.index_fill(
        T.zeros(0, 3, device=dev), 0, _i(T, dev, [2]), 1.0),
    "index_fill_empty_self_1d": lambda T, dev: T.index_fill(
        T.zeros(0, device=dev), 0, _i(T, dev, [0]), 1.0),
    "index_fill_empty_self_3d": lambda T, dev: T.index_fill(
        T.zeros(0, 3, 2, device=dev), 0, _i(T, dev, [0, 1]), 1.0),
    "index_fill_index_list": lambda T, dev: T.index_fill(_x(T, dev, 3), 0, [0], 1.0),
}


def _ip(T: Any, dev: str, indices: Any, values: Any, accumulate: bool = False,
        shape: tuple[int, ...] = (3, 4)) -> Any:
    return T.index_put(_x(T, dev, *shape), indices, values, accumulate=accumulate)


INDEX_PUT: dict[str, Case] = {
    "index_put_basic": lambda T, dev: _ip(T, dev, (_i(T, dev, [0, 2]),), T.ones(4, device=dev)),
    "index_put_accumulate_duplicates": lambda T, dev: _ip(
        T, dev, (_i(T, dev, [0, 0]), _i(T, dev, [1, 1])), _f(T, dev, [5.0, 6.0]), True),
    "index_put_accumulate_0d_value": lambda T, dev: _ip(
        T, dev, (_i(T, dev, [0, 0]), _i(T, dev, [1, 1])), T.tensor(5.0, device=dev), True),
    "index_put_list": lambda T, dev: _ip(T, dev, [_i(T, dev, [0, 2])], T.ones(4, device=dev)),
    "index_put_negative": lambda T, dev: _ip(T, dev, (_i(T, dev, [0, -1]),),
                                             T.ones(4, device=dev)),
    "index_put_negative_accumulate": lambda T, dev: _ip(
        T, dev, (_i(T, dev, [-1, -1]),), T.ones(4, device=dev), True),
    "index_put_int32": lambda T, dev: _ip(T, dev, (_i(T, dev, [0, 1], "int32"),),
                                          T.ones(4, device=dev)),
    "index_put_mask": lambda T, dev: _ip(T, dev, (_m(T, dev, [True, False, True]),),
                                         T.ones(4, device=dev)),
    "index_put_mask_accumulate": lambda T, dev: _ip(
        T, dev, (_m(T, dev, [True, False, True]),), T.ones(4, device=dev), True),
    "index_put_broadcast_indices": lambda T, dev: _ip(
        T, dev, (_i(T, dev, [[0], [2]]), _i(T, dev, [1, 3])), T.ones(2, 2, device=dev)),
    "index_put_accumulate_int": lambda T, dev: T.index_put(
        _x(T, dev, 5, dtype="int64"), (_i(T, dev, [0, 0, 4]),), _i(T, dev, [1, 2, 3]),
        accumulate=True),
    "index_put_accumulate_int8_wraps": lambda T, dev: T.index_put(
        T.zeros(3, dtype=T.int8, device=dev), (_i(T, dev, [1, 1]),),
        _i(T, dev, [100, 100], "int8"), accumulate=True),
    "index_put_accumulate_bool": lambda T, dev: T.index_put(
        _m(T, dev, [False, True]), (_i(T, dev, [0, 0]),), _m(T, dev, [True, True]),
        accumulate=True),
    "index_put_empty_index": lambda T, dev: _ip(T, dev, (T.zeros(0, dtype=T.int64,
                                                                 device=dev),),
                                                T.ones(4, device=dev)),
    "index_put_0d_index": lambda T, dev: T.index_put(
        _x(T, dev, 3), (_i(T, dev, 1),), T.tensor(5.0, device=dev), accumulate=True),
    "index_put_0d_bool_index": lambda T, dev: T.index_put(
        _x(T, dev, 3), (T.tensor(True, device=dev),), T.ones(1, device=dev)),
    "index_put_inplace": lambda T, dev: _x(T, dev, 3, 4).index_put_(
        (_i(T, dev, [0, 0]),), T.ones(4, device=dev), accumulate=True),
    "index_put_torch_inplace": lambda T, dev: T.index_put_(
        _x(T, dev, 3, 4), (_i(T, dev, [2]),), T.ones(4, device=dev)),
    # refused
    "index_put_out_of_range": lambda T, dev: _ip(T, dev, (_i(T, dev, [0, 3]),),
                                                 T.ones(4, device=dev)),
    "index_put_out_of_range_accumulate": lambda T, dev: _ip(
        T, dev, (_i(T, dev, [0, 3]),), T.ones(4, device=dev), True),
    "index_put_float_index": lambda T, dev: _ip(T, dev, (_f(T, dev, [0.0, 1.0]),),
                                                T.ones(4, device=dev)),
    "index_put_uint8_is_mask": lambda T, dev: _ip(T, dev, (_i(T, dev, [0, 1], "uint8"),),
                                                  T.ones(4, device=dev)),
    "index_put_too_many": lambda T, dev: _ip(
        T, dev, (_i(T, dev, [0]), _i(T, dev, [0]), _i(T, dev, [0])), T.ones(1, device=dev)),
    "index_put_too_many_0d_self": lambda T, dev: T.index_put(
        T.tensor(1.0, device=dev), (_i(T, dev, [0]),), T.tensor(5.0, device=dev)),
    "index_put_dtype": lambda T, dev: _ip(T, dev, (_i(T, dev, [0, 2]),),
                                          T.ones(4, dtype=T.float64, device=dev)),
    "index_put_dtype_accumulate": lambda T, dev: _ip(
        T, dev, (_i(T, dev, [0, 2]),), T.ones(4, dtype=T.float64, device=dev), True),
    "index_put_dtype_before_values": lambda T, dev: T.index_put(
        _x(T, dev, 3), (_i(T, dev, [5]),), T.ones(1, dtype=T.float64, device=dev)),
    "index_put_too_many_before_dtype": lambda T, dev: T.index_put(
        _x(T, dev, 3), (_i(T, dev, [0]), _i(T, dev, [0])), T.ones(1, dtype=T.float64,
                                                                  device=dev)),
    "index_put_shape": lambda T, dev: _ip(T, dev, (_i(T, dev, [0, 2]),), T.ones(3, device=dev)),
    "index_put_shape_before_values": lambda T, dev: T.index_put(
        _x(T, dev, 3), (_i(T, dev, [5]),), T.ones(2, device=dev)),
    "index_put_leading_ones": lambda T, dev: _ip(T, dev, (_i(T, dev, [0, 2]),),
                                                 T.ones(1, 1, 4, device=dev)),
    "index_put_leading_ones_accumulate": lambda T, dev: _ip(
        T, dev, (_i(T, dev, [0, 2]),), T.ones(1, 1, 4, device=dev), True),
    "index_put_broadcast_bad": lambda T, dev: _ip(
        T, dev, (_i(T, dev, [0, 1, 2]), _i(T, dev, [1, 3])), T.ones(1, device=dev)),
    "index_put_mask_shape": lambda T, dev: _ip(T, dev, (_m(T, dev, [True, False]),),
                                               T.ones(1, device=dev)),
    "index_put_none_entry": lambda T, dev: _ip(T, dev, (None, _i(T, dev, [0])),
                                               T.ones(1, device=dev)),
    "index_put_int_entry": lambda T, dev: _ip(T, dev, (0, _i(T, dev, [0])), T.ones(1,
                                                                                  device=dev)),
    "index_put_list_entry": lambda T, dev: _ip(T, dev, ([0, 2],), T.ones(4, device=dev)),
    "index_put_not_tuple": lambda T, dev: _ip(T, dev, _i(T, dev, [0]), T.ones(4, device=dev)),
    "index_put_method_none_entry": lambda T, dev: _x(T, dev, 3).index_put(
        (None,), T.ones(1, device=dev)),
    "index_put_method_not_tuple": lambda T, dev: _x(T, dev, 3).index_put(
        _i(T, dev, [0]), T.ones(1, device=dev)),
    "index_put_number_values": lambda T, dev: _ip(T, dev, (_i(T, dev, [0]),), 1.0),
    "index_put_empty_tuple": lambda T, dev: _ip(T, dev, (), T.ones(4, device=dev)),
    "index_put_empty_tuple_accumulate": lambda T, dev: _ip(T, dev, (), T.ones(4, device=dev),
                                                           True),
}


MASKED: dict[str, Case] = {
    "masked_select_basic": lambda T, dev: T.masked_select(_x(T, dev, 3, 4),
                                                          _x(T, dev, 3, 4) > 4),
    "masked_select_broadcast_mask": lambda T, dev: T.masked_select(
        _x(T, dev, 3, 4), _m(T, dev, [True, False, True, False])),
    "masked_select_broadcast_self": lambda T, dev: T.masked_select(
        _x(T, dev, 4), _m(T, dev, [[True, False, True, False], [True] * 4])),
    "masked_select_0d": lambda T, dev: T.masked_select(T.tensor(3.0, device=dev),
                                                       T.tensor(True, device=dev)),
    "masked_select_0d_false": lambda T, dev: T.masked_select(T.tensor(3.0, device=dev),
                                                             T.tensor(False, device=dev)),
    "masked_select_empty": lambda T, dev: T.masked_select(T.zeros(0, 3, device=dev),
                                                          T.zeros(0, 3, dtype=T.bool,
                                                                  device=dev)),
    "masked_select_method": lambda T, dev: _x(T, dev, 2, 2).masked_select(
        _m(T, dev, [[False, True], [True, True]])),
    "masked_select_out": lambda T, dev: T.masked_select(
        _x(T, dev, 3), _m(T, dev, [True, False, True]), out=T.empty(2, device=dev)),
    "masked_select_uint8_mask": lambda T, dev: T.masked_select(
        _x(T, dev, 3), _i(T, dev, [1, 0, 1], "uint8")),
    "masked_select_float_mask": lambda T, dev: T.masked_select(_x(T, dev, 3), _x(T, dev, 3)),
    "masked_select_bad_broadcast": lambda T, dev: T.masked_select(_x(T, dev, 3, 4),
                                                                  _m(T, dev, [True, False])),
    "masked_select_mask_list": lambda T, dev: T.masked_select(_x(T, dev, 3), [True]),
    "masked_scatter_basic": lambda T, dev: T.masked_scatter(
        _x(T, dev, 3, 4), _x(T, dev, 3, 4) > 8, _x(T, dev, 12) + 100),
    "masked_scatter_2d_source": lambda T, dev: T.masked_scatter(
        _x(T, dev, 3, 4), _x(T, dev, 3, 4) > 8, _x(T, dev, 4, 3) + 100),
    "masked_scatter_broadcast_mask": lambda T, dev: T.masked_scatter(
        _x(T, dev, 3, 4), _m(T, dev, [True, False, False, True]), _x(T, dev, 12) + 100),
    "masked_scatter_broadcast_self": lambda T, dev: T.masked_scatter(
        _x(T, dev, 4), _m(T, dev, [[True, False, False, True]] * 2), _x(T, dev, 12) + 100),
    "masked_scatter_0d": lambda T, dev: T.masked_scatter(
        T.tensor(1.0, device=dev), T.tensor(True, device=dev), _f(T, dev, [5.0, 6.0])),
    "masked_scatter_0d_source": lambda T, dev: T.masked_scatter(
        _f(T, dev, [1.0, 2.0]), _m(T, dev, [True, False]), T.tensor(5.0, device=dev)),
    "masked_scatter_empty_source": lambda T, dev: T.masked_scatter(
        _x(T, dev, 3), _m(T, dev, [False] * 3), T.ones(0, device=dev)),
    "masked_scatter_inplace": lambda T, dev: _x(T, dev, 2, 3).masked_scatter_(
        _m(T, dev, [True, False, True]), _x(T, dev, 6) - 9),
    "masked_scatter_small_source": lambda T, dev: T.masked_scatter(
        _x(T, dev, 3, 4), _x(T, dev, 3, 4) > 8, _x(T, dev, 2)),
    "masked_scatter_empty_source_needed": lambda T, dev: T.masked_scatter(
        _x(T, dev, 3), _m(T, dev, [False, True, False]), T.ones(0, device=dev)),
    "masked_scatter_source_dtype": lambda T, dev: T.masked_scatter(
        _x(T, dev, 3), _m(T, dev, [True] * 3), _i(T, dev, [1, 2, 3])),
    "masked_scatter_uint8_mask": lambda T, dev: T.masked_scatter(
        _x(T, dev, 3), _i(T, dev, [1, 0, 1], "uint8"), _x(T, dev, 3)),
    "masked_scatter_float_mask": lambda T, dev: T.masked_scatter(
        _x(T, dev, 3), _x(T, dev, 3), _x(T, dev, 3)),
    "masked_scatter_bad_broadcast": lambda T, dev: T.masked_scatter(
        _x(T, dev, 3, 4), _m(T, dev, [True, False]), _x(T, dev, 12)),
    "masked_scatter_inplace_mask_wider": lambda T, dev: _message(
        lambda: _x(T, dev, 4).masked_scatter_(_m(T, dev, [[True, False, False, True]] * 2),
                                              _x(T, dev, 12))),
    "masked_scatter_inplace_mask_other_size": lambda T, dev: _x(T, dev, 3, 4).masked_scatter_(
        _m(T, dev, [[True, False, False, True]] * 2), _x(T, dev, 12)),
    "masked_scatter_number_source": lambda T, dev: T.masked_scatter(
        _x(T, dev, 3), _m(T, dev, [True] * 3), 1.0),
}



CASES: dict[str, Case] = {**INDEX_OPS, **INDEX_FILL, **INDEX_PUT, **MASKED}

test_misuse = catalogue_test(CASES)
