"""``save`` and ``load``: checkpoints (tensors, state dicts, optimizer states) as safe archives.

Format: an ``.npz`` (a zip of ``.npy`` arrays, written with NumPy) holding one array per tensor
(``t0``, ``t1``, ...) and a structure header ``__autograd_gpu__.npy``: UTF-8 JSON (as a uint8
array) that describes the saved object and refers to the arrays by key. Loading reads the arrays
with ``allow_pickle=False`` and rebuilds only whitelisted types (tensors, dicts, lists, tuples,
Python scalars, strings, bytes, None, dtypes and devices), so a checkpoint can never run code,
unlike a pickle.

JSON nodes: ``null``, ``true``/``false``, ints, finite floats and strings are themselves; every
other value is an object tagged by ``"$"``: ``{"$": "list" | "tuple", "items": [...]}``,
``{"$": "dict", "ordered": bool, "items": [[key, value], ...]}`` (keys are nodes too, so int
and tuple keys survive), ``{"$": "float", "value": "inf" | "-inf" | "nan"}``, ``{"$": "complex", "real", "imag"}``,
``{"$": "tensor", "key", "dtype", "shape", "device", "requires_grad", "parameter"}``,
``{"$": "dtype", "name"}``, ``{"$": "device", "value"}``, ``{"$": "bytes", "hex"}``.

Shared tensors: a tensor reached twice is stored once and loads as one tensor (as with
``torch.load``), and tensors that share all their data (``t.detach()``, ``t.data``, the tied
weights of a ``state_dict()``) are stored once and load sharing one storage (and version counter),
each with its own ``requires_grad``. Views are stored by value: only the elements a view shows
are written, as their own array, and it loads as an independent tensor (PyTorch writes the whole
storage and keeps the view). Loading reads each stored array at most once whatever the header
says: nodes naming one array share it, identical nodes give the same tensor.

Loading is bounded by the file: see ``_archive`` for the container checks (stored members only,
no overlaps, declared sizes equal to real sizes, CRCs). Writing to a path is atomic and cleans up
after killed saves: see ``_atomic``.
"""

from __future__ import annotations

import collections
import io
import json
import math
import numbers
import os
from typing import Any, Callable

# NOTE: numpy is imported here only for the file format, never for compute; tensors reach it
# through .cpu() and .numpy(), so any backend can be saved.
import numpy as np

from .. import dtypes
from ..backends import cuda_support
from ..device import as_device, device
from ..tensor import Tensor
from . import _archive, _atomic

_HEADER = "__autograd_gpu__"
_FORMAT = "autograd_gpu.save"
_VERSION = 1
_NONFINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
_TAGS = ("list", "tuple", "dict", "float", "complex", "dtype", "device", "bytes", "tensor")


class SerializationError(RuntimeError):
    """A file that ``load`` refuses: corrupt, truncated, foreign (a pickle, a torch checkpoint,
    a plain .npz) or malformed. The message names the file and what is wrong."""


# ---- save ----------------------------------------------------------------------------------

def _parameter_type() -> Any:
    try:
        from ..nn import Parameter
    except ImportError:
        return None
    return Parameter


class _Encoder:
    """Turns an object into a JSON node, collecting tensor data as NumPy arrays."""

    def __init__(self) -> None:
        self.arrays: dict[str, Any] = {}
        self._active: set[int] = set()
        self._param = _parameter_type()
        self._nodes: dict[int, dict[str, Any]] = {}  # id(tensor) -> its node
        self._keys: dict[int, str] = {}  # id(tensor._data) -> the key its array is stored under

    def encode(self, obj: Any, path: str) -> Any:
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if isinstance(obj, numbers.Integral):
            return int(obj)
        if isinstance(obj, numbers.Real):
            x = float(obj)
            if math.isfinite(x):
                return x
            return {"$": "float", "value": "nan" if math.isnan(x) else ("inf" if x > 0 else "-inf")}
        if isinstance(obj, numbers.Complex):
            return {"$": "complex", "real": self.encode(obj.real, path),
                    "imag": self.encode(obj.imag, path)}
        if isinstance(obj, dtypes.dtype):
            return {"$": "dtype", "name": obj.name}
        if isinstance(obj, device):
            return {"$": "device", "value": str(obj)}
        if isinstance(obj, (bytes, bytearray)):
            return {"$": "bytes", "hex": bytes(obj).hex()}
        if isinstance(obj, (dict, list, tuple)):
            if id(obj) in self._active:
                raise ValueError(f"save: {path} contains itself; cannot save a cyclic structure")
            self._active.add(id(obj))
            try:
                return self._container(obj, path)
            finally:
                self._active.discard(id(obj))
        raise TypeError(f"save: cannot save {path} of type {type(obj).__module__}."
                        f"{type(obj).__qualname__}; supported: tensors, dicts, lists, tuples, "
                        "Python scalars, strings, bytes, None, dtypes and devices")

    def _container(self, obj: Any, path: str) -> Any:
        if isinstance(obj, dict):
            items = [[self.encode(k, f"{path} key {k!r}"), self.encode(v, f"{path}[{k!r}]")]
                     for k, v in obj.items()]
            return {"$": "dict", "ordered": isinstance(obj, collections.OrderedDict),
                    "items": items}
        items = [self.encode(v, f"{path}[{i}]") for i, v in enumerate(obj)]
        # NOTE: tuple subclasses (namedtuples) are saved as plain tuples.
        return {"$": "tuple" if isinstance(obj, tuple) else "list", "items": items}

    def _tensor(self, t: Tensor) -> dict[str, Any]:
        node = self._nodes.get(id(t))
        if node is not None:
            return node
        # NOTE: tensors holding the very same array object (detach(), .data, tied weights)
        # share all their data: store it once. Views hold other array objects and are stored
        # by value. The ids stay unique while saving: ``obj`` keeps every tensor alive.
        key = self._keys.get(id(t._data))
        if key is None:
            key = self._keys[id(t._data)] = f"t{len(self.arrays)}"
            # NOTE: C order, so loaded tensors are contiguous whatever view was saved (only the
            # view's elements are written, not its whole base).
            self.arrays[key] = np.asarray(t.detach().cpu().numpy(), order="C")
        node = self._nodes[id(t)] = {
            "$": "tensor", "key": key, "dtype": t.dtype.name, "shape": list(t.shape),
            "device": str(t.device), "requires_grad": bool(t.requires_grad),
            "parameter": self._param is not None and isinstance(t, self._param)}
        return node


_write_archive = _archive.write


def save(obj: Any, f: str | os.PathLike[str] | Any, pickle_module: Any = None,
         pickle_protocol: int = 2, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` (tensors and nested dicts/lists/tuples of tensors, Python scalars,
    strings, bytes, None, dtypes, devices) to ``f``, a path or a writable binary file.

    Dtypes, shapes, devices, ``requires_grad``, tuple-vs-list, dict key types and order,
    bool-vs-int and non-finite floats survive. A tensor reached twice is stored once, and so is
    the data of tensors sharing all of it (``detach()``, tied weights); views are stored by value
    (their own elements only) and load as independent tensors. Writing to a path is atomic, and
    first deletes the temp files that killed saves left in that folder. The pickle arguments are
    accepted for compatibility and ignored: nothing is pickled.

    Args:
        obj: what to save, e.g. ``model.state_dict()`` or ``optimizer.state_dict()``.
        f: a file name (str or PathLike; no extension is added) or a binary file object.

    Example:
        >>> save({"w": ones(2), "step": 3}, "ckpt.pt")
        >>> load("ckpt.pt")
        {'w': tensor([1., 1.]), 'step': 3}
    """
    enc = _Encoder()
    root = enc.encode(obj, "the object")
    header = {"format": _FORMAT, "version": _VERSION, "root": root}
    text = json.dumps(header, allow_nan=False, separators=(",", ":"))
    arrays = {_HEADER: np.frombuffer(text.encode("utf-8"), dtype=np.uint8), **enc.arrays}
    if hasattr(f, "write"):
        _write_archive(f, arrays)
    else:
        _atomic.replace_atomically(os.fspath(f), lambda fh: _write_archive(fh, arrays))


# ---- load ----------------------------------------------------------------------------------

_CUDA_MISSING = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
                 "is False. If you are running on a CPU-only machine, please use torch.load with "
                 "map_location=torch.device('cpu') to map your storages to the CPU.")


def _restore(t: Tensor, location: Any) -> Tensor:
    """``t`` (on the CPU) moved to ``location``, a device or a device string."""
    dev = device(location) if isinstance(location, (str, device)) else location
    if not isinstance(dev, device):
        raise TypeError(f"load: map_location gave {type(location).__name__}; expected a device, "
                        "a device string, a dict of them or a callable")
    if dev.type == "cuda" and not cuda_support.is_available():
        raise RuntimeError(f"{_CUDA_MISSING} ({cuda_support._INSTALL_HINT})")
    return t.to(as_device(dev))


class _Decoder:
    """Rebuilds the saved object from the JSON node tree and the archive's arrays, checking
    every node: a malformed one raises ``SerializationError``, never a stray KeyError.

    Each array is read at most once (``storages``), and identical tensor nodes give the same
    tensor (``tensors``), so a header naming one array a million times costs a million
    references, not a million copies."""

    def __init__(self, archive: _archive.Archive, name: str, map_location: Any) -> None:
        self.archive = archive
        self.name = name
        self.map_location = map_location
        self.storages: dict[str, tuple[str, list[int], str, Tensor]] = {}
        self.tensors: dict[tuple[Any, ...], Tensor] = {}

    def fail(self, what: str) -> SerializationError:
        return _invalid(self.name, what)

    def field(self, node: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
        value = node.get(key)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(f"{node.get('$')!r} node has a bad {key!r} field: {value!r:.80}")
        return value

    def decode(self, node: Any) -> Any:
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        tag = node.get("$") if isinstance(node, dict) else None
        fn = getattr(self, f"_{tag}", None) if tag in _TAGS else None
        if fn is None:
            raise self.fail(f"unknown structure node {str(node)[:80]!r}")
        return fn(node)

    def _list(self, node: dict[str, Any]) -> list[Any]:
        return [self.decode(v) for v in self.field(node, "items", list)]

    def _tuple(self, node: dict[str, Any]) -> tuple[Any, ...]:
        return tuple(self.decode(v) for v in self.field(node, "items", list))

    def _dict(self, node: dict[str, Any]) -> dict[Any, Any]:
        out: dict[Any, Any] = collections.OrderedDict() if node.get("ordered") else {}
        for pair in self.field(node, "items", list):
            if not isinstance(pair, list) or len(pair) != 2:
                raise self.fail("a dict entry is not a [key, value] pair")
            key = self.decode(pair[0])
            try:
                hash(key)
            except TypeError:
                raise self.fail(f"a dict key is unhashable: {key!r:.80}") from None
            out[key] = self.decode(pair[1])
        return out

    def _float(self, node: dict[str, Any]) -> float:
        value = self.field(node, "value", str)
        if value not in _NONFINITE:
            raise self.fail(f"bad non-finite float {value!r:.80}")
        return _NONFINITE[value]

    def _complex(self, node: dict[str, Any]) -> complex:
        parts = [self.decode(node.get(k)) for k in ("real", "imag")]
        if not all(isinstance(p, (int, float)) for p in parts):
            raise self.fail("bad complex number")
        return complex(*parts)

    def _dtype(self, node: dict[str, Any]) -> dtypes.dtype:
        name = self.field(node, "name", str)
        if name not in dtypes.BY_NAME:
            raise self.fail(f"unknown dtype {name!r:.80}")
        return dtypes.BY_NAME[name]

    def _device(self, node: dict[str, Any]) -> device:
        value = self.field(node, "value", str)
        try:
            return device(value)
        except RuntimeError as e:
            raise self.fail(f"bad device {value!r:.80} ({e})") from e

    def _bytes(self, node: dict[str, Any]) -> bytes:
        try:
            return bytes.fromhex(self.field(node, "hex", str))
        except ValueError as e:
            raise self.fail(f"bad bytes ({e})") from e

    def _tensor(self, node: dict[str, Any]) -> Tensor:
        key = self.field(node, "key", str)
        dt = self._dtype({"$": "tensor", "name": node.get("dtype")})
        shape = self.field(node, "shape", list)
        if not all(type(n) is int for n in shape):
            raise self.fail(f"'tensor' node has a bad 'shape' field: {shape!r:.80}")
        saved = str(self._device({"$": "tensor", "value": node.get("device")}))
        requires_grad = node.get("requires_grad") is True and dt.category >= 2
        parameter = node.get("parameter") is True
        memo = (key, dt.name, tuple(shape), saved, requires_grad, parameter)
        t = self.tensors.get(memo)
        if t is None:
            # NOTE: detach() shares the storage and version counter: an in-place change through
            # one tensor is seen (and checked by autograd) through the others, as for views.
            t = self._storage(key, dt, shape, saved).detach()
            if parameter and (param := _parameter_type()) is not None:
                t = param(t, requires_grad=requires_grad)
            elif requires_grad:
                t.requires_grad_(True)
            self.tensors[memo] = t
        return t

    def _storage(self, key: str, dt: dtypes.dtype, shape: list[int], saved: str) -> Tensor:
        """The array ``key``, read once and placed by ``map_location``."""
        if key in self.storages:
            stored_dt, stored_shape, stored_device, t = self.storages[key]
            if (stored_dt, stored_shape) != (dt.name, shape):
                raise self.fail(f"tensor data {key!r} is {stored_dt}{stored_shape}, but the "
                                f"header also says {dt.name}{shape}")
            if stored_device != saved:
                raise self.fail(f"tensor data {key!r} is said to be saved on both "
                                f"{stored_device} and {saved}")
            return t
        member = f"{key}.npy"
        if key == _HEADER or member not in self.archive.members:
            raise self.fail(f"tensor data {key!r:.80} is missing from the archive")
        try:
            arr = self.archive.read(member)
        except _archive.ArchiveError as e:
            raise self.fail(f"cannot read tensor data {key!r}: {e}") from None
        if arr.dtype.name != dt.name or list(arr.shape) != shape:
            raise self.fail(f"tensor data {key!r} is {arr.dtype.name}{list(arr.shape)}, but the "
                            f"header says {dt.name}{shape}")
        t = self._place(Tensor._make(arr, as_device("cpu")), saved)
        self.storages[key] = (dt.name, shape, saved, t)
        return t

    def _place(self, t: Tensor, saved: str) -> Tensor:
        ml = self.map_location
        if ml is None:
            return _restore(t, saved)
        if isinstance(ml, dict):
            return _restore(t, ml.get(saved, saved))
        if isinstance(ml, (str, device)):
            return _restore(t, ml)
        if callable(ml):
            # NOTE: PyTorch passes a CPU storage; here it is the CPU tensor. None means
            # "restore where it was saved".
            out = ml(t, saved)
            if out is None:
                return _restore(t, saved)
            if not isinstance(out, Tensor):
                raise TypeError(f"load: map_location returned {type(out).__name__}; expected "
                                "a tensor or None")
            return out
        raise TypeError(f"load: map_location must be a device, a device string, a dict or a "
                        f"callable, not {type(ml).__name__}")


def _name_of(f: Any) -> str:
    if hasattr(f, "read"):
        name = getattr(f, "name", None)
        return repr(name) if isinstance(name, str) else f"<{type(f).__name__}>"
    return repr(os.fspath(f))


def _sniff(head: bytes) -> str | None:
    """Why ``head`` (a file's first bytes) cannot start an .npz archive; None when it can."""
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return None
    if not head:
        return "the file is empty"
    if head.startswith(b"\x80") or head[:1] in (b"(", b"]", b"}"):
        return ("it is a Python pickle (e.g. the legacy torch.save format); autograd_gpu.load "
                "never unpickles, because a pickle can run arbitrary code")
    if head.startswith(b"\x93NUMPY"):
        return "it is a single .npy array, not an .npz archive written by autograd_gpu.save"
    return "it is not a zip/.npz archive"


def _invalid(name: str, what: str) -> SerializationError:
    return SerializationError(f"load: {name} is not a valid autograd_gpu.save file: {what}")


def _open_archive(fh: Any, name: str) -> _archive.Archive:
    head = fh.read(8)
    fh.seek(0)
    why = _sniff(head)
    if why is not None:
        raise _invalid(name, why)
    try:
        archive = _archive.Archive(fh)
    except _archive.ArchiveError as e:
        raise _invalid(name, str(e)) from None
    if f"{_HEADER}.npy" not in archive.members:
        if any(n.endswith("data.pkl") for n in archive.members):
            why = ("it is a PyTorch checkpoint (torch.save's zip holds pickles); load it with "
                   "torch.load(..., weights_only=True) and re-save it with autograd_gpu.save")
        else:
            why = f"the archive has no {_HEADER} structure header (a plain .npz?)"
        raise _invalid(name, why)
    return archive


def _read_header(archive: _archive.Archive, name: str) -> Any:
    try:
        raw = archive.read(f"{_HEADER}.npy")
        if raw.dtype != np.uint8 or raw.ndim != 1:
            raise ValueError(f"header array is {raw.dtype}{list(raw.shape)}, not uint8[n]")
        header = json.loads(raw.tobytes().decode("utf-8"), parse_constant=_reject_constant)
    except Exception as e:  # noqa: BLE001  (CRC errors, bad UTF-8, bad or too deep JSON alike)
        raise SerializationError(f"load: {name} has a corrupt structure header "
                                 f"({type(e).__name__}: {e})") from None
    if not isinstance(header, dict) or header.get("format") != _FORMAT or "root" not in header:
        raise SerializationError(f"load: {name} has a structure header of an unknown format")
    if header.get("version") != _VERSION:
        raise SerializationError(f"load: {name} has format version {header.get('version')!r}; "
                                 f"this autograd_gpu reads version {_VERSION}")
    return header["root"]


def _reject_constant(token: str) -> Any:
    raise ValueError(f"non-standard JSON constant {token}")


def load(f: str | os.PathLike[str] | Any,
         map_location: str | device | dict[str, Any] | Callable[..., Any] | None = None,
         pickle_module: Any = None, *, weights_only: bool | None = None, mmap: Any = None,
         **pickle_load_args: Any) -> Any:
    """Load an object written by ``save`` from ``f`` (a path or a readable binary file).

    Nothing in the file is executed: arrays are read without pickles and only whitelisted
    types are rebuilt, whatever ``weights_only`` says. Loading costs at most what the file
    holds: each stored array is read once however often the header names it (tensors naming one
    array share it), only the uncompressed members ``save`` writes are accepted, and every
    declared size is checked against the file before anything is allocated.

    Args:
        f: the file name or binary file object.
        map_location: where tensors go: None (where they were saved), a device or device
            string (all of them there), a dict remapping saved device strings
            (``{'cuda:1': 'cuda:0'}``), or a callable ``(cpu_tensor, saved_location)`` that
            returns a tensor, or None to restore to the saved location.

    Returns:
        The saved object, with fresh tensors (shared as they were when saved).

    Raises:
        SerializationError: (a ``RuntimeError``) for a corrupt, truncated, foreign or
            malformed file, naming the file and the problem.
        RuntimeError: a tensor would land on CUDA and CUDA is not available.
    """
    name = _name_of(f)
    if hasattr(f, "read"):
        fh = f if _seekable(f) else io.BytesIO(f.read())
        return _load_from(fh, name, map_location)
    with open(os.fspath(f), "rb") as fh:
        return _load_from(fh, name, map_location)


def _seekable(f: Any) -> bool:
    try:
        return bool(f.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _load_from(fh: Any, name: str, map_location: Any) -> Any:
    archive = _open_archive(fh, name)
    root = _read_header(archive, name)
    decoder = _Decoder(archive, name, map_location)
    try:
        obj = decoder.decode(root)
    except RecursionError:
        raise decoder.fail("the structure is nested too deeply") from None
    unused = sorted(set(archive.members) - {f"{_HEADER}.npy"}
                    - {f"{key}.npy" for key in decoder.storages})
    if unused:
        raise decoder.fail(f"member {unused[0]!r:.80} is not referred to by the structure header")
    return obj
