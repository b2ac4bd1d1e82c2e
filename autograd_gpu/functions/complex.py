"""Complex numbers: ``real``/``imag`` (views), ``view_as_real``/``view_as_complex``, ``conj``
and ``conj_physical``, ``polar``, ``complex`` (``angle`` of complex input: ``pointwise_unary``).

NOTE: PyTorch's ``conj`` is lazy (a view with a conjugate bit, ``is_conj()`` True); ours is an
eager copy, so ``is_conj()`` stays False and writes to ``z.conj()`` do not reach ``z``. On real
tensors ``conj``/``real`` return the tensor itself and ``imag`` raises, as in PyTorch.

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import dtypes
from ..ops import complex as C
from ..tensor import Tensor
from .checks import expect_tensor
from .out import found_dtype, with_out

__all__ = ["real", "imag", "conj", "conj_physical", "conj_physical_", "resolve_conj",
           "resolve_neg", "view_as_real", "view_as_complex", "polar", "complex", "isreal"]


def view_as_real(input: Tensor) -> Tensor:  # noqa: A002
    """A real view of complex ``input`` with a last dim of 2: ``[..., 0]`` real parts,
    ``[..., 1]`` imaginary parts. Writes through it reach ``input``."""
    expect_tensor("view_as_real", "input", 1, input)
    if not input.dtype.is_complex:
        raise RuntimeError("view_as_real is only supported for complex tensors")
    return C.ViewAsReal.apply(input)  # type: ignore[no-any-return]


def view_as_complex(input: Tensor) -> Tensor:  # noqa: A002
    """A complex view of a float32/float64 ``input`` whose last dim is 2 (real, imaginary)."""
    expect_tensor("view_as_complex", "input", 1, input)
    if input.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError("view_as_complex is only supported for float and double tensors, but "
                           f"got a tensor of scalar type: {dtypes.scalar_type_name(input.dtype)}")
    if input.ndim == 0 or input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.stride(-1) != 1:
        raise RuntimeError("Tensor must have a last dimension with stride 1")
    if any(s % 2 for s in input.stride()[:-1]):
        raise RuntimeError("Tensor must have a stride divisible by 2 for all but last dimension")
    return C.ViewAsComplex.apply(input)  # type: ignore[no-any-return]


def real(input: Tensor) -> Tensor:  # noqa: A002
    """The real parts of complex ``input`` as a view (SelectBackward0); a real ``input``
    itself."""
    expect_tensor("real", "input", 1, input)
    if not input.dtype.is_complex:
        return input
    return view_as_real(input).select(-1, 0)


def imag(input: Tensor) -> Tensor:  # noqa: A002
    """The imaginary parts of complex ``input`` as a view (SelectBackward0)."""
    expect_tensor("imag", "input", 1, input)
    if not input.dtype.is_complex:
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return view_as_real(input).select(-1, 1)


def conj(input: Tensor) -> Tensor:  # noqa: A002
    """The complex conjugate (an eager copy here; see the module note); a real ``input``
    itself."""
    expect_tensor("conj", "input", 1, input)
    if not input.dtype.is_complex:
        return input
    return C.Conj.apply(input)  # type: ignore[no-any-return]


def _conj_physical(input: Tensor) -> Tensor:  # noqa: A002
    """The complex conjugate as a new tensor (ConjPhysicalBackward0); a real ``input`` itself."""
    expect_tensor("conj_physical", "input", 1, input)
    if not input.dtype.is_complex:
        return input
    return C.Conj.apply(input, name="ConjPhysicalBackward0")  # type: ignore[no-any-return]


def conj_physical_(input: Tensor) -> Tensor:  # noqa: A002
    if not input.dtype.is_complex:
        return input
    from .inplace_ops import inplace

    return inplace(input, conj_physical)  # type: ignore[no-any-return]


def resolve_conj(input: Tensor) -> Tensor:  # noqa: A002
    """``input`` itself: conjugation is never lazy here."""
    return input


resolve_neg = resolve_conj


def isreal(input: Tensor) -> Tensor:  # noqa: A002
    """True where the imaginary part is 0 (everywhere for a real ``input``); a bool tensor."""
    expect_tensor("isreal", "input", 1, input)
    if not input.dtype.is_complex:
        from ..creation import ones_like  # late: creation builds on the functions

        return ones_like(input, dtype=dtypes.bool)  # type: ignore[no-any-return]
    return imag(input) == 0  # type: ignore[no-any-return]


def _check_parts(fn: str, a: Tensor, b: Tensor, names: tuple[str, str]) -> None:
    for name, pos, x in ((names[0], 1, a), (names[1], 2, b)):
        expect_tensor(fn, name, pos, x)
    if a.dtype is not b.dtype:
        raise RuntimeError(f"Expected object of scalar type {dtypes.scalar_type_name(a.dtype)} "
                           f"but got scalar type {dtypes.scalar_type_name(b.dtype)} for second "
                           f"argument")
    if a.dtype not in (dtypes.float32, dtypes.float64):
        raise RuntimeError(f"Expected both inputs to be Half, Float or Double tensors but got "
                           f"{dtypes.scalar_type_name(a.dtype)} and "
                           f"{dtypes.scalar_type_name(b.dtype)}")


def _complex(real: Tensor, imag: Tensor) -> Tensor:
    """``real + imag * 1j`` (broadcast) from two float32 or float64 tensors of one dtype."""
    _check_parts("complex", real, imag, ("real", "imag"))
    try:
        return C.Complex.apply(real, imag)  # type: ignore[no-any-return]
    except ValueError:
        from .arith import _broadcast_error

        raise _broadcast_error(real, imag) from None


def _polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002
    """``abs * (cos(angle) + sin(angle) * 1j)``.

    NOTE: composed of ``complex``, so its grad_fn is ComplexBackward0 (PyTorch's is
    PolarBackward0); the values and gradients are the same."""
    _check_parts("polar", abs, angle, ("abs", "angle"))
    return _complex(abs * angle.cos(), abs * angle.sin())


def _exact_out(result: Any, out: Any, args: tuple[Any, ...]) -> None:
    if isinstance(out, Tensor) and out.dtype is not result.dtype:
        raise RuntimeError(f"Expected object of scalar type {dtypes.scalar_type_name(result.dtype)} "
                           f"but got scalar type {dtypes.scalar_type_name(out.dtype)} for argument "
                           "'out'")


# NOTE: ``out=`` as PyTorch: the result's dtype exactly (complex, polar), or any it casts to
# (conj_physical, with abs's message).
complex = with_out(_complex, "complex", check=_exact_out)  # noqa: A001
polar = with_out(_polar, "polar", check=_exact_out)
conj_physical = with_out(_conj_physical, "conj_physical", check=found_dtype)


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "conj": conj, "conj_physical": conj_physical, "conj_physical_": conj_physical_,
    "resolve_conj": resolve_conj, "resolve_neg": resolve_neg, "isreal": isreal,
}
