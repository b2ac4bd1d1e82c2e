"""AdaptiveLogSoftmaxWithLoss against the torch oracle with copied weights: parameter names and
shapes, repr, init, forward's (output, loss), log_prob, predict, gradients, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same, same_error
from tests.nn._util import copy_params, grads_of

RNG = np.random.default_rng(5)
CONFIGS = [
    (8, 10, [2, 5], {}),
    (8, 10, [3], {"head_bias": True}),
    (16, 20, [4, 9, 15], {"div_value": 2.0}),
    (8, 10, [2, 5], {"div_value": 8.0, "head_bias": True}),  # a cluster of rank 0
]


def _pair(in_f: int, n: int, cutoffs: list[int], kw: dict[str, Any], device: str) -> Any:
    ours = ag.nn.AdaptiveLogSoftmaxWithLoss(in_f, n, cutoffs, **kw).double()
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(in_f, n, cutoffs, **kw).double()
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    copy_params(ours, theirs)
    return ours.to(device), theirs


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")
@pytest.mark.parametrize("in_f, n, cutoffs, kw", CONFIGS)
def test_adaptive_softmax_matches_torch(in_f: int, n: int, cutoffs: list[int],
                                        kw: dict[str, Any], device: str) -> None:
    ours, theirs = _pair(in_f, n, cutoffs, kw, device)
    x = RNG.standard_normal((7, in_f))
    target = RNG.integers(0, n, 7)
    target[:2] = [0, n - 1]
    res = []
    for T, dev, mod in ((ag, device, ours), (torch, "cpu", theirs)):
        xs = T.tensor(x.tolist(), dtype=T.float64, device=dev, requires_grad=True)
        out = mod(xs, T.tensor(target.tolist(), device=dev))
        assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
        params = [p for p in mod.parameters() if p.numel()]
        gl = T.autograd.grad(out.loss, [xs, *params], retain_graph=True, allow_unused=True)
        res.append([out.output, out.loss, *grads_of(out.output, [xs, *params]), *gl,
                    mod.log_prob(xs), mod.predict(xs)])
        single = mod(xs[3], T.tensor(int(target[3]), device=dev))
        res[-1] += [single.output, single.loss]
    assert_same(res[0], res[1], rtol=1e-12, atol=1e-13)


@pytest.mark.filterwarnings("ignore:Initializing zero-element tensors")
def test_adaptive_softmax_predict_mixed_and_log_prob_normalised(device: str) -> None:
    ag.manual_seed(0)
    ours, theirs = _pair(6, 12, [2, 6], {"head_bias": True}, device)
    with torch.no_grad(), ag.no_grad():
        theirs.head.bias.copy_(torch.tensor([0.0, 0.0, 0.3, -9.0], dtype=torch.float64))
        ours.head.bias.copy_(ag.tensor([0.0, 0.0, 0.3, -9.0], dtype=ag.float64, device=device))
    x = np.random.default_rng(3).standard_normal((9, 6)) * 3
    xo = ag.tensor(x.tolist(), dtype=ag.float64, device=device)
    xt = torch.tensor(x.tolist(), dtype=torch.float64)
    head = theirs.head(xt).argmax(1) >= 2
    assert head.any() and not head.all()  # predict's mixed path
    assert ours.predict(xo).tolist() == theirs.predict(xt).tolist()
    lp = ours.log_prob(xo).detach()
    assert np.allclose(lp.exp().sum(1).cpu().numpy(), 1.0, atol=1e-12)


def test_adaptive_softmax_init(device: str) -> None:
    m = ag.nn.AdaptiveLogSoftmaxWithLoss(64, 100, [10, 50], device=device)
    w = m.head.weight.detach().cpu().numpy()
    bound = 1 / np.sqrt(64)
    assert w.dtype == np.float32 and np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert m.head.bias is None and tuple(m.tail[1][0].weight.shape) == (4, 64)


ERRORS = [
    lambda T, d: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, []),
    lambda T, d: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [5, 2]),
    lambda T, d: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2, 10]),
    lambda T, d: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2, 2]),
    lambda T, d: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [0, 2]),
    lambda T, d: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2.5]),
    lambda T, d: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2])(T.randn(3, 8), T.tensor([0, 10, 1])),
    lambda T, d: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2])(T.randn(3, 8), T.tensor([0, -1, 1])),
    lambda T, d: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2])(T.randn(3, 8), T.tensor([0, 1])),
    lambda T, d: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2])(T.randn(3, 8), T.tensor(1)),
    lambda T, d: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2])(T.randn(8), T.tensor([1])),
    lambda T, d: T.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [2])(T.randn(3, 8), T.tensor([[1]])),
]


@pytest.mark.parametrize("fn", ERRORS)
def test_adaptive_softmax_errors(fn: Any, device: str) -> None:
    same_error(fn, device)
