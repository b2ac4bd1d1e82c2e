"""Attention and Transformer modules: MultiheadAttention, TransformerEncoderLayer, TransformerDecoderLayer, TransformerEncoder, TransformerDecoder, Transformer."""

from __future__ import annotations

__all__: list[str] = []
