"""``torch.backends.cuda``: cuBLAS switches (``matmul.allow_tf32``, ...) and the
scaled-dot-product-attention backend switches, as in PyTorch.

NOTE: ``matmul.allow_tf32`` is PyTorch's other face of ``set_float32_matmul_precision``
(True: ``high``, False: ``highest``); CuPy runs float32 products in full float32 whatever it
says (the setting is recorded, as ``set_float32_matmul_precision`` documents). The ``*_sdp``
switches are those of ``nn.attention.sdpa_kernel``: turning one off changes which kernel
``scaled_dot_product_attention`` uses, as in PyTorch.
"""

from __future__ import annotations

import contextlib
import warnings
from typing import Any, Iterator

from . import cuda_support

__all__ = ["allow_fp16_bf16_reduction_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp",
           "enable_flash_sdp", "enable_math_sdp", "enable_mem_efficient_sdp",
           "flash_sdp_enabled", "fp16_bf16_reduction_math_sdp_allowed", "is_built", "matmul",
           "math_sdp_enabled", "mem_efficient_sdp_enabled", "sdp_kernel"]


def is_built() -> bool:
    """Whether this install can run CUDA (CuPy is importable), whether or not a GPU is here."""
    return cuda_support._cupy() is not None


def _check_bool(value: Any, setter: str) -> None:
    if not isinstance(value, bool):
        raise RuntimeError(f"{setter} expects a bool, but got {type(value).__name__}")


class _CuBLAS:
    """``torch.backends.cuda.matmul``: reads and assigns cuBLAS's switches; any other name is
    PyTorch's ``AttributeError: Unknown attribute <name>``."""

    _reductions = {"allow_fp16_reduced_precision_reduction": [True, True],
                   "allow_bf16_reduced_precision_reduction": [True, True]}
    _fp16_accumulation = [False]

    def __getattr__(self, name: str) -> Any:
        if name == "allow_tf32":
            from ..functions.settings import get_float32_matmul_precision

            return get_float32_matmul_precision() != "highest"
        if name in self._reductions:
            return self._reductions[name][0]
        if name.endswith("_split_k") and name[:-8] in self._reductions:
            return self._reductions[name[:-8]][1]
        if name == "allow_fp16_accumulation":
            return self._fp16_accumulation[0]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            from ..functions import settings

            _check_bool(value, "set_allow_tf32_cublas")
            settings._S.precision = "high" if value else "highest"
        elif name in self._reductions:
            self._reductions[name][:] = _reduction_setting(value, name)
        elif name == "allow_fp16_accumulation":
            _check_bool(value, "set_allow_fp16_accumulation_cublas")
            self._fp16_accumulation[0] = value
        else:
            raise AttributeError("Unknown attribute " + name)


def _reduction_setting(value: Any, name: str) -> list[bool]:
    """``bool`` or ``(allow_reduced_precision[, allow_splitk])``, checked as PyTorch's."""
    if isinstance(value, bool):
        return [value, True]
    if isinstance(value, (list, tuple)):
        if not value:
            raise TypeError(f"{name} expects at least one boolean argument")
        if len(value) > 2:
            raise TypeError(f"{name} expects at most two boolean arguments")
        for v, which in zip(value, ("allow_reduced_precision", "allow_splitk")):
            if not isinstance(v, bool):
                raise TypeError(f"{name} expects a bool for {which}, but got {type(v)!r}")
        if len(value) == 2 and value[0] and not value[1]:
            raise RuntimeError("allow_splitk=False is not supported when reduced precision "
                               "reductions are enabled")
        return [value[0], value[1] if len(value) == 2 else True]
    raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got {type(value)!r}")


matmul = _CuBLAS()


# ---- scaled_dot_product_attention's backends (nn.attention's switches) ---------------------

def _attention() -> Any:
    from ..nn import attention

    return attention


def _is_on(kind: str) -> bool:
    att = _attention()
    return att.SDPBackend[kind] in att._STATE["enabled"]


def _switch(kind: str, enabled: Any, setter: str) -> None:
    _check_bool(enabled, setter)
    att = _attention()
    chosen = att._STATE["enabled"]
    att._STATE["enabled"] = (chosen | {att.SDPBackend[kind]} if enabled
                             else chosen - {att.SDPBackend[kind]})


def flash_sdp_enabled() -> bool:
    return _is_on("FLASH_ATTENTION")


def enable_flash_sdp(enabled: bool) -> None:
    _switch("FLASH_ATTENTION", enabled, "set_sdp_use_flash")


def mem_efficient_sdp_enabled() -> bool:
    return _is_on("EFFICIENT_ATTENTION")


def enable_mem_efficient_sdp(enabled: bool) -> None:
    _switch("EFFICIENT_ATTENTION", enabled, "set_sdp_use_mem_efficient")


def math_sdp_enabled() -> bool:
    return _is_on("MATH")


def enable_math_sdp(enabled: bool) -> None:
    _switch("MATH", enabled, "set_sdp_use_math")


def cudnn_sdp_enabled() -> bool:
    return _is_on("CUDNN_ATTENTION")


def enable_cudnn_sdp(enabled: bool) -> None:
    _switch("CUDNN_ATTENTION", enabled, "set_sdp_use_cudnn")


_MATH_REDUCTION = [True]


def fp16_bf16_reduction_math_sdp_allowed() -> bool:
    return _MATH_REDUCTION[0]


def allow_fp16_bf16_reduction_math_sdp(enabled: bool) -> None:
    _check_bool(enabled, "set_math_sdp_allow_fp16_bf16_reduction")
    _MATH_REDUCTION[0] = enabled


@contextlib.contextmanager
def sdp_kernel(enable_flash: bool = True, enable_math: bool = True,
               enable_mem_efficient: bool = True, enable_cudnn: bool = True) -> Iterator[Any]:
    """Deprecated in PyTorch (FutureWarning) for ``nn.attention.sdpa_kernel``: only the enabled
    backends may run inside the block."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this context "
                  "manager will be removed. Please see `torch.nn.attention.sdpa_kernel()` for the "
                  "new context manager, with updated signature.", FutureWarning, stacklevel=3)
    att = _attention()
    chosen = [b for on, b in ((enable_flash, att.SDPBackend.FLASH_ATTENTION),
                              (enable_mem_efficient, att.SDPBackend.EFFICIENT_ATTENTION),
                              (enable_math, att.SDPBackend.MATH),
                              (enable_cudnn, att.SDPBackend.CUDNN_ATTENTION)) if on]
    with att.sdpa_kernel(chosen) as context:
        yield context
