"""Backend lookup: the only place that decides which array library serves a device."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..device import device


def get_backend(dev: device) -> Any:
    """The backend object for ``dev``: NumPy for CPU, CuPy (loaded now) for CUDA, NumPy's code
    on storage-less arrays for ``meta``."""
    if dev.type == "cpu":
        from .numpy_backend import numpy_backend

        return numpy_backend
    if dev.type == "meta":
        from .meta_backend import meta_backend

        return meta_backend
    from . import cuda_support

    return cuda_support.backend_for(dev)


def current_cuda_device() -> int:
    from . import cuda_support

    return cuda_support.current_device()


# NOTE: ``torch.backends.<name>`` flag modules (no CuPy import), loaded with the package so that
# ``torch.backends.cudnn.benchmark = True`` works after a bare ``import torch``.
from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp, opt_einsum  # noqa: E402,F401
