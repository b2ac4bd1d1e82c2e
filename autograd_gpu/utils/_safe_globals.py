"""The ``weights_only`` allowlist of ``load``: PyTorch's ``add_safe_globals`` API and messages.

``load(weights_only=True)`` (the default, as in PyTorch 2.6 and later) rebuilds the safe set of
types (see ``serialization``) and nothing else unless the program allowlists more, exactly as
``torch.load`` does: ``add_safe_globals([cls_or_fn, (cls_or_fn, "module.name"), ...])``, the
``safe_globals([...])`` context manager, ``get_safe_globals()`` and ``clear_safe_globals()``.
What needs allowlisting is what PyTorch's weights-only unpickler asks for: the globals that a
protocol-2 pickle of the object names (``numpy._core.multiarray._reconstruct``,
``numpy.ndarray``, ``numpy.dtype`` and the array's dtype class for a NumPy array; a namedtuple's
class; a module's class and the classes it holds), and the refusals carry PyTorch's messages.
"""

from __future__ import annotations

import collections
import functools
import io
import os
import pickle
import pickletools
import warnings
from typing import Any

# NOTE: numpy is imported here only to name the globals a NumPy object's pickle uses.
import numpy as np

# NOTE: modules never allowlisted, whatever the program adds (PyTorch's blocklist).
BLOCKED_MODULES = ("sys", "os", "posix", "nt")

UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in `torch.load` "
    "from `False` to `True`. Re-running `torch.load` with `weights_only` set to `False` will "
    "likely succeed, but it can result in arbitrary code execution. Do it only if you got the "
    "file from a trusted source.")
_DOCS_MESSAGE = ("\n\nCheck the documentation of torch.load to learn more about types accepted by "
                 "default with weights_only https://pytorch.org/docs/stable/generated/torch.load."
                 "html.")

_marked: set[Any] = set()  # what add_safe_globals added (callables or (callable, name) pairs)


def add_safe_globals(safe_globals: list[Any]) -> None:
    """Mark ``safe_globals`` (classes or functions, or ``(obj, "module.qualname")`` pairs) as
    safe for ``load(weights_only=True)``: an object that needs them loads instead of being
    refused. As in PyTorch, each is named ``f"{obj.__module__}.{obj.__qualname__}"`` unless the
    pair gives the name.

    Example:
        >>> add_safe_globals([np._core.multiarray._reconstruct, np.ndarray, np.dtype,
        ...                   np.dtypes.Int64DType])
        >>> load("arrays.pt")  # a file holding NumPy int64 arrays
    """
    global _marked
    _marked = _marked.union(set(safe_globals))


def get_safe_globals() -> list[Any]:
    """The globals added by ``add_safe_globals`` (and active ``safe_globals`` contexts)."""
    return list(_marked)


def clear_safe_globals() -> None:
    """Forget every global added by ``add_safe_globals``."""
    global _marked
    _marked = set()


class safe_globals:  # noqa: N801  (PyTorch's name)
    """Context manager that allowlists ``safe_globals`` for ``load(weights_only=True)`` inside
    its ``with`` block, as ``add_safe_globals`` does, and removes them on leaving it."""

    def __init__(self, safe_globals: list[Any]) -> None:
        self.safe_globals = safe_globals

    def __enter__(self) -> None:
        add_safe_globals(self.safe_globals)

    def __exit__(self, *exc: Any) -> None:
        global _marked
        _marked = _marked - set(self.safe_globals)


def user_allowed() -> dict[str, Any]:
    """``{"module.qualname": obj}`` for every allowlisted global (PyTorch's checks on pairs)."""
    out: dict[str, Any] = {}
    for entry in _marked:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError("Expected tuple of length 2 (global, str of callable full path), "
                                 f"but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError("Expected second item in tuple to be str of callable full path, "
                                f"but got: {type(entry[1])}")
            out[entry[1]] = entry[0]
        else:
            out[f"{entry.__module__}.{entry.__qualname__}"] = entry
    return out


def _safe_encode(text: Any, encoding: Any = "utf-8") -> bytes:
    # NOTE: only what pickle writes for bytes (protocol 2): a str encoded as latin1. A codec
    # chosen by the file could do anything; so could a huge count given to bytearray below.
    if type(text) is not str or encoding != "latin1":
        raise pickle.UnpicklingError("_codecs.encode is allowed only as pickle uses it for bytes")
    return text.encode("latin1")


def _safe_bytearray(*args: Any) -> bytearray:
    if args and (len(args) > 1 or type(args[0]) is not bytes):
        raise pickle.UnpicklingError("bytearray is allowed only as pickle uses it (from bytes)")
    return bytearray(*args)


# NOTE: what PyTorch allows by default that a pickle of the safe types can name. The values are
# what the restricted unpickler calls (two of them check their arguments first).
DEFAULT_ALLOWED: dict[str, Any] = {
    "collections.OrderedDict": collections.OrderedDict,
    "collections.Counter": collections.Counter,
    "_codecs.encode": _safe_encode,
    "builtins.bytearray": _safe_bytearray,
    "builtins.set": set,
    "builtins.complex": complex,
}


def unsupported_global(full_path: str) -> pickle.UnpicklingError:
    """PyTorch's refusal of a global that is not allowlisted (before the weights-only wrapper)."""
    module = full_path.rpartition(".")[0]
    if module in BLOCKED_MODULES:
        return pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {full_path} whose "
                                      f"module {module} is blocked.")
    if full_path.startswith("builtins."):
        full_path = full_path[len("builtins."):]
    return pickle.UnpicklingError(
        f"Unsupported global: GLOBAL {full_path} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{full_path}])` or the "
        f"`torch.serialization.safe_globals([{full_path}])` context manager to allowlist this "
        "global if you trust this class/function.")


def cannot_build(cls: Any) -> pickle.UnpicklingError:
    return pickle.UnpicklingError("Can only build Tensor, Parameter, OrderedDict or types "
                                  f"allowlisted via `add_safe_globals`, but got {cls}")


def weights_only_failed(message: str) -> pickle.UnpicklingError:
    """``message`` wrapped as ``torch.load`` wraps a weights-only refusal."""
    if "was not an allowed global by default." in message:
        text = ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the "
                f"checkpoint\033[0m. \n\t(1) {UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
                "`weights_only=True` please check the recommended steps in the following error "
                "message.\n\tWeightsUnpickler error: " + message)
    else:
        text = f"Weights only load failed. {UNSAFE_MESSAGE}\n"
        if "is blocked" not in message:
            text += ("Please file an issue with the following so that we can make "
                     "`weights_only=True` compatible with your use case: WeightsUnpickler "
                     "error: ")
        text += "\n\n" + message
    return pickle.UnpicklingError(text + _DOCS_MESSAGE)


def resolve_global(module: str, name: str) -> Any:
    """The allowlisted object named ``module.name``, or PyTorch's refusal."""
    full_path = f"{module}.{name}"
    if module in BLOCKED_MODULES:
        raise unsupported_global(full_path)
    if full_path in DEFAULT_ALLOWED:
        return DEFAULT_ALLOWED[full_path]
    allowed = user_allowed()
    if full_path in allowed:
        return allowed[full_path]
    raise unsupported_global(full_path)


def is_allowed(full_path: str) -> bool:
    """Whether the global ``module.name`` is allowed by default or allowlisted."""
    if full_path.rpartition(".")[0] in BLOCKED_MODULES:
        return False
    return full_path in DEFAULT_ALLOWED or full_path in user_allowed()


_TRUE = ("1", "y", "yes", "true")


def weights_only_mode(weights_only: bool | None, pickle_module: Any) -> bool:
    """PyTorch's choice: the argument, else True unless a ``pickle_module`` is given; the
    ``TORCH_FORCE_WEIGHTS_ONLY_LOAD`` / ``TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD`` variables
    override it (the second only when the argument was not given)."""
    force = os.getenv("TORCH_FORCE_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    force_no = os.getenv("TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD", "0").lower() in _TRUE
    if force and force_no:
        raise RuntimeError("Only one of `TORCH_FORCE_WEIGHTS_ONLY_LOAD` or "
                           "`TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD` should be set, but both were set.")
    if force:
        return True
    if weights_only is None:
        if force_no:
            warnings.warn("Environment variable TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD detected, since "
                          "the`weights_only` argument was not explicitly passed to `torch.load`, "
                          "forcing weights_only=False.", UserWarning, stacklevel=3)
            return False
        return pickle_module is None
    return bool(weights_only)


# ---- NumPy objects: what their pickles would need -----------------------------------------------

def _sample(kind: str, dtype: Any) -> Any:
    if kind == "ndarray":
        return np.zeros(1, dtype)
    if kind == "npscalar":
        return np.zeros((), dtype)[()]
    return dtype


@functools.lru_cache(maxsize=256)
def numpy_globals(kind: str, dtype_str: str) -> tuple[str, ...]:
    """The globals (in order) that a protocol-2 pickle of a NumPy ``kind`` ("ndarray",
    "npscalar" or "npdtype") of dtype ``dtype_str`` names, as PyTorch's unpickler meets them,
    leaving out those allowed by default. Found by pickling a sample (no data), so the names
    follow the installed NumPy (``numpy._core`` or ``numpy.core``)."""
    data = pickle.dumps(_sample(kind, np.dtype(dtype_str)), protocol=2, fix_imports=False)
    names = [str(arg).replace(" ", ".") for op, arg, _ in pickletools.genops(io.BytesIO(data))
             if op.name == "GLOBAL"]
    return tuple(dict.fromkeys(n for n in names if n not in DEFAULT_ALLOWED))


def check_numpy(kind: str, dtype: Any) -> None:
    """Raise PyTorch's weights-only refusal unless everything that ``torch.load`` would need to
    rebuild this NumPy object is allowlisted. Nothing allowlisted is called: ``load`` rebuilds
    the object from the archive's plain array data itself."""
    for full_path in numpy_globals(kind, dtype.str):
        resolve_global(*full_path.rsplit(".", 1))
    if type(dtype) not in user_allowed().values():
        raise cannot_build(type(dtype))
