"""``utils.safetensors`` against ``safetensors.torch`` (the oracle): files written by one are read
by the other with every value, dtype and shape; the same checks and errors; metadata; hostile
files refused by the library before any data is allocated; atomic writes; a state_dict round
trip into a module."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import autograd_gpu as ag
from autograd_gpu.utils import safetensors as ours

st = pytest.importorskip("safetensors.torch")
torch = pytest.importorskip("torch")

DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def _values(dtype: str) -> np.ndarray:
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4)) * 50
    return (a > 0) if dtype == "bool" else a.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_ours_to_torch_and_back_every_dtype(dtype: str, tmp_path: Path, device: str) -> None:
    a = _values(dtype)
    tensors = {"w": ag.tensor(a, device=device), "empty": ag.zeros(0, 2, device=device),
               "scalar": ag.tensor(a.reshape(-1)[0], device=device)}
    path = tmp_path / "ours.safetensors"
    ours.save_file(tensors, path, metadata={"format": "pt"})
    theirs = st.load_file(str(path))
    for k, t in tensors.items():
        ref = t.cpu().numpy()
        got = theirs[k].numpy()
        assert got.dtype == ref.dtype and got.shape == ref.shape and got.tobytes() == ref.tobytes()
    st.save_file({k: v.contiguous() for k, v in theirs.items()}, str(tmp_path / "torch.st"))
    back = ours.load_file(tmp_path / "torch.st", device=device)
    for k, t in tensors.items():
        assert back[k].device.type == device and back[k].dtype == t.dtype
        assert back[k].cpu().numpy().tobytes() == t.cpu().numpy().tobytes()


def test_bytes_and_metadata(tmp_path: Path) -> None:
    x = ag.arange(6.0).reshape(2, 3)
    data = ours.save({"x": x}, metadata={"k": "v"})
    assert data == st.save({"x": torch.arange(6.0).reshape(2, 3)}, metadata={"k": "v"})
    assert ours.load(data)["x"].numpy().tobytes() == x.numpy().tobytes()
    ours.save_file({"x": x}, tmp_path / "m.safetensors", metadata={"k": "v"})
    from safetensors import safe_open

    with safe_open(str(tmp_path / "m.safetensors"), "np") as f:
        assert f.metadata() == {"k": "v"} and list(f.keys()) == ["x"]
    assert ours.load_file(tmp_path / "m.safetensors")["x"].numpy().flags.writeable


def _outcome(fn: Any) -> tuple[str, str]:
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return type(e).__name__, str(e).strip().splitlines()[0]
    return "ok", ""


CASES = {
    "non_contiguous": lambda T: {"x": T.arange(6.0).reshape(2, 3).t()},
    "shared": lambda T: (lambda x: {"a": x, "b": x})(T.arange(6.0)),
    "shared_view": lambda T: (lambda x: {"a": x, "b": x[2:]})(T.arange(6.0)),
    "not_a_dict": lambda T: [T.arange(3.0)],
    "not_a_tensor": lambda T: {"a": 1},
    "key_not_str": lambda T: {1: T.arange(3.0)},
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_errors_as_safetensors_torch(case: str, tmp_path: Path) -> None:
    make = CASES[case]
    theirs = _outcome(lambda: st.save_file(make(torch), str(tmp_path / "t")))
    mine = _outcome(lambda: ours.save_file(make(ag), tmp_path / "o"))
    assert mine == theirs
    assert not (tmp_path / "o").exists()
    bad_meta = _outcome(lambda: st.save_file({"x": torch.ones(1)}, str(tmp_path / "t"),
                                             metadata={"k": 1}))  # type: ignore[dict-item]
    assert _outcome(lambda: ours.save_file({"x": ag.ones(1)}, tmp_path / "o",
                                           metadata={"k": 1})) == bad_meta  # type: ignore


def _file(tmp_path: Path) -> bytes:
    ours.save_file({"x": ag.arange(8.0)}, tmp_path / "good")
    return (tmp_path / "good").read_bytes()


def _header(edit: Any) -> Any:
    """A file with its JSON header edited (the length prefix kept right)."""
    def make(b: bytes) -> bytes:
        n = int.from_bytes(b[:8], "little")
        head = edit(b[8:8 + n].decode().rstrip())
        return len(head).to_bytes(8, "little") + head.encode() + b[8 + n:]

    return make


HOSTILE = {
    "truncated_header": lambda b: b[:20],
    "truncated_data": lambda b: b[:-8],
    "huge_header_length": lambda b: (2**40).to_bytes(8, "little") + b[8:],
    "huge_shape": _header(lambda h: h.replace('"shape":[8]', '"shape":[9999999999999]')),
    "offsets_past_the_end": _header(lambda h: h.replace("[0,32]", "[0,320000]")),
    "offsets_not_matching_the_shape": _header(lambda h: h.replace("[0,32]", "[0,16]")),
    "unknown_dtype": _header(lambda h: h.replace('"F32"', '"X99"')),
    "empty": lambda b: b"",
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_files_are_refused_as_the_library_refuses_them(case: str,
                                                               tmp_path: Path) -> None:
    data = HOSTILE[case](_file(tmp_path))
    path = tmp_path / "bad"
    path.write_bytes(data)
    theirs = _outcome(lambda: st.load_file(str(path)))
    assert theirs[0] != "ok"
    assert _outcome(lambda: ours.load_file(path)) == theirs


def test_a_state_dict_round_trip_into_a_module(tmp_path: Path) -> None:
    ag.manual_seed(0)
    model = ag.nn.Sequential(ag.nn.Linear(4, 8), ag.nn.BatchNorm1d(8), ag.nn.Linear(8, 2))
    ours.save_file(model.state_dict(), tmp_path / "m.safetensors")
    fresh = ag.nn.Sequential(ag.nn.Linear(4, 8), ag.nn.BatchNorm1d(8), ag.nn.Linear(8, 2))
    fresh.load_state_dict(ours.load_file(tmp_path / "m.safetensors"))
    for (k, a), (_, b) in zip(model.state_dict().items(), fresh.state_dict().items()):
        assert a.numpy().tobytes() == b.numpy().tobytes(), k
    net = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.BatchNorm1d(8),
                              torch.nn.Linear(8, 2))
    net.load_state_dict(st.load_file(str(tmp_path / "m.safetensors")))
    x = np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32)
    model.eval()
    net.eval()
    np.testing.assert_allclose(model(ag.tensor(x)).detach().numpy(),
                               net(torch.tensor(x)).detach().numpy(), rtol=1e-6, atol=1e-6)


def test_a_failed_write_leaves_the_old_file(tmp_path: Path) -> None:
    path = tmp_path / "f.safetensors"
    ours.save_file({"x": ag.ones(2)}, path)
    before = path.read_bytes()
    with pytest.raises(ValueError):
        ours.save_file({"x": ag.ones(4, 4).t()}, path)
    assert path.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["f.safetensors"]
    assert os.path.getsize(path) == len(before)
