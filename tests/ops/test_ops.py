"""Forward values of every op in the table against NumPy, and result dtypes against PyTorch's
type promotion."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.ops.op_db import OpInfo, cases, sample_arrays


def _as_list(out: Any) -> list[Any]:
    return list(out) if isinstance(out, (tuple, list)) else [out]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op,shapes", cases(lambda op: op.ref is not None))
def test_forward_matches_numpy(op: OpInfo, shapes: Any, dtype: str, device: str) -> None:
    arrays = [a.astype(dtype) for a in sample_arrays(op, shapes)]
    xs = [ag.tensor(a, device=device) for a in arrays]
    got = _as_list(op.ours(*xs))
    with np.errstate(all="ignore"):
        want = [np.asarray(w) for w in _as_list(op.ref(*arrays))]
    assert len(got) == len(want)
    rtol, atol = (op.rtol, op.atol) if dtype == "float32" else (1e-10, 1e-12)
    for g, w in zip(got, want):
        assert isinstance(g, ag.Tensor)
        assert g.device == xs[0].device and g.device.type == device
        assert tuple(g.shape) == w.shape
        if w.dtype.kind == "f":
            assert g.dtype.name == dtype
        else:
            assert g.dtype.name == ("bool" if w.dtype.kind == "b" else "int64")
        np.testing.assert_allclose(np.asarray(g.cpu()), w.astype(g.dtype.name), rtol=rtol,
                                   atol=atol)


# ---- type promotion against torch ------------------------------------------------------------

_DTYPES = ["bool", "uint8", "int32", "int64", "float32", "float64"]
_VALUES = {"bool": [True, True, True], "uint8": [1, 2, 3], "int32": [1, 2, 3], "int64": [3, 1, 2],
           "float32": [0.5, 1.5, 2.0], "float64": [1.25, 0.75, 2.0]}
# (kind, dtype or value): a 1-D tensor, a 0-d tensor, or a Python scalar
_OPERANDS = ([("t", d) for d in _DTYPES] + [("0d", d) for d in _DTYPES]
             + [("s", True), ("s", 2), ("s", 2.5)])
_BINARY = {
    "add": lambda m, a, b: m.add(a, b), "sub": lambda m, a, b: m.sub(a, b),
    "mul": lambda m, a, b: m.mul(a, b), "div": lambda m, a, b: m.div(a, b),
    "pow": lambda m, a, b: m.pow(a, b), "maximum": lambda m, a, b: m.maximum(a, b),
    "lt": lambda m, a, b: m.lt(a, b), "eq": lambda m, a, b: m.eq(a, b),
    "where": lambda m, a, b: m.where(m.tensor([True, False, True]), a, b),
}


def _operand(m: Any, spec: tuple[str, Any]) -> Any:
    kind, what = spec
    if kind == "s":
        return what
    vals = _VALUES[what] if kind == "t" else _VALUES[what][0]
    return m.tensor(vals, dtype=getattr(m, what))


def _same_error(got: Any, want: Exception) -> None:
    assert isinstance(got, Exception), f"torch raised {want!r}, we returned {got!r}"
    assert type(got) is type(want)
    assert str(got).split(". ")[0] == str(want).split(". ")[0]


def _run(m: Any, name: str, a: Any, b: Any) -> Any:
    try:
        return _BINARY[name](m, _operand(m, a), _operand(m, b))
    except Exception as e:  # noqa: BLE001 - the error type itself is compared
        return e


def _pairs() -> list[Any]:
    out = []
    for name, a, b in itertools.product(_BINARY, _OPERANDS, _OPERANDS):
        if a[0] == "s" and (b[0] == "s" or name in ("maximum", "lt", "eq", "pow")):
            continue  # torch.<op>(scalar, ...) wants a tensor first for these
        out.append(pytest.param(name, a, b, id=f"{name}-{a[0]}{a[1]}-{b[0]}{b[1]}"))
    return out


@pytest.mark.parametrize("name,a,b", _pairs())
def test_binary_result_dtype_matches_torch(name: str, a: Any, b: Any) -> None:
    want = _run(torch, name, a, b)
    got = _run(ag, name, a, b)
    if isinstance(want, Exception):
        _same_error(got, want)
        return
    assert not isinstance(got, Exception), f"torch gave {want.dtype}, we raised {got!r}"
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(np.asarray(got).astype(np.float64),
                               want.numpy().astype(np.float64), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int32", "int64"])
@pytest.mark.parametrize("fn", ["exp", "log", "sqrt", "sin", "sigmoid", "tanh", "rsqrt", "mean",
                                "sum", "softmax", "log_softmax", "neg", "abs", "relu", "square",
                                "reciprocal", "prod", "amax", "max", "argmax", "var", "std",
                                "norm", "logsumexp", "expm1", "log1p", "cos"])
def test_unary_result_dtype_on_integers(fn: str, dtype: str) -> None:
    def run(m: Any) -> Any:
        x = m.tensor(_VALUES[dtype], dtype=getattr(m, dtype))
        f = getattr(m, fn)
        try:
            return f(x, 0) if fn in ("softmax", "log_softmax", "logsumexp") else f(x)
        except Exception as e:  # noqa: BLE001
            return e

    want, got = run(torch), run(ag)
    if isinstance(want, Exception):
        _same_error(got, want)
        return
    assert not isinstance(got, Exception), f"torch gave {want.dtype}, we raised {got!r}"
    assert got.dtype.name == str(want.dtype).replace("torch.", "")
    np.testing.assert_allclose(np.asarray(got).astype(np.float64),
                               want.numpy().astype(np.float64), rtol=1e-6)


def test_promotion_examples(device: str) -> None:
    i = ag.tensor([1, 2, 3], device=device)
    assert (i / 2).dtype is ag.float32
    assert (i + 2.5).dtype is ag.float32
    assert (i * 2).dtype is ag.int64
    f32 = ag.tensor([1.0, 2.0], device=device)
    assert (f32 + ag.tensor(1.0, dtype=ag.float64, device=device)).dtype is ag.float32
    assert (ag.tensor(1.0, device=device)
            + ag.tensor([1.0], dtype=ag.float64, device=device)).dtype is ag.float64
    assert (ag.tensor(1, dtype=ag.int64, device=device)
            + ag.tensor([1], dtype=ag.uint8, device=device)).dtype is ag.uint8
    assert (f32 + ag.tensor(1, device=device)).dtype is ag.float32


# ---- index errors: PyTorch's types and first sentences ---------------------------------------

@pytest.mark.parametrize("key", [
    pytest.param(lambda m: (slice(None, None, -1),), id="negative-step"),
    pytest.param(lambda m: (5,), id="int-out-of-range"),
    pytest.param(lambda m: (0, 0, 0), id="too-many"),
    pytest.param(lambda m: (m.tensor([0, 7]),), id="tensor-out-of-range"),
    pytest.param(lambda m: (m.tensor([-4]),), id="tensor-negative-out-of-range"),
    pytest.param(lambda m: (slice(None), m.tensor([[1], [4]])), id="tensor-out-of-range-dim1"),
    pytest.param(lambda m: (Ellipsis, [0, 4]), id="list-out-of-range-after-ellipsis"),
    pytest.param(lambda m: (m.tensor([0.0]),), id="float-index"),
    pytest.param(lambda m: (m.tensor([True, False]),), id="mask-wrong-length"),
])
@pytest.mark.parametrize("write", [False, True], ids=["get", "set"])
def test_index_errors_match_torch(key: Any, write: bool, device: str) -> None:
    # NOTE: on CUDA an out-of-range index array must raise too (CuPy wraps it around silently).
    def access(x: Any, k: Any) -> None:
        if write:
            x[k] = 1.0
        else:
            x[k]  # noqa: B018

    x_t = torch.zeros(3, 4)
    x_a = ag.zeros(3, 4, device=device)
    with pytest.raises(Exception) as want:
        access(x_t, key(torch))
    with pytest.raises(Exception) as got:
        access(x_a, key(ag))
    _same_error(got.value, want.value)
    assert not x_a.cpu().numpy().any()  # a refused write leaves the tensor as it was


# ---- poles and overflow: inf / nan without warnings, as in PyTorch ---------------------------

@pytest.mark.parametrize("fn", [
    pytest.param(lambda m, x: x.log(), id="log"),
    pytest.param(lambda m, x: x.log1p(), id="log1p"),
    pytest.param(lambda m, x: x.sqrt(), id="sqrt"),
    pytest.param(lambda m, x: x.rsqrt(), id="rsqrt"),
    pytest.param(lambda m, x: x.reciprocal(), id="reciprocal"),
    pytest.param(lambda m, x: 1 / x, id="rdiv"),
    pytest.param(lambda m, x: x / x, id="div"),
    pytest.param(lambda m, x: x ** -1.0, id="pow"),
    pytest.param(lambda m, x: 0.0 ** x, id="rpow"),
    pytest.param(lambda m, x: (x * 400).exp(), id="exp"),
    pytest.param(lambda m, x: (x * 400).expm1(), id="expm1"),
])
def test_poles_are_silent_and_match_torch(fn: Any, device: str) -> None:
    vals = [0.0, -1.0, 1.0, -0.0, 2.0]
    x_a = ag.tensor(vals, device=device, requires_grad=True)
    x_t = torch.tensor(vals, requires_grad=True)
    out_a, out_t = fn(ag, x_a), fn(torch, x_t)  # pytest turns any warning into an error
    np.testing.assert_allclose(np.asarray(out_a.detach().cpu()), out_t.detach().numpy(), rtol=1e-6,
                               equal_nan=True)
    out_a.backward(ag.ones_like(out_a))
    out_t.backward(torch.ones_like(out_t))
    np.testing.assert_allclose(np.asarray(x_a.grad.cpu()), x_t.grad.numpy(), rtol=1e-6, equal_nan=True)


def test_pow_at_zero_base_matches_torch(device: str) -> None:
    def run(m: Any) -> list[np.ndarray]:
        b = m.tensor([0.0, 0.0, 0.0, 2.0, 0.0], requires_grad=True)
        e = m.tensor([1.0, 0.0, -1.0, 0.5, 2.0], requires_grad=True)
        x = m.tensor([0.0, -1.0, 1.0, 2.0, 0.0], requires_grad=True)
        out = b ** e + 0.0 ** x + x ** 0
        out.backward(m.ones_like(out))
        return [np.asarray(t.detach().cpu()) for t in (out, b.grad, e.grad, x.grad)]

    for got, want in zip(run(ag), run(torch)):
        np.testing.assert_allclose(got, want, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", ["var", "std"])
def test_no_degrees_of_freedom_warns_and_gives_nan(name: str, device: str) -> None:
    def run(m: Any, **kw: Any) -> list[np.ndarray]:
        x = m.ones(1, 3, requires_grad=True, **kw)
        with pytest.warns(UserWarning, match=rf"^{name}\(\): degrees of freedom is <= 0"):
            out = getattr(x, name)(0)
        out.backward(m.ones_like(out))
        return [np.asarray(out.detach().cpu()), np.asarray(x.grad.cpu())]

    for got, want in zip(run(ag, device=device), run(torch)):
        np.testing.assert_array_equal(got, want)
