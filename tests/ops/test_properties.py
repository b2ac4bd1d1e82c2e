"""Property tests over random shapes: broadcasting gradients, reductions over random dims, and
reshape/permute round trips, each checked against PyTorch."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import array_shapes, mutually_broadcastable_shapes

import autograd_gpu as ag
from tests.conftest import DEVICES

# NOTE: hypothesis cannot share a function-scoped fixture across examples, so the device comes
# from a parametrization over the same list the ``device`` fixture uses.
ON_EVERY_DEVICE = pytest.mark.parametrize("device", DEVICES)
SETTINGS = settings(max_examples=30, deadline=None)

BINARY = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a / (b * b + 1),
    "maximum": lambda a, b: a.maximum(b),
    "where": lambda a, b: (a > b).float().double() * a + b.where(a > 0, a),
}


def _pair(shape: tuple[int, ...], seed: int, device: str) -> tuple[Any, Any, np.ndarray]:
    data = np.random.default_rng(seed).standard_normal(shape)
    return (ag.tensor(data, requires_grad=True, device=device),
            torch.tensor(data, requires_grad=True), data)


def _np(t: Any) -> np.ndarray:
    return np.asarray(t.detach().cpu())


@ON_EVERY_DEVICE
@SETTINGS
@given(shapes=mutually_broadcastable_shapes(num_shapes=2, max_dims=3, max_side=3),
       op=st.sampled_from(sorted(BINARY)), seed=st.integers(0, 2**16))
def test_broadcast_binary_grads_have_input_shapes(shapes: Any, op: str, seed: int,
                                                  device: str) -> None:
    (sa, sb), out_shape = shapes.input_shapes, shapes.result_shape
    a, ta, _ = _pair(sa, seed, device)
    b, tb, _ = _pair(sb, seed + 1, device)
    out, tout = BINARY[op](a, b), BINARY[op](ta, tb)
    assert tuple(out.shape) == tuple(tout.shape) == tuple(out_shape)
    w = np.random.default_rng(seed + 2).standard_normal(out_shape)
    (out * ag.tensor(w, device=device)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    for ours, theirs, shape in ((a, ta, sa), (b, tb, sb)):
        assert tuple(ours.grad.shape) == tuple(shape)
        np.testing.assert_allclose(_np(ours.grad), theirs.grad.numpy(), rtol=1e-10,
                                   atol=1e-12)


REDUCTIONS = {
    "sum": lambda m, x, d, k: x.sum(d, keepdim=k),
    "mean": lambda m, x, d, k: x.mean(d, keepdim=k),
    "amax": lambda m, x, d, k: x.amax(d, keepdim=k),
    "logsumexp": lambda m, x, d, k: m.logsumexp(x, d, keepdim=k),
    "var": lambda m, x, d, k: x.var(d, keepdim=k, correction=0),
    "std": lambda m, x, d, k: x.std(d, keepdim=k, correction=0),
    "norm": lambda m, x, d, k: x.norm(p=2, dim=d, keepdim=k),
    "norm_p3": lambda m, x, d, k: m.norm(x, 3, d, keepdim=k),
    "prod": lambda m, x, d, k: x.prod(d[0], keepdim=k),
}


@st.composite
def _shape_and_dims(draw: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
    shape = draw(array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=3))
    dims = draw(st.lists(st.integers(-len(shape), len(shape) - 1), min_size=1, max_size=3,
                         unique_by=lambda d: d % len(shape)))
    return shape, tuple(dims)


@ON_EVERY_DEVICE
@SETTINGS
@given(sd=_shape_and_dims(), keepdim=st.booleans(), op=st.sampled_from(sorted(REDUCTIONS)),
       seed=st.integers(0, 2**16))
def test_reductions_over_random_dims(sd: Any, keepdim: bool, op: str, seed: int,
                                     device: str) -> None:
    shape, dims = sd
    x, tx, _ = _pair(shape, seed, device)
    out = REDUCTIONS[op](ag, x, dims, keepdim)
    tout = REDUCTIONS[op](torch, tx, dims, keepdim)
    assert tuple(out.shape) == tuple(tout.shape)
    assert out.grad_fn.name() == tout.grad_fn.name()
    np.testing.assert_allclose(_np(out), tout.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = np.random.default_rng(seed + 1).standard_normal(tuple(tout.shape))
    (out * ag.tensor(w, device=device)).sum().backward()
    (tout * torch.tensor(w)).sum().backward()
    assert tuple(x.grad.shape) == shape
    np.testing.assert_allclose(_np(x.grad), tx.grad.numpy(), rtol=1e-9, atol=1e-11)


@ON_EVERY_DEVICE
@SETTINGS
@given(shape=array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=3), data=st.data())
def test_reshape_and_permute_round_trips(shape: tuple[int, ...], data: Any, device: str) -> None:
    perm = data.draw(st.permutations(range(len(shape))))
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    x, _, arr = _pair(shape, data.draw(st.integers(0, 2**16)), device)
    y = x.permute(*perm)
    assert tuple(y.shape) == tuple(shape[p] for p in perm)
    z = y.reshape(-1).reshape(tuple(y.shape)).permute(*inverse)
    assert tuple(z.shape) == shape
    np.testing.assert_array_equal(_np(z), arr)
    w = np.random.default_rng(0).standard_normal(shape)
    (z * ag.tensor(w, device=device)).sum().backward()
    np.testing.assert_array_equal(_np(x.grad), w)
