"""Householder QR pieces: ``geqrf`` (LAPACK's compact QR), ``linalg.householder_product`` (and
its alias ``orgqr``), which builds ``Q`` from the reflectors, and ``ormqr``, which multiplies
by ``Q`` without building it.

``householder_product`` and ``ormqr`` apply the ``k`` reflectors ``H_i = I - tau_i v_i v_i^H``
one after the other (a loop over reflectors, each one a batched rank-1 update), as one
recorded node with PyTorch's name (``ops/recompute.py``): gradients and double backward are
the composition's. ``geqrf`` has no derivative, as in PyTorch.

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
"""

from __future__ import annotations

from typing import Any, Callable

from .. import return_types as RT
from ..autograd.grad_mode import is_grad_enabled
from ..ops.recompute import Recompute
from ..ops.sort import Compute, NoDerivative
from ..tensor import Tensor
from .arith import _type_name
from .checks import expect_tensor

__all__ = ["geqrf", "orgqr", "ormqr"]


def _check_input(fn: str, a: Tensor, name: str = "input") -> None:
    expect_tensor(fn.split(".")[-1], name, 1, a)
    if a.ndim < 2:
        raise RuntimeError(f"{fn}: {name} must have at least 2 dimensions.")


def geqrf(input: Tensor, *, out: Any = None) -> Any:  # noqa: A002
    """``(a, tau)``: LAPACK geqrf's QR of each matrix (``R`` in ``a``'s upper triangle, the
    Householder vectors below it, ``tau`` their scales). No derivative, as PyTorch's."""
    _check_input("torch.geqrf", input)
    if not (input.dtype.is_floating_point or input.dtype.is_complex) or \
            input.dtype.name == "float16":
        raise NotImplementedError(f"\"geqrf_{input.device.type}\" not implemented for "
                                  f"'{_type_name(input.dtype)}'")

    def fn(b: Any, a: Any) -> Any:
        return b.geqrf(a)

    if input.requires_grad and is_grad_enabled():
        a, tau = NoDerivative.apply(input, fn=fn, name="GeqrfBackward0",
                                    error=NotImplementedError,
                                    message="the derivative for 'geqrf' is not implemented.")
    else:
        a, tau = Compute.apply(input, fn=fn)
    result = RT.geqrf((a, tau))
    if out is None:
        return result
    from .out import write_out

    return write_out("geqrf", result, out, inputs=(input,))


def _vector(a: Tensor, i: int) -> Tensor:
    """The ``i``-th Householder vector: 0 above row ``i``, 1 at it, ``a``'s column below."""
    from ..creation import arange

    rows = arange(a.shape[-2], device=a.device)
    below = (rows > i)
    return a[..., :, i].where(below, (rows == i).to(a.dtype))


def _apply(a: Tensor, tau: Tensor, c: Tensor, left: bool, adjoint: bool) -> Tensor:
    """``Q c``, ``Q^H c``, ``c Q`` or ``c Q^H`` with ``Q = H_1 ... H_k`` from the reflectors of
    ``a`` and ``tau``."""
    from .complex import conj  # NOTE: late: complex is a later family (a no-op on reals)

    k = tau.shape[-1]
    order = range(k) if left == adjoint else range(k - 1, -1, -1)
    for i in order:
        v = _vector(a, i)
        t = tau[..., i]
        if adjoint:
            t = conj(t)
        t = t.unsqueeze(-1).unsqueeze(-1)
        vh = conj(v)
        if left:  # H c = c - tau v (v^H c)
            c = c - t * v.unsqueeze(-1) * (vh.unsqueeze(-2) @ c)
        else:  # c H = c - tau (c v) v^H
            c = c - t * (c @ v.unsqueeze(-1)) * vh.unsqueeze(-2)
    return c


def _check_pair(fn: str, a: Tensor, tau: Tensor) -> None:
    _check_input(fn, a)
    expect_tensor(fn.split(".")[-1], "tau", 2, tau)
    if a.shape[-2] < a.shape[-1]:
        raise RuntimeError(f"{fn}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if a.shape[-1] < tau.shape[-1] if tau.ndim else False:
        raise RuntimeError(f"{fn}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tau.ndim != a.ndim - 1:
        raise RuntimeError(f"{fn}: Expected tau to have one dimension less than input, but got "
                           f"tau.ndim equal to {tau.ndim} and input.ndim is equal to {a.ndim}")
    if tuple(tau.shape[:-1]) != tuple(a.shape[:-2]):
        raise RuntimeError(f"{fn}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype is not a.dtype:
        raise RuntimeError(f"{fn}: tau dtype {_type_name(tau.dtype)} does not match input "
                           f"dtype {_type_name(a.dtype)}")


def householder_product(A: Tensor, tau: Tensor, *,  # noqa: N803
                        out: Tensor | None = None) -> Tensor:
    """The first ``n`` columns of ``H_1 ... H_k`` (``A`` is ``(..., m, n)``, ``m >= n``): the
    ``Q`` of the QR that ``geqrf`` stored in ``(A, tau)``."""
    fn = "torch.linalg.householder_product"
    _check_pair(fn, A, tau)

    def build(a: Tensor, t: Tensor) -> Tensor:
        from ..creation import eye

        m, n = a.shape[-2:]
        q = eye(m, n, dtype=a.dtype, device=a.device).expand(tuple(a.shape))
        # NOTE: column-major matrices, as LAPACK's orgqr leaves them in PyTorch
        return _apply(a, t, q, left=True, adjoint=False).mT.contiguous().mT

    q = Recompute.apply(A, tau, fn=build, name="LinalgHouseholderProductBackward0")
    if out is None:
        return q  # type: ignore[no-any-return]
    from .out import write_out

    return write_out("linalg_householder_product", q, out, inputs=(A, tau))  # type: ignore[no-any-return]


def orgqr(input: Tensor, tau: Tensor, *, out: Tensor | None = None) -> Tensor:  # noqa: A002
    """``torch.orgqr``: ``linalg.householder_product``."""
    return householder_product(input, tau, out=out)


def ormqr(input: Tensor, tau: Tensor, other: Tensor, left: bool = True,  # noqa: A002
          transpose: bool = False, *, out: Tensor | None = None) -> Tensor:
    """``Q @ other`` (``left``) or ``other @ Q``, with ``Q^H`` for ``transpose``: ``Q`` the
    full ``(m, m)`` product of ``input``'s Householder reflectors (``geqrf``'s output), never
    built."""
    fn = "torch.ormqr"
    _check_input(fn, input)
    expect_tensor("ormqr", "tau", 2, tau)
    expect_tensor("ormqr", "other", 3, other)
    if other.ndim < 2:
        raise RuntimeError(f"{fn}: other must have at least 2 dimensions.")
    m = input.shape[-2]
    if left and other.shape[-2] != m:
        raise RuntimeError(f"{fn}: other.shape[-2] must be equal to input.shape[-2]")
    if not left and other.shape[-1] != m:
        raise RuntimeError(f"{fn}: other.shape[-1] must be equal to input.shape[-2]")
    if tau.shape[-1] > input.shape[-1] if tau.ndim else False:
        raise RuntimeError(f"{fn}: tau.shape[-1] must be less than or equal to input.shape[-1]")
    if tau.dtype is not input.dtype or other.dtype is not input.dtype:
        bad, name = (tau, "tau") if tau.dtype is not input.dtype else (other, "other")
        raise RuntimeError(f"{fn}: Expected input and {name} to have the same dtype, but input "
                           f"has dtype {_type_name(input.dtype)} and {name} has dtype "
                           f"{_type_name(bad.dtype)}")

    def run(a: Tensor, t: Tensor, c: Tensor) -> Tensor:
        # NOTE: column-major matrices, as LAPACK's ormqr leaves them in PyTorch
        return _apply(a, t, c, left=bool(left), adjoint=bool(transpose)).mT.contiguous().mT

    result = Recompute.apply(input, tau, other, fn=run, name="OrmqrBackward0")
    if out is None:
        return result  # type: ignore[no-any-return]
    from .out import write_out

    return write_out("ormqr", result, out, inputs=(input, tau, other))  # type: ignore[no-any-return]


TENSOR_METHODS: dict[str, Callable[..., Any]] = {
    "geqrf": geqrf, "orgqr": orgqr, "ormqr": ormqr,
}
