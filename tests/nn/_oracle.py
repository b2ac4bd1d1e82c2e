"""A shared check for the pooling, padding and resampling tests: run one function of
``nn.functional`` in both libraries, compare values, index outputs, input gradients and the
grad_fn name."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same
from tests.nn._util import grads_of, t


def check_fn(fn: Callable[[Any, Any], Any], xa: Any, device: str, dtype: str = "float64",
             name: str | None = None, grad: bool = True, **tol: float) -> None:
    """``fn(T, x)`` (a tensor, or ``(values, indices)``) under torch and us on ``xa``."""
    if not tol:
        tol = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else \
            {"rtol": 1e-11, "atol": 1e-12}
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x = t(T, dev, np.asarray(xa), grad, getattr(T, dtype))
        out = fn(T, x)
        vals = out[0] if isinstance(out, tuple) else out
        gname = type(vals.grad_fn).__name__ if vals.grad_fn is not None else None
        res.append((out, grads_of(vals, [x]) if grad else None, gname))
    assert_same(res[0][0], res[1][0], **tol)
    if grad:
        assert_same(res[0][1], res[1][1], **tol)
        assert res[0][2] == res[1][2], (res[0][2], res[1][2])
        if name is not None:
            assert res[0][2] == name
