"""Tensor products: einsum, outer, kron, cross, trace, tensordot, batched and fused matrix products (baddbmm, addmv, addr, ...).

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
``einsum`` lives in ``products_einsum``, the fused ``add*`` products in ``products_fused``
(re-exported here).
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from .. import dtypes
from ..autograd.node import user_stacklevel
from ..ops import movement as M
from ..ops import products as P
from ..ops.util import normalize_dim
from ..tensor import Tensor
from .arith import _type_name
from .linalg import _tensors
from .out import check_out_grad, write_out
from .products_einsum import einsum
from .products_fused import (
    addbmm, addbmm_, addmv, addmv_, addr, addr_, baddbmm, baddbmm_, chain_matmul,
)

__all__: list[str] = ["addbmm", "addmv", "addmv_", "addr", "baddbmm", "chain_matmul", "cross",
                      "einsum", "ger", "inner", "kron", "outer", "tensordot", "trace", "vdot"]


def outer(input: Tensor, vec2: Tensor, *, out: Tensor | None = None,  # noqa: A002
          _method: bool = False, _name: str = "outer") -> Tensor:
    """Outer product of two 1-D tensors, ``input[i] * vec2[j]`` (MulBackward0), promoted as
    ``*``.

    Example:
        >>> outer(tensor([1.0, 2.0]), tensor([1.0, 0.0, -1.0]))
        tensor([[ 1.,  0., -1.],
                [ 2.,  0., -2.]])
    """
    _tensors(_name, _method, ("input", input), ("vec2", vec2))
    for name, t in (("self", input), ("vec2", vec2)):
        if t.ndim != 1:
            raise RuntimeError(f"outer: Expected 1-D argument {name}, but got {t.ndim}-D")
    result = input.reshape(input.shape[0], 1) * vec2
    # NOTE: PyTorch's outer writes through mul's out=, whose name its refusal gives
    return result if out is None else write_out("mul", result, out, inputs=(input, vec2))


_warned_ger = False


def ger(input: Tensor, vec2: Tensor, *, out: Tensor | None = None,  # noqa: A002
        _method: bool = False) -> Tensor:
    """``outer`` (its older name; deprecated in PyTorch, which warns once)."""
    global _warned_ger
    if not _warned_ger:
        _warned_ger = True
        warnings.warn("torch.ger is deprecated and will be removed in a future PyTorch release. "
                      "Use torch.outer instead.", UserWarning, stacklevel=user_stacklevel())
    return outer(input, vec2, out=out, _method=_method, _name="ger")


def kron(input: Tensor, other: Tensor, *, out: Tensor | None = None,  # noqa: A002
         _method: bool = False) -> Tensor:
    """Kronecker product: blocks ``input[i] * other`` (dims padded on the left to the larger
    rank), as PyTorch's interleaved product (UnsafeViewBackward0).

    Example:
        >>> kron(tensor([1.0, 2.0]), tensor([1.0, 10.0]))
        tensor([ 1., 10.,  2., 20.])
    """
    _tensors("kron", _method, ("input", input), ("other", other))
    n = max(input.ndim, other.ndim)
    sa = (1,) * (n - input.ndim) + tuple(input.shape)
    sb = (1,) * (n - other.ndim) + tuple(other.shape)
    a = input.reshape(tuple(v for s in sa for v in (s, 1)))
    b = other.reshape(tuple(v for s in sb for v in (1, s)))
    prod = a * b
    shape = tuple(x * y for x, y in zip(sa, sb))
    if prod.numel() and not prod._level and prod.backend.view(prod._data, shape) is None:
        # NOTE: as PyTorch's: the product is laid out as its inputs (a transposed one too), and
        # a layout that does not view as the result is refused with view's error
        raise RuntimeError("view size is not compatible with input tensor's size and stride (at "
                           "least one dimension spans across two contiguous subspaces). Use "
                           ".reshape(...) instead.")
    result = M.UnsafeView.apply(prod, shape=shape)
    return result if out is None else write_out("kron", result, out, inputs=(input, other))


_warned_cross = False


def cross(input: Tensor, other: Tensor, dim: int | None = None, *,  # noqa: A002
          out: Tensor | None = None, _method: bool = False) -> Tensor:
    """Cross product of 3-vectors along ``dim`` (the first dim of size 3 when None, with
    PyTorch's deprecation warning), other dims broadcast (LinalgCrossBackward0).

    Example:
        >>> cross(tensor([1.0, 0.0, 0.0]), tensor([0.0, 1.0, 0.0]), dim=0)
        tensor([0., 0., 1.])
    """
    global _warned_cross
    _tensors("cross", _method, ("input", input), ("other", other))
    if dim is None:
        if not _warned_cross:
            _warned_cross = True
            warnings.warn("Using torch.cross without specifying the dim arg is deprecated.\n"
                          "Please either pass the dim explicitly or simply use torch.linalg.cross."
                          "\nThe default value of dim will change to agree with that of "
                          "linalg.cross in a future release.", UserWarning,
                          stacklevel=user_stacklevel())
        dim = next((i for i, s in enumerate(input.shape) if s == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    d = normalize_dim(dim, input.ndim)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {d} must have length 3. Got "
                           f"{input.shape[d]} and {other.shape[d]}")
    from .shape import _broadcast_shapes

    _broadcast_shapes(input.shape, other.shape)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(input.dtype)} but found "
                           f"{_type_name(other.dtype)}")
    if input.dtype is dtypes.bool:
        raise NotImplementedError("\"cross\" not implemented for 'Bool'")
    result = P.Cross.apply(input, other, dim=d)
    return result if out is None else write_out("cross", result, out, inputs=(input, other),
                                                exact=(True,))


def trace(input: Tensor) -> Tensor:  # noqa: A002
    """Sum of the main diagonal of a matrix (TraceBackward0); integer inputs give int64.

    Example:
        >>> trace(tensor([[1.0, 2.0], [3.0, 4.0]]))
        tensor(5.)
    """
    _tensors("trace", False, ("input", input))
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    if input.dtype is dtypes.bool:
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    return P.Trace.apply(input)  # type: ignore[no-any-return]


def tensordot(a: Tensor, b: Tensor, dims: Any = 2, out: Tensor | None = None) -> Tensor:
    """Sum of products over ``dims``: an int ``n`` (the last ``n`` dims of ``a`` with the first
    ``n`` of ``b``), a pair of lists (dims of ``a``, dims of ``b``) or a tensor of either.
    One matrix product; a contracted dim of size 1 on one side is summed on the other first.

    Example:
        >>> tensordot(ones(2, 3), ones(3, 4), dims=1).shape
        torch.Size([2, 4])
    """
    dims_a, dims_b = _tensordot_dims(a, b, dims)
    result = _tensordot(a, b, dims_a, dims_b)
    return result if out is None else _write_tensordot(result, out, (a, b))


def _write_tensordot(result: Tensor, out: Any, inputs: tuple[Tensor, ...]) -> Tensor:
    """``out=`` of tensordot (and inner): the result's dtype exactly, in tensordot's words."""
    check_out_grad("tensordot", inputs, out)
    if isinstance(out, Tensor) and out.dtype is not result.dtype:
        raise RuntimeError(f"tensordot: Expected the output tensor to have dtype "
                           f"{_type_name(result.dtype)}, but got an output tensor with dtype "
                           f"{_type_name(out.dtype)}")
    return write_out("tensordot", result, out, inputs=inputs)  # type: ignore[no-any-return]


def _tensordot_dims(a: Tensor, b: Tensor, dims: Any) -> tuple[list[int], list[int]]:
    """``dims`` read as torch.functional.tensordot reads it."""
    if isinstance(dims, Tensor):
        if dims.numel() > 1:
            return list(dims[0].tolist()), list(dims[1].tolist())
        dims = int(dims.item())
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
    if isinstance(dims, (list, tuple)):
        dims_a, dims_b = dims
        for name, pos, ds in (("dims_self", 3, dims_a), ("dims_other", 4, dims_b)):
            if not isinstance(ds, (list, tuple)):
                raise TypeError(f"tensordot(): argument '{name}' (position {pos}) must be tuple "
                                f"of ints, not {type(ds).__name__}")
        return list(dims_a), list(dims_b)
    if dims < 0:
        raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
    if dims > min(a.ndim, b.ndim):
        raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
    return list(range(-dims, 0)), list(range(dims))


def _tensordot(a: Tensor, b: Tensor, dims_a: list[int], dims_b: list[int]) -> Tensor:
    if len(dims_a) != len(dims_b):
        raise RuntimeError("both dimension lists should have same length")
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if a.dtype is dtypes.bool:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    ca: list[int] = []
    cb: list[int] = []
    for da, db in zip(dims_a, dims_b):
        sa, sb = a.shape[normalize_dim(da, a.ndim)], b.shape[normalize_dim(db, b.ndim)]
        if sb == 1:  # NOTE: PyTorch sums the other side over a size-1 contracted dim
            a = a.sum(da, keepdim=True)
        elif sa == 1:
            b = b.sum(db, keepdim=True)
        elif sa != sb:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sa} in "
                               f"dim {da} and second has size {sb} in dim {db}")
        ca.append(normalize_dim(da, a.ndim))
        cb.append(normalize_dim(db, b.ndim))
    for ds in (ca, cb):
        if len(set(ds)) != len(ds):
            raise RuntimeError(f"dim {min(d for d in ds if ds.count(d) > 1)} appears multiple "
                               "times in the list of dims")
    free_a = [d for d in range(a.ndim) if d not in ca]
    free_b = [d for d in range(b.ndim) if d not in cb]
    k = 1
    for d in ca:
        k *= a.shape[d]
    rows = 1
    for d in free_a:
        rows *= a.shape[d]
    cols = 1
    for d in free_b:
        cols *= b.shape[d]
    from .linalg import mm

    ma = a.permute(*free_a, *ca).reshape(rows, k)
    mb = b.permute(*cb, *free_b).reshape(k, cols)
    shape = tuple(a.shape[d] for d in free_a) + tuple(b.shape[d] for d in free_b)
    return mm(ma, mb).reshape(shape)


def vdot(input: Tensor, other: Tensor, *, out: Tensor | None = None,  # noqa: A002
         _method: bool = False) -> Tensor:
    """Dot product of two 1-D tensors (for real tensors, ``dot``; VdotBackward0).

    Example:
        >>> vdot(tensor([1.0, 2.0]), tensor([3.0, 4.0]))
        tensor(11.)
    """
    from .linalg import _check_same_dtype

    _tensors("vdot", _method, ("input", input), ("other", other))
    if input.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {input.ndim}D and {other.ndim}D tensors")
    _check_same_dtype(input, other, "dot")
    if input.dtype is dtypes.bool:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")
    if input.shape != other.shape:
        raise RuntimeError(
            f"inconsistent tensor size, expected tensor [{input.shape[0]}] and src "
            f"[{other.shape[0]}] to have the same number of elements, but got {input.shape[0]} "
            f"and {other.shape[0]} elements respectively")
    if input.dtype.is_complex:  # NOTE: vdot conjugates its first argument
        from .complex import conj

        input = conj(input)
    result = P.Vdot.apply(input, other)
    if out is None:
        return result  # type: ignore[no-any-return]
    check_out_grad("vdot", (input, other), out)
    if isinstance(out, Tensor) and out.dtype is not result.dtype:
        raise RuntimeError(f"result dtype {_type_name(out.dtype)} does not match input dtype "
                           f"{_type_name(result.dtype)}")
    return write_out("vdot", result, out, inputs=(input, other))  # type: ignore[no-any-return]


def inner(input: Tensor, other: Tensor, *, out: Tensor | None = None,  # noqa: A002
          _method: bool = False) -> Tensor:
    """Sum of products over the last dims of both (``tensordot`` over ``-1, -1``); a 0-d
    operand multiplies instead.

    Example:
        >>> inner(tensor([1.0, 2.0]), tensor([3.0, 4.0]))
        tensor(11.)
    """
    _tensors("inner", _method, ("input", input), ("other", other))
    if input.ndim == 0 or other.ndim == 0:
        result = input * other
    else:
        if input.shape[-1] != other.shape[-1]:
            raise RuntimeError("inner() the last dimension must match on both input tensors but "
                               f"got shapes {list(input.shape)} and {list(other.shape)}")
        result = _tensordot(input, other, [-1], [-1])
    if out is None:
        return result
    if input.ndim == 0 or other.ndim == 0:
        return write_out("inner", result, out, inputs=(input, other))  # type: ignore[no-any-return]
    return _write_tensordot(result, out, (input, other))


def method(fn: Callable[..., Any]) -> Callable[..., Any]:
    """The ``Tensor`` method of ``fn``: argument positions in its errors leave out ``self``."""

    def call(self: Tensor, *args: Any, **kwargs: Any) -> Any:
        return fn(self, *args, _method=True, **kwargs)

    call.__name__ = call.__qualname__ = fn.__name__
    call.__doc__ = fn.__doc__
    return call


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "addbmm": method(addbmm), "addbmm_": method(addbmm_), "addmv": method(addmv),
    "addmv_": method(addmv_), "addr": method(addr), "addr_": method(addr_),
    "baddbmm": method(baddbmm), "baddbmm_": method(baddbmm_), "cross": method(cross),
    "ger": method(ger), "inner": method(inner), "kron": method(kron), "outer": method(outer),
    "trace": trace, "vdot": method(vdot),
}
