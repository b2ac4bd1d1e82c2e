"""``torch.hub``, a stub: its cache directory works, downloading and loading models does not.

``get_dir`` and ``set_dir`` behave as PyTorch's (``$TORCH_HOME/hub``, ``$TORCH_HOME`` defaulting
to ``$XDG_CACHE_HOME/torch``, that to ``~/.cache``). ``load``, ``list``, ``help``,
``load_state_dict_from_url`` and ``download_url_to_file`` raise ``NotImplementedError`` naming
the function when called: hub models are PyTorch code and PyTorch checkpoint files, and
autograd_gpu neither downloads nor runs them. The module imports, so a program that only has
``import torch.hub`` at the top runs.
"""

from __future__ import annotations

import os
import warnings

from .compat._stubs import unsupported

__all__ = ["download_url_to_file", "get_dir", "help", "list", "load", "load_state_dict_from_url",
           "set_dir"]

_hub_dir: str | None = None


def _torch_home() -> str:
    cache = os.getenv("XDG_CACHE_HOME", "~/.cache")
    return os.path.expanduser(os.getenv("TORCH_HOME", os.path.join(cache, "torch")))


def get_dir() -> str:
    """The hub cache folder: the one ``set_dir`` gave, else ``$TORCH_HOME/hub``.

    Warns, as PyTorch does, when the old ``TORCH_HUB`` variable is set.
    """
    if os.getenv("TORCH_HUB"):
        warnings.warn("TORCH_HUB is deprecated, please use env TORCH_HOME instead", stacklevel=2)
    if _hub_dir is not None:
        return _hub_dir
    return os.path.join(_torch_home(), "hub")


def set_dir(d: str | os.PathLike[str]) -> None:
    """Use folder ``d`` (``~`` expanded) as the hub cache from now on."""
    global _hub_dir
    _hub_dir = os.path.expanduser(d)


_WHY = "torch.hub downloads and runs PyTorch code and checkpoints, which autograd_gpu does not"
load = unsupported("torch.hub.load", _WHY)
list = unsupported("torch.hub.list", _WHY)  # noqa: A001  (torch.hub's name)
help = unsupported("torch.hub.help", _WHY)  # noqa: A001  (torch.hub's name)
load_state_dict_from_url = unsupported("torch.hub.load_state_dict_from_url", _WHY)
download_url_to_file = unsupported("torch.hub.download_url_to_file",
                                   "autograd_gpu does not download files")
