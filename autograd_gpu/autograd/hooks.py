"""What user hooks may return, checked with PyTorch's messages.

A gradient hook (``Tensor.register_hook``, ``Node.register_hook``/``register_prehook``, and the
module backward hooks built on them) may return None (keep the gradients) or replacements: one
Tensor for a tensor hook, a tuple with one entry per gradient for a node hook. A replacement
must have the original's dtype, device type and shape; a post-accumulate-grad hook must return
None. The checks run only when a hook returned something, so hooks that observe cost nothing.
"""

from __future__ import annotations

from typing import Any, Callable

from . import node as _node

_HEAPTYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class defined in Python


def typename(obj: Any) -> str:
    """The C type name PyTorch prints for ``obj``: ``'int'``, ``'numpy.ndarray'``, ``'Tensor'``
    (a class defined in Python shows its bare name, a C type its dotted path)."""
    t = type(obj)
    if t.__flags__ & _HEAPTYPE or t.__module__ == "builtins":
        return t.__name__
    return f"{t.__module__}.{t.__name__}"


def hook_name(hook: Callable[..., Any]) -> str:
    name = getattr(hook, "__name__", None)
    return name if isinstance(name, str) else "<unknown>"


def check_grad(original: Any, result: Any, hook: Callable[..., Any]) -> None:
    """``result`` (not None), returned by ``hook`` for the gradient ``original``, may replace it."""
    if original is None:
        raise RuntimeError("can't replace a None gradient with a non-None value")
    if not isinstance(result, _node.Tensor_):
        raise TypeError(f"expected Variable, but hook returned '{typename(result)}'")
    if result.dtype is not original.dtype or result._device.type != original._device.type:
        raise RuntimeError(
            f"hook '{hook_name(hook)}' has changed the type of value (was "
            f"{_node._type_str(original)} got {_node._type_str(result)})"
        )
    if result.shape != original.shape:
        raise RuntimeError(f"hook '{hook_name(hook)}' has changed the size of value")


def check_grads(original: tuple[Any, ...], result: Any, hook: Callable[..., Any]) -> tuple[Any, ...]:
    """``result`` (not None), returned by a node hook for the gradients ``original``, as a tuple
    that may replace them."""
    if not isinstance(result, tuple):
        raise TypeError(f"expected tuple, but hook returned '{typename(result)}'")
    if len(result) != len(original):
        raise RuntimeError(
            f"hook '{hook_name(hook)}' has returned an incorrect number of values (got "
            f"{len(result)}, but expected {len(original)})"
        )
    for g, new in zip(original, result):
        if new is not None:
            check_grad(g, new, hook)
    return result


def check_post_accumulate(result: Any) -> None:
    """A post-accumulate-grad hook returned ``result``: only None is allowed."""
    if result is None:
        return
    if not isinstance(result, _node.Tensor_):
        raise TypeError(f"expected Variable, but hook returned '{typename(result)}'")
    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
