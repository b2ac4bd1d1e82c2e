"""The fused attention kernels (``kernels/attention.cu``), their launchers
(``autograd_gpu/backends/cuda_attention.py``) and ``scaled_dot_product_attention``'s fused path.

CPU tests (always run): the batch-layout helpers, PyTorch's dispatcher rules
(``nn/attention.py``) and ``sdpa_kernel`` against torch. GPU tests (a GPU, or the CPU kernel
emulator under AUTOGRAD_GPU_FAKE_CUDA=emulate; sizes are small for it): each launcher against
its reference twin (the plain NumPy expression in float64, from the same rounded inputs) and
against torch's CPU values and gradients; the op end to end on device "cuda" (PyTorch's node
names, values, gradients, double backward, nothing of size L x S kept for backward).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
import autograd_gpu.nn.attention as agattn
from autograd_gpu.backends import cuda_attention as ca
from tests.backends.test_cuda_kernels import EMULATED, cp, gpu
from tests.misuse._catalogue import check_case

RTOL = {"float16": 1e-2, "float32": 2e-5, "float64": 1e-11}
ATOL = {"float16": 1e-2, "float32": 2e-5, "float64": 1e-12}
# ((B, H), L, S, E, Ev, causal, mask kind, mask shape): odd sizes around the 16/8-row and
# 32-key tiles; masks broadcast; rows with no key to attend ("dead").
CASES: list[tuple[Any, ...]] = [
    ((1, 2), 5, 17, 8, 16, False, None, None),
    ((2, 2), 33, 5, 40, 8, True, None, None),  # causal, L > S: rows past S see every key
    ((1, 2), 5, 33, 16, 40, True, None, None),  # causal, L < S: top-left aligned
    ((1, 2), 17, 33, 16, 16, False, "dead_bool", (1, 2, 17, 33)),
    ((2, 2), 17, 5, 8, 8, False, "dead_float", (17, 5)),
    ((1, 2), 33, 33, 40, 8, False, "float", (1, 2, 1, 33)),
    ((2, 1), 1, 1, 8, 8, False, "bool", (1, 1)),
    ((1, 1), 5, 5, 128, 128, False, None, None),  # the largest head dims (64 for float64)
]


def _mask(kind: str | None, shape: Any, dtype: str, rng: np.random.Generator) -> Any:
    if kind is None:
        return None
    if kind.endswith("bool"):
        m = rng.random(shape) > 0.3
        if kind == "dead_bool":
            m[..., 2, :] = False
        return m
    m = rng.standard_normal(shape)
    m[rng.random(shape) < 0.2] = -np.inf
    if kind == "dead_float":
        m[..., 1, :] = -np.inf
    return m.astype(dtype)


def _reference(q: Any, k: Any, v: Any, mask: Any, causal: bool, scale: float,
               g: Any) -> dict[str, np.ndarray]:
    """The reference twin: the plain array expression in float64, dead rows giving zeros."""
    q, k, v, g = (np.asarray(x, np.float64) for x in (q, k, v, g))
    s = q @ np.swapaxes(k, -1, -2) * scale
    L, S = s.shape[-2:]
    if causal:
        s = np.where(np.tril(np.ones((L, S), bool)), s, -np.inf)
    if mask is not None:
        s = np.where(mask, s, -np.inf) if mask.dtype == bool else s + mask
    m = s.max(-1, keepdims=True) if S else np.full(s.shape[:-1] + (1,), -np.inf)
    dead = np.isneginf(m)
    e = np.exp(s - np.where(dead, 0, m))
    l_ = e.sum(-1, keepdims=True)
    p = np.where(dead, 0, e / np.where(dead, 1, l_))
    dp = g @ np.swapaxes(v, -1, -2)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    lse = np.where(dead, np.inf, np.where(dead, 0, m) + np.log(np.where(dead, 1, l_)))[..., 0]
    return {"out": p @ v, "lse": lse, "dq": ds @ k * scale,
            "dk": np.swapaxes(ds, -1, -2) @ q * scale, "dv": np.swapaxes(p, -1, -2) @ g,
            "ds": ds}


def _torch(q: Any, k: Any, v: Any, mask: Any, causal: bool, scale: float,
           g: Any) -> dict[str, np.ndarray]:
    """torch's CPU values and gradients in float64 (the oracle)."""
    ts = [torch.tensor(np.asarray(x, np.float64), requires_grad=True) for x in (q, k, v)]
    tm = None
    if mask is not None:
        tm = torch.tensor(mask) if mask.dtype == bool else \
            torch.tensor(mask.astype(np.float64), requires_grad=True)
    out = torch.nn.functional.scaled_dot_product_attention(*ts, attn_mask=tm, is_causal=causal,
                                                           scale=scale)
    out.backward(torch.tensor(np.asarray(g, np.float64)))
    found = {"out": out.detach().numpy()}
    found.update({n: t.grad.numpy() for n, t in zip(("dq", "dk", "dv"), ts)})
    if tm is not None and tm.requires_grad:
        found["dmask"] = tm.grad.numpy()
    return found


def _host(x: Any) -> np.ndarray:
    return cp.asnumpy(x).astype(np.float64)


# ---- CPU: layout helpers, dispatcher rules, sdpa_kernel ---------------------------------------


def test_batch_dims_fold_into_two_through_strides() -> None:
    q = np.zeros((2, 3, 5, 8), np.float32)
    out = np.zeros((2, 5, 3, 4), np.float32).transpose(0, 2, 1, 3)  # PyTorch's fused layout
    mask = np.zeros((3, 1, 5), bool)[None]  # (1, 3, 1, 5): broadcast over batch and rows
    B, H, st = ca._layout((2, 3), [q, q, q, mask, out])
    assert (B, H) == (2, 3)
    assert st == [(120, 40)] * 3 + [(0, 5), (60, 4)]
    assert ca._core(mask) == (0, 1) and ca._core(out) == (12, 1)
    B, H, st = ca._layout((2, 3), [q, q, q, None])  # contiguous batch dims merge into one
    assert (B, H) == (1, 6) and st[0] == (0, 40) and st[3] == (0, 0)
    odd = np.zeros((8, 4, 6, 5, 8), np.float32)[::2, ::2, ::2]  # 3 unmergeable batch dims
    assert ca._layout((4, 2, 3), [odd]) is None
    assert ca._layout((4, 1, 3), [np.zeros((4, 1, 3, 5, 8))])[:2] == (1, 12)


def _t(*shape: int, dtype: Any = ag.float32, grad: bool = False) -> Any:
    return ag.zeros(*shape, dtype=dtype).requires_grad_(grad)


@pytest.mark.parametrize("case, flash, efficient", [
    # (q shape, k shape, v shape, dtype, mask, causal, enable_gqa)
    (((1, 2, 5, 8), (1, 2, 7, 8), (1, 2, 7, 8), "float16", None, False, False), True, True),
    (((1, 2, 5, 8), (1, 2, 7, 8), (1, 2, 7, 8), "float32", None, False, False), False, True),
    (((1, 2, 5, 8), (1, 2, 7, 8), (1, 2, 7, 8), "float64", None, False, False), False, False),
    (((1, 2, 5, 8), (1, 2, 7, 8), (1, 2, 7, 8), "float16", "bool", False, False), False, True),
    (((1, 2, 5, 8), (1, 2, 7, 8), (1, 2, 7, 8), "float16", None, True, False), False, True),
    (((1, 2, 7, 8), (1, 2, 7, 8), (1, 2, 7, 8), "float16", None, True, False), True, True),
    (((1, 2, 5, 6), (1, 2, 7, 6), (1, 2, 7, 8), "float32", None, False, False), False, False),
    (((1, 2, 5, 12), (1, 2, 7, 12), (1, 2, 7, 8), "float32", None, False, False), False, True),
    (((1, 2, 5, 12), (1, 2, 7, 12), (1, 2, 7, 12), "float16", None, False, False), True, False),
    (((2, 5, 8), (2, 7, 8), (2, 7, 8), "float32", None, False, False), False, False),  # 3-D
    (((2, 2, 5, 8), (1, 2, 7, 8), (1, 2, 7, 8), "float32", None, False, False), False, False),
    (((1, 4, 5, 8), (1, 2, 7, 8), (1, 2, 7, 8), "float32", None, False, True), False, True),
    (((1, 2, 0, 8), (1, 2, 7, 8), (1, 2, 7, 8), "float32", None, False, False), False, False),
])
def test_fused_choice_follows_pytorch_cuda_rules(case: Any, flash: bool, efficient: bool) -> None:
    qs, ks, vs, dtype, mask, causal, gqa = case
    dt = getattr(ag, dtype)
    q, k, v = (_t(*s, dtype=dt) for s in (qs, ks, vs))
    m = None if mask is None else ag.ones(qs[-2], ks[-2], dtype=ag.bool)
    for backend, want in ((agattn.SDPBackend.FLASH_ATTENTION, flash),
                          (agattn.SDPBackend.EFFICIENT_ATTENTION, efficient)):
        assert agattn._fused_kind(q, k, v, m, causal, gqa, backend) == want, backend
    qt = q.transpose(-1, -2).contiguous().transpose(-1, -2)  # last stride != 1: math
    if qs[-1] > 1 and len(qs) == 4:
        assert not agattn._fused_kind(qt, k, v, m, causal, gqa,
                                      agattn.SDPBackend.EFFICIENT_ATTENTION)


def _sdpa(T: Any, *args: Any, **kw: Any) -> Any:
    return T.nn.functional.scaled_dot_product_attention(*args, **kw)


def _x(T: Any, *shape: int) -> Any:
    return T.arange(float(math.prod(shape))).reshape(*shape) / 10


def _within(T: Any, backends: Any, fn: Any, **kw: Any) -> Any:
    with T.nn.attention.sdpa_kernel(backends, **kw):
        return fn()


SDPB = {ag: agattn.SDPBackend, torch: torch.nn.attention.SDPBackend}
KERNEL_CASES: dict[str, Any] = {
    "efficient_only_on_cpu": lambda T, dev: _within(
        T, SDPB[T].EFFICIENT_ATTENTION, lambda: _sdpa(T, _x(T, 1, 2, 3, 4), _x(T, 1, 2, 3, 4),
                                                      _x(T, 1, 2, 3, 4))),
    "flash_only_3d": lambda T, dev: _within(
        T, [SDPB[T].FLASH_ATTENTION], lambda: _sdpa(T, _x(T, 2, 3, 4), _x(T, 2, 3, 4),
                                                    _x(T, 2, 3, 4))),
    "flash_only_4d": lambda T, dev: _within(
        T, [SDPB[T].FLASH_ATTENTION, SDPB[T].CUDNN_ATTENTION], lambda: _sdpa(
            T, _x(T, 1, 2, 3, 4), _x(T, 1, 2, 5, 4), _x(T, 1, 2, 5, 4), is_causal=True),
        set_priority=True),
    "flash_only_dropout": lambda T, dev: _within(
        T, SDPB[T].FLASH_ATTENTION, lambda: _sdpa(T, _x(T, 1, 2, 3, 4), _x(T, 1, 2, 3, 4),
                                                  _x(T, 1, 2, 3, 4), dropout_p=0.5)),
    "math_only": lambda T, dev: _within(
        T, [SDPB[T].MATH], lambda: _sdpa(T, _x(T, 2, 3, 4), _x(T, 2, 3, 4), _x(T, 2, 3, 4))),
    "not_a_backend": lambda T, dev: _within(T, "math", lambda: 0),
}


@pytest.mark.parametrize("name", sorted(KERNEL_CASES))
def test_sdpa_kernel_on_cpu_matches_torch(name: str) -> None:
    check_case(KERNEL_CASES[name], "cpu")
    assert agattn._STATE["enabled"] == set(agattn._ALL)  # restored, also after an error
    assert agattn._STATE["priority"][:3] == [agattn.SDPBackend.FLASH_ATTENTION,
                                             agattn.SDPBackend.EFFICIENT_ATTENTION,
                                             agattn.SDPBackend.MATH]


def test_sdpa_kernel_on_cuda_picks_the_math_path_or_refuses(device: str) -> None:
    if device != "cuda":
        pytest.skip("CUDA's dispatcher")
    q = ag.randn(1, 2, 5, 8, device="cuda", requires_grad=True)
    with agattn.sdpa_kernel(agattn.SDPBackend.MATH):
        out = _sdpa(ag, q, q, q)
    assert type(out.grad_fn).__name__ == "UnsafeViewBackward0"  # the math path's, as torch
    with agattn.sdpa_kernel(agattn.SDPBackend.FLASH_ATTENTION):
        with pytest.raises(RuntimeError, match="No available kernel"):
            _sdpa(ag, q, q, q)  # flash takes float16 / bfloat16 only
    with agattn.sdpa_kernel(agattn.SDPBackend.OVERRIDEABLE):
        with pytest.raises(RuntimeError, match="No viable backend"):
            _sdpa(ag, q, q, q)


# ---- GPU (or the emulator): launchers against the reference twin and torch -------------------


def _inputs(case: tuple[Any, ...], dtype: str, seed: int = 0) -> tuple[Any, ...]:
    (B, H), L, S, E, Ev, causal, kind, mshape = case
    top = ca.MAX_HEAD_DIM[dtype]
    E, Ev = min(E, top), min(Ev, top)
    rng = np.random.default_rng(seed)
    q, k, v, g = (rng.standard_normal(s).astype(dtype)
                  for s in ((B, H, L, E), (B, H, S, E), (B, H, S, Ev), (B, H, L, Ev)))
    return q, k, v, g, _mask(kind, mshape, dtype, rng), causal, 1 / math.sqrt(E)


def _close(got: Any, want: np.ndarray, dtype: str, scale: float = 1.0) -> None:
    np.testing.assert_allclose(_host(got), want, rtol=RTOL[dtype] * scale,
                               atol=ATOL[dtype] * scale)


@gpu
@pytest.mark.parametrize("dtype", ("float16", "float32", "float64"))
@pytest.mark.parametrize("case", CASES)
def test_launchers_match_reference_and_torch(case: tuple[Any, ...], dtype: str) -> None:
    q, k, v, g, mask, causal, scale = _inputs(case, dtype)
    dev = [cp.asarray(a) for a in (q, k, v, g)]
    dmask = None if mask is None else cp.asarray(mask)
    out, lse = ca.attention_forward(dev[0], dev[1], dev[2], dmask, causal, scale)
    assert out.dtype == np.dtype(dtype) and out.shape == g.shape
    assert lse.dtype == np.dtype("float64" if dtype == "float64" else "float32")
    assert out.transpose(0, 2, 1, 3).flags.c_contiguous  # PyTorch's fused layout
    float_mask = mask is not None and mask.dtype != bool
    dq, dk, dv, dm = ca.attention_backward(dev[0], dev[1], dev[2], dmask, out, lse, dev[3],
                                           causal, scale, grad_mask=float_mask)
    ref = _reference(q, k, v, mask, causal, scale, g)
    oracle = _torch(q, k, v, mask, causal, scale, g)
    for want in (ref, oracle):
        _close(out, want["out"], dtype)
        for name, got in (("dq", dq), ("dk", dk), ("dv", dv)):
            assert got.shape == want[name].shape and got.flags.c_contiguous
            _close(got, want[name], dtype, 4)
    np.testing.assert_allclose(_host(lse), ref["lse"], rtol=RTOL[dtype], atol=ATOL[dtype])
    if float_mask:
        ds = ref["ds"]
        ds = ds.reshape((-1,) + ds.shape[ds.ndim - mask.ndim:]).sum(0)  # over the lead dims
        want_dm = ds.sum(axis=tuple(d for d, n in enumerate(mask.shape) if n == 1),
                         keepdims=True)
        _close(dm, want_dm, dtype, 4)
        _close(dm, oracle["dmask"], dtype, 4)
    else:
        assert dm is None
    if mask is not None and mask.ndim >= 2 and "dead" in str(case[6]):
        dead = np.isposinf(ref["lse"])
        assert dead.any() and (_host(out)[dead] == 0).all() and (_host(dq)[dead] == 0).all()


@gpu
def test_launchers_read_strided_inputs_and_handle_empty_sizes() -> None:
    rng = np.random.default_rng(3)
    # q, k, v as PyTorch's MHA makes them: (B, L, H, E) memory seen as (B, H, L, E), and a
    # sliced last dim (element stride 2)
    base = cp.asarray(rng.standard_normal((2, 9, 2, 16)).astype("float32"))
    q = base.transpose(0, 2, 1, 3)
    k = cp.asarray(rng.standard_normal((2, 2, 6, 32)).astype("float32"))[..., ::2]
    v = cp.asarray(rng.standard_normal((2, 6, 2, 8)).astype("float32")).transpose(0, 2, 1, 3)
    g = cp.asarray(rng.standard_normal((2, 2, 9, 8)).astype("float32"))
    out, lse = ca.attention_forward(q, k, v, None, False, 0.3)
    dq, dk, dv, _ = ca.attention_backward(q, k, v, None, out, lse, g.transpose(1, 0, 2, 3)
                                          .copy().transpose(1, 0, 2, 3), False, 0.3)
    ref = _reference(*(cp.asnumpy(a) for a in (q, k, v)), None, False, 0.3, cp.asnumpy(g))
    for got, name in ((out, "out"), (dq, "dq"), (dk, "dk"), (dv, "dv")):
        _close(got, ref[name], "float32", 4)
    # 3-D and 5-D batch shapes
    for shape in ((3,), (2, 1, 3)):
        x = cp.asarray(rng.standard_normal(shape + (5, 8)).astype("float32"))
        out, lse = ca.attention_forward(x, x, x, None, True, 0.5)
        _close(out, _reference(*(cp.asnumpy(x),) * 3, None, True, 0.5, cp.asnumpy(x))["out"],
               "float32")
    # empty: no key (zeros), no query, no batch
    x = cp.ones((1, 2, 3, 8), np.float32)
    none = cp.ones((1, 2, 0, 8), np.float32)
    out, lse = ca.attention_forward(x, none, none)
    assert (_host(out) == 0).all() and np.isposinf(_host(lse)).all()
    grads = ca.attention_backward(x, none, none, None, out, lse, cp.ones_like(out))
    assert [g.shape for g in grads[:3]] == [x.shape, none.shape, none.shape]
    assert (_host(grads[0]) == 0).all()
    out, lse = ca.attention_forward(none, x, x)
    assert out.shape == (1, 2, 0, 8) and lse.shape == (1, 2, 0)
    with pytest.raises(ValueError, match="head dims"):
        ca.attention_forward(*(cp.ones((1, 1, 2, 160), np.float32),) * 3)
    with pytest.raises(TypeError, match="mask dtype"):
        ca.attention_forward(x, x, x, cp.ones((3, 3), np.float64))


@gpu
def test_nan_rows_and_deterministic_backward() -> None:
    q, k, v, g, _, _, scale = _inputs(((1, 2), 9, 40, 8, 8, False, None, None), "float32", 5)
    q[0, 1, 3, 2] = np.nan
    dev = [cp.asarray(a) for a in (q, k, v, g)]
    out, lse = ca.attention_forward(dev[0], dev[1], dev[2], None, False, scale)
    got = _host(out)
    assert np.isnan(got[0, 1, 3]).all() and not np.isnan(np.delete(got[0, 1], 3, 0)).any()
    first = ca.attention_backward(*dev[:3], None, out, lse, dev[3], False, scale)
    second = ca.attention_backward(*dev[:3], None, out, lse, dev[3], False, scale)
    for a, b in zip(first[:3], second[:3]):
        np.testing.assert_array_equal(cp.asnumpy(a), cp.asnumpy(b))  # no atomics: same bits


# ---- end to end: F.scaled_dot_product_attention on every device ------------------------------

# (q, k, v shapes, dtype, mask kind / shape, kwargs, the node PyTorch's CUDA dispatcher records)
E2E: list[tuple[Any, ...]] = [
    (((2, 2, 5, 8), (2, 2, 17, 8), (2, 2, 17, 16)), "float32", None, None, {},
     agattn.EFFICIENT_NODE),
    (((1, 2, 17, 8), (1, 2, 5, 8), (1, 2, 5, 8)), "float32", None, None, {"is_causal": True},
     agattn.EFFICIENT_NODE),
    (((1, 2, 5, 16), (1, 2, 33, 16), (1, 2, 33, 8)), "float32", "dead_bool", (5, 33),
     {"scale": 0.7}, agattn.EFFICIENT_NODE),
    (((2, 2, 5, 8), (2, 2, 17, 8), (2, 2, 17, 8)), "float32", "dead_float", (2, 1, 5, 17), {},
     agattn.EFFICIENT_NODE),
    (((1, 2, 17, 16), (1, 2, 17, 16), (1, 2, 17, 16)), "float16", None, None,
     {"is_causal": True}, agattn.FLASH_NODE),
    (((1, 2, 5, 8), (1, 2, 17, 8), (1, 2, 17, 8)), "float16", "bool", (1, 1, 5, 17), {},
     agattn.EFFICIENT_NODE),
    (((1, 2, 5, 12), (1, 2, 17, 12), (1, 2, 17, 12)), "float16", None, None, {}, None),
    (((2, 5, 8), (2, 17, 8), (2, 17, 8)), "float32", None, None, {}, None),  # 3-D: math
]


@pytest.mark.parametrize("shapes, dtype, kind, mshape, kw, node", E2E)
def test_sdpa_end_to_end_matches_torch(shapes: Any, dtype: str, kind: Any, mshape: Any,
                                       kw: dict[str, Any], node: Any, device: str) -> None:
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal(s).astype(dtype) for s in shapes]
    mask = _mask(kind, mshape, dtype, rng)
    float_mask = mask is not None and mask.dtype != bool

    def run(T: Any, dev: str) -> tuple[Any, list[Any]]:
        as64 = T is torch  # NOTE: the oracle in float64 from the same rounded values
        ins = [T.tensor(a.astype(np.float64) if as64 else a, device=dev, requires_grad=True)
               for a in arrays]
        mt = None
        if mask is not None:
            mt = T.tensor(mask.astype(np.float64) if as64 and float_mask else mask, device=dev,
                          requires_grad=float_mask)
        out = _sdpa(T, *ins, attn_mask=mt, **kw)
        out.backward(T.ones_like(out))
        return out, [t.grad for t in ins + ([mt] if float_mask else [])]

    out, grads = run(ag, device)
    want, want_grads = run(torch, "cpu")
    fused = device == "cuda" and cp is not None and node is not None
    name = type(out.grad_fn).__name__
    assert (name == node) if fused else name not in (agattn.FLASH_NODE, agattn.EFFICIENT_NODE)
    if fused:
        assert len(out.grad_fn.next_functions) == (3 if node == agattn.FLASH_NODE else 4)
    assert out.dtype == getattr(ag, dtype)
    np.testing.assert_allclose(out.detach().cpu().numpy().astype(np.float64),
                               want.detach().numpy(), rtol=RTOL[dtype], atol=ATOL[dtype])
    for got, exp in zip(grads, want_grads):
        np.testing.assert_allclose(got.cpu().numpy().astype(np.float64), exp.numpy(),
                                   rtol=4 * RTOL[dtype], atol=4 * ATOL[dtype])


def _e2e_inputs(device: str, L: int = 5, S: int = 9, grad: bool = True) -> list[Any]:
    rng = np.random.default_rng(2)
    return [ag.tensor(rng.standard_normal((1, 2, n, 8)).astype("float32"), device=device,
                      requires_grad=grad) for n in (L, S, S)]


def test_sdpa_double_backward_recomputes_the_math_path(device: str) -> None:
    q, k, v = _e2e_inputs(device)
    mask = ag.tensor(np.random.default_rng(4).standard_normal((5, 9)).astype("float32"),
                     device=device, requires_grad=True)
    out = _sdpa(ag, q, k, v, attn_mask=mask)
    if device == "cuda" and cp is not None:
        assert type(out.grad_fn).__name__ == agattn.EFFICIENT_NODE
    grads = ag.autograd.grad((out * out).sum(), [q, k, v, mask], create_graph=True)
    second = ag.autograd.grad(sum((g * g).sum() for g in grads), [q, k, v, mask])
    ts = [torch.tensor(t.detach().cpu().numpy().astype(np.float64), requires_grad=True)
          for t in (q, k, v, mask)]
    tout = _sdpa(torch, *ts[:3], attn_mask=ts[3])
    tgrads = torch.autograd.grad((tout * tout).sum(), ts, create_graph=True)
    tsecond = torch.autograd.grad(sum((g * g).sum() for g in tgrads), ts)
    for a, b in zip(list(grads) + list(second), list(tgrads) + list(tsecond)):
        np.testing.assert_allclose(a.detach().cpu().numpy(), b.detach().numpy(), rtol=1e-4,
                                   atol=1e-4)


def test_fused_sdpa_keeps_no_l_by_s_buffer(device: str) -> None:
    L = S = 64
    q, k, v = _e2e_inputs(device, L, S)
    held: list[tuple[int, ...]] = []

    def pack(t: Any) -> Any:
        held.append(tuple(t.shape))
        return t

    fused = device == "cuda" and cp is not None
    if fused:
        ag.cuda.synchronize()
        ag.cuda.reset_peak_memory_stats()
        before = ag.cuda.memory_allocated()
    with ag.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = _sdpa(ag, q, k, v)
    if not fused:
        assert any(math.prod(s[-2:]) == L * S for s in held)  # the math path keeps weights
        return
    assert type(out.grad_fn).__name__ == agattn.EFFICIENT_NODE
    assert sorted(held) == sorted([(1, 2, L, 8)] * 3 + [(1, 2, L, 8), (1, 2, L)])
    weights = 2 * L * S * 4  # the (L, S) float32 weights of both heads
    assert ag.cuda.max_memory_allocated() - before < weights
    out.sum().backward()
    assert ag.cuda.max_memory_allocated() - before < weights + 3 * q.numel() * 4 * 2


def test_fused_backward_reads_saved_tensors_moved_by_hooks(device: str) -> None:
    q, k, v = _e2e_inputs(device, 17, 9)
    mask = ag.tensor(np.random.default_rng(6).random((17, 9)) > 0.2, device=device)
    plain = ag.autograd.grad(_sdpa(ag, q, k, v, attn_mask=mask).sum(), [q, k, v])
    with ag.autograd.graph.save_on_cpu():  # saved arrays come back as new (contiguous) copies
        out = _sdpa(ag, q, k, v, attn_mask=mask)
    moved = ag.autograd.grad(out.sum(), [q, k, v])
    for a, b in zip(plain, moved):
        np.testing.assert_allclose(a.cpu().numpy(), b.cpu().numpy(), rtol=1e-6, atol=1e-6)


def test_emulated_or_gpu_run_says_so() -> None:
    # NOTE: pins how the GPU tests above run, so that an emulated pass is never taken for a GPU
    assert cp is None or EMULATED == bool(getattr(cp, "__autograd_gpu_kernel_emulator__", False))
