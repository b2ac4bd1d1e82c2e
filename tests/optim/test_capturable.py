"""``capturable=True`` optimizers (Adam, AdamW, Adamax, NAdam, RAdam, RMSprop, Rprop, ASGD,
Adadelta): PyTorch's errors on the CPU, ``step`` placement on load, and on CUDA (a GPU, or the
NumPy stand-in with ``AUTOGRAD_GPU_FAKE_CUDA=1``; skipped otherwise) the capturable update:
device-resident state scalars, the plain update's numbers to float tolerance, torch's numbers,
and steps captured in a CUDA graph (a host read would raise there) that replay as eager steps.

Tolerance: a capturable step computes its bias corrections (and NAdam's ``mu``, ASGD's ``eta``,
...) as float32 0-d tensor ops on the device where the plain step uses Python floats, so float64
parameters differ by the float32 rounding of those scalars (and by 1-ulp differences between
libraries' float32 ``pow``/``sqrt``): measured on ``_problem`` after 10 steps at ``lr=0.01``,
at most 7.5e-7 (RAdam 7.5e-6: ``rho_t`` cancels ~2000 - 1995 in float32); bound ``BOUND``.
"""

from __future__ import annotations

import importlib
import os
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.misuse._catalogue import check_case

from ._problem import loss_fn, make_params

CUDA = ag.cuda.is_available()
FAKE = os.environ.get("AUTOGRAD_GPU_FAKE_CUDA", "") not in ("", "0")
needs_cuda = pytest.mark.skipif(not CUDA, reason="capturable steps run on CUDA only: needs a GPU "
                                "or the stand-in (AUTOGRAD_GPU_FAKE_CUDA=1)")
EAGER_WARNING = "This instance was constructed with capturable=True"
pytestmark = pytest.mark.filterwarnings(f"ignore:{EAGER_WARNING}")

CASES = [
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, maximize=True)),
    ("AdamW", dict(lr=0.01, amsgrad=True)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1, maximize=True)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1)),  # NOTE: rho_t passes 5 at step 6
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RMSprop", dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    ("Rprop", dict(lr=0.01, maximize=True)),
    ("ASGD", dict(lr=0.05, t0=3, weight_decay=0.1)),
    ("Adadelta", dict(lr=0.5, weight_decay=0.1)),
]
IDS = [f"{name}-{'-'.join(f'{k}={v}' for k, v in kw.items())}" for name, kw in CASES]
NAMES = ["Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Rprop", "ASGD", "Adadelta"]
BOUND = {"RAdam": 3e-5}  # others: 3e-6 (see the module docstring)
TORCH_BOUND = {"RAdam": 2e-6}  # others 2e-7: against torch's capturable formulas (the same ops)
# the 0-d float32 state scalars each keeps on the parameter's device when capturable
SCALARS = {"NAdam": ("step", "mu_product"), "ASGD": ("step", "eta", "mu")}


def _step_on_cpu(name: str) -> Any:
    def fn(T: Any, dev: str) -> Any:
        p = T.zeros(3, requires_grad=True)
        p.grad = T.ones(3)
        opt = getattr(T.optim, name)([p], capturable=True)
        opt.step()
        return p

    return fn


def _constructor(name: str) -> Any:
    return lambda T, dev: getattr(T.optim, name)([T.zeros(2, requires_grad=True)],
                                                 capturable=True)


@pytest.mark.parametrize("name", NAMES + ["Adagrad", "SGD", "Adafactor", "LBFGS", "Muon"])
def test_cpu_errors_as_torch(name: str) -> None:
    """A capturable step on the CPU raises PyTorch's AssertionError (NAdam, ASGD and Adadelta
    with their own wording); Adagrad, SGD, Adafactor, LBFGS and Muon take no ``capturable``
    (TypeError)."""
    check_case(_step_on_cpu(name) if name in NAMES else _constructor(name), "cpu")


@pytest.mark.parametrize("default", ["float32", "float64"])
@pytest.mark.parametrize(("name", "kw"), [
    ("Adam", {}), ("Adam", {"fused": True}), ("NAdam", {}), ("ASGD", {}), ("RMSprop", {}),
    ("Adagrad", {}), ("Adagrad", {"fused": True}), ("Adafactor", {}), ("Rprop", {}),
], ids=lambda v: str(v) if v else "")
def test_state_scalars_dtype_as_torch(name: str, kw: dict[str, Any], default: str) -> None:
    """The state scalars (``step``, ...) are float64 while the default dtype is float64 (float32
    for a fused group), else float32: PyTorch's ``_get_scalar_dtype``."""
    got = {}
    for lib in (torch, ag):
        lib.set_default_dtype(getattr(lib, default))
        try:
            p = lib.zeros(2, requires_grad=True)
            p.grad = lib.ones(2)
            opt = getattr(lib.optim, name)([p], **kw)
            opt.step()
            opt.step()
        finally:
            lib.set_default_dtype(lib.float32)
        got[lib] = [(k, str(v.dtype), v.item()) for k, v in opt.state[p].items() if v.dim() == 0]
    assert got[ag] == got[torch]


def _saved(lib: Any, name: str, dev: str, capturable: bool) -> tuple[Any, Any]:
    """A parameter on ``dev`` and a state dict of one plain step whose ``step`` is float64 and
    whose group says ``capturable``."""
    p = lib.zeros(3, requires_grad=True, device=dev)
    p.grad = lib.ones(3, device=dev)
    opt = getattr(lib.optim, name)([p], lr=0.1)
    opt.step()
    sd = opt.state_dict()
    sd["state"][0]["step"] = sd["state"][0]["step"].double()
    sd["param_groups"][0]["capturable"] = capturable
    return p, sd


@pytest.mark.parametrize("capturable", [False, True])
@pytest.mark.parametrize("name", ["Adam", "NAdam", "ASGD"])
def test_load_state_dict_step_dtype_as_torch(name: str, capturable: bool) -> None:
    """A capturable group's ``step`` is loaded as float32 on the parameter's device; a plain
    one's is kept as saved (other state follows the parameter, as in PyTorch)."""
    got = {}
    for lib in (torch, ag):
        p, sd = _saved(lib, name, "cpu", capturable)
        opt = getattr(lib.optim, name)([p], lr=0.1, capturable=capturable)
        opt.load_state_dict(sd)
        got[lib] = {k: (str(v.dtype), v.device.type, v.item())
                    for k, v in opt.state[p].items() if v.dim() == 0}
    assert got[ag] == got[torch]
    assert got[ag]["step"][0] == ("torch.float32" if capturable else "torch.float64")


@needs_cuda
@pytest.mark.parametrize("capturable", [False, True])
def test_load_state_dict_moves_a_capturable_step_to_cuda(capturable: bool) -> None:
    p, sd = _saved(ag, "Adam", "cuda", capturable)
    sd["state"][0]["step"] = sd["state"][0]["step"].cpu()
    opt = ag.optim.Adam([p], lr=0.1, capturable=capturable)
    opt.load_state_dict(sd)
    step = opt.state[p]["step"]
    assert (step.device.type, step.dtype) == (("cuda", ag.float32) if capturable else
                                              ("cpu", ag.float64))
    if capturable:  # NOTE: the loaded state steps on in a graph
        g = ag.cuda.CUDAGraph()
        with ag.cuda.graph(g):
            opt.step()
        g.replay()
        g.replay()
        assert step.item() == 3.0


def _train(lib: Any, name: str, kw: dict[str, Any], dtype: Any, capturable: bool,
           steps: int = 10) -> tuple[list[np.ndarray], Any, list[Any]]:
    dev = "cpu" if lib is torch else "cuda"
    params = [p.detach().to(dtype).requires_grad_() for p in make_params(lib, dev)]
    opt = getattr(lib.optim, name)(params, capturable=capturable, **kw,
                                   **({"foreach": False} if lib is torch else {}))
    for _ in range(steps):
        opt.zero_grad()
        loss_fn(lib, params, dev).backward()
        opt.step()
    return [p.detach().cpu().numpy() for p in params], opt, params


def _close(a: list[np.ndarray], b: list[np.ndarray], name: str, same_formulas: bool = False
           ) -> None:
    atol = TORCH_BOUND.get(name, 2e-7) if same_formulas else BOUND.get(name, 3e-6)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=0, atol=atol)


@needs_cuda
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize(("name", "kw"), CASES, ids=IDS)
def test_capturable_steps_equal_plain_steps(name: str, kw: dict[str, Any], dtype: str) -> None:
    """10 capturable steps = 10 plain steps to ``BOUND``; the state scalars are float32 0-d
    tensors on the parameter's device."""
    ours, opt, params = _train(ag, name, kw, getattr(ag, dtype), True)
    plain, plain_opt, plain_params = _train(ag, name, kw, getattr(ag, dtype), False)
    _close(ours, plain, name)
    for p in params:
        for key in SCALARS.get(name, ("step",)):
            t = opt.state[p][key]
            assert (t.device.type, t.dtype, t.dim()) == ("cuda", ag.float32, 0), key
        assert opt.state[p]["step"].item() == 10.0
    where = plain_opt.state[plain_params[0]]["step"].device.type
    assert where == ("cuda" if name == "ASGD" else "cpu")  # NOTE: as PyTorch's plain steps


@pytest.fixture
def torch_capturable_on_cpu(monkeypatch: pytest.MonkeyPatch) -> None:
    """Let torch's capturable formulas run on the CPU (the oracle has no CUDA)."""
    for name in NAMES:
        module = importlib.import_module(f"torch.optim.{name.lower()}")
        if hasattr(module, "_get_capturable_supported_devices"):
            monkeypatch.setattr(module, "_get_capturable_supported_devices",
                                lambda supports_xla=True: ["cpu"])


@needs_cuda
@pytest.mark.parametrize(("name", "kw"), CASES, ids=IDS)
def test_capturable_steps_match_torch(name: str, kw: dict[str, Any],
                                      torch_capturable_on_cpu: None) -> None:
    """Our capturable float64 steps against torch's plain CPU steps (``BOUND``) and against
    torch's own capturable formulas run on the CPU (``TORCH_BOUND``; measured 7.0e-7 for RAdam,
    at most 4e-8 for the others: 1-ulp differences of float32 ``pow``/``sqrt`` between NumPy
    and torch in the 0-d scalars)."""
    ours, _, _ = _train(ag, name, kw, ag.float64, True)
    _close(ours, _train(torch, name, kw, torch.float64, False)[0], name)
    _close(ours, _train(torch, name, kw, torch.float64, True)[0], name, same_formulas=True)


def _replayed(name: str, kw: dict[str, Any], steps: int, graph: bool) -> Any:
    """One eager step (the state is made), then ``steps`` more: eager, or captured once and
    replayed. Grads are fixed per parameter (a step's own inputs)."""
    params = [p.detach().double().requires_grad_() for p in make_params(ag, "cuda")]
    for i, p in enumerate(params):
        p.grad = (p.detach() * 0.5 + 0.1 * (i + 1)).sin()
    opt = getattr(ag.optim, name)(params, capturable=True, **kw)
    opt.step()
    if graph:
        g = ag.cuda.CUDAGraph()
        with ag.cuda.graph(g):
            opt.step()
        for _ in range(steps):
            g.replay()
    else:
        for _ in range(steps):
            opt.step()
    return [p.detach().cpu().numpy() for p in params], opt.state[params[0]]["step"]


@needs_cuda
@pytest.mark.parametrize(("name", "kw"), CASES, ids=IDS)
def test_captured_step_replays_as_eager_steps(name: str, kw: dict[str, Any]) -> None:
    """A capturable step captured in a CUDA graph (no host read: one would raise) replayed 7
    times = 7 eager capturable steps (exactly on the stand-in), ``step`` counting on the device."""
    eager, _ = _replayed(name, kw, 7, graph=False)
    replayed, step = _replayed(name, kw, 7, graph=True)
    assert step.device.type == "cuda" and step.item() == 8.0
    for a, b in zip(replayed, eager):
        if FAKE:
            np.testing.assert_array_equal(a, b)
        else:  # NOTE: a GPU runs the same kernels; the bound only guards launch differences
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


@needs_cuda
def test_plain_step_refused_in_capture_and_eager_capturable_warns() -> None:
    """PyTorch's health check: a capture of a step needs every group capturable; a capturable
    step run eagerly warns once."""
    p = ag.zeros(3, device="cuda", requires_grad=True)
    p.grad = ag.ones(3, device="cuda")
    plain = ag.optim.Adam([p])
    plain.step()
    g = ag.cuda.CUDAGraph()
    with pytest.raises(RuntimeError, match=r"^Attempting CUDA graph capture of step\(\) for an "
                       r"instance of Adam but param_groups' capturable is False\.$"):
        with ag.cuda.graph(g):
            plain.step()
    opt = ag.optim.NAdam([p], capturable=True)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        opt.step()
        opt.step()
    assert [str(w.message)[:50] for w in seen] == [EAGER_WARNING[:50]]


XS = [np.random.default_rng(i).standard_normal((8, 4)).astype(np.float32) for i in range(6)]
YS = [np.random.default_rng(9 + i).standard_normal((8, 2)).astype(np.float32) for i in range(6)]


def _model(name: str) -> tuple[Any, Any]:
    ag.manual_seed(0)
    model = ag.nn.Sequential(ag.nn.Linear(4, 6), ag.nn.Tanh(), ag.nn.Linear(6, 2)).to("cuda")
    return model, getattr(ag.optim, name)(model.parameters(), lr=0.01, capturable=True)


def _train_step(model: Any, opt: Any, x: Any, y: Any) -> Any:
    loss = ((model(x) - y) ** 2).mean()
    loss.backward()
    opt.step()
    return loss


@needs_cuda
@pytest.mark.parametrize("name", ["Adam", "AdamW"])
def test_captured_training_step(name: str) -> None:
    """Forward, backward and a capturable step captured once (after one eager warm-up step, as
    PyTorch's recipe) and replayed on new static inputs = the same eager training steps."""
    model, opt = _model(name)
    eager = []
    for x, y in zip(XS, YS):
        opt.zero_grad(set_to_none=True)
        eager.append(_train_step(model, opt, ag.tensor(x, device="cuda"),
                                 ag.tensor(y, device="cuda")).item())
    ref = [p.detach().cpu().numpy() for p in model.parameters()]

    model, opt = _model(name)
    sx, sy = ag.tensor(XS[0], device="cuda"), ag.tensor(YS[0], device="cuda")
    opt.zero_grad(set_to_none=True)
    losses = [_train_step(model, opt, sx, sy).item()]
    g = ag.cuda.CUDAGraph()
    opt.zero_grad(set_to_none=True)
    with ag.cuda.graph(g):
        static_loss = _train_step(model, opt, sx, sy)
    for x, y in zip(XS[1:], YS[1:]):
        sx.copy_(ag.tensor(x, device="cuda"))
        sy.copy_(ag.tensor(y, device="cuda"))
        g.replay()
        losses.append(static_loss.item())
    got = [p.detach().cpu().numpy() for p in model.parameters()]
    if FAKE:
        assert losses == eager
        for a, b in zip(got, ref):
            np.testing.assert_array_equal(a, b)
    else:
        np.testing.assert_allclose(losses, eager, rtol=1e-6)
        for a, b in zip(got, ref):
            np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-7)
    assert opt.state[next(model.parameters())]["step"].item() == len(XS)


def _tensor_lr_run(name: str, graph: bool, lrs: list[float]) -> list[np.ndarray]:
    """One eager step, then one step per value of ``lrs`` written into a CUDA tensor ``lr``:
    eager, or captured once and replayed."""
    params = [p.detach().double().requires_grad_() for p in make_params(ag, "cuda")]
    for i, p in enumerate(params):
        p.grad = (p.detach() * 0.5 + 0.1 * (i + 1)).sin()
    lr = ag.tensor([0.01], device="cuda")  # NOTE: 1-element, as PyTorch takes it
    opt = getattr(ag.optim, name)(params, lr=lr, capturable=True)
    opt.step()
    g = ag.cuda.CUDAGraph()
    if graph:
        with ag.cuda.graph(g):
            opt.step()
    for value in lrs:
        lr.fill_(value)
        g.replay() if graph else opt.step()
    return [p.detach().cpu().numpy() for p in params]


@needs_cuda
@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adamax", "NAdam", "RAdam", "ASGD"])
def test_tensor_lr_is_read_on_the_device_by_each_replay(name: str) -> None:
    """A capturable group keeps a tensor ``lr`` a tensor: a graph replays with the value it
    holds then (a scheduler writes it in place), as eager steps do."""
    lrs = [0.02, 0.005, 0.0]
    replayed = _tensor_lr_run(name, True, lrs)
    for a, b in zip(replayed, _tensor_lr_run(name, False, lrs)):
        if FAKE:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)
    constant = _tensor_lr_run(name, False, [0.01] * len(lrs))
    assert any(np.abs(a - b).max() > 1e-4 for a, b in zip(replayed, constant))
