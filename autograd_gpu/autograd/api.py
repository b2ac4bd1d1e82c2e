"""``backward`` and ``grad``: argument checking, root gradients, then the engine."""

from __future__ import annotations

import warnings
from typing import Any, Sequence

from . import node as _node
from .engine import run_backward

BATCHED_GRAD: Any = None  # func._batched.grad_batched: outputs or inputs are vmap-batched


def _as_tuple(x: Any) -> tuple[Any, ...]:
    if x is None:
        return ()
    if isinstance(x, (list, tuple)):
        return tuple(x)
    return (x,)


def _make_grads(outputs: Sequence[Any], grads: Sequence[Any], is_grads_batched: bool = False) -> list[Any]:
    Tensor = _node.Tensor_
    out: list[Any] = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if g is None:
            if not o._requires_grad:
                out.append(None)  # the engine says it has no grad_fn, as PyTorch's does
                continue
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not o.dtype.is_floating_point:
                raise RuntimeError(
                    f"grad can be implicitly created only for real scalar outputs but got {o.dtype}"
                )
            g = Tensor._make(o.backend.ones(o._data.shape, o._data.dtype), o._device)
            g._owned = True  # made here: a leaf may take it over without a copy
        else:
            if not isinstance(g, Tensor):
                raise TypeError(f"gradients can be either Tensors or None, but got {type(g).__name__}")
            if g.shape != o.shape:
                from ..tensor import Size

                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {Size(g.shape)!r} and "
                    f"output[{i}] has a shape of {Size(o.shape)!r}."
                )
            if g._device is not o._device:
                raise RuntimeError(
                    f"invalid gradient at index {i} - expected device {o._device} but got {g._device}"
                )
            if g.dtype is not o.dtype:
                g = g.to(o.dtype)
        out.append(g)
    return out


def _roots(outputs: Sequence[Any], grads: Sequence[Any]) -> list[tuple[Any, int, Any]]:
    roots = []
    for i, (o, g) in enumerate(zip(outputs, grads)):
        if not o._requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if o.grad_fn is not None:
            roots.append((o.grad_fn, o._output_nr, g))
        else:
            roots.append((o._grad_accumulator(), 0, g))
    return roots


def backward(tensors: Any, grad_tensors: Any = None, retain_graph: bool | None = None,
             create_graph: bool = False, grad_variables: Any = None, inputs: Any = None) -> None:
    """Accumulate the gradients of ``tensors`` into the leaves' ``.grad``.

    Args:
        tensors: outputs to differentiate (a tensor or a sequence).
        grad_tensors: the gradient w.r.t. each output; None for scalar outputs.
        retain_graph: keep saved tensors for another backward (default: ``create_graph``).
        create_graph: record the backward itself, for higher-order gradients.
        inputs: accumulate only into these tensors.
    """
    outputs = _as_tuple(tensors)
    grads = _as_tuple(grad_tensors if grad_tensors is not None else grad_variables)
    if not grads:
        grads = (None,) * len(outputs)
    if len(grads) != len(outputs):
        raise RuntimeError(f"grad can be implicitly created only for scalar outputs; got "
                           f"{len(grads)} gradients for {len(outputs)} tensors")
    if inputs is not None:
        inputs = _as_tuple(inputs)
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        for t in inputs:
            if not t._requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
    if retain_graph is None:
        retain_graph = create_graph
    roots = _roots(outputs, _make_grads(outputs, grads))
    run_backward(roots, retain_graph, create_graph, inputs=inputs, accumulate=True)
    global _CREATE_GRAPH_WARNED
    if create_graph and not _CREATE_GRAPH_WARNED:
        # NOTE: once per process (PyTorch's TORCH_WARN_ONCE), after the gradients are in.
        _CREATE_GRAPH_WARNED = True
        warnings.warn(_CREATE_GRAPH_CYCLE, UserWarning, stacklevel=_node.user_stacklevel())


def _grads_batched(outs: tuple[Any, ...], ins: tuple[Any, ...], gos: tuple[Any, ...],
                   retain_graph: bool, create_graph: bool, allow_unused: bool,
                   materialize_grads: bool) -> tuple[Any, ...]:
    """``grad(..., is_grads_batched=True)``: the first dim of every grad_output is a batch of
    vectors, and the result has that batch dim in front; one backward under ``vmap`` (PyTorch's
    way too), not one per vector."""
    from ..creation import ones_like, zeros_like
    from ..func import vmap
    from ..tensor import Size

    batched: list[Any] = []
    for i, (o, g) in enumerate(zip(outs, gos)):
        if g is None:
            if o.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if o.ndim == 0:
                raise ValueError(
                    "vmap(vjp, in_dims=0, ...)(<inputs>): Got in_dim=0 for some input, but that "
                    "input is a Tensor of dimensionality 0 so expected in_dim to satisfy "
                    "0 <= in_dim < 0.")
            g = ones_like(o)  # NOTE: then batched along its first dim, as PyTorch does
        elif g.ndim == 0:
            raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                             "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
        if tuple(g.shape[1:]) != tuple(o.shape):
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output "
                "as the batch dimension. The sizes of the remaining dimensions are expected to "
                "match the shape of corresponding output, but a mismatch was detected: "
                f"grad_output[{i}] has a shape of {Size(g.shape[1:])!r} and output[{i}] has a "
                f"shape of {Size(o.shape)!r}. If you only want some tensors in `grad_output` to "
                "be considered batched, consider using vmap.")
        batched.append(g)
    unused: list[int] = []

    def one(*vectors: Any) -> tuple[Any, ...]:
        got = grad(outs, ins, vectors, retain_graph=retain_graph, create_graph=create_graph,
                   allow_unused=allow_unused)
        unused.extend(i for i, r in enumerate(got) if r is None)
        return tuple(r for r in got if r is not None)

    found = iter(vmap(one)(*batched))
    result = [None if i in unused else next(found) for i in range(len(ins))]
    if materialize_grads:  # NOTE: unbatched zeros, as PyTorch's
        result = [zeros_like(t) if r is None else r for t, r in zip(ins, result)]
    return tuple(result)


_CREATE_GRAPH_WARNED = False
_CREATE_GRAPH_CYCLE = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak."
)


def grad(outputs: Any, inputs: Any, grad_outputs: Any = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple[Any, ...]:
    """The gradients of ``outputs`` w.r.t. ``inputs``, returned instead of accumulated.

    Example:
        >>> x = tensor(2.0, requires_grad=True)
        >>> grad(x ** 3, x)
        (tensor(12.),)
    """
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if not ins:
        raise RuntimeError("grad requires non-empty inputs.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: allow_unused=False.")
    for t in ins:
        if not t._requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    gos = _as_tuple(grad_outputs)
    if not gos:
        gos = (None,) * len(outs)
    if len(gos) != len(outs):
        raise RuntimeError(
            f"grad_outputs must be the same length as outputs: got {len(gos)} and {len(outs)}"
        )
    if retain_graph is None:
        retain_graph = create_graph
    if is_grads_batched:
        return _grads_batched(outs, ins, gos, retain_graph, create_graph, allow_unused,
                              materialize_grads)

    def call(outs: tuple[Any, ...], ins: tuple[Any, ...], gos: tuple[Any, ...]) -> list[Any]:
        roots = _roots(outs, _make_grads(outs, gos))
        result = run_backward(roots, retain_graph, create_graph, inputs=ins,
                              allow_unused=allow_unused, accumulate=False)
        assert result is not None
        return result

    if any(getattr(t, "_level", 0) for t in outs + ins + gos):
        result = list(BATCHED_GRAD(outs, ins, gos, call))
    else:
        result = call(outs, ins, gos)
    if materialize_grads:
        from ..creation import zeros_like

        result = [zeros_like(t) if r is None else r for t, r in zip(ins, result)]
    return tuple(result)
