"""stft and istft against the oracle: values for a table of frame, hop, window, padding,
normalisation and sidedness settings, batched and complex signals, round trips, gradients
(gradcheck, and torch's gradient values), PyTorch's errors and warnings."""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck
from tests.misuse._catalogue import Case, catalogue_test
from tests.ops._same import same

RNG = np.random.default_rng(0)
X1 = RNG.standard_normal(40)
X2 = RNG.standard_normal((2, 40))
WIN = np.hanning(10) + 0.1  # NOTE: no zeros at the ends, so every istft below is invertible

Fn = Callable[[Any, Any, Any], Any]
STFT: dict[str, tuple[Fn, np.ndarray]] = {
    "default_hop": (lambda T, x, w: T.stft(x, 8, window=T.ones(8, dtype=x.dtype,
                                                               device=x.device),
                                           return_complex=True), X1),
    "hop_win_window": (lambda T, x, w: T.stft(x, 12, hop_length=3, win_length=10, window=w,
                                              return_complex=True), X2),
    "no_center": (lambda T, x, w: T.stft(x, 12, hop_length=5, window=w[:10].new_ones(12),
                                         center=False, return_complex=True), X2),
    "constant_normalized": (lambda T, x, w: T.stft(x, 10, hop_length=4, window=w,
                                                   pad_mode="constant", normalized=True,
                                                   return_complex=True), X1),
    "replicate": (lambda T, x, w: T.stft(x, 10, window=w, pad_mode="replicate",
                                         return_complex=True), X1),
    "circular_twosided": (lambda T, x, w: T.stft(x, 10, window=w, pad_mode="circular",
                                                 onesided=False, return_complex=True), X1),
    "real_output": (lambda T, x, w: T.stft(x, 10, window=w, return_complex=False), X2),
    "complex_signal": (lambda T, x, w: T.stft(x * (1 + 0.5j), 10, hop_length=3, window=w,
                                              return_complex=True), X1),
    "method": (lambda T, x, w: x.stft(10, 5, window=w, return_complex=True), X2),
    "istft": (lambda T, x, w: T.istft(T.stft(x, 12, 3, 10, window=w, return_complex=True), 12,
                                      3, 10, window=w), X2),
    "istft_length": (lambda T, x, w: T.istft(T.stft(x, 12, 3, 10, window=w,
                                                    return_complex=True), 12, 3, 10,
                                             window=w, length=36), X2),
    "istft_no_center": (lambda T, x, w: T.istft(T.stft(x, 10, 2, window=w, center=False,
                                                       return_complex=True), 10, 2, window=w,
                                                center=False), X1),
    "istft_twosided_normalized": (lambda T, x, w: T.istft(
        T.stft(x, 10, 2, window=w, onesided=False, normalized=True, return_complex=True), 10,
        2, window=w, normalized=True, return_complex=True), X1),
    "istft_method": (lambda T, x, w: T.stft(x, 10, 4, window=w, return_complex=True).istft(
        10, 4, window=w), X1),
}


@pytest.mark.parametrize("name", sorted(STFT))
def test_matches_torch(device: str, name: str) -> None:
    fn, x = STFT[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NOTE: return_complex=False's deprecation
        theirs = fn(torch, torch.tensor(x), torch.tensor(WIN))
        ours = fn(ag, ag.tensor(x, device=device), ag.tensor(WIN, device=device))
    same(ours, theirs, rtol=1e-12, atol=1e-12, strides=False)


def test_gradients(device: str) -> None:
    def loss(T: Any, x: Any, w: Any) -> Any:
        s = T.stft(x, 12, hop_length=3, win_length=10, window=w, return_complex=True)
        y = T.istft(s * s.abs(), 12, hop_length=3, win_length=10, window=w)
        return (s.abs() ** 2).sum() + (y ** 3).sum()

    tx, tw = torch.tensor(X2, requires_grad=True), torch.tensor(WIN, requires_grad=True)
    ox = ag.tensor(X2, device=device, requires_grad=True)
    ow = ag.tensor(WIN, device=device, requires_grad=True)
    loss(torch, tx, tw).backward()
    loss(ag, ox, ow).backward()
    same(ox.grad, tx.grad, rtol=1e-10, atol=1e-10)
    same(ow.grad, tw.grad, rtol=1e-10, atol=1e-10)
    leaf = ag.tensor(X1[:16], device=device, requires_grad=True)
    window = ag.tensor(WIN[:6], device=device)
    assert gradcheck(lambda a: ag.view_as_real(ag.stft(a, 6, 2, window=window,
                                                       return_complex=True)), (leaf,))


def test_warnings_once(device: str) -> None:
    """PyTorch warns once per process about a missing window (stft, istft) and a short
    ``length``; ours too."""
    x = ag.tensor(X1, device=device)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            s = ag.stft(x, 8, return_complex=True)
            ag.istft(s, 8, length=50)
    said = [str(w.message) for w in caught]
    assert len(said) <= 3 and len(set(said)) == len(said), said


def _x(T: Any, d: str, shape: tuple[int, ...] = (20,)) -> Any:
    return T.ones(shape, dtype=T.float64, device=d)


def _w(T: Any, d: str, n: int = 8) -> Any:
    return T.ones(n, dtype=T.float64, device=d)


CASES: dict[str, Case] = {
    "stft_no_return_complex": lambda T, d: T.stft(_x(T, d), 8, window=_w(T, d)),
    "stft_hop_zero": lambda T, d: T.stft(_x(T, d), 8, hop_length=0, window=_w(T, d),
                                         return_complex=True),
    "stft_win_too_long": lambda T, d: T.stft(_x(T, d), 8, win_length=9, return_complex=True),
    "stft_window_size": lambda T, d: T.stft(_x(T, d), 8, window=_w(T, d, 5),
                                            return_complex=True),
    "stft_3d": lambda T, d: T.stft(_x(T, d, (2, 2, 20)), 8, window=_w(T, d),
                                   return_complex=True),
    "stft_pad_mode": lambda T, d: T.stft(_x(T, d), 8, pad_mode="foo", window=_w(T, d),
                                         return_complex=True),
    "stft_n_fft_too_big": lambda T, d: T.stft(_x(T, d, (10,)), 30, center=False,
                                              window=_w(T, d, 30), return_complex=True),
    "stft_reflect_too_short": lambda T, d: T.stft(_x(T, d, (10,)), 30, window=_w(T, d, 30),
                                                  return_complex=True),
    "stft_onesided_complex": lambda T, d: T.stft(_x(T, d) * 1j, 8, onesided=True,
                                                 window=_w(T, d), return_complex=True),
    "istft_real_input": lambda T, d: T.istft(_x(T, d, (5, 11)), 8, window=_w(T, d)),
    "istft_onesided_complex_output": lambda T, d: T.istft(
        T.stft(_x(T, d), 8, window=_w(T, d), return_complex=True), 8, window=_w(T, d),
        return_complex=True),
    "istft_zero_window": lambda T, d: T.istft(
        T.stft(_x(T, d), 8, window=_w(T, d), return_complex=True), 8,
        window=_w(T, d) * 0),
}

test_misuse = catalogue_test(CASES)
