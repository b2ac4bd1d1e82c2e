"""What the ``torch.linalg`` entry points share: PyTorch's argument checks and messages for
matrix inputs, the named tuples they return, and ``out=`` handling."""

from __future__ import annotations

from typing import Any, Sequence

from .. import return_types as RT
from ..tensor import Tensor
from .arith import _type_name
from .checks import expect_tensor

__all__: list[str] = []


linalg_slogdet = RT.linalg_slogdet
slogdet_type = RT.slogdet
linalg_inv_ex = RT.linalg_inv_ex
linalg_solve_ex = RT.linalg_solve_ex
linalg_cholesky_ex = RT.linalg_cholesky_ex
linalg_qr = RT.linalg_qr
qr_type = RT.qr
linalg_svd = RT.linalg_svd
svd_type = RT.svd
linalg_eig = RT.linalg_eig
linalg_eigh = RT.linalg_eigh
linalg_lstsq = RT.linalg_lstsq
triangular_solve_type = RT.triangular_solve

EPS = {"float32": 1.1920928955078125e-07, "float64": 2.220446049250313e-16,
       "float16": 0.0009765625}


def check_matrix(fn: str, a: Any, name: str = "A", square: bool = False,
                 floating: bool = True, arg: str = "A", position: int = 1,
                 complex_ok: bool = False) -> None:
    """PyTorch's checks of a matrix argument of ``fn`` (``linalg.det``): a tensor, at least 2
    dims, square (``square``), of a floating dtype (``floating``; complex too where
    ``complex_ok``), in that order."""
    expect_tensor(fn.replace("linalg.", "linalg_").replace("torch.", ""), arg, position, a)
    if a.ndim < 2:
        raise RuntimeError(f"{fn}: The input tensor {name} must have at least 2 dimensions.")
    if square and a.shape[-1] != a.shape[-2]:
        raise RuntimeError(f"{fn}: {name} must be batches of square matrices, but they are "
                           f"{a.shape[-2]} by {a.shape[-1]} matrices")
    if floating:
        check_floating(fn, a, complex_ok)


def check_floating(fn: str, a: Tensor, complex_ok: bool = False) -> None:
    """PyTorch's refusal of an integer or bool matrix. A complex one is taken where the op
    and its gradient handle complex numbers (``complex_ok``), else refused as not supported
    yet (a gap of ours: PyTorch takes it)."""
    if a.dtype.is_complex:
        if not complex_ok:
            raise RuntimeError(f"{fn}: complex inputs are not supported yet by autograd_gpu "
                               f"(got {_type_name(a.dtype)})")
        return
    if not a.dtype.is_floating_point:
        raise RuntimeError(f"{fn}: Expected a floating point or complex tensor as input. Got "
                           f"{_type_name(a.dtype)}")


def no_half(a: Tensor, kernel: str | None = None, fn: str | None = None) -> None:
    """PyTorch's refusal of float16 by a LAPACK kernel (``"lu_cpu" not implemented for
    'Half'``) or by ``fn`` (``linalg.inv: Low precision dtypes not supported. Got Half``)."""
    if a.dtype.name != "float16":
        return
    if fn is not None:
        raise RuntimeError(f"{fn}: Low precision dtypes not supported. Got Half")
    raise NotImplementedError(f"\"{kernel}_{a._device.type}\" not implemented for 'Half'")


def check_same_dtype(fn: str, a: Tensor, b: Tensor, names: tuple[str, str] = ("A", "B")) -> None:
    if a.dtype is not b.dtype:
        raise RuntimeError(f"{fn}: Expected {names[0]} and {names[1]} to have the same dtype, but "
                           f"found {names[0]} of type {_type_name(a.dtype)} and {names[1]} of type "
                           f"{_type_name(b.dtype)} instead")


def check_same_device(a: Tensor, b: Tensor) -> None:
    if a._device is not b._device:
        first, second = (b, a) if b._device.type == "cuda" else (a, b)
        raise RuntimeError("Expected all tensors to be on the same device, but found at least "
                           f"two devices, {first._device} and {second._device}!")


def broadcast_batch(fn: str, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """The broadcast of two batch shapes, or PyTorch's error."""
    n = max(len(a), len(b))
    pa, pb = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    out = []
    for i, (x, y) in enumerate(zip(pa, pb)):
        if x != y and x != 1 and y != 1:
            raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b ({y}) "
                               f"at non-singleton dimension {i}")
        out.append(y if x == 1 else x)
    return tuple(out)


def finish(fn: str, result: Any, out: Any, inputs: Sequence[Any],
           exact: Sequence[bool] = ()) -> Any:
    """``result``, or written into ``out`` (PyTorch's ``out=``) when one is given."""
    if out is None:
        return result
    from .out import write_out  # NOTE: late: out builds on view_writes

    return write_out(fn, result, out, inputs=inputs, exact=exact)


def tolerance(value: Any, a: Tensor) -> Any:
    """An ``atol``/``rtol`` argument as the op takes it: a number, or a tensor's array (on
    ``a``'s device)."""
    if isinstance(value, Tensor):
        check_same_device(a, value)
        return value
    return float(value)
