"""nn.DataParallel and nn.parallel's data_parallel, scatter and gather: PyTorch's interface,
reprs and state-dict keys, the same outputs and gradients as the module itself, outputs on
``output_device``, and PyTorch's device check."""

from __future__ import annotations

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.nn._util import copy_params
from tests.ops._same import same

X = np.random.default_rng(0).standard_normal((6, 3))


def test_no_devices_matches_torch() -> None:
    if ag.cuda.is_available():  # NOTE: PyTorch on a GPU machine: device_ids[0] of []
        with pytest.raises(IndexError, match="^list index out of range$"):
            ag.nn.DataParallel(ag.nn.Linear(3, 2), device_ids=[])
        return
    assert ag.nn.DataParallel(ag.nn.Linear(3, 2), device_ids=[0, 1]).device_ids == \
        torch.nn.DataParallel(torch.nn.Linear(3, 2), device_ids=[0, 1]).device_ids == []
    ours = ag.nn.DataParallel(ag.nn.Linear(3, 2), device_ids=[])
    theirs = torch.nn.DataParallel(torch.nn.Linear(3, 2), device_ids=[])
    assert repr(ours) == repr(theirs) and ours.device_ids == theirs.device_ids == []
    default = list(range(ag.cuda.device_count())) if ag.cuda.is_available() else []
    assert ag.nn.DataParallel(ag.nn.Linear(3, 2)).device_ids == default
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["module.weight",
                                                                     "module.bias"]
    copy_params(ours, theirs)
    xo, xt = ag.tensor(X, dtype=ag.float32), torch.tensor(X, dtype=torch.float32)
    same(ours(xo), theirs(xt), rtol=1e-6, atol=1e-6)
    ours(xo).sum().backward()
    theirs(xt).sum().backward()
    same(ours.module.weight.grad, theirs.module.weight.grad, rtol=1e-6, atol=1e-6)
    same(ag.nn.parallel.data_parallel(ours.module, xo), theirs.module(xt), rtol=1e-6, atol=1e-6)


def test_on_a_device(device: str) -> None:
    """On the CPU (no device ids) the module runs as it is; on CUDA (one id) the module moves to
    cuda:0 and a CPU input is scattered there."""
    ids = [] if device == "cpu" else [0]
    if device == "cpu" and ag.cuda.is_available():  # NOTE: PyTorch's too: device_ids[0] of []
        with pytest.raises(IndexError):
            ag.nn.DataParallel(ag.nn.Linear(3, 2), device_ids=ids)
        return
    net = ag.nn.Linear(3, 2)
    expected = net(ag.tensor(X, dtype=ag.float32))
    wrapped = ag.nn.DataParallel(net, device_ids=ids)
    assert net.weight.device.type == device
    out = wrapped(ag.tensor(X, dtype=ag.float32))
    assert out.device.type == device
    np.testing.assert_allclose(out.detach().cpu().numpy(), expected.detach().numpy(), rtol=1e-6)
    if device == "cpu":
        return
    with pytest.raises(RuntimeError, match=r"^module must have its parameters and buffers on "
                                           r"device cuda:0 \(device_ids\[0\]\)"):
        ag.nn.DataParallel(ag.nn.Linear(3, 2), device_ids=[0, 0])(ag.ones(2, 3))
    parts = ag.nn.parallel.scatter((ag.tensor(X), {"k": ag.tensor(X)}), [0, 0])
    assert len(parts) == 2 and parts[0][0].shape == (3, 3) and parts[1][1]["k"].device.type == "cuda"
    back = ag.nn.parallel.gather([p[0] for p in parts], -1)
    np.testing.assert_array_equal(back.numpy(), X)
