"""Misuse catalogue: in-place ops under autograd, on views and on what they saved.

- An in-place op whose node saves its output (``exp_``, ``sigmoid_``, ``tanh_``, ``relu_``,
  ``sqrt_``), then another in-place write to that storage,
  directly, through a view, a ``detach()``-ed alias or under ``no_grad``: backward refuses ("modified
  by an inplace operation"); through ``.data`` (no shared version counter) it runs.
- In-place ops on the outputs of ``split``/``chunk``/``unbind`` (one piece or several) and on
  views of them are refused; outside grad mode, or on pieces that need no gradient, they run.
- ``view`` in the view chain of an in-place op, replayed in backward on a gradient whose strides
  are not the base's, and on bases laid out in another order (``x.t().clone()``).
- ``expand`` that broadcasts nothing (same shape, new leading size-1 dims, empty results) is
  writable; a real broadcast is refused ("more than one element ... refers to a single memory
  location") by in-place ops, but not by ``fill_``/``zero_``, nor in its parts that share no
  memory (``x.expand(2, 3)[0].mul_(2)``).
- ``add_``/``sub_`` check ``alpha`` against the dtype they compute in, as ``add``/``sub`` do.
- In-place ``elu_``/``leaky_relu_`` save their result (EluBackward1, LeakyReluBackward1): a later
  write makes backward refuse, a negative slope is refused in backward.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest

import autograd_gpu as ag
from tests.misuse._catalogue import Case, catalogue_test


def leaf(T: Any, dev: str, *shape: int) -> Any:
    data = np.arange(1, 1 + int(np.prod(shape)), dtype=np.float64).reshape(shape) / 4
    return T.tensor(data, device=dev, requires_grad=True)


def _grads(T: Any, x: Any, out: Any) -> tuple[Any, Any]:
    """``out`` and the gradient of ``(out * out).sum()`` with respect to ``x``."""
    (out * out).sum().backward()
    return out, x.grad


# ---- an in-place op that saved its output, then another write to that storage -----------------

def _saved_output(first: Callable[[Any, Any], Any], then: Callable[[Any, Any], Any]) -> Case:
    """``first(T, y)`` on ``y = x * 1`` (an op that saves its output), ``then(T, y)`` writes to
    ``y``'s storage again; the gradient of ``y`` goes back to ``x``."""
    def case(T: Any, dev: str) -> Any:
        x = leaf(T, dev, 2, 3)
        y = x * 1
        first(T, y)
        then(T, y)
        return _grads(T, x, y)

    return case


def _no_grad_mul(T: Any, y: Any) -> None:
    with T.no_grad():
        y.mul_(2)


FIRST: dict[str, Callable[[Any, Any], Any]] = {
    "sigmoid_": lambda T, y: y.sigmoid_(),
    "exp_": lambda T, y: y.exp_(),
    "tanh_": lambda T, y: y.tanh_(),
    "relu_": lambda T, y: y.relu_(),
    "sqrt_": lambda T, y: y.sqrt_(),
    "relu_inplace": lambda T, y: T.nn.functional.relu(y, inplace=True),
    "view_exp_": lambda T, y: y[:1].exp_(),
    "transposed_view_exp_": lambda T, y: y.t().exp_(),
}
THEN: dict[str, Callable[[Any, Any], Any]] = {
    "mul_": lambda T, y: y.mul_(2),
    "view_mul_": lambda T, y: y[:1].mul_(2),
    "row_add_": lambda T, y: y[1].add_(1),
    "setitem": lambda T, y: y.__setitem__((0, 0), 5.0),
    "detached_mul_": lambda T, y: y.detach().mul_(2),
    "no_grad_mul_": _no_grad_mul,
    "data_mul_": lambda T, y: y.data.mul_(2),  # .data has its own version counter: runs
    "nothing": lambda T, y: None,
}

CASES: dict[str, Case] = {
    f"saved_output_{a}_then_{b}": _saved_output(FIRST[a], THEN[b]) for a in FIRST for b in THEN
}


def _saved_output_then_read(T: Any, dev: str) -> Any:
    """No write after the in-place op: backward runs, the node reading the (shared) output."""
    x = leaf(T, dev, 3)
    y = x * 1
    y.exp_()
    z = y * 2
    return _grads(T, x, z)


def _saved_output_higher_order(T: Any, dev: str) -> Any:
    x = leaf(T, dev, 3)
    y = x * 1
    y.sigmoid_()
    (g,) = T.autograd.grad(y.sum(), x, create_graph=True)
    g.sum().backward()
    return g, x.grad


CASES["saved_output_then_read"] = _saved_output_then_read
CASES["saved_output_higher_order"] = _saved_output_higher_order


# ---- in-place activations: elu_/leaky_relu_ save their result (EluBackward1,
# LeakyReluBackward1), silu_ its input; a negative slope is refused in backward ------------------

def _activation(first: Callable[[Any, Any], Any], then: Callable[[Any, Any], Any]) -> Case:
    def case(T: Any, dev: str) -> Any:
        x = T.tensor([[-1.5, -0.25, 0.0], [0.5, 1.0, 2.0]], device=dev, requires_grad=True)
        y = x * 1
        out = first(T, y)
        name = type(y.grad_fn).__name__
        then(T, y)
        return out is y, name, _grads(T, x, y)

    return case


def _f(name: str, *args: Any, **kwargs: Any) -> Callable[[Any, Any], Any]:
    return lambda T, y: getattr(T.nn.functional, name)(y, *args, **kwargs)


ACTIVATIONS: dict[str, Callable[[Any, Any], Any]] = {
    "elu_inplace": _f("elu", 1.5, inplace=True),
    "elu_": _f("elu_", 0.5),
    "elu_zero_alpha": _f("elu_", 0.0),
    "elu_negative_alpha": _f("elu_", -0.5),
    "elu_module": lambda T, y: T.nn.ELU(2.0, inplace=True)(y),
    "leaky_relu_inplace": _f("leaky_relu", 0.2, inplace=True),
    "leaky_relu_": _f("leaky_relu_", 0.1),
    "leaky_relu_zero_slope": _f("leaky_relu_", 0.0),
    "leaky_relu_negative_slope": _f("leaky_relu_", -0.1),
    "leaky_relu_module": lambda T, y: T.nn.LeakyReLU(0.3, inplace=True)(y),
    "silu_inplace": _f("silu", inplace=True),
}
for _a, _first in ACTIVATIONS.items():
    for _b in ("mul_", "setitem", "no_grad_mul_", "data_mul_", "nothing"):
        CASES[f"activation_{_a}_then_{_b}"] = _activation(_first, THEN[_b])


def _activation_higher_order(first: Callable[[Any, Any], Any]) -> Case:
    def case(T: Any, dev: str) -> Any:
        x = T.tensor([-1.5, -0.25, 0.0, 0.5, 2.0], device=dev, requires_grad=True)
        y = x * 1
        first(T, y)
        (g,) = T.autograd.grad((y * y).sum(), x, create_graph=True)
        g.sum().backward()
        return g, x.grad

    return case


for _a in ("elu_", "elu_inplace", "leaky_relu_", "leaky_relu_inplace"):
    CASES[f"activation_{_a}_higher_order"] = _activation_higher_order(ACTIVATIONS[_a])
CASES["activation_elu_no_grad"] = lambda T, dev: T.nn.functional.elu_(
    T.tensor([-1.0, 0.0, 2.0], device=dev), -0.5)
CASES["activation_leaky_relu_no_grad"] = lambda T, dev: T.nn.functional.leaky_relu_(
    T.tensor([-1.0, 0.0, 2.0], device=dev), -0.5)
CASES["activation_elu_on_leaf"] = lambda T, dev: T.nn.functional.elu_(
    T.tensor([-1.0, 0.0, 2.0], device=dev, requires_grad=True))
CASES["activation_leaky_relu_not_tensor"] = lambda T, dev: T.nn.functional.leaky_relu_([1.0])


# ---- split, chunk, unbind: in place on their outputs --------------------------------------------

def _piece(make: Callable[[Any], Any], grad: bool = True, mode: str = "grad") -> Case:
    """``make(y).mul_(2)`` on ``y = x * 1`` (``x`` of shape (2, 3)); ``mode``: "grad", "no_grad"
    (pieces made and written under no_grad) or "view_no_grad" (made under no_grad only)."""
    def case(T: Any, dev: str) -> Any:
        x = leaf(T, dev, 2, 3)
        y = x * 1 if grad else x.detach() * 1
        if mode == "no_grad":
            with T.no_grad():
                make(y).mul_(2)
        elif mode == "view_no_grad":
            with T.no_grad():
                p = make(y)
            p.mul_(2)
        else:
            make(y).mul_(2)
        if not grad:
            return y
        return _grads(T, x, y)

    return case


PIECES: dict[str, Callable[[Any], Any]] = {
    "split_whole": lambda y: y.split(2)[0],
    "split_one_of_two": lambda y: y.split(1)[1],
    "split_dim1_last": lambda y: y.split(2, 1)[1],
    "split_with_sizes_whole": lambda y: y.split([2])[0],
    "split_with_sizes": lambda y: y.split([1, 2], 1)[1],
    "chunk_one": lambda y: y.chunk(1)[0],
    "chunk_more_than_size": lambda y: y.chunk(5)[1],
    "chunk_dim1": lambda y: y.chunk(3, 1)[2],
    "unbind": lambda y: y.unbind(0)[1],
    "unbind_dim1": lambda y: y.unbind(1)[0],
    "unbind_size_one": lambda y: y[:1].unbind(0)[0],
    "slice_of_piece": lambda y: y.split(1)[0][:, :1],
    "view_of_piece": lambda y: y.split(1)[0].view(-1),
    "select_of_piece": lambda y: y.split(1)[0][0],
    "t_of_piece": lambda y: y.split(1)[0].t(),
    "squeeze_of_piece": lambda y: y.split(1)[0].squeeze(0),
    "split_of_piece": lambda y: y.split(1)[1].split(1, 1)[2],
    "piece_of_view": lambda y: y[:, 1:].split(1)[1],
}
for _name, _make in PIECES.items():
    CASES[f"inplace_on_{_name}"] = _piece(_make)
    CASES[f"inplace_on_{_name}_no_grad"] = _piece(_make, mode="no_grad")
    CASES[f"inplace_on_{_name}_without_grad"] = _piece(_make, grad=False)
CASES["inplace_on_split_made_under_no_grad"] = _piece(PIECES["split_one_of_two"],
                                                        mode="view_no_grad")


# ---- view() in the chain of an in-place op on a view, replayed in backward ----------------------

def _flat_every_other(T: Any, dev: str) -> Any:
    """The gradient reaching CopySlices is a transpose's: view(-1) must replay on it."""
    x = leaf(T, dev, 2, 2)
    y = x * 1
    y.view(-1)[::2].mul_(2)
    y.t().sum().backward()
    return y, x.grad


def _transposed_base(T: Any, dev: str) -> Any:
    """``y`` is laid out in F order (a clone keeps the layout); ``y.t().view(-1)`` is a view of
    it."""
    x = leaf(T, dev, 2, 3)
    y = x.t().clone()
    y.t().view(-1)[::2].mul_(2)
    return _grads(T, x, y)


def _transposed_base_view_grad(T: Any, dev: str) -> Any:
    """The view itself is differentiated (AsStridedBackward0's scatter into the base)."""
    x = leaf(T, dev, 2, 3)
    y = x.t().clone()
    v = y.t().view(-1)[1:]
    v.mul_(2)
    return _grads(T, x, v)


def _permuted_base(T: Any, dev: str) -> Any:
    x = leaf(T, dev, 2, 3, 2)
    y = x.permute(2, 0, 1).clone()
    y.permute(1, 2, 0).view(6, 2)[1:3].exp_()
    return _grads(T, x, y.transpose(0, 1))


def _view_chain_double_backward(T: Any, dev: str) -> Any:
    x = leaf(T, dev, 2, 2)
    y = x * 1
    y.view(-1)[::2].mul_(x.view(-1)[::2])
    (g,) = T.autograd.grad((y * y).t().sum(), x, create_graph=True)
    g.sum().backward()
    return g, x.grad


CASES["view_replay_on_transposed_grad"] = _flat_every_other
CASES["view_replay_transposed_base"] = _transposed_base
CASES["view_replay_transposed_base_view_grad"] = _transposed_base_view_grad
CASES["view_replay_permuted_base"] = _permuted_base
CASES["view_replay_double_backward"] = _view_chain_double_backward


# ---- expand: writable unless it really broadcasts -----------------------------------------------

def _expand(shape: tuple[int, ...], to: tuple[int, ...], op: str = "mul_") -> Case:
    def case(T: Any, dev: str) -> Any:
        x = leaf(T, dev, *shape)
        y = x * 1
        e = y.expand(*to)
        if op == "mul_":
            e.mul_(0.5)
        elif op == "exp_":
            e.exp_()
        elif op == "copy_":
            e.copy_(T.ones(to, device=dev, dtype=T.float64))
        else:
            e.add_(1, alpha=2)
        return _grads(T, x, e), y  # the write went through to y

    return case


EXPANDS: dict[str, tuple[tuple[int, ...], tuple[int, ...]]] = {
    "same_shape": ((2, 3), (2, 3)),
    "keep_dims": ((2, 3), (-1, -1)),
    "size_one_to_one": ((1, 3), (1, 3)),
    "new_leading_one": ((2, 3), (1, 2, 3)),
    "zero_from_one": ((1, 3), (0, 3)),
    "broadcast_into_empty": ((1, 0), (2, 0)),
    "broadcast": ((1, 3), (2, 3)),
    "new_leading_two": ((2, 3), (2, 2, 3)),
}
for _name, (_shape, _to) in EXPANDS.items():
    for _op in ("mul_", "exp_", "copy_", "add_alpha"):
        CASES[f"expand_{_name}_{_op}"] = _expand(_shape, _to, _op)


def _expand_no_grad(shape: tuple[int, ...], to: tuple[int, ...]) -> Case:
    return lambda T, dev: T.ones(*shape, device=dev).expand(*to).add_(1)


for _name, (_shape, _to) in EXPANDS.items():
    CASES[f"expand_{_name}_no_grad_add_"] = _expand_no_grad(_shape, _to)


# ---- writes into a real broadcast view and its parts -------------------------------------------
# PyTorch refuses to write a region whose elements share memory (in-place ops, copy_, sampling,
# setitem through copy_), except fill_/zero_, which write through (every element gets the value),
# and masked_fill_/index_put_ (setitem with a mask or index list), which warn (raised here: the
# suite turns warnings into errors), then write the selected elements. A part of the view that
# shares no memory (x.expand(2, 3)[0]) takes any in-place op; the writes reach the base.

_ROW = [1.0, 2.0, 3.0]
_MASK = [[True, False, True], [False, False, False]]


def _broadcast_write(op: Callable[[Any, Any, Any], Any], grad: bool = False) -> Case:
    """``op(T, e, dev)`` on ``e = y.expand(2, 3)``; returns ``y``, ``e`` and, with ``grad``
    (``y`` computed from a leaf), the leaf's gradient of ``(y * y).sum()``."""
    def case(T: Any, dev: str) -> Any:
        x = T.tensor(_ROW, device=dev, requires_grad=grad)
        y = x * 1 if grad else x
        e = y.expand(2, 3)
        op(T, e, dev)
        if not grad:
            return y, e.clone()
        (y * y).sum().backward()
        return y, x.grad, type(y.grad_fn).__name__

    return case


def _set(key: Any, value: Any) -> Callable[[Any, Any, Any], Any]:
    def op(T: Any, e: Any, dev: str) -> None:
        k = T.tensor(key, device=dev) if isinstance(key, list) and isinstance(key[0], list) \
            else key
        e[k] = value(T, dev) if callable(value) else value

    return op


BROADCAST_WRITES: dict[str, Callable[[Any, Any, Any], Any]] = {
    "fill_": lambda T, e, dev: e.fill_(5),
    "fill_tensor": lambda T, e, dev: e.fill_(T.tensor(5.0, device=dev)),
    "zero_": lambda T, e, dev: e.zero_(),
    "mul_": lambda T, e, dev: e.mul_(2),
    "add_tensor": lambda T, e, dev: e.add_(T.ones(2, 3, device=dev)),
    "neg_": lambda T, e, dev: e.neg_(),
    "clamp_": lambda T, e, dev: e.clamp_(max=1.5),
    "copy_": lambda T, e, dev: e.copy_(T.ones(2, 3, device=dev)),
    "uniform_": lambda T, e, dev: e.uniform_(),
    "normal_": lambda T, e, dev: e.normal_(),
    "exp_": lambda T, e, dev: e.exp_(),
    "masked_fill_": lambda T, e, dev: e.masked_fill_(T.tensor(_MASK, device=dev), 7.0),
    "setitem_all": _set(..., 7.0),
    "setitem_row": _set(0, 7.0),
    "setitem_element": _set((0, 1), 7.0),
    "setitem_column": _set((slice(None), 1), 7.0),
    "setitem_row_tensor": _set(0, lambda T, dev: T.tensor([7.0, 8.0, 9.0], device=dev)),
    "setitem_mask": _set(_MASK, 7.0),
    "setitem_list": _set([0], 7.0),
    "setitem_int_then_list": _set((0, [0, 2]), 9.0),
    "row_mul_": lambda T, e, dev: e[0].mul_(2),
    "row_add_": lambda T, e, dev: e[1].add_(1),
    "row_fill_": lambda T, e, dev: e[0].fill_(5),
    "row_copy_": lambda T, e, dev: e[0].copy_(T.tensor([4.0, 5.0, 6.0], device=dev)),
    "row_exp_": lambda T, e, dev: e[0].exp_(),
    "row_setitem": lambda T, e, dev: e[0].__setitem__(1, 9.0),
    "row_twice": lambda T, e, dev: (e[0].mul_(2), e[0].add_(1)),
    "column_mul_": lambda T, e, dev: e[:, 0].mul_(2),
    "column_fill_": lambda T, e, dev: e[:, 0].fill_(2),
    "first_rows_mul_": lambda T, e, dev: e[0:1].mul_(2),
    "transposed_row_mul_": lambda T, e, dev: e.t()[1].mul_(2),
}
for _name, _op in BROADCAST_WRITES.items():
    CASES[f"broadcast_view_{_name}"] = _broadcast_write(_op)
    if _name not in ("uniform_", "normal_"):
        CASES[f"broadcast_view_{_name}_grad"] = _broadcast_write(_op, grad=True)


def _scalar_expand(op: Callable[[Any], Any]) -> Case:
    def case(T: Any, dev: str) -> Any:
        y = T.tensor(5.0, device=dev)
        op(y.expand(3))
        return y

    return case


CASES.update({
    "expand_0d_fill_": _scalar_expand(lambda e: e.fill_(2)),
    "expand_0d_element_fill_": _scalar_expand(lambda e: e[1].fill_(2)),
    "expand_0d_tail_mul_": _scalar_expand(lambda e: e[1:].mul_(2)),
    "expand_0d_one_element_mul_": _scalar_expand(lambda e: e[1:2].mul_(2)),
    "expand_column_part_mul_": lambda T, dev: (lambda y: (y.expand(2, 3)[:, 0].mul_(2), y)[1])(
        T.tensor([[1.0], [2.0]], device=dev)),
})


# ---- add_/sub_ alpha --------------------------------------------------------------------------

def _alpha(op: str, dtype: str, other: Any, alpha: Any) -> Case:
    def case(T: Any, dev: str) -> Any:
        t = T.tensor([1, 2], dtype=getattr(T, dtype), device=dev)
        o = other(T, dev) if callable(other) else other
        out = getattr(t, op)(o, alpha=alpha)
        return out, repr(out.dtype)

    return case


ALPHAS: dict[str, tuple[str, Any, Any]] = {
    "int_float_alpha": ("int64", 1, 0.5),
    "int_float_alpha_one": ("int64", 1, 1.0),
    "int_int_alpha": ("int64", 1, 2),
    "float_bool_alpha": ("float32", 1, True),
    "float_bool_alpha_false": ("float32", 1, False),
    "int_bool_alpha": ("int64", 1, True),
    "bool_bool_alpha": ("bool", True, True),
    "float_complex_alpha": ("float32", 1, 1 + 2j),
    "float_float_alpha": ("float32", 1, 0.5),
    "int_tensor_float_alpha": ("int64", lambda T, dev: T.tensor([1, 1], device=dev), 0.5),
    "int_with_float_tensor": ("int64", lambda T, dev: T.tensor([1.0, 1.0], device=dev), 0.5),
    "int_with_float_tensor_bool_alpha": ("int64", lambda T, dev: T.tensor([1.0, 1.0], device=dev),
                                         True),
}
for _name, (_dtype, _other, _a) in ALPHAS.items():
    for _op in ("add_", "sub_", "add", "sub"):
        if _dtype == "bool" and _op.startswith("sub"):
            continue
        CASES[f"{_op}_{_name}"] = _alpha(_op, _dtype, _other, _a)

test_misuse = catalogue_test(CASES)


# ---- no floating-point warnings, whatever the warnings filter ----------------------------------

def _inf_nan_program(dev: str) -> None:
    inf = float("inf")
    x = ag.tensor([inf, -inf, 0.0, 1e308], device=dev, requires_grad=True)  # float32: 1e308 is inf
    y = (x - x) * (x / 0) + x.exp() * x.log() + (x * 10).sqrt()
    (y.sum() + (x * x).sum() + x.sigmoid().sum()).backward()
    z = ag.tensor([inf, 0.0], device=dev)
    z -= z
    z.div_(0)
    z.add_(ag.tensor([1e308, 1e308], device=dev), alpha=10)
    ag.zeros(2, device=dev, dtype=ag.float32).copy_(ag.tensor([1e300, -1e300], device=dev))
    ag.tensor(np.array([1e300, np.nan]), dtype=ag.float32, device=dev).long()
    # the ops whose forward and backward rely on Node.apply's silence (no errstate of their own)
    F = ag.nn.functional
    w = ag.tensor([0.0, -1.0, 1e30], device=dev, requires_grad=True)
    parts = [w.log(), w.sqrt(), w.rsqrt(), w.reciprocal(), w / 0, w ** -1.5, 2.0 ** (w * 1e3),
             (w * -1e3).sigmoid(), (w * -1e3).exp(), (w * 1e300).var(), w[:0].mean(),
             (w * float("-inf")).logsumexp(0),
             w.detach() // 0.0, w % 0.0, F.softplus(w * 1e3), F.elu(w * -1e3),
             F.binary_cross_entropy_with_logits(w * 1e3, ag.ones(3, device=dev)),
             F.binary_cross_entropy(w.clamp(0, 1), ag.ones(3, device=dev))]
    sum(p.sum() for p in parts).backward()
    ignored = ag.tensor([-100, -100], device=dev)
    F.nll_loss(ag.zeros(2, 3, device=dev, requires_grad=True), ignored).backward()
    h = ag.ones(3, dtype=ag.float16, device=dev)
    _ = (h == 1e10, h < 70000.0, h * 1e10, ag.full((1,), 1e10, dtype=ag.float16, device=dev),
         ag.where(ag.tensor([True, False, True], device=dev), h, 1e10))
    h[0] = 1e10
    h[:1].fill_(1e10)  # one element: float16 rounds to inf unchecked, as PyTorch


@pytest.mark.parametrize("mode", ["default", "always", "error"])
def test_no_floating_point_warnings(device: str, mode: str) -> None:
    """PyTorch is silent on inf/nan arithmetic, so are we, in every warnings mode (NumPy would
    print "invalid value encountered in subtract" in the default one)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter(mode)
        _inf_nan_program(device)
    assert not caught, [str(w.message) for w in caught]
