"""Covariance, correlation and distances: ``cov``, ``corrcoef``, ``dist``, ``cdist``, ``renorm``
(exported through ``stats``). ``cov`` and ``corrcoef`` are composites, as PyTorch's; the rest
are one node each (``ops/stats.py``), ``cdist``'s matrix-product path a composite again."""

from __future__ import annotations

import warnings
from typing import Any

from .. import dtypes
from ..autograd.node import user_stacklevel
from ..ops import products as P
from ..ops import stats as S
from ..ops.util import normalize_dim
from ..tensor import Tensor
from .arith import _broadcast_error, _type_name
from .linalg import _tensors
from .out import write_out
from .shape import _broadcast_shapes

_COV_DOF = ("cov(): degrees of freedom is <= 0. Correction should be strictly less than the "
            "number of observations.")


def cov(input: Tensor, *, correction: int = 1, fweights: Tensor | None = None,  # noqa: A002
        aweights: Tensor | None = None) -> Tensor:
    """Covariance matrix of the variables in the rows of ``input`` (observations in columns; a
    1-d input is one variable), as PyTorch's composite (SqueezeBackward0).

    ``fweights`` (integer counts) and ``aweights`` (float importances) weight the observations;
    the normalisation is ``sum(w) - correction`` (with aweights ``sum(w) - correction *
    sum(w * aweights) / sum(w)``); at or below 0 it is 0, with PyTorch's warning.

    Example:
        >>> cov(tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.0]]))
        tensor([[ 1., -1.],
                [-1.,  1.]])
    """
    from ..creation import tensor
    from .linalg import mm

    _tensors("cov", False, ("input", input))
    for name, w in (("fweights", fweights), ("aweights", aweights)):
        if w is not None and not isinstance(w, Tensor):
            raise TypeError(f"cov(): argument '{name}' must be Tensor, not {type(w).__name__}")
    if input.ndim > 2:
        raise RuntimeError("cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input.dtype is dtypes.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    if not isinstance(correction, int) or isinstance(correction, bool):
        raise TypeError(f"cov(): argument 'correction' must be int, not "
                        f"{type(correction).__name__}")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        w = fweights
        _check_weights("fweights", w, n, w.dtype.category == 1, "integral")
    if aweights is not None:
        _check_weights("aweights", aweights, n, aweights.dtype.is_floating_point,
                       "floating point")
        w = aweights if w is None else w * aweights
    w_sum = w.sum() if w is not None else tensor(n, dtype=dtypes.int64, device=x._device)
    if w is not None and not bool(w_sum.ne(0)):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and aweights is not None and correction != 0:
        norm = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm = w_sum - correction
    if bool(norm.le(0)):
        warnings.warn(_COV_DOF, UserWarning, stacklevel=user_stacklevel())
        norm = norm.detach() * 0  # NOTE: PyTorch's zero_(): no gradient through it
    x = x - avg.unsqueeze(1)
    c = mm(x, (x * w if w is not None else x).t())
    return (c / norm).squeeze()


def _check_weights(name: str, w: Any, n: int, dtype_ok: bool, kind: str) -> None:
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    if not dtype_ok:
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{_type_name(w.dtype)} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if n and not bool(w.detach().min() >= 0):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def corrcoef(input: Tensor) -> Tensor:  # noqa: A002
    """Pearson correlation coefficients of the rows of ``input``: ``cov`` over the outer
    product of the standard deviations, clipped to ``[-1, 1]`` (ClampBackward1); one variable
    gives ``c / c`` (1, or nan for a constant or degenerate one).

    Example:
        >>> corrcoef(tensor([[0.0, 1.0, 2.0], [2.0, 1.0, 0.5]]))
        tensor([[ 1.0000, -0.9820],
                [-0.9820,  1.0000]])
    """
    from .unary import clamp

    _tensors("corrcoef", False, ("input", input))
    if input.ndim > 2:
        raise RuntimeError("corrcoef(): expected input to have two or fewer dimensions but got "
                           f"an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = P.Diagonal.apply(c, dim1=0, dim2=1).sqrt()
    c = c / std.reshape(-1, 1)
    c = c / std.reshape(1, -1)
    return clamp(c, -1, 1)


def dist(input: Tensor, other: Tensor, p: Any = 2, *,  # noqa: A002
         _method: bool = False) -> Tensor:
    """The p-norm of ``input - other`` (broadcast), over all elements (DistBackward0).

    Example:
        >>> dist(tensor([0.0, 0.0]), tensor([3.0, 4.0]))
        tensor(5.)
    """
    from .arith import _promote

    _tensors("dist", _method, ("input", input), ("other", other))
    if isinstance(p, Tensor):
        p = p.item()
    a, b = _promote(input, other)
    if a.dtype.is_complex:  # NOTE: the norm of the difference's magnitudes
        from .decomp_norms import vector_norm

        return vector_norm(a - b, p)
    if not a.dtype.is_floating_point:
        raise RuntimeError("norm(): input dtype should be either floating point or complex. "
                           f"Got {_type_name(a.dtype)} instead.")
    try:
        _broadcast_shapes(a.shape, b.shape)
    except RuntimeError:
        raise _broadcast_error(a, b) from None
    return S.Dist.apply(a, b, p=float(p))  # type: ignore[no-any-return]


_MODES = {None: 0, "use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
          "donot_use_mm_for_euclid_dist": 2}


def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: str | None = None) -> Tensor:
    """The p-distances between the rows of ``x1`` (..., P, M) and ``x2`` (..., R, M), batch
    dims broadcast: a (..., P, R) tensor (CdistBackward0).

    With p = 2, ``compute_mode`` ``'use_mm_for_euclid_dist'`` (or the default when P or R
    exceeds 25) computes ``sqrt(|a|^2 - 2 a.b + |b|^2)`` through one matrix product, as PyTorch
    does (faster, less exact; clamped at 1e-30 before the root).

    Example:
        >>> cdist(tensor([[0.0, 0.0]]), tensor([[3.0, 4.0], [1.0, 0.0]]))
        tensor([[5., 1.]])
    """
    _tensors("cdist", False, ("x1", x1), ("x2", x2))
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    mode = _MODES[compute_mode]
    for name, t in (("X1", x1), ("X2", x2)):
        if t.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {t.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError("X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.dtype.is_floating_point:
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{_type_name(t.dtype)}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {_type_name(x1.dtype)} but found "
                           f"{_type_name(x2.dtype)}")
    if x1.dtype is dtypes.float16:
        raise NotImplementedError("\"cdist\" not implemented for 'Half'")
    batch = _broadcast_shapes(x1.shape[:-2], x2.shape[:-2])
    r1, r2, m = x1.shape[-2], x2.shape[-2], x1.shape[-1]
    a = x1.expand(batch + (r1, m)) if x1.shape[:-2] != batch else x1
    b = x2.expand(batch + (r2, m)) if x2.shape[:-2] != batch else x2
    if p == 2 and m and r1 and r2 and (mode == 1 or (mode == 0 and (r1 > 25 or r2 > 25))):
        return _euclidean(a, b)
    return S.Cdist.apply(a, b, p=float(p))  # type: ignore[no-any-return]


def pdist(input: Tensor, p: float = 2) -> Tensor:  # noqa: A002
    """The p-distances between every pair of rows ``i < j`` of ``input`` (N, M): a 1-D tensor
    of N (N - 1) / 2 distances, in the order of ``triu_indices(N, N, 1)`` (PdistBackward0;
    p = 0 counts differing columns, inf takes the largest difference). Its gradient is 0 for a
    pair at distance 0; as in PyTorch, it has no double backward.

    Example:
        >>> pdist(tensor([[0.0, 0.0], [3.0, 4.0], [0.0, 1.0]]))
        tensor([5.0000, 1.0000, 4.2426])
    """
    _tensors("pdist", False, ("input", input))
    if isinstance(p, bool) or not isinstance(p, (int, float)):
        raise TypeError(f"pdist(): argument 'p' must be float, not {type(p).__name__}")
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    return S.Pdist.apply(input, p=float(p))  # type: ignore[no-any-return]


def _euclidean(x1: Tensor, x2: Tensor) -> Tensor:
    """PyTorch's matrix-product Euclidean distances (``_euclidean_dist``): rows ``[-2 a, |a|^2,
    1]`` times ``[b, 1, |b|^2]``, clamped at 1e-30, square-rooted."""
    from .shape import cat
    from .unary import clamp

    n1 = x1.pow(2).sum(-1, keepdim=True)
    n2 = x2.pow(2).sum(-1, keepdim=True)
    a = cat([x1 * -2, n1, n1.new_ones(n1.shape)], -1)
    b = cat([x2, n2.new_ones(n2.shape), n2], -1)
    return clamp(a.matmul(b.mT), min=1e-30).sqrt()


def renorm(input: Tensor, p: Any, dim: int, maxnorm: Any, *,  # noqa: A002
           out: Tensor | None = None) -> Tensor:
    """Each slice ``input.select(dim, i)`` whose p-norm exceeds ``maxnorm`` scaled down to norm
    ``maxnorm`` (by ``maxnorm / (norm + 1e-7)``); the others unchanged (RenormBackward0).

    Example:
        >>> renorm(tensor([[3.0, 4.0], [0.3, 0.4]]), 2, 0, 1.0)
        tensor([[0.6000, 0.8000],
                [0.3000, 0.4000]])
    """
    _tensors("renorm", False, ("input", input))
    p, maxnorm = (v.item() if isinstance(v, Tensor) and not v.ndim else v for v in (p, maxnorm))
    for name, position, value in (("p", 2, p), ("maxnorm", 4, maxnorm)):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise TypeError(f"renorm(): argument '{name}' (position {position}) must be Number, "
                            f"not {type(value).__name__}")
    if float(p) <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if float(maxnorm) < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    if input.ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           "dimensions")
    d = normalize_dim(dim, input.ndim)
    if not input.dtype.is_floating_point:
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_type_name(input.dtype)}")
    result = S.Renorm.apply(input, p=float(p), dim=d, maxnorm=float(maxnorm))
    return result if out is None else write_out("renorm", result, out, inputs=(input,),
                                                exact=(True,))


def renorm_(input: Tensor, p: Any, dim: int, maxnorm: Any) -> Tensor:  # noqa: A002
    """In-place ``renorm``."""
    from .inplace_ops import inplace

    return inplace(input, renorm, p, dim, maxnorm)
