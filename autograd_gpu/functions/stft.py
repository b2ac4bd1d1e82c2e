"""The short-time Fourier transform and its inverse: ``stft`` and ``istft``, as PyTorch's.

Both are compositions of tensor ops (framing by one gather, ``torch.fft``, overlap-add by one
``index_add``), so gradients, double backward and the CUDA path come from those ops.

``__all__`` lists the ``torch.*`` names this module adds; ``TENSOR_METHODS`` the ``Tensor``
methods (name -> function taking the tensor first), installed by ``functions/__init__``.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from ..dtypes import scalar_type_name
from ..tensor import Tensor
from .checks import expect_tensor

__all__ = ["stft", "istft"]

_WARNED: set[str] = set()
_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _warn_once(key: str, message: str) -> None:
    """PyTorch's TORCH_WARN_ONCE: once per process."""
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, UserWarning, stacklevel=3)


def _legacy_type(t: Tensor) -> str:
    from .tensor_info import _TYPE_NAMES

    return f"torch.{'cuda.' if t.device.type == 'cuda' else ''}{_TYPE_NAMES[t.dtype.name]}"


def _window_repr(window: Tensor | None) -> str:
    return "None" if window is None else f"{_legacy_type(window)}{{{list(window.shape)}}}"


def _flag(value: Any) -> str:
    return "None" if value is None else str(int(bool(value)))


def _pad_edges(x: Tensor, p: int, mode: str) -> Tensor:
    """``x`` padded by ``p`` on both ends of its last dim: ``reflect`` (no edge repeat),
    ``replicate``, ``circular`` (one gather each) or ``constant`` (zeros), as ``F.pad``."""
    from . import cat, index_select

    n = x.shape[-1]
    if mode == "constant":
        zeros = x.new_zeros(tuple(x.shape[:-1]) + (p,))
        return cat([zeros, x, zeros], -1)
    if mode == "reflect" and p >= n:
        shape = "[" + ", ".join(map(str, (1,) * (3 - x.ndim) + tuple(x.shape))) + "]"
        raise RuntimeError(f"Argument #4: Padding size should be less than the corresponding "
                           f"input dimension, but got: padding ({p}, {p}) at dimension 2 of "
                           f"input {shape}")
    from ..creation import arange

    i = arange(-p, n + p, device=x.device)
    if mode == "reflect":
        i = i.abs()
        i = (2 * (n - 1) - i).where(i > n - 1, i)
    elif mode == "replicate":
        i = i.clamp(0, n - 1)
    else:
        i = i.remainder(n)
    return index_select(x, -1, i)


def stft(input: Tensor, n_fft: int, hop_length: int | None = None,  # noqa: A002
         win_length: int | None = None, window: Tensor | None = None, center: bool = True,
         pad_mode: str = "reflect", normalized: bool = False, onesided: bool | None = None,
         return_complex: bool | None = None, align_to_window: bool | None = None) -> Tensor:
    """The STFT of a 1-D signal or a batch (``(L,)`` or ``(B, L)``): ``(B?, freq, frames)``,
    complex (``return_complex=False``: ``view_as_real`` of it, deprecated as in PyTorch).

    Frames of ``n_fft`` samples every ``hop_length`` (default ``n_fft // 4``), each times the
    window (``win_length`` long, default all ones with PyTorch's warning, centred in ``n_fft``),
    then the FFT: ``n_fft // 2 + 1`` bins for a real signal and window (``onesided``), else
    ``n_fft``; ``normalized`` scales by ``n_fft ** -0.5``; ``center`` pads ``n_fft // 2`` on
    both sides first (``pad_mode``)."""
    from .. import fft as FFT
    from .complex import view_as_real

    expect_tensor("stft", "input", 1, input)
    if return_complex is None:
        if not (input.dtype.is_complex or (window is not None and window.dtype.is_complex)):
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
        return_complex = True
    if not return_complex:
        _warn_once("stft_real", "stft with return_complex=False is deprecated. In a future "
                   "pytorch release, stft will return complex tensors for all inputs, and "
                   "return_complex=False will raise an error.\nNote: you can still call "
                   "torch.view_as_real on the complex output to recover the old return format.")
    x = input
    if center:
        if pad_mode not in _PAD_MODES:
            raise NotImplementedError(f"Unrecognised padding mode {pad_mode}")
        x = _pad_edges(x, n_fft // 2, pad_mode)
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    head = (f"stft({_legacy_type(x)}{list(x.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_repr(window)}, normalized={int(normalized)}, "
            f"onesided={_flag(onesided)}, return_complex={int(return_complex)}, "
            f"align_to_window={_flag(align_to_window)}) : ")
    if x.ndim not in (1, 2):
        raise RuntimeError(head + "expected a 1D or 2D tensor")
    length = x.shape[-1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(head + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop <= 0:
        raise RuntimeError(head + f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        raise RuntimeError(head + f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(head + f"expected a 1D window tensor of size equal to win_length={win}"
                           f", but got window with size {list(window.shape)}")
    if window is None:
        _warn_once("stft_window", "A window was not provided. A rectangular window will be "
                   "applied,which is known to cause spectral leakage. Other windows such as "
                   "torch.hann_window or torch.hamming_window are recommended to reduce spectral "
                   "leakage.To suppress this warning and use a rectangular window, explicitly set "
                   "`window=torch.ones(n_fft, device=<device>)`.")
    complex_ = x.dtype.is_complex or (window is not None and window.dtype.is_complex)
    if onesided and complex_:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    frames = _frames(x, n_fft, hop)
    w = _full_window(window, win, n_fft, x)
    if w is not None:
        frames = frames * w
    one = (not complex_) if onesided is None else bool(onesided)
    spec = (FFT.rfft if one else FFT.fft)(frames, n=n_fft, dim=-1,
                                          norm="ortho" if normalized else "backward")
    spec = spec.transpose(-1, -2)  # (B?, freq, frames)
    return spec if return_complex else view_as_real(spec)


def _frames(x: Tensor, n_fft: int, hop: int) -> Tensor:
    """The ``(B?, frames, n_fft)`` windows of ``x``'s last dim, ``hop`` apart (one gather)."""
    from ..creation import arange

    count = 1 + (x.shape[-1] - n_fft) // hop
    idx = arange(count, device=x.device).unsqueeze(-1) * hop + arange(n_fft, device=x.device)
    return x[..., idx]


def _full_window(window: Tensor | None, win: int, n_fft: int, like: Tensor) -> Tensor | None:
    """The window centred in ``n_fft`` samples (zeros around), or None for a rectangular
    window of ``n_fft`` (nothing to multiply)."""
    from . import cat

    if window is None:
        if win == n_fft:
            return None
        window = like.new_ones((win,), dtype=like.dtype.to_real())
    left = (n_fft - win) // 2
    if left == 0 and win == n_fft:
        return window
    zeros = window.new_zeros
    return cat([zeros((left,)), window, zeros((n_fft - win - left,))])


def istft(input: Tensor, n_fft: int, hop_length: int | None = None,  # noqa: A002
          win_length: int | None = None, window: Tensor | None = None, center: bool = True,
          normalized: bool = False, onesided: bool | None = None, length: int | None = None,
          return_complex: bool = False) -> Tensor:
    """The inverse of ``stft``: each frame's inverse FFT times the window, overlap-added and
    divided by the overlap-added squared window (PyTorch's NOLA check: an envelope below
    1e-11 raises), ``n_fft // 2`` trimmed from both ends when ``center``, then cut or
    zero-padded to ``length``."""
    from .. import fft as FFT
    from ..creation import arange
    from . import cat
    from .scatter import index_add

    expect_tensor("istft", "input", 1, input)
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    hop = n_fft // 4 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    one = (input.shape[-2] != n_fft) if onesided is None else bool(onesided)
    if one and return_complex:
        raise RuntimeError("Cannot have onesided output if window or input is complex")
    kind = f"{'CUDA' if input.device.type == 'cuda' else 'CPU'}{scalar_type_name(input.dtype)}Type"
    head = (f"istft({kind}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_repr(window)}, center={int(center)}, "
            f"normalized={int(normalized)}, onesided={_flag(onesided)}, "
            f"length={'None' if length is None else length}, "
            f"return_complex={int(return_complex)}) ")
    if input.ndim not in (2, 3):
        raise RuntimeError(head + f": expected a tensor with a 3 or 4 dimensions of complex, "
                           f"but got {input.ndim}")
    if hop <= 0 or hop > win:
        raise RuntimeError(head + ": expected 0 < hop_length <= win_length")
    if win <= 0 or win > n_fft:
        raise RuntimeError(head + ": expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        raise RuntimeError(head + ": Invalid window shape. window has to be 1D and length of "
                           "`win_length`")
    bins = input.shape[-2]
    if (one and n_fft // 2 + 1 != bins) or (not one and n_fft != bins):
        want = f"n_fft / 2 + 1 when onesided=True, but got {bins}" if one else \
            f"n_fft when onesided=False, but got {bins}"
        raise RuntimeError(head + f": expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match {want}")
    if window is None:
        _warn_once("istft_window", "A window was not provided. A rectangular window will be "
                   "applied.Please provide the same window used by stft to make the inversion "
                   "lossless.To suppress this warning and use a rectangular window, explicitly "
                   "set `window=torch.ones(n_fft, device=<device>)`.")
    real_dtype = input.dtype.to_real()
    w = _full_window(window, win, n_fft, input.real)
    if w is None:
        w = input.real.new_ones((n_fft,), dtype=real_dtype)
    spec = input.transpose(-1, -2)  # (B?, frames, freq)
    norm = "ortho" if normalized else "backward"
    frames = FFT.irfft(spec, n=n_fft, dim=-1, norm=norm) if one else \
        FFT.ifft(spec, n=n_fft, dim=-1, norm=norm)
    if not return_complex and frames.dtype.is_complex:
        frames = frames.real
    frames = frames * w
    count = frames.shape[-2]
    total = n_fft + hop * (count - 1)
    idx = (arange(count, device=input.device).unsqueeze(-1) * hop
           + arange(n_fft, device=input.device)).reshape(-1)
    batch = tuple(frames.shape[:-2])
    flat = frames.reshape(batch + (count * n_fft,))
    signal = index_add(flat.new_zeros(batch + (total,)), -1, idx, flat)
    envelope = index_add(w.new_zeros((total,)), 0, idx, (w * w).repeat(count))
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = total - n_fft // 2 if center else total
    kept = envelope[start:min(end, total)]
    if bool((kept.abs() < 1e-11).any()):
        raise RuntimeError(head + "window overlap add min: 1")
    out = signal[..., start:min(end, total)] / kept
    if length is not None and out.shape[-1] < length:
        _warn_once("istft_length", "The length of signal is shorter than the length parameter. "
                   "Result is being padded with zeros in the tail. Please check your center and "
                   "hop_length settings.")
        pad = out.new_zeros(batch + (length - out.shape[-1],))
        out = cat([out, pad], -1)
    return out


TENSOR_METHODS: dict[str, Callable[..., Any]] = {"stft": stft, "istft": istft}
