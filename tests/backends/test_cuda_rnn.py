"""The fused recurrent cells (``kernels/rnn.cu``, ``backends/cuda_rnn.py``, the backend entries
of ``backends/rnn.py`` and the nodes ``ops/rnn.py: FusedLstmCell, FusedGruCell``).

CPU (always): the reference twins (the backend entries on NumPy) against torch's composition in
float64: outputs, workspace, gradients. GPU (a real GPU, or the CPU kernel emulator under
AUTOGRAD_GPU_FAKE_CUDA=emulate; see test_cuda_kernels.py): each launcher against its reference
twin in float64 and against torch CPU, float16/32/64, batch 0 to 3, hidden 1, 7 and 33, with
and without the optional inputs, strided and broadcast operands. End to end on device "cuda"
(also under AUTOGRAD_GPU_FAKE_CUDA=1, where the twins stand in for the kernels): LSTMCell,
GRUCell, LSTM and GRU (proj_size, bias=False, packed sequences) against torch CPU, values and
the gradients of inputs, states, weights and biases, PyTorch's CUDA node names, double backward
through the recomputed composition, float16 within a loose bound.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.backends import cuda_rnn
from autograd_gpu.backends.numpy_backend import numpy_backend
from tests.backends.test_cuda_kernels import cp, gpu
from tests.nn._util import copy_params, grads_of, second_grads

DTYPES = ("float16", "float32", "float64")
# NOTE: float16 results are rounded once from float32 (the kernels' compute type): a few ulps
RTOL = {"float16": 4e-3, "float32": 2e-5, "float64": 1e-12}
ATOL = {"float16": 4e-3, "float32": 2e-6, "float64": 1e-13}
SHAPES = [(b, h) for b in (0, 1, 2, 3) for h in (1, 7, 33)]
cuda = pytest.mark.skipif(not ag.cuda.is_available(),
                          reason="no CUDA device (AUTOGRAD_GPU_FAKE_CUDA=1 or =emulate gives one)")


# ---- torch's composition: the contract both the twins and the kernels meet ------------------

def _torch_lstm(ig: Any, hg: Any, cx: Any, b_ih: Any, b_hh: Any) -> tuple[Any, Any, Any]:
    gates = ig + (0 if hg is None else hg) + (0 if b_ih is None else b_ih) + \
        (0 if b_hh is None else b_hh)
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    return o * cy.tanh(), cy, torch.cat([i, f, g, o], 1)


def _torch_gru(ig: Any, hg: Any, hx: Any, b_ih: Any, b_hh: Any) -> tuple[Any, Any]:
    gi = ig + (0 if b_ih is None else b_ih)
    gh = hg + (0 if b_hh is None else b_hh)
    (ir, iz, i_n), (hr, hz, hn) = gi.chunk(3, 1), gh.chunk(3, 1)
    r, z = (ir + hr).sigmoid(), (iz + hz).sigmoid()
    n = (i_n + r * hn).tanh()
    return n + z * (hx - n), torch.cat([r, z, n, hx, hn], 1)


def _inputs(kind: str, batch: int, hidden: int, seed: int) -> dict[str, np.ndarray]:
    """float64 operands: gates, the state, biases and the output gradients."""
    rng = np.random.default_rng(seed)
    width = (4 if kind == "lstm" else 3) * hidden
    arrays = {"ig": rng.uniform(-3, 3, (batch, width)), "hg": rng.uniform(-3, 3, (batch, width)),
              "x": rng.uniform(-2, 2, (batch, hidden)), "b_ih": rng.uniform(-1, 1, width),
              "b_hh": rng.uniform(-1, 1, width), "gh": rng.uniform(-1, 1, (batch, hidden)),
              "gc": rng.uniform(-1, 1, (batch, hidden))}
    return arrays


def _torch_reference(kind: str, a: dict[str, np.ndarray], use: dict[str, bool]) -> dict[str, Any]:
    """torch's outputs, workspace and gradients (float64) for the operands ``use`` keeps."""
    t = {k: torch.tensor(v, requires_grad=True) for k, v in a.items()}
    opt = {k: t[k] if use.get(k, True) else None for k in ("hg", "b_ih", "b_hh")}
    if kind == "lstm":
        hy, cy, ws = _torch_lstm(t["ig"], opt["hg"], t["x"], opt["b_ih"], opt["b_hh"])
        total = (hy * t["gh"]).sum() * use["grad_hy"] + (cy * t["gc"]).sum() * use["grad_cy"]
        outs = {"hy": hy, "cy": cy, "ws": ws}
    else:
        hy, ws = _torch_gru(t["ig"], t["hg"], t["x"], opt["b_ih"], opt["b_hh"])
        total = (hy * t["gh"]).sum()
        outs = {"hy": hy, "ws": ws}
    wrt = [t["ig"], t["hg"], t["x"]]
    grads = torch.autograd.grad(total, wrt, allow_unused=True) if total.requires_grad else \
        [None] * 3
    ref = {k: v.detach().numpy() for k, v in outs.items()}
    for name, g, like in zip(("g_ig", "g_hg", "g_x"), grads, wrt):
        ref[name] = np.zeros(like.shape) if g is None else g.numpy()
    return ref


VARIANTS = {  # which optional operands are present
    "all": {"hg": True, "b_ih": True, "b_hh": True, "grad_hy": True, "grad_cy": True},
    "no_bias": {"hg": True, "b_ih": False, "b_hh": False, "grad_hy": True, "grad_cy": True},
    "gates_only": {"hg": False, "b_ih": False, "b_hh": True, "grad_hy": True, "grad_cy": False},
    "no_grad_hy": {"hg": True, "b_ih": True, "b_hh": False, "grad_hy": False, "grad_cy": True},
    "no_grads": {"hg": True, "b_ih": True, "b_hh": True, "grad_hy": False, "grad_cy": False},
}


def _run(backend: Any, kind: str, arrays: dict[str, Any], use: dict[str, bool]) -> dict[str, Any]:
    """The backend entries on ``arrays`` (the backend's arrays): outputs, workspace, grads."""
    opt = {k: arrays[k] if use.get(k, True) else None for k in ("hg", "b_ih", "b_hh")}
    if kind == "lstm":
        hy, cy, ws = backend.lstm_cell(arrays["ig"], opt["hg"], arrays["x"], opt["b_ih"],
                                       opt["b_hh"])
        g_gates, g_x = backend.lstm_cell_backward(arrays["gh"] if use["grad_hy"] else None,
                                                  arrays["gc"] if use["grad_cy"] else None,
                                                  arrays["x"], cy, ws)
        return {"hy": hy, "cy": cy, "ws": ws, "g_ig": g_gates,
                "g_hg": g_gates if use["hg"] else None, "g_x": g_x}
    hy, ws = backend.gru_cell(arrays["ig"], arrays["hg"], arrays["x"], opt["b_ih"], opt["b_hh"])
    g_ig, g_hg, g_x = backend.gru_cell_backward(arrays["gh"], ws)
    return {"hy": hy, "ws": ws, "g_ig": g_ig, "g_hg": g_hg, "g_x": g_x}


def _compare(got: dict[str, Any], want: dict[str, Any], dtype: str, host: Any,
             scale: float = 1.0) -> None:
    for name, value in got.items():
        if value is None:
            continue
        assert value.dtype == np.dtype(dtype), (name, value.dtype)
        assert value.shape == want[name].shape, (name, value.shape, want[name].shape)
        np.testing.assert_allclose(host(value).astype(np.float64), want[name],
                                   rtol=RTOL[dtype] * scale, atol=ATOL[dtype] * scale,
                                   err_msg=name)


# ---- CPU: the reference twins ------------------------------------------------------------------

@pytest.mark.parametrize("variant", list(VARIANTS))
@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_reference_twins_match_torch(kind: str, variant: str) -> None:
    use = VARIANTS[variant]
    if kind == "gru" and not use["hg"]:
        pytest.skip("the GRU needs its hidden gates")
    for batch, hidden in [(0, 7), (1, 1), (3, 33)]:
        a = _inputs(kind, batch, hidden, seed=hidden)
        want = _torch_reference(kind, a, use)
        _compare(_run(numpy_backend, kind, a, use), want, "float64", np.asarray)
    a32 = {k: v.astype(np.float32) for k, v in _inputs(kind, 2, 7, seed=5).items()}
    want = _torch_reference(kind, {k: v.astype(np.float64) for k, v in a32.items()}, use)
    _compare(_run(numpy_backend, kind, a32, use), want, "float32", np.asarray)


def test_launchers_check_shapes_and_import_without_cupy() -> None:
    assert cuda_rnn._check(np.zeros((2, 12)), None, np.zeros((2, 3)), None, None, 4, "x") == 3
    assert not cuda_rnn.usable(np.zeros((2, 12))) if cp is None else True
    with pytest.raises(ValueError, match="do not fit"):
        cuda_rnn._check(np.zeros((2, 12)), None, np.zeros((2, 4)), None, None, 4, "lstm_cell")
    with pytest.raises(ValueError, match="hidden gates"):
        cuda_rnn._check(np.zeros((2, 9)), np.zeros((2, 6)), np.zeros((2, 3)), None, None, 3, "g")
    with pytest.raises(ValueError, match="bias of shape"):
        cuda_rnn._check(np.zeros((2, 9)), None, np.zeros((2, 3)), np.zeros(3), None, 3, "g")


# ---- GPU (or the emulator): the launchers against the twins and torch ------------------------

def _layout(a: np.ndarray, how: str) -> Any:
    """``a`` as a cupy array: contiguous, a transposed copy, or every other column of a wider
    buffer (both not C-contiguous)."""
    if how == "transposed" and a.ndim == 2:
        return cp.asarray(np.ascontiguousarray(a.T)).T
    if how == "sliced" and a.ndim == 2:
        wide = np.zeros((a.shape[0], 2 * a.shape[1]), a.dtype)
        wide[:, ::2] = a
        return cp.asarray(wide)[:, ::2]
    return cp.asarray(a)


@gpu
@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("kind", ["lstm", "gru"])
def test_launchers_match_twin_and_torch(kind: str, dtype: str) -> None:
    for k, (batch, hidden) in enumerate(SHAPES):
        variant = list(VARIANTS)[k % len(VARIANTS)]
        use = VARIANTS[variant]
        if kind == "gru":
            use = {**use, "hg": True}
        layout = ("contiguous", "transposed", "sliced")[k % 3]
        a = {n: v.astype(dtype) for n, v in _inputs(kind, batch, hidden, seed=k).items()}
        exact = {n: v.astype(np.float64) for n, v in a.items()}  # the rounded operands
        want = _torch_reference(kind, exact, use)
        twin = _run(numpy_backend, kind, exact, use)  # the twins in float64
        for name, value in twin.items():
            if value is not None:
                np.testing.assert_allclose(value, want[name], rtol=1e-12, atol=1e-13)
        arrays = {n: _layout(v, layout) for n, v in a.items()}
        got = _run(_KernelOnly, kind, arrays, use)
        # the twin on the CUDA backend, in the dtype (float16 computed in float32, as the kernel)
        _compare(got, {n: cp.asnumpy(v).astype(np.float64) for n, v in
                       _run(_Reference(), kind, arrays, use).items() if v is not None},
                 dtype, cp.asnumpy, 2)
        # the gradients read the float16-rounded workspace: a few more ulps
        _compare(got, want, dtype, cp.asnumpy, 4 if dtype == "float16" else 1)


class _Reference:
    """The CUDA backend's reference twins under the entries' names."""

    def __getattr__(self, name: str) -> Any:
        return getattr(ag.device("cuda:0").backend, name + "_reference")


class _KernelOnly:
    """The backend entries' signatures, straight to the launchers (no fallback)."""

    lstm_cell = staticmethod(cuda_rnn.lstm_cell)
    lstm_cell_backward = staticmethod(cuda_rnn.lstm_cell_backward)
    gru_cell = staticmethod(cuda_rnn.gru_cell)
    gru_cell_backward = staticmethod(cuda_rnn.gru_cell_backward)


@gpu
def test_launchers_without_workspace_broadcast_grads_and_empty() -> None:
    a = {n: v.astype("float32") for n, v in _inputs("lstm", 3, 7, seed=1).items()}
    c = {n: cp.asarray(v) for n, v in a.items()}
    hy, cy, ws = cuda_rnn.lstm_cell(c["ig"], c["hg"], c["x"], c["b_ih"], c["b_hh"])
    hy2, cy2, none = cuda_rnn.lstm_cell(c["ig"], c["hg"], c["x"], c["b_ih"], c["b_hh"],
                                        workspace=False)
    assert none is None and bool((hy2 == hy).all()) and bool((cy2 == cy).all())
    ones = cp.broadcast_to(cp.asarray(np.float32(1)), (3, 7))  # sum().backward()'s gradient
    g_gates, g_cx = cuda_rnn.lstm_cell_backward(ones, None, c["x"], cy, ws)
    want_gates, want_cx = cuda_rnn.lstm_cell_backward(cp.ones((3, 7), np.float32), None, c["x"],
                                                      cy, ws)
    assert bool((g_gates == want_gates).all()) and bool((g_cx == want_cx).all())
    g = {n: cp.asarray(v) for n, v in _inputs("gru", 2, 5, seed=2).items()}
    hy, ws = cuda_rnn.gru_cell(g["ig"], g["hg"], g["x"], None, g["b_hh"], workspace=False)
    assert ws is None and hy.shape == (2, 5)
    for batch in (0,):
        e = {n: cp.asarray(v) for n, v in _inputs("gru", batch, 3, seed=3).items()}
        hy, ws = cuda_rnn.gru_cell(e["ig"], e["hg"], e["x"])
        assert hy.shape == (0, 3) and ws.shape == (0, 15)
        assert [x.shape for x in cuda_rnn.gru_cell_backward(e["gh"], ws)] == [(0, 9), (0, 9),
                                                                             (0, 3)]
    with pytest.raises(ValueError, match="hidden gates are required"):
        cuda_rnn.gru_cell(g["ig"], None, g["x"])
    with pytest.raises(TypeError, match="one dtype"):
        cuda_rnn.lstm_cell(c["ig"], c["hg"].astype(np.float64), c["x"])


@gpu
def test_backend_entries_use_the_kernels_and_fall_back() -> None:
    backend = ag.device("cuda:0").backend
    a = {n: cp.asarray(v) for n, v in _inputs("lstm", 2, 3, seed=4).items()}
    seen: list[str] = []
    real = cuda_rnn.lstm_cell

    def spy(*args: Any, **kwargs: Any) -> Any:
        seen.append("kernel")
        return real(*args, **kwargs)

    cuda_rnn.lstm_cell = spy  # type: ignore[assignment]
    try:
        fast = backend.lstm_cell(a["ig"], a["hg"], a["x"], a["b_ih"], a["b_hh"])
        mixed = backend.lstm_cell(a["ig"], a["hg"], a["x"].astype(np.float32), None, None)
    finally:
        cuda_rnn.lstm_cell = real  # type: ignore[assignment]
    assert seen == ["kernel"]  # mixed dtypes: the twin (numpy's promotion)
    assert fast[0].dtype == np.float64 and mixed[0].shape == (2, 3)


# ---- end to end on device "cuda" -----------------------------------------------------------

CELL_NODES = {"LSTMCell": "ThnnFusedLstmCellBackward0", "GRUCell": "ThnnFusedGruCellBackward0"}
F64 = {"rtol": 1e-10, "atol": 1e-12}


def _tensor(T: Any, a: np.ndarray, dtype: str, dev: str, grad: bool = True) -> Any:
    return T.tensor(a, dtype=getattr(T, dtype), device=dev, requires_grad=grad)


def _close(ours: list[Any], theirs: list[Any], tol: dict[str, float]) -> None:
    assert len(ours) == len(theirs)
    for o, t in zip(ours, theirs):
        if t is None:
            assert o is None or not bool(o.cpu().abs().max() > 0)
            continue
        np.testing.assert_allclose(o.detach().cpu().double().numpy(), t.detach().double().numpy(),
                                   **tol)


@cuda
@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("name", ["LSTMCell", "GRUCell"])
def test_cells_on_cuda_match_torch(name: str, bias: bool) -> None:
    ours = getattr(ag.nn, name)(5, 7, bias=bias, dtype=ag.float64)
    theirs = getattr(torch.nn, name)(5, 7, bias=bias, dtype=torch.float64)
    copy_params(ours, theirs)
    ours.to("cuda")
    rng = np.random.default_rng(6)
    x, h, c = rng.standard_normal((3, 5)), rng.standard_normal((3, 7)), rng.standard_normal((3, 7))

    def run(T: Any, m: Any, dev: str) -> tuple[Any, list[Any]]:
        leaves = [_tensor(T, a, "float64", dev) for a in (x, h, c)]
        if name == "LSTMCell":
            hy, cy = m(leaves[0], (leaves[1], leaves[2]))
            return (hy, hy * 2 + cy ** 2), leaves
        return (m(leaves[0], leaves[1]),) * 2, leaves[:2]

    (first_o, total_o), leaves_o = run(ag, ours, "cuda")
    (first_t, total_t), leaves_t = run(torch, theirs, "cpu")
    assert first_o.grad_fn.name() == CELL_NODES[name]
    _close([first_o], [first_t], F64)
    _close(grads_of(total_o, leaves_o + list(ours.parameters())),
           grads_of(total_t, leaves_t + list(theirs.parameters())), F64)
    # double backward: the recomputed composition (create_graph)
    (_, total_o), leaves_o = run(ag, ours, "cuda")
    (_, total_t), leaves_t = run(torch, theirs, "cpu")
    _close([second_grads(total_o, leaves_o[1])], [second_grads(total_t, leaves_t[1])], F64)
    if name == "LSTMCell":  # c' alone (h' unused): one gradient reaches the node
        cy_o = ours(leaves_o[0], (leaves_o[1], leaves_o[2]))[1]
        cy_t = theirs(leaves_t[0], (leaves_t[1], leaves_t[2]))[1]
        _close(grads_of(cy_o, leaves_o), grads_of(cy_t, leaves_t), F64)


LAYERS: list[tuple[str, dict[str, Any], str]] = [
    ("LSTM", {"num_layers": 2}, "3d"),
    ("LSTM", {"proj_size": 3, "bidirectional": True}, "packed"),
    ("LSTM", {"bias": False, "batch_first": True}, "3d"),
    ("GRU", {"bidirectional": True}, "3d"),
    ("GRU", {"bias": False}, "packed"),
]


def _layer_run(T: Any, m: Any, name: str, layout: str, dtype: str, dev: str,
               kwargs: dict[str, Any]) -> tuple[Any, list[Any]]:
    rng = np.random.default_rng(8)
    dirs = 2 if kwargs.get("bidirectional") else 1
    states = (kwargs.get("num_layers", 1) * dirs, 3)
    real = kwargs.get("proj_size", 0) or 6
    x = _tensor(T, rng.standard_normal((4, 3, 5)), dtype, dev)
    h0 = _tensor(T, rng.standard_normal((*states, real)), dtype, dev)
    c0 = _tensor(T, rng.standard_normal((*states, 6)), dtype, dev)
    hx = (h0, c0) if name == "LSTM" else h0
    leaves = [x, h0, c0] if name == "LSTM" else [x, h0]
    if layout == "packed":
        packed = T.nn.utils.rnn.pack_padded_sequence(x, T.tensor([4, 3, 1]))
        out, state = m(packed, hx)
        out = T.nn.utils.rnn.pad_packed_sequence(out)[0]
    else:
        out, state = m(x.transpose(0, 1) if kwargs.get("batch_first") else x, hx)
    last = state[0] if name == "LSTM" else state
    return out.sum() * 0.5 + (out * out).sum() + (last * last).sum() * 2, leaves


@cuda
@pytest.mark.parametrize("name, kwargs, layout", LAYERS)
def test_layers_on_cuda_match_torch(name: str, kwargs: dict[str, Any], layout: str) -> None:
    ours = getattr(ag.nn, name)(5, 6, dtype=ag.float64, **kwargs)
    theirs = getattr(torch.nn, name)(5, 6, dtype=torch.float64, **kwargs)
    copy_params(ours, theirs)
    ours.to("cuda")
    total_o, leaves_o = _layer_run(ag, ours, name, layout, "float64", "cuda", kwargs)
    total_t, leaves_t = _layer_run(torch, theirs, name, layout, "float64", "cpu", kwargs)
    _close([total_o], [total_t], F64)
    _close(grads_of(total_o, leaves_o + list(ours.parameters())),
           grads_of(total_t, leaves_t + list(theirs.parameters())), F64)


@cuda
def test_layers_record_the_fused_cells_and_double_backward() -> None:
    gru = ag.nn.GRU(3, 4, dtype=ag.float64)
    theirs = torch.nn.GRU(3, 4, dtype=torch.float64)
    copy_params(gru, theirs)
    gru.to("cuda")
    x = np.random.default_rng(9).standard_normal((3, 2, 3))
    xo, xt = _tensor(ag, x, "float64", "cuda"), _tensor(torch, x, "float64", "cpu")
    out = gru(xo)[0]
    assert out.grad_fn.name() == "StackBackward0"
    assert out.grad_fn.next_functions[0][0].name() == "ThnnFusedGruCellBackward0"
    _close([second_grads(out, xo)], [second_grads(theirs(xt)[0], xt)], F64)


@cuda
@pytest.mark.parametrize("name", ["LSTMCell", "GRUCell", "LSTM", "GRU"])
def test_float16_on_cuda_within_a_loose_bound(name: str) -> None:
    """float16 against torch CPU in float32 from the same float16 values (ours rounds each
    step's results to float16)."""
    cell = name.endswith("Cell")
    ours = getattr(ag.nn, name)(5, 6, dtype=ag.float16)
    theirs = getattr(torch.nn, name)(5, 6, dtype=torch.float32)
    copy_params(ours, theirs)
    ours.to("cuda")
    rng = np.random.default_rng(10)
    shape = (3, 5) if cell else (4, 3, 5)
    x = rng.standard_normal(shape).astype(np.float16)
    xo, xt = _tensor(ag, x, "float16", "cuda"), _tensor(torch, x, "float32", "cpu")
    out_o, out_t = ours(xo), theirs(xt)
    first_o = out_o[0] if isinstance(out_o, tuple) else out_o
    first_t = out_t[0] if isinstance(out_t, tuple) else out_t
    assert first_o.dtype == ag.float16
    loose = {"rtol": 2e-2, "atol": 1e-2}
    _close([first_o], [first_t], loose)
    _close(grads_of(first_o.sum(), [xo] + list(ours.parameters())),
           grads_of(first_t.sum(), [xt] + list(theirs.parameters())), {"rtol": 3e-2, "atol": 3e-2})


def test_cpu_graph_is_unchanged() -> None:
    """The CPU keeps its graph: torch CPU's node names for the cells, the LSTM's own fused
    pointwise node (not the CUDA cell, whose inputs are the two gate matmuls)."""
    x = ag.randn(2, 3, requires_grad=True)
    assert ag.nn.LSTMCell(3, 4)(x)[0].grad_fn.name() == "MulBackward0"
    assert ag.nn.GRUCell(3, 4)(x).grad_fn.name() == "AddBackward0"
    out = ag.nn.LSTM(3, 4)(x.unsqueeze(1))[0]
    node = out.grad_fn.next_functions[0][0]
    assert node.name() == "ThnnFusedLstmCellBackward0" and len(node.next_functions) == 2



@cuda
def test_recomputed_backward_counts_shared_inputs_once() -> None:
    """Under create_graph the fused nodes recompute their composition and take its gradient
    w.r.t. their inputs; one input an ancestor of another (h given as both h and c: the cell's
    hidden gates W_hh h and its c; the GRU's h and W_hh h) must not count the shared path
    twice."""
    ours = ag.nn.LSTMCell(3, 4, dtype=ag.float64)
    theirs = torch.nn.LSTMCell(3, 4, dtype=torch.float64)
    copy_params(ours, theirs)
    ours.to("cuda")
    rng = np.random.default_rng(11)
    x, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 4))

    def grad_of_h(T: Any, m: Any, dev: str) -> Any:
        xs, hs = _tensor(T, x, "float64", dev), _tensor(T, h, "float64", dev)
        hy, cy = m(xs, (hs, hs))
        (g,) = T.autograd.grad((hy * cy).sum(), hs, create_graph=True)
        return g

    _close([grad_of_h(ag, ours, "cuda")], [grad_of_h(torch, theirs, "cpu")], F64)
