"""Grad modes: ``no_grad``, ``enable_grad``, ``set_grad_enabled``, ``inference_mode``.

The state is thread-local, as in PyTorch: a new thread starts with grad mode on. Every mode is a
context manager and a decorator (``@no_grad()`` and bare ``@no_grad`` both work).
"""

from __future__ import annotations

import functools
import inspect
import threading
from typing import Any, Callable, TypeVar

F = TypeVar("F", bound=Callable[..., Any])


class _State(threading.local):
    grad_enabled = True
    inference = False
    batched_grads = False  # backward runs on vmap-batched gradients (no raw-array path)
    func_depth = 0  # func transforms (grad, vjp, jvp, ...) in progress


STATE = _State()


def is_grad_enabled() -> bool:
    """True when operations record the backward graph."""
    return STATE.grad_enabled


def is_inference_mode_enabled() -> bool:
    """True inside ``inference_mode()``."""
    return STATE.inference


class _Mode:
    """Base for the modes: ``_enter`` sets the state and returns what ``_exit`` restores."""

    def __call__(self, fn: F) -> F:
        if isinstance(fn, type) or not callable(fn):
            raise TypeError(f"{type(self).__name__} can only decorate functions, got {fn!r}")
        mode = self

        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                gen = fn(*args, **kwargs)
                value = None
                while True:
                    with mode.clone():
                        try:
                            item = gen.send(value)
                        except StopIteration as stop:
                            return stop.value
                    value = yield item

            return gen_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with mode.clone():
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    def clone(self) -> _Mode:
        return type(self)()

    def __enter__(self) -> None:
        self._prev = (STATE.grad_enabled, STATE.inference)
        self._enter()

    def __exit__(self, *exc: object) -> None:
        STATE.grad_enabled, STATE.inference = self._prev

    def _enter(self) -> None:
        raise NotImplementedError


class _DecoratorMode(_Mode):
    """A mode whose constructor may also receive the function (bare ``@no_grad``)."""

    def __new__(cls, fn: Callable[..., Any] | None = None, *args: Any, **kwargs: Any) -> Any:
        self = super().__new__(cls)
        if callable(fn) and not isinstance(fn, bool):
            self.__init__()  # type: ignore[misc]
            return self(fn)
        return self


class no_grad(_DecoratorMode):  # noqa: N801
    """Context manager / decorator: operations inside record no graph.

    Example:
        >>> x = tensor([1.0], requires_grad=True)
        >>> with no_grad():
        ...     y = x * 2
        >>> y.requires_grad
        False
    """

    def _enter(self) -> None:
        STATE.grad_enabled = False


class enable_grad(_DecoratorMode):  # noqa: N801
    """Context manager / decorator: turn grad mode back on inside ``no_grad``."""

    def _enter(self) -> None:
        STATE.grad_enabled = True


class set_grad_enabled(_Mode):  # noqa: N801
    """Set grad mode on or off: as a function call it takes effect at once; as a context manager
    it restores the previous mode on exit."""

    def __init__(self, mode: bool) -> None:
        if not isinstance(mode, bool):
            raise TypeError(f"set_grad_enabled(): argument 'mode' must be bool, not {type(mode).__name__}")
        self.mode = mode
        self._prev = (STATE.grad_enabled, STATE.inference)
        STATE.grad_enabled = mode

    def clone(self) -> set_grad_enabled:
        return set_grad_enabled.__new__(set_grad_enabled)._init_only(self.mode)

    def _init_only(self, mode: bool) -> set_grad_enabled:
        self.mode = mode
        return self

    def __enter__(self) -> None:
        if not hasattr(self, "_prev"):
            self._prev = (STATE.grad_enabled, STATE.inference)
        STATE.grad_enabled = self.mode

    def __call__(self, fn: F) -> F:
        # NOTE: used as a decorator, the constructor's immediate effect is undone first.
        STATE.grad_enabled, STATE.inference = self._prev
        del self._prev
        return super().__call__(fn)


class inference_mode(_DecoratorMode):  # noqa: N801
    """Like ``no_grad``, and tensors made inside are inference tensors that may never enter a
    backward graph later (``Tensor.is_inference()``)."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = mode

    def clone(self) -> inference_mode:
        return inference_mode(self.mode)

    def _enter(self) -> None:
        if self.mode:
            STATE.grad_enabled = False
            STATE.inference = True
        else:
            # NOTE: as in PyTorch, inference_mode(False) turns grad mode back on.
            STATE.grad_enabled = True
            STATE.inference = False
