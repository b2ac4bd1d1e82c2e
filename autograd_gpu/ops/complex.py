"""Complex ops: ``view_as_real``/``view_as_complex`` (views), ``conj``, ``complex``, ``angle``.

Gradients follow PyTorch's convention for a real loss ``L`` of complex ``z``: the gradient is
``dL/d(conj z)`` (times 2), so a holomorphic ``f`` sends ``grad`` back as
``grad * conj(f'(z))`` and a real part ``re(z)`` sends ``grad`` back as ``grad + 0j``.
"""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node


def conj(v: Any) -> Any:
    """The conjugate of a complex tensor, array or Python number; anything real as it is (no
    copy), so real code paths pay nothing."""
    d = getattr(v, "dtype", None)
    if d is None:
        return v.conjugate() if isinstance(v, complex) else v
    if getattr(d, "kind", None) == "c" or getattr(d, "is_complex", False) is True:
        return v.conj()
    return v


class ViewAsReal(Node):
    """``z`` as a real view with a last dim of size 2 (real, imaginary) (ViewAsRealBackward0)."""

    node_name = "ViewAsRealBackward0"
    is_view = True

    def forward(self, z: Any) -> Any:
        # NOTE: z.real is a view with z's strides; each imaginary part sits one real item after
        # its real part, hence the last dim's stride.
        part = z.real
        half = part.itemsize
        return self.backend.as_strided(part, z.shape + (2,), z.strides + (half,),
                                       writeable=True)

    def backward(self, grad: Any) -> tuple[Any]:
        from ..functions.complex import view_as_complex  # late: functions build on ops

        return (view_as_complex(grad.contiguous()),)


class ViewAsComplex(Node):
    """A real tensor with a last dim of size 2 as a complex view (ViewAsComplexBackward0)."""

    node_name = "ViewAsComplexBackward0"
    is_view = True

    def forward(self, x: Any) -> Any:
        cdtype = "complex64" if x.dtype.name == "float32" else "complex128"
        return x.view(cdtype)[..., 0]

    def backward(self, grad: Any) -> tuple[Any]:
        from ..functions.complex import view_as_real  # late: functions build on ops

        return (view_as_real(grad),)


class Conj(Node):
    """The complex conjugate, as a copy (ConjBackward0; PyTorch's is a lazy view)."""

    def __init__(self, name: str = "ConjBackward0") -> None:
        self.node_name = name

    def forward(self, z: Any) -> Any:
        return self.backend.conjugate(z)

    def backward(self, grad: Any) -> tuple[Any]:
        return (grad.conj(),)


class Complex(Node):
    """``real + imag * 1j`` from two real tensors of one dtype (ComplexBackward0)."""

    node_name = "ComplexBackward0"
    elementwise = True

    def forward(self, re: Any, im: Any) -> Any:
        if self.needs_input_grad:
            from .elementwise import _shape

            self.shapes = (_shape(re), _shape(im))
        cdtype = "complex64" if re.dtype.name == "float32" else "complex128"
        b = self.backend
        shape = b.broadcast_shapes(re.shape, im.shape)
        out = b.empty(shape, cdtype)
        out.real[...] = re
        out.imag[...] = im
        return out

    def backward(self, grad: Any) -> tuple[Any, Any]:
        from .util import reduce_grad

        need = self.needs_input_grad
        return (reduce_grad(grad.real, self.shapes[0]) if need[0] else None,
                reduce_grad(grad.imag, self.shapes[1]) if need[1] else None)


class Angle(Node):
    """The argument ``atan2(imag, real)`` of complex ``z`` (AngleBackward0)."""

    node_name = "AngleBackward0"
    elementwise = True

    def forward(self, z: Any) -> Any:
        self.save_for_backward(z)
        return self.backend.angle(z)

    def backward(self, grad: Any) -> tuple[Any]:
        (z,) = self.saved_tensors
        # NOTE: d angle = i z / |z|^2 in PyTorch's convention; 0 at z == 0 (not nan).
        r2 = z.real ** 2 + z.imag ** 2
        safe = r2.where(r2 != 0, 1.0)
        g = (grad / safe).where(r2 != 0, 0.0)
        return (g * z * 1j,)
