"""F.linear_cross_entropy and nn.LinearCrossEntropyLoss against the oracle: plain and
K-dimensional losses, bias, class weights, label smoothing, probability targets, reductions,
gradients, the module's parameters and repr, and PyTorch's errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.misuse._catalogue import Case, catalogue_test
from tests.nn._util import copy_params
from tests.ops._same import same

RNG = np.random.default_rng(0)
X = RNG.standard_normal((5, 4))
W = RNG.standard_normal((3, 4))
W2 = RNG.standard_normal((3, 2, 4))


def _t(T: Any, d: str, a: np.ndarray, grad: bool = False) -> Any:
    return T.tensor(a, device=d, requires_grad=grad)


CONFIGS: dict[str, dict[str, Any]] = {
    "plain": {"w": W, "y": RNG.integers(0, 3, 5)},
    "bias_weight_sum": {"w": W, "y": RNG.integers(0, 3, 5), "bias": RNG.standard_normal(3),
                        "weight": np.array([0.5, 1.0, 2.0]), "reduction": "sum"},
    "smoothing_ignore": {"w": W, "y": np.array([0, 1, 2, 1, 0]), "label_smoothing": 0.2,
                         "ignore_index": 1},
    "probabilities_none": {"w": W, "y": RNG.dirichlet(np.ones(3), 5), "reduction": "none"},
    "k_dim": {"w": W2, "y": RNG.integers(0, 3, (5, 2)), "bias": RNG.standard_normal((3, 2))},
    "unbatched": {"w": W, "y": np.array(2), "x": X[0]},
}


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_matches_torch(device: str, name: str) -> None:
    cfg = CONFIGS[name]
    x = cfg.get("x", X)
    results = []
    for T, d in ((torch, "cpu"), (ag, device)):
        leaves = [_t(T, d, x, True), _t(T, d, cfg["w"], True)]
        kw: dict[str, Any] = {k: cfg[k] for k in ("reduction", "ignore_index", "label_smoothing")
                              if k in cfg}
        if "bias" in cfg:
            leaves.append(_t(T, d, cfg["bias"], True))
            kw["linear_bias"] = leaves[-1]
        if "weight" in cfg:
            kw["weight"] = _t(T, d, cfg["weight"])
        loss = T.nn.functional.linear_cross_entropy(leaves[0], leaves[1], _t(T, d, cfg["y"]),
                                                    **kw)
        grads = T.autograd.grad(loss.sum(), leaves)
        results.append((loss, grads))
    (theirs, their_grads), (ours, our_grads) = results
    same(ours, theirs, rtol=1e-12, atol=1e-12, strides=False)
    for o, t in zip(our_grads, their_grads):
        same(o, t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("out_features, bias", [((), False), ((2,), True)])
def test_module(device: str, out_features: tuple[int, ...], bias: bool) -> None:
    kw = {"out_features": out_features, "bias": bias, "label_smoothing": 0.1}
    ours, theirs = ag.nn.LinearCrossEntropyLoss(4, 3, **kw), torch.nn.LinearCrossEntropyLoss(
        4, 3, **kw)
    assert repr(ours) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in ours.state_dict().items()} == {
        k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    copy_params(ours, theirs.double())
    ours = ours.double().to(device)
    y = RNG.integers(0, 3, (5,) + out_features)
    same(ours(_t(ag, device, X), _t(ag, device, y)), theirs(_t(torch, "cpu", X),
                                                            _t(torch, "cpu", y)),
         rtol=1e-12, atol=1e-12)


def _x(T: Any, d: str, shape: tuple[int, ...] = (5, 4)) -> Any:
    return T.ones(shape, dtype=T.float64, device=d)


CASES: dict[str, Case] = {
    "input_3d": lambda T, d: T.nn.functional.linear_cross_entropy(
        _x(T, d, (2, 5, 4)), _x(T, d, (3, 4)), T.zeros(2, 5, dtype=T.int64, device=d)),
    "weight_1d": lambda T, d: T.nn.functional.linear_cross_entropy(
        _x(T, d), _x(T, d, (4,)), T.zeros(5, dtype=T.int64, device=d)),
    "in_features": lambda T, d: T.nn.functional.linear_cross_entropy(
        _x(T, d), _x(T, d, (3, 5)), T.zeros(5, dtype=T.int64, device=d)),
    "bias_shape": lambda T, d: T.nn.functional.linear_cross_entropy(
        _x(T, d), _x(T, d, (3, 4)), T.zeros(5, dtype=T.int64, device=d),
        linear_bias=_x(T, d, (4,))),
    "k_dim_unbatched": lambda T, d: T.nn.functional.linear_cross_entropy(
        _x(T, d, (4,)), _x(T, d, (3, 2, 4)), T.zeros(2, dtype=T.int64, device=d)),
    "probabilities_ignore_index": lambda T, d: T.nn.functional.linear_cross_entropy(
        _x(T, d), _x(T, d, (3, 4)), _x(T, d, (5, 3)) / 3, ignore_index=0),
    "module_weight_shape": lambda T, d: T.nn.LinearCrossEntropyLoss(4, 3,
                                                                    weight=_x(T, d, (2,))),
    "module_smoothing": lambda T, d: T.nn.LinearCrossEntropyLoss(4, 3, label_smoothing=1.5),
}

test_misuse = catalogue_test(CASES)
