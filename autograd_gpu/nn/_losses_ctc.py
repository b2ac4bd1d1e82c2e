"""``ctc_loss`` (re-exported by ``_losses2``): argument handling as PyTorch's ``ctc_loss``, the
recursions in ``ops/nn_ctc.py``."""

from __future__ import annotations

from typing import Any, Sequence

from ..creation import tensor
from ..dtypes import int64
from ..functions import clamp_min, take
from ..ops.nn_ctc import CtcLoss
from ..tensor import Tensor
from ._losses import _reduction

_WHERE = " (while checking arguments for ctc_loss_allocate_outputs)"


def _lengths(name: str, lengths: Any) -> list[int]:
    """Lengths given as a tensor (integral; one host copy, as PyTorch) or a sequence of ints."""
    if isinstance(lengths, Tensor):
        if lengths.is_floating_point() or lengths.is_complex():
            raise RuntimeError(f"{name} must be integral")
        return [int(v) for v in lengths.reshape(-1).tolist()]
    return [int(v) for v in lengths]


def ctc_loss(log_probs: Tensor, targets: Tensor, input_lengths: Tensor | Sequence[int],
             target_lengths: Tensor | Sequence[int], blank: int = 0, reduction: str = "mean",
             zero_infinity: bool = False) -> Tensor:
    """Connectionist temporal classification loss: ``-log p(target | log_probs)`` summed over
    every alignment of each target to its input frames.

    ``log_probs`` is ``(T, N, C)`` (or ``(T, C)`` unbatched) log-probabilities; ``targets`` is
    ``(N, S)`` padded or the ``sum(target_lengths)`` targets concatenated. 'mean' divides each
    loss by its target length (at least 1), then averages; ``zero_infinity`` replaces infinite
    losses (impossible alignments) and their gradients by 0.

    The gradient is PyTorch's: that of the logits behind ``log_softmax``, ``exp(log_probs)`` less
    the posterior of each label; it has no derivative itself.
    """
    red = _reduction(None, None, reduction)
    batched = log_probs.dim() == 3
    il = _lengths("input_lengths", input_lengths)
    tl = _lengths("target_lengths", target_lengths)
    lp = log_probs if batched else log_probs.unsqueeze(1)
    tg = targets if batched else targets.unsqueeze(0)
    if tg.dim() not in (1, 2):
        raise RuntimeError(f"Expected 1 to 2 dimensions, but got {tg.dim()}-dimensional tensor "
                           f"for argument #2 'targets'{_WHERE}")
    if lp.dim() != 3:
        raise RuntimeError(f"Expected 3-dimensional tensor, but got {lp.dim()}-dimensional "
                           f"tensor for argument #1 'log_probs'{_WHERE}")
    t_max, n, c = lp.shape
    if not 0 <= blank < c:
        raise RuntimeError("blank must be in label range")
    if len(il) != n:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != n:
        raise RuntimeError("target_lengths must be of size batch_size")
    for v in tl:
        if v < 0:
            raise RuntimeError(f"Expected target_lengths to have value at least 0, but got value "
                               f"{v}{_WHERE}")
    s = max(tl, default=0)
    if tg.dim() == 1:
        if tg.shape[0] != sum(tl):
            raise RuntimeError(f"Expected tensor to have size {sum(tl)} at dimension 0, but got "
                               f"size {tg.shape[0]} for argument #2 'targets'{_WHERE}")
        starts = [sum(tl[:i]) for i in range(n)]
        # NOTE: the concatenated targets are gathered into an (N, S) padded block (entries past
        # a target's length are filler, never read).
        index = [[min(st + k, max(sum(tl) - 1, 0)) for k in range(s)] for st in starts]
        flat = tg if tg.numel() else tg.new_zeros(1)
        tg = take(flat, tensor(index, dtype=int64, device=tg.device)) if s else \
            tg.new_zeros(n, 0)
    else:
        if tg.shape[0] != n:
            raise RuntimeError(f"Expected tensor to have size {n} at dimension 0, but got size "
                               f"{tg.shape[0]} for argument #2 'targets'{_WHERE}")
        if tg.shape[1] < s:
            raise RuntimeError(f"Expected tensor to have size at least {s} at dimension 1, but "
                               f"got size {tg.shape[1]} for argument #2 'targets'{_WHERE}")
        tg = tg[:, :s]
    for v in il:
        if v < 0:
            raise RuntimeError(f"Expected input_lengths to have value at least 0, but got value "
                               f"{v}{_WHERE}")
        if v > t_max:
            raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got "
                               f"value {v}{_WHERE}")
    dev = lp.device
    res = CtcLoss.apply(lp, tg.to(int64).contiguous(), tensor(il, dtype=int64, device=dev),
                        tensor(tl, dtype=int64, device=dev), blank=blank,
                        zero_infinity=zero_infinity)
    if zero_infinity:
        res = res.where(res != float("inf"), res.new_zeros(()))
    if red == "mean":
        return (res / clamp_min(tensor(tl, dtype=res.dtype, device=dev), 1)).mean()
    if red == "sum":
        return res.sum()
    return res if batched else res.squeeze(0)
