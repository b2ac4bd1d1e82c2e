"""Our fused attention kernels' launchers (``kernels/attention.cu``): ``attention_forward`` and
``attention_backward``, flash-attention style (no ``(L, S)`` array is ever made, except the
mask's gradient when it is asked for).

Inputs are ``q (..., L, E)``, ``k (..., S, E)``, ``v (..., S, Ev)`` with one batch shape
``...``, read through their strides, and an optional mask broadcastable to ``(..., L, S)``: bool
(True = attend) or of q's dtype (added to the scores), also read through its strides (a
broadcast mask stays broadcast). Loading, dtype checks and the launch helpers are
``cuda_kernels``'.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .cuda_kernels import _ACC, _common_dtype, _cupy, _sm_count, get_kernel
from .cuda_layout import merge_dims

# Largest head dim (E and Ev) per dtype: kernels/attention.cu's AttDims (48 KiB of shared
# memory per block).
MAX_HEAD_DIM = {"float16": 128, "float32": 128, "float64": 64}
_WARPS, _BN, _FWD_BM, _BWD_BM = 4, 32, 16, 8  # kernels/attention.cu's ATT_* tile sizes
_MAX_BATCH_DIMS = 2  # (b, h): the kernels address two batch dimensions through strides


def _batch_strides(a: Any, batch: tuple[int, ...]) -> list[int]:
    """``a``'s element strides over the batch dims ``batch`` (0 where broadcast), the last two
    dims of ``a`` being its rows and columns."""
    lead = a.shape[:a.ndim - 2]
    first, out = len(batch) - len(lead), [0] * len(batch)
    for k, (size, stride) in enumerate(zip(lead, a.strides[:len(lead)])):
        if size != 1:
            out[first + k] = stride // a.itemsize
    return out


def _layout(batch: tuple[int, ...], operands: list[Any]) -> tuple[
        int, int, list[tuple[int, int]]] | None:
    """(B, H, [(stride_b, stride_h) per operand]) for the batch dims, or None when more than two
    remain after merging. ``operands``: (..., rows, cols) arrays, or None."""
    per = [[0] * len(batch) if a is None else _batch_strides(a, batch) for a in operands]
    sizes, cols = merge_dims(batch, per)
    if len(sizes) > _MAX_BATCH_DIMS:
        return None
    pad = _MAX_BATCH_DIMS - len(sizes)
    sizes = [1] * pad + sizes
    return sizes[0], sizes[1], [tuple([0] * pad + c) for c in cols]  # type: ignore[misc]


def _core(a: Any) -> tuple[np.int64, np.int64]:
    """Element strides of the last two dims (0 where size 1: a broadcast mask row or column)."""
    return tuple(np.int64(0 if size == 1 else stride // a.itemsize)  # type: ignore[return-value]
                 for size, stride in zip(a.shape[-2:], a.strides[-2:]))


def _check(q: Any, k: Any, v: Any, mask: Any) -> tuple[str, tuple[int, ...]]:
    dtype = _common_dtype(q, k, v)
    if q.ndim < 2 or not (q.ndim == k.ndim == v.ndim):
        raise ValueError(f"q, k, v need one number (>= 2) of dims; got {q.shape}, {k.shape}, "
                         f"{v.shape}")
    batch = tuple(q.shape[:-2])
    if tuple(k.shape[:-2]) != batch or tuple(v.shape[:-2]) != batch:
        raise ValueError(f"q, k, v need one batch shape; got {q.shape}, {k.shape}, {v.shape}")
    if k.shape[-1] != q.shape[-1] or v.shape[-2] != k.shape[-2]:
        raise ValueError(f"shapes q {q.shape}, k {k.shape}, v {v.shape} do not fit attention")
    top = MAX_HEAD_DIM[dtype]
    if q.shape[-1] > top or v.shape[-1] > top:
        raise ValueError(f"head dims {q.shape[-1]}, {v.shape[-1]} over the kernels' {top} for "
                         f"{dtype}")
    if mask is not None:
        if mask.dtype != np.bool_ and mask.dtype != q.dtype:
            raise TypeError(f"mask dtype {mask.dtype}: bool or q's {q.dtype} expected")
        full = batch + (q.shape[-2], k.shape[-2])
        if mask.ndim > len(full) or any(m not in (1, f) for m, f in
                                        zip(mask.shape[::-1], full[::-1])):
            raise ValueError(f"mask shape {mask.shape} does not broadcast to {full}")
    return dtype, batch


def _plan(q: Any, k: Any, v: Any, mask: Any, extra: list[Any]) -> tuple[
        list[Any], int, int, list[tuple[int, int]]]:
    """([q, k, v, mask, *extra], B, H, their (stride_b, stride_h)), the arrays all (..., rows,
    cols) with q's batch shape (the mask may broadcast), with contiguous copies when the batch
    dims do not fold into two (strided views of more than 4 dims)."""
    batch = tuple(q.shape[:-2])
    arrays = [q, k, v, mask, *extra]
    found = _layout(batch, arrays)
    if found is None:  # NOTE: rare: copies fold into one batch dim
        cp = _cupy()
        full = batch + (q.shape[-2], k.shape[-2])
        arrays = [None if a is None else cp.ascontiguousarray(
            cp.broadcast_to(a, full) if a is mask else a) for a in arrays]
        found = _layout(batch, arrays)
        assert found is not None
    B, H, strides = found
    return arrays, B, H, strides


def _args(a: Any, batch: tuple[int, int]) -> tuple[np.int64, ...]:
    """(stride_b, stride_h, stride_row, stride_col) of an operand (zeros for None)."""
    if a is None:
        return (np.int64(0),) * 4
    return (np.int64(batch[0]), np.int64(batch[1]), *_core(a))


def _grid(units: int) -> int:
    return max(1, min(units, _sm_count() * 8))


def _mask_ptrs(mask: Any) -> tuple[Any, Any]:
    """(bias, keep) kernel pointers: a bool mask is ``keep``, a float one ``bias``."""
    if mask is None:
        return None, None
    return (None, mask) if mask.dtype == np.bool_ else (mask, None)


def _out_buffer(cp: Any, batch: tuple[int, ...], L: int, ev: int, dtype: str) -> Any:
    """The output, laid out as PyTorch's fused kernels lay it out: for 4-D ``(B, H, L, Ev)``,
    a ``(B, L, H, Ev)`` buffer seen transposed (``out.transpose(1, 2)`` is contiguous)."""
    if len(batch) == 2:
        return cp.empty((batch[0], L, batch[1], ev), dtype).transpose(0, 2, 1, 3)
    return cp.empty(batch + (L, ev), dtype)


def _as_2d(mask: Any) -> Any:
    """A mask of fewer than 2 dims viewed as (1, ..., S): it has a row and a column stride."""
    if mask is None or mask.ndim >= 2:
        return mask
    return mask.reshape((1,) * (2 - mask.ndim) + tuple(mask.shape))


def attention_forward(q: Any, k: Any, v: Any, mask: Any = None, causal: bool = False,
                      scale: float = 1.0) -> tuple[Any, Any]:
    """``softmax(q @ k^T * scale + mask) @ v`` and the row log-sum-exp of the masked scores.

    ``causal`` masks keys ``j > i`` (top-left aligned, as PyTorch). A row with no key to attend
    gives zeros and lse ``+inf`` (PyTorch's math path gives those zeros). Returns ``(out, lse)``:
    out ``(..., L, Ev)`` of q's dtype (for 4-D inputs in PyTorch's ``(B, L, H, Ev)`` memory
    order), lse ``(..., L)`` in float32 (float64 for float64 inputs), C-contiguous.
    """
    cp = _cupy()
    dtype, batch = _check(q, k, v, mask)
    L, S, E, ev = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    out = _out_buffer(cp, batch, L, ev, dtype)
    lse = cp.empty(batch + (L,), _ACC[dtype])
    if lse.size == 0:
        return out, lse
    if S == 0:  # NOTE: nothing to attend anywhere: zeros, as the math path's empty matmul
        out[...] = 0
        lse[...] = math.inf
        return out, lse
    (q, k, v, mask, out_), B, H, st = _plan(q, k, v, _as_2d(mask), [out])
    bias, keep = _mask_ptrs(mask)
    units = B * H * -(-L // _FWD_BM)
    get_kernel("attention_forward", dtype)(
        (_grid(units),), (32, _WARPS),
        (q, k, v, bias, keep, out_, lse, np.int64(B), np.int64(H), np.int64(L), np.int64(S),
         np.int32(E), np.int32(ev), *_args(q, st[0]), *_args(k, st[1]), *_args(v, st[2]),
         *_args(mask, st[3]), *_args(out_, st[4])[:3], np.int32(causal), np.float64(scale)))
    if out_ is not out:  # (the rare copied layout)
        out[...] = out_
    return out, lse


def _sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    """``g`` summed over the dims broadcast from ``shape`` (the mask's gradient)."""
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + d for d, s in enumerate(shape)
                                      if s == 1 and g.shape[lead + d] != 1)
    return g.sum(axis=axes, keepdims=True).reshape(shape) if axes else g


def attention_backward(q: Any, k: Any, v: Any, mask: Any, out: Any, lse: Any, grad_out: Any,
                       causal: bool = False, scale: float = 1.0,
                       grad_mask: bool = False) -> tuple[Any, Any, Any, Any]:
    """Gradients of ``attention_forward`` from its inputs, its ``out`` and ``lse`` and
    ``grad_out`` (the gradient of ``out``): ``(grad_q, grad_k, grad_v, grad_mask or None)``.

    P is recomputed tile by tile as ``exp(s - lse)``; ``grad_mask`` asks for the gradient of a
    float mask (``dS``, summed over the dims the mask broadcasts along): the only ``(L, S)``
    array made. The others are C-contiguous, shaped as q, k, v.
    """
    cp = _cupy()
    dtype, batch = _check(q, k, v, mask)
    if grad_out.shape != out.shape:
        raise ValueError(f"grad shape {grad_out.shape} != output shape {out.shape}")
    L, S, E, ev = q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]
    mask_shape = None if mask is None else tuple(mask.shape)
    want_mask = grad_mask and mask is not None and mask.dtype != np.bool_
    grads = [cp.empty(q.shape, dtype), cp.empty(k.shape, dtype), cp.empty(v.shape, dtype),
             cp.empty(batch + (L, S), dtype) if want_mask else None]
    if math.prod(batch) == 0 or L == 0 or S == 0:  # NOTE: empty sums: zero gradients
        for g in grads:
            if g is not None:
                g[...] = 0
    else:
        grad_q, grad_k, grad_v, grad_bias = grads
        (q, k, v, mask, out, grad_out), B, H, st = _plan(q, k, v, _as_2d(mask), [out, grad_out])
        bias, keep = _mask_ptrs(mask)
        lse = cp.ascontiguousarray(lse)
        delta = cp.empty(batch + (L,), _ACC[dtype])
        rows = -(-(B * H * L) // _WARPS)
        get_kernel("attention_delta", dtype)(
            (max(1, min(rows, _sm_count() * 32)),), (32, _WARPS),
            (out, grad_out, delta, np.int64(B), np.int64(H), np.int64(L), np.int32(ev),
             *_args(out, st[4]), *_args(grad_out, st[5])))
        common = (np.int64(B), np.int64(H), np.int64(L), np.int64(S), np.int32(E),
                  np.int32(ev), *_args(q, st[0]), *_args(k, st[1]), *_args(v, st[2]),
                  *_args(mask, st[3]), *_args(grad_out, st[5]), np.int32(causal),
                  np.float64(scale))
        get_kernel("attention_backward_kv", dtype)(
            (_grid(B * H * -(-S // _BN)),), (32, _WARPS),
            (q, k, v, bias, keep, grad_out, lse, delta, grad_k, grad_v, grad_bias, *common))
        get_kernel("attention_backward_q", dtype)(
            (_grid(B * H * -(-L // _BWD_BM)),), (32, _WARPS),
            (q, k, v, bias, keep, grad_out, lse, delta, grad_q, *common))
    if grads[3] is not None:
        assert mask_shape is not None
        grads[3] = _sum_to(grads[3], mask_shape)
    return grads[0], grads[1], grads[2], grads[3]
