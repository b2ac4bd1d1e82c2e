"""Normalisation and embedding ops: ``NativeLayerNorm``, ``NativeBatchNorm``, ``FusedRmsNorm`` and
``Embedding``.

Forward runs on backend arrays in one pass; backward is written with tensor ops, so it is itself
differentiable (gradient penalties, ``gradgradcheck``).
"""

from __future__ import annotations

import math
from typing import Any

from ..autograd.grad_mode import STATE
from ..autograd.node import Node
from . import norm_fast
from .recompute import Recompute


class _Normalize(Node):
    """``(x - mean) * rstd * w + b`` with ``w`` and ``b`` viewed as ``pshape`` to broadcast
    against ``x``. Statistics are taken over ``red`` (``batch_stats``) or given (eval-mode
    batch norm); the weight and bias gradients sum over ``pdims``."""

    red: tuple[int, ...] = ()
    pdims: tuple[int, ...] = ()
    pshape: tuple[int, ...] = ()
    bias_shape: tuple[int, ...] = ()
    batch_stats = True
    eps = 1e-5

    def _stats(self, x: Any) -> tuple[Any, Any, Any, Any]:
        """Mean, biased variance and ``1 / sqrt(var + eps)`` of ``x`` over ``red``, and the
        centred ``x - mean`` (arrays)."""
        b = self.backend
        n = math.prod(x.shape[d] for d in self.red)
        mean = b.sum(x, axis=self.red, keepdims=True) / n
        xc = x - mean
        # NOTE: two passes (mean, then the mean of squared deviations) for stability.
        lead = x.ndim - len(self.red)
        if self.red == tuple(range(lead, x.ndim)) and n:
            # NOTE: trailing axes (layer and group norm): a row dot, no squared array.
            rows = xc.reshape(tuple(x.shape[:lead]) + (n,))
            var = norm_fast.rowdot(b, rows, rows).reshape(mean.shape) / n
        else:
            var = b.sum(xc * xc, axis=self.red, keepdims=True) / n
        return mean, var, 1 / b.sqrt(var + self.eps), xc

    def _affine(self, xc: Any, rstd: Any, w: Any, bias: Any) -> Any:
        """``xc * rstd * w + bias`` from the centred ``xc`` (overwritten)."""
        out = xc
        if w is not None and self.red == self.pdims:
            # NOTE: statistics and weight per channel alike (batch norm): one small scale array;
            # elsewhere (layer norm) their product would be as large as ``x``.
            out *= rstd * w.reshape(self.pshape)
        else:
            out *= rstd
            if w is not None:
                out *= w.reshape(self.pshape)
        if bias is not None:
            out += bias.reshape(self.pshape)
        return out

    def _fused_backward(self, grad: Any, x: Any, w: Any, mean: Any, rstd: Any,
                        needs: tuple[bool, bool, bool]) -> tuple[Any, Any, Any] | None:
        """The first-order gradients on bare arrays (a fused kernel, or ``norm_fast``'s few-pass
        formulas), or None where this node has neither (see ``_first_order``)."""
        return None

    def _first_order(self, grad: Any, x: Any, w: Any, mean: Any,
                     rstd: Any) -> tuple[Any, ...] | None:
        """The gradients from ``_fused_backward`` when no graph is recorded (no
        ``create_graph``; the tensor formula below stays for double backward), else None.

        NOTE: on CUDA one row-wise kernel for dx and one column kernel for the weight and bias
        (``kernels/norm.cu``); elsewhere batch and group norm take ``norm_fast``'s array
        formulas, layer norm the tensor formula.
        """
        if STATE.grad_enabled or STATE.batched_grads or grad._level:
            return None
        needs = self.needs_input_grad
        want = tuple(len(needs) > k and needs[k] for k in range(3))
        fused = self._fused_backward(grad._data, x._data, None if w is None else w._data,
                                     mean._data, rstd._data, want)  # type: ignore[arg-type]
        if fused is None:
            return None
        grads = tuple(None if a is None else self.wrap(a) for a in fused)
        return grads + (None,) * (len(needs) - 3)

    def backward(self, grad: Any) -> tuple[Any, ...]:
        x, w, mean, rstd = self.saved_tensors
        needs = self.needs_input_grad
        if self.batch_stats:
            fused = self._first_order(grad, x, w, mean, rstd)
            if fused is not None:
                return fused
        if self.batch_stats and STATE.grad_enabled and x.requires_grad:
            # NOTE: a graph is being recorded (create_graph): the statistics must be functions
            # of x, not constants, for second derivatives to be right.
            mean = x.mean(self.red, keepdim=True)
            xc = x - mean
            rstd = ((xc * xc).mean(self.red, keepdim=True) + self.eps).rsqrt()
        xhat = (x - mean) * rstd
        gx = gw = gb = None
        if needs[0]:
            gy = grad if w is None else grad * w.view(self.pshape)
            if self.batch_stats:
                gy_mean = gy.mean(self.red, keepdim=True)
                proj = (gy * xhat).mean(self.red, keepdim=True)
                gx = rstd * (gy - gy_mean - xhat * proj)
            else:
                gx = gy * rstd
        if len(needs) > 1 and needs[1]:
            gw = self._sum_p(grad * xhat).view(w.shape)
        if len(needs) > 2 and needs[2]:
            gb = self._sum_p(grad).view(self.bias_shape)
        return (gx, gw, gb) + (None,) * (len(needs) - 3)

    def _sum_p(self, t: Any) -> Any:
        # NOTE: sum(()) would reduce every dimension: no leading dimensions means no sum.
        return t.sum(self.pdims) if self.pdims else t


class NativeLayerNorm(_Normalize):
    """Layer normalisation over the last ``ndim`` dimensions (NativeLayerNormBackward0)."""

    node_name = "NativeLayerNormBackward0"

    def __init__(self, ndim: int, eps: float) -> None:
        self.ndim, self.eps = ndim, eps

    def forward(self, x: Any, w: Any, bias: Any) -> Any:
        lead = x.ndim - self.ndim
        self.red = tuple(range(lead, x.ndim))
        self.pdims = tuple(range(lead))
        self.pshape = x.shape[lead:]
        self.bias_shape = self.pshape
        fused = self.backend.fused_layer_norm(x, w, bias, self.ndim, self.eps)
        if fused is not None:  # CUDA: one kernel (kernels/norm.cu), C-contiguous as PyTorch's
            out, mean, rstd = fused
        else:
            mean, _, rstd, xc = self._stats(x)
            out = self._affine(xc, rstd, w, bias).astype(x.dtype, copy=False)
        self.save_for_backward(x, w, mean, rstd)
        return out

    def _fused_backward(self, grad: Any, x: Any, w: Any, mean: Any, rstd: Any,
                        needs: tuple[bool, bool, bool]) -> tuple[Any, Any, Any] | None:
        return self.backend.fused_layer_norm_backward(  # type: ignore[no-any-return]
            grad, x, w, mean, rstd, self.ndim, needs)


class NativeBatchNorm(_Normalize):
    """Batch normalisation per channel (dimension 1) (NativeBatchNormBackward0).

    In training, normalises with the batch statistics and, when running statistics are given,
    updates them in place: ``running = (1 - momentum) * running + momentum * batch``, with the
    unbiased batch variance, as PyTorch does (``momentum`` an integer array: the count of a
    cumulative average, momentum ``1 / count``). In eval mode, normalises with the running ones.
    """

    node_name = "NativeBatchNormBackward0"

    def __init__(self, training: bool, momentum: Any, eps: float) -> None:
        self.batch_stats, self.momentum, self.eps = training, momentum, eps

    def forward(self, x: Any, w: Any, bias: Any, running_mean: Any, running_var: Any) -> Any:
        b = self.backend
        self.red = (0,) + tuple(range(2, x.ndim))
        self.pdims = self.red
        self.pshape = (x.shape[1],) + (1,) * (x.ndim - 2)
        self.bias_shape = (x.shape[1],)
        if self.batch_stats:
            mean, var, rstd, xc = self._stats(x)
            if running_mean is not None:
                n = x.size // x.shape[1]
                m = self.momentum
                unbiased = var.reshape(-1) * (n / (n - 1))
                if isinstance(m, (int, float)):
                    running_mean[...] = (1 - m) * running_mean + m * mean.reshape(-1)
                    running_var[...] = (1 - m) * running_var + m * unbiased
                else:
                    # NOTE: ``m`` is BatchNorm's counter (0-d int64, kept on the device): the
                    # cumulative average's factor 1 / count and ``1 - factor`` in float64 (as
                    # PyTorch's Python floats), each cast to the dtype of what it multiplies
                    # (``dtype=``), as NumPy casts a Python float there (the same numbers)
                    mul = b.xp.multiply
                    m = 1.0 / m
                    keep = 1 - m
                    running_mean[...] = (mul(keep, running_mean, dtype=running_mean.dtype)
                                         + mul(m, mean.reshape(-1), dtype=mean.dtype))
                    running_var[...] = (mul(keep, running_var, dtype=running_var.dtype)
                                        + mul(m, unbiased, dtype=unbiased.dtype))
        else:
            # NOTE: copies, so that a later in-place update of the buffers cannot change what
            # backward reads.
            mean = b.copy(running_mean).reshape(self.pshape).astype(x.dtype, copy=False)
            rstd = (1 / b.sqrt(running_var.reshape(self.pshape) + self.eps)).astype(x.dtype,
                                                                                    copy=False)
            xc = x - mean
        self.save_for_backward(x, w, mean, rstd)
        return self._affine(xc, rstd, w, bias).astype(x.dtype, copy=False)

    def _fused_backward(self, grad: Any, x: Any, w: Any, mean: Any, rstd: Any,
                        needs: tuple[bool, bool, bool]) -> tuple[Any, Any, Any] | None:
        n, c = x.shape[0], x.shape[1]
        flat = (n, c, math.prod(x.shape[2:]))
        gx, gw, gb = norm_fast.batch_norm_backward(
            self.backend, x.reshape(flat), grad.reshape(flat), w, mean, rstd, needs)
        return (None if gx is None else gx.reshape(x.shape)), gw, gb


class FusedRmsNorm(Recompute):
    """RMS norm over the last ``ndim`` dimensions by the fused kernels (CUDA), as one node
    named as the last node of PyTorch's composition (``name``: ``MulBackward0``, or
    ``ToCopyBackward0`` where the input is cast back from float32), ``fn`` being that
    composition on tensors: ``apply(x)`` or ``apply(x, weight)``.

    Forward is one kernel; the first-order backward (no ``create_graph``) two; under
    ``create_graph`` backward recomputes ``fn`` with recording and differentiates it
    (``Recompute``), so double backward is the composition's.
    """

    def __init__(self, fn: Any, name: str, ndim: int, eps: float) -> None:
        super().__init__(fn, name)
        self.ndim, self.eps = ndim, eps

    def forward(self, *arrays: Any) -> Any:
        w = arrays[1] if len(arrays) > 1 else None
        fused = self.backend.fused_rms_norm(arrays[0], w, self.ndim, self.eps)
        if fused is None:  # NOTE: rms_norm routes here only where the kernels serve
            return super().forward(*arrays)
        out, rstd = fused
        # NOTE: rstd last, after the inputs that Recompute's backward reads.
        self.save_for_backward(*arrays, rstd)
        return out

    def backward(self, *grads: Any) -> tuple[Any, ...]:
        saved = self.saved_tensors
        grad = grads[0]
        need = self.needs_input_grad
        if (len(saved) > len(need) and grad is not None and not STATE.grad_enabled
                and not STATE.batched_grads and not grad._level):
            w = saved[1] if len(need) > 1 else None
            fused = self.backend.fused_rms_norm_backward(
                grad._data, saved[0]._data, None if w is None else w._data, saved[-1]._data,
                self.ndim, (need[0], len(need) > 1 and need[1]))
            if fused is not None:
                return tuple(None if g is None else self.wrap(g) for g in fused[:len(need)])
        return super().backward(*grads)


# ---- embedding --------------------------------------------------------------------------------

class _Lookup(Node):
    """Shared state of the embedding gather and scatter: flat indices, the padding row (whose
    gradient is dropped; -1 for none) and the per-index gradient scale (``scale_grad_by_freq``)."""

    def __init__(self, indices: Any, padding_idx: int, scale: Any, num: int) -> None:
        self.indices, self.padding_idx, self.scale, self.num = indices, padding_idx, scale, num

    def _mask(self, rows: Any) -> Any:
        """``rows`` (one per flat index) with padding rows zeroed and frequency scaling."""
        b = self.backend
        flat = self.indices.reshape(-1)
        if self.padding_idx >= 0:
            keep = b.not_equal(flat, self.padding_idx).reshape(-1, 1)
            rows = rows * keep.astype(rows.dtype)
        if self.scale is not None:
            rows = rows * self.scale.astype(rows.dtype).reshape(-1, 1)
        return rows


class Embedding(_Lookup):
    """``weight[indices]`` (EmbeddingBackward0); the gradient adds rows back, skipping the padding
    row."""

    node_name = "EmbeddingBackward0"

    def __init__(self, indices: Any, padding_idx: int, scale: Any, num: int,
                 masked: bool = False) -> None:
        super().__init__(indices, padding_idx, scale, num)
        self.masked = masked  # the double backward: padding rows read as zero

    def forward(self, w: Any) -> Any:
        out = w[self.indices.reshape(-1)]
        if self.masked:
            out = self._mask(out).astype(w.dtype, copy=False)
        return out.reshape(self.indices.shape + w.shape[1:])

    def backward(self, grad: Any) -> tuple[Any]:
        return (EmbeddingDenseBackward.apply(grad, indices=self.indices,
                                             padding_idx=self.padding_idx, scale=self.scale,
                                             num=self.num),)


class EmbeddingDenseBackward(_Lookup):
    """Zeros of ``(num, dim)`` with the rows of ``grad`` added at their indices."""

    node_name = "EmbeddingDenseBackwardBackward0"

    def forward(self, grad: Any) -> Any:
        b = self.backend
        dim = grad.shape[-1]
        rows = self._mask(grad.reshape(-1, dim)).astype(grad.dtype, copy=False)
        out = b.zeros((self.num, dim), grad.dtype)
        b.index_add_rows(out, self.indices.reshape(-1), rows)
        return out

    def backward(self, grad: Any) -> tuple[Any]:
        return (Embedding.apply(grad, indices=self.indices, padding_idx=self.padding_idx,
                                scale=self.scale, num=self.num, masked=True),)
