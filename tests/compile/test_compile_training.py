"""Compiled training steps against eager, bit for bit over several calls (record, check,
replay): every optimizer, schedulers stepped inside and outside the step, a CNN with BatchNorm,
dropout and pooling (train, then eval and no_grad through ``compile(model)``), a transformer
layer, an embedding + GRU, and the usual extras of a step (clipping, accumulation, tuples)."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import autograd_gpu as ag
from tests.compile._steps import Setup, assert_same, batches, classifier_step, replays, run

nn = ag.nn
S = ag.optim.lr_scheduler
MLP_BATCHES = batches(6, (16, 8), 4)


def _mlp(bias: bool = True) -> Any:
    return nn.Sequential(nn.Linear(8, 16, bias=bias), nn.ReLU(), nn.Linear(16, 4, bias=bias))


OPTIMIZERS = [
    ("SGD", {"lr": 0.1}),
    ("SGD", {"lr": 0.1, "momentum": 0.9}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "dampening": 0.1, "maximize": True}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "fused": True}),
    ("Adam", {"lr": 1e-2}),
    ("Adam", {"lr": 1e-2, "amsgrad": True, "weight_decay": 0.1}),
    ("Adam", {"lr": 1e-2, "foreach": False}),
    ("Adam", {"lr": 1e-2, "fused": True}),
    ("AdamW", {"lr": 1e-2}),
    ("RMSprop", {"lr": 1e-2}),
    ("RMSprop", {"lr": 1e-2, "centered": True, "momentum": 0.5, "weight_decay": 0.01}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01}),
    ("Adadelta", {}),
    ("Adamax", {}),
    ("NAdam", {}),
    ("NAdam", {"decoupled_weight_decay": True, "weight_decay": 0.1}),
    ("RAdam", {}),
    ("ASGD", {"lr": 0.05}),
    ("Rprop", {}),
    ("Adafactor", {}),
    ("Muon", {"lr": 0.02}),
]


@pytest.mark.parametrize("name, kw", OPTIMIZERS,
                         ids=[f"{n}-{'-'.join(k) or 'default'}" for n, k in OPTIMIZERS])
def test_mlp_with_every_optimizer(name: str, kw: dict[str, Any]) -> None:
    def make() -> Setup:
        model = _mlp(bias=name != "Muon")  # NOTE: Muon takes 2-d parameters only
        opt = getattr(ag.optim, name)(model.parameters(), **kw)
        return Setup(classifier_step(model, opt), [model], [opt])

    replays(make, MLP_BATCHES)


SCHEDULERS = [
    ("StepLR", {"step_size": 2, "gamma": 0.5}),
    ("CosineAnnealingLR", {"T_max": 4}),
    ("OneCycleLR", {"max_lr": 0.2, "total_steps": 10}),
    ("CyclicLR", {"base_lr": 0.01, "max_lr": 0.1, "step_size_up": 2}),  # NOTE: cycles momentum
    ("LambdaLR", {"lr_lambda": lambda e: 1 / (e + 1)}),
    ("CosineAnnealingWarmRestarts", {"T_0": 3}),
]


@pytest.mark.parametrize("inside", [True, False], ids=["in-step", "outside"])
@pytest.mark.parametrize("name, kw", SCHEDULERS, ids=[n for n, _ in SCHEDULERS])
def test_scheduler_inside_and_outside_the_step(name: str, kw: dict[str, Any],
                                               inside: bool) -> None:
    lrs: list[float] = []

    def make() -> Setup:
        model = _mlp()
        opt = ag.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
        sched = getattr(S, name)(opt, **kw)
        lrs.clear()

        def after(_: Any) -> None:
            if not inside:
                sched.step()
            lrs.append(opt.param_groups[0]["lr"])

        return Setup(classifier_step(model, opt, scheds=(sched,) if inside else ()), [model],
                     [opt], [sched], after)

    replays(make, MLP_BATCHES)
    assert len(set(lrs)) > 1  # NOTE: the lr changes between the calls


def test_reduce_lr_on_plateau_outside_the_step() -> None:
    def make() -> Setup:
        model = _mlp()
        opt = ag.optim.Adam(model.parameters(), lr=0.1)
        sched = S.ReduceLROnPlateau(opt, patience=0, factor=0.5, threshold=10.0)
        return Setup(classifier_step(model, opt), [model], [opt], [sched],
                     lambda loss: sched.step(loss))

    replays(make, MLP_BATCHES)


def _cnn() -> Any:
    return nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                         nn.MaxPool2d(2), nn.Dropout(0.3), nn.Flatten(), nn.Linear(64, 5))


CNN_BATCHES = batches(6, (4, 3, 8, 8), 5, seed=1)


def test_cnn_train_then_eval_and_no_grad_through_compiled_module() -> None:
    models: list[Any] = []

    def make() -> Setup:
        model = _cnn()
        models.append(model)
        opt = ag.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-3)
        return Setup(classifier_step(model, opt), [model], [opt])

    replays(make, CNN_BATCHES)  # NOTE: dropout masks and running stats as eager's
    eager, trained = models
    assert int(trained[1].num_batches_tracked) == len(CNN_BATCHES)
    om = ag.compile(trained)
    assert list(om.state_dict()) == ["_orig_mod." + k for k in trained.state_dict()]
    om.eval()
    eager.eval()
    assert not trained.training
    with ag.no_grad():
        for x, _ in CNN_BATCHES:
            a, b = eager(ag.tensor(x)), om(ag.tensor(x))
            assert a.numpy().tobytes() == b.numpy().tobytes()
    assert om.explain().replaying == 1
    for k, v in eager.state_dict().items():
        assert np.array_equal(v.numpy(), trained.state_dict()[k].numpy())


def test_compiled_module_forward_in_train_mode_under_no_grad() -> None:
    """Running stats, num_batches_tracked and dropout draws of a train-mode forward."""
    calls: list[Any] = []

    def make(compiled: bool) -> Setup:
        model = _cnn()
        call = ag.compile(model) if compiled else model
        calls.append(call)

        def step(x: Any, y: Any) -> Any:
            with ag.no_grad():
                return call(x)

        return Setup(step, [model])

    eager, _, _ = run(lambda: make(False), CNN_BATCHES, False)
    compiled, warned, _ = run(lambda: make(True), CNN_BATCHES, False)
    assert not warned
    assert_same(eager, compiled)
    assert calls[-1].explain().replaying == 1


@pytest.mark.parametrize("norm_first, activation", [(False, "relu"), (True, "gelu")])
def test_transformer_encoder_layer_step(norm_first: bool, activation: str) -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.1,
                                                    activation=activation, batch_first=True,
                                                    norm_first=norm_first)
            self.head = nn.Linear(8, 3)

        def forward(self, x: Any) -> Any:
            return self.head(self.layer(x).mean(1))

    def make() -> Setup:
        model = Net()
        opt = ag.optim.AdamW(model.parameters(), lr=1e-2)
        return Setup(classifier_step(model, opt), [model], [opt])

    replays(make, batches(6, (4, 5, 8), 3, seed=2))


def test_embedding_gru_step() -> None:
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.emb = nn.Embedding(10, 6)
            self.rnn = nn.GRU(6, 5, batch_first=True)
            self.head = nn.Linear(5, 3)

        def forward(self, t: Any) -> Any:
            out, _ = self.rnn(self.emb(t))
            return self.head(out[:, -1])

    def make() -> Setup:
        model = Net()
        opt = ag.optim.Adam(model.parameters(), lr=1e-2)
        return Setup(classifier_step(model, opt), [model], [opt])

    rng = np.random.default_rng(3)
    replays(make, [(rng.integers(0, 10, (4, 5)), rng.integers(0, 3, 4)) for _ in range(6)])


EXTRAS = ["clip_norm", "clip_value", "accumulate", "tuple", "dict", "label_smoothing"]


@pytest.mark.parametrize("extra", EXTRAS)
def test_step_extras(extra: str) -> None:
    """LayerNorm, GELU, dropout; clipping, accumulation without zero_grad, several results."""
    def make() -> Setup:
        model = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.GELU(), nn.Dropout(0.2),
                              nn.Linear(16, 4))
        opt = ag.optim.AdamW(model.parameters(), lr=1e-2)

        def step(x: Any, y: Any) -> Any:
            if extra != "accumulate":
                opt.zero_grad()
            out = model(x)
            loss = nn.functional.cross_entropy(
                out, y, label_smoothing=0.1 if extra == "label_smoothing" else 0.0)
            loss.backward()
            if extra == "clip_norm":
                nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            if extra == "clip_value":
                nn.utils.clip_grad_value_(model.parameters(), 0.01)
            opt.step()
            if extra == "tuple":
                return loss.detach(), out.detach()
            if extra == "dict":
                return {"loss": loss.detach(), "acc": (out.argmax(1) == y).float().mean()}
            return loss

        return Setup(step, [model], [opt])

    replays(make, MLP_BATCHES)


def test_float64_and_two_optimizers() -> None:
    def make() -> Setup:
        enc, head = nn.Linear(8, 6).double(), nn.Linear(6, 4).double()
        o1 = ag.optim.Adam(enc.parameters(), lr=1e-2)
        o2 = ag.optim.SGD(head.parameters(), lr=0.1, momentum=0.5)

        def step(x: Any, y: Any) -> Any:
            o1.zero_grad()
            o2.zero_grad()
            loss = nn.functional.cross_entropy(head(enc(x).tanh()), y)
            loss.backward()
            o1.step()
            o2.step()
            return loss

        return Setup(step, [enc, head], [o1, o2])

    replays(make, batches(6, (16, 8), 4, dtype=np.float64))


# ---- more step shapes: no optimizer, random draws, closure state, tied weights, masks -----------

def _manual_sgd() -> Setup:
    model = _mlp()

    def step(x: Any, y: Any) -> Any:
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        with ag.no_grad():
            for p in model.parameters():
                p -= 0.1 * p.grad
                p.grad.zero_()
        return loss

    return Setup(step, [model])


def _random_draws() -> Setup:
    model = _mlp()
    opt = ag.optim.Adam(model.parameters(), lr=1e-2)
    gen = ag.Generator().manual_seed(3)

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        x = x + 0.1 * ag.randn_like(x) + ag.rand(x.shape, generator=gen)
        idx = ag.randperm(x.shape[0])
        loss = nn.functional.cross_entropy(model(x[idx]), y[idx])
        loss = loss + 0 * ag.randint(0, 5, (3,)).float().sum()
        loss.backward()
        opt.step()
        return loss

    return Setup(step, [model], [opt])


def _seeded_in_step() -> Setup:
    model = nn.Sequential(nn.Linear(8, 16), nn.Dropout(0.5), nn.Linear(16, 4))
    opt = ag.optim.SGD(model.parameters(), lr=0.1)
    gen = ag.Generator()

    def step(x: Any, y: Any) -> Any:
        ag.manual_seed(42)  # NOTE: replayed before the draws that follow it
        gen.manual_seed(7)
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x + ag.randn(x.shape, generator=gen)), y)
        loss.backward()
        opt.step()
        return loss

    return Setup(step, [model], [opt])


def _input_gradients() -> Setup:
    """FGSM-like: the input made to require grad inside the step, its .grad returned, a
    second backward on the perturbed input; and autograd.grad with create_graph."""
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    opt = ag.optim.Adam(model.parameters(), lr=1e-2)

    def step(x: Any, y: Any) -> Any:
        x.requires_grad_(True)
        nn.functional.cross_entropy(model(x), y).backward()
        adv = (x + 0.1 * x.grad.sign()).detach()
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(adv), y)
        grads = ag.autograd.grad(loss, list(model.parameters()), create_graph=True)
        (loss + 0.1 * sum((g ** 2).sum() for g in grads)).backward()
        opt.step()
        return loss.detach(), x.grad, x.requires_grad

    return Setup(step, [model], [opt])


def _inference() -> Setup:
    model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16), nn.Linear(16, 4)).half()

    @ag.inference_mode()
    def step(x: Any, y: Any) -> Any:
        return model(x.half()).float().softmax(1)

    return Setup(step, [model])


def _closure_state() -> Setup:
    model = _mlp()
    opt = ag.optim.SGD(model.parameters(), lr=0.1)
    avg, counts = ag.zeros(()), ag.zeros(4)

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        avg.mul_(0.9).add_(loss.detach() * 0.1)
        counts.add_(ag.bincount(y, minlength=4).float())
        return avg, counts

    return Setup(step, [model], [opt])


def _mode_switch(momentum: float | None = 0.1) -> Setup:
    model = nn.Sequential(nn.Linear(8, 16), nn.BatchNorm1d(16, momentum=momentum), nn.Dropout(0.5),
                          nn.Linear(16, 4))
    opt = ag.optim.SGD(model.parameters(), lr=0.1)

    def step(x: Any, y: Any) -> Any:
        model.train()
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        model.eval()
        with ag.no_grad():
            acc = (model(x).argmax(1) == y).float().mean()
        return loss.detach(), acc

    return Setup(step, [model], [opt])


def _losses() -> Setup:
    model = nn.Sequential(nn.Linear(8, 16), nn.Tanh(), nn.Linear(16, 4))
    opt = ag.optim.RMSprop(model.parameters(), lr=1e-2)
    F = nn.functional

    def step(x: Any, y: Any) -> Any:
        opt.zero_grad()
        out = model(x)
        hot = F.one_hot(y, 4).float()
        loss = (F.mse_loss(out, hot) + F.binary_cross_entropy_with_logits(out, hot)
                + F.nll_loss(F.log_softmax(out, 1), y, ignore_index=2)
                + F.kl_div(F.log_softmax(out, 1), F.softmax(hot, 1), reduction="batchmean")
                + F.huber_loss(out, hot) + ag.where(out > 0, out, out * 0.1).clamp(-1, 1).mean()
                + ag.stack([out, hot]).logsumexp(0).mean())
        loss.backward()
        opt.step()
        return loss

    return Setup(step, [model], [opt])


def _gradient_hook() -> Setup:
    model = _mlp()
    model[0].weight.register_hook(lambda g: g * 0.5)  # NOTE: arithmetic only: recorded
    model[2].register_forward_hook(lambda mod, inp, out: out * 2)
    return _with(model, "SGD")


class _Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, dropout=0.1, batch_first=True)
        self.head = nn.Linear(8, 4)

    def forward(self, x: Any) -> Any:
        x = x.reshape(4, 4, 8)
        mask = ag.triu(ag.ones(4, 4, dtype=ag.bool), 1)
        pad = ag.zeros(4, 4, dtype=ag.bool)
        pad[:, -1] = True
        out, _ = self.attn(x, x, x, attn_mask=mask, key_padding_mask=pad)
        return self.head(out.reshape(16, 8))


class _Tied(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.emb = nn.Embedding(4, 8)
        self.out = nn.Linear(8, 4, bias=False)
        self.out.weight = self.emb.weight  # NOTE: one parameter in two modules

    def forward(self, x: Any) -> Any:
        return self.out(x) + self.emb(ag.arange(4)).sum(1)


def _with(model: Any, opt_name: str = "Adam") -> Setup:
    opt = getattr(ag.optim, opt_name)(model.parameters(), lr=1e-2)
    return Setup(classifier_step(model, opt), [model], [opt])


IMAGES = batches(6, (4, 3, 8, 8), 4, seed=3)
STEPS = {
    "manual-sgd": (_manual_sgd, MLP_BATCHES),
    "random-draws": (_random_draws, MLP_BATCHES),
    "seeded-in-step": (_seeded_in_step, MLP_BATCHES),
    "input-gradients": (_input_gradients, MLP_BATCHES),
    "inference-mode-half": (_inference, MLP_BATCHES),
    "closure-state": (_closure_state, MLP_BATCHES),
    "train-eval-switch": (_mode_switch, MLP_BATCHES),
    "losses": (_losses, MLP_BATCHES),
    "attention-masks": (lambda: _with(_Attention()), MLP_BATCHES),
    "tied-weights": (lambda: _with(_Tied()), MLP_BATCHES),
    "norms-and-pools": (lambda: _with(nn.Sequential(
        nn.Conv2d(3, 4, 3, stride=2, padding=1), nn.GroupNorm(2, 4), nn.SiLU(),
        nn.ConvTranspose2d(4, 4, 2, stride=2), nn.InstanceNorm2d(4, affine=True), nn.AvgPool2d(2),
        nn.Conv2d(4, 4, 3, padding=1, groups=2, bias=False), nn.AdaptiveAvgPool2d(1),
        nn.Flatten(), nn.Linear(4, 4))), IMAGES),
    "weight-norm": (lambda: _with(nn.Sequential(
        nn.utils.parametrizations.weight_norm(nn.Linear(8, 16)), nn.ReLU(),
        nn.utils.spectral_norm(nn.Linear(16, 4)))), MLP_BATCHES),
    "gradient-hook": (_gradient_hook, MLP_BATCHES),
    "activations": (lambda: _with(nn.Sequential(
        nn.Linear(8, 16), nn.Softplus(), nn.Mish(), nn.ELU(), nn.Hardswish(), nn.PReLU(),
        nn.SELU(), nn.AlphaDropout(0.1), nn.Linear(16, 4), nn.LogSoftmax(1)), "SGD"),
        MLP_BATCHES),
}


@pytest.mark.parametrize("name", list(STEPS))
def test_more_steps(name: str) -> None:
    make, data = STEPS[name]
    replays(make, data)


# ---- single ops in a step (their array work recorded whole) ---------------------------------------

def _spd(w: Any, x: Any) -> Any:
    a = (x * w)[:, :4]
    return a @ a.T + 4 * ag.eye(4)


L = ag.linalg
F = nn.functional
OPS = {
    "sort-topk-cumsum": lambda w, x: (ag.sort(x * w, 1)[0].sum() + ag.topk(x * w, 3, 1)[0].sum()
                                      + (x * w).cumsum(1).sum() + ag.logcumsumexp(x * w, 1).sum()),
    "scatter-gather": lambda w, x: (
        ag.zeros(4, 8).scatter_add(0, ag.tensor([[0, 1, 2, 3] * 2] * 4), x * w).sum()
        + (x * w).gather(1, ag.tensor([[0, 2]] * 4)).sum() + (x * w).masked_fill(x > 0.5, 0).sum()),
    "einsum-fft": lambda w, x: (ag.einsum("ij,kj->ik", x * w, x).sum()
                                + ag.fft.rfft(x * w, dim=1).abs().sum()),
    "linalg": lambda w, x: (L.solve(_spd(w, x), x[:, :1]).sum() + L.qr(_spd(w, x))[0].sum()
                            + L.eigh(_spd(w, x))[0].sum() + L.slogdet(_spd(w, x))[1]
                            + L.lstsq(_spd(w, x), x[:, :2]).solution.sum()
                            + L.pinv(_spd(w, x)).sum() + L.svdvals(_spd(w, x)).sum()),
    "sampling": lambda w, x: (
        F.grid_sample((x * w).reshape(1, 1, 4, 8), x.reshape(1, 4, 4, 2).tanh(),
                      align_corners=False).sum()
        + F.interpolate((x * w).reshape(1, 1, 4, 8), size=(6, 5), mode="bicubic",
                        align_corners=True).sum()),
    "ctc-and-margins": lambda w, x: (
        F.ctc_loss(F.log_softmax((x * w).reshape(4, 1, 8), 2).repeat(2, 1, 1),
                   ag.tensor([[1, 2, 3]]), ag.tensor([8]), ag.tensor([3]))
        + F.triplet_margin_loss(x * w, x.flip(0), x.roll(1, 0))
        + F.multi_margin_loss(x * w, ag.tensor([0, 1, 2, 3]))),
}


def op_step(op: Callable[[Any, Any], Any], shape: tuple[int, int] = (4, 8)) -> Setup:
    """A parameter ``w`` of ``shape`` trained by SGD on the loss ``op(w, x)``."""
    holder = nn.Module()
    holder.w = nn.Parameter(ag.ones(*shape) + 0.1 * ag.randn(*shape))
    opt = ag.optim.SGD(holder.parameters(), lr=1e-3)

    def step(x: Any) -> Any:
        opt.zero_grad()
        loss = op(holder.w, x)
        loss.backward()
        opt.step()
        return loss.detach()

    return Setup(step, [holder], [opt])


@pytest.mark.parametrize("name", list(OPS))
def test_ops_in_a_step(name: str) -> None:
    rng = np.random.default_rng(11)
    replays(lambda: op_step(OPS[name]),
            [(rng.standard_normal((4, 8)).astype(np.float32),) for _ in range(5)])
