"""What a replay assumes, changed between calls of a compiled step (outside it): each change
gives the eager step's numbers bit for bit (a new signature records again, or the call runs
eagerly), also after a call reused the previous call's signature (``_compile._memo``); and
the reuse happens while nothing changes."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest

import autograd_gpu as ag
from autograd_gpu._compile import _memo
from tests.compile._steps import Setup, batches, classifier_step, compare

nn = ag.nn
BATCHES = batches(9, (16, 8), 4, seed=5)
_GAIN = 1.0


class _Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1, self.drop, self.fc2 = nn.Linear(8, 16), nn.Dropout(0.25), nn.Linear(16, 4)
        self.temperature = 1.0
        self.act = ag.relu
        self.extra_scales: list[float] = []

    def forward(self, x: Any) -> Any:
        out = self.fc2(self.drop(self.act(self.fc1(x)))) / self.temperature
        for scale in self.extra_scales:
            out = out * scale
        return out


class _Config:
    def __init__(self) -> None:
        self.scale = 1.0


def _setup(change: Callable[..., None], at: tuple[int, ...] = (4,), opt_name: str = "Adam",
           zero_grad: bool = True) -> Callable[[], Setup]:
    """An MLP step (dropout, a plain attribute, a closure tensor, an object, a list and a global
    read in it) whose state ``change(state)`` alters after the calls numbered in ``at``."""
    def make() -> Setup:
        global _GAIN
        _GAIN = 1.0
        model = _Net()
        opt = getattr(ag.optim, opt_name)(model.parameters(), lr=1e-2)
        bias = ag.arange(1.0, 5.0) * 0.1
        cfg = _Config()
        extra = [nn.Parameter(ag.ones(1))]
        holder = nn.Module()  # NOTE: so that the snapshots hold extra[0] and its grad
        holder.gain = extra[0]
        calls = [0]
        state: dict[str, Any] = {"model": model, "opt": opt, "bias": bias, "cfg": cfg,
                                 "extra": extra}

        def step(x: Any, y: Any, shift: float = 0.0) -> Any:
            if zero_grad:
                opt.zero_grad()
            out = model(x) * extra[0] + bias * cfg.scale * _GAIN + shift
            loss = nn.functional.cross_entropy(out, y)
            loss.backward()
            opt.step()
            return loss

        state["step"] = step

        def after(_: Any) -> None:
            calls[0] += 1
            if calls[0] in at:
                change(state)

        return Setup(step, [model, holder], [opt], after=after)

    return make


def _replace_param(s: dict[str, Any]) -> None:
    m = s["model"]
    new = nn.Parameter(m.fc1.weight.detach() * 0.5)
    m.fc1.weight = new
    s["opt"].param_groups[0]["params"][0] = new


def _replace_param_in_module_only(s: dict[str, Any]) -> None:
    s["model"].fc2.bias = nn.Parameter(s["model"].fc2.bias.detach() + 1)


def _grad_to_none(s: dict[str, Any]) -> None:
    s["model"].fc1.weight.grad = None


def _grad_replaced(s: dict[str, Any]) -> None:
    s["extra"][0].grad = ag.full((1,), 0.5)


def _grad_transposed(s: dict[str, Any]) -> None:
    w = s["model"].fc2.weight
    w.grad = w.grad.t().contiguous().t()  # NOTE: the same values, column-major


def _resize(s: dict[str, Any]) -> None:
    s["bias"].resize_(1)


def _reshape_array_in_place(s: dict[str, Any]) -> None:
    s["bias"].numpy().shape = (1, 4)  # NOTE: the same array object, another shape


def _data_replaced(s: dict[str, Any]) -> None:
    s["bias"].data = ag.arange(4.0)  # NOTE: the same shape and dtype, another array


def _data_dtype(s: dict[str, Any]) -> None:
    s["bias"].data = ag.arange(4, dtype=ag.float64)


def _requires_grad_off(s: dict[str, Any]) -> None:
    s["model"].fc1.bias.requires_grad_(False)


def _eval(s: dict[str, Any]) -> None:
    s["model"].eval()


def _train_toggle(s: dict[str, Any]) -> None:
    s["model"].train(not s["model"].training)


def _add_param_group(s: dict[str, Any]) -> None:
    s["opt"].add_param_group({"params": s["extra"], "lr": 0.1})


def _attribute(s: dict[str, Any]) -> None:
    s["model"].temperature = 2.0


def _dropout_p(s: dict[str, Any]) -> None:
    s["model"].drop.p = 0.5


def _object_attribute(s: dict[str, Any]) -> None:
    s["cfg"].scale = 3.0


def _list_item(s: dict[str, Any]) -> None:
    s["extra"][0] = nn.Parameter(ag.full((1,), 2.0))


def _global(s: dict[str, Any]) -> None:
    global _GAIN
    _GAIN = 0.5


def _weight_decay(s: dict[str, Any]) -> None:
    s["opt"].param_groups[0]["weight_decay"] = 0.1


def _lr(s: dict[str, Any]) -> None:
    s["opt"].param_groups[0]["lr"] *= 0.5


def _lr_zero(s: dict[str, Any]) -> None:
    s["opt"].param_groups[0]["lr"] = 0.0


def _state_reset(s: dict[str, Any]) -> None:
    s["opt"].state.clear()


def _default_arg(s: dict[str, Any]) -> None:
    s["step"].__defaults__ = (0.5,)


def _submodule(s: dict[str, Any]) -> None:
    s["model"].drop = nn.Identity()


def _function_attribute(s: dict[str, Any]) -> None:
    s["model"].act = ag.sigmoid


def _container_attribute(s: dict[str, Any]) -> None:
    s["model"].extra_scales.append(0.5)


def _forward_hook(s: dict[str, Any]) -> None:
    s["model"].fc1.register_forward_hook(lambda m, inp, out: out * 2)


def _forward_hook_removed(s: dict[str, Any]) -> None:
    if "handle" in s:
        s.pop("handle").remove()
    else:  # NOTE: the first change adds it, the second removes it
        s["handle"] = s["model"].fc2.register_forward_pre_hook(lambda m, inp: (inp[0] * 0.5,))


def _tensor_hook(s: dict[str, Any]) -> None:
    s["model"].fc1.weight.register_hook(lambda g: g * 0.5)


def _double_grad(p: Any) -> None:
    p.grad.mul_(2.0)


def _post_accumulate_hook(s: dict[str, Any]) -> None:
    s["model"].fc2.bias.register_post_accumulate_grad_hook(_double_grad)


CHANGES: dict[str, Callable[[dict[str, Any]], None]] = {
    "replace-param": _replace_param, "replace-param-in-module": _replace_param_in_module_only,
    "grad-none": _grad_to_none, "grad-replaced": _grad_replaced, "grad-layout": _grad_transposed,
    "resize": _resize, "array-shape-in-place": _reshape_array_in_place,
    "data-replaced": _data_replaced, "data-dtype": _data_dtype,
    "requires-grad-off": _requires_grad_off, "eval": _eval, "train-toggle": _train_toggle,
    "add-param-group": _add_param_group, "attribute": _attribute, "dropout-p": _dropout_p,
    "object-attribute": _object_attribute, "list-item": _list_item, "global": _global,
    "weight-decay": _weight_decay, "lr": _lr, "lr-zero": _lr_zero, "state-reset": _state_reset,
    "default-arg": _default_arg, "submodule": _submodule,
    "function-attribute": _function_attribute, "container-attribute": _container_attribute,
    "forward-hook": _forward_hook,
    "hook-toggle": _forward_hook_removed, "tensor-hook": _tensor_hook,
    "post-accumulate-hook": _post_accumulate_hook,
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_a_change_between_calls_keeps_the_eager_numbers(name: str) -> None:
    global _GAIN
    try:
        # NOTE: without zero_grad, the gradients present before a call are part of the step
        compare(_setup(CHANGES[name], at=(4, 6) if "toggle" in name else (4,),
                       zero_grad=not name.startswith("grad")), BATCHES)
    finally:
        _GAIN = 1.0


def test_changes_during_the_check_call_and_sgd() -> None:
    """Changes right after the recorded call (the next call is the checked one), on SGD."""
    def change(s: dict[str, Any]) -> None:
        _replace_param(s)
        _eval(s)
        _requires_grad_off(s)

    compare(_setup(change, at=(1, 2), opt_name="SGD"), BATCHES)


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Grows by one for each full walk a compiled call takes (``_memo.Memo._walk``)."""
    seen: list[int] = []
    walk = _memo.Memo._walk

    def counted(self: Any, *a: Any) -> Any:
        seen.append(1)
        return walk(self, *a)

    monkeypatch.setattr(_memo.Memo, "_walk", counted)
    return seen


def test_the_previous_signature_is_reused_while_nothing_changes(walks: list[int]) -> None:
    """Steady replays take no full walk; each change takes one (and a new signature)."""
    _, step = compare(_setup(lambda s: None, at=()), BATCHES)
    # NOTE: the recorded call, the first step's new optimizer state, the check's restored state
    assert len(walks) <= 3, len(walks)
    walks.clear()
    _, step = compare(_setup(_attribute, at=(5,)), BATCHES)
    # NOTE: the change, then the check of the new signature restores the optimizer state
    assert len(walks) <= 5 and step.explain().signatures == 2, (len(walks), step.explain())


def test_arguments_that_change_kind_or_alias_the_state() -> None:
    """A parameter passed as the argument (its place moves in the signature), a float that
    becomes an int, and a tensor argument of another dtype."""
    model = nn.Linear(4, 4)
    w = model.weight

    def step(x: Any, k: Any) -> Any:
        return (model(x) * k).sum().detach()

    compiled = ag.compile(step)
    xs = [ag.ones(4, 4), ag.ones(4, 4), w, w, ag.ones(4, 4, dtype=ag.float64), ag.ones(4, 4)]
    ks = [1.5, 1.5, 1.5, 2, 2, 2.0]
    with ag.no_grad():
        for x, k in zip(xs, ks):
            try:
                a = step(x, k)
            except RuntimeError as e:
                with pytest.raises(RuntimeError, match=str(e).split("(")[0][:30]):
                    compiled(x, k)
                continue
            b = compiled(x, k)
            assert a.dtype == b.dtype and np.array_equal(a.numpy(), b.numpy())


def test_arrays_made_from_constants() -> None:
    """Arrays every replay makes alike are made once (an index, a scalar); not those written
    into (directly or through a view) or that escape (a result the caller changes)."""
    def make() -> Setup:
        model = nn.Linear(4, 4)
        opt = ag.optim.SGD(model.parameters(), lr=0.1)

        def step(x: Any, y: Any) -> Any:
            opt.zero_grad()
            idx = ag.arange(4)
            z = ag.zeros(4)
            z[1] = 2.0
            k = ag.full((4,), 3.0)
            k.view(2, 2).mul_(2)
            out = model(x[:, idx[:4] % 4]) * (z + k)
            loss = nn.functional.cross_entropy(out, y % 4)
            loss.backward()
            opt.step()
            return loss, ag.arange(3.0), ag.full((2,), 7.0) * 2, ag.arange(5), ag.zeros(3)

        def after(res: Any) -> None:
            res[1].add_(100.0)  # NOTE: the caller changes the results it got
            res[2].mul_(0.0)
            res[3].add_(1)
            res[4].add_(1.0)

        return Setup(step, [model], [opt], after=after)

    warned, step = compare(make, batches(6, (5, 8), 4, seed=2))
    assert not warned, warned
    entry = next(e for e in step._entries.values() if e.state == "replay")
    made = [getattr(ins.fn, "__name__", ins.fn) for ins in entry.program.instrs
            if ins.kind == "call"]
    # NOTE: the aranges (indices, the returned ones before their copies) made once; the zeros
    # and the full written into (directly, through a view) or returned made on every replay
    assert "arange" not in made and made.count("zeros") >= 2 and "full" in made, made


def test_a_scheduler_changing_lr_every_call_keeps_the_signature(walks: list[int]) -> None:
    """lr is read afresh by a recorded update: a per-call scheduler (outside the step) takes
    no full walk, and the numbers stay eager's."""
    def make() -> Setup:
        model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
        opt = ag.optim.Adam(model.parameters(), lr=1e-2)
        sched = ag.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, total_steps=20)
        return Setup(classifier_step(model, opt), [model], [opt], [sched],
                     after=lambda _: sched.step())

    warned, step = compare(make, BATCHES)
    assert not warned and step.explain().signatures == 1, step.explain()
    assert len(walks) <= 3, len(walks)


@pytest.mark.parametrize("mode", ["default-dtype", "anomaly"])
def test_global_settings_changed_between_calls(mode: str) -> None:
    """The default dtype (factories without dtype=) and anomaly mode are part of what a
    recording assumes."""
    def make() -> Setup:
        ag.set_default_dtype(ag.float32)  # NOTE: the eager run changed it
        ag.autograd.set_detect_anomaly(False)
        model = nn.Linear(4, 2).double()
        opt = ag.optim.SGD(model.parameters(), lr=0.1)

        def step(x: Any, y: Any) -> Any:
            opt.zero_grad()
            loss = (model(x.double()) * ag.arange(2) / 3).sum() + ag.ones(2).sum()
            loss.backward()
            opt.step()
            return loss.detach(), ag.zeros(2)

        calls = [0]

        def after(_: Any) -> None:
            calls[0] += 1
            if calls[0] == 4 and mode == "default-dtype":
                ag.set_default_dtype(ag.float64)
            if calls[0] == 4 and mode == "anomaly":
                ag.autograd.set_detect_anomaly(True)

        return Setup(step, [model], [opt], after=after)

    try:
        warned, step = compare(make, batches(7, (3, 4), 2, seed=4))
    finally:
        ag.set_default_dtype(ag.float32)
        ag.autograd.set_detect_anomaly(False)
    assert not warned and step.explain().signatures >= 2, step.explain()
