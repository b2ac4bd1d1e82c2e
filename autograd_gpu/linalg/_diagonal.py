"""``torch.linalg.diagonal``: ``torch.diagonal`` with the matrix dims last by default."""

from __future__ import annotations

from ..functions.checks import expect_tensor
from ..tensor import Tensor


def diagonal(A: Tensor, *, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:  # noqa: N803
    """A view of the diagonal ``offset`` of the matrices in dims ``dim1``, ``dim2`` (the last
    two by default), appended as the last dim (DiagonalBackward0).

    Example:
        >>> diagonal(tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor([1., 4.])
    """
    from ..functions.manip_views import diagonal as torch_diagonal  # NOTE: the manip family

    expect_tensor("linalg_diagonal", "A", 1, A)
    return torch_diagonal(A, offset, dim1, dim2)
