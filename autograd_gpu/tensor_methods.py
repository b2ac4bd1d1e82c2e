"""``Tensor``'s methods that delegate to ``functions/``: operators, math, shape and in-place
ops, each a one-line call (``x.exp()`` is ``functions.exp(x)``). ``Tensor`` inherits them;
the op families add theirs at import (``functions/__init__``)."""

from __future__ import annotations

from builtins import bool as _bool
from builtins import float as _float
from builtins import int as _int
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .tensor import Tensor

# NOTE: set by tensor.py once ``functions/`` can be imported (it builds on Tensor): the
# functions module, and the test of a binary operator's operand.
F: Any = None
_operand: Any = None
# NOTE: the fast entry of ``tensor * tensor`` and ``tensor + tensor`` (no alpha), set
# by functions/arith.py: the Tensor class, its _binary and the Mul/Add node classes.
# F.mul/F.add would make the same call after the same test.
_T: Any = None
_binary: Any = None
_MUL: Any = None
_ADD: Any = None


class TensorMethods:
    """The delegating methods of ``Tensor`` (``self`` is always a ``Tensor``)."""

    # ---- operators (delegates) --------------------------------------------------------------
    # NOTE: an operand that is neither a tensor nor a number returns NotImplemented, so that
    # Python raises its own "unsupported operand type(s) for +: 'Tensor' and 'str'", as PyTorch.
    def __add__(self, other: Any) -> Tensor:
        if other.__class__ is _T and self.__class__ is _T:
            return _binary(_ADD, self, other)
        return F.add(self, other) if _operand(other) else NotImplemented

    def __radd__(self, other: Any) -> Tensor:
        return F.add(self, other) if _operand(other) else NotImplemented

    def __sub__(self, other: Any) -> Tensor:
        return F.sub(self, other) if _operand(other) else NotImplemented

    def __rsub__(self, other: Any) -> Tensor:
        return F.rsub(self, other) if _operand(other) else NotImplemented

    def __mul__(self, other: Any) -> Tensor:
        if other.__class__ is _T and self.__class__ is _T:
            return _binary(_MUL, self, other)
        return F.mul(self, other) if _operand(other) else NotImplemented

    def __rmul__(self, other: Any) -> Tensor:
        return F.mul(self, other) if _operand(other) else NotImplemented

    def __truediv__(self, other: Any) -> Tensor:
        return F.div(self, other) if _operand(other) else NotImplemented

    def __rtruediv__(self, other: Any) -> Tensor:
        return F.rdiv(self, other) if _operand(other) else NotImplemented

    def __floordiv__(self, other: Any) -> Tensor:
        return F.floor_divide(self, other) if _operand(other) else NotImplemented

    def __rfloordiv__(self, other: Any) -> Tensor:
        return F.floor_divide(other, self) if _operand(other) else NotImplemented

    def __mod__(self, other: Any) -> Tensor:
        return F.remainder(self, other) if _operand(other) else NotImplemented

    def __rmod__(self, other: Any) -> Tensor:
        return F.remainder(other, self) if _operand(other) else NotImplemented

    def __pow__(self, other: Any) -> Tensor:
        return F.pow(self, other) if _operand(other) else NotImplemented

    def __rpow__(self, other: Any) -> Tensor:
        return F.rpow(self, other) if _operand(other) else NotImplemented

    def __matmul__(self, other: Any) -> Tensor:
        # NOTE: a non-tensor gives Python's "unsupported operand type(s) for @", as PyTorch.
        return F.matmul(self, other) if isinstance(other, TensorMethods) else NotImplemented

    def __rmatmul__(self, other: Any) -> Tensor:
        return F.matmul(other, self) if isinstance(other, TensorMethods) else NotImplemented

    def __neg__(self) -> Tensor:
        return F.neg(self)

    def __pos__(self) -> Any:
        return self

    def __abs__(self) -> Tensor:
        return F.abs(self)

    def __invert__(self) -> Tensor:
        return F.invert(self)

    def __and__(self, other: Any) -> Tensor:
        return F.bitwise_and(self, other) if _operand(other) else NotImplemented

    __rand__ = __and__

    def __or__(self, other: Any) -> Tensor:
        return F.bitwise_or(self, other) if _operand(other) else NotImplemented

    __ror__ = __or__

    def __xor__(self, other: Any) -> Tensor:
        return F.bitwise_xor(self, other) if _operand(other) else NotImplemented

    __rxor__ = __xor__

    def __eq__(self, other: Any) -> Tensor:  # type: ignore[override]
        return F.eq(self, other) if _operand(other) else NotImplemented

    def __ne__(self, other: Any) -> Tensor:  # type: ignore[override]
        return F.ne(self, other) if _operand(other) else NotImplemented

    def __lt__(self, other: Any) -> Tensor:
        return F.lt(self, other) if _operand(other) else NotImplemented

    def __le__(self, other: Any) -> Tensor:
        return F.le(self, other) if _operand(other) else NotImplemented

    def __gt__(self, other: Any) -> Tensor:
        return F.gt(self, other) if _operand(other) else NotImplemented

    def __ge__(self, other: Any) -> Tensor:
        return F.ge(self, other) if _operand(other) else NotImplemented

    def __iadd__(self, other: Any) -> Tensor:
        return F.add_(self, other) if _operand(other) else NotImplemented

    def __isub__(self, other: Any) -> Tensor:
        return F.sub_(self, other) if _operand(other) else NotImplemented

    def __imul__(self, other: Any) -> Tensor:
        return F.mul_(self, other) if _operand(other) else NotImplemented

    def __itruediv__(self, other: Any) -> Tensor:
        return F.div_(self, other) if _operand(other) else NotImplemented

    def __ifloordiv__(self, other: Any) -> Tensor:
        return F.floor_divide_(self, other) if _operand(other) else NotImplemented

    def __imod__(self, other: Any) -> Tensor:
        return F.remainder_(self, other) if _operand(other) else NotImplemented

    def __ipow__(self, other: Any) -> Tensor:
        return F.pow_(self, other) if _operand(other) else NotImplemented

    def __iand__(self, other: Any) -> Tensor:
        return F.bitwise_and_(self, other) if _operand(other) else NotImplemented

    def __ior__(self, other: Any) -> Tensor:
        return F.bitwise_or_(self, other) if _operand(other) else NotImplemented

    def __ixor__(self, other: Any) -> Tensor:
        return F.bitwise_xor_(self, other) if _operand(other) else NotImplemented

    def __getitem__(self, key: Any) -> Tensor:
        return F.getitem(self, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        F.setitem(self, key, value)

    # ---- math (delegates) -------------------------------------------------------------------
    def add(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return F.add(self, other, alpha=alpha, _method=True)

    def sub(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return F.sub(self, other, alpha=alpha, _method=True)

    def mul(self, other: Any) -> Tensor:
        return F.mul(self, other, _method=True)

    def div(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        return F.div(self, other, rounding_mode=rounding_mode, _method=True)

    def floor_divide(self, other: Any) -> Tensor:
        return F.floor_divide(self, other, _method=True)

    def bitwise_and(self, other: Any) -> Tensor:
        return F.bitwise_and(self, other, _method=True)

    def bitwise_or(self, other: Any) -> Tensor:
        return F.bitwise_or(self, other, _method=True)

    def bitwise_xor(self, other: Any) -> Tensor:
        return F.bitwise_xor(self, other, _method=True)

    def bitwise_not(self) -> Tensor:
        return F.bitwise_not(self)

    def remainder(self, other: Any) -> Tensor:
        return F.remainder(self, other, _method=True)

    def pow(self, exponent: Any) -> Tensor:
        return F.pow(self, exponent, _method=True)

    def resize_(self, *size: Any) -> Tensor:
        """This tensor resized in place to ``size`` (C-contiguous; see ``functions.out``)."""
        return F.resize_(self, *size)

    def resize_as_(self, other: Tensor) -> Tensor:
        return F.resize_(self, tuple(other.shape))

    def matmul(self, other: Tensor) -> Tensor:
        return F.matmul(self, other, _method=True)

    def mm(self, other: Tensor) -> Tensor:
        return F.mm(self, other, _method=True)

    def bmm(self, other: Tensor) -> Tensor:
        return F.bmm(self, other, _method=True)

    def mv(self, other: Tensor) -> Tensor:
        return F.mv(self, other, _method=True)

    def dot(self, other: Tensor) -> Tensor:
        return F.dot(self, other, _method=True)

    def addmm(self, mat1: Tensor, mat2: Tensor, *, beta: Any = 1, alpha: Any = 1) -> Tensor:
        return F.addmm(self, mat1, mat2, beta=beta, alpha=alpha, _method=True)

    def neg(self) -> Tensor:
        return F.neg(self)

    def abs(self) -> Tensor:
        return F.abs(self)

    def sign(self) -> Tensor:
        return F.sign(self)

    def floor(self) -> Tensor:
        return F.floor(self)

    def exp(self) -> Tensor:
        return F.exp(self)

    def log(self) -> Tensor:
        return F.log(self)

    def log1p(self) -> Tensor:
        return F.log1p(self)

    def expm1(self) -> Tensor:
        return F.expm1(self)

    def sqrt(self) -> Tensor:
        return F.sqrt(self)

    def rsqrt(self) -> Tensor:
        return F.rsqrt(self)

    def reciprocal(self) -> Tensor:
        return F.reciprocal(self)

    def square(self) -> Tensor:
        return F.square(self)

    def sin(self) -> Tensor:
        return F.sin(self)

    def cos(self) -> Tensor:
        return F.cos(self)

    def tanh(self) -> Tensor:
        return F.tanh(self)

    def sigmoid(self) -> Tensor:
        return F.sigmoid(self)

    def relu(self) -> Tensor:
        return F.relu(self)

    def clamp(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        return F.clamp(self, min, max, _method=True)

    clip = clamp

    def maximum(self, other: Tensor) -> Tensor:
        return F.maximum(self, other, _method=True)

    def minimum(self, other: Tensor) -> Tensor:
        return F.minimum(self, other, _method=True)

    def where(self, condition: Any, other: Any) -> Tensor:
        return F.where(condition, self, other, _method=True)

    def masked_fill(self, mask: Tensor, value: Any) -> Tensor:
        return F.masked_fill(self, mask, value, _method=True)

    def eq(self, other: Any) -> Tensor:
        return F.eq(self, other, _method=True)

    def ne(self, other: Any) -> Tensor:
        return F.ne(self, other, _method=True)

    def lt(self, other: Any) -> Tensor:
        return F.lt(self, other, _method=True)

    def le(self, other: Any) -> Tensor:
        return F.le(self, other, _method=True)

    def gt(self, other: Any) -> Tensor:
        return F.gt(self, other, _method=True)

    def ge(self, other: Any) -> Tensor:
        return F.ge(self, other, _method=True)

    def logical_not(self) -> Tensor:
        return F.logical_not(self)

    def isnan(self) -> Tensor:
        return F.isnan(self)

    def isfinite(self) -> Tensor:
        return F.isfinite(self)

    def equal(self, other: Tensor) -> _bool:
        return F.equal(self, other)

    def allclose(self, other: Tensor, rtol: _float = 1e-5, atol: _float = 1e-8, equal_nan: _bool = False) -> _bool:
        return F.allclose(self, other, rtol, atol, equal_nan)

    def sum(self, dim: Any = None, keepdim: _bool = False, *, dtype: Any = None) -> Tensor:
        return F.sum(self, dim, keepdim, dtype=dtype)

    def sum_to_size(self, *size: Any) -> Tensor:
        return F.sum_to_size(self, *size)

    def mean(self, dim: Any = None, keepdim: _bool = False, *, dtype: Any = None) -> Tensor:
        return F.mean(self, dim, keepdim, dtype=dtype)

    def var(self, dim: Any = None, unbiased: Any = None, keepdim: _bool = False, *, correction: Any = None) -> Tensor:
        return F.var(self, dim, unbiased, keepdim, correction=correction)

    def std(self, dim: Any = None, unbiased: Any = None, keepdim: _bool = False, *, correction: Any = None) -> Tensor:
        return F.std(self, dim, unbiased, keepdim, correction=correction)

    def prod(self, dim: _int | None = None, keepdim: _bool = False, *, dtype: Any = None) -> Tensor:
        return F.prod(self, dim, keepdim, dtype=dtype)

    def max(self, dim: Any = None, keepdim: _bool = False) -> Any:
        return F.max(self, dim, keepdim)

    def min(self, dim: Any = None, keepdim: _bool = False) -> Any:
        return F.min(self, dim, keepdim)

    def amax(self, dim: Any = (), keepdim: _bool = False) -> Tensor:
        return F.amax(self, dim, keepdim)

    def amin(self, dim: Any = (), keepdim: _bool = False) -> Tensor:
        return F.amin(self, dim, keepdim)

    def argmax(self, dim: _int | None = None, keepdim: _bool = False) -> Tensor:
        return F.argmax(self, dim, keepdim)

    def argmin(self, dim: _int | None = None, keepdim: _bool = False) -> Tensor:
        return F.argmin(self, dim, keepdim)

    def logsumexp(self, dim: Any, keepdim: _bool = False) -> Tensor:
        return F.logsumexp(self, dim, keepdim)

    def norm(self, p: Any = "fro", dim: Any = None, keepdim: _bool = False, dtype: Any = None) -> Tensor:
        return F.norm(self, p, dim, keepdim, dtype=dtype)

    def any(self, dim: Any = None, keepdim: _bool = False) -> Tensor:
        return F.any(self, dim, keepdim)

    def all(self, dim: Any = None, keepdim: _bool = False) -> Tensor:
        return F.all(self, dim, keepdim)

    def softmax(self, dim: _int, dtype: Any = None) -> Tensor:
        return F.softmax(self, dim, dtype=dtype)

    def log_softmax(self, dim: _int, dtype: Any = None) -> Tensor:
        return F.log_softmax(self, dim, dtype=dtype)

    # ---- shape (delegates) ------------------------------------------------------------------
    def reshape(self, *shape: Any) -> Tensor:
        return F.reshape(self, *shape)

    def view(self, *shape: Any) -> Tensor:
        return F.view(self, *shape)

    def view_as(self, other: Tensor) -> Tensor:
        return F.view(self, other.shape)

    def reshape_as(self, other: Tensor) -> Tensor:
        return F.reshape(self, other.shape)

    def flatten(self, start_dim: _int = 0, end_dim: _int = -1) -> Tensor:
        return F.flatten(self, start_dim, end_dim)

    def unflatten(self, dim: _int, sizes: Any) -> Tensor:
        return F.unflatten(self, dim, sizes)

    def squeeze(self, dim: Any = None) -> Tensor:
        return F.squeeze(self, dim)

    def unsqueeze(self, dim: _int) -> Tensor:
        return F.unsqueeze(self, dim)

    def expand(self, *sizes: Any) -> Tensor:
        return F.expand(self, *sizes)

    def expand_as(self, other: Tensor) -> Tensor:
        return F.expand(self, other.shape)

    def broadcast_to(self, shape: Any) -> Tensor:
        return F.expand(self, shape)

    def transpose(self, dim0: _int, dim1: _int) -> Tensor:
        return F.transpose(self, dim0, dim1)

    def swapaxes(self, dim0: _int, dim1: _int) -> Tensor:
        return F.transpose(self, dim0, dim1)

    def permute(self, *dims: Any) -> Tensor:
        return F.permute(self, dims)

    def t(self) -> Tensor:
        return F.t(self)

    def movedim(self, source: Any, destination: Any) -> Tensor:
        return F.movedim(self, source, destination)

    def moveaxis(self, source: Any, destination: Any) -> Tensor:
        return F.movedim(self, source, destination)

    def select(self, dim: _int, index: _int) -> Tensor:
        return F.select(self, dim, index)

    def narrow(self, dim: _int, start: _int, length: _int) -> Tensor:
        return F.narrow(self, dim, start, length)

    def split(self, split_size: Any, dim: _int = 0) -> tuple[Tensor, ...]:
        return F.split(self, split_size, dim)

    def chunk(self, chunks: _int, dim: _int = 0) -> tuple[Tensor, ...]:
        return F.chunk(self, chunks, dim)

    def unbind(self, dim: _int = 0) -> tuple[Tensor, ...]:
        return F.unbind(self, dim)

    def index_select(self, dim: _int, index: Tensor) -> Tensor:
        return F.index_select(self, dim, index, _method=True)

    def gather(self, dim: _int, index: Tensor) -> Tensor:
        return F.gather(self, dim, index, _method=True)

    def nonzero(self, *, as_tuple: _bool = False) -> Any:
        return F.nonzero(self, as_tuple=as_tuple)

    def repeat(self, *sizes: Any) -> Tensor:
        return F.repeat(self, *sizes)

    # ---- in place (delegates) ---------------------------------------------------------------
    def add_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return F.add_(self, other, alpha=alpha)

    def sub_(self, other: Any, *, alpha: Any = 1) -> Tensor:
        return F.sub_(self, other, alpha=alpha)

    def mul_(self, other: Any) -> Tensor:
        return F.mul_(self, other)

    def div_(self, other: Any, *, rounding_mode: str | None = None) -> Tensor:
        if rounding_mode is None:
            return F.div_(self, other)
        return F.rounding_inplace(self, F.div, other, rounding_mode=rounding_mode)

    def floor_divide_(self, other: Any) -> Tensor:
        return F.floor_divide_(self, other)

    def remainder_(self, other: Any) -> Tensor:
        return F.remainder_(self, other)

    def pow_(self, other: Any) -> Tensor:
        return F.pow_(self, other)

    def bitwise_and_(self, other: Any) -> Tensor:
        return F.bitwise_and_(self, other)

    def bitwise_or_(self, other: Any) -> Tensor:
        return F.bitwise_or_(self, other)

    def bitwise_xor_(self, other: Any) -> Tensor:
        return F.bitwise_xor_(self, other)

    def bitwise_not_(self) -> Tensor:
        return F.bitwise_not_(self)

    def clamp_(self, min: Any = None, max: Any = None) -> Tensor:  # noqa: A002
        return F.clamp_(self, min, max)

    clip_ = clamp_

    def relu_(self) -> Tensor:
        return F.inplace(self, F.relu)

    def sigmoid_(self) -> Tensor:
        return F.inplace(self, F.sigmoid)

    def tanh_(self) -> Tensor:
        return F.inplace(self, F.tanh)

    def exp_(self) -> Tensor:
        return F.inplace(self, F.exp)

    def neg_(self) -> Tensor:
        return F.inplace(self, F.neg)

    def sqrt_(self) -> Tensor:
        return F.inplace(self, F.sqrt)

    def zero_(self) -> Tensor:
        return F.zero_(self)

    def fill_(self, value: Any) -> Tensor:
        return F.fill_(self, value)

    def copy_(self, src: Tensor, non_blocking: _bool = False) -> Tensor:
        return F.copy_(self, src)

    def masked_fill_(self, mask: Tensor, value: Any) -> Tensor:
        return F.masked_fill_(self, mask, value)

