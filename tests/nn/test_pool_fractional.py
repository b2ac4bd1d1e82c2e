"""F.fractional_max_pool2d/3d (and the _with_indices forms) and FractionalMaxPool2d/3d against
the torch oracle: with ``_random_samples`` given, values and indices equal torch's exactly;
gradients, grad_fn names, double backward, the samples drawn from our generator, reprs,
buffers, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same
from tests.misuse._catalogue import catalogue_test
from tests.nn._util import grads_of, second_grads, t

RNG = np.random.default_rng(5)

CASES: list[tuple[int, tuple[int, ...], dict[str, Any]]] = [
    (2, (2, 3, 9, 10), {"kernel_size": (2, 3), "output_size": (4, 5)}),
    (2, (3, 9, 10), {"kernel_size": 3, "output_size": 4}),
    (2, (2, 2, 9, 10), {"kernel_size": 2, "output_size": (1, 9)}),
    (2, (2, 2, 8, 7), {"kernel_size": 2, "output_ratio": (0.5, 0.7)}),
    (3, (2, 2, 7, 8, 9), {"kernel_size": (2, 3, 2), "output_size": (3, 4, 5)}),
    (3, (2, 6, 5, 7), {"kernel_size": 2, "output_ratio": 0.6}),
]


def _samples(nd: int, shape: tuple[int, ...], extra: int = 0) -> Any:
    batch = shape[0] if len(shape) == nd + 2 else 1
    return RNG.uniform(0, 1, (batch + extra, shape[-nd - 1], nd))


@pytest.mark.parametrize("nd, shape, kw", CASES)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_fractional_max_pool_matches_torch(nd: int, shape: tuple[int, ...], kw: dict[str, Any],
                                           dtype: str, device: str) -> None:
    xa, sa = RNG.standard_normal(shape), _samples(nd, shape, extra=1)
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x = t(T, dev, xa, True, getattr(T, dtype))
        s = t(T, dev, sa, False, getattr(T, dtype))
        fn = getattr(T.nn.functional, f"fractional_max_pool{nd}d")
        y, idx = fn(x, return_indices=True, _random_samples=s, **kw)
        y2, idx2 = getattr(T.nn.functional, f"fractional_max_pool{nd}d_with_indices")(
            x, _random_samples=s, **kw)
        assert type(y.grad_fn).__name__ == f"FractionalMaxPool{nd}DBackward0"
        res.append([y, idx, y2, idx2, grads_of(y, [x])])
    assert_same(res[0], res[1], rtol=0, atol=0)


@pytest.mark.parametrize("nd", [2, 3])
def test_samples_drawn_from_our_generator(nd: int, device: str) -> None:
    shape = (2, 3) + (7,) * nd
    x = t(ag, device, RNG.standard_normal(shape))
    fn = getattr(ag.nn.functional, f"fractional_max_pool{nd}d")
    ag.manual_seed(11)
    out, idx = fn(x, 2, output_size=3, return_indices=True)
    ag.manual_seed(11)
    s = ag.rand(2, 3, nd, dtype=ag.float64, device=device)
    again = fn(x, 2, output_size=3, return_indices=True, _random_samples=s)
    assert all(np.array_equal(a.cpu().numpy(), b.cpu().numpy()) for a, b in zip(again, (out, idx)))
    theirs = getattr(torch.nn.functional, f"fractional_max_pool{nd}d")(
        t(torch, "cpu", x.cpu().numpy()), 2, output_size=3, return_indices=True,
        _random_samples=t(torch, "cpu", s.cpu().numpy()))
    assert_same((out, idx), theirs, rtol=0, atol=0)


@pytest.mark.parametrize("nd", [2, 3])
def test_fractional_double_backward_matches_torch(nd: int, device: str) -> None:
    shape = (1, 1) + (5,) * nd
    xa, sa = RNG.standard_normal(shape), _samples(nd, shape)
    outs = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x, s = t(T, dev, xa, True), t(T, dev, sa)
        fn = getattr(T.nn.functional, f"fractional_max_pool{nd}d")
        outs.append(second_grads(fn(x, 2, output_size=3, _random_samples=s) ** 2, x))
    assert_same(outs[0], outs[1], rtol=1e-12, atol=1e-12)
    x, s = t(ag, device, xa, True), t(ag, device, sa)

    def f(x: Any) -> Any:
        return getattr(ag.nn.functional, f"fractional_max_pool{nd}d")(
            x, 2, output_size=3, _random_samples=s)

    assert ag.autograd.gradcheck(f, (x,))
    assert ag.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("nd, shape, out", [(2, (0, 3, 5, 5), 2), (2, (1, 2, 5, 5), 0),
                                            (3, (0, 2, 4, 4, 4), 2)])
def test_fractional_empty(nd: int, shape: tuple[int, ...], out: int, device: str) -> None:
    res = []
    for T, dev in ((ag, device), (torch, "cpu")):
        x = T.ones(*shape, dtype=T.float64, device=dev, requires_grad=True)
        s = T.full((shape[0], shape[1], nd), 0.5, dtype=T.float64, device=dev)
        fn = getattr(T.nn.functional, f"fractional_max_pool{nd}d")
        y, idx = fn(x, 2, output_size=out, return_indices=True, _random_samples=s)
        res.append((y, idx, T.autograd.grad(y.sum(), x)[0]))
    assert_same(res[0], res[1])


@pytest.mark.parametrize("cls, kwargs", [
    ("FractionalMaxPool2d", {"kernel_size": 3, "output_ratio": 0.5}),
    ("FractionalMaxPool2d", {"kernel_size": (2, 3), "output_size": (3, 4),
                             "return_indices": True}),
    ("FractionalMaxPool3d", {"kernel_size": 2, "output_size": 3}),
    ("FractionalMaxPool3d", {"kernel_size": (2, 1, 2), "output_ratio": (0.5, 0.6, 0.7)}),
])
def test_fractional_modules_match_torch(cls: str, kwargs: dict[str, Any], device: str) -> None:
    nd = int(cls[-2])
    shape = (2, 3) + (8,) * nd
    sa = _samples(nd, shape)
    ours = getattr(ag.nn, cls)(**kwargs, _random_samples=t(ag, device, sa))
    theirs = getattr(torch.nn, cls)(**kwargs, _random_samples=t(torch, "cpu", sa))
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["_random_samples"]
    assert (ours.kernel_size, ours.output_size, ours.output_ratio) == \
        (theirs.kernel_size, theirs.output_size, theirs.output_ratio)
    xa = RNG.standard_normal(shape)
    assert_same(ours(t(ag, device, xa)), theirs(t(torch, "cpu", xa)), rtol=0, atol=0)
    plain = getattr(ag.nn, cls)(**kwargs)
    assert list(plain.state_dict()) == []
    out = plain(t(ag, device, xa))
    assert tuple((out[0] if isinstance(out, tuple) else out).shape) == \
        tuple((theirs(t(torch, "cpu", xa))[0] if kwargs.get("return_indices") else
               theirs(t(torch, "cpu", xa))).shape)


def _f(nd: int, shape: Any, k: Any = 2, sshape: Any = "auto", sdt: str = "float64",
       dt: str = "float64", **kw: Any) -> Any:
    if "output_ratio" not in kw:
        kw.setdefault("output_size", 2)

    def run(T: Any, dev: str) -> Any:
        x = T.ones(*shape, dtype=getattr(T, dt), device=dev)
        s = None
        if sshape is not None:
            ss = sshape if sshape != "auto" else (shape[0] if len(shape) == nd + 2 else 1,
                                                   shape[-nd - 1] if len(shape) > nd else 1, nd)
            s = T.full(ss, 0.5, dtype=getattr(T, sdt), device=dev)
        fn = getattr(T.nn.functional, f"fractional_max_pool{nd}d")
        return fn(x, k, _random_samples=s, **kw)
    return run


def _m(cls: str, *args: Any, **kw: Any) -> Any:
    return lambda T, dev: getattr(T.nn, cls)(*args, **kw)


MISUSE = {
    "no size or ratio": _f(2, (1, 2, 5, 5), output_size=None),
    "ratio float": _f(2, (1, 2, 6, 6), output_ratio=0.5),
    "ratio of three": _f(2, (1, 2, 6, 6), output_ratio=(0.5, 0.5, 0.5)),
    "kernel of three": _f(2, (1, 2, 6, 6), k=(2, 2, 2)),
    "output of three": _f(2, (1, 2, 6, 6), output_size=(2, 2, 2)),
    "2-D input": _f(2, (6, 6), sshape=(1, 1, 2)),
    "2-D input, drawn samples": _f(2, (6, 6), sshape=None),
    "5-D input": _f(2, (1, 1, 2, 6, 6), sshape=(1, 2, 2)),
    "empty channels": _f(2, (1, 0, 6, 6)),
    "samples dtype": _f(2, (1, 2, 6, 6), sdt="float32"),
    "samples dims": _f(2, (1, 2, 6, 6), sshape=(2, 2)),
    "samples batch": _f(2, (2, 2, 6, 6), sshape=(1, 2, 2)),
    "samples channels": _f(2, (2, 2, 6, 6), sshape=(2, 1, 2)),
    "samples last": _f(2, (2, 2, 6, 6), sshape=(2, 2, 3)),
    "pool height": _f(2, (1, 2, 6, 7), k=5, output_size=3),
    "pool width": _f(2, (1, 2, 7, 6), k=(1, 5), output_size=3),
    "pool before samples": _f(2, (1, 2, 6, 6), k=5, output_size=3, sshape=(1, 2, 3)),
    "negative output": _f(2, (1, 2, 6, 6), output_size=-1),
    "integer": _f(2, (1, 2, 6, 6), sdt="int64", dt="int64"),
    "3d no size": _f(3, (1, 2, 5, 5, 5), output_size=None),
    "3d kernel of two": _f(3, (1, 2, 5, 5, 5), k=(2, 2)),
    "3d output of two": _f(3, (1, 2, 5, 5, 5), output_size=(2, 2)),
    "3d 3-D input": _f(3, (5, 5, 5), sshape=(1, 5, 3)),
    "3d empty": _f(3, (1, 2, 0, 5, 5)),
    "3d samples last": _f(3, (1, 2, 5, 5, 5), sshape=(1, 2, 2)),
    "3d samples batch": _f(3, (2, 2, 5, 5, 5), sshape=(1, 2, 3)),
    "3d pool time": _f(3, (1, 2, 5, 6, 6), k=(5, 1, 1), output_size=3),
    "3d pool width": _f(3, (1, 2, 6, 6, 5), k=(1, 1, 5), output_size=3),
    "3d integer": _f(3, (1, 2, 5, 5, 5), sdt="int64", dt="int64"),
    "3d ratio": _f(3, (1, 2, 5, 6, 7), output_ratio=0.5),
    "module neither": _m("FractionalMaxPool2d", 2),
    "module both": _m("FractionalMaxPool2d", 2, output_size=3, output_ratio=0.5),
    "module ratio": _m("FractionalMaxPool2d", 2, output_ratio=1.5),
    "module 3d neither": _m("FractionalMaxPool3d", 2),
    "module 3d kernel": _m("FractionalMaxPool3d", 0, output_size=2),
    "module 3d kernel tuple": _m("FractionalMaxPool3d", (2, 0, 2), output_size=2),
    "module 3d ratio": _m("FractionalMaxPool3d", 2, output_ratio=(0.5, 0.5, 1.0)),
}

test_misuse = catalogue_test(MISUSE)
