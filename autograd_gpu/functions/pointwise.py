"""Pointwise math beyond the basics: trigonometric and hyperbolic functions, logs and
exponentials of other bases, rounding variants, special functions (erf, lgamma, digamma, ...),
binary and ternary pointwise ops (atan2, hypot, lerp, addcmul, ...).

The functions live in ``pointwise_unary``, ``pointwise_binary`` and ``pointwise_special``;
this module gathers them. ``__all__`` lists the ``torch.*`` names this family adds;
``TENSOR_METHODS`` the ``Tensor`` methods (name -> function taking the tensor first), installed
by ``functions/__init__``: the methods and in-place forms of these functions (the basic
functions' in-place forms and other names, ``sin_``, ``absolute``, ..., are ``aliases``').
"""

from __future__ import annotations

from typing import Any, Callable

from ..ops import pointwise as P
from ..tensor import Tensor
from . import pointwise_special as PS
from .pointwise_binary import (
    addcdiv, addcmul, arctan2, atan2, clamp_max, clamp_max_, clamp_min, clamp_min_, copysign,
    fmax, fmin, fmod, heaviside, hypot, ldexp, ldexp_, lerp, logaddexp, logaddexp2, nextafter,
    xlogy,
)
from .pointwise_special import (
    digamma, erf, erfc, erfinv, i0, lgamma, mvlgamma, mvlgamma_, polygamma, polygamma_,
)
from .pointwise_special2 import igamma, igamma_, igammac, igammac_
from .pointwise_special2 import igamma_method, igammac_method
from .pointwise_unary import (
    acos, acosh, angle, arccos, arccosh, arcsin, arcsinh, arctan, arctanh, asin, asinh, atan,
    atanh, ceil, cosh, deg2rad, exp2, fix, float_power, float_power_, frac, in_place, isneginf,
    isposinf, log2, log10, logit, nan_to_num, no_grad_inplace, positive, rad2deg, round, sgn,
    signbit, sinc, sinh, tan, trunc,
)

_UNARY = (
    tan, sinh, cosh, asin, acos, atan, asinh, acosh, atanh, arcsin, arccos, arctan, arcsinh,
    arccosh, arctanh, log2, log10, exp2, trunc, fix, frac, ceil, erf, erfc, erfinv, lgamma,
    digamma, sinc, sgn, deg2rad, rad2deg, i0,
)

TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    **{f.__name__: f for f in _UNARY},
    **{f.__name__ + "_": in_place(f) for f in _UNARY},
    "round": lambda t, *, decimals=None: round(t, decimals=decimals, _method=True),
    "round_": in_place(lambda t, *, decimals=None: round(t, decimals=decimals, _method=True),
                       "round_"),
    "nan_to_num": lambda t, *args, **kwargs: nan_to_num(t, *args, _method=True, **kwargs),
    "nan_to_num_": in_place(lambda t, *args, **kwargs: nan_to_num(t, *args, _method=True,
                                                                  **kwargs), "nan_to_num_"),
    "logit": lambda t, *args, **kwargs: logit(t, *args, _method=True, **kwargs),
    "logit_": in_place(lambda t, *args, **kwargs: logit(t, *args, _method=True, **kwargs),
                       "logit_"),
    "signbit": signbit,
    "isposinf": isposinf,
    "isneginf": isneginf,
    "positive": positive,
    "angle": angle,
    "float_power": lambda t, exponent: float_power(t, exponent, _method=True),
    "float_power_": float_power_,
    "polygamma": PS.polygamma_method,
    "polygamma_": polygamma_,
    "mvlgamma": mvlgamma,
    "mvlgamma_": mvlgamma_,
    "igamma": igamma_method,
    "igamma_": igamma_,
    "igammac": igammac_method,
    "igammac_": igammac_,
    "clamp_min": lambda t, min: clamp_min(t, min, _method=True),
    "clamp_min_": clamp_min_,
    "clamp_max": lambda t, max: clamp_max(t, max, _method=True),
    "clamp_max_": clamp_max_,
    "lerp": lambda t, end, weight: lerp(t, end, weight, _method=True),
    "lerp_": in_place(lerp),
    "addcmul": lambda t, tensor1, tensor2, *, value=1: addcmul(
        t, tensor1, tensor2, value=value, _method=True),
    "addcmul_": in_place(addcmul),
    "addcdiv": lambda t, tensor1, tensor2, *, value=1: addcdiv(
        t, tensor1, tensor2, value=value, _method=True),
    "addcdiv_": in_place(addcdiv),
}
for _name, _node in (("asinh", P.Asinh), ("acosh", P.Acosh), ("atanh", P.Atanh),
                     ("arcsinh", P.Asinh), ("arccosh", P.Acosh), ("arctanh", P.Atanh)):
    TENSOR_METHODS[_name + "_"] = no_grad_inplace(_name, _node)


def _binary_methods() -> None:
    """``x.atan2(y)`` and ``x.atan2_(y)`` for the binary functions (argument positions as a
    method's); ``logaddexp``, ``logaddexp2``, ``fmax`` and ``fmin`` have no in-place form."""
    for fn in (atan2, arctan2, hypot, logaddexp, logaddexp2, nextafter, fmax, fmin, ldexp,
               heaviside, copysign, fmod, xlogy):
        def method(t: Tensor, other: Any, _fn: Callable[..., Tensor] = fn) -> Tensor:
            return _fn(t, other, _method=True)

        method.__name__ = fn.__name__
        TENSOR_METHODS[fn.__name__] = method
        if fn not in (logaddexp, logaddexp2, fmax, fmin):
            TENSOR_METHODS[fn.__name__ + "_"] = in_place(method, fn.__name__ + "_")
    TENSOR_METHODS["ldexp_"] = ldexp_


_binary_methods()

# torch.tan_(x) and friends: PyTorch's torch-level in-place functions
_TORCH_INPLACE = [
    "tan_", "sinh_", "cosh_", "asin_", "acos_", "atan_", "asinh_", "acosh_", "atanh_",
    "arcsin_", "arccos_", "arctan_", "arcsinh_", "arccosh_", "arctanh_", "log2_", "log10_",
    "exp2_", "trunc_", "fix_", "frac_", "ceil_", "round_", "erf_", "erfc_", "sinc_",
    "nan_to_num_", "deg2rad_", "rad2deg_", "logit_", "i0_", "xlogy_", "ldexp_", "clamp_min_",
    "clamp_max_",
]
globals().update({name: TENSOR_METHODS[name] for name in _TORCH_INPLACE})

__all__: list[str] = [
    "tan", "sinh", "cosh", "asin", "acos", "atan", "asinh", "acosh", "atanh", "arcsin",
    "arccos", "arctan", "arcsinh", "arccosh", "arctanh", "log2", "log10", "exp2", "trunc", "fix",
    "frac", "ceil", "round", "erf", "erfc", "erfinv", "lgamma", "digamma", "polygamma",
    "mvlgamma", "sinc", "nan_to_num", "signbit", "isposinf", "isneginf", "sgn", "positive",
    "deg2rad", "rad2deg", "logit",
    "i0", "angle", "float_power", "atan2", "arctan2", "hypot", "logaddexp", "logaddexp2",
    "xlogy", "copysign", "heaviside", "fmod", "fmax", "fmin", "nextafter", "ldexp", "lerp",
    "addcmul", "addcdiv", "clamp_min", "clamp_max", "igamma", "igammac", *_TORCH_INPLACE,
]
