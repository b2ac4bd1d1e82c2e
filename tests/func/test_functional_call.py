"""``functional_call`` and ``stack_module_state`` against torch.func, in float64 with the same
weights copied into both models: nested modules, buffers, tied weights, strict keys, restoring
the module after an exception, per-sample gradients and ensembles under ``vmap``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch
import torch.func as tf

import autograd_gpu as ag
from autograd_gpu import func as af
from tests.func._helpers import check, no_fallbacks, npy, raises_like  # noqa: F401


def mlp(lib: Any) -> Any:
    """A module with a nested Sequential: dotted names two levels deep."""
    nn = lib.nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Sequential(nn.Linear(4, 6), nn.ReLU(), nn.Linear(6, 5))
            self.head = nn.Linear(5, 3)

        def forward(self, x: Any) -> Any:
            return self.head(self.body(x).relu())

    return Net().double()


def same_weights(tm: Any, am: Any, device: str, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    for (tn, tp), (an, ap) in zip(tm.named_parameters(), am.named_parameters()):
        assert tn == an
        v = rng.standard_normal(tuple(tp.shape))
        with torch.no_grad():
            tp.copy_(torch.tensor(v))
        ap.data = ag.tensor(v, device=device)
    am.to(device)


def new_state(tm: Any, device: str, seed: int = 1) -> tuple[dict[str, Any], dict[str, Any]]:
    """Fresh values for every parameter: ``(torch's dict, ours)``."""
    rng = np.random.default_rng(seed)
    vals = {k: rng.standard_normal(tuple(p.shape)) for k, p in tm.named_parameters()}
    return ({k: torch.tensor(v) for k, v in vals.items()},
            {k: ag.tensor(v, device=device) for k, v in vals.items()})


def models(device: str) -> tuple[Any, Any]:
    tm, am = mlp(torch), mlp(ag)
    same_weights(tm, am, device)
    return tm, am


def test_call_matches_torch_and_restores(device: str) -> None:
    tm, am = models(device)
    before = {k: v for k, v in am.named_parameters()}
    tp, ap = new_state(tm, device)
    tx = torch.randn(7, 4, dtype=torch.float64)
    x = ag.tensor(tx.numpy(), device=device)
    got = af.functional_call(am, ap, (x,))
    check(got, tf.functional_call(tm, tp, (tx,)))
    check(af.functional_call(am, ap, x), tf.functional_call(tm, tp, tx))  # a lone argument
    check(af.functional_call(am, ap, kwargs={"x": x}), tf.functional_call(tm, tp, kwargs={"x": tx}))
    assert dict(am.named_parameters()) == before  # the very same Parameter objects
    check(am(x), tm(tx))
    # only some names given: the others stay the module's own
    part = {"head.bias": ap["head.bias"]}
    check(af.functional_call(am, part, x), tf.functional_call(tm, {"head.bias": tp["head.bias"]},
                                                              tx))


def test_grad_over_params(device: str) -> None:
    tm, am = models(device)
    tp, ap = new_state(tm, device)
    tx = torch.randn(7, 4, dtype=torch.float64)
    x = ag.tensor(tx.numpy(), device=device)
    got = af.grad(lambda p, x: af.functional_call(am, p, x).tanh().sum())(ap, x)
    want = tf.grad(lambda p, x: tf.functional_call(tm, p, x).tanh().sum())(tp, tx)
    check(got, want)


def test_tuple_of_dicts_and_errors(device: str) -> None:
    tm, am = models(device)
    tp, ap = new_state(tm, device)
    tx = torch.randn(2, 4, dtype=torch.float64)
    x = ag.tensor(tx.numpy(), device=device)
    split_t = ({k: v for k, v in tp.items() if "body" in k},
               {k: v for k, v in tp.items() if "body" not in k})
    split_a = ({k: v for k, v in ap.items() if "body" in k},
               {k: v for k, v in ap.items() if "body" not in k})
    check(af.functional_call(am, split_a, x), tf.functional_call(tm, split_t, tx))
    check(af.functional_call(am, list(split_a), x), tf.functional_call(tm, list(split_t), tx))
    raises_like(lambda: af.functional_call(am, (ap, {"head.bias": ap["head.bias"]}), x),
                lambda: tf.functional_call(tm, (tp, {"head.bias": tp["head.bias"]}), tx))
    raises_like(lambda: af.functional_call(am, (ap, 3), x),
                lambda: tf.functional_call(tm, (tp, 3), tx))
    raises_like(lambda: af.functional_call(am, 3, x), lambda: tf.functional_call(tm, 3, tx))
    raises_like(lambda: af.functional_call(am, {"head.bias": 3.0}, x),
                lambda: tf.functional_call(tm, {"head.bias": 3.0}, tx))
    raises_like(lambda: af.functional_call(am, {"nope.bias": ap["head.bias"]}, x),
                lambda: tf.functional_call(tm, {"nope.bias": tp["head.bias"]}, tx))
    assert dict(am.named_parameters()).keys() == ap.keys()


def test_strict_keys(device: str) -> None:
    tm, am = models(device)
    tp, ap = new_state(tm, device)
    tx = torch.randn(2, 4, dtype=torch.float64)
    x = ag.tensor(tx.numpy(), device=device)
    check(af.functional_call(am, ap, x, strict=True), tf.functional_call(tm, tp, tx, strict=True))
    missing_t = {k: v for k, v in tp.items() if k != "head.weight"}
    missing_a = {k: v for k, v in ap.items() if k != "head.weight"}
    extra_t, extra_a = dict(tp, extra=tp["head.bias"]), dict(ap, extra=ap["head.bias"])
    for t_state, a_state in ((missing_t, missing_a), (extra_t, extra_a),
                             (dict(missing_t, zzz=tx), dict(missing_a, zzz=x))):
        with pytest.raises(RuntimeError) as want:
            tf.functional_call(tm, t_state, tx, strict=True)
        with pytest.raises(RuntimeError) as got:
            af.functional_call(am, a_state, x, strict=True)
        assert str(got.value) == str(want.value)
    # not strict: an unknown name becomes an attribute for the call only
    af.functional_call(am, extra_a, x)
    assert not hasattr(am, "extra")


def test_restores_after_exception(device: str) -> None:
    nn = ag.nn

    class Boom(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = nn.Linear(3, 3)
            self.register_buffer("count", ag.zeros(()))

        def forward(self, x: Any) -> Any:
            raise ValueError("boom")

    m = Boom().to(device)
    params = dict(m.named_parameters())
    buffers = dict(m.named_buffers())
    state = {"lin.weight": ag.zeros(3, 3, device=device), "count": ag.ones((), device=device),
             "new_attr": ag.ones(1, device=device)}
    with pytest.raises(ValueError, match="boom"):
        af.functional_call(m, state, ag.ones(3, device=device))
    assert dict(m.named_parameters()) == params
    assert dict(m.named_buffers()) == buffers
    assert not hasattr(m, "new_attr")


def bn_net(lib: Any) -> Any:
    nn = lib.nn
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4)).double()


@pytest.mark.parametrize("training", [True, False])
def test_buffers_batchnorm(device: str, training: bool) -> None:
    tm, am = bn_net(torch), bn_net(ag)
    same_weights(tm, am, device)
    tm.train(training)
    am.train(training)
    rng = np.random.default_rng(3)
    rm, rv = rng.standard_normal(4), rng.random(4) + 0.5
    tb = {"1.running_mean": torch.tensor(rm), "1.running_var": torch.tensor(rv)}
    ab = {"1.running_mean": ag.tensor(rm, device=device),
          "1.running_var": ag.tensor(rv, device=device)}
    own = {k: npy(v).copy() for k, v in am.named_buffers()}
    tx = torch.tensor(rng.standard_normal((6, 3)))
    x = ag.tensor(tx.numpy(), device=device)
    got = af.functional_call(am, ab, x)
    want = tf.functional_call(tm, tb, tx)
    check(got.detach(), want.detach())
    check(ab, tb)  # train mode: the given running stats were updated in place
    for k, v in am.named_buffers():
        if k in ab:
            np.testing.assert_array_equal(npy(v), own[k])  # the module's own are untouched
    # NOTE: a buffer not given (num_batches_tracked) is the module's own, updated as in torch
    check(dict(am.named_buffers()), dict(tm.named_buffers()))
    # buffers together with parameters, as a tuple of dicts
    tp, ap = new_state(tm, device)
    check(af.functional_call(am, (ap, ab), x).detach(),
          tf.functional_call(tm, (tp, tb), tx).detach())


def test_buffer_reassigned_during_call_lands_in_dict(device: str) -> None:
    def counter(lib: Any) -> Any:
        class Counter(lib.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.register_buffer("n", lib.zeros(()))

            def forward(self, x: Any) -> Any:
                self.n = self.n + 1
                return x * self.n

        return Counter()

    tm, am = counter(torch), counter(ag).to(device)
    ts, st = {"n": torch.tensor(5.0)}, {"n": ag.tensor(5.0, device=device)}
    check(af.functional_call(am, st, ag.ones(2, device=device)),
          tf.functional_call(tm, ts, torch.ones(2)))
    check(st, ts)
    assert float(am.n) == 0.0


def tied(lib: Any) -> Any:
    nn = lib.nn

    class Tied(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.foo = nn.Parameter(lib.ones(2, dtype=lib.float64))
            self.bar = nn.Linear(2, 2).double()
            self.bar.bias = self.foo  # the same Parameter under two names

        def forward(self, x: Any) -> Any:
            return x + self.foo + self.bar.bias

    return Tied()


def test_tied_weights(device: str) -> None:
    tm, am = tied(torch), tied(ag).to(device)
    x, tx = ag.zeros(2, device=device), torch.zeros(2, dtype=torch.float64)
    z, tz = ag.zeros(2, dtype=ag.float64, device=device), torch.zeros(2, dtype=torch.float64)
    o, to = ag.full((2,), 3.0, dtype=ag.float64, device=device), torch.full(
        (2,), 3.0, dtype=torch.float64)
    check(af.functional_call(am, {"foo": z}, x), tf.functional_call(tm, {"foo": tz}, tx))
    check(af.functional_call(am, {"foo": z}, x, tie_weights=False),
          tf.functional_call(tm, {"foo": tz}, tx, tie_weights=False))
    check(af.functional_call(am, {"foo": z, "bar.bias": z}, x),
          tf.functional_call(tm, {"foo": tz, "bar.bias": tz}, tx))
    check(af.functional_call(am, {"foo": z, "bar.bias": o}, x, tie_weights=False),
          tf.functional_call(tm, {"foo": tz, "bar.bias": to}, tx, tie_weights=False))
    raises_like(lambda: af.functional_call(am, {"foo": z, "bar.bias": o}, x),
                lambda: tf.functional_call(tm, {"foo": tz, "bar.bias": to}, tx))
    assert am.bar.bias is am.foo


# ---- under vmap --------------------------------------------------------------------------------

def classifier(lib: Any) -> Any:
    nn = lib.nn
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3)).double()


def test_per_sample_grads(device: str) -> None:
    """The key use: per-sample gradients of a loss through functional_call, batched once (the
    autouse fixture checks that no op fell back to the per-sample loop)."""
    tm, am = classifier(torch), classifier(ag)
    same_weights(tm, am, device)
    rng = np.random.default_rng(5)
    xs, ys = rng.standard_normal((6, 4)), rng.integers(0, 3, 6)
    tx, ty = torch.tensor(xs), torch.tensor(ys)
    x, y = ag.tensor(xs, device=device), ag.tensor(ys, device=device)

    def loss(lib: Any, call: Any, m: Any) -> Any:
        def f(params: Any, x: Any, y: Any) -> Any:
            out = call(m, params, (x.unsqueeze(0),))
            return lib.nn.functional.cross_entropy(out, y.unsqueeze(0))
        return f

    ap = {k: v.detach() for k, v in am.named_parameters()}
    tp = {k: v.detach() for k, v in tm.named_parameters()}
    got = af.vmap(af.grad(loss(ag, af.functional_call, am)), in_dims=(None, 0, 0))(ap, x, y)
    want = tf.vmap(tf.grad(loss(torch, tf.functional_call, tm)), in_dims=(None, 0, 0))(tp, tx, ty)
    check(got, want)
    # the same, one sample at a time with autograd.grad on the module's own parameters
    names = [k for k, _ in am.named_parameters()]
    for i in range(len(xs)):
        out = am(x[i:i + 1])
        gs = ag.autograd.grad(ag.nn.functional.cross_entropy(out, y[i:i + 1]),
                              list(am.parameters()))
        for k, g in zip(names, gs):
            np.testing.assert_allclose(npy(got[k][i]), npy(g), rtol=1e-10, atol=1e-12)


def test_per_sample_grads_mse(device: str) -> None:
    tm, am = classifier(torch), classifier(ag)
    same_weights(tm, am, device)
    rng = np.random.default_rng(6)
    xs, ys = rng.standard_normal((5, 4)), rng.standard_normal((5, 3))
    ap = {k: v.detach() for k, v in am.named_parameters()}
    tp = {k: v.detach() for k, v in tm.named_parameters()}

    def loss(lib: Any, call: Any, m: Any) -> Any:
        return lambda p, x, y: lib.nn.functional.mse_loss(call(m, p, x), y)

    got = af.vmap(af.grad(loss(ag, af.functional_call, am)), in_dims=(None, 0, 0))(
        ap, ag.tensor(xs, device=device), ag.tensor(ys, device=device))
    want = tf.vmap(tf.grad(loss(torch, tf.functional_call, tm)), in_dims=(None, 0, 0))(
        tp, torch.tensor(xs), torch.tensor(ys))
    check(got, want)


def test_stack_module_state_ensemble(device: str) -> None:
    tms = [classifier(torch) for _ in range(3)]
    ams = [classifier(ag) for _ in range(3)]
    for i, (tm, am) in enumerate(zip(tms, ams)):
        same_weights(tm, am, device, seed=i)
    tp, tb = tf.stack_module_state(tms)
    ap, ab = af.stack_module_state(ams)
    check({k: v.detach() for k, v in ap.items()}, {k: v.detach() for k, v in tp.items()})
    assert all(v.requires_grad and v.is_leaf for v in ap.values())
    assert ab == tb == {}
    tx = torch.randn(7, 4, dtype=torch.float64)
    x = ag.tensor(tx.numpy(), device=device)

    def run(call: Any, m: Any) -> Any:
        return lambda p, b, x: call(m, (p, b), (x,))

    got = af.vmap(run(af.functional_call, ams[0]), in_dims=(0, 0, None))(ap, ab, x)
    want = tf.vmap(run(tf.functional_call, tms[0]), in_dims=(0, 0, None))(tp, tb, tx)
    check(got.detach(), want.detach())
    # the stacked parameters train: gradients reach them through vmap
    got.sum().backward()
    want.sum().backward()
    check({k: v.grad for k, v in ap.items()}, {k: v.grad for k, v in tp.items()})


def test_stack_module_state_buffers_and_errors(device: str) -> None:
    tms, ams = [bn_net(torch) for _ in range(2)], [bn_net(ag) for _ in range(2)]
    tp, tb = tf.stack_module_state(tms)
    ap, ab = af.stack_module_state(ams)
    assert list(ab) == list(tb)
    check(ab, tb)
    assert not any(v.requires_grad for v in ab.values())
    raises_like(lambda: af.stack_module_state([]), lambda: tf.stack_module_state([]))
    raises_like(lambda: af.stack_module_state([ams[0], ams[1].eval()]),
                lambda: tf.stack_module_state([tms[0], tms[1].eval()]))
    ams[1].train()
    tms[1].train()
    raises_like(lambda: af.stack_module_state([ams[0], classifier(ag)]),
                lambda: tf.stack_module_state([tms[0], classifier(torch)]))
    ams[1][0].weight.requires_grad_(False)
    tms[1][0].weight.requires_grad_(False)
    raises_like(lambda: af.stack_module_state(ams), lambda: tf.stack_module_state(tms))
