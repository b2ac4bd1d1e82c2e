"""Our CUDA normalisation kernels' launchers (``kernels/norm.cu``): layer norm, RMS norm and
group norm, forward and backward, one row-wise kernel each way plus a column kernel for the
weight and bias gradients.

The forward launchers return the output and the statistics the unfused ops save (``mean`` and
``rstd = 1 / sqrt(var + eps)``, biased variance): shaped ``(*outer, 1, ...)`` for layer/RMS norm
(the normalised dims kept as 1) and ``(N, groups, 1)`` for group norm, as ``ops/norm_ops.py``
and ``ops/nn_norm.py`` keep them; of ``x``'s dtype for layer and group norm (that contract), of
the accumulation dtype (float32 for float16) for RMS norm, whose node keeps them to itself. The
backward launchers take either. Outputs are C-contiguous (as PyTorch's
CUDA layer norm); non-contiguous inputs are copied first. float16 is computed and accumulated in
float32; the weight and bias must have ``x``'s dtype (the backend falls back otherwise).
Loading, dtype checks and the launch helpers are ``cuda_kernels``'.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .cuda_kernels import _ACC, _common_dtype, _cupy, _launch, _launch_groups, _sm_count
from .cuda_reduce import _group_for, _split
from .cuda_reduce import reduce as _reduce


def _flat(a: Any) -> Any:
    return None if a is None else _cupy().ascontiguousarray(a).reshape(-1)


def _forward(x: Any, w: Any, b: Any, rows: int, length: int, groups: int, spatial: int,
             eps: float, rms: bool) -> tuple[Any, Any, Any]:
    """(y of x's shape, mean (rows,) or None for rms, rstd (rows,)); the statistics in the
    accumulation dtype."""
    cp = _cupy()
    dtype = _common_dtype(x, w, b)
    y = cp.empty(x.shape, dtype)
    mean = None if rms else cp.empty(rows, _ACC[dtype])
    rstd = cp.empty(rows, _ACC[dtype])
    if rows == 0:
        return y, mean, rstd
    if length == 0:  # the mean and variance of no elements: NaN, as the unfused path
        rstd.fill(math.nan)
        if mean is not None:
            mean.fill(math.nan)
        return y, mean, rstd
    _launch_groups("norm_forward", dtype, rows, _group_for(length),
                   (_flat(x), _flat(w), _flat(b), y, mean, rstd, np.int64(rows),
                    np.int64(length), np.int64(groups), np.int64(spatial), np.float64(eps),
                    np.int32(rms)))
    return y, mean, rstd


def _backward(grad: Any, x: Any, w: Any, mean: Any, rstd: Any, outer: int, params: int,
              spatial: int, groups: int, rms: bool,
              needs: tuple[bool, bool, bool]) -> tuple[Any, Any, Any]:
    """(dx of x's shape, dw (params,), db (params,)); None where ``needs`` says so (dw also
    without a weight)."""
    cp = _cupy()
    dtype = _common_dtype(x, grad, w)
    if grad.shape != x.shape:
        raise ValueError(f"grad shape {grad.shape} != input shape {x.shape} in norm backward")
    rows, length = outer * groups, x.size // max(outer * groups, 1)
    acc = _ACC[dtype]
    xf, gf = _flat(x), _flat(grad)
    mf, rf = (None if s is None else _flat(s.astype(acc, copy=False)) for s in (mean, rstd))
    dx = dw = db = None
    if needs[0]:
        dx = cp.empty(x.shape, dtype)
        if x.size:
            _launch_groups("norm_backward_input", dtype, rows, _group_for(length),
                           (xf, gf, _flat(w), mf, rf, dx, np.int64(rows), np.int64(length),
                            np.int64(groups), np.int64(spatial), np.int32(rms)))
    want_w, want_b = needs[1] and w is not None, needs[2]
    if not (want_w or want_b):
        return dx, dw, db
    if outer == 0 or not x.size:
        zeros = cp.zeros(params, dtype)
        return dx, zeros if want_w else None, cp.zeros(params, dtype) if want_b else None
    cols = params * spatial
    splits, chunk = _split(cols, outer, _sm_count() * 2048, 32)
    pw = cp.empty(params * splits * spatial, acc) if want_w else None
    pb = cp.empty(params * splits * spatial, acc) if want_b else None
    _launch("norm_backward_params", dtype, cols * splits,
            (xf, gf, mf, rf, pw, pb, np.int64(outer), np.int64(params), np.int64(spatial),
             np.int64(groups), np.int64(splits), np.int64(chunk), np.int32(rms)))

    def finish(partial: Any) -> Any:
        if partial is None:
            return None
        if splits * spatial > 1:
            partial = _reduce("sum", partial.reshape(params, splits * spatial), 1)
        return partial.astype(dtype, copy=False)

    return dx, finish(pw), finish(pb)


def _lead(x: Any, ndim: int) -> tuple[int, int, tuple[int, ...]]:
    """(outer rows, normalised length, statistics' shape) for the last ``ndim`` dims."""
    if not 0 < ndim <= x.ndim:
        raise ValueError(f"cannot normalise the last {ndim} dims of a {x.ndim}-d array")
    lead = x.ndim - ndim
    return (math.prod(x.shape[:lead]), math.prod(x.shape[lead:]),
            tuple(x.shape[:lead]) + (1,) * ndim)


def _param_shape(p: Any, shape: tuple[int, ...], what: str) -> None:
    if p is not None and tuple(p.shape) != shape:
        raise ValueError(f"{what} shape {tuple(p.shape)} != {shape}")


def layer_norm(x: Any, ndim: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> tuple[Any, Any, Any]:
    """``(x - mean) * rstd * weight + bias`` over the last ``ndim`` dims; (y, mean, rstd)."""
    outer, length, stat = _lead(x, ndim)
    for p, what in ((weight, "weight"), (bias, "bias")):
        _param_shape(p, tuple(x.shape[x.ndim - ndim:]), what)
    y, mean, rstd = _forward(x, weight, bias, outer, length, 1, 1, eps, False)
    return y, mean.astype(y.dtype, copy=False).reshape(stat), \
        rstd.astype(y.dtype, copy=False).reshape(stat)


def layer_norm_backward(grad: Any, x: Any, ndim: int, weight: Any, mean: Any, rstd: Any,
                        needs: tuple[bool, bool, bool] = (True, True, True)
                        ) -> tuple[Any, Any, Any]:
    """(dx, dweight, dbias) of ``layer_norm`` from its saved mean and rstd; None where not
    ``needs`` (dweight also without a weight)."""
    outer, length, _ = _lead(x, ndim)
    shape = tuple(x.shape[x.ndim - ndim:])
    dx, dw, db = _backward(grad, x, weight, mean, rstd, outer, length, 1, 1, False, needs)
    return (dx, None if dw is None else dw.reshape(shape),
            None if db is None else db.reshape(shape))


def rms_norm(x: Any, ndim: int, weight: Any = None, eps: float = 1e-6) -> tuple[Any, Any]:
    """``x * rstd * weight``, ``rstd = 1 / sqrt(mean(x**2) + eps)`` over the last ``ndim``
    dims; (y, rstd), rstd in the accumulation dtype."""
    outer, length, stat = _lead(x, ndim)
    _param_shape(weight, tuple(x.shape[x.ndim - ndim:]), "weight")
    y, _, rstd = _forward(x, weight, None, outer, length, 1, 1, eps, True)
    return y, rstd.reshape(stat)


def rms_norm_backward(grad: Any, x: Any, ndim: int, weight: Any, rstd: Any,
                      needs: tuple[bool, bool] = (True, True)) -> tuple[Any, Any]:
    """(dx, dweight) of ``rms_norm`` from its saved rstd."""
    outer, length, _ = _lead(x, ndim)
    dx, dw, _ = _backward(grad, x, weight, None, rstd, outer, length, 1, 1, True,
                          (needs[0], needs[1], False))
    return dx, None if dw is None else dw.reshape(x.shape[x.ndim - ndim:])


def _grouped(x: Any, groups: int) -> tuple[int, int, int]:
    if x.ndim < 2 or groups <= 0 or x.shape[1] % groups:
        raise ValueError(f"group norm needs (N, C, *) with C divisible by groups; got "
                         f"{x.shape} and {groups} groups")
    return x.shape[0], x.shape[1], math.prod(x.shape[2:])


def group_norm(x: Any, groups: int, weight: Any = None, bias: Any = None,
               eps: float = 1e-5) -> tuple[Any, Any, Any]:
    """Group norm of ``x`` (N, C, *) with per-channel ``weight`` and ``bias`` (C,); (y, mean,
    rstd), the statistics shaped (N, groups, 1)."""
    n, c, spatial = _grouped(x, groups)
    for p, what in ((weight, "weight"), (bias, "bias")):
        _param_shape(p, (c,), what)
    y, mean, rstd = _forward(x, weight, bias, n * groups, c // groups * spatial, groups,
                             spatial, eps, False)
    return (y, mean.astype(y.dtype, copy=False).reshape(n, groups, 1),
            rstd.astype(y.dtype, copy=False).reshape(n, groups, 1))


def group_norm_backward(grad: Any, x: Any, groups: int, weight: Any, mean: Any, rstd: Any,
                        needs: tuple[bool, bool, bool] = (True, True, True)
                        ) -> tuple[Any, Any, Any]:
    """(dx, dweight, dbias) of ``group_norm`` from its saved mean and rstd."""
    n, c, spatial = _grouped(x, groups)
    return _backward(grad, x, weight, mean, rstd, n, c, spatial, groups, False, needs)
