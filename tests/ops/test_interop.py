"""functions/interop.py and linalg.vander against the oracle: frombuffer (sharing, offsets,
counts, PyTorch's errors and warning), DLPack capsules both ways, get_device, resize_as_ and the
deprecated Tensor.resize_as, Tensor.addmm_, set_anomaly_enabled."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.autograd import gradcheck, gradgradcheck
from tests.misuse._catalogue import Case, catalogue_test
from tests.ops._same import same

RAW = bytes(range(1, 17))

CASES: dict[str, Case] = {
    "frombuffer_int16": lambda T, d: T.frombuffer(bytearray(RAW), dtype=T.int16),
    "frombuffer_float32_offset_count": lambda T, d: T.frombuffer(
        bytearray(RAW), dtype=T.float32, count=2, offset=4),
    "frombuffer_uint8_offset": lambda T, d: T.frombuffer(bytearray(RAW), dtype=T.uint8, offset=15),
    "frombuffer_float64_requires_grad": lambda T, d: T.frombuffer(
        bytearray(RAW), dtype=T.float64, requires_grad=True).requires_grad,
    "frombuffer_empty": lambda T, d: T.frombuffer(bytearray(), dtype=T.float32),
    "frombuffer_count_zero": lambda T, d: T.frombuffer(bytearray(RAW), dtype=T.float32, count=0),
    "frombuffer_not_multiple": lambda T, d: T.frombuffer(bytearray(RAW), dtype=T.float64,
                                                         offset=4),
    "frombuffer_offset_past_end": lambda T, d: T.frombuffer(bytearray(RAW), dtype=T.uint8,
                                                            offset=16),
    "frombuffer_negative_offset": lambda T, d: T.frombuffer(bytearray(RAW), dtype=T.uint8,
                                                            offset=-1),
    "frombuffer_count_too_big": lambda T, d: T.frombuffer(bytearray(RAW), dtype=T.float32,
                                                          count=5),
    "get_device": lambda T, d: T.get_device(T.ones(2)),
    "get_device_not_tensor": lambda T, d: T.get_device([1.0]),
    "resize_as_": lambda T, d: T.resize_as_(T.arange(6.0, device=d), T.ones(2, 2, device=d)).shape,
    "resize_as_grows": lambda T, d: T.arange(2.0, device=d).resize_as_(
        T.ones(2, 2, device=d)).reshape(-1)[:2],  # NOTE: the rest is uninitialised
    "resize_as_requires_grad": lambda T, d: T.resize_as_(T.ones(3, device=d, requires_grad=True),
                                                         T.ones(2, device=d)),
    "resize_as_template_list": lambda T, d: T.resize_as_(T.ones(3, device=d), [1, 2]),
    "resize_as_deprecated": lambda T, d: T.arange(6.0, device=d).resize_as(T.ones(2, 3,
                                                                                  device=d)),
    "resize_as_deprecated_numel": lambda T, d: T.arange(6.0, device=d).resize_as(
        T.ones(2, 2, device=d)),
    "addmm_": lambda T, d: T.ones(2, 2, device=d).addmm_(
        T.arange(6.0, device=d).reshape(2, 3), T.arange(6.0, device=d).reshape(3, 2), beta=2,
        alpha=0.5),
    "addmm_shape_error": lambda T, d: T.ones(2, 2, device=d).addmm_(T.ones(2, 3, device=d),
                                                                    T.ones(2, 2, device=d)),
    "vander": lambda T, d: T.linalg.vander(T.tensor([1.0, -2.0, 0.5], device=d)),
    "vander_N": lambda T, d: T.linalg.vander(T.tensor([[2, 3], [1, -1]], device=d), N=4),
    "vander_N2": lambda T, d: T.linalg.vander(T.tensor([2.0, 3.0], device=d), N=2),
    "vander_N1": lambda T, d: T.linalg.vander(T.tensor([2.0, 3.0], device=d), N=1),
    "vander_0d": lambda T, d: T.linalg.vander(T.tensor(2.0, device=d)),
    "vander_empty": lambda T, d: T.linalg.vander(T.ones(0, device=d)),
}

test_misuse = catalogue_test(CASES)


def test_frombuffer_shares_memory_and_warns_once_for_read_only() -> None:
    buf = bytearray(8)
    t = ag.frombuffer(buf, dtype=ag.float32, count=1, offset=4)
    t[0] = 1.0
    assert bytes(buf[4:]) == np.float32(1.0).tobytes()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ours = ag.frombuffer(bytes(RAW), dtype=ag.int32)
        ag.frombuffer(bytes(RAW), dtype=ag.int32)
    same(ours, torch.frombuffer(bytearray(RAW), dtype=torch.int32))
    said = [str(w.message) for w in caught]
    # NOTE: PyTorch warns once per process, as ours: at most one (an earlier test may have seen it)
    assert len(said) <= 1 and all(s.startswith("The given buffer is not writable") for s in said)


def test_dlpack_round_trips(device: str) -> None:
    t = ag.arange(4.0, device=device)
    back = ag.from_dlpack(ag.to_dlpack(t))
    back[0] = 7.0
    assert t.tolist() == [7.0, 1.0, 2.0, 3.0]
    assert ag.get_device(t) == (-1 if device == "cpu" else 0)
    if device == "cpu" or not os.environ.get("AUTOGRAD_GPU_FAKE_CUDA"):
        # NOTE: the NumPy stand-in for CuPy makes CPU capsules
        assert back.device == t.device
    if device == "cpu":
        theirs = torch.from_dlpack(ag.to_dlpack(t))
        theirs[1] = 5.0
        assert t.tolist() == [7.0, 5.0, 2.0, 3.0]
        ours = ag.from_dlpack(torch.to_dlpack(torch.arange(3.0)))
        assert ours.tolist() == [0.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match="expected an unused DLPack capsule"):
        capsule = ag.to_dlpack(t)
        ag.from_dlpack(capsule)
        ag.from_dlpack(capsule)


def test_set_anomaly_enabled() -> None:
    for T in (torch, ag):
        T.set_anomaly_enabled(True, False)
        try:
            assert T.is_anomaly_enabled() and not T.is_anomaly_check_nan_enabled()
        finally:
            T.set_anomaly_enabled(False)
        assert not T.is_anomaly_enabled() and T.is_anomaly_check_nan_enabled()


def test_vander_gradients(device: str) -> None:
    x = np.array([[1.5, -0.5, 2.0], [0.3, 0.0, -1.2]])
    tx = torch.tensor(x, requires_grad=True)
    ox = ag.tensor(x, device=device, requires_grad=True)
    w = np.random.default_rng(0).standard_normal((2, 3, 5))
    (torch.linalg.vander(tx, N=5) * torch.tensor(w)).sum().backward()
    (ag.linalg.vander(ox, N=5) * ag.tensor(w, device=device)).sum().backward()
    same(ox.grad, tx.grad, rtol=1e-12, atol=1e-12)
    leaf = ag.tensor(x[0], device=device, requires_grad=True)
    assert gradcheck(lambda a: ag.linalg.vander(a, N=4), (leaf,))
    assert gradgradcheck(lambda a: ag.linalg.vander(a, N=4), (leaf,))


