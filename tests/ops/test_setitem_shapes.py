"""``t[key] = value`` with values of other shapes: PyTorch's broadcasting (leading size-1 dims
dropped) and its errors, with and without autograd."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag


def _run(m: Any, device: str, key: Any, vshape: tuple[int, ...], grad: bool) -> Any:
    dev = {} if m is torch else {"device": device}
    base = m.arange(6, dtype=m.float64, **dev).reshape(2, 3)
    v = m.ones(*vshape, dtype=m.float64, **dev) * 7
    if grad:
        base.requires_grad_()
        v.requires_grad_()
        x = base * 1
    else:
        x = base.clone()
    k = key(m, dev)
    x[k] = v
    if not grad:
        return x.tolist(), None, None
    (x * m.arange(6, dtype=m.float64, **dev).reshape(2, 3)).sum().backward()
    return x.tolist(), base.grad.tolist(), v.grad.tolist()


KEYS: list[tuple[str, Callable[..., Any], tuple[int, ...]]] = [
    ("row-leading1", lambda m, d: 0, (1, 3)),
    ("slice-bcast", lambda m, d: (slice(None), 1), (1,)),
    ("adv-leading1", lambda m, d: m.tensor([0, 1], **d), (1, 1, 3)),
    ("adv-bcast", lambda m, d: (m.tensor([0, 1], **d), 2), (1,)),
]
BAD: list[tuple[str, Callable[..., Any], tuple[int, ...]]] = [
    ("row-wrong", lambda m, d: 0, (2,)),
    ("row-more-dims", lambda m, d: 0, (2, 3)),
    ("adv-wrong", lambda m, d: m.tensor([0, 1], **d), (3, 3)),
]


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("name, key, vshape", KEYS, ids=[k[0] for k in KEYS])
def test_setitem_broadcasts_like_torch(device: str, name: str, key: Any, vshape: Any, grad: bool) -> None:
    ours = _run(ag, device, key, vshape, grad)
    theirs = _run(torch, device, key, vshape, grad)
    for a, b in zip(ours, theirs):
        if b is not None:
            np.testing.assert_allclose(np.asarray(a), np.asarray(b))


@pytest.mark.parametrize("grad", [False, True])
@pytest.mark.parametrize("name, key, vshape", BAD, ids=[k[0] for k in BAD])
def test_setitem_shape_errors_match_torch(device: str, name: str, key: Any, vshape: Any, grad: bool) -> None:
    with pytest.raises(RuntimeError) as theirs:
        _run(torch, device, key, vshape, grad)
    with pytest.raises(RuntimeError) as ours:
        _run(ag, device, key, vshape, grad)
    assert str(ours.value).split(".")[0] == str(theirs.value).split(".")[0]
