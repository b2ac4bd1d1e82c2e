"""The dropout family beyond ``dropout``: masks come from our generator, so these tests check
statistics (the dropped fraction within 5 standard deviations), scaling, channel-wise masks,
gradients equal to mask * scale, eval-mode identity, ``p`` 0 and 1, in-place variants,
reproducibility under ``manual_seed``, PyTorch's warnings for unexpected ranks, reprs and
errors (misuse catalogue)."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import to_np
from tests.misuse._catalogue import catalogue_test

F = ag.nn.functional
ALPHA = 1.7580993408473766

# name -> (function, input shape, shape of the mask: which dims share one draw)
CHANNELWISE: dict[str, tuple[Any, tuple[int, ...], tuple[int, ...]]] = {
    "dropout1d": (F.dropout1d, (40, 50, 3), (40, 50, 1)),
    "dropout1d_unbatched": (F.dropout1d, (400, 3), (400, 1)),
    "dropout2d": (F.dropout2d, (40, 50, 2, 2), (40, 50, 1, 1)),
    "dropout3d": (F.dropout3d, (20, 100, 2, 1, 2), (20, 100, 1, 1, 1)),
    "dropout3d_unbatched": (F.dropout3d, (400, 2, 1, 2), (400, 1, 1, 1)),
}


def _input(shape: tuple[int, ...], device: str) -> Any:
    x = np.random.default_rng(1).standard_normal(shape) + 3.0  # no zeros: a zero means dropped
    return ag.tensor(x.tolist(), dtype=ag.float64, device=device, requires_grad=True)


def _fraction_ok(frac: float, p: float, n: int) -> None:
    assert abs(frac - p) < 5 * math.sqrt(p * (1 - p) / n) + 1e-12, (frac, p, n)


@pytest.mark.parametrize("name", sorted(CHANNELWISE))
@pytest.mark.parametrize("p", [0.2, 0.7])
def test_channelwise_dropout(name: str, p: float, device: str) -> None:
    fn, shape, mask_shape = CHANNELWISE[name]
    x = _input(shape, device)
    out = fn(x, p)
    assert out.grad_fn.name() == "MulBackward0"
    ratio = to_np(out) / to_np(x)
    # one draw per (sample, channel): the ratio is constant over the other dims
    first = ratio[tuple(slice(None) if m > 1 else slice(0, 1) for m in mask_shape)]
    np.testing.assert_allclose(ratio, np.broadcast_to(first, ratio.shape), rtol=1e-12)
    kept = first != 0
    np.testing.assert_allclose(first[kept], 1 / (1 - p), rtol=1e-12)
    _fraction_ok(1 - kept.mean(), p, kept.size)
    (g,) = ag.autograd.grad(out.sum(), x)
    np.testing.assert_allclose(to_np(g), np.broadcast_to(first, ratio.shape), rtol=1e-12)


ALPHAS = {
    "alpha_dropout": (F.alpha_dropout, (200, 100)),
    "feature_alpha_dropout": (F.feature_alpha_dropout, (200, 100, 3)),
}


@pytest.mark.parametrize("name", sorted(ALPHAS))
@pytest.mark.parametrize("p", [0.1, 0.5])
def test_alpha_dropout(name: str, p: float, device: str) -> None:
    """Kept elements become ``a * x + alpha * a * p``, dropped ones ``alpha * a * (p - 1)``; the
    gradient is ``a`` or 0; a standard normal input keeps mean 0 and variance 1."""
    fn, shape = ALPHAS[name]
    a = 1 / math.sqrt((ALPHA * ALPHA * p + 1) * (1 - p))
    x = ag.randn(*shape, dtype=ag.float64, device=device, requires_grad=True)
    out = fn(x, p, True)
    assert out.grad_fn.name() == "AddBackward0"
    (g,) = ag.autograd.grad(out.sum(), x)
    gn, xn, on = to_np(g), to_np(x), to_np(out)
    assert set(np.unique(np.round(gn, 12))) <= {0.0, round(a, 12)}
    expected = np.where(gn == 0, ALPHA * a * (p - 1), a * xn + ALPHA * a * p)
    np.testing.assert_allclose(on, expected, rtol=1e-12, atol=1e-12)
    if name == "feature_alpha_dropout":
        assert (gn == gn[:, :, :1]).all()
        gn = gn[:, :, 0]
    _fraction_ok(float((gn == 0).mean()), p, gn.size)
    assert abs(on.mean()) < 0.05 and abs(on.var() - 1) < 0.08


ALL = {
    "dropout1d": (F.dropout1d, (4, 5, 2)), "dropout2d": (F.dropout2d, (4, 5, 2, 1)),
    "dropout3d": (F.dropout3d, (4, 5, 1, 2, 1)), "alpha_dropout": (F.alpha_dropout, (4, 5)),
    "feature_alpha_dropout": (F.feature_alpha_dropout, (4, 5, 2)),
}


@pytest.mark.parametrize("name", sorted(ALL))
def test_identity_cases_and_p_one(name: str, device: str) -> None:
    fn, shape = ALL[name]
    x = _input(shape, device)
    assert fn(x, 0.5, False) is x  # eval mode
    assert fn(x, 0.0, True) is x
    empty = ag.zeros(0, *shape[1:], device=device)
    assert fn(empty, 0.5, True) is empty
    with ag.no_grad():
        x[0].fill_(float("nan"))
    out = to_np(fn(x, 1.0, True))
    assert np.isnan(out[0]).all() and (out[1:] == 0).all()  # x * 0: NaN stays NaN


@pytest.mark.parametrize("name", sorted(ALL))
def test_inplace_and_seed(name: str, device: str) -> None:
    fn, shape = ALL[name]
    x = _input(shape, device).detach()
    ag.manual_seed(3)
    ref = fn(x, 0.4, True)
    ag.manual_seed(3)
    y = x.clone()
    out = fn(y, 0.4, True, True)
    assert out is y
    np.testing.assert_array_equal(to_np(y), to_np(ref))
    assert not np.array_equal(to_np(fn(x, 0.4, True)), to_np(ref))  # the generator moved on


def test_modules(device: str) -> None:
    for cls, shape in (("Dropout1d", (3, 4, 2)), ("Dropout2d", (3, 4, 2, 2)),
                       ("Dropout3d", (2, 3, 2, 2, 2)), ("AlphaDropout", (3, 4)),
                       ("FeatureAlphaDropout", (3, 4, 2))):
        for args in ((), (0.3,), (0.2, True)):
            ours, theirs = getattr(ag.nn, cls)(*args), getattr(torch.nn, cls)(*args)
            assert repr(ours) == repr(theirs)
            assert list(ours.state_dict()) == []
        x = _input(shape, device)
        m = getattr(ag.nn, cls)(0.5)
        out = m(x)
        assert out is not x and np.isclose(to_np(out), to_np(x)).mean() < 0.9
        assert m.eval()(x) is x


def _warned(fn: Any) -> list[str]:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [f"{c.category.__name__}: {c.message}" for c in caught]


@pytest.mark.parametrize("name, shape", [("dropout2d", (2, 3)), ("dropout2d", (2, 3, 4)),
                                         ("dropout2d", (1, 2, 3, 1, 2)), ("dropout3d", (2, 3)),
                                         ("dropout3d", (2, 3, 4)), ("dropout3d", (2, 2, 1, 1, 1, 2)),
                                         ("dropout2d", (2, 3, 4, 4)), ("dropout3d", (2, 3, 1, 1))])
def test_rank_warnings(name: str, shape: tuple[int, ...], device: str) -> None:
    ours = _warned(lambda: getattr(F, name)(ag.ones(*shape, device=device), 0.5, True))
    theirs = _warned(lambda: getattr(torch.nn.functional, name)(torch.ones(*shape), 0.5, True))
    assert ours == theirs


def test_warning_points_at_caller(device: str) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.dropout2d(ag.ones(2, 3, device=device))
        F.dropout2d(ag.ones(2, 3, 4, device=device))
    assert [c.filename for c in caught] == [__file__] * 2


ERRORS = {
    "p_high": lambda T, d: T.nn.functional.dropout1d(T.ones(2, 3, device=d), 1.5),
    "p_neg_alpha": lambda T, d: T.nn.functional.alpha_dropout(T.ones(2, device=d), -0.1),
    "p_feature_alpha": lambda T, d: T.nn.functional.feature_alpha_dropout(T.ones(2, 2), 2.0),
    "p_module": lambda T, d: T.nn.Dropout2d(1.2),
    "p_module_alpha": lambda T, d: T.nn.AlphaDropout(-1),
    "rank_1d": lambda T, d: T.nn.functional.dropout1d(T.ones(2, 3, 4, 5, device=d)),
    "rank_1d_module": lambda T, d: T.nn.Dropout1d()(T.ones(2, device=d)),
    "feature_1d": lambda T, d: T.nn.functional.feature_alpha_dropout(T.ones(3, device=d), 0.5,
                                                                     True),
    "feature_2d_1d": lambda T, d: T.nn.functional.dropout2d(T.ones(3, device=d)),
    "int_input": lambda T, d: T.nn.functional.dropout1d(T.ones(3, 4, device=d).long(), 0.5),
    "int_alpha": lambda T, d: T.nn.functional.alpha_dropout(T.ones(3, device=d).long(), 0.5, True),
    "int_eval": lambda T, d: T.nn.functional.alpha_dropout(T.ones(3, device=d).long(), 0.5),
    "not_tensor": lambda T, d: T.nn.functional.dropout3d([1.0, 2.0]),
    "alpha_1d_p1": lambda T, d: T.nn.functional.feature_alpha_dropout(T.ones(3, device=d), 1.0,
                                                                      True),
}

test_misuse = catalogue_test(ERRORS)
