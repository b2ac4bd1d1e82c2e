"""First-order backward of batch and group normalisation on bare arrays, in few passes.

The nodes' own backward is written with Tensor ops so that it can be differentiated again; when
no graph is recorded (no ``create_graph``) these formulas give the same gradients in about a
third of the memory passes, as PyTorch's CPU kernels do: per channel (and sample) two sums,
``ds = sum(grad * x)`` and ``db = sum(grad)``, from which the weight and bias gradients follow
directly, and the input gradient is one affine map ``gx = A * grad + B * x + C`` with ``A``, ``B``,
``C`` constant per channel (and sample):

    gy = grad * w,  xhat = (x - mean) * rstd,  D = elements per statistic
    gx = rstd * (gy - sum(gy) / D - xhat * sum(gy * xhat) / D)
    sum(gy) = sum_c w_c db_c,  sum(gy * xhat) = rstd * sum_c w_c (ds_c - mean db_c)

Inputs are ``(N, C, S)`` arrays (``S`` the flattened spatial size), ``mean`` and ``rstd`` as the
forward saved them, ``w`` ``(C,)`` or ``None``; ``needs`` the node's ``needs_input_grad``.
"""

from __future__ import annotations

from typing import Any


def rowdot(b: Any, a: Any, c: Any) -> Any:
    """``sum(a * c, axis=-1)`` without the product array."""
    vecdot = getattr(b.xp, "vecdot", None)
    if vecdot is not None:
        return vecdot(a, c)
    return b.xp.einsum("...i,...i->...", a, c)


def _affine_grad(b: Any, grad: Any, x: Any, a: Any, bx: Any, c: Any) -> Any:
    """``a * grad + bx * x + c`` with ``(N, C, 1)``-broadcast coefficients, in place."""
    out = grad * a
    tmp = x * bx
    out += tmp
    out += c
    return out


def batch_norm_backward(b: Any, x: Any, grad: Any, w: Any, mean: Any, rstd: Any,
                        needs: Any) -> tuple[Any, Any, Any]:
    """Training-mode batch norm: statistics per channel over ``(N, S)``."""
    n, c, s = x.shape
    count = n * s
    db = b.sum(b.sum(grad, axis=2), axis=0)
    mean_c, rstd_c = mean.reshape(c), rstd.reshape(c)
    gw = (b.sum(rowdot(b, grad, x), axis=0) - mean_c * db) * rstd_c  # sum(grad * xhat)
    gx = None
    if needs[0]:
        wc = 1 if w is None else w
        a = rstd_c * wc
        bx = -rstd_c * a * gw / count
        c0 = -a * db / count - mean_c * bx
        gx = _affine_grad(b, grad, x, a.reshape(1, c, 1), bx.reshape(1, c, 1),
                          c0.reshape(1, c, 1))
    return gx, gw if needs[1] else None, db if needs[2] else None


def group_norm_backward(b: Any, x: Any, grad: Any, w: Any, mean: Any, rstd: Any, groups: int,
                        needs: Any) -> tuple[Any, Any, Any]:
    """Group norm: statistics per ``(sample, group)`` over the group's channels and ``S``."""
    n, c, s = x.shape
    cg = c // groups
    count = cg * s
    ds, db = rowdot(b, grad, x), b.sum(grad, axis=2)  # (N, C)
    mean_g, rstd_g = mean.reshape(n, groups, 1), rstd.reshape(n, groups, 1)
    mean_c = b.broadcast_to(mean_g, (n, groups, cg)).reshape(n, c)
    rstd_c = b.broadcast_to(rstd_g, (n, groups, cg)).reshape(n, c)
    gw = b.sum((ds - mean_c * db) * rstd_c, axis=0) if needs[1] else None
    gb = b.sum(db, axis=0) if needs[2] else None
    gx = None
    if needs[0]:
        wc = 1 if w is None else w
        sum_gy = b.sum((db * wc).reshape(n, groups, cg), axis=2, keepdims=True)
        sum_gyx = b.sum((ds * wc).reshape(n, groups, cg), axis=2, keepdims=True)
        proj = (sum_gyx - mean_g * sum_gy) * rstd_g / count  # mean(gy * xhat)
        bx_g = -rstd_g * rstd_g * proj
        c_g = -rstd_g * sum_gy / count - mean_g * bx_g
        a = (rstd_c * wc).reshape(n, c, 1)
        spread = (n, groups, cg)
        bx = b.broadcast_to(bx_g, spread).reshape(n, c, 1)
        c0 = b.broadcast_to(c_g, spread).reshape(n, c, 1)
        gx = _affine_grad(b, grad, x, a, bx, c0)
    return gx, gw, gb
