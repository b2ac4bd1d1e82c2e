"""In-place ops under autograd: version counters, saved-tensor checks, leaf errors, gradients and
node names of in-place ops on non-leaves, ``__setitem__`` and in-place ops on views."""

from __future__ import annotations

import gc
from typing import Any

import pytest

import autograd_gpu as ag

from ._util import both, first_sentence, leaf, parity, same_error

@parity
def test_version_counter_shared_by_views_and_detach(T: Any, dev: str) -> Any:
    x = T.zeros(2, 3, device=dev)
    v, d = x[0], x.detach()
    log = [x._version]
    x.add_(1)
    log += [x._version, v._version, d._version]
    v.mul_(2)
    log += [x._version, v._version, d._version]
    d.zero_()
    x[1] = 5.0
    log += [x._version, v._version, d._version]
    x.data.add_(1)  # .data does not share the counter
    log.append(x._version)
    y = x + 1  # an out-of-place result starts at 0
    log.append(y._version)
    return log, x


def test_modified_saved_tensor_error(device: str) -> None:
    def f(T: Any, dev: str) -> Any:
        x = leaf(T, dev)
        h = x * 2
        y = h.exp()  # saves its output
        y.add_(1)
        y.sum().backward()

    err = same_error(f, device)
    assert "test_inplace.py" in str(err)  # ours names the line of the in-place op

    def g(T: Any, dev: str) -> Any:
        x = leaf(T, dev)
        h = x * 2
        y = h.sin()  # saves its input
        h.mul_(3)
        y.sum().backward()

    same_error(g, device)


def test_inplace_on_leaf_errors(device: str) -> None:
    ops = (lambda t: t.add_(1), lambda t: t.zero_(), lambda t: t.fill_(2.0),
           lambda t: t.copy_(t.detach() * 2), lambda t: t.__setitem__(0, 1.0),
           lambda t: t.clamp_(0, 1),
           # views of the leaf
           lambda t: t[0].add_(1), lambda t: t.view(-1).mul_(2), lambda t: t[:, 1].zero_())
    for op in ops:
        same_error(lambda T, dev, op=op: op(leaf(T, dev)), device)


@parity
def test_inplace_on_leaf_allowed_under_no_grad(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    with T.no_grad():
        x.add_(1)
        x[0] = 0.0
        x.mul_(2)
    (x * x).sum().backward()
    return x, x._version, x.grad, x.is_leaf


OPS = {
    "add_": lambda t, T, dev: t.add_(T.tensor(2.0, dtype=T.float64, device=dev), alpha=3),
    "add_scalar": lambda t, T, dev: t.add_(1.5),
    "sub_": lambda t, T, dev: t.sub_(t.detach() * 0 + 0.5),
    "mul_": lambda t, T, dev: t.mul_(T.tensor([1.0, 2.0, 3.0], dtype=T.float64, device=dev)),
    "mul_scalar": lambda t, T, dev: t.mul_(-2.0),
    "div_": lambda t, T, dev: t.div_(4.0),
    "clamp_": lambda t, T, dev: t.clamp_(-0.5, 1.0),
    "zero_": lambda t, T, dev: t.zero_(),
    "fill_": lambda t, T, dev: t.fill_(3.0),
    "copy_": lambda t, T, dev: t.copy_(T.tensor([7.0, 8.0, 9.0], dtype=T.float64, device=dev)),
    "iadd": lambda t, T, dev: t.__iadd__(2.0),
    "imul": lambda t, T, dev: t.__imul__(t.detach().clone()),
    "exp_": lambda t, T, dev: t.exp_(),
    "sigmoid_": lambda t, T, dev: t.sigmoid_(),
    "relu_": lambda t, T, dev: t.relu_(),
}


@pytest.mark.parametrize("name", sorted(OPS))
def test_inplace_on_non_leaf(device: str, name: str) -> None:
    def f(T: Any, dev: str) -> Any:
        x = leaf(T, dev)
        h = x * x
        r = OPS[name](h, T, dev)
        assert r is h
        out = (h * T.tensor([1.0, 2.0, 3.0], dtype=T.float64, device=dev)).sum()
        out.backward()
        return h, h.grad_fn.name(), h._version, x.grad

    both(f, device)


@parity
def test_inplace_with_grad_requiring_operand(T: Any, dev: str) -> Any:
    x, w = leaf(T, dev), leaf(T, dev)
    h = x * 2
    h.mul_(w)
    h.add_(w, alpha=2)
    h.copy_(h.detach().clone() * w)
    h.sum().backward()
    return h, x.grad, w.grad


@parity
def test_copy_into_non_requiring_tensor(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    buf = T.zeros(2, 3, dtype=T.float64, device=dev)
    buf.copy_(x * 3)
    assert buf.requires_grad and buf.grad_fn is not None
    (buf * buf).sum().backward()
    return buf, buf.grad_fn.name(), x.grad


@parity
def test_setitem_basic_keys(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    v = T.tensor([10.0, 20.0], dtype=T.float64, device=dev, requires_grad=True)
    y = x * 1
    y[0, 1] = 5.0
    y[:, 2] = v
    y[1] = y[1] * 2
    y.exp().sum().backward()
    return y, y.grad_fn.name(), x.grad, v.grad


@parity
def test_setitem_advanced_keys(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    v = T.tensor([1.0, 2.0], dtype=T.float64, device=dev, requires_grad=True)
    y = x * 2
    y[T.tensor([0, 1], device=dev), T.tensor([2, 0], device=dev)] = v
    y[y.detach() > 1.5] = 0.0
    (y * y).sum().backward()
    return y, y.grad_fn.name(), x.grad, v.grad


@parity
def test_setitem_into_plain_tensor_value_requires_grad(T: Any, dev: str) -> Any:
    v = T.tensor([1.0, 2.0, 3.0], dtype=T.float64, device=dev, requires_grad=True)
    buf = T.zeros(2, 3, dtype=T.float64, device=dev)
    buf[1] = v * 2
    buf[0, :2] = v[1:]
    (buf ** 2).sum().backward()
    return buf, buf.grad_fn.name(), v.grad


@parity
def test_inplace_on_view_of_non_leaf(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    y = x * 1
    y[0].mul_(2)
    y[:, 1] += 1
    row = y[1]
    row.exp_()
    (y * y).sum().backward()
    return y, y.grad_fn.name(), row.grad_fn.name(), x.grad


@parity
def test_view_used_after_base_modified(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    y = x * 2
    v = y[0]
    y.mul_(3)  # v sees the new values, and its gradient flows through the mul_
    (v * v).sum().backward()
    return v, v.grad_fn.name(), x.grad


@parity
def test_inplace_on_view_chain(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    y = x * 2
    v = y.view(3, 2).transpose(0, 1)[1]
    v.mul_(T.tensor([1.0, 2.0, 3.0], dtype=T.float64, device=dev))
    y.sum().backward()
    return y, x.grad


@parity
def test_inplace_saved_input_kept_exact(T: Any, dev: str) -> Any:
    x, w = leaf(T, dev), leaf(T, dev)
    h = x * 2
    h.mul_(w)  # w's gradient needs h's old value
    h.div_(w + 3)
    h.pow_(2)
    h.sum().backward()
    return h, x.grad, w.grad


def test_saved_output_of_inplace_op_is_the_tensor(device: str) -> None:
    """``exp_`` saves its output, which is ``y`` itself: no copy is kept, and the saved value is
    checked against ``y``'s version (a later write makes backward refuse, as in PyTorch)."""
    x = ag.arange(1000, dtype=ag.float32, device=device).div(1000).requires_grad_()
    y = x * 1
    gc.collect()
    before = ag.memory_allocated(device)
    y.exp_()
    gc.collect()
    assert ag.memory_allocated(device) == before
    y.sum().backward()
    assert ag.allclose(x.grad, x.detach().exp())
    z = x * 1
    z.sigmoid_()
    z[1:].mul_(2)
    with pytest.raises(RuntimeError, match="output 0 of Sigmoid, is at version 2; expected "
                                           "version 1"):
        z.sum().backward()


def test_error_names_line_of_inplace_op(device: str) -> None:
    x = ag.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = (x * 2).sigmoid()
    y.mul_(2)  # marker-line
    with pytest.raises(RuntimeError) as e:
        y.sum().backward()
    assert first_sentence(str(e.value)).startswith(
        "one of the variables needed for gradient computation has been modified by an inplace")
    import inspect

    line = next(i for i, s in enumerate(inspect.getsourcelines(
        test_error_names_line_of_inplace_op)[0]) if "marker-line" in s)
    start = test_error_names_line_of_inplace_op.__code__.co_firstlineno
    assert f"test_inplace.py:{start + line}" in str(e.value)


def test_views_refused_for_inplace(device: str) -> None:
    def no_grad_view(T: Any, dev: str) -> Any:
        y = leaf(T, dev) * 1
        with T.no_grad():
            v = y[0]
        v.mul_(2)

    same_error(no_grad_view, device)

    def multi_output_view(T: Any, dev: str) -> Any:
        y = leaf(T, dev) * 1
        y.unbind(0)[1].mul_(2)

    same_error(multi_output_view, device)

    def split_view(T: Any, dev: str) -> Any:
        y = leaf(T, dev) * 1
        y.split(1)[0].add_(1)

    same_error(split_view, device)


@parity
def test_views_allowed_without_autograd(T: Any, dev: str) -> Any:
    z = T.zeros(2, 3, device=dev)
    z.unbind(0)[1].add_(1)
    y = leaf(T, dev) * 1
    with T.no_grad():
        y.unbind(0)[0].mul_(2)
        v = y[1]
        v.mul_(3)
    return z, y


@parity
def test_view_of_plain_buffer_gets_grad_after_base_copy(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    buf = T.zeros(2, 3, dtype=T.float64, device=dev)
    w = buf[:, 1:]
    buf.copy_(x * 3)
    (w * w).sum().backward()
    return w.requires_grad, w.grad_fn.name(), x.grad


@parity
def test_retain_grad_on_view_survives_rebase(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    y = x * 1
    v = y[0]
    v.retain_grad()
    y.mul_(2)
    (v * v).sum().backward()
    return v.grad, x.grad


@parity
def test_double_backward_through_copy_slices(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    y = x * x
    y[0] = y[0].exp() + x[1] * 2
    y[:, 2].mul_(3)
    (g,) = T.autograd.grad(y.pow(2).sum(), x, create_graph=True)
    (gg,) = T.autograd.grad(g.sum(), x)
    return g, gg


@parity
def test_double_backward_through_regenerated_view(T: Any, dev: str) -> Any:
    x = leaf(T, dev)
    y = x * x
    v = y[:, 1:].t()
    y.mul_(2)  # v is re-derived from the new y (AsStridedBackward0)
    (g,) = T.autograd.grad((v ** 3).sum(), x, create_graph=True)
    (gg,) = T.autograd.grad((g * g).sum(), x)
    return v.grad_fn.name(), g, gg


@pytest.mark.parametrize("dst, src", [((3,), (2, 3)), ((2, 3), (4, 3)), ((2, 3), (2,))])
@pytest.mark.parametrize("op", ["copy_", "add_"])
@pytest.mark.parametrize("recorded", [False, True])
def test_write_shape_mismatch_errors(device: str, dst: Any, src: Any, op: str,
                                     recorded: bool) -> None:
    def f(T: Any, dev: str) -> Any:
        x = T.zeros(*dst, dtype=T.float64, device=dev, requires_grad=recorded)
        getattr(x * 1 if recorded else x, op)(T.ones(*src, dtype=T.float64, device=dev))

    same_error(f, device)
