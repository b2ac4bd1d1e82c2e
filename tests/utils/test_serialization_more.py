"""save/load of what programs save, with PyTorch's ``weights_only`` semantics: the safe set
against torch.save/torch.load (the same object saved by both loads equal), NumPy data and
objects outside the safe set refused with torch's messages until allowlisted, whole modules with
``weights_only=False``, the allowlist API, optimizer and scheduler states that resume training
exactly, shared storages, and refusal of truncated, corrupt and hostile pickled parts."""

from __future__ import annotations

import collections
import io
import json
import math
import os
import pathlib
import pickle
import warnings
import zipfile
from typing import Any, Callable

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from autograd_gpu.utils import serialization
from autograd_gpu.utils.serialization import SerializationError

from .test_serialization import exact

Point = collections.namedtuple("Point", "x y")
INT64_ARRAY = [np._core.multiarray._reconstruct, np.ndarray, np.dtype]  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _no_allowlist() -> Any:
    """Each test starts with our allowlist empty and ends with torch's as it was."""
    ag.serialization.clear_safe_globals()
    theirs = torch.serialization.get_safe_globals()
    yield
    ag.serialization.clear_safe_globals()
    torch.serialization.clear_safe_globals()
    torch.serialization.add_safe_globals(theirs)


def both(make: Callable[[Any], Any], **load_kw: Any) -> tuple[Any, Any]:
    """``make(library)`` saved and loaded by autograd_gpu and by torch: (ours, torch's), each
    the loaded object or the exception raised."""
    out = []
    for lib in (ag, torch):
        buf = io.BytesIO()
        lib.save(make(lib), buf)
        buf.seek(0)
        try:
            out.append(lib.load(buf, **load_kw))
        except Exception as e:  # noqa: BLE001
            out.append(e)
    return out[0], out[1]


def deep(value: Any) -> Any:
    """``exact`` extended to sets, NumPy data, namedtuples and defaultdicts."""
    if isinstance(value, np.ndarray):
        return ("ndarray", value.dtype.str, value.shape, value.flags.f_contiguous, value.tolist())
    if isinstance(value, (np.generic, np.dtype)):
        return (type(value).__name__, repr(value))
    if isinstance(value, (set, frozenset)):
        return (type(value).__name__, sorted(map(repr, value)))
    if isinstance(value, collections.defaultdict):
        return ("defaultdict", value.default_factory, deep(dict(value)))
    if isinstance(value, dict):
        return (type(value).__name__, [(deep(k), deep(v)) for k, v in value.items()])
    if isinstance(value, (list, tuple)) and not isinstance(value, (torch.Size, ag.Size)):
        return (type(value).__name__, [deep(v) for v in value])
    return exact(value)


# ---- the safe set, against the oracle -----------------------------------------------------------

def _safe_set(lib: Any) -> Any:
    od = collections.OrderedDict([("b", lib.ones(2)), ("a", (1, [2.5, None]))])
    od.extra = {"version": 2}  # type: ignore[attr-defined]
    return {
        "numbers": [0, -7, 2**70, True, 1.5, math.inf, -math.inf, 3 + 4j, complex(0, -1)],
        "text": ["ünï", b"\x00\xff", bytearray(b"ab")], "none": None,
        "ordered": od, "counter": collections.Counter("abracadabra"), "set": {1, 2, 3},
        "nested": {(1, "k"): [(), [], {}, ((lib.zeros(1, 2),),)], 7: {"deep": [[[1]]]}},
        "size": lib.Size([2, 3]), "empty_size": lib.zeros(0).shape, "dtypes": [lib.float16,
                                                                               lib.int64],
        "device": lib.device("cpu"), "param": lib.nn.Parameter(lib.arange(3.0)),
        "grad": lib.ones(2, requires_grad=True), "ints": lib.arange(4).reshape(2, 2),
    }


def test_the_safe_set_loads_as_torch_loads_it_with_weights_only() -> None:
    ours, theirs = both(_safe_set)
    assert deep(ours) == deep(theirs)
    assert ours["ordered"].extra == theirs["ordered"].extra == {"version": 2}
    assert isinstance(ours["param"], ag.nn.Parameter) and ours["param"].requires_grad
    assert type(ours["size"]) is ag.Size and repr(ours["size"]) == repr(theirs["size"])


def test_state_dict_metadata_survives_as_in_torch() -> None:
    def make(lib: Any) -> Any:
        return lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Conv1d(2, 2, 1)).state_dict()

    ours, theirs = both(make)
    assert ours._metadata == theirs._metadata
    fresh = ag.nn.Sequential(ag.nn.Linear(2, 2), ag.nn.Conv1d(2, 2, 1))
    fresh.load_state_dict(ours, strict=True)


# ---- outside the safe set: refused with torch's message, allowlisted, or trusted -----------------

def _message(e: BaseException) -> str:
    assert type(e) is pickle.UnpicklingError, repr(e)
    return str(e)


@pytest.mark.parametrize("make", [
    lambda lib: np.arange(3),
    lambda lib: {"w": lib.ones(1), "a": np.ones((2, 2), np.float32)},
    lambda lib: [np.float32(1.5), np.int64(3)],
    lambda lib: np.dtype("float64"),
    lambda lib: Point(lib.ones(1), 2),
    lambda lib: collections.defaultdict(list, a=[1]),
    lambda lib: frozenset({1}),
    lambda lib: slice(1, 2),
], ids=["ndarray", "nested-ndarray", "np-scalars", "np-dtype", "namedtuple", "defaultdict",
        "frozenset", "slice"])
def test_refusals_carry_torchs_message(make: Callable[[Any], Any]) -> None:
    ours, theirs = both(make)
    assert _message(ours) == _message(theirs)
    assert str(ours).startswith("Weights only load failed.")
    ours, theirs = both(make, weights_only=False)
    assert deep(ours) == deep(theirs)


def test_allowlisting_numpy_as_torch_asks_loads_it() -> None:
    arrays = lambda lib: [np.arange(6).reshape(2, 3), np.asfortranarray(np.eye(2, 3))]  # noqa: E731
    with ag.serialization.safe_globals(INT64_ARRAY), torch.serialization.safe_globals(INT64_ARRAY):
        ours, theirs = both(arrays)
        assert _message(ours) == _message(theirs)  # the dtype class is still missing
        assert "Can only build" in str(ours)
    dtype_classes = [type(np.dtype("int64")), type(np.dtype("float64"))]
    with ag.serialization.safe_globals(INT64_ARRAY + dtype_classes), \
            torch.serialization.safe_globals(INT64_ARRAY + dtype_classes):
        ours, theirs = both(arrays)
    assert deep(ours) == deep(theirs)
    assert ours[1].flags.f_contiguous and ours[0].flags.writeable
    for lib in (ag, torch):
        lib.serialization.add_safe_globals([(np.dtype, "numpy.dtype"), np.dtypes.Float32DType,
                                            np._core.multiarray.scalar])  # type: ignore
    ours, theirs = both(lambda lib: np.arange(3))  # the array globals are not all allowed
    assert _message(ours) == _message(theirs)
    ours, theirs = both(lambda lib: [np.float32(-0.5), np.dtype("float32")])
    assert deep(ours) == deep(theirs)


def test_numpy_data_loads_with_weights_only_false_exactly() -> None:
    values = [np.arange(5, dtype=np.uint8), np.array([[1 + 2j]], np.complex64), np.array(True),
              np.zeros((0, 3)), np.array([1.0, -np.inf], ">f8"), np.arange(12.0)[::3],
              np.float16(np.inf), np.uint64(2**64 - 1), np.bool_(False), np.int8(-128),
              np.complex128(1j), np.longdouble(1) / 3, np.array(["text"]),
              np.dtype(">i2"), np.dtype([("a", "i4")])]
    same = np.arange(3)
    ours, theirs = both(lambda lib: [values, same, same], weights_only=False)
    assert deep(ours) == deep(theirs)
    assert ours[1] is ours[2]
    assert ours[0][11] == np.longdouble(1) / 3


def test_allowlisted_classes_load_with_weights_only() -> None:
    make = lambda lib: {"p": Point(lib.ones(2), [Point(1, b"x")]), "t": lib.ones(2)}  # noqa: E731
    with ag.serialization.safe_globals([Point]), torch.serialization.safe_globals([Point]):
        ours, theirs = both(make)
    assert deep(ours) == deep(theirs)
    assert type(ours["p"]) is Point and type(ours["p"].y[0]) is Point


class Recorder:
    """Records every unpickling of its instances (stands in for code a pickle could run)."""

    seen: list[str] = []

    def __setstate__(self, state: Any) -> None:
        Recorder.seen.append("set")
        self.__dict__.update(state)


class Unlisted:
    pass


def test_weights_only_refuses_before_unpickling_anything(tmp_path: pathlib.Path) -> None:
    rec, other = Recorder(), Unlisted()
    rec.x = 1  # type: ignore[attr-defined]
    path = tmp_path / "two.pt"
    ag.save([rec, {"later": other}], path)
    Recorder.seen.clear()
    with ag.serialization.safe_globals([Recorder]), pytest.raises(
            pickle.UnpicklingError, match=r"GLOBAL tests\.utils\.test_serialization_more\.Unlisted"):
        ag.load(path)
    assert Recorder.seen == []
    with ag.serialization.safe_globals([Recorder, Unlisted]):
        out = ag.load(path)
    assert Recorder.seen == ["set"] and out[0].x == 1 and type(out[1]["later"]) is Unlisted
    assert ag.serialization.get_unsafe_globals_in_checkpoint(path) == [
        "tests.utils.test_serialization_more.Recorder",
        "tests.utils.test_serialization_more.Unlisted"]


def test_unsafe_globals_in_a_checkpoint_are_torchs(tmp_path: pathlib.Path) -> None:
    found = []
    for lib in (ag, torch):
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save({"a": np.arange(3), "p": Point(1, collections.defaultdict(int)),
                  "w": lib.ones(2), "od": collections.OrderedDict(x=lib.Size([1]))}, path)
        found.append(sorted(lib.serialization.get_unsafe_globals_in_checkpoint(path)))
    assert found[0] == found[1]
    with ag.serialization.safe_globals([Point]):
        assert "tests.utils.test_serialization_more.Point" not in \
            ag.serialization.get_unsafe_globals_in_checkpoint(tmp_path / "autograd_gpu.pt")


# ---- whole modules --------------------------------------------------------------------------

def test_whole_modules_need_weights_only_false(device: str, tmp_path: pathlib.Path) -> None:
    ag.manual_seed(0)
    model = ag.nn.Sequential(ag.nn.Linear(3, 4), ag.nn.ReLU(), ag.nn.LayerNorm(4)).to(device)
    path = tmp_path / "model.pt"
    ag.save({"model": model, "state": model.state_dict(), "epoch": 2}, path)
    tmodel = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.LayerNorm(4))
    buf = io.BytesIO()
    torch.save({"model": tmodel}, buf)
    buf.seek(0)
    with pytest.raises(pickle.UnpicklingError) as theirs:
        torch.load(buf)
    with pytest.raises(pickle.UnpicklingError) as ours:
        ag.load(path)
    assert str(ours.value) == str(theirs.value).replace(
        "torch.nn.modules.container.Sequential", "autograd_gpu.nn.container.Sequential")
    out = ag.load(path, weights_only=False)
    loaded = out["model"]
    x = ag.randn(2, 3, device=device)
    assert loaded(x).tolist() == model(x).tolist()
    assert isinstance(loaded[0].weight, ag.nn.Parameter) and loaded[0].weight.requires_grad
    assert loaded[0].weight.device == model[0].weight.device
    # the module's parameters and the state_dict's tensors share storage, as in PyTorch
    assert out["state"]["0.weight"].data_ptr() == loaded[0].weight.data_ptr()
    on_cpu = ag.load(path, weights_only=False, map_location="cpu")["model"]
    assert on_cpu[0].weight.device == ag.device("cpu")
    loaded(x).sum().backward()
    assert loaded[0].weight.grad is not None


def test_weights_only_options_as_torch(tmp_path: pathlib.Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "m.pt"
    ag.save(ag.nn.Linear(1, 1), path)
    torch.save(torch.nn.Linear(1, 1), tmp_path / "t.pt")
    for lib, file in [(ag, path), (torch, tmp_path / "t.pt")]:
        with pytest.raises(RuntimeError, match="^Can not safely load weights when explicit "
                                               "pickle_module is specified$"):
            lib.load(file, pickle_module=pickle, weights_only=True)
        with pytest.raises(ValueError, match="^f must be a file path in order to use the mmap "
                                             "argument$"):
            lib.load(io.BytesIO(file.read_bytes()), mmap=True, weights_only=False)
    assert isinstance(ag.load(path, pickle_module=pickle), ag.nn.Linear)  # implies False
    assert ag.load(path, weights_only=False, mmap=True).weight.shape == (1, 1)
    with pytest.warns(UserWarning, match="pickle_load_args only works"):
        ag.save(1, tmp_path / "one")
        assert ag.load(tmp_path / "one", encoding="latin1") == 1
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "1")
    with pytest.raises(pickle.UnpicklingError):
        ag.load(path, weights_only=False)
    monkeypatch.setenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0")
    monkeypatch.setenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "yes")
    with pytest.warns(UserWarning, match="forcing weights_only=False"):
        assert isinstance(ag.load(path), ag.nn.Linear)
    with pytest.raises(pickle.UnpicklingError):
        ag.load(path, weights_only=True)


def test_the_allowlist_api_matches_torch() -> None:
    assert ag.serialization.get_safe_globals() == []
    assert ag.serialization.add_safe_globals is serialization.add_safe_globals
    ag.serialization.add_safe_globals([Point, (Recorder, "x.Y")])
    assert set(ag.serialization.get_safe_globals()) == {Point, (Recorder, "x.Y")}
    with ag.serialization.safe_globals([Unlisted]):
        assert Unlisted in ag.serialization.get_safe_globals()
    assert Unlisted not in ag.serialization.get_safe_globals()
    ag.serialization.clear_safe_globals()
    assert ag.serialization.get_safe_globals() == []
    for bad in [(Point, "a", "b"), (Point, 3)]:
        for lib in (ag, torch):
            lib.serialization.add_safe_globals([bad])
        ours, theirs = both(lambda lib: Point(1, 2))
        for lib in (ag, torch):
            lib.serialization.clear_safe_globals()
        assert type(ours) is type(theirs) and str(ours) == str(theirs)


# ---- optimizers and schedulers resume exactly ----------------------------------------------------

OPTIMIZERS = [("SGD", {"lr": 0.1, "momentum": 0.9, "nesterov": True}), ("Adam", {"amsgrad": True}),
              ("AdamW", {}), ("Adagrad", {}), ("Adamax", {}), ("Adadelta", {}), ("NAdam", {}),
              ("RAdam", {}), ("RMSprop", {"momentum": 0.5, "centered": True}), ("Rprop", {}),
              ("ASGD", {"t0": 1}), ("LBFGS", {"history_size": 3, "max_iter": 3}),
              ("Adafactor", {}), ("Muon", {"lr": 0.02})]


def _problem(device: str) -> tuple[ag.Tensor, ag.Tensor, Callable[..., Any]]:
    # NOTE: float32, as the optimizers' float32 scalar states (NAdam's mu_product, ASGD's mu)
    # are cast to the parameter's dtype on loading, in PyTorch too: with float64 parameters a
    # resumed run then differs from an uninterrupted one in the last bits, as PyTorch's does.
    gen = np.random.default_rng(0)
    w = ag.nn.Parameter(ag.tensor(gen.standard_normal((4, 3)), dtype=ag.float32, device=device))
    x = ag.tensor(gen.standard_normal((5, 4)), dtype=ag.float32, device=device)
    y = ag.tensor(gen.standard_normal((5, 3)), dtype=ag.float32, device=device)
    return w, x, lambda w: ((x @ w - y) ** 2).mean()


def _train(opt: Any, w: ag.Tensor, loss_fn: Callable[..., Any], steps: int,
           sched: Any = None) -> list[float]:
    lrs = []
    for _ in range(steps):
        def closure() -> Any:
            opt.zero_grad()
            loss = loss_fn(w)
            loss.backward()
            return loss
        loss = opt.step(closure)
        if sched is not None:
            sched.step(float(loss)) if isinstance(sched, ag.optim.lr_scheduler.ReduceLROnPlateau) \
                else sched.step()
        lrs.append(opt.param_groups[0]["lr"])
    return lrs


def _resumes_exactly(make_opt: Callable[[Any], Any], make_sched: Callable[[Any], Any] | None,
                     device: str, tmp_path: pathlib.Path) -> None:
    w, _, loss_fn = _problem(device)
    opt = make_opt(w)
    sched = make_sched(opt) if make_sched else None
    straight = _train(opt, w, loss_fn, 7, sched)
    w2, _, loss_fn2 = _problem(device)
    opt2 = make_opt(w2)
    sched2 = make_sched(opt2) if make_sched else None
    first = _train(opt2, w2, loss_fn2, 3, sched2)
    path = tmp_path / "ckpt.pt"
    ag.save({"w": w2, "optim": opt2.state_dict(),
             "sched": sched2.state_dict() if sched2 else None}, path)
    ckpt = ag.load(path)  # weights_only=True: no pickle needed
    w3, _, loss_fn3 = _problem(device)
    with ag.no_grad():
        w3.copy_(ckpt["w"])
    opt3 = make_opt(w3)
    sched3 = make_sched(opt3) if make_sched else None
    opt3.load_state_dict(ckpt["optim"])
    if sched3 is not None:
        sched3.load_state_dict(ckpt["sched"])
    rest = _train(opt3, w3, loss_fn3, 4, sched3)
    assert first + rest == straight
    assert w3.tolist() == w.tolist()


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=[o[0] for o in OPTIMIZERS])
def test_every_optimizer_resumes_exactly(name: str, kwargs: dict[str, Any], device: str,
                                         tmp_path: pathlib.Path) -> None:
    _resumes_exactly(lambda w: getattr(ag.optim, name)([w], **kwargs), None, device, tmp_path)


L = ag.optim.lr_scheduler
SCHEDULERS: dict[str, Callable[[Any], Any]] = {
    "StepLR": lambda o: L.StepLR(o, 2, gamma=0.5),
    "MultiStepLR": lambda o: L.MultiStepLR(o, [2, 4, 4], gamma=0.5),
    "ConstantLR": lambda o: L.ConstantLR(o, 0.5, total_iters=4),
    "LinearLR": lambda o: L.LinearLR(o, total_iters=5),
    "ExponentialLR": lambda o: L.ExponentialLR(o, 0.8),
    "PolynomialLR": lambda o: L.PolynomialLR(o, total_iters=6, power=2.0),
    "CosineAnnealingLR": lambda o: L.CosineAnnealingLR(o, 5, eta_min=0.001),
    "CosineAnnealingWarmRestarts": lambda o: L.CosineAnnealingWarmRestarts(o, 2, T_mult=2),
    "CyclicLR": lambda o: L.CyclicLR(o, 0.01, 0.1, step_size_up=2, mode="exp_range"),
    "OneCycleLR": lambda o: L.OneCycleLR(o, 0.1, total_steps=8),
    "LambdaLR": lambda o: L.LambdaLR(o, lambda e: 0.9 ** e),
    "MultiplicativeLR": lambda o: L.MultiplicativeLR(o, lambda e: 0.95),
    "ReduceLROnPlateau": lambda o: L.ReduceLROnPlateau(o, patience=0, factor=0.5),
    "SequentialLR": lambda o: L.SequentialLR(o, [L.ConstantLR(o, 0.5, total_iters=2),
                                                 L.ExponentialLR(o, 0.9)], milestones=[3]),
    "ChainedScheduler": lambda o: L.ChainedScheduler([L.ConstantLR(o, 0.5, total_iters=4),
                                                      L.ExponentialLR(o, 0.9)]),
}


def test_every_scheduler_is_covered() -> None:
    assert set(SCHEDULERS) == set(L.__all__) - {"LRScheduler"}


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_every_scheduler_resumes_exactly(name: str, tmp_path: pathlib.Path) -> None:
    _resumes_exactly(lambda w: ag.optim.SGD([w], lr=0.05, momentum=0.9), SCHEDULERS[name],
                     "cpu", tmp_path)


# ---- files: shared storage, atomicity, truncation, corruption, hostile pickles ----------------

def _pickle_bearing() -> dict[str, Any]:
    w = ag.arange(6.0).reshape(2, 3)
    return {"point": Point(w, np.arange(3)), "w": w, "f": np.float64(0.25), "s": ag.Size([1])}


def test_sharing_across_pickled_parts_and_the_rest() -> None:
    buf = io.BytesIO()
    obj = _pickle_bearing()
    obj["again"] = obj["point"]
    ag.save(obj, buf)
    out = ag.load(io.BytesIO(buf.getvalue()), weights_only=False)
    assert out["point"].x is out["w"] and out["again"] is out["point"]
    assert type(out["s"]) is ag.Size and type(out["f"]) is np.float64
    out["w"].add_(1)
    assert out["point"].x.tolist() == [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]


def test_failed_saves_leave_the_old_file(tmp_path: pathlib.Path,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "ckpt.pt"
    ag.save(_pickle_bearing(), path)
    before = path.read_bytes()
    with pytest.raises((pickle.PicklingError, AttributeError)):
        ag.save({"ok": ag.ones(3), "bad": Point(lambda: 0, 1)}, path)

    def crash(fh: Any, arrays: Any) -> None:
        fh.write(b"PK\x03\x04 partial")
        raise OSError("disk full")

    monkeypatch.setattr(serialization, "_write_archive", crash)
    with pytest.raises(OSError, match="disk full"):
        ag.save(_pickle_bearing(), path)
    assert path.read_bytes() == before and os.listdir(tmp_path) == ["ckpt.pt"]


def test_truncated_and_corrupt_files_are_refused(tmp_path: pathlib.Path) -> None:
    buf = io.BytesIO()
    ag.save(_pickle_bearing(), buf)
    good = buf.getvalue()
    for cut in range(0, len(good), max(1, len(good) // 60)):
        for wo in (True, False):
            with pytest.raises((SerializationError, pickle.UnpicklingError)):
                ag.load(io.BytesIO(good[:cut]), weights_only=wo)
    at = good.index(b"\x80\x02ctests.utils")  # the pickled part's first bytes
    flipped = good[:at + 3] + bytes([good[at + 3] ^ 1]) + good[at + 4:]
    with pytest.raises(SerializationError, match="CRC"):
        ag.load(io.BytesIO(flipped), weights_only=False)
    (tmp_path / "empty.pt").write_bytes(b"")
    with pytest.raises(EOFError):
        ag.load(tmp_path / "empty.pt")
    (tmp_path / "text.pt").write_bytes(b"hello")
    with pytest.raises(RuntimeError, match="not a zip"):
        ag.load(tmp_path / "text.pt")
    for lib in (ag, torch):
        with pytest.raises(FileNotFoundError, match="No such file or directory"):
            lib.load(tmp_path / "missing.pt")


def _with_pickle(data: bytes, refs: Any = None) -> io.BytesIO:
    """A checkpoint whose root is a pickled part holding ``data``."""
    root = {"$": "pickle", "key": "p0", "refs": refs or []}
    text = json.dumps({"format": "autograd_gpu.save", "version": 1, "root": root}).encode()
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        for name, arr in [("__autograd_gpu__", np.frombuffer(text, np.uint8)),
                          ("p0", np.frombuffer(data, np.uint8))]:
            member = io.BytesIO()
            np.lib.format.write_array(member, arr, allow_pickle=False)
            zf.writestr(f"{name}.npy", member.getvalue())
    buf.seek(0)
    return buf


class _Payload:
    def __init__(self, marker: pathlib.Path) -> None:
        self.marker = marker

    def __reduce__(self) -> Any:
        return (os.mkdir, (str(self.marker),))


@pytest.mark.parametrize("data,refs,error,match", [
    (b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00lsq\x00\x85R.", None, pickle.UnpicklingError,
     "module os is blocked"),
    (b"\x80\x02cbuiltins\neval\nX\x01\x00\x00\x001\x85R.", None, pickle.UnpicklingError,
     "GLOBAL eval was not an allowed global"),
    (b"\x80\x04\x8c\x02os\x8c\x06system\x93.", None, pickle.UnpicklingError,
     "Unsupported operand 140"),
    (b"\x80\x02]r\xff\xff\xff\x7f.", None, SerializationError, "memo index"),
    (b"\x80\x02cbuiltins\nbytearray\nJ\x00\x00\x00\x40\x85R.", None, pickle.UnpicklingError,
     "bytearray is allowed only"),
    (b"\x80\x02K\x05Q.", [], SerializationError, "bad persistent id"),
    (b"\x80\x02K\x00Q.", [{"$": "pickle", "key": "p0", "refs": []}], SerializationError,
     "refers to"),
    (b"\x80\x02]K\x01a.extra", None, SerializationError, "after the pickle's STOP"),
    (b"\x80\x02N\x85X\x01\x00\x00\x00aa.", None, pickle.UnpicklingError, "Can only append"),
    (b"\x80\x02a.", None, SerializationError, "stack runs empty"),
    (b"\x80\x02}]K\x01s.", None, SerializationError, "bad dict key"),
    (b"\x80\x02N", None, SerializationError, "is corrupt"),
])
def test_hostile_pickled_parts_are_refused_under_weights_only(
        data: bytes, refs: Any, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        ag.load(_with_pickle(data, refs))


def test_trusted_loading_runs_the_pickle_and_weights_only_never_does(
        tmp_path: pathlib.Path) -> None:
    marker = tmp_path / "ran"
    data = pickle.dumps(_Payload(marker), protocol=2)
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL posix.mkdir|module posix is blocked"):
        ag.load(_with_pickle(data))
    with ag.serialization.safe_globals([os.mkdir]):
        with pytest.raises(pickle.UnpicklingError, match="is blocked"):
            ag.load(_with_pickle(data))
    assert not marker.exists()
    with warnings.catch_warnings():
        ag.load(_with_pickle(data), weights_only=False)
    assert marker.exists()
