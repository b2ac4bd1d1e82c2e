"""functions/settings.py and functions/tensor_info.py against the oracle: the settings' values,
validation and errors (restored after each test), the default device, and the tensor questions
and real-dtype conjugate family."""

from __future__ import annotations

from typing import Any, Iterator

import pytest
import torch

import autograd_gpu as ag
from tests.misuse._catalogue import Case, catalogue_test


@pytest.fixture(autouse=True)
def _restore() -> Iterator[None]:
    yield
    for m in (torch, ag):
        m.use_deterministic_algorithms(False)
        m.set_float32_matmul_precision("highest")
        m.set_default_device(None)


def _x(T: Any, dev: str) -> Any:
    return T.arange(6.0, device=dev).reshape(2, 3)


CASES: dict[str, Case] = {
    "set_num_threads_zero": lambda T, dev: T.set_num_threads(0),
    "set_num_threads_float": lambda T, dev: T.set_num_threads(1.5),
    "deterministic_modes": lambda T, dev: [
        (T.set_deterministic_debug_mode(m), T.get_deterministic_debug_mode(),
         T.are_deterministic_algorithms_enabled(),
         T.is_deterministic_algorithms_warn_only_enabled())
        for m in ("warn", "error", "default", 1, 2, 0)],
    "deterministic_bad_mode": lambda T, dev: T.set_deterministic_debug_mode("x"),
    "deterministic_bad_int": lambda T, dev: T.set_deterministic_debug_mode(3),
    "use_deterministic_warn_only": lambda T, dev: (
        T.use_deterministic_algorithms(True, warn_only=True),
        T.get_deterministic_debug_mode()),
    "matmul_precision": lambda T, dev: [(T.set_float32_matmul_precision(p),
                                         T.get_float32_matmul_precision())
                                        for p in ("high", "medium", "highest")],
    "is_signed": lambda T, dev: [T.is_signed(_x(T, dev).to(d)) for d in
                                 (T.float32, T.int8, T.uint8, T.bool, T.int64)],
    "is_nonzero": lambda T, dev: (T.is_nonzero(T.tensor([0.5], device=dev)),
                                  T.is_nonzero(T.tensor(0, device=dev))),
    "is_nonzero_empty": lambda T, dev: T.is_nonzero(T.tensor([], device=dev)),
    "is_nonzero_many": lambda T, dev: _x(T, dev).is_nonzero(),
    "is_same_size": lambda T, dev: (T.is_same_size(_x(T, dev), _x(T, dev)),
                                    _x(T, dev).is_same_size(_x(T, dev).t())),
    "is_same_size_not_tensor": lambda T, dev: T.is_same_size(_x(T, dev), 3),
    "conj_family": lambda T, dev: (lambda x: (T.conj(x) is x, x.conj() is x, T.real(x) is x,
                                              T.resolve_conj(x) is x, T.resolve_neg(x) is x,
                                              T.is_conj(x), x.is_neg(), T.is_complex(x),
                                              T.conj_physical(x)))(_x(T, dev)),
    "imag_real_tensor": lambda T, dev: T.imag(_x(T, dev)),
    "adjoint": lambda T, dev: (T.adjoint(_x(T, dev)), _x(T, dev).adjoint().stride()),
    "adjoint_1d": lambda T, dev: T.adjoint(T.ones(2, device=dev)),
    "typename": lambda T, dev: [T.typename(T.ones(2, dtype=d)) for d in
                                (T.float32, T.float64, T.int64, T.bool, T.uint8)] + [
        T.typename(3), T.typename("a")],
    "is_storage": lambda T, dev: T.is_storage(_x(T, dev)),
    "is_inference": lambda T, dev: T.is_inference(_x(T, dev)),
    "new_sizes": lambda T, dev: (lambda t: (t.shape, t.dtype == T.float32))(
        _x(T, dev).new(2, 3)),
    "new_data": lambda T, dev: _x(T, dev).new([1, 2]),
    "new_empty": lambda T, dev: _x(T, dev).new().shape,
    "new_empty_strided": lambda T, dev: _x(T, dev).new_empty_strided((2, 2), (1, 2)).stride(),
}

test_settings_info = catalogue_test(CASES)


def test_default_device_reaches_factories(device: str) -> None:
    assert ag.get_default_device() == ag.device("cpu")
    ag.set_default_device(device)
    assert ag.get_default_device().type == device
    for t in (ag.zeros(2), ag.tensor([1.0]), ag.arange(3), ag.randn(2), ag.hann_window(3)):
        assert t.device.type == device
    assert (ag.ones(2) + 1).device.type == device
    ag.set_default_device(None)
    assert ag.get_default_device() == ag.device("cpu")


def test_matmul_precision_warns_on_bad_value() -> None:
    with pytest.warns(UserWarning, match="bad is not one of 'highest', 'high', or 'medium'"):
        ag.set_float32_matmul_precision("bad")
    assert ag.get_float32_matmul_precision() == "highest"


def test_threads_and_flush_denormal() -> None:
    n = ag.get_num_threads()
    ag.set_num_threads(1)
    assert ag.get_num_threads() == 1
    ag.set_num_threads(n)
    assert ag.set_flush_denormal(False) is False and ag.get_num_interop_threads() >= 1
