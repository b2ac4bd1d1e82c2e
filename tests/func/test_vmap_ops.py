"""vmap over every op family, against torch.func.vmap: one table line per op.

Each line gives the function (the same code for both libraries, ``L`` is the library module),
the per-sample input shapes (ints are class/index inputs), and whether it is differentiable.
Every line runs with the batch in dim 0, in the last dim, and with unbatched (None) inputs
mixed in; differentiable ones also run ``vmap(grad(...))``. The ``no_fallbacks`` fixture
asserts that no op fell back to the per-sample loop.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.func._batched import FALLBACKS
from tests.func._helpers import check, no_fallbacks  # noqa: F401

B = 3


class Idx:
    """An integer input: values in ``[0, high)`` of ``shape``."""

    def __init__(self, high: int, *shape: int) -> None:
        self.high, self.shape = high, shape


class Pos:
    """A float input in (0.05, 0.95) (probabilities)."""

    def __init__(self, *shape: int) -> None:
        self.shape = shape


def _F(L: Any) -> Any:
    return L.nn.functional


# name, fn(L, *args), per-sample input specs, differentiable
OPS: list[tuple[str, Callable[..., Any], tuple[Any, ...], bool]] = [
    ("gt", lambda L, x, y: x > y, ((4,), (4,)), False),
    ("eq_scalar", lambda L, x: x == 0.5, ((4,),), False),
    ("logical_and", lambda L, x, y: L.logical_and(x > 0, y > 0), ((4,), (4,)), False),
    ("isnan", lambda L, x: L.isnan(L.log(x)), ((4,),), False),
    ("isfinite", lambda L, x: L.isfinite(1 / x), ((4,),), False),
    ("isclose", lambda L, x, y: L.isclose(x, y), ((4,), (4,)), False),
    ("floor_divide", lambda L, x, y: x // y, ((4,), (4,)), False),
    ("remainder", lambda L, x: x % 0.7, ((4,),), False),
    ("argmax", lambda L, x: x.argmax(1), ((3, 4),), False),
    ("argmin_all", lambda L, x: x.argmin(), ((3, 4),), False),
    ("any", lambda L, x: (x > 0).any(0), ((3, 4),), False),
    ("all", lambda L, x: (x > -1).all(), ((3, 4),), False),
    ("where", lambda L, x, y: L.where(x > y, x, y * 2), ((4,), (4,)), True),
    ("masked_fill", lambda L, x, y: x.masked_fill(y > 0, 1.5), ((2, 4), (2, 4)), True),
    ("var", lambda L, x: x.var(1), ((3, 4),), True),
    ("std", lambda L, x: x.std(0, keepdim=True), ((3, 4),), True),
    ("norm", lambda L, x: x.norm(), ((3, 4),), True),
    ("norm_p3", lambda L, x: x.norm(3, 1), ((3, 4),), True),
    ("sign", lambda L, x: x.sign() * x, ((4,),), True),
    ("rpow", lambda L, x: 2.0 ** x, ((4,),), True),
    ("index_list", lambda L, x: x[:, [0, 2, 2]], ((3, 4),), True),
    ("index_tensor", lambda L, x, i: x[i], ((5, 2), Idx(5, 3)), True),
    ("index_tensor_mid", lambda L, x, i: x[:, i], ((2, 5), Idx(5, 4)), True),
    ("index_two", lambda L, x, i, j: x[i, :, j], ((4, 2, 5), Idx(4, 3), Idx(5, 3)), True),
    ("index_select", lambda L, x, i: L.index_select(x, 1, i), ((2, 5), Idx(5, 3)), True),
    ("gather", lambda L, x, i: L.gather(x, 1, i), ((2, 5), Idx(5, 2, 5)), True),
    ("gather_partial", lambda L, x, i: L.gather(x, 0, i), ((3, 5), Idx(3, 2, 2)), True),
    ("mse", lambda L, x, y: _F(L).mse_loss(x, y), ((3, 4), (3, 4)), True),
    ("mse_none", lambda L, x, y: _F(L).mse_loss(x, y, reduction="none"), ((3, 4), (3, 4)), True),
    ("cross_entropy", lambda L, x, y: _F(L).cross_entropy(x, y), ((5,), Idx(5)), True),
    ("cross_entropy_n", lambda L, x, y: _F(L).cross_entropy(x, y), ((2, 5), Idx(5, 2)), True),
    ("nll_sum", lambda L, x, y: _F(L).nll_loss(x, y, reduction="sum"), ((2, 5), Idx(5, 2)),
     True),
    ("nll_2d", lambda L, x, y: _F(L).nll_loss(x, y), ((2, 3, 2, 2), Idx(3, 2, 2, 2)), True),
    ("bce", lambda L, x, y: _F(L).binary_cross_entropy(x, y), (Pos(4), Pos(4)), True),
    ("bce_logits", lambda L, x, y: _F(L).binary_cross_entropy_with_logits(x, y, reduction="sum"),
     ((4,), Pos(4)), True),
    ("conv2d", lambda L, x, w: _F(L).conv2d(x, w, padding=1), ((2, 2, 5, 5), (3, 2, 3, 3)), True),
    ("conv2d_bias", lambda L, x, w, b: _F(L).conv2d(x, w, b, stride=2),
     ((1, 2, 5, 5), (4, 2, 3, 3), (4,)), True),
    ("conv2d_groups", lambda L, x, w: _F(L).conv2d(x, w, groups=2),
     ((1, 4, 4, 4), (2, 2, 2, 2)), True),
    ("max_pool2d", lambda L, x: _F(L).max_pool2d(x, 2), ((1, 2, 4, 4),), True),
    ("max_pool2d_3d", lambda L, x: _F(L).max_pool2d(x, 3, 1, 1), ((2, 4, 4),), True),
    ("avg_pool2d", lambda L, x: _F(L).avg_pool2d(x, 2, 1), ((2, 1, 4, 4),), True),
    ("layer_norm", lambda L, x, w, b: _F(L).layer_norm(x, (4,), w, b), ((3, 4), (4,), (4,)),
     True),
    ("batch_norm", lambda L, x, w: _F(L).batch_norm(x, None, None, w, None, training=True),
     ((4, 3), (3,)), True),
    ("batch_norm_eval", lambda L, x, m: _F(L).batch_norm(x, m, m.abs() + 1, training=False),
     ((4, 3, 2), (3,)), True),
    ("embedding", lambda L, w: _F(L).embedding(L.tensor([[0, 2], [3, 3]]), w), ((4, 3),), True),
    ("embedding_pad", lambda L, w: _F(L).embedding(L.tensor([0, 2, 1]), w, padding_idx=2),
     ((4, 3),), True),
    ("embedding_batched_idx", lambda L, w, i: _F(L).embedding(i, w), ((4, 3), Idx(4, 2, 2)),
     True),
    ("embedding_batched_idx_pad", lambda L, w, i: _F(L).embedding(i, w, padding_idx=1),
     ((4, 3), Idx(4, 5)), True),
]

_GRAD_SKIP = {"conv2d_groups"}  # every op is covered; this keeps the run short


def _inputs(specs: tuple[Any, ...], dims: tuple[Any, ...], device: str,
            seed: int) -> tuple[list[Any], list[Any]]:
    rng = np.random.default_rng(seed)
    ts, ags = [], []
    for spec, d in zip(specs, dims):
        shape = spec.shape if isinstance(spec, (Idx, Pos)) else spec
        if d is not None:
            shape = shape[:d] + (B,) + shape[d:] if d >= 0 else shape + (B,)
        if isinstance(spec, Idx):
            a = rng.integers(0, spec.high, shape)
        elif isinstance(spec, Pos):
            a = rng.uniform(0.05, 0.95, shape)
        else:
            a = rng.standard_normal(shape)
        ts.append(torch.tensor(a))
        ags.append(ag.tensor(a, device=device))
    return ts, ags


def _dim_sets(specs: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    n = len(specs)
    last = tuple(len(s.shape if isinstance(s, (Idx, Pos)) else s) for s in specs)
    sets = [(0,) * n, last]
    for i in range(n):  # one input unbatched at a time (when another stays batched)
        if n > 1:
            sets.append(tuple(None if j == i else 0 for j in range(n)))
    return sets


@pytest.mark.filterwarnings("ignore:There is a performance drop")  # torch's own fallbacks
@pytest.mark.parametrize("name,fn,specs,diff", OPS, ids=[o[0] for o in OPS])
def test_vmap_op(device: str, name: str, fn: Any, specs: Any, diff: bool) -> None:
    for k, dims in enumerate(_dim_sets(specs)):
        ts, ags = _inputs(specs, dims, device, seed=k)
        theirs = torch.func.vmap(lambda *a: fn(torch, *a), dims)(*ts)
        ours = ag.func.vmap(lambda *a: fn(ag, *a), dims)(*ags)
        check(ours, theirs, rtol=1e-9, atol=1e-10)
    assert not FALLBACKS, FALLBACKS


def _scalar(L: Any, fn: Any, x: Any, *rest: Any) -> Any:
    out = fn(L, x, *rest)
    return (out * out).sum() if out.dtype.is_floating_point else out.sum()


@pytest.mark.parametrize("name,fn,specs,diff",
                         [o for o in OPS if o[3] and o[0] not in _GRAD_SKIP],
                         ids=[o[0] for o in OPS if o[3] and o[0] not in _GRAD_SKIP])
def test_vmap_grad_op(device: str, name: str, fn: Any, specs: Any, diff: bool) -> None:
    """Per-sample gradients through the op w.r.t. its first input."""
    dims = (0,) * len(specs)
    ts, ags = _inputs(specs, dims, device, seed=5)
    theirs = torch.func.vmap(torch.func.grad(lambda *a: _scalar(torch, fn, *a)), dims)(*ts)
    ours = ag.func.vmap(ag.func.grad(lambda *a: _scalar(ag, fn, *a)), dims)(*ags)
    check(ours, theirs, rtol=1e-8, atol=1e-10)


NESTED = ["gt", "argmax", "where", "var", "index_tensor", "gather", "cross_entropy", "conv2d",
          "max_pool2d", "layer_norm", "batch_norm", "embedding", "mse", "bce"]


@pytest.mark.parametrize("name", NESTED)
def test_nested_vmap_op(device: str, name: str) -> None:
    """vmap(vmap(f)): the outer batch in dim 0, the inner in the last dim."""
    _, fn, specs, _ = next(o for o in OPS if o[0] == name)
    rng = np.random.default_rng(1)
    ts, ags = [], []
    for spec in specs:
        shape = (2,) + tuple(spec.shape if isinstance(spec, (Idx, Pos)) else spec) + (B,)
        a = (rng.integers(0, spec.high, shape) if isinstance(spec, Idx) else
             rng.uniform(0.05, 0.95, shape) if isinstance(spec, Pos) else
             rng.standard_normal(shape))
        ts.append(torch.tensor(a))
        ags.append(ag.tensor(a, device=device))
    inner = tuple(len(s.shape if isinstance(s, (Idx, Pos)) else s) for s in specs)
    theirs = torch.func.vmap(torch.func.vmap(lambda *a: fn(torch, *a), inner))(*ts)
    ours = ag.func.vmap(ag.func.vmap(lambda *a: fn(ag, *a), inner))(*ags)
    check(ours, theirs, rtol=1e-9, atol=1e-10)


# ---- refusals ----------------------------------------------------------------------------------

def _message(call: Callable[[], Any]) -> str:
    with pytest.raises(Exception) as info:
        call()
    return str(info.value).split("\n")[0]


@pytest.mark.parametrize("f", [lambda L, x: x.nonzero(), lambda L, x: x[x > 0]],
                         ids=["nonzero", "bool_mask"])
def test_data_dependent_shapes_refused(f: Any) -> None:
    x = torch.randn(3, 4)
    theirs = _message(lambda: torch.func.vmap(lambda a: f(torch, a))(x))
    ours = _message(lambda: ag.func.vmap(lambda a: f(ag, a))(ag.tensor(x.numpy())))
    assert ours == theirs


def test_batch_norm_running_stats_refused() -> None:
    x = np.random.default_rng(0).standard_normal((3, 2, 4))

    def f(L: Any, a: Any) -> Any:
        return _F(L).batch_norm(a, L.zeros(4, dtype=a.dtype), L.ones(4, dtype=a.dtype),
                                training=True)

    theirs = _message(lambda: torch.func.vmap(lambda a: f(torch, a))(torch.tensor(x)))
    ours = _message(lambda: ag.func.vmap(lambda a: f(ag, a))(ag.tensor(x)))
    assert ours == theirs


# ---- in-place ops ------------------------------------------------------------------------------

def _inplace(L: Any, x: Any, y: Any) -> Any:
    z = x.clone()
    z.add_(y)
    z.mul_(2.0)
    z[0] = 1.5
    z[1:].copy_(y[:3])
    w = x.clone()
    w.zero_()
    w.fill_(0.25)
    return z + w


@pytest.mark.parametrize("dims", [(0, 0), (0, None), (1, 0)])
def test_inplace_on_batched(device: str, dims: Any) -> None:
    shapes = [(4,) if d is None else (B, 4) if d == 0 else (4, B) for d in dims]
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(s) for s in shapes]
    theirs = torch.func.vmap(lambda *a: _inplace(torch, *a), dims)(*map(torch.tensor, arrays))
    ours = ag.func.vmap(lambda *a: _inplace(ag, *a), dims)(
        *[ag.tensor(a, device=device) for a in arrays])
    check(ours, theirs)


def test_inplace_grad(device: str) -> None:
    def f(L: Any, x: Any) -> Any:
        y = x.clone()
        y.mul_(x)
        return y.sum()

    x = np.random.default_rng(4).standard_normal((B, 4))
    theirs = torch.func.vmap(torch.func.grad(lambda a: f(torch, a)))(torch.tensor(x))
    ours = ag.func.vmap(ag.func.grad(lambda a: f(ag, a)))(ag.tensor(x, device=device))
    check(ours, theirs)


def test_inplace_into_unbatched_refused() -> None:
    msg = ("vmap: inplace arithmetic(self, *extra_args) is not possible because there exists a "
           "Tensor `other` in extra_args that has more elements than `self`.")
    with pytest.raises(RuntimeError) as info:
        ag.func.vmap(lambda y: ag.zeros(4, dtype=y.dtype).add_(y))(ag.ones(B, 4))
    assert str(info.value).startswith(msg)


# ---- randomness --------------------------------------------------------------------------------

RANDOM = [
    lambda L, x: x + L.rand(4, dtype=x.dtype, device=x.device),
    lambda L, x: x + L.randn(4, dtype=x.dtype, device=x.device),
    lambda L, x: x + L.rand_like(x),
    lambda L, x: x + L.randn_like(x),
    lambda L, x: x + L.randint(0, 1000, (4,), device=x.device).to(x.dtype),
    lambda L, x: x.clone().normal_(),
    lambda L, x: x.clone().uniform_(),
    lambda L, x: _F(L).dropout(x + 1, 0.5),
]


@pytest.mark.parametrize("k", range(len(RANDOM)))
def test_randomness_modes(device: str, k: int) -> None:
    f = RANDOM[k]
    x = np.zeros((B, 4))
    theirs = _message(lambda: torch.func.vmap(lambda a: f(torch, a))(torch.tensor(x)))
    ours = _message(lambda: ag.func.vmap(lambda a: f(ag, a))(ag.tensor(x, device=device)))
    assert ours == theirs
    xs = ag.tensor(np.zeros((5, 4)), device=device)
    diff = ag.func.vmap(lambda a: f(ag, a), randomness="different")(xs).cpu().numpy()
    assert all(not np.array_equal(diff[0], diff[i]) for i in range(1, 5))
    same = ag.func.vmap(lambda a: f(ag, a), randomness="same")(xs).cpu().numpy()
    assert all(np.array_equal(same[0], same[i]) for i in range(1, 5))


def test_randomness_nested_levels(device: str) -> None:
    """Each level applies its own mode: 'different' outside, 'same' inside."""
    x = ag.zeros(4, 3, device=device)
    out = ag.func.vmap(ag.func.vmap(lambda a: a + ag.rand((), device=a.device), randomness="same"),
                       randomness="different")(x).cpu().numpy()
    assert np.all(out == out[:, :1])
    assert len(set(out[:, 0].tolist())) == 4
