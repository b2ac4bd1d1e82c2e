"""Misuse catalogue: the scans (cumsum, cumprod, cummax, cummin, logcumsumexp, cumsum_,
cumprod_): PyTorch's exception type and first sentence for bad dims, dtypes (bool, integers for
logcumsumexp), ``out=`` tensors of the wrong dtype or requiring grad, in-place dtype changes;
and the values of the legal corners next to them (0-d, empty, wrapping int8, float to int)."""

from __future__ import annotations

from typing import Any

from tests.misuse._catalogue import Case, catalogue_test


def _x(T: Any, dev: str, dtype: str = "float32", grad: bool = False) -> Any:
    return T.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=getattr(T, dtype),
                    device=dev).requires_grad_(grad)


CASES: dict[str, Case] = {
    "cumsum_dim_out_of_range": lambda T, d: T.cumsum(_x(T, d), 2),
    "cumsum_0d_dim1": lambda T, d: T.cumsum(T.tensor(5.0, device=d), 1),
    "cumsum_0d_dim_neg": lambda T, d: T.cumsum(T.tensor(5.0, device=d), -1),
    "cumsum_dim_none": lambda T, d: T.cumsum(_x(T, d), dim=None),
    "cumsum_no_dim": lambda T, d: T.cumsum(_x(T, d)),
    "cumsum_bool_dtype": lambda T, d: T.cumsum(_x(T, d), 0, dtype=T.bool),
    "cumprod_bool_dtype": lambda T, d: T.cumprod(_x(T, d, "bool"), 0, dtype=T.bool),
    "cumsum_int8_wraps": lambda T, d: T.cumsum(T.tensor([100, 100], dtype=T.int8, device=d), 0,
                                                dtype=T.int8),
    "cumsum_float_dtype_int": lambda T, d: T.cumsum(T.tensor([1.5, 2.0], device=d), 0,
                                                     dtype=T.int32),
    "cumsum_out_dtype_mismatch": lambda T, d: T.cumsum(_x(T, d), 0, dtype=T.float32,
                                                        out=T.zeros(2, 3, dtype=T.float64,
                                                                    device=d)),
    "cumprod_out_dtype_mismatch": lambda T, d: T.cumprod(_x(T, d), 0, dtype=T.float64,
                                                          out=T.zeros(2, 3, device=d)),
    "cumsum_out_bool": lambda T, d: T.cumsum(_x(T, d), 0, out=T.zeros(2, 3, dtype=T.bool,
                                                                       device=d)),
    "cumsum_out_float16": lambda T, d: T.cumsum(_x(T, d), 1, out=T.zeros(2, 3, dtype=T.float16,
                                                                          device=d)),
    "cumsum_out_requires_grad": lambda T, d: T.cumsum(_x(T, d, grad=True), 0,
                                                       out=T.zeros(2, 3, device=d)),
    "cumsum__dtype_mismatch": lambda T, d: T.tensor([1, 2], dtype=T.int32,
                                                    device=d).cumsum_(0, dtype=T.int64),
    "cumprod__dtype_mismatch": lambda T, d: _x(T, d).cumprod_(0, dtype=T.float16),
    "cumsum__bool": lambda T, d: _x(T, d, "bool").cumsum_(0),
    "cumsum__leaf": lambda T, d: _x(T, d, grad=True).cumsum_(0),
    "cummax_out_index_dtype": lambda T, d: T.cummax(_x(T, d), 0, out=(
        T.zeros(2, 3, device=d), T.zeros(2, 3, dtype=T.int32, device=d))),
    "cummax_out_values_dtype": lambda T, d: T.cummax(_x(T, d, "int64"), 0, out=(
        T.zeros(2, 3, device=d), T.zeros(2, 3, dtype=T.int64, device=d))),
    "cummin_dim_out_of_range": lambda T, d: T.cummin(_x(T, d), -3),
    "cummax_empty": lambda T, d: T.cummax(T.zeros(0, 2, device=d), 0),
    "cummax_bool": lambda T, d: T.cummax(T.tensor([True, False, True], device=d), 0),
    "logcumsumexp_int": lambda T, d: T.logcumsumexp(_x(T, d, "int64"), 0),
    "logcumsumexp_bool": lambda T, d: T.logcumsumexp(_x(T, d, "bool"), 0),
    "logcumsumexp_dim_none": lambda T, d: T.logcumsumexp(_x(T, d), dim=None),
    "logcumsumexp_out_dtype": lambda T, d: T.logcumsumexp(_x(T, d), 0, out=T.zeros(
        2, 3, dtype=T.float64, device=d)),
    "logcumsumexp_out_int": lambda T, d: T.logcumsumexp(_x(T, d), 0, out=T.zeros(
        2, 3, dtype=T.int64, device=d)),
    "logcumsumexp_0d": lambda T, d: T.logcumsumexp(T.tensor(3.0, device=d), 0),
    "cumsum_method_dtype": lambda T, d: _x(T, d, "int32").cumsum(0, dtype=T.float16),
}

test_misuse = catalogue_test(CASES)
