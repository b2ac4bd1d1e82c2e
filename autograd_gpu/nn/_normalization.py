"""The normalisations of ``nn.functional`` (``layer_norm``, ``batch_norm``, ``group_norm``,
``instance_norm``, ``rms_norm``, ``local_response_norm``) and ``embedding``: argument checks, then
one op of ``ops/norm_ops.py`` / ``ops/nn_norm.py`` or a composition of tensor ops."""

from __future__ import annotations

import math
import warnings
from typing import Any, Sequence

from .. import dtypes
from ..autograd.grad_mode import no_grad
from ..functions.checks import expect_tensor
from ..functions.manip_views import unfold
from ..functions.shape import cat
from ..ops import nn_norm, norm_ops
from ..tensor import Tensor

__all__ = ["batch_norm", "embedding", "embedding_bag", "group_norm", "instance_norm",
           "layer_norm", "local_response_norm", "rms_norm"]


def _shape_str(shape: Sequence[int]) -> str:
    return "[" + ", ".join(str(int(s)) for s in shape) + "]"


def _check_mixed_dtype(input: Tensor, *params: Tensor | None) -> None:  # noqa: A002
    """PyTorch's dtype rules for a normalisation's parameters (``weight``, ``bias``, running
    statistics). When the first parameter's dtype differs from the input's ("mixed"), every
    parameter must be float32, and the input float16; otherwise every parameter must have the
    input's dtype."""
    given = [p for p in params if p is not None]
    if not given or all(p.dtype is input.dtype for p in given):
        return
    where = "CPU" if input.device.type == "cpu" else "CUDA"
    if given[0].dtype is not input.dtype:
        if any(p.dtype is not dtypes.float32 for p in given):
            raise RuntimeError(f"mixed dtype ({where}): expect parameter to have scalar type of "
                               "Float")
        if input.dtype is not dtypes.float16:
            raise RuntimeError(f"mixed dtype ({where}): all inputs must share same datatype.")
        return
    other = next(p for p in given if p.dtype is not input.dtype)
    raise RuntimeError(f"expected scalar type {dtypes.scalar_type_name(input.dtype)} but found "
                       f"{dtypes.scalar_type_name(other.dtype)}")


def layer_norm(input: Tensor, normalized_shape: Any,  # noqa: A002
               weight: Tensor | None = None, bias: Tensor | None = None,
               eps: float = 1e-5) -> Tensor:
    """Normalise over the last ``len(normalized_shape)`` dimensions:
    ``(x - mean) / sqrt(var + eps) * weight + bias``, with the biased variance.

    Args:
        input: ``(*, *normalized_shape)``.
        normalized_shape: an int or a sequence of ints, the trailing shape to normalise over.
        weight, bias: of shape ``normalized_shape``, or None.
        eps: added to the variance.

    Returns:
        Tensor of the shape of ``input`` (grad_fn NativeLayerNormBackward0).

    Example:
        >>> layer_norm(tensor([[1.0, 3.0]]), (2,))
        tensor([[-1.0000,  1.0000]])
    """
    expect_tensor("layer_norm", "input", 1, input)
    expect_tensor("layer_norm", "weight", 3, weight, optional=True)
    expect_tensor("layer_norm", "bias", 4, bias, optional=True)
    _check_mixed_dtype(input, weight, bias)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    k = len(shape)
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != shape:
            raise RuntimeError(
                f"Expected {name} to be of same shape as normalized_shape, but got {name} of "
                f"shape {_shape_str(p.shape)} and normalized_shape = {_shape_str(shape)}"
            )
    if k == 0 or input.dim() < k or tuple(input.shape[input.dim() - k:]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={_shape_str(shape)}, expected input with shape "
            f"[*, {', '.join(str(s) for s in shape)}], but got input of size"
            f"{_shape_str(input.shape)}"
        )
    return norm_ops.NativeLayerNorm.apply(input, weight, bias, ndim=k, eps=eps)


def batch_norm(input: Tensor, running_mean: Tensor | None,  # noqa: A002
               running_var: Tensor | None, weight: Tensor | None = None,
               bias: Tensor | None = None, training: bool = False, momentum: float = 0.1,
               eps: float = 1e-5) -> Tensor:
    """Normalise each channel (dimension 1) over the batch and spatial dimensions.

    In training, uses the batch mean and biased variance, and updates the running statistics
    in place (when given) with ``running = (1 - momentum) * running + momentum * batch``, the
    variance being the unbiased one. Otherwise, uses ``running_mean`` and ``running_var``.

    Args:
        input: ``(N, C, *)``.
        running_mean, running_var: ``(C,)`` or None (both, or neither).
        weight, bias: ``(C,)`` or None.

    Returns:
        Tensor of the shape of ``input`` (grad_fn NativeBatchNormBackward0).

    Raises:
        ValueError: training with one value per channel.
    """
    if training:
        size = input.size()  # NOTE: before any type check, as PyTorch (AttributeError 'size')
        if input.dim() < 2 or size[0] * math.prod(size[2:]) == 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input size "
                f"torch.Size({list(size)})"
            )
    for position, (name, t) in enumerate((("input", input), ("weight", weight), ("bias", bias),
                                          ("running_mean", running_mean),
                                          ("running_var", running_var)), 1):
        expect_tensor("batch_norm", name, position, t, optional=position > 1)
    if not training:
        for name, t in (("running_mean", running_mean), ("running_var", running_var)):
            if t is None:
                raise RuntimeError(f"{name} must be defined in evaluation mode")
    elif (running_mean is None) != (running_var is None):
        raise ValueError("running_mean and running_var must either both be None or neither be None")
    channels = input.shape[1] if input.dim() > 1 else 1
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {t.numel()}")
    _check_mixed_dtype(input, weight, bias, running_mean, running_var)
    with no_grad():
        # NOTE: the running statistics are buffers, updated in place without autograd.
        rm = None if running_mean is None else running_mean.detach()
        rv = None if running_var is None else running_var.detach()
    if isinstance(momentum, Tensor):
        momentum = momentum._data  # NOTE: BatchNorm's counter (``NativeBatchNorm``)
    return norm_ops.NativeBatchNorm.apply(input, weight, bias, rm, rv, training=training,
                                          momentum=momentum, eps=eps)


def _expect_float(kernel: str, input: Tensor) -> None:  # noqa: A002
    """PyTorch's ``NotImplementedError`` for a normalisation kernel on a non-float input."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for '
                                  f"'{dtypes.scalar_type_name(input.dtype)}'")


def group_norm(input: Tensor, num_groups: int, weight: Tensor | None = None,  # noqa: A002
               bias: Tensor | None = None, eps: float = 1e-5) -> Tensor:
    """Normalise each of ``num_groups`` groups of channels of each sample:
    ``(x - mean) / sqrt(var + eps) * weight + bias``, with the statistics (biased variance) over
    the group's channels and spatial positions, and ``weight``/``bias`` per channel.

    Args:
        input: ``(N, C, *)`` with ``C`` divisible by ``num_groups``.
        weight, bias: ``(C,)`` or None.

    Returns:
        Tensor of the shape of ``input`` (grad_fn NativeGroupNormBackward0).

    Raises:
        ValueError: one value per group (PyTorch's "per channel when training" message).

    Example:
        >>> group_norm(tensor([[1.0, 3.0]]), 1)
        tensor([[-1.0000,  1.0000]])
    """
    expect_tensor("group_norm", "input", 1, input)
    expect_tensor("group_norm", "weight", 3, weight, optional=True)
    expect_tensor("group_norm", "bias", 4, bias, optional=True)
    if input.dim() < 2:
        raise RuntimeError("Expected at least 2 dimensions for input tensor but received "
                           f"{input.dim()}")
    n, c = input.shape[0], input.shape[1]
    per_group = [n * c // num_groups, num_groups, *input.shape[2:]]
    if per_group[0] * math.prod(per_group[2:]) == 1:
        raise ValueError("Expected more than 1 value per channel when training, got input size "
                         f"{per_group}")
    if c % num_groups:
        raise RuntimeError("Expected number of channels in input to be divisible by num_groups, "
                           f"but got input of shape {_shape_str(input.shape)} and "
                           f"num_groups={num_groups}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p.dim() != 1 or p.numel() != c):
            # NOTE: PyTorch's bias message prints the weight's shape ([0] without a weight).
            shown = [0] if weight is None else weight.shape
            raise RuntimeError(
                f"Expected {name} to be a vector of size equal to the number of channels in "
                f"input, but got {name} of shape {_shape_str(shown)} and input of shape "
                f"{_shape_str(input.shape)}"
            )
    _check_mixed_dtype(input, weight, bias)
    _expect_float("GroupNormKernelImpl", input)
    return nn_norm.NativeGroupNorm.apply(input, weight, bias, groups=num_groups, eps=eps)


def instance_norm(input: Tensor, running_mean: Tensor | None = None,  # noqa: A002
                  running_var: Tensor | None = None, weight: Tensor | None = None,
                  bias: Tensor | None = None, use_input_stats: bool = True,
                  momentum: float = 0.1, eps: float = 1e-5) -> Tensor:
    """Normalise each channel of each sample over its spatial positions.

    As PyTorch: the input is viewed as one sample of ``N * C`` channels and batch-normalised,
    with ``weight``, ``bias`` and the running statistics repeated ``N`` times; the running
    statistics (when given) then become the mean over the batch of the updated copies.

    Args:
        input: ``(N, C, *)``.
        running_mean, running_var: ``(C,)`` or None (needed when not ``use_input_stats``).
        weight, bias: ``(C,)`` or None.
        use_input_stats: normalise with the input's statistics (else the running ones).

    Returns:
        Tensor of the shape of ``input`` (grad_fn ViewBackward0, as in PyTorch).

    Raises:
        ValueError: one spatial position with ``use_input_stats``.
    """
    if use_input_stats and math.prod(input.size()[2:]) == 1:
        raise ValueError("Expected more than 1 spatial element when training, got input size "
                         f"torch.Size({list(input.size())})")
    for position, (name, t) in enumerate((("input", input), ("weight", weight), ("bias", bias),
                                          ("running_mean", running_mean),
                                          ("running_var", running_var)), 1):
        expect_tensor("instance_norm", name, position, t, optional=position > 1)
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    _expect_float("batch_norm", input)
    n, c = input.shape[0], input.shape[1]

    def repeated(t: Tensor | None) -> Tensor | None:
        return None if t is None else t.repeat(n)

    with no_grad():
        rm, rv = repeated(running_mean), repeated(running_var)
    flat = input.contiguous().view(1, n * c, *input.shape[2:])
    out = batch_norm(flat, rm, rv, repeated(weight), repeated(bias), use_input_stats, momentum,
                     eps)
    with no_grad():
        for buf, copies in ((running_mean, rm), (running_var, rv)):
            if buf is not None and copies is not None:
                buf.copy_(copies.view(n, c).mean(0))
    return out.view(*input.shape)


_RMS_DTYPE_WARNED = False
_OPMATH_EPS = {"float64": 2.220446049250313e-16, "float32": 1.1920928955078125e-07}


def rms_norm(input: Tensor, normalized_shape: Any, weight: Tensor | None = None,  # noqa: A002
             eps: float | None = None) -> Tensor:
    """``x / sqrt(mean(x**2) + eps) * weight``, the mean over the last
    ``len(normalized_shape)`` dimensions.

    As PyTorch: float16/bfloat16 inputs are computed in float32 (weight included) and the result
    cast back; the output has the input's dtype whatever the weight's (a differing weight dtype
    warns). ``eps=None`` means the machine epsilon of the computing dtype.

    Args:
        input: ``(*, *normalized_shape)``.
        normalized_shape: a sequence of ints (a bare int is refused, as PyTorch's binding does).
        weight: of shape ``normalized_shape``, or None.

    Returns:
        Tensor of the shape and dtype of ``input``.

    Example:
        >>> rms_norm(tensor([[3.0, 4.0]]), [2], eps=0.0)
        tensor([[0.8485, 1.1314]])
    """
    expect_tensor("rms_norm", "input", 1, input)
    expect_tensor("rms_norm", "weight", 3, weight, optional=True)
    if isinstance(normalized_shape, int):
        raise TypeError("rms_norm(): argument 'normalized_shape' (position 2) must be tuple of "
                        f"ints, not {type(normalized_shape).__name__}")
    shape = tuple(int(s) for s in normalized_shape)
    k = len(shape)
    if k == 0:
        raise RuntimeError("Expected normalized_shape to be at least 1-dimensional, i.e., "
                           "containing at least one element, but got normalized_shape = []")
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(
            "Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{_shape_str(weight.shape)} and normalized_shape = {_shape_str(shape)}"
        )
    if input.dim() < k or tuple(input.shape[input.dim() - k:]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={_shape_str(shape)}, expected input with shape "
            f"[*{', '.join(str(s) for s in shape)}], but got input of size"
            f"{_shape_str(input.shape)}"
        )
    _expect_float("rms_norm", input)
    global _RMS_DTYPE_WARNED
    if weight is not None and weight.dtype is not input.dtype and not _RMS_DTYPE_WARNED:
        # NOTE: PyTorch warns once per process (TORCH_WARN_ONCE).
        _RMS_DTYPE_WARNED = True
        warnings.warn(f"Mismatch dtype between input and weight: input dtype = "
                      f"{dtypes.c_type_name(input.dtype)}, weight dtype = "
                      f"{dtypes.c_type_name(weight.dtype)}, Cannot dispatch to fused "
                      "implementation.", UserWarning, stacklevel=2)
    opmath = dtypes.float64 if input.dtype is dtypes.float64 else dtypes.float32
    if eps is None:
        eps = _OPMATH_EPS[opmath.name]
    dims = tuple(range(input.dim() - k, input.dim()))
    rms_eps = eps

    def composite(x: Tensor, w: Tensor | None = None) -> Tensor:
        # NOTE: a composition, as PyTorch's CPU path (rms_norm_composite).
        xo = x.to(opmath)
        out = xo * (xo * xo).mean(dims, keepdim=True).add(rms_eps).rsqrt()
        if w is not None:
            out = out * w
        return out.to(x.dtype)

    if input.device.type == "cuda" and input.backend.norm_kernels_ok(
            input._data, None if weight is None else weight._data):
        # NOTE: one fused kernel each way (kernels/norm.cu). PyTorch's CUDA path records one
        # FusedRmsNormBackward0 node; the node here keeps the name of the composition's last
        # node, which the CPU oracle records, and recomputes the composition for double backward.
        name = "MulBackward0" if input.dtype is opmath else "ToCopyBackward0"
        args = (input,) if weight is None else (input, weight)
        out: Tensor = norm_ops.FusedRmsNorm.apply(*args, fn=composite, name=name, ndim=k,
                                                  eps=eps)
        return out
    return composite(input, weight)


def _channel_window_sum(sq: Tensor, before: int, after: int, width: int) -> Tensor:
    """Sums of ``sq`` over windows of ``width`` channels (dimension 1), ``sq`` first padded with
    ``before`` and ``after`` zero channels."""
    pads = []
    for count in (before, after):
        shape = list(sq.shape)
        shape[1] = count
        pads.append(sq.new_zeros(shape))
    return unfold(cat([pads[0], sq, pads[1]], 1), 1, width, 1).sum(-1)


def local_response_norm(input: Tensor, size: int, alpha: float = 1e-4,  # noqa: A002
                        beta: float = 0.75, k: float = 1.0) -> Tensor:
    """``x / (k + alpha * mean(x**2 over size neighbouring channels)) ** beta``.

    The window of channel ``c`` spans ``[c - size // 2, c + (size - 1) // 2]``, zeros outside
    (the mean still divides by ``size``), as PyTorch's average pooling over padded channels.

    Args:
        input: ``(N, C, *)`` with at least one dimension after ``C``.

    Returns:
        Tensor of the shape of ``input`` (grad_fn DivBackward0).
    """
    expect_tensor("local_response_norm", "input", 1, input)
    dim = input.dim()
    if dim < 3:
        # NOTE: PyTorch's message carries a run of spaces from a continued string literal.
        raise ValueError(f"Expected 3D or higher dimensionality                          input "
                         f"(got {dim} dimensions)")
    if input.numel() == 0:
        return input
    if size <= 0:
        kernel = "kH: " if dim == 3 else "kT: "
        rest = "kW: 1" if dim == 3 else "kH: 1 kW: 1"
        raise RuntimeError(f"kernel size should be greater than zero, but got {kernel}{size} "
                           f"{rest}")
    div = _channel_window_sum(input * input, size // 2, (size - 1) // 2, size) / size
    return input / div.mul(alpha).add(k).pow(beta)


def normalize_padding_idx(padding_idx: int | None, num_embeddings: int) -> int | None:
    """``padding_idx`` as a row in ``[0, num_embeddings)`` (negative counts from the end), with
    PyTorch's assertion when it is out of range; None stays None."""
    if padding_idx is None:
        return None
    if padding_idx > 0:
        assert padding_idx < num_embeddings, "Padding_idx must be within num_embeddings"
    elif padding_idx < 0:
        assert padding_idx >= -num_embeddings, "Padding_idx must be within num_embeddings"
        padding_idx = num_embeddings + padding_idx
    return padding_idx


def _embedding_batched(input: Tensor, weight: Tensor, padding_idx: int, max_norm: Any,  # noqa: A002
                       scale_grad_by_freq: bool) -> Tensor:
    """``embedding`` with indices batched by ``func.vmap``: a batched ``index_select`` (the same
    rows and gradients); the padding row's lookups are cut from the graph."""
    if max_norm is not None or scale_grad_by_freq:
        raise RuntimeError("vmap: embedding with max_norm or scale_grad_by_freq and batched "
                           "indices is not supported by autograd_gpu")
    out = weight.index_select(0, input.reshape(-1)).reshape(*input.shape, weight.shape[1])
    if padding_idx >= 0:
        out = out.where((input != padding_idx).unsqueeze(-1), out.detach())
    return out


def embedding(input: Tensor, weight: Tensor, padding_idx: int | None = None,  # noqa: A002
              max_norm: float | None = None, norm_type: float = 2.0,
              scale_grad_by_freq: bool = False, sparse: bool = False) -> Tensor:
    """Rows of ``weight`` at the integer indices ``input``.

    The row ``padding_idx`` gets no gradient. With ``max_norm``, the rows looked up whose
    ``norm_type``-norm exceeds it are first rescaled in place to norm ``max_norm``. With
    ``scale_grad_by_freq``, each index's gradient is divided by its count in ``input``.

    Args:
        input: int64 or int32 indices of any shape, in ``[0, num_embeddings)``.
        weight: ``(num_embeddings, embedding_dim)``.

    Returns:
        ``(*input.shape, embedding_dim)`` (grad_fn EmbeddingBackward0).

    Raises:
        IndexError: an index out of range.

    Example:
        >>> embedding(tensor([1]), tensor([[0.0, 1.0], [2.0, 3.0]]))
        tensor([[2., 3.]])
    """
    expect_tensor("embedding", "weight", 1, weight)
    expect_tensor("embedding", "indices", 2, input)
    num = weight.shape[0]
    padding_idx = normalize_padding_idx(padding_idx, num)
    if padding_idx is None:
        padding_idx = -1
    if input.dtype not in (dtypes.int64, dtypes.int32):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {input.type()} instead (while checking arguments for "
            "embedding)"
        )
    if sparse:
        raise NotImplementedError("sparse gradients are not supported in autograd_gpu")
    if input._level:
        return _embedding_batched(input, weight, padding_idx, max_norm, scale_grad_by_freq)
    b = weight.backend
    idx = input._data if input._device is weight._device else b.asarray(
        input.backend.to_host(input._data))
    if idx.size and bool(b.any(b.logical_or(b.less(idx, 0), b.greater_equal(idx, num)))):
        raise IndexError("index out of range in self")
    if max_norm is not None:
        _renorm_(weight, idx, max_norm, norm_type)
    scale = None
    if scale_grad_by_freq:
        flat = idx.reshape(-1)
        # NOTE: counted in float64 (exact for any count that fits in memory): CuPy's scatter_add
        # has no int64 (CUDA has no signed 64-bit atomicAdd).
        counts = b.zeros((num,), "float64")
        b.index_add(counts, flat, b.ones(flat.shape, "float64"))
        scale = 1.0 / counts[flat]
    return norm_ops.Embedding.apply(weight, indices=idx, padding_idx=padding_idx, scale=scale,
                                    num=num)


def _renorm_(weight: Tensor, idx: Any, max_norm: float, norm_type: float) -> None:
    """Rescale, in place, the rows of ``weight`` at ``idx`` whose norm exceeds ``max_norm``
    (PyTorch's ``embedding_renorm_``: factor ``max_norm / (norm + 1e-7)``).

    NOTE: every position of ``idx``, repeats included, where PyTorch takes each distinct row
    once: a repeated row's norm and factor come from the same values, so each of its writes
    holds the same numbers. No index goes back to Python (a device sync on CUDA, and values
    that change every call in a compiled step)."""
    flat = idx.reshape(-1)
    if flat.size == 0:
        return
    with no_grad():
        sel = Tensor._make(flat.astype("int64", copy=False), weight._device)
        picked = weight.index_select(0, sel)
        norms = picked.abs().pow(norm_type).sum(1).pow(1.0 / norm_type)
        factor = (max_norm / (norms + 1e-7)).where(norms > max_norm, 1.0)
        weight[sel] = picked * factor.unsqueeze(1)


from ._f_embedding import embedding_bag  # noqa: E402  (listed here: functional gathers this file)
