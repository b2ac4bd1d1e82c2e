"""Module full backward hooks, built the way PyTorch builds them.

The module's tensor inputs and outputs each pass through an identity ``autograd.Function``
(``BackwardHookFunction``). A hook on the output-side node sees the gradients w.r.t. the
outputs (``grad_output``; backward pre-hooks may replace them); a hook on the input-side node
sees the gradients w.r.t. the inputs (``grad_input``) and calls the user's full backward hooks,
which may replace them. Non-tensor inputs get ``None`` in ``grad_input``, and so do all inputs
when none requires grad.
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

from ..autograd.function import Function
from ..autograd.grad_mode import is_grad_enabled
from ..tensor import Tensor


class BackwardHookFunction(Function):
    """Identity on tensors; outputs of inputs that do not require grad are non-differentiable."""

    @staticmethod
    def forward(ctx: Any, *args: Tensor) -> tuple[Tensor, ...]:
        ctx.mark_non_differentiable(*[a for a in args if not a.requires_grad])
        return args

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> tuple[Any, ...]:
        # NOTE: as in PyTorch, a tensor input that does not require grad (while another does)
        # reports the materialized zeros of its non-differentiable output, not None.
        return grads


def _pack_with_none(indices: list[int], values: Any, size: int) -> tuple[Any, ...]:
    out: list[Any] = [None] * size
    for i, v in zip(indices, values):
        out[i] = v
    return tuple(out)


class BackwardHook:
    """One forward call's worth of backward-hook state for ``module``."""

    def __init__(self, module: Any, user_hooks: list[Callable[..., Any]],
                 user_pre_hooks: list[Callable[..., Any]]) -> None:
        self.module = module
        self.user_hooks = user_hooks
        self.user_pre_hooks = user_pre_hooks
        self.grad_outputs: tuple[Any, ...] | None = None
        self.n_inputs = self.n_outputs = 0
        self.input_index: list[int] | None = None
        self.output_index: list[int] | None = None

    def _wrap(self, args: tuple[Any, ...], fn: Callable[..., Any]) -> tuple[Any, Any]:
        """``args`` with each tensor passed through ``BackwardHookFunction`` (whose node gets
        ``fn`` as a hook), and the positions of those tensors; unchanged args and None when no tensor
        requires grad (or grad mode is off)."""
        index = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        if not (is_grad_enabled() and any(args[i].requires_grad for i in index)):
            return args, None
        new = BackwardHookFunction.apply(*[args[i] for i in index])
        node = next(t.grad_fn for t in new if t.grad_fn is not None)

        def hook(grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> Any:
            # NOTE: PyTorch's node hook has this name, and its errors about what the user's
            # hooks returned ("hook 'hook' has changed the size of value") quote it.
            return fn(grad_inputs, grad_outputs)

        node.register_hook(hook)
        out = list(args)
        for i, t in zip(index, new):
            out[i] = t
        return tuple(out), index

    def setup_input_hook(self, args: tuple[Any, ...]) -> tuple[Any, ...]:
        self.n_inputs = len(args)
        out, self.input_index = self._wrap(args, self._input_hook)
        return out  # type: ignore[no-any-return]

    def setup_output_hook(self, result: Any) -> Any:
        single = not isinstance(result, tuple)
        outs = (result,) if single else result
        self.n_outputs = len(outs)
        wrapped, self.output_index = self._wrap(outs, self._output_hook)
        return wrapped[0] if single else wrapped

    def _output_hook(self, grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> Any:
        assert self.output_index is not None
        grads = tuple(grad_outputs) + (None,) * (len(self.output_index) - len(grad_outputs))
        self.grad_outputs = _pack_with_none(self.output_index, grads, self.n_outputs)
        for hook in self.user_pre_hooks:
            res = hook(self.module, self.grad_outputs)
            if res is None:
                continue
            # NOTE: no wrapping into a tuple: as in PyTorch, a bare tensor is measured by len().
            if len(res) != len(self.grad_outputs):
                raise RuntimeError(
                    "Backward pre hook returned an invalid number of grad_output, got "
                    f"{len(res)}, but expected {len(self.grad_outputs)}"
                )
            self.grad_outputs = res
        local = self.grad_outputs
        if self.input_index is None:
            # NOTE: no input requires grad, so the input-side hook never runs: call the user's
            # hooks here, with grad_input all None.
            warnings.warn(
                "Full backward hook is firing when gradients are computed with respect to module "
                "outputs since no inputs require gradients. See https://docs.pytorch.org/docs/"
                "main/generated/torch.nn.Module.html#torch.nn.Module.register_full_backward_hook "
                "for more details.",
                UserWarning,
                stacklevel=2,
            )
            grad_input = (None,) * self.n_inputs
            for hook in self.user_hooks:
                res = hook(self.module, grad_input, self.grad_outputs)
                if res is not None and not (isinstance(res, tuple)
                                            and all(r is None for r in res)):
                    raise RuntimeError(
                        "Backward hook for Modules where no input requires gradient should "
                        "always return None or None for all gradients."
                    )
            self.grad_outputs = None
        return tuple(local[i] for i in self.output_index)

    def _input_hook(self, grad_inputs: tuple[Any, ...], grad_outputs: tuple[Any, ...]) -> Any:
        if self.grad_outputs is None:
            # NOTE: the gradient reached the inputs without passing through the outputs (e.g.
            # double backward): there is nothing to report.
            return None
        assert self.input_index is not None
        res = _pack_with_none(self.input_index, grad_inputs, self.n_inputs)
        for hook in self.user_hooks:
            out = hook(self.module, res, self.grad_outputs)
            if out is None:
                continue
            if len(out) != len(res):
                raise RuntimeError(
                    "Backward hook returned an invalid number of grad_input, got "
                    f"{len(out)}, but expected {len(res)}"
                )
            res = out
        self.grad_outputs = None
        return tuple(res[i] for i in self.input_index)
