"""Tensor conversions and properties against PyTorch: numpy/item/tolist/__array__, Python number
conversions, ``to`` and the dtype shortcuts, clone/contiguous/strides, shape queries, ``T``/``mT``,
``data``, ``len``/``iter``, ``new_*`` and ``torch.Size``."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests._compare import outcome, same

M = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]

CASES: list[Callable[[Any], Any]] = [
    # item / tolist / Python numbers
    lambda t: t.tensor([1.5]).item(),
    lambda t: t.tensor([[7]]).item(),
    lambda t: t.tensor(3).item(),
    lambda t: t.tensor(True).item(),
    lambda t: t.tensor(2.5, dtype=t.float16).item(),
    lambda t: t.tensor([1, 2]).item(),
    lambda t: t.tensor([]).item(),
    lambda t: t.tensor([[1, 2], [3, 4]]).tolist(),
    lambda t: t.tensor(M).tolist(),
    lambda t: t.tensor(2.5).tolist(),
    lambda t: t.tensor(True).tolist(),
    lambda t: t.tensor([1.5, 2.5], dtype=t.float16).tolist(),
    lambda t: t.tensor([[1, 2], [3, 4]]).T.tolist(),
    lambda t: float(t.tensor([2.5])),
    lambda t: float(t.tensor(3)),
    lambda t: float(t.tensor([2.5, 1])),
    lambda t: float(t.tensor([])),
    lambda t: int(t.tensor(2.7)),
    lambda t: int(t.tensor(-2.7)),
    lambda t: int(t.tensor([1, 2])),
    lambda t: bool(t.tensor([0.0])),
    lambda t: bool(t.tensor(3)),
    lambda t: bool(t.tensor([1.0, 2.0])),
    lambda t: bool(t.tensor([])),
    lambda t: t.tensor(3).__index__(),
    lambda t: t.tensor([1.5]).__index__(),
    lambda t: [10, 20, 30][t.tensor(2)],
    # numpy / __array__
    lambda t: t.tensor([1.0, 2.0]).numpy(),
    lambda t: t.tensor([1, 2], dtype=t.int32).numpy(),
    lambda t: t.tensor([1.5], dtype=t.float16).numpy(),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).numpy(),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).detach().numpy(),
    lambda t: np.asarray(t.tensor([1.0, 2.0])),
    lambda t: np.asarray(t.tensor([1.0, 2.0]), dtype=np.float64),
    lambda t: np.array(t.tensor([1, 2])),
    lambda t: t.tensor([1, 2]).__array__(),
    lambda t: t.tensor([1, 2]).__array__(np.float32),
    # dtype conversions
    lambda t: t.tensor([1.0, 2.0]).float(),
    lambda t: t.tensor([1.0, 2.0]).double(),
    lambda t: t.tensor([1.0, 2.0]).half(),
    lambda t: t.tensor([1.7, -2.7]).long(),
    lambda t: t.tensor([1.7, -2.7]).int(),
    lambda t: t.tensor([1.7, 0.0]).bool(),
    lambda t: t.tensor([1, 2]).to(t.float64),
    lambda t: t.tensor([1, 2]).to("cpu"),
    lambda t: t.tensor([1, 2]).to(t.device("cpu")),
    lambda t: t.tensor([1, 2]).to(t.ones(1, dtype=t.float16)),
    lambda t: t.tensor([1, 2]).to("cpu", t.float32),
    lambda t: t.tensor([1, 2]).to(device="cpu", dtype=t.int32),
    lambda t: t.tensor([1, 2]).to(dtype=t.float64, device=None),
    lambda t: t.ones(2).to("cpu", t.float64, copy=True),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).to(t.float64),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).double(),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).float(),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).to(t.float16),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).long(),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).cpu(),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).clone(),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).contiguous(),
    lambda t: t.tensor([[1.0, 2.0]], requires_grad=True).T.contiguous(),
    lambda t: t.ones(2).to("float32"),
    lambda t: t.ones(2).to(device="cuda:x"),
    # properties
    lambda t: t.ones(2, 3).shape,
    lambda t: t.ones(2, 3).size(),
    lambda t: t.ones(2, 3).size(1),
    lambda t: t.ones(2, 3).size(-1),
    lambda t: t.ones(2, 3).size(dim=0),
    lambda t: t.ones(2, 3).size(2),
    lambda t: (t.ones(2, 3).dim(), t.ones(2, 3).ndim, t.ones(()).dim(), t.ones(2).ndimension()),
    lambda t: (t.ones(2, 3).numel(), t.ones(0, 3).numel(), t.ones(()).numel(), t.numel(t.ones(4))),
    lambda t: (t.ones(2).dtype, t.ones(2).device, t.tensor([1, 2]).dtype),
    lambda t: (t.ones(2).element_size(), t.ones(2).nbytes, t.ones(2, dtype=t.float64).itemsize),
    lambda t: (t.ones(2).type(), t.ones(2, dtype=t.int64).type(), t.ones(2).is_floating_point()),
    lambda t: (t.ones(2).is_cuda, t.ones(2).is_cpu, t.ones(2).get_device()),
    lambda t: (t.ones(2).nelement(), t.ones(2, 3).shape[0], t.ones(2, 3).shape == (2, 3)),
    lambda t: (t.tensor([1.0], requires_grad=True).is_leaf,
               (t.tensor([1.0], requires_grad=True) * 2).is_leaf, t.tensor([1, 2]).is_leaf),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).data,
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).detach(),
    lambda t: t.tensor([1.0, 2.0], requires_grad=True).requires_grad_(False),
    lambda t: t.tensor([1.0, 2.0]).requires_grad_(),
    lambda t: t.tensor([1, 2]).requires_grad_(),
    lambda t: t.tensor([1, 2]).requires_grad_(False),
    lambda t: setattr(t.tensor([1, 2]), "requires_grad", True),
    # T / mT
    lambda t: t.tensor(M, requires_grad=True).T,
    lambda t: t.tensor(M, requires_grad=True).mT,
    lambda t: t.ones(2, 3, 4).mT.shape,
    lambda t: t.ones(2, 3, 4).T.shape,
    lambda t: t.ones(3).T,
    lambda t: t.ones(()).T,
    lambda t: t.ones(3).mT,
    # strides and contiguity
    lambda t: t.ones(2).stride(),
    lambda t: t.ones(2, 3).stride(),
    lambda t: t.ones(()).stride(),
    lambda t: t.ones(2, 3, 4).stride(),
    lambda t: t.ones(2, 3).stride(1),
    lambda t: t.ones(2, 3).stride(-1),
    lambda t: t.ones(2, 3).stride(5),
    lambda t: t.ones(2, 3).t().stride(),
    lambda t: t.ones(2, 3).t().is_contiguous(),
    lambda t: t.ones(2, 3).t().contiguous().is_contiguous(),
    lambda t: t.ones(2, 3).t().contiguous().stride(),
    lambda t: t.ones(2, 3).t().clone().stride(),
    lambda t: t.tensor([[1, 2, 3], [4, 5, 6]])[:, 1].stride(),
    lambda t: t.tensor([[1, 2, 3], [4, 5, 6]])[:, 1].is_contiguous(),
    lambda t: t.tensor([[1, 2, 3], [4, 5, 6]])[:, ::2].stride(),
    lambda t: t.tensor([[1, 2, 3], [4, 5, 6]], dtype=t.float64).stride(),
    # len / iter
    lambda t: len(t.ones(4, 2)),
    lambda t: len(t.ones(())),
    lambda t: list(t.arange(3)),
    lambda t: list(t.tensor(M)),
    lambda t: list(t.tensor(3)),
    lambda t: list(t.tensor(M, requires_grad=True)),
    # new_*
    lambda t: t.ones(2, 3).new_zeros(2),
    lambda t: t.ones(2, 3).new_ones(2),
    lambda t: t.ones(2, 3).new_full((2,), 3),
    lambda t: t.ones(2, 3).new_empty(2).shape,
    lambda t: t.ones(2, 3, dtype=t.int32).new_tensor([1, 2]),
    lambda t: t.ones(2, 3).new_tensor([1, 2]).dtype,
    lambda t: t.ones(2, 3).new_tensor([1, 2], dtype=t.int64).dtype,
    lambda t: t.ones(2, 3, dtype=t.float64).new_zeros((2,)).dtype,
    lambda t: t.ones(2, 3, dtype=t.float64).new_zeros(2, 3).shape,
    lambda t: t.ones(2, 3, dtype=t.float64).new_full((2,), 1).dtype,
    lambda t: t.ones(2, 3).new_ones(2, requires_grad=True),
    lambda t: t.ones(2, 3, requires_grad=True).new_zeros(2),
    # Size
    lambda t: t.Size([2, 3]),
    lambda t: t.Size([2, 3])[1:],
    lambda t: t.Size([2, 3])[0],
    lambda t: t.Size([2, 3]) + (4,),
    lambda t: (4,) + t.Size([2, 3]),
    lambda t: t.Size([2, 3]).numel(),
    lambda t: t.Size([]).numel(),
    lambda t: t.ones(2, 3).shape == t.Size([2, 3]),
    lambda t: type(t.ones(2, 3).shape[:1]).__name__,
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_conversions_and_properties_match_torch(case: int) -> None:
    same(CASES[case])


def test_conversions_on_device(device: str) -> None:
    x = ag.tensor(M, device=device, requires_grad=True)
    assert x.tolist() == M and x[1, 2].item() == 6.0
    assert float(x[0, 0]) == 1.0 and int(x[1, 1]) == 5
    host = x.detach().cpu()
    assert host.device == ag.device("cpu") and host.tolist() == M
    assert np.asarray(x.detach().cpu()).tolist() == M
    back = host.to(x.device)
    assert back.device == x.device and back.tolist() == M
    y = x.to(ag.float64)
    assert y.dtype is ag.float64 and y.device == x.device and y.grad_fn.name() == "ToCopyBackward0"
    assert x.to(x.device) is x and x.to(ag.float32) is x and x.float() is x
    z = x.clone()
    assert z.grad_fn.name() == "CloneBackward0" and z.tolist() == M
    assert not x.t().is_contiguous() and x.t().contiguous().is_contiguous()
    assert x.t().contiguous().stride() == (2, 1)
    assert len(x) == 2 and [r.tolist() for r in x] == M


def test_numpy_shares_memory_and_refuses_grad() -> None:
    x = ag.zeros(3)
    arr = x.numpy()
    arr[0] = 5.0
    assert x[0].item() == 5.0
    x[1] = 2.0
    assert arr[1] == 2.0
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        ag.ones(2, requires_grad=True).numpy()
    data = ag.ones(2, requires_grad=True).data
    assert not data.requires_grad and data.is_leaf


def test_data_shares_storage() -> None:
    x = ag.ones(3, requires_grad=True)
    d = x.data
    d[0] = 4.0
    assert x[0].item() == 4.0
    x.data = ag.zeros(3)
    assert x.tolist() == [0.0, 0.0, 0.0] and x.requires_grad


def test_item_and_bool_error_types() -> None:
    for snippet in (lambda t: t.ones(2).item(), lambda t: bool(t.ones(2)),
                    lambda t: float(t.ones(2)), lambda t: len(t.tensor(1.0))):
        got = outcome(lambda s=snippet: s(ag))
        want = outcome(lambda s=snippet: s(torch))
        assert got == want and got[0] == "raises"
