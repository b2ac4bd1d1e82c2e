"""Misuse catalogue: arithmetic. Integer division by zero in every spelling (``//``, ``%``,
``div(rounding_mode=...)``, reflected, in place, every integer dtype), integer powers with
negative exponents, in-place results that do not fit, bad scalars and shapes; and the neighbours
that must keep running (float division by zero, empty results).

Each program returns its result and the result's dtype, so a wrong dtype fails too. Errors whose
message names a device kernel (``"div_floor_cpu" not implemented for 'Bool'``) are pinned per
device in ``tests/ops/test_integer_arith.py``.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tests.misuse._catalogue import Case, catalogue_test

INT_DTYPES = ("int64", "int32", "int16", "int8", "uint8")


def _out(t: Any) -> tuple[Any, str]:
    return t, repr(t.dtype)


def _ints(T: Any, dev: str, dtype: str, values: list[int]) -> Any:
    return T.tensor(values, dtype=getattr(T, dtype), device=dev)


def _by_zero(fn: Callable[[Any, Any, Any], Any], dtype: str) -> Case:
    """``fn(T, x, zeros)``: ``x`` holds 5, 0, 1; ``zeros`` holds 1, 0, 1 (one zero divisor)."""
    return lambda T, dev: _out(fn(T, _ints(T, dev, dtype, [5, 0, 1]),
                                  _ints(T, dev, dtype, [1, 0, 1])))


def _inplace(op: Callable[[Any, Any], Any]) -> Callable[[Any, Any, Any], Any]:
    def run(T: Any, x: Any, z: Any) -> Any:
        op(x, z)
        return x

    return run


def _ifloordiv(x: Any, z: Any) -> None:
    x //= 0


def _imod(x: Any, z: Any) -> None:
    x %= 0


ZERO_FORMS: dict[str, Callable[[Any, Any, Any], Any]] = {
    "floordiv_scalar": lambda T, x, z: x // 0,
    "floordiv_false": lambda T, x, z: x // False,
    "floordiv_tensor": lambda T, x, z: x // z,
    "floordiv_0d_tensor": lambda T, x, z: x // z[1],
    "floordiv_broadcast": lambda T, x, z: x[:, None] // z,
    "rfloordiv": lambda T, x, z: 5 // z,
    "floor_divide_fn": lambda T, x, z: T.floor_divide(x, 0),
    "floor_divide_method": lambda T, x, z: x.floor_divide(z),
    "mod_scalar": lambda T, x, z: x % 0,
    "mod_tensor": lambda T, x, z: x % z,
    "rmod": lambda T, x, z: 5 % z,
    "remainder_fn": lambda T, x, z: T.remainder(x, 0),
    "remainder_scalar_first": lambda T, x, z: T.remainder(5, z),
    "remainder_method": lambda T, x, z: x.remainder(z),
    "div_floor_scalar": lambda T, x, z: T.div(x, 0, rounding_mode="floor"),
    "div_trunc_scalar": lambda T, x, z: T.div(x, 0, rounding_mode="trunc"),
    "div_floor_tensor": lambda T, x, z: T.div(x, z, rounding_mode="floor"),
    "div_trunc_tensor": lambda T, x, z: x.div(z, rounding_mode="trunc"),
    "ifloordiv": _inplace(_ifloordiv),
    "imod": _inplace(_imod),
    "floor_divide_": _inplace(lambda x, z: x.floor_divide_(z)),
    "remainder_": _inplace(lambda x, z: x.remainder_(z)),
    "div_floor_": _inplace(lambda x, z: x.div_(0, rounding_mode="floor")),
    "div_trunc_": _inplace(lambda x, z: x.div_(z, rounding_mode="trunc")),
}

CASES: dict[str, Case] = {
    f"zero_div_{form}_{dtype}": _by_zero(fn, dtype)
    for form, fn in ZERO_FORMS.items() for dtype in INT_DTYPES
}
CASES.update({
    # bool promotes to int64 with an int scalar; in place the int64 result cannot be stored
    "zero_div_bool_floordiv_scalar": lambda T, dev: _out(T.tensor([True, False], device=dev) // 0),
    "zero_div_bool_mod_scalar": lambda T, dev: _out(T.tensor([True, False], device=dev) % 0),
    "zero_div_bool_rfloordiv": lambda T, dev: _out(5 // T.tensor([True, False], device=dev)),
    "zero_div_bool_div_trunc": lambda T, dev: _out(
        T.div(T.tensor([True], device=dev), 0, rounding_mode="trunc")),
    "zero_div_bool_inplace_cast_first": lambda T, dev: _inplace(_ifloordiv)(
        T, T.tensor([True, False], device=dev), None),
    "zero_div_bool_floor_divide_inplace": lambda T, dev: T.tensor([True], device=dev)
    .floor_divide_(2),
    # mixed dtypes: the promoted dtype decides
    "zero_div_int32_by_int64_0d": lambda T, dev: _out(
        T.tensor([3], dtype=T.int32, device=dev) // T.tensor(0, device=dev)),
    "zero_div_0d_by_0": lambda T, dev: _out(T.tensor(3, device=dev) // 0),
    "zero_div_int_by_float_zero": lambda T, dev: _out(T.tensor([3, 0], device=dev) // 0.0),
    "zero_div_int_by_float_tensor": lambda T, dev: _out(
        T.tensor([3, 0], device=dev) % T.tensor([0.0, 0.0], device=dev)),
    "zero_div_float_by_int_tensor": lambda T, dev: _out(
        T.tensor([3.0, -1.0, 0.0], device=dev) // T.tensor([0, 0, 0], device=dev)),
    "zero_div_float_floordiv": lambda T, dev: _out(T.tensor([1.0, -1.0, 0.0], device=dev) // 0),
    "zero_div_float_mod": lambda T, dev: _out(T.tensor([1.0, -1.0, 0.0], device=dev) % 0),
    "zero_div_float_div_trunc": lambda T, dev: _out(
        T.div(T.tensor([1.0, -1.0, 0.0], device=dev), 0.0, rounding_mode="trunc")),
    "zero_div_true_div_int": lambda T, dev: _out(T.tensor([1, -1, 0], device=dev) / 0),
    # nothing is divided: no error
    "zero_div_empty_by_scalar": lambda T, dev: _out(T.zeros(0, dtype=T.int64, device=dev) // 0),
    "zero_div_empty_broadcast": lambda T, dev: _out(
        T.zeros((0, 1), dtype=T.int64, device=dev) % T.tensor([0, 1, 2], device=dev)),
    # the shape error comes before the zero
    "zero_div_bad_shapes": lambda T, dev: _out(
        T.tensor([1, 2, 3], device=dev) // T.tensor([0, 1], device=dev)),
    "zero_div_inplace_bad_shape": lambda T, dev: T.tensor([1, 2], device=dev).floor_divide_(
        T.zeros((2, 2), dtype=T.int64, device=dev)),
    # rounding_mode itself
    "div_bad_rounding_mode": lambda T, dev: T.div(T.tensor([1.0], device=dev), 2,
                                                  rounding_mode="round"),
    "div_floor_int_dtype": lambda T, dev: _out(
        T.div(T.tensor([7, -7], device=dev), 2, rounding_mode="floor")),
    "div_trunc_int_dtype": lambda T, dev: _out(
        T.div(T.tensor([7, -7], dtype=T.int8, device=dev), 2, rounding_mode="trunc")),
    "div_floor_float_rounding": lambda T, dev: _out(
        T.div(T.tensor([1.0, -1.0], device=dev), 0.1, rounding_mode="floor")),
    "div_floor_inplace_int_by_float": lambda T, dev: T.tensor([7], device=dev).div_(
        2.5, rounding_mode="floor"),
    # integer powers
    "pow_int_negative": lambda T, dev: T.tensor([2, 3], device=dev) ** -1,
    "pow_int_negative_fn": lambda T, dev: T.pow(T.tensor([2], dtype=T.int8, device=dev), -2),
    "pow_int_negative_inplace": lambda T, dev: T.tensor([2], device=dev).pow_(-1),
    "pow_int_negative_float_ok": lambda T, dev: _out(T.tensor([2, 4], device=dev) ** -1.0),
    "pow_int_zero_exponent": lambda T, dev: _out(T.tensor([0, 3], device=dev) ** 0),
    "pow_bool_false": lambda T, dev: _out(T.tensor([True, False], device=dev) ** False),
    "pow_bool_true": lambda T, dev: _out(T.tensor([True, False], device=dev) ** True),
    "pow_bool_int": lambda T, dev: _out(T.tensor([True, False], device=dev) ** 2),
    "pow_bool_bool_tensor": lambda T, dev: T.tensor([True], device=dev) ** T.tensor([False],
                                                                                    device=dev),
    # in-place results that do not fit
    "inplace_int_add_float": lambda T, dev: T.tensor([1, 2], device=dev).add_(1.5),
    "inplace_int_true_div": lambda T, dev: T.tensor([4, 2], device=dev).div_(2),
    "inplace_int_mul_float_tensor": lambda T, dev: T.tensor([1, 2], device=dev).mul_(
        T.tensor([0.5, 1.0], device=dev)),
    "inplace_bool_add_int": lambda T, dev: T.tensor([True], device=dev).add_(1),
    "inplace_broadcast_grows": lambda T, dev: T.ones(3, device=dev).add_(T.ones((2, 3),
                                                                                device=dev)),
    "inplace_uint8_wraps": lambda T, dev: _out(
        T.tensor([250], dtype=T.uint8, device=dev).add_(10)),
    # bad operands
    "add_int_float_alpha": lambda T, dev: T.add(T.tensor([1], device=dev), 1, alpha=0.5),
    "sub_int_float_alpha": lambda T, dev: T.sub(T.tensor([1], device=dev), 1, alpha=0.5),
    "add_int_float_other_float_alpha": lambda T, dev: _out(
        T.add(T.tensor([1], device=dev), 1.0, alpha=0.5)),
    "add_float_bool_alpha": lambda T, dev: T.add(T.tensor([1.0], device=dev), 1, alpha=True),
    "add_bool_bool_alpha": lambda T, dev: _out(
        T.add(T.tensor([True], device=dev), True, alpha=True)),
    "add_bool_int_alpha": lambda T, dev: _out(T.add(T.tensor([True], device=dev), True, alpha=2)),
    "sub_bool": lambda T, dev: T.tensor([True], device=dev) - T.tensor([False], device=dev),
    "neg_bool": lambda T, dev: -T.tensor([True], device=dev),
    "rsub_bool_scalar": lambda T, dev: 1 - T.tensor([True], device=dev),
    "maximum_scalar": lambda T, dev: T.maximum(T.tensor([1.0], device=dev), 2.0),
    "clamp_no_bounds": lambda T, dev: T.clamp(T.tensor([1.0], device=dev)),
    "broadcast_mismatch": lambda T, dev: T.ones(3, device=dev) * T.ones(4, device=dev),
    "broadcast_mismatch_floordiv": lambda T, dev: T.ones(3, device=dev) // T.ones((2, 4),
                                                                                  device=dev),
    "mean_int": lambda T, dev: T.tensor([1, 2], device=dev).mean(),
    "uint8_scalar_wraps": lambda T, dev: _out(T.tensor([3], dtype=T.uint8, device=dev) + -5),
    "int8_floordiv_min_by_minus_one": lambda T, dev: _out(
        T.tensor([-128], dtype=T.int8, device=dev) // -1),
})


def _grads(fn: Callable[[Any, Any, Any], Any]) -> Case:
    """``fn(T, x, y)`` on two float leaves; returns the output and both gradients."""

    def case(T: Any, dev: str) -> Any:
        x = T.tensor([1.5, -2.5, 0.5, float("nan")], requires_grad=True, device=dev)
        y = T.tensor([0.7, 0.6, 0.5, 1.0], requires_grad=True, device=dev)
        out = fn(T, x, y)
        out.sum().backward()
        return out, x.grad, y.grad

    return case


CASES.update({
    # gradients of the rounding divisions: remainder has one, div(rounding_mode) gives 0,
    # floor_divide and a scalar % tensor record a node that refuses
    "grad_remainder_scalar": lambda T, dev: _grads(lambda T, x, y: x % 2.0 + y)(T, dev),
    "grad_remainder_tensor": _grads(lambda T, x, y: T.remainder(x, y)),
    "grad_remainder_inplace": _grads(lambda T, x, y: (x * 1).remainder_(y)),
    "grad_div_floor": _grads(lambda T, x, y: T.div(x, y, rounding_mode="floor")),
    "grad_div_trunc_scalar": _grads(lambda T, x, y: x.div(0.5, rounding_mode="trunc") + y),
    "grad_floor_divide_refused": _grads(lambda T, x, y: x // y),
    "grad_rremainder_refused": _grads(lambda T, x, y: 2.0 % y + x),
    "grad_fn_floor_divide": lambda T, dev: (T.tensor([1.5], requires_grad=True, device=dev) // 2)
    .grad_fn.name(),
    "grad_fn_remainder": lambda T, dev: T.remainder(T.tensor([1.5], requires_grad=True, device=dev),
                                                    T.tensor([1.0], device=dev)).grad_fn.name(),
    # maximum/minimum: ties share, a NaN passes the gradient to both inputs
    "grad_maximum_nan_and_ties": _grads(lambda T, x, y: T.maximum(x, y.where(y != 0.5, x))),
    "grad_minimum_nan_and_ties": _grads(lambda T, x, y: T.minimum(x, y.where(y != 0.5, x))),
    # bitwise operators on integers are bitwise (not logical), in place where Python says so
    "bitwise_and_ints": lambda T, dev: _out(T.tensor([6, 5], device=dev) & T.tensor([3, 3],
                                                                                 device=dev)),
    "bitwise_or_scalar": lambda T, dev: _out(T.tensor([6], dtype=T.uint8, device=dev) | 9),
    "bitwise_xor_bool_int": lambda T, dev: _out(T.tensor([True], device=dev) ^ T.tensor([3],
                                                                                      device=dev)),
    "bitwise_rand": lambda T, dev: _out(3 & T.tensor([6, 1], device=dev)),
    "bitwise_and_bools": lambda T, dev: _out(T.tensor([True, False], device=dev) & True),
    "bitwise_iand_in_place": lambda T, dev: _iop(T, dev, "__iand__", 3),
    "bitwise_ixor_in_place": lambda T, dev: _iop(T, dev, "__ixor__", 5),
    "ipow_in_place": lambda T, dev: _iop(T, dev, "__ipow__", 2),
    "ifloordiv_in_place": lambda T, dev: _iop(T, dev, "__ifloordiv__", 4),
    "imod_in_place": lambda T, dev: _iop(T, dev, "__imod__", 4),
    # reductions of empty tensors over non-empty dims run; over empty dims they refuse
    "amax_empty_over_nonempty_dim": lambda T, dev: _out(T.zeros((0, 1), device=dev).amax(1)),
    "amin_empty_over_empty_dim": lambda T, dev: T.zeros((0, 1), device=dev).amin((0, 1)),
    "amax_empty_all": lambda T, dev: T.zeros((0, 1), device=dev).amax(),
    # an in-place op on var's output is legal (VarBackward0 saves no output); on std's it is not
    "var_output_in_place": lambda T, dev: _reduce_inplace(T, dev, "var"),
    "std_output_in_place": lambda T, dev: _reduce_inplace(T, dev, "std"),
    # clone lays out an expanded tensor densely, so reshape(-1) of it is a view
    "clone_of_expand_reshape_writes": lambda T, dev: _clone_write(T, dev),
    # floor: a zero gradient (FloorBackward0), integers unchanged
    "grad_floor": _grads(lambda T, x, y: T.floor(x * y)),
    "floor_int": lambda T, dev: _out(T.floor(T.tensor([3, -2], device=dev))),
    "floor_method": lambda T, dev: _out(T.tensor([1.5, -0.5], device=dev).floor()),
    "mT_of_0d": lambda T, dev: T.tensor(2.0, device=dev).mT,
    "mH_of_1d": lambda T, dev: T.tensor([2.0], device=dev).mH,
})


def _iop(T: Any, dev: str, op: str, other: Any) -> Any:
    """``x op= other`` through an alias: the original tensor changes, as in PyTorch."""
    x = T.tensor([6, 7], device=dev)
    y = x
    getattr(y, op)(other)
    return x


def _reduce_inplace(T: Any, dev: str, name: str) -> Any:
    x = T.tensor([[1.0, 2.0], [3.0, 5.0]], requires_grad=True, device=dev)
    y = getattr(x, name)(1)
    y.mul_(2)
    y.sum().backward()
    return x.grad


def _clone_write(T: Any, dev: str) -> Any:
    y = T.tensor([[1.0, 2.0]], device=dev).expand(2, 1, 2).clone()
    y.reshape(-1)[::2].sub_(5)
    return y


def _signed(out: Any) -> Any:
    """``out`` and ``1 / out``: the second tells -0.0 (-inf) from +0.0 (inf)."""
    return out, 1 / out


def _grad_fn_type(T: Any, dev: str, fn: Callable[[Any, Any], Any]) -> Any:
    """``type(grad_fn).__name__`` and ``grad_fn.name()`` of ``fn(T, x)``: the same, PyTorch's."""
    out = fn(T, T.tensor([1.5, -2.0], requires_grad=True, device=dev))
    return type(out.grad_fn).__name__, out.grad_fn.name()


def _asarray_of_leaf(**kw: Any) -> Case:
    """``asarray`` of a leaf that requires grad, ``requires_grad`` given (no warning): the
    result's value, requires_grad, leafness, and whether it is the leaf itself."""

    def case(T: Any, dev: str) -> Any:
        t = T.ones(2, requires_grad=True, device=dev)
        r = T.asarray(t, **kw)
        return r.detach(), r.requires_grad, r.is_leaf, r is t, t.requires_grad, repr(r.dtype)

    return case


CASES.update({
    # operands that are neither tensors nor numbers: Python's or PyTorch's TypeError
    "add_operator_str": lambda T, dev: T.ones(2, device=dev) + "a",
    "radd_operator_str": lambda T, dev: "a" + T.ones(2, device=dev),
    "floordiv_operator_str": lambda T, dev: T.ones(2, device=dev) // "a",
    "mod_operator_none": lambda T, dev: T.ones(2, device=dev) % None,
    "pow_operator_str": lambda T, dev: T.ones(2, device=dev) ** "a",
    "truediv_operator_str": lambda T, dev: T.ones(2, device=dev) / "a",
    "sub_operator_str": lambda T, dev: T.ones(2, device=dev) - "a",
    "radd_operator_list": lambda T, dev: [1] + T.ones(1, device=dev),
    "add_fn_str": lambda T, dev: T.add(T.ones(2, device=dev), "a"),
    "mul_fn_str_first": lambda T, dev: T.mul("a", T.ones(2, device=dev)),
    "div_fn_none": lambda T, dev: T.div(T.ones(2, device=dev), None),
    "pow_fn_str": lambda T, dev: T.pow(T.ones(2, device=dev), "a"),
    "remainder_fn_str": lambda T, dev: T.remainder(T.tensor([5], device=dev), "a"),
    "floor_divide_fn_str_first": lambda T, dev: T.floor_divide("a", T.tensor([5], device=dev)),
    "maximum_scalar_first": lambda T, dev: T.maximum(2.0, T.tensor([1.0], device=dev)),
    "minimum_scalar_first": lambda T, dev: T.minimum(2.0, T.tensor([1.0], device=dev)),
    # two numbers: a 0-d tensor where PyTorch makes one, its TypeError where it has no overload
    "floor_divide_scalar_first": lambda T, dev: _out(T.floor_divide(5, T.tensor([2], device=dev))),
    "floor_divide_two_ints": lambda T, dev: _out(T.floor_divide(5, 2)),
    "floor_divide_two_floats": lambda T, dev: _out(T.floor_divide(5.5, 2)),
    "floor_divide_two_bools": lambda T, dev: T.floor_divide(True, False),
    "remainder_two_ints": lambda T, dev: T.remainder(5, 2),
    "remainder_scalar_first": lambda T, dev: _out(T.remainder(5, T.tensor([2.0], device=dev))),
    "pow_two_ints": lambda T, dev: T.pow(5, 2),
    "add_two_numbers": lambda T, dev: _out(T.add(2, 3.5)),
    "mul_two_ints": lambda T, dev: _out(T.mul(2, 3)),
    "div_two_ints": lambda T, dev: _out(T.div(5, 2)),
    "div_floor_two_ints": lambda T, dev: _out(T.div(5, 2, rounding_mode="floor")),
    "sub_bool_number": lambda T, dev: T.sub(True, 1),
    # a float remainder's zero has the dividend's sign (NumPy's has the divisor's)
    "remainder_zero_sign": lambda T, dev: _signed(
        T.tensor([-4.0, 4.0, -0.0, 0.0, -3.0], device=dev) % 2),
    "remainder_zero_sign_negative_divisor": lambda T, dev: _signed(
        T.tensor([4.0, -4.0, 0.0, 3.0], device=dev) % -2.0),
    "remainder_zero_sign_tensor": lambda T, dev: _signed(T.remainder(
        T.tensor([-4.0, 4.0, -6.0], dtype=T.float64, device=dev),
        T.tensor([2.0, -2.0, -3.0], dtype=T.float64, device=dev))),
    "rremainder_zero_sign": lambda T, dev: _signed(-4.0 % T.tensor([2.0, -2.0], device=dev)),
    "remainder_inf": lambda T, dev: T.tensor([1.0, -1.0, float("inf"), 5.0], device=dev) % T.tensor(
        [float("inf"), float("inf"), 2.0, -float("inf")], device=dev),
    "sign_nan_and_negative_zero": lambda T, dev: _signed(
        T.sign(T.tensor([float("nan"), -0.0, 0.0, -3.0], device=dev))),
    "pow_half_at_minus_inf": lambda T, dev: T.tensor([-float("inf"), -0.0], device=dev) ** 0.5,
    "pow_minus_half_at_minus_zero": lambda T, dev: T.tensor([-float("inf"), -0.0],
                                                            device=dev) ** -0.5,
    # asarray of a tensor that requires grad, requires_grad given (PyTorch 2.13)
    "asarray_requires_grad_false_leaf": _asarray_of_leaf(requires_grad=False),
    "asarray_requires_grad_true": _asarray_of_leaf(requires_grad=True),
    "asarray_f64_requires_grad_false": lambda T, dev: _asarray_of_leaf(
        dtype=T.float64, requires_grad=False)(T, dev),
    "asarray_int_requires_grad_false": lambda T, dev: _asarray_of_leaf(
        dtype=T.int64, requires_grad=False)(T, dev),
    "asarray_int_requires_grad_true": lambda T, dev: T.asarray(
        T.ones(2, device=dev).requires_grad_(True) * 1, dtype=T.int64, requires_grad=True),
    "asarray_alias_refused": lambda T, dev: T.asarray(T.ones(2, device=dev), dtype=T.float64,
                                                      copy=False),
    "asarray_nonleaf_requires_grad_false": lambda T, dev: (lambda t: (
        lambda r: (r.requires_grad, r.is_leaf, r is t))(T.asarray(t, requires_grad=False)))(
        T.ones(2, requires_grad=True, device=dev) * 2),
    "asarray_list_requires_grad": lambda T, dev: T.asarray([1.0, 2.0], device=dev,
                                                           requires_grad=True).requires_grad,
    "asarray_int_list_requires_grad": lambda T, dev: T.asarray([1, 2], device=dev,
                                                               requires_grad=True),
    # type(grad_fn).__name__ is PyTorch's node name, as grad_fn.name()
    "grad_fn_type_mul": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: x * 2),
    "grad_fn_type_pow": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: x ** 2),
    "grad_fn_type_pow_tensor": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: x ** x),
    "grad_fn_type_rpow": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: 2 ** x),
    "grad_fn_type_sum": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: x.sum()),
    "grad_fn_type_max": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: x.max()),
    "grad_fn_type_amax": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: x.amax()),
    "grad_fn_type_relu": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: T.relu(x)),
    "grad_fn_type_remainder": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: x % 2),
    "grad_fn_type_floor_divide": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: x // 2),
    "grad_fn_type_copy_": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: (x * 1).copy_(x)),
    "grad_fn_type_add_": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: (x * 1).add_(1)),
    "grad_fn_type_slice": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: x[1:]),
    "grad_fn_type_expand": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: x.expand(2, 2)),
    "grad_fn_type_clamp": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: x.clamp(0, 1)),
    "grad_fn_type_sign": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: x.sign()),
    "grad_fn_type_to": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: x.double()),
    "grad_fn_type_mean": lambda T, dev: _grad_fn_type(T, dev, lambda T, x: x.mean()),
    "grad_fn_type_gelu": lambda T, dev: _grad_fn_type(T, dev,
                                                      lambda T, x: T.nn.functional.gelu(x)),
    "grad_fn_type_relu_double_backward": lambda T, dev: (lambda x: (lambda g: (
        type(g.grad_fn).__name__, g.grad_fn.name()))(T.autograd.grad(
            T.relu(x).sum(), x, create_graph=True)[0]))(
        T.tensor([1.0, -1.0], requires_grad=True, device=dev)),
    "grad_fn_type_next_functions": lambda T, dev: (lambda x: [
        type(n).__name__ for n, _ in (x.exp() * 2).grad_fn.next_functions if n is not None])(
        T.tensor([1.0], requires_grad=True, device=dev)),
})


# ---- argument errors: a method call's positions leave out self; operators give Python's -------

def _f(T: Any, dev: str) -> Any:
    return T.ones(2, 2, device=dev)


def _i(T: Any, dev: str) -> Any:
    return T.ones(2, dtype=T.int64, device=dev)


def _operator(op: str, make: Callable[[Any, str], Any] = _f) -> Case:
    def case(T: Any, dev: str) -> Any:
        x = make(T, dev)
        scope = {"x": x}
        exec(f"x {op} 'a'", scope)  # noqa: S102  (the statement is the misuse under test)
        return scope["x"]

    return case


ARGUMENTS: dict[str, Case] = {
    "method_matmul_int": lambda T, dev: _f(T, dev).matmul(2),
    "function_matmul_int": lambda T, dev: T.matmul(_f(T, dev), 2),
    "function_matmul_int_left": lambda T, dev: T.matmul(2, _f(T, dev)),
    "method_mm_int": lambda T, dev: _f(T, dev).mm(2),
    "function_mm_int": lambda T, dev: T.mm(_f(T, dev), 2),
    "method_bmm_int": lambda T, dev: _f(T, dev).bmm(2),
    "method_mv_int": lambda T, dev: _f(T, dev).mv(2),
    "method_dot_int": lambda T, dev: _f(T, dev).dot(2),
    "method_addmm_int": lambda T, dev: _f(T, dev).addmm(2, _f(T, dev)),
    "method_addmm_second_int": lambda T, dev: _f(T, dev).addmm(_f(T, dev), 2),
    "method_matmul_none": lambda T, dev: _f(T, dev).matmul(None),
    "method_add_str": lambda T, dev: _f(T, dev).add("a"),
    "function_add_str": lambda T, dev: T.add(_f(T, dev), "a"),
    "function_add_str_left": lambda T, dev: T.add("a", _f(T, dev)),
    "method_add_none": lambda T, dev: _f(T, dev).add(None),
    "method_add_list": lambda T, dev: _f(T, dev).add([1, 2]),
    "method_mul_str": lambda T, dev: _f(T, dev).mul("a"),
    "method_sub_str": lambda T, dev: _f(T, dev).sub("a"),
    "method_div_str": lambda T, dev: _f(T, dev).div("a"),
    "method_div_str_rounding": lambda T, dev: _f(T, dev).div("a", rounding_mode="floor"),
    "function_div_str_rounding": lambda T, dev: T.div(_f(T, dev), "a", rounding_mode="floor"),
    "method_pow_str": lambda T, dev: _f(T, dev).pow("a"),
    "function_pow_str": lambda T, dev: T.pow(_f(T, dev), "a"),
    "method_remainder_str": lambda T, dev: _f(T, dev).remainder("a"),
    "method_floor_divide_str": lambda T, dev: _f(T, dev).floor_divide("a"),
    "method_maximum_int": lambda T, dev: _f(T, dev).maximum(2),
    "function_maximum_int": lambda T, dev: T.maximum(_f(T, dev), 2),
    "function_maximum_int_left": lambda T, dev: T.maximum(2, _f(T, dev)),
    "method_minimum_int": lambda T, dev: _f(T, dev).minimum(2),
    "method_eq_str": lambda T, dev: _f(T, dev).eq("a"),
    "function_eq_str": lambda T, dev: T.eq(_f(T, dev), "a"),
    "function_eq_str_left": lambda T, dev: T.eq("a", _f(T, dev)),
    "function_eq_int_left": lambda T, dev: T.eq(2, _f(T, dev)),
    "method_lt_str": lambda T, dev: _f(T, dev).lt("a"),
    "function_lt_none": lambda T, dev: T.lt(_f(T, dev), None),
    "method_ge_list": lambda T, dev: _f(T, dev).ge([1]),
    "function_logical_and_int": lambda T, dev: T.logical_and(_f(T, dev), 2),
    "function_logical_or_str": lambda T, dev: T.logical_or(_f(T, dev), "a"),
    "method_bitwise_and_str": lambda T, dev: _i(T, dev).bitwise_and("a"),
    "function_bitwise_and_str": lambda T, dev: T.bitwise_and(_i(T, dev), "a"),
    "method_bitwise_or__str": lambda T, dev: _i(T, dev).bitwise_or_("a"),
    "method_add__str": lambda T, dev: _f(T, dev).add_("a"),
    "method_sub__str": lambda T, dev: _f(T, dev).sub_("a"),
    "method_mul__none": lambda T, dev: _f(T, dev).mul_(None),
    "method_div__str": lambda T, dev: _f(T, dev).div_("a"),
    "method_div__str_rounding": lambda T, dev: _f(T, dev).div_("a", rounding_mode="floor"),
    "method_pow__str": lambda T, dev: _f(T, dev).pow_("a"),
    "method_remainder__str": lambda T, dev: _f(T, dev).remainder_("a"),
    "method_floor_divide__str": lambda T, dev: _f(T, dev).floor_divide_("a"),
    "method_clamp_str": lambda T, dev: _f(T, dev).clamp("a"),
    "function_clamp_str": lambda T, dev: T.clamp(_f(T, dev), "a"),
    "method_clamp_str_tensor": lambda T, dev: _f(T, dev).clamp(_f(T, dev), "a"),
    "function_rsub_str": lambda T, dev: T.rsub(_f(T, dev), "a"),
    "add_alpha_str": lambda T, dev: T.add(_f(T, dev), _f(T, dev), alpha="a"),
    "add_scalar_alpha_str": lambda T, dev: T.add(_f(T, dev), 2, alpha="a"),
    "method_add_alpha_str": lambda T, dev: _f(T, dev).add(_f(T, dev), alpha="a"),
    "method_add__alpha_str": lambda T, dev: _f(T, dev).add_(_f(T, dev), alpha="a"),
    "sub_alpha_str": lambda T, dev: T.sub(_f(T, dev), _f(T, dev), alpha="a"),
    "method_sub__alpha_none": lambda T, dev: _f(T, dev).sub_(_f(T, dev), alpha=None),
    "add_alpha_none": lambda T, dev: T.add(_f(T, dev), _f(T, dev), alpha=None),
    "add_alpha_list": lambda T, dev: T.add(_f(T, dev), _f(T, dev), alpha=[1]),
    "add_alpha_0d_tensor": lambda T, dev: T.add(_f(T, dev), _f(T, dev), alpha=T.tensor(2.0)),
    "add_alpha_1d_tensor": lambda T, dev: T.add(_f(T, dev), _f(T, dev), alpha=T.tensor([2.0])),
    "add_alpha_numpy": lambda T, dev: T.add(_f(T, dev), _f(T, dev), alpha=np.float64(2.0)),
    "operator_matmul_int": lambda T, dev: _f(T, dev) @ 2,
    "operator_rmatmul_int": lambda T, dev: 2 @ _f(T, dev),
    "operator_add_str": lambda T, dev: _f(T, dev) + "a",
    "operator_radd_str": lambda T, dev: "a" + _f(T, dev),
    "operator_add_list": lambda T, dev: _f(T, dev) + [1, 2],
    "operator_mul_str": lambda T, dev: _f(T, dev) * "a",
    "operator_eq_str": lambda T, dev: _f(T, dev) == "a",
    "operator_ne_none": lambda T, dev: _f(T, dev) != None,  # noqa: E711
    "operator_lt_str": lambda T, dev: _f(T, dev) < "a",
    "operator_and_str": lambda T, dev: _i(T, dev) & "a",
}
for _op in ("+=", "-=", "*=", "/=", "//=", "%=", "**=", "@="):
    ARGUMENTS[f"operator_inplace_{_op}_str"] = _operator(_op)
for _op in ("&=", "|=", "^=", "<<=", ">>="):
    ARGUMENTS[f"operator_inplace_int_{_op}_str"] = _operator(_op, _i)
CASES.update(ARGUMENTS)


test_misuse = catalogue_test(CASES)
