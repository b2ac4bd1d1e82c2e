"""Helpers for the autograd tests: run one program with torch (the oracle) and with us."""

from __future__ import annotations

import re
import types
from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag


def to_np(x: Any) -> Any:
    """A tensor (ours or torch's) as a NumPy array; None stays None."""
    if x is None:
        return None
    if isinstance(x, torch.Tensor):
        return x.detach().numpy()
    if isinstance(x, ag.Tensor):
        return np.asarray(x.detach().cpu().numpy())
    return np.asarray(x)


def assert_same(ours: Any, theirs: Any, rtol: float = 1e-5, atol: float = 1e-6) -> None:
    """Recursively compare our result with torch's: tensors by value and shape, None by identity,
    sequences element-wise, anything else with ``==``."""
    if isinstance(theirs, (tuple, list)):
        assert isinstance(ours, (tuple, list)) and len(ours) == len(theirs), (ours, theirs)
        for a, b in zip(ours, theirs):
            assert_same(a, b, rtol, atol)
        return
    if theirs is None:
        assert ours is None, ours
        return
    if isinstance(theirs, torch.Tensor):
        assert isinstance(ours, ag.Tensor), type(ours)
        assert tuple(ours.shape) == tuple(theirs.shape), (ours.shape, theirs.shape)
        np.testing.assert_allclose(to_np(ours), to_np(theirs), rtol=rtol, atol=atol)
        return
    assert ours == theirs, (ours, theirs)


def both(fn: Callable[[Any, str], Any], device: str, **tol: float) -> Any:
    """Run ``fn(lib, device)`` with torch on cpu and with autograd_gpu on ``device``; compare."""
    theirs = fn(torch, "cpu")
    ours = fn(ag, device)
    assert_same(ours, theirs, **tol)
    return ours


def parity(fn: Callable[[Any, str], Any]) -> Callable[[str], None]:
    """Decorator: the program ``fn(T, dev)`` becomes a test on the ``device`` fixture that runs it
    with torch on cpu and with autograd_gpu on ``device`` and compares the results (``both``)."""

    def test(device: str) -> None:
        both(fn, device)

    # NOTE: no functools.wraps: pytest would read fn's (T, dev) signature through __wrapped__.
    test.__name__, test.__qualname__, test.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
    test.__module__ = fn.__module__
    return test


X = [[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]]

# NOTE: ``backward(create_graph=True)`` warns once per process (as PyTorch); tests that call it on
# purpose carry this mark, whichever of them happens to run first.
ALLOW_CREATE_GRAPH_WARNING = pytest.mark.filterwarnings(
    "ignore:Using backward\\(\\) with create_graph=True:UserWarning"
)


def leaf(T: Any, dev: str, data: Any = X) -> Any:
    """A float64 leaf of library ``T`` that requires grad, holding ``data`` (``X`` by default)."""
    return T.tensor(data, dtype=T.float64, device=dev, requires_grad=True)


def function_class(T: Any, name: str, forward: Callable[..., Any],
                   backward: Callable[..., Any] | None = None) -> Any:
    """A ``T.autograd.Function`` subclass called ``name`` with these static ``forward(ctx, ...)``
    and ``backward(ctx, ...)`` (no ``backward`` when None), as if written as a class."""

    def body(ns: dict[str, Any]) -> None:
        ns["forward"] = staticmethod(forward)
        if backward is not None:
            ns["backward"] = staticmethod(backward)

    return types.new_class(name, (T.autograd.Function,), exec_body=body)


def first_sentence(msg: str) -> str:
    """The text up to the first '. ' (or the whole first line)."""
    line = msg.strip().split("\n")[0]
    m = re.search(r"\.(\s|$)", line)
    return line[: m.start() + 1] if m else line


def catch(fn: Callable[[], Any]) -> BaseException:
    try:
        fn()
    except Exception as e:  # noqa: BLE001
        return e
    raise AssertionError("no exception raised")


def same_error(fn: Callable[[Any, str], Any], device: str) -> BaseException:
    """``fn`` raises in torch and in autograd_gpu: same type, same first sentence."""
    theirs = catch(lambda: fn(torch, "cpu"))
    ours = catch(lambda: fn(ag, device))
    assert isinstance(ours, type(theirs)), (type(ours), ours, type(theirs), theirs)
    # NOTE: torch runs on the CPU here; on CUDA PyTorch names tensor types torch.cuda.XTensor.
    text = str(ours).replace("[torch.cuda.", "[torch.") if device != "cpu" else str(ours)
    assert first_sentence(text) == first_sentence(str(theirs)), (str(ours), str(theirs))
    return ours
