"""Misuse catalogue: ops with an index argument. ``gather`` (legal index shapes smaller than the
input, and every refusal: dtype, rank, size, values, dim), ``index_select``, ``masked_fill`` and
``masked_fill_``, ``where``, and ``t[key]`` / ``t[key] = value`` (several Ellipses, integers
out of range, 0-d tensors, index dtypes, masks, broadcasting); indices out of range where the
result is empty; ints among index arrays; argument positions of the method forms; and ``~`` /
``bitwise_not`` (the rest of ``compare.py``'s entry points).

Where torch runs, the program returns values (and gradients) that must match; a program that
reads gradients runs in float64. Keys whose outcome in PyTorch depends on reading past the end
of its size array (an integer placed after several Ellipses ran off the last dimension) are left
out: ``autograd_gpu`` reports size 0 there, which is what PyTorch usually reads.
"""

from __future__ import annotations

from typing import Any

from tests.misuse._catalogue import Case, catalogue_test


def _x(T: Any, dev: str, *shape: int, grad: bool = False) -> Any:
    """``arange`` of ``shape`` (float64 when it takes a gradient)."""
    n = 1
    for s in shape:
        n *= s
    dtype = T.float64 if grad else T.float32
    return T.arange(n, dtype=dtype, device=dev).reshape(shape).requires_grad_(grad)


def _i(T: Any, dev: str, data: Any, dtype: str = "int64") -> Any:
    return T.tensor(data, dtype=getattr(T, dtype), device=dev)


def _m(T: Any, dev: str, data: Any) -> Any:
    return T.tensor(data, dtype=T.bool, device=dev)


def _grads(T: Any, out: Any, *inputs: Any) -> Any:
    """``out`` and the gradients of ``sum(out ** 2)`` with respect to ``inputs``."""
    return (out,) + T.autograd.grad((out * out).sum(), inputs)


def _double(T: Any, x: Any, y: Any) -> Any:
    """Second derivative through ``y = f(x)``: the gradient of ``sum(g ** 2)``,
    ``g = d sum(y ** 3) / dx``."""
    (g,) = T.autograd.grad((y * y * y).sum(), x, create_graph=True)
    return T.autograd.grad((g * g).sum(), x)


def _set(x: Any, key: Any, value: Any) -> Any:
    x[key] = value
    return x


def _set_grad(T: Any, dev: str, key: Any, value: Any) -> Any:
    x = _x(T, dev, 2, 3, 4, grad=True)
    y = x * 1
    y[key] = value
    return _grads(T, y, x)


def _gather(T: Any, dev: str, shape: tuple[int, ...], dim: int, index: Any,
            dtype: str = "int64") -> Any:
    return T.gather(_x(T, dev, *shape), dim, _i(T, dev, index, dtype))


GATHER: dict[str, Case] = {
    # legal: the index may be smaller than the input outside dim (never broadcast)
    "gather_smaller_dim0": lambda T, dev: _gather(T, dev, (3, 3), 0, [[0], [2]]),
    "gather_smaller_dim1": lambda T, dev: _gather(T, dev, (3, 4), 1, [[3, 0], [1, 1]]),
    "gather_longer_along_dim": lambda T, dev: _gather(T, dev, (3, 3), 0, [[0], [1], [2], [2]]),
    "gather_3d_partial": lambda T, dev: _gather(T, dev, (2, 3, 4), 1, [[[2, 1]], [[0, 0]]]),
    "gather_neg_dim": lambda T, dev: _gather(T, dev, (3, 4), -1, [[3], [0]]),
    "gather_int32_index": lambda T, dev: _gather(T, dev, (3, 3), 0, [[2, 1]], "int32"),
    "gather_0d_input": lambda T, dev: T.gather(T.tensor(5.0, device=dev), 0, _i(T, dev, [0, 0])),
    "gather_0d_index": lambda T, dev: _gather(T, dev, (3,), 0, 2),
    "gather_empty_index": lambda T, dev: _gather(T, dev, (3, 3), 0, [[]]),
    "gather_empty_index_wider": lambda T, dev: T.gather(
        _x(T, dev, 3, 3), 0, T.zeros(0, 7, dtype=T.int64, device=dev)),
    "gather_int_input": lambda T, dev: T.gather(
        T.arange(9, device=dev).reshape(3, 3), 1, _i(T, dev, [[2], [0]])),
    "gather_grad_partial": lambda T, dev: _grads(
        T, T.gather(x := _x(T, dev, 3, 4, grad=True), 1, _i(T, dev, [[3, 3], [0, 1]])), x),
    "gather_double_backward_partial": lambda T, dev: _double(
        T, x := _x(T, dev, 3, 3, grad=True), T.gather(x, 0, _i(T, dev, [[2], [0]]))),
    # refused
    "gather_index_fewer_dims": lambda T, dev: _gather(T, dev, (3, 3), 0, [0, 2]),
    "gather_index_more_dims": lambda T, dev: _gather(T, dev, (3, 3), 0, [[[0]]]),
    "gather_0d_input_2d_index": lambda T, dev: T.gather(
        T.tensor(5.0, device=dev), 0, _i(T, dev, [[0]])),
    "gather_index_wider_outside_dim": lambda T, dev: _gather(T, dev, (3, 3), 0, [[0, 1, 2, 0]]),
    "gather_index_wider_3d": lambda T, dev: _gather(
        T, dev, (2, 3, 4), 1, [[[2, 1]], [[0, 0]], [[0, 0]]]),
    "gather_value_too_large": lambda T, dev: _gather(T, dev, (3, 3), 0, [[1, 3]]),
    "gather_value_negative": lambda T, dev: _gather(T, dev, (3, 3), 0, [[1, -1]]),
    "gather_value_first_bad_reported": lambda T, dev: _gather(T, dev, (3, 3), 0, [[1, -2], [7, 0]]),
    "gather_value_empty_dim": lambda T, dev: T.gather(
        T.zeros(3, 0, device=dev), 1, _i(T, dev, [[0]])),
    "gather_float_index": lambda T, dev: _gather(T, dev, (3, 3), 0, [[0]], "float32"),
    "gather_int16_index": lambda T, dev: _gather(T, dev, (3, 3), 0, [[0]], "int16"),
    "gather_uint8_index": lambda T, dev: _gather(T, dev, (3, 3), 0, [[0]], "uint8"),
    "gather_bool_index": lambda T, dev: _gather(T, dev, (3, 3), 0, [[True]], "bool"),
    "gather_dtype_before_rank": lambda T, dev: _gather(T, dev, (3, 3), 0, [1.0], "float32"),
    "gather_dim_too_large": lambda T, dev: _gather(T, dev, (3, 3), 2, [[0]]),
    "gather_dim_too_small": lambda T, dev: _gather(T, dev, (3, 3), -3, [[0]]),
    "gather_0d_dim_1": lambda T, dev: T.gather(T.tensor(5.0, device=dev), 1, _i(T, dev, 0)),
    "gather_index_list": lambda T, dev: T.gather(_x(T, dev, 3, 3), 0, [[0]]),
}


def _select(T: Any, dev: str, shape: tuple[int, ...], dim: int, index: Any,
            dtype: str = "int64") -> Any:
    x = T.tensor(5.0, device=dev) if shape == () else _x(T, dev, *shape)
    return T.index_select(x, dim, _i(T, dev, index, dtype))


INDEX_SELECT: dict[str, Case] = {
    "index_select_0d_index": lambda T, dev: _select(T, dev, (3, 3), 0, 1),
    "index_select_repeats": lambda T, dev: _select(T, dev, (3, 4), 1, [3, 0, 3]),
    "index_select_int32": lambda T, dev: _select(T, dev, (3, 3), 0, [2], "int32"),
    "index_select_empty": lambda T, dev: _select(T, dev, (3, 3), 1, []),
    "index_select_0d_input": lambda T, dev: _select(T, dev, (), 0, [0]),
    "index_select_0d_input_0d_index": lambda T, dev: _select(T, dev, (), -1, 0),
    "index_select_grad": lambda T, dev: _grads(
        T, T.index_select(x := _x(T, dev, 3, 2, grad=True), 0, _i(T, dev, [2, 2, 0])), x),
    "index_select_2d_index": lambda T, dev: _select(T, dev, (3, 3), 0, [[0, 1]]),
    "index_select_2d_one_value": lambda T, dev: _select(T, dev, (3, 3), 0, [[0]]),
    "index_select_2d_float_index": lambda T, dev: _select(T, dev, (3, 3), 0, [[1.0]], "float32"),
    "index_select_too_large": lambda T, dev: _select(T, dev, (3, 3), 0, [0, 3]),
    "index_select_negative": lambda T, dev: _select(T, dev, (3, 3), 0, [-1]),
    "index_select_float_index": lambda T, dev: _select(T, dev, (3, 3), 0, [1.0], "float32"),
    "index_select_bool_index": lambda T, dev: _select(T, dev, (3, 3), 0, [True], "bool"),
    "index_select_int16_index": lambda T, dev: _select(T, dev, (3, 3), 0, [1], "int16"),
    "index_select_dim_too_large": lambda T, dev: _select(T, dev, (3, 3), 2, [1]),
    "index_select_0d_input_two_values": lambda T, dev: _select(T, dev, (), 0, [0, 0]),
    "index_select_0d_input_out_of_range": lambda T, dev: _select(T, dev, (), 0, [1]),
    "index_select_empty_dim": lambda T, dev: T.index_select(
        T.zeros(0, 3, device=dev), 0, _i(T, dev, [0])),
    "index_select_index_list": lambda T, dev: T.index_select(_x(T, dev, 3, 3), 0, [0]),
}

MASK = [[True, False, True], [False, False, True]]


def _fill(T: Any, dev: str, mask: Any, value: Any = -1.0, shape: tuple[int, ...] = (2, 3)) -> Any:
    return T.masked_fill(_x(T, dev, *shape), mask, value)


MASKED_FILL: dict[str, Case] = {
    "masked_fill_broadcast_mask": lambda T, dev: _fill(T, dev, _m(T, dev, [True, False, True])),
    "masked_fill_mask_grows_result": lambda T, dev: _fill(T, dev, _m(T, dev, [MASK, MASK])),
    "masked_fill_value_0d_tensor": lambda T, dev: _fill(T, dev, _m(T, dev, MASK),
                                                        T.tensor(7, device=dev)),
    "masked_fill_bool_value": lambda T, dev: _fill(T, dev, _m(T, dev, MASK), True),
    "masked_fill_float_into_int": lambda T, dev: T.masked_fill(
        T.arange(3, device=dev), _m(T, dev, [True, False, True]), 2.7),
    "masked_fill_uint8_wraps_negative": lambda T, dev: T.masked_fill(
        T.zeros(2, dtype=T.uint8, device=dev), _m(T, dev, [True, True]), -255),
    "masked_fill_grad": lambda T, dev: _grads(
        T, T.masked_fill(x := _x(T, dev, 2, 3, grad=True), _m(T, dev, MASK),
                         v := T.tensor(2.0, dtype=T.float64, device=dev, requires_grad=True)),
        x, v),
    "masked_fill_grad_fn": lambda T, dev: [
        T.masked_fill(_x(T, dev, 2, 3, grad=True), _m(T, dev, MASK), v).grad_fn.name()
        for v in (1.0, T.tensor(1.0, dtype=T.float64, device=dev))],
    "masked_fill__grad_fn": lambda T, dev: (_x(T, dev, 2, 3, grad=True) * 1).masked_fill_(
        _m(T, dev, MASK), 0.0).grad_fn.name(),
    "masked_fill__in_place": lambda T, dev: _x(T, dev, 2, 3).masked_fill_(
        _m(T, dev, [False, True, True]), 0.5),
    "masked_fill_float_mask": lambda T, dev: _fill(T, dev, T.tensor(MASK, device=dev).float()),
    "masked_fill_double_mask": lambda T, dev: _fill(T, dev, _i(T, dev, MASK, "float64")),
    "masked_fill_long_mask": lambda T, dev: _fill(T, dev, _i(T, dev, MASK)),
    "masked_fill_int_mask": lambda T, dev: _fill(T, dev, _i(T, dev, MASK, "int32")),
    "masked_fill_uint8_mask": lambda T, dev: _fill(T, dev, _i(T, dev, MASK, "uint8")),
    "masked_fill_int8_mask": lambda T, dev: _fill(T, dev, _i(T, dev, MASK, "int8")),
    "masked_fill__float_mask": lambda T, dev: _x(T, dev, 2, 3).masked_fill_(
        _i(T, dev, MASK, "float32"), 1.0),
    "masked_fill_mask_does_not_broadcast": lambda T, dev: _fill(T, dev, _m(T, dev, [True, False])),
    "masked_fill_broadcast_before_dtype": lambda T, dev: _fill(T, dev, _i(T, dev, [1, 0], "int32")),
    "masked_fill__mask_grows": lambda T, dev: T.zeros(3, device=dev).masked_fill_(
        _m(T, dev, [[True, False, True]]), 1.0),
    "masked_fill__mask_does_not_broadcast": lambda T, dev: _x(T, dev, 2, 3).masked_fill_(
        _m(T, dev, [True, False]), 1.0),
    "masked_fill_value_1d": lambda T, dev: _fill(T, dev, _m(T, dev, MASK),
                                                 T.tensor([1.0], device=dev)),
    "masked_fill_value_overflows_uint8": lambda T, dev: T.masked_fill(
        T.zeros(2, dtype=T.uint8, device=dev), _m(T, dev, [True, True]), 300),
    "masked_fill_value_overflows_int8": lambda T, dev: T.masked_fill(
        T.zeros(2, dtype=T.int8, device=dev), _m(T, dev, [True, True]), -129),
    "masked_fill_value_overflows_float": lambda T, dev: _fill(T, dev, _m(T, dev, MASK), 1e39),
    "masked_fill_value_str": lambda T, dev: _fill(T, dev, _m(T, dev, MASK), "a"),
    "masked_fill_value_none": lambda T, dev: _fill(T, dev, _m(T, dev, MASK), None),
    "masked_fill_mask_list": lambda T, dev: _fill(T, dev, MASK),
}


def _where(T: Any, dev: str, cond: Any, a: Any = None, b: Any = None) -> Any:
    x = _x(T, dev, 2, 3)
    return T.where(cond, x if a is None else a, -x if b is None else b)


WHERE: dict[str, Case] = {
    "where_broadcast_cond": lambda T, dev: _where(T, dev, _m(T, dev, [[[True, False, True]]])),
    "where_scalars": lambda T, dev: T.where(_m(T, dev, MASK), 1.0, 0),
    "where_int_scalars": lambda T, dev: T.where(_m(T, dev, MASK), 1, 0),
    "where_mixed_dtypes": lambda T, dev: _where(
        T, dev, _m(T, dev, MASK), b=T.arange(6, device=dev).reshape(2, 3)),
    "where_grad": lambda T, dev: _grads(
        T, T.where(_m(T, dev, [True, False, True]), x := _x(T, dev, 2, 3, grad=True),
                   y := _x(T, dev, 3, grad=True)), x, y),
    "where_one_arg_float": lambda T, dev: T.where(T.tensor([1.0, 0.0, 2.0], device=dev)),
    "where_float_cond": lambda T, dev: _where(T, dev, T.tensor(MASK, device=dev).float()),
    "where_long_cond": lambda T, dev: _where(T, dev, _i(T, dev, MASK)),
    "where_int8_cond": lambda T, dev: _where(T, dev, _i(T, dev, MASK, "int8")),
    "where_half_cond": lambda T, dev: _where(T, dev, _i(T, dev, MASK, "float16")),
    "where_method_float_cond": lambda T, dev: _x(T, dev, 2, 3).where(
        _i(T, dev, MASK, "float32"), 0.0),
    "where_cond_does_not_broadcast": lambda T, dev: _where(T, dev, _m(T, dev, [True, False])),
    "where_other_does_not_broadcast": lambda T, dev: _where(
        T, dev, _m(T, dev, [True, False, True]), b=_x(T, dev, 2)),
    "where_three_way_broadcast_error": lambda T, dev: T.where(
        _m(T, dev, [[True, False]]), _x(T, dev, 3, 1), _x(T, dev, 4, 1, 5)),
    "where_cond_list": lambda T, dev: _where(T, dev, MASK),
    "where_cond_python_bool": lambda T, dev: _where(T, dev, True),
    "where_two_args": lambda T, dev: T.where(_m(T, dev, MASK), _x(T, dev, 2, 3)),
    "where_input_none": lambda T, dev: T.where(_m(T, dev, MASK), None, _x(T, dev, 2, 3)),
    "where_other_str": lambda T, dev: _where(T, dev, _m(T, dev, MASK), b="a"),
}


def _get(T: Any, dev: str, key: Any, shape: tuple[int, ...] = (2, 3, 4)) -> Any:
    x = T.tensor(3.0, device=dev) if shape == () else _x(T, dev, *shape)
    k = key(T, dev) if callable(key) else key
    return x[k]


GETITEM: dict[str, Case] = {
    # several Ellipses: each stands for the dims no other entry names
    "get_two_ellipses": lambda T, dev: _get(T, dev, (..., 0, ...)),
    "get_two_ellipses_slice": lambda T, dev: _get(T, dev, (..., slice(1, None), ...)),
    "get_two_ellipses_none": lambda T, dev: _get(T, dev, (0, ..., None, ...)),
    "get_three_ellipses": lambda T, dev: _get(T, dev, (..., ..., ...)),
    "get_two_ellipses_adv": lambda T, dev: _get(T, dev, lambda T, dev: (..., _i(T, dev, [0, 1]),
                                                                        ...)),
    "get_two_ellipses_two_adv": lambda T, dev: _get(
        T, dev, lambda T, dev: (_i(T, dev, [0, 1]), ..., _i(T, dev, [0, 1]))),
    "get_two_ellipses_grad": lambda T, dev: _grads(
        T, (x := _x(T, dev, 2, 3, 4, grad=True))[..., 1, ..., :], x),
    "get_two_ellipses_grad_fn": lambda T, dev: _x(T, dev, 2, 3, 4, grad=True)[
        ..., 0, ...].grad_fn.name(),
    "get_two_ellipses_mask": lambda T, dev: _get(
        T, dev, lambda T, dev: (_m(T, dev, [[True, False, True], [False, True, True]]), ..., ...)),
    "get_two_ellipses_0d": lambda T, dev: _get(T, dev, (..., None, ...), ()),
    "get_two_ellipses_slice_past_end": lambda T, dev: _get(T, dev, (..., 0, ..., slice(1, None))),
    "get_two_ellipses_none_past_end": lambda T, dev: _get(T, dev, (..., None, ..., None)),
    "get_two_ellipses_adv_past_end": lambda T, dev: _get(
        T, dev, lambda T, dev: (..., ..., _i(T, dev, [0]))),
    "get_two_ellipses_too_many": lambda T, dev: _get(T, dev, (..., 0, 0, 0, 0, ...)),
    # integers out of range: PyTorch names the entry's position in the key
    "get_int_after_none": lambda T, dev: _get(T, dev, (None, 5)),
    "get_int_after_two_nones": lambda T, dev: _get(T, dev, (None, None, 0, 7)),
    "get_int_after_ellipsis": lambda T, dev: _get(T, dev, (..., 7)),
    "get_negative_int": lambda T, dev: _get(T, dev, -3),
    "get_too_many_ints": lambda T, dev: _get(T, dev, (0, 0, 0, 0)),
    "get_too_many_with_tensor": lambda T, dev: _get(T, dev, lambda T, dev: (0, 0, 0,
                                                                           _i(T, dev, [0]))),
    # 0-d tensors
    "get_0d_int_zero": lambda T, dev: _get(T, dev, 0, ()),
    "get_0d_int_one": lambda T, dev: _get(T, dev, 1, ()),
    "get_0d_slice": lambda T, dev: _get(T, dev, slice(None), ()),
    "get_0d_int_in_tuple": lambda T, dev: _get(T, dev, (0,), ()),
    "get_0d_tensor_index": lambda T, dev: _get(T, dev, lambda T, dev: _i(T, dev, 0), ()),
    "get_0d_true": lambda T, dev: _get(T, dev, True, ()),
    "get_0d_none": lambda T, dev: _get(T, dev, None, ()),
    # index dtypes and masks
    "get_int32_index": lambda T, dev: _get(T, dev, lambda T, dev: _i(T, dev, [1, 0], "int32")),
    "get_int16_index": lambda T, dev: _get(T, dev, lambda T, dev: _i(T, dev, [1, 0], "int16")),
    "get_int8_index": lambda T, dev: _get(T, dev, lambda T, dev: _i(T, dev, [1, 0], "int8")),
    "get_float_index": lambda T, dev: _get(T, dev, lambda T, dev: _i(T, dev, [1.0], "float32")),
    "get_uint8_mask": lambda T, dev: _get(T, dev, lambda T, dev: _i(T, dev, [1, 0], "uint8")),
    "get_mask_wrong_size": lambda T, dev: _get(T, dev, lambda T, dev: _m(T, dev, [True] * 3)),
    "get_tensor_out_of_range": lambda T, dev: _get(T, dev, lambda T, dev: (
        slice(None), _i(T, dev, [3]))),
    "get_tensor_negative_out_of_range": lambda T, dev: _get(T, dev, lambda T, dev: _i(T, dev,
                                                                                     [-3])),
    "get_tensors_do_not_broadcast": lambda T, dev: _get(T, dev, lambda T, dev: (
        _i(T, dev, [0, 1]), slice(None), _i(T, dev, [0, 1, 2]))),
    "get_mask_and_tensor_do_not_broadcast": lambda T, dev: _get(T, dev, lambda T, dev: (
        _m(T, dev, [[True, False, True], [False, True, True]]), _i(T, dev, [0, 1]))),
    "get_false_and_tensor": lambda T, dev: _get(T, dev, lambda T, dev: (False, _i(T, dev, [0, 1]))),
    "get_nested_tuple": lambda T, dev: _get(T, dev, ((0, 1),)),
    "get_list_of_lists": lambda T, dev: _get(T, dev, [[0, 1], [1, 0]]),
    "get_str": lambda T, dev: _get(T, dev, "a"),
    "get_float": lambda T, dev: _get(T, dev, 1.5),
    "get_negative_step": lambda T, dev: _get(T, dev, slice(None, None, -1)),
}

SETITEM: dict[str, Case] = {
    "set_two_ellipses": lambda T, dev: _set(_x(T, dev, 2, 3, 4), (..., 0, ...),
                                            T.tensor([1.0, 2.0, 3.0], device=dev)),
    "set_two_ellipses_adv": lambda T, dev: _set(
        _x(T, dev, 2, 3, 4), (..., _i(T, dev, [0, 2]), ...), -1.0),
    "set_two_ellipses_grad": lambda T, dev: _set_grad(
        T, dev, (..., 0, ...), T.tensor([1.0, 2.0, 3.0], dtype=T.float64, device=dev)),
    "set_int_out_of_range": lambda T, dev: _set(_x(T, dev, 2, 3, 4), 5, 1.0),
    "set_tensor_out_of_range": lambda T, dev: _set(_x(T, dev, 2, 3, 4), _i(T, dev, [5]), 1.0),
    "set_tensor_negative_out_of_range": lambda T, dev: _set(
        _x(T, dev, 2, 3, 4), _i(T, dev, [-3]), 1.0),
    "set_0d_int": lambda T, dev: _set(T.tensor(3.0, device=dev), 0, 1.0),
    "set_0d_slice": lambda T, dev: _set(T.tensor(3.0, device=dev), slice(None), 1.0),
    "set_too_many_indices": lambda T, dev: _set(_x(T, dev, 2, 3, 4), (0, 0, 0, 0), 1.0),
    "set_tensors_do_not_broadcast": lambda T, dev: _set(
        _x(T, dev, 2, 3, 4), (_i(T, dev, [0, 1]), slice(None), _i(T, dev, [0, 1, 2])), 1.0),
    "set_float_index": lambda T, dev: _set(_x(T, dev, 2, 3, 4), _i(T, dev, [1.0], "float32"),
                                           1.0),
    "set_mask_wrong_size": lambda T, dev: _set(_x(T, dev, 2, 3, 4), _m(T, dev, [True] * 3), 1.0),
}

E0 = []  # an empty index


def _names(node: Any) -> list[str]:
    """The graph below ``node``, depth first, by node name."""
    if node is None:
        return []
    names = [node.name().replace("torch::autograd::", "")]
    for child, _ in node.next_functions:
        names += _names(child)
    return names


def _i3(T: Any, dev: str, *values: Any) -> tuple[Any, ...]:
    """Index tensors of ``values`` (a bool list is a mask)."""
    return tuple(_m(T, dev, v) if v and isinstance(v[0], bool) else _i(T, dev, v) for v in values)


# PyTorch's index kernel reads no entry when the result is empty (nor checks one); an index array
# over a dimension of size 0 is refused unless the index arrays broadcast to an empty shape.
EMPTY: dict[str, Case] = {
    # the reported case
    "get_oob_empty_result": lambda T, dev: _get(T, dev, lambda T, dev: _i(T, dev, [0, 2]), (1, 0)),
    "get_oob_empty_other_dim": lambda T, dev: _get(
        T, dev, lambda T, dev: (slice(None), _i(T, dev, [5])), (0, 3)),
    "get_oob_empty_broadcast": lambda T, dev: _get(
        T, dev, lambda T, dev: _i3(T, dev, E0, [5]), (2, 3)),
    "get_oob_empty_slice": lambda T, dev: _get(
        T, dev, lambda T, dev: (_i(T, dev, [5]), slice(0, 0)), (2, 3)),
    "get_oob_empty_slice_first": lambda T, dev: _get(
        T, dev, lambda T, dev: (slice(0, 0), _i(T, dev, [5])), (2, 3)),
    "get_oob_empty_two_arrays_apart": lambda T, dev: _get(
        T, dev, lambda T, dev: (_i(T, dev, [5]), slice(None), _i(T, dev, [0])), (2, 0, 3)),
    "get_oob_empty_mask_and_array": lambda T, dev: _get(
        T, dev, lambda T, dev: _i3(T, dev, [True, False, True]) + (slice(None), _i(T, dev, [5])),
        (3, 0, 2)),
    "get_oob_empty_negative": lambda T, dev: _get(T, dev, lambda T, dev: _i(T, dev, [-3]), (1, 0)),
    "get_oob_empty_grad": lambda T, dev: _grads(
        T, (x := _x(T, dev, 1, 0, grad=True))[_i(T, dev, [0, 2])], x),
    "get_empty_index_of_empty_dim": lambda T, dev: _get(
        T, dev, lambda T, dev: _i(T, dev, E0), (0,)),
    "get_empty_dim_empty_broadcast": lambda T, dev: _get(
        T, dev, lambda T, dev: _i3(T, dev, [5], E0), (0, 3)),
    "get_empty_dim_refused": lambda T, dev: _get(
        T, dev, lambda T, dev: (slice(None), _i(T, dev, [3])), (2, 0)),
    "get_empty_dim_refused_in_range": lambda T, dev: _get(
        T, dev, lambda T, dev: _i3(T, dev, [1], [3]), (2, 0)),
    "get_empty_dim_before_range_check": lambda T, dev: _get(
        T, dev, lambda T, dev: _i3(T, dev, [5], [3]), (2, 0)),
    "get_empty_dim_mask_refused": lambda T, dev: _get(
        T, dev, lambda T, dev: _i3(T, dev, [True, False, True], [5]), (3, 0)),
    "get_empty_dim_empty_mask": lambda T, dev: _get(
        T, dev, lambda T, dev: _i3(T, dev, [False, False, False], [5]), (3, 0)),
    "get_empty_dim_slice_refused": lambda T, dev: _get(
        T, dev, lambda T, dev: (slice(None), slice(None), _i(T, dev, [1])), (0, 2, 0)),
    # the entry reported is the first one read: the first position of the broadcast index
    # shape where an array is out of range, and there the first such array
    "get_oob_first_read": lambda T, dev: _get(
        T, dev, lambda T, dev: (_i(T, dev, [[-1, 1]]), _i(T, dev, [-5, 5])), (1, 2)),
    "get_oob_first_read_three": lambda T, dev: _get(
        T, dev, lambda T, dev: _i3(T, dev, [-1, -3], [3], [-5, -4]), (1, 2, 3)),
    "set_oob_empty_result": lambda T, dev: _set(_x(T, dev, 1, 0), _i(T, dev, [0, 2]), 1.0),
    "set_oob_empty_broadcast": lambda T, dev: _set(_x(T, dev, 2, 3), _i3(T, dev, E0, [5]), 1.0),
    "set_oob_empty_tensor_value": lambda T, dev: _set(_x(T, dev, 1, 0), _i(T, dev, [5]),
                                                      T.zeros(1, 0, device=dev)),
    "set_oob_empty_value_mismatch": lambda T, dev: _set(_x(T, dev, 1, 0), _i(T, dev, [5]),
                                                        T.zeros(2, device=dev)),
    "set_oob_empty_grad": lambda T, dev: _set_grad(
        T, dev, (_i(T, dev, [5]), slice(0, 0)), T.tensor(2.0, dtype=T.float64, device=dev)),
    "set_empty_dim_refused": lambda T, dev: _set(
        _x(T, dev, 2, 0), (slice(None), _i(T, dev, [3])), 1.0),
    "set_oob_first_read": lambda T, dev: _set(_x(T, dev, 2, 3), _i3(T, dev, [1, 2], [-4, -3]),
                                              1.0),
    # index_select on the CPU: dim 1 and an empty input report with another message
    "index_select_empty_input_oob": lambda T, dev: _select(T, dev, (1, 0), 0, [5]),
    "index_select_empty_input_negative": lambda T, dev: _select(T, dev, (3, 0, 2), 0, [0, -2, 1]),
    "index_select_empty_input_ok": lambda T, dev: _select(T, dev, (3, 0, 2), 2, [1, 0]),
    "index_select_empty_input_dim_0": lambda T, dev: _select(T, dev, (3, 0, 2), 1, [0]),
    "index_select_dim1_oob": lambda T, dev: _select(T, dev, (2, 2), 1, [0, 7, -1]),
    "index_select_dim_minus1_oob": lambda T, dev: _select(T, dev, (2, 3), -1, [3]),
    "index_select_dim2_oob": lambda T, dev: _select(T, dev, (2, 2, 2), 2, [2]),
    "index_select_1d_empty_oob": lambda T, dev: T.index_select(
        T.zeros(0, device=dev), 0, _i(T, dev, [0])),
}

# An int, a slice or None among index arrays applies first, as a view (PyTorch's walk): NumPy
# would treat the int as one more index array and move the result's dimensions.
MIXED: dict[str, Case] = {
    "get_int_slice_array": lambda T, dev: _grads(
        T, (x := _x(T, dev, 2, 3, 3, grad=True))[0, :, _i(T, dev, [2, 0, 1])], x),
    "get_array_slice_int": lambda T, dev: _grads(
        T, (x := _x(T, dev, 3, 3, 2, grad=True))[_i(T, dev, [2, 0, 1]), :, 1], x),
    "get_array_int_array": lambda T, dev: _get(
        T, dev, lambda T, dev: (_i(T, dev, [1, 0]), 2, _i(T, dev, [3, 3]))),
    "get_int_slice_array_graph": lambda T, dev: _names(
        _x(T, dev, 2, 3, 4, grad=True)[0, 1:, _i(T, dev, [0, 1])].grad_fn),
    "get_true_array_graph": lambda T, dev: _names(
        _x(T, dev, 2, 3, 4, grad=True)[True, _i(T, dev, [0, 1])].grad_fn),
    "get_none_between_arrays": lambda T, dev: _get(
        T, dev, lambda T, dev: (_i(T, dev, [1, 0]), None, _i(T, dev, [2, 2]))),
    "set_int_slice_array": lambda T, dev: _set(
        _x(T, dev, 2, 3, 3), (0, slice(None), _i(T, dev, [2, 0, 1])),
        T.arange(9.0, device=dev).reshape(3, 3)),
    "set_int_slice_array_grad": lambda T, dev: _set_grad(
        T, dev, (1, slice(None), _i(T, dev, [3, 0])),
        T.arange(6.0, dtype=T.float64, device=dev).reshape(3, 2)),
    "set_int_slice_array_grad_fn": lambda T, dev: [
        (lambda y: (y.__setitem__(k, 1.0), y.grad_fn.name())[1])(_x(T, dev, 2, 3, grad=True) * 1)
        for k in ((_i(T, dev, [1]),), (slice(None), _i(T, dev, [1])),
                  (slice(1, None), _i(T, dev, [1])), (_i(T, dev, [1]), 0))],
    # mask checks see the view the walk made
    "get_mask_after_slice": lambda T, dev: _get(
        T, dev, lambda T, dev: _i3(T, dev, [True, True], [True, True]) + (slice(1, None),),
        (2, 1, 2)),
    "get_mask_after_true": lambda T, dev: _get(
        T, dev, lambda T, dev: (_m(T, dev, [False, True]), True, slice(1, None)), (3, 3, 3)),
    # PyTorch drops every leading size-1 dim of the value
    "set_value_leading_ones_dropped": lambda T, dev: _set(
        _x(T, dev, 2, 3), (Ellipsis, None), T.ones(1, 1, 3, device=dev)),
    "set_adv_value_leading_ones_dropped": lambda T, dev: _set(
        _x(T, dev, 2, 3), _i(T, dev, [0, 1]), T.ones(1, 1, 1, 3, device=dev)),
}

# The argument parser counts positions without self in a method call.
METHODS: dict[str, Case] = {
    "gather_method_index_list": lambda T, dev: _x(T, dev, 2, 3).gather(0, [[0]]),
    "gather_method_dim_float": lambda T, dev: _x(T, dev, 2, 3).gather(0.5, _i(T, dev, [[0]])),
    "gather_dim_bool": lambda T, dev: T.gather(_x(T, dev, 2, 3), True, _i(T, dev, [[0]])),
    "gather_dim_0d_tensor": lambda T, dev: _x(T, dev, 2, 3).gather(
        T.tensor(1), _i(T, dev, [[0]])),
    "gather_dim_float_tensor": lambda T, dev: _x(T, dev, 2, 3).gather(
        T.tensor(1.0), _i(T, dev, [[0]])),
    "index_select_method_index_list": lambda T, dev: _x(T, dev, 2, 3).index_select(0, [0]),
    "index_select_method_dim_str": lambda T, dev: _x(T, dev, 2, 3).index_select(
        "a", _i(T, dev, [0])),
    "index_select_dim_none": lambda T, dev: T.index_select(_x(T, dev, 2, 3), None,
                                                           _i(T, dev, [0])),
    "index_select_dim_type_before_index": lambda T, dev: _x(T, dev, 2, 3).index_select(
        None, [0]),
    "masked_fill_method_str": lambda T, dev: _x(T, dev, 2, 3).masked_fill(
        _m(T, dev, MASK), "a"),
    "masked_fill_method_mask_list": lambda T, dev: _x(T, dev, 2, 3).masked_fill(MASK, 1.0),
    "masked_fill__method_none": lambda T, dev: _x(T, dev, 2, 3).masked_fill_(
        _m(T, dev, MASK), None),
    "where_method_str": lambda T, dev: _x(T, dev, 2, 3).where(_m(T, dev, MASK), "a"),
    "where_method_cond_list": lambda T, dev: _x(T, dev, 2, 3).where(MASK, 1.0),
    "index_select_0d_grad_fn": lambda T, dev: [
        T.tensor(5.0, device=dev, requires_grad=True).index_select(0, _i(T, dev, k)).grad_fn
        .name() for k in ([0], 0)],
    "index_select_0d_grad": lambda T, dev: _grads(
        T, T.index_select(x := T.tensor(5.0, dtype=T.float64, device=dev, requires_grad=True),
                          0, _i(T, dev, [0])), x),
}


def _kernel_error(fn: Any) -> Any:
    """The error ``fn()`` raises, as (type, message) with the kernel's device suffix dropped
    (``"bitwise_not_cuda"`` on CUDA): the oracle runs on the CPU."""
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, str(e).replace("_cuda\"", "_cpu\"")
    return None


BITWISE: dict[str, Case] = {
    "invert_float": lambda T, dev: ~_x(T, dev, 2),
    "invert_float_0d": lambda T, dev: ~T.tensor(1.0, device=dev),
    "invert_half": lambda T, dev: ~T.ones(2, dtype=T.float16, device=dev),
    "invert_int": lambda T, dev: ~_i(T, dev, [0, 5, -3]),
    "invert_uint8": lambda T, dev: ~_i(T, dev, [0, 5], "uint8"),
    "invert_bool": lambda T, dev: ~_m(T, dev, [True, False]),
    "bitwise_not_float": lambda T, dev: _kernel_error(lambda: T.bitwise_not(_x(T, dev, 2))),
    "bitwise_not_double_method": lambda T, dev: _kernel_error(
        lambda: T.ones(2, dtype=T.float64, device=dev).bitwise_not()),
    "bitwise_not__float": lambda T, dev: _kernel_error(lambda: _x(T, dev, 2).bitwise_not_()),
    "bitwise_not_int8": lambda T, dev: T.bitwise_not(_i(T, dev, [1, 0], "int8")),
    "bitwise_not_bool_method": lambda T, dev: _m(T, dev, [True, False]).bitwise_not(),
    "bitwise_not__int": lambda T, dev: _i(T, dev, [1, 0]).bitwise_not_(),
    "bitwise_not_list": lambda T, dev: T.bitwise_not([1]),
    "bitwise_not_int_arg": lambda T, dev: T.bitwise_not(1),
}

def _put(key: Any, value: Any) -> Case:
    """``x[key] = value`` on float32 zeros; ``key``/``value`` build from (T, dev)."""
    def run(T: Any, dev: str) -> Any:
        x = T.zeros(2, 3, device=dev)
        x[key(T, dev)] = value(T, dev)
        return x
    return run


SETITEM_DTYPES: dict[str, Case] = {
    "setitem_index_double_value": _put(lambda T, d: T.tensor([0, 1], device=d),
                                       lambda T, d: T.ones(3, dtype=T.float64, device=d)),
    "setitem_index_0d_double": _put(lambda T, d: T.tensor([0], device=d),
                                    lambda T, d: T.tensor(1.0, dtype=T.float64, device=d)),
    "setitem_mask_0d_double": _put(lambda T, d: T.ones(2, 3, dtype=T.bool, device=d),
                                   lambda T, d: T.tensor(1.0, dtype=T.float64, device=d)),
    "setitem_mask_1d_double": _put(lambda T, d: T.ones(2, 3, dtype=T.bool, device=d),
                                   lambda T, d: T.ones(6, dtype=T.float64, device=d)),
    "setitem_list_long_value": _put(lambda T, d: [0, 1], lambda T, d: T.ones(3, dtype=T.int64,
                                                                             device=d)),
    "setitem_mixed_key_double": _put(lambda T, d: (slice(None), [0, 1]),
                                     lambda T, d: T.ones(2, 2, dtype=T.float64, device=d)),
    "setitem_slice_double_casts": _put(lambda T, d: slice(0, 1),
                                       lambda T, d: T.ones(3, dtype=T.float64, device=d)),
    "setitem_list_number": _put(lambda T, d: [0, 1], lambda T, d: 2.5),
}

CASES: dict[str, Case] = {**GATHER, **INDEX_SELECT, **MASKED_FILL, **WHERE, **GETITEM, **SETITEM,
                          **EMPTY, **MIXED, **METHODS, **BITWISE, **SETITEM_DTYPES}

test_misuse = catalogue_test(CASES)
