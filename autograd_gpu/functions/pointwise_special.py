"""Special functions: ``erf``, ``erfc``, ``erfinv``, ``lgamma``, ``digamma``, ``polygamma``,
``mvlgamma`` and ``i0`` (``torch.*`` and ``torch.special``), and the ``torch.special``-only
``ndtr``, ``ndtri``, ``log_ndtr``, ``erfcx``, ``i0e``, ``i1``, ``i1e``, ``entr``, ``xlog1py``
and ``zeta``. Integer and bool inputs compute in the default float dtype.

Accuracy: within a few units in the last place of a double against high-precision values
(``backends/pointwise_special``); where PyTorch's own kernel is less accurate (``polygamma(1,
x)``: about 5e-10) our values are the accurate ones.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..ops import pointwise_special as PS
from ..tensor import Tensor
from .arith import _float_input, _is_scalar, _type_name, as_tensor_like
from .checks import expect_tensor, invalid_arguments
from .inplace_ops import inplace
from .out import check_out_grad
from .pointwise_binary import _floated, xlog
from .pointwise_unary import _kernel_error, finish, float_unary

erf = float_unary("erf", PS.Erf, "The error function ``2/sqrt(pi) int_0^x exp(-t**2) dt``.")
erfc = float_unary("erfc", PS.Erfc, "``1 - erf(x)``, accurate where it is small.")
erfinv = float_unary("erfinv", PS.Erfinv, "The inverse of ``erf`` on ``[-1, 1]`` (+-inf at "
                     "+-1, nan outside).")
lgamma = float_unary("lgamma", PS.Lgamma, "``log|gamma(x)|``; inf at 0 and the negative "
                     "integers.")
digamma = float_unary("digamma", PS.Digamma, "``d lgamma(x) / dx``; -inf at 0, nan at the "
                      "negative integers.")
i0 = float_unary("i0", PS.I0, "The modified Bessel function of the first kind, order 0.")
i0e = float_unary("special_i0e", PS.I0e, "``exp(-|x|) i0(x)``.")
i1 = float_unary("special_i1", PS.I1, "The modified Bessel function of the first kind, order "
                 "1.")
i1e = float_unary("special_i1e", PS.I1e, "``exp(-|x|) i1(x)``.")
ndtr = float_unary("special_ndtr", PS.Ndtr, "The standard normal CDF, ``(1 + erf(x / sqrt 2)) "
                   "/ 2`` (PyTorch's formula).")
ndtri = float_unary("special_ndtri", PS.Ndtri, "The standard normal quantile: the inverse of "
                    "``ndtr`` on ``[0, 1]``.", half=False)
log_ndtr = float_unary("special_log_ndtr", PS.LogNdtr, "``log(ndtr(x))``, accurate far into "
                       "both tails.", half=False)
erfcx = float_unary("special_erfcx", PS.Erfcx, "The scaled complementary error function "
                    "``exp(x**2) erfc(x)``.", half=False)
entr = float_unary("special_entr", PS.Entr, "``-x log(x)``; 0 at 0, -inf below 0.")


def _no_derivative(name: str, entry: str, arg: str, doc: str) -> Callable[..., Tensor]:
    """``torch.special.<name>``: ``backend.<entry>`` on ``input`` (integers promoted, float16
    refused), a result that never requires grad (PyTorch defines no derivative)."""
    fn_name = "special_" + name

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
        expect_tensor(fn_name, arg, 1, input)
        if input.dtype is dtypes.float16:
            raise _kernel_error(name + "_cpu", input)
        with no_grad():
            result = PS.NoDerivative.apply(_float_input(input), entry=entry)
        return finish(fn_name, result, out, (input,))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


modified_bessel_i0 = _no_derivative("modified_bessel_i0", "i0", "input", "``I_0(x)`` (``i0``), "
                                    "without a derivative.")
modified_bessel_i1 = _no_derivative("modified_bessel_i1", "i1", "input", "``I_1(x)`` "
                                    "(``special.i1``), without a derivative.")
spherical_bessel_j0 = _no_derivative("spherical_bessel_j0", "spherical_bessel_j0", "x",
                                     "The spherical Bessel function ``j0(x) = sin(x) / x``, "
                                     "without a derivative.")


def polygamma(n: Any, input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The ``n``-th derivative of ``digamma`` (``n = 0``: digamma itself); a tensor ``n`` is
    taken for its value, as PyTorch's argument parser does.

    Example:
        >>> polygamma(1, tensor([1.0]))  # pi**2 / 6
        tensor([1.6449])
    """
    n = _order(n)
    expect_tensor("polygamma", "input", 2, input)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    if out is not None:
        check_out_grad("polygamma", (input,), out)
    return finish("polygamma", PS.Polygamma.apply(_float_input(input), n=n), out, (input,))


def _order(n: Any) -> int:
    """``polygamma``'s ``n`` as PyTorch's parser takes an int (a 0-d integer tensor too)."""
    if isinstance(n, Tensor) and n.ndim == 0 and not n.dtype.is_floating_point and \
            n.dtype is not dtypes.bool:
        n = int(n.item())
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"polygamma(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    return n


def polygamma_method(input: Tensor, n: Any) -> Tensor:  # noqa: A002
    """``input.polygamma(n)``."""
    return polygamma(n, input)


def polygamma_(input: Tensor, n: Any) -> Tensor:  # noqa: A002
    """In-place ``input.polygamma(n)`` (PyTorch records PolygammaBackward1)."""
    n = _order(n)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    return inplace(input, lambda x, n: PS.Polygamma.apply(_float_input(x), n=n, inplace=True), n)


def mvlgamma(input: Tensor, p: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The multivariate log-gamma function of dimension ``p``, ``sum_{j<p} lgamma(x - j/2)
    + p (p - 1) / 4 log(pi)`` (defined for ``x > (p - 1) / 2``; PyTorch does not check)."""
    expect_tensor("mvlgamma", "input", 1, input)
    if not isinstance(p, int) or isinstance(p, bool):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not "
                        f"{type(p).__name__}")
    if input.dtype is dtypes.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    x = _float_input(input)
    if out is not None:
        check_out_grad("mvlgamma", (input,), out)
    return finish("mvlgamma", PS.Mvlgamma.apply(x, p=p), out, (input,))


def mvlgamma_(input: Tensor, p: Any) -> Tensor:  # noqa: A002
    """In-place ``mvlgamma``; integer tensors are refused (PyTorch's words)."""
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"mvlgamma: result type {_type_name(input.dtype)} can't be cast to "
                           f"the desired output type {_type_name(dtypes.get_default_dtype())}")
    return inplace(input, mvlgamma, p)


def xlog1py(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """``input * log1p(other)``, 0 where ``input == 0`` unless ``other`` is nan."""
    return xlog("special_xlog1py", "SpecialXlog1Py", True, input, other, out, False)


def zeta(input: Any, other: Any, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """Hurwitz's zeta function ``sum_k (other + k) ** -input``, with PyTorch's domain: inf at
    ``input == 1`` and at integer ``other <= 0``, nan for ``input < 1`` (and for a negative
    non-integer ``other`` unless ``input`` is an integer). Only ``other`` has a derivative."""
    ok = all(isinstance(v, Tensor) or _is_scalar(v) for v in (input, other))
    if not ok or not (isinstance(input, Tensor) or isinstance(other, Tensor)):
        raise invalid_arguments("special_zeta", (input, other), {})
    if out is not None:
        check_out_grad("special_zeta", (input, other), out)
    index = 1 if not isinstance(input, Tensor) else 2 if not isinstance(other, Tensor) else 0
    a, b = _floated(input, other)
    t = a if isinstance(a, Tensor) else b
    if t.dtype is dtypes.float16:
        raise _kernel_error("zeta_cpu", t)
    if index == 1:
        a = as_tensor_like(a, b).to(b.dtype)
    from .arith import _binary

    return finish("special_zeta", _binary(PS.Zeta, a, b, name=f"SpecialZetaBackward{index}"),
                  out, (input, other))

