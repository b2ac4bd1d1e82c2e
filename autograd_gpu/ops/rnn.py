"""Recurrent layers' time loops (``nn.RNN``, ``nn.LSTM``, ``nn.GRU`` and their cells).

The input projection of every time step is one matmul per layer and direction; the loop runs
over time steps only, each step a handful of tensor ops on the whole batch. Packed sequences are
run on their packed data: step ``t`` takes rows ``offsets[t]:offsets[t] + batch_sizes[t]`` (the
sequences still running, a prefix as they are sorted by decreasing length), so the final state of
each sequence is the one at its own length.
"""

from __future__ import annotations

from typing import Any, Sequence

from ..functions import cat, stack
from ..tensor import Tensor
from .recompute import Recompute

__all__: list[str] = []

# NOTE: False runs the CPU graph on CUDA too (bench/bench_rnn_gpu.py measures the difference).
FUSED_ON_CUDA = True


def fused_here(t: Tensor) -> bool:
    """Whether the gated cells on ``t``'s device are PyTorch's CUDA cells (``FusedLstmCell``,
    ``FusedGruCell``): on CUDA. The CPU records PyTorch's CPU graph."""
    return FUSED_ON_CUDA and t.is_cuda


def lstm_cell(gates: Tensor, c: Tensor, w_hr: Tensor | None) -> tuple[Tensor, Tensor]:
    """One LSTM step from its pre-activations ``gates`` (order i, f, g, o) and cell state ``c``."""
    i, f, g, o = gates.chunk(4, 1)
    c2 = f.sigmoid() * c + i.sigmoid() * g.tanh()
    h2 = o.sigmoid() * c2.tanh()
    if w_hr is not None:
        h2 = h2.matmul(w_hr.t())
    return h2, c2


def _lstm_pointwise(gates: Tensor, c: Tensor) -> tuple[Tensor, Tensor]:
    return lstm_cell(gates, c, None)


class LSTMPointwise(Recompute):
    """An LSTM step's gate nonlinearities and state update as one node (PyTorch's fused cell,
    ``ThnnFusedLstmCellBackward0``): ``(gates, c) -> (h', c')``. Forward runs on arrays; backward
    without ``create_graph`` uses the saved activations, with it the composition is recomputed
    (see ``Recompute``) so double backward works.

    NOTE: the gate activations and ``tanh(c')`` go through ``save_for_backward`` (not a plain
    attribute): so the memory tracker counts them on the CPU, ``profile_memory`` attributes them,
    and ``checkpoint``/``save_on_cpu`` hooks drop or move them like any saved tensor."""

    raw_ok = True

    def __init__(self) -> None:
        super().__init__(_lstm_pointwise, "ThnnFusedLstmCellBackward0")

    def forward(self, gates: Any, c: Any) -> Any:  # type: ignore[override]
        b = self.backend
        n = gates.shape[1] // 4
        i = b.sigmoid(gates[:, :n])
        f = b.sigmoid(gates[:, n:2 * n])
        g = b.tanh(gates[:, 2 * n:3 * n])
        o = b.sigmoid(gates[:, 3 * n:])
        c2 = f * c + i * g
        tc = b.tanh(c2)
        self.save_for_backward(gates, c, i, f, g, o, tc)
        return o * tc, c2

    def backward(self, *grads: Any) -> tuple[Any, ...]:
        if not self._raw:
            return super().backward(*grads)
        _gates, c, i, f, g, o, tc = self.saved_tensors
        # NOTE: the engine may hand one gradient only (c' of the last step unused): without
        # this, the raw path failed and the step fell back to the recomputing backward.
        gh = grads[0]
        gc2 = grads[1] if len(grads) > 1 else None
        b = self.backend
        gc = b.zeros_like(c) if gc2 is None else gc2
        if gh is not None:
            gc = gc + gh * o * (1 - tc * tc)
            do = gh * tc * o * (1 - o)
        else:
            do = b.zeros_like(c)
        dg = gc * i * (1 - g * g)
        di = gc * g * i * (1 - i)
        df = gc * c * f * (1 - f)
        return b.concatenate([di, df, dg, do], 1), gc * f


def _fused_lstm(ig: Tensor, hg: Tensor | None, cx: Tensor, b_ih: Tensor | None,
                b_hh: Tensor | None) -> tuple[Tensor, Tensor]:
    gates = ig
    for term in (hg, b_ih, b_hh):
        if term is not None:
            gates = gates + term
    return lstm_cell(gates, cx, None)


def _one_tensor_per_array(grads: tuple[Any, ...]) -> tuple[Any, ...]:
    """The raw backward's gradients with one Tensor per array: an array handed to two inputs
    (both gate inputs, both biases) travels as one Tensor, so that the engine's ownership flag
    covers both (a leaf steals an owned gradient; a second leaf then copies it instead of
    sharing, and later accumulating in place into, the first one's buffer)."""
    seen: dict[int, Any] = {}
    return tuple(None if g is None else seen.setdefault(id(g._data), g) for g in grads)


class FusedLstmCell(Recompute):
    """PyTorch's CUDA LSTM cell (``_thnn_fused_lstm_cell``, ``ThnnFusedLstmCellBackward0``):
    ``(igates, hgates, cx, b_ih, b_hh) -> (hy, cy)`` with the pre-activations the sum of the
    gate inputs and biases (``hgates`` and the biases may be None). One backend call each way
    (``backend.lstm_cell``: one kernel on CUDA); the forward keeps the workspace (the activated
    gates) for the backward. Under ``create_graph`` the backward recomputes the composition
    instead (see ``Recompute``), as PyTorch's ``_thnn_differentiable_lstm_cell_backward``."""

    raw_ok = True

    def __init__(self) -> None:
        super().__init__(_fused_lstm, "ThnnFusedLstmCellBackward0")

    def forward(self, ig: Any, hg: Any, cx: Any, b_ih: Any, b_hh: Any) -> Any:  # type: ignore[override]
        need = bool(self.needs_input_grad)  # NOTE: no workspace written when nothing needs it
        hy, cy, ws = self.backend.lstm_cell(ig, hg, cx, b_ih, b_hh, need)
        if need:
            self.save_for_backward(ig, hg, cx, b_ih, b_hh, cy, ws)
        return hy, cy

    def _call_raw(self, grads: list[Any]) -> tuple[Any, ...]:
        return _one_tensor_per_array(super()._call_raw(grads))

    def backward(self, *grads: Any) -> tuple[Any, ...]:
        if not self._raw:
            return super().backward(*grads)
        gh = grads[0]
        gc = grads[1] if len(grads) > 1 else None  # NOTE: c' may be unused (one gradient)
        need = self.needs_input_grad
        if gh is None and gc is None:
            return (None,) * 5
        *_, cx, _b_ih, _b_hh, cy, ws = self.saved_tensors
        b = self.backend
        gates, gcx = b.lstm_cell_backward(gh, gc, cx, cy, ws)
        gb = b.sum(gates, axis=0) if need[3] or need[4] else None
        return (gates if need[0] else None, gates if need[1] else None,
                gcx if need[2] else None, gb if need[3] else None, gb if need[4] else None)


def _fused_gru(ig: Tensor, hg: Tensor, hx: Tensor, b_ih: Tensor | None,
               b_hh: Tensor | None) -> Tensor:
    return gru_cell(ig if b_ih is None else ig + b_ih, hg if b_hh is None else hg + b_hh, hx)


class FusedGruCell(Recompute):
    """PyTorch's CUDA GRU cell (``_thnn_fused_gru_cell``, ``ThnnFusedGruCellBackward0``):
    ``(igates, hgates, hx, b_ih, b_hh) -> hy`` (biases may be None), as ``FusedLstmCell``: one
    backend call each way, the workspace (r, z, n, hx, ``h_n + b_hn``) kept for the backward,
    the composition recomputed under ``create_graph``."""

    raw_ok = True

    def __init__(self) -> None:
        super().__init__(_fused_gru, "ThnnFusedGruCellBackward0")

    def forward(self, ig: Any, hg: Any, hx: Any, b_ih: Any, b_hh: Any) -> Any:  # type: ignore[override]
        need = bool(self.needs_input_grad)
        hy, ws = self.backend.gru_cell(ig, hg, hx, b_ih, b_hh, need)
        if need:
            self.save_for_backward(ig, hg, hx, b_ih, b_hh, ws)
        return hy

    def _call_raw(self, grads: list[Any]) -> tuple[Any, ...]:
        return _one_tensor_per_array(super()._call_raw(grads))

    def backward(self, *grads: Any) -> tuple[Any, ...]:
        if not self._raw:
            return super().backward(*grads)
        (grad,) = grads
        need = self.needs_input_grad
        if grad is None:
            return (None,) * 5
        ws = self.saved_tensors[-1]
        b = self.backend
        gi, gh, ghx = b.gru_cell_backward(grad, ws)
        return (gi if need[0] else None, gh if need[1] else None, ghx if need[2] else None,
                b.sum(gi, axis=0) if need[3] else None, b.sum(gh, axis=0) if need[4] else None)


def gru_cell(gx: Tensor, gh: Tensor, h: Tensor) -> Tensor:
    """One GRU step (order r, z, n): ``n = tanh(x_n + r * (W_hn h + b_hn))``,
    ``h' = (1 - z) * n + z * h``."""
    xr, xz, xn = gx.chunk(3, 1)
    hr, hz, hn = gh.chunk(3, 1)
    r = (xr + hr).sigmoid()
    z = (xz + hz).sigmoid()
    n = (xn + r * hn).tanh()
    return n + z * (h - n)


def scan(mode: str, gx: Tensor, batch_sizes: Sequence[int] | None, h0: Tensor,
         c0: Tensor | None, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None,
         reverse: bool) -> tuple[Tensor, Tensor, Tensor | None]:
    """Run one layer and direction over time.

    ``gx`` holds the input projections: ``(T, B, G)`` for a padded batch (``batch_sizes`` None)
    or ``(N, G)`` packed data with ``batch_sizes``. For RNN and LSTM it includes ``b_hh`` already
    (pass ``b_hh=None``); GRU needs ``b_hh`` apart (it sits inside ``r * (...)``). Returns the
    output (``(T, B, P)`` or ``(N, P)``), the final hidden state and, for LSTM, the final cell
    state.
    """
    uniform = batch_sizes is None
    # NOTE: one unbind/split node hands out the steps' projections, so backward stacks their
    # gradients once (indexing per step would add T full-size gradients).
    xs = gx.unbind(0) if uniform else gx.split(list(batch_sizes), 0)  # type: ignore[arg-type]
    steps = len(xs)
    full = h0.shape[0]
    h, c = h0, c0
    outs: list[Any] = [None] * steps
    order = range(steps - 1, -1, -1) if reverse else range(steps)
    w_hh_t = w_hh.t()
    w_hr_t = None if w_hr is None else w_hr.t()
    # NOTE: on CUDA the gated cells are PyTorch's CUDA cells (one kernel each way); the CPU keeps
    # its graph. The LSTM's input projection holds both biases, and the recurrent matmul is
    # added to it before the cell (so the node keeps one (B, 4H) gate input, not two).
    fused = mode in ("LSTM", "GRU") and fused_here(h0)
    for t in order:
        x_t = xs[t]
        bs = x_t.shape[0]
        part = bs < full
        hp = h[:bs] if part else h
        if mode == "LSTM":
            cp = c[:bs] if part else c  # type: ignore[index]
            if fused:
                h2, c2 = FusedLstmCell.apply(x_t.addmm(hp, w_hh_t), None, cp, None, None)
            else:
                h2, c2 = LSTMPointwise.apply(x_t.addmm(hp, w_hh_t), cp)
            if w_hr_t is not None:
                h2 = h2.matmul(w_hr_t)
            if part:
                c = cat([c2, c[bs:]])  # type: ignore[index]
            else:
                c = c2
        elif fused:  # GRU
            h2 = FusedGruCell.apply(x_t, hp.matmul(w_hh_t), hp, None, b_hh)
        elif mode == "GRU":
            gh = hp.matmul(w_hh_t) if b_hh is None else b_hh.addmm(hp, w_hh_t)
            h2 = gru_cell(x_t, gh, hp)
        else:
            pre = x_t.addmm(hp, w_hh_t)
            h2 = pre.tanh() if mode == "RNN_TANH" else pre.relu()
        outs[t] = h2
        h = cat([h2, h[bs:]]) if part else h2
    out = stack(outs) if uniform else cat(outs)
    return out, h, c
