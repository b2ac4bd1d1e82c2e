"""Backend entries of the normalisation ops (``ops/norm_ops.py``, ``ops/nn_norm.py``,
``nn/_normalization.py``): the fused layer norm, RMS norm and group norm kernels
(``kernels/norm.cu``, launchers in ``cuda_norm``) on the CuPy backend. Mixed into both backends.

Each entry returns None where the kernels do not serve (the NumPy backend, kernels switched off,
other dtypes, a weight of another dtype than the input, empty inputs): the op then runs its own
unfused formula, so the NumPy path is unchanged.
"""

from __future__ import annotations

from typing import Any


class NormBackend:
    """The normalisation family's fused primitives; ``self`` is the backend object."""

    name: str

    def norm_kernels_ok(self, x: Any, *params: Any) -> bool:
        """True when the fused kernels serve ``x`` with ``params`` (None entries skipped): the
        CuPy backend with its kernels on, a non-empty float array, parameters of its dtype."""
        if self.name != "cupy" or not x.size:
            return False
        from .cupy_backend import _kernels_for  # NOTE: late: imports CuPy

        return _kernels_for(x, *(p for p in params if p is not None))

    def fused_layer_norm(self, x: Any, w: Any, b: Any, ndim: int,
                         eps: float) -> tuple[Any, Any, Any] | None:
        """(y, mean, rstd) of layer norm over the last ``ndim`` dims, or None."""
        if not self.norm_kernels_ok(x, w, b):
            return None
        from . import cuda_norm

        return cuda_norm.layer_norm(x, ndim, w, b, eps)

    def fused_layer_norm_backward(self, grad: Any, x: Any, w: Any, mean: Any, rstd: Any,
                                  ndim: int, needs: tuple[bool, bool, bool]
                                  ) -> tuple[Any, Any, Any] | None:
        """(dx, dweight, dbias) of layer norm, None entries where not needed; or None."""
        if not self.norm_kernels_ok(x, grad, w):
            return None
        from . import cuda_norm

        return cuda_norm.layer_norm_backward(grad, x, ndim, w, mean, rstd, needs)

    def fused_rms_norm(self, x: Any, w: Any, ndim: int, eps: float) -> tuple[Any, Any] | None:
        """(y, rstd) of RMS norm over the last ``ndim`` dims, or None."""
        if not self.norm_kernels_ok(x, w):
            return None
        from . import cuda_norm

        return cuda_norm.rms_norm(x, ndim, w, eps)

    def fused_rms_norm_backward(self, grad: Any, x: Any, w: Any, rstd: Any, ndim: int,
                                needs: tuple[bool, bool]) -> tuple[Any, Any] | None:
        """(dx, dweight) of RMS norm, None entries where not needed; or None."""
        if not self.norm_kernels_ok(x, grad, w):
            return None
        from . import cuda_norm

        return cuda_norm.rms_norm_backward(grad, x, ndim, w, rstd, needs)

    def fused_group_norm(self, x: Any, w: Any, b: Any, groups: int,
                         eps: float) -> tuple[Any, Any, Any] | None:
        """(y, mean, rstd) of group norm over (N, C, *), statistics (N, groups, 1); or None."""
        if not self.norm_kernels_ok(x, w, b):
            return None
        from . import cuda_norm

        return cuda_norm.group_norm(x, groups, w, b, eps)

    def fused_group_norm_backward(self, grad: Any, x: Any, w: Any, mean: Any, rstd: Any,
                                  groups: int, needs: tuple[bool, bool, bool]
                                  ) -> tuple[Any, Any, Any] | None:
        """(dx, dweight, dbias) of group norm, None entries where not needed; or None."""
        if not self.norm_kernels_ok(x, grad, w):
            return None
        from . import cuda_norm

        return cuda_norm.group_norm_backward(grad, x, groups, w, mean, rstd, needs)
