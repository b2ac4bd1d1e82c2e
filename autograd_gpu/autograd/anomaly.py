"""Anomaly detection: forward stacks for every node, NaN checks in backward (and forward).

``set_detect_anomaly(True)`` records where each node was created; when its backward fails or
returns NaN, the error says which op and the warning shows that forward stack. Beyond PyTorch,
``check_forward=True`` also checks every op's forward outputs for NaN/Inf as they are made.
"""

from __future__ import annotations

import threading
import traceback
import warnings
from typing import Any


class _State(threading.local):
    enabled = False
    check_nan = True
    check_forward = False


STATE = _State()


def is_anomaly_enabled() -> bool:
    return STATE.enabled


def is_anomaly_check_nan_enabled() -> bool:
    return STATE.check_nan


def _warn_enabled() -> None:
    warnings.warn(
        "Anomaly Detection has been enabled. This mode will increase the runtime and should only "
        "be enabled for debugging.",
        UserWarning,
        stacklevel=3,
    )


class set_detect_anomaly:  # noqa: N801
    """Turn anomaly detection on or off: at once as a call, until exit as a context manager.

    Args:
        mode: on or off.
        check_nan: raise when a backward function returns NaN.
        check_forward: beyond PyTorch, raise when an op's forward output holds NaN or Inf.
    """

    def __init__(self, mode: bool, check_nan: bool = True, check_forward: bool = False) -> None:
        self.prev = (STATE.enabled, STATE.check_nan, STATE.check_forward)
        STATE.enabled, STATE.check_nan, STATE.check_forward = mode, check_nan, check_forward

    def __enter__(self) -> None:
        pass

    def __exit__(self, *exc: object) -> None:
        STATE.enabled, STATE.check_nan, STATE.check_forward = self.prev


class detect_anomaly:  # noqa: N801
    """Context manager / decorator that enables anomaly detection inside it."""

    def __init__(self, check_nan: bool = True, check_forward: bool = False) -> None:
        self.check_nan = check_nan
        self.check_forward = check_forward
        _warn_enabled()

    def __enter__(self) -> None:
        self.prev = (STATE.enabled, STATE.check_nan, STATE.check_forward)
        STATE.enabled, STATE.check_nan, STATE.check_forward = True, self.check_nan, self.check_forward

    def __exit__(self, *exc: object) -> None:
        STATE.enabled, STATE.check_nan, STATE.check_forward = self.prev

    def __call__(self, fn: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self:
                return fn(*args, **kwargs)

        return wrapper


def record_forward(node: Any, outputs: tuple[Any, ...]) -> None:
    """Keep the forward stack on the node; with ``check_forward``, check its outputs now."""
    node._stack = traceback.format_stack()[:-3]
    if STATE.check_forward:
        for i, out in enumerate(outputs):
            if out.dtype.is_floating_point and not bool(out.backend.isfinite(out._data).all()):
                raise RuntimeError(
                    f"Function '{node.name()}' produced non-finite values (NaN or Inf) in its "
                    f"{i}th output during forward.\nForward call that produced it:\n"
                    + "".join(node._stack[-4:])
                )


def check_backward(node: Any, grads: tuple[Any, ...]) -> None:
    if not STATE.check_nan:
        return
    for i, g in enumerate(grads):
        if g is not None and g.dtype.is_floating_point and bool(g.backend.isnan(g._data).any()):
            raise RuntimeError(f"Function '{node.name()}' returned nan values in its {i}th output.")


def warn_forward_stack(node: Any) -> None:
    """The warning PyTorch prints when a node's backward fails under anomaly mode."""
    stack = node._stack
    if stack is None:
        return
    warnings.warn(
        f"Error detected in {node.name()}. Traceback of forward call that caused the error:\n"
        + "".join(stack),
        UserWarning,
        stacklevel=2,
    )
