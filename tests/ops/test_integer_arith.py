"""``//`` and ``%`` (no gradient) against the torch oracle: signs, scalars, dtypes."""

from __future__ import annotations

import pytest
import torch

import autograd_gpu as ag

CASES = [
    ([7, -7, 5, -5], [2, 2, -3, -3]),
    ([7.5, -7.5, 0.5], [2.0, 2.0, -0.25]),
]


@pytest.mark.parametrize("a, b", CASES)
def test_floor_divide_and_remainder_match_torch(device: str, a: list, b: list) -> None:
    x, y = ag.tensor(a, device=device), ag.tensor(b, device=device)
    tx, ty = torch.tensor(a), torch.tensor(b)
    for ours, theirs in [(x // y, tx // ty), (x % y, tx % ty), (x // 2, tx // 2),
                         (x % 3, tx % 3), (x // 2.5, tx // 2.5)]:
        assert ours.tolist() == theirs.tolist()
        assert repr(ours.dtype) == repr(theirs.dtype)
