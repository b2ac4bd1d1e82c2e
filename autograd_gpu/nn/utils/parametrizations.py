"""``torch.nn.utils.parametrizations``: ready-made parametrizations (``orthogonal``,
``spectral_norm``, ``weight_norm``), registered through ``parametrize``."""

from __future__ import annotations

from enum import Enum, auto
from typing import Any, TypeVar

from ... import dtypes
from ...autograd.grad_mode import no_grad
from ...creation import eye, zeros_like
from ...functions.decomp_spectral import matrix_exp
from ...functions.householder import geqrf
from ...functions.manip import tril
from ...functions.manip_views import diagonal
from ...functions.pointwise_unary import sgn
from ...functions.products import vdot
from ...functions.shape import cat
from ...linalg import householder_product, solve
from ...tensor import Tensor
from .. import functional as F
from .. import init
from ..module import Module
from . import parametrize
from .spectral_norm import default_dim
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]

T_module = TypeVar("T_module", bound=Module)


# ---- orthogonal ------------------------------------------------------------------------------

# NOTE: machine epsilons (torch.finfo(dtype).eps) of the floating and complex dtypes.
_EPS = {dtypes.float64: 2.0 ** -52, dtypes.complex128: 2.0 ** -52, dtypes.float32: 2.0 ** -23,
        dtypes.complex64: 2.0 ** -23, dtypes.float16: 2.0 ** -10}


def _is_orthogonal(Q: Tensor) -> bool:
    n, k = Q.shape[-2], Q.shape[-1]
    eps = 10.0 * n * _EPS[Q.dtype]
    return bool((Q.mH @ Q).allclose(eye(k, dtype=Q.dtype, device=Q.device), atol=eps))


def _make_orthogonal(A: Tensor) -> Tensor:
    """The Q of ``A``'s QR decomposition with R's diagonal made positive (unique for full-rank
    ``A``)."""
    X, tau = geqrf(A)
    Q = householder_product(X, tau)
    return Q * sgn(diagonal(X, 0, -2, -1)).unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """An orthogonal matrix (or batch) from an unconstrained one: the exponential or Cayley
    transform of its skew-symmetric part, or the product of Householder reflectors in its
    strict lower triangle. With ``use_trivialization`` the result is left-multiplied by the
    buffer ``base`` (set by ``right_inverse``), so the original starts at ``-I`` and stays
    near the identity map's well-conditioned region."""

    def __init__(self, weight: Tensor, orthogonal_map: _OrthMaps, *,
                 use_trivialization: bool = True) -> None:
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X: Tensor) -> Tensor:  # type: ignore[override]
        n, k = X.shape[-2], X.shape[-1]
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = tril(X)
            if n != k:
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:
                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = solve(Id.add(A, alpha=-0.5), Id.add(A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = tril(X, -1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            # NOTE: the diagonal's integer part picks each reflector's sign (PyTorch's rule).
            Q = Q * diagonal(X, 0, -2, -1).int().unsqueeze(-2)
        base = self._buffers.get("base")
        if base is not None:
            Q = base @ Q
        return Q.mT if transposed else Q

    def right_inverse(self, Q: Tensor) -> Tensor:
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q: Tensor) -> Tensor:
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.shape[-2], Q.shape[-1]
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if "base" not in self._buffers:
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            A, tau = geqrf(Q)
            # NOTE: diagonal +-1 so that forward's sign factor rebuilds Q's Householder form;
            # a reflector with tau == 0 flips it.
            diag = diagonal(A, 0, -2, -1)
            diag.copy_(diag.sign().where(tau != 0.0, -diag.sign()))
            return A.mT if transpose else A
        if n == k:
            Q = _make_orthogonal(Q) if not _is_orthogonal(Q) else Q.clone()
        else:
            from ...random import randn

            N = randn(*(tuple(Q.shape[:-2]) + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        neg_id = zeros_like(Q_init)
        diagonal(neg_id, 0, -2, -1).fill_(-1.0)
        return neg_id


def orthogonal(module: T_module, name: str = "weight", orthogonal_map: str | None = None, *,
               use_trivialization: bool = True) -> T_module:
    """Constrain ``module.<name>`` (a matrix or batch of matrices) to be orthogonal (unitary):
    ``Q^H Q = I`` for tall matrices, ``Q Q^H = I`` for wide ones.

    ``orthogonal_map``: "matrix_exp" or "cayley" (of the skew part of the original's lower
    triangle; defaults for square or complex matrices) or "householder" (reflectors; default
    otherwise). With ``use_trivialization`` (default) an extra buffer ``base`` holds the
    starting orthogonal matrix and the original starts at ``-I``.

    Example:
        >>> orthogonal(Linear(20, 40)).weight.shape
        torch.Size([40, 20])
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError(f"Expected a matrix or batch of matrices. Got a tensor of {weight.ndim} "
                         "dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.shape[-2] == weight.shape[-1] or \
            weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# ---- weight_norm -----------------------------------------------------------------------------

class _WeightNorm(Module):
    """``weight = g * v / ||v||`` from the originals ``(g, v)`` = ``original0, original1``."""

    def __init__(self, dim: int | None = 0) -> None:
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g: Tensor, weight_v: Tensor) -> Tensor:  # type: ignore[override]
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight: Tensor) -> tuple[Tensor, Tensor]:
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module: T_module, name: str = "weight", dim: int | None = 0) -> T_module:
    """Parametrize ``module.<name>`` as ``g * v / ||v||`` (PyTorch's parametrization form):
    the originals are ``parametrizations.<name>.original0`` (``g``, the norm over every dim but
    ``dim``) and ``original1`` (``v``). A state_dict saved with the old hook API
    (``<name>_g``, ``<name>_v``) loads too: its keys are renamed on load.

    Example:
        >>> m = weight_norm(Linear(20, 40))
        >>> m.parametrizations.weight.original0.shape
        torch.Size([40, 1])
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict: dict[str, Any], prefix: str, *_: Any) -> None:
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# ---- spectral_norm ---------------------------------------------------------------------------

class _SpectralNorm(Module):
    """``weight / sigma`` with ``sigma`` from power iteration on the buffers ``_u``, ``_v``
    (refined in training mode, 15 steps at registration); a 1-D weight is just normalised."""

    _u: Tensor
    _v: Tensor

    def __init__(self, weight: Tensor, n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of [-{ndim}, "
                             f"{ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            mat = self._reshape_weight_to_matrix(weight)
            h, w = mat.shape
            with no_grad():
                u = init.normal_(mat.new_empty(h))
                v = init.normal_(mat.new_empty(w))
                self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
                self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            self._power_method(mat, 15)

    def _reshape_weight_to_matrix(self, weight: Tensor) -> Tensor:
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, mat: Tensor, n_power_iterations: int) -> None:
        """Refine ``_u`` and ``_v`` in place (no gradient)."""
        with no_grad():
            for _ in range(n_power_iterations):
                self._u = F.normalize(mat.mv(self._v), dim=0, eps=self.eps, out=self._u)
                self._v = F.normalize(mat.mH.mv(self._u), dim=0, eps=self.eps, out=self._v)

    def forward(self, weight: Tensor) -> Tensor:  # type: ignore[override]
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        return weight / vdot(u, mat.mv(v))

    def right_inverse(self, value: Tensor) -> Tensor:
        return value


def spectral_norm(module: T_module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None) -> T_module:
    """Parametrize ``module.<name>`` as ``weight / sigma(weight)``, ``sigma`` its largest
    singular value estimated by power iteration (buffers ``parametrizations.<name>.0._u`` and
    ``_v``, refined ``n_power_iterations`` times per access in training mode; eval mode uses
    them as stored). ``dim`` defaults to 0 (1 for transposed convolutions).

    Example:
        >>> m = spectral_norm(Linear(20, 40))
        >>> m.parametrizations.weight[0]._u.shape
        torch.Size([40])
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations,
                                    default_dim(module) if dim is None else dim, eps))
    return module
