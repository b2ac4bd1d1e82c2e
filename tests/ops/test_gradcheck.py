"""Every differentiable op in the table against central finite differences in float64
(``gradcheck``), and its backward against finite differences of itself (``gradgradcheck``)."""

from __future__ import annotations

from typing import Any

import pytest

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck, gradgradcheck
from tests.ops.op_db import OpInfo, cases, float_outputs, sample_arrays

TOL = {"eps": 1e-6, "atol": 1e-5, "rtol": 1e-3}


def _inputs(op: OpInfo, shapes: Any, device: str) -> list[Any]:
    return [ag.tensor(a, dtype=ag.float64, device=device, requires_grad=True)
            for a in sample_arrays(op, shapes)]


def _float_only(op: OpInfo) -> Any:
    return lambda *xs: tuple(float_outputs(op.ours(*xs)))


@pytest.mark.parametrize("op,shapes", cases(lambda op: op.differentiable and op.gradcheck))
def test_gradcheck(op: OpInfo, shapes: Any, device: str) -> None:
    assert gradcheck(_float_only(op), _inputs(op, shapes, device), **TOL)


@pytest.mark.parametrize("op,shapes", cases(lambda op: op.differentiable and op.gradcheck
                                            and op.twice))
def test_gradgradcheck(op: OpInfo, shapes: Any, device: str) -> None:
    assert gradgradcheck(_float_only(op), _inputs(op, shapes, device), **TOL)
