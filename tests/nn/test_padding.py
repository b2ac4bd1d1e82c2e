"""F.pad's reflect, replicate and circular modes and the padding modules against the torch
oracle: values, gradients (gradcheck and gradgradcheck), grad_fn names, reprs and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same
from tests.misuse._catalogue import catalogue_test
from tests.nn._oracle import check_fn
from tests.nn._util import t

RNG = np.random.default_rng(11)

PADS: list[tuple[tuple[int, ...], list[int]]] = [
    ((2, 3, 5), [1, 2]),
    ((3, 5), [4, 0]),  # unbatched
    ((2, 3, 4, 5), [1, 2, 3, 0]),
    ((3, 4, 5), [2, 2, 1, 1]),
    ((1, 2, 3, 4, 5), [1, 2, 2, 0, 1, 1]),
    ((2, 3, 4, 5), [1, 2, 2, 0, 1, 1]),
    ((2, 3, 6), [-2, 1]),  # a crop on one side
    ((2, 3, 4, 6), [2, -1, -1, 3]),
]


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
@pytest.mark.parametrize("shape, pad", PADS)
def test_pad_modes_match_torch(mode: str, shape: tuple[int, ...], pad: list[int],
                               device: str) -> None:
    k = len(pad) // 2
    name = {"reflect": f"ReflectionPad{k}DBackward0", "replicate": f"ReplicationPad{k}DBackward0",
            "circular": "CopySlices"}[mode]
    xa = RNG.standard_normal(shape)
    check_fn(lambda T, x: T.nn.functional.pad(x, pad, mode=mode), xa, device, name=name)


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_modes_float32_int_and_gradgradcheck(mode: str, device: str) -> None:
    xa = RNG.standard_normal((2, 4, 5))
    check_fn(lambda T, x: T.nn.functional.pad(x, [2, 1, 1, 3], mode=mode), xa, device, "float32")
    ia = RNG.integers(-5, 5, (2, 3, 4))
    outs = [T.nn.functional.pad(t(T, dev, ia), [2, 1], mode=mode)
            for T, dev in ((ag, device), (torch, "cpu"))]
    assert_same(outs[0], outs[1])
    x = t(ag, device, xa, True)

    def f(x: Any) -> Any:
        return ag.nn.functional.pad(x, [1, 2, 2, 1], mode=mode) ** 2

    assert ag.autograd.gradcheck(f, (x,))
    assert ag.autograd.gradgradcheck(f, (x,))


@pytest.mark.parametrize("cls, args", [
    ("ZeroPad1d", (2,)), ("ZeroPad2d", ((1, 2, 3, 0),)), ("ZeroPad3d", (1,)),
    ("ConstantPad1d", ((1, 2), 3.5)), ("ConstantPad2d", (1, -1.0)), ("ConstantPad3d", (1, 2.0)),
    ("ReflectionPad1d", (2,)), ("ReflectionPad2d", ((1, 2, 2, 0),)), ("ReflectionPad3d", (1,)),
    ("ReplicationPad1d", ((3, 1),)), ("ReplicationPad2d", (2,)), ("ReplicationPad3d", (1,)),
    ("CircularPad1d", (2,)), ("CircularPad2d", ((1, 2, 0, 3),)), ("CircularPad3d", (1,)),
])
def test_padding_modules_match_torch(cls: str, args: tuple[Any, ...], device: str) -> None:
    ours, theirs = getattr(ag.nn, cls)(*args), getattr(torch.nn, cls)(*args)
    assert repr(ours) == repr(theirs)
    assert ours.padding == theirs.padding
    k = int(cls[-2])
    xa = RNG.standard_normal((2, 3, 4, 5, 6)[-k - 2:])
    out_o, out_t = ours(t(ag, device, xa)), theirs(t(torch, "cpu", xa))
    assert_same(out_o, out_t)


def _pad(mode: str, shape: tuple[int, ...], pad: list[int], **kw: Any) -> Any:
    return lambda T, dev: T.nn.functional.pad(T.ones(*shape, device=dev), pad, mode=mode, **kw)


CASES = {
    "unknown mode": _pad("foo", (1, 2, 5), [1, 1]),
    "odd length": _pad("reflect", (1, 2, 5), [1, 1, 1]),
    "value with reflect": _pad("reflect", (1, 2, 5), [1, 1], value=1.0),
    "zero value with replicate": _pad("replicate", (1, 2, 5), [1, 1], value=0.0),
    "1-D input": _pad("reflect", (5,), [1, 1]),
    "2-D pad of a 2-D input": _pad("replicate", (2, 5), [1, 1, 1, 1]),
    "4 pairs": _pad("circular", (1, 2, 3, 5), [1] * 8),
    "3 pairs of a 3-D input": _pad("reflect", (2, 3, 4), [1] * 6),
    "reflect too wide": _pad("reflect", (1, 2, 5), [5, 1]),
    "reflect too wide on the right": _pad("reflect", (1, 2, 5), [-1, 5]),
    "reflect empty output": _pad("reflect", (1, 2, 5), [-4, -1]),
    "replicate empty output": _pad("replicate", (1, 2, 5), [-5, 0]),
    "reflect empty channel": _pad("reflect", (1, 0, 5), [1, 1]),
    "replicate empty length": _pad("replicate", (1, 2, 0), [1, 1]),
    "circular wraps twice": _pad("circular", (1, 2, 5), [6, 1]),
    "circular empty output": _pad("circular", (1, 2, 5), [-4, -1]),
    "circular negative": _pad("circular", (1, 2, 5), [0, -6]),
    "circular empty channel": _pad("circular", (1, 0, 5), [1, 1]),
    "circular module 4-D": lambda T, dev: T.nn.CircularPad1d(1)(T.ones(1, 2, 3, 4, device=dev)),
    "replicate empty batch": _pad("replicate", (0, 2, 5), [1, 2]),
}

test_misuse = catalogue_test(CASES)
