"""Anomaly detection: NaN in backward, forward stacks in the warning, and our forward check."""

from __future__ import annotations

import warnings
from typing import Any

import pytest
import torch

import autograd_gpu as ag

from ._util import catch, first_sentence


def nan_backward(T: Any, dev: str) -> Any:
    a = T.tensor([0.0], device=dev, requires_grad=True)
    b = T.tensor([0.0], device=dev, requires_grad=True)
    y = (a / b).sum()  # forward-line
    y.backward()


def run_with_anomaly(T: Any, dev: str) -> tuple[BaseException, list[str]]:
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with T.autograd.detect_anomaly():
            err = catch(lambda: nan_backward(T, dev))
    return err, [str(x.message) for x in w]


def test_nan_in_backward_raises_like_torch(device: str) -> None:
    theirs, twarn = run_with_anomaly(torch, "cpu")
    ours, owarn = run_with_anomaly(ag, device)
    assert str(ours) == str(theirs) == "Function 'DivBackward0' returned nan values in its 1th output."
    assert type(ours) is RuntimeError
    assert owarn[0] == twarn[0]  # "Anomaly Detection has been enabled. ..."
    stack = [m for m in owarn if m.startswith("Error detected in DivBackward0.")]
    assert len(stack) == 1
    assert first_sentence(stack[0]) == first_sentence(
        next(m for m in twarn if m.startswith("Error detected")))
    assert "test_anomaly.py" in stack[0] and "forward-line" in stack[0]


def test_no_check_without_anomaly_mode(device: str) -> None:
    a = ag.tensor([0.0], device=device, requires_grad=True)
    b = ag.tensor([0.0], device=device, requires_grad=True)
    with warnings.catch_warnings(), pytest.MonkeyPatch.context():
        warnings.simplefilter("ignore")
        (a / b).sum().backward()
    assert bool(ag.isnan(b.grad).all())


def test_set_detect_anomaly_forms(device: str) -> None:
    for T in (torch, ag):
        assert not T.is_anomaly_enabled()
        with T.autograd.set_detect_anomaly(True):
            assert T.is_anomaly_enabled()
            assert T.is_anomaly_check_nan_enabled()
        assert not T.is_anomaly_enabled()
        T.autograd.set_detect_anomaly(True, check_nan=False)
        try:
            assert T.is_anomaly_enabled()
            assert not T.is_anomaly_check_nan_enabled()
        finally:
            T.autograd.set_detect_anomaly(False)
        assert not T.is_anomaly_enabled() and T.is_anomaly_check_nan_enabled()


def test_check_nan_false_skips_nan_check(device: str) -> None:
    with ag.autograd.set_detect_anomaly(True, check_nan=False), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = ag.tensor([0.0], device=device, requires_grad=True)
        b = ag.tensor([0.0], device=device, requires_grad=True)
        (a / b).sum().backward()
    assert bool(ag.isnan(b.grad).all())


def test_error_in_backward_warns_forward_stack(device: str) -> None:
    x = ag.tensor([1.0, 2.0], device=device, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with ag.autograd.set_detect_anomaly(True):
            y = x.exp()  # exp-line
            y.add_(1)
            with pytest.raises(RuntimeError, match="modified by an inplace operation"):
                y.sum().backward()
    msgs = [str(m.message) for m in w if "Error detected in ExpBackward0" in str(m.message)]
    assert len(msgs) == 1 and "exp-line" in msgs[0]


def test_check_forward_catches_nan_and_inf(device: str) -> None:
    x = ag.tensor([-1.0, 1.0], device=device, requires_grad=True)
    with ag.autograd.set_detect_anomaly(True, check_forward=True), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "invalid value in log"
        with pytest.raises(RuntimeError, match="Function 'LogBackward0' produced non-finite"):
            x.log()
        with pytest.raises(RuntimeError, match="Function 'DivBackward0' produced non-finite"):
            x / ag.tensor([0.0, 1.0], device=device)
        y = x.exp()  # finite: fine
    assert y.grad_fn.name() == "ExpBackward0"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert bool(x.log().isnan()[0])  # outside the mode: no check
