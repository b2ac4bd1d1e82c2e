"""isposinf and isneginf against the oracle: float, integer, bool, empty and 0-d inputs,
NaN/inf, the Tensor methods, out= (bool only), misuse."""

from __future__ import annotations

from typing import Any

from tests.misuse._catalogue import Case, catalogue_test


def _x(T: Any, dev: str, dtype: Any = None) -> Any:
    inf, nan = float("inf"), float("nan")
    return T.tensor([[1.0, inf, -inf], [nan, -0.0, -1e308]], dtype=dtype or T.float64,
                    device=dev)


def _meta(t: Any) -> Any:
    return t, str(t.dtype)


CASES: dict[str, Case] = {}
for _fn in ("isposinf", "isneginf"):
    CASES.update({
        f"{_fn}": lambda T, dev, f=_fn: _meta(getattr(T, f)(_x(T, dev))),
        f"{_fn}_f32_t": lambda T, dev, f=_fn: _meta(getattr(T, f)(_x(T, dev, T.float32).t())),
        f"{_fn}_method": lambda T, dev, f=_fn: _meta(getattr(_x(T, dev), f)()),
        f"{_fn}_int": lambda T, dev, f=_fn: _meta(getattr(T, f)(T.tensor([1, -2], device=dev))),
        f"{_fn}_bool": lambda T, dev, f=_fn: _meta(getattr(T, f)(T.tensor([True], device=dev))),
        f"{_fn}_0d": lambda T, dev, f=_fn: _meta(getattr(T, f)(T.tensor(float("-inf"),
                                                                     device=dev))),
        f"{_fn}_empty": lambda T, dev, f=_fn: _meta(getattr(T, f)(T.ones(0, 2, device=dev))),
        f"{_fn}_out": lambda T, dev, f=_fn: getattr(T, f)(
            _x(T, dev), out=T.empty(2, 3, dtype=T.bool, device=dev)),
        f"{_fn}_out_grad_input": lambda T, dev, f=_fn: getattr(T, f)(
            _x(T, dev).requires_grad_(), out=T.empty(2, 3, dtype=T.bool, device=dev)),
        f"{_fn}_out_float": lambda T, dev, f=_fn: getattr(T, f)(
            _x(T, dev), out=T.empty(2, 3, device=dev)),
        f"{_fn}_complex": lambda T, dev, f=_fn: getattr(T, f)(T.tensor([1j], device=dev)),
        f"{_fn}_scalar": lambda T, dev, f=_fn: getattr(T, f)(1.0),
        f"{_fn}_grad": lambda T, dev, f=_fn: getattr(T, f)(
            _x(T, dev).requires_grad_()).requires_grad,
    })

test_isinf_signed = catalogue_test(CASES)
