"""Misuse catalogue: autograd hooks and gradients kept across ``backward(create_graph=True)``.

- Hooks returning the wrong thing: tensor hooks (on leaves and non-leaves), node hooks and
  prehooks (also on multi-output, custom-Function and AccumulateGrad nodes), post-accumulate-grad
  hooks, saved-tensor unpack hooks, module forward and full backward (pre-)hooks. PyTorch checks
  a replacement's type first (dtype and device type), then its size; a node hook must return a
  tuple of the right length.
- ``zero_grad(set_to_none=False)`` after ``backward(create_graph=True)`` (Module and Optimizer):
  the accumulated ``.grad`` is the leaf's own tensor (``CopyBackwards``), never a view into the
  graph, so it can be detached and zeroed in place.
- The two warnings (``backward(create_graph=True)``'s reference cycle, ``tensor(t)`` on a tensor),
  checked against torch's own text.

Cases whose message names a tensor type (``torch.FloatTensor``; ``torch.cuda.FloatTensor`` on
CUDA) run in ``test_type_change``, which reads both as the CPU name.
"""

from __future__ import annotations

import functools
import subprocess
import sys
import warnings
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import ALLOW_CREATE_GRAPH_WARNING, catch, first_sentence
from tests.misuse._catalogue import Case, catalogue_test

pytestmark = ALLOW_CREATE_GRAPH_WARNING


def ones(T: Any, dev: str, *shape: int, rg: bool = False) -> Any:
    return T.ones(*shape, device=dev, requires_grad=rg)


# ---- tensor hooks: Tensor.register_hook on a leaf and on a non-leaf --------------------------
RETURNS: dict[str, Case] = {
    "size": lambda T, dev: ones(T, dev, 4),
    "size_broadcastable": lambda T, dev: ones(T, dev, 1),
    "size_2d": lambda T, dev: ones(T, dev, 1, 3),
    "int": lambda T, dev: 1,
    "float": lambda T, dev: 2.0,
    "list": lambda T, dev: [1.0, 1.0, 1.0],
    "ndarray": lambda T, dev: np.ones(3, dtype=np.float32),
    "tuple": lambda T, dev: (ones(T, dev, 3),),
    "requires_grad": lambda T, dev: ones(T, dev, 3, rg=True),  # allowed
}
TYPE_RETURNS: dict[str, Case] = {
    "float64": lambda T, dev: ones(T, dev, 3).double(),
    "int64": lambda T, dev: T.ones(3, dtype=T.int64, device=dev),
}


def tensor_hook(ret: Case, leaf: bool) -> Case:
    def case(T: Any, dev: str) -> Any:
        x = ones(T, dev, 3, rg=True)
        y = x * 2
        r = ret(T, dev)

        def hook(g: Any) -> Any:
            return r

        (x if leaf else y).register_hook(hook)
        (y * y).sum().backward()
        return x.grad

    return case


CASES: dict[str, Case] = {}
TYPE_CASES: dict[str, Case] = {}
for _name, _ret in RETURNS.items():
    CASES[f"tensor_hook_leaf_returns_{_name}"] = tensor_hook(_ret, True)
    CASES[f"tensor_hook_returns_{_name}"] = tensor_hook(_ret, False)
for _name, _ret in TYPE_RETURNS.items():
    TYPE_CASES[f"tensor_hook_leaf_returns_{_name}"] = tensor_hook(_ret, True)
    TYPE_CASES[f"tensor_hook_returns_{_name}"] = tensor_hook(_ret, False)


class _CallableHook:
    def __init__(self, T: Any, dev: str) -> None:
        self.T, self.dev = T, dev

    def __call__(self, g: Any) -> Any:
        return ones(self.T, self.dev, 4)


def _named_hook(make: Any) -> Case:
    """A hook without ``__name__`` (PyTorch calls it '<unknown>'), or a lambda."""
    def case(T: Any, dev: str) -> Any:
        y = ones(T, dev, 3, rg=True) * 2
        y.register_hook(make(T, dev))
        y.sum().backward()

    return case


def _partial(T: Any, dev: str) -> Any:
    return functools.partial(lambda g, n: ones(T, dev, n), n=4)


CASES["tensor_hook_lambda_name"] = _named_hook(lambda T, dev: lambda g: ones(T, dev, 4))
CASES["tensor_hook_callable_object"] = _named_hook(_CallableHook)
CASES["tensor_hook_partial"] = _named_hook(_partial)


def _zero_d(T: Any, dev: str) -> Any:
    x = T.tensor(2.0, device=dev, requires_grad=True)
    x.register_hook(lambda g: g.reshape(1))
    (x * 3).backward()


def _in_autograd_grad(T: Any, dev: str) -> Any:
    x = ones(T, dev, 3, rg=True)
    y = x * x
    y.register_hook(lambda g: g[:2])
    return T.autograd.grad(y.sum(), x)


def _leaf_in_autograd_grad(T: Any, dev: str) -> Any:
    x = ones(T, dev, 3, rg=True)
    x.register_hook(lambda g: 5)
    return T.autograd.grad((x * x).sum(), x)


CASES["tensor_hook_0d_reshaped"] = _zero_d
CASES["tensor_hook_in_autograd_grad"] = _in_autograd_grad
CASES["tensor_hook_leaf_in_autograd_grad"] = _leaf_in_autograd_grad


def _dtype_under_create_graph(T: Any, dev: str) -> Any:
    x = ones(T, dev, 3, rg=True)
    y = x * x
    y.register_hook(lambda g: g.double())
    T.autograd.grad(y.sum(), x, create_graph=True)


TYPE_CASES["tensor_hook_dtype_under_create_graph"] = _dtype_under_create_graph


# ---- node hooks: grad_fn.register_hook (after) and register_prehook (before) -----------------
NODE_RETURNS: dict[str, Case] = {
    "tensor": lambda T, dev: ones(T, dev, 3),
    "list": lambda T, dev: [ones(T, dev, 3)],
    "int": lambda T, dev: 3,
    "empty_tuple": lambda T, dev: (),
    "two": lambda T, dev: (ones(T, dev, 3), ones(T, dev, 3)),
    "size": lambda T, dev: (ones(T, dev, 4),),
    "int_entry": lambda T, dev: (1,),
    "none": lambda T, dev: (None,),  # allowed: the gradient is dropped
}


def node_hook(ret: Case, pre: bool, dtype: bool = False) -> Case:
    def case(T: Any, dev: str) -> Any:
        x = ones(T, dev, 3, rg=True)
        z = (x * 2).exp()
        r = (ones(T, dev, 3).double(),) if dtype else ret(T, dev)

        def hook(*grads: Any) -> Any:
            return r

        (z.grad_fn.register_prehook if pre else z.grad_fn.register_hook)(hook)
        z.sum().backward()
        return x.grad

    return case


for _name, _ret in NODE_RETURNS.items():
    CASES[f"node_hook_returns_{_name}"] = node_hook(_ret, False)
    CASES[f"node_prehook_returns_{_name}"] = node_hook(_ret, True)
TYPE_CASES["node_hook_returns_float64"] = node_hook(NODE_RETURNS["none"], False, dtype=True)
TYPE_CASES["node_prehook_returns_float64"] = node_hook(NODE_RETURNS["none"], True, dtype=True)


def _split_prehook_count(T: Any, dev: str) -> Any:
    # NOTE: a prehook sees one gradient per forward output, None for the unused one.
    x = ones(T, dev, 4, rg=True)
    a, _ = x.split(2)
    a.grad_fn.register_prehook(lambda go: (go[0],))
    a.sum().backward()


def _split_fills_none(T: Any, dev: str) -> Any:
    x = ones(T, dev, 4, rg=True)
    a, _ = x.split(2)
    a.grad_fn.register_prehook(lambda go: (go[0], ones(T, dev, 2)))
    a.sum().backward()


def _post_fills_none(T: Any, dev: str) -> Any:
    x = ones(T, dev, 3, rg=True)
    y = x * ones(T, dev, 3)  # no gradient for the constant
    y.grad_fn.register_hook(lambda gi, go: (gi[0], ones(T, dev, 3)))
    y.sum().backward()


def _custom(T: Any) -> Any:
    class Two(T.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, y: Any) -> Any:
            return x * y

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            return g * 3, g

    return Two


def _custom_hook_count(T: Any, dev: str) -> Any:
    y = _custom(T).apply(ones(T, dev, 3, rg=True), ones(T, dev, 3, rg=True))
    y.grad_fn.register_hook(lambda gi, go: (gi[0],))
    y.sum().backward()


def _custom_prehook_drops_all(T: Any, dev: str) -> Any:
    # NOTE: the Function still runs, on materialized zeros.
    x = ones(T, dev, 3, rg=True)
    y = _custom(T).apply(x, ones(T, dev, 3))
    y.grad_fn.register_prehook(lambda go: (None,))
    y.sum().backward()
    return x.grad


def _accumulator(T: Any, dev: str, pre: bool, ret: Any) -> Any:
    x = ones(T, dev, 3, rg=True)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    if pre:
        acc.register_prehook(lambda go: ret)
    else:
        acc.register_hook(lambda gi, go: ret)
    y.sum().backward()
    return x.grad


CASES["node_prehook_multi_output_count"] = _split_prehook_count
CASES["node_prehook_fills_a_none_gradient"] = _split_fills_none
CASES["node_hook_fills_a_none_gradient"] = _post_fills_none
CASES["custom_function_hook_count"] = _custom_hook_count
CASES["custom_function_prehook_drops_all"] = _custom_prehook_drops_all
CASES["accumulate_grad_prehook_size"] = lambda T, dev: _accumulator(
    T, dev, True, (ones(T, dev, 4),))
CASES["accumulate_grad_hook_returns_gradient"] = lambda T, dev: _accumulator(
    T, dev, False, (ones(T, dev, 3),))
CASES["accumulate_grad_hook_returns_empty"] = lambda T, dev: _accumulator(T, dev, False, ())


# ---- post-accumulate-grad hooks ---------------------------------------------------------------
def _post_accumulate(T: Any, dev: str, ret: Any, rg: bool = True, leaf: bool = True) -> Any:
    x = ones(T, dev, 3, rg=rg)
    (x if leaf else x * 2).register_post_accumulate_grad_hook(lambda t: ret)
    (x * 2).sum().backward()
    return x.grad


CASES["post_accumulate_hook_returns_tensor"] = lambda T, dev: _post_accumulate(
    T, dev, ones(T, dev, 3))
CASES["post_accumulate_hook_returns_int"] = lambda T, dev: _post_accumulate(T, dev, 1)
CASES["post_accumulate_hook_without_requires_grad"] = lambda T, dev: _post_accumulate(
    T, dev, None, rg=False)
CASES["post_accumulate_hook_on_non_leaf"] = lambda T, dev: _post_accumulate(
    T, dev, None, leaf=False)


# ---- saved-tensor hooks: what unpack_hook returns ---------------------------------------------
def unpack(ret: Case, pack_none: bool = False) -> Case:
    def case(T: Any, dev: str) -> Any:
        x = ones(T, dev, 3, rg=True)
        r = ret(T, dev)
        with T.autograd.graph.saved_tensors_hooks(lambda t: None if pack_none else t,
                                                   lambda p: p if pack_none else r):
            y = x.exp()
        y.sum().backward()
        return x.grad

    return case


CASES["unpack_hook_returns_ndarray"] = unpack(RETURNS["ndarray"])
CASES["unpack_hook_returns_list"] = unpack(RETURNS["list"])
CASES["unpack_hook_returns_tuple"] = unpack(RETURNS["tuple"])
CASES["unpack_hook_returns_none"] = unpack(RETURNS["int"], pack_none=True)
# NOTE: neither library checks the unpacked size; the backward formula then fails, with
# PyTorch's message on bare arrays too (exp's backward runs on arrays here).
CASES["unpack_hook_returns_size"] = unpack(RETURNS["size"])
CASES["unpack_hook_returns_float64"] = unpack(TYPE_RETURNS["float64"])  # runs
CASES["unpack_hook_returns_requires_grad"] = unpack(RETURNS["requires_grad"])  # runs


# ---- module hooks -----------------------------------------------------------------------------
MODULE_RETURNS: dict[str, Case] = {
    "tensor": lambda T, dev: ones(T, dev, 5),  # measured by len(), as in PyTorch
    "int": lambda T, dev: 1,
    "list": lambda T, dev: [ones(T, dev, 4, 3)],
    "two": lambda T, dev: (ones(T, dev, 4, 3), ones(T, dev, 4, 3)),
    "size": lambda T, dev: (ones(T, dev, 5),),
    "slice": lambda T, dev: (ones(T, dev, 4, 3)[:1],),
    "int_entry": lambda T, dev: (1,),
}


def module_hook(kind: str, ret: Case) -> Case:
    def case(T: Any, dev: str) -> Any:
        m = linear(T, dev)
        x = ones(T, dev, 4, 3, rg=True)
        r = ret(T, dev)
        if kind == "forward":
            m.register_forward_hook(lambda mod, args, out: r)
        elif kind == "backward":
            m.register_full_backward_hook(lambda mod, gi, go: r)
        else:
            m.register_full_backward_pre_hook(lambda mod, go: r)
        m(x).sum().backward()
        return x.grad

    return case


for _kind in ("backward", "backward_pre"):
    for _name, _ret in MODULE_RETURNS.items():
        CASES[f"module_{_kind}_hook_returns_{_name}"] = module_hook(_kind, _ret)
    TYPE_CASES[f"module_{_kind}_hook_returns_float64"] = module_hook(
        _kind, lambda T, dev: (ones(T, dev, 4, 3).double(),))
CASES["module_forward_hook_returns_int"] = module_hook("forward", MODULE_RETURNS["int"])
CASES["module_forward_hook_returns_tuple"] = module_hook("forward", MODULE_RETURNS["two"])


# ---- zero_grad after backward(create_graph=True) ----------------------------------------------
def _grad_state(p: Any) -> tuple[Any, ...]:
    g = p.grad
    return g, g.requires_grad, g.grad_fn is None, g.is_leaf


def linear(T: Any, dev: str) -> Any:
    """``Linear(3, 2)`` with the same weights in both libraries."""
    m = T.nn.Linear(3, 2).to(dev)
    with T.no_grad():
        m.weight.copy_(T.tensor([[0.5, -0.25, 0.125], [-0.5, 0.75, 1.0]], device=dev))
        m.bias.copy_(T.tensor([0.1, -0.2], device=dev))
    return m


def _linear(T: Any, dev: str) -> tuple[Any, Any]:
    m = linear(T, dev)
    x = T.arange(12.0, device=dev).reshape(4, 3) / 10
    (m(x) ** 2).sum().backward(create_graph=True)
    return m, x


def _module_zero_grad_keep(T: Any, dev: str) -> Any:
    m, _ = _linear(T, dev)
    m.zero_grad(set_to_none=False)
    return _grad_state(m.weight) + _grad_state(m.bias)


def _optimizer_zero_grad_keep(T: Any, dev: str) -> Any:
    m, _ = _linear(T, dev)
    opt = T.optim.SGD(m.parameters(), lr=0.1)
    opt.zero_grad(set_to_none=False)
    return _grad_state(m.weight) + _grad_state(m.bias)


def _adam_zero_grad_keep_twice(T: Any, dev: str) -> Any:
    m, x = _linear(T, dev)
    (m(x) ** 2).sum().backward(create_graph=True)  # the grads are now AddBackward0
    opt = T.optim.Adam(m.parameters(), lr=0.1)
    opt.zero_grad(set_to_none=False)
    return _grad_state(m.weight)


def _zeroed_then_accumulate(T: Any, dev: str) -> Any:
    m, x = _linear(T, dev)
    m.zero_grad(set_to_none=False)
    m(x).sum().backward()
    return m.weight.grad, m.bias.grad


def _zero_grad_none(T: Any, dev: str) -> Any:
    m, _ = _linear(T, dev)
    m.zero_grad()
    return m.weight.grad, m.bias.grad


def _grad_fn_names(T: Any, dev: str) -> Any:
    x = T.tensor([1.0, 2.0, 3.0], device=dev, requires_grad=True)
    y = x * 2
    y.retain_grad()
    (y * y).sum().backward(create_graph=True)
    first = (x.grad.grad_fn.name(), y.grad.grad_fn.name())
    (y * y).sum().backward(create_graph=True)
    return first + (x.grad.grad_fn.name(), y.grad.grad_fn.name(), x.grad, y.grad)


def _inputs_non_leaf_clone(T: Any, dev: str) -> Any:
    x = ones(T, dev, 3, rg=True)
    y = x * 2
    (y * y).sum().backward(create_graph=True, inputs=[y])
    return y.grad.grad_fn.name(), y.grad, x.grad


def _detach_grad_in_place(T: Any, dev: str) -> Any:
    m, _ = _linear(T, dev)
    g = m.weight.grad.detach_()
    return g.requires_grad, g.grad_fn is None, m.weight.grad is g


def _expanded_leaf(T: Any, dev: str) -> Any:
    q = ones(T, dev, 3, rg=True)
    (q.expand(2, 3) * q).sum().backward(create_graph=True)
    name = q.grad.grad_fn.name()
    opt = T.optim.SGD([q], lr=0.1)
    opt.zero_grad(set_to_none=False)
    return name, _grad_state(q)


def _grad_penalty(T: Any, dev: str) -> Any:
    m, _ = _linear(T, dev)
    w = m.weight
    penalty = (w.grad ** 2).sum()
    w.grad = None
    penalty.backward()
    return w.grad


def _grad_is_not_the_graphs(T: Any, dev: str) -> Any:
    # NOTE: the gradient the graph passes on (here: the same tensor for both leaves) is copied
    # into each .grad, so zeroing one leaves the other alone.
    a, b = ones(T, dev, 3, rg=True), ones(T, dev, 3, rg=True)
    (a + b).sum().backward(create_graph=True)
    a.grad.detach_().zero_()
    return a.grad, b.grad


CASES.update({
    "module_zero_grad_keep_after_create_graph": _module_zero_grad_keep,
    "optimizer_zero_grad_keep_after_create_graph": _optimizer_zero_grad_keep,
    "optimizer_zero_grad_keep_after_two_create_graph": _adam_zero_grad_keep_twice,
    "zeroed_grad_accumulates_again": _zeroed_then_accumulate,
    "zero_grad_to_none_after_create_graph": _zero_grad_none,
    "create_graph_grad_fn_names": _grad_fn_names,
    "create_graph_inputs_non_leaf_clone": _inputs_non_leaf_clone,
    "create_graph_grad_detach_in_place": _detach_grad_in_place,
    "create_graph_expanded_leaf_zero_grad": _expanded_leaf,
    "create_graph_gradient_penalty": _grad_penalty,
    "create_graph_grad_is_not_the_graphs": _grad_is_not_the_graphs,
})

test_misuse = catalogue_test(CASES)


@pytest.mark.parametrize("name", sorted(TYPE_CASES))
def test_type_change(device: str, name: str) -> None:
    """As the catalogue, where the message names tensor types (``torch.cuda.`` on CUDA)."""
    theirs = catch(lambda: TYPE_CASES[name](torch, "cpu"))
    ours = catch(lambda: TYPE_CASES[name](ag, device))
    assert isinstance(ours, type(theirs)), (ours, theirs)
    cuda = "torch.cuda." in str(ours)
    assert cuda == (device != "cpu"), ours
    assert first_sentence(str(ours).replace("torch.cuda.", "torch.")) == \
        first_sentence(str(theirs)), (str(ours), str(theirs))


def test_hook_changing_the_device_type(device: str) -> None:
    if device == "cpu":
        pytest.skip("needs a second device type")
    x = ag.ones(3, device=device, requires_grad=True)
    y = x * 2
    y.register_hook(lambda g: g.cpu())
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    # NOTE: PyTorch's type check covers the device type: its text, as check_variable_result has it.
    assert str(e.value) == ("hook '<lambda>' has changed the type of value (was "
                            "torch.cuda.FloatTensor got torch.FloatTensor)")


# ---- warnings ---------------------------------------------------------------------------------
def _torch_create_graph_warning() -> str:
    # NOTE: PyTorch warns once per process, so its text comes from a fresh one.
    code = ("import torch, warnings\n"
            "warnings.simplefilter('always')\n"
            "x = torch.ones(2, requires_grad=True)\n"
            "with warnings.catch_warnings(record=True) as w:\n"
            "    warnings.simplefilter('always')\n"
            "    (x * x).sum().backward(create_graph=True)\n"
            "print(w[0].category.__name__ + ':' + str(w[0].message))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.strip()
    category, text = out.split(":", 1)
    assert category == "UserWarning", out
    return text.split(" (Triggered internally at")[0]


def test_create_graph_warning_matches_torch(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ag.autograd.api, "_CREATE_GRAPH_WARNED", False)
    x = ag.ones(2, requires_grad=True)
    with pytest.warns(UserWarning) as record:
        (x * x).sum().backward(create_graph=True)
    assert [str(w.message) for w in record] == [_torch_create_graph_warning()]
    assert record[0].filename == __file__  # points at the caller
    assert x.grad is not None and x.grad.grad_fn is not None  # the backward ran in full


def test_create_graph_warning_once_and_only_for_backward(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ag.autograd.api, "_CREATE_GRAPH_WARNED", False)
    x = ag.ones(2, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ag.autograd.grad((x * x).sum(), x, create_graph=True)
        (x * x).sum().backward()
    with pytest.warns(UserWarning, match="reference cycle"):
        ag.autograd.backward([(x * x).sum()], create_graph=True, inputs=[x])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (x * x).sum().backward(create_graph=True)  # once per process, as PyTorch


def _recorded(fn: Any) -> tuple[Any, list[Any]]:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        out = fn()
    return out, record


COPY_CONSTRUCT = {
    "tensor": lambda T, dev: T.tensor(T.ones(2, device=dev)),
    "requires_grad": lambda T, dev: T.tensor(T.ones(2, device=dev, requires_grad=True)),
    "non_leaf": lambda T, dev: T.tensor(T.ones(2, device=dev, requires_grad=True) * 2),
    "0d": lambda T, dev: T.tensor(T.tensor(1.5, device=dev)),
    "dtype_and_requires_grad": lambda T, dev: T.tensor(T.ones(2, device=dev), dtype=T.float64,
                                                       requires_grad=True),
    "new_tensor": lambda T, dev: T.ones(2, device=dev).new_tensor(T.ones(2, device=dev)),
    "list_of_tensors": lambda T, dev: T.tensor([T.tensor(1.0), T.tensor(2.0)]),  # no warning
    "ndarray": lambda T, dev: T.tensor(np.ones(2)),  # no warning
    "as_tensor": lambda T, dev: T.as_tensor(T.ones(2, device=dev)),  # no warning
}


@pytest.mark.parametrize("name", sorted(COPY_CONSTRUCT))
def test_copy_construct_warning_matches_torch(device: str, name: str) -> None:
    fn = COPY_CONSTRUCT[name]
    ref, theirs = _recorded(lambda: fn(torch, "cpu"))
    out, ours = _recorded(lambda: fn(ag, device))
    assert [(w.category, str(w.message)) for w in ours] == \
        [(w.category, str(w.message)) for w in theirs]
    assert all(w.filename == __file__ for w in ours)  # points at the caller
    assert (out.requires_grad, out.is_leaf) == (ref.requires_grad, ref.is_leaf)
    np.testing.assert_array_equal(out.detach().cpu().numpy(), ref.detach().numpy())
