"""Matrix products: ``mm``, ``mv``, ``dot``, ``bmm``, ``addmm`` and ``matmul``'s dispatch."""

from __future__ import annotations

from typing import Any

from .. import dtypes
from ..ops import linalg
from ..ops import movement as M
from ..tensor import Size, Tensor
from .checks import addmm_dtype_error, arg_position, expect_tensor, matmul_dtype_error
from .shape import _broadcast_shapes


# ---- matrix products -------------------------------------------------------------------------

def _check_same_dtype(a: Tensor, b: Tensor, op: str, shapes_match: bool = True) -> None:
    """PyTorch's dtype error for ``op`` (``mm``, ``mv``, ``dot``, ``bmm``). NOTE: mm, mv and bmm
    report mismatched shapes first: with ``shapes_match`` False the op raises that instead."""
    err = matmul_dtype_error(op, a, b) if shapes_match else None
    if err is not None:
        raise err
    if shapes_match and a.dtype is dtypes.bool:
        raise NotImplementedError(f"\"{_BOOL_KERNELS[op]}\" not implemented for 'Bool'")


# NOTE: the kernels whose names PyTorch's refusal of bool matrix products carries (its CPU
# names; a GPU's may differ)
_BOOL_KERNELS = {"mm": "addmm_impl_cpu_", "addmm": "addmm_impl_cpu_", "mv": "addmv_impl_cpu",
                 "bmm": "bmm", "dot": "dot"}


def _tensors(fn: str, method: bool, *args: tuple[str, Any]) -> None:
    """PyTorch's TypeError for the first argument of ``fn`` that is not a tensor (``method``:
    the call was ``input.fn(...)``, whose positions do not count ``input``)."""
    for position, (name, value) in enumerate(args, 1):
        expect_tensor(fn, name, arg_position(position, method), value)


def mm(input: Tensor, mat2: Tensor, *, _method: bool = False) -> Tensor:  # noqa: A002
    """Matrix product of two 2-D tensors."""
    _tensors("mm", _method, ("input", input), ("mat2", mat2))
    if input.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"{'self' if input.ndim != 2 else 'mat2'} must be a matrix")
    _check_same_dtype(input, mat2, "mm", input.shape[1] == mat2.shape[0])
    return linalg.Mm.apply(input, mat2)


def mv(input: Tensor, vec: Tensor, *, _method: bool = False) -> Tensor:  # noqa: A002
    _tensors("mv", _method, ("input", input), ("vec", vec))
    _check_same_dtype(input, vec, "mv", input.ndim != 2 or vec.ndim != 1 or
                      input.shape[1] == vec.shape[0])
    return linalg.Mv.apply(input, vec)


def dot(input: Tensor, other: Tensor, *, _method: bool = False) -> Tensor:  # noqa: A002
    _tensors("dot", _method, ("input", input), ("tensor", other))
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(
            f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors"
        )
    _check_same_dtype(input, other, "dot")
    return linalg.Dot.apply(input, other)


def bmm(input: Tensor, mat2: Tensor, *, _method: bool = False) -> Tensor:  # noqa: A002
    _tensors("bmm", _method, ("input", input), ("mat2", mat2))
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    _check_same_dtype(input, mat2, "bmm", input.shape[0] == mat2.shape[0] and
                      input.shape[2] == mat2.shape[1])
    return linalg.Bmm.apply(input, mat2)


def addmm(input: Tensor, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1,  # noqa: A002
          _method: bool = False) -> Tensor:
    """``beta * input + alpha * (mat1 @ mat2)`` (AddmmBackward0)."""
    _tensors("addmm", _method, ("input", input), ("mat1", mat1), ("mat2", mat2))
    err = addmm_dtype_error(input, mat1, mat2)
    if err is not None:
        raise err
    if mat1.dtype is dtypes.bool:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    if beta == 1 and alpha == 1:
        return linalg.Addmm.apply(input, mat1, mat2)
    return linalg.Addmm.apply(input, mat1, mat2, beta=beta, alpha=alpha)


def matmul(input: Tensor, other: Tensor, *, out: Tensor | None = None,  # noqa: A002
           _method: bool = False) -> Tensor:
    """Matrix product with NumPy's rules: dot, mv, mm, and broadcast batched products."""
    if out is not None:
        from .out import check_out_grad, write_out  # late: out builds on view_writes

        check_out_grad("matmul", (input, other), out)
        return write_out("matmul", _matmul(input, other, _method), out, exact=(True,))
    return _matmul(input, other, _method)


def _matmul(input: Tensor, other: Tensor, _method: bool) -> Tensor:  # noqa: A002
    a, b = input, other
    _tensors("matmul", _method, ("input", a), ("other", b))
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
    if da == 3 and db == 3 and a.shape[0] != b.shape[0] and 1 in (a.shape[0], b.shape[0]) and \
            (a if a.shape[0] == 1 else b).requires_grad:
        # NOTE: PyTorch drops a batch of one that requires grad and folds the other operand.
        if a.shape[0] == 1:
            a, da = a.squeeze(0), 2
        else:
            b, db = b.squeeze(0), 2
    if _should_fold(a, b):
        # NOTE: fold the batch of the larger operand (b^T when b is larger) into the rows: one mm
        # (or mv), as PyTorch does. The row count is spelled out: reshape(-1, 0) is ambiguous.
        transpose = db > da
        big = b.mT if transpose else a
        small = (a.t() if da == 2 else a) if transpose else b
        rows = Size(big.shape[:-1]).numel()
        folded = big.reshape(rows, big.shape[-1])
        if small.ndim == 1:
            return M.UnsafeView.apply(mv(folded, small), shape=big.shape[:-1])
        out = M.UnsafeView.apply(mm(folded, small), shape=big.shape[:-1] + small.shape[1:])
        return out.mT.contiguous() if transpose else out
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
    shape = batch + ((n,) if da > 1 else ()) + ((m,) if db > 1 else ())
    if db == 1:  # NOTE: PyTorch's order: the vector becomes a column after the batch fold
        out = bmm(a3, b.expand(batch + (k,)).reshape(nb, k).unsqueeze(2)).squeeze(-1)
    else:
        out = bmm(a3, b2.expand(batch + (k, m)).reshape(nb, k, m))
    return M.UnsafeView.apply(out, shape=shape)


def _should_fold(a: Tensor, b: Tensor) -> bool:
    """PyTorch's rule (``should_fold``) for folding ``a @ b`` into one mm or mv: the larger
    operand (``b^T`` when ``b`` has more dims) has 3 or more dims and the other at most 2, and
    either the smaller one requires grad (its gradient then needs no batch sum), or ``a`` is not
    2-D and the larger one folds without a copy (empty, or its batch dims contiguous)."""
    big, small = (a, b) if a.ndim >= b.ndim else (b.mT, a)
    if big.ndim < 3 or small.ndim > 2:
        return False
    if small.requires_grad:
        return True
    if a.ndim == 2:
        return False
    if big.numel() == 0 or big._level:  # NOTE: a vmap-batched tensor's strides are physical
        return True
    shape, strides = big.shape, big.stride()
    return all(strides[i] == strides[i + 1] * shape[i + 1] for i in range(big.ndim - 2))
