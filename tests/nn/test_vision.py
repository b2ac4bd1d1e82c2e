"""F.interpolate (every mode), the deprecated upsample functions and the Upsample modules
against the torch oracle: values, gradients, grad_fn names, double backward, reprs, errors."""

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

RNG = np.random.default_rng(13)

# NOTE: PyTorch's 1-D and 3-D nearest forward ignores its own "out == in" and "out == 2 in"
# shortcuts (its backward and the 2-D forward use them); they only differ for a scale_factor
# that disagrees with the size ratio, which these cases avoid.
CASES: list[tuple[tuple[int, ...], dict[str, Any]]] = [
    ((2, 3, 5), {"scale_factor": 2, "mode": "nearest"}),
    ((2, 3, 5, 4), {"size": (7, 3), "mode": "nearest"}),
    ((1, 2, 5, 4, 3), {"scale_factor": (1.7, 0.6, 1.5), "mode": "nearest"}),
    ((2, 3, 5, 4), {"scale_factor": 1.7, "mode": "nearest", "recompute_scale_factor": True}),
    ((2, 3, 5), {"size": 8, "mode": "nearest-exact"}),
    ((2, 3, 5, 4), {"scale_factor": (1.7, 0.6), "mode": "nearest-exact"}),
    ((1, 2, 5, 4, 3), {"size": (3, 6, 4), "mode": "nearest-exact"}),
    ((2, 3, 6, 8), {"size": (3, 2), "mode": "area"}),
    ((2, 3, 8, 4, 3), {"scale_factor": 0.5, "mode": "area"}),
    ((2, 3, 7), {"scale_factor": 0.5, "mode": "area"}),
]
for _ac in (False, True):
    CASES += [
        ((2, 3, 5), {"scale_factor": 2.5, "mode": "linear", "align_corners": _ac}),
        ((2, 3, 5, 4), {"size": (7, 3), "mode": "bilinear", "align_corners": _ac}),
        ((2, 3, 5, 4), {"scale_factor": (1.7, 0.6), "mode": "bilinear", "align_corners": _ac}),
        ((1, 2, 5, 4, 3), {"scale_factor": (1.7, 0.6, 2), "mode": "trilinear",
                           "align_corners": _ac}),
        ((2, 3, 5, 4), {"size": (9, 3), "mode": "bicubic", "align_corners": _ac}),
        ((2, 3, 5, 4), {"scale_factor": 1.3, "mode": "bicubic", "align_corners": _ac}),
        ((2, 3, 8, 4), {"size": (3, 9), "mode": "bilinear", "align_corners": _ac,
                        "antialias": True}),
        ((2, 3, 8, 4), {"size": (2, 9), "mode": "bicubic", "align_corners": _ac,
                        "antialias": True}),
        ((2, 3, 8, 7), {"scale_factor": 0.4, "mode": "bicubic", "align_corners": _ac,
                        "antialias": True}),
    ]


@pytest.mark.parametrize("shape, kw", CASES)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_interpolate_matches_torch(shape: tuple[int, ...], kw: dict[str, Any], dtype: str,
                                   device: str) -> None:
    xa = RNG.standard_normal(shape)
    check_fn(lambda T, x: T.nn.functional.interpolate(x, **kw), xa, device, dtype)


@pytest.mark.parametrize("kw", [
    {"scale_factor": 2, "mode": "nearest"},
    {"size": (3, 5), "mode": "bilinear", "align_corners": True},
    {"size": (5, 3), "mode": "bicubic"},
    {"size": (2, 3), "mode": "bilinear", "antialias": True},
])
def test_interpolate_gradgradcheck(kw: dict[str, Any], device: str) -> None:
    x = t(ag, device, RNG.standard_normal((1, 2, 4, 4)), True)

    def f(x: Any) -> Any:
        return ag.nn.functional.interpolate(x, **kw) ** 2

    assert ag.autograd.gradcheck(f, (x,))
    assert ag.autograd.gradgradcheck(f, (x,))


def test_upsample_functions_warn_and_match_torch(device: str) -> None:
    xa = RNG.standard_normal((1, 2, 3, 4))
    for fn, kw in (("upsample", {"scale_factor": 2, "mode": "bilinear"}),
                   ("upsample_nearest", {"size": (5, 6)}),
                   ("upsample_bilinear", {"scale_factor": 2})):
        outs = []
        for T, dev in ((ag, device), (torch, "cpu")):
            with pytest.warns(UserWarning, match="is deprecated"):
                outs.append(getattr(T.nn.functional, fn)(t(T, dev, xa), **kw))
        assert_same(outs[0], outs[1], rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("cls, kwargs", [
    ("Upsample", {"scale_factor": 2}),
    ("Upsample", {"size": (3, 4), "mode": "bilinear", "align_corners": True}),
    ("Upsample", {"scale_factor": (2, 1.5), "mode": "bicubic"}),
    ("UpsamplingNearest2d", {"scale_factor": 2}),
    ("UpsamplingBilinear2d", {"size": 4}),
])
def test_upsample_modules_match_torch(cls: str, kwargs: dict[str, Any], device: str) -> None:
    ours, theirs = getattr(ag.nn, cls)(**kwargs), getattr(torch.nn, cls)(**kwargs)
    assert repr(ours) == repr(theirs)
    xa = RNG.standard_normal((2, 3, 4, 5))
    assert_same(ours(t(ag, device, xa)), theirs(t(torch, "cpu", xa)), rtol=1e-12, atol=1e-13)


def _i(shape: tuple[int, ...], **kw: Any) -> Any:
    return lambda T, dev: T.nn.functional.interpolate(T.ones(*shape, device=dev), **kw)


MISUSE = {
    "size and scale": _i((1, 2, 4), size=3, scale_factor=2),
    "neither": _i((1, 2, 4)),
    "align_corners with nearest": _i((1, 2, 4), size=3, align_corners=True),
    "size length": _i((1, 2, 4, 4), size=(3, 3, 3)),
    "scale length": _i((1, 2, 4, 4), scale_factor=(2, 2, 2)),
    "recompute with size": _i((1, 2, 4), size=3, recompute_scale_factor=True),
    "antialias nearest": _i((1, 2, 4, 4), size=3, antialias=True),
    "antialias 3-D": _i((1, 2, 4), size=3, mode="linear", antialias=True),
    "bilinear 3-D": _i((1, 2, 4), size=3, mode="bilinear"),
    "linear 4-D": _i((1, 2, 4, 4), size=3, mode="linear"),
    "trilinear 4-D": _i((1, 2, 4, 4), size=3, mode="trilinear"),
    "bicubic 5-D": _i((1, 2, 4, 4, 4), size=3, mode="bicubic"),
    "2-D input": _i((2, 4), size=3),
    "unknown mode": _i((1, 2, 4), size=3, mode="cubic"),
    "zero output": _i((1, 2, 4), scale_factor=0.1),
    "zero output bilinear": _i((1, 2, 4, 4), size=(0, 2), mode="bilinear"),
}

test_misuse = catalogue_test(MISUSE)
