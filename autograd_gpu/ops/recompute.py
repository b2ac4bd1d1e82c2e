"""``Recompute``: an op that PyTorch records as one node (``LinalgHouseholderProductBackward0``,
``OrmqrBackward0``, ...) and that we compute as a composition of tensor ops.

Forward runs the composition without recording (no intermediate nodes or saved activations
beyond the inputs); backward runs it again with recording, from the saved inputs, and
differentiates that graph. The gradients are the composition's, and under ``create_graph`` the
recomputed graph hangs off the inputs' own history, so double backward works too.
"""

from __future__ import annotations

from typing import Any, Callable

from ..autograd.grad_mode import enable_grad, is_grad_enabled, no_grad
from ..autograd.node import Node


class Recompute(Node):
    """``fn(*tensors)`` (one tensor or a tuple) as the node ``name``."""

    def __init__(self, fn: Callable[..., Any], name: str) -> None:
        self.fn = fn
        self.node_name = name

    def forward(self, *arrays: Any) -> Any:
        self.save_for_backward(*arrays)
        with no_grad():
            out = self.fn(*(self.wrap(a) for a in arrays))
        if isinstance(out, tuple):
            return tuple(o._data for o in out)
        return out._data

    def backward(self, *grads: Any) -> tuple[Any, ...]:
        return recompute_backward(self.fn, self.saved_tensors, self.needs_input_grad, grads)


def recompute_backward(fn: Callable[..., Any], saved: tuple[Any, ...], need: tuple[bool, ...],
                       grads: tuple[Any, ...]) -> tuple[Any, ...]:
    """The gradients of ``fn(*saved)`` (one output or a tuple) for the inputs ``need`` marks,
    by running ``fn`` again with recording from the saved inputs (None inputs pass through);
    under ``create_graph`` the graph hangs off the inputs' own history (double backward)."""
    from ..autograd import grad  # NOTE: late: autograd's functions build on the engine

    create = is_grad_enabled()
    inputs: list[Any] = []
    for x, n in zip(saved, need):
        if x is None:
            inputs.append(None)
        elif create and n and x.requires_grad:
            # NOTE: its history carries the double backward; through a fresh alias, so that
            # the gradient taken is this node's own (when one input is an ancestor of
            # another, the GRU's h and W_hh h, a gradient w.r.t. x itself would also count
            # the path through the other input, which the graph then adds again).
            inputs.append(x.view_as(x))
        else:
            x = x.detach()
            inputs.append(x.requires_grad_() if n else x)
    with enable_grad():
        outs = fn(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    pairs = [(o, g) for o, g in zip(outs, grads) if g is not None and o.requires_grad]
    wanted = [x for x, n in zip(inputs, need) if n]
    if not pairs or not wanted:
        return tuple(None for _ in need)
    found = iter(grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                      create_graph=create, allow_unused=True))
    out = []
    for x, n in zip(inputs, need):
        g = next(found) if n else None
        out.append(x.new_zeros(tuple(x.shape)) if n and g is None else g)
    return tuple(out)
