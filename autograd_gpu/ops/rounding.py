"""Rounding divisions: ``//`` (``floor_divide``), ``%`` (``remainder``) and
``div(rounding_mode='trunc' | 'floor')``. Integer division by zero raises PyTorch's
``RuntimeError: ZeroDivisionError`` on every device; float division by zero gives inf or nan."""

from __future__ import annotations

from typing import Any

from .elementwise import _Binary

NOT_IMPLEMENTED = "torch::autograd::NotImplemented"  # PyTorch's node for a missing derivative


def check_divisor(backend: Any, out: Any, y: Any) -> None:
    """PyTorch's ``RuntimeError: ZeroDivisionError`` when an integer division that produced
    ``out`` divided by zero (NumPy returns 0 with a warning). An empty result divided nothing."""
    if out.dtype.kind not in "iu" or not out.size:
        return
    # NOTE: on CUDA this costs one reduction and one host sync, for integer divisions only (a
    # float division never gets here). PyTorch's CUDA kernels skip the check and return garbage
    # (pytorch/pytorch#135330, #165650, open); we raise as PyTorch does on the CPU, everywhere.
    # Every element of ``y`` reaches a non-empty broadcast result, so checking all of it is exact.
    if (bool(backend.any(y == 0)) if hasattr(y, "shape") else y == 0):
        raise RuntimeError("ZeroDivisionError")


class _RoundingDiv(_Binary):
    """Base of ``//``, ``%`` and ``div(rounding_mode=...)``: ``divide`` runs quietly (a float
    division by zero gives inf or nan, as in PyTorch), then an integer one by zero raises."""

    def compute(self, x: Any, y: Any) -> Any:
        b = self.backend
        out = self.divide(b, x, y)
        check_divisor(b, out, y)
        return out

    def divide(self, b: Any, x: Any, y: Any) -> Any:
        raise NotImplementedError


def _no_derivative(aten: str) -> RuntimeError:
    return RuntimeError(f"derivative for aten::{aten} is not implemented")


class FloorDivide(_RoundingDiv):
    """``x // y`` rounding toward -inf. PyTorch records a node that refuses to differentiate."""

    node_name = NOT_IMPLEMENTED

    def divide(self, b: Any, x: Any, y: Any) -> Any:
        return b.floor_divide(x, y)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        raise _no_derivative("floor_divide")


class Remainder(_RoundingDiv):
    """``x % y`` with the sign of ``y``, as Python's ``%`` (a float zero keeps the sign of ``x``,
    as PyTorch's). ``d/dx = 1``, ``d/dy = -floor(x / y)`` (RemainderBackward0 for a scalar
    ``y``, 1 for a tensor; a scalar ``x`` has no derivative in PyTorch)."""

    def __init__(self, name: str) -> None:
        self.node_name = name

    def divide(self, b: Any, x: Any, y: Any) -> Any:
        if self.needs_input_grad and self.needs_input_grad[1]:
            self.save_for_backward(x, y)
        if x.dtype.kind != "f":
            return b.remainder(x, y)
        # NOTE: PyTorch's formula: fmod, then + y where the signs differ. A zero result keeps
        # the sign of x (-4.0 % 2 is -0.0; NumPy's remainder gives y's sign, +0.0).
        r = b.fmod(x, y)
        return b.where((r != 0) & ((r < 0) != (y < 0)), r + y, r)

    def backward(self, grad: Any) -> tuple[Any, Any]:
        if self.node_name == NOT_IMPLEMENTED:
            raise _no_derivative("remainder")
        need = self.needs_input_grad
        gy = None
        if need[1]:
            x, y = self.saved_tensors
            gy = self.reduce(-grad * x.div(y, rounding_mode="floor"), 1)
        return (self.reduce(grad, 0) if need[0] else None), gy


class DivRounding(_RoundingDiv):
    """``div(x, y, rounding_mode=mode)``: ``'floor'`` as ``//``, ``'trunc'`` rounding toward 0
    (DivBackward2). Piecewise constant: both gradients are 0, as in PyTorch."""

    node_name = "DivBackward2"

    def __init__(self, mode: str) -> None:
        self.mode = mode

    def divide(self, b: Any, x: Any, y: Any) -> Any:
        if self.mode == "floor":
            return b.floor_divide(x, y)
        if x.dtype.kind == "f":
            return b.trunc(b.true_divide(x, y))
        # NOTE: integers stay exact (no float round trip): the floor quotient, plus one where
        # the division is inexact and the exact quotient is negative.
        return b.floor_divide(x, y) + ((b.remainder(x, y) != 0) & ((x < 0) != (y < 0)))

    def backward(self, grad: Any) -> tuple[Any, Any]:
        return tuple(  # type: ignore[return-value]
            self.wrap(self.backend.zeros(s if s is not None else (), grad.dtype.name))
            if need else None for need, s in zip(self.needs_input_grad, self.shapes))
