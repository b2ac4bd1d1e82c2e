"""Layout: the results of ops that build a new tensor have PyTorch's strides.

A layout is not cosmetic: ``view`` works on a result only where its strides allow, and
``reshape`` of it is a view (a write through it lands in the result) only then. So a result that
is C-contiguous in PyTorch must be here too (reductions, softmax, index_select, gather, ...), one
PyTorch lays out like its input (its TensorIterator keeps the first decisive input's order:
elementwise ops) must be laid out alike, and so must a copy made with ``preserve_format``
(``clone``, ``to``, the ``*_like`` factories) and a leaf's new ``.grad`` (AccumulateGrad's layout
contract). Strides of size-1 dimensions are compared as any (PyTorch's and NumPy's differ there,
and no view depends on them).
"""

from __future__ import annotations

import random
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
    # zero strides in a permuted order (NumPy's own rule would order these differently)
    "expanded_permuted": lambda m, x: x[:, :1].expand(2, 3, 4).permute(2, 0, 1),
    "expanded_transposed": lambda m, x: x[0].t().unsqueeze(1).expand(4, 2, 3),
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
    # reductions: C-contiguous in PyTorch whatever the input (keepdim too)
    "sum0": lambda m, x, c, d: x.sum(0),
    "sum_last_keepdim": lambda m, x, c, d: x.sum(-1, keepdim=True),
    "sum_first_last": lambda m, x, c, d: x.sum((0, -1)),
    "mean0_keepdim": lambda m, x, c, d: x.mean(0, keepdim=True),
    "amax0": lambda m, x, c, d: x.amax(0),
    "amin_last_keepdim": lambda m, x, c, d: x.amin(-1, keepdim=True),
    "max0_values": lambda m, x, c, d: x.max(0)[0],
    "max0_indices": lambda m, x, c, d: x.max(0)[1],
    "min_last_keepdim": lambda m, x, c, d: x.min(-1, keepdim=True)[0],
    "var0": lambda m, x, c, d: x.var(0),
    "std0_keepdim": lambda m, x, c, d: x.std(0, keepdim=True),
    "norm0": lambda m, x, c, d: x.norm(dim=0),
    "prod0_keepdim": lambda m, x, c, d: x.prod(0, keepdim=True),
    "logsumexp0": lambda m, x, c, d: x.logsumexp(0),
    "argmax0": lambda m, x, c, d: x.argmax(0),
    "argmin_last_keepdim": lambda m, x, c, d: x.argmin(-1, keepdim=True),
    "any0": lambda m, x, c, d: (x > 3).any(0),
    "all_last": lambda m, x, c, d: (x > 3).all(-1),
    # softmax computes on a C-contiguous copy: a C-contiguous result
    "softmax_last": lambda m, x, c, d: x.softmax(-1),
    "softmax0": lambda m, x, c, d: x.softmax(0),
    "log_softmax0": lambda m, x, c, d: x.log_softmax(0),
    # dtype conversions and *_like factories: preserve_format (a permuted input stays permuted,
    # others get dense strides in their order)
    "float": lambda m, x, c, d: x.float(),
    "float_double": lambda m, x, c, d: x.float().double(),
    "to_int64": lambda m, x, c, d: x.to(m.int64),
    "bool": lambda m, x, c, d: x.bool(),
    "to_cpu": lambda m, x, c, d: x.to("cpu") * 1 if m is ag else x * 1,  # from any device
    "zeros_like": lambda m, x, c, d: m.zeros_like(x),
    "zeros_like_int64": lambda m, x, c, d: m.zeros_like(x, dtype=m.int64),
    "ones_like": lambda m, x, c, d: m.ones_like(x),
    "empty_like": lambda m, x, c, d: m.empty_like(x),
    "full_like": lambda m, x, c, d: m.full_like(x, 2.0),
    "rand_like": lambda m, x, c, d: m.rand_like(x),
    "randn_like": lambda m, x, c, d: m.randn_like(x),
    # unary ops keep the input's order; pow(scalar, tensor) is C-contiguous
    "exp": lambda m, x, c, d: x.exp(),
    "neg": lambda m, x, c, d: -x,
    "sigmoid": lambda m, x, c, d: x.sigmoid(),
    "mul_scalar": lambda m, x, c, d: x * 2,
    "rsub_scalar": lambda m, x, c, d: 1 - x,
    "rpow": lambda m, x, c, d: 2 ** x,
    "bitwise_not": lambda m, x, c, d: ~(x > 2),
    # binary ops over mixed layouts: the first input that tells two dims apart decides
    "mul_contiguous_second": lambda m, x, c, d: x * x.contiguous(),
    "mul_contiguous_first": lambda m, x, c, d: x.contiguous() * x,
    "add_broadcast_row": lambda m, x, c, d: x + x[:1].contiguous(),
    "sub_broadcast_col_first": lambda m, x, c, d: x[..., :1].contiguous() - x,
    "gt_contiguous": lambda m, x, c, d: x > x.contiguous(),
    "logical_and": lambda m, x, c, d: m.logical_and(x > 2, (x > 3).contiguous()),
    "clamp_tensors": lambda m, x, c, d: m.clamp(x, x.contiguous() - 1, x.contiguous() + 1),
    "mse_loss_none": lambda m, x, c, d: m.nn.functional.mse_loss(x, x.contiguous(),
                                                                 reduction="none"),
    "bce_none": lambda m, x, c, d: m.nn.functional.binary_cross_entropy(
        x / 30, (x / 30).contiguous(), reduction="none"),
    "bce_logits_none": lambda m, x, c, d: m.nn.functional.binary_cross_entropy_with_logits(
        x.contiguous(), x / 30, reduction="none"),
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


def test_reported_cases_view_and_reshape_as_torch(device: str) -> None:
    """softmax of a transposed tensor is C-contiguous (reshape is a view: the write lands in y);
    ``(x.t() * 1).t()`` is C-contiguous (the CUDA kernels lay out their results as PyTorch);
    a transposed leaf's ``.grad`` has its strides, so ``p.grad.view(-1)`` works."""
    for m, d in ((torch, "cpu"), (ag, device)):
        y = m.zeros(3, 2, device=d).t().softmax(-1)
        y.reshape(-1)[0] = 5
        assert y[0, 0].item() == 5
        x = m.arange(6.0, device=d).reshape(3, 2)
        assert (x.t() * 1).t().view(-1).tolist() == list(range(6))
        assert (x.t().exp().t().log()).view(-1).shape == (6,)
        p = m.ones(3, 4, device=d).t().requires_grad_()
        (p * m.arange(4.0, device=d).reshape(4, 1)).sum().backward()
        assert p.grad.stride() == (1, 4) and p.grad.t().reshape(-1).shape == (12,)
        assert m.zeros_like(p).t().view(-1).shape == (12,)


GRAD_PARAMS: dict[str, Callable[[Any, str], Any]] = {
    "contiguous": lambda m, d: m.ones(3, 4, device=d),
    "transposed": lambda m, d: m.ones(3, 4, device=d).t(),
    "permuted": lambda m, d: m.ones(2, 3, 4, device=d).permute(2, 0, 1),
    "strided": lambda m, d: m.ones(4, 6, device=d)[:, ::2],
}
GRAD_FNS: dict[str, Callable[[Any, Any], Any]] = {
    "mul": lambda m, p: p * 2,
    "contiguous_mul": lambda m, p: p.contiguous() * 2,
    "softmax": lambda m, p: p.softmax(-1),
    "matmul": lambda m, p: p @ m.ones(p.shape[-1], 2, dtype=p.dtype, device=p.device),
    "sum_keepdim": lambda m, p: p.sum(0, keepdim=True),
}


@pytest.mark.parametrize("fn", sorted(GRAD_FNS))
def test_leaf_grad_layout_follows_the_leaf(device: str, fn: str) -> None:
    """PyTorch's gradient layout contract (AccumulateGrad): a new ``.grad`` has the strides of a
    dense, non-overlapping leaf, else it is C-contiguous; accumulating keeps its layout."""
    for name, make in GRAD_PARAMS.items():
        layouts = []
        for m, d in ((ag, device), (torch, "cpu")):
            p = make(m, d).requires_grad_()
            for _ in range(2):
                GRAD_FNS[fn](m, p).sum().backward()
                g = p.grad
                layouts.append((tuple(s if n > 1 else None for s, n in zip(g.stride(), g.shape)),
                                g.tolist()))
        assert layouts[:2] == layouts[2:], name


def test_matmul_grads_of_column_major_factors_come_back_in_their_layout(device: str) -> None:
    """``linear`` multiplies by ``w.t()`` (column-major): as PyTorch's mm_mat1/mat2_backward,
    the gradient of a column-major factor is computed column-major, so it reaches ``w`` in
    ``w``'s own (C) order (``.grad`` then needs no transposing copy)."""
    seen = []
    for m, d in ((ag, device), (torch, "cpu")):
        x = m.ones(5, 3, device=d).requires_grad_()
        w = m.ones(4, 3, device=d).requires_grad_()
        xt, wt = x.t(), w.t()
        xt.retain_grad()
        wt.retain_grad()
        (x @ wt).sum().backward()
        (xt.t() @ wt).sum().backward()
        seen.append([(t.grad.stride(), t.grad.tolist()) for t in (x, w, xt, wt)])
    assert seen[0] == seen[1]


def _random_view(m: Any, dev: str, shape: list[int], perm: list[int], expand: bool,
                 out_shape: list[int]) -> Any:
    """``arange`` laid out in ``perm`` order (innermost last), of ``shape``; expanded to
    ``out_shape`` when asked (zero strides), else broadcast by the op."""
    n = 1
    for s in shape:
        n *= s
    base = (m.arange(n, dtype=m.float64, device=dev) if m is ag
            else torch.arange(n, dtype=torch.float64))
    x = base.reshape(*[shape[p] for p in perm]).permute(*[perm.index(d) for d in range(len(perm))])
    return x.expand(*out_shape) if expand else x


def _size1_quirk(xs: tuple[Any, ...]) -> bool:
    """PyTorch lets the stride of a size-1 dim order the others when the inputs broadcast and
    all are contiguous: ``x (2, 1, 1) * y (1, 2, 3)`` with x's size-1 dims permuted outside can
    give a non-C result. We give C order to contiguous inputs without a look (a look at every
    op would cost more than the case is worth); this skips that case."""
    if not all(x.is_contiguous() for x in xs) or len({tuple(x.shape) for x in xs}) == 1:
        return False
    for x in xs:
        c = 1
        for s, n in reversed(list(zip(x.stride(), x.shape))):
            if n == 1 and s != c:
                return True
            c *= n
    return False


def test_random_layouts_of_elementwise_ops_match_torch(device: str) -> None:
    """TensorIterator's rule on random layouts: permuted, broadcast (size 1) and expanded
    (stride 0) operands of ``x * y``, ``y * x``, ``exp(x * y)`` and ``exp(x)``."""
    rng = random.Random(13)
    for _ in range(300):
        nd = rng.randint(2, 4)
        out_shape = [rng.choice([2, 3]) for _ in range(nd)]
        specs = []
        for _ in range(2):
            perm = list(range(nd))
            if rng.random() < 0.6:
                rng.shuffle(perm)
            specs.append(([1 if rng.random() < 0.25 else s for s in out_shape], perm,
                          rng.random() < 0.3))
        seen = []
        for m, d in ((ag, device), (torch, "cpu")):
            x, y = (_random_view(m, d, s, p, e, out_shape) for s, p, e in specs)
            if m is torch and _size1_quirk((x, y)):
                break
            seen.append([tuple(s if n > 1 else None for s, n in zip(t.stride(), t.shape))
                         for t in (x * y, y * x, (x * y).exp(), x.exp())])
        else:
            assert seen[0] == seen[1], specs
