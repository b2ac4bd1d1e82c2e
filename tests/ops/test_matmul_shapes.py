"""Matrix products at every small shape, empty dimensions included, against PyTorch: ``matmul``
(every pair of ranks 1 to 3, each operand requiring grad or not, which decides PyTorch's folding),
``mm``, ``bmm``, ``mv`` and ``dot``. Compared: the outcome (or the error's type and first
sentence), the values, the node, the layout, and the gradients.
"""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import first_sentence

SIZES = (0, 1, 2)
GRADS = ((True, True), (True, False), (False, True))


def _outcome(m: Any, fn: str, a: tuple[int, ...], b: tuple[int, ...], grad: tuple[bool, bool],
             dev: str) -> Any:
    rng = np.random.default_rng(0)
    kw = {"device": dev} if m is ag else {}
    x = m.tensor(rng.standard_normal(a), requires_grad=grad[0], **kw)
    y = m.tensor(rng.standard_normal(b), requires_grad=grad[1], **kw)
    try:
        out = getattr(m, fn)(x, y)
        w = m.tensor(rng.standard_normal(tuple(out.shape)), **kw)
        (out * w).sum().backward()
    except Exception as e:  # noqa: BLE001
        return type(e).__name__, first_sentence(str(e))
    grads = [None if t.grad is None else np.round(t.grad.cpu().numpy(), 8).tolist() for t in (x, y)]
    return (tuple(out.shape), np.round(out.detach().cpu().numpy(), 8).tolist(),
            out.grad_fn.name(), out.is_contiguous(), grads)


def _shapes(nd: int) -> list[tuple[int, ...]]:
    return list(itertools.product(SIZES, repeat=nd))


@pytest.mark.parametrize("da,db", list(itertools.product((1, 2, 3), repeat=2)))
def test_matmul_matches_torch(device: str, da: int, db: int) -> None:
    for a, b, grad in itertools.product(_shapes(da), _shapes(db), GRADS):
        ours = _outcome(ag, "matmul", a, b, grad, device)
        theirs = _outcome(torch, "matmul", a, b, grad, "cpu")
        assert ours == theirs, (a, b, grad, ours, theirs)


@pytest.mark.parametrize("fn,da,db", [("mm", 2, 2), ("bmm", 3, 3), ("mv", 2, 1), ("dot", 1, 1)])
def test_products_match_torch(device: str, fn: str, da: int, db: int) -> None:
    for a, b in itertools.product(_shapes(da), _shapes(db)):
        ours = _outcome(ag, fn, a, b, (True, True), device)
        assert ours == _outcome(torch, fn, a, b, (True, True), "cpu"), (a, b, ours)
