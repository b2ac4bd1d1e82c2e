"""The fused normalisation kernels (``kernels/norm.cu``) and their launchers
(``autograd_gpu/backends/cuda_norm.py``): layer norm, RMS norm and group norm, forward and
backward.

GPU tests (run whenever CuPy sees a GPU, and on the CPU kernel emulator under
AUTOGRAD_GPU_FAKE_CUDA=emulate, which checks their logic, not the GPU): each launcher against
its reference twin (the unfused formula in float64 on the host, from the same inputs) and against
torch on the CPU; float16/32/64, rows that are not multiples of a warp, rows long enough for a
256-thread group, column sums cut into several chunks, empty inputs; then the ops end to end on
device "cuda" (values, gradients, grad_fn names against torch, double backward through the
tensor formula) with the kernels seen to run.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.backends import cuda_norm as cn
from tests.backends.test_cuda_kernels import ATOL, DTYPES, RTOL, cp, gpu

TORCH = {"float16": torch.float16, "float32": torch.float32, "float64": torch.float64}


def _arr(shape: tuple[int, ...], dtype: str, seed: int, layout: str = "contiguous",
         shift: float = 0.0) -> Any:
    """A cupy array of standard normal values + shift; "transposed": a non-contiguous view."""
    rng = np.random.default_rng(seed)
    if layout == "transposed" and len(shape) > 1:
        rev = tuple(range(len(shape)))[::-1]
        return cp.asarray((rng.standard_normal(shape[::-1]) + shift).astype(dtype)).transpose(rev)
    return cp.asarray((rng.standard_normal(shape) + shift).astype(dtype))


def _h(a: Any) -> Any:
    return None if a is None else cp.asnumpy(a).astype(np.float64)


def _check(got: Any, want: Any, dtype: str, scale: float = 4.0) -> None:
    assert got.dtype == np.dtype(dtype), (got.dtype, dtype)
    np.testing.assert_allclose(_h(got), want, rtol=RTOL[dtype] * scale,
                               atol=ATOL[dtype] * scale)


# ---- reference twins: the unfused formulas, float64 on the host ------------------------------

def _ref_forward(x: np.ndarray, w: Any, b: Any, red: tuple[int, ...], pshape: tuple[int, ...],
                 eps: float, rms: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    mean = np.zeros_like(x.sum(axis=red, keepdims=True)) if rms else x.mean(axis=red,
                                                                             keepdims=True)
    rstd = 1 / np.sqrt(((x - mean) ** 2).mean(axis=red, keepdims=True) + eps)
    y = (x - mean) * rstd
    if w is not None:
        y = y * w.reshape(pshape)
    if b is not None:
        y = y + b.reshape(pshape)
    return y, mean, rstd


def _ref_backward(g: np.ndarray, x: np.ndarray, w: Any, mean: np.ndarray, rstd: np.ndarray,
                  red: tuple[int, ...], pshape: tuple[int, ...], pdims: tuple[int, ...],
                  rms: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xhat = (x - mean) * rstd
    gy = g if w is None else g * w.reshape(pshape)
    c1 = 0 if rms else gy.mean(axis=red, keepdims=True)
    dx = rstd * (gy - c1 - xhat * (gy * xhat).mean(axis=red, keepdims=True))
    return dx, (g * xhat).sum(axis=pdims), g.sum(axis=pdims)


def _layer_case(shape: tuple[int, ...], ndim: int, dtype: str, affine: bool, layout: str,
                rms: bool, seed: int) -> None:
    x = _arr(shape, dtype, seed, layout, shift=0.5)
    pshape = shape[len(shape) - ndim:]
    w = _arr(pshape, dtype, seed + 1) if affine else None
    b = _arr(pshape, dtype, seed + 2) if affine and not rms else None
    g = _arr(shape, dtype, seed + 3)
    lead = len(shape) - ndim
    red, pdims = tuple(range(lead, len(shape))), tuple(range(lead))
    eps = 1e-5
    if rms:
        y, rstd = cn.rms_norm(x, ndim, w, eps)
        mean = None
    else:
        y, mean, rstd = cn.layer_norm(x, ndim, w, b, eps)
    stat = shape[:lead] + (1,) * ndim
    assert y.shape == shape and y.flags.c_contiguous and rstd.shape == stat
    want_y, want_mean, want_rstd = _ref_forward(_h(x), _h(w), _h(b), red, pshape, eps, rms)
    _check(y, want_y, dtype)
    if rms:
        assert rstd.dtype == np.dtype("float64" if dtype == "float64" else "float32")
        np.testing.assert_allclose(_h(rstd), want_rstd, rtol=RTOL["float32"] * 4)
        dx, dw = cn.rms_norm_backward(g, x, ndim, w, rstd)
        db = None
    else:
        _check(mean, want_mean, dtype)
        _check(rstd, want_rstd, dtype)
        dx, dw, db = cn.layer_norm_backward(g, x, ndim, w, mean, rstd)
    # NOTE: the twin takes the kernel's own statistics, as the unfused backward takes the saved
    # ones (float16's are rounded).
    m = np.zeros(stat) if rms else _h(mean)
    want_dx, want_dw, want_db = _ref_backward(_h(g), _h(x), _h(w), m, _h(rstd), red, pshape,
                                              pdims, rms)
    n = max(1, int(np.prod(shape[:lead])))
    _check(dx, want_dx, dtype, 8)
    if affine:
        assert dw.shape == pshape
        _check(dw, want_dw, dtype, 8 * np.sqrt(n))
    else:
        assert dw is None
    if not rms:
        assert db.shape == pshape
        _check(db, want_db, dtype, 8 * np.sqrt(n))


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rms", (False, True))
def test_layer_and_rms_norm_match_the_unfused_formula(rms: bool, dtype: str) -> None:
    # rows of 1, 33, 37 (not warp multiples), 2100 (a 256-thread group); 200 rows of 7 cut the
    # column sums into chunks; a transposed input is copied first
    for k, (shape, ndim, layout) in enumerate([((5, 7), 1, "contiguous"),
                                               ((3, 37, 1), 2, "transposed"),
                                               ((4, 2, 33), 1, "contiguous"),
                                               ((2, 2100), 1, "contiguous"),
                                               ((200, 7), 1, "transposed"),
                                               ((3,), 1, "contiguous")]):
        for affine in (True, False):
            _layer_case(shape, ndim, dtype, affine, layout, rms, 10 * k)


def _group_case(shape: tuple[int, ...], groups: int, dtype: str, affine: bool,
                seed: int) -> None:
    x = _arr(shape, dtype, seed, shift=-0.5)
    n, c = shape[:2]
    w = _arr((c,), dtype, seed + 1) if affine else None
    b = _arr((c,), dtype, seed + 2) if affine else None
    g = _arr(shape, dtype, seed + 3)
    eps = 1e-3
    y, mean, rstd = cn.group_norm(x, groups, w, b, eps)
    assert y.shape == shape and mean.shape == rstd.shape == (n, groups, 1)
    xg = _h(x).reshape(n, groups, -1)
    want_y, want_mean, want_rstd = _ref_forward(xg, None, None, (2,), (1,), eps, False)
    pshape = (c,) + (1,) * (len(shape) - 2)
    want_y = want_y.reshape(shape)
    if affine:
        want_y = want_y * _h(w).reshape(pshape) + _h(b).reshape(pshape)
    _check(y, want_y, dtype)
    _check(mean, want_mean, dtype)
    _check(rstd, want_rstd, dtype)
    dx, dw, db = cn.group_norm_backward(g, x, groups, w, mean, rstd)
    gh, xh = _h(g), _h(x)
    gy = gh if w is None else gh * _h(w).reshape(pshape)
    gyg = gy.reshape(n, groups, -1)
    xhat = (xg - _h(mean)) * _h(rstd)
    want_dx = (_h(rstd) * (gyg - gyg.mean(2, keepdims=True)
                           - xhat * (gyg * xhat).mean(2, keepdims=True))).reshape(shape)
    pdims = (0,) + tuple(range(2, len(shape)))
    scale = 8 * np.sqrt(max(1, xh.size // max(c, 1)))
    _check(dx, want_dx, dtype, 8)
    if affine:
        _check(dw, (gh * xhat.reshape(shape)).sum(axis=pdims), dtype, scale)
    else:
        assert dw is None
    _check(db, gh.sum(axis=pdims), dtype, scale)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_group_norm_matches_the_unfused_formula(dtype: str) -> None:
    # groups of 2 channels x 5 positions; no spatial dims; one group of 4 x 9; a 2 x 1500 row
    # (a 256-thread group); 70 samples cut the column sums into chunks
    for k, (shape, groups) in enumerate([((2, 6, 5), 3), ((3, 4), 2), ((2, 4, 3, 3), 1),
                                         ((1, 4, 1500), 2), ((70, 3, 2), 3)]):
        for affine in (True, False):
            _group_case(shape, groups, dtype, affine, 10 * k)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
def test_launchers_against_torch(dtype: str) -> None:
    x = _arr((6, 3, 10), dtype, 1, shift=1.0)
    w, b, g = _arr((3, 10), dtype, 2), _arr((3, 10), dtype, 3), _arr((6, 3, 10), dtype, 4)
    xt, wt, bt = (torch.tensor(cp.asnumpy(a), requires_grad=True) for a in (x, w, b))
    gt = torch.tensor(cp.asnumpy(g))
    # torch's float16 CPU kernels compute in float32: compare with the float32 results
    scale = 4.0
    want, want_mean, want_rstd = torch.native_layer_norm(xt, [3, 10], wt, bt, 1e-5)
    y, mean, rstd = cn.layer_norm(x, 2, w, b, 1e-5)
    _check(y, want.detach().double().numpy(), dtype, scale)
    _check(mean, want_mean.detach().double().numpy(), dtype, scale)
    _check(rstd, want_rstd.detach().double().numpy(), dtype, scale)
    want_grads = torch.autograd.grad(want, (xt, wt, bt), gt)
    for got, ref in zip(cn.layer_norm_backward(g, x, 2, w, mean, rstd), want_grads):
        _check(got, ref.double().numpy(), dtype, 16)

    want = torch.nn.functional.rms_norm(xt, [10], wt[0], 1e-4)
    y, rstd = cn.rms_norm(x, 1, w[0], 1e-4)
    _check(y, want.detach().double().numpy(), dtype, scale)
    want_grads = torch.autograd.grad(want, (xt, wt), gt)
    dx, dw = cn.rms_norm_backward(g, x, 1, w[0], rstd)
    _check(dx, want_grads[0].double().numpy(), dtype, 16)
    _check(dw, want_grads[1][0].double().numpy(), dtype, 16)

    xg = x.reshape(6, 6, 5)
    xgt = xt.detach().reshape(6, 6, 5).requires_grad_()
    wgt, bgt = (t.detach()[0, :6].clone().requires_grad_() for t in (wt, bt))
    want, want_mean, want_rstd = torch.native_group_norm(xgt, wgt, bgt, 6, 6, 5, 3, 1e-5)
    y, mean, rstd = cn.group_norm(xg, 3, w[0, :6].copy(), b[0, :6].copy(), 1e-5)
    _check(y, want.detach().double().numpy(), dtype, scale)
    _check(mean, want_mean.detach().double().numpy()[..., None], dtype, scale)
    _check(rstd, want_rstd.detach().double().numpy()[..., None], dtype, scale)
    want_grads = torch.autograd.grad(want, (xgt, wgt, bgt), gt.reshape(6, 6, 5))
    got_grads = cn.group_norm_backward(g.reshape(6, 6, 5), xg, 3, w[0, :6].copy(), mean, rstd)
    for got, ref in zip(got_grads, want_grads):
        _check(got, ref.double().numpy(), dtype, 16)


@gpu
def test_empty_inputs_launch_nothing() -> None:
    # no rows: empty outputs and zero parameter gradients; empty rows: NaN statistics
    x = cp.zeros((0, 4), np.float32)
    w = cp.ones(4, np.float32)
    y, mean, rstd = cn.layer_norm(x, 1, w, w)
    assert y.shape == (0, 4) and mean.shape == rstd.shape == (0, 1)
    dx, dw, db = cn.layer_norm_backward(x, x, 1, w, mean, rstd)
    assert dx.shape == (0, 4) and _h(dw).tolist() == [0] * 4 and _h(db).tolist() == [0] * 4
    y, mean, rstd = cn.layer_norm(cp.zeros((3, 0), np.float64), 1)
    assert y.shape == (3, 0) and np.isnan(_h(mean)).all() and np.isnan(_h(rstd)).all()
    y, rstd = cn.rms_norm(cp.zeros((2, 0, 3), np.float16), 2)
    assert y.shape == (2, 0, 3) and rstd.shape == (2, 1, 1) and np.isnan(_h(rstd)).all()
    xg = cp.zeros((0, 4, 3), np.float32)
    y, mean, rstd = cn.group_norm(xg, 2, w, w)
    assert y.shape == (0, 4, 3) and mean.shape == (0, 2, 1)
    dx, dw, db = cn.group_norm_backward(xg, xg, 2, w, mean, rstd, (True, True, False))
    assert dx.shape == (0, 4, 3) and _h(dw).tolist() == [0] * 4 and db is None
    with pytest.raises(ValueError, match="divisible"):
        cn.group_norm(cp.zeros((2, 3, 4), np.float32), 2)
    with pytest.raises(ValueError, match="weight shape"):
        cn.layer_norm(cp.zeros((2, 3), np.float32), 1, cp.ones(2, np.float32))
    with pytest.raises(TypeError, match="one dtype"):
        cn.layer_norm(cp.zeros((2, 3), np.float32), 1, cp.ones(3, np.float64))


# ---- the ops end to end on "cuda" ------------------------------------------------------------

@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """How often each launcher ran (so a silent fallback to the unfused path fails)."""
    seen: dict[str, int] = {}
    for name in ("layer_norm", "layer_norm_backward", "rms_norm", "rms_norm_backward",
                 "group_norm", "group_norm_backward"):
        fn = getattr(cn, name)

        def counted(*args: Any, _fn: Any = fn, _name: str = name, **kw: Any) -> Any:
            seen[_name] = seen.get(_name, 0) + 1
            return _fn(*args, **kw)

        monkeypatch.setattr(cn, name, counted)
    return seen


def _pair(shape: tuple[int, ...], dtype: str, seed: int) -> tuple[Any, Any]:
    v = np.random.default_rng(seed).standard_normal(shape) + 0.3
    ours = ag.tensor(v.tolist(), dtype=getattr(ag, dtype), device="cuda", requires_grad=True)
    return ours, torch.tensor(v, dtype=TORCH[dtype], requires_grad=True)


def _same(got: Any, want: Any, dtype: str, scale: float = 8.0) -> None:
    np.testing.assert_allclose(np.asarray(got.detach().cpu().numpy(), np.float64),
                               want.detach().double().numpy(),
                               rtol=RTOL[dtype] * scale, atol=ATOL[dtype] * scale)


CASES = {
    "layer": (lambda F, x, w, b: F.layer_norm(x, [3, 5], w, b, 1e-4), (2, 4, 3, 5), (3, 5)),
    "layer_no_affine": (lambda F, x, w, b: F.layer_norm(x, [5]), (6, 5), (5,)),
    "rms": (lambda F, x, w, b: F.rms_norm(x, [5], w), (4, 3, 5), (5,)),
    "rms_eps_no_weight": (lambda F, x, w, b: F.rms_norm(x, [3, 5], eps=1e-3), (4, 3, 5), (5,)),
    "group": (lambda F, x, w, b: F.group_norm(x, 2, w, b, 1e-4), (3, 4, 5), (4,)),
    "group_2d": (lambda F, x, w, b: F.group_norm(x, 4, w), (2, 4, 3, 2), (4,)),
}
KERNEL_OF = {"layer": "layer_norm", "rms": "rms_norm", "group": "group_norm"}


@gpu
@pytest.mark.parametrize("dtype", ("float32", "float64"))
@pytest.mark.parametrize("case", sorted(CASES))
def test_ops_on_cuda_match_torch(case: str, dtype: str, calls: dict[str, int]) -> None:
    fn, shape, pshape = CASES[case]
    x, xt = _pair(shape, dtype, 1)
    w, wt = _pair(pshape, dtype, 2)
    b, bt = _pair(pshape, dtype, 3)
    out = fn(ag.nn.functional, x, w, b)
    want = fn(torch.nn.functional, xt, wt, bt)
    assert out.grad_fn.name() == want.grad_fn.name()
    assert out.dtype.name == dtype and tuple(out.shape) == shape and out.is_contiguous()
    _same(out, want, dtype)
    v = np.random.default_rng(4).standard_normal(shape)
    vo = ag.tensor(v.tolist(), dtype=out.dtype, device="cuda")
    vt = torch.tensor(v, dtype=want.dtype)
    got = ag.autograd.grad(out, [x, w, b], vo, allow_unused=True)
    ref = torch.autograd.grad(want, [xt, wt, bt], vt, allow_unused=True)
    for a, r in zip(got, ref):
        assert (a is None) == (r is None)
        if r is not None:
            _same(a, r, dtype, 16)
    kernel = KERNEL_OF[case.split("_")[0]]
    assert calls.get(kernel) == 1 and calls.get(kernel + "_backward") == 1, calls


@gpu
@pytest.mark.parametrize("case", sorted(CASES))
def test_double_backward_on_cuda_takes_the_tensor_formula(case: str,
                                                          calls: dict[str, int]) -> None:
    fn, shape, pshape = CASES[case]
    x, xt = _pair(shape, "float64", 5)
    w, wt = _pair(pshape, "float64", 6)
    b, bt = _pair(pshape, "float64", 7)
    results = []
    for T, args in ((ag, (x, w, b)), (torch, (xt, wt, bt))):
        out = fn(T.nn.functional, *args)
        (gx,) = T.autograd.grad((out * out).sum(), args[0], create_graph=True)
        results.append(T.autograd.grad((gx * gx).sum(), args[0])[0])
    _same(results[0], results[1], "float64", 1e3)
    # the first backward (create_graph) took the tensor formula; the second one runs the fused
    # first-order backward through the forward node again (d(out * out)/d out depends on out)
    assert calls.get(KERNEL_OF[case.split("_")[0]]) == 1, calls


@gpu
def test_float16_ops_on_cuda_and_mixed_weight_fallback(calls: dict[str, int]) -> None:
    x, xt = _pair((3, 4, 6), "float16", 8)
    w, wt = _pair((6,), "float16", 9)
    for name, fn in (("layer_norm", lambda F, a, p: F.layer_norm(a, [6], p, p)),
                     ("rms_norm", lambda F, a, p: F.rms_norm(a, [6], p)),
                     ("group_norm", lambda F, a, p: F.group_norm(a.transpose(1, 2), 3, p, p))):
        out = fn(ag.nn.functional, x, w)
        want = fn(torch.nn.functional, xt, wt)
        assert out.grad_fn.name() == want.grad_fn.name() and out.dtype == ag.float16
        _same(out, want, "float16", 4)
        got = ag.autograd.grad(out.float().sum(), [x, w])
        ref = torch.autograd.grad(want.float().sum(), [xt, wt])
        for a, r in zip(got, ref):
            _same(a, r, "float16", 8)
        assert calls.get(name) == 1 and calls.get(name + "_backward") == 1, (name, calls)
    # float32 parameters with a float16 input ("mixed"): the unfused path
    w32 = ag.ones(6, dtype=ag.float32, device="cuda")
    ag.nn.functional.layer_norm(x, [6], w32, w32)
    assert calls["layer_norm"] == 1
