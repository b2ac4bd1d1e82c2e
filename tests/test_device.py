"""``device`` objects against PyTorch: parsing, repr/str, equality, errors; and the clear error
for CUDA tensors on a machine without CUDA."""

from __future__ import annotations

import copy
import pickle
from typing import Any

import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.backends import cuda_support

SPECS = ["cpu", "cuda", "cuda:0", "cuda:1", "cuda:12", "cpu:0", "meta", "mps", "xla:1"]
BAD_SPECS = ["gpu", "CUDA", "cuda:x", "cuda:01", "cuda:-1", " cuda", "cuda:", "", ":1", "cuda1",
             "cuda:1:2", "cuda: 1", "cpu:-1", "cuda_x"]


def _outcome(fn: Any, *args: Any) -> str:
    try:
        return repr(fn(*args))
    except Exception as e:  # noqa: BLE001  (comparing failures too)
        return f"{type(e).__name__}: {str(e).splitlines()[0]}"


@pytest.mark.parametrize("spec", SPECS)
def test_device_from_string_matches_torch(spec: str) -> None:
    o, t = ag.device(spec), torch.device(spec)
    assert repr(o) == repr(t)
    assert str(o) == str(t)
    assert (o.type, o.index) == (t.type, t.index)


@pytest.mark.parametrize("spec", BAD_SPECS)
def test_bad_device_strings_raise_torch_error(spec: str) -> None:
    assert _outcome(ag.device, spec) == _outcome(torch.device, spec)


def test_device_with_index_argument() -> None:
    cases = [("cuda", 1), ("cuda", 0), ("cpu", 0), ("cuda", None), ("cuda:1", 1), ("cuda:1", None),
             ("cuda", -1), ("cpu", -1), ("cuda", 1.5), ("cuda", True), ("cuda", "1")]
    for spec, index in cases:
        assert _outcome(ag.device, spec, index) == _outcome(torch.device, spec, index), \
            (spec, index)
    assert repr(ag.device("cuda", index=2)) == repr(torch.device("cuda", index=2))
    assert repr(ag.device(type="cuda")) == repr(torch.device(type="cuda"))
    for bad in (None, 3.5):
        assert _outcome(ag.device, bad) == _outcome(torch.device, bad)


def test_device_equality_and_hash_match_torch() -> None:
    pairs = [("cpu", "cpu"), ("cuda", "cuda"), ("cuda:0", "cuda"), ("cuda:0", "cuda:0"),
             ("cuda:1", "cuda:0"), ("cpu", "cpu:0"), ("cpu", "cuda")]
    for a, b in pairs:
        assert (ag.device(a) == ag.device(b)) == (torch.device(a) == torch.device(b)), (a, b)
        assert (ag.device(a) != ag.device(b)) == (torch.device(a) != torch.device(b)), (a, b)
    # NOTE: PyTorch never equates a device with a string, even its own spelling.
    for spec in ["cpu", "cuda", "cuda:1"]:
        assert (ag.device(spec) == spec) == (torch.device(spec) == spec) is False
        assert (ag.device(spec) != spec) == (torch.device(spec) != spec) is True
        assert (spec == ag.device(spec)) is False
    assert ag.device("cpu") != 3
    assert hash(ag.device("cuda:0")) == hash(ag.device("cuda", 0))
    assert {ag.device("cuda", 0): 1}[ag.device("cuda:0")] == 1
    assert ag.device("cuda", 0) is ag.device("cuda:0")  # interned
    with pytest.raises(AttributeError):
        ag.device("cpu").index = 3  # type: ignore[misc]


def test_device_pickles_and_copies() -> None:
    for spec in ["cpu", "cuda", "cuda:1"]:
        d = ag.device(spec)
        assert pickle.loads(pickle.dumps(d)) is d
        assert copy.deepcopy(d) is d
        assert ag.device(d) is d


def test_tensor_device_is_normalised(device: str) -> None:
    t = ag.zeros(2, device=device)
    assert t.device.type == device
    assert ag.zeros(2, device=t.device).device == t.device
    if device == "cpu":
        for spec in ["cpu", "cpu:0", ("cpu", 0), None]:
            ours = ag.device(*spec) if isinstance(spec, tuple) else spec
            theirs = torch.device(*spec) if isinstance(spec, tuple) else spec
            assert repr(ag.zeros(2, device=ours).device) == \
                repr(torch.zeros(2, device=theirs).device)
        assert t.is_cpu and not t.is_cuda and t.get_device() == -1
    else:
        assert t.device.index is not None and t.is_cuda and t.get_device() == t.device.index


def test_unknown_device_types_are_refused_for_tensors() -> None:
    with pytest.raises(RuntimeError, match="Expected one of cpu, cuda"):
        ag.zeros(2, device="gpu")
    with pytest.raises(RuntimeError, match="'cpu', 'cuda' or 'meta'"):
        ag.zeros(2, device="mps")


@pytest.mark.skipif(cuda_support.is_available(), reason="checks the message shown without CUDA")
def test_cuda_unavailable_error_says_how_to_install() -> None:
    attempts = [lambda: ag.zeros(2, device="cuda"), lambda: ag.ones(2).cuda(),
                lambda: ag.ones(2).to("cuda:1"), lambda: ag.tensor([1.0], device="cuda"),
                lambda: ag.Generator("cuda")]
    # NOTE: without CuPy PyTorch's (a CPU build's) AssertionError, else its RuntimeError.
    error = AssertionError if cuda_support._cupy() is None else RuntimeError
    for attempt in attempts:
        with pytest.raises(error) as info:
            attempt()
        msg = str(info.value)
        if cuda_support._cupy() is None:  # the message says how to get CUDA
            assert "cuda12" in msg and "cuda13" in msg and "pip install" in msg
        else:  # CuPy is here: no GPU, or this build's CUDA backend is missing
            assert "NVIDIA driver" in msg or "device='cpu'" in msg
    with pytest.raises(RuntimeError, match="Cannot access accelerator device when none is available"):
        ag.device(1)
    assert not ag.cuda.is_available()
