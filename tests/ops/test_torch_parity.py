"""Every op in the table against PyTorch on the same inputs (float32 and float64): forward values
and dtypes, ``grad_fn.name()``, gradients of a random weighted sum, and second-order gradients
(``autograd.grad`` with ``create_graph=True``, then the gradient of a function of the gradient)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.ops.op_db import OpInfo, cases, float_outputs, sample_arrays

DTYPES = ["float32", "float64"]


def _tol(op: OpInfo, dtype: str) -> dict[str, float]:
    return {"rtol": op.rtol, "atol": op.atol} if dtype == "float32" else \
        {"rtol": 1e-9, "atol": 1e-11}


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().cpu()) if isinstance(t, ag.Tensor) else t.detach().numpy()


def _close(got: Any, want: Any, tol: dict[str, float], what: str) -> None:
    if want is None:
        assert got is None or not np.any(_np(got)), f"{what}: torch has None"
        return
    assert got is not None, f"{what}: torch has a gradient, we have None"
    assert tuple(got.shape) == tuple(want.shape), what
    assert got.dtype.name == str(want.dtype).replace("torch.", ""), what
    np.testing.assert_allclose(_np(got), _np(want), equal_nan=True, err_msg=what, **tol)


def _make(op: OpInfo, shapes: Any, dtype: str, device: str) -> tuple[list[Any], list[Any]]:
    arrays = sample_arrays(op, shapes)
    rg = op.differentiable
    ours = [ag.tensor(a, dtype=getattr(ag, dtype), device=device, requires_grad=rg)
            for a in arrays]
    theirs = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=rg) for a in arrays]
    return ours, theirs


def _outputs(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,shapes", cases())
def test_forward_and_grad_fn_match_torch(op: OpInfo, shapes: Any, dtype: str,
                                         device: str) -> None:
    ours, theirs = _make(op, shapes, dtype, device)
    got, want = _outputs(op.ours(*ours)), _outputs(op.theirs(*theirs))
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        _close(g, w, _tol(op, dtype), f"output {i}")
        assert g.requires_grad == w.requires_grad, f"output {i} requires_grad"
        if w.grad_fn is None:
            assert g.grad_fn is None, f"output {i}"
        else:
            assert g.grad_fn is not None, f"output {i}: torch has {w.grad_fn.name()}"
            assert g.grad_fn.name() == w.grad_fn.name(), f"output {i}"
    if op.grad_fn is not None:  # the table documents PyTorch's name
        assert float_outputs(want)[0].grad_fn.name() == op.grad_fn


def _weights(outs: list[Any], seed: int) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(tuple(o.shape)) for o in outs]


def _weighted_sum(m: Any, outs: list[Any], weights: list[np.ndarray], power: int = 1) -> Any:
    total = None
    for o, w in zip(outs, weights):
        term = (m.tensor(w, dtype=o.dtype, device=o.device) * o ** power).sum()
        total = term if total is None else total + term
    return total


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,shapes", cases(lambda op: op.differentiable))
def test_gradients_match_torch(op: OpInfo, shapes: Any, dtype: str, device: str) -> None:
    ours, theirs = _make(op, shapes, dtype, device)
    outs_o, outs_t = float_outputs(op.ours(*ours)), float_outputs(op.theirs(*theirs))
    w = _weights(outs_t, 1)
    _weighted_sum(ag, outs_o, w).backward()
    _weighted_sum(torch, outs_t, w).backward()
    for i, (x, y) in enumerate(zip(ours, theirs)):
        _close(x.grad, y.grad, _tol(op, dtype), f"grad of input {i}")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op,shapes", cases(lambda op: op.differentiable and op.twice))
def test_second_order_matches_torch(op: OpInfo, shapes: Any, dtype: str, device: str) -> None:
    ours, theirs = _make(op, shapes, dtype, device)
    outs_o, outs_t = float_outputs(op.ours(*ours)), float_outputs(op.theirs(*theirs))
    w = _weights(outs_t, 2)
    # NOTE: squaring the outputs makes every first gradient depend on the inputs, so the second
    # backward also runs for ops that are linear in their inputs.
    first_o = ag.autograd.grad(_weighted_sum(ag, outs_o, w, 2), ours, create_graph=True,
                               allow_unused=True)
    first_t = torch.autograd.grad(_weighted_sum(torch, outs_t, w, 2), theirs, create_graph=True,
                                  allow_unused=True)
    tol = {k: v * 10 for k, v in _tol(op, dtype).items()}
    for i, (g, h) in enumerate(zip(first_o, first_t)):
        _close(g, h, tol, f"first grad of input {i}")
    pairs = [(g, h) for g, h in zip(first_o, first_t) if h is not None and h.requires_grad]
    if not pairs:
        return
    v = _weights([h for _, h in pairs], 3)
    second_o = ag.autograd.grad(_weighted_sum(ag, [g for g, _ in pairs], v), ours,
                                allow_unused=True)
    second_t = torch.autograd.grad(_weighted_sum(torch, [h for _, h in pairs], v), theirs,
                                   allow_unused=True)
    for i, (g, h) in enumerate(zip(second_o, second_t)):
        _close(g, h, tol, f"second grad of input {i}")
