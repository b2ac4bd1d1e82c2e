"""dtype objects and type promotion against PyTorch: ``promote_types`` over all pairs,
``result_type`` for tensors of every rank kind and Python scalars, and the dtype that binary
operators actually produce."""

from __future__ import annotations

import itertools
import operator
import pickle
from typing import Any

import pytest
import torch

import autograd_gpu as ag

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
SCALARS = [True, False, 2, -3, 2.5]
OPS = {"+": operator.add, "*": operator.mul, "-": operator.sub, "/": operator.truediv}


def _make(lib: Any, name: str, kind: str, device: str = "cpu") -> Any:
    dt = getattr(lib, name)
    shape = (2,) if kind == "dim" else ()
    return lib.ones(shape, dtype=dt, device=device) if lib is ag else lib.ones(shape, dtype=dt)


def _outcome(fn: Any, *args: Any) -> str:
    """The dtype of ``fn(*args)``, or the exception type and its first sentence."""
    try:
        return str(fn(*args).dtype)
    except Exception as e:  # noqa: BLE001  (comparing failures too)
        return f"{type(e).__name__}: {str(e).split('.')[0]}"


@pytest.mark.parametrize("a,b", list(itertools.product(NAMES, NAMES)))
def test_promote_types_all_pairs(a: str, b: str) -> None:
    want = torch.promote_types(getattr(torch, a), getattr(torch, b))
    assert repr(ag.promote_types(getattr(ag, a), getattr(ag, b))) == str(want)


def test_result_type_tensors_and_scalars(device: str) -> None:
    kinds = ["dim", "zero"]
    for a, b in itertools.product(NAMES, NAMES):
        for ka, kb in itertools.product(kinds, kinds):
            want = torch.result_type(_make(torch, a, ka), _make(torch, b, kb))
            got = ag.result_type(_make(ag, a, ka, device), _make(ag, b, kb, device))
            assert repr(got) == str(want), (a, ka, b, kb)
    for a in NAMES:
        for ka, s in itertools.product(kinds, SCALARS):
            t, o = _make(torch, a, ka), _make(ag, a, ka, device)
            assert repr(ag.result_type(o, s)) == str(torch.result_type(t, s)), (a, ka, s)
            assert repr(ag.result_type(s, o)) == str(torch.result_type(s, t)), (a, ka, s)
    for s1, s2 in itertools.product(SCALARS, SCALARS):
        assert repr(ag.result_type(s1, s2)) == str(torch.result_type(s1, s2))


@pytest.mark.parametrize("op", list(OPS))
def test_binary_op_result_dtype_matches_torch(op: str, device: str) -> None:
    """``a op b`` for every dtype pair and rank kind, and with Python scalars on either side,
    gives torch's dtype (or torch's error, e.g. ``-`` on bool)."""
    fn = OPS[op]
    kinds = ["dim", "zero"]
    for a, b in itertools.product(NAMES, NAMES):
        for ka, kb in itertools.product(kinds, kinds):
            ta, tb = _make(torch, a, ka), _make(torch, b, kb)
            oa, ob = _make(ag, a, ka, device), _make(ag, b, kb, device)
            want = _outcome(fn, ta, tb).replace("torch.", "")
            got = _outcome(fn, oa, ob).replace("torch.", "")
            assert got == want, (a, ka, op, b, kb)
    for a in NAMES:
        for ka, s in itertools.product(kinds, SCALARS):
            ta, oa = _make(torch, a, ka), _make(ag, a, ka, device)
            assert _outcome(fn, oa, s) == _outcome(fn, ta, s), (a, ka, op, s)
            assert _outcome(fn, s, oa) == _outcome(fn, s, ta), (s, op, a, ka)


def test_default_dtype_drives_float_scalars() -> None:
    ag.set_default_dtype(ag.float64)
    torch.set_default_dtype(torch.float64)
    try:
        assert ag.get_default_dtype() is ag.float64
        for a in NAMES:
            o, t = _make(ag, a, "dim"), _make(torch, a, "dim")
            assert repr(ag.result_type(o, 2.5)) == str(torch.result_type(t, 2.5))
            assert repr((o * 2.5).dtype) == str((t * 2.5).dtype)
        assert ag.tensor([1.5]).dtype is ag.float64
        assert ag.zeros(2).dtype is ag.float64
    finally:
        ag.set_default_dtype(ag.float32)
        torch.set_default_dtype(torch.float32)
    assert ag.get_default_dtype() is ag.float32


def test_set_default_dtype_rejects_non_float() -> None:
    with pytest.raises(TypeError, match="only floating-point types are supported"):
        ag.set_default_dtype(ag.int64)
    with pytest.raises(TypeError, match="invalid dtype object"):
        ag.set_default_dtype("float32")  # type: ignore[arg-type]
    assert ag.get_default_dtype() is ag.float32


def test_dtype_attributes_match_torch() -> None:
    for name in NAMES:
        o, t = getattr(ag, name), getattr(torch, name)
        assert repr(o) == str(t)
        assert o.is_floating_point == t.is_floating_point
        assert o.is_signed == t.is_signed
        assert o.itemsize == t.itemsize
        assert o.is_complex == t.is_complex
        assert pickle.loads(pickle.dumps(o)) is o
    assert ag.float is ag.float32 and ag.double is ag.float64 and ag.half is ag.float16
    assert ag.long is ag.int64 and ag.int is ag.int32 and ag.short is ag.int16


def test_can_cast_matches_torch() -> None:
    for a, b in itertools.product(NAMES, NAMES):
        want = torch.can_cast(getattr(torch, a), getattr(torch, b))
        assert ag.can_cast(getattr(ag, a), getattr(ag, b)) == want, (a, b)


def test_promotion_argument_errors() -> None:
    with pytest.raises(TypeError, match="argument 'type2' .* must be torch.dtype, not str"):
        ag.promote_types(ag.float32, "a")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="result_type\\(\\) received an invalid combination"):
        ag.result_type(ag.ones(2), "a")
