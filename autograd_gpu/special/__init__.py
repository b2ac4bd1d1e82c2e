"""``torch.special``: special functions (``erf``, ``gammaln``, ``logit``, ``ndtr``, Bessel
functions, ...), the ``torch.*`` aliases and the rest, NumPy/CuPy only (no SciPy).

Each function takes PyTorch's arguments (``out=`` included) and reports errors under
PyTorch's ``special_<name>`` spelling. The computations are ``functions/pointwise_*``'s; see
``backends/pointwise_special`` for the algorithms and their accuracy.
"""

from __future__ import annotations

from typing import Any

from ..functions import pointwise_special as _S
from ..functions import pointwise_special2 as _S2
from ..functions import pointwise_unary as _U
from ..functions.pointwise_binary import xlog as _xlog
from ..functions.pointwise_unary import finish as _finish
from ..functions.pointwise_unary import float_unary as _float_unary
from ..ops import pointwise as _P
from ..ops import pointwise_special as _PS
from ..ops import unary as _UN
from ..tensor import Tensor

erf = _float_unary("special_erf", _PS.Erf, "The error function.")
erfc = _float_unary("special_erfc", _PS.Erfc, "``1 - erf(x)``.")
erfinv = _float_unary("special_erfinv", _PS.Erfinv, "The inverse of ``erf``.")
erfcx = _S.erfcx
ndtr = _S.ndtr
ndtri = _S.ndtri
log_ndtr = _S.log_ndtr
i0 = _float_unary("special_i0", _PS.I0, "The modified Bessel function of order 0.")
i0e = _S.i0e
i1 = _S.i1
i1e = _S.i1e
entr = _S.entr
gammaln = _float_unary("special_gammaln", _PS.Lgamma, "``log|gamma(x)|`` (``lgamma``).")
digamma = _float_unary("special_digamma", _PS.Digamma, "``d lgamma / dx``.")
psi = _float_unary("special_psi", _PS.Digamma, "Alias of ``digamma``.")
expm1 = _float_unary("special_expm1", _UN.Expm1, "``exp(x) - 1``.")
exp2 = _float_unary("special_exp2", _P.Exp2, "``2 ** x``.")
log1p = _float_unary("special_log1p", _UN.Log1p, "``log(1 + x)``.")
expit = _float_unary("special_expit", _UN.Sigmoid, "The logistic sigmoid (``sigmoid``).")
sinc = _float_unary("special_sinc", _P.Sinc, "Normalised sinc, ``sin(pi x) / (pi x)``.")
xlog1py = _S.xlog1py
zeta = _S.zeta
modified_bessel_i0 = _S.modified_bessel_i0
modified_bessel_i1 = _S.modified_bessel_i1
spherical_bessel_j0 = _S.spherical_bessel_j0
airy_ai = _S2.airy_ai
bessel_j0 = _S2.bessel_j0
bessel_j1 = _S2.bessel_j1
bessel_y0 = _S2.bessel_y0
bessel_y1 = _S2.bessel_y1
chebyshev_polynomial_t = _S2.chebyshev_polynomial_t
chebyshev_polynomial_u = _S2.chebyshev_polynomial_u
chebyshev_polynomial_v = _S2.chebyshev_polynomial_v
chebyshev_polynomial_w = _S2.chebyshev_polynomial_w
gammainc = _S2.gammainc
gammaincc = _S2.gammaincc
hermite_polynomial_h = _S2.hermite_polynomial_h
hermite_polynomial_he = _S2.hermite_polynomial_he
laguerre_polynomial_l = _S2.laguerre_polynomial_l
legendre_polynomial_p = _S2.legendre_polynomial_p
modified_bessel_k0 = _S2.modified_bessel_k0
modified_bessel_k1 = _S2.modified_bessel_k1
scaled_modified_bessel_k0 = _S2.scaled_modified_bessel_k0
scaled_modified_bessel_k1 = _S2.scaled_modified_bessel_k1
shifted_chebyshev_polynomial_t = _S2.shifted_chebyshev_polynomial_t
shifted_chebyshev_polynomial_u = _S2.shifted_chebyshev_polynomial_u
shifted_chebyshev_polynomial_v = _S2.shifted_chebyshev_polynomial_v
shifted_chebyshev_polynomial_w = _S2.shifted_chebyshev_polynomial_w


def polygamma(n: Any, input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The ``n``-th derivative of ``digamma``."""
    if not isinstance(input, Tensor) and isinstance(n, int) and not isinstance(n, bool):
        raise TypeError("special_polygamma(): argument 'input' (position 2) must be Tensor, not "
                        f"{type(input).__name__}")
    return _S.polygamma(n, input, out=out)


def multigammaln(input: Tensor, p: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The multivariate log-gamma function (``mvlgamma``)."""
    if not isinstance(input, Tensor):
        raise TypeError("special_multigammaln(): argument 'input' (position 1) must be Tensor, "
                        f"not {type(input).__name__}")
    if not isinstance(p, int) or isinstance(p, bool):
        raise TypeError("special_multigammaln(): argument 'p' (position 2) must be int, not "
                        f"{type(p).__name__}")
    return _S.mvlgamma(input, p, out=out)


def round(input: Tensor, *, decimals: int = 0,  # noqa: A001,A002
          out: Tensor | None = None) -> Tensor:
    """``torch.round(input, decimals=decimals)`` (RoundBackward1, as PyTorch's)."""
    if not isinstance(input, Tensor):
        raise TypeError("special_round(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return _U.round(input, decimals=decimals, out=out)


def logit(input: Tensor, *args: Any, out: Tensor | None = None,  # noqa: A002
          **kwargs: Any) -> Tensor:
    """``logit(input, eps=None, *, out=None)``: ``log(x / (1 - x))``, ``x`` clamped to
    ``[eps, 1 - eps]`` when ``eps`` is given."""
    return _U.logit(input, *args, out=out, _name="special_logit", **kwargs)


def xlogy(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input * log(other)``, 0 where ``input == 0`` (``torch.xlogy``)."""
    return _xlog("special_xlogy", "Xlogy", False, input, other, out, False)


def softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """``torch.softmax``."""
    from ..functions.reduce import softmax as fn

    return fn(input, dim, dtype=dtype)


def log_softmax(input: Tensor, dim: int, *, dtype: Any = None) -> Tensor:  # noqa: A002
    """``torch.log_softmax``."""
    from ..functions.reduce import log_softmax as fn

    return fn(input, dim, dtype=dtype)


def logsumexp(input: Tensor, dim: Any, keepdim: bool = False, *,  # noqa: A002
              out: Tensor | None = None) -> Tensor:
    """``torch.logsumexp``."""
    from ..functions.reduce import logsumexp as fn

    return _finish("special_logsumexp", fn(input, dim, keepdim), out, (input,))


__all__ = [
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "digamma",
    "entr", "erf", "erfc", "erfcx", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "hermite_polynomial_h", "hermite_polynomial_he", "i0", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log1p", "log_ndtr", "log_softmax", "logit",
    "logsumexp", "modified_bessel_i0", "modified_bessel_i1", "modified_bessel_k0",
    "modified_bessel_k1", "multigammaln", "ndtr", "ndtri", "polygamma", "psi", "round",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1", "shifted_chebyshev_polynomial_t",
    "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
    "shifted_chebyshev_polynomial_w", "sinc", "softmax", "spherical_bessel_j0", "xlog1py", "xlogy",
    "zeta",
]
