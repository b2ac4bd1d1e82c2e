"""Legacy names against PyTorch: ``autograd.Variable``, the typed tensor classes
(``FloatTensor``, ``LongTensor``, ...), the ``Tensor(data)`` / ``Tensor(*sizes)`` constructor,
``Tensor.type()`` and ``isinstance(x, FloatTensor)``."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import autograd_gpu as ag
from tests.misuse._catalogue import Case, catalogue_test

_TYPED = ("FloatTensor", "DoubleTensor", "HalfTensor", "ByteTensor", "CharTensor",
          "ShortTensor", "IntTensor", "LongTensor", "BoolTensor")


def _dev(T: Any, dev: str) -> Any:
    return T.device(dev)


def _shape_dtype(t: Any) -> Any:
    return tuple(t.shape), repr(t.dtype)


def _variable(T: Any, dev: str, data: Any, **kw: Any) -> Any:
    v = T.autograd.Variable(data, **kw)
    return v, type(v).__name__, v.requires_grad, v.grad_fn is None, v.is_leaf


CASES: dict[str, Case] = {
    # Variable
    "variable": lambda T, dev: _variable(T, dev, T.ones(2, device=dev)),
    "variable_requires_grad": lambda T, dev: _variable(T, dev, T.ones(2, device=dev),
                                                       requires_grad=True),
    "variable_of_non_leaf": lambda T, dev: _variable(
        T, dev, T.ones(2, device=dev, requires_grad=True) * 2),
    "variable_empty": lambda T, dev: _variable(T, dev, None),
    "variable_list": lambda T, dev: T.autograd.Variable([1, 2]),
    "variable_int_grad": lambda T, dev: T.autograd.Variable(T.ones(2, dtype=T.long),
                                                            requires_grad=True),
    "variable_isinstance": lambda T, dev: (isinstance(T.ones(2), T.autograd.Variable),
                                           isinstance(1, T.autograd.Variable),
                                           isinstance(T.nn.Parameter(T.ones(1)),
                                                      T.autograd.Variable)),
    "variable_backward": lambda T, dev: (lambda v: ((v * v).sum().backward(), v.grad)[1])(
        T.autograd.Variable(T.tensor([1.0, 2.0], device=dev), requires_grad=True)),
    "variable_shares_storage": lambda T, dev: (lambda x: (
        T.autograd.Variable(x).add_(1), x)[1])(T.zeros(2, device=dev)),
    # Tensor(...)
    "Tensor_list": lambda T, dev: T.Tensor([1, 2]),
    "Tensor_nested": lambda T, dev: T.Tensor([[1, 2], [3, 4]]),
    "Tensor_tuple_is_data": lambda T, dev: T.Tensor((2, 3)),
    "Tensor_sizes": lambda T, dev: _shape_dtype(T.Tensor(2, 3)),
    "Tensor_Size": lambda T, dev: _shape_dtype(T.Tensor(T.Size([2, 3]))),
    "Tensor_empty": lambda T, dev: T.Tensor(),
    "Tensor_zero_size": lambda T, dev: _shape_dtype(T.Tensor(0)),
    "Tensor_empty_Size": lambda T, dev: _shape_dtype(T.Tensor(T.Size([]))),
    "Tensor_of_int_tensor": lambda T, dev: T.Tensor(T.tensor([1, 2])),
    "Tensor_of_double_tensor": lambda T, dev: T.Tensor(T.tensor([1.0], dtype=T.float64)),
    "Tensor_of_0d": lambda T, dev: T.Tensor(T.tensor(3.0)),
    "Tensor_numpy": lambda T, dev: T.Tensor(np.array([1, 2])),
    "Tensor_numpy_int_size": lambda T, dev: _shape_dtype(T.Tensor(np.int64(2))),
    "Tensor_index_tensor_size": lambda T, dev: _shape_dtype(T.Tensor(2, T.tensor(3))),
    "Tensor_float": lambda T, dev: T.Tensor(2.5),
    "Tensor_bool": lambda T, dev: T.Tensor(True),
    "Tensor_none": lambda T, dev: T.Tensor(None),
    "Tensor_str": lambda T, dev: T.Tensor("a"),
    "Tensor_numpy_float": lambda T, dev: T.Tensor(np.float64(2.0)),
    "Tensor_bad_size": lambda T, dev: T.Tensor(2, "a"),
    "Tensor_negative": lambda T, dev: T.Tensor(-1),
    "Tensor_two_tuples": lambda T, dev: T.Tensor((2, 3), (4,)),
    "Tensor_two_tensors": lambda T, dev: T.Tensor(T.tensor([1.0]), T.tensor([1.0])),
    "Tensor_requires_grad_kw": lambda T, dev: T.Tensor([1, 2], requires_grad=True),
    "Tensor_dtype_kw": lambda T, dev: T.Tensor([1, 2], dtype=T.float64),
    "Tensor_device_cpu": lambda T, dev: T.Tensor([1, 2], device="cpu"),
    "Tensor_device_meta": lambda T, dev: T.Tensor([1, 2], device="meta"),
    "Tensor_alias_shares": lambda T, dev: (lambda x: (T.Tensor(x).add_(1), x)[1])(T.zeros(2)),
    "Tensor_default_dtype": lambda T, dev: _default_dtype(T),
    # typed classes
    **{f"{n}_list": lambda T, dev, n=n: getattr(T, n)([1, 0, 2]) for n in _TYPED},
    **{f"{n}_sizes": lambda T, dev, n=n: _shape_dtype(getattr(T, n)(2, 3)) for n in _TYPED},
    "LongTensor_of_floats": lambda T, dev: T.LongTensor([1.5, 2.7]),
    "FloatTensor_of_long": lambda T, dev: T.FloatTensor(T.tensor([1, 2])),
    "LongTensor_of_float": lambda T, dev: T.LongTensor(T.tensor([1.0, 2.0])),
    "FloatTensor_of_float": lambda T, dev: T.FloatTensor(T.tensor([1.0, 2.0])),
    "FloatTensor_ragged": lambda T, dev: T.FloatTensor([[1], [2, 3]]),
    "FloatTensor_dtype_kw": lambda T, dev: T.FloatTensor(2, 3, dtype=T.float64),
    "FloatTensor_meta": lambda T, dev: T.FloatTensor([1, 2], device="meta"),
    "LongTensor_numpy_floats": lambda T, dev: T.LongTensor(np.array([1.0, 2.0])),
    "typed_attributes": lambda T, dev: [(repr(getattr(T, n).dtype), getattr(T, n).is_cuda,
                                         issubclass(getattr(T, n), T.Tensor)) for n in _TYPED],
    # isinstance
    "isinstance_float": lambda T, dev: [isinstance(T.zeros(2), getattr(T, n))
                                        for n in _TYPED],
    "isinstance_long": lambda T, dev: [isinstance(T.zeros(2, dtype=T.long),
                                                  getattr(T, n)) for n in _TYPED],
    "isinstance_parameter": lambda T, dev: isinstance(T.nn.Parameter(T.ones(1)), T.FloatTensor),
    "isinstance_not_tensor": lambda T, dev: isinstance([1.0], T.FloatTensor),
    # type()
    **{f"type_name_{d}": lambda T, dev, d=d: T.zeros(2, dtype=getattr(T, d)).type()
       for d in ("float32", "float64", "float16", "int64", "int32", "int16", "int8", "uint8",
                 "bool", "complex64", "complex128")},
    "type_to_class": lambda T, dev: T.zeros(2, device=dev).type(T.LongTensor),
    "type_to_string": lambda T, dev: T.zeros(2, device=dev).type("torch.DoubleTensor"),
    "type_to_dtype": lambda T, dev: T.zeros(2, device=dev).type(T.float64),
    "type_dtype_kw": lambda T, dev: T.zeros(2, device=dev).type(dtype=T.int32),
    "type_to_Tensor": lambda T, dev: T.zeros(2, dtype=T.float64).type(T.Tensor),
    "type_bad_string": lambda T, dev: T.zeros(2).type("torch.Foo"),
    "type_bad_plain_string": lambda T, dev: T.zeros(2).type("float"),
    "type_python_type": lambda T, dev: T.zeros(2).type(float),
    "type_number": lambda T, dev: T.zeros(2).type(3),
    "type_same_is_self": lambda T, dev: (lambda x: (x.type(T.FloatTensor) is x,
                                                   x.type("torch.FloatTensor") is x,
                                                   x.type(T.float32) is x))(T.zeros(2)),
    "type_non_blocking": lambda T, dev: T.zeros(2).type(T.IntTensor, non_blocking=True),
    "type_keeps_grad": lambda T, dev: (lambda x: (lambda y: (y.requires_grad, type(
        y.grad_fn).__name__))(x.type(T.DoubleTensor)))(T.ones(2, requires_grad=True)),
    "typename": lambda T, dev: (T.typename(T.zeros(2, dtype=T.long)), T.typename(1)),
}


def _default_dtype(T: Any) -> Any:
    T.set_default_dtype(T.float64)
    try:
        return (T.Tensor([1]), _shape_dtype(T.Tensor(2)), T.zeros(2).type(),
                isinstance(T.zeros(2), T.DoubleTensor), T.zeros(2, dtype=T.float32).type(T.Tensor))
    finally:
        T.set_default_dtype(T.float32)


test_legacy = catalogue_test(CASES)


def test_typed_classes_are_named_as_ours() -> None:
    assert repr(ag.FloatTensor) == "<class 'autograd_gpu.FloatTensor'>"
    assert repr(ag.cuda.LongTensor) == "<class 'autograd_gpu.cuda.LongTensor'>"
    assert isinstance(ag.FloatTensor, ag.legacy.tensortype)
    with pytest.raises(AttributeError):
        ag.cuda.NoSuchTensor  # noqa: B018


def test_tensor_subclass_constructs_itself() -> None:
    class Mine(ag.Tensor):
        pass

    x = Mine([1.0, 2.0])
    assert type(x) is Mine and x.tolist() == [1.0, 2.0]
    assert type(ag.nn.Parameter(ag.ones(1))) is ag.nn.Parameter


def test_tensor_of_a_tensor_that_requires_grad_stays_in_the_graph() -> None:
    for T in (torch, ag):
        p = T.nn.Parameter(T.ones(2))
        y = T.Tensor(p)
        assert type(y) is T.Tensor and y.requires_grad and not y.is_leaf
        y.sum().backward()
        assert p.grad.tolist() == [1.0, 1.0]
