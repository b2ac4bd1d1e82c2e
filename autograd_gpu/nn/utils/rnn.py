"""``torch.nn.utils.rnn``: ``PackedSequence``, ``pack_padded_sequence``, ``pad_packed_sequence``, ``pad_sequence``, ``pack_sequence``, ``unpack_sequence``, ``unpad_sequence``, ``invert_permutation``.

Packing and padding gather rows with one index computed on the host from the lengths (which
PyTorch keeps on the CPU too): no loop over batch entries.
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from ...creation import arange, empty_like, tensor
from ...functions import cat
from ...tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence", "pack_sequence",
           "pad_packed_sequence", "pad_sequence", "unpack_sequence", "unpad_sequence"]


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """Sequences of unequal lengths, time-major: ``data`` holds step 0 of every sequence, then
    step 1 of those still running, ...; ``batch_sizes[t]`` counts the sequences at step ``t``
    (a CPU int64 tensor). ``sorted_indices`` orders the batch by decreasing length and
    ``unsorted_indices`` undoes that (both None when the input was sorted)."""

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None,
                sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is not None:
            if batch_sizes.device.type != "cpu":
                raise ValueError(
                    "batch_sizes should always be on CPU. Instances of PackedSequence should "
                    "never be created manually. They should be instantiated by functions like "
                    "pack_sequence and pack_padded_sequences in nn.utils.rnn. "
                    "https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence")
            return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)
        data, batch_sizes = data  # type: ignore[misc]
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def _same(self, data: Tensor, device: Any = None) -> PackedSequence:
        if data is self.data and device is None:
            return self
        idx = [None if i is None else (i if device is None else i.to(device))
               for i in (self.sorted_indices, self.unsorted_indices)]
        return type(self)(data, self.batch_sizes, idx[0], idx[1])

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        data = self.data.to(*args, **kwargs)
        return self._same(data, None if data.device == self.data.device else data.device)

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        data = self.data.cuda(*args, **kwargs)
        return self._same(data, data.device)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        data = self.data.cpu(*args, **kwargs)
        return self._same(data, data.device)

    def double(self) -> PackedSequence:
        return self._same(self.data.double())

    def float(self) -> PackedSequence:
        return self._same(self.data.float())

    def half(self) -> PackedSequence:
        return self._same(self.data.half())

    def long(self) -> PackedSequence:
        return self._same(self.data.long())

    def int(self) -> PackedSequence:
        return self._same(self.data.int())

    @property
    def is_cuda(self) -> bool:
        return bool(self.data.is_cuda)

    def is_pinned(self) -> bool:
        return False


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse permutation (``out[permutation[i]] = i``); None stays None."""
    if permutation is None:
        return None
    out = empty_like(permutation)
    idx = arange(permutation.numel(), device=permutation.device)
    return out.scatter_(0, permutation, idx)  # type: ignore[attr-defined]


def _lengths(lengths: Any) -> np.ndarray:
    if isinstance(lengths, Tensor):
        return np.asarray(lengths.cpu().tolist(), dtype=np.int64).reshape(-1)
    return np.asarray(lengths, dtype=np.int64).reshape(-1)


def _step_index(lens: np.ndarray, steps: int) -> np.ndarray:
    """Rows ``t * B + b`` of a time-major ``(steps, B)`` grid that sequences of decreasing
    lengths ``lens`` occupy, in packed order (time, then batch)."""
    mask = np.arange(steps)[:, None] < lens[None, :]
    return np.flatnonzero(mask)


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences of
    the given lengths."""
    lens = _lengths(lengths)
    sorted_indices = None
    if enforce_sorted:
        if lens.size > 1 and np.any(lens[1:] > lens[:-1]):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
    else:
        order = np.argsort(-lens, kind="stable")
        lens = lens[order]
        sorted_indices = tensor(order.tolist(), device=input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if lens.size and lens.min() <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if batch_first:
        input = input.transpose(0, 1)
    steps, batch = int(lens[0]), input.size(1)
    batch_sizes = (np.arange(steps)[:, None] < lens[None, :]).sum(1)
    idx = tensor(_step_index(lens, steps).tolist(), device=input.device)
    flat = input[:steps].reshape(steps * batch, *input.shape[2:])
    data = flat.index_select(0, idx)
    return PackedSequence(data, tensor(batch_sizes.tolist()), sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False,
                        padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The inverse of ``pack_padded_sequence``: ``(padded, lengths)``, ``lengths`` on the CPU."""
    data, batch_sizes = sequence.data, _lengths(sequence.batch_sizes)
    steps = int(batch_sizes.size)
    if total_length is not None:
        if total_length < steps:
            raise ValueError("Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {steps}")
    else:
        total_length = steps
    batch = int(batch_sizes[0]) if steps else 0
    lens = (np.arange(batch)[None, :] < batch_sizes[:, None]).sum(0)
    # NOTE: each grid cell takes its packed row, or the extra padding row appended at the end.
    where = np.full(total_length * batch, data.size(0), dtype=np.int64)
    where[_step_index(lens, steps)] = np.arange(data.size(0))
    pad = data.new_full((1, *data.shape[1:]), padding_value)
    idx = tensor(where.tolist(), device=data.device)
    padded = cat([data, pad]).index_select(0, idx).reshape(total_length, batch, *data.shape[1:])
    lengths = tensor(lens.tolist())
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths[sequence.unsorted_indices.cpu()]
    return padded, lengths


def pad_sequence(sequences: Any, batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences ``(L_i, *)`` into ``(max L, B, *)`` (``(B, max L, *)`` with
    ``batch_first``), padding on ``padding_side``."""
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got "
                           f"{padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    lens = np.asarray([s.size(0) for s in sequences], dtype=np.int64)
    batch, longest = len(sequences), int(lens.max())
    first = sequences[0]
    data = cat([*sequences, first.new_full((1, *first.shape[1:]), padding_value)])
    total = int(lens.sum())
    starts = np.concatenate([[0], np.cumsum(lens)[:-1]])
    pos = np.arange(longest)[None, :]  # grid (B, max L): position within the padded row
    if padding_side == "left":
        pos = pos - (longest - lens)[:, None]
    where = np.where((pos >= 0) & (pos < lens[:, None]), starts[:, None] + pos, total)
    if not batch_first:
        where = where.T
    idx = tensor(np.ascontiguousarray(where).reshape(-1).tolist(), device=first.device)
    shape = (batch, longest) if batch_first else (longest, batch)
    return data.index_select(0, idx).reshape(*shape, *first.shape[1:])


def pack_sequence(sequences: Any, enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences ``(L_i, *)``."""
    lengths = [v.size(0) for v in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)


def unpad_sequence(padded_sequences: Tensor, lengths: Any,
                   batch_first: bool = False) -> list[Tensor]:
    """The list of sequences of a padded batch, each cut to its length."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:int(n)] for seq, n in zip(padded_sequences.unbind(0), _lengths(lengths))]
