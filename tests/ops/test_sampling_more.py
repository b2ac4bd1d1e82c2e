"""binomial: the oracle's dtypes, shapes, broadcasting, degenerate cases (p = 0 or 1, no
trials) and errors; the distribution (integer values in [0, count], mean and variance) and
reproducibility under manual_seed and a Generator (not torch's numbers)."""

from __future__ import annotations

from typing import Any

import numpy as np

import autograd_gpu as ag
from tests.misuse._catalogue import Case, catalogue_test


def _c(T: Any, dev: str, dtype: Any = None) -> Any:
    return T.tensor([10.0, 5.0, 0.0], dtype=dtype or T.float32, device=dev)


def _p(T: Any, dev: str, dtype: Any = None) -> Any:
    return T.tensor([0.0, 1.0, 0.3], dtype=dtype or T.float32, device=dev)


CASES: dict[str, Case] = {
    "degenerate": lambda T, dev: T.binomial(_c(T, dev), _p(T, dev)),
    "float64": lambda T, dev: T.binomial(_c(T, dev, T.float64), _p(T, dev, T.float64)),
    "broadcast_0d": lambda T, dev: T.binomial(_c(T, dev), T.tensor(1.0, device=dev)),
    "empty": lambda T, dev: T.binomial(T.ones(0, 2, device=dev), T.ones(0, 2, device=dev)),
    "generator": lambda T, dev: T.binomial(_c(T, dev), _p(T, dev), generator=T.Generator(dev)),
    "grad_fn": lambda T, dev: T.binomial(_c(T, dev).requires_grad_(), _p(T, dev)).grad_fn.name(),
    "backward": lambda T, dev: T.binomial(_c(T, dev).requires_grad_(), _p(T, dev)).sum()
    .backward(),
    "dtype_mismatch": lambda T, dev: T.binomial(_c(T, dev), _p(T, dev, T.float64)),
    "int_count": lambda T, dev: T.binomial(_c(T, dev).long(), _p(T, dev)),
    "half": lambda T, dev: T.binomial(_c(T, dev, T.float16), _p(T, dev, T.float16)),
    "shape_mismatch": lambda T, dev: T.binomial(_c(T, dev), _p(T, dev)[:2]),
    "float_prob": lambda T, dev: T.binomial(_c(T, dev), 0.5),
    "bad_generator": lambda T, dev: T.binomial(_c(T, dev), _p(T, dev), generator=1),
}

test_binomial_misuse = catalogue_test(CASES)


def test_binomial_distribution_and_seed(device: str) -> None:
    n = 20000
    count = ag.full((n,), 20.0, dtype=ag.float64, device=device)
    prob = ag.full((n,), 0.3, dtype=ag.float64, device=device)
    ag.manual_seed(3)
    a = ag.binomial(count, prob)
    ag.manual_seed(3)
    b = ag.binomial(count, prob)
    x = a.cpu().numpy()
    assert np.array_equal(x, b.cpu().numpy())
    assert a.dtype is ag.float64 and np.all(x == np.floor(x)) and x.min() >= 0 and x.max() <= 20
    # NOTE: mean 6 and variance 4.2; bounds of about 5 standard errors
    assert abs(x.mean() - 6.0) < 0.08 and abs(x.var() - 4.2) < 0.25
    g1, g2 = ag.Generator(device).manual_seed(7), ag.Generator(device).manual_seed(7)
    big = ag.tensor([1e6, 3.0], device=device)
    y1 = ag.binomial(big, ag.tensor([0.5, 0.5], device=device), generator=g1)
    y2 = ag.binomial(big, ag.tensor([0.5, 0.5], device=device), generator=g2)
    assert np.array_equal(y1.cpu().numpy(), y2.cpu().numpy())
    assert abs(float(y1[0]) - 5e5) < 5000 and 0 <= float(y1[1]) <= 3
