"""Pointwise unary functions beyond the basics: ``tan``, ``sinh``, ``cosh``, their inverses
(and the ``arc*`` aliases), ``log2``, ``log10``, ``exp2``, rounding (``trunc``/``fix``,
``ceil``, ``round(decimals=)``, ``frac``), ``sgn``, ``angle``, ``signbit``, ``positive``,
``deg2rad``/``rad2deg``, ``nan_to_num``, ``sinc``, ``logit`` and ``float_power``, with their
``out=`` and in-place forms.

Integer and bool inputs of the float functions compute in the default float dtype, as PyTorch.
"""

from __future__ import annotations

import numbers
from typing import Any, Callable

from .. import dtypes
from ..autograd.node import Node
from ..ops import pointwise as P
from ..tensor import Tensor
from .arith import _float_input, _type_name, pow
from .checks import arg_position, expect_tensor, invalid_arguments
from .inplace_ops import inplace
from .out import check_out_grad, write_out


def finish(name: str, result: Tensor, out: Tensor | None, inputs: tuple[Any, ...]) -> Tensor:
    """``result``, or written into ``out`` (PyTorch's ``out=``: see ``functions.out``)."""
    if out is None:
        return result
    return write_out(name, result, out, inputs=inputs)  # type: ignore[no-any-return]


def exact_out(out: Any, dtype: dtypes.dtype, message: str | None = None) -> None:
    """PyTorch's refusal of an ``out`` whose dtype is not the result's ``dtype`` exactly (the
    functions whose kernels take no cast): ``message``, by default ``Found dtype Float but
    expected Double``."""
    if isinstance(out, Tensor) and out.dtype is not dtype:
        raise RuntimeError(message or f"Found dtype {_type_name(out.dtype)} but expected "
                           f"{_type_name(dtype)}")


def float_unary(name: str, node: type[Node], doc: str, half: bool = True,
                **params: Any) -> Callable[..., Tensor]:
    """The ``torch`` function ``name``: ``node`` on ``input``, integer and bool inputs promoted
    to the default float dtype; with ``out=``. ``half=False``: PyTorch has no float16 kernel."""
    kernel = name.replace("special_", "") + "_cpu"

    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
        expect_tensor(name, "input", 1, input)
        if not half and input.dtype is dtypes.float16:
            raise _kernel_error(kernel, input)
        if out is not None:
            check_out_grad(name, (input,), out)
        return finish(name, node.apply(_float_input(input), **params), out, (input,))

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = doc
    return fn


def no_grad_inplace(name: str, node: type[Node]) -> Callable[..., Tensor]:
    """``t.asinh_()`` and friends: PyTorch records ``<Op>Backward1``, which refuses backward."""

    def fn(input: Tensor) -> Tensor:  # noqa: A002
        return node.apply(_float_input(input), inplace=True)

    fn.__name__ = name
    return in_place(fn, name + "_")


def in_place(fn: Callable[..., Tensor], name: str | None = None) -> Callable[..., Tensor]:
    """``t.<fn>_(*args)``: ``fn``'s result written into ``t`` (PyTorch's cast rules)."""

    def fn_(input: Tensor, *args: Any, **kwargs: Any) -> Tensor:  # noqa: A002
        return inplace(input, fn, *args, **kwargs)

    fn_.__name__ = fn_.__qualname__ = name or fn.__name__ + "_"
    fn_.__doc__ = f"In-place ``{fn.__name__}``."
    return fn_


def _kernel_error(kernel: str, t: Tensor) -> NotImplementedError:
    """PyTorch's ``"<kernel>" not implemented for '<type>'`` (``kernel``: the CPU name); on
    CUDA the kernel is named ``<op>_cuda``."""
    if t._device.type != "cpu":
        for suffix in ("_vml_cpu", "_cpu_out", "_cpu"):
            kernel = kernel.replace(suffix, "_" + t._device.type)
    return NotImplementedError(f"\"{kernel}\" not implemented for '{_type_name(t.dtype)}'")


tan = float_unary("tan", P.Tan, "Tangent (radians).")
sinh = float_unary("sinh", P.Sinh, "Hyperbolic sine.")
cosh = float_unary("cosh", P.Cosh, "Hyperbolic cosine.")
asin = float_unary("asin", P.Asin, "Inverse sine; nan outside ``[-1, 1]``.")
acos = float_unary("acos", P.Acos, "Inverse cosine; nan outside ``[-1, 1]``.")
atan = float_unary("atan", P.Atan, "Inverse tangent.")
asinh = float_unary("asinh", P.Asinh, "Inverse hyperbolic sine.")
acosh = float_unary("acosh", P.Acosh, "Inverse hyperbolic cosine; nan below 1.")
atanh = float_unary("atanh", P.Atanh, "Inverse hyperbolic tangent; +-inf at +-1, nan beyond.")
arcsin = float_unary("arcsin", P.Asin, "Alias of ``asin``.")
arccos = float_unary("arccos", P.Acos, "Alias of ``acos``.")
arctan = float_unary("arctan", P.Atan, "Alias of ``atan``.")
arcsinh = float_unary("arcsinh", P.Asinh, "Alias of ``asinh``.")
arccosh = float_unary("arccosh", P.Acosh, "Alias of ``acosh``.")
arctanh = float_unary("arctanh", P.Atanh, "Alias of ``atanh``.")
log2 = float_unary("log2", P.Log2, "Base-2 logarithm.")
log10 = float_unary("log10", P.Log10, "Base-10 logarithm.")
exp2 = float_unary("exp2", P.Exp2, "``2 ** x``.")
sinc = float_unary("sinc", P.Sinc, "Normalised sinc, ``sin(pi x) / (pi x)``, 1 at 0 (computed "
                   "as PyTorch computes it, in the input's dtype).")


def deg2rad(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """Degrees to radians, ``x * pi / 180`` (Deg2RadBackward0)."""
    return _scaled("deg2rad", input, "Deg2RadBackward0", 0.017453292519943295, out)


def rad2deg(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """Radians to degrees, ``x * 180 / pi`` (Rad2DegBackward0)."""
    return _scaled("rad2deg", input, "Rad2DegBackward0", 57.29577951308232, out)


def _scaled(fn: str, input: Tensor, name: str, factor: float,  # noqa: A002
            out: Tensor | None) -> Tensor:
    expect_tensor(fn, "input", 1, input)
    check_out_grad(fn, (input,), out) if out is not None else None
    return finish(fn, P.Deg2Rad.apply(_float_input(input), name=name, factor=factor), out,
                  (input,))


# ---- rounding ----------------------------------------------------------------------------------

def _rounding(fn: str, kernel: str, node: type[Node], input: Tensor,  # noqa: A002
              out: Tensor | None, **params: Any) -> Tensor:
    """A rounding function: integers pass unchanged (an ``out`` of another dtype refused, as
    PyTorch), bool is refused with ``kernel``'s error."""
    expect_tensor(fn, "input", 1, input)
    if input.dtype is dtypes.bool or input.dtype.is_complex and fn == "round":
        raise _kernel_error(kernel, input)
    if input.dtype.is_complex:
        raise NotImplementedError(f"{fn} is not supported for complex inputs")
    if out is not None:
        check_out_grad(fn, (input,), out)
        exact_out(out, input.dtype)
    return finish(fn, node.apply(input, **params), out, (input,))


def trunc(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """Rounds toward zero; integers pass unchanged. The gradient is 0 (TruncBackward0)."""
    return _rounding("trunc", "trunc_vml_cpu", P.Trunc, input, out)


def fix(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """Alias of ``trunc``."""
    return _rounding("fix", "trunc_vml_cpu", P.Trunc, input, out)


def ceil(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The smallest integer-valued number >= ``x``; the gradient is 0 (CeilBackward0)."""
    return _rounding("ceil", "ceil_vml_cpu", P.Ceil, input, out)


def round(input: Tensor, *, decimals: Any = None,  # noqa: A001,A002
          out: Tensor | None = None, _method: bool = False) -> Tensor:
    """Rounds half to even; with ``decimals`` to that many decimal places (negative: tens,
    hundreds, ...), scaling by ``10 ** decimals`` in the input's dtype as PyTorch does.

    The gradient is 0 (RoundBackward0; RoundBackward1 when ``decimals`` is given). Integer
    inputs pass unchanged without ``decimals`` and are refused with it.

    Example:
        >>> round(tensor([0.5, 1.5, 1.2345]), decimals=2)
        tensor([0.5000, 1.5000, 1.2300])
    """
    if decimals is None:
        return _rounding("round", "round_vml_cpu", P.Round, input, out, decimals=None)
    if not isinstance(decimals, int) or isinstance(decimals, bool):
        if not _method:  # NOTE: PyTorch's function has two overloads, its method one
            raise invalid_arguments("round", (input,), {"decimals": decimals})
        raise TypeError(f"round(): argument 'decimals' must be int, not {type(decimals).__name__}")
    expect_tensor("round", "input", 1, input)
    if not input.dtype.is_floating_point:
        raise _kernel_error("round_vml_cpu" if decimals == 0 else "round_cpu", input)
    return _rounding("round", "round_cpu", P.Round, input, out, decimals=decimals)


def frac(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """``x - trunc(x)`` (the sign of ``x``; nan at +-inf); the gradient passes unchanged."""
    expect_tensor("frac", "input", 1, input)
    if not input.dtype.is_floating_point:
        raise _kernel_error("frac_cpu", input)
    if out is not None:
        check_out_grad("frac", (input,), out)
        exact_out(out, input.dtype)
    return finish("frac", P.Frac.apply(input), out, (input,))


# ---- signs ---------------------------------------------------------------------------------------

def sgn(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """``sign`` for real tensors (SgnBackward0, gradient 0); bool stays bool."""
    expect_tensor("sgn", "input", 1, input)
    if out is not None:
        check_out_grad("sgn", (input,), out)
        exact_out(out, input.dtype)
    if input.dtype.is_complex and input.requires_grad:
        # NOTE: z / |z| (0 at 0) composed, so the gradient is the true one (PyTorch's formula);
        # the grad_fn is then that of the last op, not SgnBackward0.
        r = input.abs()
        nz = r != 0
        return finish("sgn", (input / r.where(nz, 1.0)).where(nz, 0.0), out, (input,))
    return finish("sgn", P.Sgn.apply(input), out, (input,))


def angle(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """The argument of a real number: pi where ``x < 0``, else 0 (nan stays nan); integer
    inputs give the default float dtype. The gradient is 0 (AngleBackward0). A complex
    number's is ``atan2(imag, real)`` (real dtype), with gradient ``grad * i z / |z|^2``."""
    expect_tensor("angle", "input", 1, input)
    if out is not None:
        check_out_grad("angle", (input,), out)
    if input.dtype.is_complex:
        from ..ops.complex import Angle

        return finish("angle", Angle.apply(input), out, (input,))
    return finish("angle", P.Angle.apply(_float_input(input)), out, (input,))


def signbit(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """True where the sign bit is set (``-0.0`` and negative nan included); a bool tensor,
    no gradient."""
    from .arith import _nograd_unary  # the same no-gradient path as isnan

    expect_tensor("signbit", "input", 1, input)
    if out is not None:
        exact_out(out, dtypes.bool, "signbit does not support non-boolean outputs.")
    if input.dtype.is_floating_point:
        result = _nograd_unary("signbit", "")(input)
    else:
        from .compare import lt

        result = lt(input, 0) if input.dtype is not dtypes.bool else lt(input, False)
    return finish("signbit", result, out, (input,))


def _is_signed_inf(name: str, sign: float) -> Callable[..., Tensor]:
    def fn(input: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
        expect_tensor(name, "input", 1, input)
        if input.dtype.is_complex:
            raise RuntimeError(f"{name} does not support complex inputs.")
        if out is not None:
            exact_out(out, dtypes.bool, f"{name} does not support non-boolean outputs.")
        from .compare import eq

        # NOTE: integer and bool inputs compare in float: never infinite, all False
        return finish(name, eq(input, sign * float("inf")), out, ())

    fn.__name__ = fn.__qualname__ = name
    fn.__doc__ = (f"True where ``input`` is {'+' if sign > 0 else '-'}inf (a bool tensor, no "
                  "gradient; integer and bool inputs give all False, complex ones are refused).")
    return fn


isposinf = _is_signed_inf("isposinf", 1.0)
isneginf = _is_signed_inf("isneginf", -1.0)


def positive(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` itself (PyTorch's unary ``+``); refused for bool."""
    expect_tensor("positive", "input", 1, input)
    if input.dtype is dtypes.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ---- with parameters -------------------------------------------------------------------------

def _float_params(fn: str, names: tuple[str, ...], args: tuple[Any, ...],
                  kwargs: dict[str, Any], method: bool) -> list[Any]:
    """The optional ``float`` parameters ``names`` (after ``input``) from ``args`` and
    ``kwargs``, read as PyTorch's parser reads them: any real number or 0-d tensor, or None.
    Its TypeError names a positional argument's position (counted as ``method`` says)."""
    unknown = set(kwargs) - set(names)
    if len(args) > len(names) or unknown:
        raise TypeError(f"{fn}() got an unexpected argument" + (
            f" {sorted(unknown)[0]!r}" if unknown else "s"))
    out = []
    for i, name in enumerate(names):
        given = i < len(args)
        value = args[i] if given else kwargs.get(name)
        if isinstance(value, Tensor) and value.ndim == 0:
            value = value.item()
        if value is not None and not isinstance(value, numbers.Real):
            where = f" (position {arg_position(i + 2, method)})" if given else ""
            raise TypeError(f"{fn}(): argument '{name}'{where} must be float, not "
                            f"{type(value).__name__}")
        out.append(None if value is None else float(value))
    return out


def nan_to_num(input: Tensor, *args: Any, out: Tensor | None = None,  # noqa: A002
               _method: bool = False, **kwargs: Any) -> Tensor:
    """``nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None)``: nan replaced by
    ``nan``, +inf by ``posinf`` and -inf by ``neginf`` (by default the dtype's largest and
    smallest finite values). Integer and bool tensors pass unchanged.

    The gradient passes where ``x`` is finite and is 0 elsewhere (NanToNumBackward0).

    Example:
        >>> nan_to_num(tensor([float("nan"), float("inf"), 1.0]), posinf=9.0)
        tensor([0., 9., 1.])
    """
    expect_tensor("nan_to_num", "input", 1, input)
    nan, posinf, neginf = _float_params("nan_to_num", ("nan", "posinf", "neginf"), args,
                                        kwargs, _method)
    if out is not None:
        check_out_grad("nan_to_num", (input,), out)
        exact_out(out, input.dtype, "nan_to_num: dtype of out: "
                  f"{_type_name(getattr(out, 'dtype', input.dtype))} should be same as input: "
                  f"{_type_name(input.dtype)}")
    result = P.NanToNum.apply(input, nan=0.0 if nan is None else nan, posinf=posinf,
                              neginf=neginf)
    return finish("nan_to_num", result, out, (input,))


def logit(input: Tensor, *args: Any, out: Tensor | None = None,  # noqa: A002
          _method: bool = False, _name: str = "logit", **kwargs: Any) -> Tensor:
    """``logit(input, eps=None, *, out=None)``: ``log(x / (1 - x))``, with ``x`` clamped to
    ``[eps, 1 - eps]`` when ``eps`` is given.

    Outside ``[0, 1]`` (without ``eps``) the result and the gradient are nan; with ``eps`` the
    gradient is 0 where ``x`` was clamped, as PyTorch.
    """
    expect_tensor(_name, "input", 1, input)
    (eps,) = _float_params(_name, ("eps",), args, kwargs, _method)
    if out is not None:
        check_out_grad(_name, (input,), out)
    return finish(_name, P.Logit.apply(_float_input(input), eps=eps), out, (input,))


def float_power(input: Any, exponent: Any, *, out: Tensor | None = None,  # noqa: A002
                _method: bool = False) -> Tensor:
    """``input ** exponent`` in float64 (either may be a Python number): ``pow`` of the
    operands converted to double, as PyTorch (PowBackward0/1/2 after a ToCopyBackward0)."""
    ok = (isinstance(input, Tensor) and (isinstance(exponent, Tensor) or _real(exponent))) or \
        (_real(input) and isinstance(exponent, Tensor))
    if not ok:
        args = (exponent,) if _method else (input, exponent)
        raise invalid_arguments("float_power", args, {})
    if out is not None:
        check_out_grad("float_power", (input, exponent), out)
        exact_out(out, dtypes.float64, "the output given to float_power has dtype "
                  f"{_type_name(getattr(out, 'dtype', dtypes.float64))} but the operation's "
                  "result requires dtype Double")
    base, exp = _as_double(input), _as_double(exponent)
    return finish("float_power", pow(base, exp) if isinstance(base, Tensor) else
                  _rpow(base, exp), out, (input, exponent))


def _as_double(v: Any) -> Any:
    return v.to(dtypes.float64) if isinstance(v, Tensor) else float(v)


def _rpow(base: float, exponent: Tensor) -> Tensor:
    from .arith import rpow

    return rpow(exponent, base)


def _real(v: Any) -> bool:
    return isinstance(v, numbers.Real)


def float_power_(input: Tensor, exponent: Any) -> Tensor:  # noqa: A002
    """In-place ``float_power``: ``input`` must be float64."""
    if input.dtype is not dtypes.float64:
        raise RuntimeError("the base given to float_power_ has dtype "
                           f"{_type_name(input.dtype)} but the operation's result requires "
                           "dtype Double")
    return inplace(input, float_power, exponent)

