"""``load``'s decoder: the saved object rebuilt from the JSON structure header and the arrays.

Every node is checked: a malformed one raises ``SerializationError``, never a stray KeyError.
Each archive member is read at most once (tensor data, NumPy data, pickles alike) and nodes
naming one member share what it gives, so a header naming one member a million times costs a
million references, not a million copies.

With ``weights_only`` (``check`` before ``decode``), NumPy nodes and pickled parts must be
allowlisted (``_safe_globals``) and pickles are parsed in full, and refused, before any of them
is unpickled; the refusal is a ``pickle.UnpicklingError`` that ``load`` words as PyTorch does.
"""

from __future__ import annotations

import collections
import math
import re
from typing import Any

# NOTE: numpy is imported here only for the file format, never for compute.
import numpy as np

from .. import dtypes
from ..backends import cuda_support
from ..device import as_device, device
from ..tensor import Size, Tensor
from . import _archive, _safe_globals, _unpickle

_NONFINITE = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}
_TAGS = ("list", "tuple", "dict", "counter", "set", "float", "complex", "dtype", "device", "bytes",
         "bytearray", "size", "tensor", "ndarray", "npscalar", "npdtype", "pickle")
# NOTE: what a pickled part may refer to outside itself (what save's persistent_id routes).
_REF_TAGS = ("tensor", "dtype", "device", "size", "ndarray", "npscalar", "npdtype")
NUMPY_TAGS = ("ndarray", "npscalar", "npdtype")
_NP_DTYPE = re.compile(r"[<>|=][biufc][0-9]{1,2}")
_CUDA_MISSING = ("Attempting to deserialize object on a CUDA device but torch.cuda.is_available() "
                 "is False. If you are running on a CPU-only machine, please use torch.load with "
                 "map_location=torch.device('cpu') to map your storages to the CPU.")


class SerializationError(RuntimeError):
    """A file that ``load`` refuses: corrupt, truncated, foreign (a pickle, a torch checkpoint,
    a plain .npz) or malformed. The message names the file and what is wrong."""


class EmptyFileError(SerializationError, EOFError):
    """An empty file: an ``EOFError`` too, as ``torch.load`` raises for one."""


def invalid(name: str, what: str, cls: type[SerializationError] = SerializationError
            ) -> SerializationError:
    return cls(f"load: {name} is not a valid autograd_gpu.save file: {what}")


def parameter_type() -> Any:
    try:
        from ..nn import Parameter
    except ImportError:
        return None
    return Parameter


def _restore(t: Tensor, location: Any) -> Tensor:
    """``t`` (on the CPU) moved to ``location``, a device or a device string."""
    dev = device(location) if isinstance(location, (str, device)) else location
    if not isinstance(dev, device):
        raise TypeError(f"load: map_location gave {type(location).__name__}; expected a device, "
                        "a device string, a dict of them or a callable")
    if dev.type == "cuda" and not cuda_support.is_available():
        raise RuntimeError(f"{_CUDA_MISSING} ({cuda_support._INSTALL_HINT})")
    return t.to(as_device(dev))


class Decoder:
    """Rebuilds the saved object from its JSON node tree and the archive's members."""

    def __init__(self, archive: _archive.Archive, name: str, map_location: Any,
                 weights_only: bool, pickle_module: Any = None,
                 pickle_load_args: dict[str, Any] | None = None) -> None:
        self.archive = archive
        self.name = name
        self.map_location = map_location
        self.weights_only = weights_only
        self.pickle_module = pickle_module
        self.pickle_load_args = pickle_load_args or {}
        self.storages: dict[str, tuple[str, list[int], str, Tensor]] = {}
        self.tensors: dict[tuple[Any, ...], Tensor] = {}
        self.arrays: dict[str, tuple[str, list[int], bool, Any]] = {}
        self.pickles: dict[str, Any] = {}
        self._pickle_data: dict[str, bytes] = {}
        self._pickle_ops: dict[str, list[tuple[str, Any]]] = {}
        self._unpickling: set[str] = set()

    def fail(self, what: str) -> SerializationError:
        return invalid(self.name, what)

    def used_members(self) -> set[str]:
        return {f"{key}.npy" for key in [*self.storages, *self.arrays, *self.pickles]}

    def field(self, node: dict[str, Any], key: str, kind: type | tuple[type, ...]) -> Any:
        value = node.get(key)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise self.fail(f"{node.get('$')!r} node has a bad {key!r} field: {value!r:.80}")
        return value

    # ---- weights_only: everything checked before anything is unpickled --------------------

    def check(self, root: Any) -> None:
        """Refuse (``pickle.UnpicklingError``, PyTorch's inner message) a NumPy node or pickled
        part that ``weights_only`` does not allow, in the order ``torch.load`` would meet them."""
        stack = [root]
        while stack:
            node = stack.pop()
            if isinstance(node, list):
                stack.extend(reversed(node))
                continue
            if not isinstance(node, dict):
                continue
            tag = node.get("$")
            if tag in NUMPY_TAGS:
                _safe_globals.check_numpy(tag, self.np_dtype(node))
            elif tag == "pickle":
                self._scan(self.field(node, "key", str))
            stack.extend(reversed(list(node.values())))

    def _member(self, key: str) -> Any:
        member = f"{key}.npy"
        if member not in self.archive.members or key.startswith("__"):
            raise self.fail(f"data {key!r:.80} is missing from the archive")
        try:
            return self.archive.read(member)
        except _archive.ArchiveError as e:
            raise self.fail(f"cannot read data {key!r}: {e}") from None

    def pickle_bytes(self, key: str) -> bytes:
        """The pickled part ``key``, read once."""
        if key not in self._pickle_data:
            if key in self.storages or key in self.arrays:
                raise self.fail(f"member {key!r:.80} is named as both a pickle and an array")
            raw = self._member(key)
            if raw.dtype != np.uint8 or raw.ndim != 1:
                raise self.fail(f"pickle {key!r} is {raw.dtype}{list(raw.shape)}, not uint8[n]")
            self._pickle_data[key] = raw.tobytes()
        return self._pickle_data[key]

    def _scan(self, key: str) -> list[tuple[str, Any]]:
        if key not in self._pickle_ops:
            try:
                self._pickle_ops[key] = _unpickle.scan(self.pickle_bytes(key))
            except _unpickle.CorruptPickle as e:
                raise self.fail(f"pickle {key!r} is corrupt ({e})") from None
        return self._pickle_ops[key]

    # ---- nodes ----------------------------------------------------------------------------

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

    def _set(self, node: dict[str, Any]) -> set[Any]:
        return {self._hashable(self.decode(v)) for v in self.field(node, "items", list)}

    def _size(self, node: dict[str, Any]) -> Size:
        items = self.field(node, "items", list)
        if not all(type(n) is int for n in items):
            raise self.fail(f"'size' node has a bad 'items' field: {items!r:.80}")
        return Size(items)

    def _hashable(self, key: Any) -> Any:
        try:
            hash(key)
        except TypeError:
            raise self.fail(f"a dict key or set item is unhashable: {key!r:.80}") from None
        return key

    def _dict(self, node: dict[str, Any], out: Any = None) -> Any:
        if out is None:
            out = collections.OrderedDict() if node.get("ordered") else {}
        for pair in self.field(node, "items", list):
            if not isinstance(pair, list) or len(pair) != 2:
                raise self.fail("a dict entry is not a [key, value] pair")
            key = self._hashable(self.decode(pair[0]))
            out[key] = self.decode(pair[1])
        if "attrs" in node and type(out) is collections.OrderedDict:
            # NOTE: an OrderedDict's attributes (a state_dict's ``_metadata``), as PyTorch's
            # weights-only BUILD restores them; never dunder names.
            attrs = self.decode(node["attrs"])
            if type(attrs) is not dict or not all(type(k) is str and not k.startswith("__")
                                                  for k in attrs):
                raise self.fail("bad 'attrs' of an OrderedDict")
            out.__dict__.update(attrs)
        return out

    def _counter(self, node: dict[str, Any]) -> collections.Counter[Any]:
        out: collections.Counter[Any] = self._dict(node, collections.Counter())
        return out

    def _float(self, node: dict[str, Any]) -> float:
        value = self.field(node, "value", str)
        if value not in _NONFINITE:
            raise self.fail(f"bad non-finite float {value!r:.80}")
        return _NONFINITE[value]

    def _complex(self, node: dict[str, Any]) -> complex:
        parts = [self.decode(node.get(k)) for k in ("real", "imag")]
        if not all(type(p) in (int, float) for p in parts):
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

    def _bytearray(self, node: dict[str, Any]) -> bytearray:
        return bytearray(self._bytes(node))

    # ---- NumPy ----------------------------------------------------------------------------

    def np_dtype(self, node: dict[str, Any]) -> Any:
        """The NumPy dtype a NumPy node names (a plain bool, integer, float or complex one)."""
        text = self.field(node, "dtype", str)
        if _NP_DTYPE.fullmatch(text) is None:
            raise self.fail(f"bad NumPy dtype {text!r:.80}")
        try:
            return np.dtype(text)
        except TypeError as e:
            raise self.fail(f"bad NumPy dtype {text!r:.80} ({e})") from e

    def _npdtype(self, node: dict[str, Any]) -> Any:
        return self.np_dtype(node)

    def _npscalar(self, node: dict[str, Any]) -> Any:
        dt = self.np_dtype(node)
        value = self.decode(node.get("value"))
        if type(value) not in (bool, int, float, complex):
            raise self.fail(f"bad NumPy scalar value {value!r:.80}")
        try:
            return np.array(value, dtype=dt)[()]
        except (OverflowError, TypeError, ValueError) as e:
            raise self.fail(f"NumPy scalar {value!r:.80} does not fit {dt} ({e})") from None

    def _ndarray(self, node: dict[str, Any]) -> Any:
        key = self.field(node, "key", str)
        dt = self.np_dtype(node)
        shape = self.field(node, "shape", list)
        fortran = node.get("fortran") is True
        if not all(type(n) is int for n in shape):
            raise self.fail(f"'ndarray' node has a bad 'shape' field: {shape!r:.80}")
        if key in self.arrays:
            stored = self.arrays[key]
            if stored[:3] != (dt.str, shape, fortran):
                raise self.fail(f"NumPy data {key!r} is named with two dtypes, shapes or orders")
            return stored[3]
        if key in self.storages or key in self._pickle_data:
            raise self.fail(f"member {key!r:.80} is named as both a NumPy array and other data")
        arr = self._member(key)
        # NOTE: stored as a C-order array (a Fortran-order one as its C-order transpose).
        want = shape[::-1] if fortran else shape
        if arr.dtype != dt.newbyteorder("=") or list(arr.shape) != want:
            raise self.fail(f"NumPy data {key!r} is {arr.dtype.str}{list(arr.shape)}, but the "
                            f"header says {dt.str}{want}")
        # NOTE: in native byte order whatever order was saved, as NumPy's unpickling gives it.
        arr = arr.T if fortran else arr
        self.arrays[key] = (dt.str, shape, fortran, arr)
        return arr

    # ---- pickled parts ----------------------------------------------------------------------

    def _pickle(self, node: dict[str, Any]) -> Any:
        key = self.field(node, "key", str)
        refs = self.field(node, "refs", list)
        if key in self.pickles:
            return self.pickles[key]
        if key in self._unpickling:
            raise self.fail(f"pickle {key!r:.80} refers to itself")
        self._unpickling.add(key)

        def persistent_load(pid: Any) -> Any:
            if type(pid) is not int or not 0 <= pid < len(refs):
                raise self.fail(f"pickle {key!r} has a bad persistent id {pid!r:.80}")
            ref = refs[pid]
            if not isinstance(ref, dict) or ref.get("$") not in _REF_TAGS:
                raise self.fail(f"pickle {key!r} refers to {str(ref)[:80]!r}")
            return self.decode(ref)

        try:
            if self.weights_only:
                obj = _unpickle.run(self._scan(key), persistent_load)
            else:
                obj = _unpickle.loads_trusted(self.pickle_bytes(key), persistent_load,
                                              self.pickle_module, **self.pickle_load_args)
        except _unpickle.CorruptPickle as e:
            raise self.fail(f"pickle {key!r} is corrupt ({e})") from None
        finally:
            self._unpickling.discard(key)
        self.pickles[key] = obj
        return obj

    # ---- tensors ----------------------------------------------------------------------------

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
            if parameter and (param := parameter_type()) is not None:
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
        if key.startswith("__") or member not in self.archive.members:
            raise self.fail(f"tensor data {key!r:.80} is missing from the archive")
        if key in self.arrays or key in self._pickle_data:
            raise self.fail(f"member {key!r:.80} is named as both a tensor and other data")
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
