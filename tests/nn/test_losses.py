"""Loss functions and loss modules against the torch oracle: every reduction, class weights,
ignore_index, label smoothing, probability targets; values, gradients (input and target) and
second derivatives."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import autograd_gpu as ag
from tests.autograd._util import both, same_error
from tests.nn._util import grads_of, second_grads, t

RNG = np.random.default_rng(1)
LOGITS = RNG.standard_normal((6, 4)) * 2
LOGITS_ND = RNG.standard_normal((3, 4, 2, 5))
CLASSES = np.array([0, 3, 1, 1, 2, 3])
CLASSES_ND = RNG.integers(0, 4, (3, 2, 5))
CLASS_WEIGHT = np.array([0.5, 2.0, 1.0, 0.25])
PROBS = RNG.dirichlet(np.ones(4), 6)
REDUCTIONS = ["mean", "sum", "none"]


def _F(T: Any) -> Any:
    return T.nn.functional


def _check(loss_fn: Any, inputs: dict[str, Any], device: str, grad_inputs: tuple[str, ...],
           hessian: str | None = None, **tol: float) -> None:
    """Compare ``loss_fn(F, **tensors)`` with torch: value, grad_fn name, gradients w.r.t.
    ``grad_inputs`` and (optionally) a Hessian-vector product w.r.t. ``hessian``."""

    def run(T: Any, dev: str) -> Any:
        ts = {k: (v if not isinstance(v, np.ndarray) else t(T, dev, v, grad=k in grad_inputs))
              for k, v in inputs.items()}
        out = loss_fn(_F(T), **ts)
        res = [out, out.grad_fn.name(), grads_of(out, [ts[k] for k in grad_inputs])]
        if hessian is not None:
            res.append(second_grads(loss_fn(_F(T), **ts), ts[hessian]))
        return res

    both(run, device, **tol)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
def test_regression_losses(name: str, reduction: str, device: str) -> None:
    _check(lambda F, x, y: getattr(F, name)(x, y, reduction=reduction),
           {"x": LOGITS, "y": PROBS}, device, ("x", "y"), hessian="x")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
def test_regression_losses_weighted(name: str, reduction: str, device: str) -> None:
    _check(lambda F, x, y, w: getattr(F, name)(x, y, reduction=reduction, weight=w),
           {"x": LOGITS, "y": PROBS, "w": RNG.random((6, 4))}, device, ("x", "y"))


def test_mse_loss_broadcast_warns(device: str) -> None:
    x = ag.ones(2, 3, device=device)
    with pytest.warns(UserWarning, match="Using a target size"):
        out = ag.nn.functional.mse_loss(x, ag.zeros(3, device=device))
    assert float(out) == 1.0


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [-100, 1])
def test_nll_loss(reduction: str, weighted: bool, ignore: int, device: str) -> None:
    logp = LOGITS - np.log(np.exp(LOGITS).sum(1, keepdims=True))
    inputs = {"x": logp, "y": CLASSES, "w": CLASS_WEIGHT if weighted else None}
    _check(lambda F, x, y, w: F.nll_loss(x, y, weight=w, ignore_index=ignore,
                                         reduction=reduction), inputs, device, ("x",))


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_nll_loss_nd_and_unbatched(reduction: str, device: str) -> None:
    _check(lambda F, x, y, w: F.nll_loss(x, y, weight=w, reduction=reduction),
           {"x": LOGITS_ND, "y": CLASSES_ND, "w": CLASS_WEIGHT}, device, ("x",))
    _check(lambda F, x, y: F.nll_loss(x, y, reduction=reduction),
           {"x": LOGITS[0], "y": np.array(2)}, device, ("x",))


def test_nll_loss_all_ignored_is_nan_with_zero_grad(device: str) -> None:
    _check(lambda F, x, y: F.nll_loss(x, y, ignore_index=1),
           {"x": LOGITS[:2], "y": np.array([1, 1])}, device, ("x",))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("ignore", [-100, 3])
@pytest.mark.parametrize("smoothing", [0.0, 0.15])
def test_cross_entropy_class_indices(reduction: str, weighted: bool, ignore: int,
                                     smoothing: float, device: str) -> None:
    inputs = {"x": LOGITS, "y": CLASSES, "w": CLASS_WEIGHT if weighted else None}
    _check(lambda F, x, y, w: F.cross_entropy(x, y, weight=w, ignore_index=ignore,
                                              reduction=reduction, label_smoothing=smoothing),
           inputs, device, ("x",), hessian="x")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("smoothing", [0.0, 0.2])
def test_cross_entropy_probabilities(reduction: str, weighted: bool, smoothing: float,
                                     device: str) -> None:
    inputs = {"x": LOGITS, "y": PROBS, "w": CLASS_WEIGHT if weighted else None}
    _check(lambda F, x, y, w: F.cross_entropy(x, y, weight=w, reduction=reduction,
                                              label_smoothing=smoothing),
           inputs, device, ("x", "y"), hessian="x")


@pytest.mark.parametrize("smoothing", [0.0, 0.1])
def test_cross_entropy_nd_and_unbatched(smoothing: float, device: str) -> None:
    _check(lambda F, x, y, w: F.cross_entropy(x, y, weight=w, label_smoothing=smoothing),
           {"x": LOGITS_ND, "y": CLASSES_ND, "w": CLASS_WEIGHT}, device, ("x",))
    _check(lambda F, x, y: F.cross_entropy(x, y, label_smoothing=smoothing),
           {"x": LOGITS[0], "y": np.array(3)}, device, ("x",))


def test_cross_entropy_is_stable_for_huge_logits(device: str) -> None:
    _check(lambda F, x, y: F.cross_entropy(x, y), {"x": LOGITS * 1e4, "y": CLASSES}, device,
           ("x",))
    x = ag.tensor([[1e4, -1e4, 0.0]], device=device, requires_grad=True)
    loss = ag.nn.functional.cross_entropy(x, ag.tensor([1], device=device))
    loss.backward()
    assert np.isfinite(float(loss)) and np.isfinite(x.grad.cpu().numpy()).all()


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_binary_cross_entropy(reduction: str, weighted: bool, device: str) -> None:
    p = 1 / (1 + np.exp(-LOGITS))
    inputs = {"x": p, "y": PROBS, "w": RNG.random(4) if weighted else None}
    _check(lambda F, x, y, w: F.binary_cross_entropy(x, y, weight=w, reduction=reduction),
           inputs, device, ("x", "y"), hessian="x")


def test_binary_cross_entropy_clamps_log(device: str) -> None:
    _check(lambda F, x, y: F.binary_cross_entropy(x, y, reduction="none"),
           {"x": np.array([0.0, 1.0, 0.0, 1.0, 0.5]), "y": np.array([1.0, 0.0, 0.0, 1.0, 0.3])},
           device, ("x", "y"))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("pos", [False, True])
def test_bce_with_logits(reduction: str, weighted: bool, pos: bool, device: str) -> None:
    inputs = {"x": LOGITS, "y": PROBS, "w": RNG.random((6, 4)) if weighted else None,
              "pw": RNG.random(4) * 3 if pos else None}
    _check(lambda F, x, y, w, pw: F.binary_cross_entropy_with_logits(
        x, y, weight=w, pos_weight=pw, reduction=reduction), inputs, device, ("x", "y"),
        hessian="x")


def test_bce_with_logits_is_stable(device: str) -> None:
    _check(lambda F, x, y, pw: F.binary_cross_entropy_with_logits(x, y, pos_weight=pw,
                                                                  reduction="none"),
           {"x": np.array([[800.0, -800.0, 50.0, -50.0]]), "y": np.array([[0.0, 1.0, 0.5, 1.0]]),
            "pw": np.array([2.0, 2.0, 2.0, 2.0])}, device, ("x", "y"))


LOSS_MODULES = [
    ("MSELoss", {}, "probs"), ("L1Loss", {"reduction": "sum"}, "probs"),
    ("CrossEntropyLoss", {"label_smoothing": 0.1}, "classes"),
    ("CrossEntropyLoss", {"weight": CLASS_WEIGHT, "ignore_index": 0}, "classes"),
    ("NLLLoss", {"weight": CLASS_WEIGHT, "reduction": "none"}, "classes"),
    ("BCELoss", {"weight": CLASS_WEIGHT}, "probs"),
    ("BCEWithLogitsLoss", {"pos_weight": CLASS_WEIGHT}, "probs"),
]


@pytest.mark.parametrize("name, kwargs, target", LOSS_MODULES)
def test_loss_modules(name: str, kwargs: dict[str, Any], target: str, device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        kw = {k: t(T, dev, v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        module = getattr(T.nn, name)(**kw)
        data = 1 / (1 + np.exp(-LOGITS)) if name == "BCELoss" else LOGITS
        x = t(T, dev, data, grad=True)
        y = t(T, dev, PROBS if target == "probs" else CLASSES)
        out = module(x, y)
        return out, grads_of(out, [x]), repr(module), [n for n, _ in module.named_buffers()]

    both(run, device)


@pytest.mark.parametrize("case", [
    lambda F, T, dev: F.nll_loss(T.randn(3, 4, device=dev), T.tensor([0, 1, 5], device=dev)),
    lambda F, T, dev: F.nll_loss(T.randn(3, 4, device=dev), T.tensor([0, 1, -5], device=dev)),
    lambda F, T, dev: F.nll_loss(T.randn(3, 4, device=dev), T.tensor([0, 1], device=dev)),
    lambda F, T, dev: F.nll_loss(T.randn(3, 4, device=dev), T.tensor([0, 1, 2], device=dev,
                                                                       dtype=T.int32)),
    lambda F, T, dev: F.nll_loss(T.randn(3, 4, device=dev), T.tensor([0, 1, 2], device=dev),
                                 weight=T.ones(3, device=dev)),
    lambda F, T, dev: F.nll_loss(T.randn(2, 4, 3, device=dev), T.zeros(2, 4, dtype=T.int64,
                                                                        device=dev)),
    lambda F, T, dev: F.nll_loss(T.randn(4, device=dev), T.zeros(2, dtype=T.int64, device=dev)),
    lambda F, T, dev: F.nll_loss(T.tensor(1.0, device=dev), T.tensor(1, device=dev)),
    lambda F, T, dev: F.cross_entropy(T.randn(3, 4, device=dev), T.rand(3, 4, device=dev),
                                      ignore_index=2),
    lambda F, T, dev: F.cross_entropy(T.randn(3, 4, device=dev), T.tensor([0, 1, 2], device=dev),
                                      label_smoothing=1.5),
    lambda F, T, dev: F.mse_loss(T.randn(3, device=dev), T.randn(3, device=dev), reduction="x"),
    lambda F, T, dev: F.mse_loss(T.randn(3, device=dev), T.randn(3, device=dev),
                                 weight=T.ones(2, device=dev)),
    lambda F, T, dev: F.binary_cross_entropy(T.tensor([1.5], device=dev),
                                             T.tensor([1.0], device=dev)),
    lambda F, T, dev: F.binary_cross_entropy(T.tensor([0.5, 0.5], device=dev),
                                             T.tensor([1.0], device=dev)),
    lambda F, T, dev: F.binary_cross_entropy_with_logits(T.randn(3, 4, device=dev),
                                                         T.rand(3, device=dev)),
])
def test_loss_errors(case: Any, device: str) -> None:
    same_error(lambda T, dev: case(T.nn.functional, T, dev), device)


def test_legacy_reduction_flags_warn(device: str) -> None:
    x, y = ag.ones(2, device=device), ag.zeros(2, device=device)
    with pytest.warns(UserWarning, match="reduction='sum' instead"):
        out = ag.nn.functional.mse_loss(x, y, size_average=False)
    assert float(out) == 2.0


# ---- finite differences (no oracle needed) ---------------------------------------------------

GRADCHECK = {
    "mse": (lambda F, x, y: F.mse_loss(x, y), PROBS),
    "cross_entropy": (lambda F, x, y: F.cross_entropy(x, y, label_smoothing=0.1), CLASSES),
    "cross_entropy_probs": (lambda F, x, y: F.cross_entropy(x, y, reduction="sum"), PROBS),
    "nll": (lambda F, x, y: F.nll_loss(x, y, reduction="none"), CLASSES),
    "bce": (lambda F, x, y: F.binary_cross_entropy(x.sigmoid(), y), PROBS),
    "bce_logits": (lambda F, x, y: F.binary_cross_entropy_with_logits(
        x, y, pos_weight=ag.tensor([1.0, 2.0, 0.5, 3.0], dtype=ag.float64,
                                   device=x.device)), PROBS),
}


@pytest.mark.parametrize("name", list(GRADCHECK))
def test_loss_gradcheck(name: str, device: str) -> None:
    fn, target = GRADCHECK[name]
    x = t(ag, device, LOGITS, grad=True)
    y = t(ag, device, target)
    assert ag.autograd.gradcheck(lambda a: fn(ag.nn.functional, a, y), (x,))
    assert ag.autograd.gradgradcheck(lambda a: fn(ag.nn.functional, a, y), (x,))
