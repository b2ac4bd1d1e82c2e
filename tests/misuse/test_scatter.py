"""Misuse catalogue: the scatter family (``scatter``, ``scatter_add``, ``scatter_reduce``,
``take``, ``take_along_dim``, ``put``, their in-place forms, every op's gradients and writes
into expanded tensors; ``index_*``, ``index_put`` and the masked ops: ``test_scatter_index``).

The family was the root of a silently-wrong-value bug: every bad index (out of range, negative
where PyTorch refuses it, a wrong dtype or rank, larger than ``self``/``src`` outside ``dim``)
must raise PyTorch's exception type and first sentence, and every legal corner (negative
positions where PyTorch wraps them, an index smaller than ``self``, empty indices, 0-d tensors)
must give PyTorch's values and gradients. Positions written twice by a non-accumulating write are
nondeterministic in PyTorch: such cases write equal values, or only accumulate.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.misuse._catalogue import Case, catalogue_test

pytestmark = pytest.mark.filterwarnings(
    "ignore:index_reduce\\(\\) is in beta", "ignore:The reduce argument of torch.scatter",
    "ignore:An output with one or more elements was resized",
    "ignore:indexing with dtype torch.uint8 is now deprecated",
    "ignore:Use of index_(put|fill)_ on expanded tensors is deprecated")


def _x(T: Any, dev: str, *shape: int, grad: bool = False, dtype: str | None = None) -> Any:
    """``arange`` of ``shape`` (float64 when it takes a gradient)."""
    n = 1
    for s in shape:
        n *= s
    dt = getattr(T, dtype) if dtype else (T.float64 if grad else T.float32)
    return T.arange(n, dtype=dt, device=dev).reshape(shape).requires_grad_(grad)


def _i(T: Any, dev: str, data: Any, dtype: str = "int64") -> Any:
    return T.tensor(data, dtype=getattr(T, dtype), device=dev)


def _f(T: Any, dev: str, data: Any, dtype: str = "float32", grad: bool = False) -> Any:
    return T.tensor(data, dtype=getattr(T, dtype), device=dev, requires_grad=grad)


def _m(T: Any, dev: str, data: Any) -> Any:
    return T.tensor(data, dtype=T.bool, device=dev)


def _grads(T: Any, out: Any, *inputs: Any) -> Any:
    """``out`` and the gradients of ``sum(out ** 2)`` with respect to ``inputs``."""
    return (out,) + T.autograd.grad((out * out).sum(), inputs)


def _double(T: Any, out: Any, *inputs: Any) -> Any:
    """Second derivatives through ``out``: the gradient of ``sum(g ** 2)`` over the first
    derivatives ``g`` of ``sum(out ** 3)``."""
    gs = T.autograd.grad((out * out * out).sum(), inputs, create_graph=True)
    return T.autograd.grad(sum((g * g).sum() for g in gs), inputs, allow_unused=True)


def _message(fn: Any) -> str:
    """The message of the error ``fn`` raises, naming CUDA types as PyTorch's CPU names them
    (the oracle runs on the CPU)."""
    try:
        fn()
    except RuntimeError as e:
        return str(e).replace("CUDABoolType", "CPUBoolType")
    raise AssertionError("no error")


def _sc(T: Any, dev: str, shape: tuple[int, ...], dim: Any, index: Any, src: Any = None,
        fn: str = "scatter", idtype: str = "int64", **kw: Any) -> Any:
    x = T.tensor(5.0, device=dev) if shape == () else _x(T, dev, *shape)
    if src is None:
        n = 1
        for s in shape:
            n *= s
        src = _x(T, dev, *(shape or (1,))) + 100
    return getattr(T, fn)(x, dim, _i(T, dev, index, idtype), src, **kw)


SCATTER: dict[str, Case] = {
    # legal
    "scatter_basic": lambda T, dev: _sc(T, dev, (3, 4), 0, [[0, 1, 2, 0]]),
    "scatter_dim1": lambda T, dev: _sc(T, dev, (3, 4), 1, [[3, 0], [1, 2]]),
    "scatter_neg_dim": lambda T, dev: _sc(T, dev, (3, 4), -1, [[3], [1]]),
    "scatter_dim_0d_tensor": lambda T, dev: T.scatter(
        _x(T, dev, 2, 3), T.tensor(1, device=dev), _i(T, dev, [[2, 0]]), _x(T, dev, 1, 2)),
    "scatter_index_longer_along_dim": lambda T, dev: _sc(
        T, dev, (3, 4), 0, [[0], [1], [2], [2], [1]], T.ones(5, 4, device=dev)),
    "scatter_index_smaller_than_src": lambda T, dev: _sc(
        T, dev, (3, 4), 0, [[2, 1]], _x(T, dev, 2, 4) + 10),
    "scatter_3d": lambda T, dev: _sc(T, dev, (2, 3, 4), 1, [[[2, 1]], [[0, 0]]],
                                     _x(T, dev, 2, 3, 4) + 50),
    "scatter_int32_index": lambda T, dev: _sc(T, dev, (3, 4), 0, [[2, 0, 1]], idtype="int32"),
    "scatter_value": lambda T, dev: T.scatter(_x(T, dev, 3, 4), 1, _i(T, dev, [[1], [3]]), -2.5),
    "scatter_value_kw": lambda T, dev: T.scatter(_x(T, dev, 3), 0, _i(T, dev, [2]), value=7),
    "scatter_value_float_into_int": lambda T, dev: T.scatter(
        _x(T, dev, 3, dtype="int64"), 0, _i(T, dev, [0]), -2.7),
    "scatter_value_bool_into_int": lambda T, dev: T.scatter(
        _x(T, dev, 3, dtype="int64"), 0, _i(T, dev, [0]), True),
    "scatter_value_0d_tensor": lambda T, dev: T.scatter(
        _x(T, dev, 3), 0, _i(T, dev, [1]), T.tensor(9.0, device=dev)),
    "scatter_0d_self": lambda T, dev: _sc(T, dev, (), 0, 0, T.tensor(3.0, device=dev)),
    "scatter_0d_self_1d_index": lambda T, dev: _sc(T, dev, (), -1, [0], _f(T, dev, [3.0])),
    "scatter_0d_self_two_values": lambda T, dev: T.scatter_add(
        T.tensor(1.0, device=dev), 0, _i(T, dev, [0, 0]), _f(T, dev, [2.0, 3.0])),
    "scatter_0d_index": lambda T, dev: _sc(T, dev, (3,), 0, 1, _f(T, dev, [7.0])),
    "scatter_empty_index": lambda T, dev: _sc(T, dev, (3, 4), 0, [[]]),
    "scatter_empty_index_wider": lambda T, dev: T.scatter(
        _x(T, dev, 3, 4), 0, T.zeros(0, 9, dtype=T.int64, device=dev), _x(T, dev, 3, 4)),
    "scatter_empty_index_any_rank": lambda T, dev: T.scatter_add(
        _x(T, dev, 2, 3), 0, T.zeros(0, dtype=T.int64, device=dev), _x(T, dev, 2)),
    "scatter_empty_index_any_dtype": lambda T, dev: T.scatter(
        _x(T, dev, 2, 3), 0, T.zeros(0, dtype=T.float32, device=dev), 1.0),
    "scatter_empty_self_empty_index": lambda T, dev: T.scatter(
        T.zeros(0, 3, device=dev), 0, T.zeros(0, 3, dtype=T.int64, device=dev), _x(T, dev, 1, 1)),
    "scatter_bool": lambda T, dev: T.scatter(
        _m(T, dev, [True, False]), 0, _i(T, dev, [1, 0]), _m(T, dev, [False, True])),
    "scatter_add_duplicates": lambda T, dev: _sc(T, dev, (3, 4), 0, [[0, 0, 0, 0], [0, 2, 0, 0]],
                                                 fn="scatter_add"),
    "scatter_add_int64": lambda T, dev: T.scatter_add(
        _x(T, dev, 4, dtype="int64"), 0, _i(T, dev, [0, 0, 1]), _i(T, dev, [5, 6, 7])),
    "scatter_add_int8_wraps": lambda T, dev: T.scatter_add(
        _i(T, dev, [1, 2], "int8"), 0, _i(T, dev, [0, 0]), _i(T, dev, [120, 121], "int8")),
    "scatter_add_bool": lambda T, dev: T.scatter_add(
        _m(T, dev, [True, False, False]), 0, _i(T, dev, [1, 1]), _m(T, dev, [True, False])),
    "scatter_add_half": lambda T, dev: T.scatter_add(
        T.zeros(2, dtype=T.float16, device=dev), 0, _i(T, dev, [0, 0, 1]),
        _f(T, dev, [1.0, 2.0, 3.0], "float16")),
    "scatter_add_0d_src_1d": lambda T, dev: T.scatter_add(
        _x(T, dev, 3), 0, _i(T, dev, [2]), T.tensor(4.0, device=dev)),
    "scatter_legacy_add": lambda T, dev: T.scatter(
        _x(T, dev, 3), 0, _i(T, dev, [0, 0, 2]), _f(T, dev, [1.0, 2.0, 3.0]), reduce="add"),
    "scatter_legacy_multiply": lambda T, dev: T.scatter(
        _x(T, dev, 3) + 1, 0, _i(T, dev, [0, 0, 2]), _f(T, dev, [2.0, 3.0, 4.0]),
        reduce="multiply"),
    "scatter_legacy_value_add": lambda T, dev: T.scatter(
        _x(T, dev, 3, dtype="int64"), 0, _i(T, dev, [0, 0]), 2.5, reduce="add"),
    "scatter_legacy_value_multiply": lambda T, dev: T.scatter(
        T.ones(3, device=dev), 0, _i(T, dev, [0, 0]), 2.5, reduce="multiply"),
    "scatter_legacy_bool": lambda T, dev: T.scatter(
        T.ones(3, dtype=T.bool, device=dev), 0, _i(T, dev, [0, 0]), _m(T, dev, [True, False]),
        reduce="multiply"),
    "scatter_legacy_has_no_grad_fn_name": lambda T, dev: T.scatter(
        _x(T, dev, 3, grad=True), 0, _i(T, dev, [0]), _f(T, dev, [1.0], "float64"),
        reduce="add").grad_fn.name(),
    "scatter_method": lambda T, dev: _x(T, dev, 2, 3).scatter(1, _i(T, dev, [[2]]), 8.0),
    "scatter_inplace": lambda T, dev: _x(T, dev, 2, 3).scatter_(
        1, _i(T, dev, [[2], [0]]), _x(T, dev, 2, 1) - 5),
    "scatter_inplace_reduce": lambda T, dev: _x(T, dev, 3).scatter_(
        0, _i(T, dev, [1, 1]), _f(T, dev, [2.0, 3.0]), reduce="multiply"),
    "scatter_add_inplace": lambda T, dev: _x(T, dev, 3).scatter_add_(
        0, _i(T, dev, [1, 1, 2]), _f(T, dev, [2.0, 3.0, 4.0])),
    "scatter_reduce_inplace": lambda T, dev: _x(T, dev, 3).scatter_reduce_(
        0, _i(T, dev, [1, 1, 2]), _f(T, dev, [2.0, 3.0, 4.0]), "prod", include_self=False),
    "scatter_out": lambda T, dev: T.scatter(
        _x(T, dev, 3), 0, _i(T, dev, [1]), _f(T, dev, [8.0]), out=T.empty(3, device=dev)),
    "scatter_out_value_reduce": lambda T, dev: T.scatter(
        _x(T, dev, 3), 0, _i(T, dev, [1]), 2.0, reduce="add", out=T.empty(3, device=dev)),
    "scatter_add_out_resized": lambda T, dev: T.scatter_add(
        _x(T, dev, 3), 0, _i(T, dev, [1]), _f(T, dev, [8.0]), out=T.empty(0, device=dev)),
    "scatter_reduce_out": lambda T, dev: T.scatter_reduce(
        _x(T, dev, 3), 0, _i(T, dev, [1, 1]), _f(T, dev, [8.0, 9.0]), "amin",
        out=T.empty(3, device=dev)),
    # refused
    "scatter_value_too_large": lambda T, dev: _sc(T, dev, (3, 4), 0, [[3]]),
    "scatter_value_negative": lambda T, dev: _sc(T, dev, (3, 4), 0, [[-1]]),
    "scatter_value_first_bad_reported": lambda T, dev: _sc(T, dev, (3, 3), 0,
                                                           [[0, 0, 9], [7, 0, 0]]),
    "scatter_value_dim1": lambda T, dev: _sc(T, dev, (3, 4), 1, [[4]]),
    "scatter_number_out_of_range": lambda T, dev: T.scatter(_x(T, dev, 3, 4), 0,
                                                            _i(T, dev, [[3]]), 1.0),
    "scatter_add_out_of_range": lambda T, dev: _sc(T, dev, (3, 4), 0, [[-1]], fn="scatter_add"),
    "scatter_reduce_out_of_range": lambda T, dev: _sc(T, dev, (3, 4), 0, [[5]],
                                                      fn="scatter_reduce", reduce="sum"),
    "scatter_0d_self_out_of_range": lambda T, dev: _sc(T, dev, (), 0, [1], _f(T, dev, [1.0])),
    "scatter_empty_self": lambda T, dev: T.scatter(
        T.zeros(0, 3, device=dev), 1, _i(T, dev, [[0]]), _x(T, dev, 1, 1)),
    "scatter_add_empty_dim": lambda T, dev: T.scatter_add(
        T.zeros(3, 0, device=dev), 1, _i(T, dev, [[5]]), _x(T, dev, 1, 1)),
    "scatter_float_index": lambda T, dev: _sc(T, dev, (3, 4), 0, [[0]], idtype="float32"),
    "scatter_bool_index": lambda T, dev: _sc(T, dev, (3, 4), 0, [[True]], idtype="bool"),
    "scatter_int16_index": lambda T, dev: _sc(T, dev, (3, 4), 0, [[0]], idtype="int16"),
    "scatter_add_float_index": lambda T, dev: _sc(T, dev, (3, 4), 0, [[0]], idtype="float64",
                                                  fn="scatter_add"),
    "scatter_reduce_uint8_index": lambda T, dev: _sc(T, dev, (3, 4), 0, [[0]], idtype="uint8",
                                                     fn="scatter_reduce", reduce="sum"),
    "scatter_index_fewer_dims": lambda T, dev: _sc(T, dev, (3, 4), 0, [0]),
    "scatter_index_more_dims": lambda T, dev: _sc(T, dev, (3, 4), 0, [[[0]]]),
    "scatter_add_index_fewer_dims": lambda T, dev: _sc(T, dev, (3, 4), 0, [0], fn="scatter_add"),
    "scatter_0d_index_2d_self": lambda T, dev: _sc(T, dev, (3, 2), 0, 1),
    "scatter_0d_self_2d_index": lambda T, dev: _sc(T, dev, (), 0, [[0]], _x(T, dev, 1, 1)),
    "scatter_index_wider_than_self": lambda T, dev: _sc(
        T, dev, (3, 4), 0, [[0, 0, 0, 0, 0]], T.ones(3, 5, device=dev)),
    "scatter_index_wider_than_src": lambda T, dev: _sc(
        T, dev, (3, 4), 0, [[0, 0, 0, 0]] * 4, T.ones(3, 4, device=dev)),
    "scatter_index_wider_than_src_dim": lambda T, dev: _sc(
        T, dev, (3, 4), 0, [[0, 0, 0, 0]] * 4, T.ones(2, 4, device=dev)),
    "scatter_add_index_wider": lambda T, dev: _sc(
        T, dev, (3, 4), 0, [[0, 0, 0, 0, 0]], T.ones(3, 5, device=dev), fn="scatter_add"),
    "scatter_reduce_index_wider_src": lambda T, dev: _sc(
        T, dev, (3, 4), 1, [[0, 0]] * 3, T.ones(2, 4, device=dev), fn="scatter_reduce",
        reduce="amax"),
    "scatter_number_index_wider": lambda T, dev: T.scatter(
        _x(T, dev, 3, 4), 0, _i(T, dev, [[0] * 5]), 1.0),
    "scatter_0d_src_two_indices": lambda T, dev: _sc(T, dev, (3,), 0, [0, 2],
                                                     T.tensor(1.0, device=dev)),
    "scatter_src_fewer_dims": lambda T, dev: _sc(T, dev, (2, 3), 0, [[0]], _f(T, dev, [5.0])),
    "scatter_src_more_dims": lambda T, dev: _sc(T, dev, (2, 3), 0, [[0]], T.ones(1, 1, 1,
                                                                                device=dev)),
    "scatter_add_0d_src_2d": lambda T, dev: _sc(T, dev, (2, 3), 0, [[0]],
                                                T.tensor(1.0, device=dev), fn="scatter_add"),
    "scatter_src_dtype": lambda T, dev: _sc(T, dev, (3,), 0, [0], _f(T, dev, [1.0], "float64")),
    "scatter_src_int_self_float": lambda T, dev: _sc(T, dev, (3,), 0, [0], _i(T, dev, [1])),
    "scatter_add_src_dtype": lambda T, dev: _sc(T, dev, (3,), 0, [0],
                                                _f(T, dev, [1.0], "float64"), fn="scatter_add"),
    "scatter_empty_index_src_dtype": lambda T, dev: T.scatter(
        _x(T, dev, 2, 3), 0, T.zeros(0, 3, dtype=T.int64, device=dev),
        T.ones(1, dtype=T.float64, device=dev)),
    "scatter_dtype_before_dim_check": lambda T, dev: _sc(T, dev, (3, 4), 0, [0],
                                                         idtype="float32"),
    "scatter_dim_before_dtype": lambda T, dev: _sc(T, dev, (3, 4), 5, [[0]], idtype="float32"),
    "scatter_index_dtype_before_src_dtype": lambda T, dev: _sc(
        T, dev, (3, 4), 0, [[0]], _x(T, dev, 3, 4, dtype="float64"), idtype="float32"),
    "scatter_src_dtype_before_rank": lambda T, dev: _sc(
        T, dev, (3, 4), 0, [0], _x(T, dev, 3, 4, dtype="float64")),
    "scatter_shape_before_values": lambda T, dev: _sc(
        T, dev, (3, 4), 0, [[9, 9, 9, 9, 9]], T.ones(1, 5, device=dev)),
    "scatter_dim_too_large": lambda T, dev: _sc(T, dev, (3, 4), 2, [[0]]),
    "scatter_dim_too_small": lambda T, dev: _sc(T, dev, (3, 4), -3, [[0]]),
    "scatter_0d_self_dim_1": lambda T, dev: _sc(T, dev, (), 1, [0], _f(T, dev, [1.0])),
    "scatter_legacy_bad_reduce": lambda T, dev: _sc(T, dev, (3, 4), 0, [[0]], reduce="sum"),
    "scatter_legacy_bad_reduce_value": lambda T, dev: T.scatter(
        _x(T, dev, 3), 0, _i(T, dev, [0]), 1.0, reduce="mean"),
    "scatter_legacy_bad_reduce_after_dtype": lambda T, dev: _sc(
        T, dev, (3, 4), 0, [[0]], idtype="float32", reduce="foo"),
    "scatter_legacy_bad_reduce_after_dim": lambda T, dev: _sc(T, dev, (3, 4), 9, [[0]],
                                                              reduce="foo"),
    "scatter_value_overflows": lambda T, dev: T.scatter(
        _x(T, dev, 3, dtype="int8"), 0, _i(T, dev, [0]), 300),
    "scatter_index_list": lambda T, dev: T.scatter(_x(T, dev, 2, 3), 1, [[2, 2]], 1.0),
    "scatter_src_list": lambda T, dev: T.scatter(_x(T, dev, 2, 3), 1, _i(T, dev, [[2]]), [1.0]),
    "scatter_value_str": lambda T, dev: T.scatter(_x(T, dev, 2, 3), 1, _i(T, dev, [[2]]), "a"),
    "scatter_dim_float": lambda T, dev: T.scatter(_x(T, dev, 2, 3), 1.0, _i(T, dev, [[2]]), 1.0),
    "scatter_input_list": lambda T, dev: T.scatter([1.0], 0, _i(T, dev, [0]), 1.0),
    "scatter_method_dim_none": lambda T, dev: _x(T, dev, 3).scatter_(None, _i(T, dev, [0]), 1.0),
    "scatter_method_index_list": lambda T, dev: _x(T, dev, 3).scatter_(0, [0], 1.0),
    "scatter_method_src_dtype": lambda T, dev: _x(T, dev, 3).scatter_(
        0, _i(T, dev, [0]), _i(T, dev, [1])),
    "scatter_add_number_src": lambda T, dev: T.scatter_add(_x(T, dev, 3), 0, _i(T, dev, [0]),
                                                           1.0),
    "scatter_add_dim_float": lambda T, dev: T.scatter_add(
        _x(T, dev, 3), 0.0, _i(T, dev, [0]), _x(T, dev, 1)),
    "scatter_add_index_list": lambda T, dev: T.scatter_add(_x(T, dev, 3), 0, [0], _x(T, dev, 1)),
    "scatter_add_method_src_number": lambda T, dev: _x(T, dev, 3).scatter_add(
        0, _i(T, dev, [0]), 2),
    "scatter_out_requires_grad": lambda T, dev: T.scatter(
        _x(T, dev, 3, grad=True), 0, _i(T, dev, [0]), 1.0,
        out=T.empty(3, dtype=T.float64, device=dev)),
    "scatter_add_out_dtype": lambda T, dev: T.scatter_add(
        _x(T, dev, 3), 0, _i(T, dev, [0]), _x(T, dev, 1),
        out=T.empty(3, dtype=T.int64, device=dev)),
    "scatter_inplace_leaf": lambda T, dev: _x(T, dev, 3, grad=True).scatter_(
        0, _i(T, dev, [0]), 1.0),
}


def _sr(T: Any, dev: str, reduce: str, include_self: bool = True, dtype: str = "float32",
        self_data: Any = (1, 2, 3), src_data: Any = (5, -2, 4, 3),
        index: Any = (0, 0, 2, 0)) -> Any:
    x = T.tensor(self_data, dtype=getattr(T, dtype), device=dev)
    src = T.tensor(src_data, dtype=getattr(T, dtype), device=dev)
    return T.scatter_reduce(x, 0, _i(T, dev, list(index)), src, reduce, include_self=include_self)


def _sr_case(reduce: str, include_self: bool, dtype: str) -> Case:
    return lambda T, dev: _sr(T, dev, reduce, include_self, dtype)


SCATTER_REDUCE: dict[str, Case] = {
    **{f"scatter_reduce_{r}_{s}_{d}": _sr_case(r, s, d)
       for r in ("sum", "prod", "mean", "amax", "amin") for s in (True, False)
       for d in ("float32", "int64", "float64")},
    "scatter_reduce_mean_floor_negative": lambda T, dev: _sr(
        T, dev, "mean", False, "int64", src_data=(-3, -4, 1, 0), index=(1, 1, 0, 2)),
    "scatter_reduce_mean_uint8_wraps": lambda T, dev: _sr(
        T, dev, "mean", True, "uint8", src_data=(250, 251, 1, 1), index=(1, 1, 0, 0)),
    "scatter_reduce_prod_int_wraps": lambda T, dev: _sr(
        T, dev, "prod", True, "int64", src_data=(2 ** 40, 2 ** 40, 1, 1)),
    "scatter_reduce_amax_int_no_self": lambda T, dev: _sr(
        T, dev, "amax", False, "int64", src_data=(-5, -4, -7, -9), index=(1, 1, 2, 2)),
    "scatter_reduce_amin_int8": lambda T, dev: _sr(T, dev, "amin", False, "int8"),
    "scatter_reduce_bool_sum": lambda T, dev: _sr(
        T, dev, "sum", True, "bool", self_data=(True, False, False), src_data=(1, 0, 1, 0)),
    "scatter_reduce_bool_prod": lambda T, dev: _sr(
        T, dev, "prod", False, "bool", self_data=(True, False, False), src_data=(1, 0, 1, 1)),
    "scatter_reduce_bool_amax": lambda T, dev: _sr(
        T, dev, "amax", False, "bool", self_data=(True, False, False), src_data=(0, 0, 1, 0)),
    "scatter_reduce_bool_amin": lambda T, dev: _sr(
        T, dev, "amin", True, "bool", self_data=(True, False, True), src_data=(1, 1, 1, 0)),
    "scatter_reduce_half_mean": lambda T, dev: _sr(
        T, dev, "mean", True, "float16", src_data=(2000, 60000, 1, 2), index=(1, 1, 0, 0)),
    "scatter_reduce_amax_nan": lambda T, dev: _sr(
        T, dev, "amax", True, src_data=(float("nan"), 2, 3, 1)),
    "scatter_reduce_amin_nan_self": lambda T, dev: _sr(
        T, dev, "amin", True, self_data=(float("nan"), 0, 0)),
    "scatter_reduce_max_alias": lambda T, dev: _sr(T, dev, "max", True),
    "scatter_reduce_min_alias": lambda T, dev: _sr(T, dev, "min", False),
    "scatter_reduce_2d_dim1": lambda T, dev: T.scatter_reduce(
        _x(T, dev, 2, 3), 1, _i(T, dev, [[2, 2, 0, 2], [1, 1, 1, 0]]), _x(T, dev, 2, 4) - 3,
        "prod", include_self=False),
    "scatter_reduce_mean_index_smaller": lambda T, dev: T.scatter_reduce(
        _x(T, dev, 3, 3), 0, _i(T, dev, [[2, 2]]), _x(T, dev, 2, 3) + 1, "mean"),
    # refused
    "scatter_reduce_bad_reduce": lambda T, dev: _sr(T, dev, "foo"),
    "scatter_reduce_add": lambda T, dev: _sr(T, dev, "add"),
    "scatter_reduce_multiply": lambda T, dev: _sr(T, dev, "multiply"),
    "scatter_reduce_bad_reduce_after_src_dtype": lambda T, dev: T.scatter_reduce(
        _x(T, dev, 3), 0, _i(T, dev, [0]), _x(T, dev, 1, dtype="float64"), "foo"),
    "scatter_reduce_bad_reduce_after_index_dtype": lambda T, dev: T.scatter_reduce(
        _x(T, dev, 3), 0, _i(T, dev, [0], "float32"), _x(T, dev, 1), "foo"),
    "scatter_reduce_bad_reduce_after_dim": lambda T, dev: T.scatter_reduce(
        _x(T, dev, 3), 4, _i(T, dev, [0]), _x(T, dev, 1), "foo"),
    "scatter_reduce_bool_mean": lambda T, dev: _sr(T, dev, "mean", True, "bool",
                                                   self_data=(True, False, False)),
    "scatter_reduce_bool_mean_empty_index": lambda T, dev: T.scatter_reduce(
        T.zeros(3, dtype=T.bool, device=dev), 0, T.zeros(0, dtype=T.int64, device=dev),
        T.ones(1, dtype=T.bool, device=dev), "mean"),
    "scatter_reduce_reduce_not_str": lambda T, dev: T.scatter_reduce(
        _x(T, dev, 3), 0, _i(T, dev, [0]), _x(T, dev, 1), 1),
    "scatter_reduce_max_backward": lambda T, dev: _grads(
        T, T.scatter_reduce(x := _x(T, dev, 3, grad=True), 0, _i(T, dev, [0, 0]),
                            _f(T, dev, [1.0, 2.0], "float64"), "max"), x),
}


def _tk(T: Any, dev: str, index: Any, shape: tuple[int, ...] = (3, 4),
        idtype: str = "int64") -> Any:
    x = T.tensor(7.0, device=dev) if shape == () else _x(T, dev, *shape)
    return T.take(x, _i(T, dev, index, idtype))


def _put(T: Any, dev: str, index: Any, source: Any, accumulate: bool = False,
         shape: tuple[int, ...] = (3, 4), idtype: str = "int64") -> Any:
    return T.put(_x(T, dev, *shape), _i(T, dev, index, idtype), _f(T, dev, source),
                 accumulate=accumulate)


def _tad(T: Any, dev: str, index: Any, dim: Any = None, shape: tuple[int, ...] = (3, 4),
         idtype: str = "int64") -> Any:
    x = T.tensor(5.0, device=dev) if shape == () else _x(T, dev, *shape)
    return T.take_along_dim(x, _i(T, dev, index, idtype), dim)


FLAT: dict[str, Case] = {
    "take_basic": lambda T, dev: _tk(T, dev, [[0, 11], [5, 5]]),
    "take_negative": lambda T, dev: _tk(T, dev, [-1, -12]),
    "take_0d_index": lambda T, dev: _tk(T, dev, 3),
    "take_0d_self": lambda T, dev: _tk(T, dev, [0, 0, -1], ()),
    "take_empty": lambda T, dev: _tk(T, dev, [], (0,)),
    "take_transposed": lambda T, dev: T.take(_x(T, dev, 3, 4).t(), _i(T, dev, [1, 2, 5])),
    "take_method": lambda T, dev: _x(T, dev, 2, 2).take(_i(T, dev, [3, 0])),
    "take_out": lambda T, dev: T.take(_x(T, dev, 4), _i(T, dev, [3, 0]),
                                      out=T.empty(2, device=dev)),
    "take_out_of_range": lambda T, dev: _tk(T, dev, [12]),
    "take_negative_out_of_range": lambda T, dev: _tk(T, dev, [-13]),
    "take_first_bad_reported": lambda T, dev: _tk(T, dev, [[0, 15], [-20, 0]]),
    "take_int32": lambda T, dev: _tk(T, dev, [1], idtype="int32"),
    "take_float": lambda T, dev: _tk(T, dev, [1.0], idtype="float32"),
    "take_bool": lambda T, dev: _tk(T, dev, [True], idtype="bool"),
    "take_empty_self": lambda T, dev: _tk(T, dev, [0], (0,)),
    "take_index_list": lambda T, dev: T.take(_x(T, dev, 3), [1]),
    "put_basic": lambda T, dev: _put(T, dev, [0, 11], [100.0, 101.0]),
    "put_2d_index": lambda T, dev: T.put(_x(T, dev, 3, 4), _i(T, dev, [[0, 11]]),
                                         _f(T, dev, [100.0, 101.0])),
    "put_negative": lambda T, dev: _put(T, dev, [-1, -12], [100.0, 101.0]),
    "put_accumulate_duplicates": lambda T, dev: _put(T, dev, [1, 1, -11], [100.0, 101.0, 1.0],
                                                     True),
    "put_accumulate_int8": lambda T, dev: T.put(
        T.zeros(3, dtype=T.int8, device=dev), _i(T, dev, [1, 1]), _i(T, dev, [100, 100], "int8"),
        accumulate=True),
    "put_0d_source": lambda T, dev: T.put(_x(T, dev, 3, 4), _i(T, dev, 1),
                                          T.tensor(100.0, device=dev)),
    "put_empty": lambda T, dev: _put(T, dev, [], [], shape=(0,)),
    "put_method": lambda T, dev: _x(T, dev, 2, 2).put(_i(T, dev, [3]), _f(T, dev, [-1.0])),
    "put_inplace": lambda T, dev: _x(T, dev, 2, 2).put_(_i(T, dev, [3, 3]), _f(T, dev, [1.0, 2.0]),
                                                        accumulate=True),
    "put_transposed": lambda T, dev: T.put(_x(T, dev, 3, 4).t(), _i(T, dev, [1, 5]),
                                           _f(T, dev, [-1.0, -2.0])),
    "put_numel": lambda T, dev: _put(T, dev, [0, 11], [100.0, 101.0, 102.0]),
    "put_out_of_range": lambda T, dev: _put(T, dev, [12], [1.0]),
    "put_negative_out_of_range": lambda T, dev: _put(T, dev, [-13], [1.0], True),
    "put_int32": lambda T, dev: _put(T, dev, [1], [1.0], idtype="int32"),
    "put_float": lambda T, dev: _put(T, dev, [1], [1.0], idtype="float32"),
    "put_dtype": lambda T, dev: T.put(_x(T, dev, 3), _i(T, dev, [1]),
                                      _f(T, dev, [1.0], "float64")),
    "put_empty_self": lambda T, dev: _put(T, dev, [0], [1.0], shape=(0,)),
    "put_number_source": lambda T, dev: T.put(_x(T, dev, 3), _i(T, dev, [1]), 1.0),
    "take_along_dim_basic": lambda T, dev: _tad(T, dev, [[0], [2], [1]], 1),
    "take_along_dim_broadcast_index": lambda T, dev: _tad(T, dev, [[0, 3]], 1),
    "take_along_dim_broadcast_self": lambda T, dev: T.take_along_dim(
        _x(T, dev, 1, 4), _i(T, dev, [[0], [3], [2]]), 1),
    "take_along_dim_none": lambda T, dev: _tad(T, dev, [0, 11, 5]),
    "take_along_dim_none_2d": lambda T, dev: _tad(T, dev, [[0, 11], [5, 5]]),
    "take_along_dim_none_int32": lambda T, dev: _tad(T, dev, [0], idtype="int32"),
    "take_along_dim_neg_dim": lambda T, dev: _tad(T, dev, [[0], [2], [1]], -1),
    "take_along_dim_negative_wraps": lambda T, dev: _tad(T, dev, [[-1], [-4], [-5]], 1),
    "take_along_dim_too_large_wraps": lambda T, dev: _tad(T, dev, [[4], [5], [100]], 1),
    "take_along_dim_dim0_wraps": lambda T, dev: _tad(T, dev, [[1, 3, 4, -1]], 0),
    "take_along_dim_0d_self_none": lambda T, dev: _tad(T, dev, [0, 0], None, ()),
    "take_along_dim_empty": lambda T, dev: T.take_along_dim(
        T.zeros(0, 3, device=dev), T.zeros(0, 1, dtype=T.int64, device=dev), 1),
    "take_along_dim_empty_index": lambda T, dev: T.take_along_dim(
        _x(T, dev, 2, 3), T.zeros(2, 0, dtype=T.int64, device=dev), 1),
    "take_along_dim_method": lambda T, dev: _x(T, dev, 2, 3).take_along_dim(
        _i(T, dev, [[1], [2]]), dim=1),
    "take_along_dim_out": lambda T, dev: T.take_along_dim(
        _x(T, dev, 2, 3), _i(T, dev, [[1], [2]]), 1, out=T.empty(2, 1, device=dev)),
    "take_along_dim_none_out_of_range": lambda T, dev: _tad(T, dev, [12]),
    "take_along_dim_none_negative": lambda T, dev: _tad(T, dev, [-1]),
    "take_along_dim_none_float": lambda T, dev: _tad(T, dev, [0.0], idtype="float32"),
    "take_along_dim_int32": lambda T, dev: _tad(T, dev, [[0]], 1, idtype="int32"),
    "take_along_dim_float": lambda T, dev: _tad(T, dev, [[0.0]], 1, idtype="float32"),
    "take_along_dim_fewer_dims": lambda T, dev: _tad(T, dev, [0], 1),
    "take_along_dim_more_dims": lambda T, dev: _tad(T, dev, [[[0]]], 1),
    "take_along_dim_bad_broadcast": lambda T, dev: _tad(T, dev, [[0], [0]], 1),
    "take_along_dim_bad_broadcast_empty": lambda T, dev: T.take_along_dim(
        _x(T, dev, 2, 3), T.zeros(0, 5, dtype=T.int64, device=dev), 1),
    "take_along_dim_dim_too_large": lambda T, dev: _tad(T, dev, [[0]], 2),
    "take_along_dim_0d_self": lambda T, dev: _tad(T, dev, 0, 0, ()),
    "take_along_dim_0d_index": lambda T, dev: _tad(T, dev, 2, 0, (3,)),
    "take_along_dim_empty_dim": lambda T, dev: T.take_along_dim(
        T.zeros(3, 0, device=dev), _i(T, dev, [[0]]), 1),
    "take_along_dim_none_empty_self": lambda T, dev: T.take_along_dim(
        T.zeros(0, 3, device=dev), _i(T, dev, [0])),
    "take_along_dim_index_list": lambda T, dev: T.take_along_dim(_x(T, dev, 3), [0], 0),
}


def _scatter_into_view(T: Any, dev: str) -> Any:
    """``scatter_`` into a row of a non-leaf: the gradient flows through CopySlices."""
    x = _x(T, dev, 3, 4, grad=True)
    y = x * 1
    y[1].scatter_(0, _i(T, dev, [2, 0]), _f(T, dev, [7.0, 8.0], "float64"))
    return _grads(T, y, x)


def _written_after(T: Any, dev: str, op: Any, which: str = "self") -> Any:
    """``op`` on a non-leaf (``which``: its self or its source), an in-place write to that
    tensor, then backward: PyTorch refuses where its node saved the tensor, else runs."""
    x = _x(T, dev, 6, grad=True)
    s = _f(T, dev, [1.0] * 6, "float64", True)
    y, src = x * 1, s * 1
    out = op(T, dev, y, src)
    (y if which == "self" else src).add_(1)
    return T.autograd.grad((out * out).sum(), (x, s), allow_unused=True)


VERSIONS: dict[str, Any] = {
    "masked_select": lambda T, d, y, s: T.masked_select(y, y > 2),
    "masked_scatter": lambda T, d, y, s: T.masked_scatter(y, y > 2, s),
    "take": lambda T, d, y, s: T.take(y, _i(T, d, [1])),
    "put": lambda T, d, y, s: T.put(y, _i(T, d, [1]), s[:1]),
    "index_add": lambda T, d, y, s: T.index_add(y, 0, _i(T, d, [1]), s[:1]),
    "index_copy": lambda T, d, y, s: T.index_copy(y, 0, _i(T, d, [1]), s[:1]),
    "index_fill": lambda T, d, y, s: T.index_fill(y, 0, _i(T, d, [1]), s[0]),
    "scatter": lambda T, d, y, s: T.scatter(y, 0, _i(T, d, [1]), s[:1]),
    "scatter_add": lambda T, d, y, s: T.scatter_add(y, 0, _i(T, d, [1]), s[:1]),
    "scatter_reduce_sum": lambda T, d, y, s: T.scatter_reduce(y, 0, _i(T, d, [1]), s[:1], "sum"),
    "scatter_reduce_amax": lambda T, d, y, s: T.scatter_reduce(y, 0, _i(T, d, [1]), s[:1],
                                                               "amax"),
    "index_reduce_mean": lambda T, d, y, s: T.index_reduce(y, 0, _i(T, d, [1]), s[:1], "mean"),
    "index_put": lambda T, d, y, s: T.index_put(y, (_i(T, d, [1]),), s[:1]),
    "index_put_accumulate": lambda T, d, y, s: T.index_put(y, (_i(T, d, [1]),), s[:1], True),
}


def _g(T: Any, dev: str, *shape: int) -> Any:
    return _x(T, dev, *shape, grad=True)


def _sr_grad_case(reduce: str, include_self: bool) -> Case:
    """Ties (with ``self`` too), zeros in ``self`` and ``src``, a position that gets nothing."""
    def case(T: Any, dev: str) -> Any:
        x = _f(T, dev, [2.0, 0.0, 3.0, -1.0], "float64", True)
        y = _f(T, dev, [2.0, 3.0, 0.0, 5.0, 0.0, 2.0], "float64", True)
        out = T.scatter_reduce(x, 0, _i(T, dev, [0, 0, 1, 1, 2, 0]), y, reduce,
                               include_self=include_self)
        return _grads(T, out, x, y)

    return case


def _ir_grad_case(reduce: str, include_self: bool) -> Case:
    def case(T: Any, dev: str) -> Any:
        x = _f(T, dev, [[2.0, 1.0], [0.0, 3.0], [3.0, 0.0]], "float64", True)
        y = _f(T, dev, [[2.0, 1.0], [3.0, 1.0], [0.0, 3.0], [5.0, 0.0], [0.0, 2.0]],
               "float64", True)
        out = T.index_reduce(x, 0, _i(T, dev, [0, 0, 1, 1, 2]), y, reduce,
                             include_self=include_self)
        return _grads(T, out, x, y)

    return case


GRADS: dict[str, Case] = {
    "grad_scatter": lambda T, dev: _grads(
        T, T.scatter(x := _g(T, dev, 3, 4), 0, _i(T, dev, [[2, 0, 1, 2]]),
                     s := _g(T, dev, 1, 4) - 7), x, s),
    "grad_scatter_duplicate_index_src": lambda T, dev: T.autograd.grad(
        T.scatter(_g(T, dev, 3), 0, _i(T, dev, [1, 1]), s := _g(T, dev, 2)).sum(), s),
    "grad_scatter_value": lambda T, dev: _grads(
        T, T.scatter(x := _g(T, dev, 3, 4), 1, _i(T, dev, [[3], [0]]), 2.0), x),
    "grad_scatter_0d_src": lambda T, dev: _grads(
        T, T.scatter(x := _g(T, dev, 3), 0, _i(T, dev, [1]),
                     s := _f(T, dev, 5.0, "float64", True)), x, s),
    "grad_scatter_src_larger_than_index": lambda T, dev: _grads(
        T, T.scatter(x := _g(T, dev, 3, 4), 0, _i(T, dev, [[1, 2]]), s := _g(T, dev, 2, 4)),
        x, s),
    "grad_scatter_src_larger_self_only": lambda T, dev: _grads(
        T, T.scatter(x := _g(T, dev, 3, 4), 0, _i(T, dev, [[1, 2]]), _x(T, dev, 2, 4,
                                                                         dtype="float64")), x),
    "grad_scatter_add_src_larger": lambda T, dev: _grads(
        T, T.scatter_add(x := _g(T, dev, 3, 4), 0, _i(T, dev, [[1, 2]]),
                         s := _g(T, dev, 2, 4)), x, s),
    "grad_scatter_legacy": lambda T, dev: _grads(
        T, T.scatter(x := _g(T, dev, 3), 0, _i(T, dev, [0]), _f(T, dev, [1.0], "float64"),
                     reduce="add"), x),
    "grad_scatter_legacy_value": lambda T, dev: _grads(
        T, T.scatter(x := _g(T, dev, 3), 0, _i(T, dev, [0]), 2.0, reduce="multiply"), x),
    "grad_scatter_add": lambda T, dev: _grads(
        T, T.scatter_add(x := _g(T, dev, 3, 2), 1, _i(T, dev, [[0, 0, 1], [1, 1, 1]]),
                         s := _g(T, dev, 2, 3) - 2), x, s),
    **{f"grad_scatter_reduce_{r}_{s}": _sr_grad_case(r, s)
       for r in ("sum", "prod", "mean", "amax", "amin") for s in (True, False)},
    "grad_scatter_reduce_prod_two_zeros": lambda T, dev: _grads(
        T, T.scatter_reduce(x := _f(T, dev, [2.0, 3.0], "float64", True), 0,
                            _i(T, dev, [0, 0, 1]), y := _f(T, dev, [0.0, 0.0, 1.0], "float64",
                                                           True), "prod"), x, y),
    "grad_scatter_reduce_amax_ties_self": lambda T, dev: _grads(
        T, T.scatter_reduce(x := _f(T, dev, [2.0, 0.0, 0.0], "float64", True), 0,
                            _i(T, dev, [0, 0, 1]), y := _f(T, dev, [2.0, 2.0, -1.0], "float64",
                                                           True), "amax", include_self=False),
        x, y),
    "double_scatter_reduce_prod_two_zeros": lambda T, dev: _double(
        T, T.scatter_reduce(x := _f(T, dev, [2.0, 3.0], "float64", True), 0,
                            _i(T, dev, [0, 0, 1]), y := _f(T, dev, [0.0, 0.0, 1.0], "float64",
                                                           True), "prod"), x, y),
    "double_scatter_reduce_prod_one_zero": lambda T, dev: _double(
        T, T.scatter_reduce(x := _f(T, dev, [2.0, 3.0], "float64", True), 0,
                            _i(T, dev, [0, 0, 1]), y := _f(T, dev, [0.0, 4.0, 1.0], "float64",
                                                           True), "prod"), x, y),
    "double_scatter_reduce_amax": lambda T, dev: _double(
        T, T.scatter_reduce(x := _f(T, dev, [2.0, 3.0], "float64", True), 0,
                            _i(T, dev, [0, 0, 1]), y := _f(T, dev, [5.0, 4.0, 1.0], "float64",
                                                           True), "amax"), x, y),
    "double_scatter_reduce_mean": lambda T, dev: _double(
        T, T.scatter_reduce(x := _f(T, dev, [2.0, 3.0], "float64", True), 0,
                            _i(T, dev, [0, 0, 1]), y := _f(T, dev, [5.0, 4.0, 1.0], "float64",
                                                           True), "mean"), x, y),
    "grad_index_add": lambda T, dev: _grads(
        T, T.index_add(x := _g(T, dev, 3, 2), 0, _i(T, dev, [2, 2, 0]), s := _g(T, dev, 3, 2),
                       alpha=-1.5), x, s),
    "grad_index_add_0d": lambda T, dev: _grads(
        T, T.index_add(x := _f(T, dev, 1.0, "float64", True), 0, _i(T, dev, [0]),
                       s := _f(T, dev, 5.0, "float64", True), alpha=3), x, s),
    "grad_index_copy": lambda T, dev: _grads(
        T, T.index_copy(x := _g(T, dev, 2, 3), 1, _i(T, dev, [2, 0]), s := _g(T, dev, 2, 2)),
        x, s),
    "grad_index_copy_0d_source": lambda T, dev: _grads(
        T, T.index_copy(x := _g(T, dev, 3), 0, _i(T, dev, [1]),
                        s := _f(T, dev, 5.0, "float64", True)), x, s),
    "grad_index_fill": lambda T, dev: _grads(
        T, T.index_fill(x := _g(T, dev, 3, 2), 0, _i(T, dev, [2, -3]), 1.5), x),
    "grad_index_fill_tensor_value": lambda T, dev: _grads(
        T, T.index_fill(x := _g(T, dev, 3, 2), 0, _i(T, dev, [2, 2]),
                        v := _f(T, dev, 1.5, "float64", True)), x, v),
    "grad_index_fill_float32_value": lambda T, dev: _grads(
        T, T.index_fill(x := _g(T, dev, 3), 0, _i(T, dev, [2]),
                        v := _f(T, dev, 1.5, "float32", True)), x, v),
    **{f"grad_index_reduce_{r}_{s}": _ir_grad_case(r, s)
       for r in ("prod", "mean", "amax", "amin") for s in (True, False)},
    "grad_index_put": lambda T, dev: _grads(
        T, T.index_put(x := _g(T, dev, 3, 2), (_i(T, dev, [2, 0]),), v := _g(T, dev, 2)),
        x, v),
    "grad_index_put_accumulate": lambda T, dev: _grads(
        T, T.index_put(x := _g(T, dev, 3, 2), (_i(T, dev, [2, 2]), _i(T, dev, [1, 1])),
                       v := _g(T, dev, 1), accumulate=True), x, v),
    "grad_index_put_mask": lambda T, dev: _grads(
        T, T.index_put(x := _g(T, dev, 3), (_m(T, dev, [True, False, True]),),
                       v := _g(T, dev, 1), accumulate=True), x, v),
    "grad_masked_select": lambda T, dev: _grads(
        T, T.masked_select(x := _g(T, dev, 3), _m(T, dev, [[True, False, True],
                                                            [True, True, False]])), x),
    "grad_masked_scatter": lambda T, dev: _grads(
        T, T.masked_scatter(x := _g(T, dev, 2, 3), _m(T, dev, [True, False, True]),
                            s := _g(T, dev, 10)), x, s),
    "grad_masked_scatter_broadcast": lambda T, dev: _grads(
        T, T.masked_scatter(x := _g(T, dev, 3), _m(T, dev, [[True, False, True], [True] * 3]),
                            s := _g(T, dev, 2, 5)), x, s),
    "grad_take": lambda T, dev: _grads(T, T.take(x := _g(T, dev, 2, 3), _i(T, dev, [[5, -1],
                                                                                  [0, 0]])), x),
    "grad_put": lambda T, dev: _grads(
        T, T.put(x := _g(T, dev, 2, 3), _i(T, dev, [[5, 0]]), s := _g(T, dev, 2)), x, s),
    "grad_put_accumulate": lambda T, dev: _grads(
        T, T.put(x := _g(T, dev, 2, 3), _i(T, dev, [-1, 5, 0]), s := _g(T, dev, 3),
                 accumulate=True), x, s),
    "grad_take_along_dim": lambda T, dev: _grads(
        T, T.take_along_dim(x := _g(T, dev, 3, 4), _i(T, dev, [[5], [-1], [2]]), 1), x),
    "grad_take_along_dim_broadcast": lambda T, dev: _grads(
        T, T.take_along_dim(x := _g(T, dev, 1, 4), _i(T, dev, [[0], [3], [3]]), 1), x),
    "grad_inplace_scatter_view": lambda T, dev: _scatter_into_view(T, dev),
    "grad_fn_names": lambda T, dev: [
        T.scatter(x := _g(T, dev, 3), 0, _i(T, dev, [0]), 1.0).grad_fn.name(),
        T.index_fill(x, 0, _i(T, dev, [0]), T.tensor(1.0, dtype=T.float64,
                                                     device=dev)).grad_fn.name(),
        T.index_put(x, (_i(T, dev, [0]),), _f(T, dev, [1.0], "float64"),
                    accumulate=True).grad_fn.name(),
        T.take_along_dim(x, _i(T, dev, [0])).grad_fn.name(),
        T.masked_scatter(x, _m(T, dev, [True] * 3), x).grad_fn.name(),
        x.index_copy(0, _i(T, dev, [0]), _f(T, dev, [1.0], "float64")).grad_fn.name(),
        x.put(_i(T, dev, [0]), _f(T, dev, [1.0], "float64")).grad_fn.name(),
    ],
}


def _expanded(T: Any, dev: str) -> Any:
    return T.zeros(1, 3, device=dev).expand(2, 3)


EXPANDED: dict[str, Case] = {
    # PyTorch warns and writes for index_put_/index_fill_: tests/ops/test_scatter.py
    "expanded_index_fill_bad_index": lambda T, dev: _expanded(T, dev).index_fill_(
        1, _i(T, dev, [5]), 2.0),
    # refused
    "expanded_scatter": lambda T, dev: _expanded(T, dev).scatter_(0, _i(T, dev, [[1, 0, 1]]),
                                                                  5.0),
    "expanded_scatter_add": lambda T, dev: _expanded(T, dev).scatter_add_(
        0, _i(T, dev, [[1]]), T.ones(1, 1, device=dev)),
    "expanded_scatter_reduce": lambda T, dev: _expanded(T, dev).scatter_reduce_(
        1, _i(T, dev, [[1]]), T.ones(2, 1, device=dev), "prod"),
    "expanded_index_add": lambda T, dev: _expanded(T, dev).index_add_(
        0, _i(T, dev, [1]), T.ones(1, 3, device=dev)),
    "expanded_index_copy": lambda T, dev: _expanded(T, dev).index_copy_(
        1, _i(T, dev, [1]), T.ones(2, 1, device=dev)),
    "expanded_index_reduce": lambda T, dev: _expanded(T, dev).index_reduce_(
        1, _i(T, dev, [1]), T.ones(2, 1, device=dev), "prod"),
    "expanded_masked_scatter": lambda T, dev: _expanded(T, dev).masked_scatter_(
        _m(T, dev, [True, False, True]), T.ones(6, device=dev)),
    "expanded_put": lambda T, dev: _expanded(T, dev).put_(_i(T, dev, [1]), _f(T, dev, [2.0])),
}


def _version_case(op: Any, which: str) -> Case:
    return lambda T, dev: _written_after(T, dev, op, which)


CASES: dict[str, Case] = {
    **SCATTER, **SCATTER_REDUCE, **FLAT, **GRADS, **EXPANDED,
    **{f"written_after_{k}_{w}": _version_case(op, w) for k, op in VERSIONS.items()
       for w in ("self", "source")},
}

test_misuse = catalogue_test(CASES)
