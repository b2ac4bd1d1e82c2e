"""The losses beyond cross entropy and friends, against the torch oracle: smooth L1, Huber, KL,
Poisson and Gaussian NLL, the margin and embedding losses, CTC and their modules. Values,
grad_fn names, gradients (input and target where PyTorch gives one), Hessian-vector products
where PyTorch has a double backward, errors and warnings. float64 throughout; the default
tolerances of ``both`` apply."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import both, same_error
from tests.nn._util import grads_of, second_grads, t

RNG = np.random.default_rng(7)
X = RNG.standard_normal((5, 4)) * 1.5
Y = RNG.standard_normal((5, 4))
Z = RNG.standard_normal((5, 4))
SIGNS = np.where(RNG.random(5) > 0.5, 1.0, -1.0)
SIGNS_2D = np.where(RNG.random((5, 4)) > 0.5, 1.0, -1.0)
POS = RNG.random((5, 4)) * 3 + 0.1
PROBS = RNG.dirichlet(np.ones(4), 5)
CLASSES = np.array([0, 3, 1, 1, 2])
REDUCTIONS = ["mean", "sum", "none"]


def _check(loss_fn: Any, inputs: dict[str, Any], device: str, grad_inputs: tuple[str, ...],
           hessian: str | None = None, **tol: float) -> None:
    """``loss_fn(F, **tensors)`` in both libraries: value, grad_fn name, gradients w.r.t.
    ``grad_inputs`` and (optionally) a Hessian-vector product w.r.t. ``hessian``."""

    def run(T: Any, dev: str) -> Any:
        ts = {k: (v if not isinstance(v, np.ndarray) else t(T, dev, v, grad=k in grad_inputs))
              for k, v in inputs.items()}
        F = T.nn.functional
        out = loss_fn(F, **ts)
        res = [out, out.grad_fn.name(), grads_of(out, [ts[k] for k in grad_inputs])]
        if hessian is not None:
            res.append(second_grads(loss_fn(F, **ts), ts[hessian]))
        return res

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        both(run, device, **tol)


# ---- regression -----------------------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("beta", [1.0, 0.5, 0.0])
def test_smooth_l1_loss(reduction: str, beta: float, device: str) -> None:
    _check(lambda F, x, y: F.smooth_l1_loss(x, y, reduction=reduction, beta=beta),
           {"x": X, "y": Y}, device, ("x", "y"), hessian="x")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("delta", [1.0, 0.7])
@pytest.mark.parametrize("weighted", [False, True])
def test_huber_loss(reduction: str, delta: float, weighted: bool, device: str) -> None:
    _check(lambda F, x, y, w: F.huber_loss(x, y, reduction=reduction, delta=delta, weight=w),
           {"x": X, "y": Y, "w": POS if weighted else None}, device, ("x", "y"), hessian="x")


def test_regression_broadcast_warns(device: str) -> None:
    F = ag.nn.functional
    for fn in (F.smooth_l1_loss, F.huber_loss):
        with pytest.warns(UserWarning, match="Using a target size"):
            out = fn(ag.ones(2, 3, device=device), ag.zeros(3, device=device))
        assert out.shape == ()


@pytest.mark.parametrize("reduction", ["mean", "sum", "none", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kl_div(reduction: str, log_target: bool, device: str) -> None:
    target = np.log(PROBS) if log_target else PROBS
    _check(lambda F, x, y: F.kl_div(x, y, reduction=reduction, log_target=log_target),
           {"x": np.log(PROBS[::-1].copy()), "y": target}, device, ("x", "y"), hessian="y")


def test_kl_div_warnings(device: str) -> None:
    x = ag.zeros(2, 3, device=device)
    with pytest.warns(UserWarning, match="reduction: 'mean' divides the total loss"):
        ag.nn.functional.kl_div(x, x)
    with pytest.warns(UserWarning, match="reduction='sum' instead"):
        ag.nn.functional.kl_div(x, x, size_average=False, reduction="batchmean")
    # NOTE: PyTorch divides by the batch even under the legacy flags (the argument decides)
    _check(lambda F, x, y: F.kl_div(x, y, reduce=True, size_average=False, reduction="batchmean"),
           {"x": X, "y": PROBS}, device, ("x",))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("log_input", [True, False])
@pytest.mark.parametrize("full", [False, True])
def test_poisson_nll_loss(reduction: str, log_input: bool, full: bool, device: str) -> None:
    _check(lambda F, x, y: F.poisson_nll_loss(x, y, log_input=log_input, full=full,
                                              reduction=reduction),
           {"x": X if log_input else POS, "y": POS * 0.7}, device, ("x", "y"), hessian="x")


@pytest.mark.parametrize("var_shape", [(5, 4), (5,), (5, 1), (1, 4), "float"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("full", [False, True])
def test_gaussian_nll_loss(var_shape: Any, reduction: str, full: bool, device: str) -> None:
    var: Any = 0.8 if var_shape == "float" else RNG.random(var_shape) + 1e-7 * 0
    if not isinstance(var, float):
        var.flat[0] = 1e-9  # clamped at eps: the gradient still flows (as PyTorch)
    grads = ("x", "y") if var_shape == "float" else ("x", "y", "v")
    _check(lambda F, x, y, v: F.gaussian_nll_loss(x, y, v, full=full, reduction=reduction),
           {"x": X, "y": Y, "v": var}, device, grads, hessian="x")


# ---- margin and embedding losses ------------------------------------------------------------

@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_soft_margin_loss(reduction: str, device: str) -> None:
    _check(lambda F, x, y: F.soft_margin_loss(x, y, reduction=reduction),
           {"x": X, "y": SIGNS_2D}, device, ("x",), hessian="x")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.3])
def test_cosine_embedding_loss(reduction: str, margin: float, device: str) -> None:
    _check(lambda F, a, b, y: F.cosine_embedding_loss(a, b, y, margin=margin,
                                                      reduction=reduction),
           {"a": X, "b": Y, "y": SIGNS}, device, ("a", "b"), hessian="a")
    _check(lambda F, a, b, y: F.cosine_embedding_loss(a, b, y, margin=margin,
                                                      reduction=reduction),
           {"a": X[0], "b": Y[0], "y": np.array(-1.0)}, device, ("a", "b"))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [0.0, 0.5])
def test_margin_ranking_loss(reduction: str, margin: float, device: str) -> None:
    _check(lambda F, a, b, y: F.margin_ranking_loss(a, b, y, margin=margin, reduction=reduction),
           {"a": X[:, 0], "b": Y[:, 0], "y": SIGNS}, device, ("a", "b", "y"))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("margin", [1.0, 2.5])
def test_hinge_embedding_loss(reduction: str, margin: float, device: str) -> None:
    _check(lambda F, x, y: F.hinge_embedding_loss(x, y, margin=margin, reduction=reduction),
           {"x": X, "y": SIGNS_2D}, device, ("x",))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p, swap", [(2.0, False), (1.0, True), (3.0, True)])
def test_triplet_margin_loss(reduction: str, p: float, swap: bool, device: str) -> None:
    _check(lambda F, a, b, c: F.triplet_margin_loss(a, b, c, margin=2.0, p=p, swap=swap,
                                                    reduction=reduction),
           {"a": X, "b": Y, "c": Z}, device, ("a", "b", "c"), hessian="a")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("custom", [False, True])
def test_triplet_margin_with_distance_loss(reduction: str, custom: bool, device: str) -> None:
    def loss(F: Any, a: Any, b: Any, c: Any) -> Any:
        dist = (lambda u, v: 1 - (u * v).sum(-1) / (u.norm(2, -1) * v.norm(2, -1))) \
            if custom else None
        return F.triplet_margin_with_distance_loss(a, b, c, distance_function=dist, margin=1.5,
                                                   swap=True, reduction=reduction)

    _check(loss, {"a": X, "b": Y, "c": Z}, device, ("a", "b", "c"), hessian="a")


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("p, margin, weighted", [(1, 1.0, False), (2, 0.5, True),
                                                 (1, 2.0, True)])
def test_multi_margin_loss(reduction: str, p: int, margin: float, weighted: bool,
                           device: str) -> None:
    w = RNG.random(4) + 0.5 if weighted else None
    _check(lambda F, x, y, w: F.multi_margin_loss(x, y, p=p, margin=margin, weight=w,
                                                  reduction=reduction),
           {"x": X, "y": CLASSES, "w": w}, device, ("x",))
    for target in (np.array(2), np.array([2])):
        _check(lambda F, x, y: F.multi_margin_loss(x, y, p=p, reduction=reduction),
               {"x": X[0], "y": target}, device, ("x",))


ML_TARGET = np.array([[3, 0, -1, 1], [1, 2, 3, -1], [-1, 0, 0, 0], [2, 2, -1, 0],
                      [0, 1, 2, 3]])


@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_multilabel_margin_loss(reduction: str, device: str) -> None:
    _check(lambda F, x, y: F.multilabel_margin_loss(x, y, reduction=reduction),
           {"x": X * 0.3, "y": ML_TARGET}, device, ("x",))
    _check(lambda F, x, y: F.multilabel_margin_loss(x, y, reduction=reduction),
           {"x": X[0] * 0.3, "y": ML_TARGET[1]}, device, ("x",))


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("weighted", [False, True])
def test_multilabel_soft_margin_loss(reduction: str, weighted: bool, device: str) -> None:
    _check(lambda F, x, y, w: F.multilabel_soft_margin_loss(x, y, weight=w, reduction=reduction),
           {"x": X, "y": (SIGNS_2D > 0) * 1.0, "w": RNG.random(4) if weighted else None},
           device, ("x", "y"), hessian="x")


def test_soft_margin_loss_target_grad_under_no_grad(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        with T.no_grad():
            return T.nn.functional.soft_margin_loss(t(T, dev, X), t(T, dev, SIGNS_2D, grad=True))

    both(run, device)


def test_margin_losses_have_no_double_backward(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = t(T, dev, X, grad=True)
        F = T.nn.functional
        for out in (F.multi_margin_loss(x, t(T, dev, CLASSES)),
                    F.multilabel_margin_loss(x, t(T, dev, ML_TARGET))):
            (g,) = T.autograd.grad(out, x, create_graph=True)
            assert g.grad_fn.name() == "torch::autograd::NotImplemented"
            with pytest.raises(RuntimeError, match="derivative for aten::multi"):
                T.autograd.grad(g.sum(), x)
        return g

    both(run, device)


# ---- finite differences (no oracle) ---------------------------------------------------------

GRADCHECK = {
    "smooth_l1": lambda F, x: F.smooth_l1_loss(x, ag.zeros_like(x), beta=0.5),
    "huber": lambda F, x: F.huber_loss(x, ag.zeros_like(x), delta=0.5),
    "soft_margin": lambda F, x: F.soft_margin_loss(x, ag.ones_like(x)),
    "kl_div": lambda F, x: F.kl_div(x.log_softmax(1), t(ag, x.device.type, PROBS),
                                    reduction="batchmean"),
    "gaussian": lambda F, x: F.gaussian_nll_loss(x, ag.zeros_like(x), x * x + 0.5),
    "triplet": lambda F, x: F.triplet_margin_loss(x, x.flip(0), x.flip(1), swap=True),
    "cosine": lambda F, x: F.cosine_embedding_loss(x, x.flip(0), ag.ones(x.shape[0],
                                                                         device=x.device)),
}


@pytest.mark.parametrize("name", list(GRADCHECK))
def test_loss_gradcheck(name: str, device: str) -> None:
    fn = GRADCHECK[name]
    x = t(ag, device, X, grad=True)
    assert ag.autograd.gradcheck(lambda a: fn(ag.nn.functional, a), (x,))
    assert ag.autograd.gradgradcheck(lambda a: fn(ag.nn.functional, a), (x,))


# ---- errors and legacy flags ----------------------------------------------------------------

def _r(T: Any, dev: str, *shape: int) -> Any:
    return T.ones(*shape, device=dev, dtype=T.float64)


def _i(T: Any, dev: str, data: Any) -> Any:
    return T.tensor(data, device=dev)


ERRORS = [
    lambda F, T, d: F.smooth_l1_loss(_r(T, d, 3), _r(T, d, 3), beta=-1.0),
    lambda F, T, d: F.smooth_l1_loss(_r(T, d, 3), _r(T, d, 3), reduction="avg"),
    lambda F, T, d: F.huber_loss(_r(T, d, 3), _r(T, d, 3), delta=0.0),
    lambda F, T, d: F.huber_loss(_r(T, d, 3), _r(T, d, 3), weight=_r(T, d, 2)),
    lambda F, T, d: F.huber_loss(_r(T, d, 3), _r(T, d, 3), weight=_r(T, d, 3), reduction="x"),
    lambda F, T, d: F.huber_loss(_r(T, d, 3), _r(T, d, 3), reduction="x"),
    lambda F, T, d: F.kl_div(_r(T, d, 3), _i(T, d, [1, 2, 3]), reduction="sum"),
    lambda F, T, d: F.kl_div(_r(T, d, 3), _r(T, d, 3), reduction="avg"),
    lambda F, T, d: F.poisson_nll_loss(_r(T, d, 3), _r(T, d, 3), reduction="avg"),
    lambda F, T, d: F.gaussian_nll_loss(_r(T, d, 3), _r(T, d, 3), -1.0),
    lambda F, T, d: F.gaussian_nll_loss(_r(T, d, 3), _r(T, d, 3), -_r(T, d, 3)),
    lambda F, T, d: F.gaussian_nll_loss(_r(T, d, 2, 3), _r(T, d, 2, 3), _r(T, d, 3, 2)),
    lambda F, T, d: F.gaussian_nll_loss(_r(T, d, 3), _r(T, d, 3), _r(T, d, 3), reduction="x"),
    lambda F, T, d: F.soft_margin_loss(_r(T, d, 3), _r(T, d, 3).requires_grad_()),
    lambda F, T, d: F.cosine_embedding_loss(_r(T, d, 2, 3), _r(T, d, 2, 3), _r(T, d, 2, 1)),
    lambda F, T, d: F.cosine_embedding_loss(_r(T, d, 2, 3), _r(T, d, 3), _r(T, d, 2)),
    lambda F, T, d: F.cosine_embedding_loss(_r(T, d, 2, 3), _r(T, d, 2, 3), _r(T, d)),
    lambda F, T, d: F.margin_ranking_loss(_r(T, d, 3), _r(T, d, 3), _r(T, d, 1, 3)),
    lambda F, T, d: F.triplet_margin_loss(_r(T, d, 3), _r(T, d, 3), _r(T, d, 3), margin=0.0),
    lambda F, T, d: F.triplet_margin_loss(_r(T, d, 2, 3), _r(T, d, 3), _r(T, d, 3)),
    lambda F, T, d: F.triplet_margin_with_distance_loss(_r(T, d, 3), _r(T, d, 3), _r(T, d, 3),
                                                        margin=-1.0),
    lambda F, T, d: F.triplet_margin_with_distance_loss(_r(T, d, 3), _r(T, d, 3), _r(T, d, 3),
                                                        reduction="x"),
    lambda F, T, d: F.triplet_margin_with_distance_loss(_r(T, d, 3), _r(T, d, 1, 3),
                                                        _r(T, d, 3)),
    lambda F, T, d: F.multi_margin_loss(_r(T, d, 2, 3), _i(T, d, [0, 1]), p=3),
    lambda F, T, d: F.multi_margin_loss(_r(T, d, 2, 3), _i(T, d, [0, 1]), weight=_r(T, d, 1, 3)),
    lambda F, T, d: F.multi_margin_loss(_r(T, d, 2, 3), _i(T, d, [0, 1, 2])),
    lambda F, T, d: F.multi_margin_loss(_r(T, d, 3), _i(T, d, [0, 1])),
    lambda F, T, d: F.multi_margin_loss(_r(T, d, 2, 3), _i(T, d, [0, 1]).int()),
    lambda F, T, d: F.multi_margin_loss(_r(T, d, 2, 3), _i(T, d, [0, -1])),
    lambda F, T, d: F.multilabel_margin_loss(_r(T, d, 2, 3), _i(T, d, [[0, 1, 2], [0, -3, 2]])),
    lambda F, T, d: F.multi_margin_loss(_r(T, d, 2, 3), _i(T, d, [0, 1]), weight=_r(T, d, 2)),
    lambda F, T, d: F.multi_margin_loss(_r(T, d, 2, 3), _i(T, d, [0, 3])),
    lambda F, T, d: F.multi_margin_loss(_r(T, d, 2, 0), _i(T, d, [0, 3])),
    lambda F, T, d: F.multi_margin_loss(_r(T, d, 2, 3, 1), _i(T, d, [0, 1])),
    lambda F, T, d: F.multilabel_margin_loss(_r(T, d, 2, 3), _i(T, d, [0, 1, 2])),
    lambda F, T, d: F.multilabel_margin_loss(_r(T, d, 3), _i(T, d, [0, 1])),
    lambda F, T, d: F.multilabel_margin_loss(_r(T, d, 2, 3), _i(T, d, [[0, 1, 5], [0, 1, 2]])),
    lambda F, T, d: F.multilabel_soft_margin_loss(_r(T, d, 2, 3), _r(T, d, 2, 3),
                                                  reduction="x"),
]


@pytest.mark.parametrize("case", ERRORS)
def test_loss_errors(case: Any, device: str) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same_error(lambda T, dev: case(T.nn.functional, T, dev), device)


@pytest.mark.parametrize("name, args", [
    ("smooth_l1_loss", "xy"), ("kl_div", "xy"), ("poisson_nll_loss", "xy"),
    ("soft_margin_loss", "xy"), ("hinge_embedding_loss", "xy"),
    ("multilabel_soft_margin_loss", "xy"), ("triplet_margin_loss", "xyz"),
    ("cosine_embedding_loss", "xys"), ("margin_ranking_loss", "xys"),
    ("multi_margin_loss", "xc"), ("multilabel_margin_loss", "xm"),
])
@pytest.mark.parametrize("size_average, reduce", [(False, None), (None, False), (True, True)])
def test_legacy_reduction_flags(name: str, args: str, size_average: Any, reduce: Any,
                                device: str) -> None:
    data = {"x": X, "y": SIGNS_2D, "z": Z, "s": SIGNS, "c": CLASSES, "m": ML_TARGET}

    def run(T: Any, dev: str) -> Any:
        ts = [t(T, dev, data[a] if a != "x" or name != "margin_ranking_loss" else X[:, 0],
                grad=a == "x") for a in args]
        if name == "margin_ranking_loss":
            ts[1] = t(T, dev, Y[:, 0])
        with pytest.warns(UserWarning, match="size_average and reduce args will be deprecated"):
            out = getattr(T.nn.functional, name)(*ts, size_average=size_average, reduce=reduce)
        return out, grads_of(out, [ts[0]])

    both(run, device)


# ---- CTC ------------------------------------------------------------------------------------

CTC_LOGITS = RNG.standard_normal((7, 3, 5))
CTC_TARGETS = np.array([[1, 2, 2, 0], [3, 3, 0, 0], [4, 1, 2, 3]])
CTC_IL, CTC_TL = [7, 5, 6], [3, 2, 4]


def _ctc(T: Any, dev: str, lp: Any, *, layout: str, lengths: str, blank: int = 0,
         il: list[int] = CTC_IL, tl: list[int] = CTC_TL, **kw: Any) -> Any:
    tg = CTC_TARGETS if blank == 0 else np.where(CTC_TARGETS == blank, 0, CTC_TARGETS)
    if layout == "concat":
        tg = np.concatenate([row[:k] for row, k in zip(tg, tl)])
    tg_t = t(T, dev, tg)
    if lengths == "tensor":
        return T.nn.functional.ctc_loss(lp, tg_t, t(T, dev, np.array(il)), t(T, dev, np.array(tl)),
                                        blank=blank, **kw)
    return T.nn.functional.ctc_loss(lp, tg_t, tuple(il), list(tl), blank=blank, **kw)


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("layout, lengths, blank", [("padded", "list", 0),
                                                    ("concat", "tensor", 0),
                                                    ("padded", "tensor", 2)])
def test_ctc_loss(reduction: str, layout: str, lengths: str, blank: int, device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = t(T, dev, CTC_LOGITS, grad=True)
        lp = x.log_softmax(2)
        out = _ctc(T, dev, lp, layout=layout, lengths=lengths, blank=blank, reduction=reduction)
        raw = t(T, dev, CTC_LOGITS, grad=True)  # the gradient as PyTorch hands it to log_probs
        out2 = _ctc(T, dev, raw, layout=layout, lengths=lengths, blank=blank, reduction=reduction)
        return out, out.grad_fn.name(), grads_of(out, [x]), grads_of(out2, [raw])

    both(run, device)


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_ctc_loss_impossible_and_empty(zero_infinity: bool, device: str) -> None:
    # sample 0: 2 frames for 3 labels (impossible, inf); sample 1: no frames and no target
    def run(T: Any, dev: str) -> Any:
        x = t(T, dev, CTC_LOGITS, grad=True)
        out = _ctc(T, dev, x.log_softmax(2), layout="padded", lengths="list", il=[2, 0, 6],
                   tl=[3, 0, 4], reduction="none", zero_infinity=zero_infinity)
        g = grads_of(out.sum() if zero_infinity else out[1:].sum(), [x])
        return out, g

    both(run, device)


def test_ctc_loss_unbatched_and_no_double_backward(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        x = t(T, dev, CTC_LOGITS[:, 0], grad=True)
        lp = x.log_softmax(1)
        tg = t(T, dev, CTC_TARGETS[0, :3])
        outs = [T.nn.functional.ctc_loss(lp, tg, t(T, dev, np.array(7)), t(T, dev, np.array(3)),
                                         reduction="none"),
                T.nn.functional.ctc_loss(lp, tg, [6], [3], reduction="sum")]
        (g,) = T.autograd.grad(outs[0], x, create_graph=True)
        with pytest.raises(RuntimeError, match="derivative for aten::_ctc_loss_backward"):
            T.autograd.grad(g.sum(), x)
        return outs, grads_of(outs[1], [x])

    both(run, device)


CTC_ERRORS = [
    lambda F, T, d, lp, tg: F.ctc_loss(lp, tg, [7, 5, 6], [3, 2, 4], blank=5),
    lambda F, T, d, lp, tg: F.ctc_loss(lp, tg, [7, 5], [3, 2, 4]),
    lambda F, T, d, lp, tg: F.ctc_loss(lp, tg, [7, 5, 6], [3, 2]),
    lambda F, T, d, lp, tg: F.ctc_loss(lp, tg, [8, 5, 6], [3, 2, 4]),
    lambda F, T, d, lp, tg: F.ctc_loss(lp, tg, [-1, 5, 6], [3, 2, 4]),
    lambda F, T, d, lp, tg: F.ctc_loss(lp, tg, [7, 5, 6], [5, 2, 4]),
    lambda F, T, d, lp, tg: F.ctc_loss(lp, tg, [7, 5, 6], [-1, 2, 4]),
    lambda F, T, d, lp, tg: F.ctc_loss(lp, tg.reshape(-1)[:5], [7, 5, 6], [3, 2, 4]),
    lambda F, T, d, lp, tg: F.ctc_loss(lp, tg[None], [7, 5, 6], [3, 2, 4]),
    lambda F, T, d, lp, tg: F.ctc_loss(lp, tg[:2], [7, 5, 6], [3, 2, 4]),
    lambda F, T, d, lp, tg: F.ctc_loss(lp, tg, T.tensor([7.0, 5, 6]), T.tensor([3, 2, 4])),
    lambda F, T, d, lp, tg: F.ctc_loss(lp, tg, T.tensor([7, 5, 6]), T.tensor([3.0, 2, 4])),
    lambda F, T, d, lp, tg: F.ctc_loss(lp, tg, [7, 5, 6], [3, 2, 4], reduction="x"),
]


@pytest.mark.parametrize("case", CTC_ERRORS)
def test_ctc_loss_errors(case: Any, device: str) -> None:
    same_error(lambda T, dev: case(T.nn.functional, T, dev, t(T, dev, CTC_LOGITS),
                                   t(T, dev, CTC_TARGETS)), device)


# ---- modules --------------------------------------------------------------------------------

MODULES: list[tuple[str, dict[str, Any], str]] = [
    ("SmoothL1Loss", {"beta": 0.5}, "xy"), ("HuberLoss", {"delta": 0.5, "reduction": "sum"}, "xy"),
    ("KLDivLoss", {"reduction": "batchmean", "log_target": True}, "xy"),
    ("PoissonNLLLoss", {"full": True, "eps": 1e-6}, "xp"),
    ("GaussianNLLLoss", {"full": True, "reduction": "none"}, "xyp"),
    ("CosineEmbeddingLoss", {"margin": 0.2}, "xys"), ("MarginRankingLoss", {"margin": 0.1}, "abs"),
    ("HingeEmbeddingLoss", {"margin": 2.0}, "xq"),
    ("TripletMarginLoss", {"margin": 0.5, "p": 1.0, "swap": True}, "xyz"),
    ("TripletMarginWithDistanceLoss", {"margin": 0.5, "swap": True}, "xyz"),
    ("MultiLabelMarginLoss", {}, "xm"), ("MultiLabelSoftMarginLoss", {"weight": POS[0]}, "xb"),
    ("MultiMarginLoss", {"p": 2, "margin": 0.5, "weight": POS[0]}, "xc"),
    ("SoftMarginLoss", {"reduction": "sum"}, "xq"),
    ("NLLLoss2d", {"ignore_index": 1}, "xc"),
    ("CTCLoss", {"blank": 4, "reduction": "sum", "zero_infinity": True}, "ctc"),
]


@pytest.mark.parametrize("name, kwargs, args", MODULES)
def test_loss_modules(name: str, kwargs: dict[str, Any], args: str, device: str) -> None:
    data = {"x": X, "y": Y, "z": Z, "p": POS, "s": SIGNS, "q": SIGNS_2D, "c": CLASSES,
            "m": ML_TARGET, "b": (SIGNS_2D > 0) * 1.0, "a": X[:, 0]}

    def run(T: Any, dev: str) -> Any:
        kw = {k: t(T, dev, v) if isinstance(v, np.ndarray) else v for k, v in kwargs.items()}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = getattr(T.nn, name)(**kw)
        if args == "ctc":
            ts = [t(T, dev, CTC_LOGITS, grad=True).log_softmax(2), t(T, dev, CTC_TARGETS),
                  t(T, dev, np.array(CTC_IL)), t(T, dev, np.array(CTC_TL))]
            ts[0].retain_grad()
        else:
            ts = [t(T, dev, data[a], grad=i == 0) for i, a in enumerate(args)]
        if name == "MarginRankingLoss":
            ts[1] = t(T, dev, Y[:, 0])
        out = module(*ts)
        buffers = [n for n, _ in module.named_buffers()]
        shown = repr(module) if name != "TripletMarginWithDistanceLoss" else None
        return out, grads_of(out, [ts[0]]), shown, buffers, module.reduction

    both(run, device)


def test_nll_loss2d_is_deprecated() -> None:
    with pytest.warns(FutureWarning, match="`NLLLoss2d` has been deprecated"):
        ag.nn.NLLLoss2d()
    assert issubclass(ag.nn.NLLLoss2d, ag.nn.NLLLoss) and issubclass(torch.nn.NLLLoss2d,
                                                                     torch.nn.NLLLoss)


@pytest.mark.parametrize("case", [
    lambda T: T.nn.TripletMarginLoss(margin=0.0),
    lambda T: T.nn.TripletMarginWithDistanceLoss(margin=-1.0),
    lambda T: T.nn.MultiMarginLoss(p=3),
    lambda T: T.nn.MultiMarginLoss(weight=T.ones(2, 2)),
    lambda T: T.nn.HuberLoss(delta="1"),
])
def test_loss_module_errors(case: Any, device: str) -> None:
    same_error(lambda T, dev: case(T), device)
