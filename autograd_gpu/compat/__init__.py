"""``autograd_gpu.compat``: the ``torch`` import hook behind ``autograd-gpu run``.

With the hook installed, ``import torch`` and every ``torch.*`` submodule resolve to autograd_gpu
for this process only: ``torch`` is ``autograd_gpu``, ``torch.nn.functional`` is
``autograd_gpu.nn.functional``, ``torch.utils.data`` is ``autograd_gpu.utils.data``, and so on,
as the very same module objects (``torch.nn is autograd_gpu.nn``). Nothing named ``torch`` is
written to disk, and other processes see the real PyTorch (or none). A submodule autograd_gpu
does not have fails with ``ModuleNotFoundError: autograd_gpu does not provide torch.X``.

Scripts: ``autograd-gpu run script.py [args...]`` (see ``autograd_gpu/run.py``) installs the
hook and runs the script as ``python script.py`` would. Notebooks and interactive sessions::

    import autograd_gpu.compat
    autograd_gpu.compat.install()   # before anything imports torch
    import torch                    # autograd_gpu

NOTE: the hook lives in this process; worker processes started with the ``spawn`` or
``forkserver`` method (``multiprocessing``, a DataLoader given such a context) do not inherit it,
while forked ones (the DataLoader's default on Linux) do.
"""

from __future__ import annotations

import sys
import types

from ._hook import ROOT, TorchFinder, is_ours

__all__ = ["TorchFinder", "install", "is_installed", "real_torch", "uninstall"]


def _torch_names() -> list[str]:
    return [n for n in list(sys.modules) if n == ROOT or n.startswith(ROOT + ".")]


def real_torch() -> types.ModuleType | None:
    """A module of the real PyTorch already imported in this process, or None."""
    for name in sorted(_torch_names(), key=len):  # ``torch`` itself first
        module = sys.modules.get(name)
        if module is not None and not is_ours(module):
            return module
    return None


def is_installed() -> bool:
    """True while the ``torch`` import hook is installed in this process."""
    return any(isinstance(f, TorchFinder) for f in sys.meta_path)


def refusal(module: types.ModuleType) -> str:
    """Why the hook cannot be installed once ``module`` (real PyTorch) is imported."""
    where = getattr(module, "__file__", None) or "?"
    return (f"the real PyTorch is already imported in this process ({module.__name__} from "
            f"{where}), so `torch` can no longer be made to mean autograd_gpu. Install the "
            "hook before anything imports torch: call autograd_gpu.compat.install() first "
            "(in a notebook, restart the kernel), or run the script with `autograd-gpu run`.")


def install() -> None:
    """Make ``import torch`` and ``torch.*`` resolve to autograd_gpu in this process.

    Idempotent: a second call does nothing.

    Raises:
        RuntimeError: the real PyTorch is already imported (its modules and ours cannot be
            mixed, and code that holds the real ``torch`` would keep it).
    """
    if is_installed():
        return
    module = real_torch()
    if module is not None:
        raise RuntimeError(refusal(module))
    sys.meta_path.insert(0, TorchFinder())


def uninstall() -> None:
    """Remove the hook and the ``torch`` names it entered in ``sys.modules``.

    Modules that already hold ``torch`` (autograd_gpu) keep it; a later ``import torch``
    imports the real PyTorch, if installed. Does nothing when the hook is not installed.
    """
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, TorchFinder)]
    for name in _torch_names():
        if is_ours(sys.modules.get(name)):
            del sys.modules[name]
