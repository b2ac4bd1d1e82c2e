"""First-order backward of batch and group normalisation on bare arrays, in few passes.

The nodes' own backward is written with Tensor ops so that it can be differentiated again; when
no graph is recorded (no ``create_graph``) these formulas give the same gradients in about half
the memory passes: per channel (and sample) two sums of the centred input ``xc = x - mean``,
``ds = sum(grad * xc)`` and ``db = sum(grad)``, from which the weight and bias gradients follow
directly, and the input gradient is one affine map ``gx = A * grad + B * xc + C`` with ``A``,
``B``, ``C`` constant per channel (and sample):

    gy = grad * w,  xhat = xc * rstd,  D = elements per statistic
    gx = rstd * (gy - sum(gy) / D - xhat * sum(gy * xhat) / D)
    sum(gy) = sum_c w_c db_c,  sum(gy * xhat) = rstd * sum_c w_c ds_c

NOTE: the sums are of the centred input, never ``sum(grad * x) - mean * sum(grad)``, which
cancels catastrophically when the mean is large against the spread (float32 loses a digit for
every factor of ten).

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


def _affine_grad(b: Any, grad: Any, xc: Any, a: Any, bx: Any, c: Any) -> Any:
    """``a * grad + bx * xc + c`` with ``(N, C, 1)``-broadcast coefficients, ``xc`` overwritten."""
    xc *= bx
    xc += c
    xc += grad * a
    return xc


def batch_norm_backward(b: Any, x: Any, grad: Any, w: Any, mean: Any, rstd: Any,
                        needs: Any) -> tuple[Any, Any, Any]:
    """Training-mode batch norm: statistics per channel over ``(N, S)``."""
    n, c, s = x.shape
    count = n * s
    xc = x - mean.reshape(1, c, 1)
    db = b.sum(b.sum(grad, axis=2), axis=0)
    rstd_c = rstd.reshape(c)
    gw = b.sum(rowdot(b, grad, xc), axis=0) * rstd_c  # sum(grad * xhat)
    gx = None
    if needs[0]:
        a = rstd_c if w is None else rstd_c * w
        bx = -rstd_c * a * gw / count
        gx = _affine_grad(b, grad, xc, a.reshape(1, c, 1), bx.reshape(1, c, 1),
                          (-a * db / count).reshape(1, c, 1))
    return gx, gw if needs[1] else None, db if needs[2] else None


def group_norm_backward(b: Any, x: Any, grad: Any, w: Any, mean: Any, rstd: Any, groups: int,
                        needs: Any) -> tuple[Any, Any, Any]:
    """Group norm: statistics per ``(sample, group)`` over the group's channels and ``S``."""
    n, c, s = x.shape
    cg = c // groups
    count = cg * s
    spread = (n, groups, cg)
    xc = (x.reshape(n, groups, cg * s) - mean.reshape(n, groups, 1)).reshape(n, c, s)
    ds, db = rowdot(b, grad, xc), b.sum(grad, axis=2)  # (N, C)
    rstd_g = rstd.reshape(n, groups, 1)
    rstd_c = b.broadcast_to(rstd_g, spread).reshape(n, c)
    gw = b.sum(ds * rstd_c, axis=0) if needs[1] else None
    gb = b.sum(db, axis=0) if needs[2] else None
    gx = None
    if needs[0]:
        wc = 1 if w is None else w
        sum_gy = b.sum((db * wc).reshape(spread), axis=2, keepdims=True)
        sum_gyxc = b.sum((ds * wc).reshape(spread), axis=2, keepdims=True)
        bx_g = -rstd_g * rstd_g * rstd_g * sum_gyxc / count
        c_g = -rstd_g * sum_gy / count
        gx = _affine_grad(b, grad, xc, (rstd_c * wc).reshape(n, c, 1),
                          b.broadcast_to(bx_g, spread).reshape(n, c, 1),
                          b.broadcast_to(c_g, spread).reshape(n, c, 1))
    return gx, gw, gb
