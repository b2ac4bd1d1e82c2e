"""Scans along one dimension: cumsum, cumprod, cummax/cummin, logcumsumexp. Forward on
backend arrays (``backends/scan.py``), backward with tensor ops (so double backward works): a
reversed scan of the same kind, or a scatter to the chosen indices."""

from __future__ import annotations

from typing import Any

from ..autograd.grad_mode import is_grad_enabled
from ..autograd.node import Node
from .complex import conj


class Cumsum(Node):
    """``cumsum`` along ``dim`` in ``dtype`` (None: the input's); ``reverse``: from the end.
    The gradient of a scan is the reversed scan of the gradient."""

    node_name = "CumsumBackward0"
    raw_ok = True

    def __init__(self, dim: int, dtype: Any = None, reverse: bool = False) -> None:
        self.dim = dim
        self.dtype = dtype
        self.reverse = reverse

    def forward(self, x: Any) -> Any:
        self.cast = _cast_back(x, self.dtype)
        return self.backend.cumsum_along(x, self.dim, self.dtype, self.reverse)

    def backward(self, grad: Any) -> tuple[Any]:
        g = self.run(Cumsum, grad, dim=self.dim, reverse=not self.reverse)
        return (_to(self, g, self.cast),)


def _cast_back(x: Any, dtype: str | None) -> str | None:
    """The input's dtype name when the op computes in another ``dtype`` (its gradient is cast
    back), else None."""
    return x.dtype.name if dtype is not None and x.dtype.name != dtype else None


def _to(node: Node, g: Any, name: str | None) -> Any:
    """``g`` (a Tensor, or an array on the raw path) cast to dtype ``name`` (None: as it is)."""
    if name is None:
        return g
    if node._raw:
        return g.astype(name)
    from .. import dtypes

    return g.to(getattr(dtypes, name))


class Cumprod(Node):
    """``cumprod`` along ``dim`` in ``dtype``. The gradient is ``reversed_cumsum(grad * out) /
    x`` where no element is 0; with zeros, PyTorch's exact formula (O(n) on arrays, or, when
    the gradient itself is differentiated, the product of the other elements, O(n^2))."""

    node_name = "CumprodBackward0"

    def __init__(self, dim: int, dtype: Any = None) -> None:
        self.dim = dim
        self.dtype = dtype

    def forward(self, x: Any) -> Any:
        self.cast = _cast_back(x, self.dtype)
        if self.dtype is not None:
            x = x.astype(self.dtype, copy=False)
        out = self.backend.cumprod_along(x, self.dim)
        self.save_for_backward(x, out)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        x, out = map(conj, self.saved_tensors)  # NOTE: complex: grad * conj(d out / d x)
        if x.ndim == 0 or x.shape[self.dim] <= 1:
            return (_to(self, grad, self.cast),)
        b = self.backend
        if not bool(b.any(x._data == 0)):
            g = Cumsum.apply(grad * out, dim=self.dim, reverse=True) / x
        elif not is_grad_enabled():
            g = self.wrap(b.cumprod_grad_zeros(x._data, out._data, grad._data, self.dim))
        else:
            g = _cumprod_grad_graph(self, x, grad, self.dim)
        return (_to(self, g, self.cast),)


def _cumprod_grad_graph(node: Node, x: Any, grad: Any, dim: int) -> Any:
    """``grad_k = sum_{j >= k} grad_j * prod_{i <= j, i != k} x_i`` built from differentiable
    ops (for double backward through zeros): row ``k`` of an (n, n) matrix holds ``x`` with
    ``x_k`` replaced by 1, its cumulative products give every ``prod_{i <= j, i != k}``."""
    xt = x.transpose(dim, -1)
    gt = grad.transpose(dim, -1)
    n = xt.shape[-1]
    lead = tuple(xt.shape[:-1])
    b = node.backend
    not_eye = node.wrap(~b.eye(n, n, "bool"))
    rows = xt.unsqueeze(-2).expand(lead + (n, n)).where(not_eye, 1.0)
    prods = Cumprod.apply(rows, dim=len(lead) + 1)
    upper = node.wrap(b.xp.triu(b.ones((n, n), "bool")))  # upper[k, j]: j >= k
    g = (prods * gt.unsqueeze(-2)).where(upper, 0.0).sum(-1)
    return g.transpose(dim, -1)


class CumMaxMin(Node):
    """``cummax``/``cummin`` along ``dim``: (values, indices); the gradient adds up at the
    indices (an element can be the running max of many positions)."""

    def __init__(self, dim: int, is_max: bool) -> None:
        self.dim = dim
        self.node_name = "CummaxBackward0" if is_max else "CumminBackward0"
        self.is_max = is_max

    def forward(self, x: Any) -> Any:
        values, idx = self.backend.cummaxmin(x, self.dim, self.is_max)
        self.idx = idx
        self.shape = x.shape
        return values, idx

    def backward(self, grad: Any, grad_idx: Any = None) -> tuple[Any]:
        from .movement import ScatterAdd

        if not self.shape:
            return (grad,)
        return (ScatterAdd.apply(grad, dim=self.dim, index=self.idx, shape=self.shape),)


_LOWEST = {"float16": -65504.0, "float32": -3.4028234663852886e38,
           "float64": -1.7976931348623157e308}


class LogCumSumExp(Node):
    """``logcumsumexp`` along ``dim`` (``reverse``: from the end). Backward is PyTorch's stable
    formula: the positive and negative parts of the gradient go through reversed
    log-cum-sum-exps in log space, then ``exp(... + x)``."""

    node_name = "LogcumsumexpBackward0"

    def __init__(self, dim: int, reverse: bool = False) -> None:
        self.dim = dim
        self.reverse = reverse

    def forward(self, x: Any) -> Any:
        out = self.backend.logcumsumexp(x, self.dim, self.reverse)
        self.save_for_backward(x, out)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        x, out = self.saved_tensors
        if grad.ndim == 0 or grad.numel() == 0:
            return (grad,)
        # NOTE: log|grad| where grad has the sign, the lowest finite number elsewhere (exp of it
        # minus anything is 0, never NaN as -inf - -inf would be).
        lowest = _LOWEST[grad.dtype.name]
        log_abs = grad.abs().log()
        pos = log_abs.where(grad > 0, lowest)
        neg = log_abs.where(grad < 0, lowest)
        back = not self.reverse
        out_pos = (LogCumSumExp.apply(pos - out, dim=self.dim, reverse=back) + x).exp()
        out_neg = (LogCumSumExp.apply(neg - out, dim=self.dim, reverse=back) + x).exp()
        return (out_pos - out_neg,)
