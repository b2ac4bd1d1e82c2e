"""Complex and FFT primitives, written once with ``self.xp`` (``numpy.fft`` or ``cupy.fft``)."""

from __future__ import annotations

from typing import Any


class FftBackend:
    """Entries for ``ops/complex.py`` and ``ops/fft.py``."""

    xp: Any

    def conjugate(self, z: Any) -> Any:
        return self.xp.conjugate(z)

    def angle(self, z: Any) -> Any:
        return self.xp.angle(z)

    def broadcast_shapes(self, *shapes: Any) -> tuple[int, ...]:
        return tuple(self.xp.broadcast_shapes(*shapes))

    def fftn(self, x: Any, kind: str, s: tuple[int, ...], axes: tuple[int, ...],
             norm: str) -> Any:
        """``xp.fft.<kind>`` (fftn, ifftn, rfftn, irfftn) over ``axes`` with sizes ``s``.

        NOTE: the result keeps single precision (NumPy 2 and CuPy keep complex64/float32)."""
        out = getattr(self.xp.fft, kind)(x, s=s, axes=axes, norm=norm)
        single = x.dtype.name in ("float32", "complex64")
        if single and out.dtype.name in ("float64", "complex128"):
            out = out.astype("complex64" if out.dtype.kind == "c" else "float32")
        return out

    def fftfreq(self, n: int, d: float, real: bool, dtype: str) -> Any:
        f = self.xp.fft.rfftfreq if real else self.xp.fft.fftfreq
        return f(n, d).astype(dtype)
