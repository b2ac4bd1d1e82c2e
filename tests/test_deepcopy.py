"""``copy.deepcopy`` of tensors, as PyTorch: leaves only, fresh storage, ``.grad`` copied."""

from __future__ import annotations

import copy

import pytest
import torch

import autograd_gpu as ag


def test_deepcopy_leaf_copies_storage_flag_and_grad(device: str) -> None:
    x = ag.tensor([1.0, 2.0], requires_grad=True, device=device)
    x.grad = ag.ones(2, device=device)
    y = copy.deepcopy(x)
    assert y is not x and y.requires_grad and y.is_leaf
    assert y.tolist() == [1.0, 2.0] and y.grad.tolist() == [1.0, 1.0]
    with ag.no_grad():
        y.add_(1)
        y.grad.add_(1)
    assert x.tolist() == [1.0, 2.0] and x.grad.tolist() == [1.0, 1.0]


def test_deepcopy_keeps_shared_references(device: str) -> None:
    x = ag.zeros(3, device=device)
    d = copy.deepcopy({"a": x, "b": x})
    assert d["a"] is d["b"] and d["a"] is not x


def test_deepcopy_of_non_leaf_is_refused_like_torch(device: str) -> None:
    with pytest.raises(RuntimeError) as theirs:
        copy.deepcopy(torch.ones(2, requires_grad=True) * 2)
    with pytest.raises(RuntimeError) as ours:
        copy.deepcopy(ag.ones(2, requires_grad=True, device=device) * 2)
    assert str(ours.value).split(".")[0] == str(theirs.value).split(".")[0]
