"""``Parameter``: a tensor that a ``Module`` registers as one of its parameters."""

from __future__ import annotations

from typing import Any

from ..creation import empty
from ..tensor import Tensor


class Parameter(Tensor):
    """A leaf tensor that modules list in ``parameters()`` when assigned as an attribute.

    It shares storage (and version counter) with ``data`` and requires grad by default. Results
    of operations on it are plain ``Tensor``s, as in PyTorch.

    Args:
        data: the initial value (``None``: an empty tensor).
        requires_grad: whether autograd records operations on it.

    Example:
        >>> Parameter(ones(2))
        Parameter containing:
        tensor([1., 1.], requires_grad=True)
    """

    def __new__(cls, data: Tensor | None = None, requires_grad: bool = True) -> Parameter:
        if data is None:
            data = empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(
                f"Parameter(): argument 'data' must be Tensor, not {type(data).__name__}"
            )
        p = object.__new__(cls)
        p._data = data._data
        p._device = data._device
        p._version_counter = data._counter()
        if requires_grad:
            if data.dtype.category < 2:
                raise RuntimeError(
                    "Only Tensors of floating point and complex dtype can require gradients"
                )
            p._requires_grad = True
        return p

    def __init__(self, data: Tensor | None = None, requires_grad: bool = True) -> None:
        pass  # NOTE: __new__ did the work; Tensor.__init__ would refuse direct construction.

    def __repr__(self) -> str:
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo: dict[int, Any]) -> Parameter:
        if id(self) in memo:
            return memo[id(self)]  # type: ignore[no-any-return]
        result = Parameter(self.data.clone(), self.requires_grad)
        memo[id(self)] = result
        return result
