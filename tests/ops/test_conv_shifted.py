"""The CPU's shifted-products convolution (``ops/conv_shifted.py``: stride 1, >= 8 input channels
per group) against the torch oracle: values and all three gradients in 1, 2 and 3 dimensions,
with groups, dilation, explicit, 'same' (asymmetric) and over-large padding, an empty batch, and
second derivatives (the weight gradient's graph path)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.backends import get_backend
from autograd_gpu.ops import conv_batchlast, conv_shifted
from tests.nn._util import t

pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same':UserWarning")
RNG = np.random.default_rng(11)

# (input shape, weight shape, kwargs): every case has >= 8 input channels per group, stride 1
CASES: list[tuple[tuple[int, ...], tuple[int, ...], dict[str, Any]]] = [
    ((2, 8, 9), (5, 8, 3), {"padding": 1}),
    ((2, 8, 9), (4, 8, 4), {"padding": "same", "dilation": 2}),  # asymmetric 'same'
    ((1, 16, 7), (6, 8, 2), {"groups": 2}),
    ((2, 8, 5, 6), (3, 8, 3, 3), {"padding": 1}),
    ((2, 8, 6, 5), (4, 8, 2, 3), {"padding": "same", "dilation": (2, 1)}),
    ((1, 16, 5, 5), (4, 8, 3, 1), {"groups": 2, "padding": (3, 0)}),  # padding > kernel
    ((2, 8, 6, 7), (3, 8, 3, 3), {"padding": "valid", "dilation": (1, 2)}),
    ((1, 8, 4, 5, 3), (2, 8, 3, 2, 3), {"padding": (1, 0, 1)}),
    ((0, 8, 5, 5), (3, 8, 3, 3), {"padding": 1}),  # empty batch
    ((8, 5, 5), (3, 8, 3, 3), {"padding": 1}),  # unbatched
]
_CONV = {3: "conv1d", 4: "conv2d", 5: "conv3d"}


def _run(T: Any, dev: str, x: Any, w: Any, b: Any, kw: dict[str, Any]) -> Any:
    xs, ws, bs = (T.from_numpy(a.copy()).to(dev).requires_grad_() for a in (x, w, b))
    out = getattr(T.nn.functional, _CONV[len(w.shape)])(xs, ws, bs, **kw)
    v = np.random.default_rng(0).standard_normal(tuple(out.shape))
    return out, T.autograd.grad(out, [xs, ws, bs], T.from_numpy(v).to(dev))


@pytest.mark.parametrize("x_shape, w_shape, kw", CASES)
def test_shifted_conv_matches_torch(x_shape: tuple[int, ...], w_shape: tuple[int, ...],
                                    kw: dict[str, Any], device: str,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    monkeypatch.setattr(conv_batchlast, "ENABLED", False)  # NOTE: small cases would take it
    for name in ("forward", "weight_grad"):
        real = getattr(conv_shifted, name)
        monkeypatch.setattr(conv_shifted, name,
                            lambda *a, _r=real, _n=name, **k: calls.append(_n) or _r(*a, **k))
    x, w = RNG.standard_normal(x_shape), RNG.standard_normal(w_shape)
    b = RNG.standard_normal(w_shape[0])
    out, grads = _run(ag, device, x, w, b, kw)
    if device == "cpu" and x_shape[0]:  # NOTE: the case really takes the shifted path
        assert calls.count("forward") >= 1 and calls.count("weight_grad") == 1, calls
    ref, ref_grads = _run(torch, "cpu", x, w, b, kw)
    assert tuple(out.shape) == tuple(ref.shape) and out.is_contiguous()
    np.testing.assert_allclose(out.detach().cpu().numpy(), ref.detach().numpy(), rtol=1e-12,
                               atol=1e-12)
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(g.cpu().numpy(), r.numpy(), rtol=1e-12, atol=1e-11)


def test_shifted_conv_float32_and_second_derivatives(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(conv_batchlast, "ENABLED", False)  # NOTE: small cases would take it
    x, w = RNG.standard_normal((2, 8, 6, 6)), RNG.standard_normal((3, 8, 3, 3))
    for T, dev in ((ag, "cpu"), (torch, "cpu")):
        xs, ws = t(T, dev, x, grad=True, dtype=T.float32), t(T, dev, w, grad=True,
                                                             dtype=T.float32)
        out = T.nn.functional.conv2d(xs, ws, padding=1)
        if T is ag:
            mine = out.detach().numpy()
        else:
            np.testing.assert_allclose(mine, out.detach().numpy(), rtol=1e-5, atol=1e-5)
    xs, ws = t(ag, "cpu", x[:1, :, :4, :4], grad=True), t(ag, "cpu", w[:2], grad=True)
    assert ag.autograd.gradgradcheck(
        lambda a, b: ag.nn.functional.conv2d(a, b, padding=1, dilation=(1, 2)), (xs, ws))


def test_shifted_conv_is_taken_only_where_it_pays() -> None:
    cpu = get_backend(ag.device("cpu"))
    assert conv_shifted.applies(cpu, (1, 1), 8, (4, 4))
    assert not conv_shifted.applies(cpu, (2, 1), 8, (4, 4))  # strided: im2col
    assert not conv_shifted.applies(cpu, (1, 1), 4, (4, 4))  # few channels: im2col
    assert not conv_shifted.applies(cpu, (1, 1), 8, (0, 4))  # nothing to compute
