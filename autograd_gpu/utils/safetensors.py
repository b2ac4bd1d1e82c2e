"""``.safetensors`` files, mirroring ``safetensors.torch``: ``save_file``, ``load_file``,
``save`` and ``load``, on the ``safetensors`` package's NumPy API (the ``safetensors`` extra).

The format is the Hugging Face one (an 8-byte header length, a JSON header of names, dtypes,
shapes and byte ranges, then the raw little-endian data), so files move between this framework,
``safetensors.torch`` and every other reader. Checks as ``safetensors.torch``'s, with its
errors: a dict of str to tensors, every tensor contiguous, no two tensors sharing memory (one
would come back as a copy). Files are written atomically (a temp file renamed over the target);
loading reads what the header describes, which the ``safetensors`` library validates (a wrong
header length, overlapping or out-of-file byte ranges, a truncated file raise its
``SafetensorError``) before anything is allocated for the data.

Example:
    >>> from autograd_gpu.utils.safetensors import load_file, save_file
    >>> save_file(model.state_dict(), "model.safetensors", metadata={"format": "pt"})
    >>> model.load_state_dict(load_file("model.safetensors"))
"""

from __future__ import annotations

import os
from typing import Any

from ..tensor import Tensor

__all__ = ["load", "load_file", "save", "save_file"]


def _numpy_api() -> Any:
    try:
        import safetensors.numpy as api
    except ImportError:
        raise ImportError("autograd_gpu.utils.safetensors needs the safetensors package: pip "
                          "install 'autograd_gpu[safetensors]' (or pip install "
                          "safetensors)") from None
    return api


def _root(t: Tensor) -> tuple[Any, ...]:
    """The memory ``t`` lives in: its device and the array that owns the buffer."""
    a = t._data
    while getattr(a, "base", None) is not None:
        a = a.base
    return (str(t._device), id(a))


def _arrays(tensors: Any) -> dict[Any, Any]:
    """Host arrays of ``tensors`` after ``safetensors.torch``'s checks (module docstring)."""
    if not isinstance(tensors, dict):
        raise ValueError(f"Expected a dict of [str, torch.Tensor] but received {type(tensors)}")
    for k, v in tensors.items():
        if not isinstance(v, Tensor):
            raise ValueError(f"Key `{k}` is invalid, expected torch.Tensor but received "
                             f"{type(v)}")
    groups: dict[tuple[Any, ...], set[Any]] = {}
    for k, v in tensors.items():
        if v.numel():
            groups.setdefault(_root(v), set()).add(k)
    shared = [names for names in groups.values() if len(names) > 1]
    if shared:
        raise RuntimeError(f"""
            Some tensors share memory, this will lead to duplicate memory on disk and potential differences when loading them again: {shared}.
            A potential way to correctly save your model is to use `save_model`.
            More information at https://huggingface.co/docs/safetensors
            """)
    out: dict[Any, Any] = {}
    for k, v in tensors.items():
        if not v.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{k}` which is not allowed. It "
                "either means you are trying to save tensors which are reference of each other "
                "in which case it's recommended to save only the full tensors, and reslice at "
                "load time, or simply call `.contiguous()` on your tensor to pack it before "
                "saving.")
        out[k] = v.detach().cpu().numpy()
    return out


def save(tensors: dict[str, Tensor], metadata: dict[str, str] | None = None) -> bytes:
    """The bytes of a ``.safetensors`` file holding ``tensors`` (and ``metadata``)."""
    return bytes(_numpy_api().save(_arrays(tensors), metadata=metadata))


def save_file(tensors: dict[str, Tensor], filename: str | os.PathLike[str],
              metadata: dict[str, str] | None = None) -> None:
    """Write ``tensors`` (and ``metadata``, str to str) to ``filename``, atomically."""
    from ._atomic import replace_atomically

    data = save(tensors, metadata)
    replace_atomically(os.fspath(filename), lambda f: f.write(data))


def _tensors(arrays: dict[str, Any], device: Any) -> dict[str, Tensor]:
    from ..creation import from_numpy

    out = {k: from_numpy(a) for k, a in arrays.items()}
    if str(device) != "cpu":
        out = {k: v.to(device) for k, v in out.items()}
    return out


def load(data: bytes, device: Any = "cpu") -> dict[str, Tensor]:
    """The tensors of a ``.safetensors`` file's bytes."""
    return _tensors(_numpy_api().load(data), device)


def load_file(filename: str | os.PathLike[str], device: Any = "cpu") -> dict[str, Tensor]:
    """The tensors of the ``.safetensors`` file ``filename``, on ``device``."""
    return _tensors(_numpy_api().load_file(os.fspath(filename)), device)
