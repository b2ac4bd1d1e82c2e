"""``scaled_dot_product_attention`` and ``multi_head_attention_forward`` for ``nn.functional``.

Both follow PyTorch's math path (``_scaled_dot_product_attention_math``): its fused CPU/CUDA
kernels compute the same numbers. Heads are batch dimensions of one matmul: no Python loops.
On CUDA, where PyTorch's dispatcher would run its flash or memory-efficient kernel
(``nn/attention.py``), our fused kernel runs instead (``kernels/attention.cu``): one node, no
``(L, S)`` weights kept for backward.
"""

from __future__ import annotations

import math
from typing import Any

from .. import dtypes
from ..creation import ones, zeros
from ..functions import baddbmm, cat
from ..functions.manip import repeat_interleave, tril
from ..functions.checks import expect_tensor
from ..ops.attention import FusedAttention, SafeSoftmax
from ..tensor import Tensor
from .attention import FLASH_NODE, select_backend
from .functional import dropout, linear, pad

__all__ = ["multi_head_attention_forward", "scaled_dot_product_attention"]


def _dtype_name(dt: Any) -> str:
    """PyTorch's C++ spelling of a dtype in its messages (``double``, ``float``, ``long int``)."""
    return {"float64": "double", "float32": "float", "float16": "c10::Half", "int64": "long int",
            "int32": "int", "bfloat16": "c10::BFloat16"}.get(str(dt).replace("torch.", ""),
                                                            str(dt).replace("torch.", ""))


def _check_sdpa(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
                dropout_p: float, is_causal: bool) -> None:
    """PyTorch's argument checks of ``scaled_dot_product_attention``, in its order."""
    for pos, (name, t) in enumerate((("query", query), ("key", key), ("value", value)), 1):
        expect_tensor("scaled_dot_product_attention", name, pos, t)
    expect_tensor("scaled_dot_product_attention", "attn_mask", 4, attn_mask, optional=True)
    if not (query.dtype == key.dtype == value.dtype):
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_dtype_name(query.dtype)} key.dtype: {_dtype_name(key.dtype)} and value.dtype: "
            f"{_dtype_name(value.dtype)} instead.")
    if attn_mask is not None and attn_mask.dtype != dtypes.bool and \
            not attn_mask.is_floating_point() and attn_mask.dtype != query.dtype:
        raise RuntimeError(
            "Expected attn_mask dtype to be bool or float or to match query dtype, but got "
            f"attn_mask.dtype: {_dtype_name(attn_mask.dtype)} and  query.dtype: "
            f"{_dtype_name(query.dtype)} instead.")
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: "
            f"{query.dim()} key.dim: {key.dim()} and value.dim: {value.dim()} instead.")
    if attn_mask is not None and is_causal:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set "
                           "when is_causal=True")
    if attn_mask is not None and attn_mask.dim() < 2 and \
            query.dim() == key.dim() == value.dim() == 4:
        # NOTE: PyTorch's fused-kernel check reads a 4-D call's mask size(-2) (its error for a
        # 1-D or 0-d mask); other ranks go to the math path, which broadcasts the mask
        if attn_mask.dim() == 0:
            raise IndexError("Dimension specified as -2 but tensor has no dimensions")
        raise IndexError("Dimension out of range (expected to be in range of [-1, 0], but got "
                         "-2)")
    if not query.is_floating_point():
        raise RuntimeError(f"expected scalar type Float but found "
                           f"{str(query.dtype).replace('torch.', '').capitalize()}"
                           .replace("Int64", "Long"))
    if dropout_p > 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {dropout_p}")


def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor,
                                 attn_mask: Tensor | None = None, dropout_p: float = 0.0,
                                 is_causal: bool = False, scale: float | None = None,
                                 enable_gqa: bool = False) -> Tensor:
    """``softmax(query @ key^T * scale + mask) @ value`` over the last two dimensions.

    PyTorch's rules: ``scale`` defaults to ``1 / sqrt(E)``; a bool ``attn_mask`` keeps the
    positions where it is True, a float one is added to the scores (both broadcast to
    ``(..., L, S)``); ``is_causal`` masks with the top-left aligned lower triangle of an
    ``(L, S)`` matrix (so row ``i`` sees keys ``0..i`` even when ``L != S``); a row with no key
    to attend gives zeros (and zero gradients), not NaN; ``dropout_p`` drops attention weights
    (our generator); ``enable_gqa`` repeats each key/value head ``Hq // Hkv`` times (dim -3).

    Args:
        query: ``(..., L, E)``; key: ``(..., S, E)``; value: ``(..., S, Ev)``.

    Returns:
        ``(..., L, Ev)``.

    Raises:
        RuntimeError: mixed dtypes, fewer than 2 dimensions, both ``attn_mask`` and
            ``is_causal``, head counts that do not divide with ``enable_gqa``.

    Example:
        >>> scaled_dot_product_attention(ones(2, 3, 4), ones(2, 5, 4), ones(2, 5, 6)).shape
        torch.Size([2, 3, 6])
    """
    _check_sdpa(query, key, value, attn_mask, dropout_p, is_causal)
    factor = 1 / math.sqrt(query.size(-1)) if scale is None else scale
    node = select_backend(query, key, value, attn_mask, dropout_p, is_causal, enable_gqa)
    if node is not None:
        return _fused(query, key, value, attn_mask, is_causal, factor, node)
    return _sdpa_math(query, key, value, attn_mask, dropout_p, is_causal, factor, enable_gqa)


def _fused(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
           is_causal: bool, factor: float, node: str) -> Tensor:
    """Our fused CUDA kernel as PyTorch's fused node ``node`` (flash: inputs q, k, v;
    efficient: q, k, v, mask); double backward recomputes the math path."""

    def math_path(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> Tensor:
        return _sdpa_math(q, k, v, mask, 0.0, is_causal, factor, False)

    params = {"causal": is_causal, "scale": factor, "name": node, "math": math_path}
    if node == FLASH_NODE:
        return FusedAttention.apply(query, key, value, **params)
    return FusedAttention.apply(query, key, value, attn_mask, **params)


def _sdpa_math(query: Tensor, key: Tensor, value: Tensor, attn_mask: Tensor | None,
               dropout_p: float, is_causal: bool, factor: float, enable_gqa: bool) -> Tensor:
    """PyTorch's math path (``_scaled_dot_product_attention_math``) with the scale ``factor``."""
    L, S = query.size(-2), key.size(-2)
    if enable_gqa and query.dim() >= 3:
        hq, hk, hv = query.size(-3), key.size(-3), value.size(-3)
        if hq % hk or hq % hv:
            raise RuntimeError("Number of heads in key and value must divide the number of heads "
                               "in ")
        if hk != hq:
            key = repeat_interleave(key, hq // hk, dim=-3)
        if hv != hq:
            value = repeat_interleave(value, hq // hv, dim=-3)
    # NOTE: the scale goes on the (L, E) query rather than on the (L, S) scores: cheaper, and
    # equal to PyTorch's sqrt(scale) on both q and k up to rounding.
    scores = (query * factor).matmul(key.transpose(-2, -1))
    if is_causal:
        attn_mask = tril(ones(L, S, dtype=dtypes.bool, device=query.device))
    if attn_mask is None:
        weights = scores.softmax(-1)
    else:
        if attn_mask.dtype == dtypes.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
        weights = SafeSoftmax.apply(scores, dim=-1)
    if dropout_p > 0.0:
        weights = dropout(weights, dropout_p, training=True)
    return weights.matmul(value)


def _canonical_mask(mask: Tensor | None, mask_name: str, other_type: Any, other_name: str,
                    target_type: Any, check_other: bool = True) -> Tensor | None:
    """PyTorch's ``F._canonical_mask``: a bool mask (True = masked) becomes 0 / ``-inf`` of
    ``target_type``; a float mask is returned as it is; other dtypes raise ``AssertionError``.
    Masks of different dtypes warn (PyTorch deprecates them)."""
    if mask is None:
        return None
    if mask.dtype != dtypes.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        import warnings

        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. Use "
                      "same type for both instead.", stacklevel=3)
    if not mask.is_floating_point():
        return zeros(tuple(mask.shape), dtype=target_type, device=mask.device).masked_fill(
            mask, float("-inf"))
    return mask


def _none_or_dtype(t: Tensor | None) -> Any:
    return None if t is None else t.dtype


def _mha_shape_check(query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None,
                     attn_mask: Tensor | None, num_heads: int) -> bool:
    """PyTorch's ``_mha_shape_check``: True for batched (3-D) inputs, False for unbatched."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be 3-D"
                                 f" but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to be "
                                 f"2-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 1-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                     "instead")
            expected = (num_heads, query.shape[0], key.shape[0])
            if attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
                raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                     f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _in_projection(query: Tensor, key: Tensor, value: Tensor, w_q: Tensor, w_k: Tensor,
                   w_v: Tensor, b: Tensor | None) -> tuple[Tensor, Tensor, Tensor]:
    """``q, k, v`` projected; self-attention with one packed weight is one matmul."""
    b_q, b_k, b_v = (None, None, None) if b is None else b.chunk(3)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def multi_head_attention_forward(  # noqa: C901
        query: Tensor, key: Tensor, value: Tensor, embed_dim_to_check: int, num_heads: int,
        in_proj_weight: Tensor | None, in_proj_bias: Tensor | None, bias_k: Tensor | None,
        bias_v: Tensor | None, add_zero_attn: bool, dropout_p: float, out_proj_weight: Tensor,
        out_proj_bias: Tensor | None, training: bool = True,
        key_padding_mask: Tensor | None = None, need_weights: bool = True,
        attn_mask: Tensor | None = None, use_separate_proj_weight: bool = False,
        q_proj_weight: Tensor | None = None, k_proj_weight: Tensor | None = None,
        v_proj_weight: Tensor | None = None, static_k: Tensor | None = None,
        static_v: Tensor | None = None, average_attn_weights: bool = True,
        is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention on sequence-first inputs, as ``nn.MultiheadAttention`` computes it.

    PyTorch's steps: project ``q, k, v`` (packed ``in_proj_weight`` or the three separate
    weights), append ``bias_k``/``bias_v`` and a zero key/value (``add_zero_attn``) with their
    mask columns, fold ``key_padding_mask`` (True = ignore) into ``attn_mask`` (bool True =
    masked; float added), then attention per head and ``out_proj``. With ``need_weights`` the
    weights use a plain softmax (an all-masked row gives NaN, as in PyTorch) and are returned
    averaged over heads or per head; otherwise ``scaled_dot_product_attention`` runs (zeros).

    Args:
        query: ``(L, N, E)`` or ``(L, E)``; key, value: ``(S, N, E_k)``, ``(S, N, E_v)``.

    Returns:
        ``(attn_output (L, N, E), attn_weights (N, L, S) / (N, H, L, S) or None)``.
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # NOTE: the hint says attn_mask is causal: SDPA builds it itself
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
        for name, w in (("q", q_proj_weight), ("k", k_proj_weight), ("v", v_proj_weight)):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        assert q_proj_weight is not None and k_proj_weight is not None \
            and v_proj_weight is not None
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight,
                                 in_proj_bias)
    else:
        if key.shape != value.shape:
            raise AssertionError(f"key shape {key.shape} does not match value shape "
                                 f"{value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        if query is key and key is value:
            q, k, v = linear(query, in_proj_weight, in_proj_bias).chunk(3, dim=-1)
        else:
            w_q, w_k, w_v = in_proj_weight.chunk(3)
            q, k, v = _in_projection(query, key, value, w_q, w_k, w_v, in_proj_bias)
    src_len = key.shape[0]
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.expand(1, bsz, bias_k.shape[-1])])
        v = cat([v, bias_v.expand(1, bsz, bias_v.shape[-1])])
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    # (L, N, E) -> (N * H, L, head_dim): the heads become batch entries of one matmul.
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _static("k", static_k, bsz * num_heads, head_dim) if static_k is not None else \
        k.reshape(k.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    v = _static("v", static_v, bsz * num_heads, head_dim) if static_v is not None else \
        v.reshape(v.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if add_zero_attn:
        k = cat([k, zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype, device=k.device)], dim=1)
        v = cat([v, zeros(bsz * num_heads, 1, head_dim, dtype=v.dtype, device=v.device)], dim=1)
        attn_mask = None if attn_mask is None else pad(attn_mask, (0, 1))
        key_padding_mask = None if key_padding_mask is None else pad(key_padding_mask, (0, 1))
    src_len = k.size(1)
    if key_padding_mask is not None:
        if key_padding_mask.shape[0] != bsz:
            raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                                 f"{key_padding_mask.shape[0]}")
        if key_padding_mask.shape[1] != src_len:
            raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                                 f"{key_padding_mask.shape[1]}")
        kpm = key_padding_mask.view(bsz, 1, 1, src_len).expand(bsz, num_heads, 1, src_len) \
            .reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        if is_causal and attn_mask is None:
            raise AssertionError("FIXME: is_causal not implemented for need_weights")
        scores = q_scaled.bmm(k.transpose(-2, -1)) if attn_mask is None else \
            baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        weights = scores.softmax(-1)
        if dropout_p > 0.0:
            weights = dropout(weights, p=dropout_p)
        out = weights.bmm(v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, out_proj_weight.shape[0])
        weights = weights.view(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        attn_mask = attn_mask.unsqueeze(0) if attn_mask.size(0) == 1 and attn_mask.dim() == 3 \
            else attn_mask.view(bsz, num_heads, -1, src_len)
    out = scaled_dot_product_attention(q.view(bsz, num_heads, tgt_len, head_dim),
                                       k.view(bsz, num_heads, src_len, head_dim),
                                       v.view(bsz, num_heads, src_len, head_dim), attn_mask,
                                       dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias).view(tgt_len, bsz, out_proj_weight.shape[0])
    return (out if is_batched else out.squeeze(1)), None


def _static(name: str, t: Tensor, heads: int, head_dim: int) -> Tensor:
    """``static_k``/``static_v`` checked against ``(N * H, S, head_dim)``."""
    if t.size(0) != heads:
        raise AssertionError(f"expecting static_{name}.size(0) of {heads}, but got {t.size(0)}")
    if t.size(2) != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got "
                             f"{t.size(2)}")
    return t
