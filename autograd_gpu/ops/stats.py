"""Statistics ops: ``var_mean``/``std_mean`` (two outputs, one node), ``nansum``, ``aminmax``,
``lerp`` for quantiles, ``dist``, ``cdist`` and ``renorm``. Forward on backend arrays, backward
with tensor ops (so double backward works); ``norm_grad`` is the p-norm's derivative, shared."""

from __future__ import annotations

import math
from typing import Any

from ..autograd.node import Node
from .reduce import _expand_back, _keep
from .util import c_order, reduce_grad

_INF = float("inf")


class VarMean(Node):
    """``(var, mean)`` or ``(std, mean)`` over ``dims`` with ``correction`` (VarMeanBackward0,
    StdMeanBackward0): var's backward (as ``Var``'s) plus mean's, each only for an output that
    got a gradient. NOTE: not a ``Var``: vmap's rule for reductions returns one output."""

    def __init__(self, dims: tuple[int, ...], keepdim: bool, correction: float, std: bool) -> None:
        self.dims = dims
        self.keepdim = keepdim
        self.correction = correction
        self.std = std
        self.node_name = "StdMeanBackward0" if std else "VarMeanBackward0"

    def forward(self, x: Any) -> Any:
        b = self.backend
        n = 1
        for d in self.dims:
            n *= x.shape[d]
        self.count = n
        self.shape = x.shape
        self.denom = max(n - self.correction, 0)
        xf = x.astype("float32") if x.dtype == "float16" else x  # NOTE: as PyTorch's, in float32
        dt = xf.dtype.type
        total = b.sum(xf, axis=self.dims, keepdims=True)
        diff = xf - total / dt(max(n, 1))
        var = b.sum(diff * diff, axis=self.dims, keepdims=self.keepdim) / dt(self.denom)
        var = (b.sqrt(var) if self.std else var).astype(x.dtype, copy=False)
        # NOTE: 0 / 0 is nan: the mean of nothing, as PyTorch's
        mean = b.reshape(total / dt(n), var.shape).astype(x.dtype, copy=False)
        var = c_order(b, var)
        # NOTE: only std's backward reads the output, as Var's
        self.save_for_backward(x, var if self.std else None)
        return var, c_order(b, mean)

    def backward(self, grad_var: Any, grad_mean: Any = None) -> tuple[Any]:
        x, out = self.saved_tensors
        gx = None
        if grad_var is not None:
            g = _keep(grad_var, self.shape, self.dims, self.keepdim)
            centered = x - x.mean(self.dims, keepdim=True)
            if self.denom == 0:  # NOTE: no degrees of freedom: the result is nan, so is this
                gx = g * centered * float("nan")
            elif self.std:
                o = _keep(out, self.shape, self.dims, self.keepdim)
                # NOTE: where the std is 0 the gradient is 0, as in PyTorch (not 0 / 0)
                gx = (g * centered / (o.where(o != 0, 1.0) * self.denom)).where(o != 0, 0.0)
            else:
                gx = g * centered * (2.0 / self.denom)
        if grad_mean is not None:
            gm = _expand_back(self, grad_mean, self.shape, self.dims, self.keepdim, self.count)
            gx = gm if gx is None else gx + gm
        return (gx,)


class Nansum(Node):
    """Sum over ``dims`` with NaN counted as 0 (NansumBackward0): the gradient is 0 at NaN."""

    node_name = "NansumBackward0"

    def __init__(self, dims: tuple[int, ...], keepdim: bool) -> None:
        self.dims = dims
        self.keepdim = keepdim

    def forward(self, x: Any) -> Any:
        b = self.backend
        self.shape = x.shape
        self.save_for_backward(x)
        clean = b.where(b.isnan(x), 0, x).astype(x.dtype, copy=False)
        return c_order(b, b.sum(clean, axis=self.dims, keepdims=self.keepdim))

    def backward(self, grad: Any) -> tuple[Any]:
        (x,) = self.saved_tensors
        g = _keep(grad, self.shape, self.dims, self.keepdim)
        # NOTE: PyTorch multiplies by the mask, so an inf gradient gives nan at NaN inputs.
        return (g * (~x.isnan()).to(g.dtype),)


class Aminmax(Node):
    """``(min, max)`` over ``dims`` (AminmaxBackward0): as amin/amax, ties share a gradient
    evenly, and a NaN result matches no element, so its group's gradient is 0 / 0 (nan)."""

    node_name = "AminmaxBackward0"

    def __init__(self, dims: tuple[int, ...], keepdim: bool) -> None:
        self.dims = dims
        self.keepdim = keepdim

    def forward(self, x: Any) -> Any:
        b = self.backend
        lo = c_order(b, b.min(x, axis=self.dims, keepdims=self.keepdim))
        hi = c_order(b, b.max(x, axis=self.dims, keepdims=self.keepdim))
        self.shape = x.shape
        self.save_for_backward(x, lo, hi)
        return lo, hi

    def backward(self, grad_min: Any, grad_max: Any = None) -> tuple[Any]:
        x, lo, hi = self.saved_tensors
        gx = None
        for g, out in ((grad_min, lo), (grad_max, hi)):
            if g is None:
                continue
            mask = (x == _keep(out, self.shape, self.dims, self.keepdim)).to(g.dtype)
            part = _keep(g, self.shape, self.dims, self.keepdim) * mask / \
                mask.sum(self.dims, keepdim=True)
            gx = part if gx is None else gx + part
        return (gx,)


class Lerp(Node):
    """``a + w * (b - a)``, computed as PyTorch's lerp: from ``b`` where ``|w| >= 0.5``, for
    accuracy near ``b`` (the quantiles' interpolation; LerpBackward1)."""

    node_name = "LerpBackward1"

    def forward(self, a: Any, b_: Any, w: Any) -> Any:
        b = self.backend
        diff = b_ - a
        need = self.needs_input_grad
        self.save_for_backward(w, a if need and need[2] else None, b_ if need and need[2] else None)
        return b.where(b.abs(w) < 0.5, a + w * diff, b_ - diff * (1 - w)).astype(a.dtype, copy=False)

    def backward(self, grad: Any) -> tuple[Any, Any, Any]:
        w, a, b_ = self.saved_tensors
        need = self.needs_input_grad
        return (grad * (1 - w) if need[0] else None, grad * w if need[1] else None,
                grad * (b_ - a) if need[2] else None)


def norm_grad(x: Any, norm: Any, grad: Any, p: float, dims: tuple[int, ...] | None) -> Any:
    """The gradient of ``vector_norm(x, p, dims, keepdim=True)`` (``norm``, with ``grad``, both
    keep-shaped) with respect to ``x``, as PyTorch's norm_backward: 0 where the norm is 0
    (p >= 1) or at zero elements (p < 1); ties of the inf-norm share the gradient evenly
    (nan elements count as maxima). ``dims`` None: all dimensions."""
    if p == 0:
        return x * 0.0
    if p == 1:
        return x.sign() * grad
    if p == 2:
        return x * (grad / norm).where(norm != 0, 0.0)
    if math.isinf(p):
        a = x.abs()
        mask = ((a == norm) | a.isnan()).to(x.dtype)
        count = mask.sum(dims, keepdim=True) if dims is not None else mask.sum()
        return x.sign() * (grad / count * mask)
    if p < 1:
        return x.sign() * x.abs().pow(p - 1).where(x != 0, 0.0) * grad * norm.pow(1 - p)
    scaled = x.sign() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
    return scaled * (grad / norm.pow(p - 1)).where(norm != 0, 0.0)


def vector_norm(b: Any, x: Any, p: float, axis: Any, keepdims: bool) -> Any:
    """The p-norm of array ``x`` over ``axis`` (None: all), in ``x``'s dtype."""
    a = b.abs(x)
    if p == _INF:
        out = b.max(a, axis=axis, keepdims=keepdims) if a.size else b.sum(a, axis, keepdims)
    elif p == -_INF:
        out = b.min(a, axis=axis, keepdims=keepdims)
    elif p == 0:
        out = b.sum(a != 0, axis=axis, keepdims=keepdims).astype(x.dtype)
    elif p == 1:
        out = b.sum(a, axis=axis, keepdims=keepdims)
    elif p == 2:
        out = b.sqrt(b.sum(a * a, axis=axis, keepdims=keepdims))
    else:
        out = b.power(b.sum(b.power(a, p), axis=axis, keepdims=keepdims), 1.0 / p)
    return b.asarray(out).astype(x.dtype, copy=False)


class Dist(Node):
    """``vector_norm(x - y, p)`` over all elements, broadcasting (DistBackward0)."""

    node_name = "DistBackward0"

    def __init__(self, p: float) -> None:
        self.p = p

    def forward(self, x: Any, y: Any) -> Any:
        b = self.backend
        self.shapes = (x.shape, y.shape)
        out = vector_norm(b, b.subtract(x, y), self.p, None, False)
        self.save_for_backward(x, y, out)
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x, y, out = self.saved_tensors
        g = norm_grad(x - y, out, grad, self.p, None)
        need = self.needs_input_grad
        return (reduce_grad(g, self.shapes[0]) if need[0] else None,
                reduce_grad(-g, self.shapes[1]) if need[1] else None)


class Cdist(Node):
    """Pairwise p-distances of the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M), batch dims
    already broadcast and equal (CdistBackward0). Computed a block of rows at a time; backward
    too when no graph is recorded (the raw path), else as one tensor formula (double backward,
    which PyTorch lacks)."""

    node_name = "CdistBackward0"
    raw_ok = True

    def __init__(self, p: float) -> None:
        self.p = p

    def forward(self, x1: Any, x2: Any) -> Any:
        b = self.backend
        if x1.shape[-1] and x1.size and x2.size:
            out = b.cdist_forward(x1, x2, self.p)
        else:
            out = b.zeros(x1.shape[:-1] + (x2.shape[-2],), x1.dtype)
        self.save_for_backward(x1, x2, out)
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        x1, x2, out = self.saved_tensors
        need = self.needs_input_grad
        if self._raw:  # bare arrays: blocks of rows, no (P, R, M) temporary
            g1, g2 = self.backend.cdist_backward(grad, x1, x2, out, self.p)
            return (g1 if need[0] else None, g2 if need[1] else None)
        diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
        g = _pair_grad(diff, out.unsqueeze(-1), grad.unsqueeze(-1), self.p)
        return (g.sum(-2) if need[0] else None, -g.sum(-3) if need[1] else None)


class Pdist(Node):
    """PdistBackward0: the p-distances of the pairs ``i < j`` of rows of ``x`` (N, M), in the
    order of ``triu_indices(N, N, 1)``. As in PyTorch, its backward (``_pdist_backward``) has
    no derivative: a gradient computed with ``create_graph`` refuses to be differentiated."""

    node_name = "PdistBackward0"
    raw_ok = True

    def __init__(self, p: float) -> None:
        self.p = p

    def forward(self, x: Any) -> Any:
        b = self.backend
        n = x.shape[0]
        if n > 1 and x.shape[1]:
            out = b.pdist_forward(x, self.p)
        else:
            out = b.zeros((n * (n - 1) // 2,), x.dtype)
        self.save_for_backward(x, out)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        x, out = self.saved_tensors
        p = self.p

        def fn(b: Any, g: Any, xa: Any, d: Any) -> Any:
            if not g.size or not xa.shape[1]:
                return b.zeros(xa.shape, xa.dtype)
            return b.pdist_backward(g, xa, d, p)

        if self._raw:
            return (fn(self.backend, grad, x, out),)
        from .sort import NoDerivative  # late: a sibling family

        return (NoDerivative.apply(grad, x, out, fn=fn, name="torch::autograd::NotImplemented",
                                   error=NotImplementedError,
                                   message="the derivative for '_pdist_backward' is not "
                                           "implemented."),)


def _pair_grad(diff: Any, dist: Any, grad: Any, p: float) -> Any:
    """d dist / d diff times ``grad`` for every pair, as PyTorch's cdist backward kernels: 0
    where the distance is 0 (and, for p < 1, where the difference is 0); the inf-norm's ties
    each get the whole gradient."""
    if p == 0:
        return diff * 0.0
    if p == 1:
        return grad * diff.sign()
    if math.isinf(p):
        return (grad * diff.sign()).where(diff.abs() == dist, 0.0)
    zero = dist == 0
    if p < 2:
        keep = ~zero if p >= 1 else ~zero & (diff != 0)
        d = dist.where(~zero, 1.0)
        return (diff.sign() * diff.abs().pow(p - 1) * grad / d.pow(p - 1)).where(keep, 0.0)
    d = dist.where(~zero, 1.0)
    if p == 2:
        return (grad * diff / d).where(~zero, 0.0)
    return (diff * diff.abs().pow(p - 2) * grad / d.pow(p - 1)).where(~zero, 0.0)


class Renorm(Node):
    """Each slice along ``dim`` whose p-norm exceeds ``maxnorm`` scaled to norm ``maxnorm``
    (factor ``maxnorm / (norm + 1e-7)``), as PyTorch's renorm (RenormBackward0)."""

    node_name = "RenormBackward0"

    def __init__(self, p: float, dim: int, maxnorm: float) -> None:
        self.p = p
        self.dim = dim
        self.maxnorm = maxnorm

    def forward(self, x: Any) -> Any:
        b = self.backend
        self.dims = tuple(d for d in range(x.ndim) if d != self.dim)
        half = x.dtype == "float16"
        norm = vector_norm(b, x.astype("float32") if half else x, self.p, self.dims, True)
        factor = b.where(norm > self.maxnorm, self.maxnorm / (norm + 1e-7), 1.0)
        self.save_for_backward(x)
        return (x * factor.astype(x.dtype, copy=False)).astype(x.dtype, copy=False)

    def backward(self, grad: Any) -> tuple[Any]:
        (x,) = self.saved_tensors
        # NOTE: PyTorch's renorm_backward: the derivative of x * maxnorm / (norm + 1e-7) where
        # the norm exceeds maxnorm, else grad itself.
        norm = x.norm(self.p, self.dims, keepdim=True)
        nb = norm_grad(x, norm, (x * grad).sum(self.dims, keepdim=True), self.p, self.dims)
        inv = 1 / (norm + 1e-7)
        return ((inv * self.maxnorm * (grad - inv * nb)).where(norm > self.maxnorm, grad),)
