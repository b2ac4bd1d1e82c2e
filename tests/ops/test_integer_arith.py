"""``//``, ``%``, ``div(rounding_mode=...)`` and the bitwise operators against the torch oracle:
signs, scalars, dtypes; the errors that name a device kernel; what the zero check costs.

Integer division by zero in all its spellings is in the misuse catalogue
(``tests/misuse/test_arith.py``)."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import autograd_gpu as ag

CASES = [
    ([7, -7, 5, -5], [2, 2, -3, -3]),
    ([7.5, -7.5, 0.5], [2.0, 2.0, -0.25]),
]


@pytest.mark.parametrize("a, b", CASES)
def test_floor_divide_and_remainder_match_torch(device: str, a: list, b: list) -> None:
    x, y = ag.tensor(a, device=device), ag.tensor(b, device=device)
    tx, ty = torch.tensor(a), torch.tensor(b)
    for ours, theirs in [(x // y, tx // ty), (x % y, tx % ty), (x // 2, tx // 2),
                         (x % 3, tx % 3), (x // 2.5, tx // 2.5), (7 // y, 7 // ty),
                         (7 % y, 7 % ty), (x.div(y, rounding_mode="trunc"),
                                           tx.div(ty, rounding_mode="trunc")),
                         (x.div(y, rounding_mode="floor"), tx.div(ty, rounding_mode="floor"))]:
        assert ours.tolist() == theirs.tolist()
        assert repr(ours.dtype) == repr(theirs.dtype)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int32", "int64"])
def test_trunc_division_is_exact_for_every_integer_dtype(device: str, dtype: str) -> None:
    lo, hi = (0, 255) if dtype == "uint8" else (-128, 127)
    a = list(range(lo, hi + 1, 7))
    b = [d for d in range(-9, 10) if d and (dtype != "uint8" or d > 0)]
    for d in b:
        ours = ag.div(ag.tensor(a, dtype=getattr(ag, dtype), device=device), d,
                      rounding_mode="trunc")
        theirs = torch.div(torch.tensor(a, dtype=getattr(torch, dtype)), d, rounding_mode="trunc")
        assert ours.tolist() == theirs.tolist(), d


def _kernel_error(fn: Any, device: str) -> str:
    with pytest.raises(NotImplementedError) as e:
        fn(ag, device)
    with pytest.raises(NotImplementedError) as t:
        fn(torch, "cpu")
    # NOTE: PyTorch names the kernel of the device, e.g. "div_floor_cuda" on a GPU
    assert str(e.value) == str(t.value).replace("_cpu", f"_{ag.device(device).type}")
    return str(e.value)


@pytest.mark.parametrize("op", ["floordiv", "mod", "div_trunc", "div_floor", "and", "or", "xor"])
def test_kernel_errors_name_the_device(device: str, op: str) -> None:
    bools = op not in ("and", "or", "xor")

    def run(m: Any, dev: str) -> Any:
        x = m.tensor([True, False] if bools else [1.5, 2.0], device=dev)
        y = m.tensor([True, True] if bools else [1.0, 1.0], device=dev)
        return {"floordiv": lambda: x // y, "mod": lambda: x % y,
                "div_trunc": lambda: m.div(x, y, rounding_mode="trunc"),
                "div_floor": lambda: m.div(x, y, rounding_mode="floor"),
                "and": lambda: x & y, "or": lambda: x | 1, "xor": lambda: x ^ y}[op]()

    assert "not implemented for" in _kernel_error(run, device)


def _count_any(backend: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    calls = [0]
    real = backend.any

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls[0] += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(backend, "any", counting)
    return calls


def test_zero_check_reduces_only_integer_tensor_divisors(device: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The check costs one reduction (one host sync on CUDA) for an integer tensor divisor, and
    nothing for a float division or a Python scalar divisor."""
    xf, yf = ag.tensor([1.0, 2.0], device=device), ag.tensor([0.0, 1.0], device=device)
    xi, yi = ag.tensor([1, 2], device=device), ag.tensor([3, 1], device=device)
    calls = _count_any(xf.backend, monkeypatch)
    _ = xf // yf, xf % yf, ag.div(xf, yf, rounding_mode="trunc"), xf // 0, xi // 2, xi % 3
    assert calls[0] == 0
    _ = xi // yi
    assert calls[0] == 1
