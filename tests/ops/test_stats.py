"""The stats family against torch: ``std_mean``, ``var_mean``, ``nansum``, ``nanmean``,
``aminmax``, ``quantile``, ``nanquantile``, ``cov``, ``corrcoef``, ``dist``, ``cdist``, ``renorm``.

One table of programs ``fn(T, *inputs)`` run with torch (the oracle) and with us on every
device: values, dtypes and shapes, the gradients of a weighted sum of the float outputs, and
PyTorch's grad_fn names; then float64 ``gradcheck`` / ``gradgradcheck`` on the differentiable
ones; then out=, the in-place form and the warnings. Errors: ``tests/misuse/test_stats.py``.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck, gradgradcheck
from tests.ops.test_products import Case, compare

RNG = np.random.default_rng(7)
NAN = float("nan")


def _r(*shape: int, dtype: str = "float32") -> np.ndarray:
    return RNG.standard_normal(shape).astype(dtype)


A = _r(3, 4)
A64 = _r(3, 4, dtype="float64")
B = _r(2, 3, 4)
TIES = np.array([[1.0, 1.0, 2.0, 2.0], [3.0, 0.0, 0.0, 5.0], [4.0, 4.0, 4.0, 4.0]], "float32")
NANS = np.array([[1.0, NAN, 2.0, 3.0], [NAN, NAN, NAN, NAN], [0.5, 1.0, NAN, -1.0]], "float32")
S = np.array(2.5, "float32")
E = np.zeros((0, 3), "float32")
INT = np.arange(12).reshape(3, 4)
BOOL = INT % 3 == 0
Q = np.array([0.0, 0.25, 0.5, 0.9, 1.0], "float32")
Q_MID = np.array([0.1, 0.5, 0.77], "float32")
X1 = _r(5, 3)
X2 = _r(4, 3)
BIG1 = _r(30, 3, dtype="float64")  # more than 25 rows: cdist's matrix-product path
W_INT = np.array([1, 2, 0, 3])
W_FLOAT = np.array([0.5, 1.0, 2.0, 0.25], "float32")


def _q(T: Any, x: Any, data: Any = Q) -> Any:
    return T.tensor(data, dtype=x.dtype, device=x.device)


CASES: dict[str, Case] = {
    # std_mean / var_mean
    "std_mean_all": (lambda T, x: T.std_mean(x), [A]),
    "std_mean_dim": (lambda T, x: T.std_mean(x, 1), [A]),
    "std_mean_neg_keepdim": (lambda T, x: T.std_mean(x, -1, keepdim=True), [A64]),
    "std_mean_dims": (lambda T, x: T.std_mean(x, (0, 2), correction=0), [B]),
    "std_mean_unbiased_pos": (lambda T, x: T.std_mean(x, 0, False), [A]),
    "std_mean_unbiased_only": (lambda T, x: T.std_mean(x, False), [A]),
    "std_mean_transposed": (lambda T, x: T.std_mean(x.t(), 1, correction=2), [A]),
    "std_mean_constant": (lambda T, x: T.std_mean(x, 1), [TIES]),
    "std_mean_0d": (lambda T, x: T.std_mean(x, correction=0), [S]),
    "std_mean_empty_dim": (lambda T, x: T.std_mean(x, 1), [E]),
    "std_mean_half": (lambda T, x: T.std_mean(x, 1), [A.astype("float16")]),
    "var_mean_all": (lambda T, x: T.var_mean(x), [A]),
    "var_mean_dim": (lambda T, x: T.var_mean(x, [0], keepdim=True), [B]),
    "var_mean_strided": (lambda T, x: T.var_mean(x[:, ::2], 1, correction=0), [A64]),
    "var_mean_nan": (lambda T, x: T.var_mean(x, 1), [NANS]),
    "var_mean_only_mean_used": (lambda T, x: T.var_mean(x, 1)[1], [A]),
    "var_mean_only_var_used": (lambda T, x: T.var_mean(x, 1)[0], [A]),
    # nansum / nanmean
    "nansum_all": (lambda T, x: T.nansum(x), [NANS]),
    "nansum_dim": (lambda T, x: T.nansum(x, 1), [NANS]),
    "nansum_keepdim": (lambda T, x: x.nansum(-2, keepdim=True), [NANS]),
    "nansum_dims": (lambda T, x: T.nansum(x, (0, 2)), [B]),
    "nansum_transposed": (lambda T, x: T.nansum(x.t(), 1), [NANS]),
    "nansum_int": (lambda T, x: T.nansum(x, 1), [INT]),
    "nansum_bool": (lambda T, x: T.nansum(x), [BOOL]),
    "nansum_dtype": (lambda T, x: T.nansum(x, 0, dtype=T.float64), [NANS]),
    "nansum_int_dtype": (lambda T, x: T.nansum(x, dtype=T.float32), [INT]),
    "nansum_0d": (lambda T, x: T.nansum(x), [S]),
    "nansum_empty": (lambda T, x: T.nansum(x, 0), [E]),
    "nanmean_all": (lambda T, x: T.nanmean(x), [NANS]),
    "nanmean_dim": (lambda T, x: T.nanmean(x, 1), [NANS]),
    "nanmean_method_keepdim": (lambda T, x: x.nanmean(0, keepdim=True), [NANS]),
    "nanmean_dtype": (lambda T, x: T.nanmean(x, 1, dtype=T.float64), [NANS]),
    "nanmean_empty": (lambda T, x: T.nanmean(x), [E]),
    "nanmean_0d": (lambda T, x: T.nanmean(x), [S]),
    # aminmax
    "aminmax_all": (lambda T, x: T.aminmax(x), [A]),
    "aminmax_dim": (lambda T, x: T.aminmax(x, dim=1), [A64]),
    "aminmax_neg_keepdim": (lambda T, x: x.aminmax(dim=-2, keepdim=True), [A]),
    "aminmax_keepdim_all": (lambda T, x: T.aminmax(x, keepdim=True), [A]),
    "aminmax_ties": (lambda T, x: T.aminmax(x, dim=1), [TIES]),
    "aminmax_ties_all": (lambda T, x: T.aminmax(x), [TIES]),
    "aminmax_nan": (lambda T, x: T.aminmax(x, dim=1), [NANS]),
    "aminmax_bool": (lambda T, x: T.aminmax(x, dim=0), [BOOL]),
    "aminmax_int": (lambda T, x: T.aminmax(x), [INT]),
    "aminmax_0d": (lambda T, x: T.aminmax(x, dim=0), [S]),
    "aminmax_empty_other_dim": (lambda T, x: T.aminmax(x, dim=1), [E]),
    "aminmax_transposed": (lambda T, x: T.aminmax(x.t(), dim=1), [A]),
    # quantile / nanquantile
    "quantile_all": (lambda T, x: T.quantile(x, 0.3), [A]),
    "quantile_dim": (lambda T, x: T.quantile(x, 0.3, dim=1), [A]),
    "quantile_dim0_keepdim": (lambda T, x: T.quantile(x, 0.75, dim=0, keepdim=True), [A64]),
    "quantile_all_keepdim": (lambda T, x: T.quantile(x, 0.5, keepdim=True), [A]),
    "quantile_q_tensor": (lambda T, x: T.quantile(x, _q(T, x), dim=1), [A]),
    "quantile_q_tensor_keepdim": (lambda T, x: T.quantile(x, _q(T, x), dim=0, keepdim=True), [A]),
    "quantile_q_tensor_all": (lambda T, x: T.quantile(x, _q(T, x)), [B]),
    "quantile_q_0d_tensor": (lambda T, x: x.quantile(_q(T, x, 0.4), dim=-1), [A]),
    "quantile_q_int": (lambda T, x: T.quantile(x, 1, dim=1), [A]),
    "quantile_3d_mid_dim": (lambda T, x: T.quantile(x, _q(T, x), dim=1), [B]),
    "quantile_transposed": (lambda T, x: T.quantile(x.t(), 0.6, dim=1), [A]),
    "quantile_ties": (lambda T, x: T.quantile(x, _q(T, x), dim=1), [TIES]),
    "quantile_nan": (lambda T, x: T.quantile(x, _q(T, x), dim=1), [NANS]),
    "quantile_0d": (lambda T, x: T.quantile(x, 0.5, dim=0), [S]),
    "quantile_0d_all": (lambda T, x: T.quantile(x, 0.5), [S]),
    **{f"quantile_{m}": (lambda T, x, m=m: T.quantile(x, _q(T, x), dim=1, interpolation=m), [A])
       for m in ("lower", "higher", "midpoint", "nearest")},
    "quantile_nearest_half": (lambda T, x: T.quantile(x, _q(T, x, [0.125, 0.375]), dim=0,
                                                      interpolation="nearest"), [A]),
    # q takes a gradient too (linear interpolation only), as in PyTorch
    "quantile_q_grad": (lambda T, x, q: T.quantile(x, q, dim=1), [A, Q_MID]),
    "quantile_q_grad_0d": (lambda T, x, q: T.quantile(x, q), [A64, np.array(0.3)]),
    "quantile_q_grad_nan_row": (lambda T, x, q: T.quantile(x, q, dim=1), [NANS, Q_MID]),
    "quantile_q_grad_lower": (lambda T, x, q: T.quantile(x, q, dim=1, interpolation="lower"),
                              [A, Q_MID]),
    "nanquantile_q_grad": (lambda T, x, q: T.nanquantile(x, q, dim=1), [NANS, Q_MID]),
    "nanquantile_dim": (lambda T, x: T.nanquantile(x, _q(T, x), dim=1), [NANS]),
    "nanquantile_all": (lambda T, x: T.nanquantile(x, 0.3), [NANS]),
    "nanquantile_keepdim": (lambda T, x: x.nanquantile(0.5, dim=0, keepdim=True), [NANS]),
    **{f"nanquantile_{m}": (lambda T, x, m=m: T.nanquantile(x, _q(T, x), dim=1,
                                                           interpolation=m), [NANS])
       for m in ("lower", "higher", "midpoint", "nearest")},
    "nanquantile_no_nan": (lambda T, x: T.nanquantile(x, 0.2, dim=1), [A64]),
    # cov / corrcoef
    "cov": (lambda T, x: T.cov(x), [A]),
    "cov_1d": (lambda T, x: T.cov(x[0]), [A64]),
    "cov_transposed": (lambda T, x: x.t().cov(correction=0), [A]),
    "cov_correction2": (lambda T, x: T.cov(x, correction=2), [A]),
    "cov_int": (lambda T, x: T.cov(x), [INT]),
    "cov_fweights": (lambda T, x, f: T.cov(x, fweights=f), [A, W_INT]),
    "cov_aweights": (lambda T, x, w: T.cov(x, aweights=w), [A, W_FLOAT]),
    "cov_both": (lambda T, x, f, w: T.cov(x, fweights=f, aweights=w), [A64, W_INT,
                                                                       W_FLOAT.astype("float64")]),
    "cov_both_no_correction": (lambda T, x, f, w: T.cov(x, correction=0, fweights=f,
                                                        aweights=w), [A, W_INT, W_FLOAT]),
    "cov_aweights_promote": (lambda T, x, w: T.cov(x, aweights=w), [A, W_FLOAT.astype("float64")]),
    "corrcoef": (lambda T, x: T.corrcoef(x), [A64]),
    "corrcoef_1d": (lambda T, x: T.corrcoef(x[0]), [A]),
    "corrcoef_constant_row": (lambda T, x: T.corrcoef(x), [TIES]),
    "corrcoef_int": (lambda T, x: x.corrcoef(), [INT]),
    # dist
    **{f"dist_p{p}": (lambda T, x, y, p=p: T.dist(x, y, p), [A, A64.astype("float32")])
       for p in (0.5, 1, 1.5, 2, 3, float("inf"), -1)},
    # NOTE: PyTorch defines no gradient for p = 0 (its backward fails); values only
    "dist_p0": (lambda T, x, y: T.dist(x.detach(), y.detach(), 0), [A, A64.astype("float32")]),
    "dist_broadcast": (lambda T, x, y: T.dist(x, y), [A, A[0]]),
    "dist_promote": (lambda T, x, y: x.dist(y, 3), [A, A64]),
    "dist_equal": (lambda T, x: T.dist(x, x.detach()), [A64]),
    "dist_equal_p3": (lambda T, x: T.dist(x, x.detach(), 3), [A64]),
    "dist_inf_ties": (lambda T, x, y: T.dist(x, y, float("inf")), [TIES, np.zeros(4, "float32")]),
    "dist_p_tensor": (lambda T, x, y: T.dist(x, y, T.tensor(2.0)), [A, A64.astype("float32")]),
    # cdist
    **{f"cdist_p{p}": (lambda T, x, y, p=p: T.cdist(x, y, p=p), [X1, X2])
       for p in (0, 0.5, 1, 1.5, 2, 3, float("inf"))},
    "cdist_mm": (lambda T, x, y: T.cdist(x, y, compute_mode="use_mm_for_euclid_dist"), [X1, X2]),
    "cdist_big": (lambda T, x: T.cdist(x, x[:7] * 2), [BIG1]),
    "cdist_big_direct": (lambda T, x: T.cdist(x, x[:7] * 2,
                                              compute_mode="donot_use_mm_for_euclid_dist"), [BIG1]),
    "cdist_batch": (lambda T, x, y: T.cdist(x, y, p=1), [_r(2, 3, 4), _r(2, 5, 4)]),
    "cdist_batch_broadcast": (lambda T, x, y: T.cdist(x, y), [_r(2, 1, 3, 4), _r(3, 5, 4)]),
    "cdist_batch_broadcast_mm": (lambda T, x, y: T.cdist(x, y, compute_mode="use_mm_for_euclid_dist"),
                                 [_r(2, 1, 3, 4), _r(3, 5, 4)]),
    "cdist_same_points": (lambda T, x: T.cdist(x, x.detach()), [X1]),
    "cdist_same_points_p3": (lambda T, x: T.cdist(x, x.detach(), p=3), [X1]),
    "cdist_inf_ties": (lambda T, x, y: T.cdist(x, y, p=float("inf")),
                       [np.array([[0.0, 0.0]], "float32"), np.array([[1.0, -1.0], [0.0, 0.0]],
                                                                     "float32")]),
    "cdist_empty_rows": (lambda T, x, y: T.cdist(x, y), [np.zeros((0, 3), "float32"), X2]),
    "cdist_empty_cols": (lambda T, x, y: T.cdist(x, y), [np.zeros((3, 0), "float32"),
                                                         np.zeros((2, 0), "float32")]),
    "cdist_transposed": (lambda T, x, y: T.cdist(x.t(), y), [_r(3, 5), X2]),
    # renorm
    "renorm_p2_dim0": (lambda T, x: T.renorm(x, 2, 0, 1.0), [A]),
    "renorm_p1_dim1": (lambda T, x: T.renorm(x, 1, 1, 0.5), [A64]),
    "renorm_pinf": (lambda T, x: x.renorm(float("inf"), -1, 0.7), [A]),
    "renorm_p3_3d": (lambda T, x: T.renorm(x, 3, 1, 1.2), [B]),
    "renorm_no_change": (lambda T, x: T.renorm(x, 2, 0, 100.0), [A]),
    "renorm_zero_maxnorm": (lambda T, x: T.renorm(x, 2, 0, 0), [A]),
    "renorm_transposed": (lambda T, x: T.renorm(x.t(), 2, 0, 1.0), [A]),
}

# grad_fn names of the outputs (PyTorch's), where our node is the one PyTorch records
NAMED = ("std_mean_dim", "var_mean_dim", "nansum_dim", "nanmean_dim", "aminmax_dim",
         "corrcoef", "dist_p3", "cdist_p1", "renorm_p2_dim0", "cov", "quantile_all")

# float64 gradcheck / gradgradcheck (inputs converted to float64, away from kinks)
SMOOTH = ("std_mean_dim", "std_mean_dims", "var_mean_all", "var_mean_dim", "nansum_dim",
          "nansum_all", "nanmean_dim", "aminmax_dim", "aminmax_all", "quantile_dim",
          "quantile_q_tensor", "quantile_midpoint", "quantile_q_grad", "quantile_q_grad_0d", "nanquantile_dim", "cov", "cov_both",
          "cov_aweights", "corrcoef", "corrcoef_1d", "dist_p1", "dist_p1.5", "dist_p2", "dist_p3",
          "dist_pinf", "dist_broadcast", "cdist_p1", "cdist_p1.5", "cdist_p2", "cdist_p3",
          "cdist_pinf", "cdist_mm", "cdist_batch_broadcast", "renorm_p2_dim0", "renorm_p1_dim1",
          "renorm_p3_3d", "renorm_pinf")


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name: str, device: str) -> None:
    fn, arrays = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the degrees-of-freedom warnings (tested below)
        compare(fn, arrays, device, names=name in NAMED)


def _finite(a: np.ndarray) -> np.ndarray:
    """``a`` in float64 with its NaNs replaced by distinct numbers: a derivative at a NaN input
    is no number to check, and ties would make the order statistics' one non-differentiable."""
    a = a.astype("float64")
    nan = np.isnan(a)
    a[nan] = 0.37 + 0.1 * np.arange(nan.sum())
    return a


@pytest.mark.parametrize("name", SMOOTH)
def test_gradcheck(name: str, device: str) -> None:
    fn, arrays = CASES[name]
    xs = [ag.tensor(_finite(a) if a.dtype.kind == "f" else a, device=device,
                    requires_grad=a.dtype.kind == "f") for a in arrays]

    def f(*xs: Any) -> Any:
        out = fn(ag, *xs)
        return tuple(out) if isinstance(out, tuple) else out

    assert gradcheck(f, xs, eps=1e-6, atol=1e-5, rtol=1e-3)
    assert gradgradcheck(f, xs, eps=1e-6, atol=1e-5, rtol=1e-3)


OUT_CASES: dict[str, tuple[Callable[..., Any], list[np.ndarray], Callable[[Any], Any]]] = {
    "nansum": (lambda T, x, out: T.nansum(x, 1, out=out), [NANS], lambda T: T.empty(0)),
    "nanmean": (lambda T, x, out: T.nanmean(x, out=out), [NANS], lambda T: T.empty(0)),
    "quantile": (lambda T, x, out: T.quantile(x, 0.3, dim=0, out=out), [A],
                 lambda T: T.empty(4)),
    "nanquantile": (lambda T, x, out: T.nanquantile(x, 0.3, out=out), [NANS],
                    lambda T: T.empty(())),
    "renorm": (lambda T, x, out: T.renorm(x, 2, 0, 1.0, out=out), [A], lambda T: T.empty(3, 4)),
    "aminmax": (lambda T, x, out: T.aminmax(x, dim=0, out=out), [A],
                lambda T: (T.empty(4), T.empty(4))),
}


@pytest.mark.parametrize("name", sorted(OUT_CASES))
def test_out(name: str, device: str) -> None:
    fn, arrays, make = OUT_CASES[name]

    def run(T: Any, dev: str) -> Any:
        out = make(T)
        out = tuple(o.to(dev) for o in out) if isinstance(out, tuple) else out.to(dev)
        res = fn(T, *(T.tensor(a, device=dev) for a in arrays), out)
        assert res is out or tuple(res) == tuple(out)
        return res

    ours, theirs = run(ag, device), run(torch, "cpu")
    for o, t in zip(ours if isinstance(ours, tuple) else (ours,),
                    theirs if isinstance(theirs, tuple) else (theirs,)):
        np.testing.assert_allclose(o.cpu().numpy(), t.numpy(), rtol=1e-6)


def test_out_refuses_grad(device: str) -> None:
    x = ag.tensor(A, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="don't support automatic differentiation"):
        ag.nansum(x, out=ag.empty(0, device=device))


def test_renorm_inplace(device: str) -> None:
    def run(T: Any, dev: str) -> Any:
        w = T.tensor(A64, device=dev, requires_grad=True)
        x = w * 1
        x.renorm_(2, 1, 0.5)
        (g,) = T.autograd.grad((x * x).sum(), w)
        return x.detach(), g, x.grad_fn.name()

    ours, theirs = run(ag, device), run(torch, "cpu")
    np.testing.assert_allclose(ours[0].cpu().numpy(), theirs[0].numpy(), rtol=1e-6)
    np.testing.assert_allclose(ours[1].cpu().numpy(), theirs[1].numpy(), rtol=1e-6)
    assert ours[2] == theirs[2]


@pytest.mark.parametrize("call,message", [
    (lambda T, x: T.std_mean(x, 1, correction=4), "std_mean(): degrees of freedom is <= 0."),
    (lambda T, x: T.var_mean(x[:0]), "var_mean(): degrees of freedom is <= 0."),
    (lambda T, x: T.cov(x, correction=4), "cov(): degrees of freedom is <= 0."),
])
def test_warnings(call: Any, message: str, device: str) -> None:
    for T, dev in ((torch, "cpu"), (ag, device)):
        with pytest.warns(UserWarning, match=message.replace("(", r"\(").replace(")", r"\)")):
            call(T, T.tensor(A, device=dev))


def test_aminmax_return_type(device: str) -> None:
    r = ag.aminmax(ag.tensor(A, device=device), dim=0)
    assert type(r).__name__ == "aminmax" and r.min is r[0] and r.max is r[1]
    assert repr(r).startswith("torch.return_types.aminmax(")


VMAPPED: dict[str, Callable[[Any], Any]] = {
    "std_mean": lambda t: ag.std_mean(t, 1),
    "var_mean": lambda t: ag.var_mean(t, 0, keepdim=True),
    "nansum": lambda t: ag.nansum(t, 1),
    "nanmean": lambda t: ag.nanmean(t),
    "aminmax": lambda t: tuple(ag.aminmax(t, dim=1)),
    "quantile": lambda t: ag.quantile(t, 0.3, dim=1),
    "nanquantile_q": lambda t: ag.nanquantile(t, ag.tensor([0.2, 0.9], device=t.device), dim=0,
                                              interpolation="midpoint"),
    "cov": lambda t: ag.cov(t),
    "cdist": lambda t: ag.cdist(t, t * 2, p=1),
    "dist": lambda t: ag.dist(t, t * 0.5 + 1),
    "renorm": lambda t: ag.renorm(t, 2, 0, 1.0),
}


@pytest.mark.parametrize("name", sorted(VMAPPED))
def test_vmap(name: str, device: str) -> None:
    """vmap gives each sample's result (batching rules or the per-sample fallback)."""
    f = VMAPPED[name]
    x = ag.tensor(_r(4, 3, 5), device=device)
    out = ag.func.vmap(f)(x)
    outs = out if isinstance(out, tuple) else (out,)
    for i in range(4):
        ref = f(x[i])
        for o, r in zip(outs, ref if isinstance(ref, tuple) else (ref,)):
            np.testing.assert_allclose(o[i].cpu().numpy(), r.cpu().numpy(), rtol=1e-6)


@pytest.mark.parametrize("p", [0.5, 1.0, 2.0, 3.0, float("inf")])
def test_cdist_in_blocks(p: float, device: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Rows taken a few at a time (forward, and backward on arrays) give the same numbers."""
    from autograd_gpu.backends import stats as backend_stats

    monkeypatch.setattr(backend_stats, "_CDIST_BLOCK", 40)  # 40 // (5 * 3 * 2): 1 row a block
    x1, x2 = _r(2, 7, 3, dtype="float64"), _r(2, 5, 3, dtype="float64")
    compare(lambda T, a, b: T.cdist(a, b, p=p, compute_mode="donot_use_mm_for_euclid_dist"),
            [x1, x2], device)


def test_quantile_out_records_copy(device: str) -> None:
    """PyTorch's quantile(out=) copies into out in place: with a result that requires grad,
    out records the copy (CopyBackwards) and the gradient reaches the input."""
    def run(T: Any, dev: str) -> Any:
        x = T.tensor(A64, device=dev, requires_grad=True)
        out = T.empty(0, dtype=T.float64, device=dev)
        r = T.nanquantile(x, 0.3, dim=1, out=out)
        assert r is out
        (g,) = T.autograd.grad(out.sum(), x)
        return out.detach(), g, out.grad_fn.name()

    ours, theirs = run(ag, device), run(torch, "cpu")
    np.testing.assert_allclose(ours[0].cpu().numpy(), theirs[0].numpy(), rtol=1e-12)
    np.testing.assert_allclose(ours[1].cpu().numpy(), theirs[1].numpy(), rtol=1e-12)
    assert ours[2] == theirs[2]
