"""``out=`` (functions/out.py) and ``Tensor.resize_`` against PyTorch: values written into the
given tensor, its identity kept, dtype casts and refusals, resizing with PyTorch's warning,
autograd refused, the version counter moved."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import autograd_gpu as ag
from tests.misuse._catalogue import Case, catalogue_test


def _mm(T: Any, dev: str, out: Any) -> Any:
    a = T.arange(6.0, device=dev).reshape(2, 3)
    r = T.matmul(a, a.t(), out=out)
    assert r is out
    return out, repr(out.dtype), out.stride()


CASES: dict[str, Case] = {
    "same_shape": lambda T, dev: _mm(T, dev, T.empty(2, 2, device=dev)),
    "empty_out_resized": lambda T, dev: _mm(T, dev, T.empty(0, device=dev)),
    "transposed_out_keeps_strides": lambda T, dev: _mm(T, dev, T.empty(2, 2, device=dev).t()),
    "float64_out_casts": lambda T, dev: _mm(T, dev, T.empty(2, 2, dtype=T.float64, device=dev)),
    "int_out_refused": lambda T, dev: _mm(T, dev, T.empty(2, 2, dtype=T.int64, device=dev)),
    "not_a_tensor": lambda T, dev: _mm(T, dev, 5),
    "expanded_out_refused": lambda T, dev: _mm(T, dev, T.empty(1, device=dev).expand(2, 2)),
    "grad_refused": lambda T, dev: T.matmul(T.ones(2, 2, device=dev, requires_grad=True),
                                            T.ones(2, 2, device=dev), out=T.empty(2, 2)),
    "out_requires_grad_refused": lambda T, dev: T.matmul(
        T.ones(2, 2, device=dev), T.ones(2, 2, device=dev),
        out=T.empty(2, 2, device=dev, requires_grad=True)),
    "resize_grow_keeps_values": lambda T, dev: T.arange(4.0, device=dev).resize_(2, 2),
    "resize_tuple": lambda T, dev: T.arange(6.0, device=dev).resize_((3, 1)).tolist(),
    "resize_bad_type": lambda T, dev: T.ones(2, device=dev).resize_(2.0),
    "resize_bad_element": lambda T, dev: T.ones(2, device=dev).resize_((2, "a")),
    "resize_requires_grad": lambda T, dev: T.ones(2, device=dev, requires_grad=True).resize_(3),
}

test_out_cases = catalogue_test(CASES)


def test_out_with_elements_is_resized_with_the_warning(device: str) -> None:
    for T in (torch, ag):
        out = T.empty(3, device=device if T is ag else "cpu")
        with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
            T.matmul(T.ones(2, 2, device=out.device), T.ones(2, 2, device=out.device), out=out)
        assert out.shape == (2, 2) and out.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_out_moves_the_version_and_shows_through_views(device: str) -> None:
    out = ag.zeros(2, 2, device=device)
    view = out[0]
    v = out._version
    with ag.no_grad():
        ag.matmul(ag.ones(2, 2, device=device, requires_grad=True), ag.ones(2, 2, device=device),
                  out=out)
    assert out._version > v and view.tolist() == [2.0, 2.0]
