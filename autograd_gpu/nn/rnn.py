"""Recurrent layers: RNN, LSTM, GRU and their cells (``RNNBase``, ``RNNCellBase``)."""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any

from ..autograd.node import user_stacklevel
from ..creation import empty, zeros
from ..functions import cat, stack
from ..ops import rnn as _scan
from ..tensor import Tensor
from . import functional as F
from . import init
from .module import Module
from .parameter import Parameter
from .utils.rnn import PackedSequence

__all__ = ["GRU", "GRUCell", "LSTM", "LSTMCell", "RNN", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


class RNNBase(Module):
    """Base of ``RNN``, ``LSTM`` and ``GRU``: PyTorch's parameters (``weight_ih_l{k}``,
    ``weight_hh_l{k}``, ``bias_ih_l{k}``, ``bias_hh_l{k}``, ``weight_hr_l{k}`` and their
    ``_reverse`` twins), argument checks, ``extra_repr`` and initialisation U(-1/sqrt(hidden),
    1/sqrt(hidden)) for every parameter."""

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1,
                 bias: bool = True, batch_first: bool = False, dropout: float = 0.0,
                 bidirectional: bool = False, proj_size: int = 0, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) \
                or not 0 <= dropout <= 1:  # type: ignore[operator]
            raise ValueError("dropout should be a number in range [0, 1] representing the "
                             "probability of an element being zeroed")
        if dropout > 0 and num_layers == 1:  # type: ignore[operator]
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so "
                          "non-zero dropout expects num_layers greater than 1, but got "
                          f"dropout={dropout} and num_layers={num_layers}",
                          stacklevel=user_stacklevel())
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: "
                                f"{type(value).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable "
                             "projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        dirs = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        kw = {"device": device, "dtype": dtype}
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(dirs):
                layer_in = input_size if layer == 0 else real_hidden * dirs
                shapes: list[tuple[str, tuple[int, ...]]] = [
                    ("weight_ih_l{}{}", (gate_size, layer_in)),
                    ("weight_hh_l{}{}", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih_l{}{}", (gate_size,)), ("bias_hh_l{}{}", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr_l{}{}", (proj_size, hidden_size))]
                suffix = "_reverse" if direction == 1 else ""
                names = []
                for fmt, shape in shapes:
                    name = fmt.format(layer, suffix)
                    setattr(self, name, Parameter(empty(*shape, **kw)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list[Tensor | None]:
        # NOTE: looked up on each use, so .to()/load_state_dict/assignment never leave it stale.
        return [getattr(self, n, None) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, n) for n in names] for names in self._all_weights]

    def flatten_parameters(self) -> None:
        """A no-op (PyTorch packs the weights for cuDNN here)."""

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # ---- checks (PyTorch's messages) ----------------------------------------------------------
    def check_input(self, input: Tensor, batch_sizes: Any) -> None:  # noqa: A002
        w = self._flat_weights[0]
        if w is not None and input.dtype != w.dtype:
            raise ValueError(f"RNN input dtype ({input.dtype}) does not match weight dtype "
                             f"({w.dtype}). Convert input: input.to({w.dtype}), or convert "
                             f"model: model.to({input.dtype})")
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError("input.size(-1) must be equal to input_size. Expected "
                               f"{self.input_size}, got {input.size(-1)}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Any) -> tuple[int, int, int]:  # noqa: A002
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        dirs = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * dirs, mini_batch, size)

    def check_hidden_size(self, hx: Tensor, expected: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.size()) != expected:
            raise RuntimeError(msg.format(expected, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Any) -> None:  # noqa: A002
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        if permutation is None:
            return hx
        return hx.index_select(1, permutation)

    # ---- the computation ----------------------------------------------------------------------
    def _run(self, x: Tensor, h0: Tensor, c0: Tensor | None,
             batch_sizes: list[int] | None) -> tuple[Tensor, Tensor, Tensor | None]:
        """All layers and directions: ``x`` is ``(T, B, F)`` time-major, or packed ``(N, F)``."""
        dirs = 2 if self.bidirectional else 1
        weights = self._flat_weights
        per = len(weights) // (self.num_layers * dirs)
        h_n: list[Tensor] = []
        c_n: list[Tensor] = []
        for layer in range(self.num_layers):
            if layer > 0 and self.dropout > 0 and self.training:
                x = F.dropout(x, self.dropout, True)
            outs = []
            for d in range(dirs):
                k = layer * dirs + d
                w = weights[k * per:(k + 1) * per]
                w_ih, w_hh = w[0], w[1]
                b_ih, b_hh = (w[2], w[3]) if self.bias else (None, None)
                w_hr = w[-1] if self.proj_size > 0 else None
                if b_ih is None:
                    gx = x.matmul(w_ih.t())  # type: ignore[union-attr]
                elif self.mode == "GRU":
                    gx = x.matmul(w_ih.t()) + b_ih  # type: ignore[union-attr]
                else:  # NOTE: both biases folded into the input projection
                    gx = x.matmul(w_ih.t()) + (b_ih + b_hh)  # type: ignore[union-attr,operator]
                out, h, c = _scan.scan(self.mode, gx, batch_sizes, h0[k],
                                       None if c0 is None else c0[k], w_hh,  # type: ignore[arg-type]
                                       b_hh if self.mode == "GRU" else None, w_hr, d == 1)
                outs.append(out)
                h_n.append(h)
                if c is not None:
                    c_n.append(c)
            x = outs[0] if dirs == 1 else cat(outs, -1)
        return x, stack(h_n), (stack(c_n) if c0 is not None else None)

    def _prepare(self, input: Any, hx: Any, name: str, tensor_word: str) -> Any:  # noqa: A002
        """Unpack a PackedSequence or unsqueeze an unbatched input; PyTorch's dimension checks
        for ``input`` (``hx`` ones are the subclass's)."""
        if isinstance(input, PackedSequence):
            data, bsz, sorted_idx, unsorted_idx = input
            return data, [int(b) for b in bsz.tolist()], sorted_idx, unsorted_idx, True
        if input.dim() not in (2, 3):
            raise ValueError(f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                             f"{tensor_word} instead")
        return input, None, None, None, input.dim() == 3

    def _zeros(self, input: Tensor, batch: int, size: int) -> Tensor:  # noqa: A002
        dirs = 2 if self.bidirectional else 1
        return zeros(self.num_layers * dirs, batch, size, dtype=input.dtype, device=input.device)

    def _finish(self, orig: Any, x: Tensor, batch_sizes: list[int] | None) -> tuple[Tensor, int]:
        """Time-major ``x`` (packed data unchanged) and the batch size."""
        if batch_sizes is not None:
            return x, batch_sizes[0]
        if self.batch_first:
            x = x.transpose(0, 1)
        return x, x.size(1)

    def _output(self, out: Tensor, orig: Any, batch_sizes: Any, is_batched: bool) -> Any:
        if isinstance(orig, PackedSequence):
            return PackedSequence(out, orig.batch_sizes, orig.sorted_indices,
                                  orig.unsorted_indices)
        if self.batch_first:
            out = out.transpose(0, 1)
        return out if is_batched else out.squeeze(0 if self.batch_first else 1)


class _SingleState(RNNBase):
    """``RNN`` and ``GRU``: one state tensor ``h``."""

    _name = "RNN"
    _word = ""

    def forward(self, input: Any, hx: Tensor | None = None) -> Any:  # noqa: A002
        data, batch_sizes, sorted_idx, unsorted_idx, is_batched = self._prepare(
            input, hx, self._name, self._word)
        if batch_sizes is None:
            if not is_batched:
                data = data.unsqueeze(0 if self.batch_first else 1)
                if hx is not None:
                    if hx.dim() != 2:
                        raise RuntimeError("For unbatched 2-D input, hx should also be 2-D but "
                                           f"got {hx.dim()}-D tensor")
                    hx = hx.unsqueeze(1)
            elif hx is not None and hx.dim() != 3:
                raise RuntimeError("For batched 3-D input, hx should also be 3-D but got "
                                   f"{hx.dim()}-D tensor")
        elif hx is not None:
            hx = self.permute_hidden(hx, sorted_idx)
        batch = batch_sizes[0] if batch_sizes is not None else \
            data.size(0 if self.batch_first else 1)
        if hx is None:
            hx = self._zeros(data, batch, self.hidden_size)
        self.check_forward_args(data, hx, batch_sizes)
        x, _ = self._finish(input, data, batch_sizes)
        out, h, _c = self._run(x, hx, None, batch_sizes)
        h = self.permute_hidden(h, unsorted_idx)
        if batch_sizes is None and not is_batched:
            h = h.squeeze(1)
        return self._output(out, input, batch_sizes, is_batched), h


class RNN(_SingleState):
    """Elman RNN: ``h_t = act(W_ih x_t + b_ih + W_hh h_{t-1} + b_hh)`` with ``act`` tanh or relu,
    stacked ``num_layers`` deep, optionally bidirectional (PyTorch's ``nn.RNN``)."""

    _word = " tensor"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or "
                             "'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity


class GRU(_SingleState):
    """Gated recurrent unit, gates r, z, n: ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``,
    ``h' = (1 - z) * n + z * h`` (PyTorch's ``nn.GRU``)."""

    _name = "GRU"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)


class LSTM(RNNBase):
    """Long short-term memory, gates i, f, g, o: ``c' = f * c + i * g``, ``h' = o * tanh(c')``,
    with ``proj_size > 0`` ``h' = W_hr (o * tanh(c'))`` (PyTorch's ``nn.LSTM``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Any) -> tuple[int, int, int]:  # noqa: A002
        expected = self.get_expected_hidden_size(input, batch_sizes)
        return (expected[0], expected[1], self.hidden_size)

    def check_forward_args(self, input: Tensor, hidden: Any, batch_sizes: Any) -> None:  # noqa: A002
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden[0], self.get_expected_hidden_size(input, batch_sizes),
                               "Expected hidden[0] size {}, got {}")
        self.check_hidden_size(hidden[1], self.get_expected_cell_size(input, batch_sizes),
                               "Expected hidden[1] size {}, got {}")

    def permute_hidden(self, hx: Any, permutation: Tensor | None) -> Any:
        if permutation is None:
            return hx
        return hx[0].index_select(1, permutation), hx[1].index_select(1, permutation)

    def forward(self, input: Any, hx: Any = None) -> Any:  # noqa: A002
        data, batch_sizes, sorted_idx, unsorted_idx, is_batched = self._prepare(
            input, hx, "LSTM", "")
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        if batch_sizes is None and not is_batched:
            data = data.unsqueeze(0 if self.batch_first else 1)
        batch = batch_sizes[0] if batch_sizes is not None else \
            data.size(0 if self.batch_first else 1)
        if hx is None:
            hx = (self._zeros(data, batch, real_hidden), self._zeros(data, batch, self.hidden_size))
            self.check_forward_args(data, hx, batch_sizes)
        elif batch_sizes is not None:
            hx = self.permute_hidden(hx, sorted_idx)
            self.check_forward_args(data, hx, batch_sizes)
        else:
            if is_batched:
                if hx[0].dim() != 3 or hx[1].dim() != 3:
                    raise RuntimeError("For batched 3-D input, hx and cx should also be 3-D but "
                                       f"got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
            else:
                if hx[0].dim() != 2 or hx[1].dim() != 2:
                    raise RuntimeError("For unbatched 2-D input, hx and cx should also be 2-D "
                                       f"but got ({hx[0].dim()}-D, {hx[1].dim()}-D) tensors")
                hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            self.check_forward_args(data, hx, batch_sizes)
        x, _ = self._finish(input, data, batch_sizes)
        out, h, c = self._run(x, hx[0], hx[1], batch_sizes)
        h, c = self.permute_hidden((h, c), unsorted_idx)
        if batch_sizes is None and not is_batched:
            h, c = h.squeeze(1), c.squeeze(1)
        return self._output(out, input, batch_sizes, is_batched), (h, c)


class RNNCellBase(Module):
    """Base of the cells: ``weight_ih`` ``(chunks * hidden, input)``, ``weight_hh``
    ``(chunks * hidden, hidden)``, ``bias_ih`` and ``bias_hh``, all from U(-1/sqrt(hidden),
    1/sqrt(hidden))."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _proj(self, x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
        return x.matmul(w.t()) if b is None else b.addmm(x, w.t())

    def _inputs(self, name: str, input: Tensor, hx: Any, n_states: int) -> Any:  # noqa: A002
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = [hx] if n_states == 1 else (list(hx) if hx is not None else None)
        if hx is not None:
            for idx, value in enumerate(states):  # type: ignore[arg-type]
                if value.dim() not in (1, 2):
                    what = "hidden" if n_states == 1 else f"hx[{idx}]"
                    raise ValueError(f"{name}: Expected {what} to be 1D or 2D, got "
                                     f"{value.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            z = zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)
            states = [z] * n_states
        elif not is_batched:
            states = [s.unsqueeze(0) for s in states]  # type: ignore[union-attr]
        return input, states, is_batched


class RNNCell(RNNCellBase):
    """``h' = act(W_ih x + b_ih + W_hh h + b_hh)``, ``act`` tanh or relu."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True,
                 nonlinearity: str = "tanh", device: Any = None, dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        x, (h,), is_batched = self._inputs("RNNCell", input, hx, 1)
        pre = self._proj(x, self.weight_ih, self.bias_ih) + \
            self._proj(h, self.weight_hh, self.bias_hh)
        if self.nonlinearity == "tanh":
            out = pre.tanh()
        elif self.nonlinearity == "relu":
            out = pre.relu()
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return out if is_batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step (gates i, f, g, o); returns ``(h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input: Tensor, hx: Any = None) -> tuple[Tensor, Tensor]:  # noqa: A002
        x, (h, c), is_batched = self._inputs("LSTMCell", input, hx, 2)
        if _scan.fused_here(x):  # NOTE: PyTorch's CUDA cell: one fused node, the biases its inputs
            h2, c2 = _scan.FusedLstmCell.apply(x.matmul(self.weight_ih.t()),
                                               h.matmul(self.weight_hh.t()), c, self.bias_ih,
                                               self.bias_hh)
        else:
            gates = self._proj(x, self.weight_ih, self.bias_ih) + \
                self._proj(h, self.weight_hh, self.bias_hh)
            h2, c2 = _scan.lstm_cell(gates, c, None)
        return (h2, c2) if is_batched else (h2.squeeze(0), c2.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step (gates r, z, n)."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:  # noqa: A002
        x, (h,), is_batched = self._inputs("GRUCell", input, hx, 1)
        if _scan.fused_here(x):  # NOTE: as LSTMCell's
            out = _scan.FusedGruCell.apply(x.matmul(self.weight_ih.t()),
                                           h.matmul(self.weight_hh.t()), h, self.bias_ih,
                                           self.bias_hh)
        else:
            out = _scan.gru_cell(self._proj(x, self.weight_ih, self.bias_ih),
                                 self._proj(h, self.weight_hh, self.bias_hh), h)
        return out if is_batched else out.squeeze(0)
