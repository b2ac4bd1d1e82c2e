"""``save`` and ``load``: checkpoints as safe archives, with PyTorch's ``weights_only`` rules.

Format: an ``.npz`` (a zip of ``.npy`` arrays) holding one member per tensor or NumPy array
(``t0``, ``a1``, ...), one per pickled part (``p2``, a uint8 array, only when something outside
the safe set is saved) and a structure header ``__autograd_gpu__.npy``: UTF-8 JSON (as a uint8
array) that describes the saved object and refers to the members by key.

The safe set, saved as JSON and arrays without any pickle, is what ``torch.load`` accepts with
``weights_only=True`` (its default since PyTorch 2.6): ``None``, ``bool``, ``int``, ``float``,
``complex``, ``str``, ``bytes``, ``bytearray``, ``list``, ``tuple``, ``dict``, ``set``,
``collections.OrderedDict`` (with its attributes, e.g. a state_dict's ``_metadata``),
``collections.Counter``, tensors and ``nn.Parameter``, ``Size``, dtypes and devices, each by
exact type (a subclass, e.g. a namedtuple, is not in it). So are NumPy arrays, scalars and dtypes
(of bool, integer, float and complex dtypes): stored as plain arrays, never pickled, but loaded
under ``weights_only=True`` only after the program allowlists what PyTorch would ask for
(``add_safe_globals([np._core.multiarray._reconstruct, np.ndarray, np.dtype,
np.dtypes.Float64DType])`` for a float64 array), with PyTorch's message otherwise.

Anything else (a whole ``nn.Module``, a namedtuple, a ``defaultdict``, an object of the
program's own class) is pickled, as ``torch.save`` does, with the tensors, NumPy data, dtypes,
devices and sizes inside it kept out of the pickle (persistent ids into the header). Such a part
loads with ``load(weights_only=False)`` (which runs whatever the pickle names: only for trusted
files), or with ``weights_only=True`` when every global it names is allowlisted
(``add_safe_globals``): then it is parsed in full first and interpreted with PyTorch's
weights-only rules, never by ``pickle``; otherwise ``load`` refuses, before unpickling anything,
with PyTorch's ``UnpicklingError: Weights only load failed...``. A checkpoint of state dicts,
optimizer and scheduler states, numbers and strings holds no pickle at all.

JSON nodes: ``null``, ``true``/``false``, ints, finite floats and strings are themselves; every
other value is an object tagged by ``"$"``: ``{"$": "list" | "tuple" | "set", "items": [...]}``,
``{"$": "dict" | "counter", "ordered": bool, "items": [[key, value], ...], "attrs"?: node}``
(keys are nodes too, so int and tuple keys survive), ``{"$": "float", "value": "inf" | "-inf" |
"nan"}``, ``{"$": "complex", "real", "imag"}``, ``{"$": "size", "items": [ints]}``,
``{"$": "tensor", "key", "dtype", "shape", "device", "requires_grad", "parameter"}``,
``{"$": "dtype", "name"}``, ``{"$": "device", "value"}``, ``{"$": "bytes" | "bytearray", "hex"}``,
``{"$": "ndarray", "key", "dtype", "shape", "fortran"}``, ``{"$": "npscalar", "dtype",
"value"}``, ``{"$": "npdtype", "dtype"}`` (NumPy dtype strings such as ``"<f4"``),
``{"$": "pickle", "key", "refs": [nodes]}`` (``refs[i]`` is persistent id ``i``).

Shared tensors: a tensor reached twice is stored once and loads as one tensor (as with
``torch.load``), and tensors that share all their data (``t.detach()``, ``t.data``, the tied
weights of a ``state_dict()``, a module's parameters and its state_dict) are stored once and load
sharing one storage (and version counter), each with its own ``requires_grad``. Views are stored
by value: only the elements a view shows are written, as their own array, and it loads as an
independent tensor (PyTorch writes the whole storage and keeps the view). A NumPy array reached
twice loads as one array. Containers reached twice load as copies, and a container that contains
itself cannot be saved (PyTorch pickles both).

Loading is bounded by the file: each member is read at most once whatever the header says, see
``_archive`` for the container checks (stored members only, no overlaps, declared sizes equal to
real sizes, CRCs) and ``_unpickle`` for the weights-only interpreter. Writing to a path is atomic
and cleans up after killed saves: see ``_atomic``.
"""

from __future__ import annotations

import collections
import io
import json
import math
import os
import pickle
import warnings
from typing import Any, Callable

# NOTE: numpy is imported here only for the file format, never for compute; tensors reach it
# through .cpu() and .numpy(), so any backend can be saved.
import numpy as np

from .. import dtypes
from ..device import device
from ..tensor import Size, Tensor
from . import _archive, _atomic, _decode, _safe_globals, _unpickle
from ._decode import SerializationError
from ._safe_globals import add_safe_globals, clear_safe_globals, get_safe_globals, safe_globals

__all__ = ["DEFAULT_PROTOCOL", "SerializationError", "SourceChangeWarning", "add_safe_globals",
           "clear_safe_globals", "get_safe_globals", "get_unsafe_globals_in_checkpoint", "load",
           "safe_globals", "save"]

DEFAULT_PROTOCOL = 2
_HEADER = "__autograd_gpu__"
_FORMAT = "autograd_gpu.save"
_VERSION = 1
_CONTAINERS = (dict, collections.OrderedDict, collections.Counter, list, tuple, set)


class SourceChangeWarning(Warning):
    """PyTorch's warning that a pickled module's source changed; never raised here (kept so that
    programs filtering it run unchanged)."""


# ---- save ----------------------------------------------------------------------------------

def _numpy_kind(obj: Any) -> str | None:
    """"ndarray", "npscalar" or "npdtype" for a NumPy object stored as plain data; else None
    (object, string, structured and extended-precision data are pickled)."""
    if type(obj) is np.ndarray:
        dt = obj.dtype
        kind = "ndarray"
    elif isinstance(obj, np.generic):
        dt = obj.dtype
        kind = "npscalar" if dt.itemsize <= (16 if dt.kind == "c" else 8) else ""
    elif isinstance(obj, np.dtype):
        dt = obj
        kind = "npdtype"
    else:
        return None
    simple = dt.kind in "biufc" and dt.fields is None and dt.subdtype is None
    return kind if simple and kind else None


class _Encoder:
    """Turns an object into a JSON node, collecting tensor and NumPy data as arrays and
    pickling what lies outside the safe set."""

    def __init__(self, pickle_module: Any, protocol: int) -> None:
        self.arrays: dict[str, Any] = {}
        self.pickle_module = pickle_module
        self.protocol = protocol
        self._active: set[int] = set()
        self._param = _decode.parameter_type()
        self._nodes: dict[int, dict[str, Any]] = {}  # id(tensor or array or pickled) -> node
        self._keys: dict[int, str] = {}  # id(tensor._data) -> the key its array is stored under
        # NOTE: what the ids above name stays alive until the save ends, so no id is reused:
        # pickling can reach temporaries (a __getstate__'s fresh tensors) that ``obj`` does not
        # keep alive.
        self._alive: list[Any] = []

    def _key(self, prefix: str, arr: Any) -> str:
        key = f"{prefix}{len(self.arrays)}"
        self.arrays[key] = arr
        return key

    def encode(self, obj: Any, path: str) -> Any:
        t = type(obj)
        if obj is None or t in (bool, str, int):
            return obj
        if t is float:
            if math.isfinite(obj):
                return obj
            return {"$": "float", "value": "nan" if math.isnan(obj) else
                    ("inf" if obj > 0 else "-inf")}
        if isinstance(obj, Tensor):
            return self._tensor(obj)
        if t is complex:
            return {"$": "complex", "real": self.encode(obj.real, path),
                    "imag": self.encode(obj.imag, path)}
        if t in (bytes, bytearray):
            return {"$": t.__name__, "hex": obj.hex()}
        if isinstance(obj, dtypes.dtype):
            return {"$": "dtype", "name": obj.name}
        if isinstance(obj, device):
            return {"$": "device", "value": str(obj)}
        if t is Size:
            return {"$": "size", "items": [int(n) for n in obj]}
        kind = _numpy_kind(obj)
        if kind is not None:
            return self._numpy(kind, obj, path)
        if t in _CONTAINERS:
            if id(obj) in self._active:
                raise ValueError(f"save: {path} contains itself; cannot save a cyclic structure")
            self._active.add(id(obj))
            try:
                return self._container(obj, path)
            finally:
                self._active.discard(id(obj))
        return self._pickled(obj, path)

    def _container(self, obj: Any, path: str) -> Any:
        if isinstance(obj, dict):
            items = [[self.encode(k, f"{path} key {k!r}"), self.encode(v, f"{path}[{k!r}]")]
                     for k, v in obj.items()]
            ordered = type(obj) is collections.OrderedDict
            node = {"$": "counter" if type(obj) is collections.Counter else "dict",
                    "ordered": ordered, "items": items}
            if ordered and vars(obj):
                node["attrs"] = self.encode(dict(vars(obj)), f"{path} attributes")
            return node
        items = [self.encode(v, f"{path}[{i}]") for i, v in enumerate(obj)]
        return {"$": type(obj).__name__, "items": items}

    def _tensor(self, t: Tensor) -> dict[str, Any]:
        node = self._nodes.get(id(t))
        if node is not None:
            return node
        # NOTE: tensors holding the very same array object (detach(), .data, tied weights)
        # share all their data: store it once. Views hold other array objects and are stored
        # by value.
        self._alive.append(t)
        key = self._keys.get(id(t._data))
        if key is None:
            # NOTE: C order, so loaded tensors are contiguous whatever view was saved (only the
            # view's elements are written, not its whole base).
            key = self._keys[id(t._data)] = self._key(
                "t", np.asarray(t.detach().cpu().numpy(), order="C"))
        node = self._nodes[id(t)] = {
            "$": "tensor", "key": key, "dtype": t.dtype.name, "shape": list(t.shape),
            "device": str(t.device), "requires_grad": bool(t.requires_grad),
            "parameter": self._param is not None and isinstance(t, self._param)}
        return node

    def _numpy(self, kind: str, obj: Any, path: str) -> dict[str, Any]:
        if kind == "npdtype":
            return {"$": "npdtype", "dtype": obj.str}
        if kind == "npscalar":
            return {"$": "npscalar", "dtype": obj.dtype.str, "value": self.encode(obj.item(), path)}
        node = self._nodes.get(id(obj))
        if node is None:
            self._alive.append(obj)
            # NOTE: a Fortran-order array is stored as its C-order transpose, so it loads in
            # Fortran order as from a pickle; any other layout loads C-contiguous.
            fortran = bool(obj.flags.f_contiguous and not obj.flags.c_contiguous)
            data = obj.T if fortran else obj if obj.flags.c_contiguous else obj.copy(order="C")
            node = self._nodes[id(obj)] = {
                "$": "ndarray", "key": self._key("a", data), "dtype": obj.dtype.str,
                "shape": list(obj.shape), "fortran": fortran}
        return node

    def _pickled(self, obj: Any, path: str) -> dict[str, Any]:
        node = self._nodes.get(id(obj))
        if node is not None:
            return node
        refs: list[Any] = []
        index: dict[int, int] = {}

        def persistent_id(o: Any) -> int | None:
            outside = (isinstance(o, (Tensor, dtypes.dtype, device)) or type(o) is Size
                       or _numpy_kind(o) is not None)
            if not outside:
                return None
            if id(o) not in index:
                self._alive.append(o)
                index[id(o)] = len(refs)
                refs.append(self.encode(o, f"{path} (inside)"))
            return index[id(o)]

        self._alive.append(obj)
        data = _unpickle.dumps(obj, persistent_id, self.pickle_module, self.protocol)
        node = self._nodes[id(obj)] = {
            "$": "pickle", "key": self._key("p", np.frombuffer(data, np.uint8)), "refs": refs}
        return node


_write_archive = _archive.write


def save(obj: Any, f: str | os.PathLike[str] | Any, pickle_module: Any = pickle,
         pickle_protocol: int = DEFAULT_PROTOCOL, _use_new_zipfile_serialization: bool = True,
         _disable_byteorder_record: bool = False) -> None:
    """Save ``obj`` to ``f``, a path or a writable binary file.

    The safe set (see the module docstring: tensors, containers, numbers, strings, bytes, None,
    ``Size``, dtypes, devices; NumPy arrays, scalars and dtypes as plain data) is written
    without any pickle. Anything else, such as a whole ``nn.Module``, is pickled as
    ``torch.save`` pickles it (with ``pickle_module`` and ``pickle_protocol``; the tensors in it
    stay plain arrays), and loads only with ``load(weights_only=False)`` or once the program
    allowlists its classes.

    Dtypes, shapes, devices, ``requires_grad``, container types (tuple, list, set,
    OrderedDict, Counter), dict key types and order, bool-vs-int and non-finite floats survive.
    A tensor reached twice is stored once, and so is the data of tensors sharing all of it
    (``detach()``, tied weights); views are stored by value (their own elements only) and load
    as independent tensors. Everything is encoded before the file is touched, so an object that
    cannot be saved leaves the file as it was, and writing to a path is atomic (a temp file
    renamed over it; temp files of killed saves are removed).

    Args:
        obj: what to save, e.g. ``model.state_dict()`` or ``optimizer.state_dict()``.
        f: a file name (str or PathLike; no extension is added) or a binary file object.
        pickle_module: the module that pickles objects outside the safe set.
        pickle_protocol: its protocol (2, PyTorch's default, is the one that
            ``load(weights_only=True)`` can read once the classes are allowlisted).

    Raises:
        ValueError: a container contains itself.
        pickle.PicklingError, TypeError, AttributeError: an object outside the safe set cannot
            be pickled (a lambda, a local class), as from ``torch.save``.

    Example:
        >>> save({"w": ones(2), "step": 3}, "ckpt.pt")
        >>> load("ckpt.pt")
        {'w': tensor([1., 1.]), 'step': 3}
    """
    enc = _Encoder(pickle_module, pickle_protocol)
    root = enc.encode(obj, "the object")
    header = {"format": _FORMAT, "version": _VERSION, "root": root}
    text = json.dumps(header, allow_nan=False, separators=(",", ":"))
    arrays = {_HEADER: np.frombuffer(text.encode("utf-8"), dtype=np.uint8), **enc.arrays}
    if hasattr(f, "write"):
        _write_archive(f, arrays)
    else:
        _atomic.replace_atomically(os.fspath(f), lambda fh: _write_archive(fh, arrays))


# ---- load ----------------------------------------------------------------------------------

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
                "reads only autograd_gpu.save archives and never runs a bare pickle")
    if head.startswith(b"\x93NUMPY"):
        return "it is a single .npy array, not an .npz archive written by autograd_gpu.save"
    return "it is not a zip/.npz archive"


def _open_archive(fh: Any, name: str) -> _archive.Archive:
    head = fh.read(8)
    fh.seek(0)
    why = _sniff(head)
    if why is not None:
        raise _decode.invalid(name, why, _decode.EmptyFileError if not head else
                              SerializationError)
    try:
        archive = _archive.Archive(fh)
    except _archive.ArchiveError as e:
        raise _decode.invalid(name, str(e)) from None
    if f"{_HEADER}.npy" not in archive.members:
        if any(n.endswith("data.pkl") for n in archive.members):
            why = ("it is a PyTorch checkpoint (torch.save's zip holds pickles); load it with "
                   "torch.load(..., weights_only=True) and re-save it with autograd_gpu.save")
        else:
            why = f"the archive has no {_HEADER} structure header (a plain .npz?)"
        raise _decode.invalid(name, why)
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
         pickle_module: Any = None, *, weights_only: bool | None = None,
         mmap: bool | None = None, **pickle_load_args: Any) -> Any:
    """Load an object written by ``save`` from ``f`` (a path or a readable binary file).

    ``weights_only`` (default True, as in PyTorch 2.6 and later) loads the safe set and what the
    program allowlisted with ``add_safe_globals``/``safe_globals``, and nothing else: a file
    holding a pickled part (a whole module, say) or NumPy data that is not allowlisted is
    refused with PyTorch's ``pickle.UnpicklingError: Weights only load failed...`` before
    anything in it is unpickled, and no code is run except the constructors the program
    allowlisted. ``weights_only=False`` unpickles pickled parts with ``pickle_module`` (which can
    run any code the file names: only for trusted files); files without pickled parts load the
    same either way. Loading costs at most what the file holds: each stored member is read once
    however often the header names it, only the uncompressed members ``save`` writes are
    accepted, and every declared size is checked against the file before anything is allocated.

    Args:
        f: the file name or binary file object.
        map_location: where tensors go: None (where they were saved), a device or device
            string (all of them there), a dict remapping saved device strings
            (``{'cuda:1': 'cuda:0'}``), or a callable ``(cpu_tensor, saved_location)`` that
            returns a tensor, or None to restore to the saved location.
        pickle_module: the module that unpickles pickled parts (implies
            ``weights_only=False`` when ``weights_only`` is not given).
        weights_only: see above; the environment variables ``TORCH_FORCE_WEIGHTS_ONLY_LOAD``
            and ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` act as in PyTorch.
        mmap: accepted for a file path (the data is read, not mapped); a file object raises
            PyTorch's ``ValueError``.
        pickle_load_args: passed to ``pickle_module.Unpickler`` (``weights_only=False`` only).

    Returns:
        The saved object, with fresh tensors (shared as they were when saved).

    Raises:
        pickle.UnpicklingError: ``weights_only`` refuses something in the file.
        SerializationError: (a ``RuntimeError``; an ``EOFError`` too for an empty file) for a
            corrupt, truncated, foreign or malformed file, naming the file and the problem.
        RuntimeError: a tensor would land on CUDA and CUDA is not available.
        FileNotFoundError: there is no file ``f``.
    """
    weights_only = _safe_globals.weights_only_mode(weights_only, pickle_module)
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is specified")
    if pickle_load_args and weights_only:
        warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    if not weights_only:
        pickle_module = pickle if pickle_module is None else pickle_module
        pickle_load_args.setdefault("encoding", "utf-8")
    is_path = isinstance(f, (str, os.PathLike))
    if mmap and not is_path:
        raise ValueError("f must be a file path in order to use the mmap argument")
    name = _name_of(f)
    options = (map_location, weights_only, pickle_module, pickle_load_args)
    if not is_path and hasattr(f, "read"):
        fh = f if _seekable(f) else io.BytesIO(f.read())
        return _load_from(fh, name, *options)
    with open(os.fspath(f), "rb") as fh:
        return _load_from(fh, name, *options)


def _seekable(f: Any) -> bool:
    try:
        return bool(f.seekable())
    except (AttributeError, OSError, ValueError):
        return False


def _load_from(fh: Any, name: str, map_location: Any, weights_only: bool, pickle_module: Any,
               pickle_load_args: dict[str, Any]) -> Any:
    archive = _open_archive(fh, name)
    root = _read_header(archive, name)
    decoder = _decode.Decoder(archive, name, map_location, weights_only, pickle_module,
                              pickle_load_args)
    try:
        if weights_only:
            decoder.check(root)
        obj = decoder.decode(root)
    except RecursionError:
        raise decoder.fail("the structure is nested too deeply") from None
    except pickle.UnpicklingError as e:
        if not weights_only:
            raise
        raise _safe_globals.weights_only_failed(str(e)) from None
    unused = sorted(set(archive.members) - {f"{_HEADER}.npy"} - decoder.used_members())
    if unused:
        raise decoder.fail(f"member {unused[0]!r:.80} is not referred to by the structure header")
    return obj


def get_unsafe_globals_in_checkpoint(f: str | os.PathLike[str] | Any) -> list[str]:
    """The globals that loading ``f`` with ``weights_only=True`` needs and that are neither
    allowed by default nor allowlisted: those named by its pickled parts and those PyTorch's
    pickle of its NumPy data would name, each once, as PyTorch's function of this name lists
    them (found without unpickling anything).

    Raises:
        SerializationError: ``f`` is not a file written by ``save``.
    """
    name = _name_of(f)
    if hasattr(f, "read"):
        fh = f if _seekable(f) else io.BytesIO(f.read())
        return _unsafe_globals(fh, name)
    with open(os.fspath(f), "rb") as fh:
        return _unsafe_globals(fh, name)


def _unsafe_globals(fh: Any, name: str) -> list[str]:
    archive = _open_archive(fh, name)
    decoder = _decode.Decoder(archive, name, None, True)
    found: dict[str, None] = {}
    stack = [_read_header(archive, name)]
    while stack:
        node = stack.pop()
        if isinstance(node, (list, dict)):
            stack.extend(reversed(node if isinstance(node, list) else list(node.values())))
        if not isinstance(node, dict) or node.get("$") not in ("pickle", *_decode.NUMPY_TAGS):
            continue
        if node["$"] == "pickle":
            try:
                names = _unpickle.globals_in(decoder.pickle_bytes(str(node.get("key"))))
            except _unpickle.CorruptPickle as e:
                raise decoder.fail(f"a pickle is corrupt ({e})") from None
            found.update(dict.fromkeys(names))
        else:
            kind, dt = node["$"], decoder.np_dtype(node)
            found.update(dict.fromkeys(_safe_globals.numpy_globals(kind, dt.str)))
    return [g for g in found if not _safe_globals.is_allowed(g)]
