"""The ``meta`` device against PyTorch's: tensors with a shape, a dtype and strides but no
storage; factories, ``to("meta")``, ``module.to("meta")``, ``to_empty``, reprs, shape (and
stride) propagation through common ops and ``nn`` layers, the refusals of anything that needs
values, and no memory used."""

from __future__ import annotations

import tracemalloc
from typing import Any

import pytest
import torch

import autograd_gpu as ag
from tests.misuse._catalogue import Case, check_case


def _d(t: Any) -> Any:
    """What a meta tensor has: its repr, shape, dtype, strides and device type."""
    if isinstance(t, (tuple, list)):
        return [_d(x) for x in t]
    return repr(t), tuple(t.shape), repr(t.dtype), t.stride(), t.device.type, t.is_meta


def _m(T: Any, *shape: int, **kw: Any) -> Any:
    return T.randn(*shape, device="meta", **kw)


def _linear(T: Any) -> Any:
    T.manual_seed(0)
    lin = T.nn.Linear(3, 4).to("meta")
    return _d(lin(_m(T, 5, 3))), _d(lin.weight), repr(lin)


def _mlp(T: Any) -> Any:
    net = T.nn.Sequential(T.nn.Linear(3, 8), T.nn.ReLU(), T.nn.Linear(8, 2), T.nn.Softmax(-1))
    net.to("meta")
    return _d(net(_m(T, 4, 3)))


def _to_empty(T: Any) -> Any:
    lin = T.nn.Linear(3, 4, device="meta")
    lin.register_buffer("b", T.zeros(2, device="meta"))
    out = lin.to_empty(device="cpu")
    return (out is lin, lin.weight.device.type, type(lin.weight).__name__,
            lin.weight.requires_grad, tuple(lin.weight.shape), lin.b.device.type)


def _backward(T: Any) -> Any:
    x = T.zeros(2, 3, device="meta", requires_grad=True)
    (x * 2).sum().backward()
    return _d(x.grad)


def _linear_backward(T: Any) -> Any:
    lin = T.nn.Linear(3, 4, device="meta")
    lin(_m(T, 5, 3)).sum().backward()
    return _d(lin.weight.grad), _d(lin.bias.grad)


def _in_device_block(T: Any) -> Any:
    with T.device("meta") as d:
        inner = [repr(d), repr(T.get_default_device())]
        with T.device("cpu"):
            inner.append(T.empty(2).device.type)
        inner += [t.device.type for t in (T.empty(2), T.nn.Linear(2, 2).weight,
                                          T.tensor([1.0]), T.arange(3), T.randn(2))]
    return inner, T.empty(2).device.type, repr(T.get_default_device())


CASES: dict[str, Case] = {
    "device_block": lambda T, dev: _in_device_block(T),
    # factories
    "empty": lambda T, dev: _d(T.empty(2, 3, device="meta")),
    "zeros_int": lambda T, dev: _d(T.zeros(2, 3, device="meta", dtype=T.int64)),
    "zeros_bool": lambda T, dev: _d(T.zeros(2, device="meta", dtype=T.bool)),
    "zeros_complex": lambda T, dev: _d(T.zeros(2, device="meta", dtype=T.complex64)),
    "zeros_requires_grad": lambda T, dev: _d(T.zeros(2, 3, device="meta", requires_grad=True)),
    "zeros_0d": lambda T, dev: _d(T.zeros((), device="meta")),
    "zeros_empty": lambda T, dev: _d(T.zeros(0, device="meta")),
    "ones": lambda T, dev: _d(T.ones(2, device="meta", dtype=T.int32)),
    "randn": lambda T, dev: _d(_m(T, 2, 3)),
    "rand": lambda T, dev: _d(T.rand(3, device="meta")),
    "randint": lambda T, dev: _d(T.randint(0, 10, (2,), device="meta")),
    "randperm": lambda T, dev: _d(T.randperm(4, device="meta")),
    "full": lambda T, dev: _d(T.full((2,), 7, device="meta")),
    "arange": lambda T, dev: _d(T.arange(5, device="meta")),
    "arange_float": lambda T, dev: _d(T.arange(0, 1, 0.3, device="meta")),
    "linspace": lambda T, dev: _d(T.linspace(0, 1, 4, device="meta")),
    "eye": lambda T, dev: _d(T.eye(2, 3, device="meta")),
    "tensor": lambda T, dev: _d(T.tensor([1.0, 2.0], device="meta")),
    "tensor_0d": lambda T, dev: _d(T.tensor(1.5, device="meta")),
    "empty_like": lambda T, dev: _d(T.empty_like(_m(T, 2, 3))),
    "zeros_like_t": lambda T, dev: _d(T.zeros_like(_m(T, 2, 3).t())),
    "new_empty": lambda T, dev: _d(_m(T, 2).new_empty(3)),
    "to_meta": lambda T, dev: _d(T.zeros(2).to("meta")),
    "to_meta_grad": lambda T, dev: _d(T.zeros(2).requires_grad_().to("meta")),
    "to_meta_dtype": lambda T, dev: _d(T.zeros(2).to("meta", T.float64)),
    "str": lambda T, dev: str(T.zeros(2, device="meta")),
    "device": lambda T, dev: repr(T.zeros(2, device="meta").device),
    "type": lambda T, dev: T.zeros(2, device="meta").type(),
    "sizes": lambda T, dev: (lambda m: (m.nbytes, m.element_size(), m.numel(), m.dim(),
                                        m.data_ptr(), m.is_cuda))(_m(T, 2, 3)),
    # ops
    "add_broadcast": lambda T, dev: _d(_m(T, 2, 3) + _m(T, 3)),
    "mul_scalar": lambda T, dev: _d(_m(T, 2, 3) * 2),
    "mul_cpu_scalar_tensor": lambda T, dev: _d(_m(T, 2, 3) * T.tensor(2.0)),
    "grad_fn": lambda T, dev: _d(T.zeros(2, 3, device="meta", requires_grad=True) * 2),
    "unary_chain": lambda T, dev: _d(T.nn.functional.relu(_m(T, 2, 3)).exp().sin()),
    "compare": lambda T, dev: _d(_m(T, 2, 3) > 0),
    "where": lambda T, dev: _d(T.where(_m(T, 2, 3) > 0, _m(T, 2, 3), 0.0)),
    "cast": lambda T, dev: _d(_m(T, 2).float().int()),
    "matmul": lambda T, dev: _d(_m(T, 2, 3) @ _m(T, 3, 4)),
    "matvec": lambda T, dev: _d(_m(T, 2, 3) @ _m(T, 3)),
    "bmm": lambda T, dev: _d(T.bmm(_m(T, 5, 2, 3), _m(T, 5, 3, 4))),
    "einsum": lambda T, dev: _d(T.einsum("ij,jk->ik", _m(T, 2, 3), _m(T, 3, 2))),
    "reshape": lambda T, dev: _d(_m(T, 2, 3).reshape(3, -1)),
    "view": lambda T, dev: _d(_m(T, 2, 3).view(-1)),
    "view_of_transposed": lambda T, dev: _m(T, 2, 3).t().view(-1),
    "reshape_of_transposed": lambda T, dev: _d(_m(T, 2, 3).t().reshape(-1)),
    "transpose": lambda T, dev: _d(_m(T, 2, 3).t()),
    "permute": lambda T, dev: _d(_m(T, 2, 3, 4).permute(2, 0, 1)),
    "expand": lambda T, dev: _d(_m(T, 2, 3).expand(4, 2, 3)),
    "slice": lambda T, dev: _d(_m(T, 2, 3)[:, 1:]),
    "index_basic": lambda T, dev: _d(_m(T, 4, 3)[1:3, None, ::2]),
    "index_tensor": lambda T, dev: _d(_m(T, 4, 3)[T.tensor([1, 0])]),
    "index_meta_tensor": lambda T, dev: _d(_m(T, 4, 3)[T.tensor([1, 0]).to("meta")]),
    "elementwise_keeps_layout": lambda T, dev: _d(_m(T, 2, 3).t() + 1),
    "clone_keeps_layout": lambda T, dev: _d(_m(T, 2, 3).t().clone()),
    "contiguous": lambda T, dev: _d(_m(T, 2, 3).t().contiguous()),
    "sum": lambda T, dev: _d(_m(T, 2, 3).sum(1, keepdim=True)),
    "mean_dtype": lambda T, dev: _d(_m(T, 2, 3).mean(dtype=T.float64)),
    "max": lambda T, dev: _d(_m(T, 2, 3).max()),
    "max_dim": lambda T, dev: _d(tuple(_m(T, 2, 3).max(1))),
    "argmax": lambda T, dev: _d(_m(T, 2, 3).argmax(1)),
    "var": lambda T, dev: _d(_m(T, 2, 3).var(1)),
    "softmax": lambda T, dev: _d(T.softmax(_m(T, 2, 3), 0)),
    "log_softmax": lambda T, dev: _d(T.log_softmax(_m(T, 2, 3), 1)),
    "cat": lambda T, dev: _d(T.cat([_m(T, 2, 3), _m(T, 2, 3)], 1)),
    "stack": lambda T, dev: _d(T.stack([_m(T, 2, 3), _m(T, 2, 3)])),
    "chunk": lambda T, dev: _d(_m(T, 2, 4).chunk(2, 1)),
    "cumsum": lambda T, dev: _d(_m(T, 2, 3).cumsum(1)),
    "sort": lambda T, dev: _d(tuple(_m(T, 5).sort())),
    "topk": lambda T, dev: _d(tuple(_m(T, 5).topk(2))),
    "inplace_add": lambda T, dev: _d(T.zeros(2, device="meta").add_(1)),
    "inplace_uniform": lambda T, dev: _d(T.zeros(2, device="meta").uniform_()),
    "copy_from_cpu": lambda T, dev: _d(T.zeros(2, device="meta").copy_(T.ones(2))),
    "init_kaiming": lambda T, dev: _d(T.nn.init.kaiming_uniform_(T.empty(3, 4, device="meta"))),
    # nn
    "linear": lambda T, dev: _linear(T),
    "linear_device_kw": lambda T, dev: _d(T.nn.Linear(3, 4, device="meta").weight),
    "mlp": lambda T, dev: _mlp(T),
    "conv2d": lambda T, dev: _d(T.nn.Conv2d(3, 4, 3).to("meta")(_m(T, 1, 3, 8, 8))),
    "layer_norm": lambda T, dev: _d(T.nn.LayerNorm(3).to("meta")(_m(T, 5, 3))),
    "attention": lambda T, dev: _d(T.nn.functional.scaled_dot_product_attention(
        _m(T, 1, 2, 3, 4), _m(T, 1, 2, 3, 4), _m(T, 1, 2, 3, 4))),
    "to_empty": lambda T, dev: _to_empty(T),
    "backward": lambda T, dev: _backward(T),
    "linear_backward": lambda T, dev: _linear_backward(T),
    # refusals
    "to_cpu": lambda T, dev: _m(T, 2).to("cpu"),
    "cpu": lambda T, dev: _m(T, 2).cpu(),
    "tolist": lambda T, dev: _m(T, 2).tolist(),
    "numpy": lambda T, dev: _m(T, 2).numpy(),
    "item_many": lambda T, dev: _m(T, 2).item(),
    "item": lambda T, dev: _m(T, 1).item(),
    "bool": lambda T, dev: bool(_m(T, 1)),
    "float": lambda T, dev: float(_m(T, 1)),
    "cpu_copy_from_meta": lambda T, dev: T.ones(2).copy_(_m(T, 2)),
    "mixed_devices": lambda T, dev: _m(T, 2, 3) + T.zeros(3),
    "mixed_devices_cpu_first": lambda T, dev: T.zeros(3) + _m(T, 2, 3),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_pytorch(name: str) -> None:
    check_case(CASES[name], "cpu")


@pytest.mark.parametrize("fn", [
    lambda T: T.equal(_m(T, 2), _m(T, 2)),
    lambda T: _m(T, 5).nonzero(),
    lambda T: _m(T, 2, 3)[_m(T, 2, 3) > 0],
], ids=["equal", "nonzero", "mask_index"])
def test_data_dependent_ops_raise_not_implemented(fn: Any) -> None:
    for T in (torch, ag):
        with pytest.raises(NotImplementedError):
            fn(T)


def test_unsupported_errors_name_the_operation() -> None:
    with pytest.raises(NotImplementedError, match="numpy.nonzero is not supported on the meta"):
        _m(ag, 5).nonzero()
    with pytest.raises(NotImplementedError, match=r"bool\(\)"):
        ag.equal(_m(ag, 2), _m(ag, 2))


def test_meta_tensors_use_no_memory() -> None:
    before = ag.memory_allocated()
    tracemalloc.start()
    try:
        x = ag.empty(10**6, 10**6, device="meta")
        y = (x @ ag.empty(10**6, 10**5, device="meta")).relu() + 1
        lin = ag.nn.Linear(50_000, 50_000, device="meta")
        z = lin(ag.empty(8, 50_000, device="meta"))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert y.shape == (10**6, 10**5) and y.nbytes == 4 * 10**11 and z.shape == (8, 50_000)
    assert ag.memory_allocated() == before and peak < 1 << 20
    assert ag.memory_allocated("meta") == 0 and ag.memory_stats("meta")["num_ooms"] == 0


def test_module_to_meta_then_to_empty_gives_real_storage() -> None:
    net = ag.nn.Sequential(ag.nn.Linear(3, 4), ag.nn.ReLU(), ag.nn.Linear(4, 2))
    opt = ag.optim.SGD(net.parameters(), lr=0.1)
    net.to("meta")
    assert all(p.is_meta for p in net.parameters())
    net.to_empty(device="cpu")
    for p in net.parameters():
        ag.nn.init.normal_(p)
    out = net(ag.ones(5, 3))
    out.sum().backward()
    opt.step()  # NOTE: the parameters are the same objects throughout
    assert out.shape == (5, 2) and not out.is_meta and all(
        p.grad is not None and p.device.type == "cpu" for p in net.parameters())
