"""Misuse catalogue: shape ops. ``cat`` with legacy empty inputs (shape (0,) among tensors of
another rank: skipped in the result, still in the graph and in the dtype promotion), 0-d inputs
and ``dim`` checks; ``stack``; matrix products with empty dimensions (forward and backward, every
path of ``matmul``); ``repeat`` (a new, writable, C-contiguous tensor); and the layout of results
that PyTorch makes C-contiguous (``view`` works on them, and ``reshape`` of them is a view, so a
write through it lands).

Where torch runs, the program returns values (and gradients) that must match; a program that
reads gradients runs in float64.
"""

from __future__ import annotations

from typing import Any

from tests.misuse._catalogue import Case, catalogue_test


def _leaf(T: Any, dev: str, *shape: int) -> Any:
    """``arange`` of ``shape`` in float64, requiring grad."""
    n = 1
    for s in shape:
        n *= s
    return T.arange(n, dtype=T.float64, device=dev).reshape(shape).requires_grad_()


def _grads(T: Any, out: Any, *leaves: Any) -> Any:
    """``out``, then the gradients of ``sum(out * w)`` (``w``: 1, 2, 3, ...) with respect to
    ``leaves`` (None where a leaf gets none)."""
    w = T.arange(1, out.numel() + 1, dtype=out.dtype, device=out.device).reshape(out.shape)
    (out * w).sum().backward()
    return (out,) + tuple(t.grad for t in leaves)


def _cat_empty(T: Any, dev: str, dim: int, *shapes: tuple[int, ...]) -> Any:
    """``cat`` of ``a_i + s`` (``a_i`` of ``shapes``, ``s`` a shared 0-d leaf): every input and
    ``s`` must get a gradient, also the skipped ones (empty, and 0 for ``s``)."""
    s = T.tensor(0.5, dtype=T.float64, device=dev, requires_grad=True)
    leaves = [_leaf(T, dev, *shape) for shape in shapes]
    return _grads(T, T.cat([a + s for a in leaves], dim), s, *leaves)


CAT: dict[str, Case] = {
    # the reported case: cat([e, a + s]) with e, a of shape (0,) left a and s without gradient
    "cat_all_empty_grads": lambda T, dev: _cat_empty(T, dev, 0, (0,), (0,)),
    "cat_empty_skipped_grads": lambda T, dev: _cat_empty(T, dev, 1, (0,), (2, 3), (0,)),
    "cat_empty_skipped_dim0": lambda T, dev: _cat_empty(T, dev, 0, (2, 3), (0,), (1, 3)),
    "cat_empty_skipped_neg_dim": lambda T, dev: _cat_empty(T, dev, -1, (0,), (2, 0)),
    "cat_empty_1d_among_1d": lambda T, dev: _cat_empty(T, dev, 0, (0,), (3,), (0,)),
    "cat_empty_grad_fn": lambda T, dev: [
        n is not None for n, _ in T.cat([_leaf(T, dev, 0), _leaf(T, dev, 2, 2) * 1]).grad_fn
        .next_functions],
    "cat_all_empty_any_dim": lambda T, dev: T.cat([T.zeros(0, device=dev)] * 2, 5),
    "cat_all_empty_neg_dim": lambda T, dev: T.cat([T.zeros(0, device=dev)], -7),
    "cat_skipped_dtype_promotes": lambda T, dev: (lambda y: (y, repr(y.dtype)))(T.cat(
        [T.zeros(0, dtype=T.float64, device=dev), T.ones(2, 3, device=dev)])),
    "cat_empty_dtypes_promote": lambda T, dev: repr(T.cat(
        [T.zeros(0, dtype=T.int64, device=dev), T.zeros(0, dtype=T.float16, device=dev)]).dtype),
    "cat_0d_second": lambda T, dev: T.cat([T.zeros(0, device=dev), T.tensor(1.0, device=dev)]),
    "cat_0d_after_bad_rank": lambda T, dev: T.cat(
        [T.ones(2, 3, device=dev), T.ones(3, device=dev), T.tensor(1.0, device=dev)]),
    "cat_0d_before_dim_check": lambda T, dev: T.cat(
        [T.ones(2, 3, device=dev), T.tensor(1.0, device=dev)], 5),
    "cat_bad_size_counts_skipped": lambda T, dev: T.cat(
        [T.zeros(0, device=dev), T.ones(2, 3, device=dev), T.ones(3, 3, device=dev)], 1),
    "cat_bad_rank_after_skipped": lambda T, dev: T.cat(
        [T.zeros(0, device=dev), T.ones(2, 3, device=dev), T.ones(2, 3, 1, device=dev)], 1),
    "cat_dim_out_of_range": lambda T, dev: T.cat([T.zeros(2, 0, device=dev),
                                                  T.zeros(0, device=dev)], 2),
    "stack_empty_grads": lambda T, dev: _grads(
        T, T.stack([a := _leaf(T, dev, 0), b := _leaf(T, dev, 0)], -1), a, b),
    "stack_empty_and_matrix": lambda T, dev: T.stack([T.zeros(2, 0, device=dev),
                                                      T.zeros(0, device=dev)]),
}


def _mm(T: Any, dev: str, fn: str, a: tuple[int, ...], b: tuple[int, ...],
        grad: tuple[bool, bool] = (True, True)) -> Any:
    """``fn(x, y)`` (x, y of shapes a, b) with its gradients, its node and its layout."""
    x = _leaf(T, dev, *a).requires_grad_(grad[0])
    y = _leaf(T, dev, *b).requires_grad_(grad[1])
    out = getattr(T, fn)(x, y)
    name = out.grad_fn.name() if out.grad_fn is not None else None
    return _grads(T, out, *[t for t, g in zip((x, y), grad) if g]) + (name, out.is_contiguous())


MATMUL: dict[str, Case] = {
    # the reported case: reshape(-1, 0) of an empty batch is ambiguous
    "matmul_empty_batch_matrix": lambda T, dev: _mm(T, dev, "matmul", (0, 0, 0), (0, 1)),
    "matmul_empty_batch_vector": lambda T, dev: _mm(T, dev, "matmul", (2, 3, 0), (0,)),
    "matmul_empty_inner": lambda T, dev: _mm(T, dev, "matmul", (2, 3, 0), (0, 4)),
    "matmul_empty_inner_no_grad_b": lambda T, dev: _mm(T, dev, "matmul", (2, 3, 0), (0, 4),
                                                       (True, False)),
    "matmul_vector_empty_batch": lambda T, dev: _mm(T, dev, "matmul", (0,), (2, 0, 3)),
    "matmul_matrix_empty_batch": lambda T, dev: _mm(T, dev, "matmul", (1, 0), (2, 0, 3)),
    "matmul_matrix_empty_batch_no_grad_a": lambda T, dev: _mm(T, dev, "matmul", (1, 0),
                                                              (2, 0, 3), (False, True)),
    "matmul_batch_0_and_1": lambda T, dev: _mm(T, dev, "matmul", (0, 2, 3), (1, 3, 4)),
    "matmul_batch_1_and_0_no_grad_a": lambda T, dev: _mm(T, dev, "matmul", (1, 2, 3), (0, 3, 4),
                                                         (False, True)),
    "matmul_broadcast_empty": lambda T, dev: _mm(T, dev, "matmul", (2, 1, 0, 3), (4, 3, 2)),
    "matmul_4d_vector": lambda T, dev: _mm(T, dev, "matmul", (2, 0, 1, 3), (3,)),
    "matmul_empty_rows_cols": lambda T, dev: _mm(T, dev, "matmul", (0, 3), (3, 0)),
    "mm_empty_inner": lambda T, dev: _mm(T, dev, "mm", (2, 0), (0, 3)),
    "bmm_empty_batch": lambda T, dev: _mm(T, dev, "bmm", (0, 2, 3), (0, 3, 1)),
    "mv_empty": lambda T, dev: _mm(T, dev, "mv", (2, 0), (0,)),
    "dot_empty": lambda T, dev: _mm(T, dev, "dot", (0,), (0,)),
    # refused: which product reports the mismatch follows PyTorch's folding rule
    "matmul_mismatch_folded_mv": lambda T, dev: _mm(T, dev, "matmul", (0,), (1, 1, 0),
                                                    (False, True)),
    "matmul_mismatch_batch_1_no_grad": lambda T, dev: _mm(T, dev, "matmul", (0, 0, 1),
                                                          (1, 2, 0), (True, False)),
    "matmul_mismatch_folded_mm": lambda T, dev: _mm(T, dev, "matmul", (2, 3, 0), (1, 4)),
}


def _write_through(y: Any) -> Any:
    """``y`` after ``y.reshape(-1)[::2] -= 1``: the write lands in ``y`` when reshape gives a
    view (as PyTorch's does for a C-contiguous ``y``)."""
    y.reshape(-1)[::2].sub_(1)
    return y


LAYOUT: dict[str, Case] = {
    # the reported case: a clone of index_select along dim 1 was not C-contiguous, so reshape
    # copied and the write was lost
    "index_select_dim1_reshape_write": lambda T, dev: _write_through(
        T.zeros(2, 1, device=dev).index_select(1, T.tensor([0, 0], device=dev)).clone()),
    "index_select_dim1_view": lambda T, dev: T.arange(6.0, device=dev).reshape(2, 3)
    .index_select(1, T.tensor([2, 0], device=dev)).view(-1),
    "index_select_transposed_view": lambda T, dev: T.arange(6.0, device=dev).reshape(2, 3).t()
    .index_select(0, T.tensor([2, 0], device=dev)).view(-1),
    "index_slice_then_array_view": lambda T, dev: T.arange(6.0, device=dev).reshape(2, 3)[
        :, T.tensor([2, 0], device=dev)].view(-1),
    "index_transposed_view_refused": lambda T, dev: T.arange(24.0, device=dev).reshape(2, 3, 4)
    .transpose(0, 2)[:, T.tensor([0, 0], device=dev)].view(-1),
    "repeat_view": lambda T, dev: T.arange(3.0, device=dev).reshape(3, 1).repeat(1, 2).view(-1),
    "repeat_reshape_write": lambda T, dev: _write_through(
        T.arange(3.0, device=dev).reshape(3, 1).repeat(1, 2)),
    "cat_transposed_view": lambda T, dev: T.cat([T.ones(2, 3, device=dev).t()] * 2).view(-1),
    "stack_transposed_view": lambda T, dev: T.stack([T.ones(2, 3, device=dev).t()] * 2, -1)
    .view(-1),
    "masked_fill_transposed_view": lambda T, dev: T.ones(2, 3, device=dev).t().masked_fill(
        T.tensor(True, device=dev), 0.0).view(-1),
    "where_keeps_transposed_layout": lambda T, dev: T.where(
        T.ones(2, 3, dtype=T.bool, device=dev).t(), T.ones(2, 3, device=dev).t(),
        T.zeros(3, 2, device=dev)).view(-1),
}

REPEAT: dict[str, Case] = {
    # the reported case: a one-element tensor repeated was a read-only broadcast view
    "repeat_one_element_mul_": lambda T, dev: T.ones((), device=dev).repeat(2, 3).mul_(2),
    "repeat_one_element_view_add_": lambda T, dev: T.ones(1, device=dev).repeat(4)[1:].add_(1),
    "repeat_ones_is_a_copy": lambda T, dev: (lambda x: (x.repeat(1, 1).add_(1), x))(
        T.arange(4.0, device=dev).reshape(2, 2)),
    "repeat_grad": lambda T, dev: _grads(T, (x := _leaf(T, dev, 2, 1)).repeat(2, 1, 3), x),
    "repeat_inplace_grad": lambda T, dev: _grads(
        T, (x := _leaf(T, dev, 1)).repeat(3).mul_(2), x),
    "repeat_too_few_dims": lambda T, dev: T.ones(2, 2, device=dev).repeat(2),
}

def _bool_product(name: str, *shapes: tuple[int, ...]) -> Case:
    return lambda T, dev: getattr(T, name)(*[T.ones(*s, dtype=T.bool, device=dev)
                                             for s in shapes])


BOOL_AND_EXPAND: dict[str, Case] = {
    "bool_mm": _bool_product("mm", (2, 2), (2, 2)),
    "bool_bmm": _bool_product("bmm", (1, 2, 2), (1, 2, 2)),
    "bool_dot": _bool_product("dot", (2,), (2,)),
    "bool_mv": _bool_product("mv", (2, 2), (2,)),
    "bool_matmul": _bool_product("matmul", (2, 2), (2, 2)),
    "bool_matmul_1d": _bool_product("matmul", (2,), (2,)),
    "bool_addmm": _bool_product("addmm", (2, 2), (2, 2), (2, 2)),
    "expand_reports_last_bad_dim": lambda T, dev: T.ones(2, 3, 5, device=dev).expand(3, 4, 5),
    "expand_reports_last_bad_dim_2d": lambda T, dev: T.ones(2, 3, device=dev).expand(3, 4),
}
CASES: dict[str, Case] = {**CAT, **MATMUL, **LAYOUT, **REPEAT, **BOOL_AND_EXPAND}

CASES.update({
    "unflatten_product": lambda T, d: T.ones(2, 6, device=d).unflatten(1, (2, 4)),
    "unflatten_two_inferred": lambda T, d: T.ones(2, 6, device=d).unflatten(1, (-1, -1)),
    "unflatten_inferred_not_dividing": lambda T, d: T.ones(2, 6, device=d).unflatten(1, (-1, 4)),
    "unflatten_empty_sizes": lambda T, d: T.ones(2, 6, device=d).unflatten(1, ()),
    "unflatten_negative_dim": lambda T, d: T.ones(2, 6, device=d).unflatten(-1, (4, 2)),
    "unflatten_zero_size": lambda T, d: T.ones(2, 6, device=d).unflatten(1, (0, -1)),
    "unflatten_inferred": lambda T, d: T.ones(2, 6, device=d).unflatten(1, (2, -1)).shape,
    "unflatten_module": lambda T, d: T.nn.Unflatten(1, (2, 4))(T.ones(2, 6, device=d)),
})

test_misuse = catalogue_test(CASES)
