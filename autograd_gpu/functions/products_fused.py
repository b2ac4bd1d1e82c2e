"""The fused matrix products ``baddbmm``, ``addbmm``, ``addmv``, ``addr`` (``beta * input +
alpha * product``, with their in-place forms) and ``chain_matmul`` (exported through
``products``). Checks run in PyTorch's order, so each misuse raises PyTorch's error."""

from __future__ import annotations

import warnings
from typing import Any

from .. import dtypes
from ..autograd.node import user_stacklevel
from ..ops import products as P
from ..ops.util import normalize_dim
from ..tensor import Tensor
from .arith import _type_name
from .checks import addmm_dtype_error
from .linalg import _tensors
from .out import check_out_grad, write_out


def _size(t: Tensor, d: int) -> int:
    """``t.size(d)``, with PyTorch's IndexError for a dim out of range."""
    return t.shape[normalize_dim(d, t.ndim)]


def _check_expand(t: Tensor, shape: tuple[int, ...]) -> None:
    """PyTorch's errors for ``t.expand(shape)`` (the added input broadcast to the result)."""
    dims = ", ".join(map(str, t.shape))
    target = ", ".join(map(str, shape))
    if t.ndim > len(shape):
        kind = "cuda." if t._device.type == "cuda" else ""
        raise RuntimeError(f"expand(torch.{kind}{_type_name(t.dtype)}Tensor{{[{dims}]}}, "
                           f"size=[{target}]): the number of sizes provided ({len(shape)}) must "
                           f"be greater or equal to the number of dimensions in the tensor "
                           f"({t.ndim})")
    lead = len(shape) - t.ndim
    for i, s in reversed(list(enumerate(t.shape))):  # NOTE: the last dims first, as PyTorch
        if s != 1 and s != shape[lead + i]:
            raise RuntimeError(f"The expanded size of the tensor ({shape[lead + i]}) must match "
                               f"the existing size ({s}) at non-singleton dimension {lead + i}. "
                               f" Target sizes: [{target}].  Tensor sizes: [{dims}]")


def _int_scalars(dtype: dtypes.dtype, *scalars: Any) -> tuple[Any, ...]:
    """``beta``, ``alpha`` for an integer result: converted to int (truncated), as PyTorch's
    kernels take them."""
    if dtype.category >= 2:
        return scalars
    return tuple(int(s) for s in scalars)


def baddbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,  # noqa: A002
            alpha: Any = 1, out: Tensor | None = None, _method: bool = False) -> Tensor:
    """``beta * input + alpha * (batch1 @ batch2)`` for (b, n, k) and (b, k, m) batches, ``input``
    broadcast to (b, n, m); ``beta == 0`` ignores ``input`` (nan and inf in it too)
    (BaddbmmBackward0).

    Example:
        >>> baddbmm(zeros(1, 1, 1), ones(1, 1, 2), ones(1, 2, 1), alpha=3)
        tensor([[[6.]]])
    """
    _tensors("baddbmm", _method, ("input", input), ("batch1", batch1), ("batch2", batch2))
    target = (_size(batch1, 0), _size(batch1, 1), _size(batch2, 2))
    _check_expand(input, target)
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if input.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {dtypes.c_type_name(input.dtype)}, "
                           f"batch1: {dtypes.c_type_name(batch1.dtype)}, batch2: {dtypes.c_type_name(batch2.dtype)}")
    if batch1.dtype is not batch2.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(batch1.dtype)} but found "
                           f"{_type_name(batch2.dtype)}")
    if input.dtype is dtypes.bool:
        raise NotImplementedError("\"baddbmm\" not implemented for 'Bool'")
    if batch2.shape[0] != batch1.shape[0] or batch2.shape[1] != batch1.shape[2]:
        raise RuntimeError(
            "Expected size for first two dimensions of batch2 tensor to be: "
            f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: [{batch2.shape[0]}, "
            f"{batch2.shape[1]}].")
    beta, alpha = _int_scalars(input.dtype, beta, alpha)
    result = P.Baddbmm.apply(input, batch1, batch2, beta=beta, alpha=alpha)
    return result if out is None else write_out("baddbmm", result, out,
                                                inputs=(input, batch1, batch2), exact=(True,))


def addbmm(input: Tensor, batch1: Tensor, batch2: Tensor, *, beta: Any = 1,  # noqa: A002
           alpha: Any = 1, out: Tensor | None = None, _method: bool = False) -> Tensor:
    """``beta * input + alpha * sum_i batch1[i] @ batch2[i]``, ``input`` broadcast to (n, m)
    (AddbmmBackward0); ``beta == 0`` ignores ``input``.

    Example:
        >>> addbmm(zeros(1, 1), ones(2, 1, 3), ones(2, 3, 1))
        tensor([[6.]])
    """
    _tensors("addbmm", _method, ("input", input), ("batch1", batch1), ("batch2", batch2))
    target = (_size(batch1, 1), _size(batch2, 2))
    _check_expand(input, target)
    for name, t in (("batch1", batch1), ("batch2", batch2)):
        if t.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError("batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    if batch1.shape[0]:
        # NOTE: PyTorch adds each batch's product into the result (addmm_), which is out when
        # given (input is copied into it first)
        if isinstance(out, Tensor):
            check_out_grad("addbmm", (input, batch1, batch2), out)
        err = addmm_dtype_error(out if isinstance(out, Tensor) else input, batch1, batch2)
        if err is not None:
            raise err
        if batch1.dtype is dtypes.bool:
            raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    beta, alpha = _int_scalars(input.dtype, beta, alpha)
    result = P.Addbmm.apply(input, batch1, batch2, beta=beta, alpha=alpha)
    # NOTE: with no batches PyTorch copies input into out, any dtype
    return result if out is None else write_out("addbmm", result, out,
                                                inputs=(input, batch1, batch2),
                                                cast_any=not batch1.shape[0])


def addmv(input: Tensor, mat: Tensor, vec: Tensor, *, beta: Any = 1, alpha: Any = 1,  # noqa: A002
          out: Tensor | None = None, _method: bool = False) -> Tensor:
    """``beta * input + alpha * (mat @ vec)``, ``input`` 0-d or 1-d (AddmvBackward0);
    ``beta == 0`` ignores ``input``.

    Example:
        >>> addmv(ones(2), ones(2, 3), ones(3), beta=2)
        tensor([5., 5.])
    """
    _tensors("addmv", _method, ("input", input), ("mat", mat), ("vec", vec))
    if not (mat.ndim == 2 and vec.ndim == 1 and input.ndim <= 1):
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    if mat.shape[1] != vec.shape[0] or (mat.shape[0] != input.numel() and input.numel() != 1):
        size = input.shape[0] if input.ndim else 1
        raise RuntimeError(f"size mismatch, got input ({size}), mat ({mat.shape[0]}x"
                           f"{mat.shape[1]}), vec ({vec.shape[0]})")
    if not input.dtype is mat.dtype is vec.dtype:
        raise RuntimeError("addmv input tensors must have the same dtype, but got "
                           f"{_type_name(input.dtype)}, {_type_name(mat.dtype)}, and "
                           f"{_type_name(vec.dtype)}")
    if input.dtype is dtypes.bool:
        raise NotImplementedError("\"addmv_impl_cpu\" not implemented for 'Bool'")
    beta, alpha = _int_scalars(input.dtype, beta, alpha)
    result = P.Addmv.apply(input, mat, vec, beta=beta, alpha=alpha)
    return result if out is None else write_out("addmv", result, out, inputs=(input, mat, vec),
                                                exact=(True,))


def addr(input: Tensor, vec1: Tensor, vec2: Tensor, *, beta: Any = 1, alpha: Any = 1,  # noqa: A002
         out: Tensor | None = None, _method: bool = False) -> Tensor:
    """``beta * input + alpha * outer(vec1, vec2)``, the three promoted to one dtype and
    ``input`` broadcast to (n, m) (AddrBackward0); ``beta == 0`` ignores ``input``. For bool:
    ``(beta and input) or (alpha and vec1[i] and vec2[j])``.

    Example:
        >>> addr(zeros(2, 2), tensor([1.0, 2.0]), tensor([1.0, 3.0]))
        tensor([[1., 3.],
                [2., 6.]])
    """
    _tensors("addr", _method, ("input", input), ("vec1", vec1), ("vec2", vec2))
    for name, t in (("vec1", vec1), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {t.ndim}-D")
    _check_expand(input, (vec1.shape[0], vec2.shape[0]))
    dtype = dtypes.result_type([t.dtype for t in (input, vec1, vec2) if t.ndim],
                               [t.dtype for t in (input, vec1, vec2) if not t.ndim], [])
    for name, s in (("beta", beta), ("alpha", alpha)):
        if isinstance(s, bool) and dtype is not dtypes.bool:
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
        if dtype.category < 2 and isinstance(s, float):
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                               "floating point number.")
    x, u, v = (t if t.dtype is dtype else t.to(dtype) for t in (input, vec1, vec2))
    if dtype is dtypes.bool:
        beta, alpha = bool(beta), bool(alpha)
    result = P.Addr.apply(x, u, v, beta=beta, alpha=alpha)
    return result if out is None else write_out("addr", result, out, inputs=(input, vec1, vec2))


def _inplace(fn: Any, names: tuple[str, str]) -> Any:
    def fn_(input: Tensor, a: Tensor, b: Tensor, *, beta: Any = 1,  # noqa: A002
            alpha: Any = 1, _method: bool = False) -> Tensor:
        from .inplace_ops import inplace

        _tensors(fn_.__name__, _method, ("input", input), (names[0], a), (names[1], b))
        return inplace(input, fn, a, b, beta=beta, alpha=alpha, _method=_method)

    fn_.__name__ = fn_.__qualname__ = fn.__name__ + "_"
    fn_.__doc__ = f"In-place ``{fn.__name__}``."
    return fn_


baddbmm_ = _inplace(baddbmm, ("batch1", "batch2"))
addbmm_ = _inplace(addbmm, ("batch1", "batch2"))
addmv_ = _inplace(addmv, ("mat", "vec"))
addr_ = _inplace(addr, ("vec1", "vec2"))

_CHAIN_WARNING = ("torch.chain_matmul is deprecated and will be removed in a future PyTorch "
                  "release. Use torch.linalg.multi_dot instead, which accepts a list of two or "
                  "more tensors rather than multiple parameters.")
_warned_chain = False


def chain_matmul(*matrices: Tensor, out: Tensor | None = None) -> Tensor:
    """The product of 2-D matrices, multiplied in the order that costs the fewest scalar
    multiplications (as ``linalg.multi_dot``); one matrix gives a copy (deprecated in PyTorch,
    which warns once).

    Example:
        >>> chain_matmul(ones(2, 3), ones(3, 4), ones(4, 1))
        tensor([[12.],
                [12.]])
    """
    global _warned_chain
    for i, t in enumerate(matrices):
        if not isinstance(t, Tensor):
            raise TypeError(f"expected Tensor as element {i} in argument 0, but got "
                            f"{type(t).__name__}")
    if not _warned_chain:
        _warned_chain = True
        warnings.warn(_CHAIN_WARNING, UserWarning, stacklevel=user_stacklevel())
    for t in matrices:
        if t.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t.ndim}, expected 2 instead.")
    if not matrices:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    if len(matrices) == 1:
        result = matrices[0].clone()
    else:
        result = _multi_dot(list(matrices))
    if out is None:
        return result
    check_out_grad("chain_matmul", matrices, out)
    if isinstance(out, Tensor) and out.dtype is not result.dtype:
        raise RuntimeError(f"multi_dot(): expected out tensor to have dtype "
                           f"{dtypes.c_type_name(result.dtype)} but got {dtypes.c_type_name(out.dtype)}")
    return write_out("chain_matmul", result, out, inputs=matrices)  # type: ignore[no-any-return]


def _multi_dot(ms: list[Tensor]) -> Tensor:
    """``linalg.multi_dot`` of 2-D matrices, in PyTorch's order (the cheapest, ties to the
    leftmost split)."""
    d = ms[0].dtype
    for i, t in enumerate(ms[1:], 1):
        if t.dtype is not d:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor "
                               f"0 is {dtypes.c_type_name(d)} and tensor {i} {dtypes.c_type_name(t.dtype)}")
    for i in range(len(ms) - 1):
        if ms[i].shape[1] != ms[i + 1].shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(ms[i].shape)} and {list(ms[i + 1].shape)} cannot be "
                               "multiplied")
    from .decomp_norms import _chain  # late: the linalg family builds on this one

    return _chain(ms)
