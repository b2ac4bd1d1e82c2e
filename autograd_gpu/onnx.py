"""``torch.onnx``, a stub: programs that ``import torch.onnx`` run; exporting does not.

``is_in_onnx_export()`` is False (no export ever runs), and ``TrainingMode``,
``OperatorExportTypes`` and ``OnnxExporterError`` exist with PyTorch's members and bases.
``export``, ``register_custom_op_symbolic``, ``unregister_custom_op_symbolic`` and
``select_model_mode_for_export`` raise ``NotImplementedError`` naming the function when called,
and so does creating an ``ONNXProgram``.
"""

from __future__ import annotations

import enum
from typing import Any

from .compat._stubs import unsupported

__all__ = ["ONNXProgram", "OnnxExporterError", "OperatorExportTypes", "TrainingMode", "export",
           "is_in_onnx_export", "register_custom_op_symbolic", "select_model_mode_for_export",
           "unregister_custom_op_symbolic"]

_WHY = "ONNX export traces PyTorch's own graph, which autograd_gpu does not build"


def is_in_onnx_export() -> bool:
    """False: no ONNX export ever runs here."""
    return False


class OnnxExporterError(RuntimeError):
    """``torch.onnx.OnnxExporterError`` (never raised here)."""


class TrainingMode(enum.IntEnum):
    """The ``training`` argument of ``torch.onnx.export``."""

    EVAL = 0
    PRESERVE = 1
    TRAINING = 2


class OperatorExportTypes(enum.IntEnum):
    """The ``operator_export_type`` argument of ``torch.onnx.export``."""

    ONNX = 0
    ONNX_ATEN = 1
    ONNX_ATEN_FALLBACK = 2
    ONNX_FALLTHROUGH = 3


class ONNXProgram:
    """``torch.onnx.ONNXProgram``, the result of an export; cannot be made here."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError(f"autograd_gpu does not implement torch.onnx.ONNXProgram: "
                                  f"{_WHY}")


export = unsupported("torch.onnx.export", _WHY)
register_custom_op_symbolic = unsupported("torch.onnx.register_custom_op_symbolic", _WHY)
unregister_custom_op_symbolic = unsupported("torch.onnx.unregister_custom_op_symbolic", _WHY)
select_model_mode_for_export = unsupported("torch.onnx.select_model_mode_for_export", _WHY)
