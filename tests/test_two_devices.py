"""Ops on tensors from two devices raise PyTorch's error, CUDA named first. Checked without a GPU
by a stand-in: a CPU array labelled ``cuda:0`` (the check runs before any backend is touched)."""

from __future__ import annotations

import numpy as np
import pytest

import autograd_gpu as ag
from autograd_gpu.tensor import Tensor

MSG = "Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"


def _fake_cuda(values: list[float]) -> Tensor:
    return Tensor._make(np.asarray(values, dtype=np.float32), ag.device("cuda:0"))


@pytest.mark.parametrize("op", [
    lambda a, b: a + b, lambda a, b: b * a, lambda a, b: ag.maximum(a, b),
    lambda a, b: ag.cat([a, b]), lambda a, b: ag.where(a > 0, a, b), lambda a, b: a @ b,
])
def test_mixing_devices_raises_pytorch_error(op: object) -> None:
    cpu = ag.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError) as info:
        op(cpu, _fake_cuda([3.0, 4.0]))  # type: ignore[operator]
    assert str(info.value) == MSG
