"""``nn.functional.embedding_bag``: PyTorch's argument checks, then one ``EmbeddingBag`` op
(``ops/nn_embedding_bag.py``). Listed in ``nn.functional`` through ``_normalization``'s
``__all__``, next to ``embedding``."""

from __future__ import annotations

import warnings
from typing import Any

from .. import dtypes
from ..creation import arange
from ..functions.checks import expect_tensor
from ..functions.sort_search import searchsorted
from ..ops.nn_embedding_bag import EmbeddingBag
from ..tensor import Tensor

_MODES = {"sum": 0, "mean": 1, "max": 2}
_INDEX_TYPES = (dtypes.int64, dtypes.int32)


def _check_index_dtype(t: Tensor, name: str) -> None:
    if t.dtype not in _INDEX_TYPES:
        raise RuntimeError(
            f"Expected tensor for argument #1 '{name}' to have one of the following scalar "
            f"types: Long, Int; but got {t.type()} instead (while checking arguments for "
            "embedding_bag)")


def embedding_bag(input: Tensor, weight: Tensor, offsets: Tensor | None = None,  # noqa: A002
                  max_norm: float | None = None, norm_type: float = 2,
                  scale_grad_by_freq: bool = False, mode: str = "mean", sparse: bool = False,
                  per_sample_weights: Tensor | None = None, include_last_offset: bool = False,
                  padding_idx: int | None = None) -> Tensor:
    """Sums, means or maxima of bags of rows of ``weight``, without building the ``(n, dim)``
    lookup first as ``embedding`` followed by a reduction would.

    A 2-D ``input`` ``(B, N)`` holds ``B`` bags of ``N`` indices; a 1-D ``input`` is cut into
    bags at ``offsets`` (``offsets[0] == 0``, one bag per offset; with
    ``include_last_offset`` the last entry closes the last bag, and, as PyTorch's CPU kernel,
    the last bag runs to the end of ``input``). Indices equal to ``padding_idx`` are left out of
    their bag (a mean divides by the bags' other entries); an empty bag gives zeros.
    ``per_sample_weights`` (mode "sum" only) scale each looked-up row. With ``max_norm``, the
    looked-up rows whose ``norm_type``-norm exceeds it are rescaled in place first; with
    ``scale_grad_by_freq`` each row's gradient is divided by its index's count in ``input``.
    Mode "max" sends each output element's gradient to the first row holding the maximum.

    ``sparse=True`` is refused with NotImplementedError (there are no sparse tensors here), as
    ``embedding`` does.

    Args:
        input: int64 or int32 indices, ``(B, N)`` or ``(n,)``.
        weight: ``(num_embeddings, dim)``, floating point.
        offsets: with a 1-D input, the start of each bag (int64 or int32, non-decreasing).
        per_sample_weights: the shape of ``input``, the dtype of ``weight``.

    Returns:
        ``(B, dim)`` (grad_fn EmbeddingBagBackward0).

    Example:
        >>> embedding_bag(tensor([1, 0, 1]), tensor([[1.0, 2.0], [3.0, 4.0]]), tensor([0, 1]),
        ...               mode="sum")
        tensor([[3., 4.],
                [4., 6.]])
    """
    expect_tensor("embedding_bag", "weight", 2, weight)
    expect_tensor("embedding_bag", "indices", 1, input)
    if weight.dtype in _INDEX_TYPES and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.shape != per_sample_weights.shape:
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        offsets = arange(0, input.numel(), max(input.shape[1], 1), dtype=input.dtype,
                         device=input.device)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in _MODES:
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    if mode == "max" and sparse:
        raise ValueError("max mode does not support sparse weights")
    num = weight.shape[0]
    if max_norm is not None:
        _check_index_dtype(input, "indices")
        from ._normalization import _renorm_  # NOTE: late: _normalization imports this module

        _renorm_(weight, _host_ok(input, weight), max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(
            "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
            f"supported for mode='sum' (got mode='{mode}'). Please open a feature request on "
            "GitHub.")
    if padding_idx is not None:
        if not -num <= padding_idx < num:
            raise RuntimeError(f"padding_idx must be within the number of embeddings, -{num} "
                               f"through {num - 1}, but got {padding_idx}")
        padding_idx %= num
    if not weight.is_floating_point():
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have one of the following scalar types: "
            f"Half, BFloat16, Float, Double; but got {weight.type()} instead (while checking "
            "arguments for embedding_bag)")
    _check_index_dtype(input, "indices")
    _check_index_dtype(offsets, "indices")  # NOTE: PyTorch names offsets so too
    if per_sample_weights is not None and per_sample_weights.dtype != weight.dtype:
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have the same type as tensor for "
            f"argument #1 'per_sample_weights'; but type {weight.type()} does not equal "
            f"{per_sample_weights.type()} (while checking arguments for embedding_bag)")
    if sparse:
        raise NotImplementedError("sparse gradients are not supported in autograd_gpu")
    return _bags(input, weight, offsets, mode, scale_grad_by_freq, per_sample_weights,
                 include_last_offset, padding_idx)


def _host_ok(input: Tensor, weight: Tensor) -> Any:  # noqa: A002
    """``input``'s array on ``weight``'s device."""
    if input._device is weight._device:
        return input._data
    return weight.backend.asarray(input.backend.to_host(input._data))


def _bags(input: Tensor, weight: Tensor, offsets: Tensor, mode: str,  # noqa: A002
          scale_grad_by_freq: bool, per_sample_weights: Tensor | None,
          include_last_offset: bool, padding_idx: int | None) -> Tensor:
    """Bag ids, kept positions and frequency scales, then the op."""
    b = weight.backend
    n = input.shape[0]
    num = weight.shape[0]
    starts = offsets.to(device=weight.device, dtype=dtypes.int64)
    if include_last_offset:
        starts = starts[:-1] if starts.shape[0] else starts
    num_bags = starts.shape[0]
    # NOTE: the range checks read the data back to the host, as PyTorch's: one bool (a compiled
    # step's guard holds from batch to batch, where the last offset may change), the offsets
    # themselves only for the message
    if num_bags and bool((offsets._data[0] != 0) | (offsets._data[-1] > n)):
        first, last = int(offsets[0]), int(offsets[-1])
        if first != 0:
            raise RuntimeError("offsets[0] has to be 0, i.e., the first sequence in the "
                               "mini-batch has to start from position 0. However, got "
                               f"{first}")
        if last > n:
            raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but "
                               f"got offsets[-1] of {last}")
    idx = _host_ok(input, weight).astype("int64")
    if n:
        bad = b.logical_or(b.less(idx, 0), b.greater_equal(idx, num))
        if bool(b.any(bad)):
            at = int(b.nonzero(bad)[0][0])
            # NOTE: PyTorch's CPU fast path (fbgemm: float32/16, sum or mean, no padding row)
            # words it differently.
            if weight.dtype != dtypes.float64 and mode != "max" and padding_idx is None:
                raise RuntimeError(f"Index {at} of input takes value {int(idx[at])} which is "
                                   f"not in the valid range [0, {num})")
            raise RuntimeError("embedding_bag: Expected idx >= 0 && idx < num_embeddings but "
                               f"found idx to be {int(idx[at])}")
    positions = arange(n, dtype=dtypes.int64, device=weight.device)
    bags = (searchsorted(starts, positions, right=True) - 1)._data if num_bags else \
        b.zeros((n,), "int64")
    keep = b.ones((n,), "float64")
    if padding_idx is not None:
        keep = b.not_equal(idx, padding_idx).astype("float64")
    freq = None
    if scale_grad_by_freq:
        counts = b.zeros((num,), "float64")
        b.index_add(counts, idx, b.ones((n,), "float64"))
        freq = 1.0 / counts[idx]
    return EmbeddingBag.apply(weight, per_sample_weights, indices=idx, bags=bags, keep=keep,
                              num_bags=num_bags, mode=mode, freq=freq)
