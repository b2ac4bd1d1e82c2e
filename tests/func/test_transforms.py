"""grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian and their compositions, in float64,
against torch.func on the same inputs and against central finite differences."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.func as tf

import autograd_gpu as ag
from autograd_gpu import func as af
from tests.func._helpers import (check, check_fd, no_fallbacks, npy,  # noqa: F401
                                 numeric_jacobian, pair, raises_like)

LIBS = {"torch": (torch, tf), "ag": (ag, af)}


def f_scalar(m: Any, x: Any) -> Any:
    return (m.sin(x) * x ** 2).sum()


def f3(m: Any, x: Any, y: Any, z: Any) -> Any:
    return (x * m.sin(y) * z.exp()).sum()


# ---- grad / grad_and_value ---------------------------------------------------------------------

def test_grad_matches_torch_and_fd(device: str) -> None:
    tx, x = pair(2, 3, device=device)
    got = af.grad(lambda x: f_scalar(ag, x))(x)
    check(got, tf.grad(lambda x: f_scalar(torch, x))(tx))
    check_fd(got, numeric_jacobian(lambda x: f_scalar(ag, x), [x]))
    assert not got.requires_grad


@pytest.mark.parametrize("argnums", [1, -1, (0, 2), (-1, 0), (2,)])
def test_grad_argnums(device: str, argnums: Any) -> None:
    ts, xs = zip(*[pair(3, device=device, seed=s) for s in range(3)])
    got = af.grad(lambda *a: f3(ag, *a), argnums=argnums)(*xs)
    check(got, tf.grad(lambda *a: f3(torch, *a), argnums=argnums)(*ts))
    nums = argnums if isinstance(argnums, tuple) else (argnums,)
    gs = got if isinstance(argnums, tuple) else (got,)
    for n, g in zip(nums, gs):
        check_fd(g, numeric_jacobian(lambda *a: f3(ag, *a), list(xs), n % 3))


def test_grad_pytree_args(device: str) -> None:
    (ta, a), (tb, b), (tc, c) = pair(3, device=device), pair(2, device=device), pair(
        2, 2, device=device)

    def f(m: Any, d: Any, lst: Any, tup: Any) -> Any:
        return (d["u"].sin() * d["v"]).sum() + (lst[0] ** 3).sum() * tup[0][0].exp().sum()

    got = af.grad(lambda *a: f(ag, *a), argnums=(0, 1, 2))(
        {"u": a, "v": a * 2}, [b], ((c,),))
    want = tf.grad(lambda *a: f(torch, *a), argnums=(0, 1, 2))(
        {"u": ta, "v": ta * 2}, [tb], ((tc,),))
    check(got, want)
    assert isinstance(got[0], dict) and isinstance(got[1], list) and isinstance(got[2], tuple)


def test_grad_and_value_has_aux_kwargs(device: str) -> None:
    tx, x = pair(4, device=device)

    def f(m: Any, x: Any, *, scale: float, shift: Any) -> Any:
        loss = (m.tanh(x) * scale + shift).sum()
        return loss, {"double": x * 2, "loss": loss}

    tshift, shift = pair(4, device=device, seed=5)
    got = af.grad_and_value(lambda x, **k: f(ag, x, **k), has_aux=True)(x, scale=2.5, shift=shift)
    want = tf.grad_and_value(lambda x, **k: f(torch, x, **k), has_aux=True)(
        tx, scale=2.5, shift=tshift)
    check(got, want)
    g, aux = af.grad(lambda x, **k: f(ag, x, **k), has_aux=True)(x, scale=2.5, shift=shift)
    check((g, aux), tf.grad(lambda x, **k: f(torch, x, **k), has_aux=True)(
        tx, scale=2.5, shift=tshift))
    assert not aux["double"].requires_grad and not aux["loss"].requires_grad


def test_grad_under_no_grad_still_computes(device: str) -> None:
    tx, x = pair(3, device=device)
    with ag.no_grad():
        got = af.grad(lambda x: f_scalar(ag, x))(x)
    with torch.no_grad():
        want = tf.grad(lambda x: f_scalar(torch, x))(tx)
    check(got, want)
    assert not got.requires_grad


def test_grad_differentiable_when_input_requires_grad(device: str) -> None:
    tx, x = pair(3, device=device)
    x.requires_grad_()
    tx.requires_grad_()
    g = af.grad(lambda x: f_scalar(ag, x))(x)
    tg = tf.grad(lambda x: f_scalar(torch, x))(tx)
    assert g.requires_grad and tg.requires_grad
    g.sum().backward()
    tg.sum().backward()
    check(x.grad, tx.grad)
    hess = numeric_jacobian(lambda x: af.grad(lambda y: f_scalar(ag, y))(x), [x.detach()])
    check_fd(x.grad, hess.sum(0))
    # the value of grad_and_value stays on the graph too
    _, v = af.grad_and_value(lambda x: f_scalar(ag, x))(x)
    assert v.requires_grad


@pytest.mark.parametrize("bad", [3, -4, (0, 0), (), 1.5, [0], (0, "a")])
def test_grad_argnums_errors(bad: Any) -> None:
    tx, x = pair(3)
    raises_like(lambda: af.grad(lambda x, y: (x * y).sum(), argnums=bad)(x, x),
                lambda: tf.grad(lambda x, y: (x * y).sum(), argnums=bad)(tx, tx))


def test_grad_errors() -> None:
    tx, x = pair(3)
    msg = raises_like(lambda: af.grad(lambda x: x.sin())(x), lambda: tf.grad(torch.sin)(tx))
    assert msg == ("grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                   "tensor with 1 dims")
    raises_like(lambda: af.grad(lambda x: 1.0)(x), lambda: tf.grad(lambda x: 1.0)(tx))
    raises_like(lambda: af.grad(lambda x: x.sum(), has_aux=True)(x),
                lambda: tf.grad(lambda x: x.sum(), has_aux=True)(tx))
    raises_like(lambda: af.grad(lambda x: (x.sum(), 1, 2), has_aux=True)(x),
                lambda: tf.grad(lambda x: (x.sum(), 1, 2), has_aux=True)(tx))
    raises_like(lambda: af.grad(lambda x: (x.sum(), {"n": 3}), has_aux=True)(x),
                lambda: tf.grad(lambda x: (x.sum(), {"n": 3}), has_aux=True)(tx))
    raises_like(lambda: af.grad(lambda x: x.sum())(3.0), lambda: tf.grad(lambda x: x.sum())(3.0))


# ---- vjp ---------------------------------------------------------------------------------------

def fv(m: Any, x: Any, y: Any) -> Any:
    return (x * y, {"s": m.sin(x).sum(), "c": [m.cos(y) * x]})


def test_vjp_pytree_outputs_twice_and_fd(device: str) -> None:
    (tx, x), (ty, y) = pair(3, device=device), pair(3, device=device, seed=1)
    out, fn = af.vjp(lambda x, y: fv(ag, x, y), x, y)
    tout, tfn = tf.vjp(lambda x, y: fv(torch, x, y), tx, ty)
    check(out, tout)
    (tc0, c0), (tc1, c1) = pair(3, device=device, seed=2), pair(3, device=device, seed=3)
    cot = (c0, {"s": ag.tensor(1.5, dtype=ag.float64, device=device), "c": [c1]})
    tcot = (tc0, {"s": torch.tensor(1.5, dtype=torch.float64), "c": [tc1]})
    first = fn(cot)
    check(first, tfn(tcot))
    check(fn(cot), first)  # a second call gives the same

    def flat_out(x: Any, y: Any) -> Any:
        p, d = fv(ag, x, y)
        return ag.cat([p, d["s"].reshape(1), d["c"][0]])

    v = np.concatenate([npy(c0), [1.5], npy(c1)])
    for n in (0, 1):
        check_fd(first[n], v @ numeric_jacobian(flat_out, [x, y], n))


def test_vjp_has_aux_and_errors(device: str) -> None:
    tx, x = pair(3, device=device)
    out, fn, aux = af.vjp(lambda x: (x.exp(), {"a": x * 3}), x, has_aux=True)
    tout, tfn, taux = tf.vjp(lambda x: (x.exp(), {"a": x * 3}), tx, has_aux=True)
    check((out, aux), (tout, taux))
    tc, c = pair(3, device=device, seed=9)
    check(fn(c), tfn(tc))
    raises_like(lambda: fn((c, c)), lambda: tfn((tc, tc)))
    raises_like(lambda: fn([c]), lambda: tfn([tc]))
    raises_like(lambda: af.vjp(lambda x: x, x, has_aux=True),
                lambda: tf.vjp(lambda x: x, tx, has_aux=True))
    raises_like(lambda: af.vjp(lambda x: (x, 1), x), lambda: tf.vjp(lambda x: (x, 1), tx))


# ---- jvp ---------------------------------------------------------------------------------------

def test_jvp_pytrees_and_fd(device: str) -> None:
    (tx, x), (ty, y) = pair(3, device=device), pair(3, device=device, seed=1)
    (tu, u), (tv, v) = pair(3, device=device, seed=2), pair(3, device=device, seed=3)

    def f(m: Any, x: Any, d: Any) -> Any:
        return {"p": x * d["y"].sin(), "q": (x ** 2).sum() * d["y"]}

    out, jo = af.jvp(lambda x, d: f(ag, x, d), (x, {"y": y}), (u, {"y": v}))
    tout, tjo = tf.jvp(lambda x, d: f(torch, x, d), (tx, {"y": ty}), (tu, {"y": tv}))
    check((out, jo), (tout, tjo))
    assert not jo["p"].requires_grad

    def g(x: Any, y: Any) -> Any:
        return f(ag, x, {"y": y})["p"]

    want = numeric_jacobian(g, [x, y], 0) @ npy(u) + numeric_jacobian(g, [x, y], 1) @ npy(v)
    check_fd(jo["p"], want)


def test_jvp_has_aux_unused_input_and_errors(device: str) -> None:
    (tx, x), (ty, y) = pair(3, device=device), pair(2, device=device, seed=1)
    (tu, u), (tv, v) = pair(3, device=device, seed=2), pair(2, device=device, seed=3)
    res = af.jvp(lambda x, y: (y * 2, [x]), (x, y), (u, v), has_aux=True)
    check(res, tf.jvp(lambda x, y: (y * 2, [x]), (tx, ty), (tu, tv), has_aux=True))
    # the output does not depend on x: its tangent only counts v, and x alone gives zeros
    check(af.jvp(lambda x, y: y.sin(), (x, y), (u, v)),
          tf.jvp(lambda x, y: y.sin(), (tx, ty), (tu, tv)))
    check(af.jvp(lambda x: ag.ones(2, dtype=ag.float64, device=device), (x,), (u,)),
          tf.jvp(lambda x: torch.ones(2, dtype=torch.float64), (tx,), (tu,)))
    check(af.jvp(lambda x, y: (x.sum(), y.exp()), (x, y), (ag.zeros_like(x), v)),
          tf.jvp(lambda x, y: (x.sum(), y.exp()), (tx, ty), (torch.zeros_like(tx), tv)))
    raises_like(lambda: af.jvp(ag.sin, (x,), (v,)), lambda: tf.jvp(torch.sin, (tx,), (tv,)))
    raises_like(lambda: af.jvp(ag.sin, x, u), lambda: tf.jvp(torch.sin, tx, tu))
    raises_like(lambda: af.jvp(ag.sin, (x,), (u, u)), lambda: tf.jvp(torch.sin, (tx,), (tu, tu)))
    raises_like(lambda: af.jvp(lambda x: x, (x,), (u,), has_aux=True),
                lambda: tf.jvp(lambda x: x, (tx,), (tu,), has_aux=True))


# ---- Jacobians ---------------------------------------------------------------------------------

JAC = [("jacrev", {}), ("jacrev", {"chunk_size": 1}), ("jacrev", {"chunk_size": 2}),
       ("jacrev", {"chunk_size": 100}), ("jacfwd", {})]


@pytest.mark.parametrize("name,kw", JAC)
def test_jacobian_non_scalar_shapes(device: str, name: str, kw: dict[str, Any]) -> None:
    (tx, x), (ta, a) = pair(2, 3, device=device), pair(3, 4, device=device, seed=1)

    def f(m: Any, x: Any) -> Any:
        return (m.sin(x) @ a_of(m)).sum(0)

    def a_of(m: Any) -> Any:
        return ta if m is torch else a

    got = getattr(af, name)(lambda x: f(ag, x), **kw)(x)
    check(got, getattr(tf, name)(lambda x: f(torch, x), **kw)(tx))
    assert tuple(got.shape) == (4, 2, 3)
    check_fd(got, numeric_jacobian(lambda x: f(ag, x), [x]))


@pytest.mark.parametrize("name,kw", JAC)
def test_jacobian_multi_output_argnums_pytrees(device: str, name: str, kw: dict[str, Any]) -> None:
    (tx, x), (ty, y) = pair(3, device=device), pair(2, 2, device=device, seed=1)

    def f(m: Any, x: Any, d: Any) -> Any:
        return (x.sin() * d["w"].sum(), (x ** 2).sum() * d["w"], d["w"].exp())

    got = getattr(af, name)(lambda x, d: f(ag, x, d), argnums=(0, 1), **kw)(x, {"w": y})
    want = getattr(tf, name)(lambda x, d: f(torch, x, d), argnums=(0, 1), **kw)(tx, {"w": ty})
    check(got, want)
    check_fd(got[1][0], numeric_jacobian(lambda x, y: f(ag, x, {"w": y})[1], [x, y], 0))
    check_fd(got[0][1]["w"], numeric_jacobian(lambda x, y: f(ag, x, {"w": y})[0], [x, y], 1))
    got1 = getattr(af, name)(lambda x, d: f(ag, x, d), argnums=-1, **kw)(x, {"w": y})
    # NOTE: torch 2.13's jacfwd gives zeros for a negative argnums; its jacrev is right
    check(got1, tf.jacrev(lambda x, d: f(torch, x, d), argnums=-1)(tx, {"w": ty}))


@pytest.mark.parametrize("name", ["jacrev", "jacfwd"])
def test_jacobian_has_aux(device: str, name: str) -> None:
    tx, x = pair(3, device=device)
    got = getattr(af, name)(lambda x: (x.sin(), {"a": x.cos()}), has_aux=True)(x)
    check(got, getattr(tf, name)(lambda x: (x.sin(), {"a": x.cos()}), has_aux=True)(tx))


@pytest.mark.parametrize("shape", [(3,), (2, 2)])
def test_hessian(device: str, shape: tuple[int, ...]) -> None:
    tx, x = pair(*shape, device=device)

    def f(m: Any, x: Any) -> Any:
        return (m.sin(x) * x ** 3).sum() + (x.sum()) ** 2

    got = af.hessian(lambda x: f(ag, x))(x)
    check(got, tf.hessian(lambda x: f(torch, x))(tx))
    check_fd(got, numeric_jacobian(lambda x: af.grad(lambda y: f(ag, y))(x), [x]))


# ---- compositions ------------------------------------------------------------------------------

def test_grad_of_grad(device: str) -> None:
    tx, x = pair(device=device)

    def f(m: Any, x: Any) -> Any:
        return m.sin(x) * x ** 3

    got = af.grad(af.grad(lambda x: f(ag, x)))(x)
    check(got, tf.grad(tf.grad(lambda x: f(torch, x)))(tx))
    check_fd(got, numeric_jacobian(af.grad(lambda x: f(ag, x)), [x]))
    third = af.grad(af.grad(af.grad(lambda x: f(ag, x))))(x)
    check(third, tf.grad(tf.grad(tf.grad(lambda x: f(torch, x))))(tx))


def test_perturbation_confusion(device: str) -> None:
    tx, x = pair(device=device)

    def f(lib: Any, x: Any) -> Any:
        return x * lib.grad(lambda y: x * y)(x)  # x * x, so d/dx is 2x

    got = af.grad(lambda x: f(af, x))(x)
    check(got, tf.grad(lambda x: f(tf, x))(tx))
    check(got, 2 * tx)


@pytest.mark.parametrize("outer,inner", [("jacrev", "jacrev"), ("jacfwd", "jacrev"),
                                         ("jacrev", "jacfwd"), ("jacfwd", "jacfwd")])
def test_nested_jacobians(device: str, outer: str, inner: str) -> None:
    tx, x = pair(3, device=device)

    def f(m: Any, x: Any) -> Any:
        return m.sin(x) * x.sum() + x ** 3

    got = getattr(af, outer)(getattr(af, inner)(lambda x: f(ag, x)))(x)
    check(got, getattr(tf, outer)(getattr(tf, inner)(lambda x: f(torch, x)))(tx))
    assert tuple(got.shape) == (3, 3, 3)


def loss(m: Any, w: Any, x: Any) -> Any:
    return (m.tanh(x @ w) ** 2).sum()


def test_vmap_of_grad_per_sample(device: str) -> None:
    (tw, w), (tx, x) = pair(3, 2, device=device), pair(5, 4, 3, device=device, seed=1)
    got = ag.vmap(af.grad(lambda w, x: loss(ag, w, x)), in_dims=(None, 0))(w, x)
    check(got, tf.vmap(tf.grad(lambda w, x: loss(torch, w, x)), in_dims=(None, 0))(tw, tx))
    g2 = numeric_jacobian(lambda w, x: loss(ag, w, x), [w, x[2]], 0)
    check_fd(got[2], g2)
    both = ag.vmap(af.grad(lambda w, x: loss(ag, w, x), argnums=(0, 1)), in_dims=(None, 0))(w, x)
    check(both, tf.vmap(tf.grad(lambda w, x: loss(torch, w, x), argnums=(0, 1)),
                        in_dims=(None, 0))(tw, tx))


@pytest.mark.parametrize("name", ["jacrev", "jacfwd", "hessian"])
def test_vmap_of_jacobians(device: str, name: str) -> None:
    tx, x = pair(4, 3, device=device)

    def f(m: Any, x: Any) -> Any:
        return (m.sin(x) * x.sum()).sum() if name == "hessian" else m.sin(x) * x.sum()

    got = ag.vmap(getattr(af, name)(lambda x: f(ag, x)))(x)
    check(got, tf.vmap(getattr(tf, name)(lambda x: f(torch, x)))(tx))
    assert tuple(got.shape) == (4, 3, 3)


def test_grad_of_vmap(device: str) -> None:
    (tw, w), (tx, x) = pair(3, device=device), pair(5, 3, device=device, seed=1)

    def f(m: Any, fn: Any, w: Any, x: Any) -> Any:
        return fn(lambda xi: m.sin(w * xi).sum() * (w ** 2).sum())(x).sum()

    got = af.grad(lambda w: f(ag, ag.vmap, w, x))(w)
    check(got, tf.grad(lambda w: f(torch, tf.vmap, w, tx))(tw))
    check_fd(got, numeric_jacobian(lambda w: f(ag, ag.vmap, w, x), [w]))


def test_vmap_of_vjp_fn_on_a_basis(device: str) -> None:
    tx, x = pair(3, device=device)
    out, fn = af.vjp(lambda x: x.sin() * x.sum(), x)
    tout, tfn = tf.vjp(lambda x: x.sin() * x.sum(), tx)
    basis = ag.eye(3, dtype=ag.float64, device=device)
    (rows,) = ag.vmap(fn)(basis)
    check(rows, tf.vmap(tfn)(torch.eye(3, dtype=torch.float64))[0])
    check_fd(rows, numeric_jacobian(lambda x: x.sin() * x.sum(), [x]))


def test_autograd_grad_inside_vmap_summing_over_batch_raises() -> None:
    w = ag.tensor([1.0, 2.0], dtype=ag.float64, requires_grad=True)
    xs = ag.ones(3, 2, dtype=ag.float64)
    with pytest.raises(RuntimeError, match="autograd.grad of an output batched at a vmap level "
                                           "where input 0 is not batched would sum over that"):
        ag.vmap(lambda x: ag.autograd.grad((w * x).sum(), w))(xs)
    # per-sample inputs are fine: autograd.grad w.r.t. a batched tensor is per sample
    got = ag.vmap(lambda x: ag.autograd.grad(((x * w) ** 2).sum(), x)[0])(
        xs.clone().requires_grad_())
    check(got, 2 * torch.tensor([1.0, 2.0], dtype=torch.float64) ** 2 * torch.ones(3, 2,
                                                                                  dtype=torch.float64))


def _more_compositions(lib: Any, vm: Any, fn: Any, x: Any, y: Any, xs: Any) -> dict[str, Any]:
    return {
        "vjp_unused": fn.vjp(lambda a, b: a * 2, x, y)[1](y),
        "vmap_jvp": vm(lambda a, t: fn.jvp(lambda z: z.sin() * z.sum(), (a,), (t,)))(xs, xs * 2),
        "vmap_jvp_unbatched_tangent": vm(lambda a, t: fn.jvp(lambda z: z * z, (a,), (t,))[1],
                                         in_dims=(0, None))(xs, x),
        "vmap_vjp_unbatched_primal": vm(lambda a, w: fn.vjp(lambda w: (w * a).sin(), w)[1](a),
                                        in_dims=(0, None))(xs, x),
        "jvp_of_grad": fn.jvp(fn.grad(lambda a: (a.sin() * a).sum()), (x,), (y,)),
        "vjp_of_jvp": fn.vjp(lambda a: fn.jvp(lambda z: z.exp() * z.sum(), (a,), (y,))[1],
                             x)[1](x),
        "jacrev_of_vmap": fn.jacrev(lambda w: vm(lambda a: (a * w).sin())(xs))(x),
        "jacfwd_of_vmap": fn.jacfwd(lambda w: vm(lambda a: (a * w).sin())(xs))(x),
        "grad_of_vmap_of_grad": fn.grad(lambda w: vm(fn.grad(lambda w, a: (w * a).tanh().sum()),
                                                     in_dims=(None, 0))(w, xs).sum())(x),
        "hessian_argnums": fn.hessian(lambda a, b: (a * b.sin()).sum() * a.sum(),
                                      argnums=(0, 1))(x, y),
        "jac_of_const": (fn.jacrev(lambda a: lib.ones(2, dtype=lib.float64))(x),
                         fn.jacfwd(lambda a: lib.ones(2, dtype=lib.float64))(x)),
        "grad_of_detached": fn.grad(lambda a: a.detach().sum() + (a * 0).sum())(x),
    }


def test_more_compositions(device: str) -> None:
    (tx, x), (ty, y), (txs, xs) = (pair(3, device=device), pair(3, device=device, seed=1),
                                   pair(4, 3, device=device, seed=2))
    got = _more_compositions(ag, ag.vmap, af, x, y, xs)
    want = _more_compositions(torch, tf.vmap, tf, tx, ty, txs)
    for k in want:
        check(got[k], want[k])


def test_grad_closing_over_a_tensor_that_requires_grad() -> None:
    """As in torch.func: a closed-over weight keeps grad's result on the graph."""
    w = ag.randn(3, dtype=ag.float64, requires_grad=True)
    x = ag.randn(3, dtype=ag.float64)
    wt = torch.tensor(w.detach().numpy(), requires_grad=True)
    xt = torch.tensor(x.numpy())
    g = ag.func.grad(lambda v: (w * v.sin()).sum())(x)
    gt = torch.func.grad(lambda v: (wt * v.sin()).sum())(xt)
    assert g.requires_grad and gt.requires_grad
    g.sum().backward()
    gt.sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), wt.grad.numpy(), rtol=1e-12, atol=1e-12)


def test_vmap_grad_closing_over_a_weight_that_requires_grad() -> None:
    W = ag.randn(3, 4, dtype=ag.float64, requires_grad=True)
    X = ag.randn(5, 3, dtype=ag.float64)
    Wt = torch.tensor(W.detach().numpy(), requires_grad=True)
    Xt = torch.tensor(X.numpy())
    r = ag.func.vmap(ag.func.grad(lambda x: (x @ W).tanh().sum()))(X)
    rt = torch.func.vmap(torch.func.grad(lambda x: (x @ Wt).tanh().sum()))(Xt)
    r.pow(2).sum().backward()
    rt.pow(2).sum().backward()
    np.testing.assert_allclose(r.detach().numpy(), rt.detach().numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(W.grad.numpy(), Wt.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_top_level_results_leave_the_graph() -> None:
    x = ag.randn(3, dtype=ag.float64)
    g = ag.func.grad(lambda v: (v.sin() * v).sum())(x)
    assert not g.requires_grad and g.grad_fn is None
