"""functions/bits.py against the oracle: gcd/lcm (signs, zeros, broadcasting, dtype errors),
shifts past the width and by negative amounts, operators in both orders and in place, bool and
mixed dtypes; frexp's values, dtypes and gradient."""

from __future__ import annotations

from typing import Any

import pytest

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck
from tests.misuse._catalogue import Case, catalogue_test


def _t(T: Any, dev: str, values: list[Any], dtype: str = "int64") -> Any:
    return T.tensor(values, dtype=getattr(T, dtype), device=dev)


def _same(t: Any, r: Any) -> Any:
    assert r is t
    return t, t._version


A, B = [12, -18, 0, 7, -4, 9], [8, 12, 5, 0, 6, -6]


def _pair(fn: str, dtype: str) -> Case:
    return lambda T, dev: getattr(T, fn)(_t(T, dev, A, dtype), _t(T, dev, B, dtype))


CASES: dict[str, Case] = {
    **{f"{f}_{d}": _pair(f, d) for f in ("gcd", "lcm") for d in ("int64", "int32", "int8",
                                                                    "int16")},
    "gcd_uint8": lambda T, dev: T.gcd(_t(T, dev, [12, 18, 0], "uint8"),
                                      _t(T, dev, [8, 12, 5], "uint8")),
    "gcd_broadcast_0d": lambda T, dev: T.gcd(_t(T, dev, A), T.tensor(6, device=dev)),
    "gcd_mixed_dtypes": lambda T, dev: T.gcd(_t(T, dev, A, "int32"), _t(T, dev, B, "int8")),
    "gcd_float_refused": lambda T, dev: T.gcd(_t(T, dev, A, "float32"), _t(T, dev, B)),
    "gcd_number_refused": lambda T, dev: T.gcd(_t(T, dev, A), 3),
    "lcm_bool_refused": lambda T, dev: T.lcm(_t(T, dev, [True], "bool"),
                                             _t(T, dev, [True], "bool")),
    "gcd_shape_mismatch": lambda T, dev: T.gcd(_t(T, dev, A), _t(T, dev, [1, 2])),
    "gcd_method_and_inplace": lambda T, dev: (lambda t: (_same(t, t.gcd_(_t(T, dev, B))),
                                                         t.lcm(_t(T, dev, B))))(_t(T, dev, A)),
    "shift_left": lambda T, dev: T.bitwise_left_shift(_t(T, dev, A), 2),
    "shift_right": lambda T, dev: T.bitwise_right_shift(_t(T, dev, A), 1),
    "shift_operators": lambda T, dev: (_t(T, dev, A) << 1, _t(T, dev, A) >> 2,
                                       1 << _t(T, dev, [0, 3, 10]), 64 >> _t(T, dev, [0, 3])),
    "shift_past_width_left": lambda T, dev: T.bitwise_left_shift(_t(T, dev, [1, 3], "int8"), 10),
    "shift_past_width_right": lambda T, dev: T.bitwise_right_shift(_t(T, dev, [-8, 8]), 70),
    "shift_negative_amount": lambda T, dev: (T.bitwise_left_shift(_t(T, dev, [1, -1]), -1),
                                             T.bitwise_right_shift(_t(T, dev, [-8, 8]), -2)),
    "shift_uint8": lambda T, dev: _t(T, dev, [1, 1, 200], "uint8") << _t(T, dev, [7, 8, 1],
                                                                         "uint8"),
    "shift_right_uint8_past": lambda T, dev: _t(T, dev, [200], "uint8") >> 9,
    "shift_bool": lambda T, dev: _t(T, dev, [True, False], "bool") << 1,
    "shift_tensor_amounts": lambda T, dev: _t(T, dev, A, "int32") << T.tensor(2, device=dev),
    "shift_float_refused": lambda T, dev: _t(T, dev, [1.0], "float32") << 1,
    "shift_inplace": lambda T, dev: (lambda t: (_same(t, t.bitwise_left_shift_(1)),
                                                _same(t, t.bitwise_right_shift_(2))))(
        _t(T, dev, A)),
    "shift_ilshift": lambda T, dev: (lambda t: (t.__ilshift__(3), t))(_t(T, dev, A)),
    "frexp": lambda T, dev: T.frexp(T.tensor([8.0, 0.3, 0.0, -5.0, float("inf"),
                                              float("nan"), -0.0, 1e-40], device=dev)),
    "frexp_float64_method": lambda T, dev: T.tensor([3.5, -1e300], dtype=T.float64,
                                                    device=dev).frexp(),
    "frexp_float16": lambda T, dev: T.frexp(T.tensor([3.5, 0.1], dtype=T.float16, device=dev)),
    "frexp_int_refused": lambda T, dev: T.frexp(_t(T, dev, [1, 2])),
    "frexp_grad": lambda T, dev: (lambda x: (T.frexp(x)[0] * T.arange(3.0, device=dev)).sum()
                                  .backward() or (x.grad, T.frexp(x)[0].grad_fn.name()))(
        T.tensor([8.0, 0.3, -5.0], device=dev, requires_grad=True)),
    "unravel_index": lambda T, dev: T.unravel_index(_t(T, dev, [4, 1, 5, 6, -7]), (2, 3)),
    "unravel_index_0d": lambda T, dev: T.unravel_index(T.tensor(4, device=dev), (2, 3)),
    "unravel_index_int_shape": lambda T, dev: T.unravel_index(_t(T, dev, [1]), 6),
    "unravel_index_empty_shape": lambda T, dev: T.unravel_index(_t(T, dev, [1]), ()),
    "unravel_index_int32": lambda T, dev: T.unravel_index(_t(T, dev, [1], "int32"), (2, 3)),
    "unravel_index_float": lambda T, dev: T.unravel_index(_t(T, dev, [1.0], "float32"), (2, 3)),
    "unravel_index_negative_shape": lambda T, dev: T.unravel_index(_t(T, dev, [1]), (2, -3)),
}

test_bits = catalogue_test(CASES)


@pytest.mark.parametrize("values", [[7.9, 0.3, -5.0, 1e-3], [0.75, -2.5e8 + 1]])
def test_frexp_gradcheck(device: str, values: list[float]) -> None:
    x = ag.tensor(values, dtype=ag.float64, device=device, requires_grad=True)
    assert gradcheck(lambda t: ag.frexp(t)[0], (x,))
