"""``torch.nn.attention``: ``SDPBackend`` and ``sdpa_kernel``, which choose the backends
``scaled_dot_product_attention`` may use, and that choice (``select_backend``).

PyTorch's dispatcher, as this package can follow it: on CUDA its priority order is flash
attention, then memory-efficient attention, then the math path (cuDNN attention, first on some
sm90+ setups, is not ours: it is never picked); our fused kernel (``kernels/attention.cu``)
serves the two fused ones where PyTorch would pick them and our kernel applies, and records
PyTorch's node name for the one PyTorch would run. On the CPU PyTorch picks its flash kernel or
the math path; we always compute the math path there, raising PyTorch's errors when
``sdpa_kernel`` leaves nothing that PyTorch could run.
"""

from __future__ import annotations

import contextlib
import enum
from typing import Any, Iterator

from .. import dtypes

__all__ = ["SDPBackend", "sdpa_kernel"]


class SDPBackend(enum.IntEnum):
    """The backends of ``scaled_dot_product_attention`` (PyTorch's names and values)."""

    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_ALL = (SDPBackend.MATH, SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
        SDPBackend.CUDNN_ATTENTION, SDPBackend.OVERRIDEABLE)
# NOTE: process-wide, as PyTorch's global context flags
_STATE: dict[str, Any] = {"enabled": set(_ALL),
                          "priority": [SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION,
                                       SDPBackend.MATH, SDPBackend.CUDNN_ATTENTION,
                                       SDPBackend.OVERRIDEABLE]}

FLASH_NODE = "ScaledDotProductFlashAttentionBackward0"
EFFICIENT_NODE = "ScaledDotProductEfficientAttentionBackward0"
_NO_VIABLE = ("No viable backend for scaled_dot_product_attention was found. This is likely due "
              "to turning off both the math kernel and the fused kernels.")


@contextlib.contextmanager
def sdpa_kernel(backends: list[SDPBackend] | SDPBackend,
                set_priority: bool = False) -> Iterator[dict[str, Any]]:
    """Within the block, ``scaled_dot_product_attention`` may use only ``backends`` (tried in
    their order with ``set_priority``); the previous choice comes back on exit.

    Example:
        >>> with sdpa_kernel(SDPBackend.MATH):
        ...     scaled_dot_product_attention(q, k, v)  # never the fused kernel
    """
    if not isinstance(backends, (list, SDPBackend)):
        raise AssertionError("Backend must be an instance of SDPBackend or a list of SDPBackend "
                             f"instances, got {type(backends).__name__}")
    chosen = list(dict.fromkeys([backends] if isinstance(backends, SDPBackend) else backends))
    previous = (set(_STATE["enabled"]), list(_STATE["priority"]))
    try:
        _STATE["enabled"] = {SDPBackend(b) for b in chosen if b in _ALL}
        if set_priority:
            _STATE["priority"] = chosen + [b for b in previous[1] if b not in chosen]
        yield {}
    finally:
        _STATE["enabled"], _STATE["priority"] = previous


def _enabled(backend: SDPBackend) -> bool:
    return backend in _STATE["enabled"]


def _dims_ok(query: Any, key: Any, value: Any, attn_mask: Any, enable_gqa: bool) -> bool:
    """The shape checks every fused PyTorch kernel makes (``sdp_utils_cpp.h``): 4-D inputs, one
    batch size and head count (GQA aside), nonzero sequence lengths, unit last strides."""
    if not query.dim() == key.dim() == value.dim() == 4:
        return False
    if not query.size(0) == key.size(0) == value.size(0):
        return False
    hq, hk, hv = query.size(1), key.size(1), value.size(1)
    if not (hq == hk == hv or enable_gqa and hk == hv and hq % hk == 0):
        return False
    if query.size(2) == 0 or key.size(2) == 0:
        return False
    strides = [query.stride(-1), key.stride(-1), value.stride(-1)]
    return all(s == 1 for s in strides) and (attn_mask is None or attn_mask.stride(-1) == 1)


def _cpu_flash_ok(query: Any, key: Any, value: Any, attn_mask: Any, dropout_p: float,
                  enable_gqa: bool) -> bool:
    """PyTorch's CPU flash kernel's constraints (``use_flash_attention_cpp``)."""
    if dropout_p > 0 or not _dims_ok(query, key, value, attn_mask, enable_gqa):
        return False
    if attn_mask is not None:
        L, S = query.size(2), key.size(2)
        m = attn_mask
        if m.requires_grad or m.size(-2) not in (1, L) or m.size(-1) not in (1, S):
            return False
        if m.dim() == 4 and (m.size(0) not in (1, query.size(0))
                             or m.size(1) not in (1, query.size(1))):
            return False
        if m.dim() not in (2, 4):
            return False
    return query.size(-1) == key.size(-1) == value.size(-1)


def _fused_kind(query: Any, key: Any, value: Any, attn_mask: Any, is_causal: bool,
                enable_gqa: bool, backend: SDPBackend) -> bool:
    """Whether PyTorch's CUDA ``backend`` (flash or efficient) takes these inputs
    (``sdp_utils.cpp``, on an sm80+ GPU; dropout aside)."""
    if not _dims_ok(query, key, value, attn_mask, enable_gqa):
        return False
    e, ek, ev = query.size(-1), key.size(-1), value.size(-1)
    half = query.dtype == dtypes.float16
    if backend == SDPBackend.FLASH_ATTENTION:
        return (half and attn_mask is None and e == ek == ev and e <= 256
                and not (is_causal and query.size(2) != key.size(2)))
    if query.dtype not in (dtypes.float16, dtypes.float32):
        return False
    align = 8 if half else 4  # NOTE: minimum_gemm_alignment on sm80+
    if e != ek or e % align or ev % align:
        return False
    # NOTE: storage offsets aligned to align * itemsize bytes (the allocator's bases are)
    item = query.element_size()
    return all(t.data_ptr() % (align * item) == 0 for t in (query, key, value))


def _kernel_serves(query: Any, key: Any, value: Any, attn_mask: Any, dropout_p: float,
                   backend: SDPBackend) -> bool:
    """Whether our fused kernel computes what PyTorch's fused ``backend`` would: no dropout, no
    GQA head repetition, head dims up to 128, E divisible by 8 for flash (PyTorch pads other
    sizes and records a slice), a mask of bool or q's dtype, kernels on for these arrays."""
    from ..backends.cuda_attention import MAX_HEAD_DIM  # NOTE: late: a backend detail

    if dropout_p > 0 or query.size(1) != key.size(1):
        return False
    top = MAX_HEAD_DIM.get(str(query.dtype).replace("torch.", ""), 0)
    if query.size(-1) > top or value.size(-1) > top:
        return False
    if backend == SDPBackend.FLASH_ATTENTION and query.size(-1) % 8:
        return False
    if attn_mask is not None:
        full = (query.size(0), query.size(1), query.size(2), key.size(2))
        fits = 2 <= attn_mask.dim() <= 4 and all(
            m in (1, f) for m, f in zip(tuple(attn_mask.shape)[::-1], full[::-1]))
        if attn_mask.dtype not in (dtypes.bool, query.dtype) or not fits:
            return False  # NOTE: the math path raises the error of a mask that does not fit
    arrays = [t._data for t in (query, key, value)]
    if attn_mask is not None and attn_mask.dtype != dtypes.bool:
        arrays.append(attn_mask._data)
    return bool(query.backend.fused_attention_ok(*arrays))


def select_backend(query: Any, key: Any, value: Any, attn_mask: Any, dropout_p: float,
                   is_causal: bool, enable_gqa: bool) -> str | None:
    """The node name of our fused kernel for this call (``FLASH_NODE`` or ``EFFICIENT_NODE``),
    or None for the math path; PyTorch's RuntimeError when ``sdpa_kernel`` leaves no backend."""
    enabled = _STATE["enabled"]
    if query.device.type != "cuda":
        if not enabled & {SDPBackend.MATH, SDPBackend.FLASH_ATTENTION}:
            raise RuntimeError(_NO_VIABLE)
        if not _enabled(SDPBackend.MATH) and not _cpu_flash_ok(query, key, value, attn_mask,
                                                                dropout_p, enable_gqa):
            raise RuntimeError("No available kernel.  Aborting execution.")
        return None
    if not enabled & {SDPBackend.MATH, SDPBackend.FLASH_ATTENTION,
                      SDPBackend.EFFICIENT_ATTENTION, SDPBackend.CUDNN_ATTENTION}:
        raise RuntimeError(_NO_VIABLE)
    for backend in _STATE["priority"]:
        if backend not in enabled:
            continue
        if backend == SDPBackend.MATH:
            return None
        if backend in (SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION) and \
                _fused_kind(query, key, value, attn_mask, is_causal, enable_gqa, backend):
            if not _kernel_serves(query, key, value, attn_mask, dropout_p, backend):
                return None  # NOTE: PyTorch's fused kernel would run; our math path does
            return FLASH_NODE if backend == SDPBackend.FLASH_ATTENTION else EFFICIENT_NODE
    raise RuntimeError("No available kernel. Aborting execution.")
