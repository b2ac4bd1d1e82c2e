"""The dropout family of ``nn.functional`` beyond ``dropout``."""

from __future__ import annotations

__all__: list[str] = []
