"""Run the same snippet with torch and with autograd_gpu and compare what comes out: values,
dtypes, shapes and reprs of tensors, or the exception type and its first line."""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import numpy as np
import torch

import autograd_gpu as ag


def outcome(fn: Callable[[], Any]) -> Any:
    """``fn()``'s result in comparable form, or ``('raises', type name, first line)``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's deprecation notes (x.T on 1-D, ...)
            value = fn()
    except Exception as e:  # noqa: BLE001  (comparing failures too)
        return ("raises", type(e).__name__, first_sentence(str(e)))
    return normalise(value)


def first_sentence(msg: str) -> str:
    """The part of an error message the project promises to match PyTorch on."""
    return msg.split("\n")[0].split(". ")[0]


def normalise(value: Any) -> Any:
    if isinstance(value, (torch.Tensor, ag.Tensor)):
        return ("tensor", str(value.dtype), tuple(value.shape), bool(value.requires_grad),
                _values(value.detach().cpu().tolist()))
    if isinstance(value, (torch.Size, ag.Size)):
        return ("size", tuple(value))
    if isinstance(value, (torch.dtype, ag.dtype, torch.device, ag.device)):
        return repr(value)
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, _values(value.tolist()))
    if isinstance(value, (tuple, list)):
        return type(value).__name__, [normalise(v) for v in value]
    if isinstance(value, float) and math.isnan(value):
        return "nan"
    return value


def _values(x: Any) -> Any:
    if isinstance(x, list):
        return [_values(v) for v in x]
    return "nan" if isinstance(x, float) and math.isnan(x) else x


def same(snippet: Callable[[Any], Any]) -> None:
    """Assert deterministic ``snippet(torch)`` and ``snippet(autograd_gpu)`` agree, reprs of
    tensor results included."""
    want, got = outcome(lambda: snippet(torch)), outcome(lambda: snippet(ag))
    assert got == want, f"ours {got!r}\n  != torch {want!r}"
    if isinstance(want, tuple) and want[0] == "tensor":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            mine, theirs = repr(snippet(ag)), repr(snippet(torch))
            assert mine == theirs, f"ours {mine!r}\n  != torch {theirs!r}"
