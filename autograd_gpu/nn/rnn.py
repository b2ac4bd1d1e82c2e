"""Recurrent layers: RNN, LSTM, GRU and their cells (``RNNBase``, ``RNNCellBase``)."""

from __future__ import annotations

__all__: list[str] = []
