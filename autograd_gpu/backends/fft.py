"""Complex and FFT primitives, written once with ``self.xp`` (``numpy.fft`` or ``cupy.fft``)."""

from __future__ import annotations

from typing import Any


class FftBackend:
    """Entries for ``ops/complex.py`` and ``ops/fft.py``."""

    xp: Any

    def conjugate(self, z: Any) -> Any:
        # NOTE: in z's own layout (order K), as PyTorch's result; CuPy's ufuncs give C order
        return self.xp.conjugate(z, out=self.xp.empty_like(z))

    def angle(self, z: Any) -> Any:
        return self.xp.angle(z)

    @staticmethod
    def broadcast_shapes(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
        """The broadcast shape of ``a`` and ``b`` (plain Python: CuPy has no
        ``broadcast_shapes`` in every version); ValueError when they do not broadcast."""
        n = max(len(a), len(b))
        a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
        if any(x != y and x != 1 and y != 1 for x, y in zip(a, b)):
            raise ValueError(f"shapes {a} and {b} cannot be broadcast")
        return tuple(y if x == 1 else x for x, y in zip(a, b))

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
