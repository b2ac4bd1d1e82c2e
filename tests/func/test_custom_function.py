"""Custom ``autograd.Function`` under the func transforms, against torch.func with the same
Functions written for both libraries (float64): grad/vjp/jacrev/jacfwd/hessian through their
backward, vmap through a ``vmap`` staticmethod or ``generate_vmap_rule``, and the errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.func as tf

import autograd_gpu as ag
from autograd_gpu import func as af
from tests.func._helpers import check, check_fd, no_fallbacks, numeric_jacobian, pair  # noqa: F401
from tests.func._helpers import raises_like


def functions(lib: Any) -> Any:
    """The same custom Functions for ``lib`` (torch or autograd_gpu). ``jvp`` staticmethods are
    there for torch's forward mode; autograd_gpu's jvp is double-vjp and never calls them."""
    F = lib.autograd.Function

    class MyExp(F):
        generate_vmap_rule = True

        @staticmethod
        def forward(x: Any) -> Any:
            return x.exp()

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(output)  # NOTE: the derivative is the output itself
            ctx.save_for_forward(output)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (y,) = ctx.saved_tensors
            return grad * y

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            (y,) = ctx.saved_tensors
            return t * y

    class MySin(F):
        generate_vmap_rule = True

        @staticmethod
        def forward(x: Any) -> Any:
            return x.sin()

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(inputs[0])
            ctx.save_for_forward(inputs[0])

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            return grad * x.cos()  # differentiable: hessian goes through it

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            (x,) = ctx.saved_tensors
            return t * x.cos()

    class MyLinear(F):
        """``x @ w.T + b``; the gradient of ``b`` comes back unreduced (broadcast shape)."""

        generate_vmap_rule = True

        @staticmethod
        def forward(x: Any, w: Any, b: Any) -> Any:
            return x @ w.t() + b

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            x, w, b = inputs
            ctx.save_for_backward(x, w)
            ctx.save_for_forward(x, w)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            x, w = ctx.saved_tensors
            return grad @ w, grad.t() @ x, grad

        @staticmethod
        def jvp(ctx: Any, tx: Any, tw: Any, tb: Any) -> Any:
            x, w = ctx.saved_tensors
            return tx @ w.t() + x @ tw.t() + tb

    class MySum(F):
        """Keeps a shape from setup_context: under vmap it must be the per-sample shape."""

        generate_vmap_rule = True

        @staticmethod
        def forward(x: Any) -> Any:
            return x.sum()

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.shape = tuple(inputs[0].shape)

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad.expand(*ctx.shape)

        @staticmethod
        def jvp(ctx: Any, t: Any) -> Any:
            return t.sum()

    class MyTwo(F):
        """Two outputs; a loss using one of them gets materialized zeros for the other."""

        generate_vmap_rule = True

        @staticmethod
        def forward(x: Any) -> Any:
            return x.exp(), x.sin()

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(inputs[0], output[0])

        @staticmethod
        def backward(ctx: Any, g_exp: Any, g_sin: Any) -> Any:
            x, y = ctx.saved_tensors
            return g_exp * y + g_sin * x.cos()

    class MyCube(F):
        """A hand-written ``vmap`` staticmethod instead of a generated rule."""

        @staticmethod
        def forward(x: Any, k: float) -> Any:
            return x ** 3 * k

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            ctx.save_for_backward(inputs[0])
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            (x,) = ctx.saved_tensors
            return grad * 3 * x ** 2 * ctx.k, None

        @staticmethod
        def vmap(info: Any, in_dims: Any, x: Any, k: float) -> Any:
            CALLS.append((info.batch_size, info.randomness, in_dims))
            return MyCube.apply(x, k), in_dims[0]

    return {"exp": MyExp, "sin": MySin, "linear": MyLinear, "sum": MySum, "two": MyTwo,
            "cube": MyCube}


CALLS: list[Any] = []
FT, FA = functions(torch), functions(ag)


def both(name: str, fn: Any) -> tuple[Any, Any]:
    """``fn(F, lib)`` for torch's and for our version of Function ``name``."""
    return (lambda *a: fn(FT[name], torch)(*a)), (lambda *a: fn(FA[name], ag)(*a))


UNARY = {
    "exp": lambda F, m: lambda x: F.apply(x),
    "sin": lambda F, m: lambda x: F.apply(x),
    "sum": lambda F, m: lambda x: F.apply(x),
    "two": lambda F, m: lambda x: F.apply(x)[0] * 2 + F.apply(x)[1],
}


def unary(name: str, lib: Any) -> Any:
    fns = FT if lib is torch else FA
    if name == "exp_sin":
        return lambda x: fns["sin"].apply(fns["exp"].apply(x * 0.5))
    return UNARY[name](fns[name], lib)


# ---- grad, vjp, jacrev, jacfwd, hessian through backward --------------------------------------

@pytest.mark.parametrize("name", ["exp", "sin", "sum", "exp_sin"])
def test_transforms_through_backward(device: str, name: str) -> None:
    tx, x = pair(2, 3, device=device)
    ft, fa = unary(name, torch), unary(name, ag)
    check(af.grad(lambda x: fa(x).sum())(x), tf.grad(lambda x: ft(x).sum())(tx))
    out, vjp_fn = af.vjp(fa, x)
    t_out, t_vjp = tf.vjp(ft, tx)
    check(out, t_out)
    check(vjp_fn(ag.ones_like(out)), t_vjp(torch.ones_like(t_out)))
    check(af.jacrev(fa)(x), tf.jacrev(ft)(tx))
    check(af.jvp(fa, (x,), (ag.ones_like(x),)), tf.jvp(ft, (tx,), (torch.ones_like(tx),)))
    jac = af.jacfwd(fa)(x)
    check(jac, tf.jacfwd(ft)(tx))
    check_fd(jac, numeric_jacobian(fa, [x]))
    if name != "sum":  # NOTE: MySum's backward (expand) is linear: its Hessian is 0 either way
        check(af.hessian(lambda x: fa(x).sum())(x), tf.hessian(lambda x: ft(x).sum())(tx))


def test_two_outputs_materialized_grads(device: str) -> None:
    tx, x = pair(4, device=device)
    got = af.grad(lambda x: FA["two"].apply(x)[0].sum())(x)
    check(got, torch.autograd.grad(FT["two"].apply(tx.requires_grad_())[0].sum(), tx)[0])
    check(af.vmap(af.grad(lambda x: FA["two"].apply(x)[1].sum()))(x),
          tx.detach().cos())


def test_linear_all_argnums(device: str) -> None:
    (tx, x), (tw, w), (tb, b) = pair(5, 3, device=device), pair(2, 3, device=device), \
        pair(2, device=device)

    def loss(F: Any, m: Any) -> Any:
        return lambda x, w, b: (F.apply(x, w, b).sin() * 1.5).sum()

    lt, la = both("linear", loss)
    check(af.grad(la, argnums=(0, 1, 2))(x, w, b), tf.grad(lt, argnums=(0, 1, 2))(tx, tw, tb))
    check(af.jacrev(lambda w: FA["linear"].apply(x, w, b), argnums=0)(w),
          tf.jacrev(lambda w: FT["linear"].apply(tx, w, tb))(tw))


def test_requires_grad_outside_transform(device: str) -> None:
    """A transform whose input requires grad keeps the graph: backward reaches the leaf."""
    tx, x = pair(3, device=device)
    x.requires_grad_()
    tx.requires_grad_()
    af.grad(lambda x: FA["exp"].apply(x).sum())(x).sum().backward()
    tf.grad(lambda x: FT["exp"].apply(x).sum())(tx).sum().backward()
    check(x.grad, tx.grad)


# ---- vmap: generated rule ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["exp", "sin", "sum", "two", "exp_sin"])
def test_vmap_generated_rule(device: str, name: str) -> None:
    tx, x = pair(4, 3, device=device)
    ft, fa = unary(name, torch), unary(name, ag)
    check(af.vmap(fa)(x), tf.vmap(ft)(tx))
    check(af.vmap(fa, in_dims=1)(x), tf.vmap(ft, in_dims=1)(tx))
    check(af.vmap(af.vmap(fa))(x), tf.vmap(tf.vmap(ft))(tx))


@pytest.mark.parametrize("name", ["exp", "sin", "sum", "exp_sin"])
def test_vmap_grad_and_jacrev(device: str, name: str) -> None:
    tx, x = pair(4, 3, device=device)
    ft, fa = unary(name, torch), unary(name, ag)
    want = tf.vmap(tf.grad(lambda x: ft(x).sum()))(tx)
    check(af.vmap(af.grad(lambda x: fa(x).sum()))(x), want)
    check(af.vmap(af.grad(lambda x: fa(x).sum()), in_dims=1)(x),
          tf.vmap(tf.grad(lambda x: ft(x).sum()), in_dims=1)(tx))
    check(af.vmap(af.jacrev(fa))(x), tf.vmap(tf.jacrev(ft))(tx))
    # grad outside vmap: the generated Function's backward runs after vmap has returned
    check(af.grad(lambda x: af.vmap(fa)(x).sum())(x), tf.grad(lambda x: tf.vmap(ft)(x).sum())(tx))
    # nested vmaps around grad: two generated levels, two fresh backward levels
    check(af.vmap(af.vmap(af.grad(lambda x: fa(x).sum())))(x.reshape(2, 2, 3)),
          tf.vmap(tf.vmap(tf.grad(lambda x: ft(x).sum())))(tx.reshape(2, 2, 3)))


def test_vmap_hessian_through_generated_rule(device: str) -> None:
    tx, x = pair(3, 2, device=device)
    got = af.vmap(af.hessian(lambda x: FA["sin"].apply(x).sum()))(x)
    want = tf.vmap(tf.jacrev(tf.jacrev(lambda x: FT["sin"].apply(x).sum())))(tx)
    check(got, want)


@pytest.mark.parametrize("in_dims", [(0, None, None), (0, 0, 0), (None, 0, None), (1, None, 0)])
def test_vmap_linear_unbatched_args(device: str, in_dims: Any) -> None:
    """Arguments not batched get their gradient summed over the batch; the bias gradient comes
    back in broadcast shape and is reduced per sample."""
    n = 4
    shapes = {0: (n, 5, 3), 1: (5, n, 3), None: (5, 3)}
    (tx, x) = pair(*shapes[in_dims[0]], device=device)
    (tw, w) = pair(*((n, 2, 3) if in_dims[1] == 0 else (2, 3)), device=device, seed=1)
    (tb, b) = pair(*((n, 2) if in_dims[2] == 0 else (2,)), device=device, seed=2)

    def loss(F: Any, m: Any) -> Any:
        return lambda x, w, b: (F.apply(x, w, b).sin()).sum()

    lt, la = both("linear", loss)
    check(af.vmap(FA["linear"].apply, in_dims=in_dims)(x, w, b),
          tf.vmap(FT["linear"].apply, in_dims=in_dims)(tx, tw, tb))
    check(af.vmap(af.grad(la, argnums=(0, 1, 2)), in_dims=in_dims)(x, w, b),
          tf.vmap(tf.grad(lt, argnums=(0, 1, 2)), in_dims=in_dims)(tx, tw, tb))
    check(af.grad(lambda w, b: af.vmap(la, in_dims=in_dims)(x, w, b).sum(), argnums=(0, 1))(w, b),
          tf.grad(lambda w, b: tf.vmap(lt, in_dims=in_dims)(tx, w, b).sum(), argnums=(0, 1))(tw,
                                                                                         tb))


def test_vmap_backward_to_leaf(device: str) -> None:
    """The graph is recorded on the whole-batch tensors: backward after vmap reaches leaves."""
    tx, x = pair(4, 3, device=device)
    x.requires_grad_()
    tx.requires_grad_()
    af.vmap(unary("exp_sin", ag))(x).sum().backward()
    tf.vmap(unary("exp_sin", torch))(tx).sum().backward()
    check(x.grad, tx.grad)


def test_generated_node_name() -> None:
    x = ag.tensor([[1.0, 2.0]], dtype=ag.float64, requires_grad=True)
    y = af.vmap(FA["exp"].apply)(x)
    names = []
    fn = y.grad_fn
    while fn is not None:
        names.append(fn.name())
        fn = next((f for f, _ in fn.next_functions if f is not None and f.name() != "torch::"
                   "autograd::AccumulateGrad"), None)
    assert "VmappedMyExpBackward" in names, names


# ---- vmap: a vmap staticmethod -----------------------------------------------------------------

def test_vmap_staticmethod(device: str) -> None:
    tx, x = pair(4, 3, device=device)
    CALLS.clear()
    got = af.vmap(lambda x: FA["cube"].apply(x, 2.0), in_dims=1, randomness="same")(x)
    ours = list(CALLS)
    CALLS.clear()
    want = tf.vmap(lambda x: FT["cube"].apply(x, 2.0), in_dims=1, randomness="same")(tx)
    check(got, want)
    assert ours == CALLS == [(3, "same", (1, None))]
    g = af.vmap(af.grad(lambda x: FA["cube"].apply(x, 2.0).sum()))(x)
    check(g, tf.vmap(tf.grad(lambda x: FT["cube"].apply(x, 2.0).sum()))(tx))
    check(af.vmap(af.vmap(lambda x: FA["cube"].apply(x, 2.0)))(x),
          tf.vmap(tf.vmap(lambda x: FT["cube"].apply(x, 2.0)))(tx))


def make_identity(lib: Any, out_dims: Any) -> Any:
    class Ident(lib.autograd.Function):
        @staticmethod
        def forward(x: Any) -> Any:
            return x

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            pass

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad

        @staticmethod
        def vmap(info: Any, in_dims: Any, x: Any) -> Any:
            return (x, x * 2), out_dims

    return Ident


def test_vmap_staticmethod_keeps_identity_and_structure(device: str) -> None:
    x = ag.tensor(np.arange(6.0).reshape(2, 3), device=device)
    seen = []

    def f(x: Any) -> Any:
        out = make_identity(ag, (0, 1)).apply(x)
        seen.append(out[0] is x)
        return out

    a, b = af.vmap(f)(x)
    check((a, b), tf.vmap(lambda x: make_identity(torch, (0, 1)).apply(x))(
        torch.arange(6.0, dtype=torch.float64).reshape(2, 3)))
    assert seen == [True]


# ---- errors ------------------------------------------------------------------------------------

def old_style(lib: Any) -> Any:
    class Old(lib.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any) -> Any:
            return x * 2

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 2

    return Old


def no_vmap_rule(lib: Any, generate: bool = False, override: bool = False) -> Any:
    class NoRule(lib.autograd.Function):
        generate_vmap_rule = generate

        @staticmethod
        def forward(x: Any) -> Any:
            return x * 2

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            pass

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad * 2

    if override:
        NoRule.vmap = staticmethod(lambda info, in_dims, x: (x * 2, 0))  # type: ignore
    return NoRule


def bad_vmap(lib: Any, result: Any) -> Any:
    class Bad(no_vmap_rule(lib)):  # type: ignore[misc]
        @staticmethod
        def vmap(info: Any, in_dims: Any, x: Any) -> Any:
            return result(x)

    return Bad


def test_setup_context_required_under_transforms() -> None:
    tx, x = pair(3)
    Ot, Oa = old_style(torch), old_style(ag)
    msg = raises_like(lambda: af.grad(lambda x: Oa.apply(x).sum())(x),
                      lambda: tf.grad(lambda x: Ot.apply(x).sum())(tx))
    assert msg.startswith("In order to use an autograd.Function with functorch transforms")
    raises_like(lambda: af.vmap(Oa.apply)(x), lambda: tf.vmap(Ot.apply)(tx))
    raises_like(lambda: af.vjp(Oa.apply, x), lambda: tf.vjp(Ot.apply, tx))
    raises_like(lambda: af.jacrev(Oa.apply)(x), lambda: tf.jacrev(Ot.apply)(tx))
    # outside transforms the old style still works
    y = Oa.apply(x.clone().requires_grad_())
    assert y.grad_fn is not None


@pytest.mark.parametrize("kw", [{}, {"generate": True, "override": True}])
def test_vmap_rule_errors(kw: Any) -> None:
    tx, x = pair(2, 3)
    Nt, Na = no_vmap_rule(torch, **kw), no_vmap_rule(ag, **kw)
    msg = raises_like(lambda: af.vmap(Na.apply)(x), lambda: tf.vmap(Nt.apply)(tx))
    assert msg.startswith("You tried to vmap over NoRule")
    # grad alone needs no vmap rule
    Nt, Na = no_vmap_rule(torch), no_vmap_rule(ag)
    check(af.grad(lambda x: Na.apply(x).sum())(x), tf.grad(lambda x: Nt.apply(x).sum())(tx))
    with pytest.raises(NotImplementedError, match="To use autograd.Function with vmap"):
        ag.autograd.Function.vmap(None, (0,), x)


@pytest.mark.parametrize("result", [lambda x: x * 2, lambda x: (x, 0, 1),
                                    lambda x: ((x, x), (0, 0, 0))])
def test_vmap_staticmethod_bad_returns(result: Any) -> None:
    tx, x = pair(2, 3)
    Bt, Ba = bad_vmap(torch, result), bad_vmap(ag, result)
    raises_like(lambda: af.vmap(Ba.apply)(x), lambda: tf.vmap(Bt.apply)(tx))


def test_kwarg_tensor_under_vmap() -> None:
    class K(ag.autograd.Function):
        generate_vmap_rule = True

        @staticmethod
        def forward(x: Any, *, y: Any = None) -> Any:
            return x * y

        @staticmethod
        def setup_context(ctx: Any, inputs: Any, output: Any) -> None:
            pass

        @staticmethod
        def backward(ctx: Any, grad: Any) -> Any:
            return grad

    x = ag.ones(2, 3)
    with pytest.raises(NotImplementedError, match="Run vmap on autograd.Function with kwarg-only"):
        af.vmap(lambda x: K.apply(x, y=x))(x)
