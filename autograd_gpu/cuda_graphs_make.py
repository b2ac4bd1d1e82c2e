"""``make_graphed_callables`` (PyTorch's ``torch.cuda.make_graphed_callables``).

For each callable: warm up forward and ``autograd.grad`` on a side stream, capture the forward
into one graph and (in reverse order of the callables, all sharing one memory pool, as PyTorch
does) the backward into another. The graphed callable runs an ``autograd.Function`` whose
forward copies the arguments into the static inputs (unless they already are them), replays the
forward graph and returns the static outputs detached; its backward copies the incoming
gradients into static gradient buffers, replays the backward graph and returns the static input
gradients. A module keeps its object: its ``forward`` is replaced, and runs the graph while the
module is in the training mode it was captured in, its original forward otherwise.

NOTE: as PyTorch's, the graphed callables support no double backward (``once_differentiable``),
take their arguments in ``sample_args``' order and structure, and assume the module's parameters
and buffers stay the same tensors.
"""

from __future__ import annotations

from typing import Any, Callable

from .backends import cuda_support
from .func._pytree import flatten as _flatten, unflatten as _unflatten


def _leaves(obj: Any) -> list[Any]:
    """The leaves of nested tuples, lists and dicts (PyTorch's pytree order: dicts by key
    insertion; None holds nothing)."""
    return _flatten(obj)[0]


def _check(callables: tuple[Any, ...], sample_args: tuple[Any, ...]) -> list[tuple[Any, ...]]:
    """PyTorch's checks on the callables and their sample arguments; the flat arguments."""
    from .nn import Module
    from .tensor import Tensor

    flat = []
    for c, args in zip(callables, sample_args):
        if isinstance(c, Module):
            if c._backward_hooks or c._forward_hooks or c._forward_pre_hooks:
                raise AssertionError(
                    "Modules must not have hooks registered at the time they are passed. "
                    "However, registering hooks on modules after passing them through "
                    "make_graphed_callables is allowed.")
            if not all(b.requires_grad is False for b in c.buffers()):
                raise AssertionError(
                    "In any :class:`~torch.nn.Module` passed to :func:`~make_graphed_callables`, "
                    "only parameters may be trainable. All buffers must have "
                    "``requires_grad=False``.")
        leaves = _leaves(tuple(args))
        flat.append(tuple(leaves))
        if not all(isinstance(a, Tensor) for a in leaves):
            raise AssertionError("In the beta API, sample_args for each callable must contain "
                                 "only Tensors. Other types are not allowed.")
    return flat


def make_graphed_callables(callables: Any, sample_args: Any, num_warmup_iters: int = 3,
                           allow_unused_input: bool = False, pool: Any = None) -> Any:
    """See the module docstring (PyTorch's signature, checks and behaviour)."""
    from . import autograd
    from .cuda_graphs import CUDAGraph, graph, graph_pool_handle
    from .nn import Module

    one = not isinstance(callables, tuple)
    if one:
        callables, sample_args = (callables,), (sample_args,)
    flat_args = _check(callables, sample_args)
    user_lens = [len(a) for a in flat_args]
    params = [tuple(c.parameters()) if isinstance(c, Module) else () for c in callables]
    surfaces = [flat_args[i] + params[i] for i in range(len(callables))]
    fwd_graphs = [CUDAGraph() for _ in callables]
    bwd_graphs = [CUDAGraph() for _ in callables]
    mempool = graph_pool_handle() if pool is None else pool

    be = cuda_support.graphs()
    be.synchronize()
    with be.new_stream():  # NOTE: warm-up on a side stream, as PyTorch's
        for func, args, surface in zip(callables, sample_args, surfaces):
            for _ in range(num_warmup_iters):
                outputs = _leaves(func(*args))
                needing = tuple(o for o in outputs if o.requires_grad)
                if needing:
                    autograd.grad(needing, tuple(i for i in surface if i.requires_grad),
                                  grad_outputs=tuple(_empty_like(o) for o in needing),
                                  only_inputs=True, allow_unused=allow_unused_input)
    be.synchronize()

    static_outputs, specs = [], []
    for func, args, g in zip(callables, sample_args, fwd_graphs):
        with graph(g, pool=mempool):
            result = func(*args)
        leaves, spec = _flatten(result)
        static_outputs.append(tuple(leaves))
        specs.append(spec)

    grad_outs: list[Any] = [None] * len(callables)
    grad_ins: list[Any] = [None] * len(callables)
    for i in reversed(range(len(callables))):
        outs = static_outputs[i]
        static_grad_outputs = tuple(_empty_like(o) if o.requires_grad else None for o in outs)
        needing = tuple(o for o in outs if o.requires_grad)
        grads: Any = None
        if needing:
            with graph(bwd_graphs[i], pool=mempool):
                grads = autograd.grad(needing, tuple(a for a in surfaces[i] if a.requires_grad),
                                      grad_outputs=tuple(g for g in static_grad_outputs
                                                         if g is not None),
                                      only_inputs=True, allow_unused=allow_unused_input)
        it = iter(grads or ())
        grad_ins[i] = tuple(next(it) if a.requires_grad and grads is not None else None
                            for a in surfaces[i])
        grad_outs[i] = static_grad_outputs

    made: list[Any] = []
    for i, func in enumerate(callables):
        graphed = _graphed(fwd_graphs[i], bwd_graphs[i], params[i], user_lens[i], specs[i],
                           surfaces[i], static_outputs[i], grad_outs[i], grad_ins[i])
        if isinstance(func, Module):
            func.forward = _module_forward(  # type: ignore[method-assign]
                func, func.training, graphed, func.forward)
            made.append(func)
        else:
            made.append(graphed)
    return made[0] if one else tuple(made)


def _empty_like(t: Any) -> Any:
    from .creation_fill import empty_like

    return empty_like(t)


def _graphed(fwd: Any, bwd: Any, module_params: tuple[Any, ...], n_user: int, spec: Any,
             surface: tuple[Any, ...], outputs: tuple[Any, ...],
             grad_outputs: tuple[Any, ...], grad_inputs: tuple[Any, ...]) -> Callable[..., Any]:
    """The graphed callable: an autograd.Function over the user's arguments and the module's
    parameters."""
    from .autograd import Function, once_differentiable

    class Graphed(Function):
        @staticmethod
        def forward(ctx: Any, *inputs: Any) -> tuple[Any, ...]:
            for i in range(n_user):
                if surface[i].data_ptr() != inputs[i].data_ptr():
                    surface[i].copy_(inputs[i])
            fwd.replay()
            return tuple(o.detach() for o in outputs)

        @staticmethod
        @once_differentiable
        def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
            for static, g in zip(grad_outputs, grads):
                # NOTE: a None gradient (an output unused downstream) leaves the buffer as it was
                if static is not None and g is not None and static.data_ptr() != g.data_ptr():
                    static.copy_(g)
            bwd.replay()
            return tuple(b.detach() if b is not None else None for b in grad_inputs)

    def functionalized(*user_args: Any) -> Any:
        flat = _leaves(tuple(user_args))
        out = Graphed.apply(*(tuple(flat) + module_params))
        out = out if isinstance(out, tuple) else (out,)
        return _unflatten(list(out), spec)

    return functionalized


def _module_forward(module: Any, training: bool, graphed: Callable[..., Any],
                    original: Callable[..., Any]) -> Callable[..., Any]:
    def forward(*args: Any, **kwargs: Any) -> Any:
        if module.training == training:
            return graphed(*args, **kwargs)
        return original(*args, **kwargs)

    return forward
