"""Randomized low-rank decompositions: ``svd_lowrank`` and ``pca_lowrank`` (Halko, Martinsson
and Tropp 2009, as PyTorch's ``torch._lowrank``): a random projection refined by ``niter`` power
iterations with re-orthonormalisation, then an exact SVD of the small projected matrix. They
are compositions of ``randn``, ``matmul``, ``linalg.qr`` and ``linalg.svd``, so gradients
come from those; the random numbers are ours (reproducible under ``manual_seed``, not PyTorch's).

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (none), installed by ``functions/__init__``.
"""

from __future__ import annotations

from typing import Any, Callable

from ..tensor import Tensor
from .checks import expect_tensor

__all__ = ["svd_lowrank", "pca_lowrank"]


def _basis(a: Tensor, q: int, niter: int, m: Tensor | None) -> Tensor:
    """An orthonormal ``(..., rows, q)`` basis approximating the range of ``a - m``."""
    from ..random import randn
    from .decomp_spectral import linalg_qr

    def times(x: Tensor) -> Tensor:
        return a @ x if m is None else a @ x - m @ x

    def times_h(x: Tensor) -> Tensor:
        return a.mH @ x if m is None else a.mH @ x - m.mH @ x

    r = randn(a.shape[-1], q, dtype=a.dtype, device=a.device)
    basis = linalg_qr(times(r)).Q
    for _ in range(niter):
        basis = linalg_qr(times_h(basis)).Q
        basis = linalg_qr(times(basis)).Q
    return basis  # type: ignore[no-any-return]


def _svd_lowrank(a: Tensor, q: int, niter: int, m: Tensor | None) -> tuple[Tensor, Tensor,
                                                                             Tensor]:
    from .decomp_spectral import linalg_svd

    rows, cols = a.shape[-2:]
    if m is not None:
        m = m.broadcast_to(tuple(a.shape))
    wide = rows < cols
    if wide:  # NOTE: project the longer side, as PyTorch does
        a = a.mH
        m = m.mH if m is not None else None
    basis = _basis(a, q, niter, m)
    small = basis.mH @ a if m is None else basis.mH @ a - basis.mH @ m
    u, s, vh = linalg_svd(small, full_matrices=False)
    u, v = basis @ u, vh.mH
    return (v, s, u) if wide else (u, s, v)


def svd_lowrank(A: Tensor, q: int | None = 6, niter: int = 2,  # noqa: N803
                M: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:  # noqa: N803
    """``(U, S, V)`` with ``A - M ≈ U diag(S) V^H`` of rank ``q`` (default 6): exact when
    ``A - M`` has rank at most ``q``; ``niter`` power iterations sharpen it otherwise."""
    expect_tensor("svd_lowrank", "A", 1, A)
    return _svd_lowrank(A, 6 if q is None else int(q), int(niter), M)


def pca_lowrank(A: Tensor, q: int | None = None, center: bool = True,  # noqa: N803
                niter: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """``svd_lowrank`` of ``A`` with its column means removed (``center``): ``V``'s columns
    are the principal directions, ``S**2 / (m - 1)`` the variances they explain. ``q``
    defaults to ``min(6, m, n)``."""
    expect_tensor("pca_lowrank", "A", 1, A)
    rows, cols = A.shape[-2:]
    if q is None:
        q = min(6, rows, cols)
    elif not (q >= 0 and q <= min(rows, cols)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than min(m, n)="
                         f"{min(rows, cols)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter, None)
    return _svd_lowrank(A - A.mean(-2, keepdim=True), q, niter, None)


TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
