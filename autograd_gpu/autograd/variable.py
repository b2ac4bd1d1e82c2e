"""``torch.autograd.Variable``: the legacy wrapper, which since PyTorch 0.4 makes a plain tensor.

``Variable(t, requires_grad=False)`` returns a new leaf sharing ``t``'s storage (``t.detach()``)
with ``requires_grad`` set; ``isinstance(x, Variable)`` is True for every tensor.
"""

from __future__ import annotations

import warnings
from typing import Any

__all__ = ["Variable", "VariableMeta"]


class VariableMeta(type):
    def __instancecheck__(cls, other: Any) -> bool:
        from ..tensor import Tensor  # NOTE: late: autograd/ does not import tensor.py at load

        return isinstance(other, Tensor)


class Variable(metaclass=VariableMeta):
    """``Variable(data=None, requires_grad=False, volatile=False)``: a tensor, as PyTorch's.

    Example:
        >>> Variable(ones(2), requires_grad=True)
        tensor([1., 1.], requires_grad=True)
    """

    def __new__(cls, data: Any = None, requires_grad: Any = False, volatile: Any = False) -> Any:
        from ..creation import empty, require_grad
        from ..tensor import Tensor

        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` "
                          "instead.", UserWarning, stacklevel=2)
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        out = data.detach()
        if requires_grad:
            require_grad(out)
        return out
