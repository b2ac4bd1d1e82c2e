"""Batching rules: each op once on the whole batch.

A rule gets the op class, its params, the inputs with one vmap level peeled (``args``: values
holding the batch in dim ``bdims[i]``, or None where an input is not batched at that level) and
the batch size. It returns ``(out, out_bdims)``; ``apply_batched`` wraps the result. Rules call
ops (``cls.apply`` or tensor methods), so lower levels are peeled in turn and the graph is
recorded on the plain arrays.
"""

from __future__ import annotations

from typing import Any

from ..functions import arith as FA
from ..functions import compare as FC
from ..ops import elementwise as E
from ..ops import fused, linalg
from ..ops import movement as M
from ..ops import reduce as R
from ..tensor import Tensor
from ._batched import front, rule


def _lnd(x: Any, bd: int | None) -> int:
    """The logical (per-sample) ndim of a rule argument."""
    if not isinstance(x, Tensor):
        return len(getattr(x, "shape", ()))
    return x.ndim - (bd is not None)


def _pad(x: Tensor, bd: int, nd: int) -> Tensor:
    """Batched ``x`` with its batch dim first and singleton dims after it up to ``nd`` logical
    dims, so that it broadcasts against unbatched tensors as one sample would."""
    x = front(x, bd)
    missing = nd - (x.ndim - 1)
    if missing > 0:
        x = x.reshape((x.shape[0],) + (1,) * missing + tuple(x.shape[1:]))
    return x


def expand_batch(x: Tensor, bd: int | None, size: int) -> Tensor:
    """``x`` batched in dim 0: moved there, or broadcast to ``size`` if it was not batched."""
    if bd is None:
        return x.unsqueeze(0).expand(size, *x.shape)
    return front(x, bd)


# ---- elementwise -------------------------------------------------------------------------------

@rule(E._Unary, E._Binary, E.ThresholdGrad, E.ClampTensor, M.Contiguous, FA.RawOp, FC.WhereT)
def elementwise(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
                size: int) -> tuple[Any, Any]:
    """Broadcasting ops: batched inputs get their batch dim first and are padded to the
    broadcast rank; unbatched ones broadcast from the right as they are."""
    nd = max([_lnd(a, bd) for a, bd in zip(args, bdims)] +
             [getattr(v, "ndim", 0) for v in params.values()])
    new = [_pad(a, bd, nd) if bd is not None else a for a, bd in zip(args, bdims)]
    return cls.apply(*new, **params), 0


# ---- reductions and dim-wise ops ---------------------------------------------------------------

def _shift(dims: Any) -> Any:
    return tuple(d + 1 for d in dims)


@rule(R._Reduce, M.Squeeze)
def along_dims(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
               size: int) -> tuple[Any, Any]:
    """Ops over a tuple of ``dims`` (reductions, squeeze): batch first, dims + 1."""
    x = front(args[0], bdims[0])
    out = cls.apply(x, **{**params, "dims": _shift(params["dims"])})
    return out, (0,) * len(out) if type(out) is tuple else 0


@rule(R.SpreadBack)
def spread_back(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
                size: int) -> tuple[Any, Any]:
    g = front(args[0], bdims[0])
    return cls.apply(g, **{**params, "shape": (size,) + tuple(params["shape"]),
                           "dims": _shift(params["dims"])}), 0


@rule(R.MaxMinDim, fused.Softmax, fused.LogSoftmax, M.Unsqueeze, M.Cat, M.Stack, M.Split)
def along_dim(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
              size: int) -> tuple[Any, Any]:
    """Ops with one ``dim``: batch first (unbatched inputs of cat/stack broadcast), dim + 1."""
    xs = [expand_batch(a, bd, size) for a, bd in zip(args, bdims)]
    out = cls.apply(*xs, **{**params, "dim": params["dim"] + 1})
    return out, (0,) * len(out) if type(out) is tuple else 0


@rule(M.Permute)
def permute(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
            size: int) -> tuple[Any, Any]:
    x, bd = args[0], bdims[0]
    # NOTE: the batch dim stays where it is (no copy): the logical axes skip over it.
    phys = [d for d in range(x.ndim) if d != bd]
    axes = [phys[a] for a in params["axes"]]
    axes.insert(bd, bd)
    return cls.apply(x, **{**params, "axes": tuple(axes)}), bd


@rule(M.Reshape, M.UnsafeView)
def reshape(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
            size: int) -> tuple[Any, Any]:
    x = front(args[0], bdims[0])
    new = {**params, "shape": (size,) + tuple(params["shape"])}
    if cls is M.Reshape:
        new["copy_ok"] = True  # NOTE: the batch dim moved to the front may need a copy
    return cls.apply(x, **new), 0


@rule(M.Expand)
def expand(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
           size: int) -> tuple[Any, Any]:
    shape = tuple(params["shape"])
    x = _pad(args[0], bdims[0], len(shape))
    return cls.apply(x, shape=(size,) + shape), 0


@rule(M.Repeat)
def repeat(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
           size: int) -> tuple[Any, Any]:
    reps = tuple(params["reps"])
    x = _pad(args[0], bdims[0], len(reps))
    return cls.apply(x, reps=(1,) + reps), 0


# ---- matrix products ---------------------------------------------------------------------------

def _mm(x: Tensor, bx: int | None, y: Tensor, by: int | None) -> tuple[Tensor, int]:
    """Batched ``x @ y`` of matrices: one GEMM when one side is unbatched, else one bmm."""
    if bx is not None and by is not None:
        return linalg.Bmm.apply(front(x, bx), front(y, by)), 0
    if by is None:
        x = front(x, bx)  # type: ignore[arg-type]
        b, n, k = x.shape
        out = linalg.Mm.apply(x.reshape(b * n, k), y)
        return out.reshape(b, n, y.shape[-1]), 0
    y = front(y, by)
    b, k, m = y.shape
    folded = y.permute(1, 0, 2).reshape(k, b * m)
    return linalg.Mm.apply(x, folded).reshape(x.shape[0], b, m), 1


@rule(linalg.Mm)
def mm(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
       size: int) -> tuple[Any, Any]:
    return _mm(args[0], bdims[0], args[1], bdims[1])


@rule(linalg.Bmm)
def bmm(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
        size: int) -> tuple[Any, Any]:
    x, y = (expand_batch(a, bd, size) for a, bd in zip(args, bdims))
    batch, n, k, m = x.shape[1], x.shape[2], x.shape[3], y.shape[3]
    out = linalg.Bmm.apply(x.reshape(size * batch, n, k), y.reshape(size * batch, k, m))
    return out.reshape(size, batch, n, m), 0


@rule(linalg.Mv)
def mv(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
       size: int) -> tuple[Any, Any]:
    (x, bx), (v, bv) = zip(args, bdims)
    out, bd = _mm(x, bx, v.unsqueeze(-1), bv)
    return out.squeeze(-1), bd


@rule(linalg.Dot)
def dot(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
        size: int) -> tuple[Any, Any]:
    (x, bx), (y, by) = zip(args, bdims)
    if bx is not None and by is not None:
        return (front(x, bx) * front(y, by)).sum(-1), 0
    if bx is None:
        x, y, bx = y, x, by
    return linalg.Mv.apply(front(x, bx), y), 0


@rule(linalg.Addmm)
def addmm(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
          size: int) -> tuple[Any, Any]:
    (c, bc), (x, bx), (y, by) = zip(args, bdims)
    beta, alpha = params.get("beta", 1), params.get("alpha", 1)
    if bx is None and by is None:
        prod, bp = linalg.Mm.apply(x, y), None
    else:
        prod, bp = _mm(x, bx, y, by)
        prod = front(prod, bp)
    if alpha != 1:
        prod = prod * alpha
    if bc is not None:
        c = _pad(c, bc, 2)
    if beta != 1:
        c = c * beta
    return c + prod, 0


from . import _rules_nn  # noqa: E402,F401  (registers the nn and indexing rules)
from . import _rules_families  # noqa: E402,F401  (the op families' rules)
