"""Every common misuse raises PyTorch's error type with PyTorch's first sentence (each case is
triggered in torch too, and the first sentences compared)."""

from __future__ import annotations

from typing import Any, Callable

import pytest

from ._util import same_error


def f64(T: Any, dev: str, *shape: int, rg: bool = False) -> Any:
    return T.ones(*shape, dtype=T.float64, device=dev, requires_grad=rg)


def backward_twice(T: Any, dev: str) -> Any:
    x = f64(T, dev, 3, rg=True)
    y = (x.exp() * x).sum()
    y.backward()
    y.backward()


def saved_tensors_after_free(T: Any, dev: str) -> Any:
    x = f64(T, dev, 3, rg=True)
    y = x.exp()
    y.sum().backward()
    return y.grad_fn.saved_tensors if T.__name__ == "autograd_gpu" else y.grad_fn._saved_result


def non_scalar_backward(T: Any, dev: str) -> Any:
    (f64(T, dev, 3, rg=True) * 2).backward()


def no_grad_fn(T: Any, dev: str) -> Any:
    f64(T, dev, 3).sum().backward()


def no_grad_fn_autograd_grad(T: Any, dev: str) -> Any:
    x = f64(T, dev, 3, rg=True)
    T.autograd.grad(f64(T, dev, 3).sum(), x)


def input_without_grad(T: Any, dev: str) -> Any:
    x = f64(T, dev, 3, rg=True)
    T.autograd.grad((x * 2).sum(), f64(T, dev, 3))


def unused_input(T: Any, dev: str) -> Any:
    x, z = f64(T, dev, 3, rg=True), f64(T, dev, 3, rg=True)
    T.autograd.grad((x * 2).sum(), [x, z])


def saved_modified(T: Any, dev: str) -> Any:
    x = f64(T, dev, 3, rg=True)
    h = x + 1
    y = h * h
    h.add_(1)
    y.sum().backward()


def inplace_leaf(T: Any, dev: str) -> Any:
    f64(T, dev, 3, rg=True).mul_(2)


def inplace_view_of_leaf(T: Any, dev: str) -> Any:
    f64(T, dev, 2, 3, rg=True)[0].mul_(2)


def requires_grad_int(T: Any, dev: str) -> Any:
    T.ones(3, dtype=T.int64, device=dev).requires_grad_()


def requires_grad_int_factory(T: Any, dev: str) -> Any:
    T.tensor([1, 2], device=dev, requires_grad=True)


def requires_grad_non_leaf(T: Any, dev: str) -> Any:
    (f64(T, dev, 3, rg=True) * 2).requires_grad_(False)


def numpy_requires_grad(T: Any, dev: str) -> Any:
    f64(T, dev, 3, rg=True).numpy()


def broadcast_mismatch(T: Any, dev: str) -> Any:
    f64(T, dev, 2, 3) + f64(T, dev, 4)


def broadcast_mismatch_mul(T: Any, dev: str) -> Any:
    f64(T, dev, 5, 3) * f64(T, dev, 4, 1)


def mm_mismatch(T: Any, dev: str) -> Any:
    T.mm(f64(T, dev, 2, 3), f64(T, dev, 4, 5))


def matmul_mismatch(T: Any, dev: str) -> Any:
    f64(T, dev, 2, 3) @ f64(T, dev, 4, 5)


def bmm_mismatch(T: Any, dev: str) -> Any:
    T.bmm(f64(T, dev, 2, 2, 3), f64(T, dev, 2, 4, 5))


def bmm_batch_mismatch(T: Any, dev: str) -> Any:
    T.bmm(f64(T, dev, 2, 2, 3), f64(T, dev, 3, 3, 5))


def mv_mismatch(T: Any, dev: str) -> Any:
    T.mv(f64(T, dev, 2, 3), f64(T, dev, 4))


def dot_mismatch(T: Any, dev: str) -> Any:
    T.dot(f64(T, dev, 3), f64(T, dev, 4))


def dot_not_1d(T: Any, dev: str) -> Any:
    T.dot(f64(T, dev, 3, 1), f64(T, dev, 3))


def wrong_gradient_shape(T: Any, dev: str) -> Any:
    x = f64(T, dev, 2, 3, rg=True)
    (x * 2).backward(f64(T, dev, 3, 2))


def wrong_grad_outputs_shape(T: Any, dev: str) -> Any:
    x = f64(T, dev, 2, 3, rg=True)
    T.autograd.grad(x * 2, x, f64(T, dev, 6))


def item_multi(T: Any, dev: str) -> Any:
    f64(T, dev, 3).item()


def bool_multi(T: Any, dev: str) -> Any:
    bool(f64(T, dev, 3))


def view_non_contiguous(T: Any, dev: str) -> Any:
    f64(T, dev, 2, 3).t().view(6)


def reshape_bad_size(T: Any, dev: str) -> Any:
    f64(T, dev, 2, 3).reshape(4, 2)


def view_bad_size(T: Any, dev: str) -> Any:
    f64(T, dev, 2, 3).view(5, -1)


def two_inferred(T: Any, dev: str) -> Any:
    f64(T, dev, 2, 3).view(-1, -1)


def dim_out_of_range(T: Any, dev: str) -> Any:
    f64(T, dev, 2, 3).sum(dim=2)


def dim_out_of_range_neg(T: Any, dev: str) -> Any:
    f64(T, dev, 2, 3).softmax(dim=-3)


def transpose_dim_out_of_range(T: Any, dev: str) -> Any:
    f64(T, dev, 2, 3).transpose(0, 5)


def index_out_of_bounds(T: Any, dev: str) -> Any:
    f64(T, dev, 2, 3)[2]


def index_out_of_bounds_dim1(T: Any, dev: str) -> Any:
    f64(T, dev, 2, 3)[0, -4]


def tensor_index_out_of_bounds(T: Any, dev: str) -> Any:
    f64(T, dev, 2, 3)[T.tensor([0, 5], device=dev)]


def too_many_indices(T: Any, dev: str) -> Any:
    f64(T, dev, 2, 3)[0, 0, 0]


def cat_mismatch(T: Any, dev: str) -> Any:
    T.cat([f64(T, dev, 2, 3), f64(T, dev, 2, 4)], dim=0)


def cat_ndim_mismatch(T: Any, dev: str) -> Any:
    T.cat([f64(T, dev, 2, 3), f64(T, dev, 3)])


def stack_mismatch(T: Any, dev: str) -> Any:
    T.stack([f64(T, dev, 2, 3), f64(T, dev, 3, 2)])


def cat_empty_list(T: Any, dev: str) -> Any:
    T.cat([])


def grad_non_floating_output(T: Any, dev: str) -> Any:
    T.ones(2, dtype=T.int64, device=dev).sum().backward()


def mark_leaf_requires_grad_false_non_leaf(T: Any, dev: str) -> Any:
    x = f64(T, dev, 3, rg=True)
    y = x * 2
    y.requires_grad = False


def retain_grad_no_grad(T: Any, dev: str) -> Any:
    f64(T, dev, 3).retain_grad()


def backward_empty_inputs(T: Any, dev: str) -> Any:
    x = f64(T, dev, 3, rg=True)
    (x * 2).sum().backward(inputs=[])


CASES: dict[str, Callable[[Any, str], Any]] = {
    k: v for k, v in dict(globals()).items()
    if callable(v) and not k.startswith("_") and k not in {"f64", "same_error", "Any", "Callable"}
    and getattr(v, "__module__", None) == __name__
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_error_matches_torch(device: str, name: str) -> None:
    same_error(CASES[name], device)
