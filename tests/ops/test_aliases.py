"""PyTorch's other names and in-place forms (functions/aliases.py) against the oracle: values,
dtypes, the tensor returned, version counters, grad_fn names of in-place view ops, and the
refusals PyTorch makes."""

from __future__ import annotations

from typing import Any

from tests.misuse._catalogue import Case, catalogue_test


def _x(T: Any, dev: str) -> Any:
    return (T.arange(6.0, device=dev).reshape(2, 3) - 2.5) / 2


def _same(t: Any, r: Any) -> Any:
    assert r is t
    return t, repr(t.dtype), tuple(t.shape), t.stride(), t._version


def _record(T: Any, dev: str, name: str, *args: Any) -> Any:
    a = T.ones(2, 3, 1, device=dev, requires_grad=True)
    b = a * 1
    r = getattr(b, name)(*args)
    (r * T.arange(float(r.numel()), device=dev).reshape(r.shape)).sum().backward()
    return r.grad_fn.name(), type(r.grad_fn).__name__, a.grad, tuple(r.shape)


def _torch_fn(name: str) -> Case:
    return lambda T, dev: (getattr(T, name)(_x(T, dev), 0.25),)


def _method(name: str) -> Case:
    return lambda T, dev: getattr(_x(T, dev), name)(0.25)


def _inplace(name: str, *args: Any, torch_level: bool = False) -> Case:
    def run(T: Any, dev: str) -> Any:
        t = _x(T, dev).abs() + 0.5
        return _same(t, getattr(T, name)(t, *args) if torch_level else getattr(t, name)(*args))

    return run


CASES: dict[str, Case] = {
    **{n: _torch_fn(n) for n in ("greater", "greater_equal", "less", "less_equal", "not_equal")},
    **{f"method_{n}": _method(n)
       for n in ("greater", "less_equal", "not_equal", "multiply", "divide", "subtract",
                 "true_divide", "isclose")},
    **{f"{n}_inplace_keeps_dtype": _inplace(n, 0.75)
       for n in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_",
                 "less_", "less_equal_", "not_equal_")},
    **{f"torch_{n}": _inplace(n, torch_level=True)
       for n in ("abs_", "cos_", "exp_", "log_", "sin_", "sqrt_", "square_", "neg_",
                 "negative_", "reciprocal_", "relu_", "rsqrt_", "sigmoid_", "tanh_", "floor_",
                 "expm1_", "log1p_")},
    **{f"method_{n}": _inplace(n)
       for n in ("abs_", "absolute_", "cos_", "log_", "sin_", "square_", "negative_",
                 "reciprocal_", "rsqrt_", "floor_", "expm1_", "log1p_", "sign_")},
    "eq_int_tensor": lambda T, dev: (lambda t: _same(t, t.eq_(2)))(T.arange(4, device=dev)),
    "multiply_": lambda T, dev: (lambda t: _same(t, t.multiply_(3)))(_x(T, dev)),
    "divide_": lambda T, dev: (lambda t: _same(t, t.divide_(3)))(_x(T, dev)),
    "subtract_alpha": lambda T, dev: (lambda t: _same(t, t.subtract_(t, alpha=2)))(_x(T, dev)),
    "divide_int_refused": lambda T, dev: T.arange(3, device=dev).divide_(2),
    "logical_and_": lambda T, dev: (lambda t: _same(t, t.logical_and_(t > 0)))(_x(T, dev)),
    "logical_not_": lambda T, dev: (lambda t: _same(t, t.logical_not_()))(_x(T, dev)),
    "clip_": lambda T, dev: (lambda t: _same(t, T.clip_(t, -0.5, 0.5)))(_x(T, dev)),
    "absolute": lambda T, dev: T.absolute(_x(T, dev)),
    "fill_tensor_value": lambda T, dev: T.fill(_x(T, dev), T.tensor(2.0, device=dev)),
    "fill_number": lambda T, dev: T.fill(_x(T, dev), 7),
    "detach": lambda T, dev: T.detach(_x(T, dev).requires_grad_()).requires_grad,
    "byte": lambda T, dev: (lambda t: (t, repr(t.dtype)))((_x(T, dev) * 4).abs().byte()),
    "char": lambda T, dev: (lambda t: (t, repr(t.dtype)))((_x(T, dev) * 4).char()),
    "short": lambda T, dev: (lambda t: (t, repr(t.dtype)))((_x(T, dev) * 4).short()),
    "t_": lambda T, dev: (lambda t: _same(t, t.t_()))(_x(T, dev)),
    "t_view_shares_storage": lambda T, dev: (lambda t: (t[:1].t_().mul_(10), t))(_x(T, dev)),
    "t_leaf_requires_grad": lambda T, dev: _x(T, dev).requires_grad_().t_(),
    "transpose_": lambda T, dev: (lambda t: _same(t, t.transpose_(0, 1)))(_x(T, dev)),
    "unsqueeze_": lambda T, dev: (lambda t: _same(t, t.unsqueeze_(1)))(_x(T, dev)),
    "squeeze_": lambda T, dev: (lambda t: _same(t, t.squeeze_()))(T.ones(1, 3, 1, device=dev)),
    "record_transpose_": lambda T, dev: _record(T, dev, "transpose_", 0, 2),
    "record_squeeze_": lambda T, dev: _record(T, dev, "squeeze_"),
    "record_squeeze_dim": lambda T, dev: _record(T, dev, "squeeze_", 2),
    "record_squeeze_dims": lambda T, dev: _record(T, dev, "squeeze_", (2,)),
    "record_unsqueeze_": lambda T, dev: _record(T, dev, "unsqueeze_", 0),
    "record_swapdims_": lambda T, dev: _record(T, dev, "swapdims_", 0, 1),
    "fill_diagonal_square": lambda T, dev: T.zeros(3, 3, device=dev).fill_diagonal_(5),
    "fill_diagonal_wide": lambda T, dev: T.zeros(2, 4, device=dev).fill_diagonal_(5),
    "fill_diagonal_tall_wrap": lambda T, dev: T.zeros(7, 3, device=dev).fill_diagonal_(5,
                                                                                     wrap=True),
    "fill_diagonal_tall": lambda T, dev: T.zeros(7, 3, device=dev).fill_diagonal_(5),
    "fill_diagonal_cube": lambda T, dev: T.zeros(2, 2, 2, device=dev).fill_diagonal_(5),
    "fill_diagonal_1d": lambda T, dev: T.zeros(3, device=dev).fill_diagonal_(5),
    "fill_diagonal_uneven": lambda T, dev: T.zeros(2, 3, 2, device=dev).fill_diagonal_(5),
    "argwhere": lambda T, dev: T.argwhere(T.tensor([[0, 1], [2, 0]], device=dev)),
    "argwhere_method_0d": lambda T, dev: (T.tensor(3.0, device=dev).argwhere(),
                                          T.argwhere(T.tensor(0.0, device=dev))),
    "nonzero_0d_as_tuple": lambda T, dev: (T.nonzero(T.tensor(3.0, device=dev), as_tuple=True),
                                           T.nonzero(T.tensor(0, device=dev), as_tuple=True)),
    "split_with_sizes": lambda T, dev: T.split_with_sizes(T.arange(5, device=dev), [2, 3]),
    "split_with_sizes_method_dim": lambda T, dev: _x(T, dev).split_with_sizes([1, 2], 1),
    "unsafe_chunk": lambda T, dev: T.unsafe_chunk(T.arange(5, device=dev), 2),
    "unsafe_split": lambda T, dev: T.unsafe_split(T.arange(5, device=dev), 2),
    "unsafe_split_with_sizes": lambda T, dev: T.unsafe_split_with_sizes(
        T.arange(5, device=dev), [4, 1]),
}

test_aliases = catalogue_test(CASES)
