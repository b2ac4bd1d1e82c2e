"""``repr``/``str`` of tensors, sizes, dtypes, devices and return types against PyTorch 2.13:
the same values (made through NumPy) must print the same string, character for character."""

from __future__ import annotations

from typing import Any, Iterator

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu import _tensor_str

NAN, INF = float("nan"), float("inf")

SHAPES = [(), (1,), (5,), (7,), (30,), (3, 4), (2, 3, 4), (2, 1, 3, 2), (0,), (0, 3), (2, 0, 4),
          (1001,), (40, 30), (11, 10, 11), (3, 400), (2000,), (2, 2, 2, 2, 2)]
KINDS = ["randn", "ints", "big", "small", "mixed", "f64", "f16", "neg_ints", "i64", "i32", "i16",
         "i8", "u8", "bool"]
HAND_PICKED = [
    [0.0, NAN], [1.5, NAN, INF, -INF], [100.0, -INF], [0.0, 0.0], [-0.0], [-0.0, 1.0], [1e-5, 1.0],
    [1e8, 1.0], [1e9], [123456789.0], [0.1, 1000.0], [0.1, 100.0], [0.5, 500.1], [NAN], [INF],
    [-INF, NAN], [1.0, 2.0, 3e10], [-1.5, 2.25], [1e-4], [9.99999e-5], [1e300, 1e-300], [0.0, 1e-5],
    [1.0, 1000.0], [1.0, 1001.0], [1e8], [1.00001e8], [[1.0, -2.5], [NAN, 1e3]], [3.0820],
    [[1e-10, 0.0], [0.0, 5.0]], [99999.5, 0.5], [-123.456, 7.0], [1e15, -1e15, 3.0],
]


def _array(kind: str, shape: tuple[int, ...], rng: np.random.Generator) -> np.ndarray:
    make = {
        "randn": lambda: rng.standard_normal(shape).astype(np.float32),
        "ints": lambda: rng.integers(-5, 100, shape).astype(np.float32),
        "big": lambda: (rng.standard_normal(shape) * 1e9).astype(np.float32),
        "small": lambda: (rng.standard_normal(shape) * 1e-5).astype(np.float32),
        "mixed": lambda: (rng.standard_normal(shape)
                          * 10.0 ** rng.integers(-6, 6, shape)).astype(np.float32),
        "f64": lambda: rng.standard_normal(shape) * 100,
        "f16": lambda: rng.standard_normal(shape).astype(np.float16),
        "neg_ints": lambda: -rng.integers(0, 3, shape).astype(np.float64),
        "i64": lambda: rng.integers(-1000, 100000, shape),
        "i32": lambda: rng.integers(-10, 10, shape).astype(np.int32),
        "i16": lambda: rng.integers(-300, 300, shape).astype(np.int16),
        "i8": lambda: rng.integers(-128, 127, shape).astype(np.int8),
        "u8": lambda: rng.integers(0, 255, shape).astype(np.uint8),
        "bool": lambda: rng.random(shape) > 0.5,
    }
    return np.asarray(make[kind]())


def _pairs(arr: np.ndarray, device: str) -> tuple[Any, Any]:
    return torch.from_numpy(arr.copy()), ag.tensor(arr, device=device)


def _arrays() -> Iterator[np.ndarray]:
    rng = np.random.default_rng(1234)
    for shape in SHAPES:
        for kind in KINDS:
            yield _array(kind, shape, rng)
    for values in HAND_PICKED:
        for dt in (np.float32, np.float64, np.float16):
            with np.errstate(over="ignore"):
                yield np.array(values, dtype=dt)


def test_repr_matches_torch_for_many_tensors() -> None:
    """Random and hand-picked values: every dtype, rank, empty shapes, nan/inf, scientific and
    integer modes, alignment, wrapping at 80 columns and summarization past 1000 elements."""
    n = 0
    for arr in _arrays():
        theirs, ours = _pairs(arr, "cpu")
        assert repr(ours) == repr(theirs), f"dtype {arr.dtype}, shape {arr.shape}"
        assert str(ours) == str(theirs)
        n += 1
    assert n > 250


def test_repr_with_requires_grad_and_grad_fn_matches_torch() -> None:
    rng = np.random.default_rng(5)
    for shape in [(), (3,), (2, 3), (4, 17), (1500,), (9, 9)]:
        for scale in (1.0, 1e5, 1e-6):
            arr = rng.standard_normal(shape) * scale
            for dt in ("float32", "float64"):
                a = arr.astype(dt)
                t = torch.tensor(a, requires_grad=True)
                o = ag.tensor(a, requires_grad=True)
                assert repr(o) == repr(t)
                assert repr(o * 2) == repr(t * 2)
                assert repr(-o) == repr(-t)
                assert repr(o.reshape(-1)) == repr(t.reshape(-1))
                if o.ndim:
                    assert repr(o[0]) == repr(t[0])


def test_zero_dim_with_grad_fn() -> None:
    x = ag.tensor([3.0820, 1.0], requires_grad=True)
    assert repr(x[0]) == "tensor(3.0820, grad_fn=<SelectBackward0>)"
    assert repr(x.sum()) == "tensor(4.0820, grad_fn=<SumBackward0>)"
    assert repr(ag.tensor(2.5, requires_grad=True)) == "tensor(2.5000, requires_grad=True)"


def test_hand_written_examples() -> None:
    assert repr(ag.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(ag.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(ag.tensor([])) == "tensor([])"
    assert repr(ag.zeros(0, 3)) == "tensor([], size=(0, 3))"
    assert repr(ag.zeros(0, dtype=ag.int64)) == "tensor([], dtype=torch.int64)"
    assert repr(ag.zeros(2, 0, dtype=ag.bool)) == "tensor([], size=(2, 0), dtype=torch.bool)"
    assert repr(ag.tensor([1.5], dtype=ag.float64)) == "tensor([1.5000], dtype=torch.float64)"
    assert repr(ag.tensor([1, 2], dtype=ag.int32)) == "tensor([1, 2], dtype=torch.int32)"
    assert repr(ag.tensor([True, False])) == "tensor([ True, False])"
    assert repr(ag.tensor([1e-5, 1.0])) == "tensor([1.0000e-05, 1.0000e+00])"
    assert repr(ag.tensor([[1.0, -2.0], [30.0, 4.0]])) == \
        "tensor([[ 1., -2.],\n        [30.,  4.]])"


def test_suffixes_wrap_like_torch() -> None:
    # A last line long enough that requires_grad / dtype suffixes move to their own line.
    for n in range(8, 14):
        arr = np.arange(n * 6, dtype=np.float64).reshape(n, 6) * 1.5
        t, o = torch.tensor(arr, requires_grad=True), ag.tensor(arr, requires_grad=True)
        assert repr(o) == repr(t)
        t16, o16 = torch.tensor(arr[:, :5] + 0.25), ag.tensor(arr[:, :5] + 0.25)
        assert repr(o16.half()) == repr(t16.half())


def test_device_suffix_without_gpu() -> None:
    """The CUDA suffix code path, driven with a CPU array standing in for device memory."""

    class OnCuda:
        def __init__(self, t: ag.Tensor) -> None:
            self._t = t
            self._device = ag.device("cuda", 0)

        def __getattr__(self, name: str) -> Any:
            return getattr(self._t, name)

    cases = [
        (ag.tensor([1.0, 2.0]), "tensor([1., 2.], device='cuda:0')"),
        (ag.tensor([1, 2], dtype=ag.int32), "tensor([1, 2], device='cuda:0', dtype=torch.int32)"),
        (ag.zeros(0), "tensor([], device='cuda:0')"),
        (ag.tensor(1.5, requires_grad=True),
         "tensor(1.5000, device='cuda:0', requires_grad=True)"),
        (ag.ones(0, 2, dtype=ag.int64),
         "tensor([], device='cuda:0', size=(0, 2), dtype=torch.int64)"),
    ]
    for t, want in cases:
        assert _tensor_str.tensor_repr(OnCuda(t)) == want


def test_repr_on_device(device: str) -> None:
    rng = np.random.default_rng(3)
    for shape in [(), (4,), (3, 5), (1200,)]:
        arr = rng.standard_normal(shape).astype(np.float32)
        t, o = _pairs(arr, device)
        want = repr(t)
        if device != "cpu":
            want = _tensor_str._add_suffixes(want[:-1], [f"device='{o.device}'"], 7)
        assert repr(o) == want


@pytest.mark.parametrize("options", [
    dict(precision=2), dict(precision=8), dict(threshold=5), dict(edgeitems=1, threshold=10),
    dict(linewidth=40), dict(sci_mode=True), dict(sci_mode=False), dict(profile="short"),
    dict(profile="full"), dict(edgeitems=0, threshold=3),
])
def test_print_options_match_torch(options: dict[str, Any]) -> None:
    rng = np.random.default_rng(11)
    arrays = [rng.standard_normal((5, 7)).astype(np.float32), rng.integers(0, 50, (20,)),
              np.arange(2000, dtype=np.float32), rng.standard_normal((3, 4, 5)) * 1e4,
              np.array([0.001, 12.5]), np.array(3.25)]
    torch.set_printoptions(**options)
    ag.set_printoptions(**options)
    try:
        assert ag.get_printoptions() == torch._tensor_str.get_printoptions()
        for arr in arrays:
            theirs, ours = _pairs(arr, "cpu")
            assert repr(ours) == repr(theirs), options
    finally:
        torch.set_printoptions(profile="default")
        ag.set_printoptions(profile="default")
    assert ag.get_printoptions() == torch._tensor_str.get_printoptions()


def test_default_dtype_changes_the_suffix() -> None:
    ag.set_default_dtype(ag.float64)
    torch.set_default_dtype(torch.float64)
    try:
        for arr in [np.array([1.5, 2.0]), np.array([1.5], dtype=np.float32), np.zeros(0)]:
            assert repr(ag.tensor(arr)) == repr(torch.tensor(arr))
        assert repr(ag.tensor([1.5])) == repr(torch.tensor([1.5]))
    finally:
        ag.set_default_dtype(ag.float32)
        torch.set_default_dtype(torch.float32)


def test_size_dtype_device_reprs() -> None:
    assert repr(ag.ones(2, 3).shape) == repr(torch.ones(2, 3).shape) == "torch.Size([2, 3])"
    assert repr(ag.ones(()).shape) == "torch.Size([])"
    assert str(ag.ones(4).shape) == str(torch.ones(4).shape)
    for name in ["float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8",
                 "bool"]:
        assert repr(getattr(ag, name)) == repr(getattr(torch, name))
        assert str(getattr(ag, name)) == str(getattr(torch, name))
    for spec in ["cpu", "cuda", "cuda:1"]:
        assert repr(ag.device(spec)) == repr(torch.device(spec))
        assert str(ag.device(spec)) == str(torch.device(spec))


def test_return_types_repr_matches_torch() -> None:
    arr = np.array([[1.0, 5.0, 2.0], [3.0, 2.0, 7.5]], dtype=np.float32)
    t, o = torch.tensor(arr, requires_grad=True), ag.tensor(arr, requires_grad=True)
    for dim in (0, 1, -1):
        assert repr(o.max(dim)) == repr(t.max(dim))
        assert repr(o.min(dim, keepdim=True)) == repr(t.min(dim, keepdim=True))
        assert str(ag.max(o, dim)) == str(torch.max(t, dim))
    r = o.max(1)
    values, indices = r
    assert r.values is values and r.indices is indices and r[0] is values
    assert type(r).__name__ == "max" and isinstance(r, tuple) and len(r) == 2
    built = ag.return_types.max((ag.tensor(1.0), ag.tensor(0)))
    assert repr(built) == repr(torch.return_types.max((torch.tensor(1.0), torch.tensor(0))))
    with pytest.raises(TypeError):
        ag.return_types.max((ag.tensor(1.0),))
