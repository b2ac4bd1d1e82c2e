"""functions/factories.py against the oracle: window functions, logspace, range, scalar_tensor,
empty_strided and vander (values, dtypes, errors); vander's gradient by finite differences
(PyTorch 2.13's own vander backward fails with an in-place error)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck
from tests.misuse._catalogue import Case, catalogue_test

_WINDOWS = ("hann_window", "hamming_window", "bartlett_window", "blackman_window",
            "kaiser_window")


def _window(name: str, n: int, periodic: bool, *args: Any, **kw: Any) -> Case:
    return lambda T, dev: getattr(T, name)(n, periodic, *args, device=dev, **kw)


def _quiet_range(*args: Any, **kw: Any) -> Case:
    def run(T: Any, dev: str) -> Any:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return T.range(*args, device=dev, **kw)
    return run


CASES: dict[str, Case] = {
    **{f"{w}_{n}_{p}": _window(w, n, p) for w in _WINDOWS for n in (0, 1, 2, 5, 8)
       for p in (True, False)},
    "hann_float64": lambda T, dev: T.hann_window(7, dtype=T.float64, device=dev),
    "hamming_alpha_beta": _window("hamming_window", 6, False, 0.5, 0.3),
    "kaiser_beta": _window("kaiser_window", 6, False, 3.0),
    "window_int_dtype": lambda T, dev: T.hann_window(4, dtype=T.int64),  # names the device
    "window_negative": lambda T, dev: T.hann_window(-1, device=dev),
    "window_float_length": lambda T, dev: T.hann_window(2.0, device=dev),
    "logspace": lambda T, dev: T.logspace(-1, 2, 4, device=dev),
    "logspace_base2": lambda T, dev: T.logspace(0, 3, 4, base=2, device=dev),
    "logspace_int": lambda T, dev: T.logspace(0, 2, 3, dtype=T.int64, device=dev),
    "range": _quiet_range(0, 1, 0.25),
    "range_one_arg": _quiet_range(3),
    "range_negative_step": _quiet_range(3, 0, -1),
    "range_int_dtype": lambda T, dev: _quiet_range(1, 4, dtype=T.int64)(T, dev),
    "range_bad_sign": _quiet_range(0, 3, -1),
    "range_zero_step": _quiet_range(0, 1, 0),
    "scalar_tensor": lambda T, dev: (lambda t: (t, repr(t.dtype)))(T.scalar_tensor(3, device=dev)),
    "scalar_tensor_int": lambda T, dev: T.scalar_tensor(3, dtype=T.int64, device=dev),
    "empty_strided_strides": lambda T, dev: T.empty_strided((2, 3), (1, 2), device=dev).stride(),
    "empty_strided_gapped": lambda T, dev: T.empty_strided((2, 3), (8, 2), device=dev).stride(),
    "empty_strided_fill": lambda T, dev: T.empty_strided((2, 3), (1, 2), device=dev).fill_(1),
    "empty_strided_mismatch": lambda T, dev: T.empty_strided((2, 3), (1,), device=dev),
    "vander": lambda T, dev: T.vander(T.tensor([1.0, 2.0, 3.0], device=dev)),
    "vander_n": lambda T, dev: T.vander(T.tensor([1, 2, 3], device=dev), N=4, increasing=True),
    "vander_zero_columns": lambda T, dev: T.vander(T.tensor([1.0, 2.0], device=dev), N=0),
    "vander_2d": lambda T, dev: T.vander(T.ones(2, 2, device=dev)),
    "vander_negative_n": lambda T, dev: T.vander(T.ones(2, device=dev), N=-1),
}

test_factories = catalogue_test(CASES)


def test_range_warns_as_pytorch(device: str) -> None:
    with pytest.warns(UserWarning, match="torch.range is deprecated"):
        ag.range(0, 2, device=device)


@pytest.mark.parametrize("increasing", [False, True])
def test_vander_gradient(device: str, increasing: bool) -> None:
    x = ag.tensor(np.array([0.0, -1.5, 2.0, 0.5]), dtype=ag.float64, device=device,
                  requires_grad=True)
    assert gradcheck(lambda t: ag.vander(t, 5, increasing=increasing), (x,))

