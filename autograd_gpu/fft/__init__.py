"""``torch.fft``: discrete Fourier transforms with PyTorch's gradients (``numpy.fft`` on the
CPU, ``cupy.fft`` (cuFFT) on CUDA; the op lives in ``ops/fft.py``, the argument handling in
``functions/fft.py``).
"""

from __future__ import annotations

from ..functions.fft import (
    fft, fft2, fftfreq, fftn, fftshift, hfft, hfft2, hfftn, ifft, ifft2, ifftn, ifftshift, ihfft,
    ihfft2, ihfftn, irfft, irfft2, irfftn, rfft, rfft2, rfftfreq, rfftn,
)

__all__: list[str] = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft", "ifft2",
    "ifftn", "ifftshift", "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "rfft",
    "rfft2", "rfftfreq", "rfftn",
]
