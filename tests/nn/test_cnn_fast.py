"""The CPU fast paths of the small-CNN step (issue #18) against the general paths they stand in
for, and against torch: tiled max pooling (``ops/pool_tiled.py``) and batch-last convolution
(``ops/conv_batchlast.py``).

Each case first checks whether the fast path ran (CPU only: CUDA keeps the general path), then
switches it off and compares. Pooling gives the general path's results bit for bit.
The convolution groups its sums differently (one product per group instead of one per image):
each result may differ from the general path's by the rounding of a reordered sum, at most
``2 (n - 1) u sum|terms|`` for ``n`` terms (``u`` the unit roundoff); ``sum|terms|`` is the
same computation on absolute values."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.ops import conv_batchlast, pool_tiled
from tests.nn._util import second_grads

RNG = np.random.default_rng(18)


def _spy(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> list[int]:
    """Count the calls of ``module.name``."""
    calls: list[int] = []
    real = getattr(module, name)

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(module, name, counted)
    return calls


def _bits(t: Any) -> Any:
    """A tensor's values as unsigned integers (exact comparison, signed zeros and NaN too)."""
    a = np.ascontiguousarray(t.detach().cpu().numpy() if hasattr(t, "detach") else t)
    return a.view(f"u{a.dtype.itemsize}") if a.dtype.kind == "f" else a


def _pool_input(kind: str, shape: tuple[int, ...], dtype: str) -> Any:
    if kind == "ties":  # NOTE: -0, 0 and repeated values: every window has ties
        a = RNG.choice(np.array([-1.0, -0.0, 0.0, 1.0]), shape)
    else:
        a = RNG.standard_normal(shape)
    if kind == "nan":  # NOTE: windows with several NaNs (PyTorch picks the last one), infinities
        a[RNG.random(shape) < 0.3] = np.nan
        a[RNG.random(shape) < 0.1] = -np.inf
        a[RNG.random(shape) < 0.05] = np.inf
    return a.astype(dtype)


POOLS: list[tuple[str, tuple[int, ...], dict[str, Any], bool]] = [
    ("max_pool2d", (2, 3, 6, 6), {"kernel_size": 2}, True),
    ("max_pool2d", (3, 5, 7, 9), {"kernel_size": 2}, True),  # floor: a cropped row and column
    ("max_pool2d", (2, 3, 8, 8), {"kernel_size": 2, "ceil_mode": True}, True),
    ("max_pool2d", (2, 3, 7, 7), {"kernel_size": 2, "ceil_mode": True}, False),  # partial
    ("max_pool2d", (2, 3, 6, 6), {"kernel_size": 2, "padding": 1}, False),
    ("max_pool2d", (2, 3, 6, 6), {"kernel_size": 2, "stride": 1}, False),
    ("max_pool2d", (2, 3, 6, 6), {"kernel_size": 2, "dilation": 2}, False),
    ("max_pool2d", (2, 3, 9, 9), {"kernel_size": 3}, False),
    ("max_pool2d", (2, 3, 7, 6), {"kernel_size": (2, 1)}, True),
    ("max_pool2d", (2, 3, 5, 6), {"kernel_size": (1, 2), "dilation": (3, 1)}, True),
    ("max_pool2d", (3, 6, 5), {"kernel_size": 2}, True),  # unbatched
    ("max_pool1d", (2, 3, 11), {"kernel_size": 2}, True),
]


def _pool_run(T: Any, dev: str, fn: str, a: Any, kw: dict[str, Any], contiguous: bool) -> list[Any]:
    x = T.tensor(a, device=dev)
    if not contiguous:  # NOTE: the same values through a transposed copy
        x = x.transpose(-1, -2).contiguous().transpose(-1, -2)
    x.requires_grad_(True)
    out, idx = getattr(T.nn.functional, fn)(x, return_indices=True, **kw)
    g = np.random.default_rng(0).standard_normal(tuple(out.shape)).astype(a.dtype)
    g = T.tensor(g, device=dev)
    (gx,) = T.autograd.grad(out, x, g)
    return [out, idx, gx, type(out.grad_fn).__name__]


@pytest.mark.parametrize("fn, shape, kw, fast", POOLS)
@pytest.mark.parametrize("kind", ["random", "ties", "nan"])
def test_tiled_max_pool_is_the_general_path(fn: str, shape: tuple[int, ...], kw: dict[str, Any],
                                            fast: bool, kind: str, device: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    a = _pool_input(kind, shape, "float32")
    for contiguous in (True, False):
        calls = _spy(monkeypatch, pool_tiled, "forward")
        ours = _pool_run(ag, device, fn, a, kw, contiguous)
        assert bool(calls) == (fast and device == "cpu"), calls
        monkeypatch.setattr(pool_tiled, "ENABLED", False)
        general = _pool_run(ag, device, fn, a, kw, contiguous)
        monkeypatch.setattr(pool_tiled, "ENABLED", True)
        assert ours[3] == general[3]
        for o, g in zip(ours[:3], general[:3]):
            np.testing.assert_array_equal(_bits(o), _bits(g))
    theirs = _pool_run(torch, "cpu", fn, a, kw, True)
    ours = _pool_run(ag, device, fn, a, kw, True)
    assert ours[3] == theirs[3]
    for o, t in zip(ours[:2], theirs[:2]):
        np.testing.assert_array_equal(_bits(o), _bits(t))
    if fast:  # NOTE: one gradient per element
        np.testing.assert_array_equal(_bits(ours[2]), _bits(theirs[2]))
    # NOTE: overlapping windows add up to 4 gradients in another order than PyTorch
    g = theirs[2].numpy()
    np.testing.assert_allclose(ours[2].cpu().numpy(), g, rtol=0,
                               atol=4 * 3 * np.finfo(g.dtype).eps * np.abs(g).max())


@pytest.mark.parametrize("dtype", ["float64", "float16"])
def test_tiled_max_pool_dtypes_and_second_derivatives(dtype: str,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    a = _pool_input("ties", (2, 3, 4, 6), dtype)
    results = []
    for enabled in (True, False):
        monkeypatch.setattr(pool_tiled, "ENABLED", enabled)
        x = ag.tensor(a, requires_grad=True)
        out = ag.nn.functional.max_pool2d(x, 2)
        results.append([out] + (list(ag.autograd.grad(out.sum(), x)) if dtype == "float16"
                                else [second_grads(out * out, x)]))
    for o, g in zip(*results):
        np.testing.assert_array_equal(_bits(o), _bits(g))
    monkeypatch.setattr(pool_tiled, "ENABLED", True)
    if dtype == "float64":
        x = ag.tensor(RNG.standard_normal((1, 2, 4, 4)), requires_grad=True)
        f = lambda x: ag.nn.functional.max_pool2d(x, 2) ** 2  # noqa: E731
        assert ag.autograd.gradcheck(f, (x,)) and ag.autograd.gradgradcheck(f, (x,))


CONVS: list[tuple[str, tuple[int, ...], tuple[int, ...], dict[str, Any]]] = [
    ("conv2d", (4, 8, 4, 4), (6, 8, 3, 3), {"padding": 1}),  # the CNN step's second layer
    ("conv2d", (5, 1, 8, 8), (4, 1, 3, 3), {"padding": 1}),  # its first, a 1-channel input
    ("conv2d", (3, 4, 5, 6), (6, 2, 3, 2), {"padding": (1, 2), "stride": (2, 1),
                                            "dilation": (1, 2), "groups": 2}),
    ("conv2d", (2, 3, 4, 4), (5, 3, 3, 3), {"padding": 3}),  # padding beyond the kernel
    ("conv2d", (2, 3, 4, 4), (5, 3, 4, 4), {"padding": "same"}),  # asymmetric padding
    ("conv2d", (5, 3, 4, 4), (2, 3, 1, 1), {}),
    ("conv1d", (2, 3, 9), (4, 3, 3), {"padding": 1, "dilation": 2}),
    ("conv3d", (2, 4, 3, 3, 3), (4, 2, 2, 2, 2), {"padding": 1, "groups": 2}),
]


def _conv_run(fn: str, xa: Any, wa: Any, ba: Any, ga: Any, kw: dict[str, Any], dev: str,
              need: tuple[bool, bool, bool], contiguous: bool) -> list[Any]:
    x, w = ag.tensor(xa, device=dev), ag.tensor(wa, device=dev)
    if not contiguous:
        x = x.transpose(-1, -2).contiguous().transpose(-1, -2)
    b = None if ba is None else ag.tensor(ba, device=dev, requires_grad=need[2])
    x.requires_grad_(need[0])
    w.requires_grad_(need[1])
    out = getattr(ag.nn.functional, fn)(x, w, b, **kw)
    assert type(out.grad_fn).__name__ == "ConvolutionBackward0"
    leaves = [t for t, n in zip((x, w, b), need) if n and t is not None]
    return [out] + list(ag.autograd.grad(out, leaves, ag.tensor(ga, device=dev)))


@pytest.mark.filterwarnings("ignore:Using padding='same'")
@pytest.mark.parametrize("fn, xs, ws, kw", CONVS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_last_convolution_is_the_general_path(fn: str, xs: tuple[int, ...],
                                                    ws: tuple[int, ...], kw: dict[str, Any],
                                                    dtype: str, device: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    xa, wa = RNG.standard_normal(xs).astype(dtype), RNG.standard_normal(ws).astype(dtype)
    ba = RNG.standard_normal(ws[0]).astype(dtype)
    shape = tuple(getattr(torch.nn.functional, fn)(torch.tensor(xa), torch.tensor(wa),
                                                   **kw).shape)
    ga = RNG.standard_normal(shape).astype(dtype)
    u = np.finfo(dtype).eps / 2
    for need, bias, contiguous in (((True, True, True), True, True),
                                   ((False, True, False), False, False),
                                   ((True, False, True), True, False)):
        args = (xa, wa, ba if bias else None, ga, kw, device)
        calls = _spy(monkeypatch, conv_batchlast, "forward")
        ours = _conv_run(fn, *args, need, contiguous)
        assert bool(calls) == (device == "cpu"), calls
        monkeypatch.setattr(conv_batchlast, "ENABLED", False)
        general = _conv_run(fn, *args, need, contiguous)
        # NOTE: sum|terms| per result: the general path on absolute values
        scale = _conv_run(fn, abs(xa), abs(wa), abs(ba) if bias else None, abs(ga), kw,
                          device, need, True)
        monkeypatch.setattr(conv_batchlast, "ENABLED", True)
        k = int(np.prod(ws[2:]))  # NOTE: terms per result: grad_x, out, grad_w and grad_b
        terms = max(ws[0] * k, ws[1] * k, xa.shape[0] * int(np.prod(shape[2:])))
        for o, g, s in zip(ours, general, scale):
            o, g, s = (np.asarray(t.detach().cpu().numpy(), dtype="float64") for t in (o, g, s))
            assert np.all(np.abs(o - g) <= 2 * (terms - 1) * u * s + 1e-300), (o - g, s)
    theirs = [torch.tensor(a, requires_grad=True) for a in (xa, wa, ba)]
    out = getattr(torch.nn.functional, fn)(*theirs, **kw)
    expect = [out] + list(torch.autograd.grad(out, theirs, torch.tensor(ga)))
    ours = _conv_run(fn, xa, wa, ba, ga, kw, device, (True, True, True), True)
    tol = 1e-12 if dtype == "float64" else 1e-4
    for o, t in zip(ours, expect):
        np.testing.assert_allclose(o.detach().cpu().numpy(), t.detach().numpy(), rtol=tol,
                                   atol=tol)


def test_batch_last_convolution_second_derivatives(monkeypatch: pytest.MonkeyPatch) -> None:
    x = ag.tensor(RNG.standard_normal((2, 3, 4, 4)), requires_grad=True)
    w = ag.tensor(RNG.standard_normal((4, 3, 3, 3)), requires_grad=True)
    f = lambda x, w: ag.nn.functional.conv2d(x, w, padding=1) ** 2  # noqa: E731
    calls = _spy(monkeypatch, conv_batchlast, "forward")
    assert ag.autograd.gradcheck(f, (x, w)) and ag.autograd.gradgradcheck(f, (x, w))
    assert calls


def test_fast_path_shapes_on_the_meta_device() -> None:
    """The meta device runs NumPy's code on arrays without data: the fast paths step aside
    (no views of storage, no data-dependent branch) and every result has torch's shape."""
    shapes = []
    for T in (ag, torch):
        x = T.empty(4, 3, 8, 8, device="meta", requires_grad=True)
        outs = [T.nn.functional.max_pool2d(x, 2), T.nn.functional.max_pool2d(x, 3, 2, 1),
                T.nn.functional.adaptive_max_pool2d(x, 3)]
        outs.append(T.nn.functional.conv2d(outs[0], T.empty(5, 3, 3, 3, device="meta"),
                                           padding=1))
        outs[-1].sum().backward()
        shapes.append([tuple(o.shape) for o in outs] + [tuple(x.grad.shape), x.grad.device.type])
    assert shapes[0] == shapes[1]


def test_relu_gradient_of_a_large_leaf_keeps_its_dtype() -> None:
    """NumPy's ``where`` of 8192 or more elements blends bits in an unsigned view: a leaf's
    ``.grad`` must not take that view's buffer (it kept the unsigned dtype)."""
    h = ag.tensor(RNG.standard_normal((2, 8, 32, 32)).astype("float32"), requires_grad=True)
    g = ag.ones_like(h)
    for _ in range(3):
        ag.nn.functional.relu(h).backward(g)
    assert h.grad.dtype == ag.float32
    np.testing.assert_array_equal(h.grad.numpy(), 3 * (h.detach().numpy() > 0))
