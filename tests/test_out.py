"""``out=`` (functions/out.py) and ``Tensor.resize_`` against PyTorch: values written into the
given tensor, its identity kept, dtype casts and refusals, resizing with PyTorch's warning,
autograd refused, the version counter moved."""

from __future__ import annotations

from typing import Any

import pytest
import torch

import autograd_gpu as ag
from tests.misuse._catalogue import Case, catalogue_test


def _mm(T: Any, dev: str, out: Any) -> Any:
    a = T.arange(6.0, device=dev).reshape(2, 3)
    r = T.matmul(a, a.t(), out=out)
    assert r is out
    return out, repr(out.dtype), out.stride()


CASES: dict[str, Case] = {
    "same_shape": lambda T, dev: _mm(T, dev, T.empty(2, 2, device=dev)),
    "empty_out_resized": lambda T, dev: _mm(T, dev, T.empty(0, device=dev)),
    "transposed_out_keeps_strides": lambda T, dev: _mm(T, dev, T.empty(2, 2, device=dev).t()),
    "float64_out_casts": lambda T, dev: _mm(T, dev, T.empty(2, 2, dtype=T.float64, device=dev)),
    "int_out_refused": lambda T, dev: _mm(T, dev, T.empty(2, 2, dtype=T.int64, device=dev)),
    "not_a_tensor": lambda T, dev: _mm(T, dev, 5),
    "expanded_out_refused": lambda T, dev: _mm(T, dev, T.empty(1, device=dev).expand(2, 2)),
    "grad_refused": lambda T, dev: T.matmul(T.ones(2, 2, device=dev, requires_grad=True),
                                            T.ones(2, 2, device=dev), out=T.empty(2, 2)),
    "out_requires_grad_refused": lambda T, dev: T.matmul(
        T.ones(2, 2, device=dev), T.ones(2, 2, device=dev),
        out=T.empty(2, 2, device=dev, requires_grad=True)),
    "resize_grow_keeps_values": lambda T, dev: T.arange(4.0, device=dev).resize_(2, 2),
    "resize_tuple": lambda T, dev: T.arange(6.0, device=dev).resize_((3, 1)).tolist(),
    "resize_bad_type": lambda T, dev: T.ones(2, device=dev).resize_(2.0),
    "resize_bad_element": lambda T, dev: T.ones(2, device=dev).resize_((2, "a")),
    "resize_requires_grad": lambda T, dev: T.ones(2, device=dev, requires_grad=True).resize_(3),
}

test_out_cases = catalogue_test(CASES)


def test_out_with_elements_is_resized_with_the_warning(device: str) -> None:
    for T in (torch, ag):
        out = T.empty(3, device=device if T is ag else "cpu")
        with pytest.warns(UserWarning, match="An output with one or more elements was resized"):
            T.matmul(T.ones(2, 2, device=out.device), T.ones(2, 2, device=out.device), out=out)
        assert out.shape == (2, 2) and out.tolist() == [[2.0, 2.0], [2.0, 2.0]]


def test_out_moves_the_version_and_shows_through_views(device: str) -> None:
    out = ag.zeros(2, 2, device=device)
    view = out[0]
    v = out._version
    with ag.no_grad():
        ag.matmul(ag.ones(2, 2, device=device, requires_grad=True), ag.ones(2, 2, device=device),
                  out=out)
    assert out._version > v and view.tolist() == [2.0, 2.0]


# ---- out= on every torch.* function that takes it (functions/out_variants.py) --------------

def _a(T: Any, dev: str) -> Any:
    return (T.arange(6.0, device=dev).reshape(2, 3) + 1) / 4


_ARGS: dict[str, Any] = {
    **{n: (lambda T, d: (_a(T, d), _a(T, d) + 0.5))
       for n in ("add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
                 "pow", "maximum", "minimum", "floor_divide", "remainder", "eq", "ne", "lt",
                 "le", "gt", "ge", "logical_and", "logical_or", "logical_xor")},
    **{n: (lambda T, d: (_a(T, d),))
       for n in ("exp", "expm1", "log", "log1p", "sqrt", "rsqrt", "sin", "cos", "tanh",
                 "sigmoid", "reciprocal", "square", "abs", "sign", "floor", "logical_not",
                 "neg", "negative", "nonzero")},
    **{n: (lambda T, d: (_a(T, d), 1))
       for n in ("sum", "mean", "prod", "std", "var", "logsumexp", "amax", "amin", "max", "min",
                 "argmax", "argmin", "softmax", "log_softmax", "all", "any")},
    **{n: (lambda T, d: (T.arange(6, device=d).reshape(2, 3), T.tensor(3, device=d)))
       for n in ("bitwise_and", "bitwise_or", "bitwise_xor")},
    "bitwise_not": lambda T, d: (T.arange(6, device=d),),
    "norm": lambda T, d: (_a(T, d), 2, 1),
    "mm": lambda T, d: (_a(T, d), _a(T, d).t()),
    "bmm": lambda T, d: (_a(T, d)[None], _a(T, d).t()[None]),
    "addmm": lambda T, d: (T.ones(2, 2, device=d), _a(T, d), _a(T, d).t()),
    "mv": lambda T, d: (_a(T, d), _a(T, d)[0]),
    "dot": lambda T, d: (_a(T, d)[0], _a(T, d)[1]),
    "gather": lambda T, d: (_a(T, d), 1, T.tensor([[0, 2], [1, 1]], device=d)),
    "index_select": lambda T, d: (_a(T, d), 1, T.tensor([2, 0], device=d)),
    **{n: (lambda T, d: ([_a(T, d), _a(T, d)],)) for n in ("cat", "concat", "concatenate",
                                                           "stack")},
    "where": lambda T, d: (_a(T, d) > 0.7, _a(T, d), -_a(T, d)),
    **{n: (lambda T, d: (_a(T, d), 0.5, 1.0)) for n in ("clamp", "clip")},
}


def _out_case(name: str, dtype: str | None) -> Case:
    def run(T: Any, dev: str) -> Any:
        args = _ARGS[name](T, dev)
        want = getattr(T, name)(*args)
        many = isinstance(want, tuple)
        first = want[0] if many else want
        dt = getattr(T, dtype) if dtype else first.dtype
        out = T.empty(0, dtype=dt, device=dev)
        if many:
            out = (out, T.empty(0, dtype=want[1].dtype, device=dev))
        r = getattr(T, name)(*args, out=out)
        assert (r[0] is out[0]) if many else (r is out)
        return r, [repr(t.dtype) for t in (r if many else (r,))]
    return run


OUT_CASES: dict[str, Case] = {f"{n}_{d}": _out_case(n, d)
                              for n in sorted(_ARGS) for d in (None, "float64", "int64")}

test_out_variants = catalogue_test(OUT_CASES)


def test_every_out_variant_is_tested() -> None:
    from autograd_gpu.functions import out_variants

    assert set(out_variants.__all__) == set(_ARGS)
