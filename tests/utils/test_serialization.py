"""save/load: round trips (dtype, values, structure, shared tensors), map_location, atomic
writes, and refusal of corrupt, truncated, foreign and malicious files (without running anything
in them). Hostile files built to exhaust memory are in test_serialization_hostile.py."""

from __future__ import annotations

import collections
import io
import json
import math
import os
import pathlib
import pickle
import stat
import zipfile
from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.utils import serialization
from autograd_gpu.utils.serialization import SerializationError

ALL_DTYPES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8", "bool"]


def exact(value: Any) -> Any:
    """A comparable form that keeps every distinction save/load promises to keep: exact
    container and scalar types, int-vs-bool, dict key types and order, nan, tensor dtypes."""
    if isinstance(value, (torch.Tensor, ag.Tensor)):
        arr = value.detach().cpu().numpy()
        return ("tensor", str(value.dtype), tuple(value.shape), bool(value.requires_grad),
                str(value.device), np.where(np.isnan(arr), -12345, arr).tolist()
                if arr.dtype.kind == "f" else arr.tolist())
    if isinstance(value, dict):
        return (type(value).__name__, [(exact(k), exact(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)):
        return (type(value).__name__, [exact(v) for v in value])
    if isinstance(value, float) and math.isnan(value):
        return ("float", "nan")
    if isinstance(value, (torch.dtype, ag.dtype, torch.device, ag.device)):
        return repr(value)
    return (type(value).__name__, value)


def round_trip(obj: Any, **load_kw: Any) -> Any:
    buf = io.BytesIO()
    ag.save(obj, buf)
    buf.seek(0)
    return ag.load(buf, **load_kw)


# ---- round trips ----------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("shape", [(), (0, 3), (4,), (2, 3, 2)])
def test_tensor_round_trip_keeps_dtype_shape_values(device: str, dtype: str,
                                                    shape: tuple[int, ...]) -> None:
    data = (np.arange(int(np.prod(shape))) * 7 % 5 - 1).reshape(shape).astype(dtype)
    t = ag.tensor(data, device=device)
    out = round_trip(t)
    assert exact(out) == exact(t)
    assert out.device == t.device and out.is_leaf


def test_special_floats_views_and_requires_grad(device: str) -> None:
    base = ag.tensor([[1.0, math.inf], [-math.inf, math.nan], [0.5, -0.0]], device=device)
    view = base.t()[:, 1:]
    w = ag.ones(3, requires_grad=True, device=device)
    nonleaf = w * 2
    out = round_trip({"view": view, "w": w, "nonleaf": nonleaf})
    assert exact(out) == exact({"view": view, "w": w, "nonleaf": nonleaf})
    assert out["w"].is_leaf and out["nonleaf"].is_leaf and out["nonleaf"].grad_fn is None
    assert out["view"].is_contiguous()
    assert math.copysign(1.0, float(out["view"][1, 1])) == -1.0


def test_nested_python_structure_survives_exactly() -> None:
    obj = {
        "ints": [0, -3, 2**80, True, False],
        "floats": (1.0, -2.5, math.inf, -math.inf, math.nan, 1e-310, 0.1),
        7: None,
        (1, "a"): "tuple key",
        2.5: b"\x00\xffbytes",
        "nested": [[], (), {}, ((1,),), [[2.0]], {"x": (ag.ones(1), [ag.zeros(2, 2)])}],
        "ordered": collections.OrderedDict([("b", 1), ("a", 2)]),
        "types": [ag.float16, ag.int64, ag.bool, ag.device("cpu")],
        "text": "ünïcödé \"quoted\" \n",
    }
    assert exact(round_trip(obj)) == exact(obj)


def test_optimizer_and_model_state_dicts_match_torch_round_trip() -> None:
    model = torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.BatchNorm1d(2))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3, betas=(0.9, 0.99), amsgrad=True)
    model(torch.randn(4, 3)).sum().backward()
    opt.step()
    checkpoint = {"model": model.state_dict(), "optim": opt.state_dict(), "epoch": 3}

    def to_ag(x: Any) -> Any:
        if isinstance(x, torch.Tensor):
            return ag.tensor(x.detach().numpy())
        if isinstance(x, dict):
            return type(x)((k, to_ag(v)) for k, v in x.items())
        if isinstance(x, (list, tuple)):
            return type(x)(to_ag(v) for v in x)
        return x

    buf = io.BytesIO()
    torch.save(checkpoint, buf)
    buf.seek(0)
    want = torch.load(buf)
    got = round_trip(to_ag(checkpoint))
    assert exact(got) == exact(want)
    assert isinstance(got["optim"]["state"][0], dict) and 0 in got["optim"]["state"]
    assert got["optim"]["param_groups"][0]["betas"] == (0.9, 0.99)
    assert got["optim"]["param_groups"][0]["amsgrad"] is True


def members(content: bytes) -> dict[str, int]:
    with zipfile.ZipFile(io.BytesIO(content)) as zf:
        return {i.filename: i.file_size for i in zf.infolist()}


def round_trip_bytes(obj: Any) -> bytes:
    buf = io.BytesIO()
    ag.save(obj, buf)
    return buf.getvalue()


def test_shared_tensors_are_stored_once_and_load_shared(device: str) -> None:
    """As torch.save/torch.load: a tensor reached twice loads as one tensor; tensors sharing all
    their data (detach(), a Parameter and its state_dict entry) load sharing one storage."""
    a = ag.arange(1000, dtype=ag.float32, device=device)
    p = ag.nn.Parameter(ag.ones(500, device=device))
    obj = {"a": a, "again": [a, (a,)], "p": p, "p_data": p.detach(), "a_data": a.data}
    assert sorted(members(round_trip_bytes(obj))) == ["__autograd_gpu__.npy", "t0.npy", "t1.npy"]
    out = round_trip(obj)
    assert exact(out) == exact(obj)
    assert out["again"][0] is out["a"] and out["again"][1][0] is out["a"]
    # identical flags: the same tensor; other flags: a tensor sharing the storage
    assert out["a_data"] is out["a"]
    assert isinstance(out["p"], ag.nn.Parameter) and out["p"].requires_grad
    assert not out["p_data"].requires_grad and out["p_data"].data_ptr() == out["p"].data_ptr()
    out["p_data"].mul_(3)
    assert out["p"].tolist() == [3.0] * 500 and out["p"]._version == 1


def test_views_are_stored_by_value_and_load_independent() -> None:
    base = ag.arange(1000, dtype=ag.float64)
    view = base[10:20]
    content = io.BytesIO()
    ag.save([base, view, base.reshape(10, 100)[:, 0]], content)
    sizes = members(content.getvalue())
    assert sizes["t1.npy"] < 300 and sizes["t2.npy"] < 300  # only the elements each view shows
    content.seek(0)
    out = ag.load(content)
    assert out[1].tolist() == view.tolist() and out[2].tolist() == list(range(0, 1000, 100))
    out[0].add_(1)
    assert out[1].tolist() == view.tolist()


def test_tied_weights_in_a_state_dict_are_stored_once() -> None:
    enc, dec = ag.nn.Linear(64, 32), ag.nn.Linear(64, 32)
    dec.weight = enc.weight
    state = ag.nn.Sequential(enc, dec).state_dict()
    untied = ag.nn.Sequential(ag.nn.Linear(64, 32), ag.nn.Linear(64, 32)).state_dict()
    tied_size, untied_size = len(round_trip_bytes(state)), len(round_trip_bytes(untied))
    assert untied_size - tied_size > 64 * 32 * 4 * 0.9
    out = round_trip(state)
    assert out["0.weight"].data_ptr() == out["1.weight"].data_ptr()
    assert exact(out) == exact(state)


def test_map_location_sees_each_stored_array_once() -> None:
    a = ag.ones(3)
    calls: list[str] = []
    out = round_trip([a, a, a.detach(), ag.zeros(2)],
                     map_location=lambda storage, loc: calls.append(loc))
    assert calls == ["cpu", "cpu"] and out[0] is out[1]


def test_non_seekable_streams_round_trip() -> None:
    """Zip members written to a stream carry data descriptors; load accepts them."""

    class Stream:
        def __init__(self) -> None:
            self.data = bytearray()

        def write(self, b: bytes) -> int:
            self.data += b
            return len(b)

        def flush(self) -> None:
            pass

    obj = {"w": ag.arange(300, dtype=ag.float32), "n": [1, 2]}
    out, back = Stream(), io.BytesIO()
    ag.save(obj, out)
    ag.save(obj, back)
    assert bytes(out.data) != back.getvalue()
    assert exact(ag.load(io.BytesIO(bytes(out.data)))) == exact(obj)

    class Reader:
        def __init__(self, data: bytes) -> None:
            self.buf = io.BytesIO(data)

        def read(self, n: int = -1) -> bytes:
            return self.buf.read(n)

    assert exact(ag.load(Reader(bytes(out.data)))) == exact(obj)


def test_files_of_the_np_savez_writer_still_load() -> None:
    """Checkpoints written before save had its own writer (np.savez, the same layout)."""
    arr = np.arange(6, dtype=np.int16).reshape(2, 3)
    out = ag.load(_archive(_tensor_header(dtype="int16", shape=[2, 3]), t0=arr))
    assert out.tolist() == arr.tolist() and out.dtype == ag.int16


def test_paths_str_and_pathlike_without_added_suffix(tmp_path: pathlib.Path) -> None:
    obj = {"w": ag.arange(6, dtype=ag.float64).reshape(2, 3)}
    ag.save(obj, str(tmp_path / "a.pt"))
    ag.save(obj, tmp_path / "b")
    assert sorted(os.listdir(tmp_path)) == ["a.pt", "b"]
    assert exact(ag.load(tmp_path / "a.pt")) == exact(obj)
    assert exact(ag.load(str(tmp_path / "b"))) == exact(obj)
    with open(tmp_path / "a.pt", "rb") as fh:
        assert exact(ag.load(fh)) == exact(obj)
    with pytest.raises(FileNotFoundError):
        ag.load(tmp_path / "missing.pt")


def test_new_file_permissions_follow_umask(tmp_path: pathlib.Path) -> None:
    ag.save(1, tmp_path / "ckpt")
    (tmp_path / "plain").write_bytes(b"")
    assert (tmp_path / "ckpt").stat().st_mode == (tmp_path / "plain").stat().st_mode


def test_unsupported_and_cyclic_objects_are_refused_before_writing(tmp_path: pathlib.Path) -> None:
    # NOTE: sets are in the safe set now; what cannot be pickled (a lambda) is refused, as by
    # torch.save, before the file is touched.
    with pytest.raises((pickle.PicklingError, AttributeError), match="Can.t pickle"):
        ag.save({"f": lambda x: x}, tmp_path / "x")
    cyclic: list[Any] = [1]
    cyclic.append(cyclic)
    with pytest.raises(ValueError, match="cyclic"):
        ag.save(cyclic, tmp_path / "y")
    assert os.listdir(tmp_path) == []


# ---- map_location ---------------------------------------------------------------------------

def test_map_location_forms_on_cpu() -> None:
    t = ag.tensor([1.0, 2.0])
    seen: list[Any] = []

    def hook(storage: Any, location: str) -> Any:
        seen.append((type(storage).__name__, location))
        return None if len(seen) == 1 else storage * 10

    for ml in ["cpu", ag.device("cpu"), {"cpu": "cpu"}, {"cuda:3": "cpu"}]:
        assert exact(round_trip(t, map_location=ml)) == exact(t)
    assert exact(round_trip(t, map_location=hook)) == exact(t)
    assert round_trip(t, map_location=hook).tolist() == [10.0, 20.0]
    assert seen == [("Tensor", "cpu"), ("Tensor", "cpu")]
    with pytest.raises(TypeError, match="map_location"):
        round_trip(t, map_location=3)


def _archive(header: Any, raw: bytes | None = None, **arrays: Any) -> io.BytesIO:
    """An .npz with ``header`` as our structure header (JSON-encoded unless ``raw``)."""
    text = raw if raw is not None else json.dumps(header).encode()
    buf = io.BytesIO()
    np.savez(buf, __autograd_gpu__=np.frombuffer(text, dtype=np.uint8), **arrays)
    buf.seek(0)
    return buf


def _tensor_header(device: str = "cpu", **over: Any) -> dict[str, Any]:
    node = {"$": "tensor", "key": "t0", "dtype": "float32", "shape": [2], "device": device,
            "requires_grad": False, "parameter": False, **over}
    return {"format": "autograd_gpu.save", "version": 1, "root": node}


def test_cuda_tensors_need_cuda_or_a_map_location() -> None:
    arr = np.array([1.0, 2.0], dtype=np.float32)
    for ml in [None, "cuda", {"cuda:0": "cuda:1"}]:
        if ag.cuda.is_available():
            assert round_trip(ag.ones(1), map_location="cuda").device.type == "cuda"
            break
        with pytest.raises(RuntimeError, match=r"^Attempting to deserialize object on a CUDA "
                           r"device but torch.cuda.is_available\(\) is False"):
            ag.load(_archive(_tensor_header("cuda:0"), t0=arr), map_location=ml)
    for ml in ["cpu", {"cuda:0": "cpu"}, lambda s, loc: s]:
        out = ag.load(_archive(_tensor_header("cuda:0"), t0=arr), map_location=ml)
        assert out.device == ag.device("cpu") and out.tolist() == [1.0, 2.0]


# ---- atomic writes --------------------------------------------------------------------------

def _old_file(tmp_path: pathlib.Path) -> pathlib.Path:
    path = tmp_path / "ckpt.pt"
    ag.save({"version": "old", "w": ag.zeros(3)}, path)
    return path


def test_failure_mid_write_keeps_the_old_file(tmp_path: pathlib.Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    path = _old_file(tmp_path)
    real = serialization._write_archive

    def write_half_then_crash(fh: Any, arrays: Any) -> None:
        scratch = io.BytesIO()
        real(scratch, arrays)
        fh.write(scratch.getvalue()[: len(scratch.getvalue()) // 2])
        raise OSError("disk full")

    monkeypatch.setattr(serialization, "_write_archive", write_half_then_crash)
    with pytest.raises(OSError, match="disk full"):
        ag.save({"version": "new", "w": ag.ones(1000)}, path)
    assert ag.load(path)["version"] == "old"
    assert os.listdir(tmp_path) == ["ckpt.pt"]


def test_failed_rename_keeps_the_old_file(tmp_path: pathlib.Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    path = _old_file(tmp_path)

    def no_replace(src: Any, dst: Any) -> None:
        raise PermissionError("rename refused")

    monkeypatch.setattr(serialization.os, "replace", no_replace)
    with pytest.raises(PermissionError):
        ag.save({"version": "new"}, path)
    monkeypatch.undo()
    assert ag.load(path)["version"] == "old"
    assert os.listdir(tmp_path) == ["ckpt.pt"]


def test_save_fsyncs_file_then_directory(tmp_path: pathlib.Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    events: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        events.append("dir" if stat.S_ISDIR(os.fstat(fd).st_mode) else "file")
        real_fsync(fd)

    def replace(src: Any, dst: Any) -> None:
        events.append("replace")
        real_replace(src, dst)

    monkeypatch.setattr(serialization.os, "fsync", fsync)
    monkeypatch.setattr(serialization.os, "replace", replace)
    ag.save({"a": 1}, tmp_path / "c")
    assert events == ["file", "replace", "dir"]


# ---- refusals -------------------------------------------------------------------------------

def _valid_bytes() -> bytes:
    buf = io.BytesIO()
    ag.save({"w": ag.arange(4000, dtype=ag.float32), "n": 1}, buf)
    return buf.getvalue()


def _refused(tmp_path: pathlib.Path, content: bytes, match: str) -> None:
    path = tmp_path / "bad.pt"
    path.write_bytes(content)
    with pytest.raises(SerializationError, match=match) as info:
        ag.load(path)
    assert isinstance(info.value, RuntimeError)
    assert "bad.pt" in str(info.value)


def test_corrupt_truncated_and_foreign_files_are_refused(tmp_path: pathlib.Path) -> None:
    good = _valid_bytes()
    _refused(tmp_path, b"", "empty")
    _refused(tmp_path, b"hello, not a checkpoint", "not a zip")
    _refused(tmp_path, good[: len(good) // 2], "corrupt or truncated")
    _refused(tmp_path, good[:-10], "corrupt or truncated")
    flipped = bytearray(good)
    at = good.index(np.arange(4000, dtype=np.float32)[1000:1002].tobytes())
    flipped[at] ^= 0xFF
    _refused(tmp_path, bytes(flipped), "cannot read tensor data 't0'")
    npy = io.BytesIO()
    np.save(npy, np.ones(3))
    _refused(tmp_path, npy.getvalue(), "single .npy array")
    plain = io.BytesIO()
    np.savez(plain, x=np.ones(3))
    _refused(tmp_path, plain.getvalue(), "no __autograd_gpu__ structure header")
    pt = io.BytesIO()
    torch.save({"w": torch.ones(2)}, pt)
    _refused(tmp_path, pt.getvalue(), "PyTorch checkpoint")
    legacy = io.BytesIO()
    torch.save({"w": torch.ones(2)}, legacy, _use_new_zipfile_serialization=False)
    _refused(tmp_path, legacy.getvalue(), "pickle")


@pytest.mark.parametrize("header,match", [
    (b"{not json", "corrupt structure header"),
    (b'{"format": "autograd_gpu.save", "version": 1, "root": NaN}', "corrupt structure header"),
    (b'{"format": "other", "version": 1, "root": 1}', "unknown format"),
    (b'{"format": "autograd_gpu.save", "version": 2, "root": 1}', "format version 2"),
    (b'{"format": "autograd_gpu.save", "version": 1, "root": {"$": "exec"}}', "unknown structure"),
    (b'{"format": "autograd_gpu.save", "version": 1, "root": {"$": "list"}}', "bad 'items'"),
    (b'{"format": "autograd_gpu.save", "version": 1, "root": {"$": "dict", "items": [[1]]}}',
     "not a \\[key, value\\] pair"),
    (b'{"format": "autograd_gpu.save", "version": 1, "root": {"$": "float", "value": "1"}}',
     "non-finite"),
    (b'{"format": "autograd_gpu.save", "version": 1, "root": {"$": "device", "value": "x:y"}}',
     "bad device"),
    (b'\xff\xfe', "corrupt structure header"),
])
def test_malformed_headers_are_refused(header: bytes, match: str) -> None:
    with pytest.raises(SerializationError, match=match):
        ag.load(_archive(None, raw=header))


@pytest.mark.parametrize("over,match", [
    ({"key": "t9"}, "missing from the archive"),
    ({"key": "__autograd_gpu__"}, "missing from the archive"),
    ({"dtype": "float64"}, "header says float64"),
    ({"dtype": "complex32"}, "unknown dtype"),
    ({"shape": [3]}, r"header says float32\[3\]"),
    ({"shape": "2"}, "bad 'shape'"),
])
def test_tensor_nodes_must_match_their_data(over: dict[str, Any], match: str) -> None:
    arr = np.array([1.0, 2.0], dtype=np.float32)
    with pytest.raises(SerializationError, match=match):
        ag.load(_archive(_tensor_header(**over), t0=arr))


class _Payload:
    """Unpickling this creates the file ``marker`` (stands in for arbitrary code)."""

    def __init__(self, marker: pathlib.Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (open, (str(self.marker), "w"))


def test_malicious_pickles_are_refused_without_running(tmp_path: pathlib.Path) -> None:
    marker = tmp_path / "pwned"
    payload = pickle.dumps(_Payload(marker), protocol=2)
    pickle.loads(payload).close()  # the payload works when unpickled...
    assert marker.exists()
    marker.unlink()

    obj_npz = io.BytesIO()  # ...an object array (a pickle inside .npy) under our header...
    np.savez(obj_npz, __autograd_gpu__=np.frombuffer(json.dumps(
        {**_tensor_header(), "root": {**_tensor_header()["root"], "dtype": "float32"}}).encode(),
        dtype=np.uint8), t0=np.array([_Payload(marker), 1], dtype=object))
    header_npz = io.BytesIO()  # ...a pickled header...
    np.savez(header_npz, __autograd_gpu__=np.array([_Payload(marker)], dtype=object))
    torch_like = io.BytesIO()  # ...and a torch-style zip holding the pickle
    with zipfile.ZipFile(torch_like, "w") as zf:
        zf.writestr("archive/data.pkl", payload)
    cases = [(payload, "pickle"), (obj_npz.getvalue(), "cannot read tensor data"),
             (header_npz.getvalue(), "corrupt structure header"),
             (torch_like.getvalue(), "PyTorch checkpoint")]
    for content, match in cases:
        _refused(tmp_path, content, match)
        with pytest.raises(SerializationError):
            ag.load(io.BytesIO(content))
        assert not marker.exists()
