"""Our fused recurrent-cell kernels' launchers (``kernels/rnn.cu``): one LSTM or GRU time step's
pointwise part (after the two gate matmuls) in one kernel, its backward in another, with
PyTorch's CUDA contract (``_thnn_fused_lstm_cell``, ``_thnn_fused_gru_cell`` and their
``*_backward``): the forward also writes a workspace, the activated gates, that the backward
reads instead of recomputing them.

The backend's ``lstm_cell``/``gru_cell`` entries (``backends/rnn.py``) call these when
``usable`` says so; they hold the reference twins. Inputs may have any strides (a non-contiguous
one is copied); results are new C-contiguous arrays. Importing this module needs neither CuPy
nor a GPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .cuda_kernels import _common_dtype, _cupy, _launch


def usable(*arrays: Any) -> bool:
    """True when the kernels serve these operands (None ones are absent): our kernels are on
    (``AUTOGRAD_GPU_KERNELS``), every array is a CuPy array of one dtype among float16/32/64."""
    try:
        from .cupy_backend import _kernels_for  # NOTE: late: it imports CuPy
    except ImportError:
        return False
    return _kernels_for(*(a for a in arrays if a is not None))


def _dense(a: Any) -> Any:
    return None if a is None else _cupy().ascontiguousarray(a)


def _check(igates: Any, hgates: Any, state: Any, b_ih: Any, b_hh: Any, chunks: int,
           what: str) -> int:
    """The hidden size, after PyTorch's size checks (``checkSizes`` of the fused cells)."""
    if igates.ndim != 2 or state.ndim != 2:
        raise ValueError(f"{what}: gates and state must be 2-D, got {igates.shape} and "
                         f"{state.shape}")
    batch, width = igates.shape
    hidden = state.shape[1]
    if width != chunks * hidden or state.shape[0] != batch:
        raise ValueError(f"{what}: gates {igates.shape} do not fit state {state.shape} "
                         f"({chunks} gates per hidden unit)")
    if hgates is not None and hgates.shape != igates.shape:
        raise ValueError(f"{what}: hidden gates {hgates.shape} != input gates {igates.shape}")
    for bias in (b_ih, b_hh):
        if bias is not None and bias.shape != (width,):
            raise ValueError(f"{what}: bias of shape {bias.shape}, expected ({width},)")
    return hidden


def lstm_cell(igates: Any, hgates: Any, cx: Any, b_ih: Any = None, b_hh: Any = None,
              workspace: bool = True) -> tuple[Any, Any, Any]:
    """One LSTM step: gates ``igates + hgates + b_ih + b_hh`` (B, 4H) in order i, f, g, o
    (``hgates`` and the biases may be None), cell state ``cx`` (B, H).

    Returns ``(hy, cy, ws)``: ``cy = f * cx + i * g``, ``hy = o * tanh(cy)`` and the workspace
    (B, 4H) holding the activated gates (None when ``workspace`` is False: no backward).
    """
    cp = _cupy()
    dtype = _common_dtype(igates, hgates, cx, b_ih, b_hh)
    hidden = _check(igates, hgates, cx, b_ih, b_hh, 4, "lstm_cell")
    hy, cy = cp.empty(cx.shape, dtype), cp.empty(cx.shape, dtype)
    ws = cp.empty(igates.shape, dtype) if workspace else None
    n = cx.size
    if n:
        _launch("lstm_cell_forward", dtype, n,
                (_dense(igates), _dense(hgates), _dense(b_ih), _dense(b_hh), _dense(cx), hy, cy,
                 ws, np.int64(n), np.int64(hidden)))
    return hy, cy, ws


def lstm_cell_backward(grad_hy: Any, grad_cy: Any, cx: Any, cy: Any,
                       workspace: Any) -> tuple[Any, Any]:
    """``(grad_gates, grad_cx)`` of ``lstm_cell`` from the gradients of ``hy`` and ``cy``
    (either may be None: zero), ``cx``, ``cy`` and the workspace. ``grad_gates`` (B, 4H) is the
    gradient of both gate inputs; summed over the batch, of both biases."""
    cp = _cupy()
    dtype = _common_dtype(grad_hy, grad_cy, cx, cy, workspace)
    hidden = _check(workspace, None, cx, None, None, 4, "lstm_cell_backward")
    for name, a in (("grad_hy", grad_hy), ("grad_cy", grad_cy), ("cy", cy)):
        if a is not None and a.shape != cx.shape:
            raise ValueError(f"lstm_cell_backward: {name} {a.shape} != cx {cx.shape}")
    grad_gates, grad_cx = cp.empty(workspace.shape, dtype), cp.empty(cx.shape, dtype)
    n = cx.size
    if n:
        _launch("lstm_cell_backward", dtype, n,
                (_dense(grad_hy), _dense(grad_cy), _dense(cx), _dense(cy), _dense(workspace),
                 grad_gates, grad_cx, np.int64(n), np.int64(hidden)))
    return grad_gates, grad_cx


def gru_cell(igates: Any, hgates: Any, hx: Any, b_ih: Any = None, b_hh: Any = None,
             workspace: bool = True) -> tuple[Any, Any]:
    """One GRU step from ``igates`` and ``hgates`` (B, 3H) in order r, z, n, their biases (or
    None) and the state ``hx`` (B, H): ``r, z = sigmoid(i + h)``,
    ``n = tanh(i_n + b_in + r * (h_n + b_hn))``, ``hy = n + z * (hx - n)``.

    Returns ``(hy, ws)``, the workspace (B, 5H) holding r, z, n, hx and ``h_n + b_hn`` (None
    when ``workspace`` is False)."""
    cp = _cupy()
    dtype = _common_dtype(igates, hgates, hx, b_ih, b_hh)
    if hgates is None:
        raise ValueError("gru_cell: the hidden gates are required (r multiplies their n part)")
    hidden = _check(igates, hgates, hx, b_ih, b_hh, 3, "gru_cell")
    hy = cp.empty(hx.shape, dtype)
    ws = cp.empty((hx.shape[0], 5 * hidden), dtype) if workspace else None
    n = hx.size
    if n:
        _launch("gru_cell_forward", dtype, n,
                (_dense(igates), _dense(hgates), _dense(b_ih), _dense(b_hh), _dense(hx), hy, ws,
                 np.int64(n), np.int64(hidden)))
    return hy, ws


def gru_cell_backward(grad_hy: Any, workspace: Any) -> tuple[Any, Any, Any]:
    """``(grad_igates, grad_hgates, grad_hx)`` of ``gru_cell`` from the gradient of ``hy`` and
    the workspace; summed over the batch, the gate gradients are the biases'."""
    cp = _cupy()
    dtype = _common_dtype(grad_hy, workspace)
    if grad_hy.ndim != 2 or workspace.shape != (grad_hy.shape[0], 5 * grad_hy.shape[1]):
        raise ValueError(f"gru_cell_backward: workspace {workspace.shape} does not fit grad_hy "
                         f"{grad_hy.shape}")
    batch, hidden = grad_hy.shape
    grad_ig, grad_hg = (cp.empty((batch, 3 * hidden), dtype) for _ in range(2))
    grad_hx = cp.empty(grad_hy.shape, dtype)
    n = grad_hy.size
    if n:
        _launch("gru_cell_backward", dtype, n,
                (_dense(grad_hy), _dense(workspace), grad_ig, grad_hg, grad_hx, np.int64(n),
                 np.int64(hidden)))
    return grad_ig, grad_hg, grad_hx
