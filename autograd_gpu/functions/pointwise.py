"""Pointwise math beyond the basics: trigonometric and hyperbolic functions, logs and exponentials of other bases, rounding variants, special functions (erf, lgamma, digamma, ...), binary and ternary pointwise ops (atan2, hypot, lerp, addcmul, ...).

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
"""

from __future__ import annotations

from typing import Any, Callable

__all__: list[str] = []
TENSOR_METHODS: dict[str, Callable[..., Any]] = {}
