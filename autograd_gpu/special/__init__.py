"""``torch.special``: special functions (``erf``, ``gammaln``, ``logit``, ``ndtr``, Bessel
functions, ...), the ``torch.*`` aliases and the rest, NumPy/CuPy only (no SciPy)."""

from __future__ import annotations

__all__: list[str] = []
