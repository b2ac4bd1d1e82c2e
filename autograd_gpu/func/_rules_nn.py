"""Batching rules of the nn ops: losses, convolution and pooling, normalisation, embedding,
and the indexing ops whose index is an array (advanced indexing, gather, scatter).

Each folds the vmap batch into a dimension the op already loops over (the sample dim ``N`` of a
convolution or a loss, the channels of batch norm, the groups of a convolution with batched
weights) and unfolds the result; see ``_rules`` for the calling convention.
"""

from __future__ import annotations

from typing import Any

from ..functions import index as FI
from ..functions import arith as FA
from ..ops import conv as C
from ..ops import movement as M
from ..ops import nn_ops as N
from ..ops import norm_ops as NO
from ..tensor import Tensor
from ._batched import front, rule
from ._rules import _lnd, _pad, along_dims, elementwise, expand_batch

Rule = tuple[Any, Any]


# NOTE: CUDA's native dropout multiplies the input by a mask of its shape: elementwise
rule(N.NativeDropout)(elementwise)


# ---- losses ------------------------------------------------------------------------------------

def _per_sample(losses: Tensor, reduction: str, size: int) -> Tensor:
    """Unreduced losses ``(size, ...)`` reduced per sample."""
    if reduction == "none":
        return losses
    flat = losses.reshape(size, -1)
    return flat.sum(1) if reduction == "sum" else flat.mean(1)


@rule(N.MseLoss, N.BinaryCrossEntropy, N.BinaryCrossEntropyWithLogits)
def pointwise_loss(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
                   size: int) -> Rule:
    """Elementwise losses: unreduced on the whole batch, then reduced per sample."""
    nd = max(_lnd(a, bd) for a, bd in zip(args, bdims) if isinstance(a, Tensor))
    new = [expand_batch(a, bd, size) if i < 2 else _pad(a, bd, nd) if bd is not None else a
           for i, (a, bd) in enumerate(zip(args, bdims))]
    losses = cls.apply(*new, **{**params, "reduction": "none"})
    return _per_sample(losses, params["reduction"], size), 0


@rule(N.NllLoss)
def nll_loss(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
             size: int) -> Rule:
    """The vmap batch joins the sample dim ``N``; 'mean' divides each sample's loss sum by its
    own total weight (the picked weights, read off a second NllLoss of ones)."""
    (x, bx), (t, bt), (w, bw) = zip(args, bdims)
    if bw is not None:
        from ._batched import loop_fallback  # NOTE: per-sample class weights: rare

        return loop_fallback(cls, params, args, bdims, size)
    x, t = expand_batch(x, bx, size), expand_batch(t, bt, size)
    if x.ndim == 2:  # one (C,) sample per vmap sample
        xs, ts = x, t.reshape(size)
    else:
        xs = x.reshape((-1,) + tuple(x.shape[2:]))
        ts = t.reshape((-1,) + tuple(t.shape[2:]))
    unreduced = {**params, "reduction": "none"}
    losses = cls.apply(xs, ts, w, **unreduced)
    reduction = params["reduction"]
    if reduction == "none":
        return losses.reshape(tuple(t.shape) if x.ndim > 2 else (size,)), 0
    total = losses.reshape(size, -1).sum(1)
    if reduction == "sum":
        return total, 0
    from ..creation import ones

    picked = cls.apply(ones(tuple(xs.shape), dtype=xs.dtype, device=xs.device), ts, w,
                       **unreduced)
    return total / -picked.reshape(size, -1).sum(1), 0


# ---- convolution and pooling -------------------------------------------------------------------

def _fold(x: Tensor, size: int) -> Tensor:
    """``(size, N, ...)`` as ``(size * N, ...)``."""
    return x.reshape((size * x.shape[1],) + tuple(x.shape[2:]))


def _unfold(out: Any, size: int) -> Any:
    return out.reshape((size, out.shape[0] // size) + tuple(out.shape[1:]))


@rule(C.Convolution)
def convolution(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
                size: int) -> Rule:
    """Batched input: the batch joins ``N``. Batched weight: the batch joins the groups (input
    channels ``(N, size * C, H, W)``, weight ``(size * O, ...)``), one grouped convolution."""
    (x, bx), (w, bw), (bias, bb) = zip(args, bdims)
    if bw is not None:
        x = expand_batch(x, bx, size)
        n = x.shape[1]
        xg = x.movedim(0, 1).reshape((n, -1) + tuple(x.shape[3:]))
        wf = front(w, bw)
        wg = wf.reshape((-1,) + tuple(wf.shape[2:]))
        bg = None if bias is None else expand_batch(bias, bb, size).reshape(-1)
        out = cls.apply(xg, wg, bg, **{**params, "groups": params["groups"] * size})
        return out.reshape((n, size, -1) + tuple(out.shape[2:])), 1
    if bx is not None:
        out = _unfold(cls.apply(_fold(front(x, bx), size), w, bias if bb is None else None,
                                **params), size)
    else:
        out = cls.apply(x, w, None, **params).unsqueeze(0)
    if bb is not None:
        out = out + front(bias, bb).reshape(size, 1, -1, 1, 1)
    return out, 0


@rule(C.Im2col, C.Col2im, C.MaxPool2d, C.AvgPool2d)
def windowed(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
             size: int) -> Rule:
    """One input ``(N, C, ...)``: the batch joins ``N`` (an unbatched ``(C, H, W)`` pooling
    input becomes a batch of ``size``)."""
    x = front(args[0], bdims[0])
    if params.get("unbatched"):
        out = cls.apply(x, **{**params, "unbatched": False})
    else:
        out = cls.apply(_fold(x, size), **params)
        out = tuple(_unfold(o, size) for o in out) if type(out) is tuple else _unfold(out, size)
    return out, (0,) * len(out) if type(out) is tuple else 0


# ---- normalisation -----------------------------------------------------------------------------

@rule(NO.NativeLayerNorm)
def layer_norm(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
               size: int) -> Rule:
    """Statistics over the last dims are per sample already; batched affine parameters are
    applied after the op, broadcast per sample."""
    (x, bx), (w, bw), (b, bb) = zip(args, bdims)
    x = expand_batch(x, bx, size)
    if bw is None and bb is None:
        return cls.apply(x, w, b, **params), 0
    # NOTE: the weight scales before the bias adds: both go after the op once either is batched.
    out = cls.apply(x, None, None, **params)
    nd = x.ndim - 1
    if w is not None:
        out = out * (_pad(w, bw, nd) if bw is not None else w)
    if b is not None:
        out = out + (_pad(b, bb, nd) if bb is not None else b)
    return out, 0


_BN_RUNNING = (
    "Batch norm got a batched tensor as input while the running_mean or running_var, which will "
    "be updated in place, were not batched.\nIf you are using a module and do not need eval "
    "mode, please set `track_running_stats` to be False.If you are using a prebuilt module and "
    "do not need eval mode, please see the functorch website for resources on how to patch your "
    "module to work with vmap")


@rule(NO.NativeBatchNorm)
def batch_norm(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
               size: int) -> Rule:
    """The batch joins the channels: ``(N, size * C, ...)``, so each sample's channels get
    their own statistics; weights, biases and running statistics are tiled to match."""
    (x, bx), w, b, (rm, brm), (rv, brv) = zip(args, bdims)
    if params["training"] and rm is not None:
        if brm is None or brv is None:
            raise RuntimeError(_BN_RUNNING)
        raise RuntimeError("vmap: batch_norm in training mode with batched running statistics "
                           "is not supported; use track_running_stats=False")
    x = expand_batch(x, bx, size)
    n = x.shape[1]
    xc = x.movedim(0, 1).reshape((n, -1) + tuple(x.shape[3:]))
    tiled = [None if a is None else expand_batch(a, bd, size).reshape(-1)
             for a, bd in (w, b, (rm, brm), (rv, brv))]
    out = cls.apply(xc, *tiled, **params)
    return out.reshape((n, size, -1) + tuple(out.shape[2:])), 1


# ---- embedding ---------------------------------------------------------------------------------

@rule(NO.Embedding)
def embedding(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
              size: int) -> Rule:
    """Batched weight ``(num, D)``: the batch joins the embedding dim, ``(num, size * D)``."""
    w = front(args[0], bdims[0])
    num, dim = w.shape[1], w.shape[2]
    out = cls.apply(w.movedim(0, 1).reshape(num, size * dim), **params)
    lead = tuple(out.shape[:-1])
    return out.reshape(lead + (size, dim)), len(lead)


@rule(NO.EmbeddingDenseBackward)
def embedding_backward(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
                       size: int) -> Rule:
    g = front(args[0], bdims[0])
    dim = g.shape[-1]
    g = g.movedim(0, -2)
    out = cls.apply(g.reshape(tuple(g.shape[:-2]) + (size * dim,)), **params)
    return out.reshape(out.shape[0], size, dim), 1


# ---- indexing with arrays ----------------------------------------------------------------------

def _is_array(k: Any) -> bool:
    return isinstance(k, Tensor) or hasattr(k, "dtype") and hasattr(k, "shape")


def _layout(key: tuple[Any, ...], ndim: int) -> tuple[bool, int, int]:
    """For an advanced ``key`` on an ``ndim``-dim sample: whether its advanced entries (arrays,
    and ints beside them) are adjacent, how many result dims come before them, and how many
    dims their broadcast shape has (NumPy's rules)."""
    adv = [i for i, k in enumerate(key) if _is_array(k) or isinstance(k, int)]
    adjacent = adv == list(range(adv[0], adv[-1] + 1))

    def width(k: Any) -> int:
        if k is None or k is Ellipsis:
            return 0
        return k.ndim if _is_array(k) and _is_bool(k) else 1

    used = sum(width(k) for k in key)
    before = 0
    for k in key[:adv[0]]:
        before += ndim - used if k is Ellipsis else 1
    nb = max(1 if _is_bool(k) else k.ndim if _is_array(k) else 0 for k in key if
             _is_array(k) or isinstance(k, int))
    return adjacent, before, nb


def _is_bool(k: Any) -> bool:
    if isinstance(k, Tensor):
        return k.dtype.name == "bool"
    return _is_array(k) and k.dtype.kind == "b"


@rule(M.Index)
def index(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
          size: int) -> Rule:
    """Basic keys: a leading full slice. Advanced keys with array constants: the same; when the
    advanced entries are not adjacent NumPy puts their dims first, so the batch lands after."""
    x = front(args[0], bdims[0])
    key = params["key"]
    key = key if type(key) is tuple else (key,)
    out = cls.apply(x, **{**params, "key": (slice(None),) + key})
    if not params["advanced"]:
        return out, 0
    adjacent, _, nb = _layout(key, x.ndim - 1)
    return out, 0 if adjacent else nb


@rule(FI.IndexT)
def index_tensors(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
                  size: int) -> Rule:
    """Index tensors batched: the batch becomes one more advanced index (``arange(size)``)
    in front of the sample's key; the result's advanced dims then come first, and are moved
    to where one sample would have them."""
    x, bx = args[0], bdims[0]
    slots = args[1:]
    logical = FI.fill_key(params["key"], [a if bd is None else a.select(bd, 0)
                                          for a, bd in zip(slots, bdims[1:])])
    for k in logical:
        if _is_bool(k) and isinstance(k, Tensor):
            raise RuntimeError(_BOOL_MASK)
    adjacent, before, nb = _layout(logical, _lnd(x, bx))
    tensors = []
    for a, bd in zip(slots, bdims[1:]):
        if bd is not None:
            a = front(a, bd)
            a = a.reshape((size,) + (1,) * (nb - (a.ndim - 1)) + tuple(a.shape[1:]))
        tensors.append(a)
    x = expand_batch(x, bx, size)
    arange = x.backend.arange(0, size, 1, "int64").reshape((size,) + (1,) * nb)
    key = (arange,) + tuple(params["key"])
    out = cls.apply(x, *tensors, **{**params, "key": key})
    if adjacent and before:
        rest = out.ndim - 1 - nb
        order = ([0] + [1 + nb + i for i in range(before)] + list(range(1, nb + 1)) +
                 [1 + nb + i for i in range(before, rest)])
        out = out.permute(*order)
    return out, 0


_BOOL_MASK = ("vmap: We do not support batching operators that can support dynamic shape. "
              "Attempting to batch over indexing with a boolean mask.")


@rule(M.IndexEmbed)
def index_embed(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
                size: int) -> Rule:
    """Indexing's adjoint: the batch dim of ``g`` sits where ``Index``'s rule put it."""
    key = params["key"]
    key = key if type(key) is tuple else (key,)
    g, bd = args[0], bdims[0]
    at = 0
    if params["accumulate"]:
        adjacent, _, nb = _layout(key, len(params["shape"]))
        at = 0 if adjacent else nb
    g = g.movedim(bd, at) if bd != at else g
    new = {**params, "key": (slice(None),) + key, "shape": (size,) + tuple(params["shape"])}
    return cls.apply(g, **new), 0


def _tile_index(index: Any, like: Tensor, size: int) -> Any:
    """An index array broadcast over the batch (a view)."""
    return like.backend.broadcast_to(index[None], (size,) + tuple(index.shape))


@rule(M.Gather)
def gather(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
           size: int) -> Rule:
    if cls is FI.GatherT:
        x, idx = (expand_batch(a, bd, size) for a, bd in zip(args, bdims))
        return cls.apply(x, idx, dim=params["dim"] + 1), 0
    x = front(args[0], bdims[0])
    index = _tile_index(params["index"], x, size)
    return cls.apply(x, **{**params, "dim": params["dim"] + 1, "index": index}), 0


@rule(M.ScatterAdd)
def scatter_add(cls: Any, params: dict[str, Any], args: list[Any], bdims: list[Any],
                size: int) -> Rule:
    src = front(args[0], bdims[0])
    new = {"dim": params["dim"] + 1, "index": _tile_index(params["index"], src, size),
           "shape": (size,) + tuple(params["shape"])}
    return cls.apply(src, **new), 0


# ---- ops without gradients on raw arrays (functions/arith.py) -----------------------------------

rule(FA.RawReduce)(along_dims)
