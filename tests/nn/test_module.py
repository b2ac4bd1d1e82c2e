"""Module mechanics against the torch oracle: registration, traversal order, state_dict and
load_state_dict (with PyTorch's error text), repr, modes, dtype/device moves and containers."""

from __future__ import annotations

import copy
from collections import OrderedDict
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import same_error
from tests.nn._util import copy_params


def nested(T: Any) -> Any:
    """A model with every container, shared modules and a buffer."""
    nn = T.nn

    class Block(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(3, 3)
            self.act = nn.GELU(approximate="tanh")
            self.register_buffer("running", T.zeros(3))
            self.register_buffer("scratch", T.ones(1), persistent=False)

        def forward(self, x: Any) -> Any:
            return self.act(self.fc(x)) + self.running

    shared = nn.Linear(3, 3, bias=False)
    return nn.Sequential(OrderedDict([
        ("embed", nn.Linear(2, 3)),
        ("blocks", nn.ModuleList([Block(), Block(), nn.Dropout(0.25), Block()])),
        ("heads", nn.ModuleDict({"a": shared, "b": nn.Sequential(shared, nn.Tanh()),
                                 "c": nn.Flatten(0)})),
        ("out", nn.Sequential(nn.LeakyReLU(0.2), nn.ELU(), nn.Softplus(beta=2.0),
                              nn.Softmax(dim=-1), nn.LogSoftmax(1), nn.SiLU(), nn.ReLU(),
                              nn.Sigmoid(), nn.Identity(), nn.Linear(3, 1, bias=False))),
        ("loss", nn.CrossEntropyLoss(label_smoothing=0.1)),
    ]))


def test_repr_matches_torch() -> None:
    assert repr(nested(ag)) == repr(nested(torch))
    for T in (ag, torch):
        assert repr(T.nn.ModuleList()) == "ModuleList()"


def test_traversal_names_and_order() -> None:
    ours, theirs = nested(ag), nested(torch)
    for fn in (lambda m: [n for n, _ in m.named_parameters()],
               lambda m: [n for n, _ in m.named_parameters(remove_duplicate=False)],
               lambda m: [n for n, _ in m.named_parameters(prefix="model", recurse=False)],
               lambda m: [n for n, _ in m.blocks.named_parameters(prefix="x")],
               lambda m: [n for n, _ in m.named_buffers()],
               lambda m: [n for n, _ in m.named_modules()],
               lambda m: [n for n, _ in m.named_modules(remove_duplicate=False)],
               lambda m: [n for n, _ in m.named_children()],
               lambda m: [type(c).__name__ for c in m.children()],
               lambda m: [type(c).__name__ for c in m.modules()],
               lambda m: len(list(m.parameters())),
               lambda m: list(m.state_dict()),
               lambda m: list(m.state_dict(prefix="p.")),
               lambda m: list(m.state_dict()._metadata)):
        assert fn(ours) == fn(theirs)


def test_state_dict_round_trip(device: str) -> None:
    src, dst = nested(ag).to(device), nested(ag).to(device)
    for b in src.buffers():
        b.add_(1.5)
    sd = src.state_dict()
    assert all(not v.requires_grad for v in sd.values())
    assert sd["embed.weight"].data_ptr() == src.embed.weight.data_ptr()  # detached, not copied
    assert src.state_dict(keep_vars=True)["embed.weight"] is src.embed.weight
    weight = dst.embed.weight
    result = dst.load_state_dict(sd)
    assert repr(result) == "<All keys matched successfully>"
    assert dst.embed.weight is weight  # copied in place: optimizers keep their parameters
    for (n, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        np.testing.assert_array_equal(a.cpu().numpy(), b.cpu().numpy(), err_msg=n)
    assert dst.embed.weight.requires_grad and dst.embed.weight.grad_fn is None


def test_state_dict_matches_torch_values() -> None:
    ours, theirs = nested(ag), nested(torch)
    theirs.load_state_dict({k: torch.from_numpy(np.array(v.numpy()))
                            for k, v in ours.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 2))

    def run(m: Any, h: Any) -> Any:
        h = m.embed(h)
        for block in m.blocks:
            h = block(h)
        return m.out[:-1](m.heads.b(m.heads.a(h)))

    ours.eval()
    theirs.eval()
    a = run(ours, ag.tensor(x.tolist(), dtype=ag.float32))
    b = run(theirs, torch.tensor(x, dtype=torch.float32))
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("case", [
    lambda T, m: m.load_state_dict({"weight": T.zeros(2, 4), "foo": T.zeros(1)}),
    lambda T, m: m.load_state_dict({"weight": T.zeros(2, 4), "bias": T.zeros(3)}, strict=False),
    lambda T, m: m.load_state_dict({"weight": T.zeros(3, 4)}),
    lambda T, m: m.load_state_dict({"weight": 3, "bias": T.zeros(3)}),
    lambda T, m: m.load_state_dict([1]),
])
def test_load_state_dict_errors(case: Any) -> None:
    def run(T: Any, dev: str) -> Any:
        return case(T, T.nn.Linear(4, 3))

    err = same_error(run, "cpu")
    theirs = None
    try:
        run(torch, "cpu")
    except Exception as e:  # noqa: BLE001
        theirs = str(e)
    assert str(err) == theirs  # the whole multi-line report, not only its first sentence


def test_load_state_dict_non_strict_reports_keys() -> None:
    for T in (ag, torch):
        m = T.nn.Sequential(T.nn.Linear(2, 2), T.nn.ReLU(), T.nn.Linear(2, 1))
        res = m.load_state_dict({"0.weight": T.zeros(2, 2), "9.x": T.zeros(1), "2.y": T.ones(1)},
                                strict=False)
        assert res.missing_keys == ["0.bias", "2.weight", "2.bias"]
        assert res.unexpected_keys == ["9.x", "2.y"]
        assert str(res).startswith("_IncompatibleKeys(missing_keys=['0.bias'")


def test_load_state_dict_assign() -> None:
    m = ag.nn.Linear(2, 2)
    w = ag.ones(2, 2)
    m.load_state_dict({"weight": w, "bias": ag.zeros(2)}, assign=True)
    assert isinstance(m.weight, ag.nn.Parameter) and m.weight.requires_grad
    assert m.weight.data_ptr() == w.data_ptr()


@pytest.mark.parametrize("case", [
    lambda T, m: m.register_buffer("weight", T.zeros(1)),
    lambda T, m: m.register_buffer("a.b", T.zeros(1)),
    lambda T, m: m.register_buffer("", T.zeros(1)),
    lambda T, m: m.register_buffer("x", 3),
    lambda T, m: m.register_buffer(1, T.zeros(1)),
    lambda T, m: m.register_parameter("x", T.zeros(1)),
    lambda T, m: m.register_parameter("a.b", None),
    lambda T, m: m.register_parameter("p", T.nn.Parameter(T.ones(1)) * 2),
    lambda T, m: setattr(m, "weight", T.zeros(3, 4)),
    lambda T, m: m.nonexistent,
    lambda T, m: m.add_module("a.b", T.nn.ReLU()),
    lambda T, m: m.add_module("x", 3),
    lambda T, m: m.add_module("weight", T.nn.ReLU()),
    lambda T, m: m.to(T.int64),
    lambda T, m: m.train("yes"),
    lambda T, m: T.nn.Module()(1),
    lambda T, m: T.nn.ModuleList()(1),
    lambda T, m: T.nn.Sequential(T.nn.ReLU())[3],
    lambda T, m: T.nn.ModuleList([T.nn.ReLU()])[-2],
    lambda T, m: T.nn.ModuleDict({"a": T.nn.ReLU()})["b"],
    lambda T, m: T.nn.Parameter(T.zeros(2, dtype=T.int64)),
    lambda T, m: T.nn.Module(3),
    lambda T, m: T.nn.Module(x=1),
])
def test_registration_errors(case: Any) -> None:
    same_error(lambda T, dev: case(T, T.nn.Linear(4, 3)), "cpu")


def test_attribute_registration_moves_between_tables() -> None:
    for T in (ag, torch):
        m = T.nn.Module()
        m.y = T.nn.Linear(1, 1)
        m.y = T.nn.Parameter(T.ones(1))  # a parameter replaces the module of the same name
        m.register_buffer("b", T.ones(1))
        m.b = T.nn.Parameter(T.ones(1))
        assert list(m._modules) == [] and list(m._parameters) == ["y", "b"]
        assert list(m._buffers) == []
    for T in (ag, torch):  # NOTE: the class path in the message differs (torch.nn.modules...)
        with pytest.raises(TypeError, match=r"cannot assign '\S+\.Linear' as parameter 'x' "
                                            r"\(torch.nn.Parameter or None expected\)"):
            _with_param(T).x = T.nn.Linear(1, 1)
    m = ag.nn.Module()
    m.x = ag.nn.Linear(1, 1)
    m.register_buffer("b", ag.zeros(1))
    m.b = ag.ones(1)  # plain tensors assigned to a buffer name stay buffers
    assert float(m._buffers["b"]) == 1.0
    m.plain = ag.ones(1)  # other tensors are plain attributes
    assert "plain" not in m._buffers and "plain" not in m._parameters
    m.x = None
    assert m._modules["x"] is None and [n for n, _ in m.named_modules()] == [""]
    del m.b
    assert "b" not in m._buffers and not hasattr(m, "b")
    assert {"x", "plain", "forward"} <= set(dir(m))


def _with_param(T: Any) -> Any:
    m = T.nn.Module()
    m.x = T.nn.Parameter(T.ones(2))
    return m


def test_train_eval_and_requires_grad() -> None:
    m = nested(ag)
    assert all(mod.training for mod in m.modules())
    assert m.eval() is m and not any(mod.training for mod in m.modules())
    m.train()
    assert all(mod.training for mod in m.modules())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())


def test_zero_grad(device: str) -> None:
    m = ag.nn.Linear(3, 2).to(device)
    m(ag.ones(4, 3, device=device)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert m.weight.grad is not None and not m.weight.grad.cpu().numpy().any()
    m.zero_grad()
    assert m.weight.grad is None and m.bias.grad is None


def test_to_keeps_parameter_objects_and_converts_floats_only(device: str) -> None:
    m = ag.nn.Linear(3, 2)
    m.register_buffer("steps", ag.tensor([3]))
    m(ag.ones(1, 3)).sum().backward()
    weight = m.weight
    assert m.to(device, ag.float64) is m
    assert m.weight is weight and isinstance(m.weight, ag.nn.Parameter)
    assert m.weight.dtype == ag.float64 and m.weight.grad.dtype == ag.float64
    assert m.weight.device.type == device and m.steps.dtype == ag.int64
    assert m.float().weight.dtype == ag.float32 and m.weight.requires_grad
    assert m.double().bias.dtype == ag.float64
    assert m.to(dtype=ag.float32).cpu().weight.device.type == "cpu"
    assert m.to(ag.zeros(1, dtype=ag.float64)).weight.dtype == ag.float64
    out = m(ag.ones(2, 3, dtype=ag.float64))
    assert out.dtype == ag.float64 and out.grad_fn.name() == "AddmmBackward0"


def test_apply_and_get_submodule() -> None:
    m = nested(ag)
    seen: list[str] = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    want: list[str] = []
    nested(torch).apply(lambda mod: want.append(type(mod).__name__))
    assert seen == want
    assert m.get_submodule("blocks.1.fc") is m.blocks[1].fc
    with pytest.raises(AttributeError, match="has no attribute `zz`"):
        m.get_submodule("blocks.zz")


def test_parameter_semantics(device: str) -> None:
    data = ag.ones(2, device=device)
    p = ag.nn.Parameter(data)
    assert isinstance(p, ag.Tensor) and p.requires_grad and p.is_leaf
    assert p.data_ptr() == data.data_ptr()
    assert type(p * 2) is ag.Tensor and type(p.detach()) is ag.Tensor
    assert repr(ag.nn.Parameter(ag.ones(2))) == repr(torch.nn.Parameter(torch.ones(2)))
    assert repr(ag.nn.Parameter(ag.ones(2), requires_grad=False)) == \
        repr(torch.nn.Parameter(torch.ones(2), requires_grad=False))
    assert repr(ag.nn.Parameter()) == repr(torch.nn.Parameter())
    q = copy.deepcopy(p)
    assert isinstance(q, ag.nn.Parameter) and q.data_ptr() != p.data_ptr()
    np.testing.assert_array_equal(q.detach().cpu().numpy(), [1.0, 1.0])


# ---- containers ------------------------------------------------------------------------------

def test_sequential_indexing_and_mutation() -> None:
    for T in (ag, torch):
        s = T.nn.Sequential(T.nn.ReLU(), T.nn.Tanh(), T.nn.Sigmoid())
        assert len(s) == 3 and isinstance(s[-1], T.nn.Sigmoid)
        assert repr(s[1:]) == "Sequential(\n  (1): Tanh()\n  (2): Sigmoid()\n)"
        assert [type(m).__name__ for m in s] == ["ReLU", "Tanh", "Sigmoid"]
        assert s.append(T.nn.Identity()) is s and list(s._modules) == ["0", "1", "2", "3"]
        del s[1]
        assert list(s._modules) == ["0", "1", "2"] and isinstance(s[1], T.nn.Sigmoid)
        s[0] = T.nn.ELU()
        assert isinstance(s[0], T.nn.ELU)
        assert len(s + T.nn.Sequential(T.nn.ReLU())) == 4


def test_module_list_and_dict() -> None:
    for T in (ag, torch):
        ml = T.nn.ModuleList([T.nn.Linear(1, 1)])
        ml.append(T.nn.ReLU())
        ml.extend([T.nn.Tanh()])
        ml += [T.nn.Sigmoid()]
        ml.insert(1, T.nn.ELU())
        assert [type(m).__name__ for m in ml] == ["Linear", "ELU", "ReLU", "Tanh", "Sigmoid"]
        assert isinstance(ml[1:3], T.nn.ModuleList) and len(ml[1:3]) == 2
        assert len(list(ml.parameters())) == 2
        md = T.nn.ModuleDict({"b": T.nn.ReLU()})
        md["a"] = T.nn.Linear(2, 2)
        md.update([("c", T.nn.Tanh())])
        assert list(md) == ["b", "a", "c"] and "a" in md and len(md) == 3
        assert [n for n, _ in md.named_parameters()] == ["a.weight", "a.bias"]
        assert isinstance(md.pop("b"), T.nn.ReLU) and list(md.keys()) == ["a", "c"]


def test_sequential_forward_matches_torch(device: str) -> None:
    ours = ag.nn.Sequential(ag.nn.Linear(4, 8), ag.nn.GELU(), ag.nn.Linear(8, 8), ag.nn.SiLU(),
                            ag.nn.Linear(8, 3), ag.nn.LogSoftmax(dim=1)).double()
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.GELU(), torch.nn.Linear(8, 8),
                                 torch.nn.SiLU(), torch.nn.Linear(8, 3),
                                 torch.nn.LogSoftmax(dim=1)).double()
    copy_params(ours, theirs)
    ours.to(device)
    x = np.random.default_rng(0).standard_normal((5, 4))
    y = [0, 2, 1, 1, 0]
    lo = ag.nn.functional.nll_loss(ours(ag.tensor(x.tolist(), dtype=ag.float64, device=device)),
                                   ag.tensor(y, device=device))
    lt = torch.nn.functional.nll_loss(theirs(torch.tensor(x)), torch.tensor(y))
    lo.backward()
    lt.backward()
    np.testing.assert_allclose(lo.item(), lt.item(), rtol=1e-10)
    for (n, a), (_, b) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(a.grad.cpu().numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12,
                                   err_msg=n)
