"""RNN, LSTM, GRU and their cells against torch from identical weights: outputs, final states,
gradients of the input, initial states and every parameter (float64 to 1e-10, one float32
case), batch_first, bidirectional, two layers, proj_size, packed sequences, unbatched inputs;
repr, state_dict, init bounds, errors (misuse catalogue)."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.autograd._util import assert_same
from tests.misuse._catalogue import catalogue_test
from tests.nn._util import copy_params, grads_of, second_grads

F64 = {"rtol": 1e-10, "atol": 1e-12}
F32 = {"rtol": 1e-5, "atol": 1e-6}

# (class, kwargs, input layout): "3d" padded, "2d" unbatched, "packed"/"unsorted" packed
CASES: list[tuple[str, dict[str, Any], str]] = [
    ("LSTM", {}, "3d"),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "batch_first": True}, "3d"),
    ("LSTM", {"proj_size": 2, "num_layers": 2}, "3d"),
    ("LSTM", {"proj_size": 2, "bidirectional": True}, "unsorted"),
    ("LSTM", {"bias": False}, "2d"),
    ("LSTM", {"num_layers": 2, "dropout": 0.0}, "packed"),
    ("GRU", {}, "3d"),
    ("GRU", {"num_layers": 2, "bidirectional": True}, "unsorted"),
    ("GRU", {"batch_first": True, "bias": False}, "packed"),
    ("GRU", {"bidirectional": True}, "2d"),
    ("RNN", {}, "3d"),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2, "batch_first": True}, "3d"),
    ("RNN", {"bidirectional": True}, "packed"),
    ("RNN", {"num_layers": 2}, "2d"),
]
T_, B_, IN, HID = 4, 3, 3, 4


def _build(name: str, kwargs: dict[str, Any], dtype: str, device: str) -> tuple[Any, Any]:
    ours = getattr(ag.nn, name)(IN, HID, dtype=getattr(ag, dtype), **kwargs)
    theirs = getattr(torch.nn, name)(IN, HID, dtype=getattr(torch, dtype), **kwargs)
    assert repr(ours) == repr(theirs)
    assert [(k, tuple(v.shape)) for k, v in ours.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in theirs.state_dict().items()]
    copy_params(ours, theirs)
    return ours.to(device), theirs


def _states(T: Any, name: str, m: Any, batch: int | None, dtype: Any, dev: str,
            rng: np.random.Generator) -> Any:
    dirs = 2 if m.bidirectional else 1
    lead = (m.num_layers * dirs,) if batch is None else (m.num_layers * dirs, batch)
    real = m.proj_size if name == "LSTM" and m.proj_size else HID
    h = rng.standard_normal((*lead, real))
    mk = lambda a: T.tensor(a.tolist(), dtype=dtype, device=dev, requires_grad=True)  # noqa: E731
    if name == "LSTM":
        return mk(h), mk(rng.standard_normal((*lead, HID)))
    return mk(h)


def _run(T: Any, name: str, m: Any, layout: str, dtype: Any, dev: str) -> tuple[Any, list[Any]]:
    """Output, final state(s) and the leaves to differentiate for one library."""
    rng = np.random.default_rng(0)
    bf = m.batch_first
    mk = lambda a: T.tensor(a.tolist(), dtype=dtype, device=dev, requires_grad=True)  # noqa: E731
    if layout == "2d":
        x = mk(rng.standard_normal((T_, IN)))
        hx = _states(T, name, m, None, dtype, dev, rng)
        out, hn = m(x, hx)
        leaves = [x, *(hx if name == "LSTM" else [hx])]
        return (out, hn), leaves
    x = mk(rng.standard_normal((B_, T_, IN) if bf else (T_, B_, IN)))
    hx = _states(T, name, m, B_, dtype, dev, rng)
    leaves = [x, *(hx if name == "LSTM" else [hx])]
    if layout == "3d":
        return m(x, hx), leaves
    lengths = [4, 2, 1] if layout == "packed" else [2, 4, 1]
    packed = T.nn.utils.rnn.pack_padded_sequence(x, lengths, batch_first=bf,
                                                 enforce_sorted=layout == "packed")
    out, hn = m(packed, hx)
    assert isinstance(out, T.nn.utils.rnn.PackedSequence)
    padded, lens = T.nn.utils.rnn.pad_packed_sequence(out, batch_first=bf)
    return (out.data, padded, lens, hn), leaves


@pytest.mark.parametrize("name, kwargs, layout", CASES)
def test_matches_torch(name: str, kwargs: dict[str, Any], layout: str, device: str) -> None:
    ours, theirs = _build(name, kwargs, "float64", device)
    out_o, leaves_o = _run(ag, name, ours, layout, ag.float64, device)
    out_t, leaves_t = _run(torch, name, theirs, layout, torch.float64, "cpu")
    assert_same(out_o, out_t, **F64)
    flat = lambda out: [out[0], *(out[-1] if isinstance(out[-1], tuple)  # noqa: E731
                                  else [out[-1]])]
    total_o = sum((o * o.detach().cos()).sum() for o in flat(out_o))
    total_t = sum((o * o.detach().cos()).sum() for o in flat(out_t))
    g_o = grads_of(total_o, leaves_o + list(ours.parameters()))
    g_t = grads_of(total_t, leaves_t + list(theirs.parameters()))
    assert_same(g_o, g_t, **F64)


def test_float32_and_train_eval(device: str) -> None:
    ours, theirs = _build("LSTM", {"num_layers": 2, "bidirectional": True}, "float32", device)
    for mode in ("train", "eval"):
        getattr(ours, mode)()
        getattr(theirs, mode)()
        out_o, leaves_o = _run(ag, "LSTM", ours, "3d", ag.float32, device)
        out_t, leaves_t = _run(torch, "LSTM", theirs, "3d", torch.float32, "cpu")
        assert_same(out_o, out_t, **F32)
        assert out_o[0].dtype == ag.float32
        assert_same(grads_of(out_o[0], leaves_o), grads_of(out_t[0], leaves_t), rtol=1e-4,
                    atol=1e-5)


@pytest.mark.parametrize("name", ["LSTM", "GRU", "RNN"])
def test_default_states_and_state_dict(name: str, device: str) -> None:
    theirs = getattr(torch.nn, name)(IN, HID, num_layers=2, dtype=torch.float64)
    ours = getattr(ag.nn, name)(IN, HID, num_layers=2, dtype=ag.float64)
    ours.load_state_dict({k: ag.tensor(v.numpy().tolist(), dtype=ag.float64)
                          for k, v in theirs.state_dict().items()}, strict=True)
    ours.to(device)
    x = np.random.default_rng(1).standard_normal((T_, B_, IN))
    assert_same(ours(ag.tensor(x.tolist(), dtype=ag.float64, device=device)), theirs(torch.tensor(x)),
                **F64)
    assert ours._flat_weights_names == theirs._flat_weights_names
    assert [[tuple(w.shape) for w in ws] for ws in ours.all_weights] == \
        [[tuple(w.shape) for w in ws] for ws in theirs.all_weights]
    assert ours._flat_weights[0] is ours.weight_ih_l0
    ours.flatten_parameters()


def test_init_bounds_and_dropout(device: str) -> None:
    m = ag.nn.LSTM(5, 16, num_layers=2, dropout=0.5, device=device)
    for p in m.parameters():
        assert p.dtype == ag.float32 and p.device.type == device
        assert float(p.abs().max()) <= 0.25
    x = ag.randn(3, 2, 5, device=device)
    m.eval()
    a, b = m(x)[0], m(x)[0]
    assert bool((a == b).all())
    m.train()
    ag.manual_seed(0)
    c = m(x)[0]
    ag.manual_seed(0)
    assert bool((c == m(x)[0]).all())
    assert not bool((c == a).all())


CELLS = [("LSTMCell", {}), ("GRUCell", {}), ("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
         ("GRUCell", {"bias": False})]


@pytest.mark.parametrize("name, kwargs", CELLS)
@pytest.mark.parametrize("batched", [True, False])
@pytest.mark.parametrize("with_state", [True, False])
def test_cells(name: str, kwargs: dict[str, Any], batched: bool, with_state: bool,
               device: str) -> None:
    ours, theirs = _build(name, kwargs, "float64", device)
    rng = np.random.default_rng(3)
    lead = (B_,) if batched else ()
    x, h, c = (rng.standard_normal((*lead, n)) for n in (IN, HID, HID))

    def run(T: Any, m: Any, dev: str) -> tuple[Any, list[Any]]:
        mk = lambda a: T.tensor(a.tolist(), dtype=T.float64, device=dev,  # noqa: E731
                                requires_grad=True)
        xs = mk(x)
        if not with_state:
            return m(xs), [xs]
        hx = (mk(h), mk(c)) if name == "LSTMCell" else mk(h)
        return m(xs, hx), [xs, *(hx if name == "LSTMCell" else [hx])]

    out_o, leaves_o = run(ag, ours, device)
    out_t, leaves_t = run(torch, theirs, "cpu")
    assert_same(out_o, out_t, **F64)
    total_o = out_o[0].sum() + (out_o[1] ** 2).sum() if name == "LSTMCell" else out_o
    total_t = out_t[0].sum() + (out_t[1] ** 2).sum() if name == "LSTMCell" else out_t
    assert_same(grads_of(total_o, leaves_o + list(ours.parameters())),
                grads_of(total_t, leaves_t + list(theirs.parameters())), **F64)
    first_o = out_o[0] if name == "LSTMCell" else out_o
    first_t = out_t[0] if name == "LSTMCell" else out_t
    want = first_t.grad_fn.name()
    if device == "cuda":  # PyTorch's CUDA cells are one fused node (torch CPU: its last op)
        want = CUDA_CELL_NODES.get((name, want), want)
    assert first_o.grad_fn.name() == want


CUDA_CELL_NODES = {("LSTMCell", "MulBackward0"): "ThnnFusedLstmCellBackward0",
                   ("GRUCell", "AddBackward0"): "ThnnFusedGruCellBackward0"}


def test_dropout_warning() -> None:
    for lib in (torch, ag):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.GRU(2, 3, dropout=0.2)
        assert len(caught) == 1 and "non-zero dropout expects num_layers greater than 1, but " \
            "got dropout=0.2 and num_layers=1" in str(caught[0].message)
    assert caught[0].filename == __file__  # ours points at the caller


def _x(T: Any, d: str, *shape: int) -> Any:
    return T.zeros(*shape, dtype=T.float64, device=d)


ERRORS = {
    "input_size": lambda T, d: T.nn.LSTM(3, 4, dtype=T.float64).to(d)(_x(T, d, 2, 1, 4)),
    "hidden_size": lambda T, d: T.nn.GRU(3, 4, dtype=T.float64).to(d)(_x(T, d, 2, 1, 3),
                                                                      _x(T, d, 1, 2, 4)),
    "lstm_h0": lambda T, d: T.nn.LSTM(3, 4, dtype=T.float64).to(d)(
        _x(T, d, 2, 1, 3), (_x(T, d, 1, 1, 5), _x(T, d, 1, 1, 4))),
    "lstm_c0": lambda T, d: T.nn.LSTM(3, 4, proj_size=2, dtype=T.float64).to(d)(
        _x(T, d, 2, 1, 3), (_x(T, d, 1, 1, 2), _x(T, d, 1, 1, 2))),
    "lstm_dims": lambda T, d: T.nn.LSTM(3, 4, dtype=T.float64).to(d)(
        _x(T, d, 2, 1, 3), (_x(T, d, 1, 4), _x(T, d, 1, 1, 4))),
    "lstm_unbatched_dims": lambda T, d: T.nn.LSTM(3, 4, dtype=T.float64).to(d)(
        _x(T, d, 2, 3), (_x(T, d, 1, 1, 4), _x(T, d, 1, 1, 4))),
    "rnn_4d": lambda T, d: T.nn.RNN(3, 4, dtype=T.float64).to(d)(_x(T, d, 2, 1, 1, 3)),
    "gru_1d": lambda T, d: T.nn.GRU(3, 4, dtype=T.float64).to(d)(_x(T, d, 3)),
    "rnn_hx_dims": lambda T, d: T.nn.RNN(3, 4, dtype=T.float64).to(d)(_x(T, d, 2, 1, 3),
                                                                      _x(T, d, 1, 4)),
    "rnn_unbatched_hx": lambda T, d: T.nn.RNN(3, 4, dtype=T.float64).to(d)(_x(T, d, 2, 3),
                                                                           _x(T, d, 1, 1, 4)),
    "dtype": lambda T, d: T.nn.RNN(3, 4).to(d)(_x(T, d, 2, 1, 3)),
    "nonlinearity": lambda T, d: T.nn.RNN(3, 4, nonlinearity="sigmoid"),
    "proj_gru": lambda T, d: T.nn.GRU(3, 4, proj_size=2),
    "proj_big": lambda T, d: T.nn.LSTM(3, 4, proj_size=4),
    "proj_neg": lambda T, d: T.nn.LSTM(3, 4, proj_size=-1),
    "dropout_range": lambda T, d: T.nn.LSTM(3, 4, dropout=1.5),
    "dropout_bool": lambda T, d: T.nn.LSTM(3, 4, dropout=True),
    "bias_type": lambda T, d: T.nn.LSTM(3, 4, bias=1),
    "input_size_type": lambda T, d: T.nn.LSTM(3.0, 4),
    "hidden_zero": lambda T, d: T.nn.GRU(3, 0),
    "layers_zero": lambda T, d: T.nn.GRU(3, 2, num_layers=0),
    "cell_3d": lambda T, d: T.nn.GRUCell(3, 4).to(d)(T.zeros(1, 1, 3, device=d)),
    "cell_hx_3d": lambda T, d: T.nn.RNNCell(3, 4).to(d)(T.zeros(1, 3, device=d),
                                                        T.zeros(1, 1, 4, device=d)),
    "lstmcell_hx": lambda T, d: T.nn.LSTMCell(3, 4).to(d)(
        T.zeros(1, 3, device=d), (T.zeros(1, 4, device=d), T.zeros(1, 1, 1, device=d))),
    "cell_nonlinearity": lambda T, d: T.nn.RNNCell(3, 4, nonlinearity="gelu").to(d)(
        T.zeros(1, 3, device=d)),
}

test_misuse = catalogue_test(ERRORS)


def test_lstm_double_backward(device: str) -> None:
    ours, theirs = _build("LSTM", {}, "float64", device)
    x = np.random.default_rng(4).standard_normal((3, 2, IN))
    xo = ag.tensor(x.tolist(), dtype=ag.float64, device=device, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    assert_same(second_grads(ours(xo)[0], xo), second_grads(theirs(xt)[0], xt), **F64)
