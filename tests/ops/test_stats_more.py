"""pdist against the oracle: p in {0, 0.5, 1, 1.5, 2, 3, inf}, repeated rows (distance 0),
ties of the inf-norm, empty and single-row inputs, non-contiguous input, misuse; gradients
(torch's values, gradcheck in float64) and PyTorch's refusal of double backward."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck
from tests.misuse._catalogue import Case, catalogue_test
from tests.ops._same import same

_P = [0, 0.5, 1, 1.5, 2, 3, float("inf")]
_ROWS = [[0.0, 1.0, 2.0], [1.0, 1.0, 0.0], [3.0, -1.0, 2.0], [0.0, 1.0, 2.0], [0.5, 2.0, -1.0]]


def _x(T: Any, dev: str, dtype: Any = None) -> Any:
    return T.tensor(_ROWS, dtype=dtype or T.float64, device=dev)


CASES: dict[str, Case] = {
    "float32": lambda T, dev: T.pdist(_x(T, dev, T.float32)),
    "transposed": lambda T, dev: T.pdist(_x(T, dev).t().contiguous().t(), 1),
    "one_row": lambda T, dev: T.pdist(T.ones(1, 3, device=dev)),
    "no_rows": lambda T, dev: T.pdist(T.ones(0, 3, device=dev)),
    "no_cols": lambda T, dev: T.pdist(T.ones(3, 0, device=dev)),
    "int_p": lambda T, dev: T.pdist(_x(T, dev), p=1),
    "1d": lambda T, dev: T.pdist(T.ones(3, device=dev)),
    "3d": lambda T, dev: T.pdist(T.ones(2, 2, 2, device=dev)),
    "negative_p": lambda T, dev: T.pdist(_x(T, dev), -1),
    "int_input": lambda T, dev: T.pdist(T.ones(2, 2, dtype=T.int64, device=dev)),
    "complex_p": lambda T, dev: T.pdist(_x(T, dev), p=2j),
    "double_backward": lambda T, dev: _double_backward(T, dev),
}


def _double_backward(T: Any, dev: str) -> Any:
    x = _x(T, dev).requires_grad_()
    (g,) = T.autograd.grad(T.pdist(x, 1.5).sum(), x, create_graph=True)
    return T.autograd.grad(g.sum(), x)


test_pdist_misuse = catalogue_test(CASES)


@pytest.mark.parametrize("p", _P)
def test_pdist_values_and_gradients(device: str, p: float) -> None:
    xt = _x(torch, "cpu").requires_grad_()
    x = _x(ag, device).requires_grad_()
    out, theirs = ag.pdist(x, p), torch.pdist(xt, p)
    same(out, theirs, rtol=1e-12, atol=1e-12)
    assert out.grad_fn.name() == theirs.grad_fn.name()
    w = torch.linspace(-1.0, 2.0, theirs.numel(), dtype=torch.float64)
    (theirs * w).sum().backward()
    (out * ag.tensor(w.numpy(), device=device)).sum().backward()
    same(x.grad, xt.grad, rtol=1e-12, atol=1e-12)
    # NOTE: away from the kinks (repeated rows, equal columns, inf-norm ties)
    smooth = ag.tensor([[0.1, 1.3], [1.2, -0.4], [2.9, 0.7]], dtype=ag.float64, device=device,
                       requires_grad=True)
    assert gradcheck(lambda a: ag.pdist(a, p), (smooth,))
