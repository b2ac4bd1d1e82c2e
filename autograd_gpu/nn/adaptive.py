"""``AdaptiveLogSoftmaxWithLoss``: the adaptive softmax of Grave et al. (PyTorch's
``nn.modules.adaptive``). Exported through ``activation``'s ``__all__`` (``nn`` gathers a fixed
list of family modules)."""

from __future__ import annotations

from collections import namedtuple
from typing import Any, Sequence

from ..functions.scatter_index import index_copy, index_fill
from ..functions.shape import cat
from ..tensor import Tensor
from . import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]

_ASMoutput = namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Log-probabilities of targets under a two-level softmax: a head over the ``cutoffs[0]``
    most frequent classes plus one entry per tail cluster, and per cluster ``i`` (classes
    ``cutoffs[i]..cutoffs[i+1]-1``, the last one ending at ``n_classes``) a softmax over a
    low-rank projection ``Linear(in, in // div_value**(i+1)) -> Linear(.., size)``.

    ``forward(input, target)`` returns the named tuple ``(output, loss)``: each row's target
    log-probability and their negated mean. Only the clusters holding some target are
    evaluated. ``log_prob`` gives the full ``(N, n_classes)`` log-distribution, ``predict`` its
    argmax (skipping the tails when the head's argmax is in the shortlist).

    Example:
        >>> asm = AdaptiveLogSoftmaxWithLoss(8, 10, [2, 5])
        >>> asm(randn(3, 8), tensor([0, 4, 9])).output.shape
        torch.Size([3])
    """

    def __init__(self, in_features: int, n_classes: int, cutoffs: Sequence[int],
                 div_value: float = 4.0, head_bias: bool = False, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1 \
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        kw = {"device": device, "dtype": dtype}
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, **kw),
                                        Linear(hsz, osz, bias=False, **kw)))

    def reset_parameters(self) -> None:
        self.head.reset_parameters()
        for proj in self.tail:
            for lin in proj:  # type: ignore[attr-defined]
                lin.reset_parameters()

    def forward(self, input_: Tensor, target_: Tensor) -> _ASMoutput:
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.shape[0] != target_.shape[0]:
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = targ_dim > 0
        input = input_ if batched else input_.unsqueeze(0)  # noqa: A001
        target = target_ if batched else target_.unsqueeze(0)
        # NOTE: one host read (PyTorch's check counts the rows the clusters take, the same).
        if target.numel() and bool(((target < 0) | (target >= self.n_classes)).any()):
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        output = input.new_zeros(target.shape[0])
        head_inds = target
        for i in range(self.n_clusters):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            rows = ((target >= low) & (target < high)).nonzero().reshape(-1)
            if rows.numel() == 0:  # NOTE: only the clusters some target falls in are evaluated
                continue
            head_inds = index_fill(head_inds, 0, rows, self.shortlist_size + i)
            logits = self.tail[i](input.index_select(0, rows))
            picked = F.log_softmax(logits, dim=1).gather(
                1, (target.index_select(0, rows) - low).unsqueeze(1))
            output = index_copy(output, 0, rows, picked.squeeze(1))
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output = output + head_logprob.gather(1, head_inds.unsqueeze(1)).squeeze(1)
        loss = (-output).mean()
        return _ASMoutput(output if batched else output.squeeze(0), loss)

    def _get_full_log_prob(self, input: Tensor, head_output: Tensor) -> Tensor:  # noqa: A002
        """The ``(N, n_classes)`` log-distribution from ``input`` and the head's logits."""
        head_logprob = F.log_softmax(head_output, dim=1)
        parts = [head_logprob[:, :self.shortlist_size]]
        for i in range(self.n_clusters):
            cluster = F.log_softmax(self.tail[i](input), dim=1)
            parts.append(cluster + head_logprob[:, self.shortlist_size + i].unsqueeze(1))
        return cat(parts, dim=1)

    def log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        """Log-probabilities of all ``n_classes`` classes: ``(N, in_features) -> (N,
        n_classes)``."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:  # noqa: A002
        """The most probable class of each row: ``(N, in_features) -> (N,)``."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        outside = output >= self.shortlist_size
        if not bool(outside.any()):
            return output
        if bool(outside.all()):
            return self._get_full_log_prob(input, head_output).argmax(dim=1)
        log_prob = self._get_full_log_prob(input[outside], head_output[outside])
        output[outside] = log_prob.argmax(dim=1)
        return output
