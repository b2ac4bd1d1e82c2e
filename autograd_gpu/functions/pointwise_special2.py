"""More special functions: the ``torch.special`` Bessel functions ``bessel_j0``/``j1``/``y0``/
``y1``, ``modified_bessel_k0``/``k1`` (and ``scaled_``), ``airy_ai``, the orthogonal
polynomials (Chebyshev ``T U V W`` and shifted, Hermite ``H He``, Laguerre ``L``, Legendre
``P``), and the regularised incomplete gamma functions ``igamma``/``igammac``
(``special.gammainc``/``gammaincc``). See ``backends/pointwise_bessel``, ``pointwise_poly``
and ``pointwise_igamma`` for the algorithms.

PyTorch's rules: the Bessel functions and polynomials promote integer inputs to the default
float dtype, refuse float16, and define no derivative (their results never require grad);
``igamma`` takes floating results only (float16 included), with a derivative in ``x`` only.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..ops import pointwise_special as PS
from ..tensor import Tensor
from .arith import _binary, _is_scalar, _promote, as_tensor_like
from .checks import expect_tensor, invalid_arguments
from .inplace_ops import inplace
from .out import check_out_grad
from .pointwise_binary import _floated
from .pointwise_special import _no_derivative
from .pointwise_unary import _kernel_error, finish

bessel_j0 = _no_derivative("bessel_j0", "bessel_j0", "input", "The Bessel function of the first "
                           "kind of order 0, ``J0``.")
bessel_j1 = _no_derivative("bessel_j1", "bessel_j1", "input", "The Bessel function of the first "
                           "kind of order 1, ``J1``.")
bessel_y0 = _no_derivative("bessel_y0", "bessel_y0", "input", "The Bessel function of the second "
                           "kind of order 0, ``Y0`` (-inf at 0, nan below).")
bessel_y1 = _no_derivative("bessel_y1", "bessel_y1", "input", "The Bessel function of the second "
                           "kind of order 1, ``Y1`` (-inf at 0, nan below).")
modified_bessel_k0 = _no_derivative("modified_bessel_k0", "modified_bessel_k0", "input",
                                    "The modified Bessel function of the second kind of order "
                                    "0, ``K0`` (inf at 0, nan below).")
modified_bessel_k1 = _no_derivative("modified_bessel_k1", "modified_bessel_k1", "input",
                                    "The modified Bessel function of the second kind of order "
                                    "1, ``K1`` (inf at 0, nan below).")
scaled_modified_bessel_k0 = _no_derivative("scaled_modified_bessel_k0",
                                           "scaled_modified_bessel_k0", "x",
                                           "``exp(x) K0(x)``.")
scaled_modified_bessel_k1 = _no_derivative("scaled_modified_bessel_k1",
                                           "scaled_modified_bessel_k1", "x",
                                           "``exp(x) K1(x)``.")
airy_ai = _no_derivative("airy_ai", "airy_ai", "x", "The Airy function ``Ai(x)``.")


def _polynomial(name: str, doc: str) -> Callable[..., Tensor]:
    """``torch.special.<name>(input, n, *, out=None)``: a tensor and a tensor or number either
    way round, promoted together (integers to the default float dtype), no derivative."""
    fn_name = "special_" + name

    def fn(input: Any, n: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
        ok = all(isinstance(v, Tensor) or (_is_scalar(v) and not isinstance(v, complex))
                 for v in (input, n))
        if not ok or not (isinstance(input, Tensor) or isinstance(n, Tensor)):
            raise invalid_arguments(fn_name, (input, n), {})
        a, b = _floated(input, n)
        t = a if isinstance(a, Tensor) else b
        if t.dtype is dtypes.float16:
            raise _kernel_error(name + "_cpu", t)
        if not isinstance(a, Tensor):
            a = as_tensor_like(a, b).to(b.dtype)
        if not isinstance(b, Tensor):
            b = as_tensor_like(b, a).to(a.dtype)
        with no_grad():
            result = _binary(PS.Polynomial, a, b, name=name)
        return finish(fn_name, result, out, (input, n))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", "Chebyshev ``T_n(x)``.")
chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", "Chebyshev ``U_n(x)``.")
chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", "Chebyshev ``V_n(x)``.")
chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", "Chebyshev ``W_n(x)``.")
shifted_chebyshev_polynomial_t = _polynomial("shifted_chebyshev_polynomial_t",
                                             "``T_n(2x - 1)``.")
shifted_chebyshev_polynomial_u = _polynomial("shifted_chebyshev_polynomial_u",
                                             "``U_n(2x - 1)``.")
shifted_chebyshev_polynomial_v = _polynomial("shifted_chebyshev_polynomial_v",
                                             "``V_n(2x - 1)``.")
shifted_chebyshev_polynomial_w = _polynomial("shifted_chebyshev_polynomial_w",
                                             "``W_n(2x - 1)``.")
hermite_polynomial_h = _polynomial("hermite_polynomial_h", "The physicists' Hermite ``H_n(x)``.")
hermite_polynomial_he = _polynomial("hermite_polynomial_he",
                                    "The probabilists' Hermite ``He_n(x)``.")
laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", "Laguerre ``L_n(x)``.")
legendre_polynomial_p = _polynomial("legendre_polynomial_p", "Legendre ``P_n(x)``.")


def _igamma(name: str, upper: bool, input: Any, other: Any,  # noqa: A002
            out: Tensor | None, method: bool = False) -> Tensor:
    """``igamma``/``igammac`` under the spelling ``name``: two tensors, promoted; floating
    results only (PyTorch has no integer kernel)."""
    shift = 0 if method else 1
    if not method:
        expect_tensor(name, "input", 1, input)
    expect_tensor(name, "other", 1 + shift, other)
    if out is not None:
        check_out_grad(name, (input, other), out)
    a, x = _promote(input, other)
    if not a.dtype.is_floating_point:
        raise _kernel_error(("igammac" if upper else "igamma") + "_cpu", a)
    return finish(name, _binary(PS.Igamma, a, x, upper=upper), out, (input, other))


def igamma(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The regularised lower incomplete gamma function ``P(input, other)``; only ``other``
    has a derivative."""
    return _igamma("igamma", False, input, other, out)


def igammac(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The regularised upper incomplete gamma function ``Q = 1 - P``."""
    return _igamma("igammac", True, input, other, out)


def gammainc(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """``torch.special.gammainc`` (``igamma``)."""
    return _igamma("special_gammainc", False, input, other, out)


def gammaincc(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """``torch.special.gammaincc`` (``igammac``)."""
    return _igamma("special_gammaincc", True, input, other, out)


def igamma_method(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``input.igamma(other)``."""
    return _igamma("igamma", False, input, other, None, method=True)


def igammac_method(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """``input.igammac(other)``."""
    return _igamma("igammac", True, input, other, None, method=True)


def igamma_(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """In-place ``igamma``."""
    return inplace(input, igamma_method, other)


def igammac_(input: Tensor, other: Any) -> Tensor:  # noqa: A002
    """In-place ``igammac``."""
    return inplace(input, igammac_method, other)
