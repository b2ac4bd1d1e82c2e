"""The manip family's views share storage with their input, as PyTorch's: ``diagonal``,
``unfold``, ``as_strided`` (PyTorch's storage offsets, reads outside the input view), the
``tensor_split`` pieces, ``meshgrid``, ``atleast_3d``, ``ravel``, ``swapdims``. Writes through
them land in the input, they share its version counter and ``_base``, and in-place ops on them
are replayed for autograd (CopySlices), whatever the layout of the gradient that comes back.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.ops.test_manip import _arange, _values


VIEWS: dict[str, Callable[[Any], Any]] = {
    "diagonal": lambda y: y.diagonal(),
    "diagonal_above": lambda y: y.diagonal(1),
    "diagonal_of_transpose": lambda y: y.t().diagonal(-1),
    "unfold": lambda y: y.unfold(1, 2, 2),
    "unfold_then_select": lambda y: y.unfold(0, 2, 1)[1],
    "as_strided": lambda y: y.as_strided((2, 2), (4, 2), 1),
    # NOTE: within the sliced input (reading outside it, PyTorch's in-place replay gives
    # gradients that its own as_strided backward drops: see test_as_strided_outside_input)
    "as_strided_of_slice": lambda y: y[1:].as_strided((2, 2), (1, 4), 5),
    "as_strided_of_transpose": lambda y: y.t()[1:].as_strided((2, 2), (4, 1), 2),
    "slice_of_as_strided": lambda y: y.as_strided((3, 2), (4, 1), 1)[1:],
    "tensor_split": lambda y: y.tensor_split(2, 1)[1],
    "hsplit": lambda y: y.hsplit([1])[1],
    "meshgrid_row": lambda y: _lib(y).meshgrid(y[0], indexing="ij")[0],
    "atleast_3d": lambda y: _lib(y).atleast_3d(y),
    "ravel": lambda y: y.ravel(),
    "swapdims": lambda y: y.swapdims(0, 1),
}


def _lib(t: Any) -> Any:
    return ag if isinstance(t, ag.Tensor) else torch


def _view_program(m: Any, dev: str, name: str) -> Any:
    """A view of ``y = x * 1`` written in place: the values, the base's values, the
    version counter, storage offset, and the gradient that reaches ``x``."""
    x = _arange(m, dev, 3, 4).requires_grad_()
    y = x * 1
    v = VIEWS[name](y)
    same = v._base is y
    offset = v.storage_offset()
    before = y._version
    v.mul_(m.arange(1, v.numel() + 1, dtype=v.dtype, device=v.device).reshape(v.shape) + 1)
    version = (y._version - before, v._version - before)
    w = m.arange(12, dtype=m.float64, device=x.device).reshape(3, 4) + 1
    ((y * w).sum() + (v * v).sum()).backward()
    return same, offset, version, _values(y)[0], _values(v)[0], x.grad.cpu().numpy()


@pytest.mark.parametrize("name", sorted(VIEWS))
def test_views_share_storage(device: str, name: str) -> None:
    theirs = _view_program(torch, "cpu", name)
    ours = _view_program(ag, device, name)
    assert ours[:3] == theirs[:3]
    for a, b in zip(ours[3:], theirs[3:]):
        np.testing.assert_array_equal(a, b)


COPY_INTO: dict[str, Callable[[Any], Any]] = {
    "diagonal": lambda b: b.diagonal(-1),
    "unfold": lambda b: b.unfold(0, 2, 2),
    "as_strided": lambda b: b.as_strided((2, 2), (1, 4), 2),
    "as_strided_of_slice": lambda b: b[1:].as_strided((3,), (5,), 4),
}


@pytest.mark.parametrize("name", sorted(COPY_INTO))
def test_copy_into_view_of_constant(device: str, name: str) -> None:
    """A tensor requiring grad copied into a view of a constant: the base's gradient reaches
    it through the replayed view (CopySlices)."""
    def program(m: Any, dev: str) -> Any:
        base = m.zeros(4, 4, dtype=m.float64, device=dev)
        view = COPY_INTO[name](base)
        src = _arange(m, dev, *view.shape).requires_grad_()
        view.copy_(src * 2)
        w = _arange(m, dev, 4, 4) + 1
        ((base * w).sum() + (view ** 2).sum()).backward()
        return base.grad_fn.name(), _values(base)[0], src.grad.cpu().numpy()

    ours, theirs = program(ag, device), program(torch, "cpu")
    assert ours[0] == theirs[0]
    for a, b in zip(ours[1:], theirs[1:]):
        np.testing.assert_array_equal(a, b)


def test_view_writes_without_grad(device: str) -> None:
    for m, dev in ((torch, "cpu"), (ag, device)):
        y = _arange(m, dev, 3, 4)
        y.diagonal().fill_(-1)
        y.unfold(1, 2, 2)[:, :, 1] = -2
        y[1:].as_strided((2,), (1,), 0).zero_()
        assert _values(y)[0].tolist() == [[0, 0, 2, -2], [4, -2, 6, -2], [8, -2, -1, -2]]


def test_storage_offset(device: str) -> None:
    for m, dev in ((torch, "cpu"), (ag, device)):
        x = _arange(m, dev, 3, 4)
        got = [x.storage_offset(), x[1:].storage_offset(), x[:, 2].storage_offset(),
               x.t()[1].storage_offset(), x.diagonal(1).storage_offset(),
               x.diagonal(-2).storage_offset(), x[1:].unfold(1, 2, 1).storage_offset(),
               x[2:].as_strided((1,), (1,)).storage_offset()]
        assert got == [0, 4, 2, 1, 1, 8, 4, 8]


def test_as_strided_in_place_replays_on_any_gradient_layout(device: str) -> None:
    """The base's gradient reaches the view through the replayed chain whatever its layout
    (here a broadcast one: ``sum``'s)."""
    def program(m: Any, dev: str) -> Any:
        x = _arange(m, dev, 3, 4).requires_grad_()
        y = x * 1
        y.as_strided((2, 2), (4, 1), 5).mul_(3)
        y.sum().backward()
        return x.grad

    np.testing.assert_array_equal(program(ag, device).cpu().numpy(),
                                  program(torch, "cpu").numpy())


def test_as_strided_outside_input(device: str) -> None:
    """``as_strided`` of a view may read its storage outside the view: those elements have no
    gradient (PyTorch treats them as constants), but writes through the result land there."""
    def program(m: Any, dev: str) -> Any:
        x = _arange(m, dev, 3, 4).requires_grad_()
        v = (x * 1)[1:].as_strided((3,), (3,), 0)
        (v * v).sum().backward()
        y = _arange(m, dev, 3, 4)
        y[2:, 1:].as_strided((3,), (5,), 0).mul_(-1)
        return _values(v)[0], x.grad.cpu().numpy(), _values(y)[0]

    for a, b in zip(program(ag, device), program(torch, "cpu")):
        np.testing.assert_array_equal(a, b)
