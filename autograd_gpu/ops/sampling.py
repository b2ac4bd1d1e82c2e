"""Sampling ops: random draws recorded for autograd.

PyTorch records its samplers (``bernoulli``, ``normal``, ``poisson`` and the in-place
``x.exponential_()``, ``x.random_()``, ...) with zero gradients for every input: a draw is not
reparametrised, so nothing flows back to the distribution's parameters (or to the overwritten
values). ``Sample`` is that node for all of them; the draw itself is a backend entry
(``backends/sampling.py``) passed in as ``draw``.
"""

from __future__ import annotations

from typing import Any, Callable

from ..autograd.node import Node


class Sample(Node):
    """out = ``draw(backend, *arrays)``, a random draw parametrised by the inputs; every input's
    gradient is zero (of its own shape and dtype). ``name`` is PyTorch's node name
    (``BernoulliBackward0``, ``NormalBackward3``, ``ExponentialBackward0``, ...)."""

    def __init__(self, draw: Callable[..., Any], name: str) -> None:
        self.draw = draw
        self.node_name = name

    def forward(self, *arrays: Any) -> Any:
        self.metas = [(a.shape, a.dtype) for a in arrays]
        return self.draw(self.backend, *arrays)

    def backward(self, grad: Any) -> tuple[Any, ...]:
        be = self.backend
        return tuple(self.wrap(be.zeros(shape, dtype)) if need else None
                     for need, (shape, dtype) in zip(self.needs_input_grad, self.metas))


class SampleNoDerivative(Sample):
    """A draw PyTorch records without a derivative formula (``bernoulli(x, p)`` with a float
    ``p``): backward through it is an error, as PyTorch's ``NotImplemented`` node."""

    def __init__(self, draw: Callable[..., Any], op: str) -> None:
        super().__init__(draw, "torch::autograd::NotImplemented")
        self.op = op

    def backward(self, grad: Any) -> tuple[Any, ...]:
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented")
