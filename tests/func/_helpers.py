"""Shared helpers for the func tests: the same inputs for torch and autograd_gpu, pytree
comparison, central finite differences."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.func import _pytree as tree
from autograd_gpu.func._batched import FALLBACKS
from tests._compare import first_sentence


@pytest.fixture(autouse=True)
def no_fallbacks() -> Any:
    """Every op these tests use has a batching rule: none may use the per-sample loop."""
    FALLBACKS.clear()
    yield
    assert not FALLBACKS, f"ops fell back to the per-sample loop: {FALLBACKS}"


def pair(*shape: int, device: str = "cpu", seed: int = 0) -> tuple[torch.Tensor, ag.Tensor]:
    """A float64 tensor of ``shape`` for torch and the same values for autograd_gpu."""
    a = np.random.default_rng(seed + 17 * len(shape) + sum(shape)).standard_normal(shape)
    return torch.tensor(a), ag.tensor(a, device=device)


def npy(x: Any) -> Any:
    return np.asarray(x.detach().cpu().numpy() if isinstance(x, ag.Tensor) else x.detach().numpy())


def check(ours: Any, theirs: Any, rtol: float = 1e-10, atol: float = 1e-12) -> None:
    """Same structure (containers and their types), same shapes, close values."""
    flat_o, spec_o = tree.flatten(ours)
    flat_t, spec_t = tree.flatten(theirs)
    assert tree.describe(spec_o) == tree.describe(spec_t), (tree.describe(spec_o),
                                                             tree.describe(spec_t))
    assert len(flat_o) == len(flat_t)
    for o, t in zip(flat_o, flat_t):
        if isinstance(t, (torch.Tensor, ag.Tensor)):
            assert isinstance(o, ag.Tensor), type(o)
            assert tuple(o.shape) == tuple(t.shape), (tuple(o.shape), tuple(t.shape))
            assert str(o.dtype) == str(t.dtype), (o.dtype, t.dtype)
            np.testing.assert_allclose(npy(o), npy(t), rtol=rtol, atol=atol)
        else:
            assert o == t, (o, t)


def numeric_jacobian(fn: Callable[..., ag.Tensor], args: list[ag.Tensor], argnum: int = 0,
                     eps: float = 1e-6) -> np.ndarray:
    """Central differences: ``(*out.shape, *args[argnum].shape)``."""
    device = args[argnum].device
    xs = [npy(a).copy() for a in args]

    def ev(vals: list[np.ndarray]) -> np.ndarray:
        with ag.no_grad():
            return npy(fn(*[ag.tensor(v, device=device) for v in vals])).astype(np.float64)

    base = ev(xs)
    x = xs[argnum]
    jac = np.zeros(base.shape + x.shape)
    for idx in np.ndindex(*x.shape):
        plus = [v.copy() for v in xs]
        minus = [v.copy() for v in xs]
        plus[argnum][idx] += eps
        minus[argnum][idx] -= eps
        jac[(...,) + tuple(idx)] = (ev(plus) - ev(minus)) / (2 * eps)
    return jac


def check_fd(ours: ag.Tensor, expected: np.ndarray, rtol: float = 1e-6,
             atol: float = 1e-6) -> None:
    assert tuple(ours.shape) == expected.shape, (tuple(ours.shape), expected.shape)
    np.testing.assert_allclose(npy(ours), expected, rtol=rtol, atol=atol)


def raises_like(ours: Callable[[], Any], theirs: Callable[[], Any]) -> str:
    """Both raise; the first sentence of our message equals torch's. Returns it."""
    with pytest.raises(Exception) as want:
        theirs()
    with pytest.raises(Exception) as got:
        ours()
    w, g = first_sentence(str(want.value)), first_sentence(str(got.value))
    assert g == w, f"ours {g!r}\n  != torch {w!r}"
    assert type(got.value).__name__ == type(want.value).__name__, (got.value, want.value)
    return g
