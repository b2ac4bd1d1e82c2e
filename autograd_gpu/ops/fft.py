"""The FFT op: complex-to-complex, real-to-complex and complex-to-real transforms over several
dims (``backend.fftn``: ``numpy.fft`` or ``cupy.fft``).

Gradients in PyTorch's convention (``dL/d(conj x)`` for a real loss): each transform is linear,
so its input gradient is the adjoint transform of ``grad``. The adjoint of a forward transform
is the inverse one with the normalization swapped (``backward`` <-> ``forward``; ``ortho`` is
its own), and the other way round. Zero-padding or trimming to the signal sizes ``s`` has
trimming or zero-padding as its adjoint.
"""

from __future__ import annotations

from typing import Any

from ..autograd.node import Node

_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}
_NAMES = {"c2c": "FftC2CBackward0", "r2c": "FftR2CBackward0", "c2r": "FftC2RBackward0"}


class Fft(Node):
    """``kind`` ``c2c`` (``inverse`` picks the direction), ``r2c`` (a forward transform of real
    input, ``onesided``: only the last dim's first ``s[-1] // 2 + 1`` bins) or ``c2r`` (the
    inverse of a one-sided Hermitian spectrum, real output of sizes ``s``) over ``dims``."""

    def __init__(self, kind: str, dims: tuple[int, ...], s: tuple[int, ...], norm: str,
                 inverse: bool = False, onesided: bool = True) -> None:
        self.kind, self.dims, self.s, self.norm = kind, dims, s, norm
        self.inverse, self.onesided = inverse, onesided
        self.node_name = _NAMES[kind]

    def forward(self, x: Any) -> Any:
        self.in_sizes = tuple(x.shape[d] for d in self.dims)
        if self.kind == "c2c":
            fn = "ifftn" if self.inverse else "fftn"
        elif self.kind == "r2c":
            fn = "rfftn" if self.onesided else "fftn"
        else:
            fn = "irfftn"
        return self.backend.fftn(x, fn, self.s, self.dims, self.norm)

    def backward(self, grad: Any) -> tuple[Any]:
        dims, norm = self.dims, _SWAP[self.norm]
        if self.kind == "c2c":
            g = Fft.apply(grad, kind="c2c", dims=dims, s=self.s, norm=norm,
                          inverse=not self.inverse)
        elif self.kind == "r2c":
            # NOTE: the bins a one-sided spectrum leaves out get zero gradient; the input is
            # real, so its gradient is the real part.
            if self.onesided:
                grad = resize(grad, dims[-1:], self.s[-1:])
            g = Fft.apply(grad, kind="c2c", dims=dims, s=self.s, norm=norm, inverse=True).real
        else:
            # NOTE: each bin but the first (and, for even n, the last) stands for itself and
            # its conjugate mirror in the full spectrum, so its gradient counts twice.
            g = Fft.apply(grad, kind="r2c", dims=dims, s=self.s, norm=norm)
            n, half = self.s[-1], g.shape[dims[-1]]
            if n - half > 0:
                w = self.backend.ones(half, "float64" if g.dtype.itemsize == 16 else "float32")
                w[1:1 + n - half] = 2
                shape = [1] * g.ndim
                shape[dims[-1]] = half
                g = g * self.wrap(w.reshape(shape))
        return (resize(g, dims, self.in_sizes),)


def resize(t: Any, dims: tuple[int, ...], sizes: tuple[int, ...]) -> Any:
    """``t`` trimmed or zero-padded at the end of each of ``dims`` to ``sizes`` (differentiable:
    tensor ops only)."""
    from ..functions.shape import cat  # late: functions build on ops

    for d, m in zip(dims, sizes):
        cur = t.shape[d]
        if cur > m:
            t = t.narrow(d, 0, m)
        elif cur < m:
            shape = list(t.shape)
            shape[d] = m - cur
            t = cat([t, t.new_zeros(shape)], d)
    return t
