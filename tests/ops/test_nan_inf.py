"""NaN and inf sweep: every elementwise op, activation and reduction on inputs holding NaN, +-inf
and +-0, forward values and gradients compared with PyTorch (the oracle, on the CPU) on every
device, float64 and float32.

PyTorch is the yardstick, including where it differs from NumPy and from IEEE ``max``/``min``:
``sign(nan)`` is 0 (so ``abs``' and ``l1_loss``'s gradients are 0 there), relu's gradient passes
at NaN (threshold_backward zeroes only ``x <= 0``), elu's is unscaled there, ``max()`` shares its
gradient among the NaN elements, ``amax`` gives NaN to its group, a +inf logit makes a softmax row
NaN, a float remainder's zero keeps the dividend's sign, ``x ** 0.5`` is ``sqrt`` (NaN at -inf),
and piecewise-constant ops (``sign``, ``floor``, ``x ** 0``) give 0 gradients even for an inf
incoming gradient. Where a forward result is zero its sign is compared too, for the ops listed in
``SIGNED_ZERO`` (elsewhere PyTorch's own choice depends on the size and the vector path).
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag

NAN, INF = float("nan"), float("inf")
X = [NAN, INF, -INF, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 30.0, -30.0]
Y = [1.0, NAN, NAN, INF, 0.0, -0.0, 1.0, 0.5, 2.0, -INF, INF]

Program = Callable[[Any, Any, Any], Any]


def _F(T: Any) -> Any:
    return torch.nn.functional if T is torch else ag.nn.functional


def _rows(T: Any, x: Any, y: Any) -> Any:
    """``x`` and ``y`` as two columns of an (11, 2) matrix: rows mix NaN, inf and numbers."""
    return T.stack([x, y], 1)


CASES: dict[str, Program] = {
    # unary math
    "neg": lambda T, x, y: -x,
    "abs": lambda T, x, y: T.abs(x),
    "sign": lambda T, x, y: T.sign(x),
    "sign_inf_grad": lambda T, x, y: T.sign(x) * INF,
    "floor_inf_grad": lambda T, x, y: T.floor(x) * INF,
    "exp": lambda T, x, y: T.exp(x),
    "expm1": lambda T, x, y: T.expm1(x),
    "log": lambda T, x, y: T.log(x),
    "log1p": lambda T, x, y: T.log1p(x),
    "sqrt": lambda T, x, y: T.sqrt(x),
    "rsqrt": lambda T, x, y: T.rsqrt(x),
    "reciprocal": lambda T, x, y: T.reciprocal(x),
    "sin": lambda T, x, y: T.sin(x),
    "cos": lambda T, x, y: T.cos(x),
    "tanh": lambda T, x, y: T.tanh(x),
    "sigmoid": lambda T, x, y: T.sigmoid(x),
    "floor": lambda T, x, y: T.floor(x),
    "square": lambda T, x, y: T.square(x),
    # powers: scalar exponents PyTorch computes with sqrt/rsqrt/reciprocal/products
    "pow_0": lambda T, x, y: x ** 0 * INF,
    "pow_half": lambda T, x, y: x ** 0.5,
    "pow_minus_half": lambda T, x, y: x ** -0.5,
    "pow_minus_1": lambda T, x, y: x ** -1,
    "pow_2": lambda T, x, y: x ** 2,
    "pow_3": lambda T, x, y: x ** 3,
    "pow_minus_2": lambda T, x, y: x ** -2.0,
    "pow_1_5": lambda T, x, y: x ** 1.5,
    "pow_tensor": lambda T, x, y: x ** y,
    "pow_zero_tensor_inf_grad": lambda T, x, y: x ** T.zeros_like(x) * INF,
    "rpow": lambda T, x, y: 2.0 ** x,
    # activations
    "relu": lambda T, x, y: T.relu(x),
    "F.relu": lambda T, x, y: _F(T).relu(x),
    "relu_": lambda T, x, y: _F(T).relu(x * 1, inplace=True),
    "leaky_relu": lambda T, x, y: _F(T).leaky_relu(x, 0.1),
    "elu": lambda T, x, y: _F(T).elu(x, 2.0),
    "gelu": lambda T, x, y: _F(T).gelu(x),
    "gelu_tanh": lambda T, x, y: _F(T).gelu(x, approximate="tanh"),
    "silu": lambda T, x, y: _F(T).silu(x),
    "softplus": lambda T, x, y: _F(T).softplus(x),
    "clamp": lambda T, x, y: T.clamp(x, -0.5, 0.5),
    "clamp_min": lambda T, x, y: T.clamp(x, min=0.0),
    "clamp_nan_bound": lambda T, x, y: T.clamp(x, max=NAN),
    "clamp_tensor": lambda T, x, y: T.clamp(x, T.zeros_like(x) - 0.5, y),
    # binary
    "add": lambda T, x, y: x + y,
    "sub": lambda T, x, y: x - y,
    "mul": lambda T, x, y: x * y,
    "div": lambda T, x, y: x / y,
    "maximum": lambda T, x, y: T.maximum(x, y),
    "minimum": lambda T, x, y: T.minimum(x, y),
    "where": lambda T, x, y: T.where(x > 0, x, y),
    "remainder": lambda T, x, y: x % y,
    "remainder_scalar": lambda T, x, y: x % 2.0,
    "remainder_negative_scalar": lambda T, x, y: x % -2.0,
    "rremainder": lambda T, x, y: (3.0 % y).detach(),
    "floor_divide": lambda T, x, y: (x // y).detach(),
    "div_floor": lambda T, x, y: T.div(x, y, rounding_mode="floor"),
    "div_trunc": lambda T, x, y: T.div(x, y, rounding_mode="trunc"),
    # reductions
    "sum": lambda T, x, y: _rows(T, x, y).sum(1),
    "mean": lambda T, x, y: _rows(T, x, y).mean(1),
    "prod": lambda T, x, y: x.prod(),
    "prod_dim": lambda T, x, y: _rows(T, x, y).prod(1),
    "max": lambda T, x, y: x.max(),
    "min": lambda T, x, y: x.min(),
    "max_two_nans": lambda T, x, y: T.cat([x, y]).max(),
    "max_dim": lambda T, x, y: _rows(T, x, y).max(1),
    "min_dim": lambda T, x, y: _rows(T, x, y).min(0),
    "amax": lambda T, x, y: _rows(T, x, y).amax(1),
    "amin": lambda T, x, y: _rows(T, x, y).amin(0),
    "argmax": lambda T, x, y: _rows(T, x, y).argmax(1),
    "argmin": lambda T, x, y: _rows(T, x, y).argmin(0),
    "argmax_all": lambda T, x, y: T.cat([x, y]).argmax(),
    "logsumexp": lambda T, x, y: _rows(T, x, y).logsumexp(1),
    "softmax_rows": lambda T, x, y: _rows(T, x, y).softmax(1),
    "softmax_cols": lambda T, x, y: _rows(T, x, y).t().softmax(0),
    "log_softmax_rows": lambda T, x, y: _rows(T, x, y).log_softmax(1),
    "log_softmax_cols": lambda T, x, y: _rows(T, x, y).t().log_softmax(0),
    "norm": lambda T, x, y: _rows(T, x, y).norm(dim=1),
    "var": lambda T, x, y: _rows(T, x, y).var(1),
    # losses
    "mse_loss": lambda T, x, y: _F(T).mse_loss(x, y, reduction="none"),
    "l1_loss": lambda T, x, y: _F(T).l1_loss(x, y, reduction="none"),
    "bce_with_logits": lambda T, x, y: _F(T).binary_cross_entropy_with_logits(
        x, T.ones_like(x) * 0.25, reduction="none"),
    "cross_entropy": lambda T, x, y: _F(T).cross_entropy(
        _rows(T, x, y), T.tensor([0, 1] * 5 + [0], device=x.device), reduction="none"),
    "nll_loss": lambda T, x, y: _F(T).nll_loss(
        _rows(T, x, y), T.tensor([1, 0] * 5 + [1], device=x.device), reduction="none"),
}

# PyTorch's float32 vector path gives gelu(inf) = nan where its scalar path (and float64) give
# inf: for these the float32 oracle is PyTorch's float64 result, rounded.
ORACLE_IN_FLOAT64 = {"gelu"}

# Ops whose zero results must carry PyTorch's sign as well (``-4.0 % 2`` is -0.0).
SIGNED_ZERO = {"sign", "remainder", "remainder_scalar", "remainder_negative_scalar",
               "rremainder", "floor_divide", "div_floor", "div_trunc", "neg", "pow_half",
               "pow_minus_half", "pow_minus_1", "pow_3"}


def _run(T: Any, name: str, dtype: str, device: str) -> tuple[list[Any], list[Any]]:
    """The outputs and the gradients of ``x`` and ``y`` (of the sum of the float outputs)."""
    x = T.tensor(X, dtype=getattr(T, dtype), device=device, requires_grad=True)
    y = T.tensor(Y, dtype=getattr(T, dtype), device=device, requires_grad=True)
    out = CASES[name](T, x, y)
    outs = list(out) if isinstance(out, tuple) else [out]
    diff = [o for o in outs if o.requires_grad]
    grads: list[Any] = []
    if diff:
        total = diff[0].sum()
        for o in diff[1:]:
            total = total + o.sum()
        grads = list(T.autograd.grad(total, [x, y], allow_unused=True))
    return outs, grads


def _np(t: Any) -> np.ndarray | None:
    if t is None:
        return None
    return np.asarray(t.detach().cpu()) if isinstance(t, ag.Tensor) else t.detach().numpy()


def _oracle(name: str, dtype: str) -> tuple[list[Any], list[Any]]:
    if dtype == "float64" or name not in ORACLE_IN_FLOAT64:
        return _run(torch, name, dtype, "cpu")
    outs, grads = _run(torch, name, "float64", "cpu")
    return [o.float() for o in outs], [None if g is None else g.float() for g in grads]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_nan_inf_match_torch(device: str, name: str, dtype: str) -> None:
    tol = {"rtol": 1e-9, "atol": 1e-12} if dtype == "float64" else {"rtol": 2e-5, "atol": 1e-6}
    want_outs, want_grads = _oracle(name, dtype)
    got_outs, got_grads = _run(ag, name, dtype, device)
    assert len(got_outs) == len(want_outs)
    for i, (g, w) in enumerate(zip(got_outs, want_outs)):
        gn, wn = _np(g), _np(w)
        assert gn is not None and wn is not None
        assert gn.shape == wn.shape and str(gn.dtype) == str(wn.dtype), (i, gn, wn)
        np.testing.assert_allclose(gn, wn, equal_nan=True, err_msg=f"output {i}", **tol)
        if name in SIGNED_ZERO:
            zeros = wn == 0
            assert np.array_equal(np.signbit(gn[zeros]), np.signbit(wn[zeros])), (gn, wn)
    assert len(got_grads) == len(want_grads)
    for what, g, w in zip(("x", "y"), got_grads, want_grads):
        gn, wn = _np(g), _np(w)
        if wn is None or gn is None:  # an unused input: None, or zeros
            assert not np.any(gn if gn is not None else wn), what
            continue
        np.testing.assert_allclose(gn, wn, equal_nan=True, err_msg=f"grad of {what}", **tol)
