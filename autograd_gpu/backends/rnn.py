"""Backend entries of the recurrent family (``ops/rnn.py``): the fused LSTM and GRU cells (one
time step's pointwise part, after the gate matmuls) and their backwards, with PyTorch's CUDA
contract (``_thnn_fused_lstm_cell``, ``_thnn_fused_gru_cell``): the forward also returns a
workspace, the activated gates, that the backward reads.

On CuPy, float16/32/64 arrays of one dtype go to our kernels (``cuda_rnn``, ``kernels/rnn.cu``);
everything else runs the reference twin here, the same formulas as array expressions, computed
in float32 for float16 as the kernels do. Mixed into both backends; the NumPy backend's
recurrent layers do not call these (their graph is PyTorch's CPU one), only tests do.
"""

from __future__ import annotations

from typing import Any

Array = Any


def _kernels(backend: Any, *arrays: Any) -> Any:
    """The launcher module when our kernels serve ``arrays`` on ``backend``, else None."""
    if backend.name != "cupy":
        return None
    from . import cuda_rnn

    return cuda_rnn if cuda_rnn.usable(*arrays) else None


class RnnBackend:
    """The recurrent family's primitives; ``self`` is the backend object."""

    xp: Any
    name: str

    # ---- LSTM ---------------------------------------------------------------------------------
    def lstm_cell(self: Any, igates: Array, hgates: Array | None, cx: Array,
                  b_ih: Array | None = None, b_hh: Array | None = None,
                  workspace: bool = True) -> tuple[Array, Array, Array | None]:
        """One LSTM step: pre-activations ``igates + hgates + b_ih + b_hh`` (B, 4H), gates i, f,
        g, o (``hgates`` and the biases may be None), ``cy = f * cx + i * g``,
        ``hy = o * tanh(cy)``. Returns ``(hy, cy, ws)`` with the workspace ``ws`` (B, 4H) the
        activated gates (None unless ``workspace``)."""
        k = _kernels(self, igates, hgates, cx, b_ih, b_hh)
        if k is not None:
            return k.lstm_cell(igates, hgates, cx, b_ih, b_hh, workspace)  # type: ignore[no-any-return]
        return self.lstm_cell_reference(igates, hgates, cx, b_ih, b_hh, workspace)  # type: ignore[no-any-return]

    def lstm_cell_reference(self: Any, igates: Array, hgates: Array | None, cx: Array,
                            b_ih: Array | None = None, b_hh: Array | None = None,
                            workspace: bool = True) -> tuple[Array, Array, Array | None]:
        """``lstm_cell``'s reference twin: array expressions, never a fused kernel."""
        dtype = igates.dtype
        gates = self._rnn_preact(igates, hgates, b_ih, b_hh)
        h = cx.shape[1]
        i = self.sigmoid(gates[:, :h])
        f = self.sigmoid(gates[:, h:2 * h])
        g = self.tanh(gates[:, 2 * h:3 * h])
        o = self.sigmoid(gates[:, 3 * h:])
        c = f * self._rnn_acc(cx) + i * g
        hy = o * self.tanh(c)  # NOTE: from the unrounded c', as the kernel
        ws = self.concatenate([i, f, g, o], 1).astype(dtype, copy=False) if workspace else None
        return hy.astype(dtype, copy=False), c.astype(dtype, copy=False), ws

    def lstm_cell_backward(self: Any, grad_hy: Array | None, grad_cy: Array | None, cx: Array,
                           cy: Array, workspace: Array) -> tuple[Array, Array]:
        """``(grad_gates, grad_cx)`` of ``lstm_cell``; ``grad_hy``/``grad_cy`` may be None
        (zero). ``grad_gates`` is the gradient of either gate input, and summed over the batch
        of either bias."""
        k = _kernels(self, grad_hy, grad_cy, cx, cy, workspace)
        if k is not None:
            return k.lstm_cell_backward(grad_hy, grad_cy, cx, cy, workspace)  # type: ignore[no-any-return]
        return self.lstm_cell_backward_reference(grad_hy, grad_cy, cx, cy, workspace)  # type: ignore[no-any-return]

    def lstm_cell_backward_reference(self: Any, grad_hy: Array | None, grad_cy: Array | None,
                                     cx: Array, cy: Array, workspace: Array) -> tuple[Array, Array]:
        """``lstm_cell_backward``'s reference twin."""
        dtype = workspace.dtype
        ws = self._rnn_acc(workspace)
        h = cx.shape[1]
        i, f, g, o = ws[:, :h], ws[:, h:2 * h], ws[:, 2 * h:3 * h], ws[:, 3 * h:]
        zero = self.xp.zeros(cx.shape, ws.dtype)
        gh = zero if grad_hy is None else self._rnn_acc(grad_hy)
        tc = self.tanh(self._rnn_acc(cy))
        gc = gh * o * (1 - tc * tc)
        if grad_cy is not None:
            gc = gc + self._rnn_acc(grad_cy)
        grad_gates = self.concatenate([gc * g * i * (1 - i), gc * self._rnn_acc(cx) * f * (1 - f),
                                       gc * i * (1 - g * g), gh * tc * o * (1 - o)], 1)
        return grad_gates.astype(dtype, copy=False), (gc * f).astype(dtype, copy=False)

    # ---- GRU ----------------------------------------------------------------------------------
    def gru_cell(self: Any, igates: Array, hgates: Array, hx: Array, b_ih: Array | None = None,
                 b_hh: Array | None = None, workspace: bool = True) -> tuple[Array, Array | None]:
        """One GRU step, gates r, z, n: ``r, z = sigmoid(i + h)`` (biases included),
        ``n = tanh(i_n + b_in + r * (h_n + b_hn))``, ``hy = n + z * (hx - n)``. Returns
        ``(hy, ws)`` with the workspace (B, 5H): r, z, n, hx, ``h_n + b_hn`` (None unless
        ``workspace``)."""
        k = _kernels(self, igates, hgates, hx, b_ih, b_hh)
        if k is not None:
            return k.gru_cell(igates, hgates, hx, b_ih, b_hh, workspace)  # type: ignore[no-any-return]
        return self.gru_cell_reference(igates, hgates, hx, b_ih, b_hh, workspace)  # type: ignore[no-any-return]

    def gru_cell_reference(self: Any, igates: Array, hgates: Array, hx: Array,
                           b_ih: Array | None = None, b_hh: Array | None = None,
                           workspace: bool = True) -> tuple[Array, Array | None]:
        """``gru_cell``'s reference twin."""
        dtype = igates.dtype
        h = hx.shape[1]
        gi = self._rnn_preact(igates, None, b_ih, None)
        gh = self._rnn_preact(hgates, None, b_hh, None)
        r = self.sigmoid(gi[:, :h] + gh[:, :h])
        z = self.sigmoid(gi[:, h:2 * h] + gh[:, h:2 * h])
        hn = gh[:, 2 * h:]
        n = self.tanh(gi[:, 2 * h:] + r * hn)
        hy = n + z * (self._rnn_acc(hx) - n)
        ws = None
        if workspace:
            ws = self.concatenate([r, z, n, self._rnn_acc(hx), hn], 1).astype(dtype, copy=False)
        return hy.astype(dtype, copy=False), ws

    def gru_cell_backward(self: Any, grad_hy: Array,
                          workspace: Array) -> tuple[Array, Array, Array]:
        """``(grad_igates, grad_hgates, grad_hx)`` of ``gru_cell``; they differ in the n part
        (``r * grad``); summed over the batch, the gate gradients are the biases'."""
        k = _kernels(self, grad_hy, workspace)
        if k is not None:
            return k.gru_cell_backward(grad_hy, workspace)  # type: ignore[no-any-return]
        return self.gru_cell_backward_reference(grad_hy, workspace)  # type: ignore[no-any-return]

    def gru_cell_backward_reference(self: Any, grad_hy: Array,
                                    workspace: Array) -> tuple[Array, Array, Array]:
        """``gru_cell_backward``'s reference twin."""
        dtype = workspace.dtype
        ws = self._rnn_acc(workspace)
        h = grad_hy.shape[1]
        r, z, n, hx, hn = (ws[:, k * h:(k + 1) * h] for k in range(5))
        go = self._rnn_acc(grad_hy)
        gz = go * (hx - n) * z * (1 - z)
        gn = go * (1 - z) * (1 - n * n)
        gr = gn * hn * r * (1 - r)
        grad_ig = self.concatenate([gr, gz, gn], 1).astype(dtype, copy=False)
        grad_hg = self.concatenate([gr, gz, gn * r], 1).astype(dtype, copy=False)
        return grad_ig, grad_hg, (go * z).astype(dtype, copy=False)

    # ---- helpers ------------------------------------------------------------------------------
    def _rnn_acc(self: Any, x: Array) -> Array:
        """``x`` in the type the cells compute in: float32 for float16, else its own."""
        return x.astype("float32") if x.dtype.itemsize == 2 else x

    def _rnn_preact(self: Any, igates: Array, hgates: Array | None, b_ih: Array | None,
                    b_hh: Array | None) -> Array:
        """``igates + hgates + b_ih + b_hh`` (absent terms skipped), in the compute type."""
        out = self._rnn_acc(igates)
        for term in (hgates, b_ih, b_hh):
            if term is not None:
                out = out + self._rnn_acc(term)
        return out
