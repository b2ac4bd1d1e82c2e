"""Layout: the results of ops that build a new tensor have PyTorch's strides.

A layout is not cosmetic: ``view`` works on a result only where its strides allow, and
``reshape`` of it is a view (a write through it lands in the result) only then. So a result that
is C-contiguous in PyTorch must be here too, and one PyTorch lays out like its input (its
TensorIterator keeps the first decisive input's order) must be laid out alike. Strides of size-1
dimensions are compared as any (PyTorch's and NumPy's differ there, and no view depends on them).
"""

from __future__ import annotations

from typing import Any, Callable

import pytest
import torch

import autograd_gpu as ag

INPUTS: dict[str, Callable[[Any, Any], Any]] = {
    "contiguous": lambda m, x: x,
    "transposed": lambda m, x: x.transpose(0, 2),
    "permuted": lambda m, x: x.permute(1, 2, 0),
    "strided": lambda m, x: x[:, ::2],
    "expanded": lambda m, x: x[:, :1].expand(2, 3, 4),
    "column": lambda m, x: x[0, :, :1],
    "matrix": lambda m, x: x[0],
    "matrix_t": lambda m, x: x[0].t(),
}


def _i(m: Any, dev: str, v: Any) -> Any:
    return m.tensor(v, device=dev) if m is ag else torch.tensor(v)


def _mask(m: Any, x: Any) -> Any:
    return (x > 2).flatten()[:x.shape[0]].reshape(x.shape[:1])


OPS: dict[str, Callable[[Any, Any, Any, str], Any]] = {
    # advanced indexing: TensorIterator's order over the restrided input and the index arrays
    "index_first": lambda m, x, c, d: x[_i(m, d, [0, 0, -1])[:x.shape[0]]],
    "index_after_slice": lambda m, x, c, d: x[:, _i(m, d, [0, 0])],
    "index_last": lambda m, x, c, d: x[..., _i(m, d, [0, 0])],
    "index_pair": lambda m, x, c, d: x[_i(m, d, [0, 0]), _i(m, d, [0, 0])],
    "index_2d_array": lambda m, x, c, d: x[_i(m, d, [[0, 0], [0, 0]]).t()],
    "index_apart": lambda m, x, c, d: x[_i(m, d, [0, 0]), :, _i(m, d, [0, 0])] if x.ndim == 3
    else x[_i(m, d, [0]), :],
    "index_int_and_array": lambda m, x, c, d: x[0, _i(m, d, [0, 0])],
    "index_mask": lambda m, x, c, d: x[_mask(m, x)],
    "index_mask_all_dims": lambda m, x, c, d: x[x > 2],
    "index_mask_then_array": lambda m, x, c, d: x[_mask(m, x), _i(m, d, [0])],
    # C-contiguous in PyTorch whatever the input
    "index_select0": lambda m, x, c, d: x.index_select(0, _i(m, d, [0, 0])),
    "index_select1": lambda m, x, c, d: x.index_select(1, _i(m, d, [0, 0])),
    "index_select_last": lambda m, x, c, d: x.index_select(-1, _i(m, d, [0, 0])),
    "gather0": lambda m, x, c, d: m.gather(x, 0, m.zeros_like(x, dtype=m.int64)),
    "gather_last": lambda m, x, c, d: m.gather(x, -1, m.zeros_like(x, dtype=m.int64)),
    "masked_fill": lambda m, x, c, d: x.masked_fill(x > 3, 0.0),
    "masked_fill_tensor": lambda m, x, c, d: x.masked_fill(x > 3, _i(m, d, 0.0)),
    "cat0": lambda m, x, c, d: m.cat([x, x], 0),
    "cat_last": lambda m, x, c, d: m.cat([x, x.contiguous()], -1),
    "stack0": lambda m, x, c, d: m.stack([x, x], 0),
    "stack_last": lambda m, x, c, d: m.stack([x, x], -1),
    "repeat_first": lambda m, x, c, d: x.repeat(*([2] + [1] * (x.ndim - 1))),
    "repeat_last": lambda m, x, c, d: x.repeat(*([1] * (x.ndim - 1) + [2])),
    "repeat_ones": lambda m, x, c, d: x.repeat(*([1] * x.ndim)),
    "repeat_more_dims": lambda m, x, c, d: x.repeat(*([2] * (x.ndim + 1))),
    "matmul": lambda m, x, c, d: x @ x.mT,
    "matmul_t": lambda m, x, c, d: x.mT @ x,
    "matmul_vector": lambda m, x, c, d: x @ m.ones(x.shape[-1], dtype=x.dtype, device=x.device),
    # elementwise over several inputs: the first input that tells two dims apart decides
    "where": lambda m, x, c, d: m.where(c, x, 0.0),
    "where_mixed": lambda m, x, c, d: m.where(c, x, x.contiguous()),
    "where_contiguous_cond": lambda m, x, c, d: m.where(c.contiguous(), x, x.contiguous()),
    "where_broadcast": lambda m, x, c, d: m.where(c, x, x[..., :1]),
}


def _layout(m: Any, op: str, inp: str, dev: str) -> Any:
    base = (m.arange(24, dtype=m.float64, device=dev) if m is ag
            else torch.arange(24, dtype=torch.float64)).reshape(2, 3, 4)
    # NOTE: the condition of where is made with the input's view of a contiguous mask, so that
    # its layout does not depend on the comparison's (a CUDA kernel's result is C-contiguous).
    x, c = INPUTS[inp](m, base), INPUTS[inp](m, base > 3)
    try:
        y = OPS[op](m, x, c, dev)
    except Exception as e:  # noqa: BLE001
        return type(e).__name__
    strides = tuple(s if n > 1 else None for s, n in zip(y.stride(), y.shape))
    return tuple(y.shape), y.is_contiguous(), strides if y.numel() > 1 else None


@pytest.mark.parametrize("op", sorted(OPS))
def test_layout_matches_torch(device: str, op: str) -> None:
    for inp in INPUTS:
        ours, theirs = _layout(ag, op, inp, device), _layout(torch, op, inp, "cpu")
        assert ours == theirs, (inp, ours, theirs)


def test_view_and_reshape_of_results_follow_layout(device: str) -> None:
    """The reported case: a clone of index_select along dim 1 must be C-contiguous, so that
    ``reshape(-1)`` is a view and ``view(-1)`` works, as in PyTorch."""
    for m, d in ((torch, "cpu"), (ag, device)):
        y = m.zeros(2, 1, device=d).index_select(1, _i(m, d, [0, 0])).clone()
        y.reshape(-1)[::2].sub_(1)
        assert y.view(-1).tolist() == [-1.0, 0.0, -1.0, 0.0]
