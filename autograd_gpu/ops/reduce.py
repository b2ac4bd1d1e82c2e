"""Reductions: sum, mean, var/std, prod, max/min (with and without dim), amax/amin, logsumexp,
vector norms. ``dims`` is always a normalised tuple; ``keepdim`` as in PyTorch."""

from __future__ import annotations

from typing import Any

from ..autograd.grad_mode import is_grad_enabled
from ..autograd.node import Node
from .complex import conj
from .util import c_order, reduce_grad


def _expand_back(node: Node, grad: Any, shape: tuple[int, ...], dims: tuple[int, ...],
                 keepdim: bool, divisor: int = 1) -> Any:
    """A reduced gradient spread back over the reduced dimensions to ``shape`` (/ divisor)."""
    return node.run(SpreadBack, grad, shape=shape, dims=dims, keepdim=keepdim, divisor=divisor)


class SpreadBack(Node):
    """The backward of sum and mean: ``grad`` copied over the reduced dims, divided by
    ``divisor``. A fresh array rather than a broadcast view: one write now, and it can become a
    leaf's ``.grad`` without another copy."""

    node_name = "ExpandBackward0"

    def __init__(self, shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool,
                 divisor: int) -> None:
        self.shape = shape
        self.dims = dims
        self.keepdim = keepdim
        self.divisor = divisor

    def forward(self, g: Any) -> Any:
        b = self.backend
        if not self.keepdim and self.dims and g.ndim:  # NOTE: a 0-d g broadcasts as it is
            g = b.reshape(g, tuple(1 if i in self.dims else s for i, s in enumerate(self.shape)))
        out = b.empty(self.shape, g.dtype)
        if self.divisor == 1:
            out[...] = g
        else:
            b.true_divide(g, self.divisor, out=out)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        g = grad.sum(self.dims, keepdim=self.keepdim) if self.dims else grad
        return (g / self.divisor if self.divisor != 1 else g,)


def _keep(out: Any, shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool) -> Any:
    """``out`` reshaped as if computed with keepdim=True (for broadcasting against the input)."""
    if keepdim or not dims:
        return out if out.ndim == len(shape) or not shape else out.reshape((1,) * len(shape))
    return out.reshape(tuple(1 if i in dims else s for i, s in enumerate(shape)))


class _Reduce(Node):
    shape: tuple[int, ...]  # the input's, set by forward

    def __init__(self, dims: tuple[int, ...], keepdim: bool, name: str | None = None) -> None:
        self.dims = dims
        self.keepdim = keepdim
        if name is not None:
            self.node_name = name

    def keep(self, t: Any) -> Any:
        """``t`` (shaped like the output) reshaped as if reduced with keepdim=True."""
        return _keep(t, self.shape, self.dims, self.keepdim)

    def unpack(self, grad: Any) -> tuple[Any, Any, Any]:
        """The saved input and output, and ``grad``, the last two with keepdim's shape."""
        x, out = self.saved_tensors
        return x, self.keep(out), self.keep(grad)


class Sum(_Reduce):
    node_name = "SumBackward1"
    raw_ok = True

    def __init__(self, dims: tuple[int, ...], keepdim: bool, name: str | None = None,
                 dtype: str | None = None) -> None:
        self.dims = dims  # NOTE: _Reduce.__init__ inline (every x.sum() makes one)
        self.keepdim = keepdim
        if name is not None:
            self.node_name = name
        self.dtype = dtype

    def forward(self, x: Any) -> Any:
        self.shape = x.shape
        b = self.backend
        out = b.sum(x, axis=self.dims, keepdims=self.keepdim, dtype=self.dtype)
        return out if out.ndim < 2 else c_order(b, out)

    def backward(self, grad: Any) -> tuple[Any]:
        return (_expand_back(self, grad, self.shape, self.dims, self.keepdim),)


class Mean(_Reduce):
    node_name = "MeanBackward1"
    raw_ok = True

    def forward(self, x: Any) -> Any:
        self.shape = x.shape
        n = 1
        for d in self.dims:
            n *= x.shape[d]
        self.count = n
        b = self.backend
        if not n:
            return b.full(_out_shape(x.shape, self.dims, self.keepdim), float("nan"), x.dtype)
        return c_order(b, b.sum(x, axis=self.dims, keepdims=self.keepdim) / x.dtype.type(n))

    def backward(self, grad: Any) -> tuple[Any]:
        return (_expand_back(self, grad, self.shape, self.dims, self.keepdim, self.count),)


def _out_shape(shape: tuple[int, ...], dims: tuple[int, ...], keepdim: bool) -> tuple[int, ...]:
    if keepdim:
        return tuple(1 if i in dims else s for i, s in enumerate(shape))
    return tuple(s for i, s in enumerate(shape) if i not in dims)


class Var(_Reduce):
    """Variance with ``correction`` (1: unbiased). ``std=True`` gives the standard deviation."""

    node_name = "VarBackward0"

    def __init__(self, dims: tuple[int, ...], keepdim: bool, correction: float, std: bool) -> None:
        super().__init__(dims, keepdim, "StdBackward0" if std else "VarBackward0")
        self.correction = correction
        self.std = std

    def forward(self, x: Any) -> Any:
        b = self.backend
        n = 1
        for d in self.dims:
            n *= x.shape[d]
        self.denom = max(n - self.correction, 0)
        mean = b.sum(x, axis=self.dims, keepdims=True) / x.dtype.type(max(n, 1))
        diff = x - mean
        var = b.sum(diff * diff, axis=self.dims, keepdims=self.keepdim) / x.dtype.type(self.denom)
        out = c_order(b, b.sqrt(var) if self.std else var)
        # NOTE: only std's backward reads the output (as PyTorch's, so that an in-place op on
        # var's output stays legal).
        self.save_for_backward(x, out if self.std else None)
        self.shape = x.shape
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        x, out = self.saved_tensors
        g = self.keep(grad)
        centered = x - x.mean(self.dims, keepdim=True)
        if self.denom == 0:  # NOTE: no degrees of freedom: the result is nan, so is the gradient
            return (g * centered * float("nan"),)
        if self.std:
            o = self.keep(out)
            # NOTE: where the std is 0 the gradient is 0, as in PyTorch (not 0 / 0).
            return ((g * centered / (o.where(o != 0, 1.0) * self.denom)).where(o != 0, 0.0),)
        return (g * centered * (2.0 / self.denom),)


class Prod(_Reduce):
    node_name = "ProdBackward1"

    def forward(self, x: Any) -> Any:
        out = c_order(self.backend, self.backend.prod(x, axis=self.dims, keepdims=self.keepdim))
        self.save_for_backward(x, out)
        self.shape = x.shape
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        x, out, g = self.unpack(grad)
        zeros = int(self.backend.sum(x._data == 0))
        if not zeros:
            return (g * conj(out / x),)
        if zeros > 1 and self.node_name == "ProdBackward0" and not is_grad_enabled():
            # NOTE: as PyTorch's prod() without a dim (outside create_graph): two zeros make
            # every gradient 0, whatever else (inf, NaN) the input holds.
            return (x.new_zeros(x.shape),)
        # NOTE: with zeros, out / x is 0/0; use the product of the other elements instead.
        return (g * conj(_prod_of_others(self, x, self.dims)),)


def _prod_of_others(node: Node, x: Any, dims: tuple[int, ...]) -> Any:
    """For each element, the product of the other elements in its reduction group, without
    dividing (exact with zeros, and differentiable: built from where/expand/prod)."""
    keep = [i for i in range(x.ndim) if i not in dims]
    perm = keep + list(dims)
    xp = x.permute(*perm) if x.ndim else x
    lead = tuple(xp.shape[:len(keep)])
    n = 1
    for d in dims:
        n *= x.shape[d]
    rows = xp.reshape(lead + (1, n)).expand(lead + (n, n))  # rows[..., i, j] = x_j
    not_eye = node.wrap(~node.backend.eye(n, n, "bool"))
    others = rows.where(not_eye, 1.0).prod(-1)  # NOTE: x_i replaced by 1 in row i
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    out = others.reshape(xp.shape)
    return out.permute(*inverse) if x.ndim else out


class MaxMin(_Reduce):
    """``max``/``min`` without a dim (MaxBackward1): ties share the gradient evenly. With
    ``amax`` names it also serves amax/amin over any dims."""

    def __init__(self, dims: tuple[int, ...], keepdim: bool, is_max: bool, name: str) -> None:
        super().__init__(dims, keepdim, name)
        self.is_max = is_max

    def forward(self, x: Any) -> Any:
        for d in sorted(self.dims):  # NOTE: functions/ check first; this is vmap's fallback
            if x.ndim and x.shape[d] == 0:
                op = self.name().split("Backward")[0].lower()
                raise IndexError(f"{op}(): Expected reduction dim {d} to have non-zero size.")
        b = self.backend
        out = c_order(b, (b.max if self.is_max else b.min)(x, axis=self.dims,
                                                           keepdims=self.keepdim))
        self.save_for_backward(x, out)
        self.shape = x.shape
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        x, out, g = self.unpack(grad)
        if self.node_name in ("AmaxBackward0", "AminBackward0"):
            # NOTE: as PyTorch's amax/amin: ties share the gradient equally; a NaN result
            # matches no element, so its group's gradient is 0 / 0 (NaN) everywhere.
            mask = (x == out).to(grad.dtype)
            return (g * mask / mask.sum(self.dims, keepdim=True),)
        # NOTE: max()/min() share it among the elements equal to the result, as PyTorch's
        # evenly_distribute_backward, where a NaN result is shared among the NaN elements.
        hit = (x == out) | (x.isnan() & out.isnan())
        return ((g / hit.sum(self.dims, keepdim=True).to(g.dtype)).where(hit, 0.0),)


class MaxMinDim(Node):
    """``max(dim)``/``min(dim)``: (values, indices); the gradient goes to the chosen index."""

    def __init__(self, dim: int, keepdim: bool, is_max: bool) -> None:
        self.dim = dim
        self.keepdim = keepdim
        self.is_max = is_max
        self.node_name = "MaxBackward0" if is_max else "MinBackward0"

    def forward(self, x: Any) -> Any:
        b = self.backend
        if x.ndim and x.shape[self.dim] == 0:
            raise IndexError(
                f"{'max' if self.is_max else 'min'}(): Expected reduction dim {self.dim} to have "
                "non-zero size."
            )
        if x.ndim:
            values, idx = b.arg_reduce(x, self.dim, self.is_max)
        else:
            values, idx = b.copy(x), b.zeros((), "int64")
        if not self.keepdim and x.ndim:
            values = b.squeeze(values, axis=self.dim)
            idx = b.squeeze(idx, axis=self.dim)
        self.idx = idx = c_order(b, idx)
        self.shape = x.shape
        return c_order(b, values), idx.astype("int64", copy=False)

    def backward(self, grad: Any, grad_idx: Any = None) -> tuple[Any]:
        from .movement import ScatterAdd

        if not self.shape:
            return (grad,)
        g = grad if self.keepdim else grad.unsqueeze(self.dim)
        idx = self.idx if self.keepdim else self.backend.expand_dims(self.idx, self.dim)
        return (ScatterAdd.apply(g, dim=self.dim, index=idx, shape=self.shape),)


class LogSumExp(_Reduce):
    node_name = "LogsumexpBackward0"

    def forward(self, x: Any) -> Any:
        out = c_order(self.backend, self.backend.logsumexp(x, self.dims, self.keepdim))
        self.save_for_backward(x, out)
        self.shape = x.shape
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        x, out, g = self.unpack(grad)
        return (g * conj((x - out).exp()),)


class Norm(_Reduce):
    """Vector p-norm over ``dims`` (LinalgVectorNormBackward0)."""

    node_name = "LinalgVectorNormBackward0"

    def __init__(self, dims: tuple[int, ...], keepdim: bool, p: float) -> None:
        super().__init__(dims, keepdim)
        self.p = p

    def forward(self, x: Any) -> Any:
        b = self.backend
        a = b.abs(x)
        p = self.p
        if p == float("inf"):
            out = b.max(a, axis=self.dims, keepdims=self.keepdim)
        elif p == -float("inf"):
            out = b.min(a, axis=self.dims, keepdims=self.keepdim)
        elif p == 0:
            out = b.sum(a != 0, axis=self.dims, keepdims=self.keepdim).astype(x.dtype)
        elif p == 1:
            out = b.sum(a, axis=self.dims, keepdims=self.keepdim)
        elif p == 2:
            out = b.sqrt(b.sum(a * a, axis=self.dims, keepdims=self.keepdim))
        else:
            out = b.power(b.sum(b.power(a, p), axis=self.dims, keepdims=self.keepdim), 1.0 / p)
        out = c_order(b, out.astype(x.dtype, copy=False))
        self.save_for_backward(x, out)
        self.shape = x.shape
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        x, o, g = self.unpack(grad)
        p = self.p
        if p == 0:
            return (None,)  # NOTE: a count of nonzeros: PyTorch defines no gradient at all
        if p == 1:
            return (x.sign() * g,)
        if p in (float("inf"), -float("inf")):
            # NOTE: ties share the gradient evenly; a nan element counts as a maximum.
            mask = ((x.abs() == o) | x.isnan()).to(g.dtype)
            return (x.sign() * (g / mask.sum(self.dims, keepdim=True) * mask),)
        # NOTE: at a zero norm (p >= 1) or a zero element (p < 1) the division or power below is
        # 0/0 or inf; the gradient there is masked to 0, as in PyTorch. The masked quotient is
        # still built from the raw one, so its own derivative (a second derivative of the norm)
        # is nan at those points, exactly as PyTorch's: the Hessian of |x| is infinite at 0.
        if p == 2:
            return (Norm2Grad.apply(g, x, o),)
        nonzero = o != 0
        if p < 1:
            scaled = x.sign() * x.abs().pow(p - 1).where(x != 0, 0.0)
            return (scaled * g * o.pow(1 - p),)
        scaled = x.sign() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
        return (scaled * (g / o.pow(p - 1)).where(nonzero, 0.0),)


class Norm2Grad(Node):
    """The 2-norm's gradient ``grad * x / norm``, 0 where the norm is 0 (``grad`` and ``norm``
    keep-shaped), as one node: one pass over ``x``, the zero mask applied in the reduced shape.

    Its backward is the derivative of PyTorch's formula ``grad * (x / norm).masked_fill_(norm ==
    0, 0)``, so second-order gradients equal PyTorch's, nan included: at a zero norm the
    derivative w.r.t. ``x`` and ``norm`` is 0/0 (the Hessian of a norm is infinite at 0), w.r.t.
    ``grad`` it is 0.
    """

    node_name = "MulBackward0"  # the last op of PyTorch's formula

    def forward(self, g: Any, x: Any, o: Any) -> Any:
        b = self.backend
        nonzero = o != 0
        inv = b.where(nonzero, 1 / b.where(nonzero, o, 1), 0).astype(o.dtype, copy=False)
        self.save_for_backward(g, x, o)
        return x * (g * inv)

    def backward(self, grad: Any) -> tuple[Any, Any, Any]:
        g, x, o = self.saved_tensors
        need = self.needs_input_grad
        nonzero = o != 0
        inv = 1 / o.where(nonzero, 1.0)
        inv_nan = inv.where(nonzero, float("nan"))  # NOTE: 0/0 at a zero norm, as PyTorch's
        gx_sum = reduce_grad(grad * x, tuple(o.shape)) if need[0] or need[2] else None
        return (gx_sum * inv.where(nonzero, 0.0) if need[0] else None,
                grad * (g * inv_nan) if need[1] else None,
                -(g * gx_sum) * (inv_nan * inv_nan) if need[2] else None)
