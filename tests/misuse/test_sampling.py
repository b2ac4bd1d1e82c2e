"""Misuse catalogue of the sampling family: ``multinomial``, ``bernoulli``, ``normal`` (four
forms), ``poisson``, ``randint_like``, the in-place samplers (``uniform_``, ``normal_``,
``exponential_``, ``geometric_``, ``cauchy_``, ``log_normal_``, ``random_``, ``bernoulli_``),
and autograd (PyTorch's node names, zero gradients, the ``NotImplemented`` node); the
factories' ``out=`` and ``vmap``'s randomness modes are in ``tests/ops/test_sampling.py``.

Draws differ from PyTorch's, so a program returns what must agree: each tensor as its dtype,
shape, strides, ``requires_grad`` and node name, or values that do not depend on the draw
(probabilities 0 and 1, ``std=0``, one-value ranges, sorted permutations). Errors must agree in
type and first sentence.
"""

from __future__ import annotations

import math
import warnings
from typing import Any, Callable

import pytest
import torch

import autograd_gpu as ag
from tests._compare import first_sentence

Case = Callable[[Any, str], Any]


def _meta(v: Any) -> Any:
    if isinstance(v, (torch.Tensor, ag.Tensor)):
        fn = v.grad_fn
        # NOTE: NumPy gives empty arrays strides of 0 (not PyTorch's): not compared
        strides = tuple(v.stride()) if v.numel() else None
        return ("tensor", str(v.dtype), tuple(v.shape), strides, bool(v.requires_grad),
                None if fn is None else fn.name())
    if isinstance(v, (tuple, list)):
        return [_meta(x) for x in v]
    if isinstance(v, (torch.dtype, ag.dtype)):
        return str(v)
    if isinstance(v, float) and math.isnan(v):
        return "nan"
    return v


def _outcome(fn: Case, lib: Any, dev: str) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ("ok", _meta(fn(lib, dev)))
        except Exception as e:  # noqa: BLE001  (comparing failures too)
            text = str(e).replace("torch.cuda.", "torch.")
            return ("raises", type(e).__name__, first_sentence(text))


def _p(T: Any, d: str, data: Any, dt: str = "float32", grad: bool = False) -> Any:
    return T.tensor(data, dtype=getattr(T, dt), device=d, requires_grad=grad)


def _z(T: Any, d: str, *shape: int, dt: str = "float32") -> Any:
    return T.zeros(shape, dtype=getattr(T, dt), device=d)


def _zero_grads(T: Any, d: str, out: Any, *leaves: Any) -> Any:
    """``out``'s node name and the gradients of ``out.sum()`` (PyTorch's: zeros)."""
    grads = T.autograd.grad(out.sum(), leaves)
    return out.grad_fn.name(), [g.tolist() for g in grads], [str(g.dtype) for g in grads]


def _inplace_grads(T: Any, d: str, name: str, *args: Any) -> Any:
    leaf = T.ones(3, dtype=T.float64, device=d, requires_grad=True)
    x = leaf * 2
    getattr(x, name)(*args)
    node = x.grad_fn.name()
    x.sum().backward()
    return node, leaf.grad.tolist(), x.requires_grad


def _view_grads(T: Any, d: str) -> Any:
    """A sampler on a view of a tensor in the graph: only the view's elements lose their
    gradient (CopySlices)."""
    leaf = T.ones(2, 3, dtype=T.float64, device=d, requires_grad=True)
    x = leaf * 2
    x[0].log_normal_()
    (x * 3).sum().backward()
    return x.grad_fn.name(), leaf.grad.tolist()


def _p_grads(T: Any, d: str) -> Any:
    """``bernoulli_`` with a probability tensor that requires grad: both inputs get zeros."""
    p = T.full((3,), 0.5, dtype=T.float64, device=d, requires_grad=True)
    x = T.zeros(3, dtype=T.float64, device=d)
    x.bernoulli_(p)
    node = x.grad_fn.name()
    x.sum().backward()
    return node, p.grad.tolist(), len(x.grad_fn.next_functions)


def _setg(T: Any, d: str, name: str, *args: Any, **kw: Any) -> Any:
    return getattr(_z(T, d, 4), name)(*args, generator=T.Generator(d), **kw)


MULTINOMIAL: dict[str, Case] = {
    "1d": lambda T, d: T.multinomial(_p(T, d, [0.2, 0.3, 0.5]), 2),
    "1d_replacement": lambda T, d: T.multinomial(_p(T, d, [0.2, 0.3, 0.5]), 4, True),
    "keywords": lambda T, d: T.multinomial(input=_p(T, d, [0.2, 0.8]), num_samples=2,
                                           replacement=False),
    "2d": lambda T, d: T.multinomial(_p(T, d, [[0.2, 0.8, 0.0], [1, 1, 1]]), 2),
    "transposed": lambda T, d: T.multinomial(_p(T, d, [[1, 2], [3, 4], [5, 6]]).t(), 2, True),
    "one_hot_values": lambda T, d: T.multinomial(_p(T, d, [[0, 1, 0], [0, 0, 2]]), 3,
                                                 True).tolist(),
    "permutation": lambda T, d: sorted(T.multinomial(_p(T, d, [1, 2, 3, 4, 5]), 5).tolist()),
    "zero_weights_last": lambda T, d: (lambda r: (sorted(r[:2]), sorted(r[2:]), len(set(r))))(
        T.multinomial(_p(T, d, [0, 0.5, 0, 2.0]), 4).tolist()),
    "zero_row_weights_repl": lambda T, d: T.multinomial(_p(T, d, [0.5, 0, 0]), 3,
                                                        True).tolist(),
    "float64": lambda T, d: T.multinomial(_p(T, d, [1, 2], "float64"), 2),
    "float16": lambda T, d: T.multinomial(_p(T, d, [0, 2], "float16"), 1).tolist(),
    "huge_weights": lambda T, d: T.multinomial(_p(T, d, [1e308, 0, 1e308], "float64"), 5,
                                               True).tolist().count(1),
    "tiny_weight": lambda T, d: T.multinomial(_p(T, d, [1e-40, 0]), 3, True).tolist(),
    "rows0": lambda T, d: T.multinomial(_z(T, d, 0, 3), 1),
    "rows0_repl": lambda T, d: T.multinomial(_z(T, d, 0, 3), 4, True),
    "rows0_k0_repl": lambda T, d: T.multinomial(_z(T, d, 0, 0), 1, True),
    "requires_grad": lambda T, d: T.multinomial(_p(T, d, [1, 2], grad=True), 1),
    "tensor_n": lambda T, d: T.multinomial(_p(T, d, [1, 2]), T.tensor([2])),
    "method": lambda T, d: _p(T, d, [1, 2]).multinomial(2, generator=T.Generator(d)),
    "method_replacement": lambda T, d: _p(T, d, [1, 2]).multinomial(3, True),
    "out": lambda T, d: T.multinomial(_p(T, d, [1, 2]), 2, out=_z(T, d, 2, dt="int64")),
    "out_resized": lambda T, d: T.multinomial(_p(T, d, [1, 2, 3]), 2,
                                              out=_z(T, d, 5, dt="int64")),
    "out_transposed": lambda T, d: T.multinomial(_p(T, d, [[1, 2, 3], [1, 1, 1]]), 2,
                                                 out=_z(T, d, 2, 3, dt="int64").t()),
    "out_input_requires_grad": lambda T, d: T.multinomial(_p(T, d, [1, 2], grad=True), 1,
                                                          out=_z(T, d, 1, dt="int64")),
    # errors
    "3d": lambda T, d: T.multinomial(T.ones(2, 2, 2, device=d), 1),
    "0d": lambda T, d: T.multinomial(T.tensor(0.5, device=d), 1),
    "3d_long_n0": lambda T, d: T.multinomial(_z(T, d, 2, 2, 2, dt="int64"), 0),
    "long": lambda T, d: T.multinomial(_p(T, d, [1, 2], "int64"), 1),
    "long_n0": lambda T, d: T.multinomial(_p(T, d, [1, 2], "int64"), 0),
    "bool": lambda T, d: T.multinomial(_p(T, d, [True, False], "bool"), 1),
    "n0": lambda T, d: T.multinomial(_p(T, d, [1, 2]), 0),
    "n_negative": lambda T, d: T.multinomial(_p(T, d, [1, 2]), -1),
    "too_many": lambda T, d: T.multinomial(_p(T, d, [1, 2]), 3),
    "too_many_zeros": lambda T, d: T.multinomial(_z(T, d, 2), 3),
    "empty": lambda T, d: T.multinomial(_z(T, d, 0), 1),
    "empty_repl": lambda T, d: T.multinomial(_z(T, d, 0), 1, True),
    "k0": lambda T, d: T.multinomial(_z(T, d, 2, 0), 1),
    "k0_repl": lambda T, d: T.multinomial(_z(T, d, 2, 0), 1, True),
    "k0_rows0": lambda T, d: T.multinomial(_z(T, d, 0, 0), 1),
    "all_zero": lambda T, d: T.multinomial(_z(T, d, 3), 1),
    "all_zero_repl": lambda T, d: T.multinomial(_z(T, d, 3), 1, True),
    "zero_row": lambda T, d: T.multinomial(_p(T, d, [[0.5, 0.5], [0, 0]]), 1),
    "negative": lambda T, d: T.multinomial(_p(T, d, [0.5, -0.1, 0.6]), 1),
    "negative_repl": lambda T, d: T.multinomial(_p(T, d, [0.5, -0.1, 0.6]), 1, True),
    "nan": lambda T, d: T.multinomial(_p(T, d, [0.5, math.nan]), 1),
    "inf": lambda T, d: T.multinomial(_p(T, d, [0.5, math.inf]), 1, True),
    "nan_row_and_zero_row": lambda T, d: T.multinomial(_p(T, d, [[0, 0], [1, math.nan]]), 1),
    "categories": lambda T, d: T.multinomial(T.ones(2 ** 24 + 1, device=d), 1),
    "n_float": lambda T, d: T.multinomial(_p(T, d, [1, 2]), 2.0),
    "n_bool": lambda T, d: T.multinomial(_p(T, d, [1, 2]), True),
    "n_float_tensor": lambda T, d: T.multinomial(_p(T, d, [1, 2]), T.tensor(2.0)),
    "method_n_float": lambda T, d: _p(T, d, [1, 2]).multinomial(2.0),
    "missing_n": lambda T, d: T.multinomial(_p(T, d, [1, 2])),
    "replacement_int": lambda T, d: T.multinomial(_p(T, d, [1, 2]), 1, 1),
    "replacement_str": lambda T, d: T.multinomial(_p(T, d, [1, 2]), 1, "a"),
    "list_input": lambda T, d: T.multinomial([0.5, 0.5], 1),
    "generator_int": lambda T, d: T.multinomial(_p(T, d, [1, 2]), 1, generator=5),
    "out_float": lambda T, d: T.multinomial(_p(T, d, [1, 2]), 1, out=_z(T, d, 1)),
    "out_int32": lambda T, d: T.multinomial(_p(T, d, [1, 2]), 1, out=_z(T, d, 1, dt="int32")),
    "out_float_n0": lambda T, d: T.multinomial(_p(T, d, [1, 2]), 0, out=_z(T, d, 1)),
    "out_float_3d": lambda T, d: T.multinomial(T.ones(2, 2, 2, device=d), 1, out=_z(T, d, 1)),
}

BERNOULLI: dict[str, Case] = {
    "tensor": lambda T, d: T.bernoulli(_p(T, d, [0.2, 0.5])),
    "values": lambda T, d: T.bernoulli(_p(T, d, [[0, 1], [1, 0]])).tolist(),
    "float64": lambda T, d: T.bernoulli(_p(T, d, [1, 0], "float64")).tolist(),
    "float16": lambda T, d: T.bernoulli(_p(T, d, [1, 0], "float16")).tolist(),
    "0d": lambda T, d: T.bernoulli(T.tensor(1.0, device=d)).tolist(),
    "empty": lambda T, d: T.bernoulli(_z(T, d, 0, 3)),
    "transposed": lambda T, d: T.bernoulli(T.rand(3, 2, device=d).t()),
    "expanded": lambda T, d: T.bernoulli(_p(T, d, [1.0]).expand(3)).tolist(),
    "generator": lambda T, d: T.bernoulli(_p(T, d, [0.5]), generator=T.Generator(d)),
    "p": lambda T, d: T.bernoulli(_z(T, d, 3), 0.3),
    "p_keyword": lambda T, d: T.bernoulli(_z(T, d, 3), p=1.0).tolist(),
    "p_int_input": lambda T, d: T.bernoulli(_p(T, d, [1, 0], "int64"), p=1).tolist(),
    "p_bool_input": lambda T, d: T.bernoulli(_p(T, d, [True, False], "bool"), 0.0).tolist(),
    "p_true": lambda T, d: T.bernoulli(_z(T, d, 2), True).tolist(),
    "p_generator": lambda T, d: T.bernoulli(_z(T, d, 2), 0.5, generator=T.Generator(d)),
    "out": lambda T, d: T.bernoulli(_p(T, d, [0, 1]), out=_z(T, d, 2)).tolist(),
    "out_int64": lambda T, d: T.bernoulli(_p(T, d, [0, 1]), out=_z(T, d, 2, dt="int64")).tolist(),
    "out_bool": lambda T, d: T.bernoulli(_p(T, d, [0, 1]), out=_z(T, d, 2, dt="bool")).tolist(),
    "out_float64": lambda T, d: T.bernoulli(_p(T, d, [0, 1]), out=_z(T, d, 2, dt="float64")),
    "out_resized": lambda T, d: T.bernoulli(_p(T, d, [0, 1]), out=_z(T, d, 5)),
    "method": lambda T, d: _p(T, d, [0, 1]).bernoulli().tolist(),
    "method_p": lambda T, d: _z(T, d, 2).bernoulli(1.0).tolist(),
    "method_p_keyword": lambda T, d: _z(T, d, 2).bernoulli(p=0.0).tolist(),
    # errors
    "long": lambda T, d: T.bernoulli(_p(T, d, [1, 0], "int64")),
    "bool": lambda T, d: T.bernoulli(_p(T, d, [True], "bool")),
    "above_1": lambda T, d: T.bernoulli(_p(T, d, [0.5, 2.0])),
    "negative": lambda T, d: T.bernoulli(_p(T, d, [0.5, -1.0])),
    "nan": lambda T, d: T.bernoulli(_p(T, d, [0.5, math.nan])),
    "p_above_1": lambda T, d: T.bernoulli(_z(T, d, 2), 1.5),
    "p_negative": lambda T, d: T.bernoulli(_z(T, d, 2), -0.5),
    "p_nan": lambda T, d: T.bernoulli(_z(T, d, 2), math.nan),
    "p_str": lambda T, d: T.bernoulli(_z(T, d, 2), "a"),
    "p_tensor": lambda T, d: T.bernoulli(_z(T, d, 2), _z(T, d, 2)),
    "p_tensor_keyword": lambda T, d: T.bernoulli(_z(T, d, 2), p=_z(T, d, 2)),
    "p_out": lambda T, d: T.bernoulli(_z(T, d, 2), 0.5, out=_z(T, d, 2)),
    "number": lambda T, d: T.bernoulli(0.5),
    "generator_int": lambda T, d: T.bernoulli(_z(T, d, 2), generator=4),
    "method_str": lambda T, d: _z(T, d, 2).bernoulli("a"),
    "out_requires_grad": lambda T, d: T.bernoulli(_p(T, d, [0.5], grad=True), out=_z(T, d, 1)),
    # autograd
    "grad": lambda T, d: _zero_grads(T, d, T.bernoulli(_l := _p(T, d, [0.5, 1], "float64", True)),
                                     _l),
    "p_node": lambda T, d: T.bernoulli(_p(T, d, [0.5], grad=True), 0.5),
    "p_backward": lambda T, d: T.bernoulli(_p(T, d, [0.5], grad=True), 0.5).sum().backward(),
}

BERNOULLI_: dict[str, Case] = {
    "default": lambda T, d: _z(T, d, 3).bernoulli_(),
    "p_values": lambda T, d: (_z(T, d, 3).bernoulli_(1.0).tolist(),
                              _z(T, d, 3).bernoulli_(p=0.0).tolist()),
    "int": lambda T, d: _z(T, d, 3, dt="int64").bernoulli_(1).tolist(),
    "bool": lambda T, d: _z(T, d, 3, dt="bool").bernoulli_(1.0).tolist(),
    "uint8": lambda T, d: _z(T, d, 3, dt="uint8").bernoulli_(0.5),
    "tensor": lambda T, d: _z(T, d, 2).bernoulli_(_p(T, d, [0, 1])).tolist(),
    "tensor_float64": lambda T, d: _z(T, d, 2).bernoulli_(_p(T, d, [1, 0], "float64")).tolist(),
    "tensor_float16": lambda T, d: _z(T, d, 2).bernoulli_(_p(T, d, [1, 0], "float16")).tolist(),
    "tensor_0d": lambda T, d: _z(T, d, 3).bernoulli_(T.tensor(1.0, device=d)).tolist(),
    "tensor_broadcast": lambda T, d: _z(T, d, 2, 2).bernoulli_(_p(T, d, [1.0])).tolist(),
    "tensor_int_self": lambda T, d: _z(T, d, 2, dt="int64").bernoulli_(_p(T, d, [1, 1])).tolist(),
    "transposed_self": lambda T, d: _z(T, d, 3, 2).t().bernoulli_(_p(T, d, [[1] * 3] * 2)),
    "generator": lambda T, d: _setg(T, d, "bernoulli_", 0.5),
    # errors
    "p_above_1": lambda T, d: _z(T, d, 2).bernoulli_(1.5),
    "p_nan": lambda T, d: _z(T, d, 2).bernoulli_(math.nan),
    "p_str": lambda T, d: _z(T, d, 2).bernoulli_("a"),
    "p_none": lambda T, d: _z(T, d, 2).bernoulli_(None),
    "generator_int": lambda T, d: _z(T, d, 2).bernoulli_(generator=4),
    "tensor_generator_int": lambda T, d: _z(T, d, 2).bernoulli_(_z(T, d, 2), generator=4),
    "tensor_long": lambda T, d: _z(T, d, 2).bernoulli_(_p(T, d, [1, 0], "int64")),
    "tensor_above_1": lambda T, d: _z(T, d, 2).bernoulli_(_p(T, d, [0.5, 1.5])),
    "tensor_too_long": lambda T, d: _z(T, d, 2).bernoulli_(_z(T, d, 3)),
    "tensor_more_dims": lambda T, d: _z(T, d, 3).bernoulli_(_z(T, d, 2, 3)),
    "overlapping": lambda T, d: _z(T, d, 1).expand(3).bernoulli_(0.5),
    "leaf": lambda T, d: _p(T, d, [0.5], grad=True).bernoulli_(0.5),
    # autograd
    "grads_p_float": lambda T, d: _inplace_grads(T, d, "bernoulli_", 0.5),
    "grads_p_tensor": lambda T, d: _p_grads(T, d),
}

NORMAL: dict[str, Case] = {
    "tensor_tensor": lambda T, d: T.normal(_z(T, d, 3), T.ones(3, device=d)),
    "broadcast": lambda T, d: T.normal(_z(T, d, 3), T.ones(2, 1, device=d)),
    "broadcast_2": lambda T, d: T.normal(_z(T, d, 3, 1), T.ones(1, 3, device=d)),
    "dtype_of_mean": lambda T, d: T.normal(_z(T, d, 3), T.ones(3, dtype=T.float64, device=d)),
    "dtype_of_mean_64": lambda T, d: T.normal(_z(T, d, 3, dt="float64"), T.ones(3, device=d)),
    "dtype_of_mean_16": lambda T, d: T.normal(_z(T, d, 3, dt="float16"), T.ones(3, device=d)),
    "std_long": lambda T, d: T.normal(_z(T, d, 3), T.ones(3, dtype=T.int64, device=d)),
    "std_zero_values": lambda T, d: T.normal(_p(T, d, [1, 2]), _z(T, d, 2)).tolist(),
    "tensor_float": lambda T, d: T.normal(_z(T, d, 3), 1.0),
    "tensor_default_std": lambda T, d: T.normal(_z(T, d, 3)),
    "tensor_keyword_mean": lambda T, d: T.normal(mean=_z(T, d, 3)),
    "tensor_std_keyword": lambda T, d: T.normal(_p(T, d, [1, 2]), std=0).tolist(),
    "tensor_std_true": lambda T, d: T.normal(_z(T, d, 3), True),
    "transposed_mean": lambda T, d: T.normal(_z(T, d, 3, 2).t(), 1.0),
    "transposed_both": lambda T, d: T.normal(_z(T, d, 3, 2).t(), T.ones(2, 3, device=d)),
    "float_tensor": lambda T, d: T.normal(0.0, T.ones(3, device=d)),
    "int_tensor": lambda T, d: T.normal(1, T.ones(3, device=d)),
    "float_0d": lambda T, d: T.normal(0.0, T.tensor(2.0, device=d)),
    "0d_tensor": lambda T, d: T.normal(T.tensor(0.0, device=d), T.ones(2, device=d)),
    "0d_0d": lambda T, d: T.normal(T.tensor(0.0, device=d), T.tensor(1.0, device=d)),
    "cpu_scalar_mean": lambda T, d: T.normal(T.tensor(0.0), T.zeros(2, device=d)).tolist(),
    "cpu_scalar_std": lambda T, d: T.normal(_p(T, d, [1, 2]), T.tensor(0.0)).tolist(),
    "empty": lambda T, d: T.normal(_z(T, d, 0), T.ones(0, device=d)),
    "float_float": lambda T, d: T.normal(0.0, 1.0, (2, 3)),
    "float_float_values": lambda T, d: T.normal(2.0, 0.0, [2], device=d).tolist(),
    "float_float_size_keyword": lambda T, d: T.normal(0.0, 1.0, size=(2,), dtype=T.float64,
                                                      device=d),
    "float_float_ints": lambda T, d: T.normal(0, 1, (2,), device=d),
    "float_float_size": lambda T, d: T.normal(0.0, 1.0, T.Size([2]), device=d),
    "float_float_half": lambda T, d: T.normal(0.0, 1.0, (2,), dtype=T.float16, device=d,
                                              generator=T.Generator(d)),
    "float_float_grad": lambda T, d: T.normal(0.0, 1.0, (2,), requires_grad=True, device=d),
    "float_float_nan_mean": lambda T, d: T.normal(math.nan, 1.0, (2,), device=d).tolist(),
    "float_float_inf_std": lambda T, d: T.normal(0.0, math.inf, (1,), device=d).abs().tolist(),
    "generator": lambda T, d: T.normal(_z(T, d, 3), 1.0, generator=T.Generator(d)),
    "out": lambda T, d: T.normal(_z(T, d, 3), T.ones(3, device=d), out=_z(T, d, 3)),
    "out_float": lambda T, d: T.normal(_z(T, d, 3), 1.0, out=_z(T, d, 3)),
    "out_float_tensor": lambda T, d: T.normal(0.0, T.ones(3, device=d), out=_z(T, d, 3)),
    "out_float_float": lambda T, d: T.normal(0.0, 1.0, (3,), out=_z(T, d, 3, dt="float64")),
    "out_dtype": lambda T, d: T.normal(_z(T, d, 3), T.ones(3, device=d),
                                       out=_z(T, d, 3, dt="float64")),
    "out_resized": lambda T, d: T.normal(_z(T, d, 3), T.ones(3, device=d), out=_z(T, d, 2)),
    "out_mean_broadcast": lambda T, d: T.normal(_z(T, d, 3), 1.0, out=_z(T, d, 2, 3)),
    "out_mean_resized": lambda T, d: T.normal(_z(T, d, 3), 1.0, out=_z(T, d, 1)),
    "out_mean_larger": lambda T, d: T.normal(_z(T, d, 2, 3), 1.0, out=_z(T, d, 3)),
    "out_transposed": lambda T, d: T.normal(_z(T, d, 3), 1.0, out=_z(T, d, 3, 2).t()),
    "out_transposed_2": lambda T, d: T.normal(_z(T, d, 2, 3), T.ones(3, device=d),
                                              out=_z(T, d, 3, 2).t()),
    "out_transposed_3": lambda T, d: T.normal(0.0, 1.0, (2, 3), out=_z(T, d, 3, 2).t()),
    "out_resized_std": lambda T, d: T.normal(0.0, T.ones(3, device=d), out=_z(T, d, 3, 2).t()),
    "out_mean_empty": lambda T, d: T.normal(_z(T, d, 3), 1.0, out=_z(T, d, 0)),
    # errors
    "mean_long": lambda T, d: T.normal(_z(T, d, 3, dt="int64"), T.ones(3, device=d)),
    "mean_long_float": lambda T, d: T.normal(_z(T, d, 3, dt="int64"), 1.0),
    "mean_bool_float": lambda T, d: T.normal(_z(T, d, 3, dt="bool"), 1.0),
    "float_std_long": lambda T, d: T.normal(0.0, T.ones(3, dtype=T.int64, device=d)),
    "float_float_long": lambda T, d: T.normal(0.0, 1.0, (2,), dtype=T.int64),
    "negative_std": lambda T, d: T.normal(_z(T, d, 3), -1.0),
    "nan_std": lambda T, d: T.normal(_z(T, d, 3), math.nan),
    "negative_std_tensor": lambda T, d: T.normal(_z(T, d, 3), _p(T, d, [1, -1, 1])),
    "nan_std_tensor": lambda T, d: T.normal(_z(T, d, 3), _p(T, d, [1, math.nan, 1])),
    "negative_std_before_dtype": lambda T, d: T.normal(_z(T, d, 3, dt="int64"),
                                                       _p(T, d, [-1, 1, 1])),
    "float_negative_std_tensor": lambda T, d: T.normal(0.0, _p(T, d, [1, -1])),
    "float_float_negative_std": lambda T, d: T.normal(0.0, -1.0, (2,)),
    "shapes": lambda T, d: T.normal(_z(T, d, 3), T.ones(2, device=d)),
    "shapes_2": lambda T, d: T.normal(_z(T, d, 4), T.ones(2, 2, device=d)),
    "float_float_no_size": lambda T, d: T.normal(0.0, 1.0),
    "float_float_int_size": lambda T, d: T.normal(0.0, 1.0, 3),
    "float_float_negative_size": lambda T, d: T.normal(0.0, 1.0, (-1,)),
    "tensor_float_size": lambda T, d: T.normal(_z(T, d, 3), 1.0, (2,)),
    "three_tensors": lambda T, d: T.normal(_z(T, d, 3), T.ones(3, device=d), 2.0),
    "std_only": lambda T, d: T.normal(std=T.ones(3, device=d)),
    "generator_int": lambda T, d: T.normal(_z(T, d, 3), 1, generator=5),
    "out_long": lambda T, d: T.normal(_z(T, d, 3), T.ones(3, device=d),
                                      out=_z(T, d, 3, dt="int64")),
    "out_long_negative_std": lambda T, d: T.normal(_z(T, d, 3), -1.0,
                                                   out=_z(T, d, 3, dt="int64")),
    "out_long_float_float": lambda T, d: T.normal(0.0, 1.0, (3,), out=_z(T, d, 3, dt="int64")),
    "out_requires_grad": lambda T, d: T.normal(_p(T, d, [0.0], grad=True), T.ones(1, device=d),
                                               out=_z(T, d, 1)),
    # autograd
    "grad_tensor_tensor": lambda T, d: _zero_grads(
        T, d, T.normal(_m := _p(T, d, [0.0, 1.0], "float64", True),
                       _s := _p(T, d, [[1.0], [2.0], [3.0]], "float64", True)), _m, _s),
    "grad_tensor_float": lambda T, d: _zero_grads(
        T, d, T.normal(_m := _p(T, d, [0.0, 1.0], "float64", True), 2.0), _m),
    "grad_float_tensor": lambda T, d: _zero_grads(
        T, d, T.normal(1.0, _s := _p(T, d, [1.0, 2.0], "float64", True)), _s),
    "grad_one_side": lambda T, d: T.normal(_p(T, d, [0.0], grad=True), T.ones(1, device=d)),
}

POISSON: dict[str, Case] = {
    "rates": lambda T, d: T.poisson(_p(T, d, [1.0, 2.0, 3.0])),
    "zero_rates": lambda T, d: T.poisson(_p(T, d, [0.0, 1e-30])).tolist(),
    "float64": lambda T, d: T.poisson(_p(T, d, [1.0], "float64"), generator=T.Generator(d)),
    "float16": lambda T, d: T.poisson(_p(T, d, [1.0], "float16")),
    "0d": lambda T, d: T.poisson(T.tensor(5.0, device=d)),
    "empty": lambda T, d: T.poisson(_z(T, d, 2, 0)),
    "transposed": lambda T, d: T.poisson(T.ones(3, 2, device=d).t()),
    "grad": lambda T, d: _zero_grads(T, d, T.poisson(_l := _p(T, d, [1, 2], "float64", True)),
                                     _l),
    "long": lambda T, d: T.poisson(_p(T, d, [1, 2], "int64")),
    "bool": lambda T, d: T.poisson(_p(T, d, [True], "bool")),
    "negative": lambda T, d: T.poisson(_p(T, d, [1.0, -2.0])),
    "nan": lambda T, d: T.poisson(_p(T, d, [math.nan])),
    "out": lambda T, d: T.poisson(_p(T, d, [1.0]), out=_z(T, d, 1)),
    "number": lambda T, d: T.poisson(1.0),
    "generator_int": lambda T, d: T.poisson(_p(T, d, [1.0]), generator=4),
}

RANDINT_LIKE: dict[str, Case] = {
    "high": lambda T, d: T.randint_like(_z(T, d, 2, 3), 10),
    "low_high": lambda T, d: T.randint_like(_z(T, d, 2, 3), 5, 10),
    "keywords": lambda T, d: T.randint_like(_z(T, d, 2, 3), low=5, high=10),
    "high_keyword": lambda T, d: T.randint_like(_z(T, d, 2, 3), high=10),
    "one_value": lambda T, d: T.randint_like(_z(T, d, 2, 3), 4, 5).tolist(),
    "int32": lambda T, d: T.randint_like(_z(T, d, 2, dt="int32"), 10),
    "dtype": lambda T, d: T.randint_like(_z(T, d, 2), 10, dtype=T.int64),
    "dtype_float64": lambda T, d: T.randint_like(_z(T, d, 2), 3, dtype=T.float64),
    "bool": lambda T, d: T.randint_like(_z(T, d, 2, dt="bool"), 2),
    "transposed": lambda T, d: T.randint_like(_z(T, d, 3, 2).t(), 10),
    "generator": lambda T, d: T.randint_like(_z(T, d, 2), 10, generator=T.Generator(d)),
    "requires_grad": lambda T, d: T.randint_like(_z(T, d, 2), 10, requires_grad=True),
    "input_requires_grad": lambda T, d: T.randint_like(T.zeros(2, device=d, requires_grad=True),
                                                       3),
    "tensor_high": lambda T, d: T.randint_like(_z(T, d, 2), T.tensor(10)),
    "tensor_low_high": lambda T, d: T.randint_like(_z(T, d, 2), T.tensor(3), T.tensor(10)),
    "device": lambda T, d: T.randint_like(_z(T, d, 2), 3, device=d),
    "float_precision": lambda T, d: T.randint_like(_z(T, d, 2), 2 ** 40),
    # errors
    "int8_range": lambda T, d: T.randint_like(_z(T, d, 2, dt="int8"), 1000),
    "high_0": lambda T, d: T.randint_like(_z(T, d, 2), 0),
    "low_above_high": lambda T, d: T.randint_like(_z(T, d, 2), 10, 5),
    "negative_high": lambda T, d: T.randint_like(_z(T, d, 2), -5),
    "float_high": lambda T, d: T.randint_like(_z(T, d, 2), 10.5),
    "bool_range": lambda T, d: T.randint_like(_z(T, d, 2, dt="bool"), 3),
    "half_range": lambda T, d: T.randint_like(_z(T, d, 2, dt="float16"), 2 ** 20),
    "missing": lambda T, d: T.randint_like(_z(T, d, 2)),
    "tensor_1d": lambda T, d: T.randint_like(_z(T, d, 2), T.tensor([10])),
    "generator_int": lambda T, d: T.randint_like(_z(T, d, 2), 3, generator=4),
}

_SAMPLERS = ("exponential_", "geometric_", "cauchy_", "log_normal_", "uniform_", "normal_")
INPLACE: dict[str, Case] = {
    "exponential": lambda T, d: _z(T, d, 4).exponential_(),
    "exponential_lambd": lambda T, d: _z(T, d, 4).exponential_(lambd=2),
    "exponential_tensor": lambda T, d: _z(T, d, 4).exponential_(T.tensor(2.0)),
    "exponential_inf": lambda T, d: _z(T, d, 4).exponential_(math.inf).tolist(),
    "exponential_huge_int": lambda T, d: _z(T, d, 2).exponential_(2 ** 1000).tolist(),
    "exponential_half": lambda T, d: _z(T, d, 4, dt="float16").exponential_(),
    "geometric": lambda T, d: _z(T, d, 4).geometric_(0.5),
    "geometric_keyword": lambda T, d: _z(T, d, 4).geometric_(p=0.2),
    "geometric_int": lambda T, d: _z(T, d, 4, dt="int64").geometric_(0.5),
    "geometric_uint8": lambda T, d: _z(T, d, 4, dt="uint8").geometric_(0.5),
    "geometric_int8": lambda T, d: _z(T, d, 4, dt="int8").geometric_(0.5),
    "geometric_half": lambda T, d: _z(T, d, 4, dt="float16").geometric_(0.5),
    "cauchy": lambda T, d: _z(T, d, 4).cauchy_(),
    "cauchy_keywords": lambda T, d: _z(T, d, 4).cauchy_(median=1, sigma=2),
    "cauchy_inf_median": lambda T, d: _z(T, d, 4).cauchy_(math.inf, 1.0).tolist(),
    "cauchy_nan_median": lambda T, d: _z(T, d, 4).cauchy_(math.nan, 1.0).tolist(),
    "log_normal": lambda T, d: _z(T, d, 4).log_normal_(),
    "log_normal_keywords": lambda T, d: _z(T, d, 4).log_normal_(mean=1, std=2),
    "log_normal_inf_mean": lambda T, d: _z(T, d, 4).log_normal_(math.inf, 1.0).tolist(),
    "uniform": lambda T, d: _z(T, d, 4).uniform_(),
    "uniform_equal": lambda T, d: _z(T, d, 4).uniform_(1.0, 1.0).tolist(),
    "uniform_tensor": lambda T, d: _z(T, d, 4).uniform_(T.tensor(0.0), 1),
    "uniform_float64": lambda T, d: _z(T, d, 4, dt="float64").uniform_(-1e307, 1e307),
    "uniform_half": lambda T, d: _z(T, d, 4, dt="float16").uniform_(-30000, 30000),
    "normal": lambda T, d: _z(T, d, 4).normal_(),
    "normal_keywords": lambda T, d: _z(T, d, 4).normal_(mean=0, std=1),
    "normal_std0": lambda T, d: _z(T, d, 4).normal_(3.0, 0.0).tolist(),
    "normal_tensor_mean": lambda T, d: _z(T, d, 4).normal_(T.tensor(1.0), 0).tolist(),
    "normal_inf_std": lambda T, d: _z(T, d, 1).normal_(0.0, math.inf).abs().tolist(),
    "transposed": lambda T, d: _z(T, d, 3, 2).t().exponential_(),
    "view": lambda T, d: (lambda b: (b[1].exponential_(), b.tolist()[0]))(_z(T, d, 2, 3)),
    "view_grads": lambda T, d: _view_grads(T, d),
    "0d": lambda T, d: T.tensor(0.0, device=d).cauchy_(),
    "empty": lambda T, d: _z(T, d, 0).log_normal_(),
    "generators": lambda T, d: [_setg(T, d, name, *((0.5,) if name == "geometric_" else ()))
                                for name in _SAMPLERS],
    # errors
    "exponential_zero": lambda T, d: _z(T, d, 2).exponential_(0.0),
    "exponential_negative_long": lambda T, d: _z(T, d, 2, dt="int64").exponential_(-1.0),
    "exponential_nan": lambda T, d: _z(T, d, 2).exponential_(math.nan),
    "exponential_long": lambda T, d: _z(T, d, 2, dt="int64").exponential_(2),
    "exponential_bool": lambda T, d: _z(T, d, 2, dt="bool").exponential_(),
    "exponential_str": lambda T, d: _z(T, d, 2).exponential_(lambd="a"),
    "exponential_two": lambda T, d: _z(T, d, 2).exponential_(1, 2),
    "exponential_generator_int": lambda T, d: _z(T, d, 2).exponential_(1, generator=4),
    "geometric_0": lambda T, d: _z(T, d, 2).geometric_(0.0),
    "geometric_1": lambda T, d: _z(T, d, 2).geometric_(1.0),
    "geometric_true": lambda T, d: _z(T, d, 2).geometric_(True),
    "geometric_negative_long": lambda T, d: _z(T, d, 2, dt="int64").geometric_(-0.5),
    "geometric_nan": lambda T, d: _z(T, d, 2).geometric_(math.nan),
    "geometric_bool": lambda T, d: _z(T, d, 2, dt="bool").geometric_(0.5),
    "geometric_missing": lambda T, d: _z(T, d, 2).geometric_(),
    "geometric_str": lambda T, d: _z(T, d, 2).geometric_("a"),
    "cauchy_sigma0": lambda T, d: _z(T, d, 2).cauchy_(0.0, 0.0),
    "cauchy_negative_long": lambda T, d: _z(T, d, 2, dt="int64").cauchy_(0.0, -1.0),
    "cauchy_long": lambda T, d: _z(T, d, 2, dt="int64").cauchy_(),
    "cauchy_bool": lambda T, d: _z(T, d, 2, dt="bool").cauchy_(),
    "cauchy_none": lambda T, d: _z(T, d, 2).cauchy_(sigma=None),
    "log_normal_std0": lambda T, d: _z(T, d, 2).log_normal_(0.0, 0.0),
    "log_normal_nan_long": lambda T, d: _z(T, d, 2, dt="int64").log_normal_(0.0, math.nan),
    "log_normal_long": lambda T, d: _z(T, d, 2, dt="int64").log_normal_(),
    "log_normal_bool": lambda T, d: _z(T, d, 2, dt="bool").log_normal_(),
    "normal_negative": lambda T, d: _z(T, d, 2).normal_(0.0, -1.0),
    "normal_negative_long": lambda T, d: _z(T, d, 2, dt="int64").normal_(0.0, -1.0),
    "normal_nan": lambda T, d: _z(T, d, 2).normal_(0.0, math.nan),
    "normal_long": lambda T, d: _z(T, d, 2, dt="int64").normal_(),
    "normal_bool": lambda T, d: _z(T, d, 2, dt="bool").normal_(),
    "normal_complex": lambda T, d: _z(T, d, 2).normal_(1j, 1),
    "uniform_reversed": lambda T, d: _z(T, d, 2).uniform_(1.0, 0.0),
    "uniform_reversed_long": lambda T, d: _z(T, d, 2, dt="int64").uniform_(1.0, 0.0),
    "uniform_bool": lambda T, d: _z(T, d, 2, dt="bool").uniform_(),
    "uniform_inf": lambda T, d: _z(T, d, 2).uniform_(0.0, math.inf),
    "uniform_nan": lambda T, d: _z(T, d, 2).uniform_(math.nan, 1.0),
    "uniform_wide": lambda T, d: _z(T, d, 2).uniform_(-3e38, 3e38),
    "uniform_wide_64": lambda T, d: _z(T, d, 2, dt="float64").uniform_(-1e308, 1e308),
    "uniform_half_bound": lambda T, d: _z(T, d, 2, dt="float16").uniform_(0, 70000),
    "uniform_half_wide": lambda T, d: _z(T, d, 2, dt="float16").uniform_(-60000, 60000),
    "uniform_keyword_a": lambda T, d: _z(T, d, 2).uniform_(a=0, b=1),
    "uniform_str": lambda T, d: _z(T, d, 2).uniform_(0, "a"),
    "uniform_generator_int": lambda T, d: _z(T, d, 2).uniform_(0, 1, generator=3),
    "uniform_three": lambda T, d: _z(T, d, 2).uniform_(0, 1, T.Generator(d)),
    "overlapping": lambda T, d: _z(T, d, 1).expand(3).exponential_(),
    "leaf": lambda T, d: T.ones(2, device=d, requires_grad=True).exponential_(),
    "leaf_uniform": lambda T, d: T.ones(2, device=d, requires_grad=True).uniform_(),
    # autograd
    **{f"grads_{name}": (lambda T, d, n=name: _inplace_grads(
        T, d, n, *((0.5,) if n == "geometric_" else ()))) for name in _SAMPLERS},
}

RANDOM_: dict[str, Case] = {
    **{f"default_{dt}": (lambda T, d, dt=dt: _z(T, d, 3, dt=dt).random_())
       for dt in ("float16", "float32", "float64", "uint8", "int8", "int16", "int32", "int64",
                  "bool")},
    "to": lambda T, d: _z(T, d, 3).random_(5),
    "to_keyword": lambda T, d: _z(T, d, 3).random_(to=5),
    "from_to": lambda T, d: _z(T, d, 3).random_(-3, 2),
    "from_to_keywords": lambda T, d: _z(T, d, 3).random_(**{"from": 1, "to": 5}),
    "from_keyword_to": lambda T, d: _z(T, d, 3).random_(0, to=5),
    "from_none": lambda T, d: _z(T, d, 3, dt="int8").random_(126, None),
    "one_value": lambda T, d: [_z(T, d, 3, dt=dt).random_(7, 8).tolist()
                               for dt in ("float16", "float32", "uint8", "int8", "int64")],
    "int8_top": lambda T, d: _z(T, d, 3, dt="int8").random_(127, None).tolist(),
    "bool_values": lambda T, d: _z(T, d, 3, dt="bool").random_(1, None).tolist(),
    "bool_range": lambda T, d: _z(T, d, 3, dt="bool").random_(0, 2),
    "int64_full": lambda T, d: _z(T, d, 3, dt="int64").random_(-2 ** 63, None),
    "int64_wide": lambda T, d: _z(T, d, 3, dt="int64").random_(-2 ** 63, 2 ** 63 - 1),
    "int8_full": lambda T, d: _z(T, d, 3, dt="int8").random_(-128, 128),
    "tensor_to": lambda T, d: _z(T, d, 3).random_(T.tensor(3)),
    "generator": lambda T, d: _z(T, d, 3).random_(0, 3, generator=T.Generator(d)),
    "float_precision": lambda T, d: _z(T, d, 3).random_(2 ** 40),
    "double_precision": lambda T, d: _z(T, d, 3, dt="float64").random_(2 ** 53 + 2),
    "half_precision": lambda T, d: _z(T, d, 3, dt="float16").random_(2 ** 15),
    "half_from": lambda T, d: _z(T, d, 3, dt="float16").random_(-65504, 0),
    # errors
    "to_0": lambda T, d: _z(T, d, 3).random_(0),
    "equal": lambda T, d: _z(T, d, 3).random_(3, 3),
    "int8_to": lambda T, d: _z(T, d, 3, dt="int8").random_(300),
    "int8_from": lambda T, d: _z(T, d, 3, dt="int8").random_(-129, 127),
    "uint8_from": lambda T, d: _z(T, d, 3, dt="uint8").random_(-300, 0),
    "int32_to": lambda T, d: _z(T, d, 3, dt="int32").random_(2 ** 40),
    "bool_to": lambda T, d: _z(T, d, 3, dt="bool").random_(5),
    "bool_from": lambda T, d: _z(T, d, 3, dt="bool").random_(-1, 1),
    "half_to": lambda T, d: _z(T, d, 3, dt="float16").random_(2 ** 16),
    "half_from_bound": lambda T, d: _z(T, d, 3, dt="float16").random_(-65505, 0),
    "float_from_top": lambda T, d: _z(T, d, 3).random_(2 ** 24, None),
    "float_from_above_top": lambda T, d: _z(T, d, 3).random_(2 ** 24 + 1, None),
    "overflow": lambda T, d: _z(T, d, 3).random_(2 ** 63),
    "overflow_pair": lambda T, d: _z(T, d, 3, dt="int64").random_(-2 ** 63, 2 ** 63),
    "float": lambda T, d: _z(T, d, 3).random_(1.5),
    "float_pair": lambda T, d: _z(T, d, 3).random_(1.0, 2),
    "float_pair_2": lambda T, d: _z(T, d, 3).random_(1, 2.0),
    "none": lambda T, d: _z(T, d, 3).random_(None),
    "bool_arg": lambda T, d: _z(T, d, 3).random_(True),
    "tensor_float": lambda T, d: _z(T, d, 3).random_(T.tensor(3.0)),
    "tensor_1d": lambda T, d: _z(T, d, 3).random_(T.tensor([3])),
    "from_underscore": lambda T, d: _z(T, d, 3).random_(from_=1, to=3),
    "from_only": lambda T, d: _z(T, d, 3).random_(**{"from": 1}),
    "three": lambda T, d: _z(T, d, 3).random_(1, 2, 3),
    "generator_int": lambda T, d: _z(T, d, 3).random_(generator=3),
    "overlapping": lambda T, d: _z(T, d, 1).expand(3).random_(),
    # autograd
    "grads_default": lambda T, d: _inplace_grads(T, d, "random_"),
    "grads_to": lambda T, d: _inplace_grads(T, d, "random_", 5),
    "grads_from_to": lambda T, d: _inplace_grads(T, d, "random_", 1, 5),
    "grads_from_none": lambda T, d: _inplace_grads(T, d, "random_", 1, None),
}


CASES = {f"{group}_{name}": case for group, cases in (
    ("multinomial", MULTINOMIAL), ("bernoulli", BERNOULLI), ("bernoulli_", BERNOULLI_),
    ("normal", NORMAL), ("poisson", POISSON), ("randint_like", RANDINT_LIKE),
    ("inplace", INPLACE), ("random_", RANDOM_))
    for name, case in cases.items()}


@pytest.mark.parametrize("name", sorted(CASES))
def test_misuse(device: str, name: str) -> None:
    case = CASES[name]
    theirs = _outcome(case, torch, "cpu")
    ours = _outcome(case, ag, device)
    assert ours == theirs, (name, ours, theirs)
