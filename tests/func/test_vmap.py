"""vmap's in_dims/out_dims/chunk_size/randomness handling, nesting and errors, against
torch.func.vmap on the same inputs (float64, simple ops only)."""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest
import torch
import torch.func as tf

import autograd_gpu as ag
from autograd_gpu.func import BatchedTensor
from tests.func._helpers import check, no_fallbacks, pair, raises_like  # noqa: F401


def both(fn: Any, targs: tuple[Any, ...], args: tuple[Any, ...], **vmap_kw: Any) -> Any:
    """``vmap(fn(m, ...))`` with torch and with autograd_gpu; checks they agree."""
    want = tf.vmap(functools.partial(fn, torch), **vmap_kw)(*targs)
    got = ag.vmap(functools.partial(fn, ag), **vmap_kw)(*args)
    check(got, want)
    return got


# ---- in_dims -----------------------------------------------------------------------------------

@pytest.mark.parametrize("in_dims,shapes", [
    (0, ((5, 3), (5, 3))), (1, ((3, 5), (3, 5))), (-1, ((3, 5), (3, 5))), (-2, ((5, 3), (5, 3))),
    ((1, None), ((3, 5), (3,))), ((None, 0), ((3,), (5, 3))), ((-1, 1), ((3, 5), (3, 5))),
    ((0, -3), ((5, 3), (5, 3, 1)))])
def test_in_dims(device: str, in_dims: Any, shapes: Any) -> None:
    (tx, x), (ty, y) = pair(*shapes[0], device=device), pair(*shapes[1], device=device, seed=1)

    def f(m: Any, a: Any, b: Any) -> Any:
        b = b.reshape(-1)
        return (a.unsqueeze(-1) * b.sum()).exp() + m.matmul(a.reshape(1, -1), b.reshape(-1, 1))

    both(f, (tx, ty), (x, y), in_dims=in_dims)


def test_nested_containers_and_matching_in_dims(device: str) -> None:
    (ta, a), (tb, b), (tc, c) = (pair(2, 3, device=device), pair(3, 2, device=device, seed=1),
                                 pair(5, device=device, seed=2))

    def f(m: Any, xs: Any, d: Any) -> Any:
        (p, q), r = xs[0], xs[1]
        return {"o": m.cat([p, q.t()], 0).sum(0) + r.sum(), "l": [d["u"] * 2, d["v"] + 1]}

    in_dims = (((0, 1), None), {"u": 0, "v": None})
    both(f, (((ta, tb), tc), {"u": ta, "v": tc}), (((a, b), c), {"u": a, "v": c}),
         in_dims=in_dims)
    both(f, ([(ta, tb), tc], {"u": ta, "v": tc}), ([(a, b), c], {"u": a, "v": c}),
         in_dims=([(0, 1), None], {"u": 0, "v": None}))
    both(f, ([(ta, tb), tc], {"u": ta, "v": ta * 3}), ([(a, b), c], {"u": a, "v": a * 3}),
         in_dims=([(0, 1), None], 0), out_dims={"o": -1, "l": [0, 1]})
    both(f, ([(ta, tb), tc], {"u": ta, "v": tc}), ([(a, b), c], {"u": a, "v": c}),
         in_dims=([(0, 1), None], {"u": 0, "v": None}), out_dims={"o": -1, "l": [0, None]})


# ---- out_dims ----------------------------------------------------------------------------------

@pytest.mark.parametrize("out_dims", [0, 1, -1, (2, 0), (-1, None), ((1, 0), None)])
def test_out_dims(device: str, out_dims: Any) -> None:
    tx, x = pair(4, 2, 3, device=device)

    def f(m: Any, a: Any) -> Any:
        if isinstance(out_dims, tuple) and isinstance(out_dims[0], tuple):
            return (a.permute(1, 0), a[0] * 2), m.ones(3, dtype=m.float64)
        if isinstance(out_dims, tuple) and out_dims[1] is None:
            return a.transpose(0, 1), 7
        return a.permute(1, 0), a.sum(0).unsqueeze(0)

    both(f, (tx,), (x,), out_dims=out_dims)


def test_returns_input_unchanged_and_unbatched_outputs(device: str) -> None:
    (tx, x), (tw, w) = pair(4, 3, device=device), pair(3, device=device, seed=1)
    both(lambda m, a, b: (a, b, b * 2), (tx, tw), (x, w), in_dims=(0, None))
    got = both(lambda m, a, b: (a, b * 2), (tx, tw), (x, w), in_dims=(0, None), out_dims=(1, 0))
    assert tuple(got[1].shape) == (4, 3)
    both(lambda m, a: m.ones(2, dtype=m.float64), (tx,), (x,))
    # NOTE: torch 2.13 fails to expand an unbatched output to a non-zero out_dim
    check(ag.vmap(lambda a: ag.arange(2.0, dtype=ag.float64), out_dims=1)(x),
          torch.arange(2.0, dtype=torch.float64).unsqueeze(1).expand(2, 4))
    both(lambda m, a: m.stack([a, a * 3], -1), (tx,), (x,), in_dims=1)


def test_single_output_with_tuple_out_dims(device: str) -> None:
    tx, x = pair(4, 3, device=device)
    both(lambda m, a: a * 2, (tx,), (x,), out_dims=(1,))


# ---- nesting -----------------------------------------------------------------------------------

@pytest.mark.parametrize("outer,inner", [(0, 0), (1, 0), (0, 1), (-1, -1), (2, 0)])
def test_nested_vmap(device: str, outer: int, inner: int) -> None:
    tx, x = pair(2, 3, 4, device=device)

    def f(m: Any, a: Any) -> Any:
        return m.matmul(a.unsqueeze(0), a.unsqueeze(1)) + a.sum()

    want = tf.vmap(tf.vmap(functools.partial(f, torch), in_dims=inner), in_dims=outer)(tx)
    got = ag.vmap(ag.vmap(functools.partial(f, ag), in_dims=inner), in_dims=outer)(x)
    check(got, want)


def test_nested_vmap_captures_outer_batched_tensor(device: str) -> None:
    (tx, x), (ty, y) = pair(3, 4, device=device), pair(5, 4, device=device, seed=1)

    def outer(m: Any, fn: Any, a: Any, b: Any) -> Any:
        return fn(lambda bi: (a * bi).sum() + m.stack([a, bi]).sum(0))(b)

    want = tf.vmap(lambda a: outer(torch, tf.vmap, a, ty))(tx)
    got = ag.vmap(lambda a: outer(ag, ag.vmap, a, y))(x)
    check(got, want)
    assert tuple(got.shape) == (3, 5, 4)
    want = tf.vmap(lambda a, b: outer(torch, tf.vmap, a, b), in_dims=(0, None))(tx, ty)
    got = ag.vmap(lambda a, b: outer(ag, ag.vmap, a, b), in_dims=(0, None))(x, y)
    check(got, want)


# ---- chunk_size, randomness, kwargs ------------------------------------------------------------

@pytest.mark.parametrize("chunk_size", [1, 2, 3, 5, 100])
def test_chunk_size_equals_unchunked(device: str, chunk_size: int) -> None:
    (tx, x), (tw, w) = pair(6, 3, device=device), pair(3, 2, device=device, seed=1)

    def f(m: Any, a: Any, b: Any) -> Any:
        return m.matmul(a, b), b.sum(), (a * 2).unsqueeze(1)

    kw = {"in_dims": (0, None), "out_dims": (0, 0, 1)}
    got = both(f, (tx, tw), (x, w), chunk_size=chunk_size, **kw)
    check(got, ag.vmap(functools.partial(f, ag), **kw)(x, w))
    both(lambda m, a, b: f(m, a, b)[::2], (tx.t(), tw), (x.t(), w), chunk_size=chunk_size,
         in_dims=(1, None), out_dims=-1)
    # NOTE: torch 2.13 cannot chunk an out_dims None output (it cats along dim None)
    kw = {"in_dims": (0, None), "out_dims": (0, None, 1)}
    got = ag.vmap(functools.partial(f, ag), chunk_size=chunk_size, **kw)(x, w)
    check(got, tf.vmap(functools.partial(f, torch), **kw)(tx, tw))


@pytest.mark.parametrize("kw", [{"randomness": "sometimes"}, {"randomness": "Same"},
                                {"randomness": ""}, {"chunk_size": 0}, {"chunk_size": -1}])
def test_randomness_and_chunk_size_validation(kw: dict[str, Any]) -> None:
    tx, x = pair(3)
    raises_like(lambda: ag.vmap(ag.sin, **kw)(x), lambda: tf.vmap(torch.sin, **kw)(tx))


@pytest.mark.parametrize("randomness", ["error", "different", "same"])
def test_randomness_values_accepted(randomness: str) -> None:
    tx, x = pair(3)
    check(ag.vmap(ag.sin, randomness=randomness)(x),
          tf.vmap(torch.sin, randomness=randomness)(tx))


def test_kwargs_are_not_batched(device: str) -> None:
    (tx, x), (ts, s) = pair(4, 3, device=device), pair(3, device=device, seed=1)

    def f(m: Any, a: Any, *, scale: Any, power: int) -> Any:
        return a * scale ** power

    want = tf.vmap(functools.partial(f, torch))(tx, scale=ts, power=2)
    got = ag.vmap(functools.partial(f, ag))(x, scale=s, power=2)
    check(got, want)


# ---- errors: the first sentence of each equals torch's ----------------------------------------

def f_add(a: Any, b: Any) -> Any:
    return a + b


ERROR_CASES = [  # (vmap kwargs, which of [x, y, 3.0] are the two arguments)
    ({"in_dims": [0, 0]}, (0, 0)),
    ({"in_dims": 0.5}, (0, 0)),
    ({"in_dims": "0"}, (0, 0)),
    ({"in_dims": (0, 0, 0)}, (0, 0)),
    ({"in_dims": ((0,), 0)}, (0, 0)),
    ({"in_dims": (0, 1.5)}, (0, 0)),
    ({"in_dims": (0, 0)}, (0, 2)),
    ({"in_dims": 2}, (0, 0)),
    ({"in_dims": (0, -3)}, (0, 0)),
    ({"in_dims": None}, (0, 0)),
    ({"in_dims": (None, None)}, (0, 0)),
    ({"in_dims": 0}, (0, 1)),
    ({"in_dims": (0, None), "out_dims": None}, (0, 1)),
    ({"out_dims": 2}, (0, 0)),
    ({"out_dims": -3}, (0, 0)),
    ({"out_dims": (0, 0)}, (0, 0)),
    ({"out_dims": "a"}, (0, 0)),
    ({"out_dims": (1.5,)}, (0, 0)),
    ({"out_dims": [0]}, (0, 0)),
]


@pytest.mark.parametrize("kw,which", ERROR_CASES)
def test_argument_errors(kw: dict[str, Any], which: tuple[int, int]) -> None:
    (tx, x), (ty, y) = pair(3, 4), pair(2, 4, seed=1)
    targs, args = [tx, ty, 3.0], [x, y, 3.0]
    i, j = which
    raises_like(lambda: ag.vmap(f_add, **kw)(args[i], args[j]),
                lambda: tf.vmap(f_add, **kw)(targs[i], targs[j]))


def test_error_messages() -> None:
    (tx, x), (ty, y) = pair(3, 4), pair(2, 4, seed=1)
    raises_like(lambda: ag.vmap(f_add)(), lambda: tf.vmap(f_add)())
    raises_like(lambda: ag.vmap(lambda a: (a, 1.0))(x), lambda: tf.vmap(lambda a: (a, 1.0))(tx))
    raises_like(lambda: ag.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(x),
                lambda: tf.vmap(lambda a: (a, a), out_dims=(0, 0, 0))(tx))
    raises_like(lambda: ag.vmap(lambda a: [a, a], out_dims=(0, None))(x),
                lambda: tf.vmap(lambda a: [a, a], out_dims=(0, None))(tx))
    part = functools.partial(f_add, b=y[0])
    raises_like(lambda: ag.vmap(part, in_dims=2)(x), lambda: tf.vmap(
        functools.partial(f_add, b=ty[0]), in_dims=2)(tx))


def test_out_dims_none_for_non_tensor_and_unbatched_outputs() -> None:
    (tx, x), (tw, w) = pair(3, 4), pair(4, seed=1)
    got = ag.vmap(lambda a, b: (a.sum(), "tag", b * 2), in_dims=(0, None),
                  out_dims=(0, None, None))(x, w)
    want = tf.vmap(lambda a, b: (a.sum(), "tag", b * 2), in_dims=(0, None),
                   out_dims=(0, None, None))(tx, tw)
    check(got, want)


def test_data_dependent_python_errors() -> None:
    tx, x = pair(3)
    raises_like(lambda: ag.vmap(lambda a: a.sum().item())(x),
                lambda: tf.vmap(lambda a: a.sum().item())(tx))
    raises_like(lambda: ag.vmap(lambda a: float(a.sum()))(x),
                lambda: tf.vmap(lambda a: float(a.sum()))(tx))
    raises_like(lambda: ag.vmap(lambda a: int(a.sum()))(x),
                lambda: tf.vmap(lambda a: int(a.sum()))(tx))
    raises_like(lambda: ag.vmap(lambda a: bool(a.sum()))(x),
                lambda: tf.vmap(lambda a: bool(a.sum()))(tx))
    raises_like(lambda: ag.vmap(lambda a: a * 2 if a.sum() > 0 else a)(x),
                lambda: tf.vmap(lambda a: a * 2 if a.sum() > 0 else a)(tx))


def test_backward_inside_vmap_errors() -> None:
    tx, x = pair(3, 2)
    tx.requires_grad_()
    x.requires_grad_()
    raises_like(lambda: ag.vmap(lambda a: (a * 2).sum().backward())(x),
                lambda: tf.vmap(lambda a: (a * 2).sum().backward())(tx))


def test_batched_tensor_repr() -> None:
    seen = []
    x = ag.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=ag.float64)
    ag.vmap(lambda a: seen.append(repr(a)) or a, in_dims=1)(x)
    assert isinstance(ag.vmap(lambda a: a)(x), ag.Tensor)
    assert re.fullmatch(r"BatchedTensor\(lvl=\d+, bdim=1, value=\n"
                        r"    tensor\(\[\[1\., 2\.\],\n"
                        r"            \[3\., 4\.\]\], dtype=torch\.float64\)\n\)", seen[0]), seen[0]
    inner: list[Any] = []
    ag.vmap(ag.vmap(lambda a: inner.append(a) or a))(x)
    assert isinstance(inner[0], BatchedTensor) and isinstance(inner[0]._value, BatchedTensor)
    assert repr(inner[0]).startswith("BatchedTensor(lvl=")
    assert re.fullmatch(r"BatchedTensor\(lvl=\d+, bdim=0, value=\n    BatchedTensor\(lvl=\d+, bdim=0, "
                        r"value=\n        tensor\(\[\[1\., 2\.\],\n                \[3\., 4\.\]\], "
                        r"dtype=torch\.float64\)\n    \)\n\)", repr(inner[0])), repr(inner[0])
