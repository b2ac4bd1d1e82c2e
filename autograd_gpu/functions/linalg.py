"""Matrix products: ``mm``, ``mv``, ``dot``, ``bmm``, ``addmm`` and ``matmul``'s dispatch."""

from __future__ import annotations

from typing import Any

from ..ops import linalg
from ..ops import movement as M
from ..tensor import Size, Tensor
from .arith import _type_name
from .shape import _broadcast_shapes


# ---- matrix products -------------------------------------------------------------------------

def _check_same_dtype(a: Tensor, b: Tensor, op: str) -> None:
    if a._data.dtype != b._data.dtype:
        raise RuntimeError(
            f"expected m1 and m2 to have the same dtype, but got: {a.dtype} != {b.dtype}"
            if op == "mm" else f"expected scalar type {_type_name(a.dtype)} but found {_type_name(b.dtype)}"
        )


def mm(input: Tensor, mat2: Tensor) -> Tensor:  # noqa: A002
    """Matrix product of two 2-D tensors."""
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    _check_same_dtype(input, mat2, "mm")
    return linalg.Mm.apply(input, mat2)


def mv(input: Tensor, vec: Tensor) -> Tensor:  # noqa: A002
    _check_same_dtype(input, vec, "mv")
    return linalg.Mv.apply(input, vec)


def dot(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors"
        )
    _check_same_dtype(input, other, "dot")
    return linalg.Dot.apply(input, other)


def bmm(input: Tensor, mat2: Tensor) -> Tensor:  # noqa: A002
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_same_dtype(input, mat2, "bmm")
    return linalg.Bmm.apply(input, mat2)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:  # noqa: A002
    """``beta * input + alpha * (mat1 @ mat2)`` (AddmmBackward0)."""
    _check_same_dtype(mat1, mat2, "mm")
    if beta == 1 and alpha == 1:
        return linalg.Addmm.apply(input, mat1, mat2)
    return linalg.Addmm.apply(input, mat1, mat2, beta=beta, alpha=alpha)


def matmul(input: Tensor, other: Tensor) -> Tensor:  # noqa: A002
    """Matrix product with NumPy's rules: dot, mv, mm, and broadcast batched products."""
    a, b = input, other
    if not isinstance(a, Tensor) or not isinstance(b, Tensor):
        raise TypeError("matmul(): argument 'other' must be Tensor")
    da, db = a.ndim, b.ndim
    if da == 0 or db == 0:
        raise RuntimeError(
            f"both arguments to matmul need to be at least 1D, but they are {da}D and {db}D"
        )
    if da == 1 and db == 1:
        return dot(a, b)
    if da == 2 and db == 1:
        return mv(a, b)
    if da == 1 and db == 2:
        out = mm(a.unsqueeze(0), b)
        return M.UnsafeView.apply(out, shape=out.shape[1:], name="SqueezeBackward4")
    if da == 2 and db == 2:
        return mm(a, b)
    if da == 3 and db == 3 and a.shape[0] != b.shape[0] and 1 in (a.shape[0], b.shape[0]):
        # NOTE: PyTorch drops a batch of one here and folds the other operand.
        if a.shape[0] == 1:
            a, da = a.squeeze(0), 2
        else:
            b, db = b.squeeze(0), 2
    if da >= 3 and db <= 2:
        # NOTE: fold the batch into the rows: one mm (or mv), as PyTorch does.
        folded = a.reshape(-1, a.shape[-1])
        out = mm(folded, b) if db == 2 else mv(folded, b)
        return M.UnsafeView.apply(out, shape=a.shape[:-1] + b.shape[1:])
    if db >= 3 and da <= 2 and a.requires_grad:
        # NOTE: PyTorch folds b^T instead, so that a's gradient needs no batch sum.
        bt = b.mT
        folded = bt.reshape(-1, bt.shape[-1])
        if da == 1:
            return M.UnsafeView.apply(mv(folded, a), shape=bt.shape[:-1])
        out = M.UnsafeView.apply(mm(folded, a.t()), shape=bt.shape[:-1] + (a.shape[0],))
        return out.mT.contiguous()
    a2 = a.unsqueeze(0) if da == 1 else a
    b2 = b.unsqueeze(-1) if db == 1 else b
    batch = _broadcast_shapes(a2.shape[:-2], b2.shape[:-2])
    n, k, m = a2.shape[-2], a2.shape[-1], b2.shape[-1]
    nb = Size(batch).numel()
    if k != b2.shape[-2]:
        raise RuntimeError(
            f"Expected size for first two dimensions of batch2 tensor to be: [{nb}, {k}] but got: "
            f"[{nb}, {b2.shape[-2]}]."
        )
    a3 = a2.expand(batch + (n, k)).reshape(nb, n, k)
    b3 = b2.expand(batch + (k, m)).reshape(nb, k, m)
    shape = batch + ((n,) if da > 1 else ()) + ((m,) if db > 1 else ())
    return M.UnsafeView.apply(bmm(a3, b3), shape=shape)
