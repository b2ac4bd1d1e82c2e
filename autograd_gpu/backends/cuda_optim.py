"""Our fused optimizer kernels' launchers (``kernels/optim.cu``): SGD, Adam/AdamW and RMSprop
updating every parameter of a group in one launch (PyTorch's ``fused=True``), the tensors
reached through a chunk table of addresses and sizes (as its ``multi_tensor_apply``).

The optimizers call these through ``optim/_fused.py`` when ``usable`` says so. The reference
twins are the array sequences of ``optim/_foreach.py`` (each optimizer's single-tensor path,
ufunc for ufunc), which the kernels reproduce bit for bit in float32 and float64. Arguments:
per list (params, grads, state buffers) one CuPy array per tensor, all of one dtype, the arrays
of a tensor of one shape and one dense layout; scalars as the single-tensor path rounds them
(``_foreach.*_scalars``); ``cache``: where the chunk tables are kept (see ``chunk_table``).
Importing this module needs neither CuPy nor a GPU.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from . import cuda_kernels as K

CHUNK = 2048  # elements per chunk: one block's share of one tensor (8 per thread)
_MAX_TABLES = 16  # layouts per cache (an optimizer's: one per group and dtype, as a rule)
# optim.cu's OptimFlags
F_MAXIMIZE, F_WEIGHT_DECAY, F_DECOUPLED, F_AMSGRAD = 1, 2, 4, 8
F_MOMENTUM, F_FIRST, F_NESTEROV, F_CENTERED, F_LERP_LOW = 16, 32, 64, 128, 256


def usable(*arrays: Any) -> bool:
    """True when the kernels serve one tensor's arrays (None ones are absent): our kernels are on
    (``AUTOGRAD_GPU_KERNELS``), each is a CuPy array of one dtype among float16/32/64, all of
    one shape and one dense layout (so that element ``i`` is at offset ``i`` in each)."""
    try:
        from .cupy_backend import _kernels_for  # NOTE: late: it imports CuPy
    except ImportError:
        return False
    present = [a for a in arrays if a is not None]
    if not _kernels_for(*present):
        return False
    first = present[0]
    if not (first.flags.c_contiguous or first.flags.f_contiguous):
        return False
    return all(a.shape == first.shape and a.strides == first.strides for a in present[1:])


def chunk_table(lists: Sequence[list[Any] | None],
                cache: dict[Any, Any] | None = None) -> tuple[Any, int, int]:
    """``(table, tensors, chunks)``: the device table ``optim.cu`` reads for ``lists`` (each a
    list of arrays, one per tensor, or None: absent).

    ``cache`` (the caller's, e.g. an optimizer's: the tables live as long as it does) keeps one
    table per layout (device, lists, sizes). A step whose arrays sit where the last one's did
    reuses it as it is; otherwise (new ``.grad`` arrays after ``zero_grad()``, say) only the
    addresses are copied into it, stream-ordered after the launches that read the old ones:
    the device memory stays the same from step to step.
    """
    cp = K._cupy()
    first = next(lst for lst in lists if lst is not None)
    n = len(first)
    sizes = tuple(int(a.size) for a in first)
    ptrs = [0 if lst is None else a.data.ptr for lst in lists for a in (lst or first)]
    key = (cp.cuda.runtime.getDevice(), len(lists), sizes)
    hit = None if cache is None else cache.get(key)
    if hit is not None:
        entry, known = hit
        if known != ptrs:
            entry[0][:len(ptrs)].set(np.array(ptrs, dtype=np.int64))
            hit[1] = ptrs
        return entry
    tensor_of: list[int] = []
    start_of: list[int] = []
    for t, size in enumerate(sizes):
        starts = range(0, size, CHUNK)
        tensor_of += [t] * len(starts)
        start_of += starts
    host = np.array(ptrs + list(sizes) + tensor_of + start_of, dtype=np.int64)
    entry = (cp.asarray(host), n, len(tensor_of))
    if cache is not None:
        if len(cache) >= _MAX_TABLES:
            cache.clear()
        cache[key] = [entry, ptrs]
    return entry


def _launch(name: str, lists: Sequence[list[Any] | None], scalars: tuple[float, ...],
            flags: int, cache: dict[Any, Any] | None) -> None:
    """One launch of ``name`` over every tensor of ``lists`` (nothing to do: no launch)."""
    first = next(lst for lst in lists if lst is not None)
    if not first:
        return
    table, n, chunks = chunk_table(lists, cache)
    if chunks == 0:
        return
    dtype = K.dtype_name(first[0].dtype)
    K.get_kernel(name, dtype)(
        (K._blocks(chunks, 1),), (K._THREADS,),
        (table, np.int64(n), np.int64(chunks), np.int64(CHUNK), np.int32(len(lists)),
         *(np.float64(x) for x in scalars), np.int32(flags)))


def sgd(params: list[Any], grads: list[Any], bufs: list[Any] | None, *, wd: float | None,
        momentum: float, undamped: float, neg_lr: float, maximize: bool, nesterov: bool,
        first: bool, cache: dict[Any, Any] | None = None) -> None:
    """SGD in place: ``g = -grad`` (maximize), ``g += p * wd`` (``wd`` not None), with
    ``bufs``: ``buf = g`` on the ``first`` step, else ``buf * momentum + g * undamped``, then
    ``g = g + buf * momentum`` (nesterov) or ``buf``; ``p += g * neg_lr``."""
    flags = (F_MAXIMIZE if maximize else 0) | (F_WEIGHT_DECAY if wd is not None else 0) | \
        (F_MOMENTUM if bufs is not None else 0) | (F_FIRST if first else 0) | \
        (F_NESTEROV if nesterov else 0)
    lists = [params, grads] if bufs is None else [params, grads, bufs]
    _launch("sgd_step", lists, (wd or 0.0, momentum, undamped, neg_lr), flags, cache)


def adam(params: list[Any], grads: list[Any], exp_avgs: list[Any], exp_avg_sqs: list[Any],
         max_exp_avg_sqs: list[Any] | None, *, decay: float | None, wd: float | None,
         weight: tuple[bool, float], beta2: float, one_minus_beta2: float, bc2_sqrt: float,
         eps: float, neg_step: float, maximize: bool,
         cache: dict[Any, Any] | None = None) -> None:
    """Adam in place: ``g = -grad`` (maximize); ``p *= decay`` (decoupled weight decay, not
    None) or ``g += p * wd``; ``m = lerp(m, g, weight)`` (see ``_foreach.lerp``),
    ``v = v * beta2 + g * one_minus_beta2 * g``, ``vmax = max(vmax, v)`` with
    ``max_exp_avg_sqs``; ``p += m * neg_step / (sqrt(v or vmax) / bc2_sqrt + eps)``."""
    low, w = weight
    flags = (F_MAXIMIZE if maximize else 0) | (F_WEIGHT_DECAY if wd is not None else 0) | \
        (F_DECOUPLED if decay is not None else 0) | \
        (F_AMSGRAD if max_exp_avg_sqs is not None else 0) | (F_LERP_LOW if low else 0)
    lists = [params, grads, exp_avgs, exp_avg_sqs]
    if max_exp_avg_sqs is not None:
        lists.append(max_exp_avg_sqs)
    _launch("adam_step", lists, (decay or 0.0, wd or 0.0, w, beta2, one_minus_beta2, bc2_sqrt,
                                 eps, neg_step), flags, cache)


def rmsprop(params: list[Any], grads: list[Any], square_avgs: list[Any],
            grad_avgs: list[Any] | None, bufs: list[Any] | None, *, wd: float | None,
            alpha: float, one_minus_alpha: float, weight: tuple[bool, float], eps: float,
            momentum: float, neg_lr: float, maximize: bool,
            cache: dict[Any, Any] | None = None) -> None:
    """RMSprop in place: ``g = -grad`` (maximize), ``g += p * wd``;
    ``sq = sq * alpha + g * one_minus_alpha * g``; with ``grad_avgs`` (centered)
    ``ga = lerp(ga, g, weight)`` and ``avg = sqrt(sq - ga * ga) + eps``, else
    ``sqrt(sq) + eps``; with ``bufs`` ``buf = buf * momentum + g / avg``, ``p += buf * neg_lr``,
    else ``p += g * neg_lr / avg``."""
    low, w = weight
    flags = (F_MAXIMIZE if maximize else 0) | (F_WEIGHT_DECAY if wd is not None else 0) | \
        (F_CENTERED if grad_avgs is not None else 0) | \
        (F_MOMENTUM if bufs is not None else 0) | (F_LERP_LOW if low else 0)
    _launch("rmsprop_step", [params, grads, square_avgs, grad_avgs, bufs],
            (wd or 0.0, alpha, one_minus_alpha, w, eps, momentum, neg_lr), flags, cache)
