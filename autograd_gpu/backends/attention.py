"""Backend entries of fused attention (``nn/_attention.py``, ``ops/attention.py``): our CUDA
kernels (``cuda_attention``) on the CuPy backend; the NumPy backend has none (its
``scaled_dot_product_attention`` is the math path). Mixed into both backends."""

from __future__ import annotations

from typing import Any


class AttentionBackend:
    """``fused_attention_ok`` says whether the two entries below can run here."""

    name: str

    def fused_attention_ok(self, *arrays: Any) -> bool:
        """True on the CuPy backend with our kernels on (``AUTOGRAD_GPU_KERNELS``) for CuPy
        arrays of one float dtype the kernels take."""
        if self.name != "cupy":
            return False
        from . import cupy_backend  # NOTE: late: imports cupy; only reached on the CUDA backend

        return cupy_backend.USE_KERNELS and cupy_backend.K.supported(*arrays)

    def attention_forward(self, q: Any, k: Any, v: Any, mask: Any, causal: bool,
                          scale: float) -> tuple[Any, Any]:
        """``(out, lse)``: see ``cuda_attention.attention_forward``."""
        from .cuda_attention import attention_forward

        return attention_forward(q, k, v, mask, causal, scale)

    def attention_backward(self, q: Any, k: Any, v: Any, mask: Any, out: Any, lse: Any,
                           grad: Any, causal: bool, scale: float,
                           grad_mask: bool) -> tuple[Any, Any, Any, Any]:
        """``(grad_q, grad_k, grad_v, grad_mask or None)``: see
        ``cuda_attention.attention_backward``."""
        from .cuda_attention import attention_backward

        return attention_backward(q, k, v, mask, out, lse, grad, causal, scale, grad_mask)
