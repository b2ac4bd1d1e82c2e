"""Misuse catalogue: Python numbers that a dtype cannot hold.

PyTorch converts a number argument to the dtype it computes in, checked (``fill_``, ``full``,
``masked_fill``, scalar ``setitem``, ``clamp`` bounds, ``alpha``, ``where``, ``pow``'s exponent:
``value cannot be converted to type int8_t without overflow``), with a few unchecked corners kept
here as running cases (float16 in ``setitem``/``where`` and one-element fills rounds to inf;
``x + 300`` on int8 wraps around; an unsigned dtype takes -1 as 255). Ints that no C++ Scalar
holds (past ``[-2**63, 2**64)``) raise ``OverflowError`` everywhere.

Each program returns its result and the result's dtype, so a wrong dtype fails too.
"""

from __future__ import annotations

from typing import Any, Callable

from tests.misuse._catalogue import Case, catalogue_test

# (dtype, a value it cannot hold, a value that wraps or rounds into it)
_RANGES = (
    ("float16", 1e10, 65519.0),
    ("float32", 1e40, 3.4028234663852886e38),
    ("int8", 300, -128.0),
    ("uint8", 300, -1),
    ("int16", 1e10, -1.5),
    ("int32", 2 ** 40, 2 ** 31 - 1),
    ("int64", 2 ** 63, 2.0 ** 63),
    ("bool", 1e40, -7),
)


def _out(t: Any) -> tuple[Any, str]:
    return t, repr(t.dtype)


def _z(T: Any, dev: str, dtype: str, n: int = 2) -> Any:
    # NOTE: zeros: float16 computes 0 * 1e10 in float32 (0, not 0 * inf), as PyTorch's
    return T.zeros(n, dtype=getattr(T, dtype), device=dev)


def _mask(T: Any, dev: str) -> Any:
    return T.tensor([True, False], device=dev)


def _setitem(key: Any) -> Callable[[Any, Any], Any]:
    def run(x: Any, v: Any) -> Any:
        x[key] = v
        return x

    return run


_ENTRIES: dict[str, Callable[[Any, str, str, Any], Any]] = {
    "fill_": lambda T, dev, d, v: _z(T, dev, d).fill_(v),
    "fill_0d": lambda T, dev, d, v: _z(T, dev, d)[0].fill_(v),
    "full": lambda T, dev, d, v: T.full((2,), v, dtype=getattr(T, d), device=dev),
    "full_0d": lambda T, dev, d, v: T.full((), v, dtype=getattr(T, d), device=dev),
    "full_like": lambda T, dev, d, v: T.full_like(_z(T, dev, d), v),
    "new_full": lambda T, dev, d, v: _z(T, dev, d).new_full((3,), v),
    "masked_fill": lambda T, dev, d, v: _z(T, dev, d).masked_fill(_mask(T, dev), v),
    "masked_fill_": lambda T, dev, d, v: _z(T, dev, d).masked_fill_(_mask(T, dev), v),
    "setitem_int": lambda T, dev, d, v: _setitem(0)(_z(T, dev, d), v),
    "setitem_mask": lambda T, dev, d, v: _setitem(_mask(T, dev))(_z(T, dev, d), v),
    "setitem_list": lambda T, dev, d, v: _setitem([1])(_z(T, dev, d), v),
    "setitem_all": lambda T, dev, d, v: _setitem(...)(_z(T, dev, d), v),
    "clamp_min": lambda T, dev, d, v: _z(T, dev, d).clamp(min=v),
    "clamp_max": lambda T, dev, d, v: _z(T, dev, d).clamp(max=v),
    "clamp_": lambda T, dev, d, v: _z(T, dev, d).clamp_(max=v),
    "add_alpha": lambda T, dev, d, v: T.add(_z(T, dev, d), _z(T, dev, d), alpha=v),
    "add_alpha_": lambda T, dev, d, v: _z(T, dev, d).add_(_z(T, dev, d), alpha=v),
    "sub_alpha": lambda T, dev, d, v: T.sub(_z(T, dev, d), _z(T, dev, d), alpha=v),
    "where_other": lambda T, dev, d, v: T.where(_mask(T, dev), _z(T, dev, d), v),
    "where_input": lambda T, dev, d, v: T.where(_mask(T, dev), v, _z(T, dev, d)),
    "pow": lambda T, dev, d, v: _z(T, dev, d) ** v,
    "add": lambda T, dev, d, v: _z(T, dev, d) + v,
    "radd": lambda T, dev, d, v: v + _z(T, dev, d),
    "mul_": lambda T, dev, d, v: _z(T, dev, d).mul_(v),
    "iadd": lambda T, dev, d, v: _z(T, dev, d).__iadd__(v),
    "eq": lambda T, dev, d, v: _z(T, dev, d) == v,
    "tensor": lambda T, dev, d, v: T.tensor(v, dtype=getattr(T, d), device=dev),
    "tensor_list": lambda T, dev, d, v: T.tensor([1, v], dtype=getattr(T, d), device=dev),
}


def _case(entry: Callable[[Any, str, str, Any], Any], dtype: str, value: Any) -> Case:
    return lambda T, dev: _out(entry(T, dev, dtype, value))


CASES: dict[str, Case] = {}
for _name, _entry in _ENTRIES.items():
    for _dtype, _bad, _edge in _RANGES:
        CASES[f"{_name}_{_dtype}_overflow"] = _case(_entry, _dtype, _bad)
        CASES[f"{_name}_{_dtype}_edge"] = _case(_entry, _dtype, _edge)
    for _big in (2 ** 64, -(2 ** 63) - 1):
        CASES[f"{_name}_int_past_uint64_{_big > 0}"] = _case(_entry, "float32", _big)

CASES.update({
    "rpow_int8_wraps": lambda T, dev: _out(300 ** T.ones(2, dtype=T.int8, device=dev)),
    "torch_add_scalar_left_wraps": lambda T, dev: _out(T.add(300, _z(T, dev, "int8"))),
    "pow_int8_float_exponent_runs": lambda T, dev: _out(_z(T, dev, "int8") ** 1e40),
    "pow_float32_huge_exponent_runs": lambda T, dev: _out(T.ones(2, device=dev) ** 1e40),
    "sub_alpha_int8_min_runs": lambda T, dev: _out(
        T.sub(T.ones(2, dtype=T.int8, device=dev), T.ones(2, dtype=T.int8, device=dev),
              alpha=128)),
    "add_alpha_uint8_negative_wraps": lambda T, dev: _out(
        T.ones(2, dtype=T.uint8, device=dev).add_(T.ones(2, dtype=T.uint8, device=dev),
                                                  alpha=-1)),
    "clamp_bool_int_bound_is_int64": lambda T, dev: _out(
        T.tensor([True, False], device=dev).clamp(min=2)),
    "clamp_int8_float_bound_overflows_float": lambda T, dev: _out(
        _z(T, dev, "int8").clamp(min=1e40)),
    "clamp__int8_float_bound_cast_error": lambda T, dev: _out(
        _z(T, dev, "int8").clamp_(min=1.5)),
    "clamp__bool_int_bound_cast_error": lambda T, dev: _out(
        _z(T, dev, "bool").clamp_(min=2)),
    "masked_fill_tensor_value_overflows": lambda T, dev: _out(
        _z(T, dev, "int8").masked_fill(_mask(T, dev), T.tensor(300, device=dev))),
    "fill_float16_one_element_rounds": lambda T, dev: _out(_z(T, dev, "float16", 1).fill_(1e10)),
    "fill_float16_empty_checks": lambda T, dev: _out(_z(T, dev, "float16", 0).fill_(1e10)),
    "fill_uint8_negative_float_overflows": lambda T, dev: _out(_z(T, dev, "uint8").fill_(-1.0)),
    "fill_uint8_minus_255_wraps": lambda T, dev: _out(_z(T, dev, "uint8").fill_(-255)),
    "fill_uint8_minus_256_overflows": lambda T, dev: _out(_z(T, dev, "uint8").fill_(-256)),
    "fill_int8_nan_overflows": lambda T, dev: _out(_z(T, dev, "int8").fill_(float("nan"))),
    "fill_float16_inf_runs": lambda T, dev: _out(_z(T, dev, "float16").fill_(float("-inf"))),
    "fill_int8_fraction_truncates": lambda T, dev: _out(_z(T, dev, "int8").fill_(-127.9)),
    "setitem_int64_past_int64": lambda T, dev: _out(_setitem(0)(_z(T, dev, "float64"), 2 ** 63)),
    "tensor_float32_huge_int_is_inf": lambda T, dev: _out(
        T.tensor(2 ** 128, dtype=T.float32, device=dev)),
    "tensor_int64_from_2_pow_63_float": lambda T, dev: _out(
        T.tensor(2.0 ** 63, dtype=T.int64, device=dev)),
})

# float16 arithmetic with a number: PyTorch's CPU kernels compute * and / in float32 from the
# number's float32 value (also a 0-d second operand's), + and - from its float16 value, and
# ``alpha`` rounded to float16 with the sum rounded once
def _h(T: Any, dev: str, *values: float) -> Any:
    return T.tensor(values, dtype=T.float16, device=dev)


CASES.update({
    "float16_mul_tiny_number": lambda T, dev: _out(_h(T, dev, 1000, 65504) * 1e-8),
    "float16_div_huge_number": lambda T, dev: _out(_h(T, dev, 1000, 0) / 1e8),
    "float16_zero_times_huge": lambda T, dev: _out(_h(T, dev, 0, 1) * 1e10),
    "float16_mul_0d_float32": lambda T, dev: _out(_h(T, dev, 1000) * T.tensor(1e-8, device=dev)),
    "float16_mul_0d_int64": lambda T, dev: _out(_h(T, dev, 1e-3, 0) * T.tensor(100000,
                                                                                device=dev)),
    "float16_0d_left_rounds_first": lambda T, dev: _out(T.tensor(1e-8, device=dev)
                                                        * _h(T, dev, 1000)),
    "float16_mul__tiny": lambda T, dev: _out(_h(T, dev, 1000).mul_(1e-8)),
    "float16_div__tiny": lambda T, dev: _out(_h(T, dev, 0, 2).div_(1e-8)),
    "float16_add_tiny_rounds_first": lambda T, dev: _out(_h(T, dev, 0) - 1e-8),
    "float16_add_alpha_rounds_alpha": lambda T, dev: _out(
        _h(T, dev, 0).add(_h(T, dev, 1000), alpha=1e-8)),
    "float16_add__alpha_rounds_alpha": lambda T, dev: _out(
        _h(T, dev, 0).add_(_h(T, dev, 1000), alpha=-1e-8)),
})


test_misuse = catalogue_test(CASES)


def test_float16_arithmetic_with_numbers_matches_torch_bitwise(device: str) -> None:
    """20 000 random float16 values through each form: the same bits as PyTorch's CPU kernels
    (NumPy's own float16 rules differ in up to a third of the elements)."""
    import numpy as np
    import torch

    import autograd_gpu as ag

    rng = np.random.default_rng(16)
    a, b = (rng.standard_normal(20000).astype(np.float16) for _ in range(2))
    forms: dict[str, Callable[[Any, Any, Any], Any]] = {
        "add_alpha": lambda T, x, y: x.add(y, alpha=1 / 3),
        "sub_alpha": lambda T, x, y: T.sub(x, y, alpha=0.1),
        "add__alpha": lambda T, x, y: x.clone().add_(y, alpha=3.7),
        "add_number": lambda T, x, y: x + 1 / 3,
        "rsub_number": lambda T, x, y: 0.1 - x,
        "mul_number": lambda T, x, y: x * 0.1,
        "rmul_number": lambda T, x, y: 3.7 * x,
        "div_number": lambda T, x, y: x / 3.7,
        "mul__number": lambda T, x, y: x.clone().mul_(0.3),
        "div__number": lambda T, x, y: x.clone().div_(0.3),
        "div_0d": lambda T, x, y: x / T.tensor(0.3, dtype=T.float64),
    }
    for name, form in forms.items():
        theirs = form(torch, torch.from_numpy(a), torch.from_numpy(b)).numpy()
        ours = form(ag, ag.tensor(a, device=device), ag.tensor(b, device=device)).cpu().numpy()
        assert ours.dtype == np.float16 and (ours.view(np.uint16) == theirs.view(np.uint16)).all(), \
            (name, int((ours != theirs).sum()))
